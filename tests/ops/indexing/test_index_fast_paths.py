"""The lean paths of small index kernels: the strided-slice index a node remembers for
constant specs, the one-pass bounds test (`outside`) of gathers and segment sums, and
GatherNd's row count. Each is checked against NumPy and against the errors of the slow
path it skips."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.indexing.indexing_ops import outside


def test_outside():
    assert not outside(np.array([], np.int64), 0)
    assert not outside(np.array([[0, 4], [2, 3]], np.int32), 5)
    assert outside(np.array([[0, 5], [2, 3]], np.int32), 5)
    assert outside(np.array([0, -1, 2], np.int64), 5)
    assert outside(np.array(7), 7) and not outside(np.array(6), 7)


def test_strided_slice_with_constant_spec_follows_the_input_shape(graph, sess):
    x = tf.placeholder(tf.float32, [None, None])
    col = x[:, -1]
    last_rows = x[-2:]
    rows = tf.shape(x)[0]
    rs = np.random.RandomState(0)
    for shape in [(3, 4), (5, 2), (3, 4), (1, 3)]:  # the same nodes, shapes changing
        xv = rs.randn(*shape).astype(np.float32)
        got = sess.run([col, last_rows, rows], {x: xv})
        np.testing.assert_array_equal(got[0], xv[:, -1])
        np.testing.assert_array_equal(got[1], xv[-2:])
        assert got[2] == shape[0]


def test_strided_slice_with_a_fed_spec_changed_in_place(graph, sess):
    x = tf.placeholder(tf.float32, [4, 4])
    begin = tf.placeholder(tf.int32, [2])
    y = tf.strided_slice(x, begin, [4, 4], [1, 1])
    xv = np.arange(16, dtype=np.float32).reshape(4, 4)
    bv = np.array([0, 0], np.int32)
    np.testing.assert_array_equal(sess.run(y, {x: xv, begin: bv}), xv)
    bv[:] = [1, 2]  # the same (writable) array, new values: never a remembered index
    np.testing.assert_array_equal(sess.run(y, {x: xv, begin: bv}), xv[1:, 2:])
    frozen = np.array([2, 1], np.int32)
    frozen.setflags(write=False)
    for _ in range(2):
        np.testing.assert_array_equal(sess.run(y, {x: xv, begin: frozen}), xv[2:, 1:])


def test_strided_slice_shrink_after_a_remembered_index(graph, sess):
    x = tf.placeholder(tf.float32, [None])
    last, fourth = x[-1], x[3]
    # (each fetch list is a plan of its own, whose nodes remember their own indices)
    assert sess.run(last, {x: np.arange(5, dtype=np.float32)}) == 4.0
    assert sess.run(last, {x: np.arange(3, dtype=np.float32)}) == 2.0  # -1 is 2 now
    assert sess.run(fourth, {x: np.arange(5, dtype=np.float32)}) == 3.0
    with pytest.raises(errors.InvalidArgumentError,
                       match="slice index 3 of dimension 0 out of bounds"):
        sess.run(fourth, {x: np.arange(2, dtype=np.float32)})


@pytest.mark.parametrize("bad", [-1, 6])
def test_gather_checks_bounds(graph, sess, bad):
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    ids = tf.placeholder(tf.int64, [None])
    out = tf.gather(params, ids)
    rs = np.random.RandomState(1)
    iv = rs.randint(0, 6, 9)
    np.testing.assert_array_equal(sess.run(out, {ids: iv}),
                                  np.arange(12).reshape(6, 2)[iv])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = %d is not in "
                       r"\[0, 6\)" % bad):
        sess.run(out, {ids: [0, bad, 2]})


def test_resource_gather_checks_bounds(graph, sess):
    v = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2), use_resource=True)
    ids = tf.placeholder(tf.int32, [None])
    out = tf.nn.embedding_lookup(v, ids)
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(out, {ids: [3, 0, 3]}),
                                  np.arange(8).reshape(4, 2)[[3, 0, 3]])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 4 is not in"):
        sess.run(out, {ids: [0, 4]})


def test_unsorted_segment_sum_drops_negative_ids_and_rejects_large_ones(graph, sess):
    data = tf.placeholder(tf.float32, [None, 3])
    ids = tf.placeholder(tf.int32, [None])
    out = tf.math.unsorted_segment_sum(data, ids, 4)
    rs = np.random.RandomState(2)
    dv = rs.randn(6, 3).astype(np.float32)
    for iv in ([0, 3, 3, 1, 0, 2], [0, -1, 3, -2, 0, 2]):
        want = np.zeros((4, 3), np.float32)
        for row, i in zip(dv, iv):
            if i >= 0:
                want[i] += row
        np.testing.assert_allclose(sess.run(out, {data: dv, ids: iv}), want, rtol=1e-6)
    with pytest.raises(errors.InvalidArgumentError, match=r"segment_ids\[2\] = 4 is out of "
                       r"range \[0, 4\)"):
        sess.run(out, {data: dv, ids: [0, 1, 4, 1, 0, -1]})


def test_gather_nd_rows(graph, sess):
    params = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    idx = tf.placeholder(tf.int64, [None, None, 2])
    out = tf.gather_nd(params, idx)
    iv = np.array([[[0, 1], [3, 2]], [[1, 0], [2, 2]], [[3, 0], [0, 0]]])
    np.testing.assert_array_equal(sess.run(out, {idx: iv}), params[iv[..., 0], iv[..., 1]])
    empty = np.zeros((0, 5, 2), np.int64)
    assert sess.run(out, {idx: empty}).shape == (0, 5, 2)
    with pytest.raises(errors.InvalidArgumentError, match="does not index into param"):
        sess.run(out, {idx: [[[0, 3]]]})


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (0, 3)])
def test_where_coordinates_match_numpy(graph, sess, shape):
    rs = np.random.RandomState(4)
    for dtype in (tf.bool, tf.float32, tf.int64):
        x = tf.placeholder(dtype, None)
        coords = tf.where(x)
        xv = (rs.rand(*shape) > 0.5).astype(dtype.as_numpy_dtype)
        got = sess.run(coords, {x: xv})
        assert got.dtype == np.int64 and got.shape == (int(np.count_nonzero(xv)), len(shape))
        np.testing.assert_array_equal(got, np.argwhere(xv))


def _first_appearance_unique(items: list):
    """Unique's (y, idx, count) by a plain loop: y in order of first appearance, equal
    values (0.0 and -0.0 among them) one entry, each NaN an entry of its own."""
    y, idx = [], []
    for v in items:
        at = next((k for k, u in enumerate(y) if u is v or u == v), None)
        if at is None:
            at = len(y)
            y.append(v)
        idx.append(at)
    return y, idx, [idx.count(k) for k in range(len(y))]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float32, np.float64,
                                   object])
def test_small_unique_matches_a_first_appearance_loop(graph, sess, dtype):
    rs = np.random.RandomState(5)
    x = tf.placeholder(tf.string if dtype is object else tf.as_dtype(dtype), [None])
    y, idx, count = tf.unique_with_counts(x, out_idx=tf.int64)
    plain = tf.unique(x)  # (Unique skips the counts)
    cases = [rs.randint(0, 50, 64), rs.randint(0, 200, 300), np.zeros(0), np.full(9, 3)]
    if dtype in (np.float32, np.float64):
        cases.append(np.array([0.0, np.nan, -0.0, np.nan, 1.5, 0.0, np.inf, 1.5]))
    for case in cases:
        value = np.array([b"s%d" % v for v in case.tolist()], object) if dtype is object \
            else case.astype(dtype)
        got, got_plain = sess.run([[y, idx, count], plain], {x: value})
        want_y, want_idx, want_count = _first_appearance_unique(value.tolist())
        np.testing.assert_array_equal(got[0], np.array(want_y, value.dtype))
        assert got[0].dtype == value.dtype
        if value.dtype.kind == "f":  # the first of 0.0 and -0.0 is the one kept
            np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(want_y))
        assert got[1].tolist() == want_idx and got[1].dtype == np.int64
        assert got[2].tolist() == want_count
        np.testing.assert_array_equal(got_plain.y, got[0])
        assert got_plain.idx.tolist() == want_idx and got_plain.idx.dtype == np.int32
