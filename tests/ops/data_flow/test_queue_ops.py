"""Queues (OSDI §3.1, white paper §4.6): FIFO/padding/random-shuffle/priority semantics,
blocking and backpressure with asynchronous kernels, close, cancellation, concurrency."""
import threading
import time
from collections import Counter

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.data_flow import queue_ops
from tensorweave.runtime.executor import StepState

WAIT = 10.0  # generous bound for a background step to reach a state; never hit when passing


def _wait_until(pred, what="condition"):
    deadline = time.time() + WAIT
    while not pred():
        if time.time() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.002)


def _res(sess, q):
    """The run-time QueueResource of `q` in `sess`."""
    return sess.run(q.queue_ref).queue


class _Bg:
    """Runs sess.run(fetches) on a thread; keeps the result or the exception."""

    def __init__(self, sess, fetches, feed=None, options=None):
        self.result = self.error = None
        self.thread = threading.Thread(target=self._run, args=(sess, fetches, feed, options))
        self.thread.start()

    def _run(self, sess, fetches, feed, options):
        try:
            self.result = sess.run(fetches, feed, options=options)
        except Exception as e:  # inspected by the test
            self.error = e

    def join(self):
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "background step did not finish"
        return self


# --- building ---------------------------------------------------------------------------
def test_public_names():
    assert tf.queue.FIFOQueue is tf.FIFOQueue
    assert tf.queue.QueueBase is tf.QueueBase is tf.io.QueueBase
    for n in ("PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"):
        assert getattr(tf.queue, n) is getattr(tf, n) is getattr(tf.io, n)
    assert issubclass(tf.FIFOQueue, tf.QueueBase)


def test_op_names_types_and_static_shapes(graph):
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []])
    assert q.name == "fifo_queue" and q.queue_ref.op.type == "FIFOQueueV2"
    assert q.queue_ref.dtype == tf.resource and q.queue_ref.shape == tf.TensorShape([])
    assert q.dtypes == [tf.float32, tf.int32]
    assert [s.as_list() for s in q.shapes] == [[2], []] and q.names is None
    e = q.enqueue(([1.0, 2.0], 3))
    assert (e.name, e.type) == ("fifo_queue_enqueue", "QueueEnqueueV2")
    assert [t.op.name for t in e.inputs[1:]] == ["fifo_queue_enqueue/component_0",
                                                "fifo_queue_enqueue/component_1"]
    d = q.dequeue()
    assert [t.name for t in d] == ["fifo_queue_Dequeue:0", "fifo_queue_Dequeue:1"]
    assert [t.dtype for t in d] == [tf.float32, tf.int32]
    assert d[0].shape.as_list() == [2] and d[1].shape.as_list() == []
    dm = q.dequeue_many(4)
    assert dm[0].op.type == "QueueDequeueManyV2" and dm[0].shape.as_list() == [4, 2]
    assert dm[1].shape.as_list() == [4]
    du = q.dequeue_up_to(4)
    assert du[0].op.name == "fifo_queue_DequeueUpTo" and du[0].shape.as_list() == [None, 2]
    n = tf.placeholder(tf.int32, [])
    assert q.dequeue_many(n)[0].shape.as_list() == [None, 2]
    assert q.enqueue_many(([[1.0, 2.0]], [1])).name == "fifo_queue_EnqueueMany"
    assert q.size().name == "fifo_queue_Size:0" and q.size().dtype == tf.int32
    assert q.is_closed().name == "fifo_queue_Is_Closed:0" and q.is_closed().dtype == tf.bool
    c = q.close(cancel_pending_enqueues=True)
    assert c.name == "fifo_queue_Close" and c.get_attr("cancel_pending_enqueues") is True
    # no shapes: unknown static shapes; one component: a tensor, not a list
    q1 = tf.FIFOQueue(2, tf.string)
    assert q1.dequeue().shape.ndims is None and q1.dequeue_many(2).shape.ndims is None


def test_build_time_errors(graph):
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []])
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue(([1.0, 2.0, 3.0], 1))
    with pytest.raises(TypeError):
        q.enqueue(([1.0, 2.0], 1.5))
    with pytest.raises(ValueError, match="Queue must have names"):
        q.enqueue({"a": 1})
    with pytest.raises(ValueError, match="not compatible"):
        q.enqueue_many(([[1.0, 2.0]], [1, 2]))
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, tf.float32, shapes=[[None]])
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(3, [tf.float32], names=["a", "b"])
    with pytest.raises(ValueError, match="list of shapes must be provided"):
        tf.PaddingFIFOQueue(3, [tf.int32], shapes=None)
    with pytest.raises(ValueError, match="defined rank"):
        tf.PaddingFIFOQueue(3, [tf.int32], shapes=[tf.TensorShape(None)])
    with pytest.raises(TypeError, match="shapes"):
        tf.PriorityQueue(3, [tf.float32])
    with pytest.raises(TypeError):
        tf.PriorityQueue(3, [tf.float32], shapes=[[]]).enqueue((1.5, 2.0))


