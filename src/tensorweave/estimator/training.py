"""tf.estimator.train_and_evaluate with TrainSpec and EvalSpec, locally or as one task
of a TF_CONFIG cluster.

Locally, training runs once and every checkpoint it saves (at most one per
`throttle_secs`, and always the last) is evaluated and given to the exporters. In a
cluster each process does what its task is for, as TF's _TrainingExecutor: "ps" tasks
serve variables until stopped; "chief" and "worker" start their server and train
between-graph (workers after a delay of 5 s per task index, at most 60 s, or
`experimental_max_worker_delay_secs`); "master" (the legacy layout) trains and
evaluates like the local loop; the "evaluator" evaluates each new checkpoint until the
global step reaches `max_steps`.
"""
from __future__ import annotations

import collections
import os
import time
from typing import Optional

from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.run_config import TaskType
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys
from tensorweave.platform import tf_logging as logging
from tensorweave.train.basic_session_run_hooks import (CheckpointSaverListener,
                                                       SecondOrStepTimer)
from tensorweave.train.session_run_hook import SessionRunHook

_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60
_TRAINER_JOBS = (TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER)


def _check_callable(input_fn) -> None:
    if not callable(input_fn):
        raise TypeError("`input_fn` must be callable, given: {}".format(input_fn))


def _check_hooks(hooks) -> tuple:
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError("All hooks must be `SessionRunHook` instances, given: {}"
                            .format(hook))
    return hooks


def _check_listeners(listeners) -> tuple:
    listeners = tuple(listeners or [])
    for listener in listeners:
        if not isinstance(listener, CheckpointSaverListener):
            raise TypeError("All saving_listeners must be `CheckpointSaverListener` "
                            "instances, given: {}".format(listener))
    return listeners


def _check_exporters(exporters) -> tuple:
    from tensorweave.estimator.exporter import Exporter
    if not exporters:
        return ()
    if isinstance(exporters, Exporter):
        exporters = [exporters]
    bad = TypeError("`exporters` must be an Exporter, an iterable of Exporter, or `None`, "
                    "found %s." % (exporters,))
    try:
        exporters = list(exporters)
    except TypeError:
        raise bad from None
    names = []
    for e in exporters:
        if not isinstance(e, Exporter):
            raise bad
        if not e.name:
            raise ValueError("An Exporter cannot have a name that is `None` or empty. All "
                             "exporter names: {}".format([x.name for x in exporters]))
        if not isinstance(e.name, str):
            raise ValueError("An Exporter must have a string name. Given: {}"
                             .format(type(e.name)))
        if e.name in names:
            raise ValueError("`exporters` must have unique names. Such a name cannot be "
                             "`None`. All exporter names: {}"
                             .format([x.name for x in exporters]))
        names.append(e.name)
    return tuple(exporters)


@tf_export("estimator.TrainSpec")
class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks",
                                                     "saving_listeners"])):
    """The training half of train_and_evaluate.

    Args:
      input_fn: the training input_fn.
      max_steps: train until the global step reaches this (None: until the input ends).
      hooks: `tf.train.SessionRunHook`s of training.
      saving_listeners: `tf.train.CheckpointSaverListener`s.

    Raises:
      TypeError: input_fn not callable, or a hook or listener of the wrong type.
      ValueError: max_steps <= 0.
    """

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        _check_callable(input_fn)
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: {}".format(max_steps))
        return super().__new__(cls, input_fn, max_steps, _check_hooks(hooks),
                               _check_listeners(saving_listeners))


@tf_export("estimator.EvalSpec")
class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """The evaluation half of train_and_evaluate.

    Args:
      input_fn: the evaluation input_fn.
      steps: batches per evaluation (None: until the input ends).
      name: the evaluation's name (its eval directory is "eval_<name>").
      hooks: `tf.train.SessionRunHook`s of evaluation.
      exporters: an `tf.estimator.Exporter` or a list of them, run after each
        evaluation.
      start_delay_secs: how long a distributed evaluator waits before its first pass.
      throttle_secs: evaluate at most once per this many seconds.

    Raises:
      TypeError, ValueError: as TF, for arguments of the wrong type or range.
    """

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        _check_callable(input_fn)
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: {}".format(steps))
        if name is not None and not isinstance(name, str):
            raise TypeError("`name` must be string, given: {}".format(name))
        if start_delay_secs < 0:
            raise ValueError("Must specify start_delay_secs >= 0, given: {}"
                             .format(start_delay_secs))
        if throttle_secs < 0:
            raise ValueError("Must specify throttle_secs >= 0, given: {}"
                             .format(throttle_secs))
        return super().__new__(cls, input_fn, steps, name, _check_hooks(hooks),
                               _check_exporters(exporters), start_delay_secs, throttle_secs)


