"""Inverse trigonometric and hyperbolic ops and rint (rows of math_unary._TABLE): values vs
NumPy, dtypes, static shapes, errors, gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]

# name, builder, NumPy reference, op type, input domain (low, high)
_CASES = [
    ("asin", tf.asin, np.arcsin, "Asin", (-0.9, 0.9)),
    ("acos", tf.acos, np.arccos, "Acos", (-0.9, 0.9)),
    ("atan", tf.atan, np.arctan, "Atan", (-3.0, 3.0)),
    ("sinh", tf.sinh, np.sinh, "Sinh", (-3.0, 3.0)),
    ("cosh", tf.cosh, np.cosh, "Cosh", (-3.0, 3.0)),
    ("asinh", tf.asinh, np.arcsinh, "Asinh", (-3.0, 3.0)),
    ("acosh", tf.acosh, np.arccosh, "Acosh", (1.1, 4.0)),
    ("atanh", tf.atanh, np.arctanh, "Atanh", (-0.9, 0.9)),
]


@pytest.mark.parametrize("name,fn,ref,op_type,domain", _CASES, ids=[c[0] for c in _CASES])
@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
def test_values_dtypes_and_names(sess, name, fn, ref, op_type, domain, dtype):
    x0 = np.random.uniform(*domain, size=(2, 3))
    if np.dtype(dtype).kind == "c":
        x0 = x0 + 0.25j
    x0 = x0.astype(dtype)
    y = fn(tf.constant(x0))
    assert y.op.type == op_type and y.op.name == op_type
    assert y.dtype == tf.as_dtype(dtype) and y.shape.as_list() == [2, 3]
    got = sess.run(y)
    assert got.dtype == dtype
    tol = 2e-3 if dtype == np.float16 else 1e-5 if dtype in (np.float32, np.complex64) \
        else 1e-12
    np.testing.assert_allclose(got, ref(x0.astype(np.complex128 if np.dtype(dtype).kind == "c"
                                                  else np.float64)), rtol=tol, atol=tol)
    assert getattr(tf.math, name) is fn


@pytest.mark.parametrize("name,fn,ref,op_type,domain", _CASES, ids=[c[0] for c in _CASES])
def test_gradient_float64(graph, name, fn, ref, op_type, domain):
    x0 = np.random.uniform(*domain, size=(2, 3))
    x = tf.placeholder(tf.float64, [2, 3])
    assert compute_gradient_error(x, [2, 3], fn(x), [2, 3], x_init_value=x0) < 1e-6


def test_unknown_shape_propagates(graph):
    x = tf.placeholder(tf.float32, [None, 4])
    assert tf.asinh(x).shape.as_list() == [None, 4]
    assert tf.math.rint(tf.placeholder(tf.float32)).shape.ndims is None


@pytest.mark.parametrize("fn", [tf.asin, tf.cosh, tf.math.rint])
def test_integer_input_is_a_type_error(graph, fn):
    with pytest.raises(TypeError):
        fn(tf.constant([1, 2]))


def test_out_of_domain_gives_nan(sess):
    out = sess.run([tf.asin(tf.constant([2.0])), tf.acosh(tf.constant([0.5])),
                    tf.atanh(tf.constant([1.0, -1.0]))])
    assert np.isnan(out[0]).all() and np.isnan(out[1]).all()
    np.testing.assert_array_equal(out[2], [np.inf, -np.inf])


@pytest.mark.parametrize("dtype", FLOATS)
def test_rint_rounds_half_to_even(sess, dtype):
    x0 = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2, -1.7], dtype=dtype)
    y = tf.math.rint(x0)
    assert y.op.type == "Rint" and y.dtype == tf.as_dtype(dtype)
    np.testing.assert_array_equal(sess.run(y), [-2, -2, -0, 0, 2, 2, 1, -2])
    assert tf.rint is tf.math.rint


def test_rint_gradient_is_zero(sess):
    x = tf.constant([0.3, 1.7])
    assert tf.gradients(tf.math.rint(x), x) == [None]