# --- FIFO semantics -----------------------------------------------------------------------
def test_fifo_order_dtypes_and_values(sess):
    q = tf.FIFOQueue(10, [tf.int32, tf.float64, tf.string, tf.float16], shapes=[[], [2], [], []])
    x = tf.placeholder(tf.int32, [])
    enq = q.enqueue((x, tf.cast(tf.stack([x, -x]), tf.float64), tf.as_string(x),
                     tf.cast(x, tf.float16)))
    for k in range(5):
        sess.run(enq, {x: k})
    assert sess.run(q.size()) == 5
    for k in range(5):
        a, b, s, h = sess.run(q.dequeue())
        assert a == k and a.dtype == np.int32
        np.testing.assert_array_equal(b, [k, -k])
        assert b.dtype == np.float64 and s == str(k).encode() and h.dtype == np.float16
    assert sess.run(q.size()) == 0


def test_enqueue_many_dequeue_many_and_up_to(sess):
    q = tf.FIFOQueue(20, [tf.int64, tf.float32], shapes=[[], [3]])
    a = np.arange(6, dtype=np.int64)
    b = np.arange(18, dtype=np.float32).reshape(6, 3)
    sess.run(q.enqueue_many((a, b)))
    got = sess.run(q.dequeue_many(4))
    np.testing.assert_array_equal(got[0], a[:4])
    np.testing.assert_array_equal(got[1], b[:4])
    assert got[0].dtype == np.int64 and got[1].shape == (4, 3)
    got = sess.run(q.dequeue_up_to(2))
    np.testing.assert_array_equal(got[1], b[4:])
    empty = sess.run(q.dequeue_many(0))
    assert empty[0].shape == (0,) and empty[1].shape == (0, 3)
    assert empty[1].dtype == np.float32
    sess.run(q.enqueue_many((np.zeros(0, np.int64), np.zeros((0, 3), np.float32))))
    assert sess.run(q.size()) == 0


def test_dict_elements(sess):
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]], names=["i", "f"])
    assert q.names == ["i", "f"]
    sess.run(q.enqueue({"f": [1.0, 2.0], "i": 7}))
    sess.run(q.enqueue_many({"i": [8, 9], "f": [[3.0, 4.0], [5.0, 6.0]]}))
    d = q.dequeue()
    assert set(d) == {"i", "f"} and d["f"].shape.as_list() == [2]
    out = sess.run(d)
    assert out["i"] == 7 and list(out["f"]) == [1.0, 2.0]
    out = sess.run(q.dequeue_many(2))
    assert list(out["i"]) == [8, 9] and out["f"].shape == (2, 2)
    with pytest.raises(ValueError, match="do not match names"):
        q.enqueue({"i": 1, "g": [1.0, 2.0]})
    with pytest.raises(ValueError, match="must enqueue a dictionary"):
        q.enqueue((1, [1.0, 2.0]))


