"""TF1's `tf.losses`: per-element losses reduced by `compute_weighted_loss`.

Every loss casts to float32, multiplies by `weights` (broadcast by TF1's rules, see
weights_broadcast.py), reduces as `reduction` says, casts back to the dtype of the
per-element losses and adds the result to `loss_collection`.
"""
from __future__ import annotations

from typing import Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.losses import util
from tensorweave.losses.weights_broadcast import assert_broadcastable, broadcast_weights
from tensorweave.ops.array import array_fill_ops, array_ops
from tensorweave.ops.control_flow import control_flow_ops, structure
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import (
    confusion_matrix, math_binary, math_ops, math_unary, reduction_ops)
from tensorweave.ops.nn import nn_losses, nn_ops


@tf_export("losses.Reduction")
class Reduction:
    """How `compute_weighted_loss` reduces the weighted losses.

    NONE: no reduction (the weighted losses, shape of `losses`).
    SUM: the sum of the weighted losses.
    MEAN: SUM divided by the sum of the weights.
    SUM_OVER_BATCH_SIZE: SUM divided by the number of elements of `losses`.
    SUM_OVER_NONZERO_WEIGHTS / SUM_BY_NONZERO_WEIGHTS: SUM divided by the number of
    elements whose (broadcast) weight is not zero.
    """
    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> Tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key) -> None:
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s. Key should be one of %s."
                             % (key, cls.all()))


_DEFAULT = Reduction.SUM_BY_NONZERO_WEIGHTS


def _safe_mean(total: Tensor, count: Tensor) -> Tensor:
    return math_binary.div_no_nan(total, count, name="value")


def _num_elements(losses: Tensor) -> Tensor:
    with _graph.name_scope(None, "num_elements", [losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), losses.dtype)


