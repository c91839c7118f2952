"""A partitioned embedding on a cluster of real task processes (OSDI 2016 §4.2, Figure 3):
3 shards spread over 2 PS tasks by replica_device_setter, looked up and trained with
sparse updates from a worker session; the result equals the same program in one
process."""
import numpy as np

import tensorweave as tf

ROWS, DIM = 13, 3
TABLE = np.random.RandomState(5).randn(ROWS, DIM).astype(np.float32)
BATCHES = [np.array([0, 12, 5, 5]), np.array([7, 1, 12, 2]), np.array([3, 3, 9, 11])]
TARGET = np.random.RandomState(6).randn(4, DIM).astype(np.float32)


def _program(cluster=None):
    """(ids placeholder, train op, partitioned variable, loss)."""
    setter = tf.train.replica_device_setter(cluster=cluster) if cluster else None
    with tf.device(setter):
        emb = tf.get_variable("emb", initializer=tf.constant(TABLE),
                              partitioner=tf.fixed_size_partitioner(3))
        ids = tf.placeholder(tf.int64, [None], name="ids")
        rows = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
        loss = tf.reduce_sum(tf.square(rows - TARGET))
        train = tf.train.AdagradOptimizer(0.3).minimize(loss)
    return ids, train, emb, loss


def _train(target=None, cluster=None):
    with tf.Graph().as_default():
        ids, train, emb, loss = _program(cluster)
        devices = [s.device for s in emb]
        with tf.Session(target or "") as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for batch in BATCHES * 2:
                losses.append(sess.run([train, loss], {ids: batch})[1])
            return devices, sess.run(emb.as_tensor()), losses


def test_partitioned_embedding_trained_on_ps_tasks_equals_one_process(make_cluster):
    c = make_cluster({"ps": 2, "worker": 1})
    devices, table, losses = _train(c.target("worker", 0), tf.train.ClusterSpec(c.spec))
    assert devices == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    _, local_table, local_losses = _train()
    np.testing.assert_allclose(table, local_table, rtol=1e-6)
    np.testing.assert_allclose(losses, local_losses, rtol=1e-6)
    # sparse updates: rows never looked up keep their values
    untouched = np.setdiff1d(np.arange(ROWS), np.concatenate(BATCHES))
    assert untouched.size and np.array_equal(table[untouched], TABLE[untouched])
    assert not np.allclose(table[12], TABLE[12])
    # the shards live in the PS tasks: a new session of a new graph reads them there
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(c.spec))):
            emb = tf.get_variable("emb", [ROWS, DIM], partitioner=tf.fixed_size_partitioner(3))
        with tf.Session(c.target("worker", 0)) as sess:
            np.testing.assert_array_equal(sess.run(emb.as_tensor()), table)
