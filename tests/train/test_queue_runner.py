"""tf.train.QueueRunner, add_queue_runner, start_queue_runners: threads fill a queue,
the last one closes it, errors go to the coordinator, a stop request cancels blocked
enqueues. Every thread started here is joined with a timeout."""
import threading

import numpy as np
import pytest

import tensorweave as tf

JOIN_TIMEOUT = 10.0
# A step that would block forever (a bug) fails with DeadlineExceededError instead.
RUN = tf.RunOptions(timeout_in_ms=10000)


@pytest.fixture
def coord():
    """A Coordinator whose threads are stopped at teardown, also when the test fails
    (the threads are daemons, so a failing test never keeps the process alive)."""
    c = tf.train.Coordinator()
    yield c
    c.request_stop()


def _join(coord, threads):
    coord.join(threads, stop_grace_period_secs=JOIN_TIMEOUT)
    for t in threads:
        assert not t.is_alive()


def _counting_queue(limit, capacity=100):
    """A queue filled by an op that enqueues 0, 1, ... and fails with OutOfRangeError
    after `limit` values (like an input producer with num_epochs)."""
    counter = tf.Variable(0, dtype=tf.int64, trainable=False, name="counter")
    queue = tf.FIFOQueue(capacity, tf.int64, shapes=[[]], name="counted")
    enqueue = queue.enqueue(counter.count_up_to(limit))
    return counter, queue, enqueue


def _drain(sess, queue):
    """Dequeues until OutOfRangeError; returns the values."""
    out = []
    dequeue = queue.dequeue()
    while True:
        try:
            out.append(sess.run(dequeue, options=RUN))
            assert len(out) <= 10000, "the queue never ends"
        except tf.errors.OutOfRangeError:
            return out


def test_one_thread_fills_queue_then_closes_it(sess, coord):
    counter, queue, enqueue = _counting_queue(7)
    qr = tf.train.QueueRunner(queue, [enqueue])
    sess.run(counter.initializer)
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    assert len(threads) == 2  # the enqueue thread and the close-on-stop thread
    assert _drain(sess, queue) == list(range(7))  # in order, then OutOfRange
    assert sess.run(queue.is_closed())
    coord.request_stop()
    _join(coord, threads)
    assert qr.exceptions_raised == []


def test_several_threads_share_one_op_without_loss_or_duplicates(sess, coord):
    counter, queue, enqueue = _counting_queue(200, capacity=5)
    qr = tf.train.QueueRunner(queue, [enqueue] * 4)
    sess.run(counter.initializer)
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    values = _drain(sess, queue)  # the small capacity makes enqueues block often
    assert sorted(values) == list(range(200))
    coord.request_stop()
    _join(coord, threads)


def test_queue_closed_only_when_last_thread_ends(sess, coord):
    # Thread A ends at once (its counter is exhausted); thread B keeps enqueuing until
    # its own counter runs out, so the queue must stay open for B's elements.
    a = tf.Variable(0, dtype=tf.int64, trainable=False)
    b = tf.Variable(0, dtype=tf.int64, trainable=False)
    queue = tf.FIFOQueue(100, tf.int64, shapes=[[]])
    enq_a = queue.enqueue(a.count_up_to(0))
    enq_b = queue.enqueue(b.count_up_to(30) + 1000)
    qr = tf.train.QueueRunner(queue, [enq_a, enq_b])
    sess.run([a.initializer, b.initializer])
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    assert _drain(sess, queue) == list(range(1000, 1030))
    coord.request_stop()
    _join(coord, threads)


def test_error_in_enqueue_goes_to_coordinator(sess, coord):
    queue = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    bad = tf.debugging.check_numerics(tf.constant(np.nan, tf.float32), "bad input")
    qr = tf.train.QueueRunner(queue, [queue.enqueue(bad)])
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad input"):
        coord.join(threads, stop_grace_period_secs=JOIN_TIMEOUT)
    for t in threads:
        assert not t.is_alive()
    # the cancel op closed the queue on the stop request
    assert sess.run(queue.is_closed())


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_error_without_coordinator_is_recorded(sess):
    queue = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    bad = tf.debugging.check_numerics(tf.constant(np.inf, tf.float32), "no coord")
    qr = tf.train.QueueRunner(queue, [queue.enqueue(bad)])
    old_hook = threading.excepthook
    threading.excepthook = lambda args: None  # the thread re-raises; keep output quiet
    try:
        threads = qr.create_threads(sess, start=True, daemon=True)
        assert len(threads) == 1  # no close-on-stop thread without a coordinator
        for t in threads:
            t.join(JOIN_TIMEOUT)
            assert not t.is_alive()
    finally:
        threading.excepthook = old_hook
    assert len(qr.exceptions_raised) == 1
    assert isinstance(qr.exceptions_raised[0], tf.errors.InvalidArgumentError)


