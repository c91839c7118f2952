"""tf.math.special: Bessel functions J, Y, K, Dawson's integral, Ei, Fresnel integrals and
Spence's function (the I Bessel functions live in special_math_ops).

The kernels call SciPy's `scipy.special` (Cephes), an optional dependency (the `special`
extra) imported on the first run of one of these ops, so `import tensorweave` does not
load it; without it the kernel raises UnimplementedError naming the op and the extra.
Values are computed in float64 and cast back to the input dtype. Where TF's kernels
(Eigen's ports of Cephes) define other values than SciPy at the edges of a domain, the
rows below apply TF's: K0, K0e, K1, K1e are +inf for x < 0, Y0 and Y1 -inf for x < 0,
expint NaN for x < 0 and x = +inf, the Fresnel integrals +-0.5 for |x| > 36974.

The gradients are TF's (math_grad.py), formula for formula.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.math import math_binary, math_unary
from tensorweave.ops.math.math_unary import Row, make_builder

_FRESNEL_LIMIT = 36974.0  # Cephes: above it both integrals are 0.5


def _scipy_special(op_type: str):
    try:
        import scipy.special
    except ImportError:
        raise errors.UnimplementedError(
            None, None, "%s needs SciPy (scipy.special), which is not installed: "
            "pip install 'tensorweave[special]'" % op_type) from None
    return scipy.special


def _compute(op_type: str, fn: Callable, tf_edges: Optional[Callable] = None) -> Callable:
    """The kernel body of `op_type`: fn(scipy.special, x) in float64, then TF's values
    at the edges (tf_edges(x, y)), cast back to the dtype of x."""
    def run(x):
        special = _scipy_special(op_type)
        x64 = np.asarray(x, dtype=np.float64)
        with np.errstate(all="ignore"):
            y = np.asarray(fn(special, x64), dtype=np.float64)
            if tf_edges is not None:
                y = tf_edges(x64, y)
        return np.asarray(y).astype(x.dtype, copy=False)
    return run


def _inf_below_zero(x, y):
    return np.where(x < 0, np.inf, y)


def _minus_inf_below_zero(x, y):
    return np.where(x < 0, -np.inf, y)


def _expint_edges(x, y):
    return np.where((x < 0) | (x == np.inf), np.nan, y)


def _fresnel_edges(x, y):
    return np.where(np.abs(x) > _FRESNEL_LIMIT, np.copysign(0.5, x), y)


# --- gradients (TF's math_grad.py) -------------------------------------------------------------
def _c(value, like):
    return convert_to_tensor(value, dtype=like.dtype)


def _where_zero(x, at_zero, elsewhere):
    """elsewhere, with `at_zero` where x == 0 (TF's where_v2(equal(x, 0.), c, ...))."""
    from tensorweave.ops.indexing import indexing_select
    return indexing_select.where_v2(math_binary.equal(x, _c(0.0, x)), _c(at_zero, x),
                                    elsewhere)


def _grad_j0(op, grad):
    return grad * math_unary.negative(bessel_j1(op.inputs[0]))


def _grad_j1(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return grad * _where_zero(x, 0.5, bessel_j0(x) - math_binary.div(y, x))


def _grad_y0(op, grad):
    return grad * math_unary.negative(bessel_y1(op.inputs[0]))


def _grad_y1(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return grad * (bessel_y0(x) - math_binary.div(y, x))  # NaN at 0, where it is undefined


def _grad_k0(op, grad):
    return grad * math_unary.negative(bessel_k1(op.inputs[0]))


def _grad_k0e(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return grad * (y - bessel_k1e(x))


def _grad_k1(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return grad * (math_unary.negative(bessel_k0(x)) - math_binary.div(y, x))


def _grad_k1e(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return grad * (y * (_c(1.0, x) - math_unary.reciprocal(x)) - bessel_k0e(x))


def _grad_dawsn(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return grad * (_c(1.0, x) - _c(2.0, x) * x * y)


def _grad_expint(op, grad):
    x = op.inputs[0]
    return grad * math_unary.exp(x) / x


def _grad_fresnel_cos(op, grad):
    x = op.inputs[0]
    return grad * math_unary.cos(_c(np.pi / 2.0, x) * math_unary.square(x))


def _grad_fresnel_sin(op, grad):
    x = op.inputs[0]
    return grad * math_unary.sin(_c(np.pi / 2.0, x) * math_unary.square(x))


def _grad_spence(op, grad):
    from tensorweave.ops.array.array_fill_ops import ones_like
    from tensorweave.ops.indexing import indexing_select
    x = op.inputs[0]
    partial = math_unary.log(x) / (_c(1.0, x) - x)
    partial = indexing_select.where(math_binary.equal(x, _c(1.0, x)),
                                    math_unary.negative(ones_like(x)), partial)
    return grad * partial


_TABLE = [
    Row("BesselJ0", _compute("BesselJ0", lambda s, x: s.j0(x)), _dt.FLOATS, _grad_j0),
    Row("BesselJ1", _compute("BesselJ1", lambda s, x: s.j1(x)), _dt.FLOATS, _grad_j1),
    Row("BesselY0", _compute("BesselY0", lambda s, x: s.y0(x), _minus_inf_below_zero),
        _dt.FLOATS, _grad_y0),
    Row("BesselY1", _compute("BesselY1", lambda s, x: s.y1(x), _minus_inf_below_zero),
        _dt.FLOATS, _grad_y1),
    Row("BesselK0", _compute("BesselK0", lambda s, x: s.k0(x), _inf_below_zero),
        _dt.FLOATS, _grad_k0),
    Row("BesselK0e", _compute("BesselK0e", lambda s, x: s.k0e(x), _inf_below_zero),
        _dt.FLOATS, _grad_k0e),
    Row("BesselK1", _compute("BesselK1", lambda s, x: s.k1(x), _inf_below_zero),
        _dt.FLOATS, _grad_k1),
    Row("BesselK1e", _compute("BesselK1e", lambda s, x: s.k1e(x), _inf_below_zero),
        _dt.FLOATS, _grad_k1e),
    Row("Dawsn", _compute("Dawsn", lambda s, x: s.dawsn(x)), _dt.FLOATS, _grad_dawsn),
    Row("Expint", _compute("Expint", lambda s, x: s.expi(x), _expint_edges), _dt.FLOATS,
        _grad_expint),
    Row("FresnelCos", _compute("FresnelCos", lambda s, x: s.fresnel(x)[1], _fresnel_edges),
        _dt.FLOATS, _grad_fresnel_cos),
    Row("FresnelSin", _compute("FresnelSin", lambda s, x: s.fresnel(x)[0], _fresnel_edges),
        _dt.FLOATS, _grad_fresnel_sin),
    Row("Spence", _compute("Spence", lambda s, x: s.spence(x)), _dt.FLOATS, _grad_spence),
]
math_unary.register_rows(_TABLE)

# The op types whose kernels need SciPy.
SCIPY_OP_TYPES = frozenset(row.op_type for row in _TABLE)

_DOC = """Computes {what} element-wise (TF1 `tf.math.special.{name}`).

    Needs SciPy (`pip install 'tensorweave[special]'`) when the op runs.

    Args:
      x: a float Tensor (float16, bfloat16, float32 or float64).
      name: name scope (default "{name}"); the op is named "{op_type}" inside it.

    Returns:
      A Tensor of the dtype and shape of `x`.

    Raises:
      TypeError: `x` is not a float tensor.
    """


def _builder(op_type: str, tf_name: str, what: str) -> Callable:
    """TF's `tf.math.special.<tf_name>(x, name=None)`: the op inside
    name_scope(name, tf_name)."""
    raw = make_builder(op_type, "math.special." + tf_name, what, _TABLE)

    def build(x, name: Optional[str] = None) -> Tensor:
        from tensorweave.framework import graph as _graph
        with _graph.name_scope(name, tf_name, [x]):
            return raw(x)
    build.__name__ = build.__qualname__ = tf_name
    build.__doc__ = _DOC.format(what=what, name=tf_name, op_type=op_type)
    return tf_export("math.special." + tf_name)(build)


bessel_j0 = _builder("BesselJ0", "bessel_j0", "the Bessel function of the first kind of "
                     "order 0, J0(x)")
bessel_j1 = _builder("BesselJ1", "bessel_j1", "the Bessel function of the first kind of "
                     "order 1, J1(x)")
bessel_y0 = _builder("BesselY0", "bessel_y0", "the Bessel function of the second kind of "
                     "order 0, Y0(x) (-inf for x <= 0)")
bessel_y1 = _builder("BesselY1", "bessel_y1", "the Bessel function of the second kind of "
                     "order 1, Y1(x) (-inf for x <= 0)")
bessel_k0 = _builder("BesselK0", "bessel_k0", "the modified Bessel function of the second "
                     "kind of order 0, K0(x) (inf for x <= 0)")
bessel_k0e = _builder("BesselK0e", "bessel_k0e", "exp(x) K0(x), the exponentially scaled "
                      "modified Bessel function of the second kind of order 0")
bessel_k1 = _builder("BesselK1", "bessel_k1", "the modified Bessel function of the second "
                     "kind of order 1, K1(x) (inf for x <= 0)")
bessel_k1e = _builder("BesselK1e", "bessel_k1e", "exp(x) K1(x), the exponentially scaled "
                      "modified Bessel function of the second kind of order 1")
dawsn = _builder("Dawsn", "dawsn", "Dawson's integral exp(-x^2) * integral_0^x exp(t^2) dt")
expint = _builder("Expint", "expint", "the exponential integral Ei(x) = integral_-inf^x "
                  "exp(t) / t dt (NaN for x < 0)")
fresnel_cos = _builder("FresnelCos", "fresnel_cos", "the Fresnel cosine integral "
                       "integral_0^x cos(pi t^2 / 2) dt")
fresnel_sin = _builder("FresnelSin", "fresnel_sin", "the Fresnel sine integral "
                       "integral_0^x sin(pi t^2 / 2) dt")
spence = _builder("Spence", "spence", "Spence's function (the dilogarithm) "
                  "integral_1^x log(t) / (1 - t) dt (NaN for x < 0)")