def test_run_time_shape_errors(sess):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[2]])
    p = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Shape mismatch in tuple component 0. Expected \[2\], got \[3\]"):
        sess.run(q.enqueue(p), {p: [1.0, 2.0, 3.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[3,2\], got \[3\]"):
        sess.run(q.enqueue_many(p), {p: [1.0, 2.0, 3.0]})
    q2 = tf.FIFOQueue(3, [tf.int32, tf.int32], shapes=[[], []])
    p1, p2 = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="component 1"):
        sess.run(q2.enqueue_many((p1, p2)), {p1: [1, 2], p2: [1, 2, 3]})
    assert sess.run(q.size()) == 0 and sess.run(q2.size()) == 0
    n = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="requested -1 < 0"):
        sess.run(q.dequeue_many(n), {n: -1})
    unshaped = tf.FIFOQueue(3, tf.float32)
    sess.run(unshaped.enqueue([1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="require the components to have"):
        sess.run(unshaped.dequeue_many(1))
    assert sess.run(unshaped.size()) == 1


def test_enqueued_values_are_copied(sess):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[3]])
    p = tf.placeholder(tf.float32, [3])
    arr = np.array([1.0, 2.0, 3.0], np.float32)
    sess.run(q.enqueue(p), {p: arr})
    arr[0] = 99.0
    out = sess.run(q.dequeue())
    assert list(out) == [1.0, 2.0, 3.0]
    out[1] = -1.0  # the fetched value belongs to the caller


# --- blocking -------------------------------------------------------------------------------
def test_enqueue_blocks_when_full_until_a_dequeue(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [])
    enq = q.enqueue(x)
    sess.run(enq, {x: 1})
    sess.run(enq, {x: 2})
    res = _res(sess, q)
    bg = _Bg(sess, enq, {x: 3})
    _wait_until(lambda: len(res._enqueuers) == 1, "blocked enqueue")
    assert bg.thread.is_alive() and sess.run(q.size()) == 2
    assert sess.run(q.dequeue()) == 1
    assert bg.join().error is None
    assert sess.run(q.dequeue_many(2)).tolist() == [2, 3]


def test_dequeue_blocks_when_empty_until_an_enqueue(sess):
    q = tf.FIFOQueue(5, tf.float32, shapes=[[]])
    res = _res(sess, q)
    bg = _Bg(sess, q.dequeue())
    _wait_until(lambda: len(res._dequeuers) == 1, "blocked dequeue")
    sess.run(q.enqueue(4.5))
    assert bg.join().result == 4.5 and sess.run(q.size()) == 0


def test_dequeue_many_waits_for_n_and_waiters_are_served_in_order(sess):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    res = _res(sess, q)
    first = _Bg(sess, q.dequeue_many(3))
    _wait_until(lambda: len(res._dequeuers) == 1, "first waiter")
    second = _Bg(sess, q.dequeue())
    _wait_until(lambda: len(res._dequeuers) == 2, "second waiter")
    sess.run(q.enqueue_many([[1, 2]]))
    assert first.thread.is_alive() and second.thread.is_alive()
    sess.run(q.enqueue_many([[3, 4]]))
    assert first.join().result.tolist() == [1, 2, 3]
    assert second.join().result == 4


def test_dequeue_many_larger_than_capacity(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    bg = _Bg(sess, q.enqueue_many([list(range(7))]))
    got = sess.run(q.dequeue_many(5))
    assert got.tolist() == [0, 1, 2, 3, 4]
    bg.join()
    assert bg.error is None and sess.run(q.dequeue_many(2)).tolist() == [5, 6]


# --- close ----------------------------------------------------------------------------------
def test_close_semantics(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    sess.run(q.enqueue_many([[1, 2, 3]]))
    assert not sess.run(q.is_closed())
    sess.run(q.close())
    assert sess.run(q.is_closed())
    with pytest.raises(tf.errors.CancelledError, match=r"FIFOQueue '_\d+_fifo_queue' is closed"):
        sess.run(q.enqueue(4))
    with pytest.raises(tf.errors.OutOfRangeError,
                       match=r"is closed and has insufficient elements \(requested 5, current "
                             r"size 3\)"):
        sess.run(q.dequeue_many(5))
    assert sess.run(q.dequeue()) == 1  # what is left can still be dequeued
    assert sess.run(q.dequeue_up_to(5)).tolist() == [2, 3]
    with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 1, current size 0"):
        sess.run(q.dequeue())
    with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 2, current size 0"):
        sess.run(q.dequeue_up_to(2))
    with pytest.raises(tf.errors.CancelledError, match="is already closed"):
        sess.run(q.close())
    sess.run(q.close(cancel_pending_enqueues=True))  # allowed on a closed queue


def test_close_wakes_blocked_dequeues(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    res = _res(sess, q)
    sess.run(q.enqueue(7))
    many = _Bg(sess, q.dequeue_many(3))
    _wait_until(lambda: len(res._dequeuers) == 1, "dequeue_many waiting")
    up_to = _Bg(sess, q.dequeue_up_to(3))
    _wait_until(lambda: len(res._dequeuers) == 2, "dequeue_up_to waiting")
    sess.run(q.close())
    assert isinstance(many.join().error, tf.errors.OutOfRangeError)
    assert up_to.join().result.tolist() == [7]  # the element taken by the failed one is back


def test_pending_enqueue_survives_close_unless_cancelled(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    res = _res(sess, q)
    sess.run(q.enqueue(1))
    pending = _Bg(sess, q.enqueue(2))
    _wait_until(lambda: len(res._enqueuers) == 1, "pending enqueue")
    sess.run(q.close())
    assert sess.run(q.dequeue()) == 1
    assert pending.join().error is None
    assert sess.run(q.dequeue()) == 2

    q2 = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    res2 = _res(sess, q2)
    sess.run(q2.enqueue(1))
    pending = _Bg(sess, q2.enqueue_many([[2, 3]]))
    _wait_until(lambda: len(res2._enqueuers) == 1, "pending enqueue_many")
    sess.run(q2.close(cancel_pending_enqueues=True))
    assert isinstance(pending.join().error, tf.errors.CancelledError)
    assert sess.run(q2.dequeue_up_to(5)).tolist() == [1]


# --- cancellation ---------------------------------------------------------------------------
def test_sixteen_blocked_dequeues_then_a_seventeenth_step_enqueues(graph):
    q = tf.FIFOQueue(100, tf.int32, shapes=[[]])
    deq = q.dequeue() * 10
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        res = _res(sess, q)
        steps = [_Bg(sess, deq) for _ in range(16)]
        _wait_until(lambda: len(res._dequeuers) == 16, "16 blocked steps")
        sess.run(q.enqueue_many([list(range(16))]))  # a 17th step still runs
        results = [s.join().result for s in steps]
    assert all(s.error is None for s in steps)
    assert sorted(results) == [10 * k for k in range(16)]


def test_timeout_leaves_the_queue_intact(sess):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    sess.run(q.enqueue_many([[1, 2]]))
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(q.dequeue_many(3), options=tf.RunOptions(timeout_in_ms=50))
    assert sess.run(q.size()) == 2  # the partly served dequeue gave its elements back
    assert sess.run(q.dequeue()) == 1
    full = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess.run(full.enqueue(5))
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(full.enqueue(6), options=tf.RunOptions(timeout_in_ms=50))
    assert sess.run(full.size()) == 1 and sess.run(full.dequeue()) == 5
    assert len(_res(sess, full)._enqueuers) == 0
    assert sess.run(q.dequeue()) == 2


def test_cancelled_waiter_lets_the_next_one_through(sess):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    res = _res(sess, q)
    sess.run(q.enqueue(1))
    blocked = _Bg(sess, q.dequeue_many(4), options=tf.RunOptions(timeout_in_ms=300))
    _wait_until(lambda: len(res._dequeuers) == 1, "dequeue_many waiting")
    after = _Bg(sess, q.dequeue())
    _wait_until(lambda: len(res._dequeuers) == 2, "dequeue waiting behind it")
    assert isinstance(blocked.join().error, tf.errors.DeadlineExceededError)
    assert after.join().result == 1


def test_session_close_cancels_blocked_steps(graph):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess = tf.Session()
    res = _res(sess, q)
    sess.run(q.enqueue(1))
    enq = _Bg(sess, q.enqueue(2))
    q2 = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    res2 = _res(sess, q2)
    deq = _Bg(sess, q2.dequeue())
    _wait_until(lambda: len(res._enqueuers) == 1 and len(res2._dequeuers) == 1, "waiters")
    sess.close()
    assert isinstance(enq.join().error, tf.errors.CancelledError)
    assert isinstance(deq.join().error, tf.errors.CancelledError)


def test_error_in_another_kernel_cancels_the_wait(sess):
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    p = tf.placeholder(tf.float32, [], name="never_fed")
    with pytest.raises(tf.errors.InvalidArgumentError, match="never_fed"):
        sess.run([q.dequeue(), p * 2.0])
    sess.run(q.enqueue(1.0))
    assert sess.run(q.dequeue()) == 1.0


def test_single_inter_op_thread_session(graph):
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=1)) as sess:
        sess.run(q.enqueue(3))
        assert sess.run(q.dequeue()) == 3


# --- other kinds ----------------------------------------------------------------------------
def test_padding_fifo_queue(sess):
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None, None], [None]])
    assert q.queue_ref.op.type == "PaddingFIFOQueueV2"
    sess.run(q.enqueue(([[1]], ["a"])))
    sess.run(q.enqueue(([[1, 2], [3, 4]], ["a", "b", "c"])))
    ints, strs = sess.run(q.dequeue_many(2))
    np.testing.assert_array_equal(ints, [[[1, 0], [0, 0]], [[1, 2], [3, 4]]])
    assert strs.tolist() == [[b"a", b"", b""], [b"a", b"b", b"c"]]
    assert q.dequeue_many(2)[0].shape.as_list() == [2, None, None]
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue(([1], ["a"]))
    sess.run(q.enqueue_many(([[[5]]], [["x", "y"]])))
    ints, strs = sess.run(q.dequeue())
    assert ints.tolist() == [[5]] and strs.tolist() == [b"x", b"y"]
    p = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[\?,\?\], got \[1\]"):
        sess.run(q.enqueue((p, ["a"])), {p: [1]})


