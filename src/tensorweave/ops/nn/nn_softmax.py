"""Softmax, LogSoftmax, BiasAdd (and the channels-last-only BiasAddV1), InTopKV2 and
the attr-k forms InTopK and TopK, which TF 1.x graphs still hold (part of the nn family;
TopKV2 is in ops/indexing/indexing_select.py)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
# TopK shares TopKV2's kernel, gradient and types (indexing_select.py)
from tensorweave.ops.indexing.indexing_select import TOP_K_TYPES, top_k_gradient, \
    top_k_kernel
from tensorweave.ops.nn.nn_ops import compute_dtype, merge_dims, with_rank, with_rank_at_least


# --- Softmax and LogSoftmax --------------------------------------------------------------
def _softmax_shape(op) -> TensorShape:
    return with_rank_at_least(op.inputs[0].shape, 1)


register_op("Softmax", inputs=["logits: T"], outputs=["softmax: T"],
            attrs={"T": TypeAttr(_dt.FLOATS)}, shape=_softmax_shape)
register_op("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"],
            attrs={"T": TypeAttr(_dt.FLOATS)}, shape=_softmax_shape)


# rows at most this long, at least _MANY_ROWS of them: their maxima are taken column-wise
_SHORT_ROW, _MANY_ROWS = 64, 32


def last_axis_max(xp, x: np.ndarray) -> np.ndarray:
    """`x.max(axis=-1, keepdims=True)`. NumPy reduces the last axis of a C-contiguous
    array one row at a time, which for many short rows (a classifier's [batch, classes]
    logits) costs more than the values: the maximum of the transposed copy reduces every
    row at once ([100, 10]: 4.8 -> 1.7 us; [1000, 10]: 40 -> 4.4 us), and a maximum is
    the same value in any order (NaN included)."""
    n = x.shape[-1] if x.ndim else 0
    if xp is np and x.ndim >= 2 and 0 < n <= _SHORT_ROW and x.size >= _MANY_ROWS * n \
            and x.flags.c_contiguous:
        rows = np.ascontiguousarray(x.reshape(-1, n).T)
        return np.maximum.reduce(rows, axis=0).reshape(x.shape[:-1] + (1,))
    return x.max(axis=-1, keepdims=True)


def softmax_last_axis(xp, x: np.ndarray, log: bool) -> np.ndarray:
    """softmax (or log-softmax) of `x` over its last axis, computed in at least float32
    with the row maximum subtracted first."""
    if x.size == 0:
        return x.copy()
    work = x.astype(compute_dtype(x), copy=False)
    shifted = work - last_axis_max(xp, work)
    if log:
        out = shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))
    else:  # in place: `shifted` is this kernel's own array
        out = xp.exp(shifted, out=shifted)
        out /= out.sum(axis=-1, keepdims=True)
    return out.astype(x.dtype, copy=False)


@kernel("Softmax")
def _softmax_kernel(ctx, logits):
    return softmax_last_axis(ctx.xp, logits, log=False)


@kernel("LogSoftmax")
def _log_softmax_kernel(ctx, logits):
    return softmax_last_axis(ctx.xp, logits, log=True)


@gradient("Softmax")
def _softmax_gradient(op, grad):
    # dx = (grad - sum(grad * softmax, -1)) * softmax
    # (the operators, as TF writes it: the ops are named mul, Sum, sub, mul_1 as in TF)
    from tensorweave.ops.math import reduction_ops
    sm = op.outputs[0]
    dot = reduction_ops.reduce_sum(grad * sm, -1, keepdims=True)
    return [(grad - dot) * sm]


@gradient("LogSoftmax")
def _log_softmax_gradient(op, grad):
    # dx = grad - sum(grad, -1) * softmax
    from tensorweave.ops.math import math_binary, math_unary, reduction_ops
    sm = math_unary.exp(op.outputs[0])
    total = reduction_ops.reduce_sum(grad, -1, keepdims=True)
    return [math_binary.subtract(grad, math_binary.multiply(total, sm))]


def axis_argument(axis, dim, axis_name: str = "axis", dim_name: str = "dim"):
    """TF1's deprecated-argument lookup for (axis, dim) pairs."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both '%s' and '%s'." % (dim_name, axis_name))
    return axis if axis is not None else dim


