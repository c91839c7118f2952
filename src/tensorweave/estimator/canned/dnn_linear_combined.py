"""TF1's wide-and-deep canned estimators (`tf.compat.v1.estimator.
DNNLinearCombinedClassifier`, `DNNLinearCombinedRegressor`, `DNNLinearCombinedEstimator`):
the logits are the sum of a DNN's (variable scope "dnn", see dnn.py) and a linear model's
(scope "linear", see linear.py); each part is trained by its own optimizer (Adagrad
0.001 and FTRL by default), their updates grouped before the global step is incremented.
"""
from __future__ import annotations

import math
from typing import Optional

import tensorweave as tf
from tensorweave.estimator.canned import head as head_lib
from tensorweave.estimator.canned import optimizers
from tensorweave.estimator.canned.dnn import add_layer_summary, dnn_logit_fn_builder
from tensorweave.estimator.canned.linear import check_features, input_layer_partitioner, \
    linear_logit_fn_builder, num_ps_replicas
from tensorweave.estimator.estimator import Estimator
from tensorweave.framework.api_export import tf_export

_DNN_LEARNING_RATE = 0.001
_LINEAR_LEARNING_RATE = 0.005


def _linear_learning_rate(num_linear_feature_columns: int) -> float:
    """The linear part's default learning rate: 1 / sqrt(#columns), at most 0.005."""
    return min(_LINEAR_LEARNING_RATE, 1. / math.sqrt(num_linear_feature_columns))


def _check_no_sync_replicas_optimizer(optimizer) -> None:
    if isinstance(optimizer, tf.train.SyncReplicasOptimizer):
        raise ValueError("SyncReplicasOptimizer does not support multi optimizers case. "
                         "Therefore, it is not supported in DNNLinearCombined model. If you "
                         "want to use this optimizer, please use either DNN or Linear model.")


def _check_feature_columns(linear_feature_columns, dnn_feature_columns) -> list:
    columns = list(linear_feature_columns or []) + list(dnn_feature_columns or [])
    if not columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be "
                         "defined.")
    return columns


def _dnn_linear_combined_model_fn(features, labels, mode, head, linear_feature_columns=None,
                                  linear_optimizer="Ftrl", dnn_feature_columns=None,
                                  dnn_optimizer="Adagrad", dnn_hidden_units=None,
                                  dnn_activation_fn=tf.nn.relu, dnn_dropout=None,
                                  input_partitioner=None, config=None,
                                  batch_norm: bool = False,
                                  linear_sparse_combiner: str = "sum"):
    """The model_fn of the wide-and-deep estimators: the sum of the DNN and linear
    logits, then the head's spec with a train op updating both parts."""
    check_features(features)
    if not linear_feature_columns and not dnn_feature_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must be "
                         "defined.")
    input_partitioner = input_partitioner or input_layer_partitioner(config)
    dnn_logits = linear_logits = None
    if dnn_feature_columns:
        dnn_optimizer = optimizers.get_optimizer_instance(dnn_optimizer,
                                                          learning_rate=_DNN_LEARNING_RATE)
        _check_no_sync_replicas_optimizer(dnn_optimizer)
        if not dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when dnn_feature_columns is "
                             "specified.")
        partitioner = tf.min_max_variable_partitioner(max_partitions=num_ps_replicas(config))
        with tf.variable_scope("dnn", values=tuple(features.values()),
                               partitioner=partitioner) as scope:
            dnn_scope = scope.name
            logit_fn = dnn_logit_fn_builder(
                units=head.logits_dimension, hidden_units=dnn_hidden_units,
                feature_columns=dnn_feature_columns, activation_fn=dnn_activation_fn,
                dropout=dnn_dropout, input_layer_partitioner=input_partitioner,
                batch_norm=batch_norm)
            dnn_logits = logit_fn(features=features, mode=mode)
    if linear_feature_columns:
        linear_optimizer = optimizers.get_optimizer_instance(
            linear_optimizer, learning_rate=_linear_learning_rate(len(linear_feature_columns)))
        _check_no_sync_replicas_optimizer(linear_optimizer)
        with tf.variable_scope("linear", values=tuple(features.values()),
                               partitioner=input_partitioner) as scope:
            linear_scope = scope.name
            logit_fn = linear_logit_fn_builder(units=head.logits_dimension,
                                               feature_columns=linear_feature_columns,
                                               sparse_combiner=linear_sparse_combiner)
            linear_logits = logit_fn(features=features)
            add_layer_summary(linear_logits, scope.name)
    if dnn_logits is not None and linear_logits is not None:
        logits = dnn_logits + linear_logits
    else:
        logits = dnn_logits if dnn_logits is not None else linear_logits

    def _train_op_fn(loss):
        """Each part's optimizer minimizes the loss over that part's variables."""
        train_ops = []
        if dnn_logits is not None:
            train_ops.append(dnn_optimizer.minimize(loss, var_list=tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope=dnn_scope)))
        if linear_logits is not None:
            train_ops.append(linear_optimizer.minimize(loss, var_list=tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope=linear_scope)))
        train_op = tf.group(*train_ops)
        with tf.control_dependencies([train_op]):
            return tf.assign_add(tf.train.get_global_step(), 1).op

    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      train_op_fn=_train_op_fn, logits=logits)


