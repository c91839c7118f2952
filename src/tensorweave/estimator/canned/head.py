"""The v1 heads of TF1's canned estimators: given logits, a head builds the predictions,
the loss, the train op, the eval metrics and the export outputs of each mode.

  _Head                    the mode dispatch shared by every head (create_estimator_spec)
  binary_logistic_head     sigmoid cross entropy, logits [D0, ..., DN, 1]
  multi_class_head         sparse softmax cross entropy, logits [D0, ..., DN, n_classes]
  regression_head          mean squared error, logits [D0, ..., DN, label_dimension]

As in TF1 the training loss is reduced with `loss_reduction` (default SUM: the weighted
sum over the batch), labels and weights are checked against the logits' shape (statically
where the shapes are known: ValueError; else by assert ops: InvalidArgumentError at run
time), and the keys of predictions, metrics and export signatures are TF's.
"""
from __future__ import annotations

import collections
from typing import Callable, Dict, Optional, Sequence

import tensorweave as tf
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import EstimatorSpec, fn_args
from tensorweave.feature_column.base import DenseColumn
from tensorweave.feature_column.builder import _LazyBuilder

# TF's signature keys: tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY and the head's own
DEFAULT_SERVING_KEY = "serving_default"
CLASSIFY_SERVING_KEY = "classification"
REGRESS_SERVING_KEY = "regression"
PREDICT_SERVING_KEY = "predict"


class PredictionKeys:
    """The keys of a canned estimator's predictions dict (TF's PredictionKeys)."""
    CLASSES = "classes"
    CLASS_IDS = "class_ids"
    ALL_CLASSES = "all_classes"
    ALL_CLASS_IDS = "all_class_ids"
    LOGISTIC = "logistic"
    LOGITS = "logits"
    PREDICTIONS = "predictions"
    PROBABILITIES = "probabilities"


class MetricKeys:
    """The keys of a canned estimator's eval metrics (TF's MetricKeys)."""
    LOSS = "loss"
    LOSS_MEAN = "average_loss"
    LOSS_REGULARIZATION = "regularization_loss"
    ACCURACY = "accuracy"
    PRECISION = "precision"
    RECALL = "recall"
    ACCURACY_BASELINE = "accuracy_baseline"
    AUC = "auc"
    AUC_PR = "auc_precision_recall"
    LABEL_MEAN = "label/mean"
    PREDICTION_MEAN = "prediction/mean"
    ACCURACY_AT_THRESHOLD = "accuracy/positive_threshold_%g"
    PRECISION_AT_THRESHOLD = "precision/positive_threshold_%g"
    RECALL_AT_THRESHOLD = "recall/positive_threshold_%g"
    # the per-class metrics of a multi-label head, by class id or by label name
    PROBABILITY_MEAN_AT_CLASS = "probability_mean/class%d"
    AUC_AT_CLASS = "auc/class%d"
    AUC_PR_AT_CLASS = "auc_precision_recall/class%d"
    PROBABILITY_MEAN_AT_NAME = "probability_mean/%s"
    AUC_AT_NAME = "auc/%s"
    AUC_PR_AT_NAME = "auc_precision_recall/%s"


LossSpec = collections.namedtuple(
    "LossSpec", ["training_loss", "unreduced_loss", "weights", "processed_labels"])


def _summary_key(head_name: Optional[str], key: str) -> str:
    return "%s/%s" % (key, head_name) if head_name else key


# --- argument checks ----------------------------------------------------------------------
def _check_loss_reduction(loss_reduction: str) -> None:
    reduction = tf.losses.Reduction
    if loss_reduction not in reduction.all() or loss_reduction == reduction.NONE:
        raise ValueError("Invalid loss_reduction: {}".format(loss_reduction))


def _check_lossfn_args(loss_fn: Callable) -> None:
    """A loss_fn takes `labels` and `logits`, and optionally `features`."""
    args = fn_args(loss_fn)
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError("loss_fn must contain argument: {}. Given arguments: {}"
                             .format(required, args))
    invalid = list(set(args) - {"labels", "logits", "features"})
    if invalid:
        raise ValueError("loss_fn has unexpected args: {}".format(invalid))


def _check_vocabulary(label_vocabulary, error_class, expected: str) -> None:
    """TF's binary head raises TypeError ("a list or tuple"), its multi-class head
    ValueError ("a list or a tuple")."""
    if label_vocabulary is not None and not isinstance(label_vocabulary, (list, tuple)):
        raise error_class("label_vocabulary should be {}. Given type: {}"
                          .format(expected, type(label_vocabulary)))


# --- tensor checks ------------------------------------------------------------------------
# how the v1 heads word a static logits-dimension mismatch (the v2 heads leave out "=%s")
_V1_LOGITS_DIM_MESSAGE = "logits shape must be [D0, D1, ... DN, logits_dimension=%s], got %s."


