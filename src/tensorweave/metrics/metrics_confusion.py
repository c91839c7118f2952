"""TF1's streaming confusion-count metrics: true/false positives/negatives (plain and at
thresholds), precision, recall, their threshold variants, AUC, and
sensitivity/specificity at a fixed specificity/sensitivity.

Each returns `(value, update_op)`; see metric_utils.py for the streaming contract.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.metrics.metric_utils import (
    add_to, collected, confusion_at_thresholds, cross_replica_value, metric_variable,
    read_variable, remove_squeezable_dimensions)
from tensorweave.ops.array import array_fill_ops, array_ops
from tensorweave.ops.debug import check_ops
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops
from tensorweave.ops.math import scan_ops
from tensorweave.ops.state import state_ops
from tensorweave.ops.state.variable_scope import variable_scope
from tensorweave.platform import tf_logging

Metric = Tuple[Tensor, Tensor]


def _count_condition(values: Tensor, weights, metrics_collections,
                     updates_collections) -> Metric:
    """Streams the (weighted) number of true elements of the bool Tensor `values`."""
    check_ops.assert_type(values, _dt.bool)
    count = metric_variable([], _dt.float32, name="count")
    values = math_ops.cast(values, _dt.float32)
    if weights is not None:
        with _graph.control_dependencies((check_ops.assert_rank_in(
                weights, (0, array_ops.rank(values))),)):
            weights = math_ops.cast(weights, _dt.float32)
            values = math_binary.multiply(values, weights)
    value = read_variable(count, metrics_collections)
    update_op = state_ops.assign_add(count, reduction_ops.reduce_sum(values))
    add_to(updates_collections, update_op)
    return value, update_op


def _bool_inputs(labels, predictions, weights):
    return remove_squeezable_dimensions(math_ops.cast(predictions, _dt.bool),
                                        math_ops.cast(labels, _dt.bool), weights)


def _counting_metric(default_name: str, label_value: bool, prediction_value: bool):
    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name: Optional[str] = None) -> Metric:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _bool_inputs(labels, predictions, weights)
            hit = math_binary.logical_and(math_binary.equal(labels, label_value),
                                          math_binary.equal(predictions, prediction_value))
            return _count_condition(hit, weights, metrics_collections,
                                    updates_collections)
    metric.__name__ = default_name
    metric.__qualname__ = default_name
    metric.__doc__ = """The streaming (weighted) count of %s.

    Args:
      labels: the ground truth, cast to bool.
      predictions: the predictions, cast to bool, the shape of `labels`.
      weights: None, or a Tensor of rank 0 or of the rank of `labels`.
      metrics_collections, updates_collections: collections for the value and update.
      name: variable scope name (default "%s").

    Returns:
      (count, update_op): float32 scalars.

    Raises:
      ValueError: incompatible shapes.
    """ % (default_name.replace("_", " "), default_name)
    return metric


true_positives = tf_export("metrics.true_positives")(
    _counting_metric("true_positives", True, True))
false_positives = tf_export("metrics.false_positives")(
    _counting_metric("false_positives", False, True))
true_negatives = tf_export("metrics.true_negatives")(
    _counting_metric("true_negatives", False, False))
false_negatives = tf_export("metrics.false_negatives")(
    _counting_metric("false_negatives", True, False))


def _at_thresholds_metric(default_name: str, key: str):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name: Optional[str] = None) -> Metric:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(labels, predictions, thresholds,
                                                      weights, includes=(key,))
            value = read_variable(values[key], metrics_collections)
            add_to(updates_collections, updates[key])
            return value, updates[key]
    metric.__name__ = default_name + "_at_thresholds"
    metric.__qualname__ = metric.__name__
    metric.__doc__ = """The streaming (weighted) count of %s at each threshold; a
    prediction is positive when it is strictly above the threshold.

    Args:
      labels: the ground truth, cast to bool.
      predictions: float Tensor in [0, 1] of the shape of `labels`.
      thresholds: a list of Python floats.
      weights: None or a Tensor broadcastable to `labels`.
      metrics_collections, updates_collections: collections for the value and update.
      name: variable scope name (default "%s").

    Returns:
      (counts, update_op): float32 Tensors of shape `[len(thresholds)]`.

    Raises:
      InvalidArgumentError (at run time): predictions outside [0, 1].
    """ % (default_name.replace("_", " "), default_name)
    return metric


true_positives_at_thresholds = tf_export("metrics.true_positives_at_thresholds")(
    _at_thresholds_metric("true_positives", "tp"))
false_positives_at_thresholds = tf_export("metrics.false_positives_at_thresholds")(
    _at_thresholds_metric("false_positives", "fp"))
true_negatives_at_thresholds = tf_export("metrics.true_negatives_at_thresholds")(
    _at_thresholds_metric("true_negatives", "tn"))
false_negatives_at_thresholds = tf_export("metrics.false_negatives_at_thresholds")(
    _at_thresholds_metric("false_negatives", "fn"))


def _ratio_or_zero(numerator, other, name: str) -> Tensor:
    """`numerator / (numerator + other)`, 0 when the sum is not positive."""
    total = math_binary.add(numerator, other)
    return indexing_select.where(math_binary.greater(total, 0.0),
                                 math_binary.divide(numerator, total),
                                 array_fill_ops.zeros_like(total), name=name)


def _precision_or_recall(default_name: str, other_metric, labels, predictions, weights,
                         metrics_collections, updates_collections, name) -> Metric:
    with variable_scope(name, default_name, (predictions, labels, weights)):
        predictions, labels, weights = _bool_inputs(labels, predictions, weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        other, other_update = other_metric(labels, predictions, weights)
        value = cross_replica_value(lambda: _ratio_or_zero(tp, other, "value"))
        update_op = _ratio_or_zero(tp_update, other_update, "update_op")
        return collected(value, update_op, metrics_collections, updates_collections)


@tf_export("metrics.precision")
def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name: Optional[str] = None) -> Metric:
    """Streaming precision `tp / (tp + fp)` (0 when nothing was predicted positive).

    Returns:
      (precision, update_op): float32 scalars.
    """
    return _precision_or_recall("precision", false_positives, labels, predictions,
                                weights, metrics_collections, updates_collections, name)


@tf_export("metrics.recall")
def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name: Optional[str] = None) -> Metric:
    """Streaming recall `tp / (tp + fn)` (0 when there was no positive label).

    Returns:
      (recall, update_op): float32 scalars.
    """
    return _precision_or_recall("recall", false_negatives, labels, predictions,
                                weights, metrics_collections, updates_collections, name)


def _ratio_at_thresholds(default_name: str, other_key: str, labels, predictions,
                         thresholds, weights, metrics_collections, updates_collections,
                         name) -> Metric:
    with variable_scope(name, default_name, (predictions, labels, weights)):
        values, updates = confusion_at_thresholds(labels, predictions, thresholds,
                                                  weights, includes=("tp", other_key))
        prefix = default_name.split("_")[0] + "_"

        def ratio(tp, other, suffix):
            return math_binary.divide(tp, math_binary.add(math_binary.add(1e-7, tp),
                                                          other), name=prefix + suffix)
        value = cross_replica_value(lambda: ratio(values["tp"], values[other_key], "value"))
        update_op = ratio(updates["tp"], updates[other_key], "update_op")
        return collected(value, update_op, metrics_collections, updates_collections)


@tf_export("metrics.precision_at_thresholds")
def precision_at_thresholds(labels, predictions, thresholds, weights=None,
                            metrics_collections=None, updates_collections=None,
                            name: Optional[str] = None) -> Metric:
    """Streaming `tp / (tp + fp + 1e-7)` at each threshold (positive: strictly above).

    Returns:
      (precision, update_op): float32 Tensors of shape `[len(thresholds)]`.
    """
    return _ratio_at_thresholds("precision_at_thresholds", "fp", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


@tf_export("metrics.recall_at_thresholds")
def recall_at_thresholds(labels, predictions, thresholds, weights=None,
                         metrics_collections=None, updates_collections=None,
                         name: Optional[str] = None) -> Metric:
    """Streaming `tp / (tp + fn + 1e-7)` at each threshold (positive: strictly above).

    Returns:
      (recall, update_op): float32 Tensors of shape `[len(thresholds)]`.
    """
    return _ratio_at_thresholds("recall_at_thresholds", "fn", labels, predictions,
                                thresholds, weights, metrics_collections,
                                updates_collections, name)


_KEPSILON = 1e-7
_SUMMATION_METHODS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def _interpolate_pr_auc(tp, fp, fn, n: int) -> Tensor:
    """PR-AUC by Davis & Goadrich interpolation between consecutive thresholds."""
    dtp = math_binary.subtract(tp[:n - 1], tp[1:])
    p = math_binary.add(tp, fp)
    dp = math_binary.subtract(p[:n - 1], p[1:])
    prec_slope = math_binary.div_no_nan(dtp, math_binary.maximum(dp, 0.0),
                                        name="prec_slope")
    intercept = math_binary.subtract(tp[1:], math_binary.multiply(prec_slope, p[1:]))
    safe_p_ratio = indexing_select.where(
        math_binary.logical_and(math_binary.greater(p[:n - 1], 0.0),
                                math_binary.greater(p[1:], 0.0)),
        math_binary.div_no_nan(p[:n - 1], math_binary.maximum(p[1:], 0.0),
                               name="recall_relative_ratio"),
        array_fill_ops.ones_like(p[1:]))
    increment = math_binary.div_no_nan(
        math_binary.multiply(prec_slope, math_binary.add(
            dtp, math_binary.multiply(intercept, math_unary.log(safe_p_ratio)))),
        math_binary.maximum(math_binary.add(tp[1:], fn[1:]), 0.0),
        name="pr_auc_increment")
    return reduction_ops.reduce_sum(increment, name="interpolate_pr_auc")


def _auc_from_counts(tp, fn, tn, fp, n: int, curve: str, summation_method: str,
                     name: str) -> Tensor:
    if curve == "PR" and summation_method == "careful_interpolation":
        return _interpolate_pr_auc(tp, fp, fn, n)
    eps = 1.0e-6
    rec = math_binary.divide(math_binary.add(tp, eps),
                             math_binary.add(math_binary.add(tp, fn), eps))
    if curve == "ROC":
        x = math_binary.divide(fp, math_binary.add(math_binary.add(fp, tn), eps))
        y = rec
    else:
        x = rec
        y = math_binary.divide(math_binary.add(tp, eps),
                               math_binary.add(math_binary.add(tp, fp), eps))
    dx = math_binary.subtract(x[:n - 1], x[1:])
    if summation_method == "minoring":
        height = math_binary.minimum(y[:n - 1], y[1:])
    elif summation_method == "majoring":
        height = math_binary.maximum(y[:n - 1], y[1:])
    else:
        height = math_binary.divide(math_binary.add(y[:n - 1], y[1:]), 2.0)
    return reduction_ops.reduce_sum(math_binary.multiply(dx, height), name=name)


def _interior_thresholds(num_thresholds: int):
    return [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]


@tf_export("metrics.auc")
def auc(labels, predictions, weights=None, num_thresholds: int = 200,
        metrics_collections=None, updates_collections=None, curve: str = "ROC",
        name: Optional[str] = None, summation_method: str = "trapezoidal",
        thresholds: Optional[Sequence[float]] = None) -> Metric:
    """The area under the ROC or PR curve, from streaming confusion counts at
    `num_thresholds` thresholds (or the given `thresholds` plus -1e-7 and 1 + 1e-7).

    Args:
      labels: the ground truth, cast to bool.
      predictions: float Tensor in [0, 1] of the shape of `labels`.
      weights: None or a Tensor broadcastable to `labels`.
      num_thresholds: number of thresholds, evenly spaced over [0, 1].
      metrics_collections, updates_collections: collections for the value and update.
      curve: "ROC" or "PR".
      name: variable scope name (default "auc").
      summation_method: "trapezoidal", "careful_interpolation" (PR: interpolated
        precision; ROC: as trapezoidal), "minoring" or "majoring".
      thresholds: optional list of Python floats; overrides `num_thresholds`.

    Returns:
      (auc, update_op): float32 scalars.

    Raises:
      ValueError: unknown curve or summation method.
    """
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError("Curve must be either ROC or PR. Curve %s is unknown."
                             % (curve,))
        if summation_method not in _SUMMATION_METHODS:
            raise ValueError(
                "Invalid summation_method: %s summation_method should be 'trapezoidal',"
                " 'careful_interpolation', 'minoring', or 'majoring'." % summation_method)
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            num_thresholds = len(inner) + 2
        else:
            inner = _interior_thresholds(num_thresholds)
        all_thresholds = [0.0 - _KEPSILON] + inner + [1.0 + _KEPSILON]
        if curve == "PR" and summation_method == "trapezoidal":
            tf_logging.warning(
                "Trapezoidal rule is known to produce incorrect PR-AUCs; please switch "
                "to \"careful_interpolation\" instead.")
        values, updates = confusion_at_thresholds(labels, predictions, all_thresholds,
                                                  weights)
        value = cross_replica_value(lambda: _auc_from_counts(
            values["tp"], values["fn"], values["tn"], values["fp"], num_thresholds, curve,
            summation_method, "value"))
        update_op = _auc_from_counts(updates["tp"], updates["fn"], updates["tn"],
                                     updates["fp"], num_thresholds, curve,
                                     summation_method, "update_op")
        return collected(value, update_op, metrics_collections, updates_collections)


def _rate_at_fixed(default_name: str, fixed_arg: str, fixed: float, labels, predictions,
                   weights, num_thresholds: int, metrics_collections,
                   updates_collections, name) -> Metric:
    if fixed < 0 or fixed > 1:
        # TF's two messages differ by one word
        verb = "got" if fixed_arg == "specificity" else "is"
        raise ValueError("`%s` must be in the range [0, 1]. Currently, `%s` %s %s."
                         % (fixed_arg, fixed_arg, verb, fixed))
    with variable_scope(name, default_name, (predictions, labels, weights)):
        # TF's top threshold is just above 1 for sensitivity_at_specificity and just
        # below it for specificity_at_sensitivity (so a prediction of exactly 1.0 counts
        # as positive at every threshold there)
        top = 1.0 + _KEPSILON if fixed_arg == "specificity" else 1.0 - _KEPSILON
        all_thresholds = ([0.0 - _KEPSILON] + _interior_thresholds(num_thresholds)
                          + [top])
        values, updates = confusion_at_thresholds(labels, predictions, all_thresholds,
                                                  weights)

        def rate(a, b):
            return math_binary.divide(a, math_binary.add(math_binary.add(a, b),
                                                         _KEPSILON))

        def compute(c, out_name):
            if fixed_arg == "specificity":
                gap = math_unary.abs(math_binary.subtract(rate(c["tn"], c["fp"]), fixed))
                index = math_ops.cast(scan_ops.argmin(gap, 0), _dt.int32)
                num, other = c["tp"], c["fn"]
            else:
                gap = math_unary.abs(math_binary.subtract(rate(c["tp"], c["fn"]), fixed))
                at_min = math_ops.cast(math_binary.equal(gap, reduction_ops.reduce_min(gap)),
                                       _dt.int64)
                # The last threshold whose gap is minimal.
                index = math_ops.cast(scan_ops.argmax(scan_ops.cumsum(at_min), 0),
                                      _dt.int32)
                num, other = c["tn"], c["fp"]
            return math_binary.divide(num[index], math_binary.add(
                math_binary.add(num[index], other[index]), _KEPSILON), name=out_name)

        value = cross_replica_value(lambda: compute(values, "value"))
        update_op = compute(updates, "update_op")
        return collected(value, update_op, metrics_collections, updates_collections)


@tf_export("metrics.sensitivity_at_specificity")
def sensitivity_at_specificity(labels, predictions, specificity: float, weights=None,
                               num_thresholds: int = 200, metrics_collections=None,
                               updates_collections=None,
                               name: Optional[str] = None) -> Metric:
    """The streaming sensitivity at the threshold whose specificity is closest to
    `specificity` (the first such threshold).

    Returns:
      (sensitivity, update_op): float32 scalars.

    Raises:
      ValueError: `specificity` outside [0, 1].
    """
    return _rate_at_fixed("sensitivity_at_specificity", "specificity", specificity,
                          labels, predictions, weights, num_thresholds,
                          metrics_collections, updates_collections, name)


@tf_export("metrics.specificity_at_sensitivity")
def specificity_at_sensitivity(labels, predictions, sensitivity: float, weights=None,
                               num_thresholds: int = 200, metrics_collections=None,
                               updates_collections=None,
                               name: Optional[str] = None) -> Metric:
    """The streaming specificity at the threshold whose sensitivity is closest to
    `sensitivity` (the last such threshold).

    Returns:
      (specificity, update_op): float32 scalars.

    Raises:
      ValueError: `sensitivity` outside [0, 1].
    """
    return _rate_at_fixed("specificity_at_sensitivity", "sensitivity", sensitivity,
                          labels, predictions, weights, num_thresholds,
                          metrics_collections, updates_collections, name)
