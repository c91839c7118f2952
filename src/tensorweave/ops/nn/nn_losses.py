"""Losses: softmax/sparse-softmax cross entropy (fused ops), sigmoid and weighted
cross entropy (composites), l2_loss."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, broadcast_shapes
from tensorweave.ops.nn.nn_ops import compute_dtype, merge_dims, with_rank
from tensorweave.ops.nn.nn_softmax import axis_argument, dims_text, last_axis_max


# --- SoftmaxCrossEntropyWithLogits -----------------------------------------------------------
def _xent_shape(op):
    features = with_rank(op.inputs[0].shape, 2)
    labels = with_rank(op.inputs[1].shape, 2)
    both = broadcast_shapes(features, labels)
    return [TensorShape([both.as_list()[0]]), both]


register_op("SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
            outputs=["loss: T", "backprop: T"], attrs={"T": TypeAttr(_dt.FLOATS)},
            shape=_xent_shape)


def _log_softmax_rows(xp, features):
    shifted = features - last_axis_max(xp, features)
    return shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))


@kernel("SoftmaxCrossEntropyWithLogits")
def _xent_kernel(ctx, features, labels):
    xp = ctx.xp
    if features.ndim != 2 or labels.ndim != 2:
        raise errors.InvalidArgumentError(
            None, ctx.op, "logits and labels must be either 2-dimensional, or broadcasted to "
            "be 2-dimensional")
    try:
        shape = np.broadcast_shapes(features.shape, labels.shape)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, ctx.op, "logits and labels must be broadcastable: logits_size=%s "
            "labels_size=%s" % (dims_text(features.shape), dims_text(labels.shape))) from None
    work = compute_dtype(features)
    if shape[1] == 0:
        return xp.zeros(shape[0], features.dtype), xp.zeros(shape, features.dtype)
    log_probs = _log_softmax_rows(xp, xp.broadcast_to(features.astype(work, copy=False), shape))
    labels = labels.astype(work, copy=False)
    loss = -(labels * log_probs).sum(axis=-1)
    backprop = xp.exp(log_probs) - labels
    return loss.astype(features.dtype, copy=False), backprop.astype(features.dtype, copy=False)


def _is_zeros(t: Tensor) -> bool:
    """Whether `t` is known at build time to be all zeros (the gradient autodiff fills in
    for an output that got none)."""
    if t.op.type == "ZerosLike":
        return True
    value = tensor_util.constant_value(t)
    return value is not None and not np.any(value)


def _xent_logits_gradient(op, grad_loss, grad_grad):
    """d/d(logits) shared by both fused cross entropies. The backprop output is itself
    differentiable: its gradient `grad_grad` flows back through the softmax Jacobian."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, reduction_ops
    from tensorweave.ops.nn.nn_softmax import softmax
    grad = math_binary.multiply(array_ops.expand_dims(grad_loss, -1), op.outputs[1])
    if grad_grad is not None and not _is_zeros(grad_grad):
        sm = softmax(op.inputs[0])
        dot = reduction_ops.reduce_sum(math_binary.multiply(grad_grad, sm), -1,
                                       keepdims=True)
        grad = math_binary.add(grad, math_binary.multiply(
            math_binary.subtract(grad_grad, dot), sm))
    return grad


