"""`tf.keras.metrics`: the metric functions (accuracies, and the loss functions under
their metric names) and the stateful Metric classes as TF 2.15's Keras has them in
graph mode, with `get`, `serialize` and `deserialize`.

A Metric keeps its state in variables outside the global collections ('total' and
'count' for the means), initialized by the Keras session: `update_state` returns the op
that accumulates a batch, `result()` the value so far, and calling the metric does both
(the result read after the update); `reset_state()` zeroes the variables. The mean
metrics weigh each value by its sample weight (`count` sums the weights), so the result
over several batches is the mean over all their samples, as Keras' training loop
reports it.
"""
from __future__ import annotations

import types
import weakref

from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import export, tf_export
from tensorweave.keras import backend, losses, serialization
from tensorweave.layers.base import to_snake_case


# --- shape helpers ------------------------------------------------------------------------
def _last_dim_may_be_one(x) -> bool:
    dims = x.shape.as_list()
    return dims[-1] is None or dims[-1] == 1


def squeeze_or_expand_dimensions(y_pred, y_true=None, sample_weight=None):
    """As Keras' `losses_utils.squeeze_or_expand_dimensions`: a trailing axis that may be
    1 is dropped from whichever of `y_pred` and `y_true` has one more dimension, and
    `sample_weight` is squeezed or expanded by one axis to `y_pred`'s rank."""
    pred_rank = y_pred.shape.ndims
    if y_true is not None:
        true_rank = y_true.shape.ndims
        if pred_rank is not None and true_rank is not None:
            if pred_rank - true_rank == 1 and _last_dim_may_be_one(y_pred):
                y_pred = tf.squeeze(y_pred, [-1])
            elif true_rank - pred_rank == 1 and _last_dim_may_be_one(y_true):
                y_true = tf.squeeze(y_true, [-1])
        pred_rank = y_pred.shape.ndims
    if sample_weight is None:
        return y_pred, y_true, None
    sample_weight = tf.convert_to_tensor(sample_weight)
    weight_rank = sample_weight.shape.ndims
    if weight_rank == 0 or weight_rank is None or pred_rank is None:
        return y_pred, y_true, sample_weight
    if weight_rank - pred_rank == 1:
        sample_weight = tf.squeeze(sample_weight, [-1])
    elif pred_rank - weight_rank == 1:
        sample_weight = tf.expand_dims(sample_weight, -1)
    return y_pred, y_true, sample_weight


def _broadcastable(weights, values) -> bool:
    """Whether `weights` statically broadcasts to `values`' shape (unknown dims pass)."""
    w, v = weights.shape, values.shape
    if w.ndims is None or v.ndims is None:
        return True
    if w.ndims > v.ndims:
        return False
    for a, b in zip(reversed(w.as_list()), reversed(v.as_list())):
        if a is not None and b is not None and a != 1 and a != b:
            return False
    return True


# --- metric functions ---------------------------------------------------------------------
@tf_export("keras.metrics.accuracy")
def accuracy(y_true, y_pred):
    """1.0 where `y_true == y_pred` (y_pred cast to y_true's dtype), else 0.0."""
    y_true, y_pred = tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred)
    y_true.shape.assert_is_compatible_with(y_pred.shape)
    if y_true.dtype != y_pred.dtype:
        y_pred = tf.cast(y_pred, y_true.dtype)
    return tf.cast(tf.equal(y_true, y_pred), backend.floatx())


@tf_export("keras.metrics.binary_accuracy")
def binary_accuracy(y_true, y_pred, threshold: float = 0.5):
    """The mean over the last axis of `y_true == (y_pred > threshold)`."""
    y_pred = tf.convert_to_tensor(y_pred)
    threshold = tf.cast(threshold, y_pred.dtype)
    y_pred = tf.cast(y_pred > threshold, y_pred.dtype)
    matches = tf.cast(tf.equal(y_true, y_pred), backend.floatx())
    return tf.reduce_mean(matches, axis=-1)


