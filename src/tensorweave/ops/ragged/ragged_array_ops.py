"""tf.ragged array ops: range, row gathers, stack/concat, boolean_mask, map_flat_values,
and the segment id <-> row_splits conversions.

Every op is a composition of dense ops on the parts (DESIGN.md: composite ops are plain
Python builders), so gradients reach `flat_values` through gather and boolean_mask.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array.array_join_ops import concat, stack
from tensorweave.ops.array.array_ops import reshape, shape as shape_op, transpose
from tensorweave.ops.array.array_pad_ops import broadcast_to
from tensorweave.ops.control_flow.structure import identity
from tensorweave.ops.debug import check_ops
from tensorweave.ops.indexing.indexing_gather import gather
from tensorweave.ops.indexing.indexing_select import boolean_mask as dense_boolean_mask, \
    where_v2
from tensorweave.ops.math.math_binary import maximum
from tensorweave.ops.math.math_ops import cast, range as range_op
from tensorweave.ops.math.math_unary import ceil
from tensorweave.ops.math.segment_ops import unsorted_segment_sum
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor, \
    convert_to_tensor_or_ragged_tensor


def stack_scalars(parts) -> Tensor:
    """A vector of scalars, cast to the dtype of the first Tensor among them."""
    dtype = next((p.dtype for p in parts if isinstance(p, Tensor)), _dt.int64)
    return stack([cast(convert_to_tensor(p, dtype=dtype), dtype) for p in parts])


# --- gathering rows ------------------------------------------------------------------------
def ragged_range_values(starts: Tensor, limits: Tensor) -> Tensor:
    """The concatenated ranges [starts[i], limits[i]) (empty where limit <= start)."""
    lengths = maximum(limits - starts, convert_to_tensor(0, starts.dtype))
    splits = rp.lengths_to_splits(lengths, None, "", False)
    rowids = rp.splits_to_segment_ids(splits)
    offsets = range_op(splits[-1], dtype=splits.dtype) - gather(splits, rowids)
    return gather(starts, rowids) + offsets


def gather_rows(params, indices: Tensor):
    """Rows `indices` of a Tensor or RaggedTensor (ragged `tf.gather` on axis 0)."""
    if not isinstance(params, RaggedTensor):
        return gather(params, indices)
    indices = cast(indices, params.row_splits.dtype)
    starts = gather(params.row_starts(), indices)
    limits = gather(params.row_limits(), indices)
    values = gather_rows(params.values, ragged_range_values(starts, limits))
    splits = rp.lengths_to_splits(limits - starts, None, "", False)
    return RaggedTensor(values, splits, internal=True)


# --- new dimensions of size 1 -------------------------------------------------------------------
def one_outer_row(rt: RaggedTensor) -> RaggedTensor:
    """`rt` as the one row of a new outer dimension (uniform_row_length nrows)."""
    nrows = rt.nrows()
    splits = stack_scalars([0, nrows])
    return RaggedTensor(rt, splits, internal=True, uniform_row_length=nrows)


def one_inner_row(rt: RaggedTensor) -> RaggedTensor:
    """`rt` with a dimension of size 1 (uniform_row_length 1) after its rows."""
    one = convert_to_tensor(1, rt.row_splits.dtype)
    splits = range_op(rt.nrows() + 1, dtype=rt.row_splits.dtype)
    return RaggedTensor(rt, splits, internal=True, uniform_row_length=one)


# --- tf.ragged.range and the segment id conversions ------------------------------------------
_RANGE_DTYPES = (_dt.int32, _dt.int64, _dt.float32, _dt.float64)


@tf_export("ragged.range")
def range(starts, limits=None, deltas=1, dtype=None, name: Optional[str] = None,  # noqa: A001
          row_splits_dtype=_dt.int64) -> RaggedTensor:
    """Row i is `tf.range(starts[i], limits[i], deltas[i])` (TF1 `tf.ragged.range`).

    Scalars broadcast to the vector arguments; all scalars give one row.

    Raises:
      ValueError: an argument of rank > 1.
      InvalidArgumentError (run time): a zero delta, or vectors of different sizes.
    """
    if limits is None:
        starts, limits = 0, starts
    with name_scope(name, "RaggedRange", [starts, limits, deltas]):
        args = [convert_to_tensor(v, dtype=dtype, name=n)
                for v, n in ((starts, "starts"), (limits, "limits"), (deltas, "deltas"))]
        if dtype is None:
            common = max((a.dtype.base_dtype for a in args), key=_RANGE_DTYPES.index)
            args = [cast(a, common) for a in args]
        for a in args:
            if a.shape.rank is not None and a.shape.rank > 1:
                raise ValueError("starts, limits and deltas must be scalars or vectors; "
                                 "got shape %s" % a.shape)
        starts, limits, deltas = _broadcast_vectors(args)
        nonzero = check_ops.assert_none_equal(deltas, deltas * 0,
                                              message="Requires delta != 0")
        with control_dependencies([nonzero]):
            sizes = _range_sizes(starts, limits, identity(deltas), row_splits_dtype)
        splits = rp.lengths_to_splits(sizes, None, "", False)
        rowids = rp.splits_to_segment_ids(splits)
        steps = cast(range_op(splits[-1], dtype=splits.dtype) - gather(splits, rowids),
                     starts.dtype)
        values = gather(starts, rowids) + steps * gather(deltas, rowids)
        return RaggedTensor(values, splits, internal=True)


def _broadcast_vectors(args: List[Tensor]) -> List[Tensor]:
    if all(a.shape.rank == 0 for a in args):
        return [reshape(a, [1]) for a in args]
    size = shape_op(args[0] * 0 + args[1] * 0 + args[2] * 0)
    size = reshape(size, [-1])[-1:]
    return [broadcast_to(a, size) for a in args]


def _range_sizes(starts, limits, deltas, splits_dtype) -> Tensor:
    """ceil((limit - start) / delta), at least 0, per row."""
    span = limits - starts
    if starts.dtype.is_integer:
        one = convert_to_tensor(1, starts.dtype)
        sign = where_v2(deltas > 0 * one, one, -one)
        count = (span + deltas - sign) // deltas
    else:
        count = ceil(span / deltas)
    return cast(maximum(count, 0 * count), splits_dtype)


@tf_export("ragged.row_splits_to_segment_ids")
def row_splits_to_segment_ids(splits, name: Optional[str] = None, out_type=None) -> Tensor:
    """The row of each value: [0, 0, 2, ...] for splits [0, 2, 2, ...] (TF1).

    Raises:
      ValueError: splits is not an int32/int64 vector.
    """
    with name_scope(name, "RaggedSplitsToSegmentIds", [splits]):
        splits = rp.convert_partition(splits, "splits")
        return rp.splits_to_segment_ids(splits, out_type)


@tf_export("ragged.segment_ids_to_row_splits")
def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None,
                              name: Optional[str] = None) -> Tensor:
    """row_splits of sorted segment ids; `num_segments` adds empty rows at the end (TF1).

    Raises:
      ValueError: segment_ids is not an int32/int64 vector.
    """
    if out_type is None:
        out_type = segment_ids.dtype if isinstance(segment_ids, Tensor) else \
            num_segments.dtype if isinstance(num_segments, Tensor) else _dt.int64
    with name_scope(name, "SegmentIdsToRaggedSplits", [segment_ids]):
        ids = rp.convert_partition(segment_ids, "segment_ids")
        nrows = None if num_segments is None else \
            convert_to_tensor(num_segments, dtype=ids.dtype, name="num_segments")
        return rp.segment_ids_to_splits(ids, nrows, _dt.as_dtype(out_type))


# --- shared row partitions -----------------------------------------------------------------
def aligned(rts: Sequence[RaggedTensor]) -> List[RaggedTensor]:
    """`rts` with checks that they share every row partition (TF: "Inputs must have
    identical ragged splits", InvalidArgumentError at run time).

    Raises:
      ValueError: the ragged ranks differ.
    """
    first = rts[0]
    if any(rt.ragged_rank != first.ragged_rank for rt in rts):
        raise ValueError("All ragged inputs must have the same ragged_rank.")
    asserts = []
    for rt in rts[1:]:
        for a, b in zip(first.nested_row_splits, rt.nested_row_splits):
            if a is not b:
                asserts.append(check_ops.assert_equal(
                    a, cast(b, a.dtype), message="Inputs must have identical ragged splits"))
    if not asserts:
        return list(rts)
    with control_dependencies(asserts):
        return [rt.with_flat_values(identity(rt.flat_values)) for rt in rts]


@tf_export("ragged.map_flat_values")
def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat_values of the RaggedTensors in args and kwargs, the
    result wrapped in their (shared) row partition (TF1 `tf.ragged.map_flat_values`).

    Raises:
      ValueError: the op's result does not have one row per flat value, or the
        RaggedTensors differ in ragged_rank.
    """
    found = [x for x in nest.flatten([args, kwargs]) if isinstance(x, RaggedTensor)]
    if not found:
        return op(*args, **kwargs)
    checked = iter(aligned(found))
    swapped = {id(rt): next(checked) for rt in found}
    flat = nest.map_structure(
        lambda x: swapped[id(x)].flat_values if isinstance(x, RaggedTensor) else x,
        [args, kwargs])
    result = convert_to_tensor(op(*flat[0], **flat[1]))
    expected = found[0].flat_values.shape[:1]
    if not result.shape[:1].is_compatible_with(expected):
        raise ValueError("tf.ragged.map_flat_values requires that the output of `op` have "
                         "the same outer-dimension size as flat_values of any ragged "
                         "inputs. (output shape: %s; expected outer dimension size: %s)"
                         % (result.shape, expected[0]))
    return found[0].with_flat_values(result)


# --- stack and concat --------------------------------------------------------------------------
@tf_export("ragged.stack")
def ragged_stack(values, axis: int = 0, name: Optional[str] = None) -> RaggedTensor:
    """Stacks Tensors and RaggedTensors of one rank along a new `axis` (TF1
    `tf.ragged.stack`).

    Raises:
      ValueError: empty `values`, different ranks or row_splits dtypes, or an axis out
        of range.
      InvalidArgumentError (run time): the inputs' rows do not line up along `axis`.
    """
    with name_scope(name, "RaggedStack", _flat_inputs(values)):
        rts, rank = _as_ragged_inputs(values)
        axis = _normalized_axis(axis, rank + 1, "tf.ragged.stack")
        return _stack(rts, axis)


def ragged_concat(values, axis: int, name: Optional[str] = None) -> RaggedTensor:
    """`tf.concat` of inputs of which some are RaggedTensors."""
    with name_scope(name, "RaggedConcat", _flat_inputs(values)):
        rts, rank = _as_ragged_inputs(values)
        return _concat(rts, _normalized_axis(axis, rank, "tf.concat"))


def _concat(rts: List[RaggedTensor], axis: int) -> RaggedTensor:
    if axis == 0:
        return _concat_rows(rts)
    if axis == 1:
        # row i of the result is row i of every input, joined: stack, then merge
        stacked = _stack(rts, 1)
        inner = stacked.values
        return RaggedTensor(inner.values, gather(inner.row_splits, stacked.row_splits),
                            internal=True)
    return _inside_rows(rts, lambda values: _concat(values, axis - 1),
                        lambda values: concat(values, axis - 1))


def _inside_rows(rts: List[RaggedTensor], ragged_fn, dense_fn) -> RaggedTensor:
    """Joins the inputs' values row by row (an axis >= 2): the rows must line up."""
    outer = rts[0].row_splits
    same = [check_ops.assert_equal(outer, rt.row_splits,
                                   message="Input tensors have incompatible shapes: "
                                           "their rows differ in length")
            for rt in rts[1:] if rt.row_splits is not outer]
    values = [rt.values for rt in rts]
    with control_dependencies(same):
        joined = ragged_fn(values) if isinstance(values[0], RaggedTensor) else \
            dense_fn(values)
    return RaggedTensor(joined, outer, internal=True)


def _flat_inputs(values) -> list:
    return [v.flat_values if isinstance(v, RaggedTensor) else v for v in values]


def _as_ragged_inputs(values):
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError("values must be a non-empty list of Tensors or RaggedTensors")
    values = [convert_to_tensor_or_ragged_tensor(v, name="values") for v in values]
    ranks = {v.shape.rank for v in values}
    if len(ranks) != 1 or None in ranks:
        raise ValueError("Tensor and RaggedTensor inputs must all have the same known "
                         "rank; got ranks %s" % sorted(r for r in ranks if r is not None))
    ragged = [v for v in values if isinstance(v, RaggedTensor)]
    dtypes = {v.row_splits.dtype for v in ragged}
    if len(dtypes) > 1:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to "
                         "compatible dtypes.")
    top = max(v.ragged_rank for v in ragged) if ragged else 1
    splits_dtype = dtypes.pop() if dtypes else _dt.int64
    return [_to_ragged_rank(v, top, splits_dtype) for v in values], ranks.pop()