def _num_present(losses: Tensor, weights, per_batch: bool = False) -> Tensor:
    """The number of elements of `losses` whose broadcast weight is nonzero (per batch
    entry, keeping dims, when `per_batch`)."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with _graph.name_scope(None, "num_present", (losses, weights)) as scope:
        weights = math_ops.cast(weights, _dt.float32)
        present = indexing_select.where(
            math_binary.equal(weights, 0.0), array_fill_ops.zeros_like(weights),
            array_fill_ops.ones_like(weights))
        present = broadcast_weights(present, losses)
        if per_batch:
            axis = math_ops.range(1, array_ops.rank(present))
            return reduction_ops.reduce_sum(present, axis=axis, keepdims=True, name=scope)
        return reduction_ops.reduce_sum(present, name=scope)


def _check_not_none(**args) -> None:
    for arg_name, value in args.items():
        if value is None:
            raise ValueError("Argument `%s` must not be None." % arg_name)


@tf_export("losses.compute_weighted_loss")
def compute_weighted_loss(losses, weights=1.0, scope: Optional[str] = None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction: str = _DEFAULT) -> Tensor:
    """Weights `losses` and reduces them as `reduction` says.

    Args:
      losses: Tensor of shape `[batch_size, d1, ..., dN]`.
      weights: Tensor of rank 0 or of the rank of `losses`, each dimension 1 or that of
        `losses`.
      scope: name scope of the ops.
      loss_collection: collection the loss is added to.
      reduction: a `tf.losses.Reduction` key.

    Returns:
      The weighted loss, of the dtype of `losses`: a scalar, or the shape of `losses`
      for Reduction.NONE.

    Raises:
      ValueError: `reduction` is invalid, or `weights` cannot be broadcast to `losses`.
    """
    Reduction.validate(reduction)
    # remembered for a strategy under an Estimator: the optimizer scales the loss of
    # each replica by 1/num_replicas unless it is a SUM (see distribute.get_loss_reduction)
    _graph.get_default_graph()._last_loss_reduction = reduction
    with _graph.name_scope(scope, "weighted_loss", (losses, weights)):
        with _graph.control_dependencies((assert_broadcastable(weights, losses),)):
            losses = convert_to_tensor(losses)
            input_dtype = losses.dtype
            losses = math_ops.cast(losses, _dt.float32)
            weights = math_ops.cast(weights, _dt.float32)
            weighted = math_binary.multiply(losses, weights)
            if reduction == Reduction.NONE:
                loss = weighted
            else:
                loss = reduction_ops.reduce_sum(weighted)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(loss, reduction_ops.reduce_sum(
                        math_binary.multiply(array_fill_ops.ones_like(losses), weights)))
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = math_ops.cast(loss, input_dtype)
            util.add_loss(loss, loss_collection)
            return loss


def _float_pair(labels, predictions) -> Tuple[Tensor, Tensor]:
    predictions = math_ops.cast(predictions, _dt.float32)
    labels = math_ops.cast(labels, _dt.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


def _labels_like_logits(labels, logits) -> Tuple[Tensor, Tensor]:
    logits = convert_to_tensor(logits)
    labels = math_ops.cast(labels, logits.dtype)
    logits.shape.assert_is_compatible_with(labels.shape)
    return labels, logits


def _weighted_loss(default_name: str, per_element, names: Tuple[str, str], labels,
                   predictions, weights, scope, loss_collection, reduction,
                   convert=_float_pair) -> Tensor:
    """The frame every elementwise loss shares: the None checks (errors naming the
    arguments `names`), the name scope `scope` (default `default_name`), and
    `compute_weighted_loss` of `per_element(*convert(labels, predictions))` built inside
    it (`convert`: _float_pair, or _labels_like_logits for the cross-entropies)."""
    _check_not_none(**{names[0]: labels, names[1]: predictions})
    with _graph.name_scope(scope, default_name, (predictions, labels, weights)) as scope:
        losses = per_element(*convert(labels, predictions))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


@tf_export("losses.absolute_difference")
def absolute_difference(labels, predictions, weights=1.0, scope: Optional[str] = None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction: str = _DEFAULT) -> Tensor:
    """Weighted `|predictions - labels|` (an L1 loss).

    Args:
      labels: the ground truth, the shape of `predictions`.
      predictions: the predicted values.
      weights, scope, loss_collection, reduction: as `compute_weighted_loss`.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: None arguments, incompatible shapes, or weights not broadcastable.
    """
    def per_element(labels, predictions):
        return math_unary.abs(math_binary.subtract(predictions, labels))

    return _weighted_loss("absolute_difference", per_element, ("labels", "predictions"),
                          labels, predictions, weights, scope, loss_collection, reduction)


@tf_export("losses.cosine_distance")
def cosine_distance(labels, predictions, axis=None, weights=1.0,
                    scope: Optional[str] = None, loss_collection=GraphKeys.LOSSES,
                    reduction: str = _DEFAULT, dim=None) -> Tensor:
    """Weighted `1 - sum(labels * predictions, axis)`; both are assumed unit-normalized.

    Args:
      labels, predictions: Tensors of one shape.
      axis: the dimension holding the vectors (`dim` is its deprecated name).
      weights, scope, loss_collection, reduction: as `compute_weighted_loss`.
      dim: deprecated alias of `axis`.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: no axis, both axis and dim, or bad shapes.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'dim' and 'axis'.")
    if axis is None:
        axis = dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")

    def per_element(labels, predictions):
        products = math_binary.multiply(predictions, labels)
        return math_binary.subtract(
            1.0, reduction_ops.reduce_sum(products, axis=(axis,), keepdims=True))

    return _weighted_loss("cosine_distance_loss", per_element, ("labels", "predictions"),
                          labels, predictions, weights, scope, loss_collection, reduction)


@tf_export("losses.hinge_loss")
def hinge_loss(labels, logits, weights=1.0, scope: Optional[str] = None,
               loss_collection=GraphKeys.LOSSES, reduction: str = _DEFAULT) -> Tensor:
    """Weighted hinge loss `relu(1 - (2 * labels - 1) * logits)`; labels are 0 or 1.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: None arguments, incompatible shapes, or weights not broadcastable.
    """
    def per_element(labels, logits):
        all_ones = array_fill_ops.ones_like(labels)
        signs = math_binary.subtract(math_binary.multiply(2.0, labels), all_ones)
        return nn_ops.relu(math_binary.subtract(all_ones,
                                                math_binary.multiply(signs, logits)))

    return _weighted_loss("hinge_loss", per_element, ("labels", "logits"),
                          labels, logits, weights, scope, loss_collection, reduction)