def _sparse_categorical_matches(y_true, y_pred):
    y_pred, y_true = tf.convert_to_tensor(y_pred), tf.convert_to_tensor(y_true)
    original_shape = tf.shape(y_true)
    reshape = False
    if y_true.shape.ndims is not None and y_pred.shape.ndims is not None and \
            y_true.shape.ndims == y_pred.shape.ndims:
        y_true = tf.squeeze(y_true, [-1])
        reshape = True
    y_pred = tf.math.argmax(y_pred, axis=-1)
    if y_pred.dtype != y_true.dtype:
        y_pred = tf.cast(y_pred, y_true.dtype)
    matches = tf.cast(tf.equal(y_true, y_pred), backend.floatx())
    return tf.reshape(matches, original_shape) if reshape else matches


def _sparse_top_k_matches(y_true, y_pred, k: int):
    y_true, y_pred = tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred)
    original_shape = tf.shape(y_true)
    reshape = False
    if y_true.shape.ndims is not None and y_pred.shape.ndims is not None:
        if y_pred.shape.ndims > 2:
            y_pred = tf.reshape(y_pred, [-1, y_pred.shape.as_list()[-1]])
        if y_true.shape.ndims > 1:
            reshape = True
            y_true = tf.reshape(y_true, [-1])
    matches = tf.cast(tf.math.in_top_k(predictions=y_pred, targets=tf.cast(y_true, "int32"),
                                       k=k), backend.floatx())
    return tf.reshape(matches, original_shape) if reshape else matches


@tf_export("keras.metrics.categorical_accuracy")
def categorical_accuracy(y_true, y_pred):
    """1.0 where the largest prediction is at the one-hot label's position."""
    return _sparse_categorical_matches(tf.math.argmax(y_true, axis=-1), y_pred)