def _to_ragged_rank(value, ragged_rank: int, splits_dtype) -> RaggedTensor:
    """`value` as a RaggedTensor with `ragged_rank` ragged dimensions (uniform rows
    added where a dense input or inner values need them)."""
    from tensorweave.ops.ragged.ragged_conversion_ops import from_tensor
    if not isinstance(value, RaggedTensor):
        return from_tensor(value, ragged_rank=ragged_rank, row_splits_dtype=splits_dtype)
    if value.ragged_rank == ragged_rank:
        return value
    return value.with_values(_to_ragged_rank(value.values, ragged_rank - 1, splits_dtype))


def _normalized_axis(axis: int, rank: int, what: str) -> int:
    if not isinstance(axis, int):
        raise TypeError("%s: axis must be a Python int; got %r" % (what, axis))
    if not -rank <= axis < rank:
        raise ValueError("axis=%d out of bounds: expected %d<=axis<%d" % (axis, -rank, rank))
    return axis + rank if axis < 0 else axis


def _concat_rows(rts: List[RaggedTensor]) -> RaggedTensor:
    """The rows of every input, one input after the other (concat along axis 0)."""
    if len(rts) == 1:
        return rts[0]
    values = [rt.values for rt in rts]
    joined = _concat_rows(values) if isinstance(values[0], RaggedTensor) else \
        concat(values, 0)
    splits, offset = [rts[0].row_splits], rts[0].row_splits[-1]
    for rt in rts[1:]:
        splits.append(rt.row_splits[1:] + offset)
        offset = offset + rt.row_splits[-1]
    return RaggedTensor(joined, concat(splits, 0), internal=True)


