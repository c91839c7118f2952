"""Segment reductions, dynamic_partition and dynamic_stitch.

Unsorted segment kernels share one reduction (`_segment_reduce`): rows of the data are
combined into their segment with an unbuffered ufunc (`np.add.at`, `np.maximum.at`)
over flat element positions, or for large float sums row by row in groups
(ops/group_fold.py); either way a segment's rows are added one after another in their
order, as TF's CPU kernel loops. Sorted segment ops validate their ids and reduce each
run of equal ids as one slice (`ufunc.reduceat`). No Python loop runs over elements.
"""
from __future__ import annotations

import math
from typing import List, Optional

import ml_dtypes
import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.group_fold import fold_in_groups, sums_in_order
from tensorweave.ops.indexing.indexing_gather import gather
from tensorweave.ops.indexing.indexing_ops import (debug_index, invalid, merge_dims, merge_shapes,
                                          outside, shape_str, shape_tensor, with_rank,
                                          with_rank_at_least)
from tensorweave.ops.indexing.indexing_select import where_v2

_INDEX_TYPES = (_dt.int32, _dt.int64)


# --- the shared reduction ----------------------------------------------------------------
# summed values from which float segment sums go row by row in groups (`fold_in_groups`)
# rather than element by element (np.add.at)
_GROUPED_SUM = 4096
# rows per segment from which the sums go through SciPy (ops/group_fold.py): 1024 rows
# of 64 into 256 segments 104 us folded, 40 through SciPy; with fewer the fold is mostly
# a gather (1024 rows into as many segments 31 / 44 us)
_SUMS_IN_ORDER_ROWS = 2


def _segment_reduce(kind: str, ids: np.ndarray, rows: np.ndarray, num: int) -> np.ndarray:
    """Combines rows[i] into out[ids[i]] for ids in [0, num) (any order; sorted ids take
    `_sorted_segment_reduce`).

    Args:
      kind: "sum", "prod", "max" or "min"; empty segments hold 0, 1, the lowest or the
        highest value of the dtype. Max and min skip NaN (TF's max(a, b) is
        `a < b ? b : a`), so a segment of NaN holds its start.
      ids: 1-D integer ids, all in [0, num).
      rows: [len(ids), ...] data.

    Returns:
      [num] + rows.shape[1:] array of rows.dtype.
    """
    inner = rows.shape[1:]
    width = math.prod(inner)
    dtype = rows.dtype
    if kind == "sum" and dtype.kind in "fc" and ids.size * width >= _GROUPED_SUM:
        # each segment's rows added one after another in their order, as TF's kernel
        # loops: an embedding gradient's duplicates summed by Adam's deduplication (6400
        # rows of 128 into 5,500 segments): 4.35 ms with np.bincount in float64, 0.44 ms
        # folded; where segments have several rows each, SciPy's loop (if installed)
        if ids.size >= _SUMS_IN_ORDER_ROWS * num:
            out = sums_in_order(ids, rows, num)
            if out is not None:
                return out
        index, summed = fold_in_groups(np.add, None, ids, rows)
        if index.size == num:  # every segment has rows (deduplication's unique ids)
            return summed
        out = np.zeros((num,) + inner, dtype)
        out[index] = summed
        return out
    if width == 1:
        flat_ids = ids.astype(np.intp, copy=False)
    else:
        flat_ids = (ids.astype(np.intp)[:, None] * width + np.arange(width)).reshape(-1)
    values = rows.reshape(-1)
    size = num * width
    if kind == "sum":
        out = np.zeros(size, dtype=dtype)
        np.add.at(out, flat_ids, values)
    elif kind == "prod":
        out = np.ones(size, dtype=dtype)
        np.multiply.at(out, flat_ids, values)
    else:
        # ml_dtypes.finfo knows bfloat16 (np.finfo does not) and the NumPy floats alike
        info = ml_dtypes.finfo(dtype) if dtype.kind == "f" or dtype.name == "bfloat16" \
            else np.iinfo(dtype)
        start = info.min if kind == "max" else info.max
        out = np.full(size, start, dtype=dtype)
        (np.fmax if kind == "max" else np.fmin).at(out, flat_ids, values)
    return out.reshape((num,) + inner)


