"""Control-flow steps whose one asynchronous kernel waits in place on the structured
executor (policy.waits_in_place, executor.waiting_in_place): results, traces, errors,
deadlines, cancellation, and the steps that still need the tagged executor."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import policy as P


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv("TW_EXECUTOR", raising=False)


def executors(sess):
    return [p.executor for p in sess._plans.values()]


def _rnn_on_a_queue(batch=4, steps=5, units=3):
    """A dequeue_many in the root frame feeding a while loop (dynamic_rnn's shape)."""
    q = tf.FIFOQueue(100, tf.float32, shapes=[[steps, units]])
    w = tf.constant(np.linspace(-0.5, 0.5, units * units, dtype=np.float32)
                    .reshape(units, units))
    xs = q.dequeue_many(batch)
    h0 = tf.zeros([batch, units])

    def body(t, h):
        return t + 1, tf.tanh(tf.matmul(h, w) + xs[:, t, :])
    _, h = tf.while_loop(lambda t, h: t < steps, body, [0, h0])
    return q, w, h


def _rnn_reference(x, w):
    h = np.zeros((x.shape[0], w.shape[1]), np.float32)
    for t in range(x.shape[1]):
        h = np.tanh(h @ w + x[:, t, :])
    return h


def test_dequeue_feeding_a_loop_runs_structured_and_matches_numpy(graph):
    q, w, h = _rnn_on_a_queue()
    x = np.random.RandomState(0).rand(8, 5, 3).astype(np.float32)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([x]))
        got = [sess.run(h), sess.run(h)]
        assert executors(sess).count(P.STRUCTURED) == 1
        wv = sess.run(w)
    np.testing.assert_allclose(got[0], _rnn_reference(x[:4], wv), rtol=1e-5)
    np.testing.assert_allclose(got[1], _rnn_reference(x[4:], wv), rtol=1e-5)


def test_traced_run_of_a_waiting_step_records_the_dequeue(graph):
    q, _, h = _rnn_on_a_queue()
    x = np.ones((4, 5, 3), np.float32)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([x]))
        meta = tf.RunMetadata()
        sess.run(h, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=meta)
    names = {s.node_name for d in meta.step_stats.dev_stats for s in d.node_stats}
    assert any("DequeueMany" in n for n in names)


def test_waiting_dequeue_in_a_loop_is_woken_by_another_thread(graph):
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    _, total = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + q.dequeue()),
                             [0, 0.0])
    fill = q.enqueue_many([[1.0, 2.0, 4.0]])  # built here: the default graph is per thread
    with tf.Session() as sess:
        feeder = threading.Timer(0.2, lambda: sess.run(fill))
        feeder.start()
        t0 = time.monotonic()
        assert sess.run(total) == 7.0
        assert time.monotonic() - t0 >= 0.1   # it waited for the other thread
        feeder.join(10)
        assert P.STRUCTURED in executors(sess)


def test_closed_queue_ends_the_loop_with_out_of_range_naming_the_iteration(graph):
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    _, total = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + q.dequeue()),
                             [0, 0.0])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1.0, 2.0]]))
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError) as e:
            sess.run(total)
        assert "iteration 2" in str(e.value)
        assert "test_wait_in_place.py" in str(e.value)  # the user's line
        assert sess.run(q.size()) == 0


def test_deadline_of_a_waiting_root_frame_dequeue(graph):
    q, _, h = _rnn_on_a_queue()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(h, options=tf.RunOptions(timeout_in_ms=100))
        # the session still works after the cancelled step
        sess.run(q.enqueue_many([np.zeros((4, 5, 3), np.float32)]))
        np.testing.assert_array_equal(sess.run(h), np.zeros((4, 3), np.float32))


def test_two_waiting_kernels_stay_on_the_tagged_executor(graph):
    a = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    b = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    _, total = tf.while_loop(lambda i, s: i < 2,
                             lambda i, s: (i + 1, s + a.dequeue() * b.dequeue()), [0, 0.0])
    with tf.Session() as sess:
        sess.run([a.enqueue_many([[1.0, 2.0]]), b.enqueue_many([[3.0, 5.0]])])
        assert sess.run(total) == 13.0
        assert P.TAGGED in executors(sess)


def test_a_failing_partition_ends_another_partitions_wait_in_place(graph):
    # CPU:1's partition waits in place on an empty queue inside a loop; CPU:0's fails:
    # the partitioned step's cancellation reaches the wait (no hang, the failure raised)
    with tf.device("/cpu:1"):
        q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
        _, total = tf.while_loop(lambda i, s: i < 2,
                                 lambda i, s: (i + 1, s + q.dequeue()), [0, 0.0])
    with tf.device("/cpu:0"):
        k = tf.placeholder(tf.int32, [])
        bad = tf.reshape(tf.ones([6]), tf.stack([k, -1]))
    config = tf.ConfigProto(device_count={"CPU": 2},
                            experimental={"fuse_host_partitions": False})
    with tf.Session(config=config) as sess:
        t0 = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run([total, bad], {k: 4}, options=tf.RunOptions(timeout_in_ms=20000))
        assert time.monotonic() - t0 < 10
        (plan,) = [p for p in sess._plans.values() if p.executor == "partitioned"]
        assert any(type(p).__name__ == "WaitingStructuredPlan" for p in plan.plans)
