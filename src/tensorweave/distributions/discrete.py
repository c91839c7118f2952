"""Discrete distributions of TF1's `tf.distributions`: Bernoulli and Categorical, given
by `logits` or by `probs` (exactly one, floating), with their KL divergences. Samples are
integers (`dtype`, int32 by default) and not reparameterized.

Given `probs` are used as they are, also where TF's formulas would normalize them
(Categorical's entropy is -sum(log_softmax(logits) * probs)). With `validate_args=True`
the parameters sit behind TF's checks (Bernoulli probs in [0, 1]; Categorical probs
non-negative summing to 1, at least 2 classes) and so do the values of log_prob and cdf
(non-negative integers; 0 or 1 for Bernoulli).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.distributions.distribution import NOT_REPARAMETERIZED, Distribution, \
    RegisterKL, ops
from tensorweave.distributions.util import embed_check_categorical_event_shape, \
    embed_check_integer_casting_closed, get_logits_and_probs


class _Discrete(Distribution):
    """A distribution of `logits` and `probs`, one given and the other derived from it."""

    _multidimensional = False

    def _setup(self, logits, probs, dtype, validate_args, allow_nan_stats, name):
        with _graph.name_scope(name) as scope:
            self._logits, self._probs = get_logits_and_probs(
                logits, probs, multidimensional=self._multidimensional,
                validate_args=validate_args)
            self._setup_shapes(validate_args)
        parameters = dict(logits=logits, probs=probs, dtype=dtype,
                          validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                          name=name)
        Distribution.__init__(self, dtype, NOT_REPARAMETERIZED, validate_args,
                              allow_nan_stats, parameters=parameters,
                              graph_parents=[self._logits, self._probs], name=scope)

    def _setup_shapes(self, validate_args: bool) -> None:
        """Checks and shape tensors of the subclass, in the distribution's scope."""

    @property
    def logits(self):
        """Log-odds (Bernoulli) or unnormalized log probabilities (Categorical)."""
        return self._logits

    @property
    def probs(self):
        return self._probs


@tf_export("distributions.Bernoulli")
class Bernoulli(_Discrete):
    """Bernoulli distributions: 1 with probability `probs` (sigmoid of `logits`).

    Raises:
      ValueError: both or neither of `logits` and `probs` given.
    """

    def __init__(self, logits=None, probs=None, dtype=_dt.int32, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Bernoulli"):
        self._setup(logits, probs, dtype, validate_args, allow_nan_stats, name)

    @staticmethod
    def _param_shapes(sample_shape) -> dict:
        return {"logits": ops().convert_to_tensor(sample_shape, dtype=_dt.int32)}

    def _batch_shape(self) -> TensorShape:
        return self._logits.get_shape()

    def _batch_shape_tensor(self):
        return ops().shape(self._logits)

    def _sample_n(self, n, seed):
        t = ops()
        shape = t.concat([[n], self.batch_shape_tensor()], 0)
        u = t.random_uniform(shape, dtype=self.probs.dtype, seed=seed)
        return t.cast(t.less(u, self.probs), self.dtype)

    def _log_prob(self, x):
        t = ops()
        if self.validate_args:
            x = embed_check_integer_casting_closed(x, target_dtype=_dt.bool)
        logits = self.logits
        x = t.cast(x, logits.dtype)
        logits = logits * t.ones_like(x)
        x = x * t.ones_like(logits)
        return -t.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=logits)

    def _entropy(self):
        t = ops()
        return (-self.logits * (t.sigmoid(self.logits) - 1.0)
                + t.nn.softplus(-self.logits))

    def _mean(self):
        return ops().identity(self.probs)

    def _variance(self):
        return self.probs * (1.0 - self.probs)

    def _mode(self):
        t = ops()
        return t.cast(self.probs > 0.5, self.dtype)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a: Bernoulli, b: Bernoulli, name=None):
    t = ops()
    with _graph.name_scope(name, "kl_bernoulli_bernoulli"):
        delta_probs0 = t.nn.softplus(-b.logits) - t.nn.softplus(-a.logits)
        delta_probs1 = t.nn.softplus(b.logits) - t.nn.softplus(a.logits)
        return t.sigmoid(a.logits) * delta_probs0 + t.sigmoid(-a.logits) * delta_probs1


