"""Conversions between RaggedTensors and dense or sparse tensors.

All are compositions of existing ops (gather, boolean_mask, tensor_scatter_nd_update,
...), so gradients flow through `flat_values` with no gradient of their own: a value's
place in the dense tensor is (its row id, its offset in the row), and dense to ragged
keeps the entries a mask selects.
"""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor, control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape, as_shape, dimension_value
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array.array_fill_ops import fill
from tensorweave.ops.array.array_join_ops import concat, stack
from tensorweave.ops.array.array_ops import reshape, shape as shape_op
from tensorweave.ops.array.array_pad_ops import broadcast_to
from tensorweave.ops.control_flow.structure import identity
from tensorweave.ops.debug import check_ops
from tensorweave.ops.indexing.indexing_gather import gather
from tensorweave.ops.indexing.indexing_select import boolean_mask, sequence_mask, where
from tensorweave.ops.indexing.tensor_scatter_ops import tensor_scatter_nd_update
from tensorweave.ops.math.math_binary import logical_and, less, maximum, minimum, \
    not_equal
from tensorweave.ops.math.math_ops import cast, range as range_op
from tensorweave.ops.math.reduction_ops import reduce_any, reduce_max
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor


# --- ragged -> dense ---------------------------------------------------------------------
def value_positions(rt: RaggedTensor):
    """(row id, offset in its row) of each of rt.values, as int64 vectors."""
    splits = cast(rt.row_splits, _dt.int64)
    rowids = rp.splits_to_segment_ids(splits)
    nvals = shape_op(rowids, out_type=_dt.int64)[0]
    return rowids, range_op(nvals, dtype=_dt.int64) - gather(splits, rowids)


def to_tensor(rt: RaggedTensor, default_value=None, name: Optional[str] = None,
              shape=None) -> Tensor:
    """The dense tensor of `rt` (TF `RaggedTensor.to_tensor`).

    Args:
      rt: the RaggedTensor.
      default_value: fills the places no value holds; a scalar or a tensor that
        broadcasts to the inner (uniform) dims. Zero (or "") by default.
      shape: the shape of the result (None dims: the bounding shape); rows and columns
        past it are dropped, missing ones filled with default_value.

    Raises:
      ValueError: default_value has too high a rank or does not broadcast to the inner
        dims; `shape` does not have rt's rank.
    """
    with name_scope(name, "RaggedToTensor", [rt.flat_values, default_value]):
        flat = rt.flat_values
        default = _default_value(default_value, flat)
        dims = _target_dims(rt, shape)
        dense = _to_dense(rt, default, dims)
        dense.set_shape(_static_result_shape(rt, dims))
        return dense


def _default_value(default_value, flat: Tensor) -> Tensor:
    if default_value is None:
        zero = b"" if flat.dtype.base_dtype == _dt.string else 0
        return convert_to_tensor(zero, dtype=flat.dtype, name="default_value")
    default = convert_to_tensor(default_value, dtype=flat.dtype, name="default_value")
    rank, flat_rank = default.shape.rank, flat.shape.rank
    if rank is not None and flat_rank is not None:
        if rank >= flat_rank:
            raise ValueError("default_value.shape=%s and rt_input.flat_values.shape=%s are "
                             "incompatible: default_value.rank = %d  must be less than "
                             "rt_input.flat_values.rank = %d"
                             % (default.shape, flat.shape, rank, flat_rank))
        from tensorweave.ops.array.array_shape_ops import broadcast_static_shape
        broadcast_static_shape(default.shape, flat.shape[1:])
    return default


def _target_dims(rt: RaggedTensor, shape) -> List[Optional[int]]:
    rank = rt.shape.rank
    if shape is None:
        return [None] * rank
    if isinstance(shape, Tensor):
        value = constant_value(shape)
        if value is None:
            raise ValueError("RaggedTensor.to_tensor: a shape computed at run time is not "
                             "supported; pass a list or TensorShape")
        shape = [None if d < 0 else int(d) for d in value.tolist()]
    shape = as_shape(shape)
    if shape.rank is None:
        return [None] * rank
    if shape.rank != rank:
        raise ValueError("Shape %s must have rank %d" % (shape, rank))
    return shape.as_list()