def _check_logits_final_dim(logits, expected_dim: int,
                            static_message: str = _V1_LOGITS_DIM_MESSAGE):
    """`logits` as float32, checked to be `[D0, ..., DN, expected_dim]`.

    `static_message` % (expected_dim, static shape) is the ValueError of a static
    mismatch."""
    with tf.name_scope(None, "logits", (logits,)) as scope:
        logits = tf.cast(logits, tf.float32)
        logits_shape = tf.shape(logits)
        assert_rank = tf.debugging.assert_rank_at_least(
            logits, 2, data=[logits_shape],
            message="logits shape must be [D0, D1, ... DN, logits_dimension]")
        with tf.control_dependencies([assert_rank]):
            static = logits.shape
            if static.ndims is not None and static.dims[-1].value is not None:
                if static.dims[-1].value != expected_dim:
                    raise ValueError(static_message % (expected_dim, static))
                return logits
            assert_dim = tf.debugging.assert_equal(
                expected_dim, logits_shape[-1], data=[logits_shape],
                message="logits shape must be [D0, D1, ... DN, logits_dimension=%s]"
                        % (expected_dim,))
            with tf.control_dependencies([assert_dim]):
                return tf.identity(logits, name=scope)


LabelMessages = collections.namedtuple("LabelMessages", ["none", "mismatched_dim", "shape"])

# the v1 heads' wording; the v2 heads (tensorweave.estimator.heads) differ in a few words
_V1_LABEL_MESSAGES = LabelMessages(
    none="You must provide a labels Tensor. Given: None. Suggested troubleshooting steps: "
         "Check that your data contain your label feature. Check that your input_fn "
         "properly parses and returns labels.",
    mismatched_dim="Mismatched label shape. Expected labels dimension=%s.  Received %s. "
                   "Suggested Fix:If your classifier expects one-hot encoding label,check "
                   "your n_classes argument to the estimator and/or the shape of your "
                   "label. Otherwise, check the shape of your label.",
    shape="labels shape must be [D0, D1, ... DN, {}]. Suggested Fix: check your n_classes "
          "argument to the estimator and/or the shape of your label.")


def _check_dense_labels(labels, logits, expected_dim: int,
                        messages: LabelMessages = _V1_LABEL_MESSAGES):
    """`labels` checked to be `[D0, ..., DN, expected_dim]` for logits `[D0, ..., DN, _]`;
    labels `[D0, ..., DN]` are reshaped to `[D0, ..., DN, 1]`."""
    if labels is None:
        raise ValueError(messages.none)
    with tf.name_scope(None, "labels", (labels, logits)) as scope:
        labels = tf.convert_to_tensor_or_sparse_tensor(labels)
        if isinstance(labels, tf.SparseTensor):
            raise ValueError(
                "SparseTensor labels are not supported. labels must be a Tensor of shape "
                "[D0, D1, ..., DN, %s], e.g. [batch_size, %s]. Suggested Fix (1): Check the "
                "label feature in your data. Each example must contain %s value(s). If not, "
                "your choice of label was probably incorrect. Suggested Fix (2): In your "
                "input_fn, use tf.sparse_tensor_to_dense() to turn labels into a Tensor."
                % (expected_dim, expected_dim, expected_dim))
        if (labels.shape.ndims is not None and logits.shape.ndims is not None
                and labels.shape.ndims == logits.shape.ndims - 1):
            labels = tf.expand_dims(labels, -1)
        labels_shape = tf.shape(labels)
        logits_shape = tf.shape(logits)
        err_msg = messages.shape.format(expected_dim)
        assert_rank = tf.debugging.assert_rank_at_least(labels, 2, message=err_msg)
        with tf.control_dependencies([assert_rank]):
            static = labels.shape
            if static.ndims is not None:
                last = static.dims[-1].value
                if last is not None and last != expected_dim:
                    raise ValueError(messages.mismatched_dim % (expected_dim, last))
            expected_shape = tf.concat([logits_shape[:-1], [expected_dim]], axis=0)
            assert_dim = tf.debugging.assert_equal(
                expected_shape, labels_shape, message=err_msg,
                data=["expected_labels_shape: ", expected_shape,
                      "labels_shape: ", labels_shape])
            with tf.control_dependencies([assert_dim]):
                return tf.identity(labels, name=scope)


