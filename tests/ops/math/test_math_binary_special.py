"""atan2, xlogy, xdivy, xlog1py, multiply_no_nan, nextafter, reciprocal_no_nan (rows of
math_binary._TABLE and builders over them)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

X0 = np.array([[0.0, 1.0, -2.0], [0.5, 0.0, 3.0]])
Y0 = np.array([0.0, 2.0, 0.25])


def _xlogy_ref(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, x * np.log(y))


def _xdivy_ref(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, x / y)


def _xlog1py_ref(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0.0, x * np.log1p(y))


def _mul_no_nan_ref(x, y):
    return np.where(y == 0, 0.0, x * y)


_CASES = [
    (tf.math.xlogy, _xlogy_ref, "Xlogy"),
    (tf.math.xdivy, _xdivy_ref, "Xdivy"),
    (tf.math.xlog1py, _xlog1py_ref, "Xlog1py"),
    (tf.math.multiply_no_nan, _mul_no_nan_ref, "MulNoNan"),
    (tf.math.atan2, np.arctan2, "Atan2"),
]


@pytest.mark.parametrize("fn,ref,op_type", _CASES, ids=[c[2] for c in _CASES])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_values_broadcast_and_dtypes(sess, fn, ref, op_type, dtype):
    y = fn(tf.constant(X0.astype(dtype)), tf.constant(Y0.astype(dtype)))
    assert y.op.type == op_type and y.shape.as_list() == [2, 3]
    got = sess.run(y)
    assert got.dtype == dtype
    expected = ref(X0.astype(dtype).astype(np.float64), Y0.astype(dtype).astype(np.float64))
    np.testing.assert_allclose(got, expected, rtol=2e-3 if dtype == np.float16 else 1e-6)


def test_zero_x_wins_over_inf_and_nan(sess):
    x = tf.constant([0.0, 0.0, 0.0])
    y = tf.constant([0.0, -1.0, np.nan])
    for out in sess.run([tf.math.xlogy(x, y), tf.math.xdivy(x, y), tf.math.xlog1py(x, y),
                         tf.math.multiply_no_nan(tf.constant([np.inf, np.nan, 1.0]), x)]):
        np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])


def test_complex_xlogy(sess):
    x0 = np.array([0j, 1 + 1j])
    y0 = np.array([0j, 2 - 1j])
    got = sess.run(tf.math.xlogy(tf.constant(x0), tf.constant(y0)))
    np.testing.assert_allclose(got, [0, (1 + 1j) * np.log(2 - 1j)])


def test_names_and_namespaces(graph):
    assert tf.math.multiply_no_nan(1.0, 2.0).op.name == "multiply_no_nan"
    assert tf.atan2 is tf.math.atan2
    r = tf.math.reciprocal_no_nan(tf.constant([1.0]))
    assert r.op.type == "DivNoNan" and r.op.name == "reciprocal_no_nan"


def test_type_errors(graph):
    with pytest.raises(TypeError):
        tf.math.atan2(tf.constant([1]), tf.constant([1]))
    with pytest.raises(TypeError):
        tf.math.xlogy(tf.constant([1.0]), tf.constant([1.0], tf.float64))
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.math.reciprocal_no_nan(tf.constant([1]))
    with pytest.raises(ValueError):
        tf.math.xdivy(tf.ones([2]), tf.ones([3]))


def test_nextafter(sess):
    x0 = np.array([1.0, 1.0, 0.0], np.float32)
    y0 = np.array([2.0, 0.0, -1.0], np.float32)
    y = tf.math.nextafter(x0, y0)
    assert y.op.type == "NextAfter" and y.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(y), np.nextafter(x0, y0))
    assert tf.gradients(y, [y.op.inputs[0]]) == [None]
    with pytest.raises(TypeError):
        tf.math.nextafter(tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16))


def test_reciprocal_no_nan(sess):
    got = sess.run(tf.math.reciprocal_no_nan(tf.constant([0.0, 2.0, -4.0])))
    np.testing.assert_array_equal(got, [0.0, 0.5, -0.25])


@pytest.mark.parametrize("fn,ref,op_type", _CASES, ids=[c[2] for c in _CASES])
def test_gradients_float64(graph, fn, ref, op_type):
    x0 = np.array([[0.7, -1.2, 0.4], [1.5, 0.3, -0.6]])
    y0 = np.array([0.8, 1.7, 0.6])
    x = tf.placeholder(tf.float64, [2, 3])
    y = tf.placeholder(tf.float64, [3])
    out = fn(x, y)
    err = compute_gradient_error([x, y], [[2, 3], [3]], out, [2, 3], x_init_value=[x0, y0],
                                 delta=1e-6)
    assert err < 1e-6


def test_xlogy_gradient_at_zero_x_is_zero_for_x_and_finite(sess):
    x = tf.constant([0.0, 1.0])
    y = tf.constant([0.0, 2.0])
    gx, gy = sess.run(tf.gradients(tf.math.xlogy(x, y), [x, y]))
    np.testing.assert_allclose(gx, [0.0, np.log(2.0)], rtol=1e-6)
    np.testing.assert_allclose(gy, [0.0, 0.5])
