"""matmul, matvec, tensordot and einsum against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def _rand(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (np.random.randn(*shape) + 1j * np.random.randn(*shape)).astype(dtype)
    if dtype.kind in "iu":
        return np.random.randint(0, 5, size=shape).astype(dtype)
    return np.random.randn(*shape).astype(dtype)


def _flip(m, transpose, adjoint):
    if transpose or adjoint:
        m = np.swapaxes(m, -1, -2)
    return np.conj(m) if adjoint else m


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64,
                                   np.complex64, np.complex128])
def test_matmul_rank2_all_flags(sess, dtype):
    fetches, refs = [], []
    for ta, aa in ((False, False), (True, False), (False, True)):
        for tb, ab in ((False, False), (True, False), (False, True)):
            a = _rand((4, 3) if (ta or aa) else (3, 4), dtype)
            b = _rand((5, 4) if (tb or ab) else (4, 5), dtype)
            y = tf.matmul(a, b, transpose_a=ta, transpose_b=tb, adjoint_a=aa, adjoint_b=ab)
            assert y.shape.as_list() == [3, 5] and y.dtype == tf.as_dtype(dtype)
            assert y.op.type == "MatMul"
            fetches.append(y)
            refs.append(_flip(a, ta, aa) @ _flip(b, tb, ab))
    tol = 2e-2 if dtype == np.float16 else 1e-5
    for got, ref in zip(sess.run(fetches), refs):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, ref.astype(dtype), rtol=tol, atol=tol)


def test_matmul_bfloat16_and_uint8(sess):
    a = np.random.rand(3, 4)
    b = np.random.rand(4, 2)
    got = sess.run(tf.matmul(tf.constant(a, tf.bfloat16), tf.constant(b, tf.bfloat16)))
    np.testing.assert_allclose(got.astype(np.float64), a @ b, rtol=3e-2, atol=3e-2)
    u = np.array([[1, 2], [3, 4]], np.uint8)
    got = sess.run(tf.matmul(u, u))
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, u @ u)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_batch_matmul_broadcast_and_adjoint(sess, dtype):
    a = _rand((2, 1, 3, 4), dtype)
    b = _rand((5, 4, 6), dtype)
    cases = [(a, b, {}, [2, 5, 3, 6]),
             (np.swapaxes(a, -1, -2), b, {"adjoint_a": True}, [2, 5, 3, 6]),
             (np.swapaxes(a, -1, -2), b, {"transpose_a": True}, [2, 5, 3, 6]),
             (a, np.swapaxes(b, -1, -2), {"adjoint_b": True}, [2, 5, 3, 6]),
             (a, _rand((6, 4), dtype), {"transpose_b": True}, [2, 1, 3, 6])]
    fetches, refs = [], []
    for x, y, kw, shape in cases:
        out = tf.matmul(x, y, **kw)
        assert out.op.type == "BatchMatMulV2"
        assert out.shape.as_list() == shape
        fetches.append(out)
        refs.append(_flip(x, kw.get("transpose_a"), kw.get("adjoint_a")) @
                    _flip(y, kw.get("transpose_b"), kw.get("adjoint_b")))
    for got, ref in zip(sess.run(fetches), refs):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, ref.astype(dtype), rtol=1e-4, atol=1e-4)


def test_matmul_static_shapes_and_unknown_rank(sess):
    x3 = tf.placeholder(tf.float32, [None, 2, 3])
    assert tf.matmul(x3, tf.placeholder(tf.float32, [5, 1, 3, 4])).shape.as_list() == \
        [5, None, 2, 4]
    assert tf.matmul(x3, x3, adjoint_b=True).shape.as_list() == [None, 2, 2]
    assert tf.matmul(tf.placeholder(tf.float32, [None, 3]),
                     tf.placeholder(tf.float32, [None, None])).shape.as_list() == [None, None]
    u = tf.placeholder(tf.float32)
    y = tf.matmul(u, u)
    assert y.op.type == "BatchMatMulV2" and y.shape.ndims is None
    v = np.random.rand(2, 3, 3).astype(np.float32)
    np.testing.assert_allclose(sess.run(y, {u: v}), v @ v, rtol=1e-5)
    assert tf.matmul(x3, x3, transpose_b=True).name.startswith("MatMul")


def test_matmul_build_errors(graph):
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [4, 5])
    with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4 for "
                                         r"'MatMul' \(op: 'MatMul'\) with input shapes: "
                                         r"\[2,3\], \[4,5\]"):
        tf.matmul(a, b)
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.matmul(tf.placeholder(tf.float32, [3]), a)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.matmul(tf.placeholder(tf.float32, [2, 2, 3]), tf.placeholder(tf.float32, [3, 3, 4]))
    with pytest.raises(ValueError, match="Only one of `transpose_a` and `adjoint_a`"):
        tf.matmul(a, a, transpose_a=True, adjoint_a=True)
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.matmul(tf.constant([[1]], tf.int8), tf.constant([[2]], tf.int8))
    with pytest.raises(TypeError, match="float64"):
        tf.matmul(a, tf.constant([[1.0]], tf.float64))


def test_matmul_run_errors(sess):
    u = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Matrix size-incompatible: In\[0\]: \[2,3\], In\[1\]: \[2,3\]"):
        sess.run(tf.matmul(u, u), {u: np.ones((2, 3))})
    w = tf.placeholder(tf.float32)
    z = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="compatible batch dimensions"):
        sess.run(tf.matmul(w, z), {w: np.ones((2, 3, 3)), z: np.ones((3, 3, 3))})


def test_matmul_run_rank_errors(sess):
    # TF 2.21's messages (its text says ">= 2" for a rank-3 input too)
    u, v = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    for ta in (False, True):
        prod = tf.raw_ops.MatMul(a=u, b=v, transpose_a=ta)  # tf.matmul: BatchMatMulV2
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\] ndims must be >= 2"):
            sess.run(prod, {u: np.ones((2, 3, 4)), v: np.ones((4, 2))})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[1\] ndims must be >= 2"):
            sess.run(prod, {u: np.ones((4, 4)), v: np.ones(4)})


@pytest.mark.parametrize("n", [63, 64, 65])
def test_matmul_at_blas_split_threshold(sess, monkeypatch, n):
    """Products of at most 64^3 multiply-adds (OpenBLAS runs them on one thread) take no
    BLAS context; larger ones do. Both compute the product."""
    from tensorweave.ops import onednn
    from tensorweave.ops.math import blas, matmul_ops
    # NumPy's product (where oneDNN's kernels outrun OpenBLAS's, they take it instead)
    if onednn.library() is not None:
        monkeypatch.setattr(onednn.library(), "one_thread_sgemm", None)
    entered = []
    real = matmul_ops.large_product
    monkeypatch.setattr(matmul_ops, "large_product",
                        lambda macs: (entered.append(macs), real(macs))[1])
    a = np.random.RandomState(0).randn(n, n).astype(np.float32)
    b = np.random.RandomState(1).randn(n, n).astype(np.float32)
    got = sess.run(tf.matmul(a, b, transpose_b=True))
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.T, rtol=1e-4, atol=1e-4)
    assert entered == ([] if n ** 3 < blas.SPLIT_MACS else [n ** 3])


def test_matmul_does_not_mutate_inputs(sess):
    a = np.random.rand(3, 3).astype(np.float32)
    keep = a.copy()
    sess.run(tf.matmul(a, a, transpose_a=True))
    np.testing.assert_array_equal(a, keep)


def test_matvec(sess):
    a = np.random.rand(2, 3, 4)
    b = np.random.rand(2, 4)
    np.testing.assert_allclose(sess.run(tf.linalg.matvec(a, b)), np.einsum("bij,bj->bi", a, b))


def test_exports():
    assert tf.linalg.matmul is tf.matmul
    assert tf.linalg.tensordot is tf.tensordot
    assert tf.linalg.einsum is tf.einsum


# --- tensordot -----------------------------------------------------------------------------------
def test_tensordot_values_and_shapes(sess):
    a = np.random.rand(2, 3, 4)
    b = np.random.rand(4, 3, 5)
    cases = [([[1, 2], [1, 0]], ([1, 2], [1, 0])), (1, 1), (0, 0), ([[-1], [0]], ([2], [0])),
             ([2, 0], ([2], [0]))]
    for axes, np_axes in cases:
        y = tf.tensordot(a, b, axes)
        ref = np.tensordot(a, b, np_axes)
        assert y.shape.as_list() == list(ref.shape)
        np.testing.assert_allclose(sess.run(y), ref, rtol=1e-12)
    with tf.Graph().as_default():
        assert tf.tensordot(a, b, 1).name == "Tensordot:0"


def test_tensordot_unknown_dims(sess):
    x = tf.placeholder(tf.float32, [None, 2, 3])
    y = tf.placeholder(tf.float32, [5, 1, 3, 4])
    out = tf.tensordot(x, y, [[2], [2]])
    assert out.shape.as_list() == [None, 2, 5, 1, 4]
    xv = np.random.rand(3, 2, 3).astype(np.float32)
    yv = np.random.rand(5, 1, 3, 4).astype(np.float32)
    np.testing.assert_allclose(sess.run(out, {x: xv, y: yv}),
                               np.tensordot(xv, yv, ([2], [2])), rtol=1e-5)


def test_tensordot_errors(graph):
    a = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.tensordot(a, tf.placeholder(tf.float32, [4, 4]), 1)
    with pytest.raises(ValueError, match="must not be larger than the number of dimensions"):
        tf.tensordot(a, tf.placeholder(tf.float32, [3, 4]), 3)
    with pytest.raises(ValueError, match="Different number of contraction axes"):
        tf.tensordot(a, tf.placeholder(tf.float32, [3, 4]), [[1], [0, 1]])
    with pytest.raises(ValueError, match="must be at least 0"):
        tf.tensordot(a, tf.placeholder(tf.float32, [3, 4]), -1)
    with pytest.raises(ValueError, match="must be at least 0"):  # unknown rank too
        tf.tensordot(tf.placeholder(tf.float32), a, -1)


# --- einsum --------------------------------------------------------------------------------------
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->i", [(2, 3), (2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij, jk -> ik", [(2, 3), (3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_einsum_values_and_shapes(sess, equation, shapes, dtype):
    xs = [_rand(s, dtype) for s in shapes]
    y = tf.einsum(equation, *xs)
    ref = np.einsum(equation.replace(" ", ""), *xs)
    assert y.op.type == "Einsum" and y.dtype == tf.as_dtype(dtype)
    assert y.shape.as_list() == list(np.shape(ref))
    got = sess.run(y)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


def test_einsum_static_shapes_and_names(graph):
    a = tf.placeholder(tf.float32, [2, 3])
    y = tf.einsum("ij,jk->ik", a, tf.placeholder(tf.float32, [3, None]))
    assert y.shape.as_list() == [2, None] and y.name == "einsum/Einsum:0"
    x3 = tf.placeholder(tf.float32, [None, 2, 3])
    y3 = tf.placeholder(tf.float32, [5, 1, 3, 4])
    assert tf.einsum("...ij,...jk->...ik", x3, y3).shape.as_list() == [5, None, 2, 4]
    assert tf.einsum("ij,jk->ik", tf.placeholder(tf.float32), a).shape.as_list() == [None, 3]
    assert tf.einsum("...ij->...ji", tf.placeholder(tf.float32)).shape.ndims is None
    assert tf.einsum("ij->ij", a, name="e").name == "e/Einsum:0"


def test_einsum_keeps_broadcast_dims_out_of_an_output_without_ellipsis(sess):
    """TF refuses to drop broadcast dims ("...ij->j"); implicit mode keeps the ellipsis
    only when one operand has it ("...ij" keeps all, "...i,...i" drops it)."""
    x = np.random.rand(2, 3, 4)
    with pytest.raises(ValueError, match="without ellipsis .* non-empty broadcasting"):
        tf.einsum("...ij->j", x)
    with pytest.raises(ValueError, match="Shape must be at most rank 0 but is rank 1"):
        tf.einsum("...i,...i", x[0], x[0])
    assert tf.einsum("...ij", x).shape.as_list() == [2, 3, 4]
    y = tf.einsum("...i,...i", x[0, 0], x[0, 0])  # no broadcast dims: a dot product
    assert y.op.get_attr("equation") == b"...i,...i->"
    np.testing.assert_allclose(sess.run(y), x[0, 0] @ x[0, 0])
    with pytest.raises(ValueError, match="ellipsis but no input does"):
        tf.einsum("ij->...ij", x[0])


def test_einsum_errors(sess):
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [4, 5])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.einsum("ij,jk->ik", a, b)
    with pytest.raises(ValueError, match="label q not present"):
        tf.einsum("ij,jk->iq", a, b)
    with pytest.raises(ValueError, match="Got 1 inputs for equation"):
        tf.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 1 and 2"):
        tf.einsum("ij,ij->ij", tf.placeholder(tf.float32, [1, 3]), a)
    with pytest.raises(ValueError, match="rank 2"):
        tf.einsum("ijk->i", a)
    with pytest.raises(TypeError, match="don't all match"):
        tf.einsum("ij,jk->ik", a, tf.constant([[1.0]], tf.float64))
    with pytest.raises(TypeError, match="Invalid keyword"):
        tf.einsum("ij->i", a, bogus=1)
    u = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="label j"):
        sess.run(tf.einsum("ij,jk->ik", u, u), {u: np.ones((2, 3))})


# --- gradients ------------------------------------------------------------------------------
def _check_all(xs_np, build, tol=1e-6):
    xs = [tf.placeholder(tf.float64, v.shape) for v in xs_np]
    y = build(*xs)
    y_shape = y.shape.as_list()
    for i, x in enumerate(xs):
        feed = {xs[j]: xs_np[j] for j in range(len(xs)) if j != i}
        err = compute_gradient_error(x, list(xs_np[i].shape), y, y_shape,
                                     x_init_value=xs_np[i], extra_feed_dict=feed)
        assert err < tol, (i, err)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_gradients(graph, ta, tb):
    a = np.random.rand(4, 3) if ta else np.random.rand(3, 4)
    b = np.random.rand(5, 4) if tb else np.random.rand(4, 5)
    _check_all([a, b], lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb))


@pytest.mark.parametrize("aa,ab", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul_gradients_with_broadcast(graph, aa, ab):
    a = np.random.rand(2, 1, 4, 3) if aa else np.random.rand(2, 1, 3, 4)
    b = np.random.rand(3, 5, 4) if ab else np.random.rand(3, 4, 5)
    _check_all([a, b], lambda x, y: tf.matmul(x, y, adjoint_a=aa, adjoint_b=ab))


def test_complex_matmul_gradient_value(sess):
    a = tf.placeholder(tf.complex128, [2, 2])
    b = tf.placeholder(tf.complex128, [2, 2])
    av = _rand((2, 2), np.complex128)
    bv = _rand((2, 2), np.complex128)
    ga, gb = sess.run(tf.gradients(tf.matmul(a, b), [a, b],
                                   grad_ys=tf.ones([2, 2], tf.complex128)), {a: av, b: bv})
    ones = np.ones((2, 2))
    np.testing.assert_allclose(ga, ones @ np.conj(bv).T)  # TF convention: grad @ b^H
    np.testing.assert_allclose(gb, np.conj(av).T @ ones)


def test_tensordot_gradient(graph):
    _check_all([np.random.rand(2, 3, 4), np.random.rand(4, 3, 2)],
               lambda x, y: tf.tensordot(x, y, [[1, 2], [1, 0]]))


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij,j->i", [(2, 3), (3,)]),
    ("ij,kl->", [(2, 3), (2, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
    ("...ij->...j", [(2, 3, 4)]),
    # the second operand's gradient sums the first's "..." dims away (EinsumDense)
    ("...b,bc->...c", [(2, 3, 4), (4, 5)]),
    ("ab...,bc->ac...", [(2, 4, 3), (4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 2, 4)]),
])
def test_einsum_gradients(graph, equation, shapes):
    _check_all([np.random.rand(*s) for s in shapes], lambda *xs: tf.einsum(equation, *xs))


@pytest.mark.parametrize("equation,shapes", [
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("bii->b", [(2, 3, 3)]),
    ("iii->", [(2, 2, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ij,jj->i", [(2, 3), (3, 3)]),
    ("i...i->...i", [(3, 2, 3)]),
    ("...ii->...i", [(2, 3, 3)]),
])
def test_einsum_gradients_with_repeated_labels(graph, equation, shapes):
    """A repeated label takes a diagonal; its gradient is zero off that diagonal."""
    _check_all([np.random.rand(*s) for s in shapes], lambda *xs: tf.einsum(equation, *xs))


def test_einsum_trace_gradient_values(sess):
    x = tf.placeholder(tf.float64, [None, None])
    g_trace = tf.gradients(tf.einsum("ii->", x), x)[0]
    g_diag = tf.gradients(tf.reduce_sum(tf.einsum("ii->i", x) * [1.0, 2.0, 3.0]), x)[0]
    feed = {x: np.arange(9.0).reshape(3, 3)}
    np.testing.assert_array_equal(sess.run(g_trace, feed), np.eye(3))
    np.testing.assert_array_equal(sess.run(g_diag, feed), np.diag([1.0, 2.0, 3.0]))


def test_tensordot_with_ranks_or_axes_known_at_run_time(sess):
    """TF's dynamic path: operands of unknown rank, or axes given as a Tensor."""
    rs = np.random.RandomState(0)
    a0, b0 = rs.rand(2, 3, 4), rs.rand(4, 3, 5)
    a, b = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
    cases = [(1, np.tensordot(a0, b0, 1)),
             ([[1, 2], [1, 0]], np.tensordot(a0, b0, [[1, 2], [1, 0]])),
             ([[-1], [0]], np.tensordot(a0, b0, [[2], [0]]))]
    for axes, want in cases:
        got = sess.run(tf.tensordot(a, b, axes), {a: a0, b: b0})
        np.testing.assert_allclose(got, want, rtol=1e-12)
    fed_axes = tf.placeholder(tf.int32, [2, 2])
    got = sess.run(tf.tensordot(a, b, fed_axes), {a: a0, b: b0, fed_axes: [[1, 2], [1, 0]]})
    np.testing.assert_allclose(got, cases[1][1], rtol=1e-12)
    known = tf.tensordot(tf.constant(a0), tf.constant(b0), tf.constant([[1, 2], [1, 0]]))
    assert known.shape.as_list() == [2, 5]  # constant axes: the static path
    np.testing.assert_allclose(sess.run(known), cases[1][1], rtol=1e-12)
    grads = tf.gradients(tf.reduce_sum(tf.tensordot(a, b, 1)), [a, b])
    ga, gb = sess.run(grads, {a: a0, b: b0})
    np.testing.assert_allclose(ga, np.broadcast_to(b0.sum((1, 2)), a0.shape), rtol=1e-12)
    np.testing.assert_allclose(gb, np.broadcast_to(a0.sum((0, 1))[:, None, None], b0.shape),
                               rtol=1e-12)
