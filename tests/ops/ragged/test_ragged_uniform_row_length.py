"""RaggedTensor.from_uniform_row_length and the uniform_row_length it keeps: values,
static shapes and errors recorded from TF 2.21 compat.v1 graph mode."""
import numpy as np
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


def _u():
    """[3, 2, (r)]: a uniform dimension over ragged rows."""
    inner = tf.ragged.constant([[1, 2], [3], [4, 5, 6], [7], [], [8]])
    return tf.RaggedTensor.from_uniform_row_length(inner, 2)


def _d():
    """[2, 3]: a uniform dimension over dense values."""
    return tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4, 5, 6]), 3)


def test_shape_and_parts(sess):
    u, d = _u(), _d()
    assert u.shape.as_list() == [3, 2, None] and u.ragged_rank == 2
    assert d.shape.as_list() == [2, 3] and d.ragged_rank == 1
    assert u.uniform_row_length.dtype == tf.int64 and _run(sess, u.uniform_row_length) == 2
    assert _run(sess, u) == [[[1, 2], [3]], [[4, 5, 6], [7]], [[], [8]]]
    assert u.row_lengths().shape.as_list() == [3]
    assert _run(sess, u.row_lengths()) == [2, 2, 2]
    assert _run(sess, u.nrows()) == 3 and _run(sess, u.row_splits) == [0, 2, 4, 6]
    assert _run(sess, u.bounding_shape()) == [3, 2, 3]
    assert tf.RaggedTensorSpec.from_value(u) == tf.RaggedTensorSpec([3, 2, None], tf.int32,
                                                                     2, tf.int64)


def test_to_tensor(sess):
    dense = _u().to_tensor()
    assert dense.shape.as_list()[:2] == [3, 2]
    assert _run(sess, dense) == [[[1, 2, 0], [3, 0, 0]], [[4, 5, 6], [7, 0, 0]],
                                 [[0, 0, 0], [8, 0, 0]]]
    assert _d().to_tensor().shape.as_list() == [2, 3]
    assert _run(sess, _d().to_tensor()) == [[1, 2, 3], [4, 5, 6]]


def test_kept_by_ops(sess):
    for out in (_u() * 2, _u().with_values(_u().values * 3),
                _u().with_row_splits_dtype(tf.int32), tf.identity(_u()),
                tf.add(_u(), _u()), _u()[1:]):
        assert out.uniform_row_length is not None
        assert out.shape.as_list()[1:] == [2, None]
    assert _run(sess, _u()[1:]) == [[[4, 5, 6], [7]], [[], [8]]]
    assert _u().with_row_splits_dtype(tf.int32).uniform_row_length.dtype == tf.int32
    assert _run(sess, tf.stop_gradient(_d())) == [[1, 2, 3], [4, 5, 6]]


def test_indexing_the_uniform_dimension(sess):
    assert _run(sess, _u()[1]) == [[4, 5, 6], [7]]
    first = _u()[:, 0]
    assert first.shape.as_list() == [3, None]
    assert _run(sess, first) == [[1, 2], [4, 5, 6], []]
    assert _run(sess, _u()[:, -1]) == [[3], [7], [8]]
    assert _run(sess, _d()[:, 1]) == [2, 5]
    tail = _u()[:, 1:]
    assert tail.shape.as_list() == [3, 1, None]
    assert _run(sess, tail) == [[[3]], [[7]], [[8]]]
    for index in (3, -4):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Index out of bounds when indexing into a ragged tensor"):
            sess.run(_d()[:, index])   # at build or run time, as TF (both for a constant)
    index = tf.placeholder(tf.int32, [])
    last = _d()[:, index]
    assert sess.run(last, {index: -1}).tolist() == [3, 6]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Index out of bounds"):
        sess.run(last, {index: 3})


