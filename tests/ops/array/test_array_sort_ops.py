"""sort, argsort, searchsorted, setdiff1d and unravel_index against NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint8,
                                   np.int64])
def test_sort_and_argsort_every_dtype(sess, dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    vals = [3, 1, 2, 0, 1] if info is None else [3, info.min, info.max, 0, 1]
    x = np.array([vals, vals[::-1]], dtype=dtype)
    for direction in ("ASCENDING", "DESCENDING"):
        s = tf.sort(x, direction=direction)
        a = tf.argsort(x, direction=direction, stable=True)
        assert s.dtype == tf.as_dtype(dtype) and a.dtype == tf.int32
        assert s.shape.as_list() == [2, 5] and a.shape.as_list() == [2, 5]
        order = np.argsort(x, axis=-1, kind="stable")
        if direction == "DESCENDING":
            order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")
        got_s, got_a = sess.run([s, a])
        np.testing.assert_array_equal(got_s, np.take_along_axis(x, order, -1))
        np.testing.assert_array_equal(got_a, order)


def test_sort_other_axis_and_stability(sess):
    x = np.array([[3, 1, 2], [0, 5, 4]], np.int32)
    np.testing.assert_array_equal(sess.run(tf.sort(x, axis=0, direction="DESCENDING")),
                                  [[3, 5, 4], [0, 1, 2]])
    np.testing.assert_array_equal(sess.run(tf.argsort(x, axis=0)), [[1, 0, 0], [0, 1, 1]])
    # ties keep their order in both directions
    np.testing.assert_array_equal(sess.run(tf.argsort([3, 1, 3, 1])), [1, 3, 0, 2])
    np.testing.assert_array_equal(sess.run(tf.argsort([3, 1, 3, 1], direction="DESCENDING")),
                                  [0, 2, 1, 3])
    p = tf.placeholder(tf.float32)
    assert sess.run(tf.sort(p), {p: [2.0, -1.0]}).tolist() == [-1.0, 2.0]


def test_sort_errors(graph):
    with pytest.raises(ValueError, match="should be one of ASCENDING, DESCENDING"):
        tf.sort([3, 1], direction="UP")
    with pytest.raises(ValueError, match="axis must be a constant scalar"):
        tf.sort([3, 1], axis=tf.placeholder(tf.int32, []))
    with pytest.raises(ValueError, match="needs a known rank"):
        tf.sort(tf.placeholder(tf.float32), axis=0)


def test_sort_gradient(graph):
    x = tf.placeholder(tf.float64, [2, 4])
    y = tf.sort(x, axis=0) * np.arange(8.0).reshape(2, 4)
    x0 = np.random.RandomState(1).permutation(8).reshape(2, 4).astype(np.float64)
    assert compute_gradient_error(x, [2, 4], y, [2, 4], x_init_value=x0) < 1e-8


def test_searchsorted(sess):
    seq = np.array([[1, 3, 3, 7], [0, 1, 2, 3]], np.int32)
    vals = np.array([[3, 8, -1], [0, 5, 2]], np.int32)
    for side in ("left", "right"):
        want = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, vals)])
        out = tf.searchsorted(seq, vals, side=side, out_type=tf.int64)
        assert out.dtype == tf.int64 and out.shape.as_list() == [2, 3]
        np.testing.assert_array_equal(sess.run(out), want)
    f = np.array([0.5, 1.0, np.inf])
    assert sess.run(tf.searchsorted(f, [1.0, 0.0, 9.0])).tolist() == [1, 0, 2]
    p = tf.placeholder(tf.float32, [None, None, 3])
    assert tf.searchsorted(p, tf.placeholder(tf.float32, [None, None, 2])).shape.as_list() \
        == [None, None, 2]


def test_searchsorted_errors(sess):
    with pytest.raises(ValueError, match="must be either 'right' or 'left'"):
        tf.searchsorted([1, 2], [1], side="mid")
    a = tf.placeholder(tf.int32, [None, None])
    b = tf.placeholder(tf.int32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Leading dim_size"):
        sess.run(tf.searchsorted(a, b), {a: [[1, 2]], b: [[1], [2]]})


def test_setdiff1d(sess):
    out = tf.setdiff1d([1, 2, 3, 4, 2], [2, 5], index_dtype=tf.int64)
    assert type(out).__name__ == "ListDiff"
    assert out.out.shape.as_list() == [None] and out.idx.dtype == tf.int64
    o, i = sess.run(out)
    assert o.tolist() == [1, 3, 4] and i.tolist() == [0, 2, 3]
    s = sess.run(tf.setdiff1d([b"a", b"b"], [b"b"]))
    assert s.out.tolist() == [b"a"]
    with pytest.raises(ValueError, match="must be rank 1"):
        tf.setdiff1d([[1]], [2])


def test_unravel_index(sess):
    out = tf.unravel_index([1, 5, 7], [2, 4])
    assert out.shape.as_list() == [2, 3] and out.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(out), np.stack(np.unravel_index([1, 5, 7], (2, 4))))
    s = tf.unravel_index(np.int64(11), np.array([3, 4], np.int64))
    assert s.shape.as_list() == [2] and s.dtype == tf.int64
    assert sess.run(s).tolist() == [2, 3]
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="index is out of bound"):
        sess.run(tf.unravel_index(p, [2, 4]), {p: [1, 9]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="dims cannot be negative"):
        sess.run(tf.unravel_index(p, tf.constant([2, -4]) + 0 * tf.size(p)), {p: [1]})
