"""tf.nondifferentiable_batch_function (ops/data_flow/batch_ops.py, batch_scheduler.py):
a call computes what the undecorated function computes; concurrent runs are served by
one computation (counted with a py_func inside the function); padding, splitting, queue
limits and errors as TF 2.21's BatchFunction (behaviour and messages checked against it)."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.ops.data_flow.batch_scheduler import Batcher


@pytest.fixture
def submitted(monkeypatch):
    """A semaphore released each time a call's rows have entered its batcher."""
    count = threading.Semaphore(0)
    submit = Batcher.submit

    def counted(self, task):
        submit(self, task)
        count.release()
    monkeypatch.setattr(Batcher, "submit", counted)
    return count


def _recording(batches):
    """An identity py_func that appends each batch it sees to `batches`."""
    def record(x):
        batches.append(x.copy())
        return x

    def traced(a):
        out = tf.py_func(record, [a], a.dtype)
        out.set_shape(a.shape)
        return out
    return traced


def _run_concurrently(sess, fetch, feeds):
    """The results of one sess.run(fetch, feed) per feed, all started together."""
    results, errors = {}, []

    def run(k, feed):
        try:
            results[k] = sess.run(fetch, feed)
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
    threads = [threading.Thread(target=run, args=(k, f)) for k, f in enumerate(feeds)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    return [results[k] for k in range(len(feeds))]


def test_one_call_computes_the_undecorated_function(sess):
    def layer(a, b):
        return {"sum": tf.matmul(a, b) + 1.0, "rows": tf.reduce_max(a, axis=1),
                "count": tf.cast(tf.shape(a)[0:1] * 0 + 7, tf.int32) + tf.zeros_like(
                    tf.cast(a[:, 0], tf.int32))}
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [None, 3])
    batched = tf.nondifferentiable_batch_function(1, 8, 1000)(
        lambda x, y: layer(x, tf.transpose(y)))(a, b)
    plain = layer(a, tf.transpose(b))
    assert sorted(batched) == ["count", "rows", "sum"]
    assert batched["sum"].op.name == "batch/BatchFunction"
    assert batched["sum"].op.type == "BatchFunction"
    assert batched["sum"].shape.ndims is None
    assert [t.dtype for t in batched["sum"].op.outputs] == [tf.int32, tf.float32, tf.float32]
    rng = np.random.RandomState(0)
    feed = {a: rng.normal(size=[3, 3]), b: rng.normal(size=[3, 3])}
    got, want = sess.run(batched, feed), sess.run(plain, feed)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-6)
    np.testing.assert_allclose(got["sum"], feed[a] @ feed[b].T + 1, rtol=1e-5)
    np.testing.assert_array_equal(got["count"], [7, 7, 7])


def test_concurrent_runs_are_served_by_one_call(sess):
    batches = []
    x = tf.placeholder(tf.float32, [None, 2])
    # two runs of one row each fill a batch of 2 at once: no waiting for the timeout
    out = tf.nondifferentiable_batch_function(1, 2, 20_000_000)(
        lambda a: _recording(batches)(a) * 10.0)(x)
    feeds = [{x: [[1.0, 2.0]]}, {x: [[3.0, 4.0]]}]
    start = time.monotonic()
    results = _run_concurrently(sess, out, feeds)
    assert time.monotonic() - start < 10
    assert len(batches) == 1 and batches[0].shape == (2, 2)
    assert sorted(batches[0].tolist()) == [[1.0, 2.0], [3.0, 4.0]]
    np.testing.assert_array_equal(results[0], [[10.0, 20.0]])
    np.testing.assert_array_equal(results[1], [[30.0, 40.0]])


def test_a_batch_that_is_not_full_runs_after_the_timeout(sess):
    batches = []
    x = tf.placeholder(tf.float32, [None])
    out = tf.nondifferentiable_batch_function(1, 4, 100_000)(_recording(batches))(x)
    start = time.monotonic()
    np.testing.assert_array_equal(sess.run(out, {x: [5.0]}), [5.0])
    assert time.monotonic() - start >= 0.1
    assert [b.tolist() for b in batches] == [[5.0]]


