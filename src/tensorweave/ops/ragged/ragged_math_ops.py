"""Elementwise operators of RaggedTensor (+ - * / // % ** < <= > >= & | ^ ~ - abs).

An elementwise op on RaggedTensors is the dense op on their flat_values, wrapped in the
shared row partition. Operands with different row partitions, ranks or ragged ranks,
and dense operands of at least the flat_values' rank, broadcast by TF's ragged rules
(ragged_broadcast).
"""
from __future__ import annotations

import operator
from typing import Callable

from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.ragged import ragged_broadcast
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor


def elementwise_binary(fn: Callable, x, y):
    """fn(x, y) on flat_values, where x or y (or both) is a RaggedTensor, the operands
    broadcast as TF's ragged shapes do (ragged_broadcast) unless they share their row
    partitions or the dense operand only spans the inner dimensions.

    Raises:
      ValueError: RaggedTensors with different row_splits dtypes, or an operand of
        unknown rank.
      InvalidArgumentError (run time): the shapes do not broadcast.
    """
    rt = x if isinstance(x, RaggedTensor) else y
    if not isinstance(x, RaggedTensor):
        x = _as_operand(x, rt.flat_values.dtype, "x")
    if not isinstance(y, RaggedTensor):
        y = _as_operand(y, rt.flat_values.dtype, "y")
    return ragged_broadcast.elementwise(lambda values: fn(*values), [x, y])


def _as_operand(value, dtype_hint, name: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    return convert_to_tensor(value, dtype_hint=dtype_hint, name=name)


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
