"""QR, SVD, eigh, least squares and norms (ops/linalg/spectral_ops)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

TYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dtype):
    return 1e-4 if dtype in (np.float32, np.complex64) else 1e-10


def _random(shape, dtype):
    a = np.random.randn(*shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * np.random.randn(*shape)
    return a.astype(dtype)


def _adj(x):
    return np.conj(np.swapaxes(x, -1, -2))


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 3), (2, 3, 5)])
@pytest.mark.parametrize("full", [False, True])
def test_qr_reconstructs_with_orthonormal_q(sess, dtype, shape, full):
    a0 = _random(shape, dtype)
    out = tf.linalg.qr(a0, full_matrices=full)
    assert type(out).__name__ == "Qr" and out.q.op.type == "Qr"
    m, n = shape[-2:]
    p = m if full else min(m, n)
    assert out.q.shape.as_list() == list(shape[:-2]) + [m, p]
    assert out.r.shape.as_list() == list(shape[:-2]) + [p, n]
    q, r = sess.run(out)
    assert q.dtype == r.dtype == dtype
    np.testing.assert_allclose(q @ r, a0, rtol=_tol(dtype), atol=_tol(dtype) * 10)
    np.testing.assert_allclose(_adj(q) @ q, np.broadcast_to(np.eye(p), q.shape[:-2] + (p, p)),
                               atol=_tol(dtype) * 10)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    assert tf.qr is tf.linalg.qr


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5)])
def test_svd(sess, dtype, shape):
    a0 = _random(shape, dtype)
    s, u, v = tf.linalg.svd(a0)
    assert u.op.type == "Svd" and isinstance(tf.linalg.svd(a0), tuple)
    assert s.op.type == ("Real" if np.dtype(dtype).kind == "c" else "Svd")
    k = min(shape[-2:])
    assert s.shape.as_list() == list(shape[:-2]) + [k]
    assert u.shape.as_list() == list(shape[:-1]) + [k]
    assert v.shape.as_list() == list(shape[:-2]) + [shape[-1], k]
    s0, u0, v0 = sess.run([s, u, v])
    assert s0.dtype == np.zeros((), dtype).real.dtype  # real singular values, as TF
    np.testing.assert_allclose(s0, np.linalg.svd(a0, compute_uv=False), rtol=_tol(dtype),
                               atol=_tol(dtype))
    np.testing.assert_allclose((u0 * s0[..., None, :]) @ _adj(v0), a0, atol=_tol(dtype) * 10)
    only_s = tf.linalg.svd(a0, compute_uv=False)
    assert isinstance(only_s, tf.Tensor)
    np.testing.assert_allclose(sess.run(only_s), s0, rtol=_tol(dtype), atol=_tol(dtype))
    assert tf.svd is tf.linalg.svd


def test_svd_full_matrices_shapes(sess):
    s, u, v = tf.linalg.svd(tf.placeholder(tf.float64, [2, 5, 3]), full_matrices=True)
    assert u.shape.as_list() == [2, 5, 5] and v.shape.as_list() == [2, 3, 3]
    s, u, v = tf.linalg.svd(np.random.randn(5, 3), full_matrices=True)
    u0, v0 = sess.run([u, v])
    np.testing.assert_allclose(u0.T @ u0, np.eye(5), atol=1e-12)
    assert tf.linalg.svd(tf.placeholder(tf.float32, [2, None, 3]))[1].shape.as_list() == \
        [2, None, None]


@pytest.mark.parametrize("dtype", TYPES)
def test_eigh_reads_the_lower_triangle(sess, dtype):
    a0 = _random((2, 4, 4), dtype)
    h = a0 + _adj(a0)
    garbage = h + np.triu(np.full((4, 4), 5.0), 1).astype(dtype)
    e, v = tf.linalg.eigh(garbage)
    assert e.op.type == "SelfAdjointEigV2" and e.shape.as_list() == [2, 4]
    e0, v0 = sess.run([e, v])
    assert e0.dtype == dtype
    np.testing.assert_allclose(e0, np.linalg.eigvalsh(h), rtol=_tol(dtype), atol=_tol(dtype))
    np.testing.assert_allclose(h @ v0, v0 * e0[..., None, :], atol=_tol(dtype) * 100)
    vals = tf.linalg.eigvalsh(garbage)
    np.testing.assert_allclose(sess.run(vals), e0, rtol=_tol(dtype), atol=_tol(dtype))
    assert tf.self_adjoint_eig is tf.linalg.eigh
    assert tf.self_adjoint_eigvals is tf.linalg.eigvalsh


def test_eigh_errors(sess):
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.linalg.eigh(tf.ones([2, 3]))
    p = tf.placeholder(tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="square"):
        sess.run(tf.linalg.eigvalsh(p), {p: np.ones((2, 3))})


@pytest.mark.parametrize("shape", [(5, 3), (2, 4)])
@pytest.mark.parametrize("l2", [0.0, 0.5])
def test_lstsq_fast(sess, shape, l2):
    a0, b0 = np.random.randn(*shape), np.random.randn(shape[0], 2)
    x = tf.linalg.lstsq(a0, b0, l2_regularizer=l2)
    assert x.shape.as_list() == [shape[1], 2] and x.op.name.startswith("matrix_solve_ls/")
    n = shape[1]
    if shape[0] >= n:
        ref = np.linalg.solve(a0.T @ a0 + l2 * np.eye(n), a0.T @ b0)
    else:
        ref = a0.T @ np.linalg.solve(a0 @ a0.T + l2 * np.eye(shape[0]), b0)
    np.testing.assert_allclose(sess.run(x), ref, rtol=1e-10, atol=1e-12)
    assert tf.matrix_solve_ls is tf.linalg.lstsq


@pytest.mark.parametrize("fast", [True, False])
def test_lstsq_op_with_unknown_dimensions(sess, fast):
    a0, b0 = np.random.randn(2, 5, 3), np.random.randn(2, 5, 2)
    a = tf.placeholder(tf.float64, [2, None, None])
    x = tf.linalg.lstsq(a, b0, fast=fast)
    assert x.op.type == "MatrixSolveLs" and x.shape.as_list() == [2, None, 2]
    np.testing.assert_allclose(sess.run(x, {a: a0}),
                               np.linalg.pinv(a0) @ b0, rtol=1e-9, atol=1e-12)


def test_lstsq_rank_deficient(sess):
    m = np.array([[1.0, 2.0], [2.0, 4.0]])
    b = np.ones((2, 1))
    np.testing.assert_allclose(sess.run(tf.linalg.lstsq(m, b, fast=False)),
                               np.linalg.pinv(m) @ b)
    a = tf.placeholder(tf.float64, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank deficient"):
        sess.run(tf.linalg.lstsq(a, b), {a: m})


@pytest.mark.parametrize("ord_,axis,ref", [
    ("euclidean", None, lambda x: np.sqrt(np.sum(np.abs(x) ** 2))),
    (1, 1, lambda x: np.sum(np.abs(x), 1)),
    (np.inf, -1, lambda x: np.max(np.abs(x), -1)),
    (3, 0, lambda x: np.sum(np.abs(x) ** 3, 0) ** (1 / 3)),
    (0.5, None, lambda x: np.sum(np.abs(x) ** 0.5) ** 2),
    ("fro", (0, 1), lambda x: np.linalg.norm(x, "fro", axis=(0, 1))),
    (1, (1, 2), lambda x: np.linalg.norm(x, 1, axis=(1, 2))),
    (np.inf, (1, 2), lambda x: np.linalg.norm(x, np.inf, axis=(1, 2))),
    (2, (1, 2), lambda x: np.linalg.norm(x, 2, axis=(1, 2))),
    (2, (2, 0), lambda x: np.linalg.norm(x, 2, axis=(2, 0)))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_norm(sess, ord_, axis, ref, dtype):
    x0 = _random((2, 3, 4), dtype)
    y = tf.norm(x0, ord=ord_, axis=axis)
    expected = ref(x0.astype(np.complex128))
    assert y.shape.as_list() == list(np.shape(expected))
    got = sess.run(y)
    euclidean = ord_ in ("euclidean", "fro")
    # the Euclidean/Frobenius norms keep a complex dtype (as TF); the others are real
    assert got.dtype == (dtype if euclidean else np.zeros((), dtype).real.dtype)
    np.testing.assert_allclose(got, np.real(expected), rtol=_tol(dtype))
    kept = tf.norm(x0, ord=ord_, axis=axis, keepdims=True)
    assert kept.shape.ndims == 3
    assert tf.linalg.norm is tf.norm


def test_norm_names_and_keep_dims(graph):
    x = tf.ones([2, 3])
    assert tf.norm(x).op.name == "norm/Squeeze"
    assert tf.norm(x, axis=1, keep_dims=True).shape.as_list() == [2, 1]
    assert tf.norm(x, axis=[0, 1]).shape.as_list() == []


def test_norm_errors(graph):
    x = tf.ones([2, 3, 3])
    with pytest.raises(ValueError, match="'ord' must be a supported vector norm, got x"):
        tf.norm(x, ord="x")
    with pytest.raises(ValueError, match="'ord' must be a supported vector norm, got -1"):
        tf.norm(x, ord=-1)
    with pytest.raises(ValueError, match="supported matrix norm .* got 3"):
        tf.norm(x, ord=3, axis=[1, 2])
    with pytest.raises(ValueError, match="'axis' must be None, an integer, or a tuple"):
        tf.norm(x, axis=[0, 1, 2])
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.norm(x, keepdims=True, keep_dims=True)


@pytest.mark.parametrize("build,shape", [
    (lambda a: list(tf.linalg.qr(a)), (4, 3)),
    (lambda a: list(tf.linalg.qr(a)), (3, 3)),
    (lambda a: list(tf.linalg.qr(a)), (2, 4)),
    (lambda a: [tf.square(t) for t in tf.linalg.svd(a)], (4, 3)),
    (lambda a: [tf.square(t) for t in tf.linalg.svd(a)], (3, 4)),
    (lambda a: tf.linalg.svd(a, compute_uv=False), (3, 4)),
    (lambda a: [tf.square(t) for t in tf.linalg.svd(a, full_matrices=True)], (3, 3)),
    (lambda a: tf.linalg.eigvalsh(tf.matmul(a, a, transpose_b=True)), (3, 3)),
    (lambda a: [tf.square(t) for t in tf.linalg.eigh(tf.matmul(a, a, transpose_b=True))],
     (3, 3)),
    (lambda a: tf.norm(a, ord=2, axis=[0, 1]), (3, 4)),
    (lambda a: tf.norm(a, ord=1.5), (3, 4)),
    (lambda a: tf.linalg.lstsq(a, tf.ones([4, 2], tf.float64), l2_regularizer=0.1),
     (4, 3)),
    (lambda a: tf.linalg.lstsq(a, tf.ones([2, 2], tf.float64), l2_regularizer=0.1),
     (2, 3))])
def test_gradients(graph, build, shape):
    x0 = np.random.randn(*shape) + np.eye(*shape)
    x = tf.placeholder(tf.float64, shape)
    outs = build(x)
    for y in outs if isinstance(outs, list) else [outs]:
        err = compute_gradient_error(x, list(shape), y, y.shape.as_list(), x_init_value=x0,
                                     delta=1e-6)
        assert err < 1e-5, y.name


def test_raw_matrix_solve_ls_gradient_and_its_limits(graph):
    from tensorweave.framework.op_builder import apply_op
    a0, b0 = np.random.randn(2, 4, 3), np.random.randn(2, 4, 2)
    a = tf.placeholder(tf.float64, [2, 4, 3])
    b = tf.placeholder(tf.float64, [2, 4, 2])
    y = apply_op("MatrixSolveLs", [a, b, np.float64(0.2)], {"fast": True}).outputs[0]
    assert compute_gradient_error([a, b], [[2, 4, 3], [2, 4, 2]], y, [2, 3, 2],
                                  x_init_value=[a0, b0], delta=1e-6) < 1e-6
    slow = apply_op("MatrixSolveLs", [a, b, np.float64(0.0)], {"fast": False}).outputs[0]
    with pytest.raises(ValueError, match="fast=False"):
        tf.gradients(slow, a)


def test_unsupported_gradients_say_what_is_unsupported(graph):
    tall = tf.placeholder(tf.float64, [4, 3])
    with pytest.raises(NotImplementedError, match="full_matrices"):
        tf.gradients(tf.linalg.qr(tall, full_matrices=True).q, tall)
    taller = tf.placeholder(tf.float64, [5, 3])
    with pytest.raises(NotImplementedError, match="full_matrices"):
        tf.gradients(tf.linalg.svd(taller, full_matrices=True)[1], taller)


def _svd_invariant_loss(s, u, v):
    """A loss that does not depend on the sign (or phase) of each singular pair."""
    (mu, nu), (mv, nv) = u.shape.as_list()[-2:], v.shape.as_list()[-2:]
    w_u = np.arange(1.0, 1.0 + mu * nu).reshape(mu, nu)
    w_v = np.arange(1.0, 1.0 + mv * nv).reshape(mv, nv)
    return (tf.reduce_sum(tf.square(tf.abs(u)) * w_u) + tf.reduce_sum(tf.abs(v) * w_v) +
            tf.reduce_sum(s * s))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 2), (2, 2, 3)])
def test_svd_gradient_full_matrices_one_longer_side(graph, shape):
    """full_matrices=True with |m - n| == 1: the extra column is fixed up to sign by
    the others, so the gradient exists (TF supports it)."""
    x0 = np.random.RandomState(7).randn(*shape)
    x = tf.placeholder(tf.float64, shape)
    y = _svd_invariant_loss(*tf.linalg.svd(x, full_matrices=True))
    err = compute_gradient_error(x, list(shape), y, [], x_init_value=x0, delta=1e-6)
    assert err < 1e-5


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 4)])
def test_svd_gradient_of_complex_input(graph, shape):
    """Checked against finite differences of the real and imaginary parts, with a loss
    that does not depend on the phase of each singular pair."""
    rs = np.random.RandomState(3)
    re0, im0 = rs.randn(*shape), rs.randn(*shape)
    re, im = tf.placeholder(tf.float64, shape), tf.placeholder(tf.float64, shape)
    a = tf.complex(re, im)
    for compute_uv in (False, True):
        if compute_uv:
            y = _svd_invariant_loss(*tf.linalg.svd(a))
        else:
            y = tf.reduce_sum(tf.linalg.svd(a, compute_uv=False) * [1.0, 2.0, 3.0])
        for x, x0, other in ((re, re0, {im: im0}), (im, im0, {re: re0})):
            err = compute_gradient_error(x, list(shape), y, [], x_init_value=x0,
                                         delta=1e-6, extra_feed_dict=other)
            assert err < 1e-5, (compute_uv, err)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5)])
def test_pinv(sess, dtype, shape):
    a0 = _random(shape, dtype)
    p = tf.linalg.pinv(a0)
    assert p.op.name == "pinv/MatMul" and p.dtype == tf.as_dtype(dtype)
    assert p.shape.as_list() == list(shape[:-2]) + [shape[-1], shape[-2]]
    np.testing.assert_allclose(sess.run(p), np.linalg.pinv(a0), rtol=_tol(dtype) * 10,
                               atol=_tol(dtype) * 10)


def test_pinv_cuts_off_small_singular_values(sess):
    m = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 1e-9]])
    np.testing.assert_allclose(sess.run(tf.linalg.pinv(m, rcond=1e-6)),
                               np.linalg.pinv(m, rcond=1e-6), atol=1e-12)
    p = tf.placeholder(tf.float64, [None, 3, 2])
    assert tf.linalg.pinv(p).shape.as_list() == [None, 2, 3]
    np.testing.assert_allclose(sess.run(tf.linalg.pinv(p), {p: m[None]})[0],
                               np.linalg.pinv(m), atol=1e-9)
    with pytest.raises(TypeError, match="float`-like `dtype` \\(saw int32\\)"):
        tf.linalg.pinv(tf.constant([[1, 2]]))


def test_matrix_rank(sess):
    m = np.array([[[1.0, 2.0], [2.0, 4.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0], [3, 6]]])
    r = tf.linalg.matrix_rank(m)
    assert r.op.name == "matrix_rank/Sum" and r.dtype == tf.int32 and r.shape.as_list() == [2]
    np.testing.assert_array_equal(sess.run(r), [2, 1])
    assert sess.run(tf.linalg.matrix_rank(np.diag([1.0, 1e-3]), tol=1e-2)) == 1


def test_normalize_and_global_norm(sess):
    a0 = np.array([[3.0, 4.0], [0.0, 2.0]])
    normalized, n = tf.linalg.normalize(a0, axis=1)
    assert normalized.op.name == "normalize/truediv" and n.shape.as_list() == [2, 1]
    got, norms = sess.run([normalized, n])
    np.testing.assert_allclose(norms, [[5.0], [2.0]])
    np.testing.assert_allclose(got, a0 / [[5.0], [2.0]])
    assert tf.linalg.global_norm is tf.global_norm


def test_pinv_gradient(graph):
    x0 = np.random.randn(4, 3)
    x = tf.placeholder(tf.float64, [4, 3])
    assert compute_gradient_error(x, [4, 3], tf.linalg.pinv(x), [3, 4], x_init_value=x0,
                                  delta=1e-6) < 1e-5


def test_self_adjoint_eig_of_a_non_finite_lower_triangle_fails(sess):
    bad = tf.constant([[np.nan, 0.0], [0.0, 1.0]])
    for out in (tf.self_adjoint_eigvals(bad), tf.self_adjoint_eig(bad)[1]):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Self-adjoint eigen decomposition was not successful"):
            sess.run(out)
    # only the lower triangle is read
    upper = tf.constant([[2.0, np.inf], [0.0, 1.0]])
    np.testing.assert_allclose(sess.run(tf.self_adjoint_eigvals(upper)), [1.0, 2.0])


def test_non_finite_matrices_in_svd_inverse_and_solve(sess):
    """TF's kernels: SVD gives NaN for a matrix holding NaN (only that one of a batch);
    inverse and solve cannot pivot on it and fail."""
    bad = np.array([[np.nan, 0.0], [0.0, 1.0]])
    batch = tf.constant(np.stack([bad, np.diag([3.0, 1.0])]))
    s, u, v = sess.run(tf.svd(batch))
    assert np.isnan(s[0]).all() and np.isnan(u[0]).all() and np.isnan(v[0]).all()
    np.testing.assert_allclose(s[1], [3.0, 1.0])
    assert np.isnan(sess.run(tf.svd(bad, compute_uv=False))).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible"):
        sess.run(tf.matrix_inverse(bad))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix is not invertible"):
        sess.run(tf.matrix_solve(bad, [[1.0], [1.0]]))
