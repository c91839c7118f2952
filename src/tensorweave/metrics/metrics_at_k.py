"""TF1's streaming top-k metrics: precision/recall at k (and at given top-k indices) and
average precision at k.

TF1 computes these with set operations on each row's top-k class ids and labels. Here
the same set semantics are written with dense comparisons: a row's labels
`[..., num_labels]` and top-k ids `[..., k]` are compared pairwise, duplicates count
once, and the entries of a SparseTensor of labels that are absent are masked out.
Dense labels are all set members (a -1 is a label no prediction matches).
"""
from __future__ import annotations

import numbers
from typing import Optional, Tuple

from tensorweave.framework import api_export as _api
from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.losses.weights_broadcast import assert_broadcastable, broadcast_weights
from tensorweave.metrics.metric_utils import collected, cross_replica_value, metric_variable
from tensorweave.ops.array import array_fill_ops, array_ops
from tensorweave.ops.control_flow import control_flow_ops
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops
from tensorweave.ops.math import scan_ops
from tensorweave.ops.state import state_ops

Metric = Tuple[Tensor, Tensor]


def _top_k_indices(predictions, k: int) -> Tensor:
    top_k = _api.exported("nn")["top_k"]
    return top_k(predictions, k)[1]


def _at_k_name(name: str, k=None, class_id=None) -> str:
    if k is not None:
        name = "%s_at_%d" % (name, k)
    else:  # the *_at_top_k metrics, given the top indices
        name = "%s_at_k" % name
    if class_id is not None:
        name = "%s_class%d" % (name, class_id)
    return name


class _Labels:
    """Labels as a dense int64 Tensor `[..., num_labels]` and a bool mask of the
    entries that are present (all of them for dense labels)."""

    def __init__(self, values: Tensor, present: Tensor, sparse: bool):
        self.values = values
        self.present = present
        self.sparse = sparse


def _check_int64_labels(dtype, metric: str) -> None:
    """TF1 compares labels with the int64 top-k class ids without casting them, so
    labels of any other dtype (a Python list of ints is int32) are a TypeError."""
    if dtype != _dt.int64:
        raise TypeError("Types don't match: the labels of %s must be int64, like the "
                        "top-k class ids they are compared with; got %s."
                        % (metric, dtype.name))


def _labels_of(labels, metric: str) -> _Labels:
    from tensorweave.ops.sparse import sparse_ops
    if isinstance(labels, SparseTensorValue):
        labels = SparseTensor.from_value(labels)
    if isinstance(labels, SparseTensor):
        _check_int64_labels(labels.values.dtype, metric)
        values = sparse_ops.sparse_tensor_to_dense(labels, default_value=-1,
                                                   validate_indices=False)
        ones = SparseTensor(labels.indices,
                            array_fill_ops.ones_like(labels.values, dtype=_dt.int32),
                            labels.dense_shape)
        present = math_binary.greater(sparse_ops.sparse_tensor_to_dense(
            ones, default_value=0, validate_indices=False), 0)
        return _Labels(values, present, True)
    values = convert_to_tensor(labels)
    _check_int64_labels(values.dtype, metric)
    return _Labels(values, array_fill_ops.ones_like(values, dtype=_dt.bool), False)


def _maybe_expand_labels(labels: _Labels, predictions: Tensor) -> _Labels:
    """Adds a trailing labels dimension when labels have one dimension less than the
    predictions (dense labels only; a SparseTensor keeps its shape)."""
    if labels.sparse:
        return labels
    l_rank = labels.values.shape.ndims
    p_rank = predictions.shape.ndims
    if l_rank is not None and p_rank is not None:
        if p_rank == l_rank:
            return labels
        if p_rank == l_rank + 1:
            return _Labels(array_ops.expand_dims(labels.values, -1),
                           array_ops.expand_dims(labels.present, -1), False)
        raise ValueError(
            "Unexpected labels shape %s for predictions shape %s. Predictions rank "
            "should be the same rank as labels rank or labels rank plus one ."
            % (labels.values.shape, predictions.shape))
    expand = math_binary.equal(array_ops.rank(predictions),
                               math_binary.add(array_ops.rank(labels.values), 1))
    values, present = labels.values, labels.present
    return _Labels(
        control_flow_ops.cond(expand, lambda: array_ops.expand_dims(values, -1),
                              lambda: values),
        control_flow_ops.cond(expand, lambda: array_ops.expand_dims(present, -1),
                              lambda: present), False)