class _DNNLinearCombinedBase(Estimator):
    """The constructor shared by the wide-and-deep estimators: a model_fn over `head`."""

    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, input_layer_partitioner, config, warm_start_from, batch_norm,
                 linear_sparse_combiner):
        self._feature_columns = _check_feature_columns(linear_feature_columns,
                                                       dnn_feature_columns)

        def _model_fn(features, labels, mode, config):
            return _dnn_linear_combined_model_fn(
                features, labels, mode, head, linear_feature_columns, linear_optimizer,
                dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                dnn_dropout, input_layer_partitioner, config, batch_norm,
                linear_sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


@tf_export("estimator.DNNLinearCombinedClassifier")
class DNNLinearCombinedClassifier(_DNNLinearCombinedBase):
    """A linear model and a DNN joined, for classification (TF1
    `tf.estimator.DNNLinearCombinedClassifier`, "wide and deep").

    Args:
      model_dir: where checkpoints and summaries are written.
      linear_feature_columns: the linear part's feature columns.
      linear_optimizer: the linear part's Optimizer, its name or a callable returning
        one (default 'Ftrl', learning rate min(0.005, 1 / sqrt(#linear columns))).
      dnn_feature_columns: the DNN part's dense feature columns.
      dnn_optimizer: the DNN part's optimizer (default 'Adagrad', learning rate 0.001).
      dnn_hidden_units: the width of each hidden layer (needed with DNN columns).
      dnn_activation_fn: the hidden layers' activation (default relu).
      dnn_dropout: when not None, the probability of dropping a hidden unit in training.
      n_classes: the number of classes (2: binary logistic head, more: softmax head).
      weight_column: a feature key or numeric column of per-example loss weights.
      label_vocabulary: the class strings, when labels are strings.
      input_layer_partitioner: the partitioner of the input variables.
      config: a `tf.estimator.RunConfig`.
      warm_start_from: a checkpoint path or `WarmStartSettings`.
      loss_reduction: a `tf.losses.Reduction` other than NONE (default SUM).
      batch_norm: whether to batch-normalize each hidden layer's output.
      linear_sparse_combiner: "sum", "mean" or "sqrtn" (see `linear_model`).

    Raises:
      ValueError: no feature columns at all, or bad head arguments.
    """

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, n_classes: int = 2,
                 weight_column=None, label_vocabulary=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction: str = "weighted_sum",
                 batch_norm: bool = False, linear_sparse_combiner: str = "sum"):
        _check_feature_columns(linear_feature_columns, dnn_feature_columns)
        head = head_lib.binary_or_multi_class_head(n_classes, weight_column,
                                                   label_vocabulary, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


@tf_export("estimator.DNNLinearCombinedRegressor")
class DNNLinearCombinedRegressor(_DNNLinearCombinedBase):
    """A linear model and a DNN joined, for regression (TF1
    `tf.estimator.DNNLinearCombinedRegressor`).

    Args:
      model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
      dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, weight_column,
      input_layer_partitioner, config, warm_start_from, loss_reduction, batch_norm,
      linear_sparse_combiner: see `DNNLinearCombinedClassifier`.
      label_dimension: the number of regression targets per example.

    Raises:
      ValueError: no feature columns at all, or bad head arguments.
    """

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer="Ftrl",
                 dnn_feature_columns=None, dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, label_dimension: int = 1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction: str = "weighted_sum",
                 batch_norm: bool = False, linear_sparse_combiner: str = "sum"):
        _check_feature_columns(linear_feature_columns, dnn_feature_columns)
        head = head_lib.regression_head(label_dimension=label_dimension,
                                        weight_column=weight_column,
                                        loss_reduction=loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


@tf_export("estimator.DNNLinearCombinedEstimator")
class DNNLinearCombinedEstimator(_DNNLinearCombinedBase):
    """A linear model and a DNN joined, with a given head (TF1
    `tf.estimator.DNNLinearCombinedEstimator`; like TF1 it has no `warm_start_from`).

    Args:
      head: a head of `tensorweave.estimator.canned.head`.
      model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
      dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
      input_layer_partitioner, config, batch_norm, linear_sparse_combiner: see
      `DNNLinearCombinedClassifier`.

    Raises:
      ValueError: no feature columns at all.
    """

    def __init__(self, head, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None, dnn_optimizer="Adagrad",
                 dnn_hidden_units=None, dnn_activation_fn=tf.nn.relu, dnn_dropout=None,
                 input_layer_partitioner=None, config=None, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum"):
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         None, batch_norm, linear_sparse_combiner)
