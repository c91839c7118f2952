"""The classification heads: BinaryClassHead (sigmoid), MultiClassHead (softmax) and
MultiLabelHead (one sigmoid per class)."""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import tensorweave as tf
from tensorweave.estimator.canned import head as v1
from tensorweave.estimator.canned.head import MetricKeys, PredictionKeys
from tensorweave.estimator.canned.heads_v2.base import (
    LABEL_MESSAGES, SUM_OVER_BATCH_SIZE, SingleHead, check_loss_fn_args, check_prediction_keys,
    check_vocabulary, checked_labels, checked_label_range, checked_logits,
    update_with_broadcast_weights)
from tensorweave.framework.api_export import tf_export


class _ClassHead(SingleHead):
    """The classification heads: label ids from labels (by `label_vocabulary`), class
    predictions, and the Classify export."""

    def __init__(self, n_classes: int, weight_column, label_vocabulary, loss_reduction,
                 loss_fn, name):
        check_vocabulary(label_vocabulary)
        super().__init__(weight_column, loss_reduction, loss_fn, name)
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary

    def _class_predictions(self, predictions: Dict, keys, logits, class_logits) -> Dict:
        """Adds the class ids, classes and all-class keys (of `keys`) to `predictions`;
        `class_logits` has one column per class."""
        if PredictionKeys.CLASS_IDS in keys or PredictionKeys.CLASSES in keys:
            class_ids = tf.expand_dims(
                tf.argmax(class_logits, axis=-1, name=PredictionKeys.CLASS_IDS), -1)
            if PredictionKeys.CLASS_IDS in keys:
                predictions[PredictionKeys.CLASS_IDS] = class_ids
            if PredictionKeys.CLASSES in keys:
                predictions[PredictionKeys.CLASSES] = v1._class_names(
                    class_ids, self._label_vocabulary)
        if PredictionKeys.ALL_CLASS_IDS in keys:
            predictions[PredictionKeys.ALL_CLASS_IDS] = v1._tile_per_example(
                logits, tf.range(self._n_classes))
        if PredictionKeys.ALL_CLASSES in keys:
            predictions[PredictionKeys.ALL_CLASSES] = v1._all_classes(
                logits, self._n_classes, self._label_vocabulary)
        return predictions

    def _prediction_keys(self, keys, valid_keys) -> Sequence[str]:
        if keys:
            check_prediction_keys(keys, valid_keys)
            return keys
        return valid_keys

    _thresholds = ()

    def _threshold_metric_keys(self, threshold: float):
        return tuple(self._summary_key(key_format % threshold) for key_format in (
            MetricKeys.ACCURACY_AT_THRESHOLD, MetricKeys.PRECISION_AT_THRESHOLD,
            MetricKeys.RECALL_AT_THRESHOLD))

    def _threshold_metrics(self) -> Dict:
        """Accuracy, precision and recall at each of the head's thresholds."""
        metrics = {}
        for t in self._thresholds:
            accuracy, precision, recall = self._threshold_metric_keys(t)
            metrics[accuracy] = tf.keras.metrics.BinaryAccuracy(name=accuracy, threshold=t)
            metrics[precision] = tf.keras.metrics.Precision(name=precision, thresholds=t)
            metrics[recall] = tf.keras.metrics.Recall(name=recall, thresholds=t)
        return metrics

    def _update_threshold_metrics(self, eval_metrics: Dict, labels, probabilities,
                                  weights) -> None:
        for t in self._thresholds:
            for key in self._threshold_metric_keys(t):
                eval_metrics[key].update_state(y_true=labels, y_pred=probabilities,
                                               sample_weight=weights)