def _any_match(a: Tensor, b: Tensor, b_present: Tensor) -> Tensor:
    """For each entry of `a` `[..., n]`, whether it equals a present entry of `b`
    `[..., m]`: a bool `[..., n]`."""
    eq = math_binary.equal(array_ops.expand_dims(a, -1), array_ops.expand_dims(b, -2))
    eq = math_binary.logical_and(eq, array_ops.expand_dims(b_present, -2))
    return reduction_ops.reduce_any(eq, axis=-1)


def _first_occurrence(values: Tensor, present: Tensor) -> Tensor:
    """Whether each present entry of `values` `[..., n]` is the first of its value."""
    eq = math_binary.equal(array_ops.expand_dims(values, -1),
                           array_ops.expand_dims(values, -2))
    eq = math_binary.logical_and(eq, array_ops.expand_dims(present, -2))
    n = array_ops.shape(values)[-1]
    position = math_ops.range(n)
    earlier = math_binary.less(array_ops.expand_dims(position, 0),
                               array_ops.expand_dims(position, 1))   # [n, n]: j < i
    seen_before = reduction_ops.reduce_any(math_binary.logical_and(eq, earlier), axis=-1)
    return math_binary.logical_and(present, math_unary.logical_not(seen_before))


def _count(mask: Tensor) -> Tensor:
    return reduction_ops.reduce_sum(math_ops.cast(mask, _dt.float64), axis=-1)


def _set_counts(labels: _Labels, predictions_idx: Tensor, class_id, kind: str) -> Tensor:
    """Per row, the size of predictions ∩ labels ('tp'), predictions − labels ('fp') or
    labels − predictions ('fn'), restricted to `class_id` when it is given: float64
    `[D1, ..., DN]`."""
    if class_id is not None:
        in_predictions = reduction_ops.reduce_any(
            math_binary.equal(predictions_idx, class_id), axis=-1)
        in_labels = reduction_ops.reduce_any(math_binary.logical_and(
            math_binary.equal(labels.values, class_id), labels.present), axis=-1)
        if kind == "tp":
            hit = math_binary.logical_and(in_predictions, in_labels)
        elif kind == "fp":
            hit = math_binary.logical_and(in_predictions, math_unary.logical_not(in_labels))
        else:
            hit = math_binary.logical_and(in_labels, math_unary.logical_not(in_predictions))
        return math_ops.cast(hit, _dt.float64)
    all_predictions = array_fill_ops.ones_like(predictions_idx, dtype=_dt.bool)
    if kind == "fn":
        first = _first_occurrence(labels.values, labels.present)
        matched = _any_match(labels.values, predictions_idx, all_predictions)
        return _count(math_binary.logical_and(first, math_unary.logical_not(matched)))
    first = _first_occurrence(predictions_idx, all_predictions)
    matched = _any_match(predictions_idx, labels.values, labels.present)
    if kind == "fp":
        matched = math_unary.logical_not(matched)
    return _count(math_binary.logical_and(first, matched))


def _weighted(per_row: Tensor, weights) -> Tensor:
    if weights is None:
        return per_row
    with _graph.control_dependencies((assert_broadcastable(weights, per_row),)):
        return math_binary.multiply(per_row, math_ops.cast(weights, _dt.float64))


def _streaming_count(labels: _Labels, predictions_idx: Tensor, k, class_id, weights,
                     kind: str) -> Tuple[Tensor, Tensor]:
    prefix = {"tp": "true_positive", "fp": "false_positive", "fn": "false_negative"}[kind]
    with _graph.name_scope(None, _at_k_name(prefix, k, class_id),
                           (predictions_idx, labels.values, weights)) as scope:
        with _graph.name_scope(None, prefix + "s"):
            per_row = _weighted(_set_counts(labels, predictions_idx, class_id, kind),
                                weights)
        batch_total = reduction_ops.reduce_sum(per_row)
        var = metric_variable([], _dt.float64, name=scope)
        return var, state_ops.assign_add(var, batch_total, name="update")


def _checked_class_id(class_id) -> Optional[int]:
    """`class_id` as a Python int (NumPy integers and bools included, as in TF)."""
    if class_id is None:
        return None
    # TF also takes a float class_id, that no int64 label can equal; refuse it instead
    if not isinstance(class_id, numbers.Integral):
        raise TypeError("class_id must be an integer or None, got %r" % (class_id,))
    return int(class_id)


