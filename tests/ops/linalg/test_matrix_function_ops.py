"""The matrix exponential (ops/linalg/matrix_function_ops)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def _expm_ref(a):
    """exp(a) by its Taylor series after scaling (2^-s a has norm < 1/16), then squaring."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(0).max(), 1e-300)))) + 4)
    a = a / 2 ** s
    result = term = np.eye(len(a), dtype=a.dtype)
    for k in range(1, 40):
        term = term @ a / k
        result = result + term
    for _ in range(s):
        result = result @ result
    return result


def test_rotation_generator(sess):
    e = tf.linalg.expm(np.array([[0.0, 1.0], [-1.0, 0.0]]))
    assert e.op.name == "matrix_exponential/MatrixExponential" and e.shape.as_list() == [2, 2]
    np.testing.assert_allclose(sess.run(e), [[np.cos(1), np.sin(1)], [-np.sin(1), np.cos(1)]],
                               rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_batches_of_every_scale(sess, dtype):
    rng = np.random.RandomState(0)
    b0 = rng.randn(3, 4, 4) * np.array([0.01, 2.0, 20.0])[:, None, None]
    if np.dtype(dtype).kind == "c":
        b0 = b0 + 1j * rng.randn(3, 4, 4)
    b0 = b0.astype(dtype)
    got = sess.run(tf.linalg.expm(b0))
    assert got.dtype == dtype
    for g, b in zip(got, b0.astype(np.complex128 if np.dtype(dtype).kind == "c"
                                   else np.float64)):
        ref = _expm_ref(b)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        assert np.max(np.abs(g - ref)) <= tol * np.abs(ref).max()


def test_shapes_and_errors(sess):
    assert tf.linalg.expm(tf.placeholder(tf.float32, [None, 3, 3])).shape.as_list() == \
        [None, 3, 3]
    assert sess.run(tf.linalg.expm(np.zeros((2, 0, 0)))).shape == (2, 0, 0)
    with pytest.raises(ValueError, match="does not support matrices of type"):
        tf.linalg.expm(tf.constant([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.linalg.expm(tf.ones([2, 3]))


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_gradient(graph, dtype):
    rng = np.random.RandomState(1)
    x0 = rng.randn(2, 3, 3)
    if dtype.is_complex:
        x0 = x0 + 1j * rng.randn(2, 3, 3)
    x = tf.placeholder(dtype, [2, 3, 3])
    assert compute_gradient_error(x, [2, 3, 3], tf.linalg.expm(x), [2, 3, 3], x_init_value=x0,
                                  delta=1e-6) < 1e-6


def test_gradient_with_unknown_dimensions(sess):
    x0 = np.random.randn(3, 3)
    x = tf.placeholder(tf.float64, [None, None])
    g = sess.run(tf.gradients(tf.reduce_sum(tf.linalg.expm(x)), x)[0], {x: x0})
    h = 1e-6
    numeric = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            d = np.zeros((3, 3))
            d[i, j] = h
            numeric[i, j] = (_expm_ref(x0 + d).sum() - _expm_ref(x0 - d).sum()) / (2 * h)
    np.testing.assert_allclose(g, numeric, rtol=1e-6)
