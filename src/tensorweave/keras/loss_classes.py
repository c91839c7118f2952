"""`tf.keras.losses` classes: a loss function with its arguments, reducing the
per-example losses (times `sample_weight`) to a scalar as TF's Keras does: 'auto' and
'sum_over_batch_size' give the weighted sum over the number of loss elements, 'sum' the
sum, 'none' the weighted losses."""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend_ops, losses

_REDUCTIONS = ("auto", "none", "sum", "sum_over_batch_size")


def _squeeze_or_expand(a, b):
    """`a` and `b` with a trailing axis of size 1 dropped from the one of higher rank
    (when the ranks differ by one), as TF's `squeeze_or_expand_dimensions`."""
    rank_a, rank_b = a.shape.ndims, b.shape.ndims
    if rank_a is None or rank_b is None:
        return a, b
    if rank_a - rank_b == 1 and a.shape.as_list()[-1] == 1:
        a = tf.squeeze(a, [-1])
    elif rank_b - rank_a == 1 and b.shape.as_list()[-1] == 1:
        b = tf.squeeze(b, [-1])
    return a, b


def _weigh(losses_, sample_weight):
    weight = tf.cast(tf.convert_to_tensor(sample_weight), losses_.dtype)
    rank, weight_rank = losses_.shape.ndims, weight.shape.ndims
    if rank is not None and weight_rank is not None and weight_rank != 0:
        if weight_rank - rank == 1:
            weight = tf.squeeze(weight, [-1])
        elif rank - weight_rank == 1:
            weight = tf.expand_dims(weight, -1)
    return tf.multiply(losses_, weight)


