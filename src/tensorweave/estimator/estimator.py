"""tf.estimator.Estimator: a model_fn trained, evaluated, used for prediction and
exported, each call in a graph of its own over the checkpoints of `model_dir`.

train() builds input_fn + model_fn(TRAIN) and runs the train op in a
MonitoredTrainingSession (checkpoints, summaries, step logging, NaN checks) until a
StopAtStepHook or the end of the input stops it; evaluate() restores the latest (or a
given) checkpoint, runs the metrics' update ops over the input and returns the metric
values with the global step; predict() yields the predictions of the restored model;
export_saved_model() writes a SavedModel of model_fn(PREDICT) over a serving input
receiver. In a TF_CONFIG cluster with ps tasks, variables go to ps by a replica device
setter and the session master is this task's server (between-graph replication).
"""
from __future__ import annotations

import collections
import copy
import os
import tempfile
from typing import Iterator, List, Optional

from tensorweave.estimator import evaluation as _eval
from tensorweave.estimator.mode_keys import ModeKeys
from tensorweave.estimator.model_fn import EstimatorSpec
from tensorweave.estimator.model_fn import fn_args as _fn_args
from tensorweave.estimator.run_config import RunConfig, TaskType
from tensorweave.framework import dtypes, errors
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import Graph, GraphKeys, add_to_collection, get_collection, \
    get_default_graph
from tensorweave.platform import tf_logging as logging
from tensorweave.train import basic_session_run_hooks as _hooks
from tensorweave.train import checkpoint_management as _ckpt
from tensorweave.train import training_util
from tensorweave.train import session_run_hook as _session_run_hook
from tensorweave.train.session_run_hook import SessionRunHook
from tensorweave.train.warm_starting import VocabInfo, warm_start

_VALID_MODEL_FN_ARGS = {"features", "labels", "mode", "params", "self", "config"}
_VALID_INPUT_FN_ARGS = {"mode", "params", "config", "input_context"}


@tf_export("estimator.WarmStartSettings")
class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
        "var_name_to_prev_var_name"])):
    """Where and what to warm-start from (the arguments of `tf.train.warm_start`).

    Args:
      ckpt_to_initialize_from: a checkpoint file or a directory holding checkpoints.
      vars_to_warm_start: a regex or list of names of the variables to warm-start
        (default every trainable variable: ".*").
      var_name_to_vocab_info: dict of variable name -> `tf.estimator.VocabInfo`.
      var_name_to_prev_var_name: dict of variable name -> its name in the checkpoint.
    """

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*",
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start,
                               var_name_to_vocab_info or {},
                               var_name_to_prev_var_name or {})


export(VocabInfo, "estimator.VocabInfo")
for _name in ("CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
              "GlobalStepWaiterHook", "LoggingTensorHook", "NanLossDuringTrainingError",
              "NanTensorHook", "ProfilerHook", "SecondOrStepTimer", "StepCounterHook",
              "StopAtStepHook", "SummarySaverHook"):
    export(getattr(_hooks, _name), "estimator." + _name)
for _name in ("SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"):
    export(getattr(_session_run_hook, _name), "estimator." + _name)


def _check_hooks(hooks) -> List[SessionRunHook]:
    hooks = list(hooks or [])
    for h in hooks:
        if not isinstance(h, SessionRunHook):
            raise TypeError("Hooks must be a SessionRunHook, given: {}".format(h))
    return hooks


def _check_listeners(listeners) -> list:
    listeners = list(listeners or [])
    for listener in listeners:
        if not isinstance(listener, _hooks.CheckpointSaverListener):
            raise TypeError("saving_listeners must be a list of CheckpointSaverListener, "
                            "given: {}".format(listener))
    return listeners


