"""The standard normal and Laplace distribution functions, accurate in the tails, as TF1's
distributions compute them (`ops/distributions/special_math.py`).

  ndtr             P[Z <= x] for Z ~ N(0, 1), through erf near 0 and erfc in the tails
                   (so ndtr(-x) keeps its digits where 1 - ndtr(x) would round to 0).
  log_ndtr         log P[Z <= x]: log(ndtr(x)) in the middle, -ndtr(-x) above an upper
                   threshold (log(1 - e) ~ -e) and an asymptotic series below a lower one,
                   where ndtr(x) underflows. The thresholds are TF's, per dtype.
  log_cdf_laplace  log P[L <= x] for a standard Laplace L, in closed forms exact on each
                   side of 0.

All are compositions of existing ops (erf, erfc, log, log1p, where); their gradients
follow. Branches not taken are fed clamped arguments so they stay finite: the gradient of
`where` multiplies the unused branch by zero, and 0 * inf would give NaN.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.distributions.distribution import HALF_LOG_TWO_PI, ops

# (lower, upper) segment bounds of log_ndtr: below `lower` ndtr(x) has too few digits (or
# underflows) for log(ndtr(x)); above `upper` log(ndtr(x)) rounds to 0 but -ndtr(-x) does
# not. TF's values.
_LOG_NDTR_SEGMENTS = {_dt.float32: (-10.0, 5.0), _dt.float64: (-20.0, 8.0)}

# terms of the asymptotic series of log_ndtr below the lower segment (TF's default)
_LOG_NDTR_SERIES_ORDER = 3


def _float_tensor(x, what: str):
    t = ops()
    x = t.convert_to_tensor(x, name="x")
    if x.dtype.base_dtype not in _LOG_NDTR_SEGMENTS:
        raise TypeError("x.dtype=%s is not handled by %s: float32 and float64 are."
                        % (x.dtype, what))
    return x


def _ndtr(x):
    """ndtr of a float Tensor (no name scope)."""
    t = ops()
    half_sqrt_2 = 0.5 * math.sqrt(2.0)
    w = x * half_sqrt_2
    z = t.abs(w)
    # 1 + erf(w) near 0 (where erfc loses nothing either), erfc(|w|) in the lower tail
    # and 2 - erfc(|w|) in the upper one, so the small tail value is never a difference
    # of nearly equal numbers.
    tails = t.where_v2(w > 0.0, 2.0 - t.math.erfc(z), t.math.erfc(z))
    return 0.5 * t.where_v2(z < half_sqrt_2, 1.0 + t.math.erf(w), tails)


def ndtr(x, name: str = "ndtr"):
    """The standard normal CDF, P[Z <= x] = erfc(-x / sqrt(2)) / 2, element-wise.

    Args:
      x: a float32 or float64 Tensor.
      name: name scope.

    Returns:
      A Tensor like `x`.

    Raises:
      TypeError: `x` is not float32 or float64.
    """
    with _graph.name_scope(name, values=[x]):
        return _ndtr(_float_tensor(x, "ndtr"))


def _double_factorial(n: int) -> int:
    """n (n - 2) (n - 4) ... (1 or 2); 1 for n <= 0."""
    return int(np.prod(np.arange(n, 1, -2), dtype=np.float64))


def _log_ndtr_lower(x, series_order: int):
    """log ndtr(x) for x << -1 from the asymptotic expansion
    ndtr(x) ~ exp(-x^2 / 2) / (-x sqrt(2 pi)) (1 + sum_{n=1..N} (-1)^n (2n-1)!! / x^(2n))."""
    t = ops()
    x_2 = t.square(x)
    log_scale = -0.5 * x_2 - t.log(-x) - HALF_LOG_TWO_PI
    series = t.ones_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        term = float(_double_factorial(2 * n - 1)) / x_2n
        series = series - term if n % 2 else series + term
        x_2n = x_2n * x_2
    return log_scale + t.log(series)


def log_ndtr(x, series_order: int = _LOG_NDTR_SERIES_ORDER, name: str = "log_ndtr"):
    """log P[Z <= x] for Z ~ N(0, 1), accurate in both tails (see the module docstring).

    Args:
      x: a float32 or float64 Tensor.
      series_order: terms of the asymptotic series used below the lower segment, 0..30.
      name: name scope.

    Returns:
      A Tensor like `x`.

    Raises:
      TypeError: `x` is not float32 or float64, or `series_order` is not an int.
      ValueError: `series_order` is outside [0, 30].
    """
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if not 0 <= series_order <= 30:
        raise ValueError("series_order must be in [0, 30], got %d." % series_order)
    t = ops()
    with _graph.name_scope(name, values=[x]):
        x = _float_tensor(x, "log_ndtr")
        lower, upper = _LOG_NDTR_SEGMENTS[x.dtype.base_dtype]
        # max / min keep each branch's argument inside its own segment (finite values and
        # gradients) where that branch is not selected.
        middle = t.log(_ndtr(t.maximum(x, lower)))
        low_tail = _log_ndtr_lower(t.minimum(x, lower), series_order)
        # log(1 - e) ~ -e for the tiny e = ndtr(-x)
        return t.where_v2(x > upper, -_ndtr(-x),
                          t.where_v2(x > lower, middle, low_tail))


def log_cdf_laplace(x, name: str = "log_cdf_laplace"):
    """log P[L <= x] for the standard Laplace L (density exp(-|x|) / 2), element-wise:
    log(1/2) + x for x < 0 and log1p(-exp(-x) / 2) otherwise, both exact.

    Args:
      x: a float Tensor.
      name: name scope.

    Returns:
      A Tensor like `x`.
    """
    t = ops()
    with _graph.name_scope(name, values=[x]):
        x = t.convert_to_tensor(x, name="x")
        lower = x - math.log(2.0)
        # exp(-|x|) <= 1 also where this branch is not taken: no overflow for x << 0
        upper = t.log1p(-0.5 * t.exp(-t.abs(x)))
        return t.where_v2(x < 0.0, lower, upper)