def _swap_with_last(x: Tensor, axis: int, name: Optional[str] = None) -> Tensor:
    """Transposes `x` so that `axis` and the last axis trade places (its own inverse).
    With unknown rank the permutation is computed at run time."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    ndims = x.shape.ndims
    if ndims is not None:
        perm = list(range(ndims))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        return array_ops.transpose(x, perm, name=name or "transpose")
    rank = array_ops.rank(x)
    axis_t = math_binary.floormod(axis, rank) if axis < 0 else axis
    last = math_binary.subtract(rank, 1)
    perm = array_ops.concat([math_ops.range(axis_t), [last],
                             math_ops.range(math_binary.add(axis_t, 1), last), [axis_t]], 0)
    return array_ops.transpose(x, perm, name=name or "transpose")


def _on_axis(op_type: str, logits, axis, name: Optional[str]) -> Tensor:
    logits = convert_to_tensor(logits, name="logits")
    ndims = logits.shape.ndims
    if axis is None:
        axis = -1
    axis = int(axis)
    if axis == -1 or (ndims is not None and axis == ndims - 1):
        return apply_op(op_type, [logits], name=name or op_type).outputs[0]
    if ndims is not None:
        if not -ndims <= axis < ndims:
            raise errors.InvalidArgumentError(
                None, None, "`dim` must be in the range [%d, %d) where %d is the number of "
                "dimensions in the input. Received: dim=%d" % (-ndims, ndims, ndims, axis))
        axis %= ndims
    swapped = _swap_with_last(logits, axis)
    out = apply_op(op_type, [swapped], name=op_type).outputs[0]
    return _swap_with_last(out, axis, name)  # the result takes the name, as in TF


@tf_export("nn.softmax", "math.softmax")
def softmax(logits, axis=None, name: Optional[str] = None, dim=None) -> Tensor:
    """Softmax activations: `exp(logits) / reduce_sum(exp(logits), axis)`.

    Args:
      logits: a non-empty floating-point Tensor.
      axis: the dimension softmax is computed over (default -1, the last).
      name: op name.
      dim: deprecated alias of `axis`.

    Returns:
      A Tensor of the type and shape of `logits`.

    Raises:
      InvalidArgumentError: `axis` is out of range for the rank of `logits`.
      ValueError: both `axis` and `dim` are given, or `logits` is a scalar.
    """
    return _on_axis("Softmax", logits, axis_argument(axis, dim), name)


@tf_export("nn.log_softmax", "math.log_softmax")
def log_softmax(logits, axis=None, name: Optional[str] = None, dim=None) -> Tensor:
    """Log softmax activations: `logits - log(reduce_sum(exp(logits), axis))`.

    The arguments, result and errors are those of `softmax`.
    """
    return _on_axis("LogSoftmax", logits, axis_argument(axis, dim), name)


# --- BiasAdd -------------------------------------------------------------------------------
def dims_text(shape) -> str:
    """A run-time shape as TF's kernels print it: [2,3]."""
    return "[%s]" % ",".join(str(d) for d in shape)


def _channel_axis(data_format: str) -> int:
    return 1 if data_format == "NCHW" else -1


def _bias_format(op) -> str:
    # BiasAddV1 has no data_format attr: it is channels-last only
    return "NHWC" if op.type == "BiasAddV1" else op._get_attr("data_format")


def _bias_add_shape(op) -> TensorShape:
    value, bias = op.inputs[0].shape, op.inputs[1].shape
    fmt = _bias_format(op)
    bias = with_rank(bias, 1)
    value = with_rank_at_least(value, 3 if fmt == "NCHW" else 2)
    if value.ndims is None:
        return value
    dims = value.as_list()
    axis = _channel_axis(fmt)
    dims[axis] = merge_dims(dims[axis], bias.as_list()[0])
    return TensorShape(dims)


def _bias_add_grad_shape(op) -> TensorShape:
    fmt = op._get_attr("data_format")
    value = with_rank_at_least(op.inputs[0].shape, 3 if fmt == "NCHW" else 2)
    if value.ndims is None:
        return unknown_shape(1)
    return TensorShape([value.as_list()[_channel_axis(fmt)]])


register_op("BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.NUMBERS), "data_format": "NHWC"},
            shape=_bias_add_shape)
register_op("BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.NUMBERS), "data_format": "NHWC"},
            shape=_bias_add_grad_shape)
