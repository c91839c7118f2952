"""tf.batch_gather (ops/indexing/batch_gather_ops.py) against a NumPy reference."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


def test_values_and_shape(sess):
    params = np.arange(24).reshape(2, 3, 4)
    indices = np.array([[2, 0], [1, 1]])
    out = tf.batch_gather(tf.constant(params), tf.constant(indices))
    assert out.shape.as_list() == [2, 2, 4] and out.dtype == tf.int64
    ref = np.stack([params[i][indices[i]] for i in range(2)])
    np.testing.assert_array_equal(sess.run(out), ref)
    flat = tf.batch_gather([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[2], [0]])
    np.testing.assert_array_equal(sess.run(flat), [[3.0], [4.0]])


def test_unknown_rank_and_gradient(sess):
    with pytest.raises(ValueError, match="unknown shape"):
        tf.batch_gather(tf.ones([2, 3]), tf.placeholder(tf.int32))
    p0 = np.random.RandomState(0).randn(2, 3)
    p = tf.constant(p0)
    out = tf.batch_gather(p, [[2, 0], [1, 1]])
    assert compute_gradient_error(p, [2, 3], out, [2, 2], x_init_value=p0) < 1e-6


def test_static_shape_takes_the_batch_dims_of_indices(sess):
    # TF 2.21: params [?, 3, ?] with indices [2, 3, 2] give [2, 3, 2]
    p = tf.placeholder(tf.float32, [None, 3, None])
    out = tf.batch_gather(p, np.zeros((2, 3, 2), np.int32))
    assert out.shape.as_list() == [2, 3, 2]
    assert sess.run(out, {p: np.ones((2, 3, 4))}).shape == (2, 3, 2)
