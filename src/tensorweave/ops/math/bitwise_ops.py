"""Bitwise ops on integers (TF1 `tf.bitwise`): BitwiseAnd, BitwiseOr, BitwiseXor,
LeftShift, RightShift (NumPy broadcasting) and Invert. None is differentiable.

Shifts follow TF's kernels where C leaves them undefined: the shift amount is clamped to
[0, bits - 1] of the type (so `x << 9` of an int8 is `x << 7`, and a negative amount
shifts by 0), a signed left shift wraps, a signed right shift is arithmetic."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.ops.math import math_binary, math_unary


def _clamped(x, y):
    bits = np.dtype(x.dtype).itemsize * 8
    return np.clip(y, 0, bits - 1).astype(np.result_type(y), copy=False)


def _left_shift(x, y):
    return np.left_shift(x, _clamped(x, y))


def _right_shift(x, y):
    return np.right_shift(x, _clamped(x, y))


_INTS = _dt.INTEGERS
math_binary.register_rows([
    math_binary.Row("BitwiseAnd", np.bitwise_and, _INTS, None),
    math_binary.Row("BitwiseOr", np.bitwise_or, _INTS, None),
    math_binary.Row("BitwiseXor", np.bitwise_xor, _INTS, None),
    math_binary.Row("LeftShift", _left_shift, _INTS, None),
    math_binary.Row("RightShift", _right_shift, _INTS, None),
])
_INVERT = math_unary.Row("Invert", np.invert, _INTS, None)
math_unary.register_rows([_INVERT])


def _binary(op_type: str, x, y, name: Optional[str]) -> Tensor:
    return apply_op(op_type, [x, y], name=name or op_type).outputs[0]


@tf_export("bitwise.bitwise_and")
def bitwise_and(x, y, name: Optional[str] = None) -> Tensor:
    """x & y element-wise, with broadcasting (integer types)."""
    return _binary("BitwiseAnd", x, y, name)


@tf_export("bitwise.bitwise_or")
def bitwise_or(x, y, name: Optional[str] = None) -> Tensor:
    """x | y element-wise, with broadcasting (integer types)."""
    return _binary("BitwiseOr", x, y, name)


@tf_export("bitwise.bitwise_xor")
def bitwise_xor(x, y, name: Optional[str] = None) -> Tensor:
    """x ^ y element-wise, with broadcasting (integer types)."""
    return _binary("BitwiseXor", x, y, name)


@tf_export("bitwise.left_shift")
def left_shift(x, y, name: Optional[str] = None) -> Tensor:
    """x << y element-wise, the amount clamped to [0, bits - 1] (see the module
    docstring)."""
    return _binary("LeftShift", x, y, name)


@tf_export("bitwise.right_shift")
def right_shift(x, y, name: Optional[str] = None) -> Tensor:
    """x >> y element-wise (arithmetic for signed types), the amount clamped to
    [0, bits - 1]."""
    return _binary("RightShift", x, y, name)


invert = tf_export("bitwise.invert")(math_unary.make_builder(
    "Invert", "invert", "~x, every bit flipped", [_INVERT]))
