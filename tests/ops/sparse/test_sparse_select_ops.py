"""sparse.fill_empty_rows, retain, mask, merge, to_indicator and eye (values checked with
TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


def test_fill_empty_rows(sess):
    sp = tf.SparseTensor([[1, 0], [3, 2], [1, 1]], [1.0, 2.0, 3.0], [5, 3])
    out, empty = tf.sparse.fill_empty_rows(sp, -1.0)
    assert isinstance(out, tf.SparseTensor) and out.shape.as_list() == [5, 3]
    o, e = sess.run([out, empty])
    assert o.indices.tolist() == [[0, 0], [1, 0], [1, 1], [2, 0], [3, 2], [4, 0]]
    assert o.values.tolist() == [-1.0, 1.0, 3.0, -1.0, 2.0, -1.0]
    assert e.tolist() == [True, False, True, False, True]
    with pytest.raises(tf.errors.InvalidArgumentError, match="is invalid"):
        sess.run(tf.sparse_fill_empty_rows(tf.SparseTensor([[7, 0]], [1.0], [5, 3]), 0.0)[0])


def test_fill_empty_rows_gradient(graph):
    v = tf.placeholder(tf.float64, [3])
    d = tf.placeholder(tf.float64, [])
    out, _ = tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0], [3, 2], [1, 1]], v, [5, 3]), d)
    y = out.values * np.arange(1.0, 7.0)
    assert compute_gradient_error([v, d], [[3], []], y, [6]) < 1e-8


def test_retain(sess):
    sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0], [2, 3])
    r = tf.sparse.retain(sp, [True, False, True])
    assert r.shape.as_list() == [2, 3]
    v = sess.run(r)
    assert v.indices.tolist() == [[0, 0], [1, 1]] and v.values.tolist() == [1.0, 3.0]
    with pytest.raises(ValueError):
        tf.sparse_retain(sp, [True, False])


def test_mask(sess):
    a = tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([0, 4, 7]),
                         tf.constant([10, 1]))
    m = tf.sparse.mask(a, [4])
    assert isinstance(m, tf.IndexedSlices)
    v = sess.run(m)
    assert v.indices.tolist() == [0, 7] and v.values.tolist() == [[1.0], [3.0]]
    assert tf.sparse_mask is tf.sparse.mask


def test_merge_and_to_indicator(sess):
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([2, 0, 3], tf.int64), [2, 2])
    vals = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 0.6, 0.7], [2, 2])
    m = sess.run(tf.sparse.merge(ids, vals, 4))
    assert m.indices.tolist() == [[0, 0], [0, 2], [1, 3]]
    np.testing.assert_allclose(m.values, [0.6, 0.5, 0.7])
    assert m.dense_shape.tolist() == [2, 4]
    ind = tf.sparse_to_indicator(ids, 4)
    assert ind.dtype == tf.bool
    assert sess.run(ind).tolist() == [[True, False, True, False], [False, False, False, True]]
    with pytest.raises(TypeError, match="not an integer type"):
        tf.sparse.merge(vals, vals, 4)


def test_merge_of_several_id_tensors(sess):
    """One new dimension per id SparseTensor, of the matching vocabulary size."""
    idx = [[0, 0], [0, 1], [1, 0]]
    rows = tf.SparseTensor(idx, tf.constant([1, 0, 1], tf.int64), [2, 2])
    cols = tf.SparseTensor(idx, tf.constant([2, 1, 0], tf.int64), [2, 2])
    vals = tf.SparseTensor(idx, [10.0, 20.0, 5.0], [2, 2])
    m = tf.sparse.merge([rows, cols], vals, [2, 3])
    assert m.shape.as_list()[1:] == [2, 3]
    v = sess.run(m)
    assert v.indices.tolist() == [[0, 0, 1], [0, 1, 2], [1, 1, 0]]
    assert v.values.tolist() == [20.0, 10.0, 5.0] and v.dense_shape.tolist() == [2, 2, 3]
    assert tf.sparse.merge([rows, cols], vals, [2, tf.constant(3)]).shape.as_list()[1:] == \
        [2, 3]
    with pytest.raises(TypeError, match="vocab_size has to be a list of Tensors or Python "
                                        "ints. Found <class 'int'>"):
        tf.sparse.merge([rows, cols], vals, 3)
    with pytest.raises(TypeError, match="vocab_size has to be a Tensor or Python int. Found "
                                        "<class 'list'>"):
        tf.sparse.merge(rows, vals, [3])
    with pytest.raises(ValueError, match="sp_ids and vocab_size have to have equal lengths"):
        tf.sparse.merge([rows, cols], vals, [3])


def test_eye(sess):
    e = tf.sparse.eye(2, 3, dtype=tf.int32)
    assert e.dtype == tf.int32
    v = sess.run(e)
    assert v.indices.tolist() == [[0, 0], [1, 1]] and v.values.tolist() == [1, 1]
    assert v.dense_shape.tolist() == [2, 3]
    assert sess.run(tf.sparse.eye(3)).values.tolist() == [1.0, 1.0, 1.0]


def test_fill_empty_rows_indicator_length_is_known(sess):
    # one indicator per row of a constant dense shape (TF's shape function)
    sp = tf.SparseTensor([[1, 0], [3, 2]], [1.0, 2.0], [5, 3])
    out, empty = tf.sparse_fill_empty_rows(sp, -1.0)
    assert empty.shape.as_list() == [5]
    assert sess.run(empty).tolist() == [True, False, True, False, True]
    unknown = tf.sparse_placeholder(tf.float32, shape=[None, 3])
    assert tf.sparse_fill_empty_rows(unknown, 0.0)[1].shape.as_list() == [None]


def test_retain_takes_a_numeric_mask(sess):
    # as TF's where(): nonzero entries count as True
    sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0], [2, 3])
    for mask in ([1, 0, 2], tf.constant([1.0, 0.0, -1.0])):
        out = sess.run(tf.sparse_retain(sp, mask))
        assert out.indices.tolist() == [[0, 0], [1, 1]] and out.values.tolist() == [1.0, 3.0]
