"""tf.histogram_fixed_width and tf.histogram_fixed_width_bins (ops/math/histogram_ops.py)
against NumPy references and TF's documented example."""
import numpy as np
import pytest

import tensorweave as tf

_VALUES = [-1.0, 0.0, 1.5, 2.0, 5.0, 15]


def _reference_bins(values, lo, hi, nbins):
    v = np.asarray(values, np.float64).reshape(-1)
    idx = np.floor((np.maximum(v, lo) - lo) / ((hi - lo) / nbins))
    return np.minimum(idx, nbins - 1).astype(np.int64)


def test_documented_example(sess):
    h = tf.histogram_fixed_width(tf.constant(_VALUES), [0.0, 5.0], nbins=5)
    b = tf.histogram_fixed_width_bins(tf.constant(_VALUES), [0.0, 5.0], nbins=5)
    assert h.shape.as_list() == [5] and h.dtype == tf.int32
    assert h.op.type == "HistogramFixedWidth"
    assert b.shape.as_list() == [6] and b.dtype == tf.int32
    hv, bv = sess.run([h, b])
    np.testing.assert_array_equal(hv, [2, 1, 1, 0, 2])
    np.testing.assert_array_equal(bv, [0, 0, 1, 2, 4, 4])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_against_numpy(sess, dtype):
    rng = np.random.RandomState(1)
    values = (rng.uniform(-20, 120, (4, 7))).astype(dtype)
    h = tf.histogram_fixed_width(values, np.array([0, 100], dtype), nbins=7, dtype=tf.int64)
    assert h.dtype == tf.int64 and h.shape.as_list() == [7]
    hv = sess.run(h)
    ref = _reference_bins(values, 0, 100, 7)
    np.testing.assert_array_equal(hv, np.bincount(ref, minlength=7))
    assert hv.dtype == np.int64
    if dtype in (np.float32, np.float64):  # the composition works in the values' type
        b = tf.histogram_fixed_width_bins(values, np.array([0, 100], dtype), nbins=7)
        assert b.shape.as_list() == [4, 7]
        np.testing.assert_array_equal(sess.run(b).reshape(-1), ref)


def test_unknown_nbins_and_errors(sess):
    n = tf.placeholder(tf.int32, [])
    v = tf.placeholder(tf.float32, [None])
    h = tf.histogram_fixed_width(v, [0.0, 1.0], nbins=n)
    assert h.shape.as_list() == [None]
    np.testing.assert_array_equal(sess.run(h, {v: [0.1, 0.9], n: 2}), [1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="nbins should be a positive"):
        sess.run(h, {v: [0.1], n: 0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="must not contain NaN"):
        sess.run(h, {v: [np.nan], n: 2})
    bad = tf.histogram_fixed_width(v, [1.0, 0.0], nbins=2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"value_range\[0\] < value_range\[1\]"):
        sess.run(bad, {v: [0.5]})
    with pytest.raises(ValueError):
        tf.histogram_fixed_width(v, [[0.0, 1.0]], nbins=2)
    assert tf.gradients(tf.cast(h, tf.float32), v) == [None]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_bucketize_counts_the_boundaries_at_or_below(sess, dtype):
    values = np.array([[-5, 0, 3, 10, 99], [100, 250, 7, 10, 1]], dtype=dtype)
    boundaries = [0.0, 10.0, 100.0]
    out = tf.raw_ops.Bucketize(input=values, boundaries=boundaries)
    assert out.dtype == tf.int32 and out.shape.as_list() == [2, 5]
    # by hand: bucket i holds [boundaries[i-1], boundaries[i])
    want = [[sum(b <= v for b in boundaries) for v in row] for row in values.tolist()]
    np.testing.assert_array_equal(sess.run(out), want)


def test_bucketize_puts_nan_last_and_is_what_bucketized_columns_compute(sess):
    out = tf.raw_ops.Bucketize(input=np.array([np.nan, -np.inf, np.inf], np.float32),
                               boundaries=[1.0, 2.0])
    np.testing.assert_array_equal(sess.run(out), [2, 0, 2])
    column = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("x"), [0.0, 10.0])
    dense = tf.feature_column.input_layer({"x": [[-1.0], [5.0], [20.0]]}, [column])
    assert "Bucketize" in {op.type for op in sess.graph.get_operations()}
    np.testing.assert_array_equal(sess.run(dense), np.eye(3))
