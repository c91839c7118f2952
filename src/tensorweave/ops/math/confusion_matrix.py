"""`tf.confusion_matrix` and the squeezing of a trailing size-1 dimension that TF1's
losses and metrics apply to labels and predictions (`remove_squeezable_dimensions`).

Both are compositions of existing ops (ScatterNd sums duplicate indices), so they have
no kernel or gradient of their own.
"""
from __future__ import annotations

from typing import Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array import array_ops
from tensorweave.ops.math import math_binary, math_ops, reduction_ops


def _last_dim_may_be_one(t: Tensor) -> bool:
    dims = t.shape.dims
    return dims is None or (len(dims) > 0 and dims[-1].is_compatible_with(1))


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff: int = 0,
                                 name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """Squeezes the last dimension of `labels` or `predictions` when it is 1 and the
    rank difference (predictions minus labels) is `expected_rank_diff` plus or minus 1.

    With static ranks this is decided at build time, otherwise at run time by a cond.

    Returns:
      (labels, predictions), possibly squeezed.
    """
    from tensorweave.ops.control_flow import control_flow_ops
    with _graph.name_scope(name, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_rank = predictions.shape.ndims
        l_rank = labels.shape.ndims
        if p_rank is not None and l_rank is not None:
            rank_diff = p_rank - l_rank
            if rank_diff == expected_rank_diff + 1 and _last_dim_may_be_one(predictions):
                predictions = array_ops.squeeze(predictions, [-1])
            elif rank_diff == expected_rank_diff - 1 and _last_dim_may_be_one(labels):
                labels = array_ops.squeeze(labels, [-1])
            return labels, predictions
        rank_diff = math_binary.subtract(array_ops.rank(predictions), array_ops.rank(labels))
        if p_rank is None or _last_dim_may_be_one(predictions):
            p = predictions
            predictions = control_flow_ops.cond(
                math_binary.equal(expected_rank_diff + 1, rank_diff),
                lambda: array_ops.squeeze(p, [-1]), lambda: p)
        if l_rank is None or _last_dim_may_be_one(labels):
            lab = labels
            labels = control_flow_ops.cond(
                math_binary.equal(expected_rank_diff - 1, rank_diff),
                lambda: array_ops.squeeze(lab, [-1]), lambda: lab)
        return labels, predictions


@tf_export("confusion_matrix", "math.confusion_matrix")
def confusion_matrix(labels, predictions, num_classes=None, dtype=_dt.int32,
                     name: Optional[str] = None, weights=None) -> Tensor:
    """The confusion matrix of 1-D `labels` and `predictions` (TF1 `tf.confusion_matrix`).

    Entry [i, j] counts (or sums the weights of) the examples with label i predicted as
    j. Without `num_classes` the matrix is `max(labels, predictions) + 1` square.

    Args:
      labels: 1-D integer Tensor of true classes.
      predictions: 1-D integer Tensor of predicted classes, the shape of `labels`.
      num_classes: the number of classes; inferred from the data if None.
      dtype: the dtype of the matrix.
      name: scope name.
      weights: optional Tensor of the shape of `predictions`.

    Returns:
      A `[n, n]` Tensor of `dtype`.

    Raises:
      ValueError: the shapes of predictions and weights are incompatible.
      InvalidArgumentError (at run time): negative or out-of-range classes.
    """
    from tensorweave.ops.array import array_fill_ops, array_join_ops
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.debug import check_ops
    from tensorweave.ops.indexing import indexing_gather
    dtype = _dt.as_dtype(dtype)
    with _graph.name_scope(name, "confusion_matrix",
                           (predictions, labels, num_classes, weights)):
        labels, predictions = remove_squeezable_dimensions(
            convert_to_tensor(labels, name="labels"),
            convert_to_tensor(predictions, name="predictions"))
        predictions = math_ops.cast(predictions, _dt.int64)
        labels = math_ops.cast(labels, _dt.int64)
        labels = structure.with_dependencies([check_ops.assert_non_negative(
            labels, message="`labels` contains negative values")], labels)
        predictions = structure.with_dependencies([check_ops.assert_non_negative(
            predictions, message="`predictions` contains negative values")], predictions)
        if num_classes is None:
            num_classes = math_binary.add(math_binary.maximum(
                reduction_ops.reduce_max(predictions), reduction_ops.reduce_max(labels)),
                convert_to_tensor(1, dtype=_dt.int64))
        else:
            n = math_ops.cast(num_classes, _dt.int64)
            labels = structure.with_dependencies([check_ops.assert_less(
                labels, n, message="`labels` out of bound")], labels)
            predictions = structure.with_dependencies([check_ops.assert_less(
                predictions, n, message="`predictions` out of bound")], predictions)
            num_classes = n
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = math_ops.cast(weights, dtype)
        shape = array_join_ops.stack([num_classes, num_classes])
        indices = array_join_ops.stack([labels, predictions], axis=1)
        values = (array_fill_ops.ones_like(predictions, dtype) if weights is None
                  else weights)
        return indexing_gather.scatter_nd(indices=indices, updates=values,
                                          shape=math_ops.cast(shape, _dt.int64))
