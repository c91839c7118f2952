"""embedding_lookup over a partitioned table as Figure 3 of the OSDI 2016 paper builds it
(DynamicPartition of the ids, one Gather colocated with each shard, DynamicStitch), with
uneven shards and both partition strategies; per-shard IndexedSlices gradients and the
sparse updates of the optimizers (against NumPy); embedding_lookup_sparse and the sampled
losses with a PartitionedVariable for weights and biases."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(3)
ROWS, DIM, SHARDS = 11, 4, 4          # shards of 3, 3, 3, 2 rows
TABLE = RNG.randn(ROWS, DIM)          # the logical table: row i is the embedding of id i
IDS = np.array([[0, 5, 10], [5, 3, 7]])
COEF = RNG.randn(2, 3, DIM)


def _layout(strategy):
    """Logical row of each row of the partitioned variable's concatenation."""
    if strategy == "div":
        return np.arange(ROWS)
    return np.concatenate([np.arange(k, ROWS, SHARDS) for k in range(SHARDS)])


def _partitioned(strategy, dtype=tf.float64, name="emb", table=TABLE):
    value = table[_layout(strategy)].astype(dtype.as_numpy_dtype)
    return tf.get_variable(name, initializer=tf.constant(value),
                           partitioner=tf.fixed_size_partitioner(SHARDS))


def _logical(strategy, concatenated):
    out = np.empty_like(concatenated)
    out[_layout(strategy)] = concatenated
    return out


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_lookup_in_a_partitioned_variable(sess, strategy):
    v = _partitioned(strategy)
    assert [s.shape.as_list()[0] for s in v] == [3, 3, 3, 2]
    out = tf.nn.embedding_lookup(v, IDS, partition_strategy=strategy)
    as_list = tf.nn.embedding_lookup(list(v), IDS, partition_strategy=strategy)
    assert out.dtype == tf.float64 and out.shape.as_list() == [2, 3, DIM]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(out), TABLE[IDS])
    np.testing.assert_array_equal(sess.run(as_list), TABLE[IDS])
    clipped = tf.nn.embedding_lookup(v, IDS, partition_strategy=strategy, max_norm=0.5)
    rows = TABLE[IDS]
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    np.testing.assert_allclose(sess.run(clipped), rows * 0.5 / np.maximum(norms, 0.5))


