"""Batches of many small matrices ([1000, 4, 4], [100, 16, 16]) through the linalg
kernels: each result checked by the identity that defines it (A X = I, L L^T = A,
A V = V diag(e), ...) and against NumPy's per-matrix results; one bad matrix in a batch
fails the whole op, as in TF."""
import numpy as np
import pytest

import tensorweave as tf

SHAPES = [(1000, 4), (100, 16)]


def _spd(batch, n, dtype, seed=0):
    a = np.random.RandomState(seed).randn(batch, n, n)
    return (a @ a.transpose(0, 2, 1) + n * np.eye(n)).astype(dtype)


def _tol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-10


def _eye_like(a):
    return np.broadcast_to(np.eye(a.shape[-1]), a.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,n", SHAPES)
def test_inverse_cholesky_solve_and_determinants(sess, batch, n, dtype):
    a = _spd(batch, n, dtype)
    b = a[..., :2] + 1
    x = tf.constant(a)
    inv, chol, sol, det, (sign, logabs) = sess.run(
        [tf.linalg.inv(x), tf.linalg.cholesky(x), tf.linalg.solve(x, b), tf.linalg.det(x),
         tf.linalg.slogdet(x)])
    a64 = a.astype(np.float64)
    tol = _tol(dtype)
    np.testing.assert_allclose(a64 @ inv, _eye_like(a), atol=tol * n)
    np.testing.assert_array_equal(chol, np.tril(chol))
    np.testing.assert_allclose(chol.astype(np.float64) @ chol.transpose(0, 2, 1), a64,
                               rtol=tol, atol=tol * n)
    np.testing.assert_allclose(a64 @ sol, b, rtol=tol, atol=tol * n)
    # the determinant of an SPD matrix is the squared product of its Cholesky diagonal
    log_det = 2 * np.log(np.diagonal(np.linalg.cholesky(a64), axis1=1, axis2=2)).sum(-1)
    np.testing.assert_allclose(np.log(det.astype(np.float64)), log_det, rtol=tol, atol=tol)
    np.testing.assert_array_equal(sign, np.ones(batch, dtype))
    np.testing.assert_allclose(logabs, log_det, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,n", SHAPES)
def test_eigh_svd_and_qr(sess, batch, n, dtype):
    a = _spd(batch, n, dtype, seed=1)
    x = tf.constant(a)
    (e, v), (s, u, w), (q, r) = sess.run([tf.linalg.eigh(x), tf.linalg.svd(x),
                                          tf.linalg.qr(x)])
    a64 = a.astype(np.float64)
    tol = _tol(dtype) * n
    scale = np.abs(a64).max()
    np.testing.assert_allclose(e, np.linalg.eigvalsh(a64), rtol=_tol(dtype), atol=tol)
    assert (np.diff(e, axis=-1) >= 0).all()
    np.testing.assert_allclose(a64 @ v, v * e[:, None, :], atol=tol * scale)
    np.testing.assert_allclose(v.transpose(0, 2, 1) @ v, _eye_like(a), atol=tol)
    np.testing.assert_allclose(s, np.linalg.svd(a64, compute_uv=False), rtol=_tol(dtype),
                               atol=tol)
    np.testing.assert_allclose((u * s[:, None, :]) @ w.transpose(0, 2, 1), a64,
                               atol=tol * scale)
    np.testing.assert_array_equal(r, np.triu(r))
    np.testing.assert_allclose(q @ r, a64, atol=tol * scale)
    np.testing.assert_allclose(q.transpose(0, 2, 1) @ q, _eye_like(a), atol=tol)


def test_one_singular_matrix_fails_the_batch(sess):
    a = _spd(1000, 4, np.float64)
    a[637] = 0.0
    x = tf.constant(a)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible"):
        sess.run(tf.linalg.inv(x))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
        sess.run(tf.linalg.solve(x, a[..., :1]))
    det = sess.run(tf.linalg.det(x))
    assert det[637] == 0.0 and (np.delete(det, 637) > 0).all()


def test_one_non_finite_matrix_fails_eigh(sess):
    a = _spd(100, 16, np.float64)
    a[42, 3, 1] = np.nan
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Self-adjoint eigen decomposition was not successful"):
        sess.run(tf.linalg.eigh(tf.constant(a)))
