"""`tf.keras.metrics`: FBetaScore and F1Score, R2Score and MeanRelativeError, as Keras 2.15
defines them.

FBetaScore and R2Score make their per-class state on the first `update_state` (its
shape comes from the data) and the Keras session initializes it then. Their
`update_state` returns one op running every update of the state: Keras 2.15 in graph
mode returns only the last one of its updates (so an F1Score there stays at 0); these
compute what Keras computes eagerly.
"""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_math, metrics
from tensorweave.keras.metrics import Mean, Metric, squeeze_or_expand_dimensions
from tensorweave.keras.metrics_confusion import _unique_name
from tensorweave.losses.weights_broadcast import broadcast_weights


def _check_2d(metric_name: str, y_true, y_pred) -> None:
    """Raises ValueError unless both are (batch_size, output_dim) with output_dim known."""
    message = ("%s expects 2D inputs with shape (batch_size, output_dim)%s. Received input "
               "shapes: y_pred.shape=%s and y_true.shape=%s.")
    shapes = (tuple(y_pred.shape.as_list()) if y_pred.shape.ndims is not None else None,
              tuple(y_true.shape.as_list()) if y_true.shape.ndims is not None else None)
    if y_pred.shape.ndims != 2 or y_true.shape.ndims != 2:
        raise ValueError(message % ((metric_name, "") + shapes))
    if y_pred.shape.as_list()[-1] is None or y_true.shape.as_list()[-1] is None:
        raise ValueError(message % ((metric_name, ", with output_dim fully defined (not "
                                                  "None)") + shapes))


@tf_export("keras.metrics.FBetaScore")
class FBetaScore(Metric):
    """The F-beta score `(1 + beta^2) * precision * recall / (beta^2 * precision +
    recall)` of multi-label predictions (batch_size, num_classes), per class or averaged.

    A prediction is positive above `threshold`, or (threshold None) where it is the
    row's maximum and not 0.

    Args:
      average: None (one score per class), 'micro' (from the counts over all classes),
        'macro' (the mean of the class scores) or 'weighted' (their mean weighted by
        the number of true labels of each class).
      beta: a positive float, the weight of recall.
      threshold: a float in (0, 1], or None.
      name: default 'fbeta_score'.
      dtype: default floatx().

    Raises:
      ValueError: an unknown average, a beta or threshold that is not a float in range.
    """

    def __init__(self, average: Optional[str] = None, beta: float = 1.0,
                 threshold: Optional[float] = None, name: str = "fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, "
                             "'micro', 'macro', 'weighted'}. Received: average=%s"
                             % (average,))
        if not isinstance(beta, float):
            raise ValueError("Invalid `beta` argument value. It should be a Python float. "
                             "Received: beta=%s of type '%s'" % (beta, type(beta)))
        if beta <= 0.0:
            raise ValueError("Invalid `beta` argument value. It should be > 0. Received: "
                             "beta=%s" % (beta,))
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError("Invalid `threshold` argument value. It should be a Python "
                                 "float. Received: threshold=%s of type '%s'"
                                 % (threshold, type(threshold)))
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError("Invalid `threshold` argument value. It should verify 0 < "
                                 "threshold <= 1. Received: threshold=%s" % (threshold,))
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self.built = False

    def _build(self, y_true, y_pred) -> None:
        _check_2d("FBetaScore", y_true, y_pred)
        shape = [] if self.average == "micro" else [y_pred.shape.as_list()[-1]]
        self.true_positives = self.add_weight("true_positives", shape=shape)
        self.false_positives = self.add_weight("false_positives", shape=shape)
        self.false_negatives = self.add_weight("false_negatives", shape=shape)
        self.intermediate_weights = self.add_weight("intermediate_weights", shape=shape)
        backend.get_session()  # as Keras: made at the first update, initialized at once
        self.built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """The op adding a batch's (weighted) true positives, false positives, false
        negatives and true labels to the state.

        Raises:
          ValueError: inputs that are not 2D with a known last dimension.
        """
        y_true = tf.convert_to_tensor(y_true, dtype=self.dtype)
        y_pred = tf.convert_to_tensor(y_pred, dtype=self.dtype)
        if not self.built:
            self._build(y_true, y_pred)
        if self.threshold is None:
            row_max = tf.reduce_max(y_pred, axis=-1, keepdims=True)
            y_pred = tf.logical_and(y_pred >= row_max, tf.abs(y_pred) > 1e-9)
        else:
            y_pred = y_pred > self.threshold
        y_pred = tf.cast(y_pred, self.dtype)

        def weighted_sum(values):
            if sample_weight is not None:
                weight = tf.cast(sample_weight, self.dtype)
                values = values * tf.expand_dims(weight, 1)
            return tf.reduce_sum(values, axis=self.axis)
        return tf.group(
            self.true_positives.assign_add(weighted_sum(y_pred * y_true)),
            self.false_positives.assign_add(weighted_sum(y_pred * (1 - y_true))),
            self.false_negatives.assign_add(weighted_sum((1 - y_pred) * y_true)),
            self.intermediate_weights.assign_add(weighted_sum(y_true)))

    def result(self):
        precision = tf.math.divide_no_nan(self.true_positives,
                                          self.true_positives + self.false_positives)
        recall = tf.math.divide_no_nan(self.true_positives,
                                       self.true_positives + self.false_negatives)
        beta_squared = self.beta ** 2
        score = tf.math.divide_no_nan(precision * recall,
                                      beta_squared * precision + recall) * (1 + beta_squared)
        if self.average == "weighted":
            weights = tf.math.divide_no_nan(self.intermediate_weights,
                                            tf.reduce_sum(self.intermediate_weights))
            return tf.reduce_sum(score * weights)
        if self.average is not None:  # micro, macro
            return tf.reduce_mean(score)
        return score

    def reset_state(self) -> None:
        if self.built:
            super().reset_state()

    reset_states = reset_state

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(average=self.average, beta=self.beta, threshold=self.threshold)
        return config


