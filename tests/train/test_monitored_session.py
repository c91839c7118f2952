"""MonitoredSession, MonitoredTrainingSession, Scaffold and the session creators."""
import glob
import os

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
        lv = tf.Variable(2.0, collections=[tf.GraphKeys.LOCAL_VARIABLES])
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
        v = tf.Variable(1.0)
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