def test_random_shuffle_queue_is_a_permutation(sess):
    q = tf.RandomShuffleQueue(50, 0, tf.int32, shapes=[[]], seed=7)
    assert q.queue_ref.op.get_attr("seed2") == 7
    sess.run(q.enqueue_many([list(range(40))]))
    got = sess.run(q.dequeue_many(40)).tolist()
    assert sorted(got) == list(range(40)) and got != list(range(40))


def _shuffled(seed, graph_seed=None):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        q = tf.RandomShuffleQueue(30, 0, tf.int32, shapes=[[]], seed=seed)
        enq = q.enqueue_many([list(range(30))])
        deq = q.dequeue_many(30)
        with tf.Session() as s:
            s.run(enq)
            return s.run(deq).tolist()


def test_random_shuffle_queue_seeded_order_is_reproducible():
    assert _shuffled(3) == _shuffled(3)
    assert _shuffled(3) != _shuffled(4)
    assert _shuffled(None, graph_seed=5) == _shuffled(None, graph_seed=5)


def test_random_shuffle_min_after_dequeue(sess):
    q = tf.RandomShuffleQueue(10, 3, tf.int32, shapes=[[]], seed=1)
    res = _res(sess, q)
    sess.run(q.enqueue_many([[1, 2, 3]]))
    bg = _Bg(sess, q.dequeue())
    _wait_until(lambda: len(res._dequeuers) == 1, "dequeue held by min_after_dequeue")
    assert sess.run(q.size()) == 3
    sess.run(q.enqueue(4))
    assert bg.join().result in (1, 2, 3, 4) and sess.run(q.size()) == 3
    sess.run(q.close())  # once closed, the rest can be drained
    rest = sess.run(q.dequeue_up_to(10)).tolist()
    assert sorted(rest + [bg.result]) == [1, 2, 3, 4]
    with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue"):
        sess.run(q.dequeue())
    bad = tf.RandomShuffleQueue(3, 3, tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="min_after_dequeue 3 must be < "
                                                             "capacity 3"):
        sess.run(bad.size())


