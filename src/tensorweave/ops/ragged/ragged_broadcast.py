"""Broadcasting between RaggedTensors and dense Tensors (TF's DynamicRaggedShape rules).

Shapes are aligned on the right, the shorter one padded with leading dimensions of
size 1. Dimension by dimension from the outermost: a uniform dimension of size 1
broadcasts to the other operand's (uniform or ragged) dimension; two uniform sizes must
be equal; a ragged dimension against a uniform size n needs every row of length n; two
ragged dimensions need the same row lengths (after the outer dimensions broadcast).
Failures are InvalidArgumentError at run time, as in TF.

The walk keeps, for each operand, the index of the operand's position under every
position of the result at the current dimension. After the last dimension that is ragged
in the result, each operand's values are gathered at those indices and the op runs on
them with ordinary dense broadcasting of the inner dimensions. Gradients go back through
the gathers (summed per source position), so they reduce to each operand's own shape.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor, control_dependencies
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape, dimension_value
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array.array_join_ops import concat, stack
from tensorweave.ops.array.array_ops import reshape, shape as shape_op
from tensorweave.ops.control_flow.structure import identity
from tensorweave.ops.debug.debug_ops import Assert
from tensorweave.ops.indexing.indexing_gather import gather
from tensorweave.ops.indexing.indexing_select import where_v2
from tensorweave.ops.math.math_binary import equal, logical_or
from tensorweave.ops.math.math_ops import cast, range as range_op
from tensorweave.ops.math.reduction_ops import reduce_all
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor

_INDEX = _dt.int64
_MESSAGE = "Ragged broadcasting: the operands' shapes are incompatible"


class _Dim:
    """One dimension of an operand: ragged (`splits`) or uniform (`size`, a scalar)."""

    def __init__(self, splits: Optional[Tensor] = None, size: Optional[Tensor] = None):
        self.splits, self.size = splits, size

    def static_size(self) -> Optional[int]:
        value = None if self.size is None else constant_value(self.size)
        return None if value is None else int(value)


class _Operand:
    """An operand as the walk sees it: the size of dimension 0, the partitions of the
    dimensions below it, and the values whose axis 0 enumerates the positions of the
    last partitioned dimension."""

    def __init__(self, nrows: Tensor, dims: List[_Dim], values: Tensor):
        self.nrows, self.dims, self.values = nrows, dims, values

    @classmethod
    def of(cls, x, rank: int) -> "_Operand":
        """`x` padded to `rank` with leading dimensions of size 1."""
        if isinstance(x, RaggedTensor):
            operand = cls(x.nrows(out_type=_INDEX), _ragged_dims(x), x.flat_values)
        else:
            x = reshape(x, [1]) if x.shape.rank == 0 else x  # a scalar: like a [1]
            operand = cls(_size(x, 0), [], x)
        for _ in range(rank - x.shape.rank):
            one = convert_to_tensor(1, _INDEX)
            operand = cls(one, [_Dim(size=operand.nrows)] + operand.dims, operand.values)
        return operand

    def folded_to(self, depth: int) -> "_Operand":
        """The operand with its uniform inner dims down to `depth` partitioned too."""
        values, dims = self.values, list(self.dims)
        extra = depth - len(dims)
        if extra <= 0:
            return self
        dims += [_Dim(size=_size(values, 1 + i)) for i in range(extra)]
        inner = shape_op(values, out_type=_INDEX)[1 + extra:]
        flat = reshape(values, concat([convert_to_tensor([-1], _INDEX), inner], 0))
        flat.set_shape(TensorShape([None]).concatenate(values.shape[1 + extra:]))
        return _Operand(self.nrows, dims, flat)


def _size(t: Tensor, axis: int) -> Tensor:
    static = dimension_value(t.shape[axis])
    if static is not None:
        return convert_to_tensor(static, _INDEX)
    return shape_op(t, out_type=_INDEX)[axis]


def _ragged_dims(rt: RaggedTensor) -> List[_Dim]:
    dims, level = [], rt
    while isinstance(level, RaggedTensor):
        length = level.uniform_row_length
        dims.append(_Dim(size=cast(length, _INDEX)) if length is not None else
                     _Dim(splits=cast(level.row_splits, _INDEX)))
        level = level.values
    return dims


def elementwise(fn: Callable, operands: List):
    """fn(list of dense values) for `operands` (Tensors and RaggedTensors, one at least
    ragged), on their flat_values where they share every row partition and each dense
    operand spans only the inner dimensions, else broadcast (broadcast_apply).

    Raises:
      ValueError: RaggedTensors with different row_splits dtypes, or an operand of
        unknown rank.
    """
    ragged = [x for x in operands if isinstance(x, RaggedTensor)]
    splits_dtype = _common_splits_dtype(ragged)
    if _needs_broadcast(operands, ragged):
        return broadcast_apply(fn, operands, splits_dtype)
    values = [x.flat_values if isinstance(x, RaggedTensor) else x for x in operands]
    return ragged[0].with_flat_values(fn(values))


def _common_splits_dtype(ragged: List[RaggedTensor]):
    """The row_splits dtype of the ragged operands (TF: they must agree).

    Raises:
      ValueError: RaggedTensors with different row_splits dtypes.
    """
    dtypes = {x.row_splits.dtype for x in ragged}
    if len(dtypes) > 1:
        raise ValueError("Input RaggedTensors have mismatched row_splits dtypes; use "
                         "RaggedTensor.with_row_splits_dtype() to convert them to "
                         "compatible dtypes.")
    return dtypes.pop()


def _needs_broadcast(operands: List, ragged: List[RaggedTensor]) -> bool:
    """TF's test for the ragged broadcast: RaggedTensors whose row partitions are not
    the same tensors, or a dense operand of at least the rank of the flat_values."""
    first = ragged[0]
    for rt in ragged[1:]:
        shared = rt.ragged_rank == first.ragged_rank and all(
            a is b for a, b in zip(rt.nested_row_splits, first.nested_row_splits))
        if not shared or rt.shape.rank != first.shape.rank:
            return True
    flat_rank = first.flat_values.shape.rank
    ranks = [x.shape.rank for x in operands if not isinstance(x, RaggedTensor)]
    return flat_rank is None or any(r is None or r >= flat_rank for r in ranks)


def broadcast_apply(fn: Callable, operands: List, splits_dtype) -> RaggedTensor:
    """fn(list of values) with `operands` (Tensors and RaggedTensors, one at least
    ragged) broadcast to one ragged shape; fn gets their values laid out alike.

    Raises:
      ValueError: an operand of unknown rank.
    """
    if any(x.shape.rank is None for x in operands):
        raise ValueError("Ragged broadcasting needs operands of known rank")
    rank = max(x.shape.rank for x in operands)
    walked = [_Operand.of(x, rank) for x in operands]
    depth = max(len(w.dims) for w in walked)
    walked = [w.folded_to(depth) for w in walked]
    indices = _row_indices([w.nrows for w in walked])
    partitions = []
    for level in range(depth):
        partition, indices = _broadcast_dim([w.dims[level] for w in walked], indices)
        partitions.append(partition)
    values = fn([gather(w.values, idx) for w, idx in zip(walked, indices)])
    return _assemble(values, partitions, splits_dtype)


def _broadcast_size(sizes: List[Tensor]) -> Tensor:
    """The size uniform dimensions of `sizes` broadcast to (each one it or 1)."""
    static = [constant_value(n) for n in sizes]
    known = {int(n) for n in static if n is not None}
    if None not in static and len(known - {1}) <= 1:
        return convert_to_tensor(max(known - {1}, default=1), _INDEX)
    size = sizes[0]
    for n in sizes[1:]:
        size = where_v2(equal(size, 1), n, size)
    ok = reduce_all(stack([logical_or(equal(n, size), equal(n, 1)) for n in sizes]))
    check = Assert(ok, [_MESSAGE + ": uniform dimension sizes"] + list(sizes))
    with control_dependencies([check]):
        return identity(size)


def _row_indices(sizes: List[Tensor]) -> List[Tensor]:
    """Each operand's row under each row of the result (dimension 0 broadcast)."""
    rows = range_op(_broadcast_size(sizes), dtype=_INDEX)
    return [_index_of(rows, size) for size in sizes]