class _Evaluator:
    """Evaluates the latest checkpoint when it is new, then runs the exporters."""

    def __init__(self, estimator: Estimator, eval_spec: EvalSpec,
                 max_training_steps: Optional[int]):
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_training_steps
        self._previous = None

    def evaluate_and_export(self):
        """(metrics or None, export results): None when there is no new checkpoint."""
        latest = self._estimator.latest_checkpoint()
        if not latest:
            logging.warning("Estimator is not trained yet. Will start an evaluation when a "
                            "checkpoint is ready.")
            return None, []
        if latest == self._previous:
            logging.warning("No new checkpoint ready for evaluation. Skip the current "
                            "evaluation pass as evaluation results are expected to be same "
                            "for the same checkpoint.")
            return None, []
        metrics = self._estimator.evaluate(self._spec.input_fn, steps=self._spec.steps,
                                           name=self._spec.name, checkpoint_path=latest,
                                           hooks=self._spec.hooks)
        final = bool(self._max_steps) and metrics[GraphKeys.GLOBAL_STEP] >= self._max_steps
        base = os.path.join(self._estimator.model_dir, "export")
        exports = [e.export(estimator=self._estimator,
                            export_path=os.path.join(base, e.name), checkpoint_path=latest,
                            eval_result=metrics, is_the_final_export=final)
                   for e in self._spec.exporters]
        self._previous = latest
        return metrics, exports


class _EvaluateAfterSaves(CheckpointSaverListener):
    """Evaluates after a checkpoint is saved (the first, of the untrained model,
    excepted), at most once per `throttle_secs`, and after the last one."""

    def __init__(self, evaluator: _Evaluator, throttle_secs: float):
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self.eval_result, self.export_results = None, None

    def begin(self):
        self._timer = SecondOrStepTimer(every_secs=self._throttle_secs)
        self._first = True

    def after_save(self, session, global_step_value):
        if self._first:
            self._first = False
            return
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            logging.info("Skip the current checkpoint eval due to throttle secs ({} secs)."
                         .format(self._throttle_secs))

    def end(self, session, global_step_value):
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, step) -> None:
        self._timer.update_last_triggered_step(step)
        self.eval_result, self.export_results = self._evaluator.evaluate_and_export()
        if self.eval_result is None:
            raise RuntimeError("There was no new checkpoint after the training.")


@tf_export("estimator.train_and_evaluate")
def train_and_evaluate(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec):
    """Trains `estimator` and evaluates (and exports) it as it trains: locally
    without a TF_CONFIG cluster, else as this process's task of the cluster.

    Args:
      estimator: a `tf.estimator.Estimator`.
      train_spec: a `tf.estimator.TrainSpec`.
      eval_spec: a `tf.estimator.EvalSpec`.

    Returns:
      Locally, (the last evaluation's metrics, the last exports' results); in a
      cluster, None.

    Raises:
      TypeError: arguments of the wrong types.
      ValueError: a TF_CONFIG task this function cannot run.
    """
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError("`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {}"
                        .format(type(eval_spec)))
    if not isinstance(estimator, Estimator):
        raise TypeError("`estimator` must have type `tf.estimator.Estimator`. Got: {}"
                        .format(type(estimator)))
    if not isinstance(train_spec, TrainSpec):
        raise TypeError("`train_spec` must have type `tf.estimator.TrainSpec`. Got: {}"
                        .format(type(train_spec)))
    config = estimator.config
    if not config.cluster_spec.jobs and config.task_type != TaskType.EVALUATOR:
        logging.info("Running training and evaluation locally (non-distributed).")
        return _run_local(estimator, train_spec, eval_spec)
    if config.task_type == TaskType.EVALUATOR and config.task_id > 0:
        raise ValueError("For distributed training, there can only be one `evaluator` task "
                         "(with task id 0).  Given task id {}".format(config.task_id))
    runs = {TaskType.CHIEF: _run_trainer, TaskType.WORKER: _run_trainer,
            TaskType.MASTER: _run_master, TaskType.PS: _run_ps,
            TaskType.EVALUATOR: _run_evaluator}
    if config.task_type not in runs:
        raise ValueError("Task type {} is not supported. Supported task types are {}"
                         .format(config.task_type, sorted(runs)))
    runs[config.task_type](estimator, train_spec, eval_spec)
    return None


