"""`tf.keras.losses`: the loss functions of Keras, each giving one value per example
(the mean, or sum, over the last axis), with their aliases (mse, mae, ...) and `get`.
The crossentropies take `from_logits`; given the output of a Keras softmax or sigmoid
(or a Softmax/Sigmoid op) they use its input as logits, as TF's Keras does."""
from __future__ import annotations

import warnings
from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_nn, backend_ops, serialization


def _prepare(y_true, y_pred):
    y_pred = tf.convert_to_tensor(y_pred)
    return tf.cast(y_true, y_pred.dtype), y_pred


@tf_export("keras.losses.mean_squared_error", "keras.losses.mse", "keras.losses.MSE")
def mean_squared_error(y_true, y_pred):
    """`mean(square(y_pred - y_true), axis=-1)`."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return backend_ops.mean(tf.math.squared_difference(y_pred, y_true), axis=-1)


@tf_export("keras.losses.mean_absolute_error", "keras.losses.mae", "keras.losses.MAE")
def mean_absolute_error(y_true, y_pred):
    """`mean(abs(y_pred - y_true), axis=-1)`."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return backend_ops.mean(tf.abs(y_pred - y_true), axis=-1)


@tf_export("keras.losses.mean_absolute_percentage_error", "keras.losses.mape",
           "keras.losses.MAPE")
def mean_absolute_percentage_error(y_true, y_pred):
    """`100 * mean(abs((y_true - y_pred) / max(abs(y_true), epsilon)), axis=-1)`."""
    y_true, y_pred = _prepare(y_true, y_pred)
    diff = tf.abs((y_true - y_pred) / tf.maximum(tf.abs(y_true), backend.epsilon()))
    return 100.0 * backend_ops.mean(diff, axis=-1)


@tf_export("keras.losses.mean_squared_logarithmic_error", "keras.losses.msle",
           "keras.losses.MSLE")
def mean_squared_logarithmic_error(y_true, y_pred):
    """`mean(square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)), axis=-1)`."""
    y_true, y_pred = _prepare(y_true, y_pred)
    first_log = tf.math.log(tf.maximum(y_pred, backend.epsilon()) + 1.0)
    second_log = tf.math.log(tf.maximum(y_true, backend.epsilon()) + 1.0)
    return backend_ops.mean(tf.math.squared_difference(first_log, second_log), axis=-1)


def _maybe_convert_labels(y_true):
    """0/1 labels as -1/1 (decided at run time when not known at build time)."""
    from tensorweave.layers.base import smart_cond
    is_binary = tf.reduce_all(tf.logical_or(tf.equal(y_true, 0), tf.equal(y_true, 1)))
    return smart_cond(is_binary, lambda: 2.0 * y_true - 1.0, lambda: y_true)