def test_priority_queue_order(sess):
    q = tf.PriorityQueue(10, [tf.string, tf.int32], shapes=[[], [2]])
    assert q.dtypes == [tf.int64, tf.string, tf.int32]
    assert [s.as_list() for s in q.shapes] == [[], [], [2]]
    sess.run(q.enqueue_many(([5, 1, 3, 1], [b"e", b"a", b"c", b"a2"],
                             [[5, 5], [1, 1], [3, 3], [1, 2]])))
    sess.run(q.enqueue((tf.constant(2, tf.int64), "b", [2, 2])))
    pri, s, v = sess.run(q.dequeue_many(3))
    assert pri.tolist() == [1, 1, 2] and s.tolist() == [b"a", b"a2", b"b"]
    assert v.tolist() == [[1, 1], [1, 2], [2, 2]]
    d = q.dequeue()
    assert d[0].shape.as_list() == [] and d[0].dtype == tf.int64
    assert sess.run(d)[1] == b"c"
    named = tf.PriorityQueue(3, [tf.float32], shapes=[[]], names=["p", "x"])
    sess.run(named.enqueue({"p": 4, "x": 1.0}))
    assert sess.run(named.dequeue())["p"] == 4


def test_shared_name_shares_the_queue_between_ops(sess):
    a = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared")
    b = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared")
    sess.run(a.enqueue(11))
    assert sess.run(b.size()) == 1 and sess.run(b.dequeue()) == 11
    c = tf.FIFOQueue(6, tf.int32, shapes=[[]], shared_name="shared")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Shared queue 'shared' has capacity 5 but requested capacity "
                             "was 6"):
        sess.run(c.size())
    d = tf.FIFOQueue(5, tf.float32, shapes=[[]], shared_name="shared")
    with pytest.raises(tf.errors.InvalidArgumentError, match="component types"):
        sess.run(d.size())
    # without a shared name every op has its own queue
    e, f = tf.FIFOQueue(5, tf.int32), tf.FIFOQueue(5, tf.int32)
    sess.run(e.enqueue(1))
    assert sess.run(f.size()) == 0 and sess.run(e.size()) == 1


