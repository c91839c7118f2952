"""TF1's DNN canned estimators (`tf.compat.v1.estimator.DNNClassifier`, `DNNRegressor`,
`DNNEstimator`): `tf.feature_column.input_layer` of the features, fully connected hidden
layers (optionally with dropout and batch normalization), then a linear logits layer, in
variable scope "dnn", trained with Adagrad by default.

The variables are TF's: "dnn/input_from_feature_columns/input_layer/...",
"dnn/hiddenlayer_<i>/kernel|bias" (glorot-uniform kernels, zero biases),
"dnn/hiddenlayer_<i>/batchnorm_<i>/gamma|beta|moving_mean|moving_variance" and
"dnn/logits/kernel|bias"; all but the moving statistics are one partition "part_0" of a
partitioned variable, as TF's default min-max partitioner makes them.
"""
from __future__ import annotations

from typing import Callable, Iterable, Optional

import tensorweave as tf
from tensorweave.estimator.canned import head as head_lib
from tensorweave.estimator.canned import optimizers
from tensorweave.estimator.canned.linear import check_features, input_layer_partitioner, \
    num_ps_replicas
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.framework.api_export import tf_export
from tensorweave.layers.normalization import BatchNormalization

_LEARNING_RATE = 0.05


def add_layer_summary(value, tag: str) -> None:
    """TF's summaries of a layer's output: its fraction of zeros and a histogram."""
    tf.summary.scalar("%s/fraction_of_zero_values" % tag, tf.math.zero_fraction(value))
    tf.summary.histogram("%s/activation" % tag, value)


def _dense(inputs, units: int, activation: Optional[Callable]):
    """A fully connected layer in the current variable scope: variables "kernel"
    (glorot uniform) and "bias" (zeros), like TF's `tf.layers.Dense` there."""
    kernel = tf.get_variable("kernel", shape=[inputs.shape.dims[-1].value, units],
                             initializer=tf.glorot_uniform_initializer())
    bias = tf.get_variable("bias", shape=[units], initializer=tf.zeros_initializer())
    outputs = tf.nn.bias_add(tf.matmul(inputs, kernel), bias)
    return activation(outputs) if activation is not None else outputs


class _BatchNorm(BatchNormalization):
    """Batch normalization whose moving statistics are never partitioned: TF's layer
    clears the scope's partitioner while making them (they are updated by assignment,
    which a partitioned variable does not support)."""

    def add_weight(self, name, *args, **kwargs):
        if name not in ("moving_mean", "moving_variance") or self._scope is None:
            return super().add_weight(name, *args, **kwargs)
        partitioner = self._scope.partitioner
        self._scope.set_partitioner(None)
        try:
            return super().add_weight(name, *args, **kwargs)
        finally:
            self._scope.set_partitioner(partitioner)


@tf_export("estimator.experimental.dnn_logit_fn_builder")
def dnn_logit_fn_builder(units: int, hidden_units: Iterable[int], feature_columns: Iterable,
                         activation_fn: Optional[Callable], dropout: Optional[float],
                         input_layer_partitioner, batch_norm: bool) -> Callable:
    """A logit_fn of a fully connected network over the feature columns.

    Args:
      units: the width of the logits.
      hidden_units: the width of each hidden layer.
      feature_columns: the model's dense feature columns.
      activation_fn: the hidden layers' activation.
      dropout: when not None, the probability of dropping a hidden unit in training.
      input_layer_partitioner: the partitioner of the input layer's variables.
      batch_norm: whether to batch-normalize each hidden layer's output.

    Returns:
      `dnn_logit_fn(features, mode) -> logits [batch, units]`; it adds TF's summaries of
      each layer's output.

    Raises:
      ValueError: `units` is not an int.
    """
    if not isinstance(units, int):
        raise ValueError("units must be an int.  Given type: {}".format(type(units)))

    def dnn_logit_fn(features, mode):
        is_training = mode == ModeKeys.TRAIN
        with tf.variable_scope("input_from_feature_columns",
                               partitioner=input_layer_partitioner):
            net = tf.feature_column.input_layer(features, feature_columns)
        for layer_id, num_units in enumerate(hidden_units):
            with tf.variable_scope("hiddenlayer_%d" % layer_id, values=(net,)) as scope:
                net = _dense(net, num_units, activation_fn)
                layer_scope = scope
            # TF's dropout and batch norm layers name their ops outside the hidden
            # layer's name scope; batch norm's variables are inside its variable scope
            if dropout is not None and is_training:
                net = tf.layers.dropout(net, rate=dropout, training=True)
            if batch_norm:
                with tf.variable_scope(layer_scope, auxiliary_name_scope=False):
                    # momentum 0.999 as TF: the layer's default 0.99 diverges on some
                    # problems
                    layer = _BatchNorm(momentum=0.999, trainable=True,
                                       name="batchnorm_%d" % layer_id)
                    net = layer(net, training=is_training)
            add_layer_summary(net, layer_scope.name)
        with tf.variable_scope("logits", values=(net,)) as logits_scope:
            logits = _dense(net, units, None)
        add_layer_summary(logits, logits_scope.name)
        return logits

    return dnn_logit_fn


