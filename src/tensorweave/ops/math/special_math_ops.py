"""Special functions: erfc, lgamma, digamma, polygamma, Hurwitz zeta, erfinv, ndtri, lbeta.

Computed in float64 with NumPy (no SciPy) and cast back to the input dtype:
  lgamma   Lanczos (g=7, 9 terms) with the reflection formula for x < 0.5; ~1e-15
           relative error away from its zeros at 1 and 2 (~1e-15 absolute there).
  digamma  recurrence up to x >= 10, then the asymptotic series; reflection for x < 0.5.
  zeta     Hurwitz zeta by Euler-Maclaurin summation (shift to q >= 10, 10 Bernoulli
           terms); polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x).
  erfc     1 - erf for |x| < 1.5, else a continued fraction: ~3e-15 relative error,
           in the upper tail too.
  bessel_i0e, bessel_i1e  power series below |x| = 20, asymptotic expansion above:
           ~1e-15 relative error; bessel_i0, bessel_i1 (ops of their own, as in TF) are
           exp(|x|) times them.
  erfinv, ndtri  Giles' approximation, refined by Newton steps on erf (centre) or on
           log(erfc) (tails), so the tails keep relative precision down to 1e-300.
The unary ops are rows of a table registered by math_unary.register_rows. The other
tf.math.special functions (Bessel J, Y, K, dawsn, expint, fresnel, spence) are in
special_functions, on SciPy.
"""
from __future__ import annotations

import builtins
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
from tensorweave.ops.math.math_unary import Row, make_builder

_SQRT_PI = 1.7724538509055159
_HALF_LOG_2PI = 0.91893853320467274
_SQRT2 = 1.4142135623730951


def _in_float64(fn):
    """fn computed in float64, returned in the input's dtype."""
    def run(x):
        return np.asarray(fn(np.asarray(x, dtype=np.float64))).astype(x.dtype, copy=False)
    return run


# --- erfc -----------------------------------------------------------------------------------
def _erfc_cf(ax):
    """log(erfc(ax)) for ax >= 1.5: erfc = exp(-x^2) / ((x + K) sqrt(pi)), K Laplace's
    continued fraction (120 terms: ~3e-15 relative error from 1.5 on)."""
    frac = np.zeros_like(ax)
    for k in builtins.range(120, 0, -1):
        frac = (0.5 * k) / (ax + frac)
    return -ax * ax - np.log((ax + frac) * _SQRT_PI)


def _log_erfc_nonneg(y):
    """log(erfc(y)) for y >= 0, without underflow in the tail."""
    out = np.empty_like(y)
    big = y >= 1.5
    out[big] = _erfc_cf(y[big])
    out[~big] = np.log1p(-math_unary._erf_float64(y[~big]))
    return out


def _erfc(x):
    out = np.empty_like(x)
    big = np.abs(x) >= 1.5
    tail = np.exp(_erfc_cf(np.abs(x[big])))
    out[big] = np.where(x[big] > 0, tail, 2.0 - tail)
    out[~big] = 1.0 - math_unary._erf_float64(x[~big])
    out[np.isnan(x)] = np.nan
    return out


# --- lgamma, digamma ------------------------------------------------------------------------
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_right(x):
    """log Gamma(x) for x >= 0.5 (Lanczos)."""
    z = x - 1.0
    a = np.full_like(z, _LANCZOS[0])
    for i in builtins.range(1, len(_LANCZOS)):
        a = a + _LANCZOS[i] / (z + i)
    t = z + _LANCZOS_G + 0.5
    return _HALF_LOG_2PI + (z + 0.5) * np.log(t) - t + np.log(a)


def _lgamma(x):
    left = x < 0.5
    xr = np.where(left, 1.0 - x, x)
    out = _lgamma_right(xr)
    # reflection: log|Gamma(x)| = log(pi / |sin(pi x)|) - log Gamma(1 - x)
    s = np.abs(np.sin(np.pi * np.where(left, x - np.floor(x), 0.5)))
    out = np.where(left, np.log(np.pi / s) - out, out)
    out = np.where(left & (x == np.floor(x)), np.inf, out)  # poles at 0, -1, -2, ...
    out = np.where(x == np.inf, np.inf, out)
    return out


