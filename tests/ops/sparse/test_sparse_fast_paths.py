"""The lean paths of the feature-column sparse kernels: SparseFillEmptyRows of entries
that fill every row in row order (nothing to insert or sort), and the one-pass bounds
tests of the sparse segment reductions, against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.sparse.sparse_select_ops import sparse_fill_empty_rows


def _numpy_fill_empty_rows(indices, values, n_rows, default):
    """TF's SparseFillEmptyRows: a (row, 0, ...) entry holding `default` for each empty
    row, entries ordered by row (stable), the empty-row flags and each input entry's
    output position."""
    rows = indices[:, 0]
    empty = np.array([r not in set(rows.tolist()) for r in range(n_rows)])
    entries = [(int(r), k, list(i), v) for k, (r, i, v) in
               enumerate(zip(rows, indices, values))]
    entries += [(r, len(values) + j, [r] + [0] * (indices.shape[1] - 1), default)
                for j, r in enumerate(np.flatnonzero(empty))]
    entries.sort(key=lambda e: (e[0], e[1]))
    position = {e[1]: p for p, e in enumerate(entries)}
    return (np.array([e[2] for e in entries], np.int64).reshape(-1, indices.shape[1]),
            np.array([e[3] for e in entries], values.dtype), empty,
            np.array([position[k] for k in range(len(values))], np.int64))


def _random_case(rs, n_rows, kind):
    """Entries of a [n_rows, 5] SparseTensor: "full" has one or more entries in every
    row in row order (a batch of ids), "unsorted" the same shuffled, "gaps" some rows
    empty."""
    per_row = rs.randint(1, 3, n_rows)
    if kind == "gaps":
        per_row[rs.rand(n_rows) < 0.4] = 0
    rows = np.repeat(np.arange(n_rows), per_row)
    cols = np.concatenate([np.arange(k) for k in per_row]).astype(np.int64)
    indices = np.stack([rows, cols], axis=1).astype(np.int64)
    values = rs.randint(0, 50, len(rows)).astype(np.int64)
    if kind == "unsorted":
        order = rs.permutation(len(rows))
        indices, values = indices[order], values[order]
    return indices, values


@pytest.mark.parametrize("kind", ["full", "unsorted", "gaps"])
def test_fill_empty_rows_matches_numpy(graph, sess, kind):
    rs = np.random.RandomState({"full": 0, "unsorted": 1, "gaps": 2}[kind])
    ind = tf.placeholder(tf.int64, [None, 2])
    val = tf.placeholder(tf.int64, [None])
    sp = tf.SparseTensor(ind, val, [9, 5])
    filled, empty = sparse_fill_empty_rows(sp, -7)
    for _ in range(4):
        indices, values = _random_case(rs, 9, kind)
        got = sess.run([filled.indices, filled.values, empty], {ind: indices, val: values})
        want = _numpy_fill_empty_rows(indices, values, 9, -7)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
        assert got[0].dtype == np.int64 and got[1].dtype == np.int64


def test_fill_empty_rows_reverse_map_and_gradient(graph, sess):
    rs = np.random.RandomState(3)
    for kind in ("full", "unsorted", "gaps"):
        indices, values = _random_case(rs, 6, kind)
        vals = tf.constant(values.astype(np.float32))
        sp = tf.SparseTensor(tf.constant(indices), vals, [6, 5])
        filled, _ = sparse_fill_empty_rows(sp, 0.5)
        weights = tf.constant(rs.randn(len(values) + 6).astype(np.float32))
        n_out = tf.shape(filled.values)[0]
        loss = tf.reduce_sum(filled.values * weights[:n_out])
        grad = tf.gradients(loss, vals)[0]
        want = _numpy_fill_empty_rows(indices, values.astype(np.float32), 6, 0.5)
        w = sess.run(weights)
        np.testing.assert_array_equal(sess.run(grad), w[want[3]])


def test_sparse_segment_mean_and_its_gradient_check_bounds(graph, sess):
    data = tf.placeholder(tf.float32, [None, 2])
    idx = tf.placeholder(tf.int32, [None])
    ids = tf.placeholder(tf.int32, [None])
    out = tf.sparse.segment_mean(data, idx, ids)
    dv = np.arange(10, dtype=np.float32).reshape(5, 2)
    got = sess.run(out, {data: dv, idx: [4, 0, 2, 2], ids: [0, 0, 1, 2]})
    np.testing.assert_allclose(got, [(dv[4] + dv[0]) / 2, dv[2], dv[2]])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] == 5 out of range"):
        sess.run(out, {data: dv, idx: [0, 5], ids: [0, 1]})
    with pytest.raises(errors.InvalidArgumentError, match="segment ids are not increasing"):
        sess.run(out, {data: dv, idx: [0, 1, 2], ids: [0, 1, 0]})
    var = tf.constant(dv)
    grad = tf.gradients(tf.sparse.segment_mean(var, [4, 0, 2, 2], [0, 0, 1, 2]), var)[0]
    want = np.zeros((5, 2), np.float32)
    want[4] += 0.5
    want[0] += 0.5
    want[2] += 2.0
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)), want)
