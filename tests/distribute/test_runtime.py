"""Sessions on a cluster of task processes (issue 15): placement over tasks, Send/Recv
between processes (in loops and conds too), resources shared across sessions, errors
that abort a step everywhere. Each result is checked against the same graph run in
this process."""

import inspect

import numpy as np
import pytest

import tensorweave as tf


def _strip_devices(graph):
    """Builds on a copy of `graph` without device requests (the local reference)."""
    for op in graph.get_operations():
        op._set_device("")


def _model(ps="/job:ps/task:0", a="/job:worker/task:0", b="/job:worker/task:1"):
    with tf.device(ps):
        w = tf.Variable(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32), name="w")
        bias = tf.Variable(np.zeros(3, np.float32), name="b")
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device(b):
        h = tf.nn.relu(tf.matmul(x, w) + bias)
    with tf.device(a):
        loss = tf.reduce_mean(tf.square(h - 0.5))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, w, loss, train


def test_a_training_step_spanning_ps_and_two_workers_equals_one_process(ps_workers):
    feed_val = np.random.RandomState(0).rand(8, 4).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x, w, loss, train = _model()
        init = tf.global_variables_initializer()
    with tf.Session(ps_workers.target(), graph=g) as sess:
        names = {d.name for d in sess.list_devices()}
        assert "/job:ps/replica:0/task:0/device:CPU:0" in names
        assert "/job:worker/replica:0/task:1/device:CPU:0" in names
        sess.run(init)
        for _ in range(5):
            got_loss, _ = sess.run([loss, train], {x: feed_val})
        got_w = sess.run(w)
    with g.as_default():
        _strip_devices(g)
        with tf.Session(graph=g) as sess:
            sess.run(init)
            for _ in range(5):
                want_loss, _ = sess.run([loss, train], {x: feed_val})
            want_w = sess.run(w)
    assert got_loss == want_loss
    np.testing.assert_array_equal(got_w, want_w)


def test_variables_on_a_ps_outlive_sessions_and_clients_until_reset(ps_workers):
    def build():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="shared_v")
        return v, v.assign_add(2.0)

    g1 = tf.Graph()
    with g1.as_default():
        v, add = build()
        with tf.Session(ps_workers.target("worker", 0)) as sess:
            sess.run(v.initializer)
            sess.run(add)
    g2 = tf.Graph()  # another client's graph: same variable name, no initializer run
    with g2.as_default():
        v2, add2 = build()
        with tf.Session(ps_workers.target("worker", 1)) as sess:
            assert sess.run(add2) == 5.0
    tf.Session.reset(ps_workers.target(), ["localhost"])
    with g2.as_default(), tf.Session(ps_workers.target("worker", 1)) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="shared_v"):
            sess.run(v2)


def test_a_while_loop_whose_body_spans_two_tasks(ps_workers):
    g = tf.Graph()
    with g.as_default():
        n = tf.placeholder(tf.int32, [])
        with tf.device("/job:worker/task:0"):
            def body(i, a):
                with tf.device("/job:worker/task:1"):
                    a2 = a * 0.5 + tf.cast(i, tf.float32)
                return i + 1, a2
            _, r = tf.while_loop(lambda i, a: i < n, body, [0, tf.constant(1.0)])
    with tf.Session(ps_workers.target(), graph=g) as sess:
        got = sess.run(r, {n: 20})
        got_again = sess.run(r, {n: 3})
    want = np.float32(1.0)
    for i in range(20):
        want = np.float32(want * np.float32(0.5) + np.float32(i))
    assert got == want
    assert got_again == np.float32(np.float32(np.float32(1 * 0.5 + 0) * 0.5 + 1) * 0.5 + 2)


@pytest.mark.parametrize("pred", [True, False])
def test_a_cond_whose_branches_sit_on_different_tasks(ps_workers, pred):
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [])

        def on(task, fn):
            def branch():
                with tf.device("/job:worker/task:%d" % task):
                    return fn(x)
            return branch
        r = tf.cond(p, on(1, lambda v: v * 3.0), on(0, lambda v: v - 1.0))
    with tf.Session(ps_workers.target(), graph=g) as sess:
        out = sess.run(r, {p: pred, x: 2.0},
                       options=tf.RunOptions(timeout_in_ms=20000))
    assert out == (6.0 if pred else 1.0)


def test_strings_and_ints_travel_between_tasks(ps_workers):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            s = tf.strings.join([tf.constant(["a", "bc"]), tf.constant("!")])
            k = tf.range(5, dtype=tf.int64) * 3
        with tf.device("/job:worker/task:0"):
            length = tf.strings.length(s)
            total = tf.reduce_sum(k)
    with tf.Session(ps_workers.target(), graph=g) as sess:
        got_s, got_len, got_total = sess.run([s, length, total])
    assert list(got_s) == [b"a!", b"bc!"]
    assert list(got_len) == [2, 3] and got_total == 30


