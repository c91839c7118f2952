"""Indexing and elementwise operators of RaggedTensor (values from TF 2.21 compat.v1)."""
import numpy as np
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


@pytest.fixture
def rt():
    return tf.ragged.constant([[1, 2], [], [3, 4, 5]])


@pytest.fixture
def rt2():
    return tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])


def test_rows_and_row_slices(sess, rt, rt2):
    assert _run(sess, rt[0]) == [1, 2] and _run(sess, rt[-1]) == [3, 4, 5]
    assert _run(sess, rt[tf.constant(2)]) == [3, 4, 5]
    assert _run(sess, rt[1:]) == [[], [3, 4, 5]]
    assert _run(sess, rt[::2]) == [[1, 2], [3, 4, 5]]
    assert _run(sess, rt[-2:]) == [[], [3, 4, 5]]
    assert _run(sess, rt2[2, 0]) == [4, 5, 6]
    assert _run(sess, rt[tf.newaxis]) == [[[1, 2], [], [3, 4, 5]]]


def test_slices_inside_rows(sess, rt, rt2):
    assert _run(sess, rt[:, 1:]) == [[2], [], [4, 5]]
    assert _run(sess, rt[:, -1:]) == [[2], [], [5]]
    assert _run(sess, rt2[:, :, 1:]) == [[[2], []], [], [[5, 6]]]


def test_indexing_errors(graph, rt):
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
        rt[:, 0]
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):
        rt[5]
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
        rt[..., 0]     # TF 2.21: the Ellipsis expands to `:`, then 0 is on a ragged dim
    with pytest.raises(ValueError, match="Multiple ellipses"):
        rt[..., ...]


def test_binary_operators(sess, rt):
    assert _run(sess, rt + rt) == [[2, 4], [], [6, 8, 10]]
    assert _run(sess, 1 + rt) == [[2, 3], [], [4, 5, 6]]
    assert _run(sess, rt * tf.constant([[1], [2], [3]])) == [[1, 2], [], [9, 12, 15]]
    assert _run(sess, rt / 2) == [[0.5, 1.0], [], [1.5, 2.0, 2.5]]
    assert _run(sess, rt // 2) == [[0, 1], [], [1, 2, 2]]
    assert _run(sess, rt % 2) == [[1, 0], [], [1, 0, 1]]
    assert _run(sess, rt ** 2) == [[1, 4], [], [9, 16, 25]]
    assert _run(sess, 10.0 - tf.ragged.constant([[1.0], [2.0, 3.0]])) == [[9.0], [8.0, 7.0]]
    assert _run(sess, (rt > 1) & (rt < 5)) == [[False, True], [], [True, True, False]]
    assert _run(sess, ~(rt > 1)) == [[True, False], [], [False, False, False]]
    assert _run(sess, -rt) == [[-1, -2], [], [-3, -4, -5]]
    assert _run(sess, abs(-rt)) == [[1, 2], [], [3, 4, 5]]
    assert (rt == rt) is True    # identity in TF1 graph mode, as TF


def test_mismatched_partitions(sess, rt, rt2):
    # TF 2.21: both fail at run time (rows [2, 0, 3] vs [1, 2, 2]; rt padded to
    # [1, 3, (r)] against rt2's ragged dimension 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible"):
        sess.run(rt + tf.ragged.constant([[1], [2, 3], [4, 5]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible"):
        sess.run(rt + rt2)


def test_elementwise_gradient_matches_numeric(sess):
    x0 = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    x = tf.placeholder(tf.float32, [5])
    r = tf.RaggedTensor.from_row_lengths(x, [2, 0, 3])
    loss = tf.reduce_sum((r * r + 3.0).flat_values)
    grad = sess.run(tf.gradients(loss, x)[0], {x: x0})
    eps = 1e-2
    numeric = [(sess.run(loss, {x: x0 + eps * e}) - sess.run(loss, {x: x0 - eps * e}))
               / (2 * eps) for e in np.eye(5, dtype=np.float32)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-2)
    np.testing.assert_allclose(grad, 2 * x0)
