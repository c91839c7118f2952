"""MonitoredSession, MonitoredTrainingSession, Scaffold and the session creators."""
import glob
import logging
import os
import sys

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


def _model():
    """A one-variable regression trained by SGD, with a loss summary."""
    step = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", [], initializer=tf.constant_initializer(3.0))
    loss = tf.square(w - 1.0)
    tf.summary.scalar("loss", loss)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, w, loss, train


class _Recorder(tf.train.SessionRunHook):
    """Records every call, tagged with its name; fetches the global step."""

    def __init__(self, name, log, fetch=None):
        self.name, self.log, self.fetch = name, log, fetch
        self.results = []

    def begin(self):
        self.log.append((self.name, "begin"))

    def after_create_session(self, session, coord):
        assert isinstance(coord, tf.train.Coordinator)
        self.log.append((self.name, "after_create_session"))

    def before_run(self, run_context):
        assert isinstance(run_context, tf.train.SessionRunContext)
        self.log.append((self.name, "before_run"))
        return tf.train.SessionRunArgs(self.fetch) if self.fetch is not None else None

    def after_run(self, run_context, run_values):
        assert isinstance(run_values, tf.train.SessionRunValues)
        self.results.append(run_values.results)
        self.log.append((self.name, "after_run"))

    def end(self, session):
        self.log.append((self.name, "end"))


def _events(logdir):
    files = sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))
    return [e for f in files for e in tf.train.summary_iterator(f)]


def _scalars(logdir, tag):
    return [(e.step, v.simple_value) for e in _events(logdir)
            if e.WhichOneof("what") == "summary" for v in e.summary.value if v.tag == tag]


def test_training_loop_writes_checkpoints_and_summaries_then_resumes(tmp_path):
    ckpt_dir = str(tmp_path)
    with tf.Graph().as_default():
        step, w, loss, train = _model()
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt_dir, save_summaries_steps=2, save_checkpoint_steps=3,
                hooks=[tf.train.StopAtStepHook(last_step=7)]) as sess:
            assert tf.get_default_graph().finalized
            runs = 0
            while not sess.should_stop():
                sess.run(train)
                runs += 1
        assert not tf.get_default_graph().finalized  # unfinalized again on close
    assert runs == 7
    assert tf.train.latest_checkpoint(ckpt_dir) == os.path.join(ckpt_dir, "model.ckpt-7")
    for s in (0, 3, 6, 7):
        assert os.path.exists(os.path.join(ckpt_dir, "model.ckpt-%d.index" % s))
    assert os.path.exists(os.path.join(ckpt_dir, "graph.pbtxt"))
    loss_steps = [s for s, _ in _scalars(ckpt_dir, "loss")]
    assert loss_steps == [1, 3, 5, 7]
    values = [v for _, v in _scalars(ckpt_dir, "loss")]
    assert values == sorted(values, reverse=True)
    assert tf.train.load_variable(ckpt_dir, "global_step") == 7

    # A second program restores and continues from step 7.
    with tf.Graph().as_default():
        step, w, loss, train = _model()
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt_dir, save_summaries_steps=2, save_checkpoint_steps=3,
                hooks=[tf.train.StopAtStepHook(num_steps=2)]) as sess:
            first = sess.run(step)
            restored_w = sess.run(w)
            while not sess.should_stop():
                sess.run(train)
    assert first == 7
    np.testing.assert_allclose(restored_w, 1.0 + 2.0 * 0.8 ** 7, rtol=1e-5)
    assert tf.train.load_variable(ckpt_dir, "global_step") == 9


def test_monitored_training_session_defaults(tmp_path):
    with tf.Graph().as_default():
        step, w, loss, train = _model()
        sess = tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path))
        hooks = sess._hooks
        sess.close()
    kinds = [type(h).__name__ for h in hooks]
    assert kinds == ["StepCounterHook", "SummarySaverHook", "CheckpointSaverHook"]
    assert hooks[1]._timer._every_steps == 100 and hooks[1]._timer._every_secs is None
    assert hooks[2]._timer._every_secs == 600 and hooks[2]._timer._every_steps is None
    with tf.Graph().as_default():
        _model()
        sess = tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), save_checkpoint_steps=5, save_summaries_secs=9,
            log_step_count_steps=None, hooks=[tf.train.StopAtStepHook(1)],
            chief_only_hooks=[tf.train.FeedFnHook(dict)])
        hooks = sess._hooks
        sess.close()
    assert [type(h).__name__ for h in hooks] == [
        "FeedFnHook", "SummarySaverHook", "CheckpointSaverHook", "StopAtStepHook"]
    assert hooks[1]._timer._every_secs == 9 and hooks[1]._timer._every_steps is None
    assert hooks[2]._timer._every_steps == 5 and hooks[2]._timer._every_secs is None


