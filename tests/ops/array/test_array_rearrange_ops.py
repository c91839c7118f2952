"""Roll, repeat, parallel_stack, SpaceToDepth/DepthToSpace, SpaceToBatchND/BatchToSpaceND
and their builders, against NumPy references (values checked with TF 2.21 by hand)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


def test_roll_values_and_repeated_axes(sess):
    x = np.arange(12).reshape(3, 4)
    y = tf.roll(x, [1, -1], [0, 1])
    assert y.shape.as_list() == [3, 4]
    np.testing.assert_array_equal(sess.run(y), np.roll(x, [1, -1], [0, 1]))
    # an axis named twice rolls by the sum; negative axes count from the end
    np.testing.assert_array_equal(sess.run(tf.roll(x, [1, 2], [-1, 1])), np.roll(x, 3, 1))
    assert tf.manip.roll is tf.roll


def test_roll_errors(sess):
    with pytest.raises(ValueError, match="must be equal, but are 2 and 1"):
        tf.roll([1, 2, 3], [1, 2], [0])
    p = tf.placeholder_with_default([1, 2, 3], [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis 3 is out of range"):
        sess.run(tf.roll(p, 1, 3))


def test_roll_gradient(graph):
    x = tf.placeholder(tf.float64, [3, 4])
    y = tf.roll(x, [2, 1], [0, 1]) * np.arange(12.0).reshape(3, 4)
    assert compute_gradient_error(x, [3, 4], y, [3, 4]) < 1e-8


def test_repeat(sess):
    x = np.array([[1, 2], [3, 4]], np.int32)
    y = tf.repeat(x, [1, 2], axis=0)
    assert y.shape.as_list() == [None, 2]
    np.testing.assert_array_equal(sess.run(y), np.repeat(x, [1, 2], axis=0))
    flat = tf.repeat(x, 2)
    assert flat.shape.as_list() == [8]
    np.testing.assert_array_equal(sess.run(flat), np.repeat(x, 2))
    np.testing.assert_array_equal(sess.run(tf.repeat(x, 3, axis=-1)), np.repeat(x, 3, axis=1))
    np.testing.assert_array_equal(sess.run(tf.repeat(x, [0, 0], axis=1)), np.zeros((2, 0)))
    r64 = tf.repeat(x, tf.constant([2, 1], tf.int64), axis=1)
    np.testing.assert_array_equal(sess.run(r64), np.repeat(x, [2, 1], axis=1))
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.repeat(x, [1.5, 2.0], axis=0)
    # TF 2.21 sees the mismatch at build time: both shapes are constants
    with pytest.raises(ValueError):
        tf.repeat(x, [1, 2, 3], axis=0)


def test_repeat_gradient(graph):
    x = tf.placeholder(tf.float64, [2, 3])
    y = tf.repeat(x, [2, 0, 1], axis=1)
    assert compute_gradient_error(x, [2, 3], y, [2, 3]) < 1e-8


def test_parallel_stack(sess):
    y = tf.parallel_stack([[1, 2], [3, 4], [5, 6]])
    assert y.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(sess.run(y), [[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError, match="fully known"):
        tf.parallel_stack([tf.placeholder(tf.float32, [None])])


def _space_to_depth_ref(x, bs):
    n, h, w, c = x.shape
    y = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
    return y.reshape(n, h // bs, w // bs, bs * bs * c)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_space_to_depth_and_back(sess, dtype):
    x = np.arange(2 * 4 * 6 * 3).reshape(2, 4, 6, 3).astype(dtype)
    y = tf.space_to_depth(x, 2)
    assert y.shape.as_list() == [2, 2, 3, 12] and y.dtype == tf.as_dtype(dtype)
    want = _space_to_depth_ref(x, 2)
    np.testing.assert_array_equal(sess.run(y), want)
    back = tf.depth_to_space(y, 2)
    assert back.shape.as_list() == [2, 4, 6, 3]
    np.testing.assert_array_equal(sess.run(back), x)
    # TF's documented example: [1, 2, 2, 1] -> [1, 1, 1, 4]
    np.testing.assert_array_equal(sess.run(tf.nn.space_to_depth([[[[1], [2]], [[3], [4]]]], 2)),
                                  [[[[1, 2, 3, 4]]]])


def test_space_to_depth_nchw_and_unknown_dims(sess):
    x = np.arange(32.0).reshape(1, 2, 4, 4)
    y = tf.space_to_depth(x, 2, data_format="NCHW")
    assert y.shape.as_list() == [1, 8, 2, 2]
    want = _space_to_depth_ref(x.transpose(0, 2, 3, 1), 2).transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(sess.run(y), want)
    p = tf.placeholder(tf.float32, [None, 4, None, 3])
    assert tf.space_to_depth(p, 2).shape.as_list() == [None, 2, None, 12]
    assert tf.depth_to_space(tf.placeholder(tf.float32, [None, 4, None, 8]),
                             2).shape.as_list() == [None, 8, None, 2]


def test_space_to_depth_errors(sess):
    with pytest.raises(ValueError, match="evenly divisible by 2 but is 3"):
        tf.space_to_depth(np.zeros((1, 3, 4, 1)), 2)
    with pytest.raises(ValueError, match="evenly divisible by 4 but is 3"):
        tf.depth_to_space(np.zeros((1, 1, 4, 3)), 2)
    p = tf.placeholder(tf.float32, [None, None, None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="divisible by block_size"):
        sess.run(tf.space_to_depth(p, 2), {p: np.zeros((1, 3, 4, 1))})
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be divisible by: 4"):
        sess.run(tf.depth_to_space(p, 2), {p: np.zeros((1, 1, 1, 3))})


def test_space_depth_gradients(graph):
    x = tf.placeholder(tf.float64, [1, 4, 2, 2])
    w = np.arange(16.0).reshape(1, 2, 1, 8)
    assert compute_gradient_error(x, [1, 4, 2, 2], tf.space_to_depth(x, 2) * w,
                                  [1, 2, 1, 8]) < 1e-8
    z = tf.placeholder(tf.float64, [1, 1, 2, 8])
    assert compute_gradient_error(z, [1, 1, 2, 8], tf.depth_to_space(z, 2),
                                  [1, 2, 4, 2]) < 1e-8


def _space_to_batch_ref(x, block, pads):
    x = np.pad(x, [(0, 0)] + pads + [(0, 0)] * (x.ndim - 1 - len(block)))
    out = []
    for offsets in np.ndindex(*block):  # row-major over the block, batch innermost
        index = [slice(None)] + [slice(o, None, b) for o, b in zip(offsets, block)]
        out.append(x[tuple(index)])
    return np.concatenate(out, axis=0)


def test_space_to_batch_nd_and_back(sess):
    x = np.arange(2 * 3 * 5 * 2).reshape(2, 3, 5, 2).astype(np.float32)
    pads = [[1, 0], [0, 1]]
    y = tf.space_to_batch_nd(x, [2, 3], pads)
    assert y.shape.as_list() == [12, 2, 2, 2]
    want = _space_to_batch_ref(x, [2, 3], [tuple(p) for p in pads])
    np.testing.assert_array_equal(sess.run(y), want)
    back = tf.batch_to_space_nd(y, [2, 3], pads)
    assert back.shape.as_list() == [2, 3, 5, 2]
    np.testing.assert_array_equal(sess.run(back), x)
    # the examples of TF's documentation
    z = sess.run(tf.space_to_batch(np.arange(8).reshape(1, 2, 4, 1), [[0, 0], [0, 0]], 2))
    np.testing.assert_array_equal(z[..., 0], [[[0, 2]], [[1, 3]], [[4, 6]], [[5, 7]]])
    b = sess.run(tf.batch_to_space(np.arange(8).reshape(4, 1, 2, 1), [[0, 0], [0, 0]], 2))
    np.testing.assert_array_equal(b[..., 0], [[[0, 2, 1, 3], [4, 6, 5, 7]]])
    assert tf.nn.space_to_batch is tf.space_to_batch
    assert tf.manip.batch_to_space_nd is tf.batch_to_space_nd


def test_space_to_batch_static_shapes_and_errors(sess):
    p = tf.placeholder(tf.float32, [None, 4, None, 3])
    assert tf.space_to_batch_nd(p, [2, 2], [[0, 0], [1, 1]]).shape.as_list() == \
        [None, 2, None, 3]
    b = tf.placeholder(tf.int32, [2])
    assert tf.space_to_batch_nd(p, b, [[0, 0], [0, 0]]).shape.as_list() == \
        [None, None, None, 3]
    with pytest.raises(ValueError, match="evenly divisible by 2 but is 3"):
        tf.space_to_batch_nd(np.zeros((1, 3, 4, 1)), [2, 2], [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.space_to_batch(np.zeros((1, 2, 2, 1)), [[0, 0], [0, 0]], 2, block_shape=2)
    q = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not divisible by block_shape"):
        sess.run(tf.space_to_batch_nd(q, [2, 2], [[0, 0], [0, 0]]),
                 {q: np.zeros((1, 3, 4, 1))})
    with pytest.raises(tf.errors.InvalidArgumentError, match="not divisible by product"):
        sess.run(tf.batch_to_space_nd(q, [2, 2], [[0, 0], [0, 0]]),
                 {q: np.zeros((3, 1, 1, 1))})


def test_space_batch_gradients(graph):
    x = tf.placeholder(tf.float64, [1, 3, 4, 1])
    y = tf.space_to_batch_nd(x, [2, 2], [[1, 0], [0, 0]])
    assert compute_gradient_error(x, [1, 3, 4, 1], y, [4, 2, 2, 1]) < 1e-8
    z = tf.placeholder(tf.float64, [4, 2, 2, 1])
    w = tf.batch_to_space_nd(z, [2, 2], [[1, 0], [0, 1]])
    assert compute_gradient_error(z, [4, 2, 2, 1], w, [1, 3, 3, 1]) < 1e-8


def test_required_space_to_batch_paddings(sess):
    paddings, crops = tf.required_space_to_batch_paddings([5, 6], [2, 4], [[1, 0], [0, 1]])
    p, c = sess.run([paddings, crops])
    np.testing.assert_array_equal(p, [[1, 0], [0, 2]])
    np.testing.assert_array_equal(c, [[0, 0], [0, 1]])
    p, c = sess.run(tf.required_space_to_batch_paddings([4, 5], [2, 2]))
    np.testing.assert_array_equal(p, [[0, 0], [0, 1]])
    np.testing.assert_array_equal(c, [[0, 0], [0, 1]])