def _static_result_shape(rt: RaggedTensor, dims) -> TensorShape:
    if rt.shape.rank is None:
        return TensorShape(None)
    return TensorShape([d if d is not None else s
                        for d, s in zip(dims, rt.shape.as_list())])


def _to_dense(rt: RaggedTensor, default: Tensor, dims: List[Optional[int]]) -> Tensor:
    """Scatters rt's values into a [nrows, ncols, ...] tensor filled with default."""
    values = rt.values
    if isinstance(values, RaggedTensor):
        inner = _to_dense(values, default, [None] + dims[2:])
    else:
        values.shape[1:].assert_is_compatible_with(TensorShape(dims[2:]))
        inner = values
    rowids, cols = value_positions(rt)
    nrows = dims[0] if dims[0] is not None else rt.nrows(out_type=_dt.int64)
    ncols = dims[1] if dims[1] is not None else _longest_row(rt)
    if dims[0] is not None or dims[1] is not None:
        keep = logical_and(less(rowids, nrows), less(cols, ncols))
        rowids, cols = boolean_mask(rowids, keep), boolean_mask(cols, keep)
        inner = boolean_mask(inner, keep)
    out_shape = concat([stack([cast(nrows, _dt.int64), cast(ncols, _dt.int64)]),
                        shape_op(inner, out_type=_dt.int64)[1:]], 0)
    base = broadcast_to(default, out_shape)
    return tensor_scatter_nd_update(base, stack([rowids, cols], axis=1), inner)


def _longest_row(rt: RaggedTensor) -> Tensor:
    splits = cast(rt.row_splits, _dt.int64)
    return maximum(reduce_max(splits[1:] - splits[:-1]), convert_to_tensor(0, _dt.int64))


