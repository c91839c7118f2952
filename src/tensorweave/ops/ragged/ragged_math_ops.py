"""Elementwise operators of RaggedTensor (+ - * / // % ** < <= > >= & | ^ ~ - abs).

An elementwise op on RaggedTensors is the dense op on their flat_values, wrapped in the
shared row partition (checked at run time when the partitions are different tensors).
A dense operand broadcasts when it only spans the uniform inner dimensions, or when it
has size 1 in every ragged dimension (one value per row: it is gathered per value);
other broadcasts between ragged and dense shapes are not supported (ValueError).
"""
from __future__ import annotations

import operator
from typing import Callable

from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array.array_ops import reshape, squeeze
from tensorweave.ops.indexing.indexing_gather import gather
from tensorweave.ops.ragged.ragged_array_ops import aligned
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor


def _outer_row_ids(rt: RaggedTensor) -> Tensor:
    """For each flat value, the index of its row in rt's outermost dimension."""
    ids = None
    level = rt
    chain = []
    while isinstance(level, RaggedTensor):
        chain.append(level.value_rowids())
        level = level.values
    for rowids in reversed(chain):
        ids = rowids if ids is None else gather(rowids, ids)
    return ids


def _dense_on_flat(rt: RaggedTensor, dense: Tensor) -> Tensor:
    """`dense` laid out to broadcast against rt.flat_values.

    Raises:
      ValueError: dense varies along a ragged dimension (not supported).
    """
    inner_rank = rt.flat_values.shape.rank - 1 if rt.flat_values.shape.rank else None
    rank = dense.shape.rank
    if rank is None or inner_rank is None:
        raise ValueError("Ragged elementwise ops need operands of known rank")
    if rank <= inner_rank:
        return dense
    full_rank = 1 + rt.ragged_rank + inner_rank
    if rank > full_rank:
        raise ValueError("Operand of rank %d has more dimensions than the RaggedTensor "
                         "(rank %d)" % (rank, full_rank))
    dense = reshape(dense, [1] * (full_rank - rank) + _dims_of(dense))
    ragged_dims = dense.shape[1:1 + rt.ragged_rank].as_list()
    if any(d != 1 for d in ragged_dims):
        raise ValueError("Broadcasting a dense Tensor of shape %s along the ragged "
                         "dimensions of a RaggedTensor of shape %s is not supported: "
                         "only size-1 dimensions there" % (dense.shape, rt.shape))
    per_row = squeeze(dense, list(range(1, 1 + rt.ragged_rank)))
    if per_row.shape[0] == 1:
        return squeeze(per_row, [0])
    return gather(per_row, _outer_row_ids(rt))


def _dims_of(t: Tensor) -> list:
    return [d if d is not None else -1 for d in t.shape.as_list()]


def elementwise_binary(fn: Callable, x, y):
    """fn(x, y) on flat_values, where x or y (or both) is a RaggedTensor.

    Raises:
      ValueError: RaggedTensors of different ragged ranks, or a dense operand that
        varies along a ragged dimension (see _dense_on_flat).
    """
    if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
        x, y = aligned([x, y])
        return x.with_flat_values(fn(x.flat_values, y.flat_values))
    reverse = not isinstance(x, RaggedTensor)
    rt, other = (y, x) if reverse else (x, y)
    flat = rt.flat_values
    if not isinstance(other, Tensor):
        other = convert_to_tensor(other, dtype_hint=flat.dtype, name="y")
    other = _dense_on_flat(rt, other)
    return rt.with_flat_values(fn(other, flat) if reverse else fn(flat, other))


def _binary(fn: Callable, name: str, reverse: bool = False) -> Callable:
    """The operator method `self (fn) other` (or `other (fn) self` when reverse)."""
    def method(self, other):
        with name_scope(None, name, [self.flat_values]):
            if reverse:
                return elementwise_binary(fn, other, self)
            return elementwise_binary(fn, self, other)
    method.__name__ = name
    return method


def _unary(fn: Callable, name: str) -> Callable:
    def method(self):
        with name_scope(None, name, [self.flat_values]):
            return self.with_flat_values(fn(self.flat_values))
    method.__name__ = name
    return method


_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
}
_COMPARISONS = {"lt": operator.lt, "le": operator.le, "gt": operator.gt,
                "ge": operator.ge}


def install_operators(cls) -> None:
    """Adds the elementwise operator methods to RaggedTensor."""
    for name, fn in _BINARY.items():
        setattr(cls, "__%s__" % name, _binary(fn, name))
        setattr(cls, "__r%s__" % name, _binary(fn, name, reverse=True))
    for name, fn in _COMPARISONS.items():
        setattr(cls, "__%s__" % name, _binary(fn, name))
    cls.__neg__ = _unary(operator.neg, "neg")
    cls.__abs__ = _unary(operator.abs, "abs")
    cls.__invert__ = _unary(operator.invert, "invert")


install_operators(RaggedTensor)
