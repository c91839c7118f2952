"""Edge cases of slicing, gathers and tensor scatters where TF1 behaves in a way that is
easy to miss; expected values come from NumPy or were recorded from TF 2.21's
tf.compat.v1."""
from re import escape as re_escape

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_getitem_list_is_read_like_a_tuple(sess):
    x = tf.constant(X)
    y = x[[0, 1]]
    assert y.shape.as_list() == [4]
    np.testing.assert_array_equal(sess.run(y), X[0, 1])
    np.testing.assert_array_equal(sess.run(x[[1, slice(None, None, -1), -1]]), X[1, ::-1, -1])


def test_getitem_of_scalar_names_the_scalar(graph):
    c = tf.constant(3.0)
    for spec in (0, np.s_[:], np.s_[tf.newaxis, 0], np.s_[tf.newaxis, :]):
        with pytest.raises(ValueError, match="Attempting to slice scalar input"):
            c[spec]
    # specs that take no dimension still work on a scalar
    assert c[...].shape.as_list() == []
    assert c[tf.newaxis].shape.as_list() == [1]
    assert c[..., tf.newaxis].shape.as_list() == [1]


def test_getitem_takes_int16_scalar_tensors(sess):
    x = tf.constant(X)
    i16 = lambda v: tf.constant(v, tf.int16)  # noqa: E731
    cases = [(x[i16(1)], X[1]), (x[i16(1):], X[1:]), (x[i16(-1), 2], X[-1, 2]),
             (x[:, i16(0):i16(2), ::i16(-1)], X[:, 0:2, ::-1])]
    for y, want in cases:
        assert y.op.inputs[1].dtype == tf.int16  # the index type TF1 picks
        assert y.shape.as_list() == list(want.shape)
        np.testing.assert_array_equal(sess.run(y), want)
    # a wider tensor in the spec widens the index type
    assert x[i16(1):tf.constant(2, tf.int64)].op.inputs[1].dtype == tf.int64


@pytest.mark.parametrize("indices", [[[0], [1]], [[0, 1], [1, 0]], [[0]]])
def test_gather_with_constant_axis_0_ignores_batch_dims(sess, indices):
    # TF1 takes its plain-gather path for a constant axis 0 and drops batch_dims
    y = tf.gather(tf.constant(X), indices, axis=0, batch_dims=1)
    want = np.take(X, indices, axis=0)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(sess.run(y), want)


def test_gather_batch_dims_above_nonzero_axis_still_fails(graph):
    with pytest.raises(ValueError, match=r"batch_dims \(2\) must be less than or equal to "
                                         r"axis \(1\)"):
        tf.gather(tf.constant(X), np.zeros((2, 3, 1), np.int32), axis=1, batch_dims=2)


def test_gather_nd_gradient_of_whole_rows_is_indexed_slices(sess):
    params = tf.constant(X[0])
    y = tf.gather_nd(params, [[2], [0], [2]])
    grad = tf.gradients(tf.reduce_sum(y * tf.constant([[1.], [2.], [3.]])), params)[0]
    assert isinstance(grad, tf.IndexedSlices)
    values, indices, dense_shape = sess.run([grad.values, grad.indices, grad.dense_shape])
    np.testing.assert_array_equal(indices, [2, 0, 2])
    np.testing.assert_array_equal(dense_shape, [3, 4])
    np.testing.assert_array_equal(values, np.repeat([[1.], [2.], [3.]], 4, axis=1))
    want = np.zeros((3, 4), np.float32)
    want[0], want[2] = 2., 4.
    np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(grad)), want)


def test_gather_nd_gradient_of_elements_stays_dense(graph):
    params = tf.placeholder(tf.float64, [3, 4])
    y = tf.gather_nd(params, [[1, 2], [1, 2]])
    grad = tf.gradients(tf.reduce_sum(y), params)[0]
    assert isinstance(grad, tf.Tensor)
    assert compute_gradient_error(params, [3, 4], y, [2]) < 1e-8
    rows = tf.gather_nd(params, [[2], [0], [2]])
    assert compute_gradient_error(params, [3, 4], rows, [3, 4]) < 1e-8


def test_tensor_scatter_updates_of_another_dtype_are_a_type_error(graph):
    with pytest.raises(TypeError, match="Input 'updates' of 'TensorScatterUpdate' Op has "
                                        "type int32"):
        tf.tensor_scatter_nd_update(tf.constant(X[0]), [[0, 1]], tf.constant([1]))


def test_tensor_scatter_python_updates_take_the_tensor_dtype(sess):
    y = tf.tensor_scatter_nd_add(tf.constant(X[0]), [[0, 1]], [5])
    assert y.dtype == tf.float32
    want = X[0].copy()
    want[0, 1] += 5
    np.testing.assert_array_equal(sess.run(y), want)


