"""Dataset.cache(filename) (data/file_cache.py): written by the first complete pass,
read by every later one, in this session or another; a partial pass leaves nothing."""
import os

import numpy as np
import pytest

import tensorweave as tf


def _counted(calls):
    def gen():
        calls.append(1)
        for i in range(3):
            yield i
    return tf.data.Dataset.from_generator(gen, tf.int64).map(
        lambda x: (x, tf.strings.as_string(x), tf.cast(x, tf.float32) / 2))


def test_later_passes_and_sessions_read_the_file(graph, tmp_path, drain):
    calls = []
    prefix = str(tmp_path / "c")
    twice = drain(_counted(calls).cache(prefix).repeat(2))
    want = [(0, b"0", 0.0), (1, b"1", 0.5), (2, b"2", 1.0)]
    assert [(int(a), b, float(c)) for a, b, c in twice] == want * 2
    assert calls == [1] and os.listdir(str(tmp_path)) == ["c.tw-cache"]
    with tf.Session(graph=graph) as other:  # a new session: the file, not the generator
        nxt = _counted(calls).cache(prefix).make_one_shot_iterator().get_next()
        got = [other.run(nxt) for _ in range(3)]
        with pytest.raises(tf.errors.OutOfRangeError):
            other.run(nxt)
    assert calls == [1]
    assert got[1][1] == b"1" and got[2][2].dtype == np.float32


def test_a_partial_pass_leaves_no_cache(graph, tmp_path):
    prefix = str(tmp_path / "p")
    with tf.Session(graph=graph) as sess:
        nxt = tf.data.Dataset.range(5).cache(prefix).take(2).make_one_shot_iterator(
            ).get_next()
        assert [sess.run(nxt) for _ in range(2)] == [0, 1]
    assert os.listdir(str(tmp_path)) == []  # the half-written file went with the session
    with tf.Session(graph=graph) as sess:
        whole = tf.data.Dataset.range(5).cache(prefix).make_one_shot_iterator().get_next()
        assert [sess.run(whole) for _ in range(5)] == [0, 1, 2, 3, 4]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(whole)
    assert os.listdir(str(tmp_path)) == ["p.tw-cache"]


def test_what_the_file_cache_refuses(sess, tmp_path, drain):
    sparse = tf.data.Dataset.range(2).map(lambda x: tf.SparseTensor([[0]], [x], [1]))
    with pytest.raises(tf.errors.UnimplementedError, match="cache\\(filename\\) of "
                                                           "SparseTensor components"):
        drain(sparse.cache(str(tmp_path / "s")))
    prefix = str(tmp_path / "d")
    drain(tf.data.Dataset.range(3).cache(prefix))
    with open(prefix + ".tw-cache", "r+b") as f:  # damage a record's data
        f.seek(14)
        f.write(b"\xff")
    with pytest.raises(tf.errors.DataLossError):
        drain(tf.data.Dataset.range(3).cache(prefix))


def _ragged_elements(calls):
    """(x, rows of lengths 0..x as a float RaggedTensor, int32 row_splits, ragged rank 2)
    from a generator that records each pass in `calls`."""
    def gen():
        calls.append(1)
        for i in range(3):
            yield i
    def parts(x):
        rows = tf.ragged.range(tf.range(x + 1), row_splits_dtype=tf.int32)
        lengths = tf.cast(tf.stack([tf.constant(1, tf.int64), x]), tf.int32)
        nested = tf.RaggedTensor.from_row_lengths(rows, lengths, validate=False)
        return x, tf.cast(rows, tf.float32), nested
    return tf.data.Dataset.from_generator(gen, tf.int64).map(parts)


def _as_lists(elements):
    return [(int(x), r.to_list(), n.to_list(), r.row_splits.dtype, n.ragged_rank)
            for x, r, n in elements]


def test_ragged_components_are_cached(graph, tmp_path, drain):
    calls = []
    prefix = str(tmp_path / "r")
    ds = _ragged_elements(calls).cache(prefix)
    first = _as_lists(drain(ds))
    want = [(0, [[]], [[[]], []], np.int32, 2),
            (1, [[], [0.0]], [[[]], [[0]]], np.int32, 2),
            (2, [[], [0.0], [0.0, 1.0]], [[[]], [[0], [0, 1]]], np.int32, 2)]
    assert first == want and calls == [1]
    assert os.listdir(str(tmp_path)) == ["r.tw-cache"]
    assert _as_lists(drain(_ragged_elements(calls).cache(prefix))) == want
    assert calls == [1]  # the second pass read the file, not the generator
    rows = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1, 2], [], [3]]))
    drain(rows.cache(str(tmp_path / "rows")))  # ragged rank 0 components: dense rows
    again = drain(tf.data.Dataset.range(1).flat_map(lambda _: rows).cache(
        str(tmp_path / "rows")).batch(3))
    assert [v.to_list() for v in again] == [[[1, 2], [], [3]]]
