"""MirroredStrategy on two CPU devices: mirrored variables, per-replica input splitting,
reductions, and training that matches single-device training on the global batch."""
import numpy as np
import pytest

import tensorweave as tf

CONFIG = tf.ConfigProto(device_count={"CPU": 2})
DEVICES = ["/cpu:0", "/cpu:1"]
GLOBAL_BATCH = 8


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(5 * GLOBAL_BATCH, 3).astype(np.float32)
    y = rng.randn(5 * GLOBAL_BATCH, 1).astype(np.float32)
    w1 = (rng.randn(3, 4) * 0.5).astype(np.float32)
    w2 = (rng.randn(4, 1) * 0.5).astype(np.float32)
    return x, y, w1, w2


def _model(x, w1, b1, w2):
    return tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2)


def _train(make_opt, strategy=None, steps=5):
    x, y, w1_0, w2_0 = _data()
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
        if strategy is None:
            w1 = tf.Variable(w1_0, name="w1")
            b1 = tf.Variable(tf.zeros([4]), name="b1")
            w2 = tf.Variable(w2_0, name="w2")
            it = ds.make_initializable_iterator()
            bx, by = it.get_next()
            per_example = tf.square(_model(bx, w1, b1, w2) - by)
            loss = tf.reduce_sum(per_example) / GLOBAL_BATCH
            train_op = make_opt().minimize(loss)
        else:
            with strategy.scope():
                w1 = tf.Variable(w1_0, name="w1")
                b1 = tf.Variable(tf.zeros([4]), name="b1")
                w2 = tf.Variable(w2_0, name="w2")
                it = strategy.experimental_distribute_dataset(ds) \
                    .make_initializable_iterator()
                opt = make_opt()

                def step(inputs):
                    bx, by = inputs
                    per_example = tf.square(_model(bx, w1, b1, w2) - by)
                    loss = tf.reduce_sum(per_example) / GLOBAL_BATCH
                    return opt.minimize(loss), loss
                train_op, loss = strategy.run(step, args=(it.get_next(),))
                loss = strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)
        with tf.Session(config=CONFIG) as sess:
            sess.run([tf.global_variables_initializer(), it.initializer])
            losses = [sess.run([train_op, loss])[1] for _ in range(steps)]
            if strategy is None:
                return sess.run([w1, b1, w2]), losses, None
            copies = [sess.run(list(v.values)) for v in (w1, b1, w2)]
            return [c[0] for c in copies], losses, copies


@pytest.mark.parametrize("make_opt", [
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.AdamOptimizer(0.05),
], ids=["sgd", "adam"])
def test_mirrored_training_matches_single_device(make_opt):
    ref, ref_losses, _ = _train(make_opt)
    got, losses, copies = _train(make_opt, tf.distribute.MirroredStrategy(DEVICES))
    for r, w in zip(ref, got):
        np.testing.assert_allclose(w, r, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, atol=1e-6)
    for c in copies:  # every copy updated identically
        np.testing.assert_array_equal(c[0], c[1])
    # the weights did move
    assert not np.allclose(got[0], _data()[2])


def test_mirrored_variable_copies_and_collections():
    with tf.Graph().as_default():
        s = tf.distribute.MirroredStrategy(DEVICES)
        with s.scope():
            v = tf.Variable(tf.random_normal([3]), name="w")
            assert tf.distribute.in_cross_replica_context()
            assert tf.distribute.get_replica_context() is None
        assert [c.name for c in v.values] == ["w:0", "w/replica_1:0"]
        assert [c.device for c in v.values] == ["/replica:0/task:0/device:CPU:0",
                                                "/replica:0/task:0/device:CPU:1"]
        assert tf.global_variables() == [v] and tf.trainable_variables() == [v]
        with tf.Session(config=CONFIG) as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run(list(v.values))
            np.testing.assert_array_equal(a, b)  # a random initial value, copied


def test_run_builds_per_replica_with_names_and_devices():
    with tf.Graph().as_default():
        s = tf.distribute.MirroredStrategy(DEVICES)
        seen = []

        def fn(x):
            ctx = tf.distribute.get_replica_context()
            y = tf.identity(x * 2.0, name="y")
            seen.append((ctx.num_replicas_in_sync, y.name, y.device,
                         tf.distribute.in_cross_replica_context()))
            return y, ctx.replica_id_in_sync_group
        with s.scope():
            x = tf.data.Dataset.from_tensor_slices(
                np.arange(16, dtype=np.float32).reshape(8, 2)).batch(8)
            it = s.experimental_distribute_dataset(x).make_initializable_iterator()
            out, rid = s.experimental_run_v2(fn, args=(it.get_next(),))
            total = s.reduce("SUM", out, axis=None)
            mean0 = s.reduce(tf.distribute.ReduceOp.MEAN, out, axis=0)
            sum0 = s.reduce(tf.distribute.ReduceOp.SUM, out, axis=0)
        assert seen == [(2, "y:0", "/replica:0/task:0/device:CPU:0", False),
                        (2, "replica_1/y:0", "/replica:0/task:0/device:CPU:1", False)]
        with tf.Session(config=CONFIG) as sess:
            sess.run(it.initializer)
            parts, ids, t, m, s0 = sess.run([list(s.experimental_local_results(out)),
                                             list(rid.values), total, mean0, sum0])
        full = np.arange(16, dtype=np.float32).reshape(8, 2) * 2
        np.testing.assert_array_equal(parts[0], full[:4])
        np.testing.assert_array_equal(parts[1], full[4:])
        assert ids == [0, 1]
        np.testing.assert_allclose(t, full[:4] + full[4:])
        np.testing.assert_allclose(m, full.mean(axis=0))
        np.testing.assert_allclose(s0, full.sum(axis=0))


