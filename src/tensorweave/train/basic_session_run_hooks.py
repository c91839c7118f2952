"""The standard hooks of TF1's training loop: stopping, logging, NaN checks, step rate,
summaries, checkpoints, waiting for a step, final ops, feeds and profiling."""
from __future__ import annotations

import os
import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.platform import tf_logging as logging
from tensorweave.train import training_util
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook


def _event_pb2():
    from tensorboard.compat.proto import event_pb2
    return event_pb2


def _writer_cache():
    from tensorweave.summary.writer import FileWriterCache
    return FileWriterCache


def _as_graph_element(obj):
    """A Tensor or Operation of the default graph from a Tensor, Variable or name."""
    g = _graph.get_default_graph()
    if isinstance(obj, str):
        if ":" in obj:
            return g.as_graph_element(obj)
        element = g.as_graph_element(obj + ":0")
        try:
            g.as_graph_element(obj + ":1")
        except (KeyError, ValueError):
            return element
        raise ValueError("Name %s is ambiguous, as this `Operation` has multiple outputs "
                         "(at least 2)." % obj)
    if hasattr(obj, "graph") and obj.graph is not g:
        raise ValueError("Passed %s should have graph attribute that is equal to current "
                         "graph %s." % (obj, g))
    return obj


def _global_step_or_raise(hook_name: str):
    """The copy of the global step the hooks fetch: the step a run started from (TF's
    `_get_or_create_global_step_read`)."""
    step = training_util._get_or_create_global_step_read()
    if step is None:
        raise RuntimeError("Global step should be created to use %s." % hook_name)
    return step


@tf_export("train.SecondOrStepTimer")
class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or every `every_steps` steps (exactly one)."""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step) -> bool:
        """True if `step` is due: the first call, or enough seconds/steps since the
        last trigger (never twice for the same step)."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (seconds, steps) since the previous one,
        (None, None) the first time."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


@tf_export("train.LoggingTensorHook")
class LoggingTensorHook(SessionRunHook):
    """Logs tensors (through tf.logging, at INFO) every N local steps, every N seconds,
    and/or at the end.

    Args:
      tensors: a dict tag -> tensor (or tensor name), or a list of tensors or names.
      every_n_iter: log every N calls to `run()` of this session.
      every_n_secs: log every N seconds.
      at_end: also log the values when the session ends.
      formatter: a function of the dict tag -> value returning the line to log.

    Raises:
      ValueError: neither (or both) of every_n_iter/every_n_secs without at_end, or a
        non-positive every_n_iter.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = None if only_log_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self) -> None:
        if self._timer is not None:
            self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t)
                                 for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = (self._timer is not None and
                                self._timer.should_trigger_for_step(self._iter_count))
        if self._should_trigger:
            return SessionRunArgs(self._current_tensors)
        return None

    def _log_tensors(self, tensor_values) -> None:
        saved = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs = None
            if self._timer is not None:
                elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                logging.info(self._formatter(tensor_values))
            else:
                stats = ", ".join("%s = %s" % (tag, tensor_values[tag])
                                  for tag in self._tag_order)
                if elapsed_secs is not None:
                    logging.info("%s (%.3f sec)", stats, elapsed_secs)
                else:
                    logging.info("%s", stats)
        finally:
            np.set_printoptions(**saved)

    def after_run(self, run_context, run_values) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


@tf_export("train.StopAtStepHook")
class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step`, or `num_steps` steps
    after the global step found when the session was created (exactly one of them)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step_tensor = _global_step_or_raise("StopAtStepHook")

    def after_create_session(self, session, coord) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values) -> None:
        # The fetched value was read before this step's increment.
        if run_values.results + 1 >= self._last_step:
            step = run_context.session.run(self._global_step_tensor)
            if step >= self._last_step:
                run_context.request_stop()


@tf_export("train.CheckpointSaverListener")
class CheckpointSaverListener:
    """Callbacks around the saves of a CheckpointSaverHook; `after_save` returning True
    stops the training loop."""

    def begin(self) -> None:
        pass

    def before_save(self, session, global_step_value) -> None:
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value) -> None:
        pass


@tf_export("train.CheckpointSaverHook")
class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session is created, every N seconds or steps (exactly
    one), and at the end.

    Raises:
      ValueError: both `saver` and `scaffold`, or not exactly one of save_secs/save_steps.
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        logging.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def

    def begin(self) -> None:
        self._summary_writer = _writer_cache().get(self._checkpoint_dir)
        self._global_step_tensor = _global_step_or_raise("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord) -> None:
        from tensorweave.train.meta_graph import export_meta_graph
        global_step = int(session.run(self._global_step_tensor))
        graph = _graph.get_default_graph()
        if self._save_graph_def:
            from tensorweave.framework.graph_util import write_graph
            write_graph(graph.as_graph_def(add_shapes=True), self._checkpoint_dir,
                        "graph.pbtxt")
        # As TF1: the event file gets the graph even when save_graph_def is False (that
        # only skips graph.pbtxt and the checkpoints' .meta files).
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(
            export_meta_graph(graph=graph, saver_def=self._get_saver().saver_def))
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session) -> None:
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step) -> bool:
        """Saves at `step`; True if a listener asked to stop training."""
        logging.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        event_pb2 = _event_pb2()
        self._summary_writer.add_session_log(
            event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT,
                                 checkpoint_path=self._save_path), step)
        logging.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be "
                             "stopped. listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        key = _graph.GraphKeys.SAVERS
        savers = _graph.get_collection(key)
        if not savers:
            raise RuntimeError("No items in collection {}. Please add a saver to the "
                               "collection or provide a saver or scaffold.".format(key))
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection {}. Please indicate which "
                               "one to use by passing it to the constructor.".format(key))
        self._saver = savers[0]
        return self._saver


@tf_export("train.StepCounterHook")
class StepCounterHook(SessionRunHook):
    """Logs (and writes as the summary "global_step/sec") the training speed, every N
    steps or seconds (exactly one)."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be "
                             "provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _writer_cache().get(self._output_dir)
        self._global_step_tensor = _global_step_or_raise("StepCounterHook")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step) -> None:
        steps_per_sec = elapsed_steps / elapsed_time
        if self._summary_writer is not None:
            from tensorboard.compat.proto import summary_pb2
            summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
                tag=self._summary_tag, simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        logging.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(
                    global_step)
                if elapsed_time is not None and elapsed_time > 0:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        # Some optimizers (SyncReplicasOptimizer on workers) do not increase the step
        # at every run; warn a few times only.
        if stale_global_step == self._last_global_step:
            logging.log_first_n(
                logging.WARN, "It seems that global step (tf.train.get_global_step) has "
                "not been increased. Current value (could be stable): %s vs previous "
                "value: %s. You could increase the global step by passing "
                "tf.train.get_global_step() to Optimizer.apply_gradients or "
                "Optimizer.minimize.", 5, stale_global_step, self._last_global_step)
        self._last_global_step = stale_global_step


