"""SparseToDense (sparse_tensor_to_dense, sparse_to_dense), SparseReorder, from_dense:
values against a loop reference, TF1 static shapes and error messages, gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def _dense_reference(indices, values, shape, default):
    out = np.full(shape, default, dtype=np.asarray(values).dtype)
    for idx, v in zip(indices, np.broadcast_to(values, (len(indices),))):
        out[tuple(idx)] = v
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
def test_sparse_tensor_to_dense_values(sess, dtype):
    idx = [[0, 1], [1, 0], [2, 3]]
    vals = np.array([1, 2, 3], dtype)
    d = tf.sparse_tensor_to_dense(tf.SparseTensor(idx, vals, [3, 4]))
    assert d.dtype == tf.as_dtype(dtype) and d.shape.as_list() == [3, 4]
    out = sess.run(d)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, _dense_reference(idx, vals, [3, 4], 0))
    d7 = tf.sparse.to_dense(tf.SparseTensor(idx, vals, [3, 4]), default_value=7)
    np.testing.assert_array_equal(sess.run(d7), _dense_reference(idx, vals, [3, 4], 7))


def test_sparse_tensor_to_dense_strings_and_3d(sess):
    out = sess.run(tf.sparse.to_dense(tf.SparseTensor([[0, 1], [1, 0]], ["a", "b"], [2, 2])))
    np.testing.assert_array_equal(out, np.array([[b"", b"a"], [b"b", b""]], dtype=object))
    idx = [[0, 0, 1], [1, 2, 0]]
    out = sess.run(tf.sparse.to_dense(tf.SparseTensor(idx, [5, 6], [2, 3, 2])))
    np.testing.assert_array_equal(out, _dense_reference(idx, np.array([5, 6]), [2, 3, 2], 0))


def test_sparse_tensor_to_dense_static_shape_from_placeholder_shape(graph):
    sp = tf.SparseTensor(tf.placeholder(tf.int64, [None, 3]), tf.placeholder(tf.float32, [None]),
                         tf.placeholder(tf.int64, [3]))
    assert tf.sparse.to_dense(sp).shape.as_list() == [None, None, None]
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sparse.to_dense(tf.constant([1.0]))


@pytest.mark.parametrize("indices,fragment", [
    ([[0, 1], [0, 0]], "indices[1] = [0,0] is out of order"),
    ([[0, 1], [0, 1]], "indices[1] = [0,1] is repeated"),
    ([[0, 1], [5, 1]], "indices[1] = [5,1] is out of bounds: need 0 <= index < [2,2]"),
    ([[-1, 0]], "indices[0] = [-1,0] is out of bounds"),
])
def test_validate_indices_errors(sess, indices, fragment):
    d = tf.sparse_tensor_to_dense(tf.SparseTensor(indices, [1] * len(indices), [2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        sess.run(d)
    assert fragment in str(e.value)


def test_without_validation(sess):
    # unordered is accepted; later duplicates win; out of bounds still fails
    d = tf.sparse_to_dense([[0, 1], [0, 0]], [2, 3], [1, 2], validate_indices=False)
    np.testing.assert_array_equal(sess.run(d), [[2, 1, 0], [0, 0, 0]])
    d = tf.sparse_to_dense([[0, 1], [0, 1]], [2, 3], 1.0, validate_indices=False)
    np.testing.assert_array_equal(sess.run(d), [[0, 1, 0], [0, 0, 0]])
    bad = tf.sparse_tensor_to_dense(tf.SparseTensor([[0, 1], [5, 1]], [1, 2], [2, 2]),
                                    validate_indices=False)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Indices are not valid \(out of bounds\).  Shape: \[2,2\]"):
        sess.run(bad)


def test_sparse_to_dense_index_forms(sess):
    np.testing.assert_array_equal(sess.run(tf.sparse_to_dense([1, 3], [5], [7, 8], -1)),
                                  [-1, 7, -1, 8, -1])
    np.testing.assert_array_equal(sess.run(tf.sparse_to_dense(2, [4], 9)), [0, 0, 9, 0])
    d = tf.sparse_to_dense([[0, 1]], [2, 3], 1.0)
    assert d.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(sess.run(d), [[0, 1, 0], [0, 0, 0]])
    assert tf.sparse_to_dense(tf.placeholder(tf.int32), tf.placeholder(tf.int32, [3]),
                              1.0).shape.as_list() == [None, None, None]


def test_sparse_to_dense_value_shape_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"sparse_values has incorrect shape \[2\], should be \[\] or \[1\]"):
        sess.run(tf.sparse_to_dense([[0, 1]], [2, 3], [1.0, 2.0]))
    with pytest.raises(ValueError):
        tf.sparse_to_dense([[0, 1]], [2, 3], [1.0], [2.0, 3.0])  # static: default not scalar


def test_sparse_to_dense_gradients(sess):
    v = tf.constant([1.0, 2.0, 3.0], tf.float64)
    y = tf.sparse_to_dense([[0, 1], [1, 0], [1, 1]], [2, 2], v)
    assert compute_gradient_error(v, [3], y, [2, 2]) < 1e-6
    d = tf.constant(1.5, tf.float64)
    y = tf.sparse_to_dense([[0, 1], [1, 0]], [2, 2], v[:2], d)
    assert compute_gradient_error(d, [], y, [2, 2]) < 1e-6
    s = tf.constant(0.5, tf.float64)  # one value for every index
    assert compute_gradient_error(s, [], tf.sparse_to_dense([1, 3], [4], s), [4]) < 1e-6
    x = tf.placeholder(tf.float32, [2])
    dd = tf.sparse_tensor_to_dense(tf.SparseTensor([[0, 0], [1, 1]], x, [2, 2]),
                                   default_value=2.0)
    g = tf.gradients(tf.reduce_sum(dd * 3), x)[0]
    np.testing.assert_array_equal(sess.run(g, {x: [1, 2]}), [3, 3])


def test_sparse_reorder(sess):
    sp = tf.SparseTensor([[1, 0], [0, 1], [0, 0]], ["a", "b", "c"], [2, 2])
    r = tf.sparse.reorder(sp)
    assert r.shape.as_list() == [2, 2] and r.dense_shape is sp.dense_shape
    assert r.indices.shape.as_list() == [3, 2] and r.values.shape.as_list() == [3]
    v = sess.run(r)
    np.testing.assert_array_equal(v.indices, [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(v.values, np.array([b"c", b"b", b"a"], dtype=object))
    # a random permutation of a 3-D index set comes back sorted lexicographically
    rng = np.random.RandomState(1)
    idx = np.array([[i, j, k] for i in range(3) for j in range(2) for k in range(2)])
    perm = rng.permutation(len(idx))
    v = sess.run(tf.sparse_reorder(tf.SparseTensor(idx[perm], perm.astype(np.float32),
                                                   [3, 2, 2])))
    np.testing.assert_array_equal(v.indices, idx)
    np.testing.assert_array_equal(v.values, np.arange(len(idx)))


def test_sparse_reorder_unknown_shapes_and_gradient(sess):
    r = tf.sparse.reorder(tf.SparseTensor(tf.placeholder(tf.int64, [None, 2]),
                                          tf.placeholder(tf.float32),
                                          tf.placeholder(tf.int64, [2])))
    assert r.indices.shape.as_list() == [None, 2] and r.values.shape.as_list() == [None]
    assert r.shape.as_list() == [None, None]
    v = tf.constant([1.0, 2.0, 3.0], tf.float64)
    r = tf.sparse.reorder(tf.SparseTensor([[1, 0], [0, 1], [0, 0]], v, [2, 2]))
    g = tf.gradients(r.values * tf.constant([1.0, 10.0, 100.0], tf.float64), v)[0]
    np.testing.assert_array_equal(sess.run(g), [100.0, 10.0, 1.0])
    assert compute_gradient_error(v, [3], r.values, [3]) < 1e-6


def test_from_dense(sess):
    sp = tf.sparse.from_dense(tf.constant([[0, 1], [2, 0]]))
    assert sp.shape.as_list() == [2, 2]
    v = sess.run(sp)
    np.testing.assert_array_equal(v.indices, [[0, 1], [1, 0]])
    np.testing.assert_array_equal(v.values, [1, 2])
    np.testing.assert_array_equal(v.dense_shape, [2, 2])
    np.testing.assert_array_equal(sess.run(tf.sparse.to_dense(sp)), [[0, 1], [2, 0]])


def test_default_value_of_another_dtype_is_a_type_error(sess):
    with pytest.raises(TypeError, match="does not match"):
        tf.sparse_to_dense([[0]], [2], tf.constant([1.0]),
                           default_value=tf.constant(0.0, tf.float64))
    sp = tf.SparseTensor([[0]], [1.0], [2])
    with pytest.raises(TypeError, match="does not match"):
        tf.sparse_tensor_to_dense(sp, default_value=tf.constant(0.0, tf.float64))
    # Python values are converted to the values' type
    assert sess.run(tf.sparse_to_dense([[0]], [2], [1.5], default_value=2)).tolist() == \
        [1.5, 2.0]
    assert sess.run(tf.sparse_tensor_to_dense(sp, default_value=tf.constant(7.0))).tolist() \
        == [1.0, 7.0]
