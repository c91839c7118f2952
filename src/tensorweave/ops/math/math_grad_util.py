"""Shared gradient helpers for math ops: undoing broadcasting.

A binary elementwise op broadcasts its inputs to a common shape, so the gradient that
arrives has the broadcast shape. `unbroadcast` sums it back to the shape of each input:
statically when both input shapes are fully known (no op at all when they are equal),
otherwise with a BroadcastGradientArgs op that computes the axes to reduce at run time.
"""
from __future__ import annotations

import functools

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, broadcast_shapes

# --- BroadcastGradientArgs ---------------------------------------------------------------
register_op("BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
            attrs={"T": TypeAttr([_dt.int32, _dt.int64], default=_dt.int32)},
            shape=lambda op: [TensorShape([None]), TensorShape([None])])


def _shape_str(s) -> str:
    return "[%s]" % ",".join(str(int(d)) for d in s)


@functools.lru_cache(maxsize=4096)
def _reduction_axes(s0: tuple, s1: tuple) -> Tuple[tuple, tuple]:
    """The axes for two shapes (as tuples), once per pair: inside a loop's gradient the
    same pair comes back every iteration."""
    if s0 == s1:
        return (), ()
    n = max(len(s0), len(s1))
    a = (1,) * (n - len(s0)) + s0
    b = (1,) * (n - len(s1)) + s1
    if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
        raise ValueError("Incompatible shapes: %s vs. %s" % (_shape_str(s0), _shape_str(s1)))
    return (tuple(i for i, x in enumerate(a) if x == 1),
            tuple(i for i, y in enumerate(b) if y == 1))


def _broadcast_gradient_args(s0: np.ndarray, s1: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The axes of the broadcast shape each input was stretched along (TF's BCast rule:
    identical shapes reduce nothing; otherwise every axis where an input has size 1,
    including leading axes it does not have)."""
    s0 = np.asarray(s0).reshape(-1)
    s1 = np.asarray(s1).reshape(-1)
    r0, r1 = _reduction_axes(tuple(s0.tolist()), tuple(s1.tolist()))
    return np.array(r0, dtype=s0.dtype), np.array(r1, dtype=s1.dtype)


@kernel("BroadcastGradientArgs")
def _broadcast_gradient_args_kernel(ctx, s0, s1):
    try:
        return _broadcast_gradient_args(s0, s1)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None


not_differentiable("BroadcastGradientArgs")


def broadcast_gradient_args(s0, s1, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """The reduction axes for the gradients of two broadcast inputs with shapes `s0`, `s1`.

    Args:
      s0: 1-D int32/int64 tensor, the shape of the first input.
      s1: 1-D tensor of the same dtype, the shape of the second input.
      name: op name.

    Returns:
      (r0, r1): 1-D tensors, the axes to sum the output gradient over for each input.
    """
    op = apply_op("BroadcastGradientArgs", [s0, s1], name=name or "BroadcastGradientArgs")
    return op.outputs[0], op.outputs[1]


# --- helpers ----------------------------------------------------------------------------


def _static_reduction_axes(shape: List[int], out: List[Optional[int]]) -> List[int]:
    """Axes of `out` along which an input of static `shape` was broadcast."""
    lead = len(out) - len(shape)
    axes = list(range(lead))
    for i, d in enumerate(shape):
        if d == 1 and out[lead + i] != 1:
            axes.append(lead + i)
    return axes


def _sum_to_static_shape(grad: Tensor, shape: TensorShape, out: TensorShape) -> Tensor:
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import reduction_ops
    dims = shape.as_list()
    axes = _static_reduction_axes(dims, out.as_list())
    if not axes and len(dims) == out.ndims:
        return grad
    summed = reduction_ops.reduce_sum(grad, axes) if axes else grad
    return array_ops.reshape(summed, np.asarray(dims, dtype=np.int32))


def unbroadcast(grad, x: Tensor, y: Tensor) -> Tuple[Optional[Tensor], Optional[Tensor]]:
    """Sums `grad` (the gradient of a broadcasting binary op's output) back to the shapes
    of the op's inputs `x` and `y`.

    Args:
      grad: the gradient of the op's output (None gives (None, None)).
      x, y: the op's two inputs.

    Returns:
      (gx, gy): `grad` reduced and reshaped to `x`'s and `y`'s shapes. With equal, fully
      known input shapes this adds no op and returns `grad` twice.
    """
    if grad is None:
        return None, None
    sx, sy = x.shape, y.shape
    if sx.is_fully_defined() and sy.is_fully_defined():
        if sx.as_list() == sy.as_list():
            return grad, grad
        out = broadcast_shapes(sx, sy)
        return _sum_to_static_shape(grad, sx, out), _sum_to_static_shape(grad, sy, out)
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import reduction_ops
    shape_x = array_ops.shape(x)
    shape_y = array_ops.shape(y)
    rx, ry = broadcast_gradient_args(shape_x, shape_y)
    gx = array_ops.reshape(reduction_ops.reduce_sum(grad, rx), shape_x)
    gy = array_ops.reshape(reduction_ops.reduce_sum(grad, ry), shape_y)
    return gx, gy
