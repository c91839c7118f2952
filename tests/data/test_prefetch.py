"""Dataset.prefetch (data/prefetch.py): a thread reads ahead into a bounded buffer; the
elements and errors arrive as without it, and the thread ends with its pass."""
import threading
import time

import pytest

import tensorweave as tf


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "tw-data-prefetch"]


def _wait(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_reads_ahead_into_its_buffer(graph):
    read = []

    def note(x):
        read.append(int(x))
        return x
    ds = tf.data.Dataset.range(100).map(
        lambda x: tf.py_func(note, [x], tf.int64, stateful=False)).prefetch(3)
    with tf.Session(graph=graph) as sess:
        nxt = ds.make_one_shot_iterator().get_next()
        assert sess.run(nxt) == 0
        # while nothing more is asked for, the thread fills the buffer: 3 more, not all
        assert _wait(lambda: len(read) >= 4)
        time.sleep(0.2)
        assert len(read) <= 5
        assert [sess.run(nxt) for _ in range(5)] == [1, 2, 3, 4, 5]
        assert len(_prefetch_threads()) == 1
    assert _wait(lambda: not _prefetch_threads())  # the session's close ended it


def test_errors_and_the_end_arrive_in_order(sess, drain):
    def check(x):
        if x == 3:
            raise ValueError("three")
        return x
    ds = tf.data.Dataset.range(6).map(lambda x: tf.py_func(check, [x], tf.int64)).prefetch(
        tf.data.experimental.AUTOTUNE)
    nxt = ds.make_one_shot_iterator().get_next()
    assert [sess.run(nxt) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="three"):
        sess.run(nxt)
    assert [int(v) for v in drain(tf.data.Dataset.range(4).prefetch(1).batch(3))[0]] == \
        [0, 1, 2]
    assert [int(v) for v in drain(tf.data.Dataset.range(3).prefetch(0))] == [0, 1, 2]


def test_the_thread_ends_when_the_consumer_stops(graph, drain):
    ds = tf.data.Dataset.range(10 ** 9).prefetch(2).take(3)
    assert [int(v) for v in drain(ds)] == [0, 1, 2]
    assert _wait(lambda: not _prefetch_threads())


def test_a_dropped_session_ends_the_thread_without_gc(graph):
    # issue 18's rule for every thread a session starts: none keeps it alive
    import gc
    import weakref
    ds = tf.data.Dataset.range(10 ** 9).map(lambda x: x + 1).prefetch(2)
    nxt = ds.make_one_shot_iterator().get_next()
    gc.collect()
    gc.disable()
    try:
        sess = tf.Session(graph=graph)
        assert sess.run(nxt) == 1
        assert len(_prefetch_threads()) == 1
        ref = weakref.ref(sess)
        del sess
        assert ref() is None
        assert _wait(lambda: not _prefetch_threads())
    finally:
        gc.enable()


def test_interleave_with_parallel_calls_reads_each_input_ahead(graph, drain):
    def ranges(parallel):
        return tf.data.Dataset.range(4).interleave(
            lambda x: tf.data.Dataset.range(x * 10, x * 10 + 3), cycle_length=2,
            block_length=2, num_parallel_calls=parallel)
    want = [0, 1, 10, 11, 2, 12, 20, 21, 30, 31, 22, 32]
    assert [int(v) for v in drain(ranges(None))] == want
    assert [int(v) for v in drain(ranges(2))] == want  # the same order, read ahead
    parallel = tf.data.experimental.parallel_interleave(
        lambda x: tf.data.Dataset.range(x * 10, x * 10 + 3), cycle_length=2, block_length=2)
    with tf.Session(graph=graph) as sess:
        nxt = tf.data.Dataset.range(4).apply(parallel).make_one_shot_iterator().get_next()
        assert sess.run(nxt) == 0
        assert len(_prefetch_threads()) == 2  # one per open input
    assert _wait(lambda: not _prefetch_threads())
