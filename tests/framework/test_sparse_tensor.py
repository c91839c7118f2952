"""SparseTensor / SparseTensorValue: construction, static shapes, Session fetch and feed,
conversion refusal (behaviour recorded from TF1)."""
import numpy as np
import pytest

import tensorweave as tf


def test_components_dtypes_and_static_shape(graph):
    sp = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])
    assert sp.indices.dtype == tf.int64 and sp.dense_shape.dtype == tf.int64
    assert sp.dtype == tf.float32 and sp.values.dtype == tf.float32
    assert sp.shape.as_list() == [3, 4] and sp.get_shape().as_list() == [3, 4]
    assert sp.indices.shape.as_list() == [2, 2]
    assert sp.op is sp.values.op and sp.graph is graph
    assert sp.indices.name == "SparseTensor/indices:0"
    assert sp.dense_shape.name == "SparseTensor/dense_shape:0"
    assert str(sp).startswith("SparseTensor(indices=Tensor(\"SparseTensor/indices:0\"")


def test_unknown_dense_shape_is_unknown(graph):
    shape = tf.placeholder(tf.int64, [3])
    sp = tf.SparseTensor(tf.placeholder(tf.int64, [None, 3]), tf.placeholder(tf.int32, [None]),
                         shape)
    assert sp.shape.as_list() == [None, None, None]


@pytest.mark.parametrize("indices,values,shape", [
    ([[0, 0]], [1.0, 2.0], [3, 4]),       # N mismatch
    ([0, 0], [1.0], [3, 4]),              # indices not a matrix
    ([[0, 0, 0]], [1.0], [3, 4]),         # rank mismatch
])
def test_inconsistent_components_raise_value_error(graph, indices, values, shape):
    with pytest.raises(ValueError):
        tf.SparseTensor(indices, values, shape)


def test_fetch_returns_sparse_tensor_value(sess):
    sp = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])
    v = sess.run(sp)
    assert isinstance(v, tf.SparseTensorValue)
    assert v._fields == ("indices", "values", "dense_shape")
    np.testing.assert_array_equal(v.indices, [[0, 0], [1, 2]])
    assert v.indices.dtype == np.int64 and v.values.dtype == np.float32
    np.testing.assert_array_equal(v.dense_shape, [3, 4])
    # inside structures, and through eval()
    both = sess.run({"sp": sp, "n": [sp.values]})
    np.testing.assert_array_equal(both["sp"].values, [1.0, 2.0])
    with sess.as_default():
        np.testing.assert_array_equal(sp.eval().values, [1.0, 2.0])


@pytest.mark.parametrize("feed", [
    tf.SparseTensorValue([[0, 1]], [5.0], [3, 2]),
    ([[0, 1]], [5.0], [3, 2]),
])
def test_feed_sparse_placeholder_round_trip(sess, feed):
    p = tf.sparse_placeholder(tf.float32)
    v = sess.run(p, {p: feed})
    assert isinstance(v, tf.SparseTensorValue)
    np.testing.assert_array_equal(v.indices, [[0, 1]])
    np.testing.assert_array_equal(v.values, np.array([5.0], np.float32))
    np.testing.assert_array_equal(v.dense_shape, [3, 2])
    np.testing.assert_array_equal(sess.run(tf.sparse.to_dense(p), {p: feed}),
                                  [[0, 5], [0, 0], [0, 0]])


def test_feed_rejects_bad_value(sess):
    p = tf.sparse_placeholder(tf.float32)
    with pytest.raises(TypeError, match="SparseTensorValue"):
        sess.run(p, {p: 5})
    # a sequence feeds the parts in order: here indices of the wrong rank
    with pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run(p, {p: [[0, 1]]})


def test_feed_indices_and_values_only(sess):
    """An (indices, values) pair leaves dense_shape to the placeholder's static shape; with
    none, the dense shape placeholder is unfed."""
    p = tf.sparse_placeholder(tf.float32, shape=[2, 3])
    for feed in (([[0, 1]], [5.0]), [[[0, 1]], [5.0]]):
        np.testing.assert_array_equal(sess.run(tf.sparse.to_dense(p), {p: feed}),
                                      [[0, 5, 0], [0, 0, 0]])
    v = sess.run(p, {p: ([[1, 2]], [7.0])})
    assert v.dense_shape.tolist() == [2, 3] and v.values.tolist() == [7.0]
    q = tf.sparse_placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for "
                                                            "placeholder tensor .* int64"):
        sess.run(tf.sparse.to_dense(q), {q: ([[0, 1]], [5.0])})