@tf_export("distributions.Categorical")
class Categorical(_Discrete):
    """Categorical distributions over {0, ..., K-1}, K the last dimension of `logits` or
    `probs` (the batch shape is the rest).

    Raises:
      ValueError: both or neither of `logits` and `probs` given.
    """

    _multidimensional = True

    def __init__(self, logits=None, probs=None, dtype=_dt.int32, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Categorical"):
        self._setup(logits, probs, dtype, validate_args, allow_nan_stats, name)

    def _setup_shapes(self, validate_args: bool) -> None:
        t = ops()
        if validate_args:
            self._logits = embed_check_categorical_event_shape(self._logits)
        static = self._logits.get_shape().with_rank_at_least(1)
        with _graph.name_scope("event_size"):
            if static.ndims is not None and static[-1].value is not None:
                self._event_size = t.constant(static[-1].value, _dt.int32)
            else:
                self._event_size = t.shape(self._logits, out_type=_dt.int32)[-1]

    @property
    def event_size(self):
        """The number of classes K (a scalar int32 Tensor)."""
        return self._event_size

    def _batch_shape(self) -> TensorShape:
        shape = self._logits.get_shape()
        return shape[:-1] if shape.ndims is not None else shape

    def _batch_shape_tensor(self):
        return ops().shape(self._logits)[:-1]

    def _sample_n(self, n, seed):
        t = ops()
        flat = t.reshape(self.logits, [-1, self._event_size])
        draws = t.multinomial(flat, n, seed=seed, output_dtype=_dt.int64)  # [batch, n]
        draws = t.cast(t.transpose(draws), self.dtype)
        return t.reshape(draws, t.concat([[n], self.batch_shape_tensor()], 0))

    def _event_and_params(self, k, params):
        """(k as int32 class indices, params [..., K]) broadcast against each other, k
        behind TF's checks with `validate_args`.

        Raises:
          TypeError: `k` is neither integer nor floating.
        """
        t = ops()
        if self.validate_args:
            k = embed_check_integer_casting_closed(k, target_dtype=_dt.int32)
        if k.dtype.is_floating:
            k = t.cast(k, _dt.int32)  # integral (checked above with validate_args)
        elif not k.dtype.is_integer:
            raise TypeError("`value` should have integer `dtype` or `self.dtype` (%s)"
                            % self.dtype.name)
        batch = params.get_shape()[:-1] if params.get_shape().ndims is not None else None
        if batch is not None and batch.is_fully_defined() and \
                k.get_shape().is_fully_defined() and batch == k.get_shape():
            return k, params
        params = params * t.ones_like(k[..., None], dtype=params.dtype)
        k = k * t.ones(t.shape(params)[:-1], dtype=k.dtype)
        if batch is not None:
            k.set_shape(params.get_shape()[:-1])
        return k, params

    def _log_prob(self, k):
        t = ops()
        k, logits = self._event_and_params(k, self.logits)
        return -t.nn.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _cdf(self, k):
        """The sum of the probabilities of the classes below k: P[X < k], TF's convention
        (so cdf(0) = 0 and cdf(K) = 1), 0 for k < 0."""
        t = ops()
        k, probs = self._event_and_params(k, self.probs)
        flat_probs = t.reshape(probs, [-1, self._event_size])
        below = t.sequence_mask(t.reshape(k, [-1]), self._event_size)
        flat_cdf = t.reduce_sum(t.where(below, flat_probs, t.zeros_like(flat_probs)), -1)
        return t.reshape(flat_cdf, t.shape(k))

    def _entropy(self):
        t = ops()
        # the probabilities as given (TF's formula; unnormalized probs are not rescaled)
        return -t.reduce_sum(t.nn.log_softmax(self.logits) * self.probs, -1)

    def _mode(self):
        t = ops()
        return t.cast(t.argmax(self.logits, axis=-1), self.dtype)


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a: Categorical, b: Categorical, name=None):
    t = ops()
    with _graph.name_scope(name, "kl_categorical_categorical"):
        log_a = t.nn.log_softmax(a.logits)
        return t.reduce_sum(t.nn.softmax(a.logits) * (log_a - t.nn.log_softmax(b.logits)),
                            -1)