def _verify_model_fn_args(model_fn, params) -> None:
    args = set(_fn_args(model_fn))
    if "features" not in args:
        raise ValueError("model_fn (%s) must include features argument." % model_fn)
    if params is not None and "params" not in args:
        raise ValueError("model_fn (%s) does not include params argument, but params (%s) "
                         "is passed to Estimator." % (model_fn, params))
    if params is None and "params" in args:
        logging.warning("Estimator's model_fn (%s) includes params argument, but params "
                        "are not passed to Estimator.", model_fn)
    unexpected = sorted(args - _VALID_MODEL_FN_ARGS)
    if unexpected:
        raise ValueError("model_fn (%s) has following not expected args: %s"
                         % (model_fn, unexpected))


class _DatasetInitializerHook(SessionRunHook):
    """Initializes the iterator of an input_fn's Dataset when the session is made."""

    def __init__(self, iterator):
        self._iterator = iterator

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


def _parse_input_fn_result(result):
    """(features, labels or None, input hooks) of what an input_fn returned: a Dataset
    of (features, labels) or features, or a (features, labels) pair, or features."""
    from tensorweave.data.dataset_ops import Dataset
    hooks = []
    if isinstance(result, Dataset):
        from tensorweave.data.iterator_ops import make_initializable_iterator
        iterator = make_initializable_iterator(result)
        hooks.append(_DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1], hooks
    return result, None, hooks


def _replica_device_setter(config: RunConfig):
    """TF's default device function in a cluster with ps tasks: variables on ps
    (round robin), the rest on this worker."""
    if not config.num_ps_replicas:
        return None
    from tensorweave.train.device_setter import STANDARD_PS_OPS, replica_device_setter
    worker = "/job:%s/task:%d" % (config.task_type, config.task_id) if config.task_type \
        else "/job:worker"
    return replica_device_setter(ps_tasks=config.num_ps_replicas, worker_device=worker,
                                 merge_devices=True, ps_ops=list(STANDARD_PS_OPS),
                                 cluster=config.cluster_spec)


def _default_warm_start(warm_start_from) -> Optional[WarmStartSettings]:
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, (str, bytes)) or hasattr(warm_start_from, "__fspath__"):
        path = os.fsdecode(warm_start_from)
        variables = os.path.join(path, "variables")
        if os.path.exists(os.path.join(path, "saved_model.pb")) or \
                os.path.exists(os.path.join(path, "saved_model.pbtxt")):
            logging.info("Warm-starting from a SavedModel")
            return WarmStartSettings(os.path.join(variables, "variables"))
        return WarmStartSettings(path)
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    raise ValueError("warm_start_from must be a string or a WarmStartSettings, instead got "
                     "{}".format(type(warm_start_from)))


