"""tf.gather, tf.where, tf.shape, tf.size, tf.rank, tf.expand_dims, tf.tile,
tf.identity, tf.squeeze, tf.add_n and tf.math.unsorted_segment_* on RaggedTensors
(values and errors recorded from TF 2.21 compat.v1 graph mode)."""
import numpy as np
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


@pytest.fixture
def rt():
    return tf.ragged.constant([[1, 2, 3], [], [4, 5]])


def test_gather_ragged_params(sess, rt):
    assert _run(sess, tf.gather(rt, [2, 0])) == [[4, 5], [1, 2, 3]]
    assert _run(sess, tf.gather(rt, tf.constant([2], tf.int64))) == [[4, 5]]
    assert _run(sess, tf.gather(rt, 2)) == [4, 5]                 # a scalar: one row
    assert _run(sess, tf.gather(rt, [[2, 0], [1, 1]])) == [[[4, 5], [1, 2, 3]], [[], []]]
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert _run(sess, tf.gather(nested, [1, 0])) == [[[4]], [[1, 2], [3]]]
    int32_splits = tf.ragged.constant([[1, 2], [3]], row_splits_dtype=tf.int32)
    assert _run(sess, tf.gather(int32_splits, tf.constant([1, 1], tf.int64))) == [[3], [3]]


def test_gather_ragged_indices(sess, rt):
    ids = tf.ragged.constant([[0, 1], [], [5]])
    assert _run(sess, tf.gather([10, 20, 30, 40, 50, 60], ids)) == [[10, 20], [], [60]]
    assert _run(sess, tf.gather([[1, 2], [3, 4], [5, 6]], tf.ragged.constant(
        [[0, 2], [], [1]]))) == [[[1, 2], [5, 6]], [], [[3, 4]]]
    assert _run(sess, tf.gather(rt, tf.ragged.constant([[0, 2], [], [1]]))) == \
        [[[1, 2, 3], [4, 5]], [], [[]]]
    assert _run(sess, tf.gather(rt, tf.ragged.constant([[[0], [2, 1]], []]))) == \
        [[[[1, 2, 3]], [[4, 5], []]], []]


def test_gather_errors_and_gradient(sess, rt):
    with pytest.raises(TypeError, match="int32, int64"):
        tf.gather(rt, [1.0])
    with pytest.raises(ValueError, match="axis must be greater than or equal to batch_dims"):
        tf.gather(rt, tf.ragged.constant([[0, 1], [], [1]]), batch_dims=1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.gather(rt, [5]))
    values = tf.constant([1., 2., 3., 4., 5.])
    x = tf.RaggedTensor.from_row_splits(values, [0, 3, 3, 5])
    grad = tf.gradients(tf.reduce_sum(tf.gather(x, [2, 0, 2]).flat_values * 2.), values)[0]
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)), [2, 2, 2, 4, 4])


def test_where(sess):
    cond = tf.ragged.constant([[True, False], [True]])
    x, y = tf.ragged.constant([[1, 2], [3]]), tf.ragged.constant([[10, 20], [30]])
    assert _run(sess, tf.where(cond, x, y)) == [[1, 20], [3]]
    assert _run(sess, tf.where(cond)) == [[0, 0], [1, 0]]
    assert sess.run(tf.where(cond)).dtype == np.int64
    assert _run(sess, tf.where(tf.ragged.constant([[[True, False]], [[], [True]]]))) == \
        [[0, 0, 0], [1, 1, 0]]
    assert _run(sess, tf.where(tf.ragged.constant([[[True], [False]], [[True]]]))) == \
        [[0, 0, 0], [1, 0, 0]]
    rows = tf.ragged.constant([[1, 2, 3], [], [4, 5]])
    assert _run(sess, tf.where([True, False, True], rows, rows * 10)) == \
        [[1, 2, 3], [], [4, 5]]
    assert _run(sess, tf.where([False, True, False], rows, rows * 10)) == \
        [[10, 20, 30], [], [40, 50]]
    assert _run(sess, tf.where(tf.ragged.constant([[[True], [False, True]], []]),
                               tf.ragged.constant([[[1], [2, 3]], []]),
                               tf.ragged.constant([[[7], [8, 9]], []]))) == \
        [[[1], [8, 3]], []]


