"""tf.stop_gradient, tf.strings.reduce_join, tf.split, tf.matmul and tf.reshape of
RaggedTensors, and reductions with keepdims and a ragged result (ragged_split_ops.py,
ragged_matmul.py, ragged_reduction_ops.py): values and errors recorded from TF 2.21's
compat.v1 graph mode."""
import pytest

import tensorweave as tf
from ragged_fetch import fetched as _run


ROWS = [[1., 2.], [3.], [], [4., 5., 6.]]


def test_stop_gradient_keeps_the_rows_and_stops_the_gradient(sess):
    rt = tf.ragged.constant(ROWS)
    stopped = tf.stop_gradient(rt)
    assert isinstance(stopped, tf.RaggedTensor) and stopped.shape.as_list() == [4, None]
    assert _run(sess, stopped) == ROWS
    x = tf.constant([1., 2., 3.])
    squares = tf.RaggedTensor.from_row_lengths(x * x, [2, 1])
    loss = tf.reduce_sum(tf.stop_gradient(squares).flat_values) + tf.reduce_sum(x)
    assert _run(sess, tf.gradients(loss, x)[0]) == [1.0, 1.0, 1.0]
    assert tf.gradients(tf.reduce_sum(tf.stop_gradient(squares) * 2.0), x) == [None]


def test_reduce_join_over_ragged_axes(sess):
    s = tf.ragged.constant([["a", "b"], ["c"], []])
    assert _run(sess, tf.strings.reduce_join(s, axis=1)) == [b"ab", b"c", b""]
    assert _run(sess, tf.strings.reduce_join(s, axis=-1, separator=",")) == [
        b"a,b", b"c", b""]
    assert _run(sess, tf.strings.reduce_join(s, axis=0)) == [b"ac", b"b"]
    assert _run(sess, tf.strings.reduce_join(s)) == b"abc"
    assert _run(sess, tf.strings.reduce_join(s, axis=1, keepdims=True)) == [
        [b"ab"], [b"c"], [b""]]
    assert _run(sess, tf.reduce_join(s, axis=1)) == [b"ab", b"c", b""]
    s3 = tf.ragged.constant([[["a", "b"], ["c"]], [["d"]]])
    by_words = tf.strings.reduce_join(s3, axis=2, separator="+")
    assert isinstance(by_words, tf.RaggedTensor)
    assert _run(sess, by_words) == [[b"a+b", b"c"], [b"d"]]
    assert _run(sess, tf.strings.reduce_join(s3, axis=1, separator="+")) == [
        [b"a+c", b"b"], [b"d"]]
    assert _run(sess, tf.strings.reduce_join(s3, axis=[1, 2])) == [b"abc", b"d"]
    assert _run(sess, tf.strings.reduce_join(s3, axis=2, keepdims=True)) == [
        [[b"ab"], [b"c"]], [[b"d"]]]
    assert _run(sess, tf.strings.reduce_join(s3, axis=0, keepdims=True)) == [
        [[b"ad", b"b"], [b"c"]]]
    with pytest.raises(ValueError, match="out of bounds"):
        tf.strings.reduce_join(s, axis=2)


def test_reductions_keep_dims_of_a_ragged_result(sess):
    r = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert _run(sess, tf.reduce_sum(r, axis=2, keepdims=True)) == [[[3], [3]], [[4]]]
    assert _run(sess, tf.reduce_sum(r, axis=1, keepdims=True)) == [[[4, 2]], [[4]]]


def test_split_along_uniform_dimensions(sess):
    rt = tf.ragged.constant(ROWS)
    assert [_run(sess, p) for p in tf.split(rt, 2)] == [[[1., 2.], [3.]],
                                                         [[], [4., 5., 6.]]]
    assert [_run(sess, p) for p in tf.split(rt, [1, 3])] == [[[1., 2.]],
                                                              [[3.], [], [4., 5., 6.]]]
    assert [_run(sess, p) for p in tf.split(rt, tf.constant([3, 1]))] == [
        [[1., 2.], [3.], []], [[4., 5., 6.]]]
    assert tf.split(rt, 1)[0] is rt
    nested = tf.ragged.constant([[[1], [2, 3]], [[4]], [], [[5, 6]]])
    assert [_run(sess, p) for p in tf.split(nested, 2)] == [[[[1], [2, 3]], [[4]]],
                                                            [[], [[5, 6]]]]
    pairs = tf.ragged.constant([[[1., 2.], [3., 4.]], [[5., 6.]]], ragged_rank=1)
    assert [_run(sess, p) for p in tf.split(pairs, 2, axis=2)] == [
        [[[1.0], [3.0]], [[5.0]]], [[[2.0], [4.0]], [[6.0]]]]
    assert [_run(sess, p) for p in tf.split(pairs, [1, 1], axis=-1)] == [
        [[[1.0], [3.0]], [[5.0]]], [[[2.0], [4.0]], [[6.0]]]]


