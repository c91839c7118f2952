"""The ragged versions of the public array ops that TF1 programs call on RaggedTensors:
tf.gather, tf.where (and where_v2), tf.size, tf.rank, tf.expand_dims, tf.tile, tf.identity,
tf.squeeze, tf.reverse, tf.cumsum, tf.add_n and tf.math.unsorted_segment_* (tf.shape:
dynamic_ragged_shape).

Each function takes the public op's arguments (ragged_dispatch routes a call here when
one of them is a RaggedTensor; tf.identity reaches `identity` through
RaggedTensor._identity_for) and builds the result from dense ops on the parts.
"""
from __future__ import annotations

from typing import Callable, List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor, control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import dimension_value
from tensorweave.ops.array import array_ops
from tensorweave.ops.array.array_join_ops import concat, stack, tile as dense_tile
from tensorweave.ops.control_flow.structure import identity as dense_identity
from tensorweave.ops.debug import check_ops
from tensorweave.ops.array.array_pad_ops import reverse as dense_reverse
from tensorweave.ops.indexing.indexing_gather import gather as dense_gather, gather_nd
from tensorweave.ops.indexing.indexing_select import where as dense_where, where_v2
from tensorweave.ops.math.math_binary import maximum
from tensorweave.ops.math.math_ops import add_n as dense_add_n
from tensorweave.ops.math.math_ops import cast, range as range_op
from tensorweave.ops.math.scan_ops import cumsum as dense_cumsum
from tensorweave.ops.math.segment_ops import unsorted_segment_max
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.dynamic_ragged_shape import ragged_shape
from tensorweave.ops.ragged.ragged_conversion_ops import _value_indices as scalar_indices, \
    from_tensor
from tensorweave.ops.ragged.ragged_array_ops import _normalized_axis, aligned, \
    gather_rows, one_inner_row, one_outer_row, ragged_concat, ragged_range_values
from tensorweave.ops.ragged import ragged_broadcast
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor, \
    nested_uniform_row_lengths, convert_to_tensor_or_ragged_tensor

_INDEX_DTYPES = (_dt.int32, _dt.int64)


def _ragged_or_dense(value, name: str, dtype=None):
    return convert_to_tensor_or_ragged_tensor(value, dtype=dtype, name=name)


def _rebuilt(flat_values, nested_splits, uniform_lengths=None):
    """flat_values under `nested_splits` (outermost first; none: flat_values itself),
    without validation ops; `uniform_lengths` (one per splits, or None) kept."""
    result = flat_values
    nested_splits = list(nested_splits)
    lengths = uniform_lengths or [None] * len(nested_splits)
    for splits, length in reversed(list(zip(nested_splits, lengths))):
        result = RaggedTensor(result, splits, internal=True, uniform_row_length=length)
    return result


# --- tf.gather ---------------------------------------------------------------------------------
def gather(params, indices, validate_indices=None, name: Optional[str] = None, axis=None,
           batch_dims: int = 0):
    """tf.gather where params and/or indices are ragged (TF's ragged gather, axis 0).

    Ragged indices give a result with their row partition; dense indices of rank k > 1
    give their k dimensions (as rows of equal length) over the gathered rows.

    Raises:
      TypeError: indices are not int32 or int64.
      ValueError: axis or batch_dims other than 0 (not supported for RaggedTensors), or
        dense indices of unknown rank.
      InvalidArgumentError (run time): an index out of [0, nrows).
    """
    del validate_indices  # TF ignores it too
    if batch_dims != 0 and axis is None:
        raise ValueError("axis must be greater than or equal to batch_dims")
    if (axis or 0) != 0 or batch_dims != 0:
        raise ValueError("tf.gather of a RaggedTensor supports only axis=0 and "
                         "batch_dims=0; got axis=%s, batch_dims=%s" % (axis, batch_dims))
    with name_scope(name, "RaggedGather", [params, indices]):
        params = _ragged_or_dense(params, "params")
        indices = _ragged_or_dense(indices, "indices")
        if indices.dtype.base_dtype not in _INDEX_DTYPES:
            raise TypeError("Value passed to parameter 'indices' has DataType %s not in "
                            "list of allowed values: int32, int64" % indices.dtype.name)
        return _gather(params, indices)


