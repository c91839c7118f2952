"""LU decomposition and the solves built on it (ops/linalg/lu_ops)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

A0 = np.array([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]],
               [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]]])


def test_lu_matches_partial_pivoting(sess):
    out = tf.linalg.lu(A0)
    assert type(out).__name__ == "Lu" and out.lu.op.type == "Lu"
    assert out.lu.shape.as_list() == [2, 3, 3] and out.p.shape.as_list() == [2, 3]
    assert out.p.dtype == tf.int32
    lu, p = sess.run(out)
    np.testing.assert_array_equal(p, [[2, 0, 1], [1, 0, 2]])  # largest pivot first
    lower = np.tril(lu, -1) + np.eye(3)
    upper = np.triu(lu)
    np.testing.assert_allclose(lower @ upper, np.take_along_axis(A0, p[..., None], 1),
                               atol=1e-12)
    assert np.all(np.abs(np.tril(lu, -1)) <= 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_lu_dtypes_and_index_type(sess, dtype):
    a0 = (np.random.randn(4, 4) + 3 * np.eye(4)).astype(dtype)
    lu, p = sess.run(tf.linalg.lu(a0, output_idx_type=tf.int64))
    assert lu.dtype == dtype and p.dtype == np.int64
    recon = sess.run(tf.linalg.lu_reconstruct(lu, p))
    np.testing.assert_allclose(recon, a0, rtol=1e-5, atol=1e-5)


def test_lu_solve_inverse_reconstruct(sess):
    lu, p = tf.linalg.lu(A0)
    rhs = np.random.randn(2, 3, 2)
    x = tf.linalg.lu_solve(lu, p, rhs)
    inv = tf.linalg.lu_matrix_inverse(lu, p)
    rec = tf.linalg.lu_reconstruct(lu, p)
    assert x.op.name.startswith("lu_solve/") and inv.op.name.startswith("lu_matrix_inverse/")
    assert rec.shape.as_list() == [2, 3, 3]
    got = sess.run([x, inv, rec])
    np.testing.assert_allclose(got[0], np.linalg.solve(A0, rhs), atol=1e-12)
    np.testing.assert_allclose(got[1], np.linalg.inv(A0), atol=1e-12)
    np.testing.assert_allclose(got[2], A0, atol=1e-12)


def test_lu_errors_and_shapes(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible."):
        sess.run(tf.linalg.lu(tf.constant([[1.0, 2.0], [2.0, 4.0]])))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.linalg.lu(tf.ones([2, 3]))
    out = tf.linalg.lu(tf.placeholder(tf.float32, [None, 3, 3]), output_idx_type=tf.int64)
    assert out.p.shape.as_list() == [None, 3] and out.p.dtype == tf.int64


@pytest.mark.parametrize("build", [
    lambda a: tf.linalg.lu(a).lu,
    lambda a: tf.linalg.lu_matrix_inverse(*tf.linalg.lu(a)),
    lambda a: tf.linalg.lu_solve(*tf.linalg.lu(a), tf.ones([2, 3, 2], tf.float64))])
def test_gradients(graph, build):
    x0 = np.random.randn(2, 3, 3)
    x = tf.placeholder(tf.float64, [2, 3, 3])
    y = build(x)
    assert compute_gradient_error(x, [2, 3, 3], y, y.shape.as_list(), x_init_value=x0,
                                  delta=1e-6) < 1e-6