@tf_export("keras.metrics.sparse_categorical_accuracy")
def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the largest prediction is at the integer label (labels of shape
    [batch] or [batch, 1])."""
    matches = _sparse_categorical_matches(y_true, y_pred)
    if matches.shape.ndims is not None and matches.shape.ndims > 1 and \
            matches.shape.as_list()[-1] == 1:
        matches = tf.squeeze(matches, [-1])
    return matches


@tf_export("keras.metrics.top_k_categorical_accuracy")
def top_k_categorical_accuracy(y_true, y_pred, k: int = 5):
    """1.0 where the one-hot label is among the `k` largest predictions."""
    return _sparse_top_k_matches(tf.math.argmax(y_true, axis=-1), y_pred, k)


@tf_export("keras.metrics.sparse_top_k_categorical_accuracy")
def sparse_top_k_categorical_accuracy(y_true, y_pred, k: int = 5):
    """1.0 where the integer label is among the `k` largest predictions."""
    return _sparse_top_k_matches(y_true, y_pred, k)


@tf_export("keras.metrics.cosine_similarity")
def cosine_similarity(y_true, y_pred, axis: int = -1):
    """The cosine similarity along `axis` (1 for equal directions)."""
    y_true = tf.linalg.l2_normalize(y_true, axis=axis)
    y_pred = tf.linalg.l2_normalize(y_pred, axis=axis)
    return tf.reduce_sum(y_true * y_pred, axis=axis)


# the loss functions, under their names in tf.keras.metrics
_LOSS_FUNCTIONS = {
    "mean_squared_error": losses.mean_squared_error, "mse": losses.mean_squared_error,
    "MSE": losses.mean_squared_error, "mean_absolute_error": losses.mean_absolute_error,
    "mae": losses.mean_absolute_error, "MAE": losses.mean_absolute_error,
    "mean_absolute_percentage_error": losses.mean_absolute_percentage_error,
    "mape": losses.mean_absolute_percentage_error,
    "MAPE": losses.mean_absolute_percentage_error,
    "mean_squared_logarithmic_error": losses.mean_squared_logarithmic_error,
    "msle": losses.mean_squared_logarithmic_error,
    "MSLE": losses.mean_squared_logarithmic_error,
    "binary_crossentropy": losses.binary_crossentropy,
    "categorical_crossentropy": losses.categorical_crossentropy,
    "sparse_categorical_crossentropy": losses.sparse_categorical_crossentropy,
    "kullback_leibler_divergence": losses.kl_divergence, "kld": losses.kl_divergence,
    "KLD": losses.kl_divergence, "poisson": losses.poisson, "hinge": losses.hinge,
    "squared_hinge": losses.squared_hinge, "categorical_hinge": losses.categorical_hinge,
    "logcosh": losses.log_cosh, "log_cosh": losses.log_cosh,
}
for _name, _fn in _LOSS_FUNCTIONS.items():
    export(_fn, "keras.metrics." + _name)
# more loss functions in tf.keras.metrics, which Keras 2.15's `get` does not find by name
# (`cosine` is the loss: the negated similarity)
for _name, _fn in {"cosine": losses.cosine_similarity,
                   "cosine_proximity": losses.cosine_similarity,
                   "kl_divergence": losses.kl_divergence,
                   "binary_focal_crossentropy": losses.binary_focal_crossentropy,
                   "categorical_focal_crossentropy": losses.categorical_focal_crossentropy
                   }.items():
    export(_fn, "keras.metrics." + _name)


# --- Metric classes -----------------------------------------------------------------------
# result tensor of a Metric call -> the Metric (Keras keeps it on the tensor)
_METRIC_OF_RESULT = weakref.WeakKeyDictionary()


def metric_of_result(value):
    """The Metric whose call returned `value`, or None."""
    try:
        return _METRIC_OF_RESULT.get(value)
    except TypeError:  # not a tensor
        return None


def _recording_updates(update_state):
    """`update_state` (a Metric's unbound method) that also records its update op."""
    def recording_update_state(metric, *args, **kwargs):
        update_op = update_state(metric, *args, **kwargs)
        if update_op is not None:
            metric._updates.append(update_op)
        return update_op
    return recording_update_state


@tf_export("keras.metrics.Metric")
class Metric:
    """Base class of the stateful metrics: subclasses make their state with
    `add_weight` and write `update_state(...)` (returning the update op) and `result()`.

    Args:
      name: the metric's name (default: the snake-cased class name).
      dtype: the dtype of its state and result (default floatx()).
    """

    def __new__(cls, *args, **kwargs):
        metric = super().__new__(cls)
        # as TF Keras's update_state_wrapper: each update op is kept in `updates`, where
        # an Estimator's EstimatorSpec finds the op of a Metric in eval_metric_ops
        metric._updates = []
        metric.update_state = types.MethodType(_recording_updates(cls.update_state), metric)
        return metric

    def __init__(self, name: Optional[str] = None, dtype=None, **kwargs):
        if kwargs:
            raise TypeError("Keyword argument not understood: %s" % sorted(kwargs))
        self._name = name or to_snake_case(type(self).__name__)
        self._dtype = backend.floatx() if dtype is None else tf.as_dtype(dtype).name
        self._variables = []
        self.stateful = True
        self.built = True

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> str:
        return self._dtype

    def add_weight(self, name: str, shape=(), aggregation=None, synchronization=None,
                   initializer=None, dtype=None):
        """A state variable of the metric (not trainable, in no collection), zeros by
        default, initialized by the Keras session."""
        dtype = tf.as_dtype(dtype or self._dtype)
        if initializer is None or initializer == "zeros":
            initial = np.zeros(shape, dtype.as_numpy_dtype)
        elif callable(initializer):
            initial = initializer(shape, dtype=dtype)
        else:
            initial = np.full(shape, initializer, dtype.as_numpy_dtype)
        # Like Keras in graph mode, the state is named in the caller's name scope, not
        # under the metric's name ('total:0', then 'total_1:0' for the next metric).
        with tf.init_scope():
            variable = tf.Variable(initial, name=name, dtype=dtype, trainable=False,
                                   collections=[], use_resource=True)
        backend.track_variable(variable)
        self._variables.append(variable)
        return variable

    @property
    def variables(self) -> list:
        return list(self._variables)

    weights = variables

    @property
    def updates(self) -> list:
        """The update ops made by the calls of update_state (graph mode)."""
        return list(self._updates)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Must be implemented in subclasses.")

    def result(self):
        raise NotImplementedError("Must be implemented in subclasses.")

    def __call__(self, *args, **kwargs):
        """Updates the state with the arguments of `update_state`; the result read after
        the update."""
        update_op = self.update_state(*args, **kwargs)
        with tf.control_dependencies([] if update_op is None else [update_op]):
            result = self.result()
        # as Keras: `add_metric` finds the metric of a result; the training loop fetches
        # the latest result of each metric it reports
        _METRIC_OF_RESULT[result] = self
        self._call_result = result
        return result

    def reset_state(self) -> None:
        """Sets the state variables to zero (in the Keras session)."""
        backend.batch_set_value([(v, np.zeros(v.shape.as_list(),
                                              v.dtype.base_dtype.as_numpy_dtype))
                                 for v in self._variables])

    reset_states = reset_state

    def get_weights(self) -> list:
        return backend.batch_get_value(self._variables)

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    def __repr__(self):
        return "<%s name=%s>" % (type(self).__name__, self.name)


class Reduce(Metric):
    """Accumulates values: their sum ('sum'), or their weighted mean ('weighted_mean',
    dividing by the sum of the weights)."""

    def __init__(self, reduction: str, name: Optional[str], dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.reduction = reduction
        self.total = self.add_weight("total")
        if reduction != "sum":
            self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        """The op adding `values` (times `sample_weight`, broadcast to them) to the state.

        Args:
          values: the values of this batch.
          sample_weight: None, or weights of the same or a broadcastable shape.
        """
        values = tf.cast(values, self._dtype)
        if sample_weight is not None:
            sample_weight = tf.cast(sample_weight, self._dtype)
            values, _, sample_weight = squeeze_or_expand_dimensions(
                values, sample_weight=sample_weight)
            if _broadcastable(sample_weight, values):
                sample_weight = sample_weight * tf.ones_like(values)
            else:
                axes = list(range(sample_weight.shape.ndims, values.shape.ndims))
                values = tf.reduce_sum(values, axes) if self.reduction == "sum" else \
                    tf.reduce_mean(values, axes)
            values = values * sample_weight
        value_sum = tf.reduce_sum(values)
        with tf.control_dependencies([value_sum]):
            update_total = self.total.assign_add(value_sum)
        if self.reduction == "sum":
            return update_total
        if sample_weight is None:
            count = tf.cast(tf.size(values), self._dtype)
        else:
            count = tf.reduce_sum(sample_weight)
        with tf.control_dependencies([update_total]):
            return self.count.assign_add(count)

    def result(self):
        if self.reduction == "sum":
            return tf.identity(self.total)
        return tf.math.divide_no_nan(self.total, self.count)


@tf_export("keras.metrics.Sum")
class Sum(Reduce):
    """The (weighted) sum of the values seen.

    Args:
      name: default 'sum'.
      dtype: default floatx().
    """

    def __init__(self, name: str = "sum", dtype=None):
        super().__init__("sum", name=name, dtype=dtype)


@tf_export("keras.metrics.Mean")
class Mean(Reduce):
    """The (weighted) mean of the values seen.

    Args:
      name: default 'mean'.
      dtype: default floatx().
    """

    def __init__(self, name: str = "mean", dtype=None):
        super().__init__("weighted_mean", name=name, dtype=dtype)


@tf_export("keras.metrics.MeanTensor")
class MeanTensor(Metric):
    """The element-wise (weighted) mean of the tensors seen, all of one shape.

    Args:
      name: default 'mean_tensor'.
      dtype: default floatx().
      shape: the shape of the values; None: taken from the first `update_state`.
    """

    def __init__(self, name: str = "mean_tensor", dtype=None, shape=None):
        super().__init__(name=name, dtype=dtype)
        self._shape = None
        self._total = None
        self._count = None
        if shape is not None:
            self._build(shape)

    def _build(self, shape) -> None:
        self._shape = tf.TensorShape(shape)
        self._total = self.add_weight("total", shape=self._shape.as_list())
        self._count = self.add_weight("count", shape=self._shape.as_list())
        backend.get_session()  # as Keras: made at the first update, initialized at once

    @property
    def total(self):
        return self._total

    @property
    def count(self):
        return self._count

    def update_state(self, values, sample_weight=None):
        """The op adding `values` (times `sample_weight`) element-wise to the total and
        the weights to the count.

        Raises:
          ValueError: when `values` has another shape than the first values.
        """
        values = tf.cast(values, self._dtype)
        if self._shape is None:
            self._build(values.shape)
        elif values.shape != self._shape:
            raise ValueError("MeanTensor input values must always have the same shape. "
                             "Expected shape (set during the first call): %s. Got: %s."
                             % (self._shape, values.shape))
        counts = tf.ones_like(values)
        if sample_weight is not None:
            sample_weight = tf.cast(sample_weight, self._dtype)
            values, _, sample_weight = squeeze_or_expand_dimensions(
                values, sample_weight=sample_weight)
            if _broadcastable(sample_weight, values):
                sample_weight = sample_weight * counts
            else:
                axes = list(range(sample_weight.shape.ndims, values.shape.ndims))
                values = tf.reduce_mean(values, axes)
            counts = counts * sample_weight
            values = values * sample_weight
        update_total = self._total.assign_add(values)
        with tf.control_dependencies([update_total]):
            return self._count.assign_add(counts)

    def result(self):
        if self._shape is None:
            raise ValueError("MeanTensor does not have any value yet. Please call the "
                             "MeanTensor instance or use `.update_state(value)` before "
                             "retrieving the result.")
        return tf.math.divide_no_nan(self._total, self._count)


@tf_export("keras.metrics.MeanMetricWrapper")
class MeanMetricWrapper(Mean):
    """The weighted mean of `fn(y_true, y_pred, **kwargs)` (one value per example).

    Args:
      fn: the metric function.
      name: the metric's name.
      dtype: the dtype of the state (labels and predictions are cast to it).
      **kwargs: passed to `fn`.
    """

    def __init__(self, fn, name: Optional[str] = None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = tf.cast(y_true, self._dtype)
        y_pred = tf.cast(y_pred, self._dtype)
        y_pred, y_true, _ = squeeze_or_expand_dimensions(y_pred, y_true)
        matches = self._fn(y_true, y_pred, **self._fn_kwargs)
        return super().update_state(matches, sample_weight=sample_weight)

    def get_config(self) -> dict:
        config = dict(self._fn_kwargs)
        if type(self) is MeanMetricWrapper:
            config["fn"] = self._fn
        config.update(super().get_config())
        return config

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        fn = config.pop("fn", None)
        if cls is MeanMetricWrapper:
            return cls(get(fn), **config)
        return cls(**config)


def _wrapper_class(class_name: str, fn, default_name: str, doc: str, **defaults):
    """A MeanMetricWrapper subclass of `fn` whose constructor takes `defaults` (in order,
    positionally too), name and dtype."""
    def __init__(self, *args, name: str = default_name, dtype=None, **kwargs):
        arguments = dict(defaults)
        for key, value in zip(defaults, args):
            arguments[key] = value
        for key, value in kwargs.items():
            if key not in defaults:
                raise TypeError("%s got an unexpected keyword argument '%s'"
                                % (class_name, key))
            arguments[key] = value
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **arguments)

    args_doc = "".join("%s: default %r.\n      " % kv for kv in defaults.items())
    cls = type(class_name, (MeanMetricWrapper,), {
        "__init__": __init__,
        "__doc__": "%s\n\n    Args:\n      %sname: default %r.\n      dtype: default "
                   "floatx().\n    " % (doc, args_doc, default_name)})
    return tf_export("keras.metrics." + class_name)(cls)


Accuracy = _wrapper_class("Accuracy", accuracy, "accuracy",
                          "How often predictions equal labels.")
BinaryAccuracy = _wrapper_class("BinaryAccuracy", binary_accuracy, "binary_accuracy",
                                "How often thresholded predictions match binary labels.",
                                threshold=0.5)
CategoricalAccuracy = _wrapper_class("CategoricalAccuracy", categorical_accuracy,
                                     "categorical_accuracy",
                                     "How often predictions match one-hot labels.")
SparseCategoricalAccuracy = _wrapper_class(
    "SparseCategoricalAccuracy", sparse_categorical_accuracy, "sparse_categorical_accuracy",
    "How often predictions match integer labels.")
TopKCategoricalAccuracy = _wrapper_class(
    "TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy",
    "How often one-hot labels are in the top k predictions.", k=5)
SparseTopKCategoricalAccuracy = _wrapper_class(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy",
    "How often integer labels are in the top k predictions.", k=5)
MeanSquaredError = _wrapper_class("MeanSquaredError", losses.mean_squared_error,
                                  "mean_squared_error", "The mean squared error.")
MeanAbsoluteError = _wrapper_class("MeanAbsoluteError", losses.mean_absolute_error,
                                   "mean_absolute_error", "The mean absolute error.")
MeanAbsolutePercentageError = _wrapper_class(
    "MeanAbsolutePercentageError", losses.mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "The mean absolute percentage error.")
MeanSquaredLogarithmicError = _wrapper_class(
    "MeanSquaredLogarithmicError", losses.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "The mean squared logarithmic error.")
BinaryCrossentropy = _wrapper_class("BinaryCrossentropy", losses.binary_crossentropy,
                                    "binary_crossentropy", "The binary crossentropy.",
                                    from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _wrapper_class(
    "CategoricalCrossentropy", losses.categorical_crossentropy, "categorical_crossentropy",
    "The crossentropy of one-hot labels.", from_logits=False, label_smoothing=0.0)
SparseCategoricalCrossentropy = _wrapper_class(
    "SparseCategoricalCrossentropy", losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "The crossentropy of integer labels.",
    from_logits=False, axis=-1)
Hinge = _wrapper_class("Hinge", losses.hinge, "hinge", "The hinge loss.")
SquaredHinge = _wrapper_class("SquaredHinge", losses.squared_hinge, "squared_hinge",
                              "The squared hinge loss.")
CategoricalHinge = _wrapper_class("CategoricalHinge", losses.categorical_hinge,
                                  "categorical_hinge", "The categorical hinge loss.")
KLDivergence = _wrapper_class("KLDivergence", losses.kl_divergence,
                              "kullback_leibler_divergence",
                              "The Kullback-Leibler divergence.")
Poisson = _wrapper_class("Poisson", losses.poisson, "poisson", "The Poisson loss.")
LogCoshError = _wrapper_class("LogCoshError", losses.log_cosh, "logcosh",
                              "The log of the cosh of the errors.")
CosineSimilarity = _wrapper_class("CosineSimilarity", cosine_similarity,
                                  "cosine_similarity", "The cosine similarity.", axis=-1)


@tf_export("keras.metrics.RootMeanSquaredError")
class RootMeanSquaredError(Mean):
    """The square root of the (weighted) mean squared error.

    Args:
      name: default 'root_mean_squared_error'.
      dtype: default floatx().
    """

    def __init__(self, name: str = "root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = tf.cast(y_true, self._dtype)
        y_pred = tf.cast(y_pred, self._dtype)
        y_pred, y_true, _ = squeeze_or_expand_dimensions(y_pred, y_true)
        return super().update_state(tf.math.squared_difference(y_pred, y_true),
                                    sample_weight=sample_weight)

    def result(self):
        return tf.sqrt(tf.math.divide_no_nan(self.total, self.count))


# --- get / serialize / deserialize --------------------------------------------------------
_ALL_OBJECTS = dict(_LOSS_FUNCTIONS)
_ALL_OBJECTS.update({f.__name__: f for f in (
    accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy, cosine_similarity)})
_ALL_OBJECTS["cosine_proximity"] = cosine_similarity  # Keras 2.15's `get`: the similarity
_ALL_OBJECTS.update({c.__name__: c for c in (
    Mean, Sum, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy,
    SparseCategoricalAccuracy, TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy,
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, Hinge, SquaredHinge, CategoricalHinge, KLDivergence,
    Poisson, LogCoshError, CosineSimilarity, RootMeanSquaredError)})


@tf_export("keras.metrics.serialize")
def serialize(metric, use_legacy_format: bool = False):
    """A metric function's name, or a Metric's {'class_name', 'config'}."""
    return serialization.serialize_object(metric)


@tf_export("keras.metrics.deserialize")
def deserialize(config, custom_objects: Optional[dict] = None,
                use_legacy_format: bool = False):
    """The metric function or Metric (a new instance) a name or config describes.

    Raises:
      ValueError: an unknown name.
    """
    return serialization.deserialize_object(config, _ALL_OBJECTS, custom_objects,
                                            "metric function")


@tf_export("keras.metrics.get")
def get(identifier):
    """A metric function or Metric from a name or config; a callable is returned as is.

    Raises:
      ValueError: an identifier that is none of these, or an unknown name.
    """
    if isinstance(identifier, (dict, str)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError("Could not interpret metric identifier: %s" % (identifier,))


def clone_metric(metric):
    """A new Metric with `metric`'s config (a function or name is returned as is)."""
    if isinstance(metric, Metric):
        return type(metric).from_config(metric.get_config())
    return metric
