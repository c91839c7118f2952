"""Segment reductions, dynamic_partition and dynamic_stitch against loop-based NumPy
references, with TF1's static shapes, error messages and numeric gradients."""
import re

import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def _shape(t):
    s = t.shape
    return None if s.ndims is None else s.as_list()


def _reference(kind, data, ids, num, empty):
    """out[s] = reduce(data[ids == s]) row by row (a plain loop: the independent check)."""
    data = np.asarray(data)
    ids = np.asarray(ids)
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    out = np.full((num,) + rows.shape[1:], empty, dtype=data.dtype)
    for s in range(num):
        sel = rows[flat_ids == s]
        if len(sel):
            if kind == "sum":
                out[s] = sel.sum(axis=0)
            elif kind == "max":
                out[s] = sel.max(axis=0)
            elif kind == "min":
                out[s] = sel.min(axis=0)
            elif data.dtype.kind in "iu":
                out[s] = np.trunc(sel.sum(axis=0) / len(sel))
            else:
                out[s] = sel.mean(axis=0)
    return out


SORTED = [("sum", tf.segment_sum), ("mean", tf.segment_mean), ("max", tf.segment_max),
          ("min", tf.segment_min)]


# --- sorted segment reductions -----------------------------------------------------------
@pytest.mark.parametrize("kind,fn", SORTED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int32, np.int64])
def test_sorted_segments_match_reference(sess, kind, fn, dtype):
    data = (np.random.rand(7, 3) * 20 - 10).astype(dtype)
    ids = np.array([0, 0, 2, 2, 2, 5, 5])  # segments 1, 3 and 4 are empty
    for ids_dtype in (tf.int32, tf.int64):
        t = fn(data, tf.constant(ids, ids_dtype))
        assert _shape(t) == [None, 3]
        out = sess.run(t)
        want = _reference(kind, data, ids, 6, 0)
        assert out.dtype == dtype
        np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-2 if np.dtype(dtype).itemsize == 2 else 1e-6)


def test_segment_mean_int_truncates_and_empty_is_zero(sess):
    np.testing.assert_array_equal(sess.run(tf.segment_mean([1, 2, -3, -4, 5], [0, 0, 1, 1, 3])),
                                  [1, -3, 0, 5])
    np.testing.assert_array_equal(sess.run(tf.segment_mean([1.0, 2, 3], [0, 2, 2])),
                                  [1, 0, 2.5])
    np.testing.assert_array_equal(sess.run(tf.segment_max([1.0, 2, 3], [0, 2, 2])), [1, 0, 3])
    v = sess.run(tf.segment_max(tf.constant([1, 2], tf.int8), [0, 2]))
    np.testing.assert_array_equal(v, [1, 0, 2])
    assert v.dtype == np.int8


def test_segment_sum_empty_input(sess):
    out = sess.run(tf.segment_sum(np.zeros((0, 2)), np.zeros(0, np.int32)))
    assert out.shape == (0, 2)