def _get_weights(features: Dict, weight_column, logits, allow_per_logit: bool = False,
                 column_type: type = DenseColumn, column_type_name: str = "_DenseColumn"):
    """The example weights of `weight_column` (1. without one), float32 and shaped to
    broadcast against the per-example loss `[D0, ..., DN, 1]`. A weight column that is
    no `column_type` is a TypeError (the v2 heads take numeric columns only)."""
    if allow_per_logit:
        err_msg = ("weights shape must be [D0, D1, ... DN], [D0, D1, ... DN, 1] or "
                   "[D0, D1, ... DN, logits_dimension]")
    else:
        err_msg = "weights shape must be [D0, D1, ... DN] or [D0, D1, ... DN, 1]"
    with tf.name_scope(None, "weights", values=tuple(features.values()) + (logits,)) as scope:
        if weight_column is None:
            return 1.
        if isinstance(weight_column, str):
            weight_column = tf.feature_column.numeric_column(key=weight_column, shape=(1,))
        if not isinstance(weight_column, column_type):
            raise TypeError("Weight column must be either a string or {}. Given type: {}."
                            .format(column_type_name, type(weight_column)))
        weights = weight_column._get_dense_tensor(_LazyBuilder(features))
        if not (weights.dtype.is_floating or weights.dtype.is_integer):
            raise ValueError("Weight column should be castable to float. Given dtype: {}"
                             .format(weights.dtype))
        weights = tf.cast(weights, tf.float32, name="weights")
        weights_shape = tf.shape(weights, name="weights_shape")
        logits_shape = tf.shape(logits, name="logits_shape")
        data = ["logits_shape: ", logits_shape, "weights_shape: ", weights_shape]
        if (weights.shape.ndims is not None and logits.shape.ndims is not None
                and weights.shape.ndims == logits.shape.ndims - 1):
            assert_dim = tf.debugging.assert_equal(logits_shape[:-1], weights_shape,
                                                   message=err_msg, data=data)
            with tf.control_dependencies([assert_dim]):
                return tf.expand_dims(weights, -1, name=scope)
        per_example_shape = tf.concat([logits_shape[:-1], [1]], axis=0)
        if allow_per_logit:
            condition = tf.reduce_any([
                tf.reduce_all(tf.equal(logits_shape, weights_shape)),
                tf.reduce_all(tf.equal(per_example_shape, weights_shape))])
            assert_dim = tf.debugging.Assert(condition, [err_msg] + data)
        else:
            assert_dim = tf.debugging.assert_equal(per_example_shape, weights_shape,
                                                   message=err_msg, data=data)
        with tf.control_dependencies([assert_dim]):
            return tf.identity(weights, name=scope)


def _assert_range(labels, n_classes: int, message: Optional[str] = None,
                  less_message: str = "Labels must <= n_classes - 1",
                  scope: str = "assert_range"):
    """`labels`, with asserts that each is in [0, n_classes - 1] (`message`, else
    `less_message` or "Labels must >= 0", when one fails)."""
    with tf.name_scope(None, scope, (labels,)):
        assert_less = tf.debugging.assert_less_equal(
            labels, tf.convert_to_tensor(n_classes - 1, dtype=labels.dtype),
            message=message or less_message)
        assert_greater = tf.debugging.assert_non_negative(
            labels, message=message or "Labels must >= 0")
        with tf.control_dependencies((assert_less, assert_greater)):
            return tf.identity(labels)


def _call_loss_fn(loss_fn: Callable, labels, logits, features: Dict, expected_dim: int):
    """`loss_fn(labels, logits[, features])`, asserted to be `[D0, ..., DN, expected_dim]`."""
    kwargs = {"features": features} if "features" in fn_args(loss_fn) else {}
    with tf.name_scope(None, "call_loss_fn", values=[labels, logits] + list(features.values())):
        unweighted_loss = loss_fn(labels=labels, logits=logits, **kwargs)
        logits_shape = tf.shape(logits, name="logits_shape")
        expected_shape = tf.concat([logits_shape[:-1], [expected_dim]], axis=0,
                                   name="expected_loss_shape")
        loss_shape = tf.shape(unweighted_loss, name="loss_shape")
        check = tf.debugging.Assert(
            tf.reduce_all(tf.equal(loss_shape, expected_shape)),
            data=["loss_fn must return Tensor of shape [D0, D1, ... DN, {}]. "
                  .format(expected_dim), "logits_shape: ", logits_shape,
                  "loss_shape: ", loss_shape], name="check_loss_shape")
        with tf.control_dependencies([check]):
            return tf.identity(unweighted_loss)


# --- shared pieces of the classification heads --------------------------------------------
def class_ids_of(labels, label_vocabulary):
    """A multi-class head's labels as class ids: integer labels as they are, string
    labels looked up in `label_vocabulary` (TF's checks of the labels' dtype).

    Raises:
      ValueError: integer labels were expected and are not, or string labels were.
    """
    if label_vocabulary is None:
        if not labels.dtype.is_integer:
            raise ValueError("Labels dtype should be integer. Instead got {}."
                             .format(labels.dtype))
        return labels
    if labels.dtype != tf.string:
        raise ValueError("Labels dtype should be string if there is a vocabulary. "
                         "Instead got {}".format(labels.dtype))
    return _class_id_lookup(labels, label_vocabulary)


