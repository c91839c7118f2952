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
        sess.run(p, {p: [[0, 1]]})


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
    with pytest.raises(TypeError):
        tf.identity(sp)
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