def test_nrows_and_validation(sess):
    zero = tf.RaggedTensor.from_uniform_row_length(tf.constant([], tf.int32), 0, nrows=3)
    assert zero.shape.as_list() == [3, 0] and _run(sess, zero) == [[], [], []]
    bad = tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4, 5]), 2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"\[uniform_row_length\] \[2\] \[times nrows\] \[2\] "
                             r"\[must equal nvals\] \[5\]"):
        sess.run(bad)
    with pytest.raises(ValueError, match="uniform_row_length=2 times nrows=3 must equal "
                                         "nvals=4"):
        tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4]), 2, nrows=3)
    with pytest.raises(ValueError, match="UniformRowLength must have dtype int32 or int64"):
        tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4]), 2.0)
    with pytest.raises(ValueError, match="nonnegative"):
        tf.RaggedTensor.from_uniform_row_length(tf.constant([1, 2, 3, 4]), -2)


def test_dynamic_length(sess):
    values = tf.placeholder(tf.int32, [None])
    length = tf.placeholder(tf.int64, [])
    rt = tf.RaggedTensor.from_uniform_row_length(values, length)
    assert rt.shape.as_list() == [None, None]
    assert sess.run(rt, {values: [1, 2, 3, 4, 5, 6], length: 2}).to_list() == \
        [[1, 2], [3, 4], [5, 6]]
    assert sess.run(rt.nrows(), {values: [], length: 0}) == 0


def test_gradient_through_uniform_rows(sess):
    x0 = np.array([1., 2., 3., 4., 5., 6.], np.float32)
    x = tf.placeholder(tf.float32, [6])
    rt = tf.RaggedTensor.from_uniform_row_length(x, 3)
    loss = tf.reduce_sum(rt[:, 1] * rt.to_tensor()[:, 2])
    grad = sess.run(tf.convert_to_tensor(tf.gradients(loss, x)[0]), {x: x0})
    eps = 1e-2
    numeric = [(sess.run(loss, {x: x0 + eps * e}) - sess.run(loss, {x: x0 - eps * e}))
               / (2 * eps) for e in np.eye(6, dtype=np.float32)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-2)
    np.testing.assert_allclose(grad, [0., 3., 2., 0., 6., 5.])


def test_uniform_dimensions_of_other_ops(sess):
    lengths = _u().row_lengths(axis=2)
    assert lengths.uniform_row_length is not None and lengths.shape.as_list() == [3, 2]
    assert _run(sess, lengths) == [[2, 1], [3, 1], [0, 1]]
    outer = tf.expand_dims(_u(), 0)
    assert outer.ragged_rank == 3 and outer.uniform_row_length is not None
    assert _run(sess, outer) == [[[[1, 2], [3]], [[4, 5, 6], [7]], [[], [8]]]]
    inner = tf.expand_dims(tf.ragged.constant([[1, 2], [3]]), 1)
    assert inner.shape.as_list() == [2, 1, None]
    assert _run(sess, inner) == [[[1, 2]], [[3]]]
    shape = tf.shape(_u())
    assert _run(sess, shape[1]) == 2
    with pytest.raises(ValueError, match="Index 2 is not uniform"):
        shape[2]
    length = tf.placeholder(tf.int64, [])
    dynamic = tf.shape(tf.RaggedTensor.from_uniform_row_length(tf.range(6), length))
    assert sess.run(dynamic[1], {length: 3}) == 3


def test_slicing_a_dynamic_uniform_dimension(sess):
    length = tf.placeholder(tf.int64, [])
    start = tf.placeholder(tf.int32, [])
    rt = tf.RaggedTensor.from_uniform_row_length(tf.range(12), length)
    sliced = rt[:, start:]
    assert sliced.uniform_row_length is not None
    feed = {length: 4, start: -3}
    assert sess.run(sliced, feed).to_list() == [[1, 2, 3], [5, 6, 7], [9, 10, 11]]
    assert sess.run(sliced.uniform_row_length, feed) == 3
    assert sess.run(rt[:, 1:10].uniform_row_length, {length: 3}) == 2
