"""Early stopping of Estimator training on evaluation results
(`tf.estimator.experimental.stop_if_*_hook`, `make_early_stopping_hook`; TF's
estimator/early_stopping.py).

The results are read from the event files evaluation writes (`estimator.eval_dir()`):
one Summary per evaluation, at the global step of the evaluated checkpoint. The chief's
hook checks a predicate every N steps or seconds; when it holds, the hook sets the
boolean variable `signal_early_stopping/STOP` and stops. The hook a non-chief worker
gets reads that variable (on the ps, in between-graph training) each step and stops
once it is set.
"""
from __future__ import annotations

import collections
import operator
import os

from tensorweave.estimator.estimator import Estimator
from tensorweave.framework import dtypes, errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys
from tensorweave.platform import gfile
from tensorweave.platform import tf_logging as logging
from tensorweave.train import training_util
from tensorweave.train.basic_session_run_hooks import SecondOrStepTimer
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook

_EVENT_FILE_GLOB_PATTERN = "events.out.tfevents.*"


@tf_export("estimator.experimental.make_early_stopping_hook")
def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60,
                             run_every_steps=None) -> SessionRunHook:
    """A hook that stops training when `should_stop_fn()` returns True.

    On the chief, `should_stop_fn` is called every `run_every_secs` seconds or every
    `run_every_steps` steps (and after the first step); on other workers the hook stops
    when the chief has signalled the stop.

    Args:
      estimator: the `tf.estimator.Estimator` being trained.
      should_stop_fn: a callable of no arguments returning a bool.
      run_every_secs: seconds between calls (set run_every_secs=None to use steps).
      run_every_steps: steps between calls.

    Raises:
      TypeError: estimator is not an Estimator, or should_stop_fn not callable.
      ValueError: both run_every_secs and run_every_steps are set.
    """
    if not isinstance(estimator, Estimator):
        raise TypeError("`estimator` must have type `tf.estimator.Estimator`. Got: {}"
                        .format(type(estimator)))
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` must be set.")
    # RunConfig refuses multi-worker strategies (a TF_CONFIG cluster with a strategy),
    # so TF's MultiWorkerMirroredStrategy branch cannot be reached here.
    if estimator.config.is_chief:
        return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)
    return _CheckForStoppingHook()


def _threshold_hook_doc(direction: str) -> str:
    return """A hook that stops training once an evaluation at global step >= `min_steps`
    found `metric_name` {} than `threshold`.

    Args:
      estimator: the `tf.estimator.Estimator` being trained.
      metric_name: the metric to watch ("loss", "accuracy", ...).
      threshold: the value to compare with.
      eval_dir: the directory of the eval event files (default: estimator.eval_dir()).
      min_steps: evaluations of earlier global steps are ignored.
      run_every_secs, run_every_steps: how often to check (see
        make_early_stopping_hook).
    """.format(direction)


@tf_export("estimator.experimental.stop_if_higher_hook")
def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None) -> SessionRunHook:
    return _threshold_crossed_hook(estimator, metric_name, threshold, True, eval_dir,
                                   min_steps, run_every_secs, run_every_steps)


@tf_export("estimator.experimental.stop_if_lower_hook")
def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None) -> SessionRunHook:
    return _threshold_crossed_hook(estimator, metric_name, threshold, False, eval_dir,
                                   min_steps, run_every_secs, run_every_steps)


stop_if_higher_hook.__doc__ = _threshold_hook_doc("higher")
stop_if_lower_hook.__doc__ = _threshold_hook_doc("lower")


def _no_improvement_hook_doc(direction: str, arg: str) -> str:
    return """A hook that stops training once `metric_name` has not {0}d over the
    evaluations of the last `{1}` global steps: some evaluation is
    `{1}` steps or more after the best one (evaluations before
    `min_steps` ignored).

    Args:
      estimator: the `tf.estimator.Estimator` being trained.
      metric_name: the metric to watch ("loss", "accuracy", ...).
      {1}: the number of global steps without {0}.
      eval_dir: the directory of the eval event files (default: estimator.eval_dir()).
      min_steps: evaluations of earlier global steps are ignored.
      run_every_secs, run_every_steps: how often to check (see
        make_early_stopping_hook).
    """.format(direction, arg)


@tf_export("estimator.experimental.stop_if_no_increase_hook")
def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None) -> SessionRunHook:
    return _no_improvement_hook(estimator, metric_name, max_steps_without_increase, True,
                                eval_dir, min_steps, run_every_secs, run_every_steps)


@tf_export("estimator.experimental.stop_if_no_decrease_hook")
def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None) -> SessionRunHook:
    return _no_improvement_hook(estimator, metric_name, max_steps_without_decrease, False,
                                eval_dir, min_steps, run_every_secs, run_every_steps)


stop_if_no_increase_hook.__doc__ = _no_improvement_hook_doc(
    "increase", "max_steps_without_increase")
stop_if_no_decrease_hook.__doc__ = _no_improvement_hook_doc(
    "decrease", "max_steps_without_decrease")


def read_eval_metrics(eval_dir) -> "collections.OrderedDict":
    """The scalar (simple_value) summaries of the event files in `eval_dir`: an
    OrderedDict global step -> {tag: value}, by increasing step (later events of a step
    update earlier ones)."""
    by_step = collections.defaultdict(dict)
    for event in _summary_events(eval_dir):
        if not event.HasField("summary"):
            continue
        metrics = {v.tag: v.simple_value for v in event.summary.value
                   if v.HasField("simple_value")}
        if metrics:
            by_step[event.step].update(metrics)
    return collections.OrderedDict(sorted(by_step.items()))


def _summary_events(eval_dir):
    """The events of every event file in eval_dir (none if it does not exist); the
    rest of a corrupted file is skipped with a warning."""
    from tensorweave.summary.writer import summary_iterator
    if not gfile.Exists(eval_dir):
        return
    for path in gfile.Glob(os.path.join(eval_dir, _EVENT_FILE_GLOB_PATTERN)):
        try:
            for event in summary_iterator(path):
                yield event
        except errors.DataLossError as e:
            logging.warning(
                "Skipping rest of the file due to encountering data corruption error; file "
                "path: %s; original error raised by `tf.train.summary_iterator`: %s",
                path, e)


def _threshold_crossed_hook(estimator, metric_name, threshold, higher_is_better, eval_dir,
                            min_steps, run_every_secs, run_every_steps):
    eval_dir = estimator.eval_dir() if eval_dir is None else eval_dir
    better = operator.gt if higher_is_better else operator.lt
    relation = "greater than" if higher_is_better else "less than"

    def threshold_crossed() -> bool:
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if better(value, threshold):
                logging.info("At step %s, metric \"%s\" has value %s which is %s the "
                             "configured threshold (%s) for early stopping.", step,
                             metric_name, value, relation, threshold)
                return True
        return False

    return make_early_stopping_hook(estimator, threshold_crossed, run_every_secs,
                                    run_every_steps)


def _no_improvement_hook(estimator, metric_name, max_steps_without_improvement,
                         higher_is_better, eval_dir, min_steps, run_every_secs,
                         run_every_steps):
    eval_dir = estimator.eval_dir() if eval_dir is None else eval_dir
    better = operator.gt if higher_is_better else operator.lt
    change = "increase" if higher_is_better else "decrease"

    def no_improvement() -> bool:
        best_value = best_step = None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if best_value is None or better(value, best_value):
                best_value, best_step = value, step
            if step - best_step >= max_steps_without_improvement:
                logging.info("No %s in metric \"%s\" for %s steps, which is greater than or "
                             "equal to max steps (%s) configured for early stopping.",
                             change, metric_name, step - best_step,
                             max_steps_without_improvement)
                return True
        return False

    return make_early_stopping_hook(estimator, no_improvement, run_every_secs,
                                    run_every_steps)


def _get_or_create_stop_var():
    """The graph's `signal_early_stopping/STOP`: a global, non-trainable bool scalar
    initialized to False (so it is saved and, in a cluster, placed on a ps)."""
    from tensorweave.ops.state.init_ops import Constant
    from tensorweave.ops.state.variable_scope import AUTO_REUSE, get_variable, \
        variable_scope
    with variable_scope("signal_early_stopping", values=[], reuse=AUTO_REUSE):
        return get_variable("STOP", shape=[], dtype=dtypes.bool,
                            initializer=Constant(False),
                            collections=[GraphKeys.GLOBAL_VARIABLES], trainable=False)


class _StopOnPredicateHook(SessionRunHook):
    """The chief's hook: checks `should_stop_fn` when the timer is due (after the first
    step, then every N steps or seconds); when it holds, sets the stop variable and
    requests a stop."""

    def __init__(self, should_stop_fn, run_every_secs=60, run_every_steps=None):
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._should_stop_fn = should_stop_fn
        self._timer = SecondOrStepTimer(every_secs=run_every_secs,
                                        every_steps=run_every_steps)
        self._global_step_tensor = None
        self._stop_op = None

    def begin(self) -> None:
        from tensorweave.ops.state.state_ops import assign
        self._global_step_tensor = training_util.get_global_step()
        self._stop_op = assign(_get_or_create_stop_var(), True)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values) -> None:
        step = run_values.results
        if not self._timer.should_trigger_for_step(step):
            return
        self._timer.update_last_triggered_step(step)
        if self._should_stop_fn():
            logging.info("Requesting early stopping at global step %d", step)
            run_context.session.run(self._stop_op)
            run_context.request_stop()


class _CheckForStoppingHook(SessionRunHook):
    """A non-chief worker's hook: stops once the chief has set the stop variable."""

    def __init__(self):
        self._stop_var = None

    def begin(self) -> None:
        self._stop_var = _get_or_create_stop_var()

    def before_run(self, run_context):
        return SessionRunArgs(self._stop_var)

    def after_run(self, run_context, run_values) -> None:
        if run_values.results:
            logging.info("Early stopping requested, suspending run.")
            run_context.request_stop()
