"""Tridiagonal solves and products (ops/linalg/tridiagonal_ops) against dense NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

DIAGS = np.array([[1.0, 2.0, 3.0, 0.0], [4.0, 5.0, 6.0, 7.0], [0.0, 8.0, 9.0, 10.0]])
RHS = np.arange(8.0).reshape(4, 2)


def _dense(d):
    return np.diag(d[1]) + np.diag(d[0][:-1], 1) + np.diag(d[2][1:], -1)


def test_solve_and_matmul_compact(sess):
    x = tf.linalg.tridiagonal_solve(DIAGS, RHS)
    m = tf.linalg.tridiagonal_matmul(DIAGS, RHS)
    assert x.op.type == "TridiagonalSolve" and x.op.name == "TridiagonalSolve"
    assert m.op.type == "TridiagonalMatMul" and m.shape.as_list() == [4, 2]
    assert [t.shape.as_list() for t in m.op.inputs[:3]] == [[1, 4]] * 3
    got = sess.run([x, m])
    np.testing.assert_allclose(got[0], np.linalg.solve(_dense(DIAGS), RHS), rtol=1e-12)
    np.testing.assert_allclose(got[1], _dense(DIAGS) @ RHS, rtol=1e-12)


def test_formats_and_rhs_options(sess):
    ref = np.linalg.solve(_dense(DIAGS), RHS)
    d = tf.constant(DIAGS)
    seq = tf.linalg.tridiagonal_solve((d[0], d[1], d[2]), RHS, diagonals_format="sequence")
    mat = tf.linalg.tridiagonal_solve(_dense(DIAGS), RHS, diagonals_format="matrix")
    tr = tf.linalg.tridiagonal_solve(DIAGS, RHS.T, transpose_rhs=True)
    col = tf.linalg.tridiagonal_solve(DIAGS, RHS[:, 0])
    assert col.shape.as_list() == [4]
    for out in sess.run([seq, mat, tr]):
        np.testing.assert_allclose(out, ref, rtol=1e-12)
    np.testing.assert_allclose(sess.run(col), ref[:, 0], rtol=1e-12)
    c = (RHS + 1j * RHS[::-1]).astype(np.complex128)
    got = sess.run(tf.linalg.tridiagonal_solve(DIAGS.astype(np.complex128), c,
                                               conjugate_rhs=True))
    np.testing.assert_allclose(got, np.linalg.solve(_dense(DIAGS), np.conj(c)), rtol=1e-12)
    np.testing.assert_allclose(
        sess.run(tf.linalg.tridiagonal_matmul(_dense(DIAGS), RHS, diagonals_format="matrix")),
        _dense(DIAGS) @ RHS)


def test_batches_broadcast_and_static_shapes(sess):
    d0 = np.random.randn(2, 3, 5) + np.array([0.0, 4.0, 0.0])[:, None]
    r0 = np.random.randn(1, 5, 3)  # batch dimensions broadcast
    got = sess.run(tf.linalg.tridiagonal_solve(d0, r0))
    for i in range(2):
        np.testing.assert_allclose(got[i], np.linalg.solve(_dense(d0[i]), r0[0]), rtol=1e-10)
    x = tf.linalg.tridiagonal_solve(tf.placeholder(tf.float64, [None, 3, 4]),
                                    tf.placeholder(tf.float64, [2, 4, None]))
    assert x.shape.as_list() == [2, 4, None]


def test_errors_and_singular_systems(sess):
    with pytest.raises(ValueError, match="Expected 3 diagonals got 2"):
        tf.linalg.tridiagonal_solve(np.zeros((2, 4)), RHS)
    with pytest.raises(ValueError, match="Unrecognized diagonals_format: foo"):
        tf.linalg.tridiagonal_solve(DIAGS, RHS, diagonals_format="foo")
    assert np.isnan(sess.run(tf.linalg.tridiagonal_solve(np.zeros((3, 4)), RHS))).all()


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
@pytest.mark.parametrize("fn", [tf.linalg.tridiagonal_solve, tf.linalg.tridiagonal_matmul])
def test_gradients(graph, dtype, fn):
    rng = np.random.RandomState(3)
    d0 = rng.randn(2, 3, 4) + np.array([0.0, 3.0, 0.0])[:, None]
    r0 = rng.randn(2, 4, 2)
    if dtype.is_complex:
        d0, r0 = d0 + 1j * rng.randn(2, 3, 4), r0 + 1j * rng.randn(2, 4, 2)
    d = tf.placeholder(dtype, [2, 3, 4])
    r = tf.placeholder(dtype, [2, 4, 2])
    err = compute_gradient_error([d, r], [[2, 3, 4], [2, 4, 2]], fn(d, r), [2, 4, 2],
                                 x_init_value=[d0, r0], delta=1e-6)
    assert err < 1e-6