def test_where_errors(sess):
    cond = tf.ragged.constant([[True, False], [True]])
    x = tf.ragged.constant([[1, 2], [3]])
    with pytest.raises(ValueError, match="both None or both non-None"):
        tf.where(cond, x)
    with pytest.raises(ValueError, match="Input shapes do not match"):
        tf.where(cond, x, 0)
    with pytest.raises(TypeError):
        tf.where(cond, x, tf.ragged.constant([[1., 2.], [3.]]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.where(cond, tf.ragged.constant([[1], [3, 4]]), x))


def test_where_gradient(sess):
    values = tf.constant([1., 2., 3., 4., 5.])
    x = tf.RaggedTensor.from_row_splits(values, [0, 3, 3, 5])
    grad = tf.gradients(tf.reduce_sum(tf.where(x > 2., x, x * 3.).flat_values), values)[0]
    np.testing.assert_allclose(sess.run(grad), [3, 3, 1, 1, 1])


def test_shape_is_a_dynamic_ragged_shape(sess, rt):
    shape = tf.shape(rt)
    assert repr(shape) == "<DynamicRaggedShape lengths=[3, None] num_row_partitions=1>"
    assert (shape.rank, shape.dtype, shape.num_row_partitions) == (2, tf.int32, 1)
    assert shape.static_lengths() == [3, None]
    assert sess.run(shape[0]) == 3 and sess.run(shape[0]).dtype == np.int32
    assert sess.run(tf.shape(rt, out_type=tf.int64)[0]).dtype == np.int64
    with pytest.raises(ValueError, match="Index 1 is not uniform"):
        shape[1]
    with pytest.raises(ValueError, match="Index 1 is not uniform"):
        shape[-1]
    with pytest.raises(IndexError, match="Index is too big: 5>=2"):
        shape[5]
    with pytest.raises(TypeError, match="Failed to convert"):
        tf.convert_to_tensor(shape)
    with pytest.raises(TypeError):
        sess.run(shape)
    inner = tf.RaggedTensor.from_row_splits(tf.zeros([5, 4]), [0, 3, 5])
    assert sess.run(tf.shape(inner)[-1]) == 4
    dynamic = tf.RaggedTensor.from_row_splits(
        tf.placeholder_with_default(tf.zeros([5, 4]), [None, None]),
        tf.placeholder_with_default(tf.constant([0, 3, 5], tf.int64), [None]))
    assert sess.run([tf.shape(dynamic)[0], tf.shape(dynamic)[2]]) == [2, 4]
    assert _run(sess, tf.shape(rt).inner_shape) == [5]


def test_size_and_rank(sess, rt):
    assert _run(sess, tf.size(rt)) == 5 and tf.size(rt).dtype == tf.int32
    assert tf.size(rt, out_type=tf.int64).dtype == tf.int64
    nested = tf.ragged.constant([[[1], [2, 3]], []])
    assert _run(sess, tf.size(nested)) == 3
    assert _run(sess, tf.rank(rt)) == 2 and _run(sess, tf.rank(nested)) == 3
    inner = tf.ragged.constant([[[1, 2]], [[4, 5], [6, 7]]], ragged_rank=1)
    assert _run(sess, tf.rank(inner)) == 3


def test_expand_dims(sess, rt):
    assert _run(sess, tf.expand_dims(rt, 0)) == [[[1, 2, 3], [], [4, 5]]]
    assert _run(sess, tf.expand_dims(rt, -3)) == [[[1, 2, 3], [], [4, 5]]]
    assert _run(sess, tf.expand_dims(rt, 1)) == [[[1, 2, 3]], [[]], [[4, 5]]]
    assert _run(sess, tf.expand_dims(rt, dim=1)) == [[[1, 2, 3]], [[]], [[4, 5]]]
    assert _run(sess, tf.expand_dims(rt, 2)) == [[[1], [2], [3]], [], [[4], [5]]]
    assert _run(sess, tf.expand_dims(rt, -1)) == [[[1], [2], [3]], [], [[4], [5]]]
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert _run(sess, tf.expand_dims(inner, 3)) == \
        [[[[1], [2]]], [[[3], [4]], [[5], [6]]]]
    assert _run(sess, tf.expand_dims(tf.ragged.constant([[[1, 2]], [[3], [5, 6]]]), 2)) \
        == [[[[1, 2]]], [[[3]], [[5, 6]]]]
    with pytest.raises(ValueError, match=r"axis=-4 out of bounds: expected -3<=axis<3"):
        tf.expand_dims(rt, -4)


def test_tile(sess, rt):
    assert _run(sess, tf.tile(rt, [2, 3])) == [
        [1, 2, 3, 1, 2, 3, 1, 2, 3], [], [4, 5, 4, 5, 4, 5],
        [1, 2, 3, 1, 2, 3, 1, 2, 3], [], [4, 5, 4, 5, 4, 5]]
    assert _run(sess, tf.tile(rt, tf.constant([2, 1]))) == \
        [[1, 2, 3], [], [4, 5], [1, 2, 3], [], [4, 5]]
    assert _run(sess, tf.tile(rt, [0, 1])) == []
    assert _run(sess, tf.tile(tf.ragged.constant([[[1, 2], [3]], [[4]]]), [2, 2, 2])) == [
        [[1, 2, 1, 2], [3, 3], [1, 2, 1, 2], [3, 3]], [[4, 4], [4, 4]],
        [[1, 2, 1, 2], [3, 3], [1, 2, 1, 2], [3, 3]], [[4, 4], [4, 4]]]
    inner = tf.ragged.constant([[[1, 2]], [[4, 5], [6, 7]]], ragged_rank=1)
    assert _run(sess, tf.tile(inner, [1, 2, 3])) == [
        [[1, 2, 1, 2, 1, 2], [1, 2, 1, 2, 1, 2]],
        [[4, 5, 4, 5, 4, 5], [6, 7, 6, 7, 6, 7], [4, 5, 4, 5, 4, 5], [6, 7, 6, 7, 6, 7]]]
    int32_splits = tf.ragged.constant([[1, 2], [3]], row_splits_dtype=tf.int32)
    assert _run(sess, tf.tile(int32_splits, tf.constant([2, 2], tf.int32))) == \
        [[1, 2, 1, 2], [3, 3], [1, 2, 1, 2], [3, 3]]
    with pytest.raises(ValueError):
        tf.tile(rt, [1, 1, 1])


def test_tile_gradient(sess):
    values = tf.constant([1., 2., 3., 4., 5.])
    x = tf.RaggedTensor.from_row_splits(values, [0, 3, 3, 5])
    grad = tf.gradients(tf.reduce_sum(tf.tile(x, [2, 2]).flat_values), values)[0]
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)), [4, 4, 4, 4, 4])