def _run_local(estimator, train_spec, eval_spec):
    logging.info(
        "Start train and evaluate loop. The evaluate will happen after every checkpoint. "
        "Checkpoint frequency is determined based on RunConfig arguments: "
        "save_checkpoints_steps {} or save_checkpoints_secs {}.".format(
            estimator.config.save_checkpoints_steps, estimator.config.save_checkpoints_secs))
    listener = _EvaluateAfterSaves(_Evaluator(estimator, eval_spec, train_spec.max_steps),
                                   eval_spec.throttle_secs)
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps,
                    hooks=list(train_spec.hooks),
                    saving_listeners=train_spec.saving_listeners + (listener,))
    return listener.eval_result, listener.export_results


def _start_server(config):
    """This task's tf.train.Server (None for a cluster of one trainer task)."""
    from tensorweave.distribute.server import Server
    from tensorweave.runtime.config import ConfigProto
    if not config.master:
        jobs = config.cluster_spec.jobs
        if len(jobs) == 1 and len(config.cluster_spec.job_tasks(jobs[0])) == 1 and \
                config.task_type in _TRAINER_JOBS:
            logging.info("Skip starting Tensorflow server as there is only one node in the "
                         "cluster.")
            return None
        raise RuntimeError("Could not start server; be sure to specify master in RunConfig "
                           "or set the TF_CONFIG environment variable.")
    logging.info("Start Tensorflow server.")
    return Server(config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
                  config=ConfigProto(log_device_placement=False), start=True,
                  protocol=None if config.protocol == "grpc+verbs" else config.protocol)


def _run_trainer(estimator, train_spec, eval_spec, saving_listeners=None):
    config = estimator.config
    server = _start_server(config)  # noqa: F841 - serves this task while it trains
    delay = 0
    if config.task_type == TaskType.WORKER:
        max_delay = _MAX_DELAY_SECS if config.experimental_max_worker_delay_secs is None \
            else int(config.experimental_max_worker_delay_secs)
        delay = min(max_delay, (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
    if delay > 0:
        logging.info("Waiting %d secs before starting training.", delay)
        time.sleep(delay)
    listeners = train_spec.saving_listeners if saving_listeners is None else saving_listeners
    estimator.train(train_spec.input_fn, max_steps=train_spec.max_steps,
                    hooks=list(train_spec.hooks), saving_listeners=listeners)


def _run_master(estimator, train_spec, eval_spec):
    listener = _EvaluateAfterSaves(_Evaluator(estimator, eval_spec, train_spec.max_steps),
                                   eval_spec.throttle_secs)
    _run_trainer(estimator, train_spec, eval_spec,
                 saving_listeners=train_spec.saving_listeners + (listener,))


def _run_ps(estimator, train_spec, eval_spec):
    server = _start_server(estimator.config)
    server.join()


def _run_evaluator(estimator, train_spec, eval_spec):
    if eval_spec.start_delay_secs:
        logging.info("Waiting %f secs before starting eval.", eval_spec.start_delay_secs)
        time.sleep(eval_spec.start_delay_secs)
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    while True:
        start = time.time()
        metrics, _ = evaluator.evaluate_and_export()
        if metrics is not None:
            step = metrics.get(GraphKeys.GLOBAL_STEP)
            if step and train_spec.max_steps and step >= train_spec.max_steps:
                logging.info("Exiting evaluation, global_step=%s >= train max_steps=%s",
                             step, train_spec.max_steps)
                return
        wait = eval_spec.throttle_secs - (time.time() - start)
        if wait > 0:
            logging.info("Waiting %f secs before starting next eval run.", wait)
            time.sleep(wait)
        elif eval_spec.throttle_secs == 0 and metrics is None:
            logging.warning("EvalSpec.throttle_secs is set as 0. This might overload the job "
                            "before finding (next) new checkpoint. Please consider to "
                            "increase it.")
            time.sleep(0.1)  # unlike TF, do not spin on a missing checkpoint
