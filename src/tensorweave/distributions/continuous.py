"""Scalar continuous distributions of TF1's `tf.distributions`: Normal, Laplace, Uniform,
Gamma, Exponential, Beta and StudentT, with the KL divergences TF1 registers between
them (Normal, Gamma and Beta with their own kind).

Formulas are TF1's; statistics that are undefined for some parameters (the mode of a
Gamma with concentration <= 1, the variance of a StudentT with df <= 1, ...) are NaN, or a
run-time assertion with `allow_nan_stats=False`. Sampling is reparameterized (TF's
FULLY_REPARAMETERIZED): Normal, Laplace, Uniform and StudentT's location-scale part by
construction, Gamma and Beta through RandomGamma's implicit gradient.
"""
from __future__ import annotations

import math
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import broadcast_shapes
from tensorweave.distributions.distribution import FULLY_REPARAMETERIZED, \
    HALF_LOG_TWO_PI, Distribution, RegisterKL, nan_where, ops


class _Scalar(Distribution):
    """A distribution with a scalar event whose batch shape is its parameters' shapes
    broadcast (`_params` names them)."""

    _params = ()

    def _init(self, name: str, values: dict, dtype=None) -> None:
        t = ops()
        with _graph.name_scope(name) as scope:
            tensors = {}
            for k in self._params:
                v = values[k]
                tensors[k] = t.identity(t.convert_to_tensor(
                    v, dtype=dtype or _first_dtype(values, self._params)), name=k)
            for k, v in tensors.items():
                setattr(self, "_" + k, v)
        Distribution.__init__(self, tensors[self._params[0]].dtype, FULLY_REPARAMETERIZED,
                              values.get("validate_args", False),
                              values.get("allow_nan_stats", True), parameters=values,
                              graph_parents=list(tensors.values()), name=scope)

    def _batch_shape(self):
        shape = _graph_shape(getattr(self, "_" + self._params[0]))
        for k in self._params[1:]:
            shape = broadcast_shapes(shape, _graph_shape(getattr(self, "_" + k)))
        return shape

    def _batch_shape_tensor(self):
        t = ops()
        shape = t.shape(getattr(self, "_" + self._params[0]))
        for k in self._params[1:]:
            shape = t.broadcast_dynamic_shape(shape, t.shape(getattr(self, "_" + k)))
        return shape

    def _ones(self):
        """Ones of the batch shape (statistics broadcast to it)."""
        t = ops()
        return t.ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _draw_shape(self, n):
        return ops().concat([[n], self.batch_shape_tensor()], 0)


def _graph_shape(x):
    return x.get_shape()


def _first_dtype(values: dict, params) -> Optional[_dt.DType]:
    """The dtype of the first parameter that is a tensor (so Python numbers follow it)."""
    for k in params:
        d = getattr(values[k], "dtype", None)
        if isinstance(d, _dt.DType):
            return d
    return None


class _LocationScale(_Scalar):
    """A distribution of `loc` and `scale`, symmetric about `loc`."""

    _params = ("loc", "scale")

    @property
    def loc(self):
        return self._loc

    @property
    def scale(self):
        return self._scale

    def _mean(self):
        return self._loc * self._ones()

    def _mode(self):
        return self._mean()


@tf_export("distributions.Normal")
class Normal(_LocationScale):
    """The normal distribution N(loc, scale^2)."""

    def __init__(self, loc, scale, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Normal"):
        self._init(name, dict(loc=loc, scale=scale, validate_args=validate_args,
                              allow_nan_stats=allow_nan_stats, name=name))

    def _sample_n(self, n, seed):
        t = ops()
        eps = t.random_normal(self._draw_shape(n), dtype=self.dtype, seed=seed)
        return eps * self._scale + self._loc

    def _z(self, x):
        return (x - self._loc) / self._scale

    def _log_prob(self, x):
        t = ops()
        return -0.5 * t.square(self._z(x)) - t.log(self._scale) - HALF_LOG_TWO_PI

    def _cdf(self, x):
        t = ops()
        return 0.5 * t.math.erfc(-self._z(x) / math.sqrt(2.0))

    def _quantile(self, p):
        return self._loc + self._scale * ops().math.ndtri(p)

    def _entropy(self):
        t = ops()
        return (0.5 + HALF_LOG_TWO_PI + t.log(self._scale)) * self._ones()

    def _stddev(self):
        return self._scale * self._ones()


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a: Normal, b: Normal, name=None):
    t = ops()
    with _graph.name_scope(name, "kl_normal_normal"):
        ratio = t.square(a.scale) / t.square(b.scale)
        diff = t.square(a.loc - b.loc) / (2.0 * t.square(b.scale))
        return diff + 0.5 * (ratio - 1.0 - t.log(ratio))