def test_identity(sess, rt):
    same = tf.identity(rt)
    assert isinstance(same, tf.RaggedTensor)
    assert same.flat_values.op.type == "Identity" and same.row_splits.op.type == "Identity"
    assert _run(sess, same) == [[1, 2, 3], [], [4, 5]]
    assert _run(sess, tf.identity(tf.ragged.constant([[[1], [2, 3]], []]))) == \
        [[[1], [2, 3]], []]


def test_squeeze(sess, rt):
    column = tf.ragged.constant([[[1], [2]], [[3]]], ragged_rank=1)
    assert _run(sess, tf.squeeze(column, axis=2)) == [[1, 2], [3]]
    assert _run(sess, tf.squeeze(column, axis=-1)) == [[1, 2], [3]]
    assert _run(sess, tf.squeeze(column, squeeze_dims=[2])) == [[1, 2], [3]]
    assert _run(sess, tf.squeeze(tf.ragged.constant([[[1], [2]]]), axis=[0])) == [[1], [2]]
    assert _run(sess, tf.squeeze(tf.ragged.constant([[[1]], [[2]]], ragged_rank=1),
                                 axis=[1, 2])) == [1, 2]
    assert _run(sess, tf.squeeze(tf.ragged.constant([[[1], [2]], [[3]]]), axis=2)) == \
        [[1, 2], [3]]
    assert _run(sess, tf.squeeze(tf.ragged.constant([[[1, 2]]]), axis=[0, 1])) == [1, 2]
    with pytest.raises(ValueError, match="must have an axis argument"):
        tf.squeeze(column)
    with pytest.raises(ValueError, match=r"axis\[0\]=3 out of bounds"):
        tf.squeeze(tf.ragged.constant([[[1, 2]]]), axis=3)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.squeeze(rt, axis=1))
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.squeeze(rt, axis=0))