def test_the_graph_grows_between_runs(ps_workers):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            a = tf.constant(2.0) * tf.placeholder_with_default(3.0, [])
        with tf.Session(ps_workers.target(), graph=g) as sess:
            assert sess.run(a) == 6.0
            with tf.device("/job:worker/task:0"):
                b = a + 1.0
            assert sess.run(b) == 7.0
            assert sess.run(a) == 6.0  # the first plan still runs


@pytest.mark.timeout(60)  # a step that hangs instead of failing fails the test
def test_an_error_on_one_task_fails_the_step_everywhere(ps_workers):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.device("/job:worker/task:1"):
            checked = tf.debugging.check_numerics(x, "bad input")
            line = inspect.currentframe().f_lineno - 1
        with tf.device("/job:worker/task:0"):
            y = checked * 2.0
    with tf.Session(ps_workers.target(), graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad input") as e:
            sess.run(y, {x: [1.0, np.nan]})
        # the line is the client's, where the op was built (the task only imported it)
        assert "(defined at %s:%d)" % (__file__, line) in e.value.message
        assert e.value.op is checked.op
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])


def _ps_variable_read_on_worker():
    """(graph, v, y): a variable (3.0) on ps:0 and y = 2 v computed on worker:0."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="v")
        with tf.device("/job:worker/task:0"):
            y = v * 2.0
    return g, v, y


@pytest.mark.timeout(60)
def test_a_lost_task_fails_the_step_with_unavailable(make_cluster):
    c = make_cluster({"ps": 1, "worker": 1})
    g, v, y = _ps_variable_read_on_worker()
    with tf.Session(c.target(), graph=g) as sess:
        sess.run(v.initializer)
        assert sess.run(y) == 6.0
        c.kill("ps", 0)
        with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError),
                           match="ps"):
            sess.run(y, options=tf.RunOptions(timeout_in_ms=10000))


def test_tasks_with_several_devices(make_cluster):
    c = make_cluster({"worker": 2}, config={"device_count": {"CPU": 2}})
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [3])
        parts = []
        for t in range(2):
            for d in range(2):
                with tf.device("/job:worker/task:%d/device:CPU:%d" % (t, d)):
                    parts.append(x * float(2 * t + d + 1))
        with tf.device("/job:worker/task:0/device:CPU:0"):
            total = tf.add_n(parts)
    with tf.Session(c.target(), graph=g) as sess:
        assert len(sess.list_devices()) == 4
        np.testing.assert_array_equal(sess.run(total, {x: [1.0, 2.0, 3.0]}),
                                      [10.0, 20.0, 30.0])


def test_a_wrong_cluster_token_is_refused(make_cluster, monkeypatch):
    c = make_cluster({"worker": 1}, env={"TW_CLUSTER_TOKEN": "right"})
    monkeypatch.setenv("TW_CLUSTER_TOKEN", "wrong")
    with pytest.raises(tf.errors.UnauthenticatedError, match="wrong cluster token"):
        tf.Session(c.target())
    monkeypatch.setenv("TW_CLUSTER_TOKEN", "right")
    g = tf.Graph()
    with g.as_default(), tf.Session(c.target()) as sess:
        assert sess.run(tf.constant(4.0) + 1.0) == 5.0


def test_a_session_goes_on_after_a_task_restarts(make_cluster):
    c = make_cluster({"ps": 1, "worker": 1})
    g, v, y = _ps_variable_read_on_worker()
    with tf.Session(c.target(), graph=g) as sess:
        sess.run(v.initializer)
        assert sess.run(y) == 6.0
        c.kill("ps", 0)
        c.start_task("ps", 0)
        c.wait_task("ps", 0)
        # the step in flight fails; the master then registers again with the new task
        with pytest.raises((tf.errors.AbortedError, tf.errors.UnavailableError)):
            sess.run(y)
        # the restarted task lost its variables, as a TF1 PS does
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(y)
        sess.run(v.initializer)
        assert sess.run(y) == 6.0


@pytest.mark.timeout(60)
def test_a_frozen_task_is_found_by_health_checks(make_cluster):
    import os
    import signal
    c = make_cluster({"ps": 1, "worker": 1})
    g, v, y = _ps_variable_read_on_worker()
    with tf.Session(c.target(), graph=g) as sess:
        sess.run(v.initializer)
        assert sess.run(y) == 6.0
        ps = c.procs[("ps", 0)]
        os.kill(ps.pid, signal.SIGSTOP)  # alive, connections open, answers nothing
        try:
            with pytest.raises(tf.errors.UnavailableError, match="health check"):
                sess.run(y)  # no deadline of its own
        finally:
            os.kill(ps.pid, signal.SIGCONT)