def _ratio_at_top_k(kind: str, other: str, labels, predictions_idx, k, class_id, weights,
                    metrics_collections, updates_collections, name) -> Metric:
    class_id = _checked_class_id(class_id)
    base = "precision" if other == "fp" else "recall"
    with _graph.name_scope(name, _at_k_name(base, k, class_id),
                           (predictions_idx, labels, weights)) as scope:
        predictions_idx = math_ops.cast(predictions_idx, _dt.int64)
        labels = _maybe_expand_labels(_labels_of(labels, base + "_at_k"), predictions_idx)
        tp, tp_update = _streaming_count(labels, predictions_idx, k, class_id, weights,
                                         "tp")
        rest, rest_update = _streaming_count(labels, predictions_idx, k, class_id,
                                             weights, other)
        value = cross_replica_value(lambda: math_binary.divide(
            tp, math_binary.add(tp, rest), name=scope))
        update = math_binary.divide(tp_update, math_binary.add(tp_update, rest_update),
                                    name="update")
        return collected(value, update, metrics_collections, updates_collections)


_AT_K_ARGS = """
    Args:
      labels: int Tensor `[D1, ..., DN, num_labels]` or `[D1, ..., DN]`, or a
        SparseTensor, of class ids in [0, num_classes).
      predictions: float Tensor `[D1, ..., DN, num_classes]`.
      k: the number of top predictions to consider (a Python int).
      class_id: None, or the class (a Python int) to compute the metric for.
      weights: None, or a Tensor of rank 0 or of rank N broadcastable to `[D1..DN]`.
      metrics_collections, updates_collections: collections for the value and update.
      name: name scope.

    Returns:
      (value, update_op): float64 scalars; NaN while no relevant item was counted.
"""


@tf_export("metrics.precision_at_top_k")
def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None,
                       name: Optional[str] = None) -> Metric:
    """Streaming precision of given top-k class ids `predictions_idx` `[D1..DN, k]`:
    `tp / (tp + fp)` with set semantics per row."""
    return _ratio_at_top_k("tp", "fp", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


@tf_export("metrics.recall_at_top_k")
def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None,
                    name: Optional[str] = None) -> Metric:
    """Streaming recall of given top-k class ids `predictions_idx` `[D1..DN, k]`:
    `tp / (tp + fn)` with set semantics per row (labels outside the top-k ids, -1
    included for dense labels, are false negatives)."""
    return _ratio_at_top_k("tp", "fn", labels, predictions_idx, k, class_id, weights,
                           metrics_collections, updates_collections, name)


def _of_top_k(kind: str, at_top_k, labels, predictions, k, class_id, weights,
              metrics_collections, updates_collections, name) -> Metric:
    """`at_top_k` (precision_at_top_k or recall_at_top_k) of the ids of the `k` largest
    `predictions`, in the name scope "<kind>_at_<k>[_class<class_id>]"."""
    with _graph.name_scope(name, _at_k_name(kind, k, class_id),
                           (predictions, labels, weights)) as scope:
        top_k_idx = _top_k_indices(predictions, k)
        return at_top_k(labels, top_k_idx, k=k, class_id=class_id, weights=weights,
                        metrics_collections=metrics_collections,
                        updates_collections=updates_collections, name=scope)


@tf_export("metrics.precision_at_k")
def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None,
                   name: Optional[str] = None) -> Metric:
    """Streaming precision of the top `k` predictions against `labels`."""
    return _of_top_k("precision", precision_at_top_k, labels, predictions, k, class_id,
                     weights, metrics_collections, updates_collections, name)


@tf_export("metrics.sparse_precision_at_k")
def sparse_precision_at_k(labels, predictions, k, class_id=None, weights=None,
                          metrics_collections=None, updates_collections=None,
                          name: Optional[str] = None) -> Metric:
    """Deprecated alias of `precision_at_k`."""
    return precision_at_k(labels, predictions, k, class_id=class_id, weights=weights,
                          metrics_collections=metrics_collections,
                          updates_collections=updates_collections, name=name)


@tf_export("metrics.recall_at_k")
def recall_at_k(labels, predictions, k, class_id=None, weights=None,
                metrics_collections=None, updates_collections=None,
                name: Optional[str] = None) -> Metric:
    """Streaming recall of the top `k` predictions against `labels`."""
    return _of_top_k("recall", recall_at_top_k, labels, predictions, k, class_id, weights,
                     metrics_collections, updates_collections, name)


for _f in (precision_at_top_k, recall_at_top_k, precision_at_k, recall_at_k):
    _f.__doc__ += _AT_K_ARGS


def _clean_out_of_range(labels: _Labels, num_classes: Tensor) -> _Labels:
    """Labels at or above `num_classes` become -1 (they can never be predicted)."""
    values = labels.values
    cleaned = indexing_select.where(math_binary.greater_equal(values, num_classes),
                                    math_binary.multiply(array_fill_ops.ones_like(values),
                                                         -1), values)
    return _Labels(cleaned, labels.present, labels.sparse)