# --- sorted segment reductions -----------------------------------------------------------
_REDUCEAT = {"sum": np.add, "prod": np.multiply}


def _sorted_segment_reduce(kind: str, ids: np.ndarray, rows: np.ndarray,
                           num: int) -> np.ndarray:
    """`_segment_reduce` for sorted ids (infinite starts for float max and min, as TF's
    sorted kernels): each run of equal ids is one slice of `rows`, reduced by
    `ufunc.reduceat` in the data's dtype, as TF's kernel reduces it. Segments with no
    rows hold the reduction's start value."""
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    floating = rows.dtype.kind in "fc" or rows.dtype.name == "bfloat16"
    if kind in _REDUCEAT:
        reduced = _REDUCEAT[kind].reduceat(rows, starts, axis=0)
        start = 0 if kind == "sum" else 1
    else:
        # NaN never wins a comparison in TF's max/min (fmax/fmin skip it), and a
        # segment of NaNs holds the start: -inf for max, inf for min
        if kind == "max":
            ufunc, start = (np.fmax, -np.inf) if floating else (np.maximum, 0)
        else:
            ufunc, start = (np.fmin, np.inf) if floating else (np.minimum, 0)
        reduced = ufunc.reduceat(rows, starts, axis=0)
        if floating:
            reduced = ufunc(reduced, rows.dtype.type(start))
    out = np.full((num,) + rows.shape[1:], start, dtype=rows.dtype)
    out[ids[starts]] = reduced
    return out


def _segment_shape(op):
    data = with_rank_at_least(op.inputs[0].shape, 1)
    with_rank(op.inputs[1].shape, 1)
    if data.ndims is None:
        return unknown_shape()
    return TensorShape([None] + data.as_list()[1:])


def _check_sorted_ids(ctx, data, ids) -> int:
    """Validates sorted segment ids; returns the number of segments."""
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise invalid(ctx, "segment_ids should be the same size as dimension 0 of input.")
    if ids.size == 0:
        return 0
    num = int(ids[-1]) + 1
    if ids[0] < 0:
        raise invalid(ctx, "Segment id %d out of range [0, %d), possibly because "
                      "'segment_ids' input is not sorted." % (int(ids[0]), num))
    if ids.size > 1 and (ids[1:] < ids[:-1]).any():
        raise invalid(ctx, "segment ids are not increasing")
    return num


def _register_segment(op_type: str, kind: str, types) -> None:
    register_op(op_type, inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
                attrs={"T": TypeAttr(types), "Tindices": TypeAttr(_INDEX_TYPES)},
                shape=_segment_shape)

    @kernel(op_type)
    def _segment_kernel(ctx, data, ids):
        num = _check_sorted_ids(ctx, data, ids)
        if num == 0:
            return np.zeros((0,) + data.shape[1:], dtype=data.dtype)
        if kind == "mean":
            out = _sorted_segment_reduce("sum", ids, data, num)
            counts = np.bincount(ids, minlength=num).reshape((num,) + (1,) * (data.ndim - 1))
            return _divide_by_counts(out, counts)
        out = _sorted_segment_reduce(kind, ids, data, num)
        if kind in ("max", "min") and num:
            empty = np.bincount(ids, minlength=num) == 0
            if empty.any():
                out[empty] = 0  # TF: empty segments of sorted reductions are 0
        return out