@tf_export("losses.huber_loss")
def huber_loss(labels, predictions, weights=1.0, delta: float = 1.0,
               scope: Optional[str] = None, loss_collection=GraphKeys.LOSSES,
               reduction: str = _DEFAULT) -> Tensor:
    """Weighted Huber loss: `0.5 * x**2` for `|x| <= delta`, else
    `0.5 * delta**2 + delta * (|x| - delta)`, with `x = predictions - labels`.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: None arguments, incompatible shapes, or weights not broadcastable.
    """
    def per_element(labels, predictions):
        abs_error = math_unary.abs(math_binary.subtract(predictions, labels))
        delta_t = convert_to_tensor(delta, dtype=_dt.float32)
        quadratic = math_binary.minimum(abs_error, delta_t)
        linear = math_binary.subtract(abs_error, quadratic)
        return math_binary.add(
            math_binary.multiply(0.5, math_binary.multiply(quadratic, quadratic)),
            math_binary.multiply(delta_t, linear))

    return _weighted_loss("huber_loss", per_element, ("labels", "predictions"),
                          labels, predictions, weights, scope, loss_collection, reduction)


@tf_export("losses.log_loss")
def log_loss(labels, predictions, weights=1.0, epsilon: float = 1e-7,
             scope: Optional[str] = None, loss_collection=GraphKeys.LOSSES,
             reduction: str = _DEFAULT) -> Tensor:
    """Weighted `-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)`.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: None arguments, incompatible shapes, or weights not broadcastable.
    """
    def per_element(labels, predictions):
        pos = math_binary.multiply(labels, math_unary.log(
            math_binary.add(predictions, epsilon)))
        neg = math_binary.multiply(
            math_binary.subtract(1.0, labels),
            math_unary.log(math_binary.add(math_binary.subtract(1.0, predictions),
                                           epsilon)))
        return math_binary.subtract(math_unary.negative(pos), neg)

    return _weighted_loss("log_loss", per_element, ("labels", "predictions"),
                          labels, predictions, weights, scope, loss_collection, reduction)


@tf_export("losses.mean_pairwise_squared_error")
def mean_pairwise_squared_error(labels, predictions, weights=1.0,
                                scope: Optional[str] = None,
                                loss_collection=GraphKeys.LOSSES) -> Tensor:
    """Weighted mean of the squared differences between all pairs of
    `predictions - labels` within each batch entry (TF1's formula).

    Args:
      labels, predictions: Tensors `[batch_size, d1, ..., dN]`.
      weights: scalar or `[batch_size]`-like Tensor broadcastable per batch entry.
      scope, loss_collection: as `compute_weighted_loss`.

    Returns:
      A float32 scalar.

    Raises:
      ValueError: None arguments, incompatible shapes or weights not broadcastable.
    """
    _check_not_none(labels=labels, predictions=predictions)
    with _graph.name_scope(scope, "mean_pairwise_squared_error",
                           (predictions, labels, weights)):
        weights = math_ops.cast(weights, _dt.float32)
        labels = math_ops.cast(labels, _dt.float32)
        with _graph.control_dependencies((assert_broadcastable(weights, labels),)):
            predictions = math_ops.cast(predictions, _dt.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = math_binary.subtract(predictions, labels)
            axis = math_ops.range(1, array_ops.rank(diffs))
            sum_sq = reduction_ops.reduce_sum(math_unary.square(diffs), axis=axis,
                                              keepdims=True)
            n = _num_present(diffs, weights, per_batch=True)
            term1 = math_binary.multiply(2.0, math_binary.div_no_nan(
                sum_sq, math_binary.maximum(math_binary.subtract(n, 1.0), 0.0),
                name="value"))
            sum_diff = reduction_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = math_binary.multiply(2.0, math_binary.div_no_nan(
                math_unary.square(sum_diff),
                math_binary.maximum(
                    math_binary.multiply(n, math_binary.subtract(n, 1.0)), 0.0),
                name="value"))
            weighted = math_binary.multiply(math_binary.subtract(term1, term2), weights)
            loss = reduction_ops.reduce_sum(weighted)
            mean_loss = indexing_select.where(
                math_binary.greater(reduction_ops.reduce_sum(n), 0.0), loss,
                array_fill_ops.zeros_like(loss), name="value")
            util.add_loss(mean_loss, loss_collection)
            return mean_loss


@tf_export("losses.mean_squared_error")
def mean_squared_error(labels, predictions, weights=1.0, scope: Optional[str] = None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction: str = _DEFAULT) -> Tensor:
    """Weighted `(predictions - labels)**2`.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: None arguments, incompatible shapes, or weights not broadcastable.
    """
    def per_element(labels, predictions):
        return math_binary.squared_difference(predictions, labels)

    return _weighted_loss("mean_squared_error", per_element, ("labels", "predictions"),
                          labels, predictions, weights, scope, loss_collection, reduction)


@tf_export("losses.sigmoid_cross_entropy")
def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0,
                          label_smoothing: float = 0, scope: Optional[str] = None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction: str = _DEFAULT) -> Tensor:
    """Weighted `sigmoid_cross_entropy_with_logits`; labels in [0, 1] are smoothed to
    `labels * (1 - label_smoothing) + 0.5 * label_smoothing`.

    Returns:
      The weighted loss, of the dtype of `logits`.

    Raises:
      ValueError: None arguments, incompatible shapes, or weights not broadcastable.
    """
    def per_element(labels, logits):
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        return nn_losses.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy")

    return _weighted_loss("sigmoid_cross_entropy_loss", per_element,
                          ("multi_class_labels", "logits"), multi_class_labels, logits,
                          weights, scope, loss_collection, reduction,
                          convert=_labels_like_logits)