def test_sorted_segment_shapes_and_errors(sess):
    q = tf.placeholder(tf.float32, [4, None, 3])
    assert _shape(tf.segment_sum(q, tf.placeholder(tf.int32, [None]))) == [None, None, 3]
    assert _shape(tf.segment_sum(q, tf.placeholder(tf.int32, [5]))) == [None, None, 3]
    assert tf.segment_max(tf.placeholder(tf.float32), [0]).shape.ndims is None
    assert tf.segment_sum(q, [0, 0, 1, 1]).op.type == "SegmentSum"
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.segment_sum(q, tf.placeholder(tf.int32, [2, None]))
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        tf.segment_sum(tf.constant(1.0), [0])
    with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
        tf.segment_sum([True], [0])
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.segment_max(tf.constant([1j]), [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids are not increasing"):
        sess.run(tf.segment_sum([1.0, 2, 3], [1, 0, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "Segment id -1 out of range [0, 1), possibly because 'segment_ids' input is not "
            "sorted.")):
        sess.run(tf.segment_sum([1.0, 2, 3], [-1, 0, 0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment_ids should be the same "
                                                            "size as dimension 0 of input"):
        sess.run(tf.segment_mean([1.0, 2, 3], tf.placeholder_with_default([0, 0], [None])))


def test_segment_sum_complex(sess):
    out = sess.run(tf.segment_sum(np.array([1 + 2j, 3j, 4]), [0, 0, 1]))
    np.testing.assert_array_equal(out, [1 + 5j, 4])


# --- unsorted segment reductions ---------------------------------------------------------
UNSORTED = [("sum", tf.unsorted_segment_sum, 0),
            ("max", tf.unsorted_segment_max, "lowest"),
            ("min", tf.unsorted_segment_min, "highest")]


@pytest.mark.parametrize("kind,fn,empty", UNSORTED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int32, np.int64, np.uint8])
def test_unsorted_segments_match_reference(sess, kind, fn, empty, dtype):
    data = (np.random.rand(4, 3, 2) * 20).astype(dtype)
    ids = np.array([[3, -1, 0], [0, 3, 5], [-2, 3, 0], [5, 5, 0]])  # negatives dropped
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else ml_dtypes.finfo(dtype)
    empty = {"lowest": info.min, "highest": info.max}.get(empty, empty)
    for num in (7, tf.constant(7, tf.int64)):
        t = fn(data, ids, num)
        assert _shape(t) == [7, 2]
        out = sess.run(t)
        assert out.dtype == dtype
        want = _reference(kind, data, ids, 7, empty)
        np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-2 if kind == "sum" and info.bits == 16 else 1e-6)


def test_unsorted_segment_max_empty_is_lowest_like_tf(sess):
    out = sess.run(tf.unsorted_segment_max([1.0, 2, 3], [0, 0, 2], 4))
    lowest = np.finfo(np.float32).min
    np.testing.assert_array_equal(out, np.array([2, lowest, 3, lowest], np.float32))
    out = sess.run(tf.unsorted_segment_max([1, 2, 3], [0, 0, 2], 4))
    np.testing.assert_array_equal(out, [2, -2**31, 3, -2**31])


def test_unsorted_segment_sum_large_rows(sess):
    data = np.random.rand(1000, 17)
    ids = np.random.randint(-3, 50, size=1000)
    out = sess.run(tf.unsorted_segment_sum(data, ids, 50))
    np.testing.assert_allclose(out, _reference("sum", data, ids, 50, 0), rtol=1e-10)


def test_unsorted_segment_shapes_and_errors(sess):
    P = tf.placeholder
    q = P(tf.float32, [4, None, 3])
    iv = P(tf.int32, [None])
    assert _shape(tf.unsorted_segment_sum(q, iv, 7)) == [7, None, 3]
    assert _shape(tf.unsorted_segment_sum(q, P(tf.int32, [4, None]), 7)) == [7, 3]
    assert _shape(tf.unsorted_segment_max(q, iv, P(tf.int32, []))) == [None, None, 3]
    assert tf.unsorted_segment_sum(P(tf.float32), iv, 7).shape.ndims is None
    assert tf.unsorted_segment_sum(q, P(tf.int32), 7).shape.ndims is None
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 5"):
        tf.unsorted_segment_sum(q, P(tf.int32, [5]), 7)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.unsorted_segment_sum(q, iv, [7])
    with pytest.raises(ValueError, match="Dimension size, given by scalar input 2, must be "
                                         "non-negative but is -1"):
        tf.unsorted_segment_sum(q, iv, -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "segment_ids[1] = 5 is out of range [0, 3)")):
        sess.run(tf.unsorted_segment_sum([1.0, 2, 3], [0, 5, 1], 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "segment_ids[1] = 9 is out of range [0, 4)")):
        sess.run(tf.unsorted_segment_max([1, 2, 3], [0, 9, 2], 4))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input num_segments == -1 must "
                                                            "not be negative"):
        sess.run(tf.unsorted_segment_sum([1.0, 2, 3], [0, 0, 1],
                                         tf.placeholder_with_default(-1, [])))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "data.shape = [3] does not start with segment_ids.shape = [2]")):
        sess.run(tf.unsorted_segment_sum([1.0, 2, 3], tf.placeholder_with_default(
            [0, 0], [None]), 3))


