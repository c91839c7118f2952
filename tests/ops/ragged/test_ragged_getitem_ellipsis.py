"""RaggedTensor indexing with Ellipsis and tf.newaxis: values, static shapes and ragged
ranks recorded from TF 2.21 compat.v1 graph mode."""
import numpy as np
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


def _x():
    """[2, (r), 3], ragged_rank 1."""
    return tf.ragged.constant([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9]]], ragged_rank=1)


def _y():
    """[2, (r), (s)], ragged_rank 2."""
    return tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])


# (key, expected value, static shape, ragged_rank or None for a dense Tensor)
_X_CASES = [
    ((Ellipsis, 0), [[1, 4], [7]], [2, None], 1),
    ((0, Ellipsis), [[1, 2, 3], [4, 5, 6]], [2, 3], None),
    ((slice(None), Ellipsis, slice(1, None)), [[[2, 3], [5, 6]], [[8, 9]]],
     [2, None, 2], 1),
    ((Ellipsis, slice(None), 0), [[1, 4], [7]], [2, None], 1),
    ((1, Ellipsis, 2), [9], [1], None),
    ((Ellipsis,), [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9]]], [2, None, 3], 1),
    ((slice(None), None), [[[[1, 2, 3], [4, 5, 6]]], [[[7, 8, 9]]]],
     [2, 1, None, 3], 2),
    ((Ellipsis, None), [[[[1], [2], [3]], [[4], [5], [6]]], [[[7], [8], [9]]]],
     [2, None, 3, 1], 1),
    ((slice(None), slice(None), None), [[[[1, 2, 3]], [[4, 5, 6]]], [[[7, 8, 9]]]],
     [2, None, 1, 3], 1),
    ((None, Ellipsis), [[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9]]]], [1, 2, None, 3], 2),
    ((0, None), [[[1, 2, 3], [4, 5, 6]]], [1, 2, 3], None),
    ((None, None), [[[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9]]]]], [1, 1, 2, None, 3], 3),
    ((slice(None), slice(0, 1), None), [[[[1, 2, 3]]], [[[7, 8, 9]]]],
     [2, None, 1, 3], 1),
]

_Y_CASES = [
    ((0, Ellipsis), [[1, 2], [3]], [2, None], 1),
    ((slice(None), Ellipsis, slice(1, None)), [[[2], []], [[5, 6]]], [2, None, None], 2),
    ((slice(None), None), [[[[1, 2], [3]]], [[[4, 5, 6]]]], [2, 1, None, None], 3),
    ((Ellipsis, None), [[[[1], [2]], [[3]]], [[[4], [5], [6]]]], [2, None, None, 1], 2),
    ((slice(None), slice(None), None), [[[[1, 2]], [[3]]], [[[4, 5, 6]]]],
     [2, None, 1, None], 3),
    ((None, Ellipsis), [[[[1, 2], [3]], [[4, 5, 6]]]], [1, 2, None, None], 3),
    ((0, None), [[[1, 2], [3]]], [1, 2, None], 2),
]


@pytest.mark.parametrize("make,case", [(_x, c) for c in _X_CASES] +
                         [(_y, c) for c in _Y_CASES])
def test_ellipsis_and_newaxis(sess, make, case):
    key, expected, shape, ragged_rank = case
    out = make()[key]
    assert out.shape.as_list() == shape
    if ragged_rank is None:
        assert not isinstance(out, tf.RaggedTensor)
    else:
        assert out.ragged_rank == ragged_rank
    assert _run(sess, out) == expected


@pytest.mark.parametrize("key", [(Ellipsis, 0), (Ellipsis, slice(None), 0),
                                 (1, Ellipsis, 2), (None, slice(None), 0),
                                 (slice(None), None, 0)])
def test_int_on_ragged_dimension(graph, key):
    rt = _y() if key[0] is not None and key != (slice(None), None, 0) else _x()
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
        rt[key]


def test_too_many_indices_and_ellipses(graph):
    with pytest.raises(ValueError, match="Too many indices"):
        _x()[0, 0, 0, 0]
    with pytest.raises(ValueError, match="Too many indices"):
        _x()[0, ..., 0, 0, 0]
    with pytest.raises(ValueError, match="Multiple ellipses"):
        _x()[..., 0, ...]


def test_newaxis_gradient_matches_numeric(sess):
    x0 = np.array([1., 2., 3., 4., 5.], np.float32)
    x = tf.placeholder(tf.float32, [5])
    rt = tf.RaggedTensor.from_row_lengths(x, [2, 0, 3])
    loss = tf.reduce_sum((rt[:, tf.newaxis][..., 1:] ** 2).flat_values)
    grad = sess.run(tf.convert_to_tensor(tf.gradients(loss, x)[0]), {x: x0})
    eps = 1e-2
    numeric = [(sess.run(loss, {x: x0 + eps * e}) - sess.run(loss, {x: x0 - eps * e}))
               / (2 * eps) for e in np.eye(5, dtype=np.float32)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-2)
    np.testing.assert_allclose(grad, [0., 4., 0., 8., 10.])