def _class_id_lookup(labels, label_vocabulary):
    """String labels -> their position in the vocabulary (-1 when absent, which
    `_assert_range` then rejects), TF's index_table_from_tensor."""
    vocabulary = tuple(label_vocabulary)
    initializer = tf.lookup.KeyValueTensorInitializer(
        vocabulary, list(range(len(vocabulary))), tf.string, tf.int64)
    return tf.lookup.StaticHashTable(initializer, -1, name="class_id_lookup").lookup(labels)


def _class_names(class_ids, label_vocabulary):
    """int64 class ids -> their vocabulary strings ("UNK" out of range), TF's
    index_to_string_table_from_tensor; without a vocabulary the ids as strings."""
    if not label_vocabulary:
        return tf.strings.as_string(class_ids, name="str_classes")
    initializer = tf.lookup.KeyValueTensorInitializer(
        list(range(len(label_vocabulary))), list(label_vocabulary), tf.int64, tf.string)
    table = tf.lookup.StaticHashTable(initializer, "UNK", name="class_string_lookup")
    return table.lookup(class_ids)


def _tile_per_example(logits, row):
    """`row` (a 1-D list or tensor) repeated once per example: `[batch, len(row)]`."""
    batch_size = tf.shape(logits)[0]
    return tf.tile(tf.expand_dims(row, 0), [batch_size, 1])


def _all_classes(logits, n_classes: int, label_vocabulary):
    row = label_vocabulary if label_vocabulary else tf.strings.as_string(tf.range(n_classes))
    return _tile_per_example(logits, row)


def _classification_output(predictions: Dict, n_classes: int, label_vocabulary):
    from tensorweave.estimator import export
    return export.ClassificationOutput(
        scores=predictions[PredictionKeys.PROBABILITIES],
        classes=_all_classes(predictions[PredictionKeys.PROBABILITIES], n_classes,
                             label_vocabulary))


def _float_metric_input(values, weights, name: str):
    """`values` as float32 and `weights` broadcast to them, for tf.metrics.mean/auc."""
    values = tf.cast(values, tf.float32, name=name)
    if weights is not None:
        from tensorweave.losses.weights_broadcast import broadcast_weights
        weights = broadcast_weights(weights, values)
    return values, weights


def _mean_metric(values, weights, name: str, default_name: str):
    with tf.name_scope(name, default_name, (values, weights)) as scope:
        values, weights = _float_metric_input(values, weights, default_name.split("_")[0])
        return tf.metrics.mean(values, weights=weights, name=scope)


def _auc(labels, predictions, weights, curve: str, name: str):
    with tf.name_scope(name, "auc", (predictions, labels, weights)) as scope:
        predictions, weights = _float_metric_input(predictions, weights, "predictions")
        return tf.metrics.auc(labels=labels, predictions=predictions, weights=weights,
                              curve=curve, name=scope)


def _append_update_ops(train_op):
    """`train_op` grouped with the UPDATE_OPS (batch norm's moving averages)."""
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return tf.group(train_op, *update_ops) if update_ops else train_op