@tf_export("keras.losses.Loss")
class Loss:
    """Base class of Keras losses: `loss(y_true, y_pred, sample_weight=None)` computes
    `call(y_true, y_pred)` (one loss per example) and reduces it.

    Args:
      reduction: 'auto' (= 'sum_over_batch_size'), 'sum_over_batch_size', 'sum' or 'none'.
      name: the name scope of the ops (default: the class name).

    Raises:
      ValueError: an unknown reduction.
    """

    def __init__(self, reduction: str = "auto", name: Optional[str] = None):
        if reduction not in _REDUCTIONS:
            raise ValueError('Invalid Reduction Key: %s. Expected keys are "%s"'
                             % (reduction, _REDUCTIONS))
        self.reduction = reduction
        self.name = name or type(self).__name__

    def call(self, y_true, y_pred):
        raise NotImplementedError("Must be implemented in subclasses.")

    def __call__(self, y_true, y_pred, sample_weight=None):
        with tf.name_scope(self.name):
            per_example = self.call(y_true, y_pred)
            with tf.name_scope("weighted_loss"):
                if not per_example.dtype.is_floating:
                    per_example = tf.cast(per_example, "float32")
                weighted = per_example if sample_weight is None else \
                    _weigh(per_example, sample_weight)
                if self.reduction == "none":
                    return weighted
                total = tf.reduce_sum(weighted)
                if self.reduction == "sum":
                    return total
                count = tf.cast(tf.size(weighted), total.dtype)
                return tf.math.divide_no_nan(total, count, name="value")

    def get_config(self) -> dict:
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A Loss computing `fn(y_true, y_pred, **kwargs)`."""

    def __init__(self, fn, reduction: str = "auto", name: Optional[str] = None, **kwargs):
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        # as TF: a trailing axis of size 1 is reconciled only between tensors
        if isinstance(y_true, tf.Tensor) and isinstance(y_pred, tf.Tensor):
            y_pred, y_true = _squeeze_or_expand(y_pred, y_true)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(self._fn_kwargs)
        config["fn"] = self.fn.__name__
        return config

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        config.pop("fn", None)
        return cls(**config)


def huber(y_true, y_pred, delta: float = 1.0):
    """Per example: the mean of `0.5 * e^2` where |e| <= delta, `delta * (|e| - 0.5 *
    delta)` elsewhere (e = y_pred - y_true)."""
    y_pred = tf.cast(y_pred, tf.float32)
    y_true = tf.cast(y_true, tf.float32)
    delta = tf.cast(delta, tf.float32)
    error = tf.subtract(y_pred, y_true)
    abs_error = tf.abs(error)
    half = tf.convert_to_tensor(0.5, dtype=abs_error.dtype)
    return backend_ops.mean(tf.where(abs_error <= delta, half * tf.square(error),
                                     delta * abs_error - half * tf.square(delta)), axis=-1)


def _loss_class(name: str, fn, default_name: str, doc: str, **defaults):
    def __init__(self, *args, reduction: str = "auto", name: str = default_name, **kwargs):
        arguments = dict(defaults)
        for key, value in zip(defaults, args):
            arguments[key] = value
        for key, value in kwargs.items():
            if key not in defaults:
                raise TypeError("%s.__init__() got an unexpected keyword argument '%s'"
                                % (cls_name, key))
            arguments[key] = value
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, **arguments)

    cls_name = name
    cls = type(name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc + (
        "\n\n    Args:\n      %sreduction: 'auto', 'sum_over_batch_size', 'sum' or 'none'.\n"
        "      name: the ops' name scope (default %r).\n    " % (
            "".join("%s: default %r.\n      " % kv for kv in defaults.items()),
            default_name))})
    return tf_export("keras.losses." + name)(cls)


MeanSquaredError = _loss_class("MeanSquaredError", losses.mean_squared_error,
                               "mean_squared_error", "Mean of squared errors.")
MeanAbsoluteError = _loss_class("MeanAbsoluteError", losses.mean_absolute_error,
                                "mean_absolute_error", "Mean of absolute errors.")
MeanAbsolutePercentageError = _loss_class(
    "MeanAbsolutePercentageError", losses.mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "Mean absolute percentage error.")
MeanSquaredLogarithmicError = _loss_class(
    "MeanSquaredLogarithmicError", losses.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "Mean squared logarithmic error.")
BinaryCrossentropy = _loss_class("BinaryCrossentropy", losses.binary_crossentropy,
                                 "binary_crossentropy", "Binary crossentropy.",
                                 from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalCrossentropy = _loss_class("CategoricalCrossentropy",
                                      losses.categorical_crossentropy,
                                      "categorical_crossentropy",
                                      "Crossentropy of one-hot labels.", from_logits=False,
                                      label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _loss_class(
    "SparseCategoricalCrossentropy", losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "Crossentropy of integer labels.", from_logits=False,
    ignore_class=None)
Hinge = _loss_class("Hinge", losses.hinge, "hinge", "Hinge loss (labels -1/1 or 0/1).")
SquaredHinge = _loss_class("SquaredHinge", losses.squared_hinge, "squared_hinge",
                           "Squared hinge loss.")
CategoricalHinge = _loss_class("CategoricalHinge", losses.categorical_hinge,
                               "categorical_hinge", "Categorical hinge loss.")
KLDivergence = _loss_class("KLDivergence", losses.kl_divergence, "kl_divergence",
                           "Kullback-Leibler divergence.")
Poisson = _loss_class("Poisson", losses.poisson, "poisson", "Poisson loss.")
LogCosh = _loss_class("LogCosh", losses.log_cosh, "log_cosh", "Log of the cosh of errors.")
CosineSimilarity = _loss_class("CosineSimilarity", losses.cosine_similarity,
                               "cosine_similarity", "Negated cosine similarity.", axis=-1)
Huber = _loss_class("Huber", huber, "huber_loss", "Huber loss.", delta=1.0)
BinaryFocalCrossentropy = _loss_class(
    "BinaryFocalCrossentropy", losses.binary_focal_crossentropy, "binary_focal_crossentropy",
    "Binary crossentropy weighted by (1 - p_t)**gamma, optionally class-balanced by alpha.",
    apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
    label_smoothing=0.0, axis=-1)
CategoricalFocalCrossentropy = _loss_class(
    "CategoricalFocalCrossentropy", losses.categorical_focal_crossentropy,
    "categorical_focal_crossentropy",
    "Categorical crossentropy weighted by alpha * (1 - p)**gamma per class.", alpha=0.25,
    gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)
