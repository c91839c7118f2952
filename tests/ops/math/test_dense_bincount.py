"""DenseBincount (TF 2's bincount op, called by ragged row partitions in TF 2 graphs).
Expected values are np.bincount's and agree with what TF 2.21 printed on the same inputs;
error classes and messages are TF 2.21's."""
import numpy as np
import pytest

import tensorweave as tf


def _bincount(arr, size, weights=(), binary_output=False, dtype=np.float32):
    return tf.raw_ops.DenseBincount(input=arr, size=size, weights=np.asarray(weights, dtype),
                                    binary_output=binary_output)


@pytest.mark.parametrize("arr, weights, binary, expected", [
    ([1, 3, 3, 7], [], False, [0, 1, 0, 2, 0]),                  # 7 is past the bins
    ([1, 3, 3, 4], [0.5, 1, 2, 3], False, [0, 0.5, 0, 3, 3]),
    ([1, 3, 3, 7], [], True, [0, 1, 0, 1, 0]),
    ([1, 3, 3, 4], [0.5, 1, 2, 3], True, [0, 1, 0, 1, 1]),      # presence, not weights
    (np.zeros([0], np.int32), [], False, [0, 0, 0, 0, 0]),
])
def test_one_dimensional(sess, arr, weights, binary, expected):
    out = _bincount(np.asarray(arr, np.int32), 5, weights, binary)
    assert out.shape.as_list() == [5]
    got = sess.run(out)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32
    if not binary:
        w = np.asarray(weights, np.float64) if len(weights) else None
        np.testing.assert_array_equal(
            got, np.bincount(np.asarray(arr, np.int64)[np.asarray(arr) < 5], w[
                np.asarray(arr) < 5] if w is not None else None, minlength=5)[:5])


def test_two_dimensional_counts_per_row(sess):
    arr = np.array([[1, 2, 2], [0, 0, 4]], np.int64)
    out = _bincount(arr, np.int64(4))
    assert out.shape.as_list() == [2, 4]
    np.testing.assert_array_equal(sess.run(out), [[0, 1, 2, 0], [2, 0, 0, 0]])
    weighted = _bincount(arr, np.int64(4), [[1, 2, 3], [4, 5, 6]], dtype=np.float64)
    np.testing.assert_array_equal(sess.run(weighted), [[0, 1, 5, 0], [9, 0, 0, 0]])
    binary = _bincount(arr, np.int64(4), binary_output=True, dtype=np.int32)
    np.testing.assert_array_equal(sess.run(binary), [[0, 1, 1, 0], [1, 0, 0, 0]])


def test_unknown_size_gives_unknown_bins(graph):
    size = tf.placeholder(tf.int32, [])
    out = _bincount(tf.placeholder(tf.int32, [None, 3]), size)
    assert out.shape.as_list() == [None, None]


@pytest.mark.parametrize("fed, weights, message", [
    ([1, -1], [], "Input arr must be non-negative!"),
    ([1, 2], [1.0], "`weights` must be the same shape as `arr`"),
])
def test_run_time_errors(sess, fed, weights, message):
    arr = tf.placeholder(tf.int32)
    out = _bincount(arr, 3, weights)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(out, {arr: np.array(fed, np.int32)})


@pytest.mark.parametrize("arr, size, message", [
    (np.ones([1, 1, 1], np.int32), 3, "at most rank 2 but is rank 3"),
    (np.ones([1], np.int32), -1, r"size \(-1\) must be non-negative"),
])
def test_build_time_errors(graph, arr, size, message):
    with pytest.raises(ValueError, match=message):
        _bincount(arr, size)


def test_not_differentiable(graph):
    weights = tf.constant([1.0, 2.0])
    out = tf.raw_ops.DenseBincount(input=[0, 1], size=2, weights=weights)
    assert tf.gradients(out, weights) == [None]
