"""The one-row-per-segment paths of SparseSegmentSum/Mean/SqrtN and of their gradients
(ops/sparse/sparse_segment_ops.py): segment ids that never repeat (one id per example,
as feature columns feed them) skip the accumulation and the division by counts of 1.
Each case is checked to the bit against a NumPy loop that accumulates in order, and the
cases with repeated ids (the general path) against the same loop."""
import numpy as np
import pytest

import tensorweave as tf

_REDUCERS = {"sum": tf.sparse.segment_sum, "mean": tf.sparse.segment_mean,
             "sqrt_n": tf.sparse.segment_sqrt_n}


def _scales(count: np.ndarray, kind: str) -> np.ndarray:
    scale = np.maximum(count.astype(np.float64), 1.0)
    return np.sqrt(scale) if kind == "sqrt_n" else scale


def _numpy_segment(data, indices, ids, n, kind):
    """out[ids[k]] += data[indices[k]] in order from 0, then divided by the counts."""
    out = np.zeros((n,) + data.shape[1:], data.dtype)
    for i, s in zip(indices.tolist(), ids.tolist()):
        out[s] = out[s] + data[i]
    if kind == "sum":
        return out
    count = np.bincount(ids, minlength=n)
    return (out / _scales(count, kind).reshape(-1, 1)).astype(data.dtype)


def _numpy_segment_grad(grad, indices, ids, rows, kind):
    """out[indices[k]] += grad[ids[k]] / scale[ids[k]] in order from 0."""
    count = np.bincount(ids, minlength=grad.shape[0])
    part = grad[ids] if kind == "sum" else \
        (grad[ids] / _scales(count, kind)[ids].reshape(-1, 1)).astype(grad.dtype)
    out = np.zeros((rows,) + grad.shape[1:], grad.dtype)
    for k, i in enumerate(indices.tolist()):
        out[i] = out[i] + part[k]
    return out


def _case(rs, kind):
    """(data, indices, segment ids): "distinct" one row per segment (with gaps),
    "repeated" several rows in some segments, "empty" no rows at all."""
    data = rs.randn(7, 3).astype(np.float32)
    data[2, 1] = -0.0  # 0 + -0.0 is 0.0: the lean path must not keep the sign
    if kind == "empty":
        return data, np.zeros(0, np.int32), np.zeros(0, np.int32)
    n = 6
    indices = rs.randint(0, 7, n).astype(np.int32)
    indices[0] = 2
    step = rs.randint(1, 3, n) if kind == "distinct" else rs.randint(0, 2, n)
    ids = (np.cumsum(step) - step[0]).astype(np.int32)
    return data, indices, ids


@pytest.mark.parametrize("kind", sorted(_REDUCERS))
def test_segment_reductions_match_an_ordered_numpy_sum(graph, sess, kind):
    rs = np.random.RandomState(len(kind))
    data = tf.placeholder(tf.float32, [7, 3])
    indices = tf.placeholder(tf.int32, [None])
    ids = tf.placeholder(tf.int32, [None])
    out = _REDUCERS[kind](data, indices, ids)
    grad_in = tf.placeholder(tf.float32, [None, 3])
    grad = tf.gradients(out, data, grad_in)[0]
    for case in ("distinct", "repeated", "empty") * 3:
        d, i, s = _case(rs, case)
        n = int(s[-1]) + 1 if s.size else 0
        g = rs.randn(n, 3).astype(np.float32)
        got, got_grad = sess.run([out, grad], {data: d, indices: i, ids: s, grad_in: g})
        want = _numpy_segment(d, i, s, n, kind)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got_grad, _numpy_segment_grad(g, i, s, 7, kind))


def test_segment_mean_with_num_segments_keeps_empty_segments_zero(graph, sess):
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = tf.sparse.segment_mean(data, [3, 0], [1, 4], num_segments=6)
    want = np.zeros((6, 3), np.float32)
    want[1], want[4] = data[3], data[0]
    np.testing.assert_array_equal(sess.run(out), want)