@tf_export("estimator.BinaryClassHead")
class BinaryClassHead(_ClassHead):
    """A head for binary classification by sigmoid cross entropy.

    Args:
      weight_column: a string or NumericColumn of example weights.
      thresholds: probabilities in (0, 1) at which extra accuracy, precision and
        recall metrics are computed.
      label_vocabulary: the two label strings (else labels are 0 or 1).
      loss_reduction: a Keras reduction other than 'none'.
      loss_fn: `loss_fn(labels, logits[, features])` -> the unreduced loss.
      name: the suffix of metric and summary keys.

    Raises:
      ValueError: a bad vocabulary, threshold, reduction or loss_fn.
    """

    def __init__(self, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction: str = SUM_OVER_BATCH_SIZE, loss_fn=None,
                 name: Optional[str] = None):
        check_vocabulary(label_vocabulary)
        thresholds = tuple(thresholds) if thresholds else ()
        for threshold in thresholds:
            if threshold <= 0.0 or threshold >= 1.0:
                raise ValueError("thresholds not in (0, 1): {}.".format((thresholds,)))
        super().__init__(2, weight_column, label_vocabulary, loss_reduction, loss_fn, name)
        self._thresholds = thresholds

    logits_dimension = property(lambda self: 1)

    def _label_ids(self, logits, labels):
        labels = checked_labels(labels, logits, 1)
        if self._label_vocabulary is not None:
            labels = v1._class_id_lookup(labels, self._label_vocabulary)
        return checked_label_range(tf.cast(labels, tf.float32), 2)

    def _unweighted_loss(self, logits, label_ids):
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=label_ids, logits=logits)

    def predictions(self, logits, keys=None) -> Dict:
        valid = [PredictionKeys.LOGITS, PredictionKeys.LOGISTIC,
                 PredictionKeys.PROBABILITIES, PredictionKeys.CLASS_IDS,
                 PredictionKeys.CLASSES, PredictionKeys.ALL_CLASS_IDS,
                 PredictionKeys.ALL_CLASSES]
        keys = self._prediction_keys(keys, valid)
        logits = checked_logits(logits, 1)
        predictions = {}
        with tf.name_scope("predictions"):
            if PredictionKeys.LOGITS in keys:
                predictions[PredictionKeys.LOGITS] = logits
            if PredictionKeys.LOGISTIC in keys:
                predictions[PredictionKeys.LOGISTIC] = tf.sigmoid(
                    logits, name=PredictionKeys.LOGISTIC)
            two_class_logits = tf.concat((tf.zeros_like(logits), logits), axis=-1,
                                         name="two_class_logits")
            if PredictionKeys.PROBABILITIES in keys:
                predictions[PredictionKeys.PROBABILITIES] = tf.nn.softmax(
                    two_class_logits, name=PredictionKeys.PROBABILITIES)
            return self._class_predictions(predictions, keys, logits, two_class_logits)

    def _export_outputs(self, predictions: Dict) -> Dict:
        from tensorweave.estimator import export
        classification = v1._classification_output(predictions, 2, self._label_vocabulary)
        return {v1.DEFAULT_SERVING_KEY: classification,
                v1.CLASSIFY_SERVING_KEY: classification,
                v1.REGRESS_SERVING_KEY: export.RegressionOutput(
                    predictions[PredictionKeys.LOGISTIC]),
                v1.PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def metrics(self, regularization_losses=None) -> Dict:
        M = tf.keras.metrics
        with tf.name_scope("metrics"):
            metrics = self._mean_metrics(regularization_losses, MetricKeys.PREDICTION_MEAN,
                                         MetricKeys.LABEL_MEAN,
                                         MetricKeys.ACCURACY_BASELINE)
            metrics[self._summary_key(MetricKeys.ACCURACY)] = M.Accuracy(
                name=MetricKeys.ACCURACY)
            metrics[self._summary_key(MetricKeys.PRECISION)] = M.Precision(
                name=MetricKeys.PRECISION)
            metrics[self._summary_key(MetricKeys.RECALL)] = M.Recall(name=MetricKeys.RECALL)
            metrics[self._summary_key(MetricKeys.AUC)] = M.AUC(name=MetricKeys.AUC)
            metrics[self._summary_key(MetricKeys.AUC_PR)] = M.AUC(curve="PR",
                                                                   name=MetricKeys.AUC_PR)
            metrics.update(self._threshold_metrics())
        return metrics

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None) -> Dict:
        class_ids = self.predictions(logits)[PredictionKeys.CLASS_IDS]
        logits, labels, weights = self._base_metrics(eval_metrics, features, logits, labels,
                                                     regularization_losses)
        key = self._summary_key
        for name in (MetricKeys.ACCURACY, MetricKeys.PRECISION, MetricKeys.RECALL):
            eval_metrics[key(name)].update_state(y_true=labels, y_pred=class_ids,
                                                 sample_weight=weights)
        logistic = self.predictions(logits, [PredictionKeys.LOGISTIC])[
            PredictionKeys.LOGISTIC]
        update_with_broadcast_weights(eval_metrics[key(MetricKeys.PREDICTION_MEAN)],
                                       logistic, weights)
        update_with_broadcast_weights(eval_metrics[key(MetricKeys.LABEL_MEAN)], labels,
                                       weights)
        self._update_accuracy_baseline(eval_metrics)
        _, auc_weights = v1._float_metric_input(logistic, weights, "predictions")
        for name in (MetricKeys.AUC, MetricKeys.AUC_PR):
            eval_metrics[key(name)].update_state(y_true=labels, y_pred=logistic,
                                                 sample_weight=auc_weights)
        self._update_threshold_metrics(eval_metrics, labels, logistic, weights)
        return eval_metrics

    def _update_accuracy_baseline(self, eval_metrics: Dict) -> None:
        """accuracy_baseline = max(label mean, 1 - label mean): TF makes it a Mean whose
        total and count are read from the label mean's, with a no-op as its update."""
        label_mean = eval_metrics[self._summary_key(MetricKeys.LABEL_MEAN)]
        baseline = eval_metrics[self._summary_key(MetricKeys.ACCURACY_BASELINE)]
        baseline._updates.append(tf.no_op())
        baseline.total = tf.maximum(label_mean.total, label_mean.count - label_mean.total)
        baseline.count = label_mean.count