@tf_export("keras.metrics.F1Score")
class F1Score(FBetaScore):
    """The F1 score `2 * precision * recall / (precision + recall)` (FBetaScore with
    beta 1).

    Args:
      average: None, 'micro', 'macro' or 'weighted' (see FBetaScore).
      threshold: a float in (0, 1], or None.
      name: default 'f1_score'.
      dtype: default floatx().
    """

    def __init__(self, average: Optional[str] = None, threshold: Optional[float] = None,
                 name: str = "f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name,
                         dtype=dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["beta"]
        return config


@tf_export("keras.metrics.R2Score")
class R2Score(Metric):
    """The coefficient of determination `1 - SS_res / SS_tot` per output column of
    (batch_size, output_dim) data (weighted by `sample_weight`), averaged or not; with
    `num_regressors` p > 0, the adjusted score `1 - (1 - R2) * (n - 1) / (n - p - 1)`
    (n: the number of values seen), which falls back to R2 where n - 1 <= p.

    Args:
      class_aggregation: 'uniform_average' (the mean over columns),
        'variance_weighted_average' (weighted by each column's variance) or None.
      num_regressors: the number of independent variables p (>= 0).
      name: default 'r2_score'.
      dtype: default floatx().

    Raises:
      ValueError: an unknown class_aggregation or a negative num_regressors.
    """

    def __init__(self, class_aggregation: Optional[str] = "uniform_average",
                 num_regressors: int = 0, name: str = "r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise ValueError("Invalid value for argument `class_aggregation`. Expected one "
                             "of %s. Received: class_aggregation=%s"
                             % (valid, class_aggregation))
        if num_regressors < 0:
            raise ValueError("Invalid value for argument `num_regressors`. Expected a value "
                             ">= 0. Received: num_regressors=%s" % (num_regressors,))
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_weight("num_samples", dtype="int32")
        self.built = False

    def _build(self, y_true, y_pred) -> None:
        _check_2d("R2Score", y_true, y_pred)
        shape = [y_pred.shape.as_list()[-1]]
        self.squared_sum = self.add_weight("squared_sum", shape=shape)
        self.sum = self.add_weight("sum", shape=shape)
        self.total_mse = self.add_weight("residual", shape=shape)
        self.count = self.add_weight("count", shape=shape)
        backend.get_session()  # as Keras: made at the first update, initialized at once
        self.built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        """The op adding a batch's weighted sums, squared sums, squared errors and
        counts per column to the state.

        Raises:
          ValueError: inputs that are not 2D with a known last dimension.
        """
        y_true = tf.convert_to_tensor(y_true, dtype=self.dtype)
        y_pred = tf.convert_to_tensor(y_pred, dtype=self.dtype)
        if not self.built:
            self._build(y_true, y_pred)
        weight = tf.convert_to_tensor(1 if sample_weight is None else sample_weight,
                                      dtype=self.dtype)
        if weight.shape.ndims == 1:
            weight = tf.expand_dims(weight, axis=1)
        weight = broadcast_weights(weight, y_true)
        weighted_y_true = y_true * weight
        return tf.group(
            self.sum.assign_add(tf.reduce_sum(weighted_y_true, axis=0)),
            self.squared_sum.assign_add(tf.reduce_sum(y_true * weighted_y_true, axis=0)),
            self.total_mse.assign_add(tf.reduce_sum((y_true - y_pred) ** 2 * weight,
                                                    axis=0)),
            self.count.assign_add(tf.reduce_sum(weight, axis=0)),
            self.num_samples.assign_add(tf.size(y_true)))

    def result(self):
        mean = self.sum / self.count
        total = self.squared_sum - self.sum * mean
        raw_scores = 1 - self.total_mse / total
        raw_scores = tf.where(tf.math.is_inf(raw_scores), tf.zeros_like(raw_scores),
                              raw_scores)
        if self.class_aggregation == "uniform_average":
            score = tf.reduce_mean(raw_scores)
        elif self.class_aggregation == "variance_weighted_average":
            score = tf.reduce_sum(total * raw_scores) / tf.reduce_sum(total)
        else:
            score = raw_scores
        if self.num_regressors == 0:
            return score
        # Keras decides (and warns) in Python on the eager count; here the fallback to the
        # plain score where n - 1 <= p is chosen in the graph
        n = tf.cast(self.num_samples, self.dtype)
        p = tf.cast(self.num_regressors, self.dtype)
        adjusted = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0)
        return tf.where(tf.greater(n - 1.0, p), adjusted, score)

    def reset_state(self) -> None:
        if self.built:
            super().reset_state()
        else:
            backend.set_value(self.num_samples, 0)

    reset_states = reset_state

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(class_aggregation=self.class_aggregation,
                      num_regressors=self.num_regressors)
        return config


