"""What the v2 heads share: the `Head` interface, `SingleHead` (the loss and the mode
dispatch of create_estimator_spec), and the checks and pieces they build from (TF's
base_head), mostly the v1 heads' own with the v2 wording.
"""

from __future__ import annotations

import abc
from typing import Callable, Dict, Optional

import tensorweave as tf
from tensorweave.estimator.canned import head as v1
from tensorweave.estimator.canned.head import MetricKeys
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import EstimatorSpec, fn_args
from tensorweave.framework.api_export import tf_export

# Keras's loss reductions (tf.keras.losses.Reduction), which the v2 heads take
AUTO = "auto"
NONE = "none"
SUM = "sum"
SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
_REDUCTIONS = (AUTO, NONE, SUM, SUM_OVER_BATCH_SIZE)

LABEL_MESSAGES = v1.LabelMessages(
    none="You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: "
         "Check that your data contains your label feature. Check that your input_fn "
         "properly parses and returns labels.",
    mismatched_dim="Mismatched label shape. Expected labels dimension=%s.  Received %s. "
                   "Suggested Fix: If your classifier expects one-hot encoding label, "
                   "check your n_classes argument to the estimator and/or the shape of "
                   "your label. Otherwise, check the shape of your label.",
    shape="labels shape must be [D0, D1, ... DN, {}]. Suggested Fix: check your n_classes "
          "argument to the head and/or the shape of your label.")
# formatted with (expected dimension, shape) like the v1 message, which names the
# dimension; this one does not ("%.0s" prints nothing of it)
_LOGITS_DIM_MESSAGE = "logits shape must be [D0, D1, ... DN, logits_dimension], got %.0s%s."


# --- argument checks ----------------------------------------------------------------------
def check_loss_reduction(loss_reduction: str) -> None:
    if loss_reduction not in _REDUCTIONS or loss_reduction == NONE:
        raise ValueError("Invalid loss_reduction: {}. See `tf.losses.Reduction` for valid "
                         "options.".format(loss_reduction))


def check_loss_fn_args(loss_fn: Callable) -> None:
    args = fn_args(loss_fn)
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError("loss_fn must contain argument: {}. Given arguments: {}"
                             .format(required, args))
    invalid = list(set(args) - {"labels", "logits", "features", "loss_reduction"})
    if invalid:
        raise ValueError("loss_fn has unexpected args: {}".format(invalid))


def check_vocabulary(label_vocabulary) -> None:
    if label_vocabulary is not None and not isinstance(label_vocabulary, (list, tuple)):
        raise ValueError("label_vocabulary should be a list or a tuple. Given type: {}"
                         .format(type(label_vocabulary)))


def check_prediction_keys(keys, valid_keys) -> None:
    for key in keys:
        if key not in valid_keys:
            raise ValueError("Prediction key must be in PredictionKeys, given: {}.Valid "
                             "prediction keys include {}.".format(key, valid_keys))


def _check_list(value, name: str) -> None:
    if not isinstance(value, (list, tuple)):
        raise ValueError("{} should be a list or a tuple. Given type: {}."
                         .format(name, type(value)))


# --- tensor pieces ------------------------------------------------------------------------
def checked_logits(logits, dimension: int):
    """`logits` as float32, checked to be `[D0, ..., DN, dimension]`."""
    return v1._check_logits_final_dim(logits, dimension, _LOGITS_DIM_MESSAGE)


def checked_labels(labels, logits, dimension: int):
    """Dense `labels` checked to match `logits` (`[D0, ..., DN]` gets a last axis)."""
    return v1._check_dense_labels(labels, logits, dimension, LABEL_MESSAGES)


def _weights(features, weight_column, logits, allow_per_logit: bool = False):
    """The example weights (1. without a weight column); features=None is taken as no
    features, where TF's heads fail on it."""
    from tensorweave.feature_column.numeric_columns import NumericColumn
    return v1._get_weights(features or {}, weight_column, logits, allow_per_logit,
                           column_type=NumericColumn, column_type_name="NumericColumn")


def checked_label_range(label_ids, n_classes: int, message: Optional[str] = None):
    """`label_ids`, asserted at run time to lie in [0, n_classes - 1]."""
    return v1._assert_range(label_ids, n_classes, message,
                            less_message="Labels must be <= n_classes - 1",
                            scope="check_label_range")


