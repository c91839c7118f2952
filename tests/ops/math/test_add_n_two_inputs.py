"""AddN of two arrays of one shape (the sum of two gradients of one variable) takes a
path with no shape helper: NumPy's sum in a fresh array, the inputs untouched."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_two_inputs_of_one_shape(sess, dtype):
    rs = np.random.RandomState(0)
    a, b = tf.placeholder(dtype, None), tf.placeholder(dtype, None)
    total = tf.add_n([a, b])
    for shape in [(5,), (3, 4), ()]:
        av = np.asarray(rs.randn(*shape) * 10).astype(dtype)
        bv = np.asarray(rs.randn(*shape) * 10).astype(dtype)
        keep = av.copy(), bv.copy()
        got = sess.run(total, {a: av, b: bv})
        assert np.asarray(got).dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, av + bv)
        np.testing.assert_array_equal(av, keep[0])
        np.testing.assert_array_equal(bv, keep[1])


def test_two_inputs_of_different_shapes_are_invalid_argument(sess):
    a, b = tf.placeholder(tf.float32, None), tf.placeholder(tf.float32, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Input 0: \[2, 1\] != input "
                       r"1: \[2\]"):
        sess.run(tf.add_n([a, b]), {a: [[1.0], [2.0]], b: [1.0, 2.0]})


def test_gradient_sum_of_a_variable_used_twice(sess):
    w = tf.Variable([1.5, -2.0, 3.0], use_resource=True)
    grad = tf.gradients(tf.reduce_sum(w * w * 0.5), w)[0]  # AddN of w * g and g * w
    sess.run(w.initializer)
    np.testing.assert_allclose(sess.run(grad), [1.5, -2.0, 3.0])