@tf_export("keras.metrics.MeanRelativeError")
class MeanRelativeError(Mean):
    """The (weighted) mean of `|y_true - y_pred| / normalizer` (0 where the normalizer
    is 0).

    Args:
      normalizer: a number or values of y_pred's shape.
      name: default 'mean_relative_error'.
      dtype: default floatx().
    """

    def __init__(self, normalizer, name: Optional[str] = None, dtype=None):
        super().__init__(name=name or _unique_name(self), dtype=dtype)
        self.normalizer = tf.cast(normalizer, self.dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """The op adding the relative errors of a batch (times `sample_weight`) to the
        mean."""
        y_true = tf.cast(y_true, self.dtype)
        y_pred = tf.cast(y_pred, self.dtype)
        y_pred, y_true, _ = squeeze_or_expand_dimensions(y_pred, y_true)
        y_pred, normalizer, _ = squeeze_or_expand_dimensions(y_pred, self.normalizer)
        y_pred.shape.assert_is_compatible_with(y_true.shape)
        relative_errors = tf.math.divide_no_nan(tf.abs(y_true - y_pred), normalizer)
        return super().update_state(relative_errors, sample_weight=sample_weight)

    def get_config(self) -> dict:
        config = super().get_config()
        config["normalizer"] = backend_math.eval(self.normalizer)
        return config


# tf.keras.metrics.get / deserialize find them by class name
metrics._ALL_OBJECTS.update({cls.__name__: cls for cls in (
    FBetaScore, F1Score, R2Score, MeanRelativeError)})