def _reduce_loss(unweighted_loss, weights, loss_reduction: str):
    """Keras's compute_weighted_loss: the weighted sum, or (sum_over_batch_size, auto)
    that sum over the number of loss elements."""
    reduction = tf.losses.Reduction.SUM if loss_reduction == SUM \
        else tf.losses.Reduction.SUM_OVER_BATCH_SIZE
    return tf.losses.compute_weighted_loss(unweighted_loss, weights=weights,
                                           reduction=reduction)


def update_with_broadcast_weights(metric, values, weights) -> None:
    """Updates a Keras Mean with float `values` weighted by `weights` broadcast to them."""
    values = tf.cast(values, tf.float32)
    if weights is not None:
        from tensorweave.losses.weights_broadcast import broadcast_weights
        weights = broadcast_weights(weights, values)
    metric.update_state(values=values, sample_weight=weights)


def create_train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops):
    """The train op of `loss`: the Keras `optimizer`'s update of `trainable_variables`,
    or `train_op_fn(loss)`, grouped with `update_ops`."""
    from tensorweave.keras.optimizer_v2 import OptimizerV2
    from tensorweave.keras.optimizers import legacy
    if update_ops is not None:
        _check_list(update_ops, "update_ops")
    with tf.name_scope(""), tf.name_scope("training"):
        if optimizer is not None:
            if train_op_fn is not None:
                raise ValueError("train_op_fn and optimizer cannot both be set.")
            if not isinstance(optimizer, (OptimizerV2, legacy.Optimizer)):
                raise ValueError("The given optimizer is not a tf.keras.optimizers.Optimizer "
                                 "instance. Received optimizer of type {}"
                                 .format(type(optimizer)))
            if trainable_variables is None:
                raise ValueError("trainable_variables cannot be None. Given {}"
                                 .format(trainable_variables))
            _check_list(trainable_variables, "trainable_variables")
            train_op = optimizer.get_updates(loss, trainable_variables)[0]
        elif train_op_fn is not None:
            train_op = train_op_fn(loss)
        else:
            raise ValueError("train_op_fn and optimizer cannot both be None.")
        return tf.group(train_op, *update_ops) if update_ops is not None else train_op


def loss_summaries(loss, regularization_losses, summary_key: Optional[Callable]) -> None:
    """The scalar summaries of a training step: the loss and the regularization loss,
    keyed by `summary_key(key)` (the head's name suffix) or by the plain keys."""
    summary_key = summary_key or (lambda key: key)
    with tf.name_scope(""):
        tf.summary.scalar(summary_key(MetricKeys.LOSS), loss)
        if regularization_losses is not None:
            tf.summary.scalar(summary_key(MetricKeys.LOSS_REGULARIZATION),
                              tf.add_n(regularization_losses))


# --- the heads ----------------------------------------------------------------------------
@tf_export("estimator.Head")
class Head(abc.ABC):
    """The interface of a head: from the logits of a model to its loss, predictions,
    metrics and `EstimatorSpec`. Subclasses define the abstract members and
    `create_estimator_spec`."""

    @property
    @abc.abstractmethod
    def name(self) -> Optional[str]:
        """The head's name: the suffix of its metric and summary keys (None: none)."""

    @property
    @abc.abstractmethod
    def logits_dimension(self) -> int:
        """The size of the last dimension of the logits."""

    @property
    @abc.abstractmethod
    def loss_reduction(self) -> str:
        """How the training loss is reduced over the batch (a Keras reduction)."""

    @abc.abstractmethod
    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """The reduced training loss, plus the sum of `regularization_losses`."""

    @abc.abstractmethod
    def predictions(self, logits, keys=None) -> Dict:
        """The predictions dict of `logits` (only `keys` where given)."""

    @abc.abstractmethod
    def metrics(self, regularization_losses=None) -> Dict:
        """New Keras metrics of evaluation, keyed by metric key."""

    @abc.abstractmethod
    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None) -> Dict:
        """`eval_metrics` with the update of this batch made."""

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None) -> EstimatorSpec:
        """The `EstimatorSpec` of `mode` for a model computing `logits`."""
        raise NotImplementedError("Subclasses of Head must implement "
                                  "`create_estimator_spec()` or "
                                  "_create_tpu_estimator_spec().")

    def _summary_key(self, key: str) -> str:
        return v1._summary_key(self.name, key)


