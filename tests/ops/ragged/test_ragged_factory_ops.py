"""tf.ragged.constant and constant_value (values recorded from TF 2.21 compat.v1)."""
import numpy as np
import pytest

import tensorweave as tf


def test_constant_ranks_and_shapes(sess):
    rr1 = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    assert rr1.shape.as_list() == [2, None, 2]
    assert sess.run(rr1).to_list() == [[[1, 2], [3, 4]], [[5, 6]]]
    inner = tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], inner_shape=(2,))
    assert inner.ragged_rank == 1
    assert sess.run(inner).to_list() == [[[1, 2], [3, 4]], [[5, 6]]]
    assert sess.run(tf.ragged.constant([[[1, 2]], []], ragged_rank=1)).to_list() == [
        [[1, 2]], []]
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert nested.ragged_rank == 2 and nested.shape.as_list() == [2, None, None]


def test_constant_dtypes(sess):
    assert tf.ragged.constant([[1, 2], [3]]).dtype == tf.int32
    assert tf.ragged.constant([[], []]).dtype == tf.float32
    assert sess.run(tf.ragged.constant([[], []])).to_list() == [[], []]
    assert tf.ragged.constant([[1, 2], [3]], dtype=tf.float64).dtype == tf.float64
    assert sess.run(tf.ragged.constant([["a", "b"], ["c"]])).to_list() == [[b"a", b"b"],
                                                                          [b"c"]]
    int32_splits = tf.ragged.constant([[1, 2], [3]], row_splits_dtype=tf.int32)
    assert int32_splits.row_splits.dtype == tf.int32
    assert sess.run(tf.ragged.constant(5)) == 5
    assert isinstance(tf.ragged.constant([[1, 2]], ragged_rank=0), tf.Tensor)


def test_constant_errors(graph):
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant([[1, [2]]])
    with pytest.raises(ValueError, match="incompatible with ragged_rank=2"):
        tf.ragged.constant([[1, 2]], ragged_rank=2)
    with pytest.raises(ValueError, match="inner_shape"):
        tf.ragged.constant([[1, 2, 3, 4], [5, 6]], inner_shape=(2,))


def test_constant_value():
    v = tf.ragged.constant_value([[1, 2], [3]])
    assert isinstance(v, tf.ragged.RaggedTensorValue)
    assert v.to_list() == [[1, 2], [3]] and v.dtype == np.int64
    assert v.row_splits.dtype == np.int64
    assert repr(v) == ("tf.RaggedTensorValue(values=array([1, 2, 3]), "
                       "row_splits=array([0, 2, 3]))")
    assert tf.ragged.constant_value([[1.5], [3.0]], dtype=tf.float32).dtype == np.float32
    assert tf.ragged.constant_value([[[1], [2, 3]], []]).to_list() == [[[1], [2, 3]], []]
    assert tf.ragged.constant_value([[], []]).dtype == np.float64
    assert tf.ragged.constant_value(3).tolist() == 3
    shaped = tf.ragged.constant_value([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert shaped.shape == (2, None, 2)
