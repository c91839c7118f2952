"""TF1's linear canned estimators (`tf.compat.v1.estimator.LinearClassifier`,
`LinearRegressor`, `LinearEstimator`): logits are `tf.feature_column.linear_model` of
the features, in variable scope "linear", trained with FTRL by default.

The variables are TF's: "linear/linear_model/<column>/weights" and
"linear/linear_model/bias_weights" (each one partition "part_0" of a partitioned
variable, as TF's default min-max partitioner makes them), so TF1 checkpoints of these
estimators restore into them.

With `optimizer=tf.estimator.experimental.LinearSDCA(...)` the classifier (binary) and
the regressor (one label) train by stochastic dual coordinate ascent instead
(linear_sdca.py).
"""
from __future__ import annotations

import math
from typing import Callable, Iterable

import tensorweave as tf
from tensorweave.estimator.canned import head as head_lib
from tensorweave.estimator.canned import optimizers
from tensorweave.estimator.canned.linear_sdca import LinearSDCA, sdca_model_fn
from tensorweave.estimator.estimator import Estimator
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.state.partitioned_variables import PartitionedVariable

_LEARNING_RATE = 0.2


def _default_optimizer(feature_columns):
    """FTRL with the learning rate TF uses for `optimizer=None`: smaller with many columns."""
    learning_rate = min(_LEARNING_RATE, 1.0 / math.sqrt(len(feature_columns)))
    return tf.train.FtrlOptimizer(learning_rate=learning_rate)


def expand_partitions(variables) -> list:
    """`variables` with each PartitionedVariable replaced by its partitions."""
    expanded = []
    for variable in variables:
        if isinstance(variable, PartitionedVariable):
            expanded.extend(variable)
        else:
            expanded.append(variable)
    return expanded


def _fraction_of_zero(variables) -> tf.Tensor:
    """The fraction of the entries of `variables` that are zero (TF's sparsity summary)."""
    with tf.name_scope("zero_fraction"):
        with tf.name_scope("total_size"):
            sizes = [tf.size(v, out_type=tf.int64) for v in variables]
            total_size = tf.add_n(sizes)
        with tf.name_scope("total_zero"):
            # counting the zeros directly: 0 for an empty variable, where TF's
            # zero_fraction(x) * size would need a cond to avoid 0 * NaN
            total_zero = tf.add_n([tf.reduce_sum(tf.cast(tf.equal(v, 0), tf.float32))
                                   for v in variables])
        with tf.name_scope("compute"):
            fraction = total_zero / tf.cast(total_size, tf.float32, name="float32_size")
        return tf.identity(fraction, name="zero_fraction_or_nan")


@tf_export("estimator.experimental.linear_logit_fn_builder")
def linear_logit_fn_builder(units: int, feature_columns: Iterable,
                            sparse_combiner: str = "sum") -> Callable:
    """A logit_fn computing `tf.feature_column.linear_model` of the features.

    Args:
      units: the width of the logits.
      feature_columns: the model's feature columns.
      sparse_combiner: "sum", "mean" or "sqrtn": how a multivalent categorical column's
        weights combine within an example.

    Returns:
      `linear_logit_fn(features) -> logits [batch, units]`; it also adds the "bias" and
      "fraction_of_zero_weights" summaries.
    """
    def linear_logit_fn(features):
        logits, _, _ = _linear_logits(features, feature_columns, units, sparse_combiner)
        return logits
    return linear_logit_fn


def _linear_logits(features, feature_columns, units: int, sparse_combiner: str):
    """`linear_model` of the features with TF's "bias" and "fraction_of_zero_weights"
    summaries. Returns (logits, column -> its variables, the bias partitions)."""
    cols_to_vars = {}
    logits = tf.feature_column.linear_model(
        features, feature_columns, units=units, sparse_combiner=sparse_combiner,
        cols_to_vars=cols_to_vars)
    bias = expand_partitions(cols_to_vars.pop("bias"))
    weights = expand_partitions([v for vs in cols_to_vars.values() for v in vs])
    if units > 1:
        tf.summary.histogram("bias", tf.concat(bias, 0))
    else:
        tf.summary.scalar("bias", bias[0][0])
    tf.summary.scalar("fraction_of_zero_weights", _fraction_of_zero(weights))
    return logits, cols_to_vars, bias


def num_ps_replicas(config) -> int:
    return config.num_ps_replicas if config else 0


def input_layer_partitioner(config):
    """TF's default partitioner of the input variables: 64 MiB shards, at most one per
    parameter server (a single "part_0" without any)."""
    return tf.min_max_variable_partitioner(max_partitions=num_ps_replicas(config),
                                           min_slice_size=64 << 20)


def check_features(features) -> None:
    if not isinstance(features, dict):
        raise ValueError("features should be a dictionary of `Tensor`s. Given type: {}"
                         .format(type(features)))


