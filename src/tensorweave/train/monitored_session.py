"""MonitoredSession and friends: TF1's training loop around a Session.

A MonitoredSession is a stack of wrappers around the real session, outermost first:

  _RecoverableSession   on AbortedError/UnavailableError closes the session and creates
                        a new one (initialized or restored by the session creator)
  _CoordinatedSession   owns the Coordinator of the queue-runner threads; raises their
                        errors when asked whether to stop, and a preemption of theirs
                        in place of a failed run's own error
  _HookedSession        calls the hooks' before_run/after_run around every run()
  Session               the raw session

Its creator finalizes the Scaffold (default init/ready/local-init/summary ops and saver,
then the graph), creates and initializes (or restores) the session, starts the
QueueRunners and calls the hooks' after_create_session.
"""
from __future__ import annotations

import inspect

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys
from tensorweave.platform import tf_logging as logging
from tensorweave.train import basic_session_run_hooks as _hooks
from tensorweave.train.coordinator import Coordinator
from tensorweave.train.session_manager import SessionManager
from tensorweave.train.session_run_hook import (SessionRunArgs, SessionRunContext,
                                                SessionRunValues)

# Errors after which the session is recreated (a worker or parameter server restarted).
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)

# What TF1 adds to every preemption message it logs.
_PREEMPTION_HINT = ("This error may also occur due to a gRPC failure caused by high memory "
                    "or network bandwidth usage in the parameter servers. If this error "
                    "occurs repeatedly, try increasing the number of parameter servers "
                    "assigned to the job. Error: %s")

# The default of MonitoredTrainingSession's save_* arguments: "not given".
USE_DEFAULT = object()


def _default_saver():
    """The saver of the SAVERS collection, or a new sharded one added to it."""
    from tensorweave.train.saver import Saver
    savers = _graph.get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection {}. Please indicate which "
                               "one to use by passing it to the constructor."
                               .format(GraphKeys.SAVERS))
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    _graph.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


@tf_export("train.Scaffold")
class Scaffold:
    """What a monitored session needs to create, initialize and check a model: init op,
    ready ops, local init op, summary op and saver. `finalize()` fills those not given
    (from the graph collections INIT_OP, READY_OP, ... or with TF1's defaults) and
    finalizes the graph.

    init_fn, if given, is called as `init_fn(scaffold, session)` after init_op.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")

            def coalesce(value, attr):
                return value if value is not None else getattr(copy_from_scaffold, attr)
            init_op = coalesce(init_op, "init_op")
            init_feed_dict = coalesce(init_feed_dict, "init_feed_dict")
            # init_fn of the copied scaffold is already bound to it.
            init_fn = init_fn if init_fn is not None else copy_from_scaffold._user_init_fn
            ready_op = coalesce(ready_op, "ready_op")
            ready_for_local_init_op = coalesce(ready_for_local_init_op,
                                               "ready_for_local_init_op")
            local_init_op = coalesce(local_init_op, "local_init_op")
            local_init_feed_dict = coalesce(local_init_feed_dict, "local_init_feed_dict")
            summary_op = coalesce(summary_op, "summary_op")
            saver = coalesce(saver, "saver")
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> "Scaffold":
        """Creates the missing ops and saver, then finalizes the default graph."""
        from tensorweave.ops.control_flow.structure import group
        from tensorweave.ops.state import variables
        from tensorweave.ops.summary.summary_ops import merge_all
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP,
                lambda: group(variables.global_variables_initializer(),
                              *_graph.get_collection("saved_model_initializers")))
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, variables.report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(
                    variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP,
                                                       merge_all)
        if self._saver is None:
            self._saver = _default_saver()
        self._saver.build()
        _graph.get_default_graph().finalize()
        logging.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The single item of `collection_key`, else `default_constructor()` (added to
        the collection when not None).

        Raises:
          RuntimeError: the collection holds more than one item.
        """
        elements = _graph.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    "More than one item in the collection {}. Please indicate which one to "
                    "use by passing it to the tf.Scaffold constructor as:  "
                    "tf.Scaffold({}=item to use)".format(collection_key, arg_name))
            return elements[0]
        op = default_constructor()
        if op is not None:
            _graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Groups local_variables_initializer() and tables_initializer()."""
        from tensorweave.ops.control_flow.structure import group
        from tensorweave.ops.state import variables
        return group(variables.local_variables_initializer(),
                     variables.tables_initializer())


@tf_export("train.SessionCreator")
class SessionCreator:
    """Creates a session for a MonitoredSession (subclasses define create_session)."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for %s."
                                  % type(self).__name__)


class _ScaffoldSessionCreator(SessionCreator):
    """A creator whose SessionManager is made, on first use, from its Scaffold's ops."""

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=_graph.get_default_graph())
        return self._session_manager