def test_from_list_selects_a_queue(sess):
    q0 = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    q1 = tf.FIFOQueue(5, tf.int32, shapes=[[2]])
    i = tf.placeholder(tf.int32, [])
    sel = tf.QueueBase.from_list(i, [q0, q1])
    assert sel.shapes[0].ndims is None
    sess.run(q0.enqueue(3))
    assert sess.run(sel.size(), {i: 0}) == 1 and sess.run(sel.size(), {i: 1}) == 0
    with pytest.raises(TypeError, match="dtypes"):
        tf.QueueBase.from_list(i, [q0, tf.FIFOQueue(5, tf.float32)])


# --- the kernel-level API ---------------------------------------------------------------
def test_queue_resource_api_for_other_kernels(sess):
    q = tf.FIFOQueue(2, [tf.string, tf.int32], shapes=[[], []])
    res = queue_ops.lookup_queue(None, sess.run(q.queue_ref))
    assert isinstance(res, queue_ops.QueueResource)
    calls = []
    state = StepState()
    res.dequeue_async(state, lambda result=None, exc=None: calls.append((result, exc)))
    assert calls == [] and res.size() == 0
    res.enqueue_async(state, [np.array(b"f"), np.array(1, np.int32)],
                      lambda result=None, exc=None: calls.append(("enq", exc)))
    assert calls[0] == ("enq", None) or calls[1] == ("enq", None)
    got = [c for c in calls if c[0] != "enq"][0][0]
    assert got[0] == b"f" and got[1] == 1
    res.enqueue_async(state, [np.array([b"a", b"b"], object), np.array([2, 3], np.int32)],
                      lambda result=None, exc=None: calls.append(("many", exc)), many=True)
    out = []
    res.dequeue_async(state, lambda result=None, exc=None: out.append((result, exc)), n=5,
                      allow_smaller=True)
    assert out == [] and res.size() == 0  # taken while waiting for more
    res.close()
    assert res.is_closed()
    (r, e), = out
    assert e is None and r[0].tolist() == [b"a", b"b"] and r[1].tolist() == [2, 3]
    waiting = []
    res2 = queue_ops.lookup_queue(None, sess.run(tf.FIFOQueue(1, tf.int32).queue_ref))
    st = StepState()
    res2.dequeue_async(st, lambda result=None, exc=None: waiting.append(exc))
    st.cancel(tf.errors.CancelledError(None, None, "stop"))
    assert len(waiting) == 1 and isinstance(waiting[0], tf.errors.CancelledError)
    with pytest.raises(tf.errors.InvalidArgumentError):
        queue_ops.lookup_queue(None, "not a handle")


# --- concurrency ----------------------------------------------------------------------------
def test_concurrent_producers_and_consumers_lose_and_duplicate_nothing(graph):
    q = tf.FIFOQueue(7, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [None])
    enq_many = q.enqueue_many(x)
    y = tf.placeholder(tf.int32, [])
    enq = q.enqueue(y)
    deq = q.dequeue()
    deq3 = q.dequeue_up_to(3)
    per_producer, producers, consumers = 60, 4, 4
    got, errs = [], []
    lock = threading.Lock()
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        def produce(p):
            base = p * per_producer
            for k in range(0, per_producer, 3):
                if k % 2:
                    sess.run(enq_many, {x: list(range(base + k, base + k + 3))})
                else:
                    for j in range(3):
                        sess.run(enq, {y: base + k + j})

        def consume(c):
            try:
                while True:
                    vals = sess.run(deq3).tolist() if c % 2 else [int(sess.run(deq))]
                    with lock:
                        got.extend(vals)
            except tf.errors.OutOfRangeError:
                pass
            except Exception as e:  # reported below
                errs.append(e)
        ps = [threading.Thread(target=produce, args=(p,)) for p in range(producers)]
        cs = [threading.Thread(target=consume, args=(c,)) for c in range(consumers)]
        for t in ps + cs:
            t.start()
        for t in ps:
            t.join(WAIT * 3)
        sess.run(q.close())
        for t in cs:
            t.join(WAIT)
        assert not any(t.is_alive() for t in ps + cs)
        assert sess.run(q.size()) == 0
    assert not errs
    counts = Counter(got)
    assert len(got) == producers * per_producer
    assert set(counts) == set(range(producers * per_producer))
    assert max(counts.values()) == 1


def test_dequeued_scalars_from_a_batch_are_arrays(sess):
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], []])
    sess.run(q.enqueue_many(([1, 2], [3.0, 4.0])))
    res = _res(sess, q)
    out = []
    res.dequeue_async(StepState(), lambda result=None, exc=None: out.append(result))
    assert all(type(a) is np.ndarray and a.shape == () for a in out[0])
    assert sess.run(q.dequeue()[0] + 1) == 3