register_op("BiasAddV1", inputs=["value: T", "bias: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.NUMBERS)}, shape=_bias_add_shape)


def _check_bias_input(ctx, value, fmt: str, what: str) -> int:
    if value.ndim < 2:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s tensor must be at least 2D: %s" % (what, dims_text(value.shape)))
    if fmt == "NCHW" and value.ndim < 3:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s tensor must be at least 3D for NCHW: %s"
            % (what, dims_text(value.shape)))
    return _channel_axis(fmt) % value.ndim


@kernel("BiasAdd")
@kernel("BiasAddV1")
def _bias_add_kernel(ctx, value, bias):
    fmt = ctx.attrs.get("data_format", "NHWC")  # BiasAddV1: channels last
    axis = _check_bias_input(ctx, value, fmt, "Input")
    if bias.ndim != 1:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Biases must be 1D: %s" % dims_text(bias.shape))
    if bias.shape[0] != value.shape[axis]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Must provide as many biases as the %s dimension of the input "
            "tensor: %s vs. %s" % ("last" if fmt != "NCHW" else "channel",
                                   dims_text(bias.shape), dims_text(value.shape)))
    if axis != value.ndim - 1:
        bias = bias.reshape(bias.shape + (1,) * (value.ndim - 1 - axis))
    return value + bias


@kernel("BiasAddGrad")
def _bias_add_grad_kernel(ctx, out_backprop):
    axis = _check_bias_input(ctx, out_backprop, ctx.attrs["data_format"], "Input")
    axes = tuple(a for a in range(out_backprop.ndim) if a != axis)
    acc = np.float32 if compute_dtype(out_backprop) == np.float32 else out_backprop.dtype
    return out_backprop.sum(axis=axes, dtype=acc).astype(out_backprop.dtype, copy=False)


@gradient("BiasAdd")
def _bias_add_gradient(op, grad):
    fmt = op._get_attr("data_format")
    return [grad, apply_op("BiasAddGrad", [grad], {"data_format": fmt},
                           name="BiasAddGrad").outputs[0]]


@gradient("BiasAddGrad")
def _bias_add_grad_gradient(op, grad):
    # BiasAddGrad sums over every axis but the channel one; its adjoint broadcasts back.
    from tensorweave.ops.array import array_ops
    out_backprop = op.inputs[0]
    return [apply_op("BiasAdd", [array_ops.zeros_like(out_backprop), grad],
                     {"data_format": op._get_attr("data_format")}, name="BiasAdd").outputs[0]]


@gradient("BiasAddV1")
def _bias_add_v1_gradient(op, grad):
    # TF's _BiasAddGradV1: the bias gets the sum over every axis but the last
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    from tensorweave.ops.math.reduction_ops import reduce_sum
    return [grad, reduce_sum(grad, math_ops.range(array_ops.rank(grad) - 1))]


def _normalize_data_format(data_format) -> str:
    if data_format is None:
        return "NHWC"
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    if data_format.startswith("NC"):
        return "NCHW"
    if data_format.startswith("N") and data_format.endswith("C"):
        return "NHWC"
    raise ValueError("`data_format` must be of the form `N...C` or `NC...`. Received: "
                     "data_format=%s" % data_format)


@tf_export("nn.bias_add")
def bias_add(value, bias, data_format=None, name: Optional[str] = None) -> Tensor:
    """Adds the 1-D `bias` to `value` along its channel dimension.

    Args:
      value: a Tensor of rank >= 2 (>= 3 for channels-first formats).
      bias: a 1-D Tensor of the type of `value`, as long as its channel dimension.
      data_format: "N...C" (default, channels last) or "NC..." (channels first).
      name: op name.

    Returns:
      A Tensor of the type and shape of `value`.

    Raises:
      ValueError: unknown `data_format`, or static shapes that do not fit.
    """
    fmt = _normalize_data_format(data_format)
    value = convert_to_tensor(value, name="input")
    bias = convert_to_tensor(bias, dtype=value.dtype, name="bias")
    return apply_op("BiasAdd", [value, bias], {"data_format": fmt},
                    name=name or "BiasAdd").outputs[0]


