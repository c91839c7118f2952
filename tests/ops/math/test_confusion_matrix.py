"""tf.confusion_matrix / tf.math.confusion_matrix and remove_squeezable_dimensions."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.math.confusion_matrix import remove_squeezable_dimensions


def np_confusion(labels, preds, n, weights=None):
    cm = np.zeros((n, n))
    np.add.at(cm, (labels, preds), 1 if weights is None else weights)
    return cm


def test_values_dtypes_and_shapes(graph, sess):
    labels = np.array([1, 2, 4, 2, 0])
    preds = np.array([2, 2, 4, 1, 0])
    cm = tf.confusion_matrix(labels, preds)
    assert tf.math.confusion_matrix is tf.confusion_matrix
    # TF 2.21: shape inference evaluates the class count of constant inputs
    assert cm.dtype == tf.int32 and cm.shape.as_list() == [5, 5]
    out = sess.run(cm)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np_confusion(labels, preds, 5))
    w = np.array([0.5, 1.0, 2.0, 3.0, 1.5], np.float32)
    cmw = tf.confusion_matrix(labels, preds, num_classes=6, dtype=tf.float32, weights=w)
    out = sess.run(cmw)
    assert out.dtype == np.float32 and out.shape == (6, 6)
    np.testing.assert_allclose(out, np_confusion(labels, preds, 6, w))


def test_trailing_dimension_is_squeezed(graph, sess):
    labels = tf.placeholder(tf.int64, [None, 1])
    preds = tf.placeholder(tf.int32, [None])
    cm = tf.confusion_matrix(labels, preds, num_classes=3)
    out = sess.run(cm, {labels: [[0], [2], [2]], preds: [0, 1, 2]})
    np.testing.assert_array_equal(out, np_confusion([0, 2, 2], [0, 1, 2], 3))


def test_errors(graph, sess):
    labels = tf.placeholder(tf.int32, [None])
    preds = tf.placeholder(tf.int32, [None])
    cm = tf.confusion_matrix(labels, preds, num_classes=3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="`labels` out of bound"):
        sess.run(cm, {labels: [0, 3], preds: [0, 1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="`predictions` contains negative"):
        sess.run(cm, {labels: [0, 1], preds: [0, -1]})
    with pytest.raises(ValueError):
        tf.confusion_matrix([0, 1], [0, 1], weights=[1.0, 2.0, 3.0])


def test_remove_squeezable_dimensions(graph, sess):
    a, b = remove_squeezable_dimensions(tf.zeros([3, 1]), tf.zeros([3]))
    assert a.shape.as_list() == [3] and b.shape.as_list() == [3]
    a, b = remove_squeezable_dimensions(tf.zeros([3]), tf.zeros([3, 1]))
    assert a.shape.as_list() == [3] and b.shape.as_list() == [3]
    a, b = remove_squeezable_dimensions(tf.zeros([3]), tf.zeros([3, 4]), expected_rank_diff=1)
    assert a.shape.as_list() == [3] and b.shape.as_list() == [3, 4]
    lab = tf.placeholder(tf.float32, None)
    a, b = remove_squeezable_dimensions(lab, tf.zeros([3]))
    assert sess.run(a, {lab: np.ones((3, 1))}).shape == (3,)
    assert sess.run(a, {lab: np.ones((3,))}).shape == (3,)
