"""Estimator hooks of tf.estimator.experimental (TF's estimator/hooks/hooks.py):

  InMemoryEvaluatorHook              evaluates the model being trained, in the training
                                     process, from the variables' current values
  make_stop_at_checkpoint_step_hook  StopAtStepHook on the chief; elsewhere a hook that
                                     stops once the last step's checkpoint is written
"""
from __future__ import annotations

import os
import time

from tensorweave.estimator import evaluation as _eval
from tensorweave.estimator.estimator import _check_hooks
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Graph, GraphKeys, get_collection
from tensorweave.train import training_util
from tensorweave.train.basic_session_run_hooks import SecondOrStepTimer, StopAtStepHook
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook


@tf_export("estimator.experimental.InMemoryEvaluatorHook")
class InMemoryEvaluatorHook(SessionRunHook):
    """Evaluates the model being trained without a checkpoint: when the training
    session is created, every `every_n_iter` training steps (of this train() call) and
    at the end, the current values of the training variables are copied into a separate
    evaluation graph, which is run as `estimator.evaluate` would run it, and the results
    are written to the eval summaries (`model_dir/eval` or `eval_<name>`).

    Only for single-machine training; global variables only (no other saveables), and
    no custom Saver or init_fn in the model_fn's Scaffold.

    Args:
      estimator: the `tf.estimator.Estimator` being trained.
      input_fn: the evaluation input_fn (as for `estimator.evaluate`).
      steps: evaluate this many batches (None: until the input ends).
      hooks: `SessionRunHook`s of the evaluation.
      name: the evaluation's name (its eval directory: "eval_<name>").
      every_n_iter: evaluate every this many training steps.

    Raises:
      ValueError: every_n_iter not positive, steps <= 0, or a cluster config.
      TypeError: a hook is not a SessionRunHook.
    """

    def __init__(self, estimator, input_fn, steps=None, hooks=None, name=None,
                 every_n_iter=100):
        if every_n_iter is None or every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        config = estimator.config
        if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
            raise ValueError(
                "InMemoryEvaluator supports only single machine (aka Local) setting.")
        self._estimator = estimator
        self._input_fn = input_fn
        self._every_n_iter = every_n_iter
        self._eval_dir = os.path.join(estimator.model_dir,
                                      "eval" if not name else "eval_" + name)
        self._hooks = _check_hooks(hooks)
        if steps is not None:
            if steps <= 0:
                raise ValueError("Must specify steps > 0, given: {}".format(steps))
            self._hooks.append(_eval.StopAfterNEvalsHook(num_evals=steps))
        self._timer = SecondOrStepTimer(every_steps=every_n_iter)
        self._graph = None

    def begin(self) -> None:
        """Builds the evaluation graph, with a placeholder per global variable."""
        from tensorweave.ops.array.constant_op import placeholder
        self._timer.reset()
        self._iter_count = 0
        self._graph = Graph()
        with self._graph.as_default():
            self._build_eval_graph()
            if self._scaffold.saver is not None:
                raise ValueError("InMemoryEvaluator does not support custom saver")
            if self._scaffold.init_fn is not None:
                raise ValueError("InMemoryEvaluator does not support custom init_fn")
            self._eval_vars = {v.name: v for v in get_collection(GraphKeys.GLOBAL_VARIABLES)}
            self._placeholders = {name: placeholder(v.dtype.base_dtype)
                                  for name, v in self._eval_vars.items()}

    def _build_eval_graph(self) -> None:
        """What Estimator.evaluate builds (from the initial values: the training
        session's are fed in before each evaluation)."""
        self._scaffold, self._update_op, self._final_ops, self._all_hooks = \
            self._estimator._evaluate_build_graph(self._input_fn, self._hooks, None)

    def after_create_session(self, session, coord) -> None:
        """Pairs the training variables with the evaluation ones (by name; those only
        in one graph are left out), then evaluates the initial model."""
        from tensorweave.ops.control_flow.structure import group
        from tensorweave.ops.state.state_ops import assign
        if get_collection(GraphKeys.SAVEABLE_OBJECTS):
            raise ValueError("InMemoryEvaluator does not support saveables other than "
                             "global variables.")
        train_vars = {v.name: v for v in get_collection(GraphKeys.GLOBAL_VARIABLES)}
        shared = sorted(set(train_vars) & set(self._eval_vars))
        self._train_vars = {name: train_vars[name] for name in shared}
        with self._graph.as_default():
            self._feed_op = group(*[assign(self._eval_vars[name], self._placeholders[name])
                                    for name in shared])
        self._evaluate(session)

    def _evaluate(self, train_session) -> None:
        from tensorweave.train.monitored_session import Scaffold
        values = train_session.run(self._train_vars)
        feed = {self._placeholders[name]: value for name, value in values.items()}

        def feed_variables(scaffold, session):
            session.run(self._feed_op, feed_dict=feed)

        scaffold = Scaffold(init_fn=feed_variables, copy_from_scaffold=self._scaffold)
        est = self._estimator
        with self._graph.as_default():
            results = _eval.evaluate_once(None, est.config.evaluation_master, scaffold,
                                          self._update_op, self._final_ops,
                                          self._all_hooks, est._session_config)
        _eval.write_dict_to_summary(self._eval_dir, results,
                                    int(results[GraphKeys.GLOBAL_STEP]))
        self._timer.update_last_triggered_step(self._iter_count)

    def after_run(self, run_context, run_values) -> None:
        self._iter_count += 1
        if self._timer.should_trigger_for_step(self._iter_count):
            self._evaluate(run_context.session)

    def end(self, session) -> None:
        """Evaluates the final model (again, if the last step was just evaluated)."""
        self._evaluate(session)