# --- ragged -> sparse --------------------------------------------------------------------
def to_sparse(rt: RaggedTensor, name: Optional[str] = None):
    """The SparseTensor of `rt`: every value at its [row, column, ...] index, shaped as
    rt's bounding shape (TF `RaggedTensor.to_sparse`)."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    with name_scope(name, "RaggedToSparse", [rt.flat_values]):
        indices = _value_indices(rt)
        values = reshape(rt.flat_values, [-1])
        return SparseTensor(indices, values, rt.bounding_shape(out_type=_dt.int64))


def _value_indices(rt: RaggedTensor) -> Tensor:
    """int64 [N, rank] index of each scalar of rt.flat_values, in row-major order."""
    values = rt.values
    if isinstance(values, RaggedTensor):
        inner = _value_indices(values)
    else:
        inner = where(fill(shape_op(values), True))
    rowids, cols = value_positions(rt)
    first = inner[:, 0]
    outer = stack([gather(rowids, first), gather(cols, first)], axis=1)
    return concat([outer, inner[:, 1:]], 1)


# --- dense -> ragged ---------------------------------------------------------------------
def from_tensor(tensor, lengths=None, padding=None, ragged_rank: int = 1,
                name: Optional[str] = None, row_splits_dtype=_dt.int64) -> RaggedTensor:
    """The RaggedTensor of a dense tensor (TF `RaggedTensor.from_tensor`).

    Args:
      tensor: a Tensor of rank > ragged_rank.
      lengths: row lengths (clipped to the row size): a vector for the innermost ragged
        dimension, or a list of `ragged_rank` vectors, outermost first.
      padding: a value (shaped as the inner dims) whose trailing run ends each row.
      ragged_rank: how many of the outer dims after the first become ragged.

    Raises:
      ValueError: both lengths and padding, a bad ragged_rank, or a rank-1 tensor.
    """
    if lengths is not None and padding is not None:
        raise ValueError("Specify argument `lengths` or `padding`, but not both.")
    if not isinstance(ragged_rank, int) or ragged_rank <= 0:
        raise ValueError("ragged_rank must be a positive integer; got %r" % (ragged_rank,))
    row_splits_dtype = _dt.as_dtype(row_splits_dtype)
    with name_scope(name, "RaggedFromTensor", [tensor, lengths, padding]):
        tensor = convert_to_tensor(tensor, name="tensor")
        rank = tensor.shape.rank
        if rank is not None and rank < 2:
            raise ValueError("The rank of a RaggedTensor must be greater than 1, i.e., a "
                             "list of scalars won't have ragged dimensions. Received "
                             "argument `tensor` with rank %d." % rank)
        if rank is not None and ragged_rank >= rank:
            raise ValueError("ragged_rank must be less than rank(tensor) = %d; got %d"
                             % (rank, ragged_rank))
        if isinstance(lengths, (list, tuple)) and lengths and \
                all(isinstance(x, (list, tuple, Tensor)) for x in lengths):
            return _from_nested_lengths(tensor, list(lengths), ragged_rank,
                                        row_splits_dtype)
        return _from_tensor(tensor, lengths, padding, ragged_rank, row_splits_dtype)


def _from_tensor(tensor, lengths, padding, ragged_rank, splits_dtype) -> RaggedTensor:
    dims = shape_op(tensor, out_type=splits_dtype)
    if ragged_rank > 1:
        # the outer dims are uniform: merge the first two and split them back evenly
        merged = reshape(tensor, concat([[-1], shape_op(tensor)[2:]], 0))
        inner = _from_tensor(merged, lengths, padding, ragged_rank - 1, splits_dtype)
        return _uniform_rows(inner, dims[0], dims[1], dimension_value(tensor.shape[0]))
    if lengths is not None:
        lengths = minimum(convert_to_tensor(lengths, dtype=splits_dtype, name="lengths"),
                          dims[1])
    elif padding is not None:
        lengths = _lengths_before_padding(tensor, padding, splits_dtype)
    else:
        return _uniform_rows(reshape(tensor, concat([[-1], shape_op(tensor)[2:]], 0)),
                             dims[0], dims[1], dimension_value(tensor.shape[0]))
    values = boolean_mask(tensor, sequence_mask(lengths, dims[1]))
    return RaggedTensor(values, rp.lengths_to_splits(lengths, None, "", False),
                        internal=True)


def _uniform_rows(values, nrows: Tensor, ncols: Tensor, static_nrows) -> RaggedTensor:
    """Rows of ncols values each (row_splits 0, ncols, 2 * ncols, ...)."""
    splits = range_op(nrows + 1, dtype=nrows.dtype) * ncols
    if static_nrows is not None:
        splits.set_shape([static_nrows + 1])
    if isinstance(values, RaggedTensor) and values.row_splits.dtype != splits.dtype:
        splits = cast(splits, values.row_splits.dtype)
    return RaggedTensor(values, splits, internal=True)


def _lengths_before_padding(tensor: Tensor, padding, splits_dtype) -> Tensor:
    """Per row: the position after its last entry that differs from padding."""
    padding = convert_to_tensor(padding, dtype=tensor.dtype, name="padding")
    padding.shape.assert_is_compatible_with(tensor.shape[2:])
    differs = not_equal(tensor, padding)
    if tensor.shape.rank is None or tensor.shape.rank > 2:
        differs = reduce_any(differs, axis=range_op(2, _rank_of(tensor)))
    ncols = shape_op(tensor, out_type=splits_dtype)[1]
    position = range_op(1, ncols + 1, dtype=splits_dtype)
    marked = where(differs, broadcast_to(position, shape_op(differs, out_type=splits_dtype)),
                   fill(shape_op(differs), convert_to_tensor(0, splits_dtype)))
    return reduce_max(concat([marked, fill(stack([shape_op(differs)[0], 1]),
                                           convert_to_tensor(0, splits_dtype))], 1), axis=1)


def _rank_of(tensor: Tensor):
    from tensorweave.ops.array.array_ops import rank
    return rank(tensor)


def _from_nested_lengths(tensor, lengths: list, ragged_rank: int, splits_dtype):
    if len(lengths) != ragged_rank:
        raise ValueError("If lengths is a tuple of row_lengths, it must have length "
                         "ragged_rank (%d); got %d" % (ragged_rank, len(lengths)))
    outer = _from_tensor(tensor, lengths[0], None, 1, splits_dtype)
    if ragged_rank == 1:
        return outer
    return outer.with_values(_from_nested_lengths(outer.values, lengths[1:],
                                                  ragged_rank - 1, splits_dtype))


# --- sparse -> ragged --------------------------------------------------------------------
def from_sparse(st_input, name: Optional[str] = None,
                row_splits_dtype=_dt.int64) -> RaggedTensor:
    """The RaggedTensor of a rank-2 SparseTensor whose entries fill each row from
    column 0 with no gaps, in row-major order (TF `RaggedTensor.from_sparse`).

    Raises:
      TypeError: st_input is not a SparseTensor.
      ValueError: st_input does not have rank 2.
      InvalidArgumentError (run time): the entries are out of order or leave gaps.
    """
    from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
    if isinstance(st_input, SparseTensorValue):
        st_input = SparseTensor.from_value(st_input)
    if not isinstance(st_input, SparseTensor):
        raise TypeError("st_input must be a SparseTensor; got %r" % (st_input,))
    row_splits_dtype = _dt.as_dtype(row_splits_dtype)
    with name_scope(name, "RaggedFromSparse", [st_input.indices, st_input.values]):
        static_rank = dimension_value(st_input.indices.shape[1])
        if static_rank is not None and static_rank != 2:
            raise ValueError("rank(st_input) must be 2.")
        indices = cast(st_input.indices, row_splits_dtype)
        rowids, cols = indices[:, 0], indices[:, 1]
        nrows = cast(st_input.dense_shape[0], row_splits_dtype)
        splits = rp.segment_ids_to_splits(rowids, nrows, row_splits_dtype)
        nvals = shape_op(rowids, out_type=row_splits_dtype)[0]
        expected = range_op(nvals, dtype=row_splits_dtype) - gather(splits, rowids)
        ordered = check_ops.assert_equal(
            cols, expected, message="SparseTensor is not right-ragged: its indices must "
                                    "be in row-major order and fill each row from column 0")
        sorted_rows = check_ops.assert_less_equal(
            rowids[:-1], rowids[1:], message="SparseTensor is not right-ragged: its "
                                             "indices must be in row-major order")
        with control_dependencies([ordered, sorted_rows]):
            splits = identity(splits)
        return RaggedTensor(st_input.values, splits, internal=True)


# --- rows of the elements of a dense tensor -> ragged -------------------------------------
def from_split_tokens(indices: Tensor, values: Tensor, nrows: Tensor,
                      strings_shape: Optional[Tensor] = None,
                      strings_rank: int = 1) -> RaggedTensor:
    """The tokens of a string split ([row, position] indices, row-major) as one row per
    string, under the strings' uniform dims (the ragged result of tf.strings.split)."""
    rows = RaggedTensor.from_value_rowids(values, indices[:, 0], nrows=nrows,
                                          validate=False)
    return with_uniform_outer_dims(rows, strings_shape, strings_rank)


def with_uniform_outer_dims(rows: RaggedTensor, outer_shape: Optional[Tensor],
                            outer_rank: int) -> RaggedTensor:
    """`rows`, one per element (row-major) of a tensor of shape `outer_shape` and rank
    `outer_rank` >= 1, regrouped under that tensor's dims: a string op's ragged result
    for ranked input has rank outer_rank + 1."""
    from tensorweave.ops.math.reduction_ops import reduce_prod
    for i in reversed(list(range(1, outer_rank))):
        outer = reduce_prod(outer_shape[:i])
        rows = _uniform_rows(rows, cast(outer, rows.row_splits.dtype),
                             cast(outer_shape[i], rows.row_splits.dtype), None)
    return rows
