"""sparse.add, reduce_sum/max (dense and sparse), maximum/minimum, softmax and
sparse_dense_matmul against dense NumPy references (values checked with TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import group_fold
from tensorweave.ops.sparse import sparse_math_ops
from tensorweave.test import compute_gradient_error

_IA, _VA = [[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0]
_IB, _VB = [[0, 0], [1, 0], [1, 1]], [-1.0, 5.0, 1.0]


def _a(dtype=tf.float32):
    return tf.SparseTensor(_IA, tf.constant(_VA, dtype), [2, 3])


def _b(dtype=tf.float32):
    return tf.SparseTensor(_IB, tf.constant(_VB, dtype), [2, 3])


def _dense(value):
    out = np.zeros(value.dense_shape, value.values.dtype)
    out[tuple(np.asarray(value.indices).T)] = value.values
    return out


def test_sparse_add(sess):
    s = tf.sparse.add(_a(), _b())
    assert isinstance(s, tf.SparseTensor) and s.shape.as_list() == [2, 3]
    v = sess.run(s)
    assert isinstance(v, tf.SparseTensorValue)
    assert v.indices.tolist() == [[0, 0], [0, 2], [1, 0], [1, 1]]
    np.testing.assert_array_equal(v.values, [0.0, 2.0, 5.0, 4.0])
    assert v.values.dtype == np.float32
    # the threshold drops small sums only (entries present once are kept)
    t = sess.run(tf.sparse_add(_a(), _b(), thresh=0.5))
    assert t.indices.tolist() == [[0, 2], [1, 0], [1, 1]]
    ia = tf.SparseTensor(_IA, tf.constant([1, 2, 3], tf.int64), [2, 3])
    ib = tf.SparseTensor(_IB, tf.constant([-1, 5, 1], tf.int64), [2, 3])
    i = sess.run(tf.sparse.add(ia, ib, threshold=1))
    assert i.values.dtype == np.int64 and i.values.tolist() == [2, 5, 4]


def test_sparse_plus_dense(sess):
    d = np.arange(6, dtype=np.float32).reshape(2, 3)
    for y in (tf.sparse.add(_a(), d), tf.sparse.add(d, _a())):
        assert isinstance(y, tf.Tensor) and y.shape.as_list() == [2, 3]
        np.testing.assert_array_equal(sess.run(y), d + _dense(sess.run(_a())))
    with pytest.raises(TypeError, match="At least one input should be SparseTensor"):
        tf.sparse.add(np.ones(2), np.ones(2))


def test_sparse_add_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="shapes do not match"):
        # (a dense shape known only at run time: known ones fail at build time)
        shape = tf.placeholder_with_default(np.array([3, 3], np.int64), [2])
        sess.run(tf.sparse.add(_a(), tf.SparseTensor([[0, 0]], [1.0], shape)))


def test_sparse_add_of_incompatible_static_shapes_fails_at_build(graph):
    with pytest.raises(ValueError, match=r"Shapes \(3, 4\) and \(3, 5\) are incompatible"):
        tf.sparse_add(tf.SparseTensor([[0, 0]], [1.0], [3, 4]),
                      tf.SparseTensor([[0, 0]], [1.0], [3, 5]))


@pytest.mark.parametrize("reduce", [
    lambda sp: tf.sparse_reduce_max(sp),
    lambda sp: tf.sparse_reduce_max_sparse(sp, 1).values,
    lambda sp: tf.sparse_reduce_sum_sparse(sp, 1).values,
])
def test_reductions_without_gradient_raise_lookup_error(graph, reduce):
    # TF registers no gradient for them: tf.gradients, and so the numeric gradient
    # check, raise LookupError
    sp = _a()
    message = r"No gradient defined for operation .*\(op type: SparseReduce"
    with pytest.raises(LookupError, match=message):
        tf.gradients(reduce(sp), [sp.values])
    values = tf.placeholder(tf.float64, [3])
    sp = tf.SparseTensor(sp.indices, values, sp.dense_shape)
    with pytest.raises(LookupError, match=message):  # fails before any shape is used
        compute_gradient_error(values, [3], reduce(sp), [1])


def test_sparse_add_gradients(graph):
    va, vb = tf.placeholder(tf.float64, [3]), tf.placeholder(tf.float64, [3])
    s = tf.sparse.add(tf.SparseTensor(_IA, va, [2, 3]), tf.SparseTensor(_IB, vb, [2, 3]))
    err = compute_gradient_error([va, vb], [[3], [3]], s.values, [4],
                                 x_init_value=[np.array(_VA), np.array([2.0, 5.0, 1.0])])
    assert err < 1e-8
    d = tf.placeholder(tf.float64, [2, 3])
    y = tf.sparse.add(tf.SparseTensor(_IA, va, [2, 3]), d)
    assert compute_gradient_error([va, d], [[3], [2, 3]], y, [2, 3]) < 1e-8


def test_sparse_dense_cwise_numeric_gradients(graph):
    va = tf.placeholder(tf.float64, [3])
    d = tf.placeholder(tf.float64, [2, 1])  # broadcast along the columns
    sp = tf.SparseTensor(_IA, va, [2, 3])
    d0 = np.array([[1.5], [-2.5]])
    for y in ((sp * d).values, (sp / d).values):
        err = compute_gradient_error([va, d], [[3], [2, 1]], y, [3],
                                     x_init_value=[np.array(_VA), d0])
        assert err < 1e-6  # the quotient's curvature over the finite-difference step


def test_reduce_sum_and_max(sess):
    a = _a()
    dense = _dense(sess.run(a))
    for axis, keep in ((1, False), (0, True), (-1, True), ([0, 1], False), (None, False)):
        y = tf.sparse.reduce_sum(a, axis, keepdims=keep)
        want = dense.sum(axis=None if axis is None else tuple(np.atleast_1d(axis)),
                         keepdims=keep)
        assert y.shape.as_list() == list(np.shape(want))
        np.testing.assert_allclose(sess.run(y), want)
    x = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], [-7.0, 4.0, 3.0], [3, 2])
    # only present entries take part; a row without entries gives 0
    np.testing.assert_array_equal(sess.run(tf.sparse_reduce_max(x, 1)), [-7.0, 4.0, 0.0])
    m = sess.run(tf.sparse.reduce_max_sparse(x, 1))
    assert m.indices.tolist() == [[0], [1]] and m.values.tolist() == [-7.0, 4.0]
    s = sess.run(tf.sparse.reduce_sum_sparse(a, 0, keepdims=True))
    assert s.indices.tolist() == [[0, 0], [0, 1], [0, 2]] and s.dense_shape.tolist() == [1, 3]
    np.testing.assert_array_equal(s.values, [1.0, 3.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension 2"):
        sess.run(tf.sparse.reduce_sum(a, 2))
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.sparse.reduce_sum(a, 0, reduction_axes=0)


def test_reduce_sum_gradient(graph):
    v = tf.placeholder(tf.float64, [3])
    sp = tf.SparseTensor([[0, 0, 1], [1, 1, 0], [1, 1, 1]], v, [2, 2, 2])
    for axis, keep, out in ((1, False, [2, 2]), ([0, 2], True, [1, 2, 1]), (None, False, [])):
        y = tf.sparse.reduce_sum(sp, axis, keepdims=keep)
        assert compute_gradient_error(v, [3], y, out) < 1e-8


def test_maximum_minimum(sess):
    mx, mn = sess.run([tf.sparse.maximum(_a(), _b()), tf.sparse_minimum(_a(), _b())])
    da, db = _dense(sess.run(_a())), _dense(sess.run(_b()))
    union = [[0, 0], [0, 2], [1, 0], [1, 1]]
    assert mx.indices.tolist() == union and mn.indices.tolist() == union
    np.testing.assert_array_equal(mx.values, np.maximum(da, db)[tuple(np.array(union).T)])
    np.testing.assert_array_equal(mn.values, np.minimum(da, db)[tuple(np.array(union).T)])


def test_softmax(sess):
    idx = [[0, 0, 0], [0, 0, 2], [0, 1, 1], [1, 0, 1], [1, 0, 2]]
    vals = np.array([1.0, 2.0, 3.0, -1.0, 0.5])
    out = sess.run(tf.sparse.softmax(tf.SparseTensor(idx, vals, [2, 2, 3])))
    want = np.concatenate([np.exp([1, 2]) / np.exp([1, 2]).sum(), [1.0],
                           np.exp([-1, 0.5]) / np.exp([-1, 0.5]).sum()])
    np.testing.assert_allclose(out.values, want)
    assert out.indices.tolist() == idx
    v = tf.placeholder(tf.float64, [5])
    y = tf.sparse_softmax(tf.SparseTensor(idx, v, [2, 2, 3])).values * np.arange(1.0, 6.0)
    assert compute_gradient_error(v, [5], y, [5], x_init_value=vals) < 1e-7


@pytest.fixture(params=["scipy", "numpy"])
def product_path(request, monkeypatch):
    """SparseTensorDenseMatMul through SciPy's CSR product (where installed) and through
    its NumPy fold: the same values."""
    if request.param == "numpy":
        monkeypatch.setattr(group_fold, "_SCIPY_SPARSE", False)
        yield request.param
        return
    pytest.importorskip("scipy.sparse")
    products, csr_product = [], sparse_math_ops.entry_order_product

    def counted(*args):
        out = csr_product(*args)
        products.append(out is not None)
        return out
    monkeypatch.setattr(sparse_math_ops, "entry_order_product", counted)
    yield request.param
    assert products and all(products)   # the products went through SciPy


@pytest.mark.parametrize("adj_a,adj_b", [(False, False), (True, False), (False, True),
                                         (True, True)])
def test_sparse_dense_matmul(sess, adj_a, adj_b, product_path):
    a_dense = _dense(sess.run(_a(tf.float64)))
    inner = 2 if adj_a else 3
    b = np.arange(inner * 2.0).reshape((2, inner) if adj_b else (inner, 2))
    y = tf.sparse.sparse_dense_matmul(_a(tf.float64), b, adjoint_a=adj_a, adjoint_b=adj_b)
    want = (a_dense.T if adj_a else a_dense) @ (b.T if adj_b else b)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(sess.run(y), want)
    v = tf.placeholder(tf.float64, [3])
    bp = tf.placeholder(tf.float64, b.shape)
    z = tf.sparse_tensor_dense_matmul(tf.SparseTensor(_IA, v, [2, 3]), bp, adj_a, adj_b)
    err = compute_gradient_error([v, bp], [[3], list(b.shape)], z, list(want.shape))
    assert err < 1e-8


def test_sparse_dense_matmul_shapes_and_errors(sess, product_path):
    sp = tf.sparse.placeholder(tf.float32, [None, 3])
    assert tf.sparse.matmul(sp, tf.zeros([3, 4])).shape.as_list() == [None, 4]
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.sparse.sparse_dense_matmul(_a(), tf.zeros([2, 2]))
    p = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner dimension does not match"):
        sess.run(tf.sparse.sparse_dense_matmul(_a(), p), {p: np.zeros((2, 2))})
    # repeated and unordered indices add up
    r = tf.SparseTensor([[1, 0], [0, 1], [1, 0]], [1.0, 2.0, 3.0], [2, 2])
    np.testing.assert_allclose(sess.run(tf.sparse.matmul(r, np.eye(2, dtype=np.float32))),
                               [[0, 2], [4, 0]])


# --- probe fixes: argument types as TF's op wrappers take them -----------------------------
def _sp(values, shape=(3, 4)):
    return tf.SparseTensor([[0, 0], [1, 2], [2, 3]], values, list(shape))


@pytest.mark.parametrize("build", [
    lambda f64: tf.sparse_add(_sp([1.0, 2.0, 3.0]), _sp(f64)),
    lambda f64: tf.sparse_add(_sp([1.0, 2.0, 3.0]), tf.zeros([3, 4], tf.float64)),
    lambda f64: tf.sparse_maximum(_sp([1.0, 2.0, 3.0]), _sp(f64)),
    lambda f64: tf.sparse_minimum(_sp([1.0, 2.0, 3.0]), _sp(f64)),
    lambda f64: tf.sparse_tensor_dense_matmul(_sp([1.0, 2.0, 3.0]), tf.ones([4, 2], tf.float64)),
    lambda f64: tf.sparse_tensor_dense_matmul(_sp([1.0, 2.0, 3.0]), np.ones([4, 2])),
    lambda f64: tf.sparse_reduce_sum(_sp([1.0, 2.0, 3.0]), tf.constant(1, tf.int64)),
    lambda f64: tf.sparse_reduce_max_sparse(_sp([1.0, 2.0, 3.0]), tf.constant(1.0)),
])
def test_a_tensor_of_another_type_is_a_type_error(build):
    with pytest.raises(TypeError, match="does not match"):
        build(tf.constant([1.0, 2.0, 3.0], tf.float64))


def test_dense_matmul_takes_b_as_it_is(sess):
    # b is converted without a dtype (TF's wrapper): a list of floats is float32
    sp = _sp([1.0, 2.0, 3.0])
    b = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    dense = np.zeros([3, 4], np.float32)
    dense[0, 0], dense[1, 2], dense[2, 3] = 1, 2, 3
    np.testing.assert_allclose(sess.run(tf.sparse_tensor_dense_matmul(sp, b)),
                               dense @ np.array(b, np.float32))


def test_dense_matmul_and_add_gradients():
    rng = np.random.RandomState(3)
    v0, b0 = rng.randn(3), rng.randn(4, 2)
    v, b = tf.constant(v0), tf.constant(b0)
    sp = _sp(v)
    y = tf.sparse_tensor_dense_matmul(sp, b)
    assert compute_gradient_error([v, b], [[3], [4, 2]], y, [3, 2],
                                  x_init_value=[v0, b0]) < 1e-8
    d0 = rng.randn(3, 4)
    d = tf.constant(d0)
    z = tf.sparse_add(sp, d)
    assert compute_gradient_error([v, d], [[3], [3, 4]], z, [3, 4],
                                  x_init_value=[v0, d0]) < 1e-8
    r = tf.sparse_reduce_sum(sp, [1])
    assert compute_gradient_error(v, [3], r, [3], x_init_value=v0) < 1e-8


@pytest.mark.parametrize("adjoint_a", [False, True])
def test_sparse_dense_matmul_adds_products_in_entry_order(sess, adjoint_a, product_path):
    """Each output row is 0 + its products one after another in the entries' order (TF's
    loop), bit for bit what np.add.at gives; unsorted and repeated indices included."""
    rs = np.random.RandomState(5)
    n, rows, inner = 3000, 40, 500
    idx = np.stack([rs.randint(0, rows, n), rs.randint(0, inner, n)], 1).astype(np.int64)
    vals = (rs.randn(n) * 10).astype(np.float32)
    vals[:3] = [-0.0, np.inf, 1e-45]
    shape = [rows, inner] if not adjoint_a else [inner, rows]
    if adjoint_a:
        idx = idx[:, ::-1].copy()
    b = rs.randn(inner if not adjoint_a else inner, 8).astype(np.float32)
    got = sess.run(tf.sparse_tensor_dense_matmul(tf.SparseTensor(idx, vals, shape), b,
                                                 adjoint_a=adjoint_a))
    r, c = (idx[:, 0], idx[:, 1]) if not adjoint_a else (idx[:, 1], idx[:, 0])
    want = np.zeros((rows, 8), np.float32)
    with np.errstate(invalid="ignore"):
        np.add.at(want, r, vals[:, None] * b[c])
    assert got.tobytes() == want.tobytes()
