"""TF1's baseline canned estimators (`tf.compat.v1.estimator.BaselineClassifier`,
`BaselineRegressor`, `BaselineEstimator`): the logits ignore the features and are one
learned bias per output (variable "baseline/bias"), so the model learns the label
distribution (classifier) or the mean label (regressor); trained with FTRL by default.
"""
from __future__ import annotations

from typing import Callable, Optional

import tensorweave as tf
from tensorweave.estimator.canned import head as head_lib
from tensorweave.estimator.canned import optimizers
from tensorweave.estimator.estimator import Estimator
from tensorweave.feature_column.numeric_columns import NumericColumn
from tensorweave.framework.api_export import tf_export

_LEARNING_RATE = 0.3


def _weight_column_key(weight_column) -> Optional[str]:
    if weight_column is None:
        return None
    if isinstance(weight_column, str):
        return weight_column
    if not isinstance(weight_column, NumericColumn):
        raise TypeError("Weight column must be either a string or _NumericColumn. "
                        "Given type: {}.".format(type(weight_column)))
    return weight_column.key


def _batch_size_and_checks(features: dict, weight_column_key: Optional[str]):
    """The batch size (the first dimension of the first feature other than the weights)
    and asserts that every such feature has it."""
    checks, batch_size = [], None
    for key, feature in features.items():
        if key == weight_column_key:
            continue
        first_dim = tf.shape(feature)[0]
        if batch_size is None:
            batch_size = first_dim
        else:
            checks.append(tf.debugging.assert_equal(batch_size, first_dim))
    return checks, batch_size


def _baseline_logit_fn_builder(num_outputs: int, weight_column=None) -> Callable:
    """A logit_fn returning the bias `[num_outputs]` once per example."""
    def baseline_logit_fn(features):
        checks, batch_size = _batch_size_and_checks(features,
                                                    _weight_column_key(weight_column))
        with tf.control_dependencies(checks):
            with tf.variable_scope("baseline"):
                bias = tf.get_variable("bias", shape=[num_outputs],
                                       initializer=tf.zeros_initializer())
                return tf.multiply(bias, tf.ones([batch_size, num_outputs]))
    return baseline_logit_fn


def _baseline_model_fn(features, labels, mode, head, optimizer, weight_column=None,
                       config=None):
    """The model_fn of the baseline estimators: the bias logits, then the head's spec."""
    del config  # the model has no partitioned variables
    logits = _baseline_logit_fn_builder(head.logits_dimension, weight_column)(features)

    def train_op_fn(loss):
        opt = optimizers.get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
        return opt.minimize(loss, global_step=tf.train.get_global_step())

    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=train_op_fn)


class _BaselineBase(Estimator):
    """The constructor shared by the baseline estimators: a model_fn over `head`."""

    def __init__(self, head, model_dir, optimizer, config, weight_column=None):
        def _model_fn(features, labels, mode, config):
            return _baseline_model_fn(features, labels, mode, head, optimizer,
                                      weight_column, config)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config)


@tf_export("estimator.BaselineClassifier")
class BaselineClassifier(_BaselineBase):
    """A classifier that predicts the label distribution it was trained on (TF1
    `tf.estimator.BaselineClassifier`).

    Args:
      model_dir: where checkpoints and summaries are written.
      n_classes: the number of classes (2: binary logistic head, more: softmax head).
      weight_column: a feature key or numeric column of per-example loss weights.
      label_vocabulary: the class strings, when labels are strings.
      optimizer: an Optimizer, its name (default 'Ftrl', learning rate 0.3) or a
        callable returning one.
      config: a `tf.estimator.RunConfig`.
      loss_reduction: a `tf.losses.Reduction` other than NONE (default SUM).

    Raises:
      ValueError: bad `n_classes`, `label_vocabulary` or `loss_reduction`.
    """

    def __init__(self, model_dir=None, n_classes: int = 2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None,
                 loss_reduction: str = "weighted_sum"):
        head = head_lib.binary_or_multi_class_head(n_classes, weight_column,
                                                   label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, optimizer, config, weight_column)


@tf_export("estimator.BaselineRegressor")
class BaselineRegressor(_BaselineBase):
    """A regressor that predicts the mean label it was trained on (TF1
    `tf.estimator.BaselineRegressor`).

    Args:
      model_dir, weight_column, optimizer, config, loss_reduction: see
        `BaselineClassifier`.
      label_dimension: the number of regression targets per example.

    Raises:
      ValueError: bad `label_dimension` or `loss_reduction`.
    """

    def __init__(self, model_dir=None, label_dimension: int = 1, weight_column=None,
                 optimizer="Ftrl", config=None, loss_reduction: str = "weighted_sum"):
        head = head_lib.regression_head(label_dimension=label_dimension,
                                        weight_column=weight_column,
                                        loss_reduction=loss_reduction)
        # as in TF, the regressor's batch size may come from the weight feature too
        super().__init__(head, model_dir, optimizer, config)


@tf_export("estimator.BaselineEstimator")
class BaselineEstimator(_BaselineBase):
    """A bias-only model with a given head (TF1 `tf.estimator.BaselineEstimator`).

    Args:
      head: a head of `tensorweave.estimator.canned.head`.
      model_dir, optimizer, config: see `BaselineClassifier`.
    """

    def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
        super().__init__(head, model_dir, optimizer, config)