# --- the heads ----------------------------------------------------------------------------
class _Head:
    """What every v1 head shares: `create_estimator_spec` runs the mode dispatch and the
    subclass supplies the predictions, the loss, the metrics and the export outputs.

    Subclasses set `_name`, `_weight_column`, `_loss_reduction`, `_loss_fn` and define
    `logits_dimension`, `_predictions`, `create_loss`, `_eval_metric_ops`, `_export_outputs`.
    """

    @property
    def name(self) -> Optional[str]:
        return self._name

    def create_estimator_spec(self, features: Dict, mode: str, logits, labels=None,
                              optimizer=None, train_op_fn: Optional[Callable] = None,
                              regularization_losses: Optional[Sequence] = None
                              ) -> EstimatorSpec:
        """The `EstimatorSpec` of `mode` for a model computing `logits`.

        Args:
          features: feature key -> Tensor or SparseTensor (read for the weight column).
          mode: a `tf.estimator.ModeKeys` value.
          logits: a Tensor `[D0, ..., DN, logits_dimension]`.
          labels: the labels (needed in TRAIN and EVAL).
          optimizer: a `tf.train.Optimizer`; in TRAIN the train op minimizes the loss
            with it and increments the global step.
          train_op_fn: used instead of `optimizer`: loss -> train op.
          regularization_losses: scalar losses added to the training loss.

        Returns:
          An `EstimatorSpec`.

        Raises:
          ValueError: in TRAIN both or neither of `optimizer` and `train_op_fn`, missing
            labels, or labels or logits of the wrong shape.
        """
        with tf.name_scope(self._name, "head"):
            logits, predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode=mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            loss_spec = self.create_loss(features=features, mode=mode, logits=logits,
                                         labels=labels)
            if regularization_losses:
                regularization_loss = tf.add_n(regularization_losses)
                loss = tf.add_n([loss_spec.training_loss, regularization_loss])
            else:
                regularization_loss = None
                loss = loss_spec.training_loss
            if mode == ModeKeys.EVAL:
                metrics = self._eval_metric_ops(labels, predictions, loss_spec)
                if regularization_loss is not None:
                    metrics[_summary_key(self._name, MetricKeys.LOSS_REGULARIZATION)] = (
                        tf.metrics.mean(regularization_loss,
                                        name=MetricKeys.LOSS_REGULARIZATION))
                return EstimatorSpec(mode=mode, predictions=predictions, loss=loss,
                                     eval_metric_ops=metrics)
            train_op = self._train_op(loss, optimizer, train_op_fn)
            mean_loss = None
            if self._loss_reduction == tf.losses.Reduction.SUM:
                # the loss per unit of example weight, comparable across batch sizes
                weight_sum = tf.reduce_sum(loss_spec.weights
                                           * tf.ones_like(loss_spec.unreduced_loss))
                mean_loss = loss_spec.training_loss / weight_sum
        with tf.name_scope(""):
            tf.summary.scalar(_summary_key(self._name, MetricKeys.LOSS), loss)
            if mean_loss is not None:
                tf.summary.scalar(_summary_key(self._name, MetricKeys.LOSS_MEAN), mean_loss)
            if regularization_loss is not None:
                tf.summary.scalar(_summary_key(self._name, MetricKeys.LOSS_REGULARIZATION),
                                  regularization_loss)
        return EstimatorSpec(mode=ModeKeys.TRAIN, predictions=predictions, loss=loss,
                             train_op=train_op)

    @staticmethod
    def _train_op(loss, optimizer, train_op_fn):
        if optimizer is not None:
            if train_op_fn is not None:
                raise ValueError("train_op_fn and optimizer cannot both be set.")
            train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        elif train_op_fn is not None:
            train_op = train_op_fn(loss)
        else:
            raise ValueError("train_op_fn and optimizer cannot both be None.")
        return _append_update_ops(train_op)

    def _weighted_loss(self, features, logits, unweighted_loss, labels,
                       allow_per_logit: bool = False) -> LossSpec:
        weights = _get_weights(features, self._weight_column, logits, allow_per_logit)
        training_loss = tf.losses.compute_weighted_loss(
            unweighted_loss, weights=weights, reduction=self._loss_reduction)
        return LossSpec(training_loss=training_loss, unreduced_loss=unweighted_loss,
                        weights=weights, processed_labels=labels)