def test_indexed_slices_densify_through_unsorted_segment_sum(sess):
    values = tf.constant(np.arange(6.0).reshape(3, 2))
    slices = tf.IndexedSlices(values, tf.constant([2, 0, 2]), tf.constant([4, 2]))
    dense = tf.convert_to_tensor(slices)
    assert dense.op.type == "UnsortedSegmentSum"
    np.testing.assert_array_equal(sess.run(dense), [[2, 3], [0, 0], [4, 6], [0, 0]])


# --- gradients of segment reductions -----------------------------------------------------
def test_segment_sum_and_mean_gradients(graph):
    x = tf.placeholder(tf.float64, [6, 2])
    ids = [0, 0, 1, 3, 3, 3]
    assert compute_gradient_error(x, [6, 2], tf.segment_sum(x, ids), [4, 2]) < 1e-8
    assert compute_gradient_error(x, [6, 2], tf.segment_mean(x, ids), [4, 2]) < 1e-8


def test_segment_mean_gradient_unknown_rows(sess):
    x = tf.placeholder(tf.float64, [None, 2])
    g = tf.gradients(tf.segment_mean(x, [0, 0, 2]), x)[0]
    np.testing.assert_allclose(sess.run(g, {x: np.zeros((3, 2))}), [[.5, .5], [.5, .5], [1, 1]])


@pytest.mark.parametrize("fn", [tf.segment_max, tf.segment_min])
def test_segment_max_min_gradients(graph, fn):
    x = tf.placeholder(tf.float64, [6, 2])
    init = np.random.permutation(12).reshape(6, 2).astype(np.float64)
    y = fn(x, [0, 0, 1, 3, 3, 3])
    assert compute_gradient_error(x, [6, 2], y, [4, 2], x_init_value=init) < 1e-8


def test_segment_max_gradient_splits_ties_evenly(sess):
    x = tf.constant([3.0, 3.0, 1.0, 5.0])
    g = tf.gradients(tf.segment_max(x, [0, 0, 0, 1]), x)[0]
    np.testing.assert_allclose(sess.run(g), [0.5, 0.5, 0, 1])
    g2 = tf.gradients(tf.unsorted_segment_max(x, [0, 2, 0, 0], 3), x)[0]
    np.testing.assert_allclose(sess.run(g2), [0, 1, 0, 1])
    g3 = tf.gradients(tf.unsorted_segment_max(x, [1, 1, -1, 0], 2), x)[0]
    np.testing.assert_allclose(sess.run(g3), [0.5, 0.5, 0, 1])


def test_unsorted_segment_sum_gradient_drops_negative_ids(graph):
    x = tf.placeholder(tf.float64, [3, 4, 2])
    ids = np.array([[3, -1, 0, 1], [0, 3, -2, 1], [2, 2, 0, 0]])
    y = tf.unsorted_segment_sum(x, ids, 5)
    assert compute_gradient_error(x, [3, 4, 2], y, [5, 2]) < 1e-8


@pytest.mark.parametrize("fn", [tf.unsorted_segment_max, tf.unsorted_segment_min])
def test_unsorted_segment_max_min_gradients(graph, fn):
    x = tf.placeholder(tf.float64, [5, 2])
    init = np.random.permutation(10).reshape(5, 2).astype(np.float64)
    y = fn(x, [2, -1, 0, 2, 2], 4)
    # Empty segments hold the dtype's extreme value; their gradient is 0 either way.
    assert compute_gradient_error(x, [5, 2], y, [4, 2], x_init_value=init) < 1e-8


# --- dynamic_partition -------------------------------------------------------------------
def test_dynamic_partition(sess):
    data = np.arange(12.0).reshape(2, 3, 2)
    parts = np.array([[1, 0, 2], [2, 1, 1]])
    outs = tf.dynamic_partition(data, parts, 4)
    assert len(outs) == 4 and all(_shape(t) == [None, 2] for t in outs)
    values = sess.run(outs)
    for p, v in enumerate(values):
        np.testing.assert_array_equal(v, data[parts == p])
    assert values[3].shape == (0, 2)