def _stack(rts: List[RaggedTensor], axis: int) -> RaggedTensor:
    if axis >= 2:
        return _inside_rows(rts, lambda values: _stack(values, axis - 1),
                            lambda values: stack(values, axis - 1))
    rows = _concat_rows(rts)
    dtype = rows.row_splits.dtype
    count = len(rts)
    if axis == 0:
        nrows = stack([rt.nrows(out_type=dtype) for rt in rts])
        return RaggedTensor(rows, rp.lengths_to_splits(nrows, None, "", False),
                            internal=True)
    nrows = rts[0].nrows(out_type=dtype)
    same = [check_ops.assert_equal(rt.nrows(out_type=dtype), nrows,
                                   message="Input tensors have incompatible shapes: the "
                                           "number of rows differs")
            for rt in rts[1:]]
    with control_dependencies(same):
        order = reshape(transpose(reshape(range_op(nrows * count, dtype=dtype),
                                          [count, -1])), [-1])
    interleaved = gather_rows(rows, order)
    return RaggedTensor(interleaved, range_op(nrows + 1, dtype=dtype) * count,
                        internal=True)


# --- boolean_mask --------------------------------------------------------------------------------
@tf_export("ragged.boolean_mask")
def boolean_mask(data, mask, name: Optional[str] = None):
    """The entries of `data` where `mask` is True, keeping rows (TF1
    `tf.ragged.boolean_mask`): a mask of rank k removes entries of dimension k - 1;
    the result is ragged in the masked dimensions.

    Raises:
      ValueError: mask is not bool, or its rank is unknown or above data's.
    """
    with name_scope(name, "RaggedMask", [data, mask]):
        data = convert_to_tensor_or_ragged_tensor(data, name="data")
        mask = convert_to_tensor_or_ragged_tensor(mask, dtype=_dt.bool, name="mask")
        if mask.dtype != _dt.bool:
            raise ValueError("mask.dtype=%s is not bool" % mask.dtype.name)
        mask_rank, data_rank = mask.shape.rank, data.shape.rank
        if mask_rank is None:
            raise ValueError("mask.shape.ndims must be known statically.")
        if mask_rank == 0:
            raise ValueError("mask cannot be scalar.")
        if data_rank is not None and mask_rank > data_rank:
            raise ValueError("mask.shape.ndims (%d) must be <= data.shape.ndims (%d)"
                             % (mask_rank, data_rank))
        return _mask(data, mask)


