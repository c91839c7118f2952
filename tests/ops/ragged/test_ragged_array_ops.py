"""tf.ragged.range, segment ids, map_flat_values, stack/concat, boolean_mask (values
recorded from TF 2.21 compat.v1 graph mode)."""
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


def test_range(sess):
    assert _run(sess, tf.ragged.range([3, 5, 2])) == [[0, 1, 2], [0, 1, 2, 3, 4], [0, 1]]
    assert _run(sess, tf.ragged.range([0, 5, 8], [3, 3, 12])) == [[0, 1, 2], [],
                                                                  [8, 9, 10, 11]]
    assert _run(sess, tf.ragged.range(0, [3, 3, 12], 2)) == [[0, 2], [0, 2],
                                                             [0, 2, 4, 6, 8, 10]]
    assert _run(sess, tf.ragged.range([5, 3], [0, 3], -2)) == [[5, 3, 1], []]
    assert _run(sess, tf.ragged.range(4)) == [[0, 1, 2, 3]]
    assert _run(sess, tf.ragged.range([0.0, 1.0], 2.5, 0.5)) == [
        [0.0, 0.5, 1.0, 1.5, 2.0], [1.0, 1.5, 2.0]]
    assert tf.ragged.range([1, 2], 5).dtype == tf.int32
    assert tf.ragged.range([1, 2], 5.0).dtype == tf.float32


def test_range_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.ragged.range([0, 1], 5, 0))
    with pytest.raises(ValueError):
        tf.ragged.range([0, 1], [5, 3, 4])


def test_segment_ids_and_row_splits(sess):
    assert _run(sess, tf.ragged.row_splits_to_segment_ids([0, 2, 2, 5])) == [0, 0, 2, 2, 2]
    assert tf.ragged.row_splits_to_segment_ids([0, 2], out_type=tf.int32).dtype == tf.int32
    assert _run(sess, tf.ragged.segment_ids_to_row_splits([0, 0, 2, 2, 2])) == [0, 2, 2, 5]
    assert _run(sess, tf.ragged.segment_ids_to_row_splits([0, 0, 2], num_segments=5)) == [
        0, 2, 2, 3, 3, 3]
    ids = tf.constant([0, 1], tf.int32)
    assert tf.ragged.segment_ids_to_row_splits(ids).dtype == tf.int32


def test_map_flat_values(sess):
    rt = tf.ragged.constant([[1.0, 2.0], [], [3.0, 4.0, 5.0]])
    assert _run(sess, tf.ragged.map_flat_values(tf.square, rt)) == [[1, 4], [], [9, 16, 25]]
    assert _run(sess, tf.ragged.map_flat_values(tf.add, rt, rt)) == [[2, 4], [], [6, 8, 10]]
    assert _run(sess, tf.ragged.map_flat_values(tf.add, rt, 3.0)) == [[4, 5], [], [6, 7, 8]]
    assert _run(sess, tf.ragged.map_flat_values(tf.square, tf.constant([1.0, 2.0]))) == [
        1.0, 4.0]
    with pytest.raises(ValueError, match="same outer-dimension size"):
        tf.ragged.map_flat_values(tf.reduce_sum, rt)
    other = tf.ragged.constant([[1.0], [2.0, 3.0], [4.0, 5.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="identical ragged splits"):
        sess.run(tf.ragged.map_flat_values(tf.add, rt, other))
    nested = tf.RaggedTensor.from_nested_row_lengths([1., 2., 3.], [[2, 1], [1, 1, 1]])
    with pytest.raises(ValueError, match="All ragged inputs must have the same "
                                         "ragged_rank"):   # TF 2.21's message
        tf.ragged.map_flat_values(tf.add, nested, nested.values)


def test_stack_and_concat(sess):
    a = tf.ragged.constant([[1, 2], [3]])
    b = tf.ragged.constant([[4], [], [5, 6]])
    c = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert _run(sess, tf.ragged.stack([a, b])) == [[[1, 2], [3]], [[4], [], [5, 6]]]
    assert _run(sess, tf.stack([a, b])) == [[[1, 2], [3]], [[4], [], [5, 6]]]
    assert _run(sess, tf.ragged.stack([a, tf.ragged.constant([[7], [8, 9]])], axis=1)) == [
        [[1, 2], [7]], [[3], [8, 9]]]
    assert _run(sess, tf.ragged.stack([a, tf.constant([[7, 8]])])) == [[[1, 2], [3]],
                                                                       [[7, 8]]]
    assert _run(sess, tf.ragged.stack([a, a], axis=2)) == [[[1, 1], [2, 2]], [[3, 3]]]
    assert _run(sess, tf.ragged.stack([c, c], axis=3)) == [
        [[[1, 1], [2, 2]], [[3, 3]]], [[[4, 4]]]]
    assert _run(sess, tf.concat([a, b], 0)) == [[1, 2], [3], [4], [], [5, 6]]
    assert _run(sess, tf.concat([a, tf.ragged.constant([[7], [8, 9]])], 1)) == [
        [1, 2, 7], [3, 8, 9]]
    assert _run(sess, tf.concat([c, c], axis=-1)) == [[[1, 2, 1, 2], [3, 3]], [[4, 4]]]
    assert _run(sess, tf.concat([a, tf.constant([[7, 8]])], 0)) == [[1, 2], [3], [7, 8]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.ragged.stack([a, b], axis=1))
    with pytest.raises(ValueError):
        tf.concat([a, a], 2)


def test_boolean_mask(sess):
    rt = tf.ragged.constant([[1.0, 2.0], [], [3.0, 4.0, 5.0]])
    dense = [[1, 2, 3], [4, 5, 6]]
    assert _run(sess, tf.ragged.boolean_mask(
        dense, [[True, False, True], [False, False, True]])) == [[1, 3], [6]]
    assert _run(sess, tf.ragged.boolean_mask(dense, [True, False])) == [[1, 2, 3]]
    mask = tf.ragged.constant([[True, False], [], [True, True, False]])
    assert _run(sess, tf.ragged.boolean_mask(rt, mask)) == [[1.0], [], [3.0, 4.0]]
    assert _run(sess, tf.ragged.boolean_mask(rt, [True, False, True])) == [[1.0, 2.0],
                                                                          [3.0, 4.0, 5.0]]
    c = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    mask2 = tf.ragged.constant([[[True, False], [True]], [[False]]])
    assert _run(sess, tf.ragged.boolean_mask(c, mask2)) == [[[1], [3]], [[]]]
    with pytest.raises(TypeError):
        tf.ragged.boolean_mask(rt, [1, 0, 1])
