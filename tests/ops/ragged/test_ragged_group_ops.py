"""stack_dynamic_partitions and ragged crosses (values recorded from TF 2.21 compat.v1
graph mode)."""
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


def test_stack_dynamic_partitions(sess):
    sdp = tf.ragged.stack_dynamic_partitions
    assert _run(sess, sdp(["a", "b", "c", "d", "e"], [3, 0, 2, 2, 3], 5)) == [
        [b"b"], [], [b"c", b"d"], [b"a", b"e"], []]
    assert _run(sess, sdp([[1, 2], [3, 4], [5, 6]], [1, 0, 1], 2)) == [
        [[3, 4]], [[1, 2], [5, 6]]]
    rt = tf.ragged.constant([[1], [2, 3], [4]])
    assert _run(sess, sdp(rt, [1, 0, 1], 2)) == [[[2, 3]], [[1], [4]]]
    parts = tf.ragged.constant([[1], [0, 1], [1]])
    assert _run(sess, sdp(rt, parts, 2)) == [[2], [1, 3, 4]]
    assert _run(sess, sdp([[1, 2], [3, 4]], [[1, 0], [0, 1]], 2)) == [[2, 3], [1, 4]]


def test_stack_dynamic_partitions_errors(sess):
    sdp = tf.ragged.stack_dynamic_partitions
    for bad in ([0, 5, 1], [0, -1, 1]):
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(sdp([1, 2, 3], bad, 2))
    with pytest.raises(ValueError):
        sdp([1, 2, 3], [0, 1], 2)


def test_cross_keeps_input_order(sess):
    inputs = [tf.ragged.constant([["a"], ["b", "c"]]), tf.constant([["d"], ["e"]]),
              tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["f", "g", "h"], [2, 2])]
    assert _run(sess, tf.ragged.cross(inputs)) == [
        [b"a_X_d_X_f"], [b"b_X_e_X_g", b"b_X_e_X_h", b"c_X_e_X_g", b"c_X_e_X_h"]]
    hashed = tf.ragged.cross_hashed(inputs[:2], num_buckets=100)
    assert _run(sess, hashed) == [[82], [61, 41]]
    empty_row = [tf.ragged.constant([["a"], []]), tf.constant([["d"], ["e"]])]
    assert _run(sess, tf.ragged.cross(empty_row)) == [[b"a_X_d"], []]
    with pytest.raises(ValueError, match="only supports inputs with rank=2"):
        tf.ragged.cross([tf.ragged.constant([[["a"]], []])])