class SingleHead(Head):
    """What the heads here share: the loss, the mode dispatch of create_estimator_spec
    and the name, weight column and reduction they keep.

    Subclasses define `logits_dimension`, `_label_ids`, `_unweighted_loss`,
    `_allow_per_logit_weights`, `predictions`, `_export_outputs`, `metrics` and
    `update_metrics`.
    """

    _allow_per_logit_weights = False

    def __init__(self, weight_column, loss_reduction: str, loss_fn: Optional[Callable],
                 name: Optional[str]):
        check_loss_reduction(loss_reduction)
        if loss_fn:
            check_loss_fn_args(loss_fn)
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name

    @property
    def name(self) -> Optional[str]:
        return self._name

    @property
    def loss_reduction(self) -> str:
        return self._loss_reduction

    def _unweighted_loss_and_weights(self, logits, label_ids, features):
        if self._loss_fn:
            unweighted = v1._call_loss_fn(self._loss_fn, label_ids, logits, features or {},
                                          self._loss_dimension)
        else:
            unweighted = self._unweighted_loss(logits, label_ids)
        weights = _weights(features, self._weight_column, logits,
                           self._allow_per_logit_weights)
        return unweighted, weights

    @property
    def _loss_dimension(self) -> int:
        return 1

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        with tf.name_scope("losses"):
            logits = checked_logits(logits, self.logits_dimension)
            label_ids = self._label_ids(logits, labels)
            unweighted, weights = self._unweighted_loss_and_weights(logits, label_ids,
                                                                    features)
            loss = _reduce_loss(unweighted, weights, self._loss_reduction)
            if regularization_losses is not None:
                loss = loss + tf.add_n(regularization_losses)
        return loss

    def _base_metrics(self, eval_metrics: Dict, features, logits, labels,
                      regularization_losses):
        """Updates the mean loss (and regularization loss) metric; returns the
        (logits, label ids, weights) the other metrics use."""
        logits = checked_logits(logits, self.logits_dimension)
        label_ids = self._label_ids(logits, labels)
        unweighted, weights = self._unweighted_loss_and_weights(logits, label_ids, features)
        eval_metrics[self._summary_key(MetricKeys.LOSS_MEAN)].update_state(
            values=unweighted, sample_weight=weights)
        if regularization_losses is not None:
            eval_metrics[self._summary_key(MetricKeys.LOSS_REGULARIZATION)].update_state(
                values=tf.add_n(regularization_losses))
        return logits, label_ids, weights

    def _mean_metrics(self, regularization_losses, *keys) -> Dict:
        """Keras Means of average_loss, `keys` and, with regularization, its loss."""
        means = [MetricKeys.LOSS_MEAN] + list(keys)
        if regularization_losses is not None:
            means.append(MetricKeys.LOSS_REGULARIZATION)
        return {self._summary_key(key): tf.keras.metrics.Mean(name=key) for key in means}

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None) -> EstimatorSpec:
        """The `EstimatorSpec` of `mode` for a model computing `logits`.

        Args:
          features: feature key -> Tensor (read for the weight column).
          mode: a `tf.estimator.ModeKeys` value.
          logits: a Tensor `[D0, ..., DN, logits_dimension]`.
          labels: the labels (needed in TRAIN and EVAL).
          optimizer: a Keras optimizer updating `trainable_variables` in TRAIN.
          trainable_variables: the variables `optimizer` updates.
          train_op_fn: used instead of `optimizer`: loss -> train op.
          update_ops: ops run with the train op (batch norm's moving averages).
          regularization_losses: scalar losses added to the training loss.

        Returns:
          An `EstimatorSpec`; in EVAL its metrics are this head's Keras metrics.

        Raises:
          ValueError: in TRAIN both or neither of `optimizer` and `train_op_fn`, or an
            optimizer that is not a Keras one; missing labels, or labels or logits of
            the wrong shape.
        """
        with tf.name_scope(self._name, "head"):
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode=mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            loss = self.loss(labels, logits, features=features, mode=mode,
                             regularization_losses=regularization_losses)
            if mode != ModeKeys.EVAL:
                train_op = create_train_op(loss, optimizer, trainable_variables,
                                           train_op_fn, update_ops)
        if mode == ModeKeys.EVAL:
            # as TF, the metrics are made and updated after the head's name scope
            metrics = self.update_metrics(self.metrics(regularization_losses), features,
                                          logits, labels,
                                          regularization_losses=regularization_losses)
            return EstimatorSpec(mode=mode, predictions=predictions, loss=loss,
                                 eval_metric_ops=metrics)
        loss_summaries(loss, regularization_losses, self._summary_key)
        return EstimatorSpec(mode=ModeKeys.TRAIN, predictions=predictions, loss=loss,
                             train_op=train_op)