def test_hooks_call_order_fetches_and_feeds():
    log = []
    with tf.Graph().as_default():
        step, w, loss, train = _model()
        x = tf.placeholder(tf.float32, [])
        y = tf.placeholder(tf.float32, [])
        a = _Recorder("a", log, fetch={"c": tf.constant(42)})
        b = _Recorder("b", log)

        class Feeder(tf.train.SessionRunHook):
            originals = []

            def before_run(self, run_context):
                self.originals.append(run_context.original_args)
                return tf.train.SessionRunArgs([x], feed_dict={y: 5.0})

            def after_run(self, run_context, run_values):
                self.seen = run_values.results

        feeder = Feeder()
        double = x * 2.0 + y
        with tf.train.MonitoredSession(hooks=[a, b, feeder]) as sess:
            log.append(("main", "created"))
            assert sess.run(double, feed_dict={x: 1.0}) == 7.0
            assert feeder.seen == [1.0]
            assert feeder.originals[0].fetches is double
            assert feeder.originals[0].feed_dict == {x: 1.0}
            sess.run(train, feed_dict={x: 0.0})
            with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook"):
                sess.run(double, feed_dict={x: 1.0, y: 1.0})
    assert log[:5] == [("a", "begin"), ("b", "begin"), ("a", "after_create_session"),
                       ("b", "after_create_session"), ("main", "created")]
    assert log[5:9] == [("a", "before_run"), ("b", "before_run"), ("a", "after_run"),
                        ("b", "after_run")]
    assert log[-2:] == [("a", "end"), ("b", "end")]
    assert a.results[:2] == [{"c": 42}, {"c": 42}] and b.results[0] is None


def test_request_stop_and_run_after_stop():
    class StopAfterTwo(tf.train.SessionRunHook):
        calls = 0

        def after_run(self, run_context, run_values):
            self.calls += 1
            if self.calls == 2:
                run_context.request_stop()
                assert run_context.stop_requested

    with tf.Graph().as_default():
        c = tf.constant(1)
        with tf.train.MonitoredSession(hooks=[StopAfterTwo()]) as sess:
            n = 0
            while not sess.should_stop():
                sess.run(c)
                n += 1
            assert n == 2
            with pytest.raises(RuntimeError, match="Run called even after should_stop"):
                sess.run(c)


def test_out_of_range_ends_with_block_quietly_and_runs_end():
    log = []
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(3, tf.int32)
        enqueue = queue.enqueue_many([[1, 2]])
        close = queue.close()
        item = queue.dequeue()
        hook = _Recorder("h", log)
        got = []
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(enqueue)
            sess.run(close)
            while not sess.should_stop():
                got.append(sess.run(item))
    assert got == [1, 2]
    assert log[-1] == ("h", "end")


def test_other_errors_propagate_without_end():
    log = []
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        bad = tf.debugging.check_numerics(x, "bad value")
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad value"):
            with tf.train.MonitoredSession(hooks=[_Recorder("h", log)]) as sess:
                sess.run(bad, feed_dict={x: [1.0, np.nan]})
    assert ("h", "end") not in log


def test_recovers_from_aborted_error_raised_once(tmp_path):
    log = []

    class AbortOnce(tf.train.SessionRunHook):
        raised = False
        seen = []

        def after_run(self, run_context, run_values):
            step_now = run_context.session.run(tf.train.get_global_step())
            self.seen.append(step_now)
            if not self.raised and step_now == 3:
                self.raised = True
                raise tf.errors.AbortedError(None, None, "preempted")

    with tf.Graph().as_default():
        step, w, loss, train = _model()
        recorder = _Recorder("r", log)
        aborter = AbortOnce()
        runs = 0
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path), save_checkpoint_steps=2,
                save_summaries_steps=None, log_step_count_steps=None,
                hooks=[recorder, aborter, tf.train.StopAtStepHook(last_step=6)]) as sess:
            while not sess.should_stop():
                sess.run(train)
                runs += 1
    # The abort after the run that took the step to 3 recreated the session, which
    # restored the checkpoint of step 2, and ran the same call again (the caller does
    # not see the error): six calls, seven runs.
    assert aborter.seen == [1, 2, 3, 3, 4, 5, 6]
    assert runs == 6
    assert log.count(("r", "begin")) == 1
    assert log.count(("r", "after_create_session")) == 2
    assert tf.train.load_variable(str(tmp_path), "global_step") == 6


def test_queue_runners_are_started_and_joined():
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(10, tf.float32)
        enqueue = queue.enqueue(tf.constant(7.0))
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
        item = queue.dequeue()
        with tf.train.MonitoredSession() as sess:
            values = [sess.run(item) for _ in range(5)]
            threads = sess._coordinated_creator.coord._registered_threads
            assert threads and all(t.is_alive() for t in threads)
        assert not any(t.is_alive() for t in threads)
    assert values == [7.0] * 5


