"""Scalar continuous distributions of TF1's `tf.distributions`: Normal, Laplace, Uniform,
Gamma, Exponential, Beta and StudentT, with the KL divergences TF1 registers between
them (Normal, Gamma and Beta with their own kind).

Formulas are TF1's; statistics that are undefined for some parameters (the mode of a
Gamma with concentration <= 1, the variance of a StudentT with df <= 1, ...) are NaN, or a
run-time assertion with `allow_nan_stats=False`. Sampling is reparameterized (TF's
FULLY_REPARAMETERIZED): Normal, Laplace, Uniform and StudentT's location-scale part by
construction, Gamma and Beta through RandomGamma's implicit gradient.

Parameters are converted each on its own and must share one floating dtype (ValueError
otherwise, as TF's assert_same_float_dtype). With `validate_args=True` they sit behind
TF's assertions (positive scales, rates, concentrations and df; low < high), and so do
the values given to the methods where TF checks the support (Gamma's x > 0, Beta's
0 < x < 1). Normal's and Laplace's log cdf and survival functions are computed without
going through 1 - cdf, so they keep their digits in the tails (special_math.py).
"""
from __future__ import annotations

import math

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import broadcast_shapes
from tensorweave.distributions import special_math
from tensorweave.distributions.distribution import FULLY_REPARAMETERIZED, \
    HALF_LOG_TWO_PI, Distribution, RegisterKL, nan_where, ops
from tensorweave.distributions.util import with_dependencies


class _Scalar(Distribution):
    """A distribution with a scalar event whose batch shape is its parameters' shapes
    broadcast (`_params` names them)."""

    _params = ()

    def _init(self, name: str, values: dict) -> None:
        """Makes the parameter tensors `self._<param>` in the scope `name`, behind the
        `_param_assertions` with `validate_args`, and initializes the Distribution.

        Raises:
          ValueError: the parameters' dtypes differ or are not floating.
          InvalidArgumentError: `validate_args` and constant parameters that fail a check.
        """
        t = ops()
        validate_args = values.get("validate_args", False)
        with _graph.name_scope(name) as scope:
            raw = {k: t.convert_to_tensor(values[k]) for k in self._params}
            checks = self._param_assertions(raw) if validate_args else {}
            tensors = {}
            for k in self._params:
                with t.control_dependencies(checks.get(k, [])):
                    tensors[k] = t.identity(raw[k], name=k)
                setattr(self, "_" + k, tensors[k])
            dtype = t.debugging.assert_same_float_dtype(list(tensors.values()))
        Distribution.__init__(self, dtype, FULLY_REPARAMETERIZED, validate_args,
                              values.get("allow_nan_stats", True), parameters=values,
                              graph_parents=list(tensors.values()), name=scope)

    def _param_assertions(self, params: dict) -> dict:
        """The checks of `validate_args` (assertion ops on the converted `params`), by the
        name of the parameter they guard."""
        return {}

    @classmethod
    def _param_shapes(cls, sample_shape) -> dict:
        # every parameter has the samples' shape
        shape = ops().convert_to_tensor(sample_shape, dtype=_dt.int32)
        return dict.fromkeys(cls._params, shape)

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