@tf_export("train.ChiefSessionCreator")
class ChiefSessionCreator(_ScaffoldSessionCreator):
    """Creates a session that it initializes, or restores from `checkpoint_dir` (or
    `checkpoint_filename_with_path`) when a checkpoint exists."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


@tf_export("train.WorkerSessionCreator")
class WorkerSessionCreator(_ScaffoldSessionCreator):
    """Creates a session that waits (up to max_wait_secs) until the chief made the
    model ready."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


class _StepContext:
    """What `run_step_fn`'s step_fn gets: the raw session, a hooked run, and
    request_stop() (raises StopIteration, which a MonitoredSession `with` block ends
    on quietly)."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        raise StopIteration("step_fn has requested the iterations to stop.")


class _MonitoredSession:
    """The shared body of MonitoredSession and SingularMonitoredSession."""

    StepContext = _StepContext

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = _graph.get_default_graph().finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator=session_creator or ChiefSessionCreator(), hooks=self._hooks,
            stop_grace_period_secs=stop_grace_period_secs)
        if should_recover:
            self._sess = _RecoverableSession(self._coordinated_creator)
        else:
            self._sess = self._coordinated_creator.create_session()

    @property
    def graph(self):
        """The graph of the session; None once the session is closed."""
        tf_sess = self._tf_sess()
        return None if tf_sess is None else tf_sess.graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` like Session.run, with the hooks' fetches, feeds and options
        merged in, and their after_run called with the results."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Runs `step_fn(step_context)` (recovering like run()) and returns its result.

        Raises:
          ValueError: step_fn does not take exactly a `step_context` argument.
        """
        params = tuple(inspect.signature(step_fn).parameters)
        if params not in (("step_context",), ("self", "step_context")):
            raise ValueError("`step_fn` may either have one `step_context` argument, or "
                             "`self` and `step_context` arguments if it's an instance "
                             "method. Got {} instead.".format(params))
        # step_context.request_stop() raises StopIteration, which ends a `with` block.
        return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)

    def should_stop(self) -> bool:
        return self._sess is None or self._sess.should_stop()

    def close(self) -> None:
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        # An OutOfRangeError (end of input) ends the `with` block quietly.
        return exception_type is None

    def _close_internal(self, exception_type=None) -> None:
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    _graph.get_default_graph()._unsafe_unfinalize()

    def _is_closed(self) -> bool:
        return self._sess is None

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, its Coordinator and queue-runner threads, calls
    after_create_session, and wraps the result in the hooked stack. (The graph is
    finalized by the Scaffold of the standard creators; a custom creator's is not.)"""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self.coord = None
        self.tf_sess = None
        self._stop_grace_period_secs = stop_grace_period_secs

    def create_session(self):
        from tensorweave.train.queue_runner import start_queue_runners
        self.tf_sess = self._session_creator.create_session()
        # No clean-stop types: an OutOfRangeError a thread reports is raised, not dropped.
        self.coord = Coordinator(clean_stop_exception_types=[])
        if self.tf_sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS):
            start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


class _WrappedSession:
    """A session wrapping another; should_stop() is True once this wrapper or a wrapped
    one wants to stop."""

    def __init__(self, sess):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self):
        return self._sess.graph

    def _check_stop(self) -> bool:
        raise NotImplementedError("%s does not define _check_stop(): each wrapped "
                                  "session says when it must stop" % type(self).__name__)

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def close(self) -> None:
        if self._sess:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as e:
                logging.error("An error occurred when attempting to close the session. "
                              "This may be due to a preemption in a connected worker or "
                              "parameter server. Error: %s", e)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        run_with_hooks = run_with_hooks or self.run
        return step_fn(_StepContext(raw_session, run_with_hooks))


class _RecoverableSession(_WrappedSession):
    """Recreates the session (through the creator) after a preemption error."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised while a session was being created. This "
                             "may be due to a preemption of a connected worker or "
                             "parameter server. A new session will be created. "
                             + _PREEMPTION_HINT, e)

    def _recreate(self, e, while_checking_stop=False) -> None:
        logging.info("An error was raised%s. This may be due to a preemption in a "
                     "connected worker or parameter server. The current session will be "
                     "closed and a new session will be created. " + _PREEMPTION_HINT,
                     " while considering whether the session is complete"
                     if while_checking_stop else "", e)
        self.close()
        self._sess = None

    def _check_stop(self) -> bool:
        try:
            if self._sess:
                return self._sess._check_stop()
            return True
        except _PREEMPTION_ERRORS as e:
            self._recreate(e, while_checking_stop=True)
            self._sess = self._create_session()
            return False
        except Exception:  # noqa: BLE001 - any other error means stop (as TF1)
            return True

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                      run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as e:
                self._recreate(e)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                    raw_session = self._sess_creator.tf_sess
                return self._sess.run_step_fn(step_fn, raw_session,
                                              run_with_hooks or self._sess.run)
            except _PREEMPTION_ERRORS as e:
                self._recreate(e)


class _CoordinatedSession(_WrappedSession):
    """Stops when the Coordinator does (raising the exception a queue-runner thread
    reported to it); a preemption error a thread reported is raised in place of the
    main thread's own error, so the session recovers."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self) -> None:
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception:  # noqa: BLE001 - as TF1: closing errors are dropped here
                pass

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception:
            # A preemption a thread reported is the root cause (and lets the session
            # recover); any other reported exception leaves the caller's own in place.
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001 - the original error is the one to raise
                pass
            raise

    # run_step_fn is _WrappedSession's: step_fn's runs go through run() above, and an
    # error step_fn raises itself is not replaced by a thread's (as TF1).