def _gather(params, indices):
    if isinstance(indices, RaggedTensor):
        return indices.with_values(_gather(params, indices.values))
    if not isinstance(params, RaggedTensor):
        return dense_gather(params, indices)
    rank = indices.shape.rank
    if rank is None:
        raise ValueError("tf.gather of a RaggedTensor needs indices of known rank")
    if rank == 0:
        return gather_rows(params, array_ops.reshape(indices, [1])).values
    if rank == 1:
        return gather_rows(params, indices)
    outer = from_tensor(indices, ragged_rank=rank - 1,
                        row_splits_dtype=params.row_splits.dtype)
    return outer.with_flat_values(gather_rows(params, outer.flat_values))


# --- tf.where ----------------------------------------------------------------------------------
def where(condition, x=None, y=None, name: Optional[str] = None):
    """tf.where (TF1) with a ragged condition or ragged x and y.

    With only a condition: the int64 coordinates of its true values. With x and y:
    a ragged condition selects values (condition, x and y share one row partition); a
    dense vector condition selects whole rows of x or y.

    Raises:
      ValueError: only one of x and y given, or shapes that do not line up.
      InvalidArgumentError (run time): the row partitions differ.
    """
    if (x is None) != (y is None):
        raise ValueError("x and y must be either both None or both non-None")
    with name_scope(name, "RaggedWhere", [condition, x, y]):
        condition = _ragged_or_dense(condition, "condition")
        if x is None:
            return _true_coordinates(condition)
        x, y = _ragged_or_dense(x, "x"), _ragged_or_dense(y, "y")
        if not isinstance(condition, RaggedTensor) and condition.shape.rank == 1:
            return _select_rows(condition, x, y)
        if not all(isinstance(v, RaggedTensor) for v in (condition, x, y)) or \
                len({v.ragged_rank for v in (condition, x, y)}) != 1:
            raise ValueError("Input shapes do not match.")
        condition, x, y = _aligned_values([condition, x, y])
        return x.with_flat_values(dense_where(condition.flat_values, x.flat_values,
                                              y.flat_values))


def where_v2_ragged(condition, x=None, y=None, name: Optional[str] = None):
    """tf.where_v2 with ragged operands: condition, x and y broadcast to one ragged shape
    as in ragged elementwise ops (ragged_broadcast).

    Raises:
      ValueError: only one of x and y given, or RaggedTensors of one ragged rank whose
        flat_values have different static lengths (TF's check).
      InvalidArgumentError (run time): the shapes do not broadcast.
    """
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must be either both None or both non-None")
    with name_scope(name, "RaggedWhere", [condition, x, y]):
        operands = [_ragged_or_dense(v, n) for v, n in
                    ((condition, "condition"), (x, "x"), (y, "y"))]
        ragged = [v for v in operands if isinstance(v, RaggedTensor)]
        for rank in {rt.ragged_rank for rt in ragged}:
            _check_flat_sizes([rt for rt in ragged if rt.ragged_rank == rank])
        return ragged_broadcast.elementwise(lambda values: where_v2(*values), operands)


def _aligned_values(rts: List[RaggedTensor]) -> List[RaggedTensor]:
    """`aligned` after TF's build-time check that the flat_values have one length.

    Raises:
      ValueError: flat_values of different static lengths.
    """
    _check_flat_sizes(rts)
    return aligned(rts)


def _check_flat_sizes(rts: List[RaggedTensor]) -> None:
    sizes = {dimension_value(rt.flat_values.shape[0]) for rt in rts} - {None}
    if len(sizes) > 1:
        raise ValueError("Input RaggedTensors' flat_values must all have the same "
                         "outer-dimension size.  Got sizes: %s" % (sizes,))


def _true_coordinates(condition) -> Tensor:
    """[row, column, ...] of each true value: the coordinates in `values` turned into
    (row, position in row) one ragged dimension at a time."""
    if not isinstance(condition, RaggedTensor):
        return dense_where(condition)
    inner = _true_coordinates(condition.values)
    index_in_values = cast(inner[:, 0], condition.row_splits.dtype)
    rows = dense_gather(condition.value_rowids(), index_in_values)
    columns = index_in_values - dense_gather(condition.row_splits, rows)
    outer = cast(stack([rows, columns], axis=1), _dt.int64)
    return concat([outer, inner[:, 1:]], axis=1)


