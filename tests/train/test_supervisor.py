"""tf.train.Supervisor and basic_train_loop."""
import glob
import os
import time

import pytest

import tensorweave as tf


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(4.0, name="w")
    tf.summary.scalar("w", w)
    train = tf.group(tf.assign_add(step, 1), tf.assign_sub(w, 1.0))
    return step, w, train


def test_managed_session_trains_checkpoints_and_restores(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default() as g:
        step, w, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=3600)
        assert g.finalized and sv.is_chief
        assert sv.global_step is step and isinstance(sv.saver, tf.train.Saver)
        assert sv.init_op is g.get_collection(tf.GraphKeys.INIT_OP)[0]
        assert sv.summary_op is not None and sv.summary_writer is not None
        assert sv.save_path == os.path.join(logdir, "model.ckpt")
        with sv.managed_session() as sess:
            for _ in range(3):
                sess.run(train)
            sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
            sv.request_stop()
            assert sv.should_stop()
    assert tf.train.latest_checkpoint(logdir).endswith("model.ckpt-3")
    assert os.path.exists(os.path.join(logdir, "graph.pbtxt"))
    events = [e for f in glob.glob(os.path.join(logdir, "events.*"))
              for e in tf.train.summary_iterator(f)]
    kinds = {e.WhichOneof("what") for e in events}
    assert {"graph_def", "meta_graph_def", "session_log", "summary"} <= kinds

    with tf.Graph().as_default():
        step, w, train = _model()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as sess:
            assert sess.run([step, w]) == [3, 1.0]


def test_managed_session_exceptions(graph):
    v = tf.Variable(1.0)
    sv = tf.train.Supervisor(logdir=None)
    with sv.managed_session() as sess:
        assert sess.run(v) == 1.0
        raise tf.errors.OutOfRangeError(None, None, "end of input")  # a clean stop
    assert sv.should_stop()
    with pytest.raises(ValueError, match="boom"):
        with sv.managed_session():
            raise ValueError("boom")
    with pytest.raises(RuntimeError, match="Writing a summary requires a summary writer"):
        sv.summary_computed(None, b"")


def test_prepare_or_wait_for_session_and_standard_services(tmp_path):
    with tf.Graph().as_default():
        step, w, train = _model()
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=3600,
                                 save_summaries_secs=3600)
        sess = sv.prepare_or_wait_for_session(start_standard_services=False)
        threads = sv.start_standard_services(sess)
        assert sorted(type(t).__name__ for t in threads) == [
            "SVStepCounterThread", "SVSummaryThread", "SVTimerCheckpointThread"]
        # The checkpoint thread saves once right away (bounded wait for the thread).
        for _ in range(1000):
            if tf.train.latest_checkpoint(str(tmp_path)):
                break
            time.sleep(0.01)
        sv.stop(threads)
        sess.close()
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-0")


def test_non_chief_waits_and_requires_devices(graph):
    with tf.device("/cpu:0"):
        tf.Variable(1.0)
    sv = tf.train.Supervisor(is_chief=False, recovery_wait_secs=0.01)
    with pytest.raises(tf.errors.DeadlineExceededError, match="not ready"):
        sv.prepare_or_wait_for_session(max_wait_secs=0.03)
    with pytest.raises(RuntimeError, match="Only chief supervisor can start standard"):
        sv.start_standard_services(None)


def test_basic_train_loop_retries_after_aborted(graph):
    v = tf.Variable(0)
    inc = tf.assign_add(v, 1)
    sv = tf.train.Supervisor(logdir=None)
    calls = []

    def step_fn(sess):
        calls.append(sess.run(inc))
        if len(calls) == 2:
            raise tf.errors.AbortedError(None, None, "preempted")
        if calls[-1] == 3:
            sv.request_stop()

    tf.train.basic_train_loop(sv, step_fn)
    # After the abort a new session starts from the initial value again.
    assert calls == [1, 2, 1, 2, 3]


def test_several_items_in_a_collection_take_the_first(graph, caplog):
    caplog.set_level("INFO", logger="tensorflow")
    w = tf.Variable(4.0, name="w")
    tf.add_to_collection(tf.GraphKeys.INIT_OP, tf.global_variables_initializer())
    tf.add_to_collection(tf.GraphKeys.INIT_OP, tf.no_op(name="second"))
    sv = tf.train.Supervisor(save_summaries_secs=0, save_model_secs=0)
    assert sv.init_op.name == "init"
    assert "Found 2 init_op operations. Returning the first one." in caplog.messages
    with sv.managed_session() as sess:
        assert sess.run(w) == 4.0


def test_chief_without_logdir_keeps_intervals_and_given_writer(graph, tmp_path):
    tf.train.get_or_create_global_step()
    writer = tf.summary.FileWriter(str(tmp_path))
    sv = tf.train.Supervisor(save_summaries_secs=7, save_model_secs=9, summary_writer=writer)
    assert (sv.save_summaries_secs, sv.save_model_secs, sv.save_path) == (7, 9, None)
    assert sv.summary_writer is writer
    sess = sv.prepare_or_wait_for_session(start_standard_services=False)
    assert sv.start_standard_services(sess) is None  # no logdir: nothing started
    sv.stop()


def test_non_chief_checks_devices_of_reference_variables_only(graph):
    tf.get_variable("resource", [], use_resource=True)
    tf.train.Supervisor(is_chief=False)  # TF1 does not check resource variables
    with tf.Graph().as_default():
        tf.get_variable("reference", [], use_resource=False)
        with pytest.raises(ValueError, match="all Variables must have their device set"):
            tf.train.Supervisor(is_chief=False)


def test_default_local_init_op_groups_tables_initializer(graph):
    """As TF1: the default local_init_op groups local_variables_initializer() and
    tf.tables_initializer() (a NoOp "init_all_tables" when there are no tables)."""
    tf.Variable(1.0)
    sv = tf.train.Supervisor()
    names = sorted(op.name for op in sv._local_init_op.control_inputs)
    assert names == ["init_1", "init_all_tables"]
    assert graph.get_operation_by_name("init_all_tables").type == "NoOp"