def _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns,
                  optimizer="Adagrad", activation_fn=tf.nn.relu, dropout=None,
                  input_partitioner=None, config=None, batch_norm: bool = False):
    """The model_fn of the DNN estimators: DNN logits, then the head's spec."""
    optimizer = optimizers.get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    check_features(features)
    partitioner = tf.min_max_variable_partitioner(max_partitions=num_ps_replicas(config))
    with tf.variable_scope("dnn", values=tuple(features.values()), partitioner=partitioner):
        logit_fn = dnn_logit_fn_builder(
            units=head.logits_dimension, hidden_units=hidden_units,
            feature_columns=feature_columns, activation_fn=activation_fn, dropout=dropout,
            input_layer_partitioner=input_partitioner or input_layer_partitioner(config),
            batch_norm=batch_norm)
        logits = logit_fn(features=features, mode=mode)
        return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                          optimizer=optimizer, logits=logits)


class _DNNBase(Estimator):
    """The constructor shared by the DNN estimators: a model_fn over `head`."""

    def __init__(self, head, hidden_units, feature_columns, model_dir, optimizer,
                 activation_fn, dropout, input_layer_partitioner, config, warm_start_from,
                 batch_norm):
        feature_columns = tuple(feature_columns or [])

        def _model_fn(features, labels, mode, config):
            return _dnn_model_fn(features, labels, mode, head, hidden_units,
                                 feature_columns, optimizer, activation_fn, dropout,
                                 input_layer_partitioner, config, batch_norm)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


@tf_export("estimator.DNNClassifier")
class DNNClassifier(_DNNBase):
    """A fully connected network for classification (TF1 `tf.estimator.DNNClassifier`).

    Args:
      hidden_units: the width of each hidden layer, e.g. [64, 32].
      feature_columns: the model's dense feature columns.
      model_dir: where checkpoints and summaries are written.
      n_classes: the number of classes (2: binary logistic head, more: softmax head).
      weight_column: a feature key or numeric column of per-example loss weights.
      label_vocabulary: the class strings, when labels are strings.
      optimizer: an Optimizer, its name (default 'Adagrad', learning rate 0.05) or a
        callable returning one.
      activation_fn: the hidden layers' activation (default relu).
      dropout: when not None, the probability of dropping a hidden unit in training.
      input_layer_partitioner: the partitioner of the input layer's variables.
      config: a `tf.estimator.RunConfig`.
      warm_start_from: a checkpoint path or `WarmStartSettings`.
      loss_reduction: a `tf.losses.Reduction` other than NONE (default SUM).
      batch_norm: whether to batch-normalize each hidden layer's output.

    Raises:
      ValueError: bad `n_classes`, `label_vocabulary` or `loss_reduction`.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes: int = 2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction: str = "weighted_sum",
                 batch_norm: bool = False):
        head = head_lib.binary_or_multi_class_head(n_classes, weight_column,
                                                   label_vocabulary, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)


@tf_export("estimator.DNNRegressor")
class DNNRegressor(_DNNBase):
    """A fully connected network for regression (TF1 `tf.estimator.DNNRegressor`).

    Args:
      hidden_units, feature_columns, model_dir, weight_column, optimizer,
      activation_fn, dropout, input_layer_partitioner, config, warm_start_from,
      loss_reduction, batch_norm: see `DNNClassifier`.
      label_dimension: the number of regression targets per example.

    Raises:
      ValueError: bad `label_dimension` or `loss_reduction`.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None,
                 label_dimension: int = 1, weight_column=None, optimizer="Adagrad",
                 activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction: str = "weighted_sum",
                 batch_norm: bool = False):
        head = head_lib.regression_head(label_dimension=label_dimension,
                                        weight_column=weight_column,
                                        loss_reduction=loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)


@tf_export("estimator.DNNEstimator")
class DNNEstimator(_DNNBase):
    """A fully connected network with a given head (TF1 `tf.estimator.DNNEstimator`).

    Args:
      head: a head of `tensorweave.estimator.canned.head`.
      hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout,
      input_layer_partitioner, config, warm_start_from, batch_norm: see `DNNClassifier`.
    """

    def __init__(self, head, hidden_units, feature_columns, model_dir=None,
                 optimizer="Adagrad", activation_fn=tf.nn.relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 batch_norm: bool = False):
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)
