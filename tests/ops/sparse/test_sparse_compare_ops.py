"""edit_distance, sparse.cross and sparse.bincount (values checked with TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf


def _hyp():
    return tf.SparseTensor([[0, 0, 0], [1, 0, 0], [1, 0, 1]], ["a", "b", "c"], [2, 1, 2])


def _truth():
    return tf.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 0, 2]],
                           ["a", "b", "d", "c"], [2, 2, 3])


def test_edit_distance(sess):
    d = tf.edit_distance(_hyp(), _truth())
    assert d.dtype == tf.float32 and d.shape.as_list() == [2, 2]
    np.testing.assert_allclose(sess.run(d), [[np.inf, 1.0], [1 / 3, 0.0]])
    raw = tf.edit_distance(_hyp(), _truth(), normalize=False)
    np.testing.assert_array_equal(sess.run(raw), [[1, 1], [1, 0]])
    # a longer case against a plain dynamic-programming reference
    a, b = list("kitten"), list("sitting")
    h = tf.SparseTensor([[0, i] for i in range(len(a))], a, [1, len(a)])
    t = tf.SparseTensor([[0, i] for i in range(len(b))], b, [1, len(b)])
    assert sess.run(tf.edit_distance(h, t, normalize=False)).tolist() == [3.0]


def test_edit_distance_errors(graph):
    with pytest.raises(TypeError, match="Hypothesis must be a SparseTensor"):
        tf.edit_distance(tf.constant([1]), tf.SparseTensor([[0, 0]], [1], [1, 1]))
    with pytest.raises(TypeError, match="does not match type int32"):
        tf.edit_distance(tf.SparseTensor([[0, 0]], [1], [1, 1]),
                         tf.SparseTensor([[0, 0]], [1.0], [1, 1]))
    with pytest.raises(ValueError, match="rank at least 2"):
        tf.edit_distance(tf.SparseTensor([[0]], [1], [1]), tf.SparseTensor([[0]], [1], [1]))


def test_sparse_cross(sess):
    a = tf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
    b = tf.SparseTensor([[0, 0], [0, 1]], ["d", "e"], [1, 2])
    c = sess.run(tf.sparse.cross([a, b, tf.constant([["f", "g"]])]))
    assert c.values.tolist() == [b"a_X_d_X_f", b"a_X_d_X_g", b"a_X_e_X_f", b"a_X_e_X_g",
                                 b"b_X_d_X_f", b"b_X_d_X_g", b"b_X_e_X_f", b"b_X_e_X_g"]
    assert c.dense_shape.tolist() == [1, 8]
    empty_row = sess.run(tf.sparse.cross([tf.SparseTensor([[1, 0]], ["a"], [2, 2]),
                                          tf.constant([["f"], ["g"]])]))
    assert empty_row.indices.tolist() == [[1, 0]] and empty_row.values.tolist() == [b"a_X_g"]
    ints = sess.run(tf.sparse.cross([tf.SparseTensor([[0, 0], [0, 1]],
                                                     tf.constant([1, 2], tf.int64), [1, 2]),
                                     tf.constant([["d"]])], separator="+"))
    assert ints.values.tolist() == [b"1+d", b"2+d"]
    with pytest.raises(TypeError, match="Inputs must be a list"):
        tf.sparse.cross(tf.constant([["a"]]))


def test_sparse_bincount(sess):
    sp = tf.SparseTensor([[0, 0], [0, 1], [1, 1]], [1, 3, 1], [2, 3])
    c = sess.run(tf.sparse.bincount(sp))
    assert c.indices.tolist() == [[1], [3]] and c.values.tolist() == [2, 1]
    assert c.dense_shape.tolist() == [4]
    rows = sess.run(tf.sparse.bincount([[1, 3, 1], [2, 2, 5]], axis=-1, minlength=4,
                                       binary_output=True))
    assert rows.indices.tolist() == [[0, 1], [0, 3], [1, 2], [1, 5]]
    assert rows.values.tolist() == [1, 1, 1, 1] and rows.dense_shape.tolist() == [2, 6]
    w = sess.run(tf.sparse.bincount([1, 3, 1], weights=[0.5, 1.0, 2.0]))
    assert w.values.dtype == np.float32 and w.values.tolist() == [2.5, 1.0]
    m = sess.run(tf.sparse.bincount([1, 3, 7], maxlength=4))
    assert m.indices.tolist() == [[1], [3]] and m.dense_shape.tolist() == [4]
    sw = sess.run(tf.sparse.bincount(
        sp, weights=tf.SparseTensor([[0, 0], [0, 1], [1, 1]], [1.0, 2.0, 3.0], [2, 3]),
        axis=-1))
    assert sw.indices.tolist() == [[0, 1], [0, 3], [1, 1]] and sw.dense_shape.tolist() == [2, 4]
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        sess.run(tf.sparse.bincount(p), {p: [1, -3]})
    with pytest.raises(ValueError, match="Only 0 and -1"):
        tf.sparse.bincount([1], axis=1)