def test_scaffold_finalize_defaults_and_collections():
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0)
        tf.Variable(2.0, collections=[tf.GraphKeys.LOCAL_VARIABLES])
        tf.summary.scalar("v", v)
        scaffold = tf.train.Scaffold().finalize()
        assert g.finalized
        assert scaffold.init_op.type == "NoOp"
        assert scaffold.ready_op.dtype == tf.string
        assert isinstance(scaffold.saver, tf.train.Saver)
        assert g.get_collection(tf.GraphKeys.INIT_OP) == [scaffold.init_op]
        assert g.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
        assert scaffold.summary_op is not None
        g._unsafe_unfinalize()
        copied = tf.train.Scaffold(copy_from_scaffold=scaffold, init_op=tf.no_op())
        assert copied.ready_op is scaffold.ready_op and copied.init_op is not scaffold.init_op
        with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold"):
            tf.train.Scaffold(copy_from_scaffold=1)
        g.add_to_collection(tf.GraphKeys.READY_OP, tf.constant([], tf.string))
        with pytest.raises(RuntimeError, match="More than one item in the collection"):
            tf.train.Scaffold().finalize()


def test_scaffold_init_fn_gets_scaffold_and_session():
    calls = []
    with tf.Graph().as_default():
        v = tf.Variable(1.0)

        def init_fn(scaffold, session):
            calls.append(scaffold)
            v.load(5.0, session)

        scaffold = tf.train.Scaffold(init_fn=init_fn)
        with tf.train.SingularMonitoredSession(scaffold=scaffold) as sess:
            assert sess.run(v) == 5.0
            assert isinstance(sess.raw_session(), tf.Session)
            assert sess.raw_session().run(v) == 5.0
    assert calls == [scaffold]


def test_run_step_fn_and_step_context():
    with tf.Graph().as_default():
        v = tf.Variable(0)
        inc = tf.assign_add(v, 1)
        log = []
        with tf.train.MonitoredSession(hooks=[_Recorder("h", log)]) as sess:
            def step_fn(step_context):
                log.append(("raw", step_context.session.run(v)))
                return step_context.run_with_hooks(inc)
            assert sess.run_step_fn(step_fn) == 1
            assert ("h", "before_run") in log and ("raw", 0) in log

            with pytest.raises(ValueError, match="may either have one `step_context`"):
                sess.run_step_fn(lambda ctx: None)

        def stopping(step_context):
            step_context.request_stop()
        after = []
        with tf.train.MonitoredSession(hooks=[_Recorder("h2", log)]) as sess:
            sess.run_step_fn(stopping)  # StopIteration ends the block quietly
            after.append("not reached")
        assert after == [] and log[-1] == ("h2", "end")


def test_worker_session_creator_waits_for_ready_model():
    with tf.Graph().as_default():
        tf.Variable(1.0)
        scaffold = tf.train.Scaffold()
        creator = tf.train.WorkerSessionCreator(scaffold=scaffold, max_wait_secs=0)
        scaffold.finalize()
        creator._session_manager = tf.train.SessionManager(
            ready_op=scaffold.ready_op, recovery_wait_secs=0.01)
        with pytest.raises(tf.errors.DeadlineExceededError, match="not ready after"):
            creator.create_session()
        tf.get_default_graph()._unsafe_unfinalize()


def test_hook_run_options_are_merged_and_caller_metadata_filled():
    class Tracing(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(None, options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=500))

        def after_run(self, run_context, run_values):
            self.options = run_values.options
            self.metadata = run_values.run_metadata

    with tf.Graph().as_default() as g:
        c = tf.constant(1.0) + 1.0
        hook = Tracing()
        metadata = tf.RunMetadata()
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            assert sess.graph is g
            options = tf.RunOptions(timeout_in_ms=100)
            assert sess.run(c, options=options, run_metadata=metadata) == 2.0
    assert hook.options.trace_level == tf.RunOptions.FULL_TRACE
    assert hook.options.timeout_in_ms == 500
    assert hook.metadata is metadata
    names = [n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats]
    assert c.op.name in names


# TF1 adds this to every preemption message (recorded from TF 2.15 and 2.21).
_GRPC_HINT = ("This error may also occur due to a gRPC failure caused by high memory or "
              "network bandwidth usage in the parameter servers. If this error occurs "
              "repeatedly, try increasing the number of parameter servers assigned to the "
              "job. Error: preempted")


