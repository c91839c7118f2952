"""The base of TF1's `tf.distributions`: `Distribution`, reparameterization types and the
KL-divergence registry.

A distribution holds parameter tensors (broadcast together: the batch shape) and builds
ops for its methods, each under the name scope "<distribution name>/<method>". A
subclass implements what it can of `_log_prob`, `_cdf`, `_sample_n`, `_entropy`,
`_mean`, ...; the public methods derive the rest (`prob` from `log_prob`, `stddev` from
`variance`, survival functions from the cdf, ...) and raise
NotImplementedError("<method> is not implemented: <class>") for what is missing, as
TF1's do. Values given to the methods are converted with the distribution's dtype only
preferred: a Tensor of another dtype fails in the formulas, as in TF. `sample` keeps the
static batch and event shape when the sample shape is only known at run time.
`kl_divergence` finds the function registered with `RegisterKL` for the closest pair of
classes along both method resolution orders.
"""
from __future__ import annotations

import contextlib
import math
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.shapes import TensorShape, unknown_shape


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


# method: (the method it is derived from when a subclass lacks it, how)
_DERIVED: Dict[str, Tuple[str, Callable]] = {
    "log_prob": ("prob", lambda p: ops().log(p)),
    "prob": ("log_prob", lambda lp: ops().exp(lp)),
    "log_cdf": ("cdf", lambda c: ops().log(c)),
    "cdf": ("log_cdf", lambda lc: ops().exp(lc)),
    "survival_function": ("cdf", lambda c: 1.0 - c),
    "log_survival_function": ("cdf", lambda c: ops().log1p(-c)),
}