def _divide_by_counts(total: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """total / counts per segment (0 for empty segments); integer division truncates
    toward zero as in C++."""
    safe = np.maximum(counts, 1)
    if total.dtype.kind in "iu":
        q = np.abs(total) // safe.astype(total.dtype)
        return np.where(total < 0, -q, q).astype(total.dtype, copy=False)
    return (total / safe).astype(total.dtype, copy=False)


_register_segment("SegmentSum", "sum", _dt.NUMBERS)
_register_segment("SegmentMean", "mean", _dt.NUMBERS)
_register_segment("SegmentProd", "prod", _dt.NUMBERS)
_register_segment("SegmentMax", "max", _dt.REAL_NUMBERS)
_register_segment("SegmentMin", "min", _dt.REAL_NUMBERS)


@gradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return [gather(grad, op.inputs[1]), None]


@gradient("SegmentMean")
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    from tensorweave.ops.math import math_binary
    shape = data.shape
    if shape.ndims is not None and shape[0].value is not None:
        ones = np.ones([shape[0].value] + [1] * (shape.ndims - 1),
                       dtype=grad.dtype.as_numpy_dtype)
    else:
        from tensorweave.ops.array import array_ops
        rank = array_ops.rank(data)
        ones_shape = array_ops.concat([shape_tensor(ids), array_ops.ones(
            array_ops.expand_dims(rank - 1, 0), dtype=_dt.int32)], 0)
        ones = array_ops.ones(ones_shape, dtype=grad.dtype)
    scaled = math_binary.divide(grad, segment_sum(ones, ids))
    return [gather(scaled, ids), None]


def _segment_min_or_max_grad(op, grad):
    """The gradient goes to the elements equal to their segment's result, split evenly
    among ties (as TF)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    data, ids = op.inputs
    zeros = array_ops.zeros_like(data)
    gathered_outputs = gather(op.outputs[0], ids)
    is_selected = math_binary.equal(data, gathered_outputs)
    num_selected = segment_sum(math_ops.cast(is_selected, grad.dtype), ids)
    weighted = math_binary.divide(grad, num_selected)
    return [where_v2(is_selected, gather(weighted, ids), zeros), None]


gradient("SegmentMax")(_segment_min_or_max_grad)
gradient("SegmentMin")(_segment_min_or_max_grad)


def _prod_grad(data, output, grad, segment_sum_fn, segment_prod_fn, gather_fn):
    """Gradient of a segment product: the product of the other elements of the segment.

    Zeros are handled without dividing by them: where a segment holds one zero, that
    element's derivative is the product of the non-zero elements, the others' is 0; with
    two or more zeros every derivative is 0.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    zero = convert_to_tensor(np.zeros((), data.dtype.as_numpy_dtype))
    is_zero = math_binary.equal(data, zero)
    num_zeros = segment_sum_fn(math_ops.cast(is_zero, _dt.int32))
    grad = where_v2(math_binary.greater(num_zeros, 1), array_ops.zeros_like(grad), grad)
    non_zero_data = where_v2(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = segment_prod_fn(non_zero_data)
    prod_divided_by_el = math_binary.divide(gather_fn(output), non_zero_data)
    partial = where_v2(is_zero, gather_fn(non_zero_prod), prod_divided_by_el)
    from tensorweave.ops.math import math_unary
    return math_binary.multiply(gather_fn(grad), math_unary._conj(partial))


@gradient("SegmentProd")
def _segment_prod_grad(op, grad):
    data, ids = op.inputs
    return [_prod_grad(data, op.outputs[0], grad, lambda v: segment_sum(v, ids),
                       lambda v: segment_prod(v, ids), lambda v: gather(v, ids)), None]


def _segment_builder(op_type: str, data, segment_ids, name) -> Tensor:
    return apply_op(op_type, [data, segment_ids], name=name or op_type).outputs[0]


@tf_export("segment_sum", "math.segment_sum")
def segment_sum(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """Sums the rows of `data` that share a segment id (TF1 `tf.math.segment_sum`).

    Args:
      data: a Tensor of rank >= 1.
      segment_ids: 1-D int32/int64 Tensor, sorted ascending, one id per row of data.
      name: op name.

    Returns:
      A Tensor of shape [segment_ids[-1] + 1] + data.shape[1:]; ids that do not occur
      give rows of zeros.

    Raises:
      InvalidArgumentError (at run time): ids not sorted, negative, or of the wrong size.
    """
    return _segment_builder("SegmentSum", data, segment_ids, name)


@tf_export("segment_mean", "math.segment_mean")
def segment_mean(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The mean of the rows of `data` that share a segment id (TF1
    `tf.math.segment_mean`); empty segments give 0. See `segment_sum`."""
    return _segment_builder("SegmentMean", data, segment_ids, name)


@tf_export("segment_prod", "math.segment_prod")
def segment_prod(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The product of the rows of `data` that share a segment id (TF1
    `tf.math.segment_prod`); empty segments give 1. See `segment_sum`."""
    return _segment_builder("SegmentProd", data, segment_ids, name)


@tf_export("segment_max", "math.segment_max")
def segment_max(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The maximum of the rows of `data` that share a segment id (TF1
    `tf.math.segment_max`); empty segments give 0. See `segment_sum`."""
    return _segment_builder("SegmentMax", data, segment_ids, name)


@tf_export("segment_min", "math.segment_min")
def segment_min(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The minimum of the rows of `data` that share a segment id (TF1
    `tf.math.segment_min`); empty segments give 0. See `segment_sum`."""
    return _segment_builder("SegmentMin", data, segment_ids, name)


# --- unsorted segment reductions ---------------------------------------------------------
def _unsorted_segment_shape(op):
    data, ids, num = (t.shape for t in op.inputs)
    with_rank(num, 0)
    if data.ndims is None or ids.ndims is None:
        return unknown_shape()
    with_rank_at_least(data, ids.ndims)
    for a, b in zip(data.dims[:ids.ndims], ids.dims):
        merge_dims(a, b)
    n = tensor_util.constant_value(op.inputs[2])
    if n is not None and int(n) < 0:
        raise ValueError("Dimension size, given by scalar input 2, must be non-negative but "
                         "is %d" % int(n))
    return TensorShape([None if n is None else int(n)] + data.as_list()[ids.ndims:])


def _register_unsorted(op_type: str, kind: str, types) -> None:
    register_op(op_type, inputs=["data: T", "segment_ids: Tindices",
                                 "num_segments: Tnumsegments"], outputs=["output: T"],
                attrs={"T": TypeAttr(types), "Tindices": TypeAttr(_INDEX_TYPES),
                       "Tnumsegments": TypeAttr(_INDEX_TYPES, default=_dt.int32)},
                shape=_unsorted_segment_shape)

    @kernel(op_type)
    def _unsorted_kernel(ctx, data, ids, num_segments):
        num = int(num_segments)
        if num < 0:
            raise invalid(ctx, "Input num_segments == %d must not be negative." % num)
        if data.shape[:ids.ndim] != ids.shape:
            raise invalid(ctx, "data.shape = %s does not start with segment_ids.shape = %s"
                          % (shape_str(data.shape), shape_str(ids.shape)))
        flat_ids = ids.reshape(-1)
        rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
        if outside(flat_ids, num):  # (one test for the usual ids, all in range)
            if flat_ids.max() >= num:
                k = int(np.flatnonzero(flat_ids >= num)[0])
                raise invalid(ctx, "segment_ids%s = %d is out of range [0, %d)"
                              % (debug_index(ids.shape, k), int(flat_ids[k]), num))
            keep = flat_ids >= 0  # negative ids are dropped
            flat_ids, rows = flat_ids[keep], rows[keep]
        return _segment_reduce(kind, flat_ids, rows, num)


_register_unsorted("UnsortedSegmentSum", "sum", _dt.NUMBERS)
_register_unsorted("UnsortedSegmentProd", "prod", _dt.NUMBERS)
_register_unsorted("UnsortedSegmentMax", "max", _dt.REAL_NUMBERS)
_register_unsorted("UnsortedSegmentMin", "min", _dt.REAL_NUMBERS)


def _gather_drop_negatives(params, ids, zero_clipped_indices=None, is_positive=None):
    """gather(params, ids) with the rows of negative ids set to zero; also returns the
    clipped ids and the (broadcastable) mask of non-negative ids for reuse."""
    from tensorweave.ops.math import math_binary
    if zero_clipped_indices is None:
        zero_clipped_indices = math_binary.maximum(
            ids, convert_to_tensor(np.zeros((), ids.dtype.as_numpy_dtype)))
    gathered = gather(params, zero_clipped_indices)
    if is_positive is None:
        is_positive = math_binary.greater_equal(
            ids, convert_to_tensor(np.zeros((), ids.dtype.as_numpy_dtype)))
        is_positive = _expand_trailing(is_positive, gathered)
    zero = convert_to_tensor(np.zeros((), gathered.dtype.as_numpy_dtype))
    return where_v2(is_positive, gathered, zero), zero_clipped_indices, is_positive


def _expand_trailing(mask: Tensor, like: Tensor) -> Tensor:
    """`mask` with size-1 dimensions appended up to the rank of `like`."""
    if mask.shape.ndims is not None and like.shape.ndims is not None:
        extra = like.shape.ndims - mask.shape.ndims
        return mask[(Ellipsis,) + (None,) * extra] if extra else mask
    from tensorweave.ops.array import array_ops
    ids_shape = shape_tensor(mask)
    ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(like) - array_ops.rank(mask),
                                                0), dtype=ids_shape.dtype)
    return array_ops.reshape(mask, array_ops.concat([ids_shape, ones], 0))


@gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    return [_gather_drop_negatives(grad, op.inputs[1])[0], None, None]


def _unsorted_segment_min_or_max_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    data, ids, num = op.inputs
    gathered_outputs, clipped, is_positive = _gather_drop_negatives(op.outputs[0], ids)
    is_selected = math_binary.logical_and(math_binary.equal(data, gathered_outputs),
                                          is_positive)
    num_selected = unsorted_segment_sum(math_ops.cast(is_selected, grad.dtype), ids, num)
    weighted = math_binary.divide(grad, num_selected)
    gathered_grads, _, _ = _gather_drop_negatives(weighted, None, clipped, is_positive)
    zeros = array_ops.zeros_like(gathered_grads)
    return [where_v2(is_selected, gathered_grads, zeros), None, None]


gradient("UnsortedSegmentMax")(_unsorted_segment_min_or_max_grad)
gradient("UnsortedSegmentMin")(_unsorted_segment_min_or_max_grad)


@gradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(op, grad):
    data, ids, num = op.inputs
    clipped = []

    def gather_fn(v):  # gather that gives 0 for negative (dropped) ids
        if not clipped:
            out, z, mask = _gather_drop_negatives(v, ids)
            clipped.extend([z, mask])
            return out
        return _gather_drop_negatives(v, None, *clipped)[0]
    return [_prod_grad(data, op.outputs[0], grad,
                       lambda v: unsorted_segment_sum(v, ids, num),
                       lambda v: unsorted_segment_prod(v, ids, num), gather_fn), None, None]


def _unsorted_builder(op_type, data, segment_ids, num_segments, name) -> Tensor:
    return apply_op(op_type, [data, segment_ids, num_segments],
                    name=name or op_type).outputs[0]


@tf_export("unsorted_segment_sum", "math.unsorted_segment_sum")
def unsorted_segment_sum(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """Sums the entries of `data` that share a segment id, ids in any order (TF1
    `tf.math.unsorted_segment_sum`).

    Args:
      data: a Tensor.
      segment_ids: int32/int64 Tensor whose shape is a prefix of data's shape; negative
        ids are dropped.
      num_segments: scalar int32/int64, the number of output rows.
      name: op name.

    Returns:
      A Tensor of shape [num_segments] + data.shape[rank(segment_ids):].

    Raises:
      InvalidArgumentError (at run time): an id >= num_segments.
    """
    return _unsorted_builder("UnsortedSegmentSum", data, segment_ids, num_segments, name)


@tf_export("unsorted_segment_max", "math.unsorted_segment_max")
def unsorted_segment_max(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The maximum of the entries of `data` that share a segment id (TF1
    `tf.math.unsorted_segment_max`); empty segments hold the lowest value of the dtype.
    See `unsorted_segment_sum`."""
    return _unsorted_builder("UnsortedSegmentMax", data, segment_ids, num_segments, name)


@tf_export("unsorted_segment_min", "math.unsorted_segment_min")
def unsorted_segment_min(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The minimum of the entries of `data` that share a segment id (TF1
    `tf.math.unsorted_segment_min`); empty segments hold the highest value of the dtype.
    See `unsorted_segment_sum`."""
    return _unsorted_builder("UnsortedSegmentMin", data, segment_ids, num_segments, name)


@tf_export("unsorted_segment_prod", "math.unsorted_segment_prod")
def unsorted_segment_prod(data, segment_ids, num_segments,
                          name: Optional[str] = None) -> Tensor:
    """The product of the entries of `data` that share a segment id (TF1
    `tf.math.unsorted_segment_prod`); empty segments hold 1. See `unsorted_segment_sum`."""
    return _unsorted_builder("UnsortedSegmentProd", data, segment_ids, num_segments, name)


def _unsorted_segment_count(data: Tensor, segment_ids: Tensor, num_segments) -> Tensor:
    """The number of entries of each segment (at least 1), shaped to broadcast against
    unsorted_segment_sum(data, segment_ids, num_segments)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary
    num_segments = convert_to_tensor(num_segments)
    ones = array_ops.ones(shape_tensor(segment_ids), dtype=data.dtype)
    n = unsorted_segment_sum(ones, segment_ids, num_segments)
    if data.shape.ndims is not None and segment_ids.shape.ndims is not None:
        extra = data.shape.ndims - segment_ids.shape.ndims  # static: keeps the shape known
        trailing = convert_to_tensor(np.ones([extra], num_segments.dtype.as_numpy_dtype))
    else:
        trailing = array_ops.ones(array_ops.expand_dims(
            array_ops.rank(data) - array_ops.rank(segment_ids), 0), dtype=num_segments.dtype)
    n = array_ops.reshape(n, array_ops.concat(
        [array_ops.expand_dims(num_segments, 0), trailing], 0))
    return math_binary.maximum(n, convert_to_tensor(1, dtype=data.dtype))


@tf_export("unsorted_segment_mean", "math.unsorted_segment_mean")
def unsorted_segment_mean(data, segment_ids, num_segments,
                          name: Optional[str] = None) -> Tensor:
    """The mean of the entries of `data` that share a segment id (TF1
    `tf.math.unsorted_segment_mean`); empty segments hold 0. See `unsorted_segment_sum`.
    """
    from tensorweave.framework import graph as _graph
    from tensorweave.ops.math import math_binary
    with _graph.name_scope(name, "UnsortedSegmentMean"):
        data = convert_to_tensor(data, name="data")
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
        n = _unsorted_segment_count(data, segment_ids, num_segments)
        return math_binary.divide(unsorted_segment_sum(data, segment_ids, num_segments), n)


@tf_export("unsorted_segment_sqrt_n", "math.unsorted_segment_sqrt_n")
def unsorted_segment_sqrt_n(data, segment_ids, num_segments,
                            name: Optional[str] = None) -> Tensor:
    """The sum of the entries of `data` that share a segment id divided by the square
    root of their number (TF1 `tf.math.unsorted_segment_sqrt_n`); empty segments hold 0.
    See `unsorted_segment_sum`."""
    from tensorweave.framework import graph as _graph
    from tensorweave.ops.math import math_binary, math_unary
    with _graph.name_scope(name, "UnsortedSegmentSqrtN"):
        data = convert_to_tensor(data, name="data")
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
        n = _unsorted_segment_count(data, segment_ids, num_segments)
        return math_binary.divide(unsorted_segment_sum(data, segment_ids, num_segments),
                                  math_unary.sqrt(n))


# --- DynamicPartition --------------------------------------------------------------------
def _dynamic_partition_shape(op):
    data, parts = op.inputs[0].shape, op.inputs[1].shape
    n = op._get_attr("num_partitions")
    if data.ndims is None or parts.ndims is None:
        return [unknown_shape()] * n
    with_rank_at_least(data, parts.ndims)
    for a, b in zip(data.dims[:parts.ndims], parts.dims):
        merge_dims(a, b)
    return [TensorShape([None] + data.as_list()[parts.ndims:])] * n


register_op("DynamicPartition", inputs=["data: T", "partitions: int32"],
            outputs=["outputs: num_partitions * T"], attrs={"num_partitions": REQUIRED},
            shape=_dynamic_partition_shape)


@kernel("DynamicPartition")
def _dynamic_partition_kernel(ctx, data, partitions):
    num = ctx.attrs["num_partitions"]
    if data.shape[:partitions.ndim] != partitions.shape:
        raise invalid(ctx, "data.shape must start with partitions.shape, got data.shape = %s, "
                      "partitions.shape = %s" % (shape_str(data.shape),
                                                 shape_str(partitions.shape)))
    flat = partitions.reshape(-1)
    rows = data.reshape((flat.size,) + data.shape[partitions.ndim:])
    if flat.size and (flat.min() < 0 or flat.max() >= num):
        k = int(np.flatnonzero((flat < 0) | (flat >= num))[0])
        raise invalid(ctx, "partitions%s = %d is not in [0, %d)"
                      % (debug_index(partitions.shape, k), int(flat[k]), num))
    order = np.argsort(flat, kind="stable")
    counts = np.bincount(flat, minlength=num)
    return np.split(rows[order], np.cumsum(counts)[:-1])


@gradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    data, partitions = op.inputs
    num = op._get_attr("num_partitions")
    p = partitions.shape
    if p.is_fully_defined():
        original = convert_to_tensor(np.arange(p.num_elements(), dtype=np.int32)
                                     .reshape(p.as_list()))
    else:
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.math import math_ops, reduction_ops
        prefix = shape_tensor(partitions)
        original = array_ops.reshape(math_ops.range(reduction_ops.reduce_prod(prefix)), prefix)
    parted = dynamic_partition(original, partitions, num)
    stitched = dynamic_stitch(parted, list(grads))
    if p.ndims != 1:
        from tensorweave.ops.array import array_ops
        stitched = array_ops.reshape(stitched, shape_tensor(data))
    return [stitched, None]


@tf_export("dynamic_partition")
def dynamic_partition(data, partitions, num_partitions: int,
                      name: Optional[str] = None) -> List[Tensor]:
    """Splits `data` into `num_partitions` tensors by `partitions` (TF1
    `tf.dynamic_partition`).

    Output i holds, in order, the entries data[j...] with partitions[j...] == i.

    Args:
      data: a Tensor.
      partitions: int32 Tensor whose shape is a prefix of data's shape, values in
        [0, num_partitions).
      num_partitions: int >= 1.
      name: op name.

    Returns:
      A list of `num_partitions` Tensors of shape [None] + data.shape[rank(partitions):].

    Raises:
      ValueError: num_partitions < 1.
      InvalidArgumentError (at run time): a partition out of range.
    """
    if int(num_partitions) < 1:
        raise ValueError("Attr 'num_partitions' of 'DynamicPartition' Op passed %d less than "
                         "minimum 1." % int(num_partitions))
    op = apply_op("DynamicPartition", [data, partitions],
                  {"num_partitions": int(num_partitions)}, name=name or "DynamicPartition")
    return list(op.outputs)


# --- DynamicStitch -----------------------------------------------------------------------
def _dynamic_stitch_shape(op):
    n = op._get_attr("N")
    indices, data = op.inputs[:n], op.inputs[n:]
    extra = unknown_shape()
    all_constant = True
    max_index = -1
    for idx, d in zip(indices, data):
        value = tensor_util.constant_value(idx)
        if value is None:
            all_constant = False
        i_shape, d_shape = idx.shape, d.shape
        if i_shape.ndims is None:
            continue
        if d_shape.ndims is not None:
            with_rank_at_least(d_shape, i_shape.ndims)
            for a, b in zip(d_shape.dims[:i_shape.ndims], i_shape.dims):
                merge_dims(a, b)
            extra = merge_shapes(extra, d_shape[i_shape.ndims:])
        if value is not None and value.size:
            max_index = max(max_index, int(value.max()))
    first = max_index + 1 if all_constant else None
    return TensorShape([first]).concatenate(extra)


register_op("DynamicStitch", inputs=["indices: N * int32", "data: N * T"],
            outputs=["merged: T"], shape=_dynamic_stitch_shape)


@kernel("DynamicStitch")
def _dynamic_stitch_kernel(ctx, *args):
    n = len(args) // 2
    indices, data = args[:n], args[n:]
    inner = data[0].shape[indices[0].ndim:]
    first = 0
    for i, (idx, d) in enumerate(zip(indices, data)):
        if d.shape[:idx.ndim] != idx.shape:
            raise invalid(ctx, "data[%d].shape = %s does not start with indices[%d].shape = %s"
                          % (i, shape_str(d.shape), i, shape_str(idx.shape)))
        if d.shape[idx.ndim:] != inner:
            raise invalid(ctx, "Need data[0].shape[%d:] = %s to be the same as data[%d].shape"
                          "[%d:] = %s" % (indices[0].ndim, shape_str(inner), i, idx.ndim,
                                          shape_str(d.shape[idx.ndim:])))
        if idx.size:
            first = max(first, int(idx.max()) + 1)
    out = ctx.xp.zeros((first,) + inner, dtype=data[0].dtype)
    for idx, d in zip(indices, data):
        flat = idx.reshape(-1)
        if flat.size and flat.min() < 0:
            raise invalid(ctx, "indices[%d] is out of range" % int(np.flatnonzero(flat < 0)[0]))
        out[flat] = d.reshape((flat.size,) + inner)  # later entries overwrite earlier ones
    return out


@gradient("DynamicStitch")
def _dynamic_stitch_grad(op, grad):
    n = op._get_attr("N")
    indices = op.inputs[:n]
    return [None] * n + [gather(grad, idx) for idx in indices]


# ParallelDynamicStitch (what TF1's embedding_lookup builds for a partitioned variable,
# so TF meta graphs hold it) only leaves unspecified which of repeated indices wins.
register_op("ParallelDynamicStitch", inputs=["indices: N * int32", "data: N * T"],
            outputs=["merged: T"], shape=_dynamic_stitch_shape)
kernel("ParallelDynamicStitch")(_dynamic_stitch_kernel)
gradient("ParallelDynamicStitch")(_dynamic_stitch_grad)


@tf_export("dynamic_stitch")
def dynamic_stitch(indices, data, name: Optional[str] = None) -> Tensor:
    """Interleaves the rows of `data` into one tensor at `indices` (TF1
    `tf.dynamic_stitch`): merged[indices[m][i...]] = data[m][i...].

    When an index appears more than once, the later one (in list order, then in
    position) wins. Positions no index names are zero.

    Args:
      indices: a list of int32 Tensors.
      data: a list of Tensors of one type, data[m].shape starting with indices[m].shape
        and all sharing the trailing shape.
      name: op name.

    Returns:
      A Tensor of shape [max(indices) + 1] + trailing shape.

    Raises:
      ValueError: the lists differ in length or shapes do not fit.
    """
    indices, data = list(indices), list(data)
    if len(indices) != len(data):
        raise ValueError("List argument 'data' to 'dynamic_stitch' Op with length %d must "
                         "match length %d of argument 'indices'." % (len(data), len(indices)))
    return apply_op("DynamicStitch", [indices, data], name=name or "DynamicStitch").outputs[0]
