"""MultiHead: one model trained for several named heads at once (multi-objective
learning): the logits are split among the heads (or given per head), the loss is the
(weighted) sum of theirs, predictions and exports are keyed by head name."""
from __future__ import annotations

from typing import Dict, Optional, Sequence

import tensorweave as tf
from tensorweave.estimator.canned import head as v1
from tensorweave.estimator.canned.head import MetricKeys
from tensorweave.estimator.canned.heads_v2.base import Head, create_train_op, loss_summaries
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.framework.api_export import tf_export


@tf_export("estimator.MultiHead")
class MultiHead(Head):
    """Several named heads over one model.

    The logits are a dict of head name -> logits, or one Tensor whose last dimension is
    split among the heads in order. Labels are a dict of head name -> labels.
    Predictions are keyed by (head name, prediction key); metrics by the heads' own
    (suffixed) keys, with 'loss/<head name>' for each head's loss.

    Args:
      heads: the heads, each with a name.
      head_weights: one weight per head for the sum of their losses.

    Raises:
      ValueError: no heads, a head without a name, or weights of another length.
    """

    def __init__(self, heads: Sequence[Head], head_weights=None):
        if not heads:
            raise ValueError("Must specify heads. Given: {}".format(heads))
        if head_weights and len(head_weights) != len(heads):
            raise ValueError("heads and head_weights must have the same size. Given "
                             "len(heads): {}. Given len(head_weights): {}.".format(
                                 len(heads), len(head_weights)))
        for head in heads:
            if head.name is None:
                raise ValueError("All given heads must have name specified. Given: {}"
                                 .format(head))
        self._heads = tuple(heads)
        self._head_weights = tuple(head_weights) if head_weights else ()

    @property
    def name(self) -> str:
        return "_".join(head.name for head in self._heads)

    @property
    def logits_dimension(self) -> int:
        return sum(head.logits_dimension for head in self._heads)

    @property
    def loss_reduction(self) -> str:
        reductions = [head.loss_reduction for head in self._heads]
        if len(set(reductions)) > 1:
            raise ValueError("The loss_reduction must be the same for different heads. "
                             "Given: {}".format(reductions))
        return reductions[0]

    def _split_logits(self, logits) -> Dict:
        """Head name -> its slice of the last dimension of `logits`."""
        with tf.name_scope("split_logits"):
            logits = tf.convert_to_tensor(logits)
            dimensions = [head.logits_dimension for head in self._heads]
            shape = logits.shape.as_list()
            if shape[-1] is not None and shape[-1] != sum(dimensions):
                # TF's message swaps the two sizes
                raise ValueError(
                    "Could not split logits of shape %r among the heads with individual "
                    "logits dimensions: %r. The last dimension of the logits tensor should "
                    "equal %d but is %d." % (shape, dimensions, shape[-1], sum(dimensions)))
            split, begin = {}, 0
            for head, dimension in zip(self._heads, dimensions):
                split[head.name] = logits[..., begin:begin + dimension]
                begin += dimension
        return split

    def _logits_by_head(self, logits, labels=None) -> Dict:
        names = [head.name for head in self._heads]
        if isinstance(logits, dict):
            missing = list(set(names) - set(logits))
            if missing:
                raise ValueError("logits has missing values for head(s): {}".format(missing))
        else:
            logits = self._split_logits(logits)
        if labels is not None:
            if not isinstance(labels, dict):
                raise ValueError("labels must be a dict. Given: {}".format(labels))
            missing = list(set(names) - set(labels))
            if missing:
                raise ValueError("labels has missing values for head(s): {}".format(missing))
        return logits

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """The sum of the heads' losses (times `head_weights`), plus regularization."""
        logits = self._logits_by_head(logits, labels)
        losses = [head.loss(labels[head.name], logits[head.name], features=features,
                            mode=mode) for head in self._heads]
        with tf.name_scope("merge_losses"):
            if self._head_weights:
                losses = [tf.multiply(loss, weight)
                          for loss, weight in zip(losses, self._head_weights)]
            loss = tf.add_n(losses)
            if regularization_losses is not None:
                loss = loss + tf.add_n(regularization_losses)
        return loss

    def predictions(self, logits, keys=None) -> Dict:
        """(head name, prediction key) -> prediction, of every head (`keys` unused)."""
        logits = self._logits_by_head(logits)
        predictions = {}
        with tf.name_scope("merge_pred"):
            for head in self._heads:
                for key, value in head.predictions(logits[head.name]).items():
                    predictions[(head.name, key)] = value
        return predictions

    def _loss_key(self, head) -> str:
        return "{}/{}".format(MetricKeys.LOSS, head.name)

    def metrics(self, regularization_losses=None) -> Dict:
        metrics = {}
        if regularization_losses is not None:
            key = self._summary_key(MetricKeys.LOSS_REGULARIZATION)
            metrics[key] = tf.keras.metrics.Mean(name=MetricKeys.LOSS_REGULARIZATION)
        with tf.name_scope("merge_eval"):
            for head in self._heads:
                metrics[self._loss_key(head)] = tf.keras.metrics.Mean(
                    name=self._loss_key(head))
        return metrics

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None) -> Dict:
        """Updates each head's loss metric and adds each head's own metrics."""
        logits = self._logits_by_head(logits, labels)
        if regularization_losses is not None:
            eval_metrics[self._summary_key(MetricKeys.LOSS_REGULARIZATION)].update_state(
                values=tf.add_n(regularization_losses))
        for head in self._heads:
            head_logits, head_labels = logits[head.name], labels[head.name]
            eval_metrics[self._loss_key(head)].update_state(
                values=head.loss(head_labels, head_logits, features=features))
            eval_metrics.update(head.update_metrics(head.metrics(), features, head_logits,
                                                    head_labels) or {})
        return eval_metrics

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None) -> EstimatorSpec:
        """The `EstimatorSpec` of `mode`: see `Head.create_estimator_spec`; each head's
        own spec is made too (as TF does) for its exports and summaries."""
        with tf.name_scope(self.name, "multi_head"):
            by_head = self._logits_by_head(logits, labels)
            head_specs = [head.create_estimator_spec(
                features=features, mode=mode, logits=by_head[head.name],
                labels=labels[head.name] if labels else None,
                train_op_fn=lambda loss: tf.no_op()) for head in self._heads]
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode=mode, predictions=predictions,
                                     export_outputs=self._export_outputs(head_specs))
            loss = self.loss(labels, logits, features, mode, regularization_losses)
            if mode == ModeKeys.EVAL:
                metrics = self.update_metrics(self.metrics(regularization_losses), features,
                                              logits, labels,
                                              regularization_losses=regularization_losses)
                return EstimatorSpec(mode=mode, predictions=predictions, loss=loss,
                                     eval_metric_ops=metrics)
            if mode != ModeKeys.TRAIN:
                raise ValueError("mode={} unrecognized".format(mode))
            train_op = create_train_op(loss, optimizer, trainable_variables, train_op_fn,
                                       update_ops)
            loss_summaries(loss, regularization_losses, summary_key=None)
            metrics = {}
            for spec in head_specs:
                metrics.update(spec.eval_metric_ops or {})
            return EstimatorSpec(mode=mode, loss=loss, train_op=train_op,
                                 predictions=predictions, eval_metric_ops=metrics)

    def _export_outputs(self, head_specs) -> Dict:
        """The first head's default export as the default; each head's exports under
        '<head name>[/<key>]'; one 'predict' output of all heads' predict outputs."""
        from tensorweave.estimator import export
        first = head_specs[0].export_outputs
        outputs = {v1.DEFAULT_SERVING_KEY: _default_export(first, self._heads[0].name)}
        merged_predict = {}
        for head, spec in zip(self._heads, head_specs):
            for key, output in spec.export_outputs.items():
                name = head.name if key == v1.DEFAULT_SERVING_KEY \
                    else "{}/{}".format(head.name, key)
                outputs[name] = output
                if key == v1.PREDICT_SERVING_KEY and isinstance(output, export.PredictOutput):
                    for output_key, tensor in output.outputs.items():
                        merged_predict["{}/{}".format(head.name, output_key)] = tensor
        outputs[v1.PREDICT_SERVING_KEY] = export.PredictOutput(merged_predict)
        return outputs


def _default_export(export_outputs: Dict, head_name: Optional[str]):
    if len(export_outputs) == 1:
        return next(iter(export_outputs.values()))
    try:
        return export_outputs[v1.DEFAULT_SERVING_KEY]
    except KeyError:
        raise ValueError(
            "{} did not specify default export_outputs. Given: {} Suggested fix: Use one "
            "of the heads in tf.estimator, or include key {} in export_outputs.".format(
                head_name, export_outputs, v1.DEFAULT_SERVING_KEY)) from None
