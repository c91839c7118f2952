"""Session features against a cluster target (issue 15): partial runs, timeouts and
make_callable, which must work as they do in-process."""
import numpy as np
import pytest

import tensorweave as tf


def test_partial_run_across_tasks(ps_workers):
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [], name="a")
        b = tf.placeholder(tf.float32, [], name="b")
        with tf.device("/job:worker/task:1"):
            r1 = a + 10.0
        with tf.device("/job:worker/task:0"):
            r2 = r1 * b
    with tf.Session(ps_workers.target(), graph=g) as sess:
        h = sess.partial_run_setup([r1, r2], [a, b])
        assert sess.partial_run(h, r1, {a: 1.0}) == 11.0
        assert sess.partial_run(h, r2, {b: 2.0}) == 22.0


def test_a_step_past_its_timeout_fails_with_deadline_exceeded(ps_workers):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
            blocked = q.dequeue()  # nothing is ever enqueued
        with tf.device("/job:worker/task:0"):
            y = blocked + 1.0
    with tf.Session(ps_workers.target(), graph=g) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(y, options=tf.RunOptions(timeout_in_ms=500))
        # the session still works
        with tf.device("/job:worker/task:0"):
            z = tf.constant(2.0) * 3.0
        assert sess.run(z) == 6.0


def test_make_callable_on_a_cluster(ps_workers):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.device("/job:worker/task:1"):
            y = tf.reduce_sum(x * x)
    with tf.Session(ps_workers.target(), graph=g) as sess:
        f = sess.make_callable(y, [x])
        assert f(np.array([1.0, 2.0, 3.0], np.float32)) == 14.0
        assert f(np.array([0.0, 0.0, 2.0], np.float32)) == 4.0


@pytest.mark.parametrize("compression, tolerance", [("", 0.0), ("bfloat16", 2.0 ** -8)])
def test_lossy_transfers_between_tasks(ps_workers, compression, tolerance):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [5])
        with tf.device("/job:worker/task:1"):
            y = x * 1.0
        with tf.device("/job:worker/task:0"):
            z = y + 0.0
    values = np.array([1.0, 1.0 / 3.0, -2.5e3, 7.1e-3, 123.456], np.float32)
    config = tf.ConfigProto(experimental={"transfer_compression": compression})
    with tf.Session(ps_workers.target(), graph=g, config=config) as sess:
        got = sess.run(z, {x: values})
    err = np.abs(got - values) / np.abs(values)
    assert err.max() <= tolerance
    if compression:
        assert err.max() > 0  # really narrowed on the way


def test_a_large_tensor_streams_between_tasks_in_chunks(ps_workers):
    from tensorweave.distribute.worker import CHUNK_BYTES
    n = 3 * CHUNK_BYTES // 4 + 123  # float32: three chunks and a bit
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [n])
        with tf.device("/job:worker/task:1"):
            y = x * 2.0
        with tf.device("/job:worker/task:0"):
            z = y[-5:] + y[:5]
    values = np.arange(n, dtype=np.float32)
    with tf.Session(ps_workers.target(), graph=g) as sess:
        got = sess.run(z, {x: values})
    np.testing.assert_array_equal(got, 2 * values[-5:] + 2 * values[:5])
