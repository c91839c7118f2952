"""The fast paths of Split, SplitV, BroadcastTo and Pack (slicing instead of xp.split, a
filled empty array instead of broadcast_to, no moveaxis for axis 0) give NumPy's values,
in fresh arrays where the result must own its memory, with numeric gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

X = np.arange(2 * 6 * 4, dtype=np.float64).reshape(2, 6, 4)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_split_equal_pieces_match_numpy(axis):
    with tf.Graph().as_default():
        n = X.shape[axis]
        got = _run(tf.split(tf.constant(X), n, axis=axis))
    for g, w in zip(got, np.split(X, n, axis=axis)):
        assert g.shape == w.shape and np.array_equal(g, w)


@pytest.mark.parametrize("sizes, axis", [([1, 0, 5], 1), ([2, -1], 2), ([0, 2], 0)])
def test_split_v_pieces_match_numpy(sizes, axis):
    with tf.Graph().as_default():
        got = _run(tf.split(tf.constant(X), sizes, axis=axis))
    dim = X.shape[axis]
    known = [s if s != -1 else dim - sum(t for t in sizes if t != -1) for s in sizes]
    want = np.split(X, np.cumsum(known)[:-1], axis=axis)
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.array_equal(g, w)


def test_split_v_bad_sizes_is_invalid_argument_at_run_time():
    with tf.Graph().as_default():
        sizes = tf.placeholder(tf.int32, [None])
        pieces = tf.split(tf.constant(X), sizes, axis=1, num=2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Determined shape"):
            _run(pieces, {sizes: [1, 2]})


def test_split_v_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 5])
        a, b = tf.split(x, [2, 3], axis=1)
        y = tf.concat([a * 2.0, b * b], axis=1)
        with tf.Session():
            err = compute_gradient_error(x, [3, 5], y, [3, 5],
                                         x_init_value=np.random.RandomState(0).rand(3, 5))
    assert err < 1e-8


@pytest.mark.parametrize("value, target", [
    (np.float32(1.5), [3, 2]), (np.array([[1], [2]], np.int64), [2, 3]),
    (np.array([True, False]), [3, 2]), (np.array([b"a", b"bc"], dtype=object), [2, 2])])
def test_broadcast_to_fills_a_fresh_array(value, target):
    with tf.Graph().as_default():
        got = _run(tf.broadcast_to(tf.constant(value), target))
    want = np.broadcast_to(value, target)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)
    assert got.flags.owndata and all(s != 0 for s in got.strides)


def test_broadcast_to_incompatible_is_invalid_argument():
    with tf.Graph().as_default():
        shape = tf.placeholder(tf.int32, [2])
        y = tf.broadcast_to(tf.constant([1.0, 2.0, 3.0]), shape)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
            _run(y, {shape: [2, 2]})


def test_broadcast_to_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [1, 3])
        y = tf.broadcast_to(x, [4, 3]) * tf.constant(np.arange(12.0).reshape(4, 3))
        with tf.Session():
            err = compute_gradient_error(x, [1, 3], y, [4, 3])
    assert err < 1e-8


@pytest.mark.parametrize("axis", [0, -3, 1, -1])
def test_pack_matches_numpy_stack(axis):
    parts = [X[0] + k for k in range(3)]
    with tf.Graph().as_default():
        got = _run(tf.stack([tf.constant(p) for p in parts], axis=axis))
    want = np.stack(parts, axis=axis)
    assert got.shape == want.shape and np.array_equal(got, want)
    assert got.flags.c_contiguous


def test_broadcast_to_bad_shapes_are_invalid_argument():
    with tf.Graph().as_default():
        shape = tf.placeholder(tf.int32, None)
        y = tf.broadcast_to(tf.constant([1.0, 2.0]), shape)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension -3 must be >= 0"):
            _run(y, {shape: [-3, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be rank 1 but is rank 2"):
            _run(y, {shape: [[2, 2]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="no greater than rank"):
            _run(y, {shape: []})
        assert _run(y, {shape: [3, 2]}).tolist() == [[1.0, 2.0]] * 3


def test_pack_of_scalars_and_mismatched_shapes():
    with tf.Graph().as_default():
        xs = [tf.reduce_sum(tf.constant([k, 1.0])) for k in range(3)]  # 0-d results
        assert _run(tf.stack(xs)).tolist() == [1.0, 2.0, 3.0]
        a, b = tf.placeholder(tf.float32, None), tf.placeholder(tf.float32, None)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"values\[0\].shape = \[2\] != values\[1\].shape = \[3\]"):
            _run(tf.stack([a, b]), {a: [1.0, 2.0], b: [1.0, 2.0, 3.0]})


@pytest.mark.parametrize("target", [[4, 12], [-1, 6], [2, -1, 3], [48]])
def test_reshape_matches_numpy(target):
    with tf.Graph().as_default():
        shape = tf.placeholder(tf.int32, [None])
        got = _run(tf.reshape(tf.constant(X), shape), {shape: target})
    assert np.array_equal(got, X.reshape(target))


def test_reshape_errors_and_empty_inputs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, None)
        shape = tf.placeholder(tf.int32, [None])
        y = tf.reshape(x, shape)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input to reshape is a "
                           "tensor with 48 values, but the requested shape has 10"):
            _run(y, {x: X, shape: [2, 5]})
        assert _run(y, {x: np.zeros((0, 3)), shape: [4, 0]}).shape == (4, 0)
        assert _run(y, {x: 2.5, shape: [1, 1]}).tolist() == [[2.5]]


@pytest.mark.parametrize("value", [X.astype(np.float32), X[:, ::2].astype(np.int64),
                                   np.array([True]), np.float64(2.5)])
def test_zeros_like_gives_fresh_zeros(value):
    with tf.Graph().as_default():
        got = _run(tf.zeros_like(tf.constant(value)))
    assert got.shape == np.shape(value) and got.dtype == np.asarray(value).dtype
    assert not np.any(got)