@tf_export("distributions.Distribution")
class Distribution:
    """A batch of probability distributions (see the module docstring).

    Args:
      dtype: the dtype of samples.
      reparameterization_type: FULLY_REPARAMETERIZED or NOT_REPARAMETERIZED.
      validate_args: check the arguments (assertions; those on values known at build
        time fail while the graph is built).
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

    def is_scalar_batch(self, name: str = "is_scalar_batch"):
        """A bool scalar Tensor: whether the batch shape is [] (a constant when the static
        batch rank is known)."""
        with self._name_scope(name):
            return ops().convert_to_tensor(
                self._is_scalar_helper(self.batch_shape, self.batch_shape_tensor),
                name="is_scalar_batch")

    def is_scalar_event(self, name: str = "is_scalar_event"):
        """A bool scalar Tensor: whether the event shape is []."""
        with self._name_scope(name):
            return ops().convert_to_tensor(
                self._is_scalar_helper(self.event_shape, self.event_shape_tensor),
                name="is_scalar_event")

    @staticmethod
    def _is_scalar_helper(static_shape: TensorShape, dynamic_shape_fn: Callable):
        """A Python bool where the rank is known statically, else a bool Tensor."""
        if static_shape.ndims is not None:
            return static_shape.ndims == 0
        t = ops()
        shape = dynamic_shape_fn()
        length = shape.get_shape()
        if length.ndims is not None and length[0].value is not None:
            return length[0].value == 0
        return t.equal(t.shape(shape)[0], 0)

    # -- parameter shapes for a wanted sample shape --
    @classmethod
    def param_shapes(cls, sample_shape, name: str = "DistributionParamShapes") -> dict:
        """The shapes (int32 Tensors) of the constructor's parameters that give samples of
        shape `sample_shape`, by parameter name.

        Raises:
          NotImplementedError: the class does not describe its parameters' shapes.
        """
        with _graph.name_scope(name):
            return cls._param_shapes(sample_shape)

    @classmethod
    def param_static_shapes(cls, sample_shape) -> dict:
        """`param_shapes` as TensorShapes, for a `sample_shape` known statically.

        Raises:
          ValueError: `sample_shape` is not fully defined (a partial TensorShape, a
            placeholder).
        """
        if isinstance(sample_shape, TensorShape):
            if not sample_shape.is_fully_defined():
                raise ValueError("TensorShape sample_shape must be fully defined")
            sample_shape = sample_shape.as_list()
        static = {}
        for param, shape in cls.param_shapes(sample_shape).items():
            value = tensor_util.constant_value(shape)
            if value is None:
                raise ValueError("sample_shape must be a fully-defined TensorShape or "
                                 "list/tuple")
            static[param] = TensorShape(np.asarray(value).reshape(-1).tolist())
        return static

    @staticmethod
    def _param_shapes(sample_shape) -> dict:
        raise NotImplementedError("_param_shapes not implemented")

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
        """Samples of shape `sample_shape + batch_shape + event_shape`.

        Raises:
          ValueError: `sample_shape` has rank 2 or more.
        """
        t = ops()
        with self._name_scope(name):
            sample_shape = t.convert_to_tensor(sample_shape, dtype=_dt.int32,
                                               name="sample_shape")
            sample_shape, n = self._expand_sample_shape_to_vector(sample_shape,
                                                                  "sample_shape")
            draws = self._sample_n(n, seed)
            out = t.reshape(draws, t.concat([sample_shape, t.shape(draws)[1:]], 0))
            return self._set_sample_static_shape(out, sample_shape)

    @staticmethod
    def _expand_sample_shape_to_vector(x, name: str):
        """(`x` as a vector, the number of samples: a Python int when known statically)."""
        t = ops()
        static = tensor_util.constant_value(x)
        n = t.reduce_prod(x) if static is None else int(np.prod(static))
        ndims = x.get_shape().ndims
        if ndims is None:
            x = t.reshape(x, [-1])  # a scalar becomes [1], a vector stays as it is
        elif ndims == 0:
            x = t.constant(np.reshape(static, [1]).astype(np.int32), name=name) \
                if static is not None else t.reshape(x, [1])
        elif ndims != 1:
            raise ValueError("Input is neither scalar nor vector.")
        return x, n

    def _set_sample_static_shape(self, x, sample_shape):
        """`x` with what is known statically of sample, batch and event shape merged into
        its shape: the batch and event parts stay known when the sample shape is not."""
        sample_static = tensor_util.constant_value_as_shape(sample_shape)
        ndims = x.get_shape().ndims
        sample_ndims = sample_static.ndims
        batch_ndims = self.batch_shape.ndims
        event_ndims = self.event_shape.ndims
        if ndims is None and None not in (sample_ndims, batch_ndims, event_ndims):
            ndims = sample_ndims + batch_ndims + event_ndims
            x.set_shape(unknown_shape(ndims))
        if ndims is None:
            return x
        if sample_ndims is not None:
            x.set_shape(sample_static.concatenate(unknown_shape(ndims - sample_ndims)))
        if event_ndims is not None:
            x.set_shape(unknown_shape(ndims - event_ndims).concatenate(self.event_shape))
        if batch_ndims is not None:
            # the sample rank follows from the others when the sample shape is unknown
            if sample_ndims is None and event_ndims is not None:
                sample_ndims = ndims - batch_ndims - event_ndims
            elif event_ndims is None and sample_ndims is not None:
                event_ndims = ndims - batch_ndims - sample_ndims
            if sample_ndims is not None and event_ndims is not None:
                x.set_shape(unknown_shape(sample_ndims).concatenate(
                    self.batch_shape).concatenate(unknown_shape(event_ndims)))
        return x

    # -- functions of a value: the subclass's `_<method>`, else derived from another --
    def _of_value(self, method: str, value, name: str):
        """`method` of `value` (converted in the method's scope, the distribution's dtype
        preferred) from the subclass's `_<method>`, else derived as TF1 derives it."""
        with self._name_scope(name):
            return self._derive(method, self._value(value))

    def _derive(self, method: str, value):
        impl = getattr(self, "_" + method, None)
        if impl is not None:
            return impl(value)
        base, how = _DERIVED.get(method, (None, None))
        # survival functions use the full cdf (itself possibly exp(log_cdf)); the others
        # only their counterpart's own formula
        if base == "cdf" and method != "log_cdf" and (
                getattr(self, "_cdf", None) is not None
                or getattr(self, "_log_cdf", None) is not None):
            return how(self._derive("cdf", value))
        base_impl = getattr(self, "_" + base, None) if base else None
        if base_impl is None:
            raise NotImplementedError("%s is not implemented: %s"
                                      % (method, type(self).__name__))
        return how(base_impl(value))

    def log_prob(self, value, name: str = "log_prob"):
        """log p(x), of shape sample_shape(x) + batch_shape."""
        return self._of_value("log_prob", value, name)

    def prob(self, value, name: str = "prob"):
        """p(x), of shape sample_shape(x) + batch_shape."""
        return self._of_value("prob", value, name)

    def log_cdf(self, value, name: str = "log_cdf"):
        """log P[X <= x]."""
        return self._of_value("log_cdf", value, name)

    def cdf(self, value, name: str = "cdf"):
        """P[X <= x]."""
        return self._of_value("cdf", value, name)

    def survival_function(self, value, name: str = "survival_function"):
        """P[X > x]: the subclass's `_survival_function`, else 1 - cdf."""
        return self._of_value("survival_function", value, name)

    def log_survival_function(self, value, name: str = "log_survival_function"):
        """log P[X > x]: the subclass's `_log_survival_function` (accurate where the cdf
        is near 1), else log1p(-cdf)."""
        return self._of_value("log_survival_function", value, name)

    def quantile(self, value, name: str = "quantile"):
        return self._of_value("quantile", value, name)

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
        # as TF: the distribution's dtype only preferred, so a Tensor of another dtype
        # reaches the formulas and fails there (TypeError from the op, as in TF)
        return ops().convert_to_tensor(value, name="value", preferred_dtype=self.dtype)

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