def _digamma(x):
    left = x < 0.5
    y = np.where(left, 1.0 - x, x)
    acc = np.zeros_like(y)
    for _ in builtins.range(10):  # psi(y) = psi(y + 1) - 1 / y until y >= 10
        small = y < 10.0
        acc = acc - np.where(small, 1.0 / np.where(small, y, 1.0), 0.0)
        y = np.where(small, y + 1.0, y)
    r = 1.0 / (y * y)
    series = r * (1 / 12. - r * (1 / 120. - r * (1 / 252. - r * (1 / 240. - r / 132.))))
    out = acc + np.log(y) - 0.5 / y - series
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    frac = x - np.floor(x)
    out = np.where(left, out - np.pi / np.tan(np.pi * np.where(left, frac, 0.5)), out)
    out = np.where(left & (frac == 0), np.nan, out)  # poles: TF returns NaN
    out = np.where(x == np.inf, np.inf, out)
    return out


# --- Hurwitz zeta, polygamma ----------------------------------------------------------------
# B_2j / (2j)! for j = 1..10
_BERNOULLI_OVER_FACT = (1 / 12., -1 / 720., 1 / 30240., -1 / 1209600., 1 / 47900160.,
                        -691 / 1307674368000., 1 / 74724249600.,
                        -3617 / 10670622842880000., 43867 / 5109094217170944000.,
                        -174611 / 802857662698291200000.)


def _zeta(s, q):
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    s = s.copy()
    q_int = q == np.floor(q)
    s_int = s == np.floor(s)
    # Eigen's (TF's) special points: at q = 0, -1, ... the value is +inf for an even
    # integer s and NaN otherwise; s = inf gives the limit of q^-s; q = inf gives 0
    q_pole = (q <= 0) & q_int
    even = s_int & (np.fmod(s, 2) == 0)
    bad = (s < 1) | ((q <= 0) & ~s_int) | (q_pole & ~even)
    pole = (s == 1) | (q_pole & even)
    limit = np.isinf(s) | np.isposinf(q)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        limit_value = np.where(np.isposinf(q), 0.0, np.where(q == 1, 1.0, q ** -s))
    bad &= ~limit
    a = np.where(bad | pole | limit, 1.0, q)
    s = np.where(bad | pole | limit, 2.0, s)
    total = np.zeros_like(a)
    while True:  # shift: zeta(s, a) = a^-s + zeta(s, a + 1), until a >= 10
        small = a < 10.0
        if not small.any():
            break
        total = total + np.where(small, np.abs(a) ** -s * np.where(
            (a < 0) & (s % 2 == 1), -1.0, 1.0), 0.0)
        a = np.where(small, a + 1.0, a)
    a_pow = a ** -s
    total = total + a * a_pow / (s - 1.0) + 0.5 * a_pow
    rising = s.copy()  # s (s+1) ... (s+2j-2)
    power = a_pow / a  # a^(-s-2j+1)
    for j, coef in enumerate(_BERNOULLI_OVER_FACT, 1):
        total = total + coef * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power / (a * a)
    total = np.where(pole, np.inf, np.where(limit, limit_value, total))
    return np.where(bad, np.nan, total)


def _polygamma(n, x):
    n, x = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(x, np.float64))
    n_ok = (n >= 0) & (n == np.floor(n))
    safe_n = np.where(n_ok, n, 1.0)
    fact = np.round(np.exp(_lgamma(safe_n + 1.0)))  # n!
    sign = np.where(safe_n % 2 == 1, 1.0, -1.0)
    high = sign * fact * _zeta(safe_n + 1.0, x)
    out = np.where(n == 0, _digamma(x), high)
    return np.where(n_ok, out, np.nan)


# --- erfinv, ndtri --------------------------------------------------------------------------
def _giles(w, x):
    """Giles' single-precision erfinv from w = -log((1 - x)(1 + x))."""
    central = w < 5.0
    wc = w - 2.5
    p = np.full_like(w, 2.81022636e-08)
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * wc
    wt = np.sqrt(w) - 3.0
    q = np.full_like(w, -0.000200214257)
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        q = c + q * wt
    return np.where(central, p, q) * x


def _erfcinv_small(z):
    """erfcinv(z) for 0 < z <= 1 (the result y >= 0): Newton on log(erfc(y)) = log(z)."""
    w = -np.log(z * (2.0 - z))
    y = np.where(w <= 36.0, _giles(np.minimum(w, 36.0), 1.0 - z), np.sqrt(-np.log(z)))
    y = np.maximum(y, 0.0)
    log_z = np.log(z)
    for _ in builtins.range(8):
        log_e = _log_erfc_nonneg(y)
        # d/dy log erfc(y) = -2/sqrt(pi) exp(-y^2) / erfc(y)
        slope = -2.0 / _SQRT_PI * np.exp(-y * y - log_e)
        y = np.maximum(y - (log_e - log_z) / slope, 0.0)
    return y