def _mask(data, mask):
    if mask.shape.rank == 1 and not isinstance(mask, RaggedTensor):
        if isinstance(data, RaggedTensor):
            return gather_rows(data, reshape(where_v2(mask), [-1]))
        return dense_boolean_mask(data, mask)
    if not isinstance(mask, RaggedTensor):
        mask = _to_ragged_rank(mask, mask.shape.rank - 1, _splits_dtype_of(data))
    data = _to_ragged_rank(data, mask.ragged_rank, mask.row_splits.dtype) \
        if not isinstance(data, RaggedTensor) or data.ragged_rank < mask.ragged_rank \
        else data
    data, mask_partition = _shared_partition(data, mask)
    if isinstance(mask.values, RaggedTensor):
        return data.with_values(_mask(data.values, mask.values))
    kept = _mask(data.values, mask.values)
    counts = unsorted_segment_sum(cast(mask.values, mask.row_splits.dtype),
                                  mask.value_rowids(), mask.nrows())
    return RaggedTensor(kept, rp.lengths_to_splits(counts, None, "", False), internal=True)


def _splits_dtype_of(data) -> _dt.DType:
    return data.row_splits.dtype if isinstance(data, RaggedTensor) else _dt.int64


def _shared_partition(data: RaggedTensor, mask: RaggedTensor):
    """data with a run-time check that its outer row partition is the mask's."""
    if data.row_splits is mask.row_splits:
        return data, mask.row_splits
    same = check_ops.assert_equal(data.row_splits, cast(mask.row_splits,
                                                        data.row_splits.dtype),
                                  message="Inputs must have identical ragged splits")
    with control_dependencies([same]):
        splits = identity(data.row_splits)
    return RaggedTensor(data.values, splits, internal=True), splits