@gradient("SoftmaxCrossEntropyWithLogits")
def _xent_gradient(op, grad_loss, grad_grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_unary
    from tensorweave.ops.nn.nn_softmax import log_softmax
    features, labels = op.inputs
    d_logits = _xent_logits_gradient(op, grad_loss, grad_grad)
    d_labels = math_binary.multiply(array_ops.expand_dims(grad_loss, -1),
                                    math_unary.negative(log_softmax(features)))
    if _static_dims(features) != _static_dims(labels):
        # the kernel broadcast one input against the other: sum the gradient back.
        from tensorweave.ops.math.math_grad_util import unbroadcast
        d_logits = unbroadcast(d_logits, features, labels)[0]
        d_labels = unbroadcast(d_labels, features, labels)[1]
    return [d_logits, d_labels]


def _static_dims(t: Tensor):
    return t.shape.as_list() if t.shape.ndims is not None else None


def _check_xent_args(name: str, labels, logits) -> None:
    if labels is None or logits is None:
        raise ValueError("Both `labels` and `logits` must be provided for %s. Received: "
                         "labels=%s and logits=%s" % (name, labels, logits))


def _move_axis_to_end(x: Tensor, axis: int) -> Tensor:
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    ndims = x.shape.ndims
    if ndims is not None:
        perm = [d for d in range(ndims) if d != axis % ndims] + [axis % ndims]
        return array_ops.transpose(x, perm)
    rank = array_ops.rank(x)
    axis_t = math_binary.floormod(axis, rank) if axis < 0 else axis
    perm = array_ops.concat([math_ops.range(axis_t),
                             math_ops.range(math_binary.add(axis_t, 1), rank), [axis_t]], 0)
    return array_ops.transpose(x, perm)


def _softmax_xent(labels, logits, axis, name, scope_name: str) -> Tensor:
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    if axis is None:
        axis = -1
    with _graph.name_scope(name, scope_name, [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        low_precision = logits.dtype in (_dt.float16, _dt.bfloat16)
        precise = math_ops.cast(logits, _dt.float32) if low_precision else logits
        if labels.dtype is not precise.dtype:
            labels = math_ops.cast(labels, precise.dtype)
        static = logits.shape
        ndims = static.ndims
        if axis != -1 and not (ndims is not None and axis == ndims - 1):
            precise = _move_axis_to_end(precise, axis)
            labels = _move_axis_to_end(labels, axis)
        if ndims == 2:
            cost = apply_op("SoftmaxCrossEntropyWithLogits", [precise, labels],
                            name=scope).outputs[0]
        else:
            # The op takes matrices: flatten the outer dimensions, then restore them.
            input_shape = array_ops.shape(precise)
            classes = array_ops.shape(precise)[-1:]
            flat_shape = array_ops.concat([[-1], classes], 0)
            cost = apply_op("SoftmaxCrossEntropyWithLogits",
                            [array_ops.reshape(precise, flat_shape),
                             array_ops.reshape(labels, flat_shape)],
                            name="SoftmaxCrossEntropyWithLogits").outputs[0]
            cost = array_ops.reshape(cost, input_shape[:-1])
            if ndims is not None:
                dims = static.as_list()
                del dims[axis]
                cost.set_shape(dims)
        return math_ops.cast(cost, logits.dtype) if low_precision else cost


@tf_export("nn.softmax_cross_entropy_with_logits_v2")
def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None,
                                         name: Optional[str] = None, dim=None) -> Tensor:
    """Softmax cross entropy between `logits` and the distributions `labels`:
    `-sum(labels * log_softmax(logits), axis)`. Gradients flow into both.

    Args:
      labels: a Tensor of probability distributions along `axis` (cast to the type of
        `logits`), of the shape of `logits`.
      logits: unscaled log probabilities, a floating-point Tensor.
      axis: the class dimension (default -1, the last).
      name: name scope of the ops.
      dim: deprecated alias of `axis`.

    Returns:
      A Tensor of the type of `logits` and its shape without `axis`.

    Raises:
      ValueError: both `axis` and `dim`, or incompatible static shapes.
    """
    return _softmax_xent(labels, logits, axis_argument(axis, dim), name,
                         "softmax_cross_entropy_with_logits")


@tf_export("nn.softmax_cross_entropy_with_logits")
def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1,
                                      name: Optional[str] = None, axis=None) -> Tensor:
    """TF1's softmax cross entropy: like `softmax_cross_entropy_with_logits_v2` but no
    gradient flows into `labels`. Call it with named arguments.

    Args:
      labels: a Tensor of probability distributions along `dim`.
      logits: unscaled log probabilities, a floating-point Tensor.
      dim: the class dimension (default -1).
      name: name scope of the ops.
      axis: alias of `dim` (give only one of them).

    Returns:
      A Tensor of the type of `logits` and its shape without the class dimension.

    Raises:
      ValueError: positional arguments, a missing `labels` or `logits`, both `dim` and
        `axis`.
    """
    _check_xent_args("softmax_cross_entropy_with_logits", labels, logits)
    axis = axis_argument(axis, dim)
    from tensorweave.ops.control_flow.structure import stop_gradient
    with _graph.name_scope(name, "softmax_cross_entropy_with_logits_sg",
                           [logits, labels]) as scope:
        labels = stop_gradient(labels, name="labels_stop_gradient")
        return _softmax_xent(labels, logits, axis, scope, "softmax_cross_entropy_with_logits")


# --- SparseSoftmaxCrossEntropyWithLogits -----------------------------------------------------
def _sparse_xent_shape(op):
    features = with_rank(op.inputs[0].shape, 2)
    labels = with_rank(op.inputs[1].shape, 1)
    batch = merge_dims(features.as_list()[0], labels.as_list()[0])
    return [TensorShape([batch]), TensorShape([batch, features.as_list()[1]])]


register_op("SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
            outputs=["loss: T", "backprop: T"],
            attrs={"T": TypeAttr(_dt.FLOATS),
                   "Tlabels": TypeAttr((_dt.int32, _dt.int64), default=_dt.int64)},
            shape=_sparse_xent_shape)


@kernel("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_kernel(ctx, features, labels):
    xp = ctx.xp
    if features.ndim != 2:
        raise errors.InvalidArgumentError(
            None, ctx.op, "logits must be 2-D, but got shape %s" % dims_text(features.shape))
    if labels.ndim != 1:
        raise errors.InvalidArgumentError(
            None, ctx.op, "labels must be 1-D, but got shape %s" % dims_text(labels.shape))
    batch, classes = features.shape
    if batch != labels.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "logits and labels must have the same first dimension, got logits "
            "shape %s and labels shape %s" % (dims_text(features.shape), dims_text(labels.shape)))
    if classes == 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Must have at least one class, but got logits shape %s"
            % dims_text(features.shape))
    if labels.size:
        low, high = int(labels.min()), int(labels.max())
        if low < 0 or high >= classes:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Received a label value of %d which is outside the valid range "
                "of [0, %d).  Label values: %s" % (low if low < 0 else high, classes,
                                                   " ".join(str(v) for v in labels.tolist())))
    # softmax in place in one temporary (a language model's [batch, vocabulary] logits
    # are the largest tensor of its step): loss = log(sum(exp(f - max))) - (f - max)[label]
    work = features.astype(compute_dtype(features), copy=False)
    top = last_axis_max(xp, work)
    backprop = work - top
    rows = xp.arange(batch)
    picked = backprop[rows, labels]
    xp.exp(backprop, out=backprop)
    total = backprop.sum(axis=-1, keepdims=True)
    loss = xp.log(total[:, 0]) - picked
    backprop /= total
    backprop[rows, labels] -= 1
    return loss.astype(features.dtype, copy=False), backprop.astype(features.dtype, copy=False)


@gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_gradient(op, grad_loss, grad_grad):
    return [_xent_logits_gradient(op, grad_loss, grad_grad), None]


@tf_export("nn.sparse_softmax_cross_entropy_with_logits")
def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None,
                                             name: Optional[str] = None) -> Tensor:
    """Softmax cross entropy with integer class labels: `-log_softmax(logits)[labels]`.

    Args:
      labels: int32 or int64 Tensor of class indices in [0, num_classes), of the shape of
        `logits` without its last dimension. An index out of range raises
        InvalidArgumentError when run.
      logits: unscaled log probabilities of shape [..., num_classes], floating point.
      name: op name.

    Returns:
      A Tensor of the shape of `labels` and the type of `logits`.

    Raises:
      ValueError: positional arguments, a missing argument, a scalar `logits`, or static
        shapes of `labels` and `logits` that do not fit.
    """
    _check_xent_args("sparse_softmax_cross_entropy_with_logits", labels, logits)
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    with _graph.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        low_precision = logits.dtype in (_dt.float16, _dt.bfloat16)
        precise = math_ops.cast(logits, _dt.float32) if low_precision else logits
        labels_static = labels.shape
        logits_static = logits.shape
        if logits_static.ndims == 0:
            raise ValueError("`logits` cannot be a scalar. Received logits=%s`" % (logits,))
        if logits_static.ndims is not None and labels_static.ndims is not None and \
                labels_static.ndims != logits_static.ndims - 1:
            raise ValueError("`labels.shape.rank` must equal `logits.shape.rank - 1`. "
                             "Received: labels.shape=%s of rank %d and logits.shape=%s of "
                             "rank %d" % (labels_static, labels_static.ndims, logits_static,
                                          logits_static.ndims))
        fully_defined = labels_static.is_fully_defined() and \
            logits_static[:-1].is_fully_defined()
        if fully_defined and labels_static != logits_static[:-1]:
            raise ValueError("`labels.shape` must equal `logits.shape` except for the last "
                             "dimension. Received: labels.shape=%s and logits.shape=%s"
                             % (labels_static, logits_static))
        if logits_static.ndims == 2:
            cost = apply_op("SparseSoftmaxCrossEntropyWithLogits", [precise, labels],
                            name="SparseSoftmaxCrossEntropyWithLogits").outputs[0]
        else:
            deps = [] if fully_defined else [_assert_labels_fit(labels, logits)]
            with _graph.control_dependencies(deps):
                classes = array_ops.shape(logits)[-1:]
                cost = apply_op("SparseSoftmaxCrossEntropyWithLogits", [
                    array_ops.reshape(precise, array_ops.concat([[-1], classes], 0)),
                    array_ops.reshape(labels, [-1])],
                    name="SparseSoftmaxCrossEntropyWithLogits").outputs[0]
                cost = array_ops.reshape(cost, array_ops.shape(labels))
                cost.set_shape(labels_static)
        return math_ops.cast(cost, logits.dtype) if low_precision else cost