def _index_of(rows: Tensor, size: Tensor) -> Tensor:
    """Positions `rows` of the result in an operand of `size` (all 0 when size is 1)."""
    if constant_value(size) is not None and int(constant_value(size)) != 1:
        return rows
    return where_v2(equal(size, 1), rows * 0, rows)


def _lengths_and_starts(dim: _Dim, idx: Tensor) -> Tuple[Tensor, Tensor]:
    """The operand's row length and first position below each result position."""
    if dim.splits is None:
        return idx * 0 + dim.size, idx * dim.size
    splits = dim.splits
    return gather(splits[1:] - splits[:-1], idx), gather(splits[:-1], idx)


def _broadcast_dim(dims: List[_Dim], indices: List[Tensor]):
    """The result's partition of one dimension and each operand's index below it."""
    parts = [_lengths_and_starts(d, idx) for d, idx in zip(dims, indices)]
    if all(d.splits is None for d in dims):
        size = _broadcast_size([d.size for d in dims])
        lengths, uniform = indices[0] * 0 + size, size
    else:
        lengths, uniform = _ragged_lengths(dims, [length for length, _ in parts]), None
    splits = rp.lengths_to_splits(lengths, None, "", False)
    rowids = rp.splits_to_segment_ids(splits)
    offsets = range_op(splits[-1], dtype=_INDEX) - gather(splits, rowids)
    below = [_below(start, length, rowids, offsets) for length, start in parts]
    return (splits, uniform), below


def _ragged_lengths(dims: List[_Dim], lengths: List[Tensor]) -> Tensor:
    """The row lengths where one operand at least is ragged, checked at run time: every
    other operand has the same lengths, or a uniform size of 1."""
    ragged = next(k for k, d in enumerate(dims) if d.splits is not None)
    reference = lengths[ragged]
    checks = []
    for dim, length in zip(dims, lengths):
        if length is reference or dim.splits is None and dim.static_size() == 1:
            continue
        same = reduce_all(equal(length, reference))
        if dim.splits is None:
            same = logical_or(equal(dim.size, 1), same)
        checks.append(Assert(same, [_MESSAGE + ": row lengths", reference, length]))
    if not checks:
        return reference
    with control_dependencies(checks):
        return identity(reference)


def _below(starts: Tensor, lengths: Tensor, rowids: Tensor, offsets: Tensor) -> Tensor:
    """An operand's position under each result position (its only one where the
    operand's row has length 1 and broadcasts)."""
    spread = where_v2(equal(gather(lengths, rowids), 1), offsets * 0, offsets)
    return gather(starts, rowids) + spread


def _assemble(values: Tensor, partitions, splits_dtype) -> RaggedTensor:
    """The RaggedTensor of `values` under the result's partitions, innermost last."""
    result = values
    for splits, uniform in reversed(partitions):
        uniform = None if uniform is None else cast(uniform, splits_dtype)
        result = RaggedTensor(result, cast(splits, splits_dtype), internal=True,
                              uniform_row_length=uniform)
    return result
