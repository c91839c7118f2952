"""Broadcasting in RaggedTensor elementwise ops (ragged_broadcast): values and errors
recorded from TF 2.21 compat.v1 graph mode, gradients checked numerically."""
import numpy as np
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run

rc = tf.ragged.constant


def _x():
    """[2, (r), 3], ragged_rank 1."""
    return rc([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9]]], ragged_rank=1)


def test_ragged_and_dense(sess):
    dense = tf.constant([[[10, 20, 30]], [[40, 50, 60]]])
    out = _x() + dense
    assert out.ragged_rank == 1 and out.shape.as_list() == [2, None, 3]
    assert _run(sess, out) == [[[11, 22, 33], [14, 25, 36]], [[47, 58, 69]]]
    assert _run(sess, rc([[1, 2], [3]]) + tf.constant([[10], [20]])) == [[11, 12], [23]]
    assert _run(sess, rc([[1, 2], [3]]) + tf.constant([10])) == [[11, 12], [13]]
    assert _run(sess, rc([[1, 2], [3]]) + 5) == [[6, 7], [8]]
    assert _run(sess, tf.constant([[10], [20]]) - rc([[1, 2], [3]])) == [[9, 8], [17]]
    full = rc([[1, 2, 3], [4, 5, 6]]) + tf.constant([[10, 20, 30], [40, 50, 60]])
    assert _run(sess, full) == [[11, 22, 33], [44, 55, 66]]


def test_dense_adds_uniform_outer_dimensions(sess):
    out = tf.add(tf.constant([[[10]], [[20]], [[30]]]), rc([[1, 2], [3]]))
    assert out.ragged_rank == 2 and out.shape.as_list() == [3, 2, None]
    assert _run(sess, out) == [[[11, 12], [13]], [[21, 22], [23]], [[31, 32], [33]]]
    out = rc([[1, 2], [3]]) + tf.constant([[[10], [20]], [[30], [40]], [[50], [60]]])
    assert _run(sess, out) == [[[11, 12], [23]], [[31, 32], [43]], [[51, 52], [63]]]