def _erfinv(x):
    ax = np.abs(x)
    out = np.empty_like(x)
    centre = ax <= 0.5
    xc = x[centre]
    y = _giles(-np.log((1.0 - xc) * (1.0 + xc)), xc)
    for _ in builtins.range(3):
        y = y - (math_unary._erf_float64(y) - xc) / (2.0 / _SQRT_PI * np.exp(-y * y))
    out[centre] = y
    tail = ~centre & (ax < 1.0)
    out[tail] = np.sign(x[tail]) * _erfcinv_small(1.0 - ax[tail])
    out[ax == 1.0] = np.sign(x[ax == 1.0]) * np.inf
    out[(ax > 1.0) | np.isnan(x)] = np.nan
    return out


def _ndtri(p):
    # ndtri(p) = -sqrt(2) erfcinv(2p); erfcinv(z) = -erfcinv(2 - z) for z > 1
    z = 2.0 * p
    out = np.empty_like(p)
    lower = (z > 0) & (z <= 1.0)
    out[lower] = -_SQRT2 * _erfcinv_small(z[lower])
    upper = (z > 1.0) & (z < 2.0)
    out[upper] = _SQRT2 * _erfcinv_small(2.0 - z[upper])
    out[p == 0] = -np.inf
    out[p == 1] = np.inf
    out[(p < 0) | (p > 1) | np.isnan(p)] = np.nan
    return out


# --- exponentially scaled modified Bessel functions i0e, i1e --------------------------------
def _bessel_ie(order: int, x):
    """exp(-|x|) I_order(x) for order 0 or 1: the power series below |x| = 20 (positive
    terms), the asymptotic expansion above; ~1e-15 relative error throughout."""
    ax = np.abs(x)
    out = np.empty_like(x)
    small = ax < 20.0
    xs = ax[small]
    quarter_x2 = xs * xs / 4
    term = np.ones_like(xs) if order == 0 else xs / 2
    total = term.copy()
    for k in builtins.range(1, 60):
        term = term * quarter_x2 / (k * (k + order))
        total = total + term
    out[small] = total * np.exp(-xs)
    xb = ax[~small]
    mu = 4.0 * order * order
    term = np.ones_like(xb)
    total = term.copy()
    for k in builtins.range(1, 30):
        term = term * (-(mu - (2 * k - 1) ** 2)) / (8.0 * k * xb)
        total = total + term
    out[~small] = total / np.sqrt(2 * np.pi * xb)
    if order == 1:
        out = np.asarray(np.copysign(out, x))  # NumPy gives a scalar for 0-d x
    out[np.isnan(x)] = np.nan
    return out


# --- gradients ------------------------------------------------------------------------------
def _c(value, like):
    return convert_to_tensor(value, dtype=like.dtype)


def _grad_erfc(op, grad):
    x = op.inputs[0]
    mul = math_binary.multiply
    return math_unary.negative(mul(grad, mul(_c(2.0 / _SQRT_PI, x),
                                             math_unary.exp(math_unary.negative(
                                                 math_unary.square(x))))))


def _grad_lgamma(op, grad):
    return math_binary.multiply(grad, digamma(op.inputs[0]))


def _grad_digamma(op, grad):
    from tensorweave.ops.math import math_ops
    x = op.inputs[0]
    if x.dtype in (_dt.float32, _dt.float64):
        return math_binary.multiply(grad, polygamma(_c(1, x), x))
    # Polygamma is float32/float64 only: trigamma of half-precision inputs in float32
    wide = math_ops.cast(x, _dt.float32)
    trigamma = math_ops.cast(polygamma(_c(1, wide), wide), x.dtype)
    return math_binary.multiply(grad, trigamma)


def _grad_erfinv(op, grad):
    y = op.outputs[0]
    return math_binary.multiply(grad, math_binary.multiply(
        _c(_SQRT_PI / 2, y), math_unary.exp(math_unary.square(y))))


def _grad_ndtri(op, grad):
    y = op.outputs[0]
    half_y2 = math_binary.multiply(_c(0.5, y), math_unary.square(y))
    return math_binary.multiply(grad, math_binary.multiply(
        _c(np.sqrt(2 * np.pi), y), math_unary.exp(half_y2)))


