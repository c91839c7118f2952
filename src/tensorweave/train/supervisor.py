"""tf.train.Supervisor (deprecated in TF1 in favour of MonitoredTrainingSession) and
basic_train_loop.

A Supervisor builds (or takes) the init, ready and local-init ops, the saver, summary op
and global step; `managed_session()` creates an initialized or restored session and, on
the chief, starts the standard services: threads that save a checkpoint every
save_model_secs, write summaries every save_summaries_secs, and record steps/sec.
"""
from __future__ import annotations

import contextlib
import os
import time

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys
from tensorweave.platform import tf_logging as logging
from tensorweave.train import training_util
from tensorweave.train.coordinator import Coordinator, LooperThread
from tensorweave.train.session_manager import SessionManager


def _session_log(status_name, **kwargs):
    from tensorboard.compat.proto import event_pb2
    return event_pb2.SessionLog(status=getattr(event_pb2.SessionLog, status_name), **kwargs)


def _first_of_collection(graph, key):
    """The first item of collection `key` (as TF1, several items are not an error)."""
    items = graph.get_collection(key)
    if len(items) > 1:
        logging.info("Found %d %s operations. Returning the first one.", len(items), key)
    return items[0] if items else None


def _is_reference_variable(op) -> bool:
    """Whether `op` is a TF1 reference variable: its handle carries REF_VARIABLE_ATTR
    (tensorweave's variables are all resource variables underneath)."""
    from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
    return op.type in ("Variable", "VariableV2") or (
        op.type == "VarHandleOp" and bool(op._attrs.get(REF_VARIABLE_ATTR)))