@tf_export("estimator.MultiClassHead")
class MultiClassHead(_ClassHead):
    """A head for classification into `n_classes` > 2 classes by softmax cross entropy.

    Args:
      n_classes: the number of classes (> 2).
      weight_column: a string or NumericColumn of example weights.
      label_vocabulary: the `n_classes` label strings (else labels are class ids).
      loss_reduction: a Keras reduction other than 'none'.
      loss_fn: `loss_fn(labels, logits[, features])` -> the unreduced loss.
      name: the suffix of metric and summary keys.

    Raises:
      ValueError: a bad n_classes, vocabulary, reduction or loss_fn.
    """

    def __init__(self, n_classes: int, weight_column=None, label_vocabulary=None,
                 loss_reduction: str = SUM_OVER_BATCH_SIZE, loss_fn=None,
                 name: Optional[str] = None):
        if n_classes is None:
            raise ValueError("n_classes cannot be None")
        check_vocabulary(label_vocabulary)
        if label_vocabulary is not None and len(label_vocabulary) != n_classes:
            raise ValueError(
                '"label_vocabulary" does not have "n_classes" items. len(label_vocabulary)'
                '={}, n_classes={}, label_vocabulary={}'.format(
                    len(label_vocabulary), n_classes, label_vocabulary))
        super().__init__(n_classes, weight_column, label_vocabulary, loss_reduction,
                         loss_fn, name)
        if isinstance(n_classes, int) and n_classes <= 2:
            raise ValueError("n_classes must be > 2: %s." % n_classes)

    logits_dimension = property(lambda self: self._n_classes)

    def _label_ids(self, logits, labels):
        labels = checked_labels(labels, logits, 1)
        return checked_label_range(v1.class_ids_of(labels, self._label_vocabulary),
                                   self._n_classes)

    def _unweighted_loss(self, logits, label_ids):
        loss = tf.losses.sparse_softmax_cross_entropy(
            labels=label_ids, logits=logits, reduction=tf.losses.Reduction.NONE)
        return tf.expand_dims(loss, -1)

    def predictions(self, logits, keys=None) -> Dict:
        valid = [PredictionKeys.LOGITS, PredictionKeys.PROBABILITIES,
                 PredictionKeys.CLASS_IDS, PredictionKeys.CLASSES,
                 PredictionKeys.ALL_CLASS_IDS, PredictionKeys.ALL_CLASSES]
        keys = self._prediction_keys(keys, valid)
        logits = checked_logits(logits, self._n_classes)
        predictions = {}
        with tf.name_scope("predictions"):
            if PredictionKeys.LOGITS in keys:
                predictions[PredictionKeys.LOGITS] = logits
            if PredictionKeys.PROBABILITIES in keys:
                predictions[PredictionKeys.PROBABILITIES] = tf.nn.softmax(
                    logits, name=PredictionKeys.PROBABILITIES)
            return self._class_predictions(predictions, keys, logits, logits)

    def _export_outputs(self, predictions: Dict) -> Dict:
        from tensorweave.estimator import export
        classification = v1._classification_output(predictions, self._n_classes,
                                                    self._label_vocabulary)
        return {v1.DEFAULT_SERVING_KEY: classification,
                v1.CLASSIFY_SERVING_KEY: classification,
                v1.PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def metrics(self, regularization_losses=None) -> Dict:
        with tf.name_scope("metrics"):
            metrics = self._mean_metrics(regularization_losses)
            metrics[self._summary_key(MetricKeys.ACCURACY)] = tf.keras.metrics.Accuracy(
                name=MetricKeys.ACCURACY)
        return metrics

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None) -> Dict:
        class_ids = self.predictions(logits)[PredictionKeys.CLASS_IDS]
        _, label_ids, weights = self._base_metrics(eval_metrics, features, logits, labels,
                                                   regularization_losses)
        eval_metrics[self._summary_key(MetricKeys.ACCURACY)].update_state(
            y_true=label_ids, y_pred=class_ids, sample_weight=weights)
        return eval_metrics