def _grad_bessel_i0e(op, grad):
    # d/dx i0e(x) = i1e(x) - sign(x) i0e(x)
    x, y = op.inputs[0], op.outputs[0]
    dy = math_binary.subtract(bessel_i1e(x), math_binary.multiply(math_unary.sign(x), y))
    return math_binary.multiply(grad, dy)


def _grad_bessel_i1e(op, grad):
    # d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x); 1/2 at x = 0
    from tensorweave.ops.indexing import indexing_select
    x, y = op.inputs[0], op.outputs[0]
    zero = math_binary.equal(x, _c(0, x))
    safe_x = indexing_select.where(zero, math_unary.sign(x) + _c(1, x), x)
    dy = math_binary.subtract(bessel_i0e(x), math_binary.multiply(
        y, math_binary.add(math_unary.sign(x), math_unary.reciprocal(safe_x))))
    half = math_binary.multiply(_c(0.5, x), math_unary.sign(x) + _c(1, x))
    return math_binary.multiply(grad, indexing_select.where(zero, half, dy))


def _grad_bessel_i0(op, grad):
    return math_binary.multiply(grad, bessel_i1(op.inputs[0]))


def _grad_bessel_i1(op, grad):
    # d/dx I1(x) = I0(x) - I1(x) / x; 1 at x = 0 (TF's where_v2 imputes it)
    from tensorweave.ops.indexing import indexing_select
    x, y = op.inputs[0], op.outputs[0]
    dy = math_binary.subtract(bessel_i0(x), math_binary.div(y, x))
    return math_binary.multiply(grad, indexing_select.where_v2(
        math_binary.equal(x, _c(0.0, x)), _c(1.0, x), dy))


def _bessel_i(order: int, x):
    """I_order(x) = exp(|x|) * I_order e(x), as Eigen computes it: inf from |x| ~ 710,
    NaN at +-inf (inf * 0), as in TF."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.exp(np.abs(x)) * _bessel_ie(order, x)


_TABLE = [
    Row("Erfc", _in_float64(_erfc), _dt.FLOATS, _grad_erfc),
    Row("Lgamma", _in_float64(_lgamma), _dt.FLOATS, _grad_lgamma),
    Row("Digamma", _in_float64(_digamma), _dt.FLOATS, _grad_digamma),
    Row("Erfinv", _in_float64(_erfinv), _dt.FLOATS, _grad_erfinv),
    Row("Ndtri", _in_float64(_ndtri), _dt.FLOATS, _grad_ndtri),
    Row("BesselI0e", _in_float64(lambda x: _bessel_ie(0, x)), _dt.FLOATS, _grad_bessel_i0e),
    Row("BesselI1e", _in_float64(lambda x: _bessel_ie(1, x)), _dt.FLOATS, _grad_bessel_i1e),
    Row("BesselI0", _in_float64(lambda x: _bessel_i(0, x)), _dt.FLOATS, _grad_bessel_i0),
    Row("BesselI1", _in_float64(lambda x: _bessel_i(1, x)), _dt.FLOATS, _grad_bessel_i1),
]
math_unary.register_rows(_TABLE)

erfc = tf_export("erfc", "math.erfc")(make_builder(
    "Erfc", "erfc", "the complementary error function 1 - erf(x)", _TABLE))
lgamma = tf_export("lgamma", "math.lgamma")(make_builder(
    "Lgamma", "lgamma", "log(|Gamma(x)|)", _TABLE))
digamma = tf_export("digamma", "math.digamma")(make_builder(
    "Digamma", "digamma", "the derivative of lgamma (Psi)", _TABLE))
_bessel_i0e_op = make_builder("BesselI0e", "math.bessel_i0e", "exp(-|x|) I0(x)", _TABLE)
_bessel_i1e_op = make_builder("BesselI1e", "math.bessel_i1e", "exp(-|x|) I1(x)", _TABLE)
_bessel_i0_op = make_builder("BesselI0", "math.bessel_i0", "I0(x)", _TABLE)
_bessel_i1_op = make_builder("BesselI1", "math.bessel_i1", "I1(x)", _TABLE)


def _bessel_scoped(op, x, name, default_name) -> Tensor:
    """op(x) inside name_scope(name, default_name), as TF's builders name it."""
    from tensorweave.framework import graph as _graph
    with _graph.name_scope(name, default_name, [x]):
        return op(x)