@tf_export("estimator.Estimator")
class Estimator:
    """Trains, evaluates, predicts with and exports a model given by `model_fn`.

    Args:
      model_fn: `model_fn(features, labels, mode, params, config)` (any subset that
        includes `features`) returning a `tf.estimator.EstimatorSpec`.
      model_dir: where checkpoints and summaries live (a temporary directory if
        neither this nor `config.model_dir` is set).
      config: a `tf.estimator.RunConfig`.
      params: a dict of hyperparameters passed to model_fn (deep-copied).
      warm_start_from: a checkpoint or SavedModel path, or `WarmStartSettings`:
        variables are initialized from it when training starts without a checkpoint.

    Raises:
      ValueError: no model_fn, a model_fn with unexpected arguments, or conflicting
        model directories.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        if config is None:
            config = RunConfig()
            logging.info("Using default config.")
        elif not isinstance(config, RunConfig):
            raise ValueError("config must be an instance of `RunConfig`, but provided %s."
                             % config)
        if model_dir is not None and hasattr(model_dir, "__fspath__"):
            model_dir = os.fspath(model_dir)
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(
                "`model_dir` are set both in constructor and `RunConfig`, but with "
                "different values. In constructor: '{}', in `RunConfig`: '{}' ".format(
                    model_dir, config.model_dir))
        if model_dir:
            config = config.replace(model_dir=model_dir)
        if not config.model_dir:
            temp = tempfile.mkdtemp()
            logging.warning("Using temporary folder as model directory: %s", temp)
            config = config.replace(model_dir=temp)
        if config.session_config is None:
            from tensorweave.runtime.config import ConfigProto
            config = config.replace(session_config=ConfigProto(allow_soft_placement=True))
        self._config = config
        logging.info("Using config: %s", config)
        self._model_dir = config.model_dir
        self._session_config = config.session_config
        self._device_fn = config.device_fn or _replica_device_setter(config)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        _verify_model_fn_args(model_fn, params)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = _default_warm_start(warm_start_from)

    # --- properties ----------------------------------------------------------------------
    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self) -> RunConfig:
        return copy.deepcopy(self._config)

    @property
    def params(self) -> dict:
        return copy.deepcopy(self._params)

    @property
    def model_fn(self):
        """The model_fn bound to this Estimator's config (called with features,
        labels, mode and config)."""
        def public_model_fn(features, labels, mode, config):
            return self._call_model_fn(features, labels, mode, config)
        return public_model_fn

    def latest_checkpoint(self) -> Optional[str]:
        """The path of the latest checkpoint in model_dir, or None."""
        return _ckpt.latest_checkpoint(self._model_dir)

    def get_variable_names(self) -> List[str]:
        """The names of the variables in the latest checkpoint.

        Raises:
          ValueError: there is no checkpoint in model_dir.
        """
        from tensorweave.train.checkpoint_utils import list_variables
        self._check_checkpoint_available()
        return [name for name, _ in list_variables(self._model_dir)]

    def get_variable_value(self, name: str):
        """The value (a NumPy array) of variable `name` in the latest checkpoint.

        Raises:
          ValueError: there is no checkpoint in model_dir.
        """
        from tensorweave.train.checkpoint_utils import load_variable
        self._check_checkpoint_available()
        return load_variable(self._model_dir, name)

    def eval_dir(self, name: Optional[str] = None) -> str:
        """The directory evaluation summaries are written to ("eval" or "eval_<name>")."""
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def _check_checkpoint_available(self) -> None:
        if not self.latest_checkpoint():
            raise ValueError("Could not find trained model in model_dir: {}."
                             .format(self._model_dir))

    # --- calling input_fn and model_fn -----------------------------------------------
    def _call_input_fn(self, input_fn, mode, input_context=None):
        args = _fn_args(input_fn)
        kwargs = {}
        if input_context is not None and "input_context" in args:
            logging.info("The `input_fn` accepts an `input_context` which will be given "
                         "by DistributionStrategy")
            kwargs["input_context"] = input_context
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self.config
        with _device_scope("/cpu:0"):
            return input_fn(**kwargs)

    def _call_model_fn(self, features, labels, mode, config) -> EstimatorSpec:
        args = _fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        logging.info("Calling model_fn.")
        spec = self._model_fn(features=features, **kwargs)
        logging.info("Done calling model_fn.")
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec

    def _create_global_step(self, graph):
        step = training_util.create_global_step(graph)
        if step.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Global step must be int32 or int64, given: %s" % step.dtype)
        return step

    def _maybe_warm_start(self, checkpoint_path) -> None:
        if not checkpoint_path and self._warm_start_settings:
            logging.info("Warm-starting with WarmStartSettings: %s", self._warm_start_settings)
            warm_start(*self._warm_start_settings)

    # --- train ---------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None,
              saving_listeners=None) -> "Estimator":
        """Trains the model on the batches of `input_fn` until `steps` more steps,
        global step `max_steps`, the end of the input, or a hook stops it.

        Args:
          input_fn: returns (features, labels), or a Dataset of them (see module doc).
          hooks: `tf.train.SessionRunHook`s run on every step.
          steps: train this many more steps (None: until the input ends).
          max_steps: train until the global step reaches this (skips training if the
            latest checkpoint is there already).
          saving_listeners: `tf.train.CheckpointSaverListener`s called around saves.

        Returns:
          self.

        Raises:
          ValueError: both steps and max_steps, a non-positive value, or a call from a
            ps or evaluator task.
        """
        if self._config.task_type in (TaskType.EVALUATOR, TaskType.PS):
            raise ValueError(
                "Train has been called wrong configuration. Please use "
                "tf.estimator.train_and_evaluate which calls proper API according to given "
                "configuration. Current configuration: {}.".format(self._config))
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: {}".format(steps))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: {}".format(max_steps))
        if max_steps is not None and max_steps <= self._checkpoint_global_step():
            logging.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _check_hooks(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(_hooks.StopAtStepHook(steps, max_steps))
        loss = self._train_model(input_fn, hooks, _check_listeners(saving_listeners))
        logging.info("Loss for final step: %s.", loss)
        return self

    def _checkpoint_global_step(self) -> int:
        latest = self.latest_checkpoint()
        if not latest:
            return 0
        from tensorweave.train.checkpoint_utils import load_variable
        try:
            return int(load_variable(latest, GraphKeys.GLOBAL_STEP))
        except (errors.NotFoundError, ValueError, KeyError):
            return 0

    def _train_model(self, input_fn, hooks, saving_listeners):
        if self._config.train_distribute is not None:
            from tensorweave.estimator import distributed_training
            return distributed_training.train_model(
                self, self._config.train_distribute, input_fn, hooks, saving_listeners)
        from tensorweave.ops.random.random_ops import set_random_seed
        with Graph().as_default() as g, _device_scope(self._device_fn):
            set_random_seed(self._config.tf_random_seed)
            global_step = self._create_global_step(g)
            if global_step is not None:  # the hooks' copy of the step, made first as TF's
                training_util._get_or_create_global_step_read(g)
            features, labels, input_hooks = _parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.TRAIN))
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            if training_util.get_global_step(g) is not None:
                global_step = training_util.get_global_step(g)
            return self._train_with_estimator_spec(spec, list(input_hooks) + list(hooks),
                                                   global_step, saving_listeners)

    def _train_with_estimator_spec(self, spec, worker_hooks, global_step,
                                   saving_listeners):
        """Runs the train op of `spec` (built in the default graph) in a
        MonitoredTrainingSession with the Estimator's hooks; returns the last loss."""
        from tensorweave.ops.summary.summary_ops import scalar
        from tensorweave.train.monitored_session import MonitoredTrainingSession
        from tensorweave.train.saver import Saver
        if self._warm_start_settings and not self.latest_checkpoint():
            logging.info("Warm-starting with WarmStartSettings: %s",
                         self._warm_start_settings)
            warm_start(*self._warm_start_settings)
        # a "loss" summary, unless the model_fn made one (TensorBoard's loss curve)
        if not any(s.op.name == "loss" for s in get_collection(GraphKeys.SUMMARIES)):
            scalar("loss", spec.loss)
        add_to_collection(GraphKeys.LOSSES, spec.loss)
        worker_hooks = list(worker_hooks)
        worker_hooks.append(_hooks.NanTensorHook(spec.loss))
        if self._config.log_step_count_steps is not None:
            worker_hooks.append(_hooks.LoggingTensorHook(
                {"loss": spec.loss, "step": global_step},
                every_n_iter=self._config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        if not (spec.scaffold.saver or get_collection(GraphKeys.SAVERS)):
            add_to_collection(GraphKeys.SAVERS, Saver(
                sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
                defer_build=True, save_relative_paths=True))
        chief_hooks = []
        saver_hooks = [h for h in worker_hooks + list(spec.training_chief_hooks)
                       if isinstance(h, _hooks.CheckpointSaverHook)]
        if (self._config.save_checkpoints_secs or self._config.save_checkpoints_steps) \
                and not saver_hooks:
            chief_hooks = [_hooks.CheckpointSaverHook(
                self._model_dir, save_secs=self._config.save_checkpoints_secs,
                save_steps=self._config.save_checkpoints_steps, scaffold=spec.scaffold,
                save_graph_def=self._config.checkpoint_save_graph_def)]
            saver_hooks = chief_hooks
        if saving_listeners:
            if not saver_hooks:
                raise ValueError(
                    "There should be a CheckpointSaverHook to use saving_listeners. "
                    "Please set one of the RunConfig.save_checkpoints_steps or "
                    "RunConfig.save_checkpoints_secs.")
            for listener in saving_listeners:
                if listener not in saver_hooks[0]._listeners:
                    saver_hooks[0]._listeners.append(listener)
        with MonitoredTrainingSession(
                master=self._config.master, is_chief=self._config.is_chief,
                checkpoint_dir=self._model_dir, scaffold=spec.scaffold,
                hooks=worker_hooks,
                chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
                save_checkpoint_secs=0,
                save_summaries_steps=self._config.save_summary_steps,
                config=self._session_config,
                max_wait_secs=self._config.session_creation_timeout_secs,
                log_step_count_steps=self._config.log_step_count_steps,
                save_graph_def=self._config.checkpoint_save_graph_def) as session:
            loss, steps_run = None, 0
            while not session.should_stop():
                steps_run += 1
                _, loss = session.run([spec.train_op, spec.loss])
        if steps_run == 0:
            logging.warning("Training with estimator made no steps. Perhaps input is "
                            "empty or misspecified.")
        return loss

    # --- evaluate ------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None,
                 name=None) -> dict:
        """Evaluates the model of `checkpoint_path` (default: the latest checkpoint; the
        initial values when there is none) on `steps` batches of `input_fn` (default:
        until the input ends).

        Args:
          input_fn: as for train().
          steps: the number of batches (None: until OutOfRangeError).
          hooks: `tf.train.SessionRunHook`s of the evaluation.
          checkpoint_path: the checkpoint to evaluate.
          name: evaluations with different names write to different eval dirs.

        Returns:
          dict of the `eval_metric_ops` values, "loss" (the mean loss) and
          "global_step".

        Raises:
          ValueError: steps <= 0, or a metric named "loss" or "global_step".
        """
        hooks = _check_hooks(hooks)
        if steps is not None:
            if steps <= 0:
                raise ValueError("Must specify steps > 0, given: {}".format(steps))
            hooks.append(_eval.StopAfterNEvalsHook(num_evals=steps))
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                logging.info("Could not find trained model in model_dir: {}, running "
                             "initialization to evaluate.".format(self._model_dir))
        strategy = self._config.eval_distribute
        with Graph().as_default(), \
                (strategy.scope() if strategy is not None else _device_scope(None)):
            scaffold, update_op, final_ops, all_hooks = self._evaluate_build_graph(
                input_fn, hooks, checkpoint_path)
            results = _eval.evaluate_once(checkpoint_path, self._config.evaluation_master,
                                          scaffold, update_op, final_ops, all_hooks,
                                          self._session_config)
        step = int(results[GraphKeys.GLOBAL_STEP])
        _eval.write_dict_to_summary(self.eval_dir(name), results, step)
        if checkpoint_path:
            _eval.write_checkpoint_path_to_summary(self.eval_dir(name), checkpoint_path, step)
        return results

    def _evaluate_build_graph(self, input_fn, hooks, checkpoint_path):
        """Builds the evaluation in the default graph: model_fn(EVAL) over input_fn, its
        metrics with the mean loss, and the global step.

        Returns:
          (scaffold, update_op, final_ops, all_hooks) for evaluation.evaluate_once.
        """
        from tensorweave.ops.control_flow.structure import group
        from tensorweave.ops.random.random_ops import set_random_seed
        from tensorweave.train.monitored_session import Scaffold
        g = get_default_graph()
        set_random_seed(self._config.tf_random_seed)
        self._create_global_step(g)
        if self._config.eval_distribute is not None:
            from tensorweave.estimator import distributed_training
            spec, input_hooks, metric_ops, update_op = distributed_training.eval_model_fn(
                self, self._config.eval_distribute, input_fn)
        else:
            features, labels, input_hooks = _parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.EVAL))
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
            metric_ops = self._metric_ops_with_loss(spec)
            update_op = group(*[metric_ops[k][1] for k in sorted(metric_ops)]) \
                if metric_ops else None
        self._maybe_warm_start(checkpoint_path)
        final_ops = {k: metric_ops[k][0] for k in sorted(metric_ops)}
        final_ops[GraphKeys.GLOBAL_STEP] = training_util.get_global_step(g)
        all_hooks = list(input_hooks) + list(hooks) + list(spec.evaluation_hooks)
        scaffold = spec.scaffold
        if scaffold.local_init_op is not None:
            # the model_fn's own local init op must also initialize what evaluation
            # added since (the metrics' variables, the eval step), as TF does
            _eval.get_or_create_eval_step()
            scaffold = Scaffold(local_init_op=group(scaffold.local_init_op,
                                                    Scaffold.default_local_init_op()),
                                copy_from_scaffold=scaffold)
        return scaffold, update_op, final_ops, all_hooks

    @staticmethod
    def _metric_ops_with_loss(spec: EstimatorSpec, mean_of_loss=None) -> dict:
        """The spec's eval_metric_ops with "loss": `tf.metrics.mean` of the loss (or
        `mean_of_loss(loss)`).

        Raises:
          ValueError: the model_fn made a metric named "loss" or "global_step".
        """
        from tensorweave.metrics.metrics_means import mean
        metric_ops = dict(spec.eval_metric_ops)
        # TF quotes the two names differently
        for reserved, quoted in (("loss", '"loss"'), (GraphKeys.GLOBAL_STEP, "`global_step`")):
            if reserved in metric_ops:
                raise ValueError("Metric with name %s is not allowed, because Estimator "
                                 "already defines a default metric with the same name."
                                 % quoted)
        metric_ops["loss"] = (mean_of_loss or mean)(spec.loss)
        return metric_ops

    # --- predict -------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples: bool = True) -> Iterator:
        """Yields the predictions of the model of `checkpoint_path` (default: the
        latest; initial values when there is none) for the features of `input_fn`,
        until its input ends.

        Args:
          input_fn: returns features, (features, labels) or a Dataset of them.
          predict_keys: the keys of dict predictions to compute (default: all).
          hooks: `tf.train.SessionRunHook`s.
          checkpoint_path: the checkpoint to use.
          yield_single_examples: yield one example at a time (else whole batches).

        Yields:
          The evaluated predictions: one example's dict (or value) at a time, or batches.

        Raises:
          ValueError: predict_keys with non-dict predictions or matching none of them,
            or predictions of different batch lengths.
        """
        hooks = _check_hooks(hooks)
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                logging.info("Could not find trained model in model_dir: {}, running "
                             "initialization to predict.".format(self._model_dir))
        from tensorweave.ops.random.random_ops import set_random_seed
        from tensorweave.train.monitored_session import ChiefSessionCreator, MonitoredSession
        with Graph().as_default() as g:
            set_random_seed(self._config.tf_random_seed)
            self._create_global_step(g)
            features, _, input_hooks = _parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.PREDICT))
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            self._maybe_warm_start(checkpoint_path)
            predictions = _extract_keys(spec.predictions, predict_keys)
            all_hooks = list(input_hooks) + hooks + list(spec.prediction_hooks)
            creator = ChiefSessionCreator(checkpoint_filename_with_path=checkpoint_path,
                                          master=self._config.master, scaffold=spec.scaffold,
                                          config=self._session_config)
            with MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(predictions, dict):
                        yield from values
                    else:
                        for i in range(_batch_length(values)):
                            yield {k: v[i] for k, v in values.items()}

    # --- export --------------------------------------------------------------------------
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text: bool = False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT) -> bytes:
        """Writes a SavedModel of model_fn(`experimental_mode`) over the receiver of
        `serving_input_receiver_fn`, with the variables of `checkpoint_path` (default:
        the latest), into a new timestamped directory under `export_dir_base`.

        Args:
          export_dir_base: the directory the timestamped export directory is made in.
          serving_input_receiver_fn: returns a `tf.estimator.export.ServingInputReceiver`
            (TRAIN and EVAL: a supervised receiver, with labels).
          assets_extra: dict of destination (relative to assets.extra) -> source file.
          as_text: write saved_model.pbtxt instead of saved_model.pb.
          checkpoint_path: the checkpoint to export.
          experimental_mode: the mode of the graph exported (see
            `experimental_export_all_saved_models`).

        Returns:
          The export directory (bytes).

        Raises:
          ValueError: no receiver fn, no checkpoint, an unknown mode, or variables
            missing from the checkpoint.
        """
        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        return self._export_all(export_dir_base,
                                {experimental_mode: serving_input_receiver_fn},
                                assets_extra, as_text, checkpoint_path,
                                strip_default_attrs=True)

    def experimental_export_all_saved_models(self, export_dir_base, input_receiver_fn_map,
                                             assets_extra=None, as_text: bool = False,
                                             checkpoint_path=None) -> bytes:
        """Writes one SavedModel with a MetaGraphDef per mode of `input_receiver_fn_map`
        (TRAIN tagged 'train', EVAL 'eval', PREDICT 'serve'), sharing the variables of
        `checkpoint_path` (default: the latest).

        Args:
          export_dir_base: the directory the timestamped export directory is made in.
          input_receiver_fn_map: ModeKeys -> input receiver fn (supervised receivers for
            TRAIN and EVAL, a serving one for PREDICT).
          assets_extra, as_text, checkpoint_path: as for export_saved_model.

        Returns:
          The export directory (bytes).

        Raises:
          ValueError: no mode with a receiver fn, no checkpoint, or variables missing
            from the checkpoint.
        """
        return self._export_all(export_dir_base, input_receiver_fn_map, assets_extra,
                                as_text, checkpoint_path, strip_default_attrs=True)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn,
                          assets_extra=None, as_text: bool = False, checkpoint_path=None,
                          strip_default_attrs: bool = False) -> bytes:
        """TF1's name of export_saved_model (deprecated there; PREDICT only)."""
        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        return self._export_all(export_dir_base,
                                {ModeKeys.PREDICT: serving_input_receiver_fn},
                                assets_extra, as_text, checkpoint_path, strip_default_attrs)

    def _export_all(self, export_dir_base, receiver_fn_map, assets_extra, as_text,
                    checkpoint_path, strip_default_attrs) -> bytes:
        from tensorweave.estimator import saved_model_export
        return saved_model_export.export_all_saved_models(
            self, export_dir_base, receiver_fn_map, assets_extra, as_text, checkpoint_path,
            strip_default_attrs)


def _extract_keys(predictions, predict_keys):
    if not predict_keys:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    chosen = {k: v for k, v in predictions.items() if k in predict_keys}
    if not chosen:
        raise ValueError("Expected to run at least one output from %s, provided %s."
                         % (predictions.keys(), predict_keys))
    return chosen


def _batch_length(values: dict) -> int:
    length = None
    for key, value in values.items():
        length = length or value.shape[0]
        if value.shape[0] != length:
            raise ValueError("Batch length of predictions should be same. %s has different "
                             "batch length than others." % key)
    return length or 0


class _device_scope:  # noqa: N801 - used like tf.device
    """`tf.device(fn_or_name)` of the default graph, or nothing for None."""

    def __init__(self, device):
        self._device = device
        self._ctx = None

    def __enter__(self):
        if self._device is not None:
            from tensorweave.framework.graph import device
            self._ctx = device(self._device)
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            return self._ctx.__exit__(*exc)
        return False