def test_empty_enqueue_many_behind_a_blocked_enqueue_can_time_out(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    res = _res(sess, q)
    sess.run(q.enqueue(1))
    blocked = _Bg(sess, q.enqueue(2))
    _wait_until(lambda: len(res._enqueuers) == 1, "blocked enqueue")
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(q.enqueue_many([np.zeros(0, np.int32)]),
                 options=tf.RunOptions(timeout_in_ms=30))
    assert len(res._enqueuers) == 1
    assert sess.run(q.dequeue()) == 1 and blocked.join().error is None
    assert sess.run(q.dequeue()) == 2


# --- block storage: batches stay arrays, dequeues slice and join them ---------------------
def test_fifo_dequeue_many_spans_and_splits_enqueued_batches(sess):
    q = tf.FIFOQueue(100, [tf.int32, tf.string], shapes=[[2], []])
    x = tf.placeholder(tf.int32, [None, 2])
    s = tf.placeholder(tf.string, [None])
    enq = q.enqueue_many((x, s))
    fed = np.arange(14, dtype=np.int32).reshape(7, 2)
    sess.run(enq, {x: fed[:3], s: [b"a", b"b", b"c"]})
    sess.run(enq, {x: fed[3:3], s: []})  # an empty batch adds nothing
    sess.run(q.enqueue(([6, 7], "d")))
    sess.run(enq, {x: fed[4:], s: [b"e", b"f", b"g"]})
    fed[:] = -1  # the queue holds its own copy
    ints, strs = sess.run(q.dequeue_many(2))
    assert ints.tolist() == [[0, 1], [2, 3]] and strs.tolist() == [b"a", b"b"]
    ints, strs = sess.run(q.dequeue_many(3))  # the rest of one batch, one element, more
    assert ints.tolist() == [[4, 5], [6, 7], [8, 9]] and strs.tolist() == [b"c", b"d", b"e"]
    ints[:] = 0  # a fetched value is the caller's
    assert sess.run(q.size()) == 2
    sess.run(q.close())
    ints, strs = sess.run(q.dequeue_up_to(5))
    assert ints.tolist() == [[10, 11], [12, 13]] and strs.tolist() == [b"f", b"g"]


def test_partial_dequeue_many_goes_back_in_order_when_cancelled(sess):
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    res = _res(sess, q)
    sess.run(q.enqueue_many([[1, 2, 3]]))
    bg = _Bg(sess, q.dequeue_many(5), options=tf.RunOptions(timeout_in_ms=300))
    _wait_until(lambda: len(res._dequeuers) == 1, "dequeue_many holding elements")
    sess.run(q.enqueue(4))  # taken by the waiting dequeue, which still needs one more
    assert bg.join().error is not None and isinstance(bg.error, tf.errors.DeadlineExceededError)
    assert sess.run(q.dequeue_many(3)).tolist() == [1, 2, 3]
    assert sess.run(q.dequeue()) == 4


@pytest.mark.parametrize("shapes", [[[3], []], None])
def test_random_shuffle_batches_are_permutations_of_what_went_in(sess, shapes):
    # shapes given: contiguous arrays; shapes unknown: one-row blocks (single dequeues)
    q = tf.RandomShuffleQueue(60, 10, [tf.float32, tf.string], shapes=shapes, seed=5)
    x = tf.placeholder(tf.float32, [None, 3])
    s = tf.placeholder(tf.string, [None])
    enq = q.enqueue_many((x, s))
    seen = []
    deq = q.dequeue_many(7) if shapes else q.dequeue()
    for start in range(0, 200, 25):
        keys = np.arange(start, start + 25)
        sess.run(enq, {x: np.stack([keys, keys * 2, -keys], 1).astype(np.float32),
                       s: [b"%d" % k for k in keys]})
        while sess.run(q.size()) >= 17 + (7 if shapes else 1):
            vals, strs = sess.run(deq)
            vals, strs = np.reshape(vals, (-1, 3)), np.reshape(strs, (-1,))
            np.testing.assert_array_equal(vals[:, 1], vals[:, 0] * 2)  # rows stay whole
            assert [int(t) for t in strs.tolist()] == vals[:, 0].astype(int).tolist()
            seen += vals[:, 0].astype(int).tolist()
    assert sess.run(q.size()) >= 10  # min_after_dequeue held back the rest
    sess.run(q.close())
    if shapes:
        seen += sess.run(q.dequeue_up_to(100))[0][:, 0].astype(int).tolist()
    else:
        while sess.run(q.size()):
            seen.append(int(sess.run(q.dequeue())[0][0]))
    assert sorted(seen) == list(range(200)) and seen[:50] != list(range(50))


def test_random_shuffle_dequeue_many_larger_than_capacity(sess):
    q = tf.RandomShuffleQueue(4, 0, tf.int64, shapes=[[]], seed=2)
    bg = _Bg(sess, q.dequeue_many(10))
    for k in range(0, 10, 2):
        sess.run(q.enqueue_many([[k, k + 1]]))
    assert sorted(bg.join().result.tolist()) == list(range(10))


def test_padding_fifo_pads_across_enqueued_batches(sess):
    q = tf.PaddingFIFOQueue(10, [tf.int32, tf.float32], shapes=[[None], [2]])
    sess.run(q.enqueue_many(([[1], [2]], [[1, 1], [2, 2]])))
    sess.run(q.enqueue_many(([[3, 3, 3]], [[3, 3]])))
    ints, floats = sess.run(q.dequeue_many(3))
    assert ints.tolist() == [[1, 0, 0], [2, 0, 0], [3, 3, 3]]
    assert floats.tolist() == [[1, 1], [2, 2], [3, 3]]


def test_one_component_dequeues_are_called_without_an_unwrapping_wrapper():
    from tensorweave.framework import registry
    from tensorweave.runtime import plan as plan_module
    with tf.Graph().as_default():
        q1 = tf.FIFOQueue(10, [tf.float32], shapes=[[2]])
        q2 = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[], []])
        fill = [q1.enqueue_many([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]),
                q2.enqueue_many([[1.0, 2.0], [7, 8]])]
        one, many, up_to = q1.dequeue(), q1.dequeue_many(1), q1.dequeue_up_to(1)
        pair = q2.dequeue()
        sg = plan_module.prune([one, many, up_to] + list(pair), [], [])
        for node in sg.nodes:
            if node.type.startswith("QueueDequeue"):
                kd = registry.get_kernel(node.type, "CPU")
                fn = plan_module._kernel_fn(kd, node)
                # the kernel hands one component's array itself (and two as a list)
                assert fn is kd.fn, node.name
        with tf.Session() as sess:
            sess.run(fill)
            # one run each: the three dequeues of q1 are unordered within a run
            got = [sess.run(one), sess.run(many), sess.run(up_to)] + sess.run(list(pair))
    np.testing.assert_array_equal(got[0], [1.0, 2.0])
    np.testing.assert_array_equal(got[1], [[3.0, 4.0]])
    np.testing.assert_array_equal(got[2], [[5.0, 6.0]])
    assert float(got[3]) == 1.0 and int(got[4]) == 7