def test_stop_request_cancels_blocked_enqueues(sess, coord):
    queue = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    enqueue = queue.enqueue(tf.constant(1))
    qr = tf.train.QueueRunner(queue, [enqueue, enqueue])
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    assert sess.run(queue.dequeue(), options=RUN) == 1  # the threads are running
    assert sess.run(queue.dequeue(), options=RUN) == 1
    coord.request_stop()  # both threads now block on the full queue or will
    _join(coord, threads)  # no CancelledError is reported: the stop came first
    assert sess.run(queue.is_closed())
    # the elements already in the queue survive the cancel
    remaining = sess.run(queue.size())
    assert 0 <= remaining <= 2
    assert list(sess.run(queue.dequeue_many(remaining), options=RUN)) == [1] * remaining


def test_session_close_cancels_blocked_enqueue_threads(graph, coord):
    queue = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    qr = tf.train.QueueRunner(queue, [queue.enqueue(7)] * 2)
    sess = tf.Session()
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    assert sess.run(queue.dequeue(), options=RUN) == 7  # running, soon blocked on full
    sess.close()  # cancels the blocked steps; the error goes to the coordinator
    with pytest.raises((tf.errors.CancelledError, RuntimeError)):
        coord.join(threads, stop_grace_period_secs=JOIN_TIMEOUT)
    for t in threads:
        assert not t.is_alive()


def test_custom_queue_closed_exception_types(sess, coord):
    queue = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    bad = tf.debugging.check_numerics(tf.constant(np.nan, tf.float32), "ends quietly")
    qr = tf.train.QueueRunner(queue, [queue.enqueue(bad)],
                              queue_closed_exception_types=(tf.errors.InvalidArgumentError,))
    assert qr.queue_closed_exception_types == (tf.errors.InvalidArgumentError,)
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(queue.dequeue(), options=RUN)  # closed by the runner, not an error
    coord.request_stop()
    _join(coord, threads)


def test_explicit_close_and_cancel_ops(sess, coord):
    queue = tf.FIFOQueue(10, tf.int64, shapes=[[]])
    counter = tf.Variable(0, dtype=tf.int64, trainable=False)
    enqueue = queue.enqueue(counter.count_up_to(3))
    close = queue.close(name="my_close")
    cancel = queue.close(cancel_pending_enqueues=True, name="my_cancel")
    qr = tf.train.QueueRunner(queue, [enqueue], close_op=close, cancel_op=cancel)
    assert qr.close_op is close and qr.cancel_op is cancel
    assert qr.queue is queue and qr.enqueue_ops == [enqueue]
    assert qr.name == queue.name
    sess.run(counter.initializer)
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    assert _drain(sess, queue) == [0, 1, 2]
    coord.request_stop()
    _join(coord, threads)


def test_default_close_and_cancel_ops_are_queue_closes(graph):
    queue = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    qr = tf.train.QueueRunner(queue, [queue.enqueue(1)])
    assert qr.close_op.type == "QueueCloseV2"
    assert qr.cancel_op.type == "QueueCloseV2"
    assert qr.close_op.get_attr("cancel_pending_enqueues") is False
    assert qr.cancel_op.get_attr("cancel_pending_enqueues") is True
    assert qr.queue_closed_exception_types == (tf.errors.OutOfRangeError,)


