"""The base of TF1's `tf.distributions`: `Distribution`, reparameterization types and the
KL-divergence registry.

A distribution holds parameter tensors (broadcast together: the batch shape) and builds
ops for its methods, each under the name scope "<distribution name>/<method>". A
subclass implements what it can of `_log_prob`, `_cdf`, `_sample_n`, `_entropy`,
`_mean`, ...; the public methods derive the rest (`prob` from `log_prob`, `stddev` from
`variance`, ...) and raise NotImplementedError("<method> is not implemented: <class>")
for what is missing, as TF1's do. `kl_divergence` finds the function registered with
`RegisterKL` for the closest pair of classes along both method resolution orders.
"""
from __future__ import annotations

import contextlib
import math
from typing import Callable, Dict, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.shapes import TensorShape


@tf_export("distributions.ReparameterizationType")
class ReparameterizationType:
    """Whether samples are differentiable functions of the parameters
    (FULLY_REPARAMETERIZED) or not (NOT_REPARAMETERIZED)."""

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self):
        return "<Reparameterization Type: %s>" % self._rep_type

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


FULLY_REPARAMETERIZED = export(ReparameterizationType("FULLY_REPARAMETERIZED"),
                               "distributions.FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = export(ReparameterizationType("NOT_REPARAMETERIZED"),
                             "distributions.NOT_REPARAMETERIZED")

HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def ops():
    """The op builders distributions use (imported on first use: tensorweave's public
    namespace, so distributions read like TF1 programs)."""
    import tensorweave
    return tensorweave


@tf_export("distributions.Distribution")
class Distribution:
    """A batch of probability distributions (see the module docstring).

    Args:
      dtype: the dtype of samples.
      reparameterization_type: FULLY_REPARAMETERIZED or NOT_REPARAMETERIZED.
      validate_args: add run-time checks of the arguments.
      allow_nan_stats: statistics that are undefined give NaN (else an error).
      parameters: the constructor's arguments (`copy` rebuilds from them).
      graph_parents: the parameter tensors.
      name: the name scope of the distribution's ops.
    """

    def __init__(self, dtype, reparameterization_type, validate_args: bool,
                 allow_nan_stats: bool, parameters: Optional[dict] = None,
                 graph_parents=None, name: Optional[str] = None):
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args = validate_args
        self._allow_nan_stats = allow_nan_stats
        self._parameters = dict(parameters or {})
        self._parameters.pop("self", None)
        self._graph_parents = list(graph_parents or [])
        self._name = name

    # -- properties --
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def reparameterization_type(self) -> ReparameterizationType:
        return self._reparameterization_type

    @property
    def validate_args(self) -> bool:
        return self._validate_args

    @property
    def allow_nan_stats(self) -> bool:
        return self._allow_nan_stats

    @property
    def parameters(self) -> dict:
        return dict(self._parameters)

    @property
    def batch_shape(self) -> TensorShape:
        """The static batch shape (the parameters' shapes broadcast)."""
        return self._batch_shape()

    def batch_shape_tensor(self, name: str = "batch_shape_tensor"):
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return ops().constant(self.batch_shape.as_list(), _dt.int32)
            return self._batch_shape_tensor()

    @property
    def event_shape(self) -> TensorShape:
        return self._event_shape()

    def event_shape_tensor(self, name: str = "event_shape_tensor"):
        with self._name_scope(name):
            return ops().constant(self.event_shape.as_list(), _dt.int32)

    def is_scalar_batch(self, name: str = "is_scalar_batch") -> bool:
        return self.batch_shape.ndims == 0

    def is_scalar_event(self, name: str = "is_scalar_event") -> bool:
        return self.event_shape.ndims == 0

    def _event_shape(self) -> TensorShape:
        return TensorShape([])

    def _batch_shape(self) -> TensorShape:
        raise NotImplementedError("batch_shape is not implemented: %s"
                                  % type(self).__name__)

    def _batch_shape_tensor(self):
        raise NotImplementedError("batch_shape_tensor is not implemented: %s"
                                  % type(self).__name__)

    # -- methods --
    @contextlib.contextmanager
    def _name_scope(self, name: str):
        """The distribution's scope (made at construction), then `name` within it."""
        with _graph.name_scope(self._name):
            with _graph.name_scope(name) as scope:
                yield scope

    def _call(self, method: str, name: str, *args):
        impl = getattr(self, "_" + method, None)
        if impl is None:
            raise NotImplementedError("%s is not implemented: %s"
                                      % (method, type(self).__name__))
        with self._name_scope(name):
            return impl(*args)

    def sample(self, sample_shape=(), seed: Optional[int] = None, name: str = "sample"):
        """Samples of shape `sample_shape + batch_shape + event_shape`."""
        t = ops()
        with self._name_scope(name):
            shape = t.convert_to_tensor(sample_shape, dtype=_dt.int32, name="sample_shape")
            flat = t.reshape(shape, [-1])
            n = t.reduce_prod(flat)
            draws = self._sample_n(n, seed)
            out_shape = t.concat([flat, t.shape(draws)[1:]], 0)
            out = t.reshape(draws, out_shape)
            static = t.get_static_value(shape)
            if static is not None:
                out.set_shape(TensorShape(list(static.reshape(-1))).concatenate(
                    self.batch_shape).concatenate(self.event_shape))
            return out

    def log_prob(self, value, name: str = "log_prob"):
        t = ops()
        if getattr(self, "_log_prob", None) is None and getattr(self, "_prob", None):
            with self._name_scope(name):
                return t.log(self._prob(self._value(value)))
        return self._call("log_prob", name, self._value(value))

    def prob(self, value, name: str = "prob"):
        if getattr(self, "_prob", None) is not None:
            return self._call("prob", name, self._value(value))
        with self._name_scope(name):
            return ops().exp(self._impl("log_prob")(self._value(value)))

    def log_cdf(self, value, name: str = "log_cdf"):
        if getattr(self, "_log_cdf", None) is not None:
            return self._call("log_cdf", name, self._value(value))
        with self._name_scope(name):
            return ops().log(self._impl("cdf")(self._value(value)))

    def cdf(self, value, name: str = "cdf"):
        if getattr(self, "_cdf", None) is not None:
            return self._call("cdf", name, self._value(value))
        with self._name_scope(name):
            return ops().exp(self._impl("log_cdf")(self._value(value)))

    def survival_function(self, value, name: str = "survival_function"):
        with self._name_scope(name):
            return 1.0 - self._impl("cdf")(self._value(value))

    def log_survival_function(self, value, name: str = "log_survival_function"):
        with self._name_scope(name):
            return ops().log1p(-self._impl("cdf")(self._value(value)))

    def quantile(self, value, name: str = "quantile"):
        return self._call("quantile", name, self._value(value))

    def entropy(self, name: str = "entropy"):
        return self._call("entropy", name)

    def mean(self, name: str = "mean"):
        return self._call("mean", name)

    def mode(self, name: str = "mode"):
        return self._call("mode", name)

    def variance(self, name: str = "variance"):
        if getattr(self, "_variance", None) is not None:
            return self._call("variance", name)
        with self._name_scope(name):
            return ops().square(self._impl("stddev")())

    def stddev(self, name: str = "stddev"):
        if getattr(self, "_stddev", None) is not None:
            return self._call("stddev", name)
        with self._name_scope(name):
            return ops().sqrt(self._impl("variance")())

    def covariance(self, name: str = "covariance"):
        return self._call("covariance", name)

    def cross_entropy(self, other, name: str = "cross_entropy"):
        """The cross entropy H[self, other] = H[self] + KL[self || other]."""
        with self._name_scope(name):
            return self.entropy() + kl_divergence(self, other)

    def kl_divergence(self, other, name: str = "kl_divergence"):
        with self._name_scope(name):
            return kl_divergence(self, other)

    def copy(self, **override_parameters_kwargs) -> "Distribution":
        """The same distribution, with some constructor arguments replaced."""
        params = dict(self._parameters)
        params.update(override_parameters_kwargs)
        return type(self)(**params)

    def _impl(self, method: str) -> Callable:
        impl = getattr(self, "_" + method, None)
        if impl is None:
            raise NotImplementedError("%s is not implemented: %s"
                                      % (method, type(self).__name__))
        return impl

    def _value(self, value):
        return ops().convert_to_tensor(value, dtype=self.dtype, name="value")

    def __repr__(self):
        return "<tf.distributions.%s '%s' batch_shape=%s event_shape=%s dtype=%s>" % (
            type(self).__name__, self._name, self.batch_shape, self.event_shape,
            _dt.as_dtype(self.dtype).name)