def _num_relevant(labels: _Labels, k: int) -> Tensor:
    """Per row, min(number of labels, k): the distinct present labels of a
    SparseTensor, or the non-negative entries of dense labels."""
    if labels.sparse:
        n = _count(_first_occurrence(labels.values, labels.present))
    else:
        n = _count(math_binary.greater_equal(labels.values, 0))
    return math_binary.minimum(n, float(k))


def _average_precision_per_row(labels: _Labels, predictions_idx: Tensor) -> Tensor:
    k = predictions_idx.shape.as_list()[-1]
    if k is None:
        raise ValueError("The last dimension of predictions_idx must be set. "
                         "Currently, it is None.")
    labels = _maybe_expand_labels(labels, predictions_idx)
    relevant = math_ops.cast(_any_match(predictions_idx, labels.values, labels.present),
                             _dt.float64)                                # [..., k]
    tp_per_k = scan_ops.cumsum(relevant, axis=-1)
    retrieved_per_k = scan_ops.cumsum(array_fill_ops.ones_like(relevant), axis=-1)
    precision_per_k = math_binary.divide(tp_per_k, retrieved_per_k)
    precision_sum = reduction_ops.reduce_sum(
        math_binary.multiply(precision_per_k, relevant), axis=-1)
    return math_binary.divide(precision_sum, _num_relevant(labels, k))


@tf_export("metrics.average_precision_at_k")
def average_precision_at_k(labels, predictions, k, weights=None,
                           metrics_collections=None, updates_collections=None,
                           name: Optional[str] = None) -> Metric:
    """Streaming mean average precision at `k`: per row, the sum over the top-k
    positions that hit a label of the precision at that position, divided by
    min(number of labels, k); averaged over rows (weighted).

    Args:
      labels: int Tensor `[D1, ..., DN, num_labels]` or `[D1, ..., DN]`, or a
        SparseTensor; labels >= num_classes are ignored.
      predictions: float Tensor `[D1, ..., DN, num_classes]`.
      k: a Python int >= 1.
      weights: None, or a Tensor broadcastable to `[D1, ..., DN]`.
      metrics_collections, updates_collections: collections for the value and update.
      name: name scope.

    Returns:
      (mean_average_precision, update_op): float64 scalars (0 before any update).

    Raises:
      ValueError: k < 1.
    """
    if k < 1:
        raise ValueError("Invalid k=%s. `k` should be >= 1." % (k,))
    with _graph.name_scope(name, _at_k_name("average_precision", k),
                           (predictions, labels, weights)) as scope:
        predictions = convert_to_tensor(predictions)
        predictions_idx = math_ops.cast(_top_k_indices(predictions, k), _dt.int64)
        num_classes = math_ops.cast(array_ops.shape(predictions)[-1], _dt.int64)
        labels = _clean_out_of_range(_labels_of(labels, "average_precision_at_k"),
                                     num_classes)
        ap = _average_precision_per_row(labels, predictions_idx)
        if weights is not None:
            weights = broadcast_weights(math_ops.cast(weights, _dt.float64), ap)
            ap = math_binary.multiply(ap, weights)
        # TF's graph holds a `Max` op (the largest label) in this scope, so its "max"
        # scope below is "max_1" (op names are unique regardless of case): reserve the
        # name so that the accumulator is named as in TF
        _graph.get_default_graph().unique_name("Max")
        with _graph.name_scope(None, "max", (ap,)) as max_scope:
            max_var = metric_variable([], _dt.float64, name=max_scope)
            if weights is None:
                batch_max = math_ops.cast(array_ops.size(ap), _dt.float64)
            else:
                batch_max = reduction_ops.reduce_sum(weights, name="batch_max")
            max_update = state_ops.assign_add(max_var, batch_max, name="update")
        with _graph.name_scope(None, "total", (ap,)) as total_scope:
            total_var = metric_variable([], _dt.float64, name=total_scope)
            batch_total = reduction_ops.reduce_sum(ap, name="batch_total")
            total_update = state_ops.assign_add(total_var, batch_total, name="update")
        value = cross_replica_value(lambda: math_binary.div_no_nan(
            total_var, max_var, name="mean"))
        update = math_binary.div_no_nan(total_update, max_update, name=scope)
        return collected(value, update, metrics_collections, updates_collections)


@tf_export("metrics.sparse_average_precision_at_k")
def sparse_average_precision_at_k(labels, predictions, k, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name: Optional[str] = None) -> Metric:
    """Deprecated alias of `average_precision_at_k`."""
    return average_precision_at_k(labels, predictions, k, weights=weights,
                                  metrics_collections=metrics_collections,
                                  updates_collections=updates_collections, name=name)