def test_dynamic_partition_shapes_and_errors(sess):
    P = tf.placeholder
    q = P(tf.float32, [4, None, 3])
    assert [_shape(t) for t in tf.dynamic_partition(q, P(tf.int32, [4, None]), 3)] == \
        [[None, 3]] * 3
    assert [t.shape.ndims for t in tf.dynamic_partition(q, P(tf.int32), 2)] == [None, None]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 5"):
        tf.dynamic_partition(q, P(tf.int32, [5]), 2)
    with pytest.raises(ValueError, match="passed 0 less than minimum 1"):
        tf.dynamic_partition([1.0, 2, 3], [0, 0, 1], 0)
    with pytest.raises(TypeError):
        tf.dynamic_partition([1.0, 2, 3], tf.constant([0, 0, 1], tf.int64), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "partitions[1] = 2 is not in [0, 2)")):
        sess.run(tf.dynamic_partition([1.0, 2, 3], [0, 2, 1], 2))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "partitions[1] = -1 is not in [0, 2)")):
        sess.run(tf.dynamic_partition([1.0, 2, 3], [0, -1, 1], 2))


def test_dynamic_partition_gradient(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    a, b = tf.dynamic_partition(x, [1, 0, 1], 2)
    y = tf.concat([a * 2.0, b * 3.0], 0)
    assert compute_gradient_error(x, [3, 2], y, [3, 2]) < 1e-8
    x2 = tf.placeholder(tf.float64, [2, 2, 3])
    c, _ = tf.dynamic_partition(x2, [[1, 0], [0, 0]], 2)
    assert compute_gradient_error(x2, [2, 2, 3], c, [3, 3]) < 1e-8


# --- dynamic_stitch ----------------------------------------------------------------------
def test_dynamic_stitch(sess):
    t = tf.dynamic_stitch([[0, 2], [1]], [[[1.0, 2]] * 2, [[3.0, 4]]])
    assert _shape(t) == [3, 2]
    np.testing.assert_array_equal(sess.run(t), [[1, 2], [3, 4], [1, 2]])
    np.testing.assert_array_equal(sess.run(tf.dynamic_stitch([[0, 3], [1]],
                                                             [[1.0, 2], [3.0]])), [1, 3, 0, 2])
    np.testing.assert_array_equal(sess.run(tf.dynamic_stitch([[0, 1], [1, 0]],
                                                             [[1.0, 2], [3.0, 4]])), [4, 3])
    np.testing.assert_array_equal(sess.run(tf.dynamic_stitch([[0, 1, 0]], [[1.0, 2, 5]])),
                                  [5, 2])
    idx = [np.array([[4, 0], [2, 6]]), np.array([1, 3, 5])]
    data = [np.arange(8).reshape(2, 2, 2), np.arange(6).reshape(3, 2) + 100]
    want = np.zeros((7, 2), np.int64)
    want[idx[0].reshape(-1)] = data[0].reshape(4, 2)
    want[idx[1]] = data[1]
    np.testing.assert_array_equal(sess.run(tf.dynamic_stitch(idx, data)), want)
    empty = tf.dynamic_stitch([tf.placeholder_with_default(np.zeros(0, np.int32), [None])],
                              [tf.placeholder_with_default(np.zeros(0), [None])])
    assert sess.run(empty).shape == (0,)


def test_dynamic_stitch_shapes_and_errors(sess):
    P = tf.placeholder
    iv = P(tf.int32, [None])
    assert _shape(tf.dynamic_stitch([iv, iv], [P(tf.float32, [None, 3]),
                                               P(tf.float32, [None, 3])])) == [None, 3]
    assert _shape(tf.dynamic_stitch([tf.constant([0, 5]), iv],
                                    [P(tf.float32, [2]), P(tf.float32, [None])])) == [None]
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 2 "
                                         "and 3"):
        tf.dynamic_stitch([[0, 2], [1]], [[[1.0, 2]] * 2, [[3.0, 4, 5]]])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.dynamic_stitch([[0, 2], [1]], [[[1.0, 2]] * 3, [[3.0, 4]]])
    with pytest.raises(ValueError, match="with length 1 must match length 2"):
        tf.dynamic_stitch([[0], [1]], [[1.0]])
    with pytest.raises(TypeError):
        tf.dynamic_stitch([tf.constant([0], tf.int64)], [[1.0]])
    d = tf.placeholder_with_default
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "data[0].shape = [3] does not start with indices[0].shape = [2]")):
        sess.run(tf.dynamic_stitch([d([0, 1], [None])], [d([1.0, 2, 5], [None])]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(
            "indices[1] is out of range")):
        sess.run(tf.dynamic_stitch([d([0, -1], [None])], [d([1.0, 2], [None])]))


def test_dynamic_stitch_gradient(graph):
    a = tf.placeholder(tf.float64, [2, 2])
    b = tf.constant(np.ones((1, 2)))
    y = tf.dynamic_stitch([[2, 0], [1]], [a, b])
    assert compute_gradient_error(a, [2, 2], y, [3, 2]) < 1e-8


def test_parallel_dynamic_stitch_as_in_tf_meta_graphs(sess):
    # the op TF's embedding_lookup builds over a partitioned variable (a TF meta graph
    # holds it): the values and gradient of DynamicStitch
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)
    y = tf.raw_ops.ParallelDynamicStitch(indices=[[2, 0], [1]],
                                         data=[a, tf.constant([[5.0, 6.0]], tf.float64)])
    assert y.op.type == "ParallelDynamicStitch" and _shape(y) == [3, 2]
    np.testing.assert_array_equal(sess.run(y), [[3, 4], [5, 6], [1, 2]])
    x = tf.placeholder(tf.float64, [2, 2])
    z = tf.raw_ops.ParallelDynamicStitch(indices=[[1, 0]], data=[x])
    assert compute_gradient_error(x, [2, 2], z, [2, 2]) < 1e-8