def test_recovery_logs_tf1_preemption_message(caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")

    class AbortFirstRun(tf.train.SessionRunHook):
        left = 1

        def before_run(self, run_context):
            if self.left:
                self.left -= 1
                raise tf.errors.AbortedError(None, None, "preempted")

    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        with tf.train.MonitoredSession(hooks=[AbortFirstRun()]) as sess:
            assert sess.run(step) == 0
    assert ("An error was raised. This may be due to a preemption in a connected worker or "
            "parameter server. The current session will be closed and a new session will "
            "be created. " + _GRPC_HINT) in caplog.messages


def test_coordinator_error_replaces_run_error_only_when_a_preemption():
    """A thread's reported error is raised by run() in place of the run's own error only
    when it is a preemption (so the session recovers); otherwise the run's own error
    comes out of run() and the thread's error out of close()."""
    def run_with_thread_error(thread_error):
        seen = []
        reported = []

        class ReportOnce(tf.train.SessionRunHook):
            def after_create_session(self, session, coord):
                seen.append("created")
                if not reported:
                    reported.append(thread_error)
                    try:
                        raise thread_error
                    except Exception:  # noqa: BLE001 - reported as a thread would
                        coord.request_stop(sys.exc_info())

        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32)
            sess = tf.train.MonitoredSession(hooks=[ReportOnce()])
            try:
                sess.run(x)  # the feed is missing
            except tf.errors.InvalidArgumentError:
                seen.append("run error")
            seen.append(float(sess.run(x, feed_dict={x: 2.0})))
            try:
                sess.close()
            except ValueError as e:
                seen.append(str(e))
        return seen

    assert run_with_thread_error(ValueError("thread boom")) == [
        "created", "run error", 2.0, "thread boom"]
    # The preemption recreated the session, and the same call ran again (and failed).
    assert run_with_thread_error(tf.errors.AbortedError(None, None, "aborted")) == [
        "created", "created", "run error", 2.0]


def test_graph_is_none_once_closed():
    with tf.Graph().as_default() as g:
        tf.Variable(1.0)
        with tf.train.MonitoredSession() as sess:
            assert sess.graph is g
        assert sess.graph is None


def test_custom_creator_graph_not_finalized_and_thread_out_of_range_raised():
    """As TF1: only the Scaffold finalizes the graph (a custom SessionCreator's graph
    stays open), and the session's Coordinator has no clean-stop types, so an
    OutOfRangeError a thread reports comes out of close()."""
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0)
        init = tf.global_variables_initializer()

        class Creator(tf.train.SessionCreator):
            def create_session(self):
                sess = tf.Session()
                sess.run(init)
                return sess

        class ReportOutOfRange(tf.train.SessionRunHook):
            def after_create_session(self, session, coord):
                coord.request_stop(tf.errors.OutOfRangeError(None, None, "thread end"))

        with pytest.raises(tf.errors.OutOfRangeError, match="thread end"):
            with tf.train.MonitoredSession(session_creator=Creator(),
                                           hooks=[ReportOutOfRange()]) as sess:
                assert not g.finalized
                assert sess.run(v) == 1.0
                tf.constant(2.0)  # the graph can still grow
                assert sess.should_stop()


def test_step_fn_own_error_is_not_replaced_by_a_thread_preemption():
    """A thread's preemption replaces an error of a run step_fn makes (the session
    recovers and step_fn runs again), not an error step_fn raises itself (as TF1)."""
    def run(step_fn):
        created = []

        class ReportPreemptionOnce(tf.train.SessionRunHook):
            def after_create_session(self, session, coord):
                created.append(len(created))
                if len(created) == 1:
                    try:
                        raise tf.errors.AbortedError(None, None, "thread aborted")
                    except tf.errors.AbortedError:
                        coord.request_stop(sys.exc_info())

        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32)
            try:
                with tf.train.MonitoredSession(hooks=[ReportPreemptionOnce()]) as sess:
                    result = sess.run_step_fn(lambda step_context: step_fn(step_context, x))
            except KeyError as e:
                result = e
        return len(created), result

    def raise_own_error(step_context, x):
        raise KeyError("own")

    def run_without_feed(step_context, x):
        try:
            return step_context.run_with_hooks(x)
        except tf.errors.InvalidArgumentError:
            return "run failed"

    count, error = run(raise_own_error)
    assert count == 1 and isinstance(error, KeyError)
    assert run(run_without_feed) == (2, "run failed")


def test_scaffold_default_local_init_op_groups_tables_initializer():
    with tf.Graph().as_default() as g:
        tf.Variable(1.0)
        scaffold = tf.train.Scaffold().finalize()
        # (through group's per-device NoOps when the ops are spread over devices)
        waits_on, todo = set(), [scaffold.local_init_op]
        while todo:
            for dep in todo.pop().control_inputs:
                if dep.name not in waits_on:
                    waits_on.add(dep.name)
                    todo.append(dep)
        assert "init_all_tables" in waits_on
        assert g.get_operation_by_name("init_all_tables").type == "NoOp"