def _assert_labels_fit(labels: Tensor, logits: Tensor):
    """A run-time check that labels.shape == logits.shape[:-1] (static shapes could not
    tell)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.debug import check_ops
    return check_ops.assert_equal(array_ops.shape(labels), array_ops.shape(logits)[:-1],
                                  message="`labels.shape` must equal `logits.shape` except "
                                  "for the last dimension")


# --- sigmoid and weighted cross entropy ------------------------------------------------------
def _same_shape_or_raise(logits: Tensor, labels: Tensor) -> None:
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError("`logits` and `labels` must have the same shape, received (%s vs %s)."
                         % (logits.shape, labels.shape))


@tf_export("nn.sigmoid_cross_entropy_with_logits")
def sigmoid_cross_entropy_with_logits(labels=None, logits=None,
                                      name: Optional[str] = None) -> Tensor:
    """Elementwise logistic loss `-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))` for
    logits x and labels z, computed stably as TF does: `max(x, 0) - x z + log(1 +
    exp(-|x|))`, the max and the |x| chosen by one comparison `x >= 0` (so that the
    gradient is `sigmoid(x) - z` at 0 too). Unlike `softplus(x) - x z`, nothing cancels
    when x is large and z is 1.

    Args:
      labels: a Tensor of the type and shape of `logits`, values in [0, 1].
      logits: a floating-point Tensor.
      name: op name.

    Returns:
      A Tensor of the type and shape of `logits`.

    Raises:
      ValueError: positional arguments, a missing argument, or different shapes.
    """
    _check_xent_args("sigmoid_cross_entropy_with_logits", labels, logits)
    from tensorweave.ops.array import array_fill_ops, array_ops
    from tensorweave.ops.math import math_binary, math_unary
    with _graph.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _same_shape_or_raise(logits, labels)
        zeros = array_fill_ops.zeros_like(logits, dtype=logits.dtype)
        cond = math_binary.greater_equal(logits, zeros)
        relu_logits = array_ops.where(cond, logits, zeros)
        neg_abs_logits = array_ops.where(cond, math_unary.negative(logits), logits)
        return math_binary.add(
            math_binary.subtract(relu_logits, math_binary.multiply(logits, labels)),
            math_unary.log1p(math_unary.exp(neg_abs_logits)), name=scope)


@tf_export("nn.weighted_cross_entropy_with_logits")
def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None,
                                       name: Optional[str] = None, targets=None) -> Tensor:
    """Logistic loss with the positive term weighted by `pos_weight`:
    `(1 - z) x + (1 + (pos_weight - 1) z) log(1 + exp(-x))`, computed stably.

    Args:
      labels: a Tensor of the type and shape of `logits`.
      logits: a floating-point Tensor.
      pos_weight: weight of the positive examples (number or Tensor).
      name: op name.
      targets: deprecated alias of `labels`.

    Returns:
      A Tensor of the type and shape of `logits`.

    Raises:
      ValueError: both `labels` and `targets`, or different shapes.
    """
    labels = axis_argument(labels, targets, "labels", "targets")
    from tensorweave.ops.math import math_binary, math_unary
    from tensorweave.ops.nn.nn_ops import relu
    with _graph.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        _same_shape_or_raise(logits, labels)
        pos_weight = convert_to_tensor(pos_weight, name="pos_weight",
                                       preferred_dtype=logits.dtype)
        log_weight = math_binary.add(
            1.0, math_binary.multiply(math_binary.subtract(pos_weight, 1.0), labels))
        # log(1 + exp(-x)) as TF writes it, log1p(exp(-|x|)) + relu(-x): the same values
        # as softplus(-x), and TF's gradient at x = 0 (abs and relu give 0 there)
        log_sigmoid_neg = math_binary.add(
            math_unary.log1p(math_unary.exp(math_unary.negative(math_unary.abs(logits)))),
            relu(math_unary.negative(logits)))
        return math_binary.add(
            math_binary.multiply(math_binary.subtract(1.0, labels), logits),
            math_binary.multiply(log_weight, log_sigmoid_neg), name=scope)


# --- L2Loss ---------------------------------------------------------------------------------
register_op("L2Loss", inputs=["t: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.FLOATS)}, shape=lambda op: TensorShape([]))


@kernel("L2Loss")
def _l2_loss_kernel(ctx, t):
    work = t.astype(compute_dtype(t), copy=False).reshape(-1)
    return ctx.xp.asarray(work.dot(work) / 2, dtype=t.dtype)


@gradient("L2Loss")
def _l2_loss_gradient(op, grad):
    from tensorweave.ops.math import math_binary
    return [math_binary.multiply(op.inputs[0], grad)]


@tf_export("nn.l2_loss")
def l2_loss(t, name: Optional[str] = None) -> Tensor:
    """Half the squared L2 norm of `t`: `sum(t ** 2) / 2`.

    Args:
      t: a floating-point Tensor.
      name: op name.

    Returns:
      A scalar Tensor of the type of `t`.
    """
    return apply_op("L2Loss", [t], name=name or "L2Loss").outputs[0]
