"""Discrete distributions of TF1's `tf.distributions`: Bernoulli and Categorical, given
by `logits` or by `probs` (exactly one), with their KL divergences. Samples are integers
(`dtype`, int32 by default) and not reparameterized."""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.distributions.distribution import NOT_REPARAMETERIZED, Distribution, \
    RegisterKL, ops


def _logits_and_probs(logits, probs):
    """(logits, probs) tensors from exactly one of them (the other derived lazily)."""
    t = ops()
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if logits is not None:
        return t.identity(t.convert_to_tensor(logits), name="logits"), None
    return None, t.identity(t.convert_to_tensor(probs), name="probs")


class _Discrete(Distribution):
    def _setup(self, logits, probs, dtype, validate_args, allow_nan_stats, name):
        with _graph.name_scope(name) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs)
        parameters = dict(logits=logits, probs=probs, dtype=dtype,
                          validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                          name=name)
        Distribution.__init__(self, dtype, NOT_REPARAMETERIZED, validate_args,
                              allow_nan_stats, parameters=parameters,
                              graph_parents=[x for x in (self._logits, self._probs) if
                                             x is not None], name=scope)

    @property
    def logits(self):
        """Log-odds (Bernoulli) or unnormalized log probabilities (Categorical)."""
        if self._logits is None:
            with self._name_scope("logits"):
                self._logits = self._to_logits(self._probs)
        return self._logits

    @property
    def probs(self):
        if self._probs is None:
            with self._name_scope("probs"):
                self._probs = self._to_probs(self._logits)
        return self._probs

    def _param(self):
        return self._logits if self._logits is not None else self._probs

    def _value(self, value):
        # values are integers (or any numbers), not of the sample dtype necessarily
        return ops().convert_to_tensor(value, name="value")


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
    def _to_logits(probs):
        t = ops()
        return t.log(probs) - t.log1p(-probs)

    @staticmethod
    def _to_probs(logits):
        return ops().sigmoid(logits)

    def _batch_shape(self) -> TensorShape:
        return self._param().get_shape()

    def _batch_shape_tensor(self):
        return ops().shape(self._param())

    def _sample_n(self, n, seed):
        t = ops()
        shape = t.concat([[n], self.batch_shape_tensor()], 0)
        u = t.random_uniform(shape, dtype=self.probs.dtype, seed=seed)
        return t.cast(t.less(u, self.probs), self.dtype)

    def _log_prob(self, x):
        t = ops()
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

    def __init__(self, logits=None, probs=None, dtype=_dt.int32, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Categorical"):
        self._setup(logits, probs, dtype, validate_args, allow_nan_stats, name)
        with self._name_scope("event_size"):
            t = ops()
            self._event_size = t.shape(self._param(), out_type=_dt.int32)[-1]

    @property
    def event_size(self):
        """The number of classes K (a scalar int32 Tensor)."""
        return self._event_size

    @staticmethod
    def _to_logits(probs):
        return ops().log(probs)

    @staticmethod
    def _to_probs(logits):
        return ops().nn.softmax(logits)

    def _batch_shape(self) -> TensorShape:
        shape = self._param().get_shape()
        return shape[:-1] if shape.ndims is not None else shape

    def _batch_shape_tensor(self):
        return ops().shape(self._param())[:-1]

    def _sample_n(self, n, seed):
        t = ops()
        logits = self.logits
        flat = t.reshape(logits, [-1, self._event_size])
        draws = t.multinomial(flat, n, seed=seed, output_dtype=_dt.int64)  # [batch, n]
        draws = t.cast(t.transpose(draws), self.dtype)
        return t.reshape(draws, t.concat([[n], self.batch_shape_tensor()], 0))

    def _log_prob(self, k):
        t = ops()
        logits = self.logits
        k = t.cast(k, _dt.int32)
        ones = t.ones_like(logits[..., 0], dtype=_dt.int32)
        k = k * ones
        logits = logits * t.expand_dims(t.ones_like(k, dtype=logits.dtype), -1)
        return -t.nn.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self):
        t = ops()
        return -t.reduce_sum(t.nn.log_softmax(self.logits) * t.nn.softmax(self.logits), -1)

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