@pytest.mark.parametrize("make", [
    lambda: tf.FIFOQueue(4, [tf.float32, tf.int32], shapes=[[2], []]),
    lambda: tf.PaddingFIFOQueue(4, [tf.float32, tf.int32], shapes=[[None], []])])
def test_single_dequeues_across_blocks_with_an_enqueuer_waiting_and_after_close(make):
    # single dequeues take their element from the front block directly unless a waiter
    # is involved: the same elements in the same order either way
    with tf.Graph().as_default():
        q = make()
        xs = tf.placeholder(tf.float32, [None, 2])
        ks = tf.placeholder(tf.int32, [None])
        fill = q.enqueue_many([xs, ks])
        x, k = q.dequeue()
        size = q.size()
        close = q.close()
        with tf.Session() as sess:
            rows = np.arange(12, dtype=np.float32).reshape(6, 2)
            sess.run(fill, {xs: rows[:3], ks: [0, 1, 2]})  # one block of 3
            sess.run(fill, {xs: rows[3:4], ks: [3]})  # a block of 1: the queue is full
            # a block of 2 waits for room (an enqueuer waiting: the general path)
            waiting = threading.Thread(target=sess.run, args=(fill, {xs: rows[4:], ks: [4, 5]}))
            waiting.start()
            res = _res(sess, q)
            _wait_until(lambda: len(res._enqueuers) == 1, "the enqueue to wait")
            got = [sess.run([x, k]) for _ in range(2)]  # room for the waiting rows
            waiting.join(WAIT)
            assert not waiting.is_alive() and not res._enqueuers
            got += [sess.run([x, k]) for _ in range(2)]
            sess.run(close)
            got += [sess.run([x, k]) for _ in range(2)]  # a closed queue still drains
            assert sess.run(size) == 0
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run([x, k])
    for j, (xv, kv) in enumerate(got):
        np.testing.assert_array_equal(xv, rows[j])
        assert int(kv) == j and np.asarray(kv).shape == ()