@tf_export("keras.losses.hinge")
def hinge(y_true, y_pred):
    """`mean(max(1 - y_true * y_pred, 0), axis=-1)`; 0/1 labels are taken as -1/1."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _maybe_convert_labels(y_true)
    return backend_ops.mean(tf.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


@tf_export("keras.losses.squared_hinge")
def squared_hinge(y_true, y_pred):
    """`mean(square(max(1 - y_true * y_pred, 0)), axis=-1)`; 0/1 labels as -1/1."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _maybe_convert_labels(y_true)
    return backend_ops.mean(tf.square(tf.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


@tf_export("keras.losses.categorical_hinge")
def categorical_hinge(y_true, y_pred):
    """`max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)` per example."""
    y_true, y_pred = _prepare(y_true, y_pred)
    pos = tf.reduce_sum(y_true * y_pred, axis=-1)
    neg = tf.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return tf.maximum(neg - pos + 1.0, tf.cast(0.0, y_pred.dtype))


@tf_export("keras.losses.log_cosh", "keras.losses.logcosh")
def log_cosh(y_true, y_pred):
    """`mean(log(cosh(y_pred - y_true)), axis=-1)` (computed stably)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    x = y_pred - y_true
    return backend_ops.mean(x + tf.math.softplus(-2.0 * x) -
                            tf.cast(tf.math.log(2.0), x.dtype), axis=-1)


@tf_export("keras.losses.categorical_crossentropy")
def categorical_crossentropy(y_true, y_pred, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1):
    """The crossentropy of one-hot (or soft) labels against predicted probabilities
    (logits with `from_logits`) along `axis`; labels are smoothed toward uniform by
    `label_smoothing`.

    Raises:
      ValueError: a bool axis.
    """
    _check_int_axis(axis)
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        smoothing = tf.convert_to_tensor(label_smoothing, dtype=y_pred.dtype)
        num_classes = tf.cast(tf.shape(y_true)[axis], y_pred.dtype)
        y_true = y_true * (1.0 - smoothing) + (smoothing / num_classes)
    return backend_ops.categorical_crossentropy(y_true, y_pred, from_logits=from_logits,
                                                axis=axis)


@tf_export("keras.losses.sparse_categorical_crossentropy")
def sparse_categorical_crossentropy(y_true, y_pred, from_logits: bool = False,
                                    axis: int = -1, ignore_class=None):
    """The crossentropy of integer labels against predicted probabilities (logits with
    `from_logits`) along `axis`.

    Raises:
      NotImplementedError: `ignore_class`.
    """
    return backend_ops.sparse_categorical_crossentropy(
        y_true, y_pred, from_logits=from_logits, ignore_class=ignore_class, axis=axis)


@tf_export("keras.losses.binary_crossentropy")
def binary_crossentropy(y_true, y_pred, from_logits: bool = False,
                        label_smoothing: float = 0.0, axis: int = -1):
    """The mean over `axis` of the elementwise binary crossentropy of labels against
    predicted probabilities (logits with `from_logits`); labels are smoothed toward 0.5
    by `label_smoothing`."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _smooth_binary(y_true, label_smoothing, y_pred.dtype)
    return backend_ops.mean(backend_ops.binary_crossentropy(y_true, y_pred,
                                                            from_logits=from_logits),
                            axis=axis)


def _check_int_axis(axis) -> None:
    if isinstance(axis, bool):
        raise ValueError("`axis` must be of type `int`. Received: axis=%s of type %s"
                         % (axis, type(axis)))


def _smooth_binary(y_true, label_smoothing, dtype):
    """Labels squeezed toward 0.5 by `label_smoothing`."""
    if not label_smoothing:
        return y_true
    smoothing = tf.convert_to_tensor(label_smoothing, dtype=dtype)
    return y_true * (1.0 - smoothing) + 0.5 * smoothing


def _smooth_categorical(y_true, label_smoothing, dtype):
    """Labels moved toward uniform over the last axis by `label_smoothing`."""
    if not label_smoothing:
        return y_true
    smoothing = tf.convert_to_tensor(label_smoothing, dtype=dtype)
    num_classes = tf.cast(tf.shape(y_true)[-1], dtype)
    return y_true * (1.0 - smoothing) + (smoothing / num_classes)


@tf_export("keras.losses.binary_focal_crossentropy")
def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing: bool = False,
                              alpha: float = 0.25, gamma: float = 2.0,
                              from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1):
    """The mean over `axis` of the binary crossentropy weighted by `(1 - p_t)**gamma`
    (p_t: the probability of the true label), and with `apply_class_balancing` by
    `alpha` for positives and `1 - alpha` for negatives; labels are smoothed toward 0.5
    by `label_smoothing`."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _smooth_binary(y_true, label_smoothing, y_pred.dtype)
    focal = backend_nn.binary_focal_crossentropy(
        y_true, y_pred, apply_class_balancing=apply_class_balancing, alpha=alpha,
        gamma=gamma, from_logits=from_logits)
    return backend_ops.mean(focal, axis=axis)


@tf_export("keras.losses.categorical_focal_crossentropy")
def categorical_focal_crossentropy(y_true, y_pred, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, label_smoothing: float = 0.0,
                                   axis: int = -1):
    """The categorical crossentropy along `axis` with each class's term weighted by
    `alpha * (1 - p)**gamma`; labels are smoothed toward uniform by `label_smoothing`.

    Raises:
      ValueError: a bool axis.
    """
    _check_int_axis(axis)
    y_true, y_pred = _prepare(y_true, y_pred)
    if y_pred.shape.ndims and y_pred.shape.as_list()[-1] == 1:
        warnings.warn("In loss categorical_focal_crossentropy, expected y_pred.shape to be "
                      "(batch_size, num_classes) with num_classes > 1. Received: "
                      "y_pred.shape=%s. Consider using 'binary_crossentropy' if you only "
                      "have 2 classes." % (y_pred.shape,), SyntaxWarning, stacklevel=2)
    y_true = _smooth_categorical(y_true, label_smoothing, y_pred.dtype)
    return backend_nn.categorical_focal_crossentropy(y_true, y_pred, alpha=alpha, gamma=gamma,
                                                     from_logits=from_logits, axis=axis)


@tf_export("keras.losses.kl_divergence", "keras.losses.kld", "keras.losses.KLD",
           "keras.losses.kullback_leibler_divergence")
def kl_divergence(y_true, y_pred):
    """`sum(y_true * log(y_true / y_pred), axis=-1)`, both clipped to [epsilon, 1]."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = backend_ops.clip(y_true, backend.epsilon(), 1)
    y_pred = backend_ops.clip(y_pred, backend.epsilon(), 1)
    return tf.reduce_sum(y_true * tf.math.log(y_true / y_pred), axis=-1)


@tf_export("keras.losses.poisson")
def poisson(y_true, y_pred):
    """`mean(y_pred - y_true * log(y_pred + epsilon), axis=-1)`."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return backend_ops.mean(y_pred - y_true * tf.math.log(y_pred + backend.epsilon()),
                            axis=-1)


@tf_export("keras.losses.cosine_similarity", "keras.losses.cosine",
           "keras.losses.cosine_proximity")
def cosine_similarity(y_true, y_pred, axis: int = -1):
    """The negated cosine similarity along `axis` (-1 for equal directions)."""
    y_true = tf.linalg.l2_normalize(y_true, axis=axis)
    y_pred = tf.linalg.l2_normalize(y_pred, axis=axis)
    return -tf.reduce_sum(y_true * y_pred, axis=axis)


_ALL_OBJECTS = {f.__name__: f for f in (
    mean_squared_error, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_logarithmic_error, hinge, squared_hinge, categorical_hinge, log_cosh,
    categorical_crossentropy, sparse_categorical_crossentropy, binary_crossentropy,
    binary_focal_crossentropy, categorical_focal_crossentropy, kl_divergence, poisson,
    cosine_similarity)}
_ALL_OBJECTS.update(mse=mean_squared_error, MSE=mean_squared_error, mae=mean_absolute_error,
                    MAE=mean_absolute_error, mape=mean_absolute_percentage_error,
                    MAPE=mean_absolute_percentage_error,
                    msle=mean_squared_logarithmic_error,
                    MSLE=mean_squared_logarithmic_error, kld=kl_divergence,
                    KLD=kl_divergence, kullback_leibler_divergence=kl_divergence,
                    logcosh=log_cosh, cosine=cosine_similarity,
                    cosine_proximity=cosine_similarity)


@tf_export("keras.losses.serialize")
def serialize(loss, use_legacy_format: bool = False):
    """The name of a loss function ('mean_squared_error')."""
    return serialization.serialize_object(loss)


@tf_export("keras.losses.deserialize")
def deserialize(name, custom_objects: Optional[dict] = None,
                use_legacy_format: bool = False):
    """The loss function named `name` ('mse', 'categorical_crossentropy', ...), or the
    Loss a {'class_name', 'config'} dict describes.

    Raises:
      ValueError: an unknown name.
    """
    from tensorweave.keras import loss_classes  # it imports this module
    objects = dict(_ALL_OBJECTS)
    objects.update((k, v) for k, v in vars(loss_classes).items()
                   if isinstance(v, type) and issubclass(v, loss_classes.Loss))
    return serialization.deserialize_object(name, objects, custom_objects, "loss function")


@tf_export("keras.losses.get")
def get(identifier):
    """A loss function from a name or config; a callable is returned as is; None gives
    None.

    Raises:
      ValueError: an unknown name or an identifier of another type.
    """
    return serialization.get_object(identifier, deserialize, "loss function")


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
cosine = cosine_proximity = cosine_similarity