def test_operators_multiply_and_divide_by_dense(sess):
    """sparse * dense and sparse / dense keep the sparse indices (the dense side is
    broadcast to the sparse shape); `/` of integers divides in float64, `__div__` rounds
    toward zero."""
    sp = tf.SparseTensor([[0, 0], [1, 1]], [1.0, -2.0], [2, 2])
    for y, want in ((sp * tf.constant([[2.0], [3.0]]), [2.0, -6.0]), (sp * 2, [2.0, -4.0]),
                    (sp / 2.0, [0.5, -1.0]), (sp.__truediv__(2.0), [0.5, -1.0]),
                    (sp.__div__(tf.constant([[2.0, 4.0]])), [0.5, -0.5])):
        assert isinstance(y, tf.SparseTensor) and y.shape.as_list() == [2, 2]
        v = sess.run(y)
        assert v.indices.tolist() == [[0, 0], [1, 1]] and v.values.tolist() == want
    si = tf.SparseTensor([[0, 0], [1, 1]], [3, -5], [2, 2])
    assert (si / 2).dtype == tf.float64
    assert sess.run(si / 2).values.tolist() == [1.5, -2.5]
    assert (si.__div__(2)).dtype == tf.int32
    assert sess.run(si.__div__(2)).values.tolist() == [1, -2]
    assert sess.run(si * 2).values.tolist() == [6, -10]
    with pytest.raises(tf.errors.InvalidArgumentError, match="broadcasts dense to sparse only; "
                                                            r"got incompatible shapes: \[2,2\] "
                                                            r"vs. \[3\]"):
        sess.run(sp * tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        2.0 * sp  # TF1 defines no reflected operators on SparseTensor


def test_operator_gradients(sess):
    """d(v * d)/dv = d, d/dd sums v over the broadcast dims; d(v / d)/dd = -v / d**2."""
    sp = tf.SparseTensor([[0, 0], [1, 1]], [1.0, -2.0], [2, 2])
    d = tf.constant([[2.0], [3.0]])
    gv, gd = sess.run(tf.gradients((sp * d).values, [sp.values, d]))
    assert gv.tolist() == [2.0, 3.0] and gd.tolist() == [[1.0], [-2.0]]
    gv, gd = sess.run(tf.gradients((sp / d).values, [sp.values, d]))
    np.testing.assert_allclose(gv, [0.5, 1 / 3])
    np.testing.assert_allclose(gd, [[-0.25], [2 / 9]])


def test_from_value_and_is_sparse(graph):
    sp = tf.SparseTensor.from_value(tf.SparseTensorValue([[0]], [1], [2]))
    assert isinstance(sp, tf.SparseTensor)
    assert sp.indices.shape.as_list() == [1, 1] and sp.dtype == tf.int32
    assert tf.SparseTensor.from_value(sp) is sp
    assert tf.sparse.SparseTensor is tf.SparseTensor
    with pytest.raises(TypeError):
        tf.SparseTensor.from_value([1, 2])


def test_convert_to_tensor_refuses_sparse(graph):
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    with pytest.raises(TypeError, match="Failed to convert elements of SparseTensor"):
        tf.convert_to_tensor(sp)
    assert tf.convert_to_tensor_or_sparse_tensor(sp) is sp
    assert isinstance(tf.convert_to_tensor_or_sparse_tensor(
        tf.SparseTensorValue([[0]], [1.0], [1])), tf.SparseTensor)
    assert isinstance(tf.convert_to_tensor_or_sparse_tensor([1.0]), tf.Tensor)


def test_sparse_placeholder_names_and_shapes(graph):
    p = tf.sparse_placeholder(tf.float32, shape=[3, None], name="pp")
    assert p.shape.as_list() == [3, None]
    assert p.indices.name == "pp/indices:0" and p.indices.shape.as_list() == [None, 2]
    assert p.values.name == "pp/values:0" and p.values.shape.as_list() == [None]
    assert p.dense_shape.name == "pp/shape:0" and p.dense_shape.shape.as_list() == [2]
    q = tf.sparse_placeholder(tf.int64)
    assert q.shape.ndims is None and q.indices.shape.as_list() == [None, None]
    assert tf.sparse.placeholder is tf.sparse_placeholder


def test_sparse_placeholder_with_shape_checks_fed_rank(sess):
    p = tf.sparse_placeholder(tf.float32, shape=[3, None], name="pp")
    with pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run(p, {p: ([[0, 1]], [5.0], [3, 2, 1])})
    v = sess.run(tf.sparse.to_dense(p), {p: ([[0, 1]], [5.0], [3, 2])})
    np.testing.assert_array_equal(v, [[0, 5], [0, 0], [0, 0]])


def test_zero_preserving_unary_ops_map_a_sparse_tensors_values(sess):
    """TF applies abs, negative, sign, square, sqrt, the odd trig functions, erf and the
    scaled Bessel functions to the values; exp (exp(0) = 1) is no such op."""
    sp = tf.SparseTensor([[0, 0], [1, 1]], [-1.0, 4.0], [2, 2])
    for fn, ref in ((tf.abs, np.abs), (tf.negative, np.negative), (tf.square, np.square),
                    (tf.sign, np.sign), (tf.sin, np.sin), (tf.tanh, np.tanh)):
        out = fn(sp)
        assert isinstance(out, tf.SparseTensor)
        got = sess.run(out)
        assert got.indices.tolist() == [[0, 0], [1, 1]]
        np.testing.assert_allclose(got.values, ref(np.array([-1.0, 4.0])), rtol=1e-6)
    np.testing.assert_allclose(sess.run(tf.sqrt(tf.abs(sp))).values, [1.0, 2.0])
    with pytest.raises(TypeError):
        tf.exp(sp)
