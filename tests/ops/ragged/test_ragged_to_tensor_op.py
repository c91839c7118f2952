"""The RaggedTensorToTensor op (imported TF 2 graphs call it). Expected values were
printed by TF 2.21's gen_ragged_conversion_ops.ragged_tensor_to_tensor on the same
inputs; they also follow from placing each value at its [row, column] by hand."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.ops.ragged.ragged_to_tensor_op import ragged_tensor_to_tensor

SPLITS = np.array([0, 2, 2, 5], np.int64)
VALUES = [1.0, 2.0, 3.0, 4.0, 5.0]


def _r2t(shape, values, default, parts, types):
    return ragged_tensor_to_tensor(np.asarray(shape, np.int64), values, default,
                                   [np.asarray(p, np.int64) for p in parts], types)


@pytest.mark.parametrize("shape, default, expected", [
    (-1, 0.0, [[1, 2, 0], [0, 0, 0], [3, 4, 5]]),
    ([2, 4], 9.0, [[1, 2, 9, 9], [9, 9, 9, 9]]),          # cropped rows, padded columns
    ([4, -1], 9.0, [[1, 2, 9], [9, 9, 9], [3, 4, 5], [9, 9, 9]]),
])
def test_row_splits_with_shape(sess, shape, default, expected):
    out = _r2t(shape, VALUES, default, [SPLITS], ["ROW_SPLITS"])
    got = sess.run(out)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float32
    assert out.shape.as_list() == [None if d < 0 else d for d in np.broadcast_to(shape, [2])]


def test_two_ragged_levels(sess):
    out = _r2t(-1, [1.0, 2, 3, 4, 5, 6], -1.0, [[0, 2, 3], [0, 1, 3, 6]],
               ["ROW_SPLITS", "ROW_SPLITS"])
    assert out.shape.as_list() == [None, None, None]
    np.testing.assert_array_equal(sess.run(out), [[[1, -1, -1], [2, 3, -1]],
                                                  [[4, 5, 6], [-1, -1, -1]]])


def test_first_dim_size_and_value_rowids(sess):
    out = _r2t(-1, [1.0, 2, 3, 4], 0.0, [4, [0, 0, 2, 2]], ["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
    np.testing.assert_array_equal(sess.run(out), [[1, 2], [0, 0], [3, 4], [0, 0]])


def test_inner_dims_broadcast_default_and_strings(sess):
    out = _r2t(-1, [[1.0, 2], [3, 4], [5, 6]], [7.0, 8], [[0, 1, 3]], ["ROW_SPLITS"])
    assert out.shape.as_list() == [None, None, 2]
    np.testing.assert_array_equal(sess.run(out), [[[1, 2], [7, 8]], [[3, 4], [5, 6]]])
    words = _r2t(-1, np.array([b"a", b"b", b"c"], object), b"", [[0, 1, 3]], ["ROW_SPLITS"])
    assert sess.run(words).tolist() == [[b"a", b""], [b"b", b"c"]]


def test_splits_promising_more_values_than_there_are_pad(sess):
    # TF fills the missing places with the default rather than failing
    out = _r2t(-1, [1.0, 2.0], 0.0, [[0, 3]], ["ROW_SPLITS"])
    np.testing.assert_array_equal(sess.run(out), [[1, 2, 0]])


@pytest.mark.parametrize("shape, values, default, types, message", [
    ([3, 1, 1], [[1.0, 2], [3, 4], [5, 6]], 0.0, ["ROW_SPLITS"],
     "rt_input.shape[2] = 2 but shape[2] = 1"),
    (-1, [[1.0, 2], [3, 4], [5, 6]], [1.0, 2, 3], ["ROW_SPLITS"],
     "default_value.shape[-1] = 3 but rt_input.flat_values.shape[-1] = 2"),
    (-1, [1.0, 2, 3], 0.0, ["BOGUS"], "Unknown string for partition info type: BOGUS"),
])
def test_build_time_errors_are_value_errors(graph, shape, values, default, types, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        _r2t(shape, values, default, [[0, 1, 3]], types)


def test_gradient_matches_numeric(sess):
    values = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 3)
    default = tf.constant([0.5, -1.0])
    out = _r2t([-1, 3, 2], values, default, [[0, 1, 3]], ["ROW_SPLITS"])
    weights = tf.constant(np.arange(12, dtype=np.float32).reshape(2, 3, 2))
    loss = out * weights
    grad_values, grad_default = sess.run(tf.gradients(loss, [values, default]))
    # each value's gradient is the weight where it landed; the default's sums the padding
    np.testing.assert_allclose(grad_values, [[0, 1], [6, 7], [8, 9]])
    np.testing.assert_allclose(grad_default, [2 + 4 + 10, 3 + 5 + 11])
    for x, x_shape in ((values, [3, 2]), (default, [2])):
        assert compute_gradient_error(x, x_shape, loss, [2, 3, 2]) < 1e-3


def test_cropped_values_get_zero_gradient(sess):
    values = tf.constant(VALUES)
    out = _r2t([2, 1], values, 0.0, [SPLITS], ["ROW_SPLITS"])
    np.testing.assert_array_equal(sess.run(tf.gradients(out, values)[0]), [1, 0, 0, 0, 0])


def test_raw_ops_name(sess):
    out = tf.raw_ops.RaggedTensorToTensor(
        shape=np.int64(-1), values=VALUES, default_value=0.0, row_partition_tensors=[SPLITS],
        row_partition_types=["ROW_SPLITS"])
    assert out.op.type == "RaggedTensorToTensor"
    np.testing.assert_array_equal(sess.run(out)[2], [3, 4, 5])


def test_int32_partitions_with_an_int64_shape_and_their_gradient(sess):
    values = tf.constant([1.0, 2.0, 3.0])
    out = ragged_tensor_to_tensor(np.int64(-1), values, 0.0,
                                  [tf.constant([0, 2, 3], tf.int32)], ["ROW_SPLITS"])
    np.testing.assert_array_equal(sess.run(out), [[1, 2], [3, 0]])
    grad = tf.gradients(out * tf.constant([[1.0, 2.0], [3.0, 4.0]]), values)[0]
    np.testing.assert_array_equal(sess.run(grad), [1, 2, 3])
