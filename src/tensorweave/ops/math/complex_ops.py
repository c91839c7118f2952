"""Building and taking apart complex numbers: Complex, Real, Imag, Angle.

Gradients follow TF's convention for complex inputs (the gradient of a real function f
of z is df/dRe(z) + i df/dIm(z)).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import broadcast_shapes
from tensorweave.ops.math import math_binary, math_unary
from tensorweave.ops.math.math_grad_util import unbroadcast

_REAL = (_dt.float32, _dt.float64)
_COMPLEX = (_dt.complex64, _dt.complex128)
_COMPLEX_OF = {_dt.float32: _dt.complex64, _dt.float64: _dt.complex128}

register_op("Complex", inputs=["real: T", "imag: T"], outputs=["out: Tout"],
            attrs={"T": TypeAttr(_REAL, default=_dt.float32),
                   "Tout": TypeAttr(_COMPLEX, default=_dt.complex64)},
            shape=lambda op: broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape))
for _op_type in ("Real", "Imag", "Angle"):
    register_op(_op_type, inputs=["input: T"], outputs=["output: Tout"],
                attrs={"T": TypeAttr(_COMPLEX, default=_dt.complex64),
                       "Tout": TypeAttr(_REAL, default=_dt.float32)},
                shape=lambda op: op.inputs[0].shape)


@kernel("Complex")
def _complex_kernel(ctx, re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape),
                   dtype=ctx.attrs["Tout"].as_numpy_dtype)
    out.real = re
    out.imag = im
    return out


@kernel("Real")
def _real_kernel(ctx, x):
    return np.real(x).copy()


@kernel("Imag")
def _imag_kernel(ctx, x):
    return np.imag(x).copy()


@kernel("Angle")
def _angle_kernel(ctx, x):
    return np.angle(x)


@gradient("Complex")
def _complex_grad(op, grad):
    re, im = op.inputs
    gx, _ = unbroadcast(real(grad), re, im)
    _, gy = unbroadcast(imag(grad), re, im)
    return [gx, gy]


@gradient("Real")
def _real_grad(op, grad):
    return [complex(grad, convert_to_tensor(0, dtype=grad.dtype))]


@gradient("Imag")
def _imag_grad(op, grad):
    return [complex(convert_to_tensor(0, dtype=grad.dtype), grad)]


@gradient("Angle")
def _angle_grad(op, grad):
    # angle = atan2(im, re): the gradient is grad (-im + i re) / |z|^2 = -grad / (im + i re)
    x = op.inputs[0]
    z = math_unary.reciprocal(complex(imag(x), real(x)))
    zero = convert_to_tensor(0, dtype=grad.dtype)
    return [math_unary.negative(math_binary.multiply(complex(grad, zero), z))]


@tf_export("complex", "dtypes.complex")
def complex(real, imag, name: Optional[str] = None) -> Tensor:  # noqa: A001 - TF's name
    """Builds real + i imag element-wise (TF1 `tf.complex`).

    Args:
      real: a float32 or float64 Tensor.
      imag: a Tensor of the dtype of `real`.
      name: op name (default "Complex").

    Returns:
      A complex64 (float32 inputs) or complex128 (float64) Tensor.

    Raises:
      TypeError: the inputs are not float32/float64 or differ in dtype.
    """
    real = convert_to_tensor(real, name="real")
    imag = convert_to_tensor(imag, name="imag")
    if real.dtype != imag.dtype or real.dtype not in _COMPLEX_OF:
        raise TypeError("The `real` and `imag` components have incorrect types: %s %s. They "
                        "must be consistent, and one of [tf.float32, tf.float64]"
                        % (real.dtype.name, imag.dtype.name))
    return apply_op("Complex", [real, imag], {"Tout": _COMPLEX_OF[real.dtype]},
                    name=name or "Complex").outputs[0]


def _part(op_type: str, x, name, when_real) -> Tensor:
    x = convert_to_tensor(x, name="input")
    if x.dtype.is_complex:
        return apply_op(op_type, [x], {"Tout": x.dtype.real_dtype},
                        name=name or op_type).outputs[0]
    if not (x.dtype.is_floating or x.dtype.is_integer):
        raise TypeError("input must be a numeric tensor, but got tensor with dtype %r"
                        % x.dtype)
    return when_real(x)


@tf_export("real", "math.real")
def real(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The real part of each element (TF1 `tf.math.real`); a real tensor is returned
    unchanged.

    Args:
      input: a Tensor.
      name: op name (default "Real").

    Returns:
      A float32/float64 Tensor for complex64/complex128 input, else `input`.
    """
    return _part("Real", input, name, lambda x: x)


@tf_export("imag", "math.imag")
def imag(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The imaginary part of each element (TF1 `tf.math.imag`); zeros for a real tensor.

    Args:
      input: a Tensor.
      name: op name (default "Imag").

    Returns:
      A float32/float64 Tensor for complex64/complex128 input, else zeros like `input`.
    """
    from tensorweave.framework import graph as _graph
    from tensorweave.ops.array import array_fill_ops

    def when_real(x):
        with _graph.name_scope(name, "Imag", [x]):
            return array_fill_ops.zeros_like(x)
    return _part("Imag", input, name, when_real)


@tf_export("math.angle", "angle")
def angle(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The argument (phase) of each element in (-pi, pi] (TF1 `tf.math.angle`); for real
    input, pi where it is negative and 0 elsewhere.

    Args:
      input: a Tensor.
      name: op name (default "Angle").

    Returns:
      A real Tensor of the shape of `input`.
    """
    from tensorweave.framework import graph as _graph
    from tensorweave.ops.array import array_fill_ops
    from tensorweave.ops.indexing import indexing_select

    def when_real(x):
        with _graph.name_scope(name, "Angle", [x]):
            negative = math_binary.less(x, convert_to_tensor(0, dtype=x.dtype))
            pi = math_binary.multiply(convert_to_tensor(np.pi, dtype=x.dtype),
                                      array_fill_ops.ones_like(x))
            return indexing_select.where(negative, pi, array_fill_ops.zeros_like(x))
    return _part("Angle", input, name, when_real)
