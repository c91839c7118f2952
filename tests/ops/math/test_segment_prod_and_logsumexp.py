"""segment_prod, unsorted_segment_prod/mean/sqrt_n (segment_ops) and
cumulative_logsumexp (scan_ops)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

DATA = np.array([[1.0, 2.0], [0.0, 4.0], [5.0, 0.0], [2.0, 3.0]])


def _segment_ref(data, ids, num, reduce, empty):
    out = np.full((num,) + data.shape[1:], empty, dtype=np.float64)
    for s in range(num):
        rows = [data[i] for i in range(len(ids)) if ids[i] == s]
        if rows:
            out[s] = reduce(np.stack(rows))
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_segment_prod(sess, dtype):
    y = tf.math.segment_prod(tf.constant(DATA.astype(dtype)), [0, 0, 2, 2])
    assert y.op.type == "SegmentProd" and y.shape.as_list() == [None, 2]
    got = sess.run(y)
    assert got.dtype == dtype
    ref = _segment_ref(DATA, [0, 0, 2, 2], 3, lambda r: np.prod(r, 0), 1.0)
    np.testing.assert_allclose(got, ref)  # the empty segment 1 holds 1
    assert tf.segment_prod is tf.math.segment_prod


def test_segment_prod_unsorted_ids_are_an_error(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        sess.run(tf.math.segment_prod(DATA, [1, 0, 2, 2]))


def test_unsorted_segment_prod(sess):
    ids = [1, -1, 1, 0]
    y = tf.math.unsorted_segment_prod(DATA, ids, 3)
    assert y.op.type == "UnsortedSegmentProd" and y.shape.as_list() == [3, 2]
    ref = _segment_ref(DATA, ids, 3, lambda r: np.prod(r, 0), 1.0)
    np.testing.assert_allclose(sess.run(y), ref)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        sess.run(tf.math.unsorted_segment_prod(DATA, [0, 1, 5, 0], 3))


def test_unsorted_segment_mean_and_sqrt_n(sess):
    ids = [1, -1, 1, 0]
    mean = tf.math.unsorted_segment_mean(DATA, ids, 3)
    sqrt_n = tf.math.unsorted_segment_sqrt_n(DATA, ids, 3)
    assert mean.shape.as_list() == [3, 2] and sqrt_n.shape.as_list() == [3, 2]
    assert mean.op.name.startswith("UnsortedSegmentMean/")
    assert sqrt_n.op.name.startswith("UnsortedSegmentSqrtN/")
    np.testing.assert_allclose(sess.run(mean), [[2.0, 3.0], [3.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(sess.run(sqrt_n), [[2.0, 3.0], [6 / np.sqrt(2),
                                                               2 / np.sqrt(2)], [0.0, 0.0]])
    assert tf.unsorted_segment_mean is tf.math.unsorted_segment_mean


def test_unsorted_segment_mean_shapes(graph):
    data = tf.placeholder(tf.float32, [None, 2])
    ids = tf.placeholder(tf.int32, [None])
    assert tf.math.unsorted_segment_mean(data, ids, 3).shape.as_list() == [3, 2]
    n = tf.placeholder(tf.int32, [])
    assert tf.math.unsorted_segment_sqrt_n(data, ids, n).shape.as_list() == [None, 2]


def test_unsorted_segment_mean_of_rank3_with_rank2_ids(sess):
    data = np.arange(12.0).reshape(2, 2, 3)
    ids = np.array([[0, 1], [1, 1]])
    got = sess.run(tf.math.unsorted_segment_mean(data, ids, 2))
    np.testing.assert_allclose(got, [data[0, 0], (data[0, 1] + data[1, 0] + data[1, 1]) / 3])


@pytest.mark.parametrize("build", [
    lambda x: tf.math.segment_prod(x, [0, 0, 2, 2]),
    lambda x: tf.math.unsorted_segment_prod(x, [1, -1, 1, 1], 3),
    lambda x: tf.math.unsorted_segment_mean(x, [1, -1, 1, 0], 3),
    lambda x: tf.math.unsorted_segment_sqrt_n(x, [1, -1, 1, 0], 3)])
def test_gradients_with_zeros(graph, build):
    # one zero in a segment, and a segment [5, 0] x [2, 3] with zeros in one column only
    x = tf.placeholder(tf.float64, [4, 2])
    y = build(x)
    assert compute_gradient_error(x, [4, 2], y, [3, 2], x_init_value=DATA) < 1e-6


def test_segment_prod_gradient_with_two_zeros_is_zero(sess):
    x = tf.constant([[0.0], [0.0], [3.0]])
    g = tf.gradients(tf.math.segment_prod(x, [0, 0, 0]), x)[0]
    np.testing.assert_array_equal(sess.run(g), [[0.0], [0.0], [0.0]])


def _cumulative_logsumexp_ref(x, axis, exclusive, reverse):
    x = np.flip(x, axis) if reverse else x
    with np.errstate(divide="ignore"):
        out = np.log(np.cumsum(np.exp(x), axis=axis))
    if exclusive:
        out = np.concatenate([np.full_like(np.take(out, [0], axis), -np.inf),
                              np.delete(out, -1, axis)], axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_cumulative_logsumexp(sess, exclusive, reverse, dtype):
    x0 = np.random.randn(2, 4)
    y = tf.math.cumulative_logsumexp(tf.constant(x0.astype(dtype)), axis=1,
                                     exclusive=exclusive, reverse=reverse)
    assert y.op.type == "CumulativeLogsumexp" and y.shape.as_list() == [2, 4]
    got = sess.run(y)
    assert got.dtype == dtype
    ref = _cumulative_logsumexp_ref(x0.astype(dtype).astype(np.float64), 1, exclusive,
                                    reverse)
    np.testing.assert_allclose(got, ref, rtol=3e-3 if dtype == np.float16 else 1e-6)


def test_cumulative_logsumexp_does_not_overflow(sess):
    got = sess.run(tf.math.cumulative_logsumexp(tf.constant([1000.0, 1000.0, -1000.0])))
    np.testing.assert_allclose(got, [1000.0, 1000.0 + np.log(2.0), 1000.0 + np.log(2.0)])


def test_cumulative_logsumexp_errors(sess):
    with pytest.raises(TypeError):
        tf.math.cumulative_logsumexp(tf.constant([1, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="scan axis"):
        sess.run(tf.math.cumulative_logsumexp(tf.constant([1.0, 2.0]), axis=3))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_logsumexp_gradient(graph, exclusive, reverse):
    x0 = np.random.randn(2, 4)
    x = tf.placeholder(tf.float64, [2, 4])
    y = tf.math.cumulative_logsumexp(x, axis=1, exclusive=exclusive, reverse=reverse)
    if exclusive:  # the -inf output (empty prefix) has no finite numeric derivative
        y = y[:, :3] if reverse else y[:, 1:]
    err = compute_gradient_error(x, [2, 4], y, y.shape.as_list(), x_init_value=x0)
    assert err < 1e-6