@tf_export("math.bessel_i0e", "math.special.bessel_i0e")
def bessel_i0e(x, name: Optional[str] = None) -> Tensor:
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0
    (TF1 `tf.math.bessel_i0e`, the op BesselI0e); applied to the values of a
    SparseTensor.

    Args:
      x: a float Tensor or SparseTensor.
      name: name scope (default "bessel_i0e").

    Returns:
      A Tensor (SparseTensor) of the dtype and shape of `x`.
    """
    return _bessel_scoped(_bessel_i0e_op, x, name, "bessel_i0e")


@tf_export("math.bessel_i1e", "math.special.bessel_i1e")
def bessel_i1e(x, name: Optional[str] = None) -> Tensor:
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1
    (TF1 `tf.math.bessel_i1e`, the op BesselI1e); applied to the values of a
    SparseTensor.

    Args:
      x: a float Tensor or SparseTensor.
      name: name scope (default "bessel_i1e").

    Returns:
      A Tensor (SparseTensor) of the dtype and shape of `x`.
    """
    return _bessel_scoped(_bessel_i1e_op, x, name, "bessel_i1e")


@tf_export("math.bessel_i0", "math.special.bessel_i0")
def bessel_i0(x, name: Optional[str] = None) -> Tensor:
    """The modified Bessel function of order 0, exp(|x|) * bessel_i0e(x)
    (TF1 `tf.math.bessel_i0`, the op BesselI0); overflows to inf beyond |x| ~ 710 in
    float64.

    Args:
      x: a float Tensor.
      name: name scope (default "bessel_i0").

    Returns:
      A Tensor of the dtype and shape of `x`.
    """
    return _bessel_scoped(_bessel_i0_op, x, name, "bessel_i0")


@tf_export("math.bessel_i1", "math.special.bessel_i1")
def bessel_i1(x, name: Optional[str] = None) -> Tensor:
    """The modified Bessel function of order 1, exp(|x|) * bessel_i1e(x)
    (TF1 `tf.math.bessel_i1`, the op BesselI1).

    Args:
      x: a float Tensor.
      name: name scope (default "bessel_i1").

    Returns:
      A Tensor of the dtype and shape of `x`.
    """
    return _bessel_scoped(_bessel_i1_op, x, name, "bessel_i1")


_erfinv_op = make_builder("Erfinv", "math.erfinv", "the inverse of erf", _TABLE)
_ndtri_op = make_builder("Ndtri", "math.ndtri", "the inverse of the standard normal CDF",
                         _TABLE)


@tf_export("math.erfinv")
def erfinv(x, name: Optional[str] = None) -> Tensor:
    """Computes the inverse error function element-wise (TF1 `tf.math.erfinv`).

    Args:
      x: a float Tensor; values outside [-1, 1] give NaN, +-1 give +-inf.
      name: name scope (default "erfinv").

    Returns:
      A Tensor of the dtype and shape of `x`.

    Raises:
      TypeError: `x` is not a float tensor.
    """
    from tensorweave.framework import graph as _graph
    with _graph.name_scope(name, "erfinv", [x]):
        return _erfinv_op(x)


@tf_export("math.ndtri")
def ndtri(x, name: Optional[str] = None) -> Tensor:
    """Computes the inverse of the standard normal CDF element-wise (TF1 `tf.math.ndtri`).

    Args:
      x: a float Tensor of probabilities; values outside [0, 1] give NaN, 0 and 1 give
        -inf and inf.
      name: name scope (default "ndtri").

    Returns:
      A Tensor of the dtype and shape of `x`.

    Raises:
      TypeError: `x` is not a float tensor.
    """
    from tensorweave.framework import graph as _graph
    with _graph.name_scope(name, "ndtri", [x]):
        return _ndtri_op(x)


@tf_export("math.erfcinv")
def erfcinv(x, name: Optional[str] = None) -> Tensor:
    """Computes the inverse of the complementary error function, -ndtri(x / 2) / sqrt(2)
    (TF1 `tf.math.erfcinv`).

    Args:
      x: a float Tensor in [0, 2].
      name: name scope (default "erfcinv").

    Returns:
      A Tensor of the dtype and shape of `x`.
    """
    from tensorweave.framework import graph as _graph
    with _graph.name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x, name="x")
        return math_binary.multiply(math_unary.negative(ndtri(math_binary.multiply(
            _c(0.5, x), x))), _c(np.sqrt(0.5), x))


