"""Public ops on RaggedTensors: elementwise ops, reductions, concat/stack (values
recorded from TF 2.21 compat.v1 graph mode, or NumPy per row)."""
import numpy as np
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run
from tensorweave.framework import api_export


@pytest.fixture
def rt():
    return tf.ragged.constant([[1, 2], [], [3, 4, 5]])


@pytest.fixture
def r2():
    return tf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])


@pytest.fixture
def ri():
    return tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)


def test_every_name_of_an_op_is_routed_once():
    assert tf.add is tf.math.add and tf.add._ragged_dispatch
    assert tf.reduce_sum is tf.math.reduce_sum
    with pytest.raises(ValueError, match="is not exported"):
        api_export.replace_exports({id(object()): object()})


def test_elementwise_ops(sess, rt):
    f = tf.ragged.constant([[1.0, 2.0], [], [3.0, 4.0, 5.0]])
    assert _run(sess, tf.cast(rt, tf.float32)) == [[1.0, 2.0], [], [3.0, 4.0, 5.0]]
    assert _run(sess, tf.cast(x=rt, dtype=tf.float32)) == [[1.0, 2.0], [], [3.0, 4.0, 5.0]]
    assert _run(sess, tf.add(1, rt)) == [[2, 3], [], [4, 5, 6]]
    assert _run(sess, tf.maximum(rt, rt)) == [[1, 2], [], [3, 4, 5]]
    assert _run(sess, tf.equal(rt, 2)) == [[False, True], [], [False, False, False]]
    assert _run(sess, tf.nn.relu(f - 3.0)) == [[0.0, 0.0], [], [0.0, 1.0, 2.0]]
    assert _run(sess, tf.ones_like(rt, dtype=tf.float32)) == [[1.0, 1.0], [],
                                                              [1.0, 1.0, 1.0]]
    assert _run(sess, tf.clip_by_value(rt, 2, 4)) == [[2, 2], [], [3, 4, 4]]
    assert _run(sess, tf.truediv(rt, 2)) == [[0.5, 1.0], [], [1.5, 2.0, 2.5]]
    words = tf.ragged.constant([["ab"], ["c", "def"]])
    assert _run(sess, tf.strings.length(words)) == [[2], [1, 3]]
    np.testing.assert_allclose(sess.run(tf.sqrt(f)).flat_values, np.sqrt([1, 2, 3, 4, 5]))
    assert _run(sess, tf.add(tf.constant([1]), 1)) == [2]   # dense calls unchanged


@pytest.mark.parametrize("op, rows", [
    (tf.reduce_sum, [3, 0, 12]), (tf.reduce_prod, [2, 1, 60]),
    (tf.reduce_max, [2, np.iinfo(np.int32).min, 5]),     # empty row: the identity
    (tf.reduce_min, [1, np.iinfo(np.int32).max, 3]),
])
def test_reductions_over_rows(sess, rt, op, rows):
    assert _run(sess, op(rt, axis=1)) == rows
    assert _run(sess, op(rt, axis=-1)) == rows
    assert _run(sess, op(rt, axis=1, keepdims=True)) == [[r] for r in rows]


def test_reductions_across_rows_and_inside(sess, rt, r2, ri):
    assert _run(sess, tf.reduce_sum(rt)) == 15
    assert _run(sess, tf.reduce_sum(rt, axis=0)) == [4, 6, 5]
    assert _run(sess, tf.reduce_max(rt, axis=0)) == [3, 4, 5]
    assert _run(sess, tf.reduce_sum(r2, axis=1)) == [[4, 2], [], [4, 5, 6]]
    assert _run(sess, tf.reduce_sum(r2, axis=2)) == [[3, 3], [], [15]]
    assert _run(sess, tf.reduce_sum(r2, axis=0)) == [[5, 7, 6], [3]]
    assert _run(sess, tf.reduce_prod(r2, axis=0)) == [[4, 10, 6], [3]]
    assert _run(sess, tf.reduce_sum(r2, axis=[1, 2])) == [6, 0, 15]
    assert _run(sess, tf.reduce_sum(ri, axis=1)) == [[4, 6], [5, 6]]
    assert _run(sess, tf.reduce_sum(ri, axis=2)) == [[3, 7], [11]]
    assert _run(sess, tf.reduce_min(ri, axis=0)) == [[1, 2], [3, 4]]


def test_mean_any_all(sess, r2):
    f = tf.ragged.constant([[1.0, 2.0], [], [3.0, 4.0, 5.0]])
    mean = sess.run(tf.reduce_mean(f, axis=1))
    assert mean.dtype == np.float32
    np.testing.assert_allclose(mean, [1.5, np.nan, 4.0])
    assert _run(sess, tf.reduce_mean(f)) == 3.0
    int_mean = sess.run(tf.reduce_mean(r2, axis=2))
    assert int_mean.dtype == np.float64 and int_mean.to_list() == [[1.5, 3.0], [], [5.0]]
    b = tf.ragged.constant([[True, False], [], [True]])
    assert _run(sess, tf.reduce_any(b, axis=1)) == [True, False, True]
    assert _run(sess, tf.reduce_all(b, axis=1)) == [False, True, True]
    assert bool(sess.run(tf.reduce_any(b)))


def test_reduction_errors(graph, rt, r2):
    with pytest.raises(ValueError, match="out of bounds"):
        tf.reduce_sum(rt, axis=2)
    # keepdims=True with a ragged result is supported, as TF's: test_ragged_split_matmul