def test_tensor_scatter_shape_errors_name_the_parts(graph):
    t = tf.constant(X[0])
    with pytest.raises(ValueError, match=re_escape(
            "Dimensions [0,1) of indices[shape=[1,2]] = [1] must match dimensions [0,1) of "
            "updates[shape=[2]] = [2]")):
        tf.tensor_scatter_nd_update(t, [[0, 1]], [10., 2.])
    p = tf.placeholder(tf.float32, [None, 4])
    with pytest.raises(ValueError, match=re_escape(
            "Dimensions [1,2) of input[shape=[?,4]] = [4] must match dimensions [1,2) of "
            "updates[shape=[1,3]] = [3]")):
        tf.tensor_scatter_nd_update(p, [[0]], tf.ones([1, 3]))


def test_strided_slice_checks_shrink_strides_before_bounds_at_build_time(graph):
    x = tf.zeros([4, 5, 3])
    # axis 0 is out of bounds, but TF's shape function reports the stride of axis 1 first
    with pytest.raises(ValueError, match="only stride 1 allowed on non-range indexing"):
        tf.strided_slice(x, [5, 0], [6, 1], [1, -1], shrink_axis_mask=3)
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):
        tf.strided_slice(x, [5, 0], [6, 1], [1, 1], shrink_axis_mask=3)


def test_strided_slice_negative_shrink_stride_on_unknown_axis_fails_at_run_time(sess):
    p = tf.placeholder(tf.float32, [None, 5, None])
    y = tf.strided_slice(p, [0], [1], [-1], shrink_axis_mask=1)
    assert y.shape.as_list() == [5, None]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="only stride 1 allowed on non-range indexing"):
        sess.run(y, {p: np.zeros((4, 5, 3))})


def test_strided_slice_run_time_checks_go_axis_by_axis(sess):
    p = tf.placeholder(tf.float32)
    # axis 0 is out of bounds and axis 1 has a negative stride: axis 0 is reported
    y = tf.strided_slice(p, [-6, 0], [1, 1], [1, -1], shrink_axis_mask=3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="slice index -2 of dimension 0 out of bounds"):
        sess.run(y, {p: np.zeros((4, 5, 3))})


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_gather_gradient_with_a_fed_axis_and_unknown_rank(sess, axis):
    p = tf.placeholder(tf.float32)
    a = tf.placeholder(tf.int32, [])
    y = tf.gather(p, [1, 0, 1], axis=a)
    grad = tf.gradients(tf.reduce_sum(y * y), p)[0]
    got = sess.run(grad, {p: X, a: axis})
    want = np.zeros_like(X)
    taken = np.take(X, [1, 0, 1], axis=axis)
    index = [slice(None)] * 3
    for pos, row in enumerate([1, 0, 1]):  # each gathered slice sends back 2 * value
        index[axis] = row
        src = [slice(None)] * 3
        src[axis] = pos
        want[tuple(index)] += 2 * taken[tuple(src)]
    np.testing.assert_allclose(got, want)


def test_gather_gradient_is_sparse_only_for_a_literal_axis_0(graph):
    x = tf.placeholder(tf.float32, [3, 4])
    assert isinstance(tf.gradients(tf.gather(x, [1]), x)[0], tf.IndexedSlices)
    # -2 names the same axis, but TF1 only takes its sparse path for a literal 0
    dense = tf.gradients(tf.gather(x, [1], axis=-2), x)[0]
    assert isinstance(dense, tf.Tensor) and dense.shape.as_list() == [3, 4]


def test_slice_static_shape_from_partly_known_begin_and_size(graph):
    # TF 2.21's shapes: a -1 size takes its length from the known begin entry; an unknown
    # size tensor still gives its known entries
    n = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float32, [3, 4])
    assert tf.slice(x, [0, n], [-1, 2]).shape.as_list() == [3, 2]
    assert tf.slice(x, [n, 0], [1, -1]).shape.as_list() == [1, 4]
    assert tf.slice(tf.placeholder(tf.float32, [5, 4]), tf.stack([n, 0]),
                    tf.stack([2, n])).shape.as_list() == [2, None]
    assert tf.slice(x, tf.placeholder(tf.int32), tf.placeholder(tf.int32)).shape.as_list() \
        == [None, None]
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 5 "
                                         "from 4"):
        tf.slice(x, [n, 5], [1, -1])


def test_slice_with_tensor_entries_runs(sess):
    n = tf.placeholder(tf.int32, [])
    x = tf.constant(X[0])
    np.testing.assert_array_equal(sess.run(tf.slice(x, [0, n], [-1, 2]), {n: 1}), X[0][:, 1:3])
    np.testing.assert_array_equal(sess.run(tf.slice(x, [n, 0], [1, -1]), {n: 2}), X[0][2:3])


def test_slice_gradient_of_unknown_rank_input_knows_the_rank(sess):
    p = tf.placeholder(tf.float32)
    grad = tf.gradients(tf.reduce_sum(tf.slice(p, [0, 1, 1], [-1, 2, -1]) * 2.), p)[0]
    assert grad.shape.as_list() == [None, None, None]  # TF 2.21's static shape
    want = np.zeros_like(X)
    want[:, 1:3, 1:] = 2.
    np.testing.assert_array_equal(sess.run(grad, {p: X}), want)