def test_partition_stitch_roundtrip(sess):
    data = np.random.rand(10, 3)
    parts = np.random.randint(0, 3, size=10)
    pieces = tf.dynamic_partition(data, parts, 3)
    positions = tf.dynamic_partition(np.arange(10, dtype=np.int32), parts, 3)
    np.testing.assert_array_equal(sess.run(tf.dynamic_stitch(positions, pieces)), data)


def test_exports():
    for name in ["segment_sum", "segment_mean", "segment_max", "segment_min",
                 "unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min"]:
        assert getattr(tf, name) is getattr(tf.math, name), name
    assert callable(tf.dynamic_partition) and callable(tf.dynamic_stitch)


def test_sorted_segment_max_min_skip_nan_as_tf(sess):
    # TF's max(a, b) is `a < b ? b : a` from -inf: NaN never wins, a segment of NaNs
    # holds -inf (inf for min); an empty segment is 0
    data = np.array([[np.nan, 1.0], [2.0, np.nan], [np.nan, np.nan], [5.0, -1.0]],
                    np.float32)
    ids = np.array([0, 0, 1, 3])
    mx, mn = sess.run([tf.segment_max(data, ids), tf.segment_min(data, ids)])
    np.testing.assert_array_equal(mx, [[2.0, 1.0], [-np.inf, -np.inf], [0, 0], [5.0, -1.0]])
    np.testing.assert_array_equal(mn, [[2.0, 1.0], [np.inf, np.inf], [0, 0], [5.0, -1.0]])


def test_sorted_segment_sum_of_long_segments(sess):
    rng = np.random.RandomState(0)
    data = rng.rand(20000, 8).astype(np.float32)
    ids = np.sort(rng.randint(0, 300, 20000))
    ids[ids == 7] = 8  # an empty segment in the middle
    got = sess.run(tf.segment_sum(data, ids))
    want = np.zeros((300, 8))
    np.add.at(want, ids, data.astype(np.float64))
    assert got.dtype == np.float32 and not got[7].any()
    np.testing.assert_allclose(got, want, rtol=2e-6)
