"""Distributions with a vector event (the last dimension, K): Dirichlet, Multinomial and
DirichletMultinomial of TF1's `tf.distributions`, with KL(Dirichlet || Dirichlet).

Counts are floats (the distributions' dtype) as in TF1. The batch shape is the
parameters' shapes less their last dimension, broadcast with `total_count`'s.
Dirichlet samples normalize Gamma draws (reparameterized through RandomGamma's implicit
gradient); Multinomial draws `total_count` categorical samples per batch member (up to
the largest count, the rest masked out) and counts them.

Each parameter is converted on its own (as in TF: `total_count` and `probs` of different
dtypes are a TypeError). With `validate_args=True` the parameters sit behind TF's checks
(positive concentrations over at least 2 classes, probs on the simplex, total_count a
non-negative integer) and so do the values of log_prob (Dirichlet: positive, summing to
1; counts: non-negative integers summing to total_count).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape, broadcast_shapes
from tensorweave.distributions.distribution import FULLY_REPARAMETERIZED, \
    NOT_REPARAMETERIZED, Distribution, RegisterKL, nan_where, ops
from tensorweave.distributions.util import embed_check_categorical_event_shape, \
    embed_check_nonnegative_integer_form, get_logits_and_probs, with_dependencies


def _lbeta(x):
    """log B(x) over the last dimension: sum lgamma(x) - lgamma(sum x)."""
    t = ops()
    return t.reduce_sum(t.lgamma(x), -1) - t.lgamma(t.reduce_sum(x, -1))


def _log_combinations(n, counts):
    """log(n! / prod(counts!)) over the last dimension."""
    t = ops()
    return t.lgamma(n + 1.0) - t.reduce_sum(t.lgamma(counts + 1.0), -1)


class _VectorEvent(Distribution):
    """A distribution whose event is the last dimension of its vector parameter
    (`_vector`), with an optional batch parameter `_total_count`."""

    _total_count = None

    def _vector(self):
        raise NotImplementedError("%s must define _vector (its event's parameter)"
                                  % type(self).__name__)

    def _event_shape(self) -> TensorShape:
        shape = self._vector().get_shape().with_rank_at_least(1)
        return shape[-1:] if shape.ndims is not None else TensorShape(None)

    def _batch_shape(self) -> TensorShape:
        shape = self._vector().get_shape()
        batch = shape[:-1] if shape.ndims is not None else TensorShape(None)
        if self._total_count is not None:
            batch = broadcast_shapes(batch, self._total_count.get_shape())
        return batch

    def _batch_shape_tensor(self):
        t = ops()
        batch = t.shape(self._vector())[:-1]
        if self._total_count is not None:
            batch = t.broadcast_dynamic_shape(batch, t.shape(self._total_count))
        return batch

    def event_shape_tensor(self, name: str = "event_shape_tensor"):
        with self._name_scope(name):
            return ops().shape(self._vector())[-1:]

    def _ones(self):
        """Ones of shape batch + event (statistics broadcast to it)."""
        t = ops()
        shape = t.concat([self.batch_shape_tensor(), self.event_shape_tensor()], 0)
        return t.ones(shape, dtype=self.dtype)

    def _checked_counts(self, counts, message: str):
        """`counts` behind TF's checks with `validate_args`: non-negative integers summing
        to total_count over the last dimension."""
        if not self.validate_args:
            return counts
        counts = embed_check_nonnegative_integer_form(counts)
        return with_dependencies([ops().assert_equal(
            self._total_count, ops().reduce_sum(counts, -1), message=message)], counts)

    def _covariance_of(self, mean, variance):
        """diag(variance) with off-diagonal -mean_i mean_j / n (multinomial-like)."""
        t = ops()
        n = self._count_scale()
        outer = -t.expand_dims(mean, -1) * t.expand_dims(mean, -2) / t.expand_dims(
            t.expand_dims(n, -1), -1)
        return t.linalg.set_diag(outer, variance)

    def _count_scale(self):
        raise NotImplementedError("%s must define _count_scale (the covariance's count "
                                  "factor)" % type(self).__name__)


class _Concentrated(_VectorEvent):
    """A distribution of a `concentration` vector."""

    @property
    def concentration(self):
        return self._concentration

    @property
    def total_concentration(self):
        return self._total_concentration

    def _vector(self):
        return self._concentration


@tf_export("distributions.Dirichlet")
class Dirichlet(_Concentrated):
    """The Dirichlet distribution on the simplex, with `concentration` [..., K]."""

    def __init__(self, concentration, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Dirichlet"):
        t = ops()
        with _graph.name_scope(name) as scope:
            conc = t.convert_to_tensor(concentration)
            checks = [] if not validate_args else [
                t.assert_positive(conc, message="Concentration parameter must be positive."),
                t.assert_rank_at_least(conc, 1, message="Concentration parameter must have "
                                       ">=1 dimensions."),
                t.assert_less(1, t.shape(conc)[-1], message="Concentration parameter must "
                              "have event_size >= 2.")]
            with t.control_dependencies(checks):
                self._concentration = t.identity(conc, name="concentration")
            self._total_concentration = t.reduce_sum(self._concentration, -1)
        Distribution.__init__(self, self._concentration.dtype, FULLY_REPARAMETERIZED,
                              validate_args, allow_nan_stats,
                              parameters=dict(concentration=concentration,
                                              validate_args=validate_args,
                                              allow_nan_stats=allow_nan_stats, name=name),
                              graph_parents=[self._concentration], name=scope)

    def _sample_n(self, n, seed):
        t = ops()
        g = t.random_gamma([n], alpha=self._concentration, dtype=self.dtype, seed=seed)
        return g / t.reduce_sum(g, -1, keepdims=True)

    def _log_prob(self, x):
        t = ops()
        if self.validate_args:
            x = with_dependencies([
                t.assert_positive(x, message="samples must be positive"),
                t.assert_near(t.ones([], dtype=self.dtype), t.reduce_sum(x, -1),
                              message="sample last-dimension must sum to `1`")], x)
        return t.reduce_sum(t.math.xlogy(self._concentration - 1.0, x), -1) - \
            _lbeta(self._concentration)

    def _entropy(self):
        t = ops()
        k = t.cast(t.shape(self._concentration)[-1], self.dtype)
        a0 = self._total_concentration
        return (_lbeta(self._concentration) + (a0 - k) * t.digamma(a0)
                - t.reduce_sum((self._concentration - 1.0) * t.digamma(self._concentration),
                               -1))

    def _mean(self):
        t = ops()
        return self._concentration / t.expand_dims(self._total_concentration, -1)

    def _variance(self):
        t = ops()
        mean = self._mean()
        return mean * (1.0 - mean) / t.expand_dims(1.0 + self._total_concentration, -1)

    def _count_scale(self):
        return 1.0 + self._total_concentration

    def _covariance(self):
        return self._covariance_of(self._mean(), self._variance())

    def _mode(self):
        t = ops()
        k = t.cast(t.shape(self._concentration)[-1], self.dtype)
        mode = (self._concentration - 1.0) / t.expand_dims(self._total_concentration - k, -1)
        undefined = t.reduce_any(self._concentration <= 1.0, -1, keepdims=True) & \
            t.ones_like(mode, dtype=_dt.bool)
        return nan_where(undefined, mode, self.allow_nan_stats,
                         "The mode of a Dirichlet with a concentration <= 1")


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(a: Dirichlet, b: Dirichlet, name=None):
    t = ops()
    with _graph.name_scope(name, "kl_dirichlet_dirichlet"):
        ca, cb = a.concentration, b.concentration
        digamma_diff = t.digamma(ca) - t.expand_dims(t.digamma(a.total_concentration), -1)
        return (t.lgamma(a.total_concentration) - t.reduce_sum(t.lgamma(ca), -1)
                - t.lgamma(b.total_concentration) + t.reduce_sum(t.lgamma(cb), -1)
                + t.reduce_sum((ca - cb) * digamma_diff, -1))


class _Counts(_VectorEvent):
    """What Multinomial and DirichletMultinomial share: `total_count` draws over K."""

    @property
    def total_count(self):
        return self._total_count

    def _count_scale(self):
        return self._total_count * self._ones()[..., 0]

    def _draw_counts(self, logits, n, seed):
        """[n, batch..., K] counts of `total_count` categorical draws from `logits`
        ([batch..., K] or [n, batch..., K])."""
        t = ops()
        k = t.shape(logits)[-1]
        counts_shape = t.concat([[n], self.batch_shape_tensor()], 0)
        logits = logits + t.zeros(t.concat([counts_shape, [k]], 0), dtype=logits.dtype)
        flat = t.reshape(logits, [-1, k])
        total = t.reshape(self._total_count * t.ones(counts_shape, self.dtype), [-1])
        most = t.cast(t.reduce_max(total), _dt.int32)
        draws = t.multinomial(flat, most, seed=seed, output_dtype=_dt.int32)
        keep = t.cast(t.less(t.range(most)[None, :], t.cast(total, _dt.int32)[:, None]),
                      self.dtype)
        onehot = t.one_hot(draws, k, dtype=self.dtype) * keep[..., None]
        counts = t.reduce_sum(onehot, 1)
        return t.reshape(counts, t.concat([counts_shape, [k]], 0))


@tf_export("distributions.Multinomial")
class Multinomial(_Counts):
    """Counts of `total_count` draws over K classes with `probs` (or softmax `logits`),
    given exactly one of them.

    Raises:
      ValueError: both or neither of `logits` and `probs` given.
    """

    def __init__(self, total_count, logits=None, probs=None, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Multinomial"):
        t = ops()
        with _graph.name_scope(name) as scope:
            count = t.convert_to_tensor(total_count, name="total_count")
            if validate_args:
                count = embed_check_nonnegative_integer_form(count)
            self._total_count = t.identity(count, name="total_count")
            self._logits, self._probs = get_logits_and_probs(
                logits, probs, multidimensional=True, validate_args=validate_args)
            # built here as in TF: a total_count of another dtype than the probabilities
            # is a TypeError at construction
            self._mean_val = t.expand_dims(self._total_count, -1) * self._probs
        Distribution.__init__(self, self._probs.dtype, NOT_REPARAMETERIZED, validate_args,
                              allow_nan_stats,
                              parameters=dict(total_count=total_count, logits=logits,
                                              probs=probs, validate_args=validate_args,
                                              allow_nan_stats=allow_nan_stats, name=name),
                              graph_parents=[self._total_count, self._logits, self._probs],
                              name=scope)

    @property
    def logits(self):
        return self._logits

    @property
    def probs(self):
        return self._probs

    def _vector(self):
        return self._probs

    def _sample_n(self, n, seed):
        return self._draw_counts(self._logits, n, seed)

    def _log_prob(self, counts):
        t = ops()
        counts = self._checked_counts(counts, "counts must sum to `self.total_count`")
        return _log_combinations(self._total_count, counts) + t.reduce_sum(
            counts * t.nn.log_softmax(self._logits), -1)

    def _mean(self):
        return ops().identity(self._mean_val)

    def _variance(self):
        return self._mean() * (1.0 - self._probs)

    def _covariance(self):
        return self._covariance_of(self._mean(), self._variance())


@tf_export("distributions.DirichletMultinomial")
class DirichletMultinomial(_Counts, _Concentrated):
    """Counts of `total_count` draws over K classes whose probabilities are drawn from a
    Dirichlet with `concentration`."""

    def __init__(self, total_count, concentration, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "DirichletMultinomial"):
        t = ops()
        with _graph.name_scope(name) as scope:
            count = t.convert_to_tensor(total_count, name="total_count")
            if validate_args:
                count = embed_check_nonnegative_integer_form(count)
            self._total_count = t.identity(count, name="total_count")
            conc = t.convert_to_tensor(concentration)
            if validate_args:
                conc = embed_check_categorical_event_shape(conc)
                conc = with_dependencies([t.assert_positive(
                    conc, message="Concentration parameter must be positive.")], conc)
            self._concentration = t.identity(conc, name="concentration")
            self._total_concentration = t.reduce_sum(self._concentration, -1)
        Distribution.__init__(self, self._concentration.dtype, NOT_REPARAMETERIZED,
                              validate_args, allow_nan_stats,
                              parameters=dict(total_count=total_count,
                                              concentration=concentration,
                                              validate_args=validate_args,
                                              allow_nan_stats=allow_nan_stats, name=name),
                              graph_parents=[self._total_count, self._concentration],
                              name=scope)

    def _sample_n(self, n, seed):
        t = ops()
        shape = t.concat([[n], self.batch_shape_tensor(), self.event_shape_tensor()], 0)
        g = t.random_gamma([n], alpha=self._concentration * self._ones(), dtype=self.dtype,
                           seed=seed)
        g = t.reshape(g, shape)
        return self._draw_counts(t.log(g / t.reduce_sum(g, -1, keepdims=True)), n,
                                 None if seed is None else seed + 1)

    def _log_prob(self, counts):
        counts = self._checked_counts(
            counts, "counts last-dimension must sum to `self.total_count`")
        return (_log_combinations(self._total_count, counts)
                + _lbeta(self._concentration + counts) - _lbeta(self._concentration))

    def _mean(self):
        t = ops()
        return t.expand_dims(self._total_count / self._total_concentration, -1) * \
            self._concentration * self._ones()

    def _variance(self):
        t = ops()
        p = self._concentration / t.expand_dims(self._total_concentration, -1)
        n, a0 = self._total_count, self._total_concentration
        return t.expand_dims(n * (n + a0) / (1.0 + a0), -1) * p * (1.0 - p) * self._ones()

    def _covariance(self):
        t = ops()
        p = self._concentration / t.expand_dims(self._total_concentration, -1) * \
            self._ones()
        n, a0 = self._total_count, self._total_concentration
        scale = n * (n + a0) / (1.0 + a0) * self._ones()[..., 0]
        s = t.expand_dims(t.expand_dims(scale, -1), -1)
        outer = -t.expand_dims(p, -1) * t.expand_dims(p, -2) * s
        return t.linalg.set_diag(outer, self._variance())
