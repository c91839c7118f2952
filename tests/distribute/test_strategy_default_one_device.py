"""The default strategy, the tf.distribute context functions, and OneDeviceStrategy."""
import numpy as np
import pytest

import tensorweave as tf

ds = tf.distribute


def test_default_strategy_and_context_functions():
    with tf.Graph().as_default():
        s = ds.get_strategy()
        assert not ds.has_strategy() and not ds.in_cross_replica_context()
        rc = ds.get_replica_context()
        assert rc is not None and rc.num_replicas_in_sync == 1
        assert rc.replica_id_in_sync_group == 0
        assert s.num_replicas_in_sync == 1
        assert ds.get_loss_reduction() == ds.ReduceOp.SUM
        x = tf.constant([1.0, 2.0])
        assert s.reduce("SUM", x, axis=None) is x
        assert s.experimental_local_results(x) == (x,)
        with s.scope():  # as TF: still the default replica context
            assert not ds.in_cross_replica_context()
            assert ds.get_replica_context() is rc
        assert s.run(lambda a: a * 2.0, args=(x,)).op.type == "Mul"
        assert ds.ReduceOp("MEAN") is ds.ReduceOp.MEAN
        assert ds.ReduceOp.from_variable_aggregation(
            tf.VariableAggregation.SUM) is ds.ReduceOp.SUM
        ctx = ds.InputContext(2, 1, 4)
        assert ctx.get_per_replica_batch_size(8) == 2
        with pytest.raises(ValueError):
            ctx.get_per_replica_batch_size(7)
        assert ds.InputReplicationMode.PER_WORKER.value == "PER_WORKER"


def test_experimental_set_strategy():
    with tf.Graph().as_default():
        s = ds.OneDeviceStrategy("/cpu:0")
        ds.experimental_set_strategy(s)
        assert ds.get_strategy() is s and ds.has_strategy()
        ds.experimental_set_strategy(None)
        assert not ds.has_strategy()


def test_one_device_strategy_trains_like_plain_code():
    x = np.arange(12, dtype=np.float32).reshape(6, 2) / 10
    y = np.array([[1.0], [0.0], [1.0], [0.0], [1.0], [0.0]], np.float32)
    results = []
    for use_strategy in (False, True):
        with tf.Graph().as_default():
            data = tf.data.Dataset.from_tensor_slices((x, y)).batch(3)
            s = ds.OneDeviceStrategy("/cpu:0")

            def step(inputs):
                bx, by = inputs
                loss = tf.reduce_mean(tf.square(tf.matmul(bx, w) - by))
                return tf.train.AdamOptimizer(0.1).minimize(loss), loss
            if use_strategy:
                with s.scope():
                    w = tf.Variable(tf.ones([2, 1]), name="w")
                    assert w.device == "/replica:0/task:0/device:CPU:0"
                    it = s.make_dataset_iterator(data)
                    train_op, loss = s.experimental_run(step, it)
                    total = s.reduce(ds.ReduceOp.MEAN, loss, axis=None)
                    init = [tf.global_variables_initializer()] + it.initialize()
            else:
                w = tf.Variable(tf.ones([2, 1]), name="w")
                it = data.make_initializable_iterator()
                train_op, total = step(it.get_next())
                init = [tf.global_variables_initializer(), it.initializer]
            with tf.Session() as sess:
                sess.run(init)
                losses = [sess.run([train_op, total])[1] for _ in range(2)]
                results.append((losses, sess.run(w)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)


def test_one_device_input_fn_iterator_and_reduce_axis():
    with tf.Graph().as_default():
        s = ds.OneDeviceStrategy("/cpu:0")
        seen = []

        def input_fn(ctx):
            seen.append((ctx.num_replicas_in_sync, ctx.input_pipeline_id))
            return tf.data.Dataset.range(4).batch(2)
        with s.scope():
            it = s.make_input_fn_iterator(input_fn)
            batch = s.experimental_run_v2(lambda b: tf.cast(b, tf.float32), (it.get_next(),))
            mean = s.reduce("MEAN", batch, axis=0)
            dist = s.experimental_distribute_dataset(tf.data.Dataset.range(3))
            one_shot = dist.make_one_shot_iterator().get_next()
        assert seen == [(1, 0)]
        assert s.extended.worker_devices == ("/replica:0/task:0/device:CPU:0",)
        with tf.Session() as sess:
            sess.run(it.initialize())
            assert sess.run(mean) == pytest.approx(0.5)
            assert sess.run(one_shot) == 0