@tf_export("train.Supervisor")
class Supervisor:
    """A training helper that creates sessions, checkpoints and writes summaries.

    ```python
    sv = tf.train.Supervisor(logdir=train_dir)
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)
    ```

    Arguments left at `Supervisor.USE_DEFAULT` are found in the graph collections
    (READY_OP, INIT_OP, LOCAL_INIT_OP, SAVERS, SUMMARY_OP, GLOBAL_STEP) or built with
    TF1's defaults; None disables the feature. The graph is finalized at the end.
    """

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        if graph is None:
            graph = _graph.get_default_graph()
        self._graph = graph
        with graph.as_default():
            self._init_ready_op(ready_op, ready_for_local_init_op)
            self._init_init_op(init_op, init_feed_dict)
            self._init_local_init_op(local_init_op)
            self._init_saver(saver)
            self._init_summary_op(summary_op)
            self._init_global_step(global_step)
            from tensorweave.train.meta_graph import export_meta_graph
            self._meta_graph_def = export_meta_graph(
                graph=graph, saver_def=self._saver.saver_def if self._saver else None)
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        self._logdir = None
        self._save_summaries_secs = None
        self._save_model_secs = None
        self._save_path = None
        self._summary_writer = None
        # Only the chief checkpoints and writes events; without a logdir it still keeps
        # the intervals and a summary writer it was given.
        if self._is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is not Supervisor.USE_DEFAULT:
                self._summary_writer = summary_writer
            elif logdir:
                from tensorweave.summary.writer import FileWriter
                self._summary_writer = FileWriter(logdir)
        self._graph_added_to_summary = False
        if session_manager is None:
            session_manager = SessionManager(
                local_init_op=self._local_init_op, ready_op=self._ready_op,
                ready_for_local_init_op=self._ready_for_local_init_op, graph=graph,
                recovery_wait_secs=recovery_wait_secs,
                local_init_run_options=local_init_run_options)
        self._session_manager = session_manager
        self._verify_setup()
        graph.finalize()

    # --- building the defaults ----------------------------------------------------------
    def _init_ready_op(self, ready_op, ready_for_local_init_op) -> None:
        from tensorweave.ops.state.variables import report_uninitialized_variables
        if ready_op is Supervisor.USE_DEFAULT:
            ready_op = _first_of_collection(self._graph, GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = report_uninitialized_variables()
                _graph.add_to_collection(GraphKeys.READY_OP, ready_op)
        self._ready_op = ready_op
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:
            ready_for_local_init_op = _first_of_collection(
                self._graph, GraphKeys.READY_FOR_LOCAL_INIT_OP)
        self._ready_for_local_init_op = ready_for_local_init_op

    def _init_init_op(self, init_op, init_feed_dict) -> None:
        from tensorweave.ops.state.variables import global_variables_initializer
        if init_op is Supervisor.USE_DEFAULT:
            init_op = _first_of_collection(self._graph, GraphKeys.INIT_OP)
            if init_op is None:
                init_op = global_variables_initializer()
                _graph.add_to_collection(GraphKeys.INIT_OP, init_op)
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict

    def _init_local_init_op(self, local_init_op) -> None:
        from tensorweave.ops.control_flow.structure import group
        from tensorweave.ops.state.variables import (local_variables_initializer,
                                                     tables_initializer)
        if local_init_op is Supervisor.USE_DEFAULT:
            local_init_op = _first_of_collection(self._graph, GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None:
                local_init_op = group(local_variables_initializer(), tables_initializer())
                _graph.add_to_collection(GraphKeys.LOCAL_INIT_OP, local_init_op)
        self._local_init_op = local_init_op

    def _init_saver(self, saver) -> None:
        from tensorweave.ops.state.variables import global_variables
        from tensorweave.train.saver import Saver
        if saver is Supervisor.USE_DEFAULT:
            saver = _first_of_collection(self._graph, GraphKeys.SAVERS)
            if saver is None and global_variables():
                saver = Saver()
                _graph.add_to_collection(GraphKeys.SAVERS, saver)
        self._saver = saver

    def _init_summary_op(self, summary_op) -> None:
        from tensorweave.ops.summary.summary_ops import merge_all
        if summary_op is Supervisor.USE_DEFAULT:
            summary_op = _first_of_collection(self._graph, GraphKeys.SUMMARY_OP)
            if summary_op is None:
                summary_op = merge_all()
                if summary_op is not None:
                    _graph.add_to_collection(GraphKeys.SUMMARY_OP, summary_op)
        self._summary_op = summary_op

    def _init_global_step(self, global_step) -> None:
        if global_step is Supervisor.USE_DEFAULT:
            global_step = _first_of_collection(self._graph, GraphKeys.GLOBAL_STEP)
            if global_step is None:
                global_step = self._default_global_step_tensor()
        self._global_step = global_step

    def _default_global_step_tensor(self):
        try:
            step = self._graph.get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
        if step.dtype.base_dtype in (_dt.int32, _dt.int64):
            return step
        logging.warning("Found 'global_step' is not an int type: %s", step.dtype)
        return None

    def _verify_setup(self) -> None:
        """Replicas (non-chief) need every reference variable placed on a device (TF1
        does not check resource variables)."""
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if _is_reference_variable(op) and not op.device:
                raise ValueError("When using replicas, all Variables must have their "
                                 "device set: %s" % op)

    # --- properties ---------------------------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # --- sessions and services ----------------------------------------------------------
    def _write_graph(self) -> None:
        if not self._is_chief:
            return
        if self._logdir:
            from tensorweave.framework.graph_util import write_graph
            write_graph(self._graph.as_graph_def(add_shapes=True), self._logdir,
                        "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Starts the checkpoint, summary and step-counter threads (chief only); returns
        them, or None (as TF1) without a logdir.

        Raises:
          RuntimeError: called on a non-chief supervisor.
        """
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. "
                               "Because only chief supervisors can write events.")
        if not self._logdir:
            logging.warning("Standard services need a 'logdir' passed to the "
                            "SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            current_step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(_session_log("START"), current_step)
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self.saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief creates an initialized (or restored from logdir) session and starts
        the standard services; other tasks wait until the model is ready. Queue runners
        are started in both cases when start_standard_services."""
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self.init_op, saver=self.saver,
                checkpoint_dir=self._logdir, wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                logging.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            logging.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the QueueRunners (default: the graph's) with this supervisor's
        Coordinator; returns their threads."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True,
                                             start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling target(*args, **kwargs) every interval."""
        return LooperThread.loop(self._coord, timer_interval_secs, target, args=args,
                                 kwargs=kwargs)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Requests a stop, joins the threads (re-raising a reported exception) and
        closes the summary writer."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(_session_log("STOP"))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None) -> None:
        self._coord.request_stop(ex=ex)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None) -> None:
        """Writes a computed summary (at the current global step by default).

        Raises:
          RuntimeError: this supervisor has no summary writer.
        """
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self.global_step is not None:
            global_step = training_util.global_step(sess, self.global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A context manager yielding a prepared session; on exit (or an exception in
        the body, reported to the coordinator and re-raised unless it is an
        OutOfRangeError) it stops the services and closes the session."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config,
                start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - reported; stop() re-raises it
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    try:
                        sess.close()
                    except Exception:  # noqa: BLE001 - the stop's error matters more
                        pass

    # TF1's CamelCase aliases.
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


class SVSummaryThread(LooperThread):
    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self) -> None:
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            logging.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class SVStepCounterThread(LooperThread):
    def __init__(self, sv, sess, step_counter=None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess
        self._last_time = 0.0
        self._last_step = 0
        step_counter = sv.global_step if step_counter is None else step_counter
        self._step_counter = step_counter
        self._summary_tag = "%s/sec" % step_counter.op.name

    def start_loop(self) -> None:
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._step_counter)

    def run_loop(self) -> None:
        current_step = training_util.global_step(self._sess, self._step_counter)
        added_steps = current_step - self._last_step
        self._last_step = current_step
        now = time.time()
        elapsed, self._last_time = now - self._last_time, now
        steps_per_sec = added_steps / elapsed if elapsed > 0 else float("inf")
        if self._sv.summary_writer:
            from tensorboard.compat.proto import summary_pb2
            summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
                tag=self._summary_tag, simple_value=steps_per_sec)])
            self._sv.summary_writer.add_summary(summary, current_step)
        logging.log_first_n(logging.INFO, "%s: %g", 10, self._summary_tag, steps_per_sec)


class SVTimerCheckpointThread(LooperThread):
    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self) -> None:
        logging.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            current_step = training_util.global_step(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                _session_log("CHECKPOINT", checkpoint_path=self._sv.save_path),
                current_step)


@tf_export("train.basic_train_loop")
def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Calls `train_step_fn(sess, *args, **kwargs)` in a managed session until the
    supervisor stops, starting over on AbortedError."""
    args = args if args is not None else []
    kwargs = kwargs if kwargs is not None else {}
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            should_retry = True
