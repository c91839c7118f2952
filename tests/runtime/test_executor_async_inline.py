"""run_dataflow's two phases (runtime/executor.py): steps run in plan order on the calling
thread while every asynchronous kernel finishes inside its call; the first one that waits
hands the rest of the step to the pending-count scheduler. Both phases, the hand-over and
their error paths, with a test kernel whose completion each test chooses."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.runtime import executor

register_op("TestInlineAsync", inputs=["x: float32"], outputs=["y: float32"],
            attrs={"mode": ""}, stateful=True, shape=lambda op: op.inputs[0].shape)
not_differentiable("TestInlineAsync")
register_op("TestInlineRecord", inputs=["x: float32"], outputs=["y: float32"],
            attrs={"label": ""}, stateful=True, shape=lambda op: op.inputs[0].shape)
not_differentiable("TestInlineRecord")

EVENTS = []  # what happened, in order: ("run", label), ("done", mode)


def _later(fn, delay=0.1):
    t = threading.Thread(target=lambda: (time.sleep(delay), fn()), daemon=True)
    t.start()
    return t


@kernel("TestInlineAsync", is_async=True)
def _inline_async_kernel(ctx, state, done, x):
    mode = ctx.attrs["mode"]

    def finish(**kw):
        EVENTS.append(("done", mode))
        done(**kw)
    if mode == "sync":
        finish(result=x + 1)
    elif mode == "sync_then_cancel":
        finish(result=x + 1)
        state.cancel(errors.CancelledError(None, None, "cancelled while running"))
    elif mode == "sync_error":
        finish(exc=errors.InvalidArgumentError(None, None, "sync failure"))
    elif mode == "later":
        _later(lambda: finish(result=x + 1))
    elif mode == "later_error":
        _later(lambda: finish(exc=errors.InvalidArgumentError(None, None, "late failure")))
    elif mode == "race":  # `done` comes from another thread, but before the call returns
        t = threading.Thread(target=lambda: finish(result=x + 1))
        t.start()
        t.join()
    elif mode == "twice":
        finish(result=x + 1)
        finish(result=x + 100)
    elif mode == "twice_later":
        _later(lambda: (finish(result=x + 1), finish(result=x + 100)))
    elif mode == "forever":  # only a cancellation finishes it
        once = threading.Lock()

        def cancel(exc):
            if once.acquire(blocking=False):
                finish(exc=exc)
        state.add_cancel_callback(cancel)
    else:
        raise ValueError("unknown mode %r" % mode)


@kernel("TestInlineRecord")
def _record_kernel(ctx, x):
    EVENTS.append(("run", ctx.attrs["label"]))
    return x * 2


def _async(x, mode, name=None):
    return apply_op("TestInlineAsync", [x], {"mode": mode},
                    name=name or "async_" + mode).outputs[0]


def _record(x, label):
    return apply_op("TestInlineRecord", [x], {"label": label}, name=label).outputs[0]


@pytest.fixture
def scheduled(monkeypatch):
    """Records (start, waiting) of every hand-over to the scheduler."""
    calls = []
    real = executor._schedule

    def spy(plan, vals, pool, stats, state, start, waiting):
        calls.append((start, waiting))
        return real(plan, vals, pool, stats, state, start, waiting)
    monkeypatch.setattr(executor, "_schedule", spy)
    EVENTS.clear()
    return calls


def test_synchronous_completion_stays_inline(graph, scheduled):
    x = tf.placeholder(tf.float32, [3])
    y = _async(x, "sync") * 3.0
    z = _async(y, "sync", name="second") + 1.0
    with tf.Session() as sess:
        for k in range(3):
            v = np.arange(3, dtype=np.float32) + k
            np.testing.assert_allclose(sess.run([y, z], {x: v}),
                                       [(v + 1) * 3, (v + 1) * 3 + 2])
    assert scheduled == []  # never needed the scheduler


def test_done_from_another_thread_during_the_call_is_synchronous(graph, scheduled):
    y = _async(tf.constant(1.0), "race")
    with tf.Session() as sess:
        assert sess.run(y) == 2.0
    assert scheduled == []


def test_done_called_twice_delivers_the_first_result(graph, scheduled):
    y = _async(tf.constant(1.0), "twice")
    w = _async(tf.constant(1.0), "twice_later")
    with tf.Session() as sess:
        assert sess.run(y) == 2.0
        assert sess.run(w) == 2.0
        assert sess.run(w * 1.0) == 2.0  # the stray second call reached no later step


def test_waiting_kernel_hands_over_and_independent_work_goes_on(graph, scheduled):
    a = _async(tf.constant(1.0), "later")       # built first: first in plan order
    b = _record(tf.constant(5.0), "independent")
    c = _record(a, "dependent")
    with tf.Session() as sess:
        assert sess.run([c, b]) == [4.0, 10.0]
        assert len(scheduled) == 1 and scheduled[0][1] is not None
        # the independent node ran while the kernel waited; the dependent one after it
        assert EVENTS == [("run", "independent"), ("done", "later"), ("run", "dependent")]
        EVENTS.clear()
        assert sess.run(c) == 4.0  # the plan is reusable after a hand-over
        assert EVENTS == [("done", "later"), ("run", "dependent")]


def test_values_read_by_steps_before_the_hand_over_stay_available(graph, scheduled):
    x = tf.placeholder(tf.float32, [2])
    shared = x * 2.0                      # read before and after the waiting kernel
    first = shared + 1.0
    waiting = _async(first, "later")
    out = waiting + shared
    with tf.Session() as sess:
        v = np.array([1.0, 2.0], np.float32)
        np.testing.assert_allclose(sess.run([out, first], {x: v}),
                                   [v * 2 + 1 + 1 + v * 2, v * 2 + 1])
    assert len(scheduled) == 1


def test_synchronous_error_names_the_op(graph, scheduled):
    y = _async(tf.constant(1.0), "sync_error", name="failing")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="(?s)sync failure.*failing"):
            sess.run(y * 2.0)
        assert sess.run(tf.constant(2.0) * 2.0) == 4.0
    assert scheduled == []


def test_error_of_a_cheap_kernel_after_a_synchronous_completion(graph, scheduled):
    x = tf.placeholder(tf.float32, [None])
    bad = tf.reshape(_async(x, "sync"), [3], name="bad_reshape")  # checked when it runs
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_reshape"):
            sess.run(bad, {x: [1.0, 2.0]})
    assert scheduled == []


def test_error_after_the_hand_over(graph, scheduled):
    y = _async(tf.constant(1.0), "later_error", name="late")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="(?s)late failure.*late"):
            sess.run(y + 1.0)
    assert len(scheduled) == 1


def test_failure_elsewhere_cancels_a_kernel_waiting_after_the_hand_over(graph, scheduled):
    y = _async(tf.constant(1.0), "forever")
    p = tf.placeholder(tf.float32, [], name="never_fed")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="never_fed"):
            sess.run([y, p * 2.0])
    assert ("done", "forever") in EVENTS  # cancelled, so the step could end


def test_deadline_and_close_after_the_hand_over(graph, scheduled):
    y = _async(tf.constant(1.0), "forever")
    sess = tf.Session()
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(y, options=tf.RunOptions(timeout_in_ms=50))
    caught = []
    t = threading.Thread(target=lambda: caught.append(_error_of(sess, y)))
    t.start()
    deadline = time.time() + 10
    while len(scheduled) < 2 and time.time() < deadline:
        time.sleep(0.005)
    sess.close()
    t.join(10)
    assert not t.is_alive() and isinstance(caught[0], tf.errors.CancelledError)


def _error_of(sess, fetch):
    try:
        sess.run(fetch)
    except tf.errors.OpError as e:
        return e
    return None


def test_step_cancelled_from_outside_fails_even_when_inline(graph, scheduled):
    # the kernel finishes inside its call, then the step is cancelled (as Session.close
    # would from another thread) before the inline phase ends
    y = _async(tf.constant(1.0), "sync_then_cancel")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.CancelledError, match="cancelled while running"):
            sess.run(y * 2.0)
    assert scheduled == []


def test_pool_plans_complete_synchronous_kernels_in_the_scheduler(graph, scheduled,
                                                                   numpy_kernels):
    # two heavy independent matmuls: the plan uses the thread pool from its first step
    # (NumPy's: oneDNN's float32 products run inline, policy.kernel_weight)
    m = tf.placeholder(tf.float32, [600, 600])
    m2 = tf.placeholder(tf.float32, [600, 600])
    heavy = [tf.matmul(m, m), tf.matmul(m2, m)]  # independent, at the same depth
    y = _async(tf.constant(3.0), "sync")
    w = _async(tf.constant(3.0), "later")
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        a, b, yv, wv = sess.run([tf.reduce_sum(heavy[0]), tf.reduce_sum(heavy[1]), y, w],
                                {m: np.eye(600, dtype=np.float32),
                                 m2: 2 * np.eye(600, dtype=np.float32)})
    assert (a, b, yv, wv) == (600.0, 1200.0, 4.0, 4.0)
    assert [start for start, _ in scheduled] == [0]


def test_traced_steps_record_asynchronous_kernels(graph, scheduled):
    y = _async(tf.constant(1.0), "sync", name="traced_sync")
    w = _async(y, "later", name="traced_later")
    md = tf.RunMetadata()
    with tf.Session() as sess:
        assert sess.run(w, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                        run_metadata=md) == 3.0
    names = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
    assert {"traced_sync", "traced_later"} <= names