@tf_export("estimator.MultiLabelHead")
class MultiLabelHead(_ClassHead):
    """A head for multi-label classification: each example may belong to any of
    `n_classes` classes, each scored by its own sigmoid cross entropy (the example's loss
    is their mean).

    Labels are a multi-hot `[D0, ..., DN, n_classes]` Tensor of 0s and 1s, or a
    SparseTensor of the class ids (or, with `label_vocabulary`, names) of each example.

    Args:
      n_classes: the number of classes (> 1).
      weight_column: a string or NumericColumn of example weights.
      thresholds: probabilities in (0, 1) at which accuracy, precision and recall
        metrics are computed.
      label_vocabulary: the `n_classes` class names (for string SparseTensor labels).
      loss_reduction: a Keras reduction other than 'none'.
      loss_fn: `loss_fn(labels, logits[, features])` -> the unreduced loss
        `[D0, ..., DN, 1]`.
      classes_for_class_based_metrics: class ids (or names) that get their own mean
        probability, AUC and PR AUC metrics.
      name: the suffix of metric and summary keys.

    Raises:
      ValueError: a bad n_classes, threshold, vocabulary, reduction, loss_fn or class.
    """

    def __init__(self, n_classes: int, weight_column=None, thresholds=None,
                 label_vocabulary=None, loss_reduction: str = SUM_OVER_BATCH_SIZE,
                 loss_fn=None, classes_for_class_based_metrics=None,
                 name: Optional[str] = None):
        if n_classes is None or n_classes < 2:
            raise ValueError("n_classes must be > 1 for multi-label classification. "
                             "Given: {}".format(n_classes))
        thresholds = tuple(thresholds) if thresholds else ()
        for threshold in thresholds:
            if threshold <= 0.0 or threshold >= 1.0:
                raise ValueError("thresholds must be in (0, 1) range. Given: {}"
                                 .format(threshold))
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, (list, tuple)):
                raise ValueError("label_vocabulary must be a list or tuple. Given type: {}"
                                 .format(type(label_vocabulary)))
            if len(label_vocabulary) != n_classes:
                raise ValueError("Length of label_vocabulary must be n_classes ({}). "
                                 "Given: {}".format(n_classes, len(label_vocabulary)))
        if loss_fn:  # TF checks it before the reduction in this head
            check_loss_fn_args(loss_fn)
        super().__init__(n_classes, weight_column, label_vocabulary, loss_reduction,
                         loss_fn, name)
        self._thresholds = thresholds
        self._metric_classes = _class_ids(classes_for_class_based_metrics, n_classes,
                                          label_vocabulary)

    logits_dimension = property(lambda self: self._n_classes)

    def _label_ids(self, logits, labels):
        """Multi-hot int64 labels `[D0, ..., DN, n_classes]`."""
        if labels is None:
            raise ValueError(LABEL_MESSAGES.none)
        if isinstance(labels, tf.SparseTensor):
            indicator = self._sparse_indicator(labels)
        else:
            indicator = checked_label_range(
                labels, 2, message="labels must be an integer indicator Tensor with values "
                                   "in [0, 1]")
        return checked_labels(indicator, logits, self._n_classes)

    def _sparse_indicator(self, labels):
        if labels.dtype == tf.string:
            ids = v1._class_id_lookup(labels.values, self._label_vocabulary)
            indicator = tf.sparse.to_indicator(
                tf.SparseTensor(labels.indices, ids, labels.dense_shape), self._n_classes)
        else:
            if not labels.values.dtype.is_integer:
                raise ValueError("Labels dtype should be integer. Instead got {}."
                                 .format(labels.values.dtype))
            checked = checked_label_range(
                labels.values, self._n_classes,
                message="labels must be an integer SparseTensor with values in [0, {})"
                        .format(self._n_classes))
            with tf.control_dependencies([checked]):
                indicator = tf.sparse.to_indicator(labels, self._n_classes)
        return tf.cast(indicator, tf.int64)

    def _unweighted_loss(self, logits, labels):
        loss = tf.losses.sigmoid_cross_entropy(multi_class_labels=labels, logits=logits,
                                               reduction=tf.losses.Reduction.NONE)
        return tf.reduce_mean(loss, axis=-1, keepdims=True)

    def predictions(self, logits, keys=None) -> Dict:
        valid = [PredictionKeys.LOGITS, PredictionKeys.PROBABILITIES, PredictionKeys.CLASSES]
        keys = self._prediction_keys(keys, valid)
        logits = checked_logits(logits, self._n_classes)
        predictions = {}
        with tf.name_scope("predictions"):
            if PredictionKeys.LOGITS in keys:
                predictions[PredictionKeys.LOGITS] = logits
            if PredictionKeys.PROBABILITIES in keys:
                predictions[PredictionKeys.PROBABILITIES] = tf.sigmoid(
                    logits, name=PredictionKeys.PROBABILITIES)
            if PredictionKeys.CLASSES in keys:
                predictions[PredictionKeys.CLASSES] = v1._all_classes(
                    logits, self._n_classes, self._label_vocabulary)
        return predictions

    def _export_outputs(self, predictions: Dict) -> Dict:
        from tensorweave.estimator import export
        classification = v1._classification_output(predictions, self._n_classes,
                                                    self._label_vocabulary)
        return {v1.DEFAULT_SERVING_KEY: classification,
                v1.CLASSIFY_SERVING_KEY: classification,
                v1.PREDICT_SERVING_KEY: export.PredictOutput(predictions)}

    def _class_metric_keys(self, class_id: int):
        """The (probability mean, AUC, PR AUC) keys of one class, by name or by id."""
        if self._label_vocabulary is None:
            formats, label = (MetricKeys.PROBABILITY_MEAN_AT_CLASS, MetricKeys.AUC_AT_CLASS,
                              MetricKeys.AUC_PR_AT_CLASS), class_id
        else:
            formats, label = (MetricKeys.PROBABILITY_MEAN_AT_NAME, MetricKeys.AUC_AT_NAME,
                              MetricKeys.AUC_PR_AT_NAME), self._label_vocabulary[class_id]
        return tuple(self._summary_key(key_format % label) for key_format in formats)

    def metrics(self, regularization_losses=None) -> Dict:
        M = tf.keras.metrics
        with tf.name_scope("metrics"):
            metrics = self._mean_metrics(regularization_losses)
            metrics[self._summary_key(MetricKeys.AUC)] = M.AUC(name=MetricKeys.AUC)
            metrics[self._summary_key(MetricKeys.AUC_PR)] = M.AUC(curve="PR",
                                                                   name=MetricKeys.AUC_PR)
            metrics.update(self._threshold_metrics())
            for class_id in self._metric_classes:
                mean, auc, auc_pr = self._class_metric_keys(class_id)
                metrics[mean] = M.Mean(name=mean)
                metrics[auc] = M.AUC(name=auc)
                metrics[auc_pr] = M.AUC(curve="PR", name=auc_pr)
        return metrics

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None) -> Dict:
        logits, labels, weights = self._base_metrics(eval_metrics, features, logits, labels,
                                                     regularization_losses)
        probabilities = self.predictions(logits, [PredictionKeys.PROBABILITIES])[
            PredictionKeys.PROBABILITIES]
        for key in (MetricKeys.AUC, MetricKeys.AUC_PR):
            eval_metrics[self._summary_key(key)].update_state(
                y_true=labels, y_pred=probabilities, sample_weight=weights)
        self._update_threshold_metrics(eval_metrics, labels, probabilities, weights)
        for class_id in self._metric_classes:
            mean, auc, auc_pr = self._class_metric_keys(class_id)
            class_probabilities = probabilities[..., class_id:class_id + 1]
            class_labels = labels[..., class_id:class_id + 1]
            update_with_broadcast_weights(eval_metrics[mean], class_probabilities, weights)
            for key in (auc, auc_pr):
                eval_metrics[key].update_state(y_true=class_labels,
                                               y_pred=class_probabilities,
                                               sample_weight=weights)
        return eval_metrics


def _class_ids(classes, n_classes: int, label_vocabulary) -> tuple:
    """`classes_for_class_based_metrics` as class ids (names looked up in the
    vocabulary)."""
    if not classes:
        return ()
    classes = tuple(classes)
    if isinstance(classes[0], str):
        if not label_vocabulary:
            raise ValueError("label_vocabulary must be provided when "
                             "classes_for_class_based_metrics are strings.")
        return tuple(label_vocabulary.index(name) for name in classes)
    for class_id in classes:
        if class_id < 0 or class_id >= n_classes:
            raise ValueError("All classes_for_class_based_metrics must be in range [0, {}]. "
                             "Given: {}".format(n_classes - 1, class_id))
    return classes
