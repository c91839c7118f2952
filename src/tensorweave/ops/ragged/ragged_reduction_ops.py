"""Reductions of RaggedTensors (tf.reduce_sum & co. on a RaggedTensor, as TF dispatches).

Reducing a ragged dimension is an unsorted segment reduction: along axis 1 each row is
a segment of `values`; along axis 0 the segments are the positions within the rows.
When the values are themselves ragged, the rows of one segment combine elementwise
into a row as long as the longest of them (`_segment_reduce`). Axes inside the values
recurse into them. Empty rows give the reduction's identity: 0 for sum, 1 for prod,
the lowest/highest value for max/min, NaN for mean, as in TF. tf.strings.reduce_join
is the same walk with UnsortedSegmentJoin (an empty row joins to "").
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array.array_fill_ops import ones_like
from tensorweave.ops.array.array_ops import expand_dims, reshape
from tensorweave.ops.indexing.indexing_gather import gather
from tensorweave.ops.math.math_binary import maximum
from tensorweave.ops.math.math_ops import cast
from tensorweave.ops.math import reduction_ops, segment_ops
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.ragged_conversion_ops import value_positions
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor

# reduction -> (its unsorted segment op, its dense reduction)
Reducer = Tuple[Callable, Callable]
_KINDS = {
    "sum": (segment_ops.unsorted_segment_sum, reduction_ops.reduce_sum),
    "prod": (segment_ops.unsorted_segment_prod, reduction_ops.reduce_prod),
    "max": (segment_ops.unsorted_segment_max, reduction_ops.reduce_max),
    "min": (segment_ops.unsorted_segment_min, reduction_ops.reduce_min),
}


def reduce(kind: str, rt: RaggedTensor, axis=None, keepdims=None,
           name: Optional[str] = None, scope: str = "RaggedReduce"):
    """`kind` ("sum", "prod", "max", "min", "mean", "any", "all") of rt over `axis`.

    Returns:
      A Tensor, or a RaggedTensor where ragged dimensions remain.

    Raises:
      ValueError: an axis out of range or not constant.
    """
    with name_scope(name, scope, [rt.flat_values]):
        axes = _normalized_axes(rt, axis)
        if kind == "mean":
            result = _mean(rt, axes)
        elif kind in ("any", "all"):
            as_int = rt.with_flat_values(cast(rt.flat_values, _dt.int32))
            result = _reduce_axes(_KINDS["sum" if kind == "any" else "prod"], as_int, axes)
            result = _map(result, lambda t: cast(t, _dt.bool))
        else:
            result = _reduce_axes(_KINDS[kind], rt, axes)
        return _keep_dims(result, axes, rt.shape.rank) if keepdims else result


def reduce_join(inputs, axis=None, keep_dims=None, separator: str = "",
                name: Optional[str] = None, reduction_indices=None, keepdims=None):
    """tf.strings.reduce_join of a RaggedTensor of strings: the strings of each row of
    the reduced axes joined with `separator`, in row-major order (as TF's).

    Returns:
      A Tensor, or a RaggedTensor where ragged dimensions remain.

    Raises:
      ValueError: an axis out of range or not constant.
    """
    from tensorweave.ops.string import string_ngram_ops, string_ops
    axis = reduction_indices if axis is None else axis
    keep = keepdims if keepdims is not None else keep_dims
    joiner = (lambda data, ids, n: string_ngram_ops.unsorted_segment_join(
                  data, ids, n, separator=separator),
              lambda x, axis=None: string_ops.reduce_join(x, axis=axis, separator=separator))
    with name_scope(name, "RaggedReduceJoin", [inputs.flat_values]):
        axes = _normalized_axes(inputs, axis)
        result = _reduce_axes(joiner, inputs, axes)
        return _keep_dims(result, axes, inputs.shape.rank) if keep else result


def _normalized_axes(rt: RaggedTensor, axis) -> Optional[List[int]]:
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        value = constant_value(axis)
        if value is None:
            raise ValueError("axis of a RaggedTensor reduction must be a constant")
        axis = value.tolist()
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    rank = rt.shape.rank
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError("axis=%d out of bounds: expected %d<=axis<%d" % (a, -rank, rank))
        out.append(a + rank if a < 0 else a)
    return sorted(set(out), reverse=True)


def _reduce_axes(reducer: Reducer, rt: RaggedTensor, axes):
    """`reducer` ((unsorted segment op, dense reduction)) over `axes` (None: all)."""
    if axes is None:
        return reducer[1](rt.flat_values)
    result = rt
    for axis in axes:  # innermost first, so the outer axes keep their numbers
        result = _reduce_one(reducer, result, axis)
    return result


def _reduce_one(reducer: Reducer, x, axis: int):
    segment_op, dense_op = reducer
    if not isinstance(x, RaggedTensor):
        return dense_op(x, axis=axis)
    if axis == 0:
        _, cols = value_positions(x)
        longest = _longest(x)
        return _segment_reduce(segment_op, x.values, cols, longest)
    if axis == 1:
        rowids = cast(x.value_rowids(), _dt.int64)
        return _segment_reduce(segment_op, x.values, rowids, x.nrows(out_type=_dt.int64))
    return x.with_values(_reduce_one(reducer, x.values, axis - 1))


def _longest(rt: RaggedTensor) -> Tensor:
    splits = cast(rt.row_splits, _dt.int64)
    return maximum(reduction_ops.reduce_max(splits[1:] - splits[:-1]),
                   convert_to_tensor(0, _dt.int64))


def _segment_reduce(segment_op: Callable, data, segment_ids: Tensor, num_segments: Tensor):
    """segment_op over the rows of data (a Tensor, or a RaggedTensor whose rows of one
    segment combine elementwise into a row as long as the longest of them)."""
    if not isinstance(data, RaggedTensor):
        return segment_op(data, segment_ids, num_segments)
    splits_dtype = data.row_splits.dtype
    lengths = cast(data.row_lengths(), _dt.int64)
    out_lengths = maximum(segment_ops.unsorted_segment_max(lengths, segment_ids,
                                                           num_segments),
                          convert_to_tensor(0, _dt.int64))
    out_splits = rp.lengths_to_splits(out_lengths, None, "", False)
    rowids, cols = value_positions(data)
    target = gather(gather(out_splits, segment_ids), rowids) + cols
    values = _segment_reduce(segment_op, data.values, target, out_splits[-1])
    return RaggedTensor(values, cast(out_splits, splits_dtype), internal=True)


def _mean(rt: RaggedTensor, axes):
    """sum / count, in float64 for integer values (as TF's ragged reduce_mean)."""
    flat = rt.flat_values
    float_type = flat.dtype if flat.dtype.is_floating else _dt.float64
    total = _reduce_axes(_KINDS["sum"], rt.with_flat_values(cast(flat, float_type)), axes)
    ones = rt.with_flat_values(ones_like(flat, dtype=float_type))
    count = _reduce_axes(_KINDS["sum"], ones, axes)
    if isinstance(total, RaggedTensor):
        return total.with_flat_values(total.flat_values / count.flat_values)
    return total / count


def _map(x, fn):
    return x.with_flat_values(fn(x.flat_values)) if isinstance(x, RaggedTensor) else fn(x)


def _keep_dims(result, axes, rank: int):
    """`result` with a dimension of size 1 for each reduced axis (a ragged result as
    TF's: tf.expand_dims of the RaggedTensor)."""
    if axes is None:
        return reshape(result, [1] * rank)
    from tensorweave.ops.ragged.ragged_array_dispatch import expand_dims as ragged_expand
    for axis in sorted(axes):
        result = ragged_expand(result, axis) if isinstance(result, RaggedTensor) else \
            expand_dims(result, axis)
    return result