@tf_export("distributions.Laplace")
class Laplace(_LocationScale):
    """The Laplace distribution: density exp(-|x - loc| / scale) / (2 scale)."""

    def __init__(self, loc, scale, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Laplace"):
        self._init(name, dict(loc=loc, scale=scale, validate_args=validate_args,
                              allow_nan_stats=allow_nan_stats, name=name))

    def _sample_n(self, n, seed):
        t = ops()
        import numpy as np
        np_dtype = self.dtype.as_numpy_dtype
        # (-1, 1): log1p(-|u|) stays finite
        u = t.random_uniform(self._draw_shape(n),
                             minval=float(np.nextafter(np_dtype(-1.0), np_dtype(1.0))),
                             maxval=1.0, dtype=self.dtype, seed=seed)
        return self._loc - self._scale * t.sign(u) * t.log1p(-t.abs(u))

    def _log_prob(self, x):
        t = ops()
        return -t.abs(x - self._loc) / self._scale - t.log(2.0 * self._scale)

    def _cdf(self, x):
        t = ops()
        z = (x - self._loc) / self._scale
        return 0.5 - 0.5 * t.sign(z) * t.math.expm1(-t.abs(z))

    def _entropy(self):
        t = ops()
        return (1.0 + t.log(2.0 * self._scale)) * self._ones()

    def _stddev(self):
        return math.sqrt(2.0) * self._scale * self._ones()


def _tiny(dtype) -> float:
    import numpy as np
    return float(np.finfo(dtype.as_numpy_dtype).tiny)


@tf_export("distributions.Uniform")
class Uniform(_Scalar):
    """The uniform distribution on [low, high)."""

    _params = ("low", "high")

    def __init__(self, low=0.0, high=1.0, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Uniform"):
        self._init(name, dict(low=low, high=high, validate_args=validate_args,
                              allow_nan_stats=allow_nan_stats, name=name))

    @property
    def low(self):
        return self._low

    @property
    def high(self):
        return self._high

    def range(self, name: str = "range"):
        """high - low."""
        with self._name_scope(name):
            return self._high - self._low

    def _sample_n(self, n, seed):
        t = ops()
        u = t.random_uniform(self._draw_shape(n), dtype=self.dtype, seed=seed)
        return self._low + (self._high - self._low) * u

    def _prob(self, x):
        t = ops()
        inside = t.logical_and(x >= self._low, x < self._high)
        width = (self._high - self._low) * t.ones_like(x)
        return t.where(inside, 1.0 / width, t.zeros_like(width))

    def _cdf(self, x):
        t = ops()
        return t.clip_by_value((x - self._low) / (self._high - self._low), 0.0, 1.0)

    def _entropy(self):
        return ops().log(self._high - self._low) * self._ones()

    def _mean(self):
        return (self._low + self._high) / 2.0 * self._ones()

    def _variance(self):
        return ops().square(self._high - self._low) / 12.0 * self._ones()


@tf_export("distributions.Gamma")
class Gamma(_Scalar):
    """The Gamma distribution with `concentration` (shape) and `rate` (inverse scale)."""

    _params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Gamma"):
        self._init(name, dict(concentration=concentration, rate=rate,
                              validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                              name=name))

    @property
    def concentration(self):
        return self._concentration

    @property
    def rate(self):
        return self._rate

    def _sample_n(self, n, seed):
        return ops().random_gamma([n], alpha=self._concentration * self._ones(),
                                  beta=self._rate, dtype=self.dtype, seed=seed)

    def _log_prob(self, x):
        t = ops()
        a, b = self._concentration, self._rate
        return t.math.xlogy(a - 1.0, x) - b * x - t.lgamma(a) + a * t.log(b)

    def _cdf(self, x):
        return ops().math.igamma(self._concentration, self._rate * x)

    def _entropy(self):
        t = ops()
        a, b = self._concentration, self._rate
        return a - t.log(b) + t.lgamma(a) + (1.0 - a) * t.digamma(a)

    def _mean(self):
        return self._concentration / self._rate * self._ones()

    def _variance(self):
        return self._concentration / ops().square(self._rate) * self._ones()

    def _mode(self):
        mode = (self._concentration - 1.0) / self._rate * self._ones()
        return nan_where(self._concentration * self._ones() <= 1.0, mode,
                         self.allow_nan_stats, "The mode of a Gamma with concentration <= 1")


@tf_export("distributions.Exponential")
class Exponential(Gamma):
    """The exponential distribution: Gamma(1, rate)."""

    def __init__(self, rate, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Exponential"):
        t = ops()
        with _graph.name_scope(name) as scope:
            rate = t.identity(t.convert_to_tensor(rate), name="rate")
        Gamma.__init__(self, t.ones_like(rate), rate, validate_args, allow_nan_stats,
                       name=scope)
        self._parameters = dict(rate=rate, validate_args=validate_args,
                                allow_nan_stats=allow_nan_stats, name=name)

    def _sample_n(self, n, seed):
        t = ops()
        u = t.random_uniform(self._draw_shape(n), minval=_tiny(self.dtype), maxval=1.0,
                             dtype=self.dtype, seed=seed)
        return -t.log(u) / self._rate


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(a: Gamma, b: Gamma, name=None):
    t = ops()
    with _graph.name_scope(name, "kl_gamma_gamma"):
        a1, b1, a2, b2 = a.concentration, a.rate, b.concentration, b.rate
        return ((a1 - a2) * t.digamma(a1) + t.lgamma(a2) - t.lgamma(a1)
                + a2 * (t.log(b1) - t.log(b2)) + a1 * (b2 / b1 - 1.0))


@tf_export("distributions.Beta")
class Beta(_Scalar):
    """The Beta distribution: density x^(c1-1) (1-x)^(c0-1) / B(c1, c0) on [0, 1]."""

    _params = ("concentration1", "concentration0")

    def __init__(self, concentration1=None, concentration0=None, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Beta"):
        self._init(name, dict(concentration1=concentration1, concentration0=concentration0,
                              validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                              name=name))

    @property
    def concentration1(self):
        return self._concentration1

    @property
    def concentration0(self):
        return self._concentration0

    @property
    def total_concentration(self):
        return self._concentration1 + self._concentration0

    def _sample_n(self, n, seed):
        t = ops()
        ones = self._ones()
        g1 = t.random_gamma([n], alpha=self._concentration1 * ones, dtype=self.dtype,
                            seed=seed)
        g0 = t.random_gamma([n], alpha=self._concentration0 * ones, dtype=self.dtype,
                            seed=None if seed is None else seed + 1)
        return g1 / (g1 + g0)

    def _lbeta(self):
        t = ops()
        c1, c0 = self._concentration1, self._concentration0
        return t.lgamma(c1) + t.lgamma(c0) - t.lgamma(c1 + c0)

    def _log_prob(self, x):
        t = ops()
        c1, c0 = self._concentration1, self._concentration0
        return t.math.xlogy(c1 - 1.0, x) + t.math.xlog1py(c0 - 1.0, -x) - self._lbeta()

    def _cdf(self, x):
        t = ops()
        ones = self._ones() * t.ones_like(x)
        return t.math.betainc(self._concentration1 * ones, self._concentration0 * ones,
                              x * ones)

    def _entropy(self):
        t = ops()
        c1, c0 = self._concentration1, self._concentration0
        total = c1 + c0
        return (self._lbeta() - (c1 - 1.0) * t.digamma(c1) - (c0 - 1.0) * t.digamma(c0)
                + (total - 2.0) * t.digamma(total))

    def _mean(self):
        return self._concentration1 / self.total_concentration * self._ones()

    def _variance(self):
        t = ops()
        total = self.total_concentration
        return self._concentration1 * self._concentration0 / (
            t.square(total) * (total + 1.0)) * self._ones()

    def _mode(self):
        t = ops()
        mode = (self._concentration1 - 1.0) / (self.total_concentration - 2.0) * self._ones()
        undefined = t.logical_or(self._concentration1 * self._ones() <= 1.0,
                                 self._concentration0 * self._ones() <= 1.0)
        return nan_where(undefined, mode, self.allow_nan_stats,
                         "The mode of a Beta with a concentration <= 1")


@RegisterKL(Beta, Beta)
def _kl_beta_beta(a: Beta, b: Beta, name=None):
    t = ops()
    with _graph.name_scope(name, "kl_beta_beta"):
        def d(c):
            return t.digamma(c)
        a1, a0, b1, b0 = a.concentration1, a.concentration0, b.concentration1, \
            b.concentration0
        ta = a1 + a0
        return (b._lbeta() - a._lbeta() + (a1 - b1) * d(a1) + (a0 - b0) * d(a0)
                + (b1 - a1 + b0 - a0) * d(ta))


@tf_export("distributions.StudentT")
class StudentT(_LocationScale):
    """Student's t distribution with `df` degrees of freedom, location and scale."""

    _params = ("df", "loc", "scale")

    def __init__(self, df, loc, scale, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "StudentT"):
        self._init(name, dict(df=df, loc=loc, scale=scale, validate_args=validate_args,
                              allow_nan_stats=allow_nan_stats, name=name))

    @property
    def df(self):
        return self._df

    def _sample_n(self, n, seed):
        t = ops()
        shape = self._draw_shape(n)
        normal = t.random_normal(shape, dtype=self.dtype, seed=seed)
        df = self._df * self._ones()
        gamma = t.random_gamma([n], alpha=0.5 * df, beta=0.5, dtype=self.dtype,
                               seed=None if seed is None else seed + 1)
        return self._loc + self._scale * normal * t.rsqrt(gamma / df)

    def _log_prob(self, x):
        t = ops()
        df = self._df
        y = (x - self._loc) / self._scale
        return (t.lgamma(0.5 * (df + 1.0)) - t.lgamma(0.5 * df)
                - 0.5 * t.log(df) - 0.5 * math.log(math.pi) - t.log(t.abs(self._scale))
                - 0.5 * (df + 1.0) * t.log1p(t.square(y) / df))

    def _cdf(self, x):
        t = ops()
        df = self._df * self._ones() * t.ones_like(x)
        y = (x - self._loc) / self._scale
        tail = 0.5 * t.math.betainc(0.5 * df, 0.5 * t.ones_like(df), df / (t.square(y) + df))
        return t.where(y < 0.0, tail, 1.0 - tail)

    def _entropy(self):
        t = ops()
        df = self._df * self._ones()
        half = 0.5 * (df + 1.0)
        lbeta = t.lgamma(0.5 * df) + math.lgamma(0.5) - t.lgamma(half)
        return (half * (t.digamma(half) - t.digamma(0.5 * df)) + 0.5 * t.log(df) + lbeta
                + t.log(t.abs(self._scale)))

    def _mean(self):
        mean = self._loc * self._ones()
        return nan_where(self._df * self._ones() <= 1.0, mean, self.allow_nan_stats,
                         "The mean of a StudentT with df <= 1")

    def _variance(self):
        t = ops()
        df = self._df * self._ones()
        var = t.square(self._scale) * df / (df - 2.0)
        var = t.where(df > 2.0, var, t.fill(t.shape(var), var.dtype.as_numpy_dtype(
            float("inf"))))
        return nan_where(df <= 1.0, var, self.allow_nan_stats,
                         "The variance of a StudentT with df <= 1")

    def _mode(self):
        return ops().identity(self._loc)  # TF's: the location, not broadcast