def test_lookup_with_unknown_ids_shape(sess):
    v = _partitioned("div", tf.float32)
    ids = tf.placeholder(tf.int64, [None])
    out = tf.nn.embedding_lookup(v, ids, partition_strategy="div")
    assert out.shape.as_list() == [None, DIM] and out.dtype == tf.float32
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(out, {ids: [10, 2, 9, 9]}),
                               TABLE[[10, 2, 9, 9]].astype(np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(out, {ids: [11]})


def test_graph_is_partition_gather_per_shard_stitch(graph):
    with tf.device(tf.train.replica_device_setter(ps_tasks=SHARDS)):
        v = _partitioned("div")
        tf.nn.embedding_lookup(v, IDS, partition_strategy="div", name="lookup")
    ops = {op.name: op for op in graph.get_operations() if op.name.startswith("lookup/")}
    types = sorted(op.type for op in ops.values())
    assert types.count("DynamicPartition") == 2 and types.count("DynamicStitch") == 1
    gathers = sorted((op for op in ops.values() if op.type == "ResourceGather"),
                     key=lambda op: op.name)
    assert len(gathers) == SHARDS
    for k, op in enumerate(gathers):
        shard = list(v)[k]
        assert op.inputs[0] is shard.handle
        assert op.colocation_groups() == [("loc:@emb/part_%d" % k).encode()]
        assert op.device == shard.device == "/job:ps/task:%d" % k


def test_gradients_are_per_shard_indexed_slices(sess):
    v = _partitioned("mod")
    out = tf.nn.embedding_lookup(v, IDS, partition_strategy="mod")
    grads = tf.gradients(tf.reduce_sum(out * COEF), list(v))
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    sess.run(tf.global_variables_initializer())
    dense = np.zeros_like(TABLE)
    np.add.at(dense, IDS.reshape(-1), COEF.reshape(-1, DIM))
    got = np.concatenate([sess.run(tf.convert_to_tensor(g)) for g in grads])
    np.testing.assert_allclose(_logical("mod", got), dense)
    # each shard's gradient names only the rows looked up in it (shard-local indices)
    assert sorted(sess.run(grads[1].indices).tolist()) == [1, 1]     # ids 5, 5 -> row 1


def _sparse_grad():
    g = np.zeros_like(TABLE)
    np.add.at(g, IDS.reshape(-1), COEF.reshape(-1, DIM))
    return g, np.unique(IDS)


def _f32(x):
    # the optimizers' hyperparameters are float32 tensors cast to the variable's dtype
    return float(np.float32(x))


def _ref_gd(steps, lr=_f32(0.1)):
    t, (g, _) = TABLE.copy(), _sparse_grad()
    for _ in range(steps):
        t -= lr * g
    return t


def _ref_momentum(steps, lr=_f32(0.1), mom=_f32(0.9)):
    t, (g, rows) = TABLE.copy(), _sparse_grad()
    acc = np.zeros_like(t)
    for _ in range(steps):
        acc[rows] = mom * acc[rows] + g[rows]
        t[rows] -= lr * acc[rows]
    return t


def _ref_adagrad(steps, lr=_f32(0.1), init=0.1):
    t, (g, rows) = TABLE.copy(), _sparse_grad()
    acc = np.full_like(t, init)
    for _ in range(steps):
        acc[rows] += g[rows] ** 2
        t[rows] -= lr * g[rows] / np.sqrt(acc[rows])
    return t


def _ref_adam(steps, lr=_f32(0.1), b1=_f32(0.9), b2=_f32(0.999), eps=_f32(1e-8)):
    # TF1's (non-lazy) Adam: m and v of every row decay, every row of var moves with m
    t, (g, _) = TABLE.copy(), _sparse_grad()
    m, v = np.zeros_like(t), np.zeros_like(t)
    b1p, b2p = np.float32(b1), np.float32(b2)       # beta powers: float32 variables
    for _ in range(steps):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        t -= lr * np.sqrt(1 - float(b2p)) / (1 - float(b1p)) * m / (np.sqrt(v) + eps)
        b1p, b2p = b1p * np.float32(b1), b2p * np.float32(b2)
    return t


@pytest.mark.parametrize("make,ref,touches_only_gathered_rows", [
    (lambda: tf.train.GradientDescentOptimizer(0.1), _ref_gd, True),
    (lambda: tf.train.MomentumOptimizer(0.1, 0.9), _ref_momentum, True),
    (lambda: tf.train.AdagradOptimizer(0.1), _ref_adagrad, True),
    (lambda: tf.train.AdamOptimizer(0.1), _ref_adam, False),
])
@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sparse_updates_of_the_shards(sess, make, ref, touches_only_gathered_rows, strategy):
    v = _partitioned(strategy)
    out = tf.nn.embedding_lookup(v, IDS, partition_strategy=strategy)
    train = make().minimize(tf.reduce_sum(out * COEF))
    sess.run(tf.global_variables_initializer())
    for _ in range(2):
        sess.run(train)
    got = _logical(strategy, sess.run(v.as_tensor()))
    np.testing.assert_allclose(got, ref(2), rtol=1e-10, atol=1e-12)
    untouched = np.setdiff1d(np.arange(ROWS), IDS)
    if touches_only_gathered_rows:
        np.testing.assert_array_equal(got[untouched], TABLE[untouched])


# --- embedding_lookup_sparse ---------------------------------------------------------------
SP_INDICES = [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [3, 0]]
SP_IDS = np.array([1, 3, 1, 10, 0, 9], np.int64)
SP_WEIGHTS = np.array([1.0, 2.0, 0.5, 3.0, -1.0, 2.0])


def _ref_sparse(combiner, weights):
    out = np.zeros((4, DIM))
    for row in range(4):
        sel = [k for k, (r, _) in enumerate(SP_INDICES) if r == row]
        if not sel:
            continue
        w = weights[sel]
        norm = {"sum": 1.0, "mean": w.sum(), "sqrtn": np.sqrt((w ** 2).sum())}[combiner]
        out[row] = (TABLE[SP_IDS[sel]] * w[:, None]).sum(0) / norm
    return out


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_sparse_over_shards(sess, combiner, strategy):
    v = _partitioned(strategy)
    sp_ids = tf.SparseTensor(SP_INDICES, SP_IDS, [4, 3])
    sp_w = tf.SparseTensor(SP_INDICES, SP_WEIGHTS, [4, 3])
    weighted = tf.nn.embedding_lookup_sparse(v, sp_ids, sp_w, partition_strategy=strategy,
                                             combiner=combiner)
    plain = tf.nn.embedding_lookup_sparse(list(v), sp_ids, None, partition_strategy=strategy,
                                          combiner=combiner)
    assert weighted.shape.as_list() == [None, DIM] and weighted.dtype == tf.float64
    grads = tf.gradients(tf.reduce_sum(weighted), list(v))
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(weighted), _ref_sparse(combiner, SP_WEIGHTS))
    np.testing.assert_allclose(sess.run(plain), _ref_sparse(combiner, np.ones(6)))
    # d sum / d table[id]: each entry's weight over its row's norm
    row_of = np.array([r for r, _ in SP_INDICES])
    norms = {"sum": np.ones(6), "mean": np.bincount(row_of, SP_WEIGHTS)[row_of],
             "sqrtn": np.sqrt(np.bincount(row_of, SP_WEIGHTS ** 2)[row_of])}[combiner]
    dense = np.zeros_like(TABLE)
    np.add.at(dense, SP_IDS, np.repeat((SP_WEIGHTS / norms)[:, None], DIM, 1))
    got = np.concatenate([sess.run(tf.convert_to_tensor(g)) for g in grads])
    np.testing.assert_allclose(_logical(strategy, got), dense, rtol=1e-12, atol=1e-12)