def _select_rows(condition: Tensor, x, y):
    """Row i of x where condition[i], else row i of y."""
    if not isinstance(x, RaggedTensor) or not isinstance(y, RaggedTensor):
        raise ValueError("Input shapes do not match.")
    nrows = x.nrows()
    rows = ragged_concat([x, y], 0)
    order = range_op(nrows, dtype=nrows.dtype)
    return gather_rows(rows, where_v2(condition, order, order + nrows))


# --- shape queries and identity ------------------------------------------------------------------
def size(input, name: Optional[str] = None, out_type=None) -> Tensor:  # noqa: A002
    """The number of values of a RaggedTensor (tf.size); out_type defaults to int32."""
    out_type = _dt.int32 if out_type is None else out_type
    return array_ops.size(input.flat_values, name=name, out_type=out_type)


def rank(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The rank of a RaggedTensor (tf.rank): its ragged dimensions plus those of
    flat_values."""
    with name_scope(name, "RaggedRank", [input]):
        return array_ops.rank(input.flat_values) + input.ragged_rank


def identity(input, name: Optional[str] = None) -> RaggedTensor:  # noqa: A002
    """tf.identity of every part of a RaggedTensor (flat_values and each row_splits)."""
    with name_scope(name, "RaggedIdentity", [input]):
        return _rebuilt(dense_identity(input.flat_values),
                        [dense_identity(s) for s in input.nested_row_splits],
                        nested_uniform_row_lengths(input))


# --- expand_dims, squeeze ------------------------------------------------------------------------
def expand_dims(input, axis=None, name: Optional[str] = None, dim=None):  # noqa: A002
    """A RaggedTensor with a new dimension of size 1 at `axis` (tf.expand_dims).

    Raises:
      ValueError: axis out of [-(rank + 1), rank + 1), or both axis and dim given.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    with name_scope(name, "RaggedExpandDims", [input]):
        axis = _normalized_axis(axis, input.shape.rank + 1, "tf.expand_dims")
        return _expand(input, axis)


def _expand(rt, axis: int):
    if not isinstance(rt, RaggedTensor):
        return array_ops.expand_dims(rt, axis)
    if axis >= 2:
        return rt.with_values(_expand(rt.values, axis - 1))
    return one_outer_row(rt) if axis == 0 else one_inner_row(rt)


def squeeze(input, axis=None, name: Optional[str] = None,  # noqa: A002
            squeeze_dims=None):
    """Removes dimensions of size 1 at `axis` from a RaggedTensor (tf.squeeze): a
    ragged dimension is checked at run time to have only rows of length 1.

    Raises:
      ValueError: no axis given (TF requires one for RaggedTensors), or one out of range.
      InvalidArgumentError (run time): a squeezed ragged dimension is not of size 1.
    """
    if axis is None:
        axis = squeeze_dims
    if axis is None:
        raise ValueError("Ragged.squeeze must have an axis argument.")
    with name_scope(name, "RaggedSqueeze", [input]):
        rank = input.shape.rank
        axes = sorted({_squeeze_axis(i, a, rank)
                       for i, a in enumerate([axis] if isinstance(axis, int) else axis)})
        splits = list(input.nested_row_splits)
        dense_axes = [a - input.ragged_rank for a in axes if a > input.ragged_rank]
        checks = []
        # from the innermost ragged axis out, so the levels left keep their places
        for a in reversed([a for a in axes if a <= input.ragged_rank]):
            if not splits:  # every ragged level gone: axis 0 is flat_values' own
                dense_axes.insert(0, 0)
                continue
            checks.append(_assert_size_one(splits[a - 1] if a else None, splits[0]))
            del splits[max(a - 1, 0)]
        with control_dependencies(checks):
            flat = dense_identity(input.flat_values)
        if dense_axes:
            flat = array_ops.squeeze(flat, dense_axes)
        return _rebuilt(flat, splits)


def _squeeze_axis(position: int, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError("axis[%d]=%d out of bounds: expected %d<=axis[%d]<%d"
                         % (position, axis, -rank, position, rank))
    return axis + rank if axis < 0 else axis


def _assert_size_one(lengths_splits: Optional[Tensor], outer_splits: Tensor):
    """A check that dimension 0 (lengths_splits None) has one row, or that every row
    described by `lengths_splits` has length 1."""
    if lengths_splits is None:
        count = array_ops.size(outer_splits, out_type=outer_splits.dtype) - 1
        return check_ops.assert_equal(count, convert_to_tensor(1, count.dtype),
                                      message="Can only squeeze dimension 0 when it "
                                              "has size 1")
    lengths = lengths_splits[1:] - lengths_splits[:-1]
    return check_ops.assert_equal(lengths, array_ops.ones_like(lengths),
                                  message="Can only squeeze a ragged dimension whose "
                                          "rows all have length 1")


# --- reverse, cumsum ------------------------------------------------------------------------
def reverse(tensor, axis, name: Optional[str] = None) -> RaggedTensor:
    """A RaggedTensor with the order of dimensions `axis` reversed (tf.reverse): along a
    ragged dimension, the items of each row.

    Raises:
      ValueError: an axis out of [-rank, rank).
    """
    with name_scope(name, "RaggedReverse", [tensor]):
        rank, ragged_rank = tensor.shape.rank, tensor.ragged_rank
        axes = sorted({_normalized_axis(a, rank, "tf.reverse")
                       for a in ([axis] if isinstance(axis, int) else axis)})
        dense_axes = [a - ragged_rank for a in axes if a > ragged_rank]
        result = tensor if not dense_axes else tensor.with_flat_values(
            dense_reverse(tensor.flat_values, dense_axes))
        for a in axes:
            if a <= ragged_rank:
                result = _reversed_rows(result, a)
        return result


def _reversed_rows(rt: RaggedTensor, axis: int) -> RaggedTensor:
    if axis >= 2:
        return rt.with_values(_reversed_rows(rt.values, axis - 1))
    if axis == 0:
        nrows = rt.nrows()
        return gather_rows(rt, range_op(nrows - 1, -1, -1, dtype=nrows.dtype))
    rowids = rt.value_rowids()
    position = range_op(rt.row_splits[-1], dtype=rowids.dtype)
    # item j of row r moves to start(r) + limit(r) - 1 - j
    order = dense_gather(rt.row_starts() + rt.row_limits() - 1, rowids) - position
    return RaggedTensor(gather_rows(rt.values, order), rt.row_splits, internal=True)


def cumsum(x, axis=0, exclusive: bool = False, reverse: bool = False,  # noqa: A002
           name: Optional[str] = None) -> RaggedTensor:
    """The cumulative sum of a RaggedTensor along `axis` (tf.cumsum): along a ragged
    dimension, position by position as if the rows were padded with zeros.

    Raises:
      ValueError: axis out of [-rank, rank).
    """
    with name_scope(name, "RaggedCumSum", [x]):
        axis = _normalized_axis(axis, x.shape.rank, "tf.cumsum")
        if axis > x.ragged_rank:
            return x.with_flat_values(dense_cumsum(x.flat_values, axis - x.ragged_rank,
                                                   exclusive=exclusive, reverse=reverse))
        summed = dense_cumsum(x.to_tensor(), axis, exclusive=exclusive, reverse=reverse)
        values = gather_nd(summed, scalar_indices(x))
        return x.with_flat_values(array_ops.reshape(
            values, array_ops.shape(x.flat_values, out_type=_dt.int64)))


# --- tile --------------------------------------------------------------------------------------
def tile(input, multiples, name: Optional[str] = None) -> RaggedTensor:  # noqa: A002
    """Repeats a RaggedTensor `multiples[d]` times along each dimension d (tf.tile):
    along a ragged dimension each row's content repeats within the row.

    Raises:
      ValueError: multiples is not a vector of length rank(input).
    """
    with name_scope(name, "RaggedTile", [input, multiples]):
        multiples = convert_to_tensor(multiples, name="multiples", dtype_hint=_dt.int64)
        if multiples.dtype.base_dtype not in _INDEX_DTYPES:
            raise TypeError("multiples must be int32 or int64; got %s"
                            % multiples.dtype.name)
        length = dimension_value(multiples.shape.with_rank(1)[0])
        if length is not None and length != input.shape.rank:
            raise ValueError("multiples must have length %d (the rank of input); got %d"
                             % (input.shape.rank, length))
        return _tile(input, cast(multiples, input.row_splits.dtype))


def _tile(rt, multiples: Tensor):
    if not isinstance(rt, RaggedTensor):
        return dense_tile(rt, cast(multiples, _dt.int64))
    one = convert_to_tensor([1], dtype=multiples.dtype)
    values = _tile(rt.values, concat([one, multiples[2:]], 0))
    starts, limits = rt.row_starts(), rt.row_limits()
    # each row's content `multiples[1]` times, one copy after the other
    positions = ragged_range_values(_repeat(starts, multiples[1]),
                                    _repeat(limits, multiples[1]))
    splits = rp.lengths_to_splits((limits - starts) * multiples[1], None, "", False)
    widened = RaggedTensor(gather_rows(values, positions), splits, internal=True)
    order = dense_tile(range_op(rt.nrows(), dtype=multiples.dtype), multiples[:1])
    return gather_rows(widened, order)


def _repeat(x: Tensor, count: Tensor) -> Tensor:
    """Each element of vector x `count` times in a row ([a, a, b, b] for count 2)."""
    one = convert_to_tensor(1, dtype=count.dtype)
    return array_ops.reshape(dense_tile(array_ops.expand_dims(x, 1), stack([one, count])),
                             [-1])


# --- unsorted segment ops -----------------------------------------------------------------------
def unsorted_segment(dense_op: Callable, data, segment_ids, num_segments,
                     name: Optional[str] = None):
    """`dense_op` (tf.math.unsorted_segment_sum, _max, ...) of ragged data: the rows of
    each segment combined position by position (the result row as long as its longest
    row); or, with ragged segment_ids sharing data's row partition, of the values.

    Raises:
      ValueError: segment_ids ragged but data not, or of another ragged_rank.
      InvalidArgumentError (run time): a segment id out of [0, num_segments).
    """
    scope = "RaggedSegment" + dense_op.__name__.replace("unsorted_segment_", "").title()
    with name_scope(name, scope, [data, segment_ids, num_segments]):
        data = _ragged_or_dense(data, "data")
        segment_ids = _ragged_or_dense(segment_ids, "segment_ids")
        if isinstance(segment_ids, RaggedTensor):
            if not isinstance(data, RaggedTensor):
                raise ValueError("segment_ids.shape must be a prefix of data.shape: "
                                 "ragged segment_ids need ragged data")
                data, segment_ids = aligned([data, segment_ids])
            return dense_op(data.flat_values, segment_ids.flat_values, num_segments)
        return _segment_rows(dense_op, data, segment_ids, num_segments)


def _segment_rows(dense_op: Callable, data, segment_ids: Tensor, num_segments):
    if not isinstance(data, RaggedTensor):
        return dense_op(data, segment_ids, num_segments)
    lengths = data.row_lengths()
    longest = unsorted_segment_max(lengths, segment_ids, num_segments)
    out_splits = rp.lengths_to_splits(maximum(longest, 0 * longest), None, "", False)
    rowids = data.value_rowids()
    position = range_op(data.row_splits[-1], dtype=rowids.dtype) - \
        dense_gather(data.row_splits, rowids)
    # where each row's segment starts in the result (a negative id fails here, as TF)
    segment_starts = dense_gather(out_splits, segment_ids)
    target = dense_gather(segment_starts, rowids) + position
    values = _segment_rows(dense_op, data.values, target, out_splits[-1])
    return RaggedTensor(values, out_splits, internal=True)


# --- add_n ---------------------------------------------------------------------------------------
def add_n(inputs, name: Optional[str] = None) -> RaggedTensor:
    """The sum of RaggedTensors that share one row partition (tf.add_n).

    Raises:
      ValueError: an input is not ragged, or the ragged ranks differ.
      InvalidArgumentError (run time): the row partitions differ.
    """
    with name_scope(name, "RaggedAddN", list(inputs)):
        inputs = [_ragged_or_dense(v, "inputs") for v in inputs]
        if not all(isinstance(v, RaggedTensor) for v in inputs):
            raise ValueError("tf.add_n: inputs must be all RaggedTensors or all Tensors")
        inputs = aligned(inputs)
        return inputs[0].with_flat_values(dense_add_n([v.flat_values for v in inputs]))


def routed_ops() -> List[tuple]:
    """(public name, ragged version) for each op this module serves, for the table."""
    return [("shape", ragged_shape), ("size", size), ("rank", rank), ("gather", gather),
            ("where", where), ("where_v2", where_v2_ragged), ("expand_dims", expand_dims),
            ("squeeze", squeeze), ("tile", tile), ("add_n", add_n), ("reverse", reverse),
            ("cumsum", cumsum)]