def _checkpoint_global_step(model_dir) -> int:
    """The global step saved in the latest checkpoint of model_dir (0 if none)."""
    from tensorweave.train.checkpoint_management import latest_checkpoint
    from tensorweave.train.checkpoint_utils import load_variable
    path = latest_checkpoint(model_dir)
    if not path:
        return 0
    try:
        return int(load_variable(path, GraphKeys.GLOBAL_STEP))
    except Exception:  # noqa: BLE001 - TF reads any failure as "step 0"
        return 0


class _StopAtCheckpointStepHook(SessionRunHook):
    """Stops once the global step reaches `last_step` and a checkpoint of that step is
    in `model_dir`; while the checkpoint lags, waits `wait_after_file_check_secs` after
    each look (so that many workers do not hammer the file system)."""

    def __init__(self, model_dir, last_step, wait_after_file_check_secs=30):
        if last_step is None:
            raise ValueError("last_step must be specified.")
        if model_dir is None:
            raise ValueError("model_dir must be specified.")
        self._model_dir = model_dir
        self._last_step = last_step
        self._wait_after_file_check_secs = wait_after_file_check_secs

    def begin(self) -> None:
        self._global_step_tensor = training_util._get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use "
                               "StopAtCheckpointStepHook.")

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values) -> None:
        # the fetched value was read before this step's increment
        if run_values.results + 1 < self._last_step:
            return
        if _checkpoint_global_step(self._model_dir) >= self._last_step:
            run_context.request_stop()
        else:
            time.sleep(self._wait_after_file_check_secs)


@tf_export("estimator.experimental.make_stop_at_checkpoint_step_hook")
def make_stop_at_checkpoint_step_hook(estimator, last_step,
                                      wait_after_file_check_secs=30) -> SessionRunHook:
    """A hook that stops training at global step `last_step`: a StopAtStepHook on the
    chief; on other workers, one that also waits for the chief's checkpoint of that step
    in estimator.model_dir (looking again every `wait_after_file_check_secs`)."""
    if estimator.config.is_chief:
        return StopAtStepHook(last_step=last_step)
    return _StopAtCheckpointStepHook(estimator.model_dir, last_step,
                                     wait_after_file_check_secs)