class _HookedSession(_WrappedSession):
    """Calls the hooks around every run(), merging what they ask for into the call."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        from tensorweave.runtime.config import RunMetadata, RunOptions
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict),
                                        session=self._sess)
        options = options or RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict,
                                               options)
        run_metadata = run_metadata if run_metadata is not None else RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(
                results=outputs.get(hook), options=options, run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict, options):
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        merged = dict(user_feed_dict)
        merged.update(hook_feeds)
        return merged


def _raise_if_feeds_intersect(feeds1, feeds2, message) -> None:
    intersection = set(feeds1.keys()) & set(feeds2.keys())
    if intersection:
        raise RuntimeError(message + " Conflict(s): " + str(list(intersection)))


def _merge_run_options(options, incoming) -> None:
    """Merges a hook's RunOptions into the call's: the most tracing, the longest
    timeout, any requested partition graphs or OOM reports."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool,
                                       incoming.inter_op_thread_pool)
    options.output_partition_graphs = (options.output_partition_graphs or
                                       incoming.output_partition_graphs)
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom or
        incoming.report_tensor_allocations_upon_oom)


@tf_export("train.MonitoredSession")
class MonitoredSession(_MonitoredSession):
    """A session that runs hooks, starts queue runners, and recovers from preemption
    errors (AbortedError, UnavailableError) by creating a new session.

    ```python
    with tf.train.MonitoredSession(session_creator=ChiefSessionCreator(...),
                                   hooks=[StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    ```

    An OutOfRangeError raised in the `with` body ends it quietly (end of input).
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


@tf_export("train.SingularMonitoredSession")
class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession of a chief that does not recover from errors, and gives access
    to the raw session (`raw_session()`)."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None,
                 checkpoint_dir=None, stop_grace_period_secs=120,
                 checkpoint_filename_with_path=None):
        session_creator = ChiefSessionCreator(
            scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(session_creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The Session this one wraps."""
        return self._tf_sess()


def _resolve_every(steps, secs, default_steps, default_secs):
    """TF1's rule for a (steps, secs) pair of MonitoredTrainingSession: both unset gives
    the defaults, one set disables the other."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default_steps, default_secs
    return (None if steps is USE_DEFAULT else steps), (None if secs is USE_DEFAULT else secs)


@tf_export("train.MonitoredTrainingSession")
def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession for training: on the chief, restores from or initializes into
    `checkpoint_dir`, and adds a StepCounterHook (every log_step_count_steps), a
    SummarySaverHook (every save_summaries_steps, 100 by default, or
    save_summaries_secs) and a CheckpointSaverHook (every save_checkpoint_secs, 600 by
    default, or save_checkpoint_steps); other workers wait for the chief.

    Returns:
      A MonitoredSession.
    """
    save_summaries_steps, save_summaries_secs = _resolve_every(
        save_summaries_steps, save_summaries_secs, 100, None)
    save_checkpoint_steps, save_checkpoint_secs = _resolve_every(
        save_checkpoint_steps, save_checkpoint_secs, None, 600)
    scaffold = scaffold or Scaffold()
    if not is_chief:
        session_creator = WorkerSessionCreator(scaffold=scaffold, master=master,
                                               config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=session_creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    session_creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                          master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(_hooks.StepCounterHook(output_dir=summary_dir,
                                                    every_n_steps=log_step_count_steps))
        if ((save_summaries_steps and save_summaries_steps > 0) or
                (save_summaries_secs and save_summaries_secs > 0)):
            all_hooks.append(_hooks.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir:
        if ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                (save_checkpoint_steps and save_checkpoint_steps > 0)):
            all_hooks.append(_hooks.CheckpointSaverHook(
                checkpoint_dir, save_steps=save_checkpoint_steps,
                save_secs=save_checkpoint_secs, scaffold=scaffold,
                save_graph_def=save_graph_def))
    if hooks:
        all_hooks.extend(hooks)
    return MonitoredSession(session_creator=session_creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