@tf_export("math.log_sigmoid", "log_sigmoid")
def log_sigmoid(x, name: Optional[str] = None) -> Tensor:
    """Computes log(sigmoid(x)) = -softplus(-x) element-wise, stably
    (TF1 `tf.math.log_sigmoid`).

    Args:
      x: a float Tensor.
      name: name scope (default "LogSigmoid").

    Returns:
      A Tensor of the dtype and shape of `x`.

    Raises:
      TypeError: `x` is not a float tensor.
    """
    from tensorweave.framework import graph as _graph
    from tensorweave.ops.nn import nn_ops
    with _graph.name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return math_unary.negative(nn_ops.softplus(math_unary.negative(x)), name=scope)


# --- Zeta(x, q), Polygamma(a, x): binary, float32/float64 -----------------------------------
def _broadcast_shape(op):
    return broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)


for _op_type, _names in (("Zeta", ("x", "q")), ("Polygamma", ("a", "x"))):
    register_op(_op_type, inputs=["%s: T" % _names[0], "%s: T" % _names[1]],
                outputs=["z: T"], attrs={"T": TypeAttr((_dt.float32, _dt.float64))},
                shape=_broadcast_shape)


@kernel("Zeta")
def _zeta_kernel(ctx, x, q):
    return _zeta(x, q).astype(x.dtype, copy=False)


@kernel("Polygamma")
def _polygamma_kernel(ctx, a, x):
    return _polygamma(a, x).astype(x.dtype, copy=False)


@gradient("Zeta")
def _zeta_grad(op, grad):
    # d/dq zeta(x, q) = -x zeta(x + 1, q); TF1 has no gradient for x
    x, q = op.inputs
    dq = math_unary.negative(math_binary.multiply(x, zeta(math_binary.add(x, _c(1, x)), q)))
    _, gq = unbroadcast(math_binary.multiply(grad, dq), x, q)
    return [None, gq]


@gradient("Polygamma")
def _polygamma_grad(op, grad):
    # d/dx polygamma(a, x) = polygamma(a + 1, x); TF1 has no gradient for a
    a, x = op.inputs
    dx = polygamma(math_binary.add(a, _c(1, a)), x)
    _, gx = unbroadcast(math_binary.multiply(grad, dx), a, x)
    return [None, gx]


@tf_export("zeta", "math.zeta")
def zeta(x, q, name: Optional[str] = None) -> Tensor:
    """Computes the Hurwitz zeta function sum_n (q + n)^-x element-wise (TF1 `tf.zeta`).

    Args:
      x: a float32 or float64 Tensor.
      q: a Tensor of the dtype of `x`.
      name: op name (default "Zeta").

    Returns:
      A Tensor of the dtype of `x` and the broadcast shape: NaN where x < 1, inf at x = 1.

    Raises:
      TypeError: unsupported or mismatched dtypes.
      ValueError: the shapes do not broadcast.
    """
    return apply_op("Zeta", [x, q], name=name or "Zeta").outputs[0]


@tf_export("polygamma", "math.polygamma")
def polygamma(a, x, name: Optional[str] = None) -> Tensor:
    """Computes the polygamma function psi^(a)(x) element-wise (TF1 `tf.polygamma`).

    Args:
      a: a float32 or float64 Tensor of non-negative integers (other values give NaN).
      x: a Tensor of the dtype of `a`.
      name: op name (default "Polygamma").

    Returns:
      A Tensor of the dtype of `a` and the broadcast shape.

    Raises:
      TypeError: unsupported or mismatched dtypes.
      ValueError: the shapes do not broadcast.
    """
    return apply_op("Polygamma", [a, x], name=name or "Polygamma").outputs[0]


@tf_export("lbeta", "math.lbeta")
def lbeta(x, name: Optional[str] = None) -> Tensor:
    """Computes log(|Beta(x)|) over the last dimension of `x` (TF1 `tf.lbeta`).

    Beta(x) = prod_i Gamma(x_i) / Gamma(sum_i x_i), so the result is
    sum_i lgamma(x_i) - lgamma(sum_i x_i).

    Args:
      x: a float Tensor of rank >= 1.
      name: name scope (default "lbeta").

    Returns:
      A Tensor of the dtype of `x`, its shape without the last dimension.

    Raises:
      TypeError: `x` is not a float tensor.
    """
    from tensorweave.framework import graph as _graph
    from tensorweave.ops.math import reduction_ops
    with _graph.name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = reduction_ops.reduce_sum(lgamma(x), axis=[-1])
        sum_x = reduction_ops.reduce_sum(x, axis=[-1])
        return math_binary.subtract(log_prod_gamma_x, lgamma(sum_x))
