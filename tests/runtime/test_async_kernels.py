"""Asynchronous kernels (white paper §5.3): a waiting kernel holds no pool thread, and a
waiting step ends on a deadline, on Session.close, or when another kernel fails."""
import threading
import time

import pytest

import tensorweave as tf
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op


class Signal:
    """Releases every waiting kernel when fired; each waiter finishes exactly once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.waiters = []
        self.fired = False

    def wait(self, state, done, value):
        once = threading.Lock()

        def finish(**kw):
            if once.acquire(blocking=False):
                done(**kw)
        with self.lock:
            if not self.fired:
                token = state.add_cancel_callback(lambda exc: finish(exc=exc))
                self.waiters.append(lambda: (state.remove_cancel_callback(token),
                                             finish(result=value)))
                return
        finish(result=value)

    def fire(self):
        with self.lock:
            self.fired = True
            waiters, self.waiters = self.waiters, []
        for w in waiters:
            w()


SIGNAL = Signal()
register_op("TestWaitForSignal", inputs=["x: float32"], outputs=["y: float32"],
            stateful=True, shape=lambda op: op.inputs[0].shape)
not_differentiable("TestWaitForSignal")


@kernel("TestWaitForSignal", is_async=True)
def _wait_kernel(ctx, state, done, x):
    SIGNAL.wait(state, done, x)


@pytest.fixture
def signal():
    global SIGNAL
    SIGNAL = Signal()
    return SIGNAL


def _wait_op(x):
    return apply_op("TestWaitForSignal", [x]).outputs[0]


def test_many_blocked_steps_hold_no_pool_thread(graph, signal):
    x = tf.placeholder(tf.float32, [])
    y = _wait_op(x) * 2.0
    results, errors = {}, []
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        def step(k):
            try:
                results[k] = sess.run(y, {x: float(k)})
            except Exception as e:  # re-raised below
                errors.append(e)
        threads = [threading.Thread(target=step, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        deadline = time.time() + 10
        while len(signal.waiters) < 16 and time.time() < deadline:
            time.sleep(0.01)
        assert len(signal.waiters) == 16  # all 16 steps are blocked at once
        # a 17th step still runs: the pool is free
        assert sess.run(tf.constant(3.0) * 2.0) == 6.0
        signal.fire()
        for t in threads:
            t.join(10)
    assert not errors
    assert results == {k: 2.0 * k for k in range(16)}


def test_deadline_raises_deadline_exceeded(graph, signal):
    y = _wait_op(tf.constant(1.0))
    with tf.Session() as sess:
        t0 = time.time()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(y, options=tf.RunOptions(timeout_in_ms=100))
        assert time.time() - t0 < 5
        signal.fire()
        assert sess.run(y) == 1.0  # the session still works afterwards


def test_config_operation_timeout_applies_to_every_run(graph, signal):
    y = _wait_op(tf.constant(1.0))
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=50)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(y)
        assert sess.run(tf.constant(2.0) + 1.0) == 3.0  # plans without waits are unaffected


def test_close_cancels_blocked_steps(graph, signal):
    y = _wait_op(tf.constant(1.0))
    sess = tf.Session()
    caught = []

    def step():
        try:
            sess.run(y)
        except Exception as e:  # the expected CancelledError
            caught.append(e)
    t = threading.Thread(target=step)
    t.start()
    deadline = time.time() + 10
    while not signal.waiters and time.time() < deadline:
        time.sleep(0.01)
    sess.close()
    t.join(10)
    assert not t.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], tf.errors.CancelledError)


def test_error_elsewhere_cancels_the_waiting_kernel(graph, signal):
    p = tf.placeholder(tf.float32, [], name="never_fed")
    y = _wait_op(tf.constant(1.0))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="never_fed"):
            sess.run([y, p * 2.0])
    signal.fire()


register_op("TestAsyncRaises", inputs=["x: float32"], outputs=["y: float32"],
            stateful=True, shape=lambda op: op.inputs[0].shape)
not_differentiable("TestAsyncRaises")


@kernel("TestAsyncRaises", is_async=True)
def _raising_kernel(ctx, state, done, x):
    raise ValueError("bad input for the async kernel")


def test_async_kernel_raising_synchronously_is_reported_with_the_op(graph):
    y = apply_op("TestAsyncRaises", [tf.constant(1.0)], name="raiser").outputs[0]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad input.*raiser"):
            sess.run(y)
        assert sess.run(tf.constant(1.0) + 1.0) == 2.0