def test_different_ragged_ranks(sess):
    rr2 = rc([[[1, 2], [3, 4]], [[5, 6]]])
    out = rc([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1) + rr2
    assert out.ragged_rank == 2
    assert _run(sess, out) == [[[2, 4], [6, 8]], [[10, 12]]]
    one_per_row = rc([[[1], [3]], [[5]]], ragged_rank=1)
    assert _run(sess, one_per_row + rc([[[1, 2], [3]], [[5, 6, 7]]])) == \
        [[[2, 3], [6]], [[10, 11, 12]]]
    assert _run(sess, rc([[1, 2]]) + rc([[10, 20], [30, 40]])) == [[11, 22], [31, 42]]


@pytest.mark.parametrize("make", [
    lambda: rc([[1, 2, 3], [4]]) + tf.constant([[10, 20, 30], [40, 50, 60]]),
    lambda: rc([[1, 2], [3]]) + tf.constant([[10], [20], [30]]),
    lambda: rc([[1], [2, 3]]) + rc([[10, 20], [30, 40]]),
    lambda: rc([[1, 2], [3]]) + rc([[10, 20], [30], [5]]),
    lambda: rc([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1) + rc([[[1, 2, 3], [3, 4]],
                                                                 [[5, 6]]]),
    lambda: rc([[[1, 2], [3]], [[5, 6, 7]]]) + rc([[10, 20], [30]]),
    lambda: _x() + tf.ones([2, 3, 3], tf.int32),
])
def test_shapes_that_do_not_broadcast_fail_at_run_time(sess, make):
    out = make()
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible"):
        sess.run(out)


def test_build_time_errors(graph):
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        _x() + tf.ones([2, 1, 4], tf.int32)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        _x() + tf.ones([4], tf.int32)
    with pytest.raises(ValueError, match="mismatched row_splits dtypes"):
        rc([[1, 2], [3]]) + rc([[1, 2], [3]], row_splits_dtype=tf.int32)


def test_run_time_shapes(sess):
    values = tf.placeholder(tf.float32, [None])
    lengths = tf.placeholder(tf.int64, [None])
    dense = tf.placeholder(tf.float32, [None, None])
    out = tf.RaggedTensor.from_row_lengths(values, lengths) * dense
    feed = {values: [1., 2., 3.], lengths: [2, 1], dense: [[2.], [3.]]}
    assert sess.run(out, feed).to_list() == [[2., 4.], [9.]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible"):
        sess.run(out, {**feed, dense: [[2., 3., 4.], [3., 4., 5.]]})


def _numeric_grad(loss, feed, x, x0, eps=1e-2):
    grads = []
    for e in np.eye(x0.size, dtype=x0.dtype):
        e = e.reshape(x0.shape)
        plus, minus = dict(feed), dict(feed)
        plus[x], minus[x] = x0 + eps * e, x0 - eps * e
        grads.append((loss(plus) - loss(minus)) / (2 * eps))
    return np.array(grads).reshape(x0.shape)


def _check_gradients(sess, loss, xs, x0s):
    feed = dict(zip(xs, x0s))
    analytic = sess.run([tf.convert_to_tensor(g) for g in tf.gradients(loss, xs)], feed)
    for x, x0, grad in zip(xs, x0s, analytic):
        numeric = _numeric_grad(lambda f: sess.run(loss, f), feed, x, x0)
        np.testing.assert_allclose(grad, numeric, rtol=2e-2, atol=1e-2)
    return analytic


def test_gradient_reduces_to_each_operand(sess):
    v, d = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [3, 1, 1])
    r = tf.RaggedTensor.from_row_lengths(v, [2, 1])
    loss = tf.reduce_sum(((r * d) ** 2).flat_values)
    grads = _check_gradients(sess, loss, [v, d], [np.array([1., 2., 3.], np.float32),
                                                  np.array([[[10.]], [[20.]], [[30.]]],
                                                           np.float32)])
    # TF 2.21: d/dv summed over the three broadcast copies, d/dd one per outer row
    np.testing.assert_allclose(grads[0], [2800., 5600., 8400.])
    np.testing.assert_allclose(grads[1], [[[280.]], [[560.]], [[840.]]])


def test_gradient_between_ragged_ranks(sess):
    v, w = tf.placeholder(tf.float32, [6]), tf.placeholder(tf.float32, [3, 1])
    a = tf.RaggedTensor.from_row_lengths(w, [2, 1])
    b = tf.RaggedTensor.from_nested_row_lengths(v, [[2, 1], [2, 1, 3]])
    loss = tf.reduce_sum(((a * b) ** 2).flat_values)
    grads = _check_gradients(sess, loss, [v, w],
                             [np.arange(1., 7., dtype=np.float32),
                              np.array([[1.], [2.], [3.]], np.float32)])
    np.testing.assert_allclose(grads[0], [2., 4., 24., 72., 90., 108.])   # TF 2.21
    np.testing.assert_allclose(grads[1], [[10.], [36.], [462.]])


def test_gradient_ragged_and_dense_row(sess):
    v, d = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [2, 1])
    r = tf.RaggedTensor.from_row_lengths(v, [2, 1])
    loss = tf.reduce_sum(tf.sin(r - d).flat_values)
    v0, d0 = np.array([.5, 1., 1.5], np.float32), np.array([[.2], [.4]], np.float32)
    grads = _check_gradients(sess, loss, [v, d], [v0, d0])
    np.testing.assert_allclose(grads[1], [[-np.cos(.3) - np.cos(.8)], [-np.cos(1.1)]],
                               rtol=1e-5)


def test_where_v2_broadcasts(sess):
    cond = rc([[True, False], [True]])
    out = tf.where_v2(cond, rc([[1, 2], [3]]), tf.constant([[[10]], [[20]], [[30]]]))
    assert out.ragged_rank == 2
    assert _run(sess, out) == [[[1, 10], [3]], [[1, 20], [3]], [[1, 30], [3]]]
    assert _run(sess, tf.where_v2(tf.constant([[True], [False]]), rc([[1, 2], [3]]),
                                  -1)) == [[1, 2], [-1]]
    assert _run(sess, tf.where_v2(cond, 1, 0)) == [[1, 0], [1]]
    for bad in (tf.where_v2(tf.constant([True, False]), rc([[1, 2], [3]]), 0),
                tf.where_v2(cond, rc([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1),
                            rc([[[1], [3, 4]], [[5, 6, 7]]]))):
        with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible"):
            sess.run(bad)
    with pytest.raises(ValueError, match="flat_values must all have the same "
                                         "outer-dimension size"):
        tf.where_v2(cond, rc([[1], [3]]), rc([[10, 20], [30]]))
