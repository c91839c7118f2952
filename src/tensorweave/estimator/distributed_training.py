"""Estimator.train and Estimator.evaluate under `RunConfig(train_distribute=...,
eval_distribute=...)` (a MirroredStrategy or OneDeviceStrategy), as TF 1.15 /
tensorflow-estimator 2.15 run them in graph mode:

* input: `input_fn` is called once, through `strategy.make_input_fn_iterator` (it may
  take an `input_context`); it must return a Dataset, whose batches are per-replica
  batches: each replica reads the next one in turn, so one step consumes
  num_replicas batches (the global batch is num_replicas x the input_fn's batch).
* model: `model_fn` is built once per replica (`call_for_each_replica`), each replica
  on its device in replica context; variables are mirrored, and a tf.train optimizer's
  apply_gradients sums the replicas' gradients (distribute/distributed_apply.py) and
  increments the global step once.
* loss: the strategy scales losses for the Estimator (`_scale_loss_for_estimator`):
  unless the last `tf.losses` reduction was SUM, the optimizer divides each replica's
  loss by num_replicas, so the gradient is the mean over replicas, and the reported
  loss (LoggingTensorHook, "loss" summary, train's return) is the MEAN of the
  replicas' losses; otherwise both are sums.
* evaluate: metrics keep per-replica accumulators summed on read (metric_utils), so a
  metric's value covers every replica's batches; "loss" is the mean of every replica's
  batch losses.
* the scaffolds the replicas return are combined as TF combines them; hooks come from
  the first replica.
"""
from __future__ import annotations

import types

from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.framework import nest
from tensorweave.framework.graph import Graph
from tensorweave.platform import tf_logging as logging
from tensorweave.train import training_util


def _input_iterator(estimator, input_fn, mode, strategy):
    """(iterator, input hooks): the iterator over the dataset of `input_fn`, called once
    with the strategy's InputContext, each replica taking the next element in turn."""
    from tensorweave.estimator.estimator import _DatasetInitializerHook
    iterator = strategy.make_input_fn_iterator(
        lambda input_context: estimator._call_input_fn(input_fn, mode, input_context))
    return iterator, [_DatasetInitializerHook(iterator)]


def _features_and_labels(element):
    """TF's `parse_iterator_result`: (features, labels) of a dataset element."""
    if isinstance(element, (list, tuple)):
        if len(element) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return element[0], element[1]
    return element, None


def _loss_reduce_op_for_reporting(strategy):
    """How the replicas' losses are combined for reporting: the optimizer's MEAN when it
    scaled each replica's loss, else SUM (TF's `_get_loss_reduce_op_for_reporting`)."""
    from tensorweave.distribute import distribute_lib
    from tensorweave.framework.graph import get_default_graph
    if getattr(get_default_graph(), "_is_loss_scaled_by_optimizer", False):
        return distribute_lib.get_loss_reduction()
    return distribute_lib.ReduceOp.SUM


def _first_replica_hooks(strategy, per_replica_hooks) -> list:
    return [strategy.experimental_local_results(h)[0] for h in per_replica_hooks or ()]


def combine_scaffolds(strategy, grouped_scaffold):
    """One Scaffold from the replicas' (TF's `_combine_distributed_scaffold`): their
    init, local init and summary ops grouped, the first saver and init_fn, the ready
    ops concatenated."""
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.train.monitored_session import Scaffold
    scaffolds = strategy.experimental_local_results(grouped_scaffold)

    def grouped(attr):
        ops = [getattr(s, attr) for s in scaffolds if getattr(s, attr) is not None]
        return strategy.group(ops) if ops else None

    def first(attr):
        found = [getattr(s, attr) for s in scaffolds if getattr(s, attr) is not None]
        return found[0] if found else None

    def concatenated(attr):
        found = []
        for s in scaffolds:
            value = getattr(s, attr)
            if value is not None and not any(value is f for f in found):
                found.append(value)
        if not found:
            return None
        return found[0] if len(found) == 1 else concat(found, 0)

    feeds = {}
    for s in scaffolds:
        feeds.update(s.init_feed_dict or {})
    return Scaffold(init_op=grouped("init_op"), init_feed_dict=feeds or None,
                    init_fn=first("_user_init_fn"), ready_op=concatenated("ready_op"),
                    ready_for_local_init_op=concatenated("ready_for_local_init_op"),
                    local_init_op=grouped("local_init_op"),
                    summary_op=grouped("summary_op"), saver=first("saver"))