def test_create_threads_options(sess):
    counter, queue, enqueue = _counting_queue(5)
    qr = tf.train.QueueRunner(queue, [enqueue])
    sess.run(counter.initializer)
    threads = qr.create_threads(sess, daemon=True)  # not started
    assert len(threads) == 1
    assert threads[0].daemon
    assert not threads[0].is_alive()
    assert threads[0].name == "QueueRunnerThread-%s-%s" % (queue.name, enqueue.name)
    # threads for this session already exist: none are created again
    assert qr.create_threads(sess) == []
    threads[0].start()
    threads[0].join(JOIN_TIMEOUT)
    assert not threads[0].is_alive()
    assert _drain(sess, queue) == list(range(5))
    # all threads ended: a new set may be created
    again = qr.create_threads(sess, daemon=True)
    assert len(again) == 1


def test_threads_are_registered_with_coordinator(sess, coord):
    counter, queue, enqueue = _counting_queue(3)
    qr = tf.train.QueueRunner(queue, [enqueue])
    sess.run(counter.initializer)
    threads = qr.create_threads(sess, coord=coord, start=True, daemon=True)
    assert _drain(sess, queue) == [0, 1, 2]
    coord.request_stop()
    coord.join(stop_grace_period_secs=JOIN_TIMEOUT)  # no list: the registered ones
    for t in threads:
        assert not t.is_alive()


def test_constructor_errors(graph):
    queue = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        tf.train.QueueRunner(queue, [])
    with pytest.raises(ValueError, match="Must provide queue and enqueue_ops"):
        tf.train.QueueRunner(None, [queue.enqueue(1)])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        tf.train.QueueRunner(queue, [queue.enqueue(1)],
                             queue_closed_exception_types=[tf.errors.OutOfRangeError])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        tf.train.QueueRunner(queue, [queue.enqueue(1)], queue_closed_exception_types=(int,))


def test_add_and_start_queue_runners(sess, coord):
    counter, queue, enqueue = _counting_queue(4)
    qr = tf.train.QueueRunner(queue, [enqueue])
    tf.train.add_queue_runner(qr)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [qr]
    sess.run(counter.initializer)
    threads = tf.train.start_queue_runners(sess, coord=coord)
    assert len(threads) == 2
    assert all(t.daemon for t in threads)
    assert _drain(sess, queue) == [0, 1, 2, 3]
    coord.request_stop()
    _join(coord, threads)


def test_start_queue_runners_custom_collection_and_default_session(graph):
    counter, queue, enqueue = _counting_queue(2)
    tf.train.queue_runner.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]),
                                           collection="mine")
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == []
    with tf.Session() as sess:
        sess.run(counter.initializer)
        threads = tf.train.queue_runner.start_queue_runners(collection="mine")
        assert len(threads) == 1  # no coordinator
        assert _drain(sess, queue) == [0, 1]
        for t in threads:
            t.join(JOIN_TIMEOUT)
            assert not t.is_alive()


def test_start_queue_runners_errors(graph):
    with pytest.raises(ValueError, match="No default session is registered"):
        tf.train.start_queue_runners()
    with pytest.raises(TypeError, match="sess must be a `tf.Session` object"):
        tf.train.start_queue_runners(sess=object())


def test_namespace_aliases():
    assert tf.train.queue_runner.QueueRunner is tf.train.QueueRunner
    assert tf.train.queue_runner.add_queue_runner is tf.train.add_queue_runner
    assert tf.train.queue_runner.start_queue_runners is tf.train.start_queue_runners


def test_to_proto_from_proto_round_trip(graph):
    with tf.name_scope("scope"):
        queue = tf.FIFOQueue(10, tf.int32, shapes=[[]])
        enqueue = queue.enqueue(tf.constant(1))
    qr = tf.train.QueueRunner(queue, [enqueue])
    proto = qr.to_proto()
    assert proto.enqueue_op_name == [enqueue.name]
    assert proto.close_op_name == qr.close_op.name
    rebuilt = tf.train.QueueRunner.from_proto(proto)
    assert rebuilt.enqueue_ops == [enqueue]
    assert rebuilt.close_op is qr.close_op
    assert rebuilt.cancel_op is qr.cancel_op
    assert rebuilt.name == qr.name
    assert rebuilt.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
    scoped = qr.to_proto(export_scope="scope")
    assert scoped.enqueue_op_name == [enqueue.name[len("scope/"):]]
    assert qr.to_proto(export_scope="elsewhere") is None
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.train.QueueRunner(queue, [enqueue], queue_runner_def=proto)