# --- InTopKV2 and InTopK (k an attr) -------------------------------------------------------
def _in_top_k_shape(op) -> TensorShape:
    predictions = with_rank(op.inputs[0].shape, 2)
    targets = with_rank(op.inputs[1].shape, 1)
    if op.type == "InTopKV2":
        with_rank(op.inputs[2].shape, 0)
    return TensorShape([merge_dims(predictions.as_list()[0], targets.as_list()[0])])


register_op("InTopKV2", inputs=["predictions: float32", "targets: T", "k: T"],
            outputs=["precision: bool"],
            attrs={"T": TypeAttr((_dt.int32, _dt.int64), default=_dt.int32)},
            shape=_in_top_k_shape)
register_op("InTopK", inputs=["predictions: float32", "targets: T"],
            outputs=["precision: bool"],
            attrs={"k": REQUIRED, "T": TypeAttr((_dt.int32, _dt.int64), default=_dt.int32)},
            shape=_in_top_k_shape)


@kernel("InTopKV2")
def _in_top_k_kernel(ctx, predictions, targets, k):
    xp = ctx.xp
    if predictions.ndim != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "predictions must be 2-dimensional")
    if targets.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "targets must be 1-dimensional")
    if predictions.shape[0] != targets.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "First dimension of predictions %d must match length of targets %d"
            % (predictions.shape[0], targets.shape[0]))
    batch, classes = predictions.shape
    valid = (targets >= 0) & (targets < classes)
    if batch == 0 or classes == 0:
        return xp.zeros(batch, dtype=np.bool_)
    safe = xp.where(valid, targets, 0)
    target_value = predictions[xp.arange(batch), safe]
    more_probable = (predictions > target_value[:, None]).sum(axis=1)
    # Like TF's kernel: a row holding a non-finite prediction is never "in the top k".
    finite_rows = xp.isfinite(predictions).all(axis=1)
    return valid & finite_rows & (more_probable < int(k))


@kernel("InTopK")
def _in_top_k_attr_kernel(ctx, predictions, targets):
    return _in_top_k_kernel(ctx, predictions, targets, ctx.attrs["k"])


not_differentiable("InTopKV2")
not_differentiable("InTopK")


@tf_export("nn.in_top_k", "math.in_top_k")
def in_top_k(predictions, targets, k, name: Optional[str] = None) -> Tensor:
    """Whether each target is among the `k` largest predictions of its row.

    A target is in the top k when fewer than `k` predictions of its row are strictly
    larger than its own (ties count in its favour). Rows with a non-finite prediction
    and out-of-range targets give False.

    Args:
      predictions: a float32 Tensor of shape [batch, classes].
      targets: an int32 or int64 Tensor of shape [batch].
      k: a scalar of the type of `targets` (a Python int is converted).
      name: op name.

    Returns:
      A bool Tensor of shape [batch].
    """
    from tensorweave.framework import graph as _graph
    with _graph.name_scope(name, "in_top_k"):
        targets = convert_to_tensor(targets, name="targets")
        return apply_op("InTopKV2", [predictions, targets, k],
                        name=name or "InTopKV2").outputs[0]


# --- TopK: TopKV2 with k an attr (deprecated at GraphDef version 7) ------------------------
def _top_k_attr_shape(op):
    x = with_rank_at_least(op.inputs[0].shape, 1)
    k = op._get_attr("k")
    if k < 0:
        raise ValueError("Attr 'k' of 'TopK' Op with value %d must be at least minimum 0" % k)
    if x.ndims is None:
        return [unknown_shape(), unknown_shape()]
    last = x.as_list()[-1]
    if last is not None and last < k:
        raise ValueError("input must have last dimension >= k = %d but is %d" % (k, last))
    out = TensorShape(x.as_list()[:-1] + [k])
    return [out, out]


register_op("TopK", inputs=["input: T"], outputs=["values: T", "indices: int32"],
            attrs={"k": REQUIRED, "sorted": True, "T": TypeAttr(TOP_K_TYPES)},
            shape=_top_k_attr_shape)


@kernel("TopK")
def _top_k_attr_kernel(ctx, x):
    return top_k_kernel(ctx, x, ctx.attrs["k"])


@gradient("TopK")
def _top_k_attr_gradient(op, values_grad, indices_grad):
    # TopKV2's gradient (TF registers _TopKGrad for both), less the entry of its k input
    return top_k_gradient(op, values_grad, indices_grad)[:1]