def _all_guarded_by(params: dict, assertions: list) -> dict:
    """Every parameter behind the same `assertions` (TF guards all of a distribution's
    parameters with its checks)."""
    return dict.fromkeys(params, assertions)


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

    def _param_assertions(self, params):
        return _all_guarded_by(params, [ops().assert_positive(params["scale"])])

    def _sample_n(self, n, seed):
        t = ops()
        eps = t.random_normal(self._draw_shape(n), dtype=self.dtype, seed=seed)
        return eps * self._scale + self._loc

    def _z(self, x):
        """(x - loc) / scale, in its own scope (so the method's last op keeps the plain
        name, "log_prob/sub" as in TF)."""
        with _graph.name_scope("standardize"):
            return (x - self._loc) / self._scale

    def _log_prob(self, x):
        t = ops()
        log_normalization = HALF_LOG_TWO_PI + t.log(self._scale)
        return -0.5 * t.square(self._z(x)) - log_normalization

    def _cdf(self, x):
        return special_math.ndtr(self._z(x))

    def _log_cdf(self, x):
        return special_math.log_ndtr(self._z(x))

    def _survival_function(self, x):
        # by symmetry; 1 - cdf would round to 0 in the upper tail
        return special_math.ndtr(-self._z(x))

    def _log_survival_function(self, x):
        return special_math.log_ndtr(-self._z(x))

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

    def _param_assertions(self, params):
        return _all_guarded_by(params, [ops().assert_positive(params["scale"])])

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

    def _log_cdf(self, x):
        return special_math.log_cdf_laplace((x - self._loc) / self._scale)

    def _log_survival_function(self, x):
        # the distribution is symmetric about loc
        return special_math.log_cdf_laplace((self._loc - x) / self._scale)

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

    def _param_assertions(self, params):
        return _all_guarded_by(params, [ops().assert_less(
            params["low"], params["high"], message="uniform not defined when low >= high.")])

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
        x = x * t.ones(self.batch_shape_tensor(), dtype=x.dtype)
        outside = t.logical_or(x < self._low, x >= self._high)
        density = t.where_v2(outside, t.zeros_like(x), t.ones_like(x) / self.range())
        # NaN stays NaN (no comparison holds for it, which would make it "inside")
        return t.where_v2(t.is_nan(x), x, density)

    def _cdf(self, x):
        t = ops()
        x = x * t.ones(self.batch_shape_tensor(), dtype=x.dtype)
        below = t.where_v2(x < self._low, t.zeros_like(x), (x - self._low) / self.range())
        return t.where_v2(x >= self._high, t.ones_like(x), below)

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

    def _param_assertions(self, params):
        t = ops()
        return _all_guarded_by(params, [t.assert_positive(params["concentration"]),
                                        t.assert_positive(params["rate"])])

    def _checked_sample(self, x):
        """`x` of the distribution's dtype (ValueError otherwise, as TF), behind x > 0
        with `validate_args`."""
        t = ops()
        t.debugging.assert_same_float_dtype([x], dtype=self.dtype)
        if not self.validate_args:
            return x
        return with_dependencies([t.assert_positive(x)], x)

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
        x = self._checked_sample(x)
        a, b = self._concentration, self._rate
        return t.math.xlogy(a - 1.0, x) - b * x - t.lgamma(a) + a * t.log(b)

    def _cdf(self, x):
        x = self._checked_sample(x)
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
            rate = t.convert_to_tensor(rate, name="rate")
        # concentration 1 of the rate's dtype (an integer rate fails Gamma's dtype check)
        Gamma.__init__(self, t.ones([], dtype=rate.dtype), rate, validate_args,
                       allow_nan_stats, name=scope)
        self._parameters = dict(rate=rate, validate_args=validate_args,
                                allow_nan_stats=allow_nan_stats, name=name)

    @staticmethod
    def _param_shapes(sample_shape) -> dict:
        return {"rate": ops().convert_to_tensor(sample_shape, dtype=_dt.int32)}

    def _log_survival_function(self, x):
        # log P[X > x] = -rate x exactly (TF's formula: log_prob - log(rate), so it
        # shares log_prob's checks and gives -rate x also for x < 0)
        return self._log_prob(x) - ops().log(self._rate)

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

    def _param_assertions(self, params):
        # each concentration behind its own check (as TF)
        return {k: [ops().assert_positive(v, message="Concentration parameter must be "
                                          "positive.")] for k, v in params.items()}

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
        if self.validate_args:
            x = with_dependencies([
                t.assert_positive(x, message="sample must be positive"),
                t.assert_less(x, t.ones([], self.dtype),
                              message="sample must be less than `1`.")], x)
        c1, c0 = self._concentration1, self._concentration0
        return t.math.xlogy(c1 - 1.0, x) + t.math.xlog1py(c0 - 1.0, -x) - self._lbeta()

    def _cdf(self, x):
        # Betainc's shapes as TF's: each of a, b, x a scalar or all the same shape (x of
        # shape [3, 1] against concentrations of shape [3] is a ValueError, as in TF)
        return ops().math.betainc(self._concentration1, self._concentration0, x)

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

    def _param_assertions(self, params):
        # TF checks df only; a negative scale is a reflection (the density uses |scale|)
        return _all_guarded_by(params, [ops().assert_positive(params["df"])])

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
        # |scale|: the distribution of loc + scale T is symmetric, so a negative scale
        # must not flip which tail y < 0 picks
        y = (x - self._loc) / t.abs(self._scale)
        tail = 0.5 * t.math.betainc(0.5 * self._df, t.constant(0.5, self.dtype),
                                    self._df / (t.square(y) + self._df))
        return t.where_v2(y < 0.0, tail, 1.0 - tail)

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
