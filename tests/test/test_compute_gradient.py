"""tf.test.compute_gradient / compute_gradient_error against TF 2.21's
tf.compat.v1.test versions: the numeric Jacobian's precision, the assertions TF makes
on its arguments and the random point it checks at."""
import numpy as np
import pytest

import tensorweave as tf


def _square_jacobians(dtype, x_value):
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant([1.0, 2.0], dtype=dtype)
        return tf.test.compute_gradient(x, [2], tf.square(x), [2], x_init_value=x_value)


def test_numeric_jacobian_is_taken_in_the_dtype_of_y():
    theoretical, numeric = _square_jacobians(tf.float16, np.array([0.5, 0.3], np.float16))
    assert theoretical.dtype == numeric.dtype == np.float16
    # TF 2.21 gives these float16 values: the difference of two float16 squares divided
    # by float16(2e-3), not the float64 quotient (0.97656, 0.61035)
    np.testing.assert_array_equal(np.diag(numeric), np.array([0.97607, 0.60986], np.float16))
    np.testing.assert_array_equal(np.diag(theoretical), np.array([1.0, 0.6001], np.float16))
    half = np.float16
    x, d = np.array([0.5, 0.3], half), half(1e-3)
    expected = (np.square(x + d) - np.square(x - d)) / half(2e-3)
    np.testing.assert_array_equal(np.diag(numeric), expected)


def test_float64_jacobians_of_a_square():
    theoretical, numeric = _square_jacobians(tf.float64, np.array([0.5, 0.3]))
    np.testing.assert_allclose(theoretical, np.diag([1.0, 0.6]))
    np.testing.assert_allclose(numeric, np.diag([1.0, 0.6]), atol=1e-9)


def test_no_gradient_path_gives_a_zero_theoretical_jacobian():
    # TF 2.21 asserts "dx = None" here; tensorweave checks a zero Jacobian instead
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant([1.0, 2.0], dtype=tf.float64)
        y = tf.stop_gradient(x) * 2
        theoretical, numeric = tf.test.compute_gradient(x, [2], y, [2],
                                                        x_init_value=np.array([0.5, 0.3]))
    np.testing.assert_array_equal(theoretical, np.zeros((2, 2)))
    np.testing.assert_allclose(numeric, np.diag([2.0, 2.0]))


def test_init_value_must_have_x_shape():
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant([1.0, 2.0], dtype=tf.float64)
        y = tf.square(x)
        with pytest.raises(AssertionError,
                           match=r"^x_shape = \[2\], init_data shape = \[3\]$"):
            tf.test.compute_gradient(x, [2], y, [2], x_init_value=np.array([1.0, 2, 3]))
        with pytest.raises(AssertionError,
                           match=r"^x_shape = \(2,\), init_data shape = \[1, 2\]$"):
            tf.test.compute_gradient_error(x, (2,), y, (2,),
                                           x_init_value=np.array([[1.0, 2.0]]))


def test_integer_tensors_are_rejected():
    with tf.Graph().as_default(), tf.Session():
        n = tf.constant([1, 2])
        with pytest.raises(TypeError, match="int32"):  # TF: a TypeError for an int y
            tf.test.compute_gradient(n, [2], n * 2, [2], x_init_value=np.array([1, 2]))
        f = tf.constant([1.0, 2.0])
        with pytest.raises(TypeError, match="int32"):
            tf.test.compute_gradient(f, [2], tf.cast(f, tf.int32), [2],
                                     x_init_value=np.array([1.0, 2.0], np.float32))
        with pytest.raises(AssertionError, match="int32 for x"):
            tf.test.compute_gradient(n, [2], tf.cast(n, tf.float32), [2],
                                     x_init_value=np.array([1, 2]))


def test_random_complex_point_has_an_imaginary_part():
    # y = Im(x)^2: its Jacobian rows for the imaginary parts are 2 Im(x), all zero if the
    # checker looked only at real points (TF draws the imaginary parts too)
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant([1.0, 2.0, 3.0], dtype=tf.complex128)
        y = tf.square(tf.imag(x))
        theoretical, numeric = tf.test.compute_gradient(x, [3], y, [3])
    assert theoretical.shape == (6, 3)
    imag_rows = theoretical[1::2]
    assert np.all(np.diag(imag_rows) > 0)
    np.testing.assert_allclose(theoretical, numeric, atol=1e-6)
    np.testing.assert_array_equal(theoretical[0::2], np.zeros((3, 3)))


def test_bfloat16_y_is_differenced_in_float32():
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant([1.0, 2.0])
        y = tf.cast(tf.square(x), tf.bfloat16)
        x_value = np.array([0.5, 0.3], np.float32)
        theoretical, numeric = tf.test.compute_gradient(x, [2], y, [2], x_init_value=x_value)
    assert numeric.dtype == np.float32
    bf16 = tf.bfloat16.as_numpy_dtype
    d = np.float32(1e-3)
    y_pos = np.square(x_value + d).astype(bf16).astype(np.float32)
    y_neg = np.square(x_value - d).astype(bf16).astype(np.float32)
    np.testing.assert_array_equal(np.diag(numeric), (y_pos - y_neg) / np.float32(2e-3))
    np.testing.assert_allclose(np.diag(numeric), [1.46484, 0.73242], atol=1e-5)  # TF 2.21
    np.testing.assert_allclose(theoretical, np.diag([1.0, 0.6]), rtol=1e-6)