@tf_export("train.NanLossDuringTrainingError")
class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


@tf_export("train.NanTensorHook")
class NanTensorHook(SessionRunHook):
    """Checks the loss after every step: on NaN raises NanLossDuringTrainingError, or
    (fail_on_nan_loss=False) logs a warning and requests a stop."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values) -> None:
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logging.error(message)
                raise NanLossDuringTrainingError
            logging.warning(message)
            run_context.request_stop()


@tf_export("train.SummarySaverHook")
class SummarySaverHook(SessionRunHook):
    """Runs the summary op(s) every N steps or seconds and writes their results.

    Raises:
      ValueError: not exactly one of scaffold/summary_op, or of save_steps/save_secs.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir=None,
                 summary_writer=None, scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _writer_cache().get(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _global_step_or_raise("SummarySaverHook")

    def _get_summary_op(self):
        op = self._summary_op if self._summary_op is not None else (
            self._scaffold.summary_op)
        if op is None:
            return None
        return op if isinstance(op, list) else [op]

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None or
                                 self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step_tensor}
        summary_ops = self._get_summary_op()
        if self._request_summary and summary_ops is not None:
            requests["summary"] = summary_ops
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values) -> None:
        if not self._summary_writer:
            return
        global_step = run_values.results["global_step"] + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            event_pb2 = _event_pb2()
            self._summary_writer.add_session_log(
                event_pb2.SessionLog(status=event_pb2.SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None) -> None:
        if self._summary_writer:
            self._summary_writer.flush()


@tf_export("train.GlobalStepWaiterHook")
class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first step until the global step reaches `wait_until_step` (workers
    that should start after the chief has trained a while)."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self) -> None:
        self._worker_is_started = False
        # (TF1's message names the class by its private name.)
        self._global_step_tensor = _global_step_or_raise("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logging.info("Waiting for global step %d before starting training.",
                     self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step_tensor)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                logging.info("Waiting for global step %d before starting training. "
                             "Current step is %d.", self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)


# What FinalOpsHook logs (as TF1) when its ops end the input.
_FINAL_OPS_OUT_OF_RANGE_WARNING = (
    "An OutOfRangeError or StopIteration exception is raised by the code in "
    "FinalOpsHook. This typically means the Ops running by the FinalOpsHook have a "
    "dependency back to some input source, which should not happen. For example, for "
    "metrics in tf.estimator.Estimator, all metrics functions return two Ops: "
    "`value_op` and  `update_op`. Estimator.evaluate calls the `update_op` for each "
    "batch of the data in input source and, once it is exhausted, it call the "
    "`value_op` to get the metric values. The `value_op` here should have dependency "
    "back to variables reading only, rather than reading another batch from input. "
    "Otherwise, the `value_op`, executed by `FinalOpsHook`, triggers another data "
    "reading, which ends OutOfRangeError/StopIteration. Please fix that.")


@tf_export("train.FinalOpsHook")
class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` when the session ends; their values are `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session) -> None:
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            logging.warning(_FINAL_OPS_OUT_OF_RANGE_WARNING)
            raise


@tf_export("train.FeedFnHook")
class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()` (a feed dict) to every run call."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


@tf_export("train.ProfilerHook")
class ProfilerHook(SessionRunHook):
    """Traces a step every N steps or seconds and writes it as a Chrome trace
    (`output_dir/timeline-<step>.json`, drawn by tf.client.timeline with show_dataflow
    and show_memory) and as run metadata in the event file.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._file_writer = _writer_cache().get(output_dir)
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        self._next_step = None
        self._global_step_tensor = _global_step_or_raise("ProfilerHook")

    def before_run(self, run_context):
        from tensorweave.runtime.config import RunOptions
        self._request_summary = (self._next_step is not None and
                                 self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if (
            self._request_summary) else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = run_values.results["global_step"]
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step),
                       run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata,
                                               "step_%d" % global_step)
        self._next_step = global_step + 1

    def _save(self, step, save_path, step_stats) -> None:
        from tensorweave.client.timeline import Timeline
        from tensorweave.platform import gfile
        logging.info("Saving timeline for %d into '%s'.", step, save_path)
        with gfile.GFile(save_path, "w") as f:
            f.write(Timeline(step_stats).generate_chrome_trace_format(
                show_dataflow=self._show_dataflow, show_memory=self._show_memory))
