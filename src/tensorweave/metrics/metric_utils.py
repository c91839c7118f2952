"""What TF1's streaming metrics share: accumulator variables, the squeezing of labels,
predictions and weights, and the confusion counts at thresholds.

A metric keeps its running state in LOCAL variables (GraphKeys.LOCAL_VARIABLES and
GraphKeys.METRIC_VARIABLES, reset by `tf.local_variables_initializer()`); its update op
adds one batch to them and returns the metric over everything seen so far, its value
tensor reads the metric without changing the state.

Under a tf.distribute strategy (as TF), the accumulators are ON_READ/SUM variables: each
replica's update op adds to its own copy, and the value tensor is built once, through
merge_call, from the sums of the copies (`cross_replica_value`).
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys, Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.losses.weights_broadcast import broadcast_weights
from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops, constant_op
from tensorweave.ops.control_flow import control_flow_ops, structure
from tensorweave.ops.debug import check_ops
from tensorweave.ops.math import confusion_matrix, math_binary, math_ops, math_unary
from tensorweave.ops.math import reduction_ops
from tensorweave.ops.state import state_ops, variables


def metric_variable(shape, dtype, validate_shape: bool = True,
                    name: Optional[str] = None) -> variables.Variable:
    """A zero-initialized, non-trainable accumulator in the LOCAL_VARIABLES and
    METRIC_VARIABLES collections."""
    dtype = _dt.as_dtype(dtype)
    return variables.Variable(
        lambda: array_fill_ops.zeros(shape, dtype), trainable=False,
        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape, name=name,
        synchronization=variables.VariableSynchronization.ON_READ,
        aggregation=variables.VariableAggregation.SUM)


def cross_replica_value(fn):
    """`fn()`, the value tensor of a metric. In a replica of a tf.distribute strategy it
    is built once for all replicas, in cross-replica context where each accumulator
    reads as the sum of its per-replica copies (TF's `_aggregate_across_replicas`);
    `fn` may use the accumulators and value tensors of inner metrics."""
    from tensorweave.distribute import distribute_lib
    rc = distribute_lib.get_replica_context()
    if rc is None or not distribute_lib.has_strategy():
        return fn()
    return rc.merge_call(lambda strategy: fn())


def add_to(collections, value) -> None:
    """Adds `value` to each of `collections` (nothing when it is None or empty)."""
    if collections:
        _graph.add_to_collections(collections, value)


def collected(value: Tensor, update_op: Tensor, metrics_collections,
              updates_collections) -> Tuple[Tensor, Tensor]:
    """Adds a metric's value and update op to their collections; returns the pair."""
    add_to(metrics_collections, value)
    add_to(updates_collections, update_op)
    return value, update_op


def read_variable(var, collections) -> Tensor:
    """The value tensor of a metric that is one accumulator."""
    value = cross_replica_value(lambda: structure.identity(var))
    add_to(collections, value)
    return value


def remove_squeezable_dimensions(predictions, labels, weights):
    """TF1 metrics' squeezing: a trailing 1 of labels or predictions is squeezed as in
    `confusion_matrix.remove_squeezable_dimensions`, and `weights` get a trailing
    dimension squeezed or added to reach the rank of `predictions`.

    Returns:
      (predictions, labels, weights).
    """
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = confusion_matrix.remove_squeezable_dimensions(
            labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_rank = weights.shape.ndims
    if w_rank == 0:
        return predictions, labels, weights
    p_rank = predictions.shape.ndims
    if p_rank is not None and w_rank is not None:
        if w_rank - p_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = array_ops.expand_dims(weights, -1)
        return predictions, labels, weights
    w_rank_t = array_ops.rank(weights)
    rank_diff = math_binary.subtract(w_rank_t, array_ops.rank(predictions))
    w = weights

    def maybe_expand():
        return control_flow_ops.cond(math_binary.equal(rank_diff, -1),
                                     lambda: array_ops.expand_dims(w, -1), lambda: w)

    if w_rank is not None and not weights.shape.dims[-1].is_compatible_with(1):
        def maybe_squeeze():
            return w
    else:
        def maybe_squeeze():
            return array_ops.squeeze(w, [-1])

    def adjust():
        return control_flow_ops.cond(math_binary.equal(rank_diff, 1), maybe_squeeze,
                                     maybe_expand)

    weights = control_flow_ops.cond(math_binary.equal(w_rank_t, 0), lambda: w, adjust)
    return predictions, labels, weights


def float_weights_like(weights, values: Tensor) -> Tensor:
    """`weights` as float32, broadcast to `values` by TF1's rules."""
    return broadcast_weights(math_ops.cast(weights, _dt.float32), values)


_CONFUSION_KEYS = ("tp", "fn", "tn", "fp")
_CONFUSION_NAMES = {"tp": "true_positives", "fn": "false_negatives",
                    "tn": "true_negatives", "fp": "false_positives"}


def confusion_at_thresholds(labels, predictions, thresholds: Sequence[float], weights=None,
                            includes: Optional[Sequence[str]] = None
                            ) -> Tuple[Dict[str, Tensor], Dict[str, Tensor]]:
    """Streaming confusion counts at each threshold (a prediction is positive when it is
    strictly above the threshold).

    Returns:
      (values, update_ops): dicts from 'tp', 'fn', 'tn', 'fp' (those in `includes`) to
      the `[len(thresholds)]` float32 accumulators and their update ops.

    Raises:
      ValueError: a key of `includes` is unknown.
    """
    if includes is None:
        includes = _CONFUSION_KEYS
    for key in includes:
        if key not in _CONFUSION_KEYS:
            raise ValueError("Invalid key: %s" % (key,))
    predictions = convert_to_tensor(predictions)
    zero = math_ops.cast(0.0, predictions.dtype)
    one = math_ops.cast(1.0, predictions.dtype)
    with _graph.control_dependencies([
            check_ops.assert_greater_equal(predictions, zero,
                                           message="predictions must be in [0, 1]"),
            check_ops.assert_less_equal(predictions, one,
                                        message="predictions must be in [0, 1]")]):
        predictions, labels, weights = remove_squeezable_dimensions(
            math_ops.cast(predictions, _dt.float32), math_ops.cast(labels, _dt.bool),
            weights)
    n = len(thresholds)
    predictions_row = array_ops.reshape(predictions, [1, -1])
    labels_row = array_ops.reshape(labels, [1, -1])
    thresholds_col = constant_op.constant([float(t) for t in thresholds], _dt.float32,
                                          shape=[n, 1])
    pred_is_pos = math_binary.greater(predictions_row, thresholds_col)   # [n, batch]
    label_is_pos = array_join_ops.tile(labels_row, [n, 1])
    weights_row = None
    if weights is not None:
        weights = float_weights_like(weights, predictions)
        weights_row = array_ops.reshape(weights, [1, -1])
    conditions = {
        "tp": lambda: math_binary.logical_and(label_is_pos, pred_is_pos),
        "fn": lambda: math_binary.logical_and(label_is_pos,
                                              math_unary.logical_not(pred_is_pos)),
        "tn": lambda: math_binary.logical_and(math_unary.logical_not(label_is_pos),
                                              math_unary.logical_not(pred_is_pos)),
        "fp": lambda: math_binary.logical_and(math_unary.logical_not(label_is_pos),
                                              pred_is_pos)}
    values, update_ops = {}, {}
    for key in _CONFUSION_KEYS:
        if key not in includes:
            continue
        var = metric_variable([n], _dt.float32, name=_CONFUSION_NAMES[key])
        hits = math_ops.cast(conditions[key](), _dt.float32)
        if weights_row is not None:
            hits = math_binary.multiply(hits, weights_row)
        update_ops[key] = state_ops.assign_add(var, reduction_ops.reduce_sum(hits, 1))
        values[key] = var
    return values, update_ops


def safe_div(numerator, denominator, name: str) -> Tensor:
    """`numerator / denominator`, or 0 where the denominator is not positive."""
    return math_binary.div_no_nan(numerator, math_binary.maximum(denominator, 0),
                                  name=name)