def train_model(estimator, strategy, input_fn, hooks, saving_listeners):
    """`Estimator.train`'s graph and loop under `strategy`; returns the last loss."""
    from tensorweave.ops.random.random_ops import set_random_seed
    strategy.configure(estimator._session_config)
    with Graph().as_default() as g, strategy.scope(), \
            strategy._scale_loss_for_estimator_enabled():
        set_random_seed(estimator._config.tf_random_seed)
        iterator, input_hooks = _input_iterator(estimator, input_fn, ModeKeys.TRAIN,
                                                strategy)
        global_step = estimator._create_global_step(g)
        # the hooks' copy of the step, made here in cross-replica context, not in a
        # replica
        training_util._get_or_create_global_step_read(g)
        features, labels = _features_and_labels(iterator.get_next())
        grouped = strategy.extended.call_for_each_replica(
            estimator._call_model_fn,
            args=(features, labels, ModeKeys.TRAIN, estimator.config))
        loss = strategy.reduce(_loss_reduce_op_for_reporting(strategy), grouped.loss,
                               axis=None)
        spec = EstimatorSpec(
            mode=ModeKeys.TRAIN, loss=loss, train_op=strategy.group(grouped.train_op),
            training_hooks=_first_replica_hooks(strategy, grouped.training_hooks),
            training_chief_hooks=_first_replica_hooks(strategy,
                                                      grouped.training_chief_hooks),
            scaffold=combine_scaffolds(strategy, grouped.scaffold))
        return estimator._train_with_estimator_spec(
            spec, list(input_hooks) + list(hooks), global_step, saving_listeners)


def eval_model_fn(estimator, strategy, input_fn):
    """Builds `Estimator.evaluate`'s model under `strategy` (already in its scope).

    Returns:
      (spec with the combined scaffold and the first replica's evaluation_hooks,
      input hooks, {name: (value, update_op)} with "loss", the grouped update op).
    """
    from tensorweave.metrics.metrics_means import mean
    from tensorweave.ops.control_flow.structure import group
    iterator, input_hooks = _input_iterator(estimator, input_fn, ModeKeys.EVAL, strategy)
    features, labels = _features_and_labels(iterator.get_next())
    grouped = strategy.extended.call_for_each_replica(
        estimator._call_model_fn, args=(features, labels, ModeKeys.EVAL, estimator.config))

    def loss_metric(loss):
        return strategy.extended.call_for_each_replica(mean, args=(loss,))
    metric_ops = estimator._metric_ops_with_loss(grouped, mean_of_loss=loss_metric)
    for name, (value, _) in metric_ops.items():
        if len(nest.flatten(strategy.experimental_local_results(value))) > 1:
            logging.warning("The value of metric %r differs per replica; evaluate "
                            "reports the first replica's (build metric values from "
                            "tf.metrics, which aggregate across replicas).", name)
    metric_ops = {k: (strategy.experimental_local_results(v)[0], u)
                  for k, (v, u) in metric_ops.items()}
    update_op = group(*[strategy.group(metric_ops[k][1]) for k in sorted(metric_ops)]) \
        if metric_ops else None
    spec = types.SimpleNamespace(
        scaffold=combine_scaffolds(strategy, grouped.scaffold),
        evaluation_hooks=_first_replica_hooks(strategy, grouped.evaluation_hooks))
    return spec, input_hooks, metric_ops, update_op
