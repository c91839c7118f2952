"""tf.linalg.experimental.conjugate_gradient against NumPy's solve."""
import numpy as np

import tensorweave as tf


def _spd(rng, batch, n):
    a = rng.randn(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_solves_a_batch_with_and_without_preconditioner():
    rng = np.random.RandomState(0)
    A, b = _spd(rng, (3,), 6), rng.randn(3, 6)
    want = np.linalg.solve(A, b[..., None])[..., 0]
    with tf.Graph().as_default():
        op = tf.linalg.LinearOperatorFullMatrix(A, is_self_adjoint=True,
                                                is_positive_definite=True)
        jacobi = tf.linalg.LinearOperatorDiag(1 / np.diagonal(A, axis1=-2, axis2=-1))
        plain = tf.linalg.experimental.conjugate_gradient(op, b, tol=1e-12, max_iter=50)
        pre = tf.linalg.experimental.conjugate_gradient(op, b, preconditioner=jacobi,
                                                        x=np.ones((3, 6)), tol=1e-12,
                                                        max_iter=50)
        short = tf.linalg.experimental.conjugate_gradient(op, b, max_iter=2)
        one = tf.linalg.experimental.conjugate_gradient(op, b[0], tol=1e-12)  # broadcast
        with tf.Session() as sess:
            plain, pre, short, one = sess.run([plain, pre, short, one])
    assert type(plain).__name__ == "CGState"
    assert plain.i <= 7 and short.i == 2  # exact in n steps (up to round-off)
    np.testing.assert_allclose(plain.x, want, atol=1e-10)
    np.testing.assert_allclose(pre.x, want, atol=1e-10)
    np.testing.assert_allclose(plain.r, b - np.einsum("bij,bj->bi", A, plain.x), atol=1e-10)
    assert np.abs(short.x - want).max() > 1e-6  # stopped early
    assert one.x.shape == (3, 6)
    np.testing.assert_allclose(one.x[0], want[0], atol=1e-10)