def test_batches_are_padded_with_the_first_row_to_an_allowed_size(sess):
    batches = []
    x = tf.placeholder(tf.float32, [None, 2])
    out = tf.nondifferentiable_batch_function(1, 4, 1000, allowed_batch_sizes=[2, 4])(
        lambda a: _recording(batches)(a) * 2.0)(x)
    rows = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(sess.run(out, {x: rows}), rows * 2)
    assert [b.tolist() for b in batches] == [[[0, 1], [2, 3], [4, 5], [0, 1]]]


def test_large_batch_splitting_splits_a_call_over_batches(sess):
    batches = []
    x = tf.placeholder(tf.float32, [None])
    # calls of up to 4 rows, batches of at most 2 rows
    out = tf.nondifferentiable_batch_function(1, 4, 1000, allowed_batch_sizes=[2])(
        lambda a: _recording(batches)(a) + 1.0)(x)
    np.testing.assert_array_equal(sess.run(out, {x: [1.0, 2.0, 3.0]}), [2.0, 3.0, 4.0])
    assert sorted(b.tolist() for b in batches) == [[1.0, 2.0], [3.0, 3.0]]


def test_captured_tensors_and_variables_are_read_in_the_calling_run(sess):
    scale = tf.placeholder(tf.float32, [])
    v = tf.Variable(100.0)
    x = tf.placeholder(tf.float32, [None])
    out = tf.nondifferentiable_batch_function(1, 4, 1000)(lambda a: a * scale + v)(x)
    assert list(out.op.inputs) == [x, scale]  # the argument, then the captured tensor
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(out, {x: [1.0, 2.0], scale: 3.0}), [103, 106])
    sess.run(v.assign(0.0))
    np.testing.assert_array_equal(sess.run(out, {x: [1.0], scale: -1.0}), [-1.0])


def test_an_empty_call_returns_empty_vectors_as_tensorflow(sess):
    x = tf.placeholder(tf.float32, [None, 2])
    out = tf.nondifferentiable_batch_function(1, 4, 1000)(lambda a: a)(x)
    assert sess.run(out, {x: np.zeros([0, 2])}).shape == (0,)


def test_a_full_queue_rejects_the_call(sess, submitted):
    started, release = threading.Event(), threading.Event()

    def block(a):
        started.set()
        release.wait(20)
        return a
    x = tf.placeholder(tf.float32, [None])
    out = tf.nondifferentiable_batch_function(1, 1, 1000, max_enqueued_batches=1)(
        lambda a: tf.py_func(block, [a], tf.float32))(x)
    first = threading.Thread(target=sess.run, args=(out, {x: [1.0]}))
    first.start()
    assert started.wait(20)  # the first batch is running (it left the queue)
    second = threading.Thread(target=sess.run, args=(out, {x: [2.0]}))
    second.start()  # its batch waits in the queue, which is then full
    assert submitted.acquire(timeout=20) and submitted.acquire(timeout=20)
    try:
        with pytest.raises(tf.errors.UnavailableError, match="queue to which this task "
                           "was submitted is full"):
            sess.run(out, {x: [3.0]})
    finally:
        release.set()
        first.join(20)
        second.join(20)


def test_closing_the_session_cancels_a_waiting_call(graph, submitted):
    x = tf.placeholder(tf.float32, [None])
    out = tf.nondifferentiable_batch_function(1, 4, 60_000_000)(lambda a: a)(x)
    sess = tf.Session()
    raised = []

    def run():
        try:
            sess.run(out, {x: [1.0]})
        except tf.errors.OpError as e:
            raised.append(e)
    t = threading.Thread(target=run)
    t.start()
    assert submitted.acquire(timeout=20)  # the run waits for its batch (1 min timeout)
    sess.close()
    t.join(10)
    assert not t.is_alive()
    assert raised and isinstance(raised[0], tf.errors.CancelledError)