def test_add_n_and_flat_value_ops(sess, rt):
    assert _run(sess, tf.add_n([rt, rt, rt])) == [[3, 6, 9], [], [12, 15]]
    assert _run(sess, tf.one_hot(tf.ragged.constant([[0, 2], [1]]), 3)) == \
        [[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[0.0, 1.0, 0.0]]]
    f = tf.ragged.constant([[1.0, 2.0, 3.0], [], [4.0, 5.0]])
    assert _run(sess, tf.nn.dropout(f, keep_prob=1.0)) == [[1.0, 2.0, 3.0], [], [4.0, 5.0]]
    assert _run(sess, tf.bitcast(f, tf.int32)) == \
        [[1065353216, 1073741824, 1077936128], [], [1082130432, 1084227584]]


@pytest.mark.parametrize("op, ids, n, expected", [
    (tf.math.unsorted_segment_sum, [0, 0, 1], 2, [[1, 2, 3], [4, 5]]),
    (tf.unsorted_segment_sum, [0, 0, 1], 2, [[1, 2, 3], [4, 5]]),
    (tf.math.unsorted_segment_max, [0, 0, 1], 2, [[1, 2, 3], [4, 5]]),
    (tf.math.unsorted_segment_min, [1, 0, 1], 2, [[], [1, 2, 3]]),
    (tf.math.unsorted_segment_prod, [1, 0, 1], 2, [[], [4, 10, 3]]),
])
def test_unsorted_segment_ops(sess, rt, op, ids, n, expected):
    assert _run(sess, op(rt, ids, n)) == expected


def test_unsorted_segment_float_ops_and_nesting(sess, rt):
    f = tf.cast(rt, tf.float32)
    assert _run(sess, tf.math.unsorted_segment_mean(f, [0, 0, 1], 3)) == \
        [[1.0, 2.0, 3.0], [4.0, 5.0], []]
    np.testing.assert_allclose(
        sess.run(tf.math.unsorted_segment_sqrt_n(f, [0, 0, 0], 2)).flat_values,
        [5 / np.sqrt(2), 7 / np.sqrt(2), 3.0], rtol=1e-6)
    nested = tf.ragged.constant([[[1, 2], [3]], [[4]], [[5, 6, 7]]])
    assert _run(sess, tf.math.unsorted_segment_sum(nested, [0, 1, 0], 2)) == \
        [[[6, 8, 7], [3]], [[4]]]
    inner = tf.ragged.constant([[[1, 2]], [[4, 5], [6, 7]]], ragged_rank=1)
    assert _run(sess, tf.math.unsorted_segment_sum(inner, [0, 0], 1)) == [[[5, 7], [6, 7]]]
    ragged_ids = tf.ragged.constant([[0, 1, 0], [], [1, 1]])
    assert _run(sess, tf.math.unsorted_segment_sum(rt, ragged_ids, 2)) == [4, 11]


def test_unsorted_segment_errors(sess, rt):
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.math.unsorted_segment_sum(rt, [0, 0], 2)
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.math.unsorted_segment_sum(rt, [0, -1, 1], 2))


