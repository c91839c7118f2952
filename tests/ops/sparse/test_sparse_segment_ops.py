"""sparse.segment_sum / segment_mean / segment_sqrt_n against NumPy, with gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_DATA = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
_IDX, _SEG = [0, 2, 1, 2], [0, 0, 2, 2]


def _reference(kind, num=None):
    n = num if num is not None else _SEG[-1] + 1
    out = np.zeros((n, 2))
    count = np.zeros(n)
    for i, s in zip(_IDX, _SEG):
        out[s] += _DATA[i]
        count[s] += 1
    scale = {"sum": np.ones(n), "mean": np.maximum(count, 1),
             "sqrt_n": np.sqrt(np.maximum(count, 1))}[kind]
    return out / scale[:, None]


@pytest.mark.parametrize("kind", ["sum", "mean", "sqrt_n"])
def test_segment_values_and_gradients(sess, kind):
    fn = getattr(tf.sparse, "segment_" + kind)
    assert getattr(tf, "sparse_segment_" + kind) is fn
    y = fn(_DATA.astype(np.float32), _IDX, _SEG)
    assert y.shape.as_list() == [None, 2] and y.dtype == tf.float32
    np.testing.assert_allclose(sess.run(y), _reference(kind), rtol=1e-6)
    z = fn(_DATA, _IDX, _SEG, num_segments=5)
    assert z.shape.as_list() == [5, 2]
    np.testing.assert_allclose(sess.run(z), _reference(kind, 5))
    x = tf.placeholder(tf.float64, [3, 2])
    for out, rows in ((fn(x, _IDX, _SEG), 3), (fn(x, _IDX, _SEG, num_segments=4), 4)):
        assert compute_gradient_error(x, [3, 2], out, [rows, 2], x_init_value=_DATA) < 1e-8


def test_segment_errors(sess):
    p = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        sess.run(tf.sparse.segment_sum(_DATA, [0, 2, 1], p), {p: [1, 0, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] == 5 out of range"):
        sess.run(tf.sparse.segment_sum(_DATA, p, [0, 0]), {p: [0, 5]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        sess.run(tf.sparse.segment_mean(_DATA, p, [0, 0]), {p: [0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        sess.run(tf.sparse.segment_sum(_DATA, [0, 1], p, num_segments=2), {p: [0, 3]})


@pytest.mark.parametrize("kind", ["Sum", "Mean", "SqrtN"])
def test_the_grad_ops_tf_graphs_hold(sess, kind):
    # output[indices[i]] += grad[segment_ids[i]] / (1, count, sqrt(count)) of its segment
    grad = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    indices, ids = [0, 2, 2], [0, 0, 1]
    op = getattr(tf.raw_ops, "SparseSegment%sGrad" % kind)
    out = op(grad=grad, indices=indices, segment_ids=ids, output_dim0=4)
    counts = np.bincount(ids).astype(np.float32)
    scale = {"Sum": np.ones(2), "Mean": counts, "SqrtN": np.sqrt(counts)}[kind]
    want = np.zeros((4, 2), np.float32)
    for i, s in zip(indices, ids):
        want[i] += grad[s] / scale[s]
    np.testing.assert_allclose(sess.run(out), want, rtol=1e-6)