class _BinaryLogisticHead(_Head):
    """See `binary_logistic_head`."""

    def __init__(self, weight_column=None, thresholds=(), label_vocabulary=None,
                 loss_reduction: str = "weighted_sum", loss_fn=None,
                 name: Optional[str] = None):
        self._weight_column = weight_column
        self._thresholds = tuple(thresholds) if thresholds else ()
        self._label_vocabulary = label_vocabulary
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name

    logits_dimension = property(lambda self: 1)

    def _predictions(self, logits):
        keys = PredictionKeys
        with tf.name_scope(None, "predictions", (logits,)):
            logits = _check_logits_final_dim(logits, 1)
            logistic = tf.sigmoid(logits, name=keys.LOGISTIC)
            # class 0 has logit 0: softmax over [0, logit] is [1 - sigmoid, sigmoid]
            two_class_logits = tf.concat((tf.zeros_like(logits), logits), axis=-1,
                                         name="two_class_logits")
            class_ids = tf.expand_dims(
                tf.argmax(two_class_logits, axis=-1, name=keys.CLASS_IDS), axis=-1)
            return logits, {
                keys.LOGITS: logits,
                keys.LOGISTIC: logistic,
                keys.PROBABILITIES: tf.nn.softmax(two_class_logits, name=keys.PROBABILITIES),
                keys.CLASS_IDS: class_ids,
                keys.CLASSES: _class_names(class_ids, self._label_vocabulary),
                keys.ALL_CLASS_IDS: _tile_per_example(logits, tf.range(2)),
                keys.ALL_CLASSES: _all_classes(logits, 2, self._label_vocabulary),
            }

    def _export_outputs(self, predictions: Dict) -> Dict:
        from tensorweave.estimator import export
        classification = _classification_output(predictions, 2, self._label_vocabulary)
        return {DEFAULT_SERVING_KEY: classification, CLASSIFY_SERVING_KEY: classification,
                REGRESS_SERVING_KEY: export.RegressionOutput(
                    value=predictions[PredictionKeys.LOGISTIC]),
                PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def create_loss(self, features: Dict, mode: str, logits, labels) -> LossSpec:
        """The sigmoid cross entropy of `logits` against labels in [0, 1] (or strings of
        the vocabulary), weighted and reduced.

        Returns:
          A `LossSpec`.
        """
        del mode  # the loss is the same in every mode
        logits = tf.convert_to_tensor(logits)
        labels = _check_dense_labels(labels, logits, 1)
        if self._label_vocabulary is not None:
            labels = _class_id_lookup(labels, self._label_vocabulary)
        labels = _assert_range(tf.cast(labels, tf.float32), 2)
        if self._loss_fn:
            unweighted_loss = _call_loss_fn(self._loss_fn, labels, logits, features, 1)
        else:
            unweighted_loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                      logits=logits)
        return self._weighted_loss(features, logits, unweighted_loss, labels)

    def _eval_metric_ops(self, raw_labels, predictions: Dict, loss_spec: LossSpec) -> Dict:
        keys = MetricKeys
        labels, weights = loss_spec.processed_labels, loss_spec.weights
        logistic = predictions[PredictionKeys.LOGISTIC]
        class_ids = predictions[PredictionKeys.CLASS_IDS]
        with tf.name_scope(None, "metrics", (labels, logistic, class_ids, weights)):
            labels_mean = _mean_metric(labels, weights, keys.LABEL_MEAN, "labels_mean")
            with tf.name_scope(None, "accuracy_baseline", labels_mean):
                # always predicting the more frequent class
                mean_value, mean_update = labels_mean
                baseline = (tf.maximum(mean_value, 1. - mean_value, name="value"),
                            tf.maximum(mean_update, 1 - mean_update, name="update_op"))
            metrics = {
                keys.LOSS_MEAN: tf.metrics.mean(loss_spec.unreduced_loss, weights=weights,
                                                name=keys.LOSS_MEAN),
                keys.ACCURACY: tf.metrics.accuracy(labels=labels, predictions=class_ids,
                                                   weights=weights, name=keys.ACCURACY),
                keys.PRECISION: tf.metrics.precision(labels=labels, predictions=class_ids,
                                                     weights=weights, name=keys.PRECISION),
                keys.RECALL: tf.metrics.recall(labels=labels, predictions=class_ids,
                                               weights=weights, name=keys.RECALL),
                keys.PREDICTION_MEAN: _mean_metric(logistic, weights, keys.PREDICTION_MEAN,
                                                   "predictions_mean"),
                keys.LABEL_MEAN: labels_mean,
                keys.ACCURACY_BASELINE: baseline,
                keys.AUC: _auc(labels, logistic, weights, "ROC", keys.AUC),
                keys.AUC_PR: _auc(labels, logistic, weights, "PR", keys.AUC_PR),
            }
            for threshold in self._thresholds:
                metrics.update(_threshold_metrics(labels, logistic, weights, threshold))
        return {_summary_key(self._name, k): v for k, v in metrics.items()}


def _threshold_metrics(labels, logistic, weights, threshold: float) -> Dict:
    """Accuracy, precision and recall of predicting class 1 when logistic >= threshold."""
    keys = MetricKeys
    metrics = {}
    name = keys.ACCURACY_AT_THRESHOLD % threshold
    with tf.name_scope(None, name, (logistic, labels, weights)) as scope:
        metrics[name] = tf.metrics.accuracy(
            labels=labels, predictions=tf.to_float(tf.greater_equal(logistic, threshold)),
            weights=weights, name=scope)
    for key, metric in ((keys.PRECISION_AT_THRESHOLD, tf.metrics.precision_at_thresholds),
                        (keys.RECALL_AT_THRESHOLD, tf.metrics.recall_at_thresholds)):
        name = key % threshold
        with tf.name_scope(None, name, (logistic, labels, weights)) as scope:
            value, update = metric(labels=labels, predictions=logistic,
                                   thresholds=(threshold,), weights=weights, name=scope)
            metrics[name] = (tf.squeeze(value), tf.squeeze(update))
    return metrics


