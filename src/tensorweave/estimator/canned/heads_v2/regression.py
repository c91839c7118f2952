"""The regression heads: RegressionHead (mean squared error or a loss_fn), and its
PoissonRegressionHead and LogisticRegressionHead."""

from __future__ import annotations

from typing import Dict, Optional

import tensorweave as tf
from tensorweave.estimator.canned import head as v1
from tensorweave.estimator.canned.head import MetricKeys, PredictionKeys
from tensorweave.estimator.canned.heads_v2.base import (
    SUM_OVER_BATCH_SIZE, SingleHead, checked_labels, checked_logits,
    update_with_broadcast_weights)
from tensorweave.framework.api_export import tf_export


@tf_export("estimator.RegressionHead")
class RegressionHead(SingleHead):
    """A head for regression of `label_dimension` values by mean squared error.

    Args:
      label_dimension: the number of values per example.
      weight_column: a string or NumericColumn of weights, per example or per value.
      loss_reduction: a Keras reduction other than 'none'.
      loss_fn: `loss_fn(labels, logits[, features])` -> the unreduced loss.
      inverse_link_fn: logits -> predicted values (the predictions then also hold the
        logits).
      name: the suffix of metric and summary keys.

    Raises:
      ValueError: a bad label_dimension, reduction or loss_fn.
    """

    _allow_per_logit_weights = True

    def __init__(self, label_dimension: int = 1, weight_column=None,
                 loss_reduction: str = SUM_OVER_BATCH_SIZE, loss_fn=None,
                 inverse_link_fn=None, name: Optional[str] = None):
        if label_dimension < 1:
            raise ValueError("Invalid label_dimension {}.".format(label_dimension))
        super().__init__(weight_column, loss_reduction, loss_fn, name)
        self._label_dimension = label_dimension
        self._inverse_link_fn = inverse_link_fn

    logits_dimension = property(lambda self: self._label_dimension)
    _loss_dimension = property(lambda self: self._label_dimension)

    def _label_ids(self, logits, labels):
        return tf.cast(checked_labels(labels, logits, self._label_dimension), tf.float32)

    def _unweighted_loss(self, logits, labels):
        return tf.losses.mean_squared_error(labels=labels, predictions=logits,
                                            reduction=tf.losses.Reduction.NONE)

    def predictions(self, logits) -> Dict:
        logits = checked_logits(logits, self._label_dimension)
        with tf.name_scope("predictions"):
            if not self._inverse_link_fn:
                return {PredictionKeys.PREDICTIONS: logits}
            return {PredictionKeys.PREDICTIONS: self._inverse_link_fn(logits),
                    PredictionKeys.LOGITS: logits}

    def _export_outputs(self, predictions: Dict) -> Dict:
        from tensorweave.estimator import export
        regression = export.RegressionOutput(predictions[PredictionKeys.PREDICTIONS])
        return {v1.DEFAULT_SERVING_KEY: regression, v1.REGRESS_SERVING_KEY: regression,
                v1.PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def metrics(self, regularization_losses=None) -> Dict:
        with tf.name_scope("metrics"):
            return self._mean_metrics(regularization_losses, MetricKeys.PREDICTION_MEAN,
                                      MetricKeys.LABEL_MEAN)

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None) -> Dict:
        predicted = self.predictions(logits)[PredictionKeys.PREDICTIONS]
        _, _, weights = self._base_metrics(eval_metrics, features, logits, labels,
                                           regularization_losses)
        eval_metrics[self._summary_key(MetricKeys.LABEL_MEAN)].update_state(
            values=labels, sample_weight=weights)
        update_with_broadcast_weights(eval_metrics[self._summary_key(
            MetricKeys.PREDICTION_MEAN)], predicted, weights)
        return eval_metrics


@tf_export("estimator.PoissonRegressionHead")
class PoissonRegressionHead(RegressionHead):
    """A RegressionHead of counts: the log Poisson loss of exp(logits), predictions
    exp(logits).

    Args:
      label_dimension, weight_column, loss_reduction, name: as RegressionHead.
      compute_full_loss: add the Stirling term of the loss.
    """

    def __init__(self, label_dimension: int = 1, weight_column=None,
                 loss_reduction: str = SUM_OVER_BATCH_SIZE, compute_full_loss: bool = True,
                 name: Optional[str] = None):
        self._compute_full_loss = compute_full_loss
        super().__init__(label_dimension, weight_column, loss_reduction,
                         loss_fn=self._poisson_loss, inverse_link_fn=tf.exp, name=name)

    def _poisson_loss(self, labels, logits):
        return tf.nn.log_poisson_loss(targets=tf.cast(labels, tf.float32),
                                      log_input=logits,
                                      compute_full_loss=self._compute_full_loss)


@tf_export("estimator.LogisticRegressionHead")
class LogisticRegressionHead(RegressionHead):
    """A RegressionHead of labels in [0, 1]: the sigmoid cross entropy of the logits,
    predictions sigmoid(logits).

    Args:
      weight_column, loss_reduction, name: as RegressionHead (one label per example).
    """

    def __init__(self, weight_column=None, loss_reduction: str = SUM_OVER_BATCH_SIZE,
                 name: Optional[str] = None):
        super().__init__(label_dimension=1, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=self._logistic_loss,
                         inverse_link_fn=tf.sigmoid, name=name)

    @staticmethod
    def _logistic_loss(labels, logits):
        labels = v1._assert_range(labels, 2, message="Labels must be in range [0, 1]",
                                  scope="check_label_range")
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