# --- sampled losses with sharded weights ---------------------------------------------------
BIAS = RNG.randn(ROWS)
X = RNG.randn(3, DIM)
LABELS = np.array([[1, 2], [5, 10], [7, 2]])
SAMPLED = np.array([2, 5, 9, 0])
TRUE_EXP = np.array([[0.5, 0.3], [0.25, 0.4], [0.2, 0.3]])
SAMPLED_EXP = np.array([0.3, 0.4, 0.1, 0.6])


def _ref_logits(remove_hits):
    true = np.einsum("bd,btd->bt", X, TABLE[LABELS]) + BIAS[LABELS] - np.log(TRUE_EXP)
    sampled = X @ TABLE[SAMPLED].T + BIAS[SAMPLED] - np.log(SAMPLED_EXP)
    if remove_hits:
        hit = (LABELS[:, :, None] == SAMPLED[None, None, :]).any(1)
        sampled = sampled - hit * np.finfo(np.float32).max
    labels = np.concatenate([np.full(true.shape, 0.5), np.zeros(sampled.shape)], 1)
    return np.concatenate([true, sampled], 1), labels


@pytest.mark.parametrize("remove_hits", [False, True])
@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sampled_losses_with_partitioned_weights_and_biases(sess, strategy, remove_hits):
    w = _partitioned(strategy)
    b = tf.get_variable("bias", initializer=tf.constant(BIAS[_layout(strategy)]),
                        partitioner=tf.fixed_size_partitioner(SHARDS))
    sampled_values = (tf.constant(SAMPLED, tf.int64), tf.constant(TRUE_EXP),
                      tf.constant(SAMPLED_EXP))
    common = dict(labels=LABELS, inputs=X, num_sampled=4, num_classes=ROWS, num_true=2,
                  sampled_values=sampled_values, remove_accidental_hits=remove_hits,
                  partition_strategy=strategy)
    softmax = tf.nn.sampled_softmax_loss(w, b, **common)
    nce = tf.nn.nce_loss(list(w), list(b), **common)
    assert softmax.shape.as_list() == [3] == nce.shape.as_list()
    grads = tf.gradients(softmax, list(w) + list(b))
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    sess.run(tf.global_variables_initializer())
    z, y = _ref_logits(remove_hits)
    shifted = z - z.max(1, keepdims=True)
    ref_softmax = -(y * (shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))).sum(1)
    ref_nce = (np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).sum(1)
    np.testing.assert_allclose(sess.run(softmax), ref_softmax, rtol=1e-6)
    np.testing.assert_allclose(sess.run(nce), ref_nce, rtol=1e-6)


def test_full_softmax_with_a_sharded_weight_matrix(sess):
    # the full softmax layer: the sharded [classes, dim] matrix used whole (as_tensor)
    w = _partitioned("div")
    logits = tf.matmul(X, w, transpose_b=True)
    assert logits.shape.as_list() == [3, ROWS]
    grads = tf.gradients(tf.reduce_sum(tf.nn.log_softmax(logits)), list(w))
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(logits), X @ TABLE.T)
    z = X @ TABLE.T
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    dense = (np.ones_like(z) - ROWS * p).T @ X
    np.testing.assert_allclose(np.concatenate(sess.run(grads)), dense, rtol=1e-6, atol=1e-12)
