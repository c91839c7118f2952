"""A session dropped without close() stops its inter-op threads as soon as it is
unreachable, with no garbage-collector pass (issue 18): nothing the session caches
(plans, kernel contexts) refers back to it, and the pool threads hold only the pool."""
import gc
import threading
import time
import weakref

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import policy as _policy


@pytest.fixture
def every_kernel_heavy(monkeypatch, numpy_kernels):
    """Sessions whose policy makes every sized kernel HEAVY, so small graphs with
    parallel branches or loops run on the thread pool (on the NumPy kernels: oneDNN's
    float32 products run inline, policy.kernel_weight)."""
    made = _policy.ExecutionPolicy.from_config.__func__

    def from_config(cls, config, environ=None):
        p = made(cls, config, environ)
        return cls(p.inter_op_threads, 1.0, p.forced_executor, p.fuse_host_partitions)
    monkeypatch.setattr(_policy.ExecutionPolicy, "from_config", classmethod(from_config))


def _graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 8], name="x")
        m = tf.ones([8, 8])
        branches = tf.reduce_sum(tf.matmul(x, m) + tf.matmul(x, 2.0 * m))  # two branches
        _, loop = tf.while_loop(
            lambda i, s: i < 3,
            lambda i, s: (i + 1, s + tf.reduce_sum(tf.matmul(x, m)) + tf.reduce_sum(
                tf.matmul(x, 3.0 * m))),
            [tf.constant(0), tf.constant(0.0)], parallel_iterations=4)
        v = tf.Variable(1.0)
        init = v.initializer
    return g, x, branches, loop, init


def _pool_threads():
    return sum(t.name.startswith("tw-inter-op") for t in threading.enumerate())


def test_dropped_sessions_end_their_pool_threads_without_gc(every_kernel_heavy):
    g, x, branches, loop, init = _graph()
    feed = {x: np.ones((4, 8), np.float32)}
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    baseline = threading.active_count()
    gc.collect()
    gc.disable()
    try:
        refs = []
        made = 0
        for i in range(300):
            sess = tf.Session(graph=g, config=config)
            sess.run(init)
            if i % 3 == 0:
                assert sess.run(branches, feed) == np.float32(4 * 8 * 8 * 3)
            elif i % 3 == 1:
                assert sess.run(loop, feed) == np.float32(3 * 4 * 8 * 8 * 4)
            else:
                run = sess.make_callable([branches, loop], [x])
                run(feed[x])
                del run
            made = max(made, _pool_threads())
            refs.append(weakref.ref(sess))
            del sess
        assert made >= 2  # the sessions did use their pools
        alive = sum(r() is not None for r in refs)
        assert alive == 0, "%d of 300 dropped sessions are still alive" % alive
        deadline = time.monotonic() + 5.0
        while threading.active_count() > baseline and time.monotonic() < deadline:
            time.sleep(0.02)
        assert threading.active_count() <= baseline, (
            "%d threads still alive (baseline %d)" % (threading.active_count(), baseline))
    finally:
        gc.enable()


def test_a_session_in_use_keeps_its_pool(every_kernel_heavy):
    g, x, branches, loop, init = _graph()
    feed = {x: np.ones((4, 8), np.float32)}
    sess = tf.Session(graph=g, config=tf.ConfigProto(inter_op_parallelism_threads=2))
    try:
        for _ in range(3):
            assert sess.run(branches, feed) == np.float32(4 * 8 * 8 * 3)
            gc.collect()
        assert sess._env.pool is not None
    finally:
        sess.close()
    assert sess._env.pool is None


def test_idle_pool_threads_keep_no_values_of_the_last_step(every_kernel_heavy):
    """A pool thread waiting for work holds nothing of the kernel it ran last: the step's
    values are freed when the step ends, not when the thread next works."""
    g, x, branches, loop, init = _graph()
    sess = tf.Session(graph=g, config=tf.ConfigProto(inter_op_parallelism_threads=2))
    try:
        fed = np.ones((4, 8), np.float32)
        assert sess.run(branches, {x: fed}) == np.float32(4 * 8 * 8 * 3)
        ref = weakref.ref(fed)
        del fed
        gc.collect()
        assert ref() is None
    finally:
        sess.close()


def test_a_dropped_session_on_a_server_is_closed_there():
    """As TF's Session.__del__: a session on a server dropped without close() makes the
    server's worker forget its graph (a long-running client making sessions would fill
    the worker otherwise), without blocking the thread that drops it."""
    server = tf.train.Server.create_local_server()
    worker = server.worker
    try:
        g = tf.Graph()
        with g.as_default():
            y = tf.constant([1.0, 2.0]) * 3.0
        sess = tf.Session(server.target, graph=g)
        np.testing.assert_allclose(sess.run(y), [3.0, 6.0])
        assert worker._graphs
        t0 = time.monotonic()
        del sess
        assert time.monotonic() - t0 < 1.0
        deadline = time.monotonic() + 10.0
        while worker._graphs and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not worker._graphs
    finally:
        server.stop()


def test_a_dropped_local_session_is_closed():
    g = tf.Graph()
    with g.as_default():
        q = tf.FIFOQueue(2, tf.float32)
        enq = q.enqueue(1.0)
    sess = tf.Session(graph=g)
    sess.run(enq)
    env = sess._env
    del sess
    assert env.closed