def _linear_model_fn(features, labels, mode, head, feature_columns, optimizer, partitioner,
                     config, sparse_combiner: str = "sum"):
    """The model_fn of the linear estimators: linear logits, then the head's spec."""
    check_features(features)
    partitioner = partitioner or input_layer_partitioner(config)
    with tf.variable_scope("linear", values=tuple(features.values()),
                           partitioner=partitioner):
        if isinstance(optimizer, LinearSDCA):
            return sdca_model_fn(features, labels, mode, head, feature_columns, optimizer,
                                 _linear_logits(features, feature_columns, 1, "sum"))
        logit_fn = linear_logit_fn_builder(head.logits_dimension, feature_columns,
                                           sparse_combiner)
        logits = logit_fn(features=features)
        optimizer = optimizers.get_optimizer_instance(
            optimizer or _default_optimizer(feature_columns), learning_rate=_LEARNING_RATE)
        return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                          optimizer=optimizer, logits=logits)


def _check_sdca(optimizer, sparse_combiner: str, multi_dimensional: bool,
                message: str) -> None:
    """TF's checks of a LinearSDCA optimizer, at the estimator's construction."""
    if isinstance(optimizer, LinearSDCA):
        if sparse_combiner != "sum":
            raise ValueError('sparse_combiner must be "sum" when optimizer is a LinearSDCA '
                             'object.')
        if multi_dimensional:
            raise ValueError(message)


class _LinearBase(Estimator):
    """The constructor shared by the linear estimators: a model_fn over `head`."""

    def __init__(self, head, feature_columns, model_dir, optimizer, config, partitioner,
                 warm_start_from, sparse_combiner):
        feature_columns = tuple(feature_columns or [])

        def _model_fn(features, labels, mode, config):
            return _linear_model_fn(features, labels, mode, head, feature_columns,
                                    optimizer, partitioner, config, sparse_combiner)

        super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


@tf_export("estimator.LinearClassifier")
class LinearClassifier(_LinearBase):
    """A linear model for classification (TF1 `tf.estimator.LinearClassifier`).

    Args:
      feature_columns: the model's feature columns.
      model_dir: where checkpoints and summaries are written.
      n_classes: the number of classes (2: binary logistic head, more: softmax head).
      weight_column: a feature key or numeric column of per-example loss weights.
      label_vocabulary: the class strings, when labels are strings.
      optimizer: an Optimizer, its name ('Ftrl': learning rate 0.2), a callable
        returning one, or a `tf.estimator.experimental.LinearSDCA`; None: FTRL with
        learning rate min(0.2, 1 / sqrt(#columns)).
      config: a `tf.estimator.RunConfig`.
      partitioner: the partitioner of the model's variables.
      warm_start_from: a checkpoint path or `WarmStartSettings`.
      loss_reduction: a `tf.losses.Reduction` other than NONE (default SUM).
      sparse_combiner: "sum", "mean" or "sqrtn" (see `linear_model`).

    Raises:
      ValueError: bad `n_classes`, `label_vocabulary` or `loss_reduction`; a `LinearSDCA`
        optimizer with more than two classes or another combiner than "sum".
    """

    def __init__(self, feature_columns, model_dir=None, n_classes: int = 2,
                 weight_column=None, label_vocabulary=None, optimizer="Ftrl", config=None,
                 partitioner=None, warm_start_from=None,
                 loss_reduction: str = "weighted_sum", sparse_combiner: str = "sum"):
        _check_sdca(optimizer, sparse_combiner, n_classes > 2,
                    "LinearSDCA cannot be used in a multi-class setting.")
        head = head_lib.binary_or_multi_class_head(n_classes, weight_column,
                                                   label_vocabulary, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, partitioner,
                         warm_start_from, sparse_combiner)


@tf_export("estimator.LinearRegressor")
class LinearRegressor(_LinearBase):
    """A linear model for regression (TF1 `tf.estimator.LinearRegressor`).

    Args:
      feature_columns, model_dir, weight_column, optimizer, config, partitioner,
      warm_start_from, loss_reduction, sparse_combiner: see `LinearClassifier`.
      label_dimension: the number of regression targets per example.

    Raises:
      ValueError: bad `label_dimension` or `loss_reduction`; a `LinearSDCA` optimizer
        with `label_dimension` > 1 or another combiner than "sum".
    """

    def __init__(self, feature_columns, model_dir=None, label_dimension: int = 1,
                 weight_column=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction: str = "weighted_sum",
                 sparse_combiner: str = "sum"):
        _check_sdca(optimizer, sparse_combiner, label_dimension > 1,
                    "LinearSDCA can only be used with one-dimensional label.")
        head = head_lib.regression_head(label_dimension=label_dimension,
                                        weight_column=weight_column,
                                        loss_reduction=loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, partitioner,
                         warm_start_from, sparse_combiner)


@tf_export("estimator.LinearEstimator")
class LinearEstimator(_LinearBase):
    """A linear model with a given head (TF1 `tf.estimator.LinearEstimator`).

    Args:
      head: a head of `tensorweave.estimator.canned.head` (it sets the loss, metrics and
        predictions).
      feature_columns, model_dir, optimizer, config, partitioner, sparse_combiner,
      warm_start_from: see `LinearClassifier`.
    """

    def __init__(self, head, feature_columns, model_dir=None, optimizer="Ftrl",
                 config=None, partitioner=None, sparse_combiner: str = "sum",
                 warm_start_from=None):
        super().__init__(head, feature_columns, model_dir, optimizer, config, partitioner,
                         warm_start_from, sparse_combiner)
