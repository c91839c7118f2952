"""nce_loss, sampled_softmax_loss (against NumPy with the same sampled_values), sharded
embedding_lookup, embedding_lookup_sparse and safe_embedding_lookup_sparse."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

RNG = np.random.RandomState(0)
W = RNG.randn(10, 4)
B = RNG.randn(10)
X = RNG.randn(3, 4)
LABELS = np.array([[1, 2], [5, 6], [7, 2]])
SAMPLED = np.array([2, 5, 9, 0])
TRUE_EXP = np.array([[0.5, 0.3], [0.25, 0.4], [0.2, 0.3]])
SAMPLED_EXP = np.array([0.3, 0.4, 0.1, 0.6])
FLT_MAX = np.finfo(np.float32).max


def _sampled_values(dtype=tf.float32):
    return (tf.constant(SAMPLED, tf.int64), tf.constant(TRUE_EXP, dtype),
            tf.constant(SAMPLED_EXP, dtype))


def _ref_logits(remove_hits, w=W, b=B, x=X, labels=LABELS):
    true = np.einsum("bd,btd->bt", x, w[labels]) + b[labels] - np.log(TRUE_EXP)
    sampled = x @ w[SAMPLED].T + b[SAMPLED] - np.log(SAMPLED_EXP)
    if remove_hits:
        for i in range(labels.shape[0]):
            for j, c in enumerate(SAMPLED):
                if c in labels[i]:
                    sampled[i, j] -= FLT_MAX
    num_true = labels.shape[1]
    y = np.concatenate([np.full(true.shape, 1.0 / num_true), np.zeros(sampled.shape)], 1)
    return np.concatenate([true, sampled], 1), y


def _ref_nce(remove_hits=False):
    z, y = _ref_logits(remove_hits)
    return (np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).sum(1)


def _ref_softmax(remove_hits=True):
    z, y = _ref_logits(remove_hits)
    z = z - z.max(1, keepdims=True)
    return -(y * (z - np.log(np.exp(z).sum(1, keepdims=True)))).sum(1)


@pytest.mark.parametrize("remove_hits", [False, True])
def test_nce_loss_matches_numpy(sess, remove_hits):
    loss = tf.nn.nce_loss(W, B, LABELS, X, 4, 10, num_true=2, sampled_values=_sampled_values(),
                          remove_accidental_hits=remove_hits)
    assert loss.shape.as_list() == [3] and loss.dtype == tf.float64
    np.testing.assert_allclose(sess.run(loss), _ref_nce(remove_hits), rtol=1e-6)


@pytest.mark.parametrize("remove_hits", [False, True])
def test_sampled_softmax_loss_matches_numpy(sess, remove_hits):
    loss = tf.nn.sampled_softmax_loss(W, B, LABELS, X, 4, 10, num_true=2,
                                      sampled_values=_sampled_values(),
                                      remove_accidental_hits=remove_hits)
    assert loss.shape.as_list() == [3]
    np.testing.assert_allclose(sess.run(loss), _ref_softmax(remove_hits), rtol=1e-6)


@pytest.mark.parametrize("strategy,shards", [
    ("mod", [W[0::3], W[1::3], W[2::3]]),
    ("div", [W[0:4], W[4:7], W[7:10]]),
])
def test_sharded_weights(sess, strategy, shards):
    bias_shards = [B[0::3], B[1::3], B[2::3]] if strategy == "mod" else [B[:4], B[4:7], B[7:]]
    loss = tf.nn.sampled_softmax_loss(shards, bias_shards, LABELS, X, 4, 10, num_true=2,
                                      sampled_values=_sampled_values(),
                                      partition_strategy=strategy)
    np.testing.assert_allclose(sess.run(loss), _ref_softmax(True), rtol=1e-6)
    nce = tf.nn.nce_loss([tf.Variable(s) for s in shards], bias_shards, LABELS, X, 4, 10,
                         num_true=2, sampled_values=_sampled_values(),
                         partition_strategy=strategy)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(nce), _ref_nce(), rtol=1e-6)


def test_float32_inputs_and_labels_of_shape_batch_by_one(sess):
    loss = tf.nn.sampled_softmax_loss(W.astype(np.float32), B.astype(np.float32),
                                      LABELS[:, :1], X.astype(np.float32), 4, 10,
                                      sampled_values=(tf.constant(SAMPLED, tf.int64),
                                                      tf.constant(TRUE_EXP[:, :1], tf.float32),
                                                      tf.constant(SAMPLED_EXP, tf.float32)))
    assert loss.dtype == tf.float32
    true = np.einsum("bd,bd->b", X, W[LABELS[:, 0]]) + B[LABELS[:, 0]] - np.log(TRUE_EXP[:, 0])
    sampled = X @ W[SAMPLED].T + B[SAMPLED] - np.log(SAMPLED_EXP)
    for i in range(3):
        sampled[i, SAMPLED == LABELS[i, 0]] -= FLT_MAX
    z = np.concatenate([true[:, None], sampled], 1)
    ref = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1) - true
    np.testing.assert_allclose(sess.run(loss), ref, rtol=1e-5)


def test_default_sampler_is_seeded_log_uniform(graph):
    loss = tf.nn.sampled_softmax_loss(W, B, LABELS[:, :1], X, 5, 10, seed=4)
    ops = {op.type for op in graph.get_operations()}
    assert "LogUniformCandidateSampler" in ops and "ComputeAccidentalHits" in ops
    runs = []
    for _ in range(2):
        with tf.Session(graph=graph) as s:
            runs.append(s.run(loss))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert np.all(np.isfinite(runs[0])) and np.all(runs[0] > 0)


def test_gradients_numerically(sess):
    x = tf.placeholder(tf.float64, [3, 4])
    w = tf.placeholder(tf.float64, [10, 4])
    loss = tf.nn.sampled_softmax_loss(w, B, LABELS, x, 4, 10, num_true=2,
                                      sampled_values=_sampled_values(tf.float64))
    nce = tf.nn.nce_loss(w, B, LABELS, x, 4, 10, num_true=2,
                         sampled_values=_sampled_values(tf.float64))
    for y in (loss, nce):
        for t, value in ((x, X), (w, W)):
            err = compute_gradient_error(t, list(value.shape), y, [3], x_init_value=value,
                                         delta=1e-6, extra_feed_dict={x: X, w: W})
            assert err < 1e-6


# --- sharded embedding_lookup ------------------------------------------------------------
@pytest.mark.parametrize("strategy,shards", [
    ("mod", [W[0::3], W[1::3], W[2::3]]),
    ("div", [W[0:4], W[4:7], W[7:10]]),
])
def test_sharded_embedding_lookup(sess, strategy, shards):
    ids = np.array([[9, 0, 4], [3, 3, 7]])
    out = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
    assert out.shape.as_list() == [2, 3, 4]
    np.testing.assert_allclose(sess.run(out), W[ids])
    ph = tf.placeholder(tf.int32, [None])
    assert tf.nn.embedding_lookup(shards, ph, partition_strategy=strategy).shape.as_list() \
        == [None, 4]


def test_sharded_embedding_lookup_of_variables_gradient(sess):
    shards = [tf.Variable(W[0::2]), tf.Variable(W[1::2])]
    out = tf.nn.embedding_lookup(shards, [3, 4, 3], max_norm=1.0)
    grads = tf.gradients(tf.reduce_sum(out), shards)
    sess.run(tf.global_variables_initializer())
    rows = W[[3, 4, 3]]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.testing.assert_allclose(sess.run(out), rows / np.maximum(norms, 1.0))
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)


# --- embedding_lookup_sparse ---------------------------------------------------------------
SP_INDICES = [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [3, 0]]
SP_IDS = np.array([1, 3, 1, 5, 0, 9], np.int64)
SP_WEIGHTS = np.array([1.0, 2.0, 0.5, 3.0, -1.0, 2.0])


def _ref_sparse(combiner, weights):
    out = np.zeros((4, 4))
    for row in range(4):
        sel = [k for k, (r, _) in enumerate(SP_INDICES) if r == row]
        if not sel:
            continue
        w = weights[sel]
        total = (W[SP_IDS[sel]] * w[:, None]).sum(0)
        norm = {"sum": 1.0, "mean": w.sum(), "sqrtn": np.sqrt((w ** 2).sum())}[combiner]
        out[row] = total / norm
    return out


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_lookup_sparse(sess, combiner):
    sp_ids = tf.SparseTensor(SP_INDICES, SP_IDS, [4, 3])
    sp_w = tf.SparseTensor(SP_INDICES, SP_WEIGHTS, [4, 3])
    weighted = tf.nn.embedding_lookup_sparse(W, sp_ids, sp_w, combiner=combiner)
    plain = tf.nn.embedding_lookup_sparse([W[0::2], W[1::2]], sp_ids, None, combiner=combiner)
    assert weighted.shape.as_list() == [None, 4]
    np.testing.assert_allclose(sess.run(weighted), _ref_sparse(combiner, SP_WEIGHTS))
    np.testing.assert_allclose(sess.run(plain), _ref_sparse(combiner, np.ones(6)))


def test_embedding_lookup_sparse_errors(graph):
    sp_ids = tf.SparseTensor(SP_INDICES, SP_IDS, [4, 3])
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(W, sp_ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(W, SP_IDS, None)
    with pytest.raises(TypeError, match="sp_weights must be either None or SparseTensor"):
        tf.nn.embedding_lookup_sparse(W, sp_ids, SP_WEIGHTS)


def test_embedding_lookup_sparse_gradient(sess):
    params = tf.placeholder(tf.float64, [10, 4])
    sp_ids = tf.SparseTensor(SP_INDICES, SP_IDS, [4, 3])
    sp_w = tf.SparseTensor(SP_INDICES, SP_WEIGHTS, [4, 3])
    out = tf.nn.embedding_lookup_sparse(params, sp_ids, sp_w, combiner="sqrtn")
    err = compute_gradient_error(params, [10, 4], out, [4, 4], x_init_value=W, delta=1e-6)
    assert err < 1e-6


def test_embedding_lookup_sparse_gradient_of_a_variable_is_sparse(sess):
    params = tf.Variable(W)
    sp_ids = tf.SparseTensor(SP_INDICES, SP_IDS, [4, 3])
    sp_w = tf.SparseTensor(SP_INDICES, SP_WEIGHTS, [4, 3])
    out = tf.nn.embedding_lookup_sparse(params, sp_ids, sp_w, combiner="sum")
    grad = tf.gradients(tf.reduce_sum(out), params)[0]
    assert isinstance(grad, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    dense = np.zeros_like(W)
    np.add.at(dense, SP_IDS, np.repeat(SP_WEIGHTS[:, None], 4, 1))
    np.testing.assert_allclose(sess.run(tf.convert_to_tensor(grad)), dense)


def test_safe_embedding_lookup_sparse(sess):
    # 3-D ids [2, 2, 3]: invalid (negative) ids and non-positive weights are dropped;
    # empty entries give zeros, or the default id's embedding
    indices = [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 2]]
    ids = np.array([1, 4, -1, 2, 3, 7], np.int64)
    weights = np.array([1.0, 3.0, 2.0, 0.0, 2.0, 1.0])
    sp_ids = tf.SparseTensor(indices, ids, [2, 2, 3])
    sp_w = tf.SparseTensor(indices, weights, [2, 2, 3])
    out = tf.nn.safe_embedding_lookup_sparse(W, sp_ids, sp_w)
    with_default = tf.nn.safe_embedding_lookup_sparse([W[:5], W[5:]], sp_ids, sp_w,
                                                      default_id=9)
    assert out.shape.as_list() == [2, 2, 4]  # TF 2.21's
    expected = np.stack([(W[1] * 1 + W[4] * 3) / 4, np.zeros(4), W[3], W[7]]).reshape(2, 2, 4)
    np.testing.assert_allclose(sess.run(out), expected)
    expected[0, 1] = W[9]
    np.testing.assert_allclose(sess.run(with_default), expected)
    summed = tf.nn.safe_embedding_lookup_sparse(W, sp_ids, None, combiner="sum")
    np.testing.assert_allclose(sess.run(summed)[1, 0], W[2] + W[3])
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        tf.nn.safe_embedding_lookup_sparse([], sp_ids)