@pytest.mark.parametrize("kwargs,feed,error,message", [
    (dict(max_batch_size=2), [[1.0]] * 3, tf.errors.InvalidArgumentError,
     "Task size 3 is larger than maximum input batch size 2"),
    (dict(max_batch_size=0), [[1.0]], tf.errors.InvalidArgumentError,
     "input_batch_size_limit must be positive; was 0"),
    (dict(batch_timeout_micros=-1), [[1.0]], tf.errors.InvalidArgumentError,
     "batch_timeout_micros must be non-negative; was -1"),
    (dict(max_enqueued_batches=0), [[1.0]], tf.errors.InvalidArgumentError,
     "max_enqueued_batches must be positive; was 0"),
    (dict(allowed_batch_sizes=[3, 2]), [[1.0]], tf.errors.InvalidArgumentError,
     "allowed_batch_sizes entries must be monotonically increasing"),
    (dict(allowed_batch_sizes=[2, 3], enable_large_batch_splitting=False), [[1.0]],
     tf.errors.InvalidArgumentError, "final entry in allowed_batch_sizes must equal "
     "max_batch_size when enable_large_batch_splitting is False"),
    (dict(allowed_batch_sizes=[2, 5]), [[1.0]], tf.errors.InvalidArgumentError,
     "input_batch_size_limit must be greater than or equal to max_execution_batch_size"),
])
def test_run_time_errors(graph, kwargs, feed, error, message):
    options = dict(num_batch_threads=1, max_batch_size=4, batch_timeout_micros=1000)
    options.update(kwargs)
    x = tf.placeholder(tf.float32, [None, 1])
    out = tf.nondifferentiable_batch_function(**options)(lambda a: a)(x)
    with tf.Session() as sess, pytest.raises(error, match=message):
        sess.run(out, {x: feed})


def test_inputs_must_share_their_first_dimension(sess):
    x = tf.placeholder(tf.float32, [None])
    y = tf.placeholder(tf.float32, [None])
    out = tf.nondifferentiable_batch_function(1, 4, 1000)(lambda a, b: a + b)(x, y)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have equal "
                       "0th-dimension size"):
        sess.run(out, {x: [1.0, 2.0], y: [1.0]})


@pytest.mark.parametrize("fn,message", [
    (lambda a: tf.reduce_sum(a), "Batched output tensor has 0 dimensions"),
    (lambda a: a[:1], "0th dimension size: 1; batch size: 2; unbatched tasks size: 0; "
     "padding size: 0"),
])
def test_outputs_must_keep_the_batch_dimension(sess, fn, message):
    x = tf.placeholder(tf.float32, [None])
    out = tf.nondifferentiable_batch_function(1, 4, 1000)(fn)(x)
    with pytest.raises(tf.errors.FailedPreconditionError, match=message):
        sess.run(out, {x: [1.0, 2.0]})


def test_build_time_errors(graph):
    decorate = tf.nondifferentiable_batch_function(1, 4, 1000)
    with pytest.raises(ValueError, match="are supposed to be Tensors; found array"):
        decorate(lambda a: a)(np.ones([2], np.float32))
    with pytest.raises(ValueError, match="'Tin' of 'BatchFunction' Op passed list of "
                       "length 0"):
        decorate(lambda: tf.ones([2]))()


def test_no_gradient_as_tensorflow(graph):
    # TF registers no gradient for BatchFunction: tf.gradients, and so the numeric
    # gradient check, raise LookupError
    x = tf.placeholder(tf.float64, [2])
    y = tf.nondifferentiable_batch_function(1, 4, 1000)(lambda a: a * 2.0)(x)
    message = r"No gradient defined for operation 'batch/BatchFunction' \(op type: " \
        r"BatchFunction\)"
    with pytest.raises(LookupError, match=message):
        tf.gradients(y, x)
    with pytest.raises(LookupError, match=message):
        compute_gradient_error(x, [2], y, [2], x_init_value=np.ones(2))