def test_ops_tf_does_not_dispatch_still_refuse(rt):
    # TF 2.21's compat.v1 boolean_mask and segment_sum do not take RaggedTensors
    with pytest.raises(TypeError, match="Failed to convert"):
        tf.boolean_mask(rt, [True, False, True])
    with pytest.raises(TypeError, match="Failed to convert"):
        tf.math.segment_sum(rt, [0, 0, 1])


def test_dense_calls_unchanged(sess):
    assert _run(sess, tf.gather([1, 2, 3], [2])) == [3]
    assert _run(sess, tf.tile([1, 2], [2])) == [1, 2, 1, 2]
    assert _run(sess, tf.shape(tf.zeros([2, 3]))) == [2, 3]
    assert _run(sess, tf.squeeze(tf.zeros([1, 2]))) == [0.0, 0.0]


def test_where_v2(sess, rt):
    cond = tf.ragged.constant([[True, False, True], [], [False, True]])
    assert _run(sess, tf.where_v2(cond, rt, rt * 10)) == [[1, 20, 3], [], [40, 5]]
    assert _run(sess, tf.where_v2(cond)) == [[0, 0], [0, 2], [2, 1]]
    assert _run(sess, tf.where_v2(cond, rt, 0)) == [[1, 0, 3], [], [0, 5]]
    assert _run(sess, tf.where_v2(cond, rt, tf.constant([[0], [0], [0]]))) == \
        [[1, 0, 3], [], [0, 5]]
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    inner_cond = tf.ragged.constant([[[True, False]], [[False, True], [True, True]]],
                                    ragged_rank=1)
    assert _run(sess, tf.where_v2(inner_cond, inner, tf.constant([7, 8]))) == \
        [[[1, 8]], [[7, 4], [5, 6]]]
    with pytest.raises(ValueError, match="both None or both non-None"):
        tf.where_v2(cond, rt)
    with pytest.raises(ValueError, match="flat_values must all have the same "
                                         r"outer-dimension size.  Got sizes: \{5, 6\}"):
        tf.where_v2(cond, tf.ragged.constant([[1], [2, 3], [4, 5, 6]]), 0)


def test_reverse(sess, rt):
    assert _run(sess, tf.reverse(rt, [1])) == [[3, 2, 1], [], [5, 4]]
    assert _run(sess, tf.reverse(rt, [-1])) == [[3, 2, 1], [], [5, 4]]
    assert _run(sess, tf.reverse(rt, [0])) == [[4, 5], [], [1, 2, 3]]
    assert _run(sess, tf.reverse(rt, [0, 1])) == [[5, 4], [], [3, 2, 1]]
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert _run(sess, tf.reverse(inner, [2])) == [[[2, 1]], [[4, 3], [6, 5]]]
    nested = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
    assert _run(sess, tf.reverse(nested, [2])) == [[[2, 1], [3]], [[6, 5, 4]]]


def test_cumsum(sess, rt):
    assert _run(sess, tf.cumsum(rt, axis=1)) == [[1, 3, 6], [], [4, 9]]
    assert _run(sess, tf.cumsum(rt, axis=-1)) == [[1, 3, 6], [], [4, 9]]
    assert _run(sess, tf.cumsum(rt, axis=1, exclusive=True, reverse=True)) == \
        [[5, 3, 0], [], [5, 0]]
    assert _run(sess, tf.cumsum(rt)) == [[1, 2, 3], [], [5, 7]]       # axis 0, padded
    inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert _run(sess, tf.cumsum(inner, axis=2)) == [[[1, 3]], [[3, 7], [5, 11]]]
    values = tf.constant([1., 2., 3., 4., 5.])
    x = tf.RaggedTensor.from_row_splits(values, [0, 3, 3, 5])
    grad = tf.gradients(tf.reduce_sum(tf.cumsum(x, axis=1).flat_values), values)[0]
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)), [3, 2, 1, 2, 1])
