"""sparse.reshape, slice, split, concat, transpose, expand_dims and reset_shape (values
checked with TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_I, _V = [[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0]


def _a():
    return tf.SparseTensor(_I, _V, [2, 3])


def _dense(value):
    out = np.zeros(value.dense_shape, np.asarray(value.values).dtype)
    out[tuple(np.asarray(value.indices).T)] = value.values
    return out


def test_reshape(sess):
    r = tf.sparse.reshape(_a(), [3, -1])
    assert r.shape.as_list() == [3, 2]
    v = sess.run(r)
    np.testing.assert_array_equal(_dense(v), _dense(sess.run(_a())).reshape(3, 2))
    assert v.dense_shape.tolist() == [3, 2]
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 6 elements"):
        tf.sparse_reshape(_a(), [4, -1])
    p = tf.placeholder(tf.int64, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="requires a multiple of 4"):
        sess.run(tf.sparse.reshape(_a(), p), {p: [4, -1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="only one output dimension"):
        sess.run(tf.sparse.reshape(_a(), p), {p: [-1, -1]})


def test_slice_and_gradient(sess):
    s = sess.run(tf.sparse.slice(_a(), [0, 1], [2, 5]))
    assert s.indices.tolist() == [[0, 1], [1, 0]] and s.values.tolist() == [2.0, 3.0]
    assert s.dense_shape.tolist() == [2, 2]
    v = tf.placeholder(tf.float64, [3])
    y = tf.sparse_slice(tf.SparseTensor(_I, v, [2, 3]), [0, 1], [2, 2]).values
    assert compute_gradient_error(v, [3], y, [2], x_init_value=np.array(_V)) < 1e-8


def test_split(sess):
    sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1], [1, 4]], [1, 2, 3, 4], [2, 5])
    parts = tf.sparse.split(sp_input=sp, num_split=2, axis=1)
    assert len(parts) == 2 and all(isinstance(p, tf.SparseTensor) for p in parts)
    a, b = sess.run(parts)
    assert a.dense_shape.tolist() == [2, 3] and b.dense_shape.tolist() == [2, 2]
    assert a.indices.tolist() == [[0, 0], [0, 2], [1, 1]] and b.indices.tolist() == [[1, 1]]
    assert b.values.tolist() == [4]
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        tf.sparse_split(sp, 2, 1)


def test_concat_and_gradient(sess):
    other = tf.SparseTensor([[0, 1], [1, 0]], [7.0, 8.0], [2, 2])
    c = tf.sparse.concat(1, [_a(), other])
    assert c.shape.as_list() == [2, 5]
    v = sess.run(c)
    assert v.indices.tolist() == [[0, 0], [0, 2], [0, 4], [1, 1], [1, 3]]
    assert v.values.tolist() == [1.0, 2.0, 7.0, 3.0, 8.0]
    e = sess.run(tf.sparse_concat(0, [_a(), tf.SparseTensor([[0, 3]], [7.0], [1, 4])],
                                  expand_nonconcat_dim=True))
    assert e.dense_shape.tolist() == [3, 4] and e.indices.tolist()[-1] == [2, 3]
    p = tf.placeholder(tf.float64, [3])
    q = tf.placeholder(tf.float64, [2])
    y = tf.sparse.concat(1, [tf.SparseTensor(_I, p, [2, 3]),
                             tf.SparseTensor([[0, 1], [1, 0]], q, [2, 2])]).values
    y = y * np.arange(1.0, 6.0)
    assert compute_gradient_error([p, q], [[3], [2]], y, [5]) < 1e-8
    with pytest.raises(tf.errors.InvalidArgumentError, match="not of the same shape"):
        sess.run(tf.sparse.concat(1, [_a(), tf.SparseTensor([[0, 0]], [1.0], [3, 3])]))


def test_transpose(sess):
    t = tf.sparse.transpose(_a())
    assert t.shape.as_list() == [3, 2]
    v = sess.run(t)
    assert v.indices.tolist() == [[0, 0], [1, 1], [2, 0]] and v.values.tolist() == [1, 3, 2]
    sp3 = tf.SparseTensor([[0, 1, 2], [1, 0, 0]], [1.0, 2.0], [2, 3, 4])
    w = sess.run(tf.sparse_transpose(sp3, [2, 0, 1]))
    np.testing.assert_array_equal(_dense(w), _dense(sess.run(sp3)).transpose(2, 0, 1))


def test_expand_dims(sess):
    for axis, want in ((1, [2, 1, 3]), (-1, [2, 3, 1]), (0, [1, 2, 3])):
        e = tf.sparse.expand_dims(_a(), axis)
        assert e.shape.as_list() == want
        np.testing.assert_array_equal(_dense(sess.run(e)),
                                      np.expand_dims(_dense(sess.run(_a())), axis))


def test_reset_shape(sess):
    tight = sess.run(tf.sparse.reset_shape(tf.SparseTensor(_I, _V, [5, 9])))
    assert tight.dense_shape.tolist() == [2, 3]
    big = tf.sparse_reset_shape(_a(), [4, 5])
    assert big.shape.as_list() == [4, 5]
    assert sess.run(big).dense_shape.tolist() == [4, 5]
    with pytest.raises(ValueError, match="smaller than the shape"):
        tf.sparse.reset_shape(_a(), [1, 5])
    with pytest.raises(ValueError, match="rank"):
        tf.sparse.reset_shape(_a(), [1, 5, 2])
    p = tf.placeholder(tf.int64, [2])
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.sparse.reset_shape(_a(), p), {p: [1, 5]})


def test_reshape_shape_arguments_as_tf(sess):
    # TF casts the new shape to int64; two -1s with a known shape fail at build time
    r = tf.sparse.reshape(_a(), tf.constant([3, 2]))
    np.testing.assert_array_equal(_dense(sess.run(r)), _dense(sess.run(_a())).reshape(3, 2))
    assert r.shape.as_list() == [3, 2]
    with pytest.raises(ValueError, match="At most one dimension can be inferred"):
        tf.sparse_reshape(_a(), [-1, -1])
    with pytest.raises(TypeError, match="integer"):
        tf.sparse_reshape(_a(), tf.constant([3.0, 2.0]))
    unknown = tf.sparse_placeholder(tf.float32)  # unknown shape: checked at run time
    out = tf.sparse_reshape(unknown, [-1, -1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="only one output dimension"):
        sess.run(out, {unknown: tf.SparseTensorValue(_I, _V, [2, 3])})


def test_concat_of_mixed_dtypes_is_a_type_error():
    b = tf.SparseTensor(_I, tf.constant(_V, tf.float64), [2, 3])
    with pytest.raises(TypeError):
        tf.sparse_concat(1, [_a(), b])


def test_transpose_and_reset_shape_take_any_integer_type(sess):
    t = tf.sparse_transpose(_a(), tf.constant([1, 0], tf.int64))
    np.testing.assert_array_equal(_dense(sess.run(t)), _dense(sess.run(_a())).T)
    with pytest.raises(TypeError):
        tf.sparse_transpose(_a(), tf.constant([1.0, 0.0]))
    grown = tf.sparse_reset_shape(_a(), tf.constant([4, 5], tf.int32))
    assert sess.run(grown).dense_shape.tolist() == [4, 5]