class _MultiClassHead(_Head):
    """See `multi_class_head`."""

    def __init__(self, n_classes: int, weight_column=None, label_vocabulary=None,
                 loss_reduction: str = "weighted_sum", loss_fn=None,
                 name: Optional[str] = None):
        if n_classes is None:
            raise ValueError("n_classes cannot be None")
        if isinstance(n_classes, int) and n_classes <= 2:
            raise ValueError("n_classes must be > 2: %s." % n_classes)
        self._n_classes = n_classes
        self._weight_column = weight_column
        self._label_vocabulary = label_vocabulary
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._name = name

    logits_dimension = property(lambda self: self._n_classes)

    def _predictions(self, logits):
        keys = PredictionKeys
        logits = _check_logits_final_dim(logits, self._n_classes)
        with tf.name_scope(None, "predictions", (logits,)):
            class_ids = tf.expand_dims(tf.argmax(logits, axis=-1, name=keys.CLASS_IDS), -1)
            return logits, {
                keys.LOGITS: logits,
                keys.PROBABILITIES: tf.nn.softmax(logits, name=keys.PROBABILITIES),
                keys.CLASS_IDS: class_ids,
                keys.CLASSES: _class_names(class_ids, self._label_vocabulary),
                keys.ALL_CLASS_IDS: _tile_per_example(logits, tf.range(self._n_classes)),
                keys.ALL_CLASSES: _all_classes(logits, self._n_classes,
                                               self._label_vocabulary),
            }

    def _export_outputs(self, predictions: Dict) -> Dict:
        from tensorweave.estimator import export
        classification = _classification_output(predictions, self._n_classes,
                                                self._label_vocabulary)
        return {DEFAULT_SERVING_KEY: classification, CLASSIFY_SERVING_KEY: classification,
                PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def _label_ids(self, labels):
        return _assert_range(class_ids_of(labels, self._label_vocabulary), self._n_classes)

    def create_loss(self, features: Dict, mode: str, logits, labels) -> LossSpec:
        """The sparse softmax cross entropy of `logits` against class ids in [0,
        n_classes) (or strings of the vocabulary), weighted and reduced.

        Returns:
          A `LossSpec`.
        """
        del mode  # the loss is the same in every mode
        logits = tf.convert_to_tensor(logits)
        labels = _check_dense_labels(labels, logits, 1)
        label_ids = self._label_ids(labels)
        if self._loss_fn:
            unweighted_loss = _call_loss_fn(self._loss_fn, label_ids, logits, features, 1)
        else:
            unweighted_loss = tf.expand_dims(tf.losses.sparse_softmax_cross_entropy(
                labels=label_ids, logits=logits, reduction=tf.losses.Reduction.NONE), -1)
        return self._weighted_loss(features, logits, unweighted_loss, label_ids)

    def _eval_metric_ops(self, raw_labels, predictions: Dict, loss_spec: LossSpec) -> Dict:
        keys = MetricKeys
        labels, weights = loss_spec.processed_labels, loss_spec.weights
        class_ids = predictions[PredictionKeys.CLASS_IDS]
        with tf.name_scope(None, "metrics", (labels, class_ids, weights)):
            metrics = {
                keys.LOSS_MEAN: tf.metrics.mean(loss_spec.unreduced_loss, weights=weights,
                                                name=keys.LOSS_MEAN),
                keys.ACCURACY: tf.metrics.accuracy(labels=labels, predictions=class_ids,
                                                   weights=weights, name=keys.ACCURACY),
            }
        return {_summary_key(self._name, k): v for k, v in metrics.items()}


class _RegressionHead(_Head):
    """See `regression_head`."""

    def __init__(self, label_dimension: int = 1, weight_column=None,
                 loss_reduction: str = "weighted_sum", loss_fn=None, inverse_link_fn=None,
                 name: Optional[str] = None):
        if label_dimension < 1:
            raise ValueError("Invalid label_dimension %s." % label_dimension)
        self._logits_dimension = label_dimension
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction
        self._loss_fn = loss_fn
        self._inverse_link_fn = inverse_link_fn
        self._name = name

    logits_dimension = property(lambda self: self._logits_dimension)

    def _predictions(self, logits):
        logits = _check_logits_final_dim(logits, self._logits_dimension)
        if self._inverse_link_fn:
            return logits, {PredictionKeys.PREDICTIONS: self._inverse_link_fn(logits),
                            PredictionKeys.LOGITS: logits}
        return logits, {PredictionKeys.PREDICTIONS: logits}

    def _export_outputs(self, predictions: Dict) -> Dict:
        from tensorweave.estimator import export
        regression = export.RegressionOutput(value=predictions[PredictionKeys.PREDICTIONS])
        return {DEFAULT_SERVING_KEY: regression, REGRESS_SERVING_KEY: regression,
                PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def create_loss(self, features: Dict, mode: str, logits, labels) -> LossSpec:
        """The squared error of `logits` against the labels, weighted (per example or
        per logit) and reduced.

        Returns:
          A `LossSpec`.
        """
        del mode  # the loss is the same in every mode
        logits = tf.convert_to_tensor(logits)
        labels = tf.cast(_check_dense_labels(labels, logits, self._logits_dimension),
                         tf.float32)
        if self._loss_fn:
            unweighted_loss = _call_loss_fn(self._loss_fn, labels, logits, features,
                                            self._logits_dimension)
        else:
            unweighted_loss = tf.losses.mean_squared_error(
                labels=labels, predictions=logits, reduction=tf.losses.Reduction.NONE)
        return self._weighted_loss(features, logits, unweighted_loss, labels,
                                   allow_per_logit=True)

    def _eval_metric_ops(self, raw_labels, predictions: Dict, loss_spec: LossSpec) -> Dict:
        keys = MetricKeys
        weights = loss_spec.weights
        # TF averages the labels as given to the head (before the shape check's reshape)
        metrics = {
            keys.LOSS_MEAN: tf.metrics.mean(loss_spec.unreduced_loss, weights=weights),
            keys.PREDICTION_MEAN: _mean_metric(predictions[PredictionKeys.PREDICTIONS],
                                               weights, keys.PREDICTION_MEAN,
                                               "predictions_mean"),
            keys.LABEL_MEAN: tf.metrics.mean(raw_labels, weights=weights),
        }
        return {_summary_key(self._name, k): v for k, v in metrics.items()}


# --- factories ----------------------------------------------------------------------------
def binary_logistic_head(weight_column=None, thresholds: Optional[Sequence[float]] = None,
                         label_vocabulary=None, loss_reduction: str = "weighted_sum",
                         loss_fn: Optional[Callable] = None,
                         name: Optional[str] = None) -> _Head:
    """A head for binary classification with the sigmoid cross entropy loss.

    Args:
      weight_column: a feature key or numeric column of per-example weights.
      thresholds: floats in (0, 1); each adds accuracy, precision and recall metrics of
        predicting class 1 when the logistic is at least the threshold.
      label_vocabulary: the two label strings; without it labels are floats in [0, 1].
      loss_reduction: a `tf.losses.Reduction` other than NONE (default SUM).
      loss_fn: (labels, logits[, features]) -> unreduced loss `[D0, ..., DN, 1]`.
      name: suffix of the metric and summary keys, and the head's name scope.

    Returns:
      The head.

    Raises:
      ValueError: a threshold outside (0, 1), a bad `loss_reduction` or `loss_fn`.
      TypeError: `label_vocabulary` is not a list or tuple.
    """
    thresholds = tuple(thresholds) if thresholds else ()
    _check_vocabulary(label_vocabulary, TypeError, "a list or tuple")
    for threshold in thresholds:
        if threshold <= 0.0 or threshold >= 1.0:
            raise ValueError("thresholds not in (0, 1): {}.".format((thresholds,)))
    _check_loss_reduction(loss_reduction)
    if loss_fn:
        _check_lossfn_args(loss_fn)
    return _BinaryLogisticHead(weight_column, thresholds, label_vocabulary, loss_reduction,
                               loss_fn, name)


def multi_class_head(n_classes: int, weight_column=None, label_vocabulary=None,
                     loss_reduction: str = "weighted_sum", loss_fn: Optional[Callable] = None,
                     name: Optional[str] = None) -> _Head:
    """A head for classification into `n_classes` > 2 classes with the sparse softmax
    cross entropy loss.

    Args:
      n_classes: the number of classes, more than 2.
      weight_column, loss_reduction, loss_fn, name: see `binary_logistic_head`.
      label_vocabulary: the class strings; without it labels are integer class ids.

    Returns:
      The head.

    Raises:
      ValueError: `n_classes` <= 2, a bad `label_vocabulary`, `loss_reduction` or
        `loss_fn`.
    """
    _check_vocabulary(label_vocabulary, ValueError, "a list or a tuple")
    _check_loss_reduction(loss_reduction)
    if loss_fn:
        _check_lossfn_args(loss_fn)
    return _MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction,
                           loss_fn, name)


def regression_head(weight_column=None, label_dimension: int = 1,
                    loss_reduction: str = "weighted_sum", loss_fn: Optional[Callable] = None,
                    inverse_link_fn: Optional[Callable] = None,
                    name: Optional[str] = None) -> _Head:
    """A head for regression with the mean squared error loss.

    Args:
      weight_column, loss_reduction, loss_fn, name: see `binary_logistic_head`
        (weights may also be per logit, `[D0, ..., DN, label_dimension]`).
      label_dimension: the number of values predicted per example.
      inverse_link_fn: logits -> predicted values (the identity without it).

    Returns:
      The head.

    Raises:
      ValueError: `label_dimension` < 1, a bad `loss_reduction` or `loss_fn`.
    """
    _check_loss_reduction(loss_reduction)
    if loss_fn:
        _check_lossfn_args(loss_fn)
    return _RegressionHead(label_dimension, weight_column, loss_reduction, loss_fn,
                           inverse_link_fn, name)


def binary_or_multi_class_head(n_classes: int, weight_column, label_vocabulary,
                               loss_reduction: str) -> _Head:
    """The head of the canned classifiers: binary for 2 classes, else multi-class."""
    if n_classes == 2:
        return binary_logistic_head(weight_column=weight_column,
                                    label_vocabulary=label_vocabulary,
                                    loss_reduction=loss_reduction)
    return multi_class_head(n_classes, weight_column=weight_column,
                            label_vocabulary=label_vocabulary, loss_reduction=loss_reduction)
