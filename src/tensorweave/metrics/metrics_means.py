"""TF1's streaming means and the metrics built on them: mean, mean_tensor, accuracy,
the error metrics, percentage_below, mean_iou and mean_per_class_accuracy.

Each returns `(value, update_op)`; see metric_utils.py for the streaming contract.
"""
from __future__ import annotations

import numbers
from typing import Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.metrics.metric_utils import (
    collected, cross_replica_value, float_weights_like, metric_variable,
    remove_squeezable_dimensions, safe_div)
from tensorweave.ops.array import array_fill_ops, array_ops
from tensorweave.ops.indexing import indexing_ops, indexing_select
from tensorweave.ops.math import (
    confusion_matrix, math_binary, math_ops, math_unary, reduction_ops)
from tensorweave.ops.state import state_ops
from tensorweave.ops.state.variable_scope import variable_scope

Metric = Tuple[Tensor, Tensor]


def _weighted(values: Tensor, weights) -> Tuple[Tensor, Tensor]:
    """`values * weights` and the float32 weights broadcast to `values`."""
    values, _, weights = remove_squeezable_dimensions(values, None, weights)
    weights = float_weights_like(weights, values)
    return math_binary.multiply(values, weights), weights


def _streamed_mean(total, count, values: Tensor, batch_total: Tensor, batch_count: Tensor,
                   metrics_collections, updates_collections) -> Metric:
    """Adds a batch's total and count to the accumulators (the count once `values` are
    computed) and gives (total / count, its value after the update)."""
    update_total = state_ops.assign_add(total, batch_total)
    with _graph.control_dependencies([values]):
        update_count = state_ops.assign_add(count, batch_count)
    return collected(cross_replica_value(lambda: safe_div(total, count, "value")),
                     safe_div(update_total, update_count, "update_op"),
                     metrics_collections, updates_collections)


def _transformed(metric: Metric, fn, metrics_collections, updates_collections) -> Metric:
    """`fn` of a metric's value and of its update op, added to the collections."""
    value, update_op = metric
    return collected(cross_replica_value(lambda: fn(value)), fn(update_op),
                     metrics_collections, updates_collections)


def _mean_of_pairs(per_element, default_name: str, labels, predictions, weights,
                   metrics_collections, updates_collections, name) -> Metric:
    """The streaming mean of `per_element(labels, predictions)`, after squeezing the
    dimensions of size 1 the inputs differ by."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels,
                                                                weights)
    return mean(per_element(labels, predictions), weights, metrics_collections,
                updates_collections, name or default_name)


@tf_export("metrics.mean")
def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name: Optional[str] = None) -> Metric:
    """The (weighted) mean of `values` over every update so far.

    Args:
      values: a numeric Tensor of any shape.
      weights: None, or a Tensor broadcastable to `values` (rank 0 or the rank of
        `values`, or one more/less trailing dimension of size 1).
      metrics_collections: collections the value tensor is added to.
      updates_collections: collections the update op is added to.
      name: variable scope name (default "mean").

    Returns:
      (mean, update_op): float32 scalars; the update op adds the batch and returns the
      new mean. An empty accumulation gives 0.

    Raises:
      ValueError: `weights` cannot be broadcast to `values`.
    """
    with variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, _dt.float32)
        total = metric_variable([], _dt.float32, name="total")
        count = metric_variable([], _dt.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), _dt.float32)
        else:
            values, weights = _weighted(values, weights)
            num_values = reduction_ops.reduce_sum(weights)
        return _streamed_mean(total, count, values, reduction_ops.reduce_sum(values),
                              num_values, metrics_collections, updates_collections)


@tf_export("metrics.mean_tensor")
def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name: Optional[str] = None) -> Metric:
    """The elementwise (weighted) mean of `values` over every update so far.

    Args:
      values: a numeric Tensor of a fully defined shape.
      weights, metrics_collections, updates_collections: as `mean`.
      name: variable scope name (default "mean").

    Returns:
      (mean, update_op): float32 Tensors of the shape of `values`; 0 where nothing
      was counted.

    Raises:
      ValueError: the shape of `values` is not fully defined, or bad weights.
    """
    with variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, _dt.float32)
        if not values.shape.is_fully_defined():
            raise ValueError("mean_tensor needs values of a fully defined shape; got %s"
                             % (values.shape,))
        total = metric_variable(values.shape.as_list(), _dt.float32, name="total_tensor")
        count = metric_variable(values.shape.as_list(), _dt.float32, name="count_tensor")
        num_values = array_fill_ops.ones_like(values)
        if weights is not None:
            values, weights = _weighted(values, weights)
            num_values = math_binary.multiply(num_values, weights)
        return _streamed_mean(total, count, values, values, num_values,
                              metrics_collections, updates_collections)


@tf_export("metrics.accuracy")
def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name: Optional[str] = None) -> Metric:
    """How often `predictions` equals `labels` (the weighted mean of matches).

    Returns:
      (accuracy, update_op): float32 scalars.

    Raises:
      ValueError: shapes of labels and predictions are incompatible, or bad weights.
    """
    def is_correct(labels, predictions):
        predictions.shape.assert_is_compatible_with(labels.shape)
        if labels.dtype != predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        return math_ops.cast(math_binary.equal(predictions, labels), _dt.float32)

    return _mean_of_pairs(is_correct, "accuracy", labels, predictions, weights,
                          metrics_collections, updates_collections, name)


@tf_export("metrics.mean_absolute_error")
def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name: Optional[str] = None) -> Metric:
    """The streaming mean of `|predictions - labels|`.

    Returns:
      (mean_absolute_error, update_op): float32 scalars.
    """
    def absolute_error(labels, predictions):
        return math_unary.abs(math_binary.subtract(predictions, labels))

    return _mean_of_pairs(absolute_error, "mean_absolute_error", labels, predictions,
                          weights, metrics_collections, updates_collections, name)


@tf_export("metrics.mean_squared_error")
def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name: Optional[str] = None) -> Metric:
    """The streaming mean of `(predictions - labels)**2`.

    Returns:
      (mean_squared_error, update_op): float32 scalars.
    """
    return _mean_of_pairs(math_binary.squared_difference, "mean_squared_error", labels,
                          predictions, weights, metrics_collections, updates_collections,
                          name)


@tf_export("metrics.root_mean_squared_error")
def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None,
                            name: Optional[str] = None) -> Metric:
    """The square root of the streaming mean squared error.

    Returns:
      (root_mean_squared_error, update_op): float32 scalars.
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels,
                                                                weights)
    mse = mean_squared_error(labels, predictions, weights, None, None,
                             name or "root_mean_squared_error")
    return _transformed(mse, math_unary.sqrt, metrics_collections, updates_collections)