def nan_where(condition, value, allow_nan_stats: bool, what: str):
    """`value`, NaN where `condition` holds; with `allow_nan_stats=False` a run-time
    assertion that it never does instead."""
    t = ops()
    if allow_nan_stats:
        return t.where(condition, t.fill(t.shape(value), value.dtype.as_numpy_dtype(
            float("nan"))), value)
    with t.control_dependencies([t.assert_equal(t.reduce_any(condition), False,
                                                message="%s is undefined for these "
                                                "parameters" % what)]):
        return t.identity(value)


# --- KL divergence ------------------------------------------------------------------------
_KL: Dict[Tuple[type, type], Callable] = {}


@tf_export("distributions.RegisterKL")
class RegisterKL:
    """Decorator registering `fn(a, b, name=None)` as KL(a || b) for instances of the
    classes `dist_cls_a` and `dist_cls_b` (and their subclasses, unless a closer pair is
    registered).

    Raises:
      TypeError: the decorated object is not callable.
      ValueError: the pair is registered already.
    """

    def __init__(self, dist_cls_a: type, dist_cls_b: type):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn: Callable) -> Callable:
        if not callable(kl_fn):
            raise TypeError("kl_fn must be callable, received: %s" % kl_fn)
        if self._key in _KL:
            raise ValueError("KL(%s || %s) has already been registered to: %s"
                             % (self._key[0].__name__, self._key[1].__name__,
                                _KL[self._key]))
        _KL[self._key] = kl_fn
        return kl_fn


@tf_export("distributions.kl_divergence")
def kl_divergence(distribution_a, distribution_b, allow_nan_stats: bool = True,
                  name: Optional[str] = None):
    """KL(distribution_a || distribution_b), batched.

    Raises:
      NotImplementedError: no KL is registered for the two classes.
    """
    best = None
    for i, ca in enumerate(type(distribution_a).__mro__):
        for j, cb in enumerate(type(distribution_b).__mro__):
            fn = _KL.get((ca, cb))
            if fn is not None and (best is None or i + j < best[0]):
                best = (i + j, fn)
    if best is None:
        raise NotImplementedError(
            "No KL(distribution_a || distribution_b) registered for distribution_a type %s "
            "and distribution_b type %s" % (type(distribution_a).__name__,
                                            type(distribution_b).__name__))
    t = ops()
    with _graph.name_scope(name, "KullbackLeibler"):
        kl = best[1](distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return t.identity(kl, name="kl")
        with t.control_dependencies([t.assert_equal(t.reduce_any(t.is_nan(kl)), False,
                                                    message="KL calculation between %s and "
                                                    "%s returned NaN values"
                                                    % (distribution_a.name,
                                                       distribution_b.name))]):
            return t.identity(kl, name="checked_kl")