@pytest.mark.parametrize("ops", [None, tf.distribute.ReductionToOneDevice(),
                                 tf.distribute.HierarchicalCopyAllReduce(),
                                 tf.distribute.NcclAllReduce()],
                         ids=["default", "one_device", "hierarchical", "nccl"])
def test_cross_device_ops_and_all_reduce(ops):
    with tf.Graph().as_default():
        s = tf.distribute.MirroredStrategy(DEVICES, cross_device_ops=ops)

        def fn():
            ctx = tf.distribute.get_replica_context()
            v = tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
            return ctx.all_reduce(tf.distribute.ReduceOp.SUM, v), \
                ctx.all_reduce("MEAN", v)
        total, mean = s.run(fn)
        with tf.Session(config=CONFIG) as sess:
            got = sess.run([list(s.experimental_local_results(total)),
                            list(s.experimental_local_results(mean))])
        assert got == [[3.0, 3.0], [1.5, 1.5]]


def test_variables_created_in_replica_and_get_variable_reuse():
    with tf.Graph().as_default():
        s = tf.distribute.MirroredStrategy(DEVICES)

        def fn():
            w = tf.get_variable("w", [2], initializer=tf.ones_initializer())
            return w
        with s.scope():
            w = s.run(fn)
        assert isinstance(w, tf.Variable) and len(w.values) == 2
        assert tf.global_variables() == [w]


def test_merge_call_mismatch_and_errors():
    with tf.Graph().as_default():
        s = tf.distribute.MirroredStrategy(DEVICES)

        def bad():
            ctx = tf.distribute.get_replica_context()
            if tf.get_default_graph().get_name_scope():  # replica 1 only
                ctx.merge_call(lambda strategy: None)
            return tf.constant(1.0)
        with pytest.raises(RuntimeError, match="merge_call"):
            s.run(bad)

        def fails():
            raise KeyError("boom")
        with pytest.raises(KeyError):
            s.run(fails)
        with s.scope():
            with pytest.raises(RuntimeError, match="cross-replica"):
                tf.train.GradientDescentOptimizer(0.1).apply_gradients(
                    [(tf.constant(1.0), tf.Variable(1.0))])
        with pytest.raises(ValueError, match="cannot be reduced"):
            s.reduce("SUM", tf.constant(1.0), axis=None)


def test_cross_replica_assign_updates_every_copy():
    with tf.Graph().as_default():
        s = tf.distribute.MirroredStrategy(DEVICES)
        with s.scope():
            v = tf.Variable([1.0, 2.0])
            up = v.assign_add([1.0, 1.0])

        def fn():
            with pytest.raises(ValueError, match="aggregation"):
                v.assign(v + 1.0)
            return tf.identity(v)
        reads = s.run(fn)
        with tf.Session(config=CONFIG) as sess:
            sess.run(v.initializer)
            sess.run(up)
            a, b = sess.run(list(reads.values))
        np.testing.assert_array_equal(a, [2.0, 3.0])
        np.testing.assert_array_equal(b, [2.0, 3.0])


def test_layers_in_replica_and_saver_restores_every_copy(tmp_path):
    with tf.Graph().as_default():
        s = tf.distribute.MirroredStrategy(DEVICES)
        with s.scope():
            v = tf.Variable([1.0, 2.0], name="v")

            def fn(x):
                # each replica builds its own optimizer; replica 0's applies for all
                y = tf.layers.dense(x, 2, name="d")
                return tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y))
            train_op = s.run(fn, args=(tf.ones([4, 3]),))
            saver = tf.train.Saver()
        assert sorted(x.name for x in tf.global_variables()) == \
            ["d/bias:0", "d/kernel:0", "v:0"]
        kernel = [x for x in tf.global_variables() if x.name == "d/kernel:0"][0]
        with tf.Session(config=CONFIG) as sess:
            sess.run(tf.global_variables_initializer())
            k0 = sess.run(kernel.values[0])
            sess.run(train_op)
            k = sess.run(list(kernel.values))
            # d(sum(y))/dkernel = sum of inputs over both replicas' batches = 8 each
            np.testing.assert_allclose(k[0], k0 - 0.1 * 8.0, rtol=1e-6)
            np.testing.assert_array_equal(k[0], k[1])
            sess.run(v.assign([5.0, 6.0]))
            path = saver.save(sess, str(tmp_path / "m"))
            sess.run(v.assign([0.0, 0.0]))
            saver.restore(sess, path)
            for c in sess.run(list(v.values)):
                np.testing.assert_array_equal(c, [5.0, 6.0])
