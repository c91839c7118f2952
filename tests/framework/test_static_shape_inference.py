"""Static shapes from shape tensors known in part at build time (framework/tensor_util.py).

TF's shape inference evaluates small constant subgraphs (`tf.constant(...) * 2`,
`tf.slice` of a constant, `tf.maximum(tf.shape(z), 3)` of a known shape), reads one known
dimension of a partly known shape (`tf.shape(y)[2]`) and slices partial shapes
(`tf.shape(y)[1:]`). Every expected shape below is TF 2.21's (tensorflow.compat.v1 in
graph mode), printed by the same expression.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import tensor_util

S = tf.shape


class _In:
    """The inputs each case builds from: y [?, 3, 4], x and u of unknown shape, z [2, 3],
    c = [3, 2, 5], pwd a placeholder_with_default of shape [2]."""

    def __init__(self):
        self.y = tf.placeholder(tf.float32, [None, 3, 4])
        self.x = tf.placeholder(tf.float32)
        self.z = tf.placeholder(tf.float32, [2, 3])
        self.u = tf.placeholder(tf.float32)
        self.c = tf.constant([3, 2, 5])
        self.pwd = tf.placeholder_with_default([2, 3], [2])


# (name, build(inputs), TF 2.21's static shape; None for an unknown rank)
CASES = [
    ("reshape_concat_of_shape_slice",
     lambda i: tf.reshape(i.x, tf.concat([[-1], S(i.y)[1:]], 0)), [None, 3, 4]),
    ("zeros_of_shape_slice", lambda i: tf.zeros(S(i.y)[1:]), [3, 4]),
    ("reshape_slice_of_const", lambda i: tf.reshape(i.x, tf.slice(i.c, [0], [2])), [3, 2]),
    ("reshape_const_times_2", lambda i: tf.reshape(i.x, i.c * 2), [6, 4, 10]),
    ("reshape_stack_of_known_dim", lambda i: tf.reshape(i.y, [-1, S(i.y)[2]]), [None, 4]),
    ("ones_stack", lambda i: tf.ones(tf.stack([S(i.y)[1], 7])), [3, 7]),
    ("fill_shape_slice", lambda i: tf.fill(S(i.y)[1:], 1.0), [3, 4]),
    ("tile_list_with_dim", lambda i: tf.tile(i.y, [2, S(i.y)[1], 1]), [None, 9, 4]),
    ("tile_stack_with_dim", lambda i: tf.tile(i.y, tf.stack([1, S(i.y)[1], 1])),
     [None, 9, 4]),
    ("broadcast_to_concat", lambda i: tf.broadcast_to(i.z, tf.concat([[5], S(i.z)], 0)),
     [5, 2, 3]),
    ("random_normal_shape_slice", lambda i: tf.random_normal(S(i.y)[1:]), [3, 4]),
    ("truncated_normal_shape_slice", lambda i: tf.truncated_normal(S(i.y)[1:]), [3, 4]),
    ("random_uniform_dim_times_2",
     lambda i: tf.random_uniform(tf.stack([S(i.y)[2] * 2, 3])), [8, 3]),
    ("random_uniform_known_shape_plus_1", lambda i: tf.random_uniform(S(i.z) + 1), [3, 4]),
    ("zeros_negative_begin", lambda i: tf.zeros(S(i.y)[-2:]), [3, 4]),
    ("zeros_one_dim_slice", lambda i: tf.zeros(S(i.y)[1:2]), [3]),
    ("zeros_up_to_last", lambda i: tf.zeros(S(i.y)[:-1]), [None, 3]),
    ("zeros_stride_2", lambda i: tf.zeros(S(i.y)[::2]), [None, 4]),
    ("zeros_backwards", lambda i: tf.zeros(S(i.y)[2:0:-1]), [4, 3]),
    ("zeros_nested_slices", lambda i: tf.zeros(S(i.y)[1:][0:2]), [3, 4]),
    ("zeros_tensor_begin", lambda i: tf.zeros(S(i.y)[tf.constant(1):]), [3, 4]),
    ("zeros_tensor_end", lambda i: tf.zeros(S(i.y)[:tf.constant(2)]), [None, 3]),
    ("zeros_negative_indices", lambda i: tf.zeros(tf.stack([S(i.y)[-1], S(i.y)[-2]])),
     [4, 3]),
    ("zeros_known_shape_times_2", lambda i: tf.zeros(S(i.z) * 2), [4, 6]),
    ("zeros_known_shape_slice_plus_1", lambda i: tf.zeros(S(i.z)[1:] + 1), [4]),
    ("zeros_list_of_dims", lambda i: tf.zeros([S(i.y)[1], S(i.y)[0]]), [3, None]),
    ("zeros_concat_two_shapes", lambda i: tf.zeros(tf.concat([S(i.y)[1:], S(i.z)], 0)),
     [3, 4, 2, 3]),
    ("zeros_cast_int64", lambda i: tf.zeros(tf.cast(S(i.y)[1:], tf.int64)), [3, 4]),
    ("zeros_int64_shape_dim", lambda i: tf.zeros(tf.stack([tf.shape(i.y, out_type=tf.int64)[1],
                                                            2])), [3, 2]),
    ("zeros_unstack_of_shape", lambda i: tf.zeros(tf.unstack(S(i.y))[1:]), [3, 4]),
    ("ones_unstack_dims", lambda i: tf.ones(tf.stack([tf.unstack(S(i.y))[2],
                                                      tf.unstack(S(i.y))[0]])), [4, None]),
    ("reshape_product_of_known_dims",
     lambda i: tf.reshape(i.y, [-1, S(i.y)[1] * S(i.y)[2]]), [None, 12]),
    ("reshape_dim_minus_1_plus_1", lambda i: tf.reshape(i.y, [-1, S(i.y)[2] - 1 + 1]),
     [None, 4]),
    ("reshape_head_and_tail", lambda i: tf.reshape(i.x, tf.concat([S(i.y)[:-1], [2, 2]], 0)),
     [None, 3, 2, 2]),
    ("reshape_tail_of_y", lambda i: tf.reshape(i.y, tf.concat([[-1], S(i.y)[2:]], 0)),
     [None, 4]),
    ("zeros_stack_sum_of_dims", lambda i: tf.zeros(tf.stack([S(i.y)[1], S(i.z)[0] + S(i.y)[2]])),
     [3, 6]),
    ("zeros_minimum_of_dim", lambda i: tf.zeros(tf.stack([tf.minimum(S(i.y)[1], 2), 2])),
     [2, 2]),
    ("zeros_maximum", lambda i: tf.zeros(tf.maximum(S(i.z), 3)), [3, 3]),
    ("zeros_floormod", lambda i: tf.zeros(tf.floormod(S(i.z), 2) + 1), [1, 2]),
    ("zeros_gather_known_shape", lambda i: tf.zeros(tf.gather(S(i.z), [1, 0])), [3, 2]),
    ("zeros_reverse_known_shape", lambda i: tf.zeros(tf.reverse(S(i.z), [0])), [3, 2]),
    ("zeros_where_select",
     lambda i: tf.zeros(tf.where(tf.constant([True, False]), S(i.z), [7, 7])), [2, 7]),
    ("zeros_float_arithmetic",
     lambda i: tf.zeros(tf.cast(tf.cast(S(i.z), tf.float32) * 1.5, tf.int32)), [3, 4]),
    ("zeros_identity", lambda i: tf.zeros(tf.identity(i.c)), [3, 2, 5]),
    ("zeros_stop_gradient", lambda i: tf.zeros(tf.stop_gradient(i.c)), [3, 2, 5]),
    ("zeros_shape_n", lambda i: tf.zeros(tf.shape_n([i.y, i.z])[1]), [2, 3]),
    ("zeros_shape_n_partial", lambda i: tf.zeros(tf.shape_n([i.y, i.z])[0]), [None, 3, 4]),
    ("zeros_shape_n_slice", lambda i: tf.zeros(tf.shape_n([i.y, i.z])[0][1:]), [3, 4]),
    ("zeros_like_of_reshape", lambda i: tf.zeros_like(tf.reshape(i.x, S(i.y)[1:])), [3, 4]),
    ("zeros_shape_of_pwd_slice", lambda i: tf.zeros(S(tf.placeholder_with_default(
        tf.zeros([2, 3]), [None, 3]))[1:]), [3]),
    ("expand_dims_rank_minus_1", lambda i: tf.expand_dims(i.z, tf.rank(i.z) - 1), [2, 1, 3]),
    ("pad_const_times_2", lambda i: tf.pad(i.z, tf.constant([[1, 1], [0, 0]]) * 2), [6, 3]),
    ("concat_axis_rank_minus_1", lambda i: tf.concat([i.z, i.z], tf.rank(i.z) - 1), [2, 6]),
    ("one_hot_depth_plus_1",
     lambda i: tf.one_hot(tf.placeholder(tf.int32, [None]), tf.constant(3) + 1), [None, 4]),
    # what stays unknown in TF stays unknown here
    ("reshape_shape_times_2", lambda i: tf.reshape(i.x, S(i.y) * 2), [None, None, None]),
    ("reshape_shape_slice_times_1",
     lambda i: tf.reshape(i.x, tf.concat([[-1], S(i.y)[1:] * 1], 0)), [None, None, None]),
    ("random_shape_slice_floordiv", lambda i: tf.random_normal(S(i.y)[1:] // 2), [None, None]),
    ("zeros_slice_op_of_partial_shape", lambda i: tf.zeros(tf.slice(S(i.y), [1], [2])),
     [None, None]),
    ("zeros_gather_partial_shape", lambda i: tf.zeros(tf.gather(S(i.y), [1, 2])), [None, None]),
    ("zeros_dim_with_computed_index",
     lambda i: tf.zeros(tf.stack([S(i.y)[tf.constant(2) - 1], 2])), [None, 2]),
    ("zeros_dim_through_identity", lambda i: tf.zeros(tf.stack([tf.identity(S(i.y))[1], 2])),
     [None, 2]),
    ("zeros_reduce_prod_partial", lambda i: tf.zeros(tf.stack([tf.reduce_prod(S(i.y)[1:]), 1])),
     [None, 1]),
    ("zeros_size_partial", lambda i: tf.zeros(tf.stack([tf.size(i.y), 2])), [None, 2]),
    ("zeros_cast_through_float",
     lambda i: tf.zeros(tf.cast(tf.cast(S(i.y)[1:], tf.float32), tf.int32)), [None, None]),
    ("reshape_head_and_minus_1", lambda i: tf.reshape(i.y, tf.concat([S(i.y)[:1], [-1]], 0)),
     [None, None]),
    ("zeros_pwd_never_folded", lambda i: tf.zeros(i.pwd), [None, None]),
    ("zeros_pwd_times_1_never_folded", lambda i: tf.zeros(i.pwd * 1), [None, None]),
    ("zeros_unknown_rank_slice", lambda i: tf.zeros(S(i.u)[1:]), None),
    ("zeros_unknown_rank_concat", lambda i: tf.zeros(tf.concat([S(i.y)[1:], S(i.u)], 0)), None),
    ("zeros_empty_slice", lambda i: tf.zeros(S(i.y)[2:1]), []),
]


@pytest.mark.parametrize("build, want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_static_shapes_match_tf(graph, build, want):
    got = build(_In()).shape
    assert (got.as_list() if got.ndims is not None else None) == want


def test_dense_after_reshape_to_a_known_last_dim(sess):
    """The motivating program: TF gives (?, 4) for the reshape, so Dense builds (?, 2)."""
    y = tf.placeholder(tf.float32, [None, 5, 4])
    flat = tf.reshape(y, [-1, tf.shape(y)[2]])
    assert flat.shape.as_list() == [None, 4]
    out = tf.layers.dense(flat, 2)
    assert out.shape.as_list() == [None, 2]
    sess.run(tf.global_variables_initializer())
    assert sess.run(out, {y: np.ones((3, 5, 4), np.float32)}).shape == (15, 2)


def test_safe_embedding_lookup_sparse_rows_are_known():
    # TF 2.21: (3, 3) -- the dense shape's leading dims come from a constant slice
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 0], [1, 1], [2, 0]], tf.constant([0, 1, 2], tf.int64),
                             dense_shape=[3, 2])
        params = tf.constant(np.arange(9.0, dtype=np.float32).reshape(3, 3))
        assert tf.nn.safe_embedding_lookup_sparse(params, sp, None).shape.as_list() == [3, 3]


def test_values_at_run_time_are_unchanged(sess):
    y = tf.placeholder(tf.float32, [None, 3, 4])
    c = tf.constant([3, 2, 5])
    value = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    flat = tf.reshape(y, [-1, tf.shape(y)[1] * tf.shape(y)[2]])
    back = tf.reshape(flat, tf.concat([[-1], tf.shape(y)[1:]], 0))
    filled = tf.fill(tf.shape(y)[1:], 2.0)
    sliced = tf.reshape(tf.range(6.0), tf.slice(c, [0], [2]))
    f, b, fi, s = sess.run([flat, back, filled, sliced], {y: value})
    np.testing.assert_array_equal(f, value.reshape(2, 12))
    np.testing.assert_array_equal(b, value)
    np.testing.assert_array_equal(fi, np.full((3, 4), 2.0))
    np.testing.assert_array_equal(s, np.arange(6.0).reshape(3, 2))


def test_build_time_values(graph):
    y = tf.placeholder(tf.float32, [None, 3, 4])
    c = tf.constant([3, 2, 5])
    assert tensor_util.constant_value(tf.shape(y)[2]) == 4
    assert tensor_util.constant_value(tf.shape(y)[0]) is None
    assert tensor_util.constant_value(c * 2).tolist() == [6, 4, 10]
    assert tensor_util.constant_value(tf.slice(c, [1], [2])).tolist() == [2, 5]
    # never evaluated: fed values and stateful ops
    assert tensor_util.constant_value(tf.placeholder_with_default(c, [3]) * 2) is None
    assert tensor_util.constant_value(tf.random_uniform([2]) * 0) is None
    assert tensor_util.constant_value_as_shape(tf.shape(y)[1:]).as_list() == [3, 4]
    # a caller may write to a value it gets: the next caller still sees the right one
    doubled = c * 2
    tensor_util.constant_value(doubled)[0] = 99
    assert tensor_util.constant_value(doubled).tolist() == [6, 4, 10]


def test_shared_shape_arithmetic_is_evaluated_once(graph):
    """A DAG of shape arithmetic costs one evaluation per node, not one per path (2**40
    here)."""
    n = tf.constant(5)
    for _ in range(40):
        n = tf.maximum(n, n)
    assert tf.zeros(tf.stack([n])).shape.as_list() == [5]


def test_where_tf_reports_a_subshape_error_the_value_decides(graph):
    # TF 2.21 raises "Subshape must have computed start >= end" for a backwards slice
    # with begin_mask; tensorweave uses the full value where it is known, else nothing
    z = tf.placeholder(tf.float32, [2, 3])
    y = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.zeros(tf.shape(z)[::-1]).shape.as_list() == [3, 2]
    assert tf.zeros(tf.shape(y)[::-1]).shape.as_list() == [None, None, None]
