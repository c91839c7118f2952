"""Inverse, determinants, Cholesky and solves (ops/linalg/linalg_ops) against NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

TYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dtype):
    return 1e-4 if dtype in (np.float32, np.complex64) else 1e-10


def _matrices(shape, dtype, rng=np.random):
    a = rng.uniform(-0.5, 0.5, shape) + 2.0 * np.eye(shape[-1])
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.uniform(-0.5, 0.5, shape)
    return a.astype(dtype)


def _hpd(shape, dtype):
    a = _matrices(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("dtype", TYPES)
def test_inverse(sess, dtype):
    a0 = _matrices((2, 3, 3), dtype)
    y = tf.linalg.inv(a0)
    assert y.op.type == "MatrixInverse" and y.dtype == tf.as_dtype(dtype)
    got = sess.run(y)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, np.linalg.inv(a0), rtol=_tol(dtype), atol=_tol(dtype))
    adj = sess.run(tf.linalg.inv(a0, adjoint=True))
    np.testing.assert_allclose(adj, np.linalg.inv(np.conj(np.swapaxes(a0, 1, 2))),
                               rtol=_tol(dtype), atol=_tol(dtype))
    assert tf.matrix_inverse is tf.linalg.inv


def test_inverse_float16_and_empty(sess):
    a0 = _matrices((3, 3), np.float16)
    got = sess.run(tf.linalg.inv(a0))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, np.linalg.inv(a0.astype(np.float32)), rtol=1e-2,
                               atol=1e-2)
    assert sess.run(tf.linalg.inv(np.zeros((2, 0, 0)))).shape == (2, 0, 0)


def test_inverse_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible."):
        sess.run(tf.linalg.inv(tf.constant([[1.0, 2.0], [2.0, 4.0]])))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.linalg.inv(tf.placeholder(tf.float64, [3, 2]))
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.linalg.inv(tf.placeholder(tf.float64, [3]))
    with pytest.raises(TypeError):
        tf.linalg.inv(tf.placeholder(tf.int32, [3, 3]))
    p = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be square"):
        sess.run(tf.linalg.inv(p), {p: [[1.0, 2.0, 3.0]]})


def test_static_shapes(graph):
    p = tf.placeholder(tf.float32, [2, None, 3])
    assert tf.linalg.det(p).shape.as_list() == [2]
    assert tf.linalg.cholesky(p).shape.as_list() == [2, 3, 3]
    assert tf.linalg.slogdet(p).sign.shape.as_list() == [2]
    solved = tf.linalg.solve(tf.placeholder(tf.float32, [None, 3, 3]),
                             tf.placeholder(tf.float32, [2, None, 4]))
    assert solved.shape.as_list() == [2, 3, 4]
    tri = tf.linalg.triangular_solve(tf.placeholder(tf.float64, [2, 1, 3, 3]),
                                     tf.placeholder(tf.float64, [4, 3, 2]))
    assert tri.shape.as_list() == [2, 4, 3, 2]
    assert tf.linalg.inv(tf.placeholder(tf.float32)).shape.ndims is None
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.linalg.solve(tf.placeholder(tf.float64, [3, 3]), tf.placeholder(tf.float64, [2, 1]))


@pytest.mark.parametrize("dtype", TYPES)
def test_determinants(sess, dtype):
    a0 = _matrices((2, 3, 3), dtype)
    det = tf.linalg.det(a0)
    sign, logabs = tf.linalg.slogdet(a0)
    assert det.op.type == "MatrixDeterminant" and sign.op.type == "LogMatrixDeterminant"
    assert type(tf.linalg.slogdet(a0)).__name__ == "LogMatrixDeterminant"
    d, s, la = sess.run([det, sign, logabs])
    assert d.dtype == s.dtype == la.dtype == dtype
    np.testing.assert_allclose(d, np.linalg.det(a0), rtol=_tol(dtype))
    ref_sign, ref_logabs = np.linalg.slogdet(a0)
    np.testing.assert_allclose(s, ref_sign, rtol=_tol(dtype))
    np.testing.assert_allclose(la, ref_logabs, rtol=_tol(dtype))
    assert tf.matrix_determinant is tf.linalg.det


def test_singular_determinants(sess):
    m = tf.constant([[1.0, 2.0], [2.0, 4.0]])
    assert sess.run(tf.linalg.det(m)) == 0.0
    sign, logabs = sess.run(tf.linalg.slogdet(m))
    assert sign == 0.0 and logabs == -np.inf


@pytest.mark.parametrize("dtype", TYPES)
def test_cholesky_reads_the_lower_triangle(sess, dtype):
    a0 = _hpd((2, 3, 3), dtype)
    upper_garbage = a0 + np.triu(np.full((3, 3), 7.0), 1).astype(dtype)
    y = tf.linalg.cholesky(upper_garbage)
    assert y.op.type == "Cholesky" and tf.cholesky is tf.linalg.cholesky
    np.testing.assert_allclose(sess.run(y), np.linalg.cholesky(a0), rtol=_tol(dtype),
                               atol=_tol(dtype))


def test_cholesky_of_a_non_positive_definite_matrix_is_an_error(sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Cholesky decomposition was not successful"):
        sess.run(tf.linalg.cholesky(tf.constant([[1.0, 2.0], [2.0, 1.0]])))


def test_cholesky_solve_and_logdet(sess):
    a0 = _hpd((2, 3, 3), np.float64)
    b0 = np.random.randn(2, 3, 2)
    x = tf.linalg.cholesky_solve(tf.linalg.cholesky(a0), b0)
    np.testing.assert_allclose(sess.run(x), np.linalg.solve(a0, b0), rtol=1e-10)
    ld = tf.linalg.logdet(a0)
    assert ld.op.name.startswith("logdet/")
    np.testing.assert_allclose(sess.run(ld), np.linalg.slogdet(a0)[1], rtol=1e-12)
    c0 = _hpd((3, 3), np.complex128)
    got = sess.run(tf.linalg.logdet(c0))
    assert got.dtype == np.float64  # real, as TF
    np.testing.assert_allclose(got, np.linalg.slogdet(c0)[1], rtol=1e-12)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_triangular_solve(sess, dtype, lower, adjoint):
    a0 = _matrices((3, 3), dtype) + np.triu(np.full((3, 3), 9.0), 1).astype(dtype) \
        * (1 if lower else 0)
    b0 = _matrices((2, 3, 3), dtype)[..., :2]
    y = tf.linalg.triangular_solve(a0, b0, lower=lower, adjoint=adjoint)
    assert y.op.name == "triangular_solve/MatrixTriangularSolve"
    assert y.shape.as_list() == [2, 3, 2]
    tri = np.tril(a0) if lower else np.triu(a0)
    if adjoint:
        tri = np.conj(tri.T)
    np.testing.assert_allclose(sess.run(y), np.linalg.solve(tri, b0), rtol=_tol(dtype),
                               atol=_tol(dtype))
    assert tf.matrix_triangular_solve is tf.linalg.triangular_solve


def test_triangular_solve_with_a_zero_pivot_gives_inf(sess):
    got = sess.run(tf.linalg.triangular_solve(tf.constant([[0.0, 0.0], [2.0, 1.0]]),
                                              tf.ones([2, 1])))
    assert not np.isfinite(got).any()


@pytest.mark.parametrize("dtype", TYPES)
def test_solve(sess, dtype):
    a0 = _matrices((2, 3, 3), dtype)
    b0 = _matrices((2, 3, 3), dtype)[..., :2]
    y = tf.linalg.solve(a0, b0, adjoint=True)
    assert y.op.type == "MatrixSolve" and tf.matrix_solve is tf.linalg.solve
    np.testing.assert_allclose(
        sess.run(y), np.linalg.solve(np.conj(np.swapaxes(a0, 1, 2)), b0),
        rtol=_tol(dtype), atol=_tol(dtype))


def test_solve_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix is not invertible."):
        sess.run(tf.linalg.solve(tf.constant([[1.0, 2.0], [2.0, 4.0]]), tf.ones([2, 1])))
    a = tf.placeholder(tf.float64)
    b = tf.placeholder(tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same number of rows"):
        sess.run(tf.linalg.solve(a, b), {a: np.eye(3), b: np.ones((2, 1))})
    with pytest.raises(tf.errors.InvalidArgumentError, match="same batch dimensions"):
        sess.run(tf.linalg.solve(a, b), {a: np.eye(3)[None].repeat(2, 0),
                                         b: np.ones((3, 3, 1))})


@pytest.mark.parametrize("build,shapes,hermitian", [
    (lambda a: tf.linalg.inv(a), [(2, 3, 3)], False),
    (lambda a: tf.linalg.inv(a, adjoint=True), [(3, 3)], False),
    (tf.linalg.det, [(2, 3, 3)], False),
    (lambda a: tf.linalg.slogdet(a).log_abs_determinant, [(2, 3, 3)], False),
    (tf.linalg.cholesky, [(2, 3, 3)], True),
    (tf.linalg.logdet, [(3, 3)], True),
    (lambda a, b: tf.linalg.cholesky_solve(tf.linalg.cholesky(a), b), [(3, 3), (3, 2)], True),
    (lambda a, b: tf.linalg.triangular_solve(a, b), [(2, 3, 3), (2, 3, 2)], False),
    (lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
     [(3, 3), (2, 3, 2)], False),
    (lambda a, b: tf.linalg.solve(a, b), [(2, 3, 3), (2, 3, 2)], False),
    (lambda a, b: tf.linalg.solve(a, b, adjoint=True), [(3, 3), (3, 2)], False)])
def test_gradients(graph, build, shapes, hermitian):
    values = [_matrices(shapes[0], np.float64)] + [np.random.randn(*s) for s in shapes[1:]]
    xs = [tf.placeholder(tf.float64, s) for s in shapes]
    first = xs[0]
    if hermitian:  # the ops read one triangle: check through a symmetric input
        first = tf.matmul(first, first, adjoint_b=True) + tf.eye(shapes[0][-1],
                                                                 dtype=tf.float64)
    y = build(first, *xs[1:])
    err = compute_gradient_error(xs, [list(s) for s in shapes], y, y.shape.as_list(),
                                 x_init_value=values, delta=1e-6) if len(xs) > 1 else \
        compute_gradient_error(xs[0], list(shapes[0]), y, y.shape.as_list(),
                               x_init_value=values[0], delta=1e-6)
    assert err < 1e-6


def test_complex_gradient_of_inverse(graph):
    a0 = _matrices((3, 3), np.complex128)
    a = tf.placeholder(tf.complex128, [3, 3])
    assert compute_gradient_error(a, [3, 3], tf.linalg.inv(a), [3, 3], x_init_value=a0,
                                  delta=1e-6) < 1e-6