@tf_export("metrics.mean_relative_error")
def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None,
                        name: Optional[str] = None) -> Metric:
    """The streaming mean of `|labels - predictions| / normalizer` (0 where the
    normalizer is 0).

    Returns:
      (mean_relative_error, update_op): float32 scalars.
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels,
                                                                weights)
    predictions, normalizer = confusion_matrix.remove_squeezable_dimensions(
        predictions, normalizer)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative = indexing_select.where(
        math_binary.equal(normalizer, 0.0), array_fill_ops.zeros_like(labels),
        math_binary.divide(math_unary.abs(math_binary.subtract(labels, predictions)),
                           normalizer))
    return mean(relative, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


@tf_export("metrics.mean_cosine_distance")
def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name: Optional[str] = None) -> Metric:
    """`1 - mean(sum(labels * predictions, dim))`, streamed; inputs are assumed
    unit-normalized along `dim`.

    Returns:
      (mean_distance, update_op): float32 scalars.
    """
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels,
                                                                weights)
    radial = reduction_ops.reduce_sum(math_binary.multiply(predictions, labels),
                                      axis=[dim], keepdims=True)
    return _transformed(mean(radial, weights, None, None, name or "mean_cosine_distance"),
                        lambda t: math_binary.subtract(1.0, t), metrics_collections,
                        updates_collections)


@tf_export("metrics.percentage_below")
def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name: Optional[str] = None) -> Metric:
    """The streaming (weighted) fraction of `values` strictly below `threshold`.

    Returns:
      (percentage, update_op): float32 scalars.
    """
    is_below = math_ops.cast(math_binary.less(values, threshold), _dt.float32)
    return mean(is_below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


def _flatten(t: Tensor) -> Tensor:
    if t.shape.ndims is None or t.shape.ndims > 1:
        return array_ops.reshape(t, [-1])
    return t


def _streaming_confusion_matrix(labels, predictions, num_classes: int, weights=None):
    total_cm = metric_variable([num_classes, num_classes], _dt.float64,
                               name="total_confusion_matrix")
    predictions = _flatten(math_ops.cast(predictions, _dt.int64))
    labels = _flatten(math_ops.cast(labels, _dt.int64))
    if weights is not None:
        weights = _flatten(convert_to_tensor(weights))
    current = confusion_matrix.confusion_matrix(
        labels, predictions, math_ops.cast(num_classes, _dt.int64), weights=weights,
        dtype=_dt.float64)
    return total_cm, state_ops.assign_add(total_cm, current)


def _check_num_classes(num_classes) -> int:
    if isinstance(num_classes, Tensor):  # TF takes a constant Tensor too
        from tensorweave.framework import tensor_util
        static = tensor_util.constant_value(num_classes)
        if static is None or static.ndim or static.dtype.kind not in "iu":
            raise ValueError("num_classes must be a positive int or a constant integer "
                             "scalar Tensor (the accumulators are [num_classes] "
                             "variables), got %r" % (num_classes,))
        num_classes = int(static)
    if not isinstance(num_classes, numbers.Integral) or isinstance(num_classes, bool) \
            or num_classes < 1:
        raise ValueError("num_classes must be a positive Python int (the accumulators "
                         "are [num_classes] variables), got %r" % (num_classes,))
    return int(num_classes)


@tf_export("metrics.mean_iou")
def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name: Optional[str] = None) -> Metric:
    """The mean intersection-over-union over the classes that occur, from a streaming
    confusion matrix.

    Args:
      labels, predictions: integer Tensors of one shape (flattened).
      num_classes: the number of classes (an int, or a constant integer Tensor).
      weights: None or a Tensor of the shape of `predictions`.

    Returns:
      (mean_iou, update_op): a float32 scalar, and the update op of the float64
      `[num_classes, num_classes]` confusion matrix.

    Raises:
      ValueError: incompatible shapes or a bad `num_classes`.
    """
    num_classes = _check_num_classes(num_classes)
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm, update_op = _streaming_confusion_matrix(labels, predictions,
                                                          num_classes, weights)
        value = cross_replica_value(lambda: _mean_iou_value(total_cm, num_classes))
        return collected(value, update_op, metrics_collections, updates_collections)


def _mean_iou_value(total_cm, num_classes: int) -> Tensor:
    sum_over_row = math_ops.cast(reduction_ops.reduce_sum(total_cm, 0), _dt.float32)
    sum_over_col = math_ops.cast(reduction_ops.reduce_sum(total_cm, 1), _dt.float32)
    diag = math_ops.cast(indexing_ops.strided_slice(
        array_ops.reshape(total_cm, [-1]), [0], [num_classes * num_classes],
        [num_classes + 1]), _dt.float32)
    denominator = math_binary.subtract(math_binary.add(sum_over_row, sum_over_col), diag)
    num_valid = reduction_ops.reduce_sum(math_ops.cast(
        math_binary.not_equal(denominator, 0.0), _dt.float32))
    denominator = indexing_select.where(math_binary.greater(denominator, 0.0),
                                        denominator, array_fill_ops.ones_like(denominator))
    iou = math_binary.divide(diag, denominator)
    return indexing_select.where(
        math_binary.greater(num_valid, 0.0),
        math_binary.divide(reduction_ops.reduce_sum(iou, name="mean_iou"), num_valid),
        array_fill_ops.zeros_like(num_valid))


@tf_export("metrics.mean_per_class_accuracy")
def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None,
                            name: Optional[str] = None) -> Metric:
    """The mean over classes of the per-class accuracy (correct / examples of the class,
    0 for a class never seen), streamed.

    Returns:
      (mean_accuracy, update_op): a float32 scalar, and the float32 `[num_classes]`
      per-class accuracies after the update.

    Raises:
      ValueError: incompatible shapes or a bad `num_classes`.
    """
    num_classes = _check_num_classes(num_classes)
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = _flatten(math_ops.cast(labels, _dt.int64))
        predictions = _flatten(convert_to_tensor(predictions))
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], _dt.float32, name="total")
        count = metric_variable([num_classes], _dt.float32, name="count")
        ones = array_fill_ops.ones_like(labels, dtype=_dt.float32)
        if labels.dtype != predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        is_correct = math_ops.cast(math_binary.equal(predictions, labels), _dt.float32)
        if weights is not None:
            weights = math_ops.cast(_flatten(convert_to_tensor(weights)), _dt.float32)
            is_correct = math_binary.multiply(is_correct, weights)
            ones = math_binary.multiply(ones, weights)
        update_total = state_ops.scatter_add(total, labels, ones)
        update_count = state_ops.scatter_add(count, labels, is_correct)
        value = cross_replica_value(lambda: reduction_ops.reduce_mean(
            safe_div(count, total, None), name="mean_accuracy"))
        return collected(value, safe_div(update_count, update_total, "update_op"),
                         metrics_collections, updates_collections)