@tf_export("losses.softmax_cross_entropy")
def softmax_cross_entropy(onehot_labels, logits, weights=1.0,
                          label_smoothing: float = 0, scope: Optional[str] = None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction: str = _DEFAULT) -> Tensor:
    """Weighted softmax cross-entropy of `[batch_size, num_classes]` logits; one-hot
    labels are smoothed to `labels * (1 - s) + s / num_classes`. No gradient flows into
    the labels.

    Returns:
      The weighted loss, of the dtype of `logits`.

    Raises:
      ValueError: None arguments, incompatible shapes, or weights not broadcastable.
    """
    def per_element(labels, logits):
        if label_smoothing > 0:
            # the operators, so that the ops are named as TF's ("mul", "truediv", "add")
            num_classes = math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        labels = structure.stop_gradient(labels, name="labels_stop_gradient")
        return nn_losses.softmax_cross_entropy_with_logits_v2(
            labels=labels, logits=logits, name="xentropy")

    return _weighted_loss("softmax_cross_entropy_loss", per_element,
                          ("onehot_labels", "logits"), onehot_labels, logits, weights, scope,
                          loss_collection, reduction, convert=_labels_like_logits)


def _remove_squeezable_dimensions(labels, predictions, weights=None,
                                  expected_rank_diff: int = 0):
    """As confusion_matrix.remove_squeezable_dimensions, and squeezes a trailing
    dimension of `weights` when its rank is one more than that of `labels`."""
    labels, predictions = confusion_matrix.remove_squeezable_dimensions(
        labels, predictions, expected_rank_diff=expected_rank_diff)
    if weights is None:
        return labels, predictions, weights
    weights = convert_to_tensor(weights)
    l_rank = labels.shape.ndims
    w_rank = weights.shape.ndims
    if l_rank is not None and w_rank is not None:
        if w_rank - l_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        return labels, predictions, weights
    if w_rank is None or (w_rank > 0 and weights.shape.dims[-1].is_compatible_with(1)):
        rank_diff = math_binary.subtract(array_ops.rank(weights), array_ops.rank(labels))
        w = weights
        weights = control_flow_ops.cond(math_binary.equal(1, rank_diff),
                                        lambda: array_ops.squeeze(w, [-1]), lambda: w)
    return labels, predictions, weights


@tf_export("losses.sparse_softmax_cross_entropy")
def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope: Optional[str] = None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction: str = _DEFAULT) -> Tensor:
    """Weighted `sparse_softmax_cross_entropy_with_logits`; `labels` of shape
    `[d0, ..., dN-1]` (or with a trailing 1) index the last dimension of `logits`.

    Returns:
      The weighted loss, of the dtype of `logits`.

    Raises:
      ValueError: None arguments, bad ranks, or weights not broadcastable.
    """
    _check_not_none(labels=labels, logits=logits)
    with _graph.name_scope(scope, "sparse_softmax_cross_entropy_loss",
                           (logits, labels, weights)) as scope:
        labels, logits, weights = _remove_squeezable_dimensions(
            labels, logits, weights, expected_rank_diff=1)
        losses = nn_losses.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)
