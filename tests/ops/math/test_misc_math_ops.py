"""bincount, polyval, zero_fraction, is_non_decreasing, is_strictly_increasing
(ops/math/misc_math_ops)."""
import numpy as np
import pytest

import tensorweave as tf


def test_bincount_static(sess):
    b = tf.math.bincount([1, 1, 3])
    assert b.op.type == "Bincount" and b.op.name.startswith("bincount")
    assert b.shape.as_list() == [4] and b.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(b), [0, 2, 0, 1])
    np.testing.assert_array_equal(sess.run(tf.math.bincount([1, 1, 3], minlength=6)),
                                  [0, 2, 0, 1, 0, 0])
    np.testing.assert_array_equal(sess.run(tf.math.bincount(np.zeros([0], np.int32),
                                                            minlength=2)), [0, 0])
    assert tf.bincount is tf.math.bincount


def test_bincount_weights_and_maxlength(sess):
    b = tf.math.bincount([1, 1, 3], weights=[0.5, 0.5, 2.0], maxlength=3)
    assert b.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(b), [0.0, 1.0, 0.0])  # 3 is dropped
    assert sess.run(tf.math.bincount([[0, 2], [2, 2]], dtype=tf.float64)).tolist() == \
        [1.0, 0.0, 3.0]


def test_bincount_dynamic(sess):
    p = tf.placeholder(tf.int32, [None])
    b = tf.math.bincount(p, minlength=4, maxlength=5)
    assert b.shape.as_list() == [None]
    np.testing.assert_array_equal(sess.run(b, {p: [0, 5, 5]}), [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(sess.run(b, {p: [2]}), [0, 0, 1, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input arr must be non-negative!"):
        sess.run(b, {p: [-1, 2]})


def test_bincount_of_int64_values(sess):
    counts = tf.bincount(tf.constant([1, 2, 2], tf.int64))
    weighted = tf.bincount(tf.constant([1, 2, 2], tf.int64), weights=[1.0, 2.0, 3.0])
    assert counts.dtype == tf.int32
    assert sess.run(counts).tolist() == [0, 1, 2]
    assert sess.run(weighted).tolist() == [0.0, 1.0, 5.0]


def test_polyval(sess):
    x0 = np.array([-1.0, 0.5, 2.0])
    y = tf.math.polyval([1.0, 2.0, 3.0], x0)
    assert y.op.name.startswith("polyval/")
    np.testing.assert_allclose(sess.run(y), np.polyval([1.0, 2.0, 3.0], x0))
    np.testing.assert_array_equal(sess.run(tf.math.polyval([], x0)), [0.0, 0.0, 0.0])
    c = tf.constant([1.0, 2.0])
    np.testing.assert_allclose(sess.run(tf.math.polyval([c, 0.0], 3.0)), [3.0, 6.0])
    with pytest.raises(ValueError, match="must be list type"):
        tf.math.polyval((1.0, 2.0), 1.0)


def test_zero_fraction(sess):
    z = tf.math.zero_fraction([[0.0, 1.0], [0.0, 2.0]])
    assert z.op.name == "zero_fraction/fraction" and z.dtype == tf.float32
    assert sess.run(z) == 0.5
    assert sess.run(tf.math.zero_fraction(tf.constant([0, 0, 0, 3]))) == 0.75
    assert np.isnan(sess.run(tf.math.zero_fraction(tf.zeros([0]))))
    assert tf.nn.zero_fraction is tf.math.zero_fraction


@pytest.mark.parametrize("values,non_decreasing,strictly", [
    ([1, 1, 2], True, False), ([1, 2, 3], True, True), ([3, 2], False, False),
    ([], True, True), ([5], True, True), ([[1, 2], [3, 4]], True, True),
    ([[1, 2], [0, 4]], False, False)])
def test_monotonicity(sess, values, non_decreasing, strictly):
    x = tf.constant(values, dtype=tf.float32)
    nd, si = tf.math.is_non_decreasing(x), tf.math.is_strictly_increasing(x)
    assert nd.dtype == tf.bool and nd.shape.as_list() == []
    assert nd.op.name == "is_non_decreasing/All"
    assert sess.run([nd, si]) == [non_decreasing, strictly]
    assert tf.is_non_decreasing is tf.math.is_non_decreasing
    assert tf.debugging.is_strictly_increasing is tf.math.is_strictly_increasing


def test_monotonicity_of_strings_is_a_type_error(graph):
    with pytest.raises(TypeError, match="Expected x to be numeric"):
        tf.math.is_non_decreasing(tf.constant(["a", "b"]))