def test_split_errors(sess):
    rt = tf.ragged.constant(ROWS)
    with pytest.raises(ValueError, match=r"Cannot split a ragged dimension. Got `value` "
                       r"with shape <DynamicRaggedShape lengths=\[4, None\] "
                       r"num_row_partitions=1> and `axis` 1."):
        tf.split(rt, 2, axis=1)
    with pytest.raises(ValueError, match="must be >=1"):
        tf.split(rt, 0)
    with pytest.raises(TypeError, match="must be an `int` or 1-D list"):
        tf.split(rt, [[1, 3]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot exactly split"):
        sess.run(tf.split(rt, 3)[0].flat_values)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        sess.run(tf.split(rt, [5, -1])[0].flat_values)


def test_matmul_of_ragged_operands(sess):
    w = tf.constant([[1., 0.], [0., 2.]])
    square = tf.ragged.constant([[1., 2.], [3., 4.]])
    product = tf.matmul(square, w)
    assert isinstance(product, tf.Tensor) and _run(sess, product) == [[1.0, 4.0],
                                                                       [3.0, 8.0]]
    rows = tf.ragged.constant([[[1., 2.]], [[3., 4.], [5., 6.]]], ragged_rank=1)
    per_row = tf.matmul(rows, tf.constant([[[1.], [1.]], [[2.], [0.]]]))
    assert per_row.shape.as_list() == [2, None, 1]
    assert _run(sess, per_row) == [[[3.0]], [[6.0], [10.0]]]
    d3 = tf.constant([[[1., 2.], [3., 4.]], [[5., 6.], [7., 8.]]])
    u = tf.RaggedTensor.from_tensor(d3, ragged_rank=1)
    assert _run(sess, tf.matmul(u, u)) == [[[7.0, 10.0], [15.0, 22.0]],
                                           [[67.0, 78.0], [91.0, 106.0]]]
    assert _run(sess, tf.linalg.matmul(u, u, transpose_b=True)) == [
        [[5.0, 11.0], [11.0, 25.0]], [[61.0, 83.0], [83.0, 113.0]]]
    assert _run(sess, tf.matmul(u, d3, transpose_a=True)) == [
        [[10.0, 14.0], [14.0, 20.0]], [[74.0, 86.0], [86.0, 100.0]]]
    assert _run(sess, tf.matmul(d3, rows, transpose_b=True)) == [
        [[5.0], [11.0]], [[39.0, 61.0], [53.0, 83.0]]]
    both = tf.matmul(tf.ragged.constant([[[1., 2.], [3., 4.]], [[5., 6.]]]),
                     tf.ragged.constant([[[1.], [2.]], [[3.], [4.]]]))
    assert _run(sess, both) == [[[5.0], [11.0]], [[39.0]]]
    grid = tf.reshape(tf.range(16.), [2, 2, 2, 2])
    r4 = tf.RaggedTensor.from_tensor(grid, ragged_rank=1)
    assert _run(sess, tf.matmul(r4, grid)) == [
        [[[2.0, 3.0], [6.0, 11.0]], [[46.0, 55.0], [66.0, 79.0]]],
        [[[154.0, 171.0], [190.0, 211.0]], [[326.0, 351.0], [378.0, 407.0]]]]


def test_matmul_errors(sess):
    u = tf.RaggedTensor.from_tensor(tf.ones([2, 2, 2]), ragged_rank=1)
    with pytest.raises(ValueError, match="`a` and `b` must have the same rank."):
        tf.matmul(u, tf.ones([2, 2]))
    with pytest.raises(ValueError, match="`a` and `b` must have the same dtype."):
        tf.matmul(u, tf.ones([2, 2, 2], tf.float64))
    with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
        tf.matmul(u, u, transpose_a=True, adjoint_a=True)
    ragged = tf.ragged.constant(ROWS)
    with pytest.raises(tf.errors.InvalidArgumentError, match="may not be ragged"):
        sess.run(tf.matmul(ragged, tf.ones([2, 2])))


def test_reshape_to_a_dense_shape(sess):
    rt = tf.ragged.constant(ROWS)
    flat = tf.reshape(rt, [-1])
    assert isinstance(flat, tf.Tensor) and flat.shape.as_list() == [6]
    assert _run(sess, flat) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert _run(sess, tf.reshape(rt, [2, 3])) == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    nested = tf.ragged.constant([[[1], [2, 3]], [[4]]])
    assert _run(sess, tf.reshape(nested, [2, 2])) == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 6 elements to "
                       r"shape \[4,2\] \(8 elements\)"):
        tf.reshape(rt, [4, 2])
