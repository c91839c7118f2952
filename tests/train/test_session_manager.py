"""SessionManager: prepare_session, recover_session, wait_for_session."""
import pytest

import tensorweave as tf


def _model():
    v = tf.Variable(1.0, name="v")
    local = tf.Variable(5.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    return v, local


def test_prepare_session_initializes_then_restores(graph, tmp_path):
    v, local = _model()
    saver = tf.train.Saver()
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                 local_init_op=tf.local_variables_initializer())
    init = tf.global_variables_initializer()
    sess = sm.prepare_session("", init_op=init, saver=saver, checkpoint_dir=str(tmp_path))
    assert sess.run([v, local]) == [1.0, 5.0]
    sess.run(v.assign(7.0))
    saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    sess.close()
    # Restored, not initialized: init_op would reset v to 1.
    sess = sm.prepare_session("", init_op=init, saver=saver, checkpoint_dir=str(tmp_path))
    assert sess.run(v) == 7.0
    sess.close()
    path = str(tmp_path / "model.ckpt-1")
    sess = sm.prepare_session("", saver=saver, checkpoint_filename_with_path=path)
    assert sess.run(v) == 7.0
    sess.close()
    with pytest.raises(ValueError, match="Can not provide both checkpoint_dir and "
                                         "checkpoint_filename_with_path"):
        sm.prepare_session("", saver=saver, checkpoint_dir=str(tmp_path),
                           checkpoint_filename_with_path=path)


def test_prepare_session_init_fn_and_errors(graph):
    v, local = _model()
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    with pytest.raises(RuntimeError, match="Model is not initialized and no init_op or "
                                           "init_fn or local_init_op was given"):
        sm.prepare_session("")
    with pytest.raises(RuntimeError, match="Init operations did not make model ready.*"
                                           "Variables not initialized: local"):
        sm.prepare_session("", init_op=tf.global_variables_initializer())
    sess = sm.prepare_session("", init_fn=lambda s: s.run([v.initializer, local.initializer]))
    assert sess.run(v) == 1.0
    with pytest.raises(ValueError, match="If you pass a ready_for_local_init_op you must "
                                         "also pass a local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())


def test_recover_session(graph, tmp_path):
    v, local = _model()
    saver = tf.train.Saver()
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                 local_init_op=tf.local_variables_initializer(),
                                 recovery_wait_secs=0.01)
    sess, initialized = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert initialized is False and isinstance(sess, tf.Session)
    sess.run(v.initializer)
    saver.save(sess, str(tmp_path / "model.ckpt"))
    sess, initialized = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert initialized is True and sess.run([v, local]) == [1.0, 5.0]
    # Waiting for a checkpoint that never comes gives up after max_wait_secs.
    sess, initialized = sm.recover_session("", saver=saver,
                                           checkpoint_dir=str(tmp_path / "none"),
                                           wait_for_checkpoint=True, max_wait_secs=0.03)
    assert initialized is False


def test_recover_session_not_ready_after_restore(graph, tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver([v])
    with tf.Session() as s:
        s.run(v.initializer)
        saver.save(s, str(tmp_path / "model.ckpt"))
    w = tf.Variable(2.0, name="w")  # not in the checkpoint
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    sess, initialized = sm.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert initialized is False and sess.run(v) == 1.0


def test_wait_for_session_times_out_then_succeeds(graph):
    v, local = _model()
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables([v]),
                                 recovery_wait_secs=0.01)
    with pytest.raises(tf.errors.DeadlineExceededError,
                       match="Session was not ready after waiting"):
        sm.wait_for_session("", max_wait_secs=0.05)
    ready = tf.train.SessionManager(ready_op=None, local_init_op=local.initializer,
                                    recovery_wait_secs=0.01)
    sess = ready.wait_for_session("", max_wait_secs=0.05)
    assert sess.run(local) == 5.0
