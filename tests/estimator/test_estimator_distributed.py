"""Estimator.train / evaluate under RunConfig(train_distribute=..., eval_distribute=...):
MirroredStrategy on 2 CPU devices and on the CPU alone (no GPU: one replica), and
OneDeviceStrategy, against NumPy references of TF 2.15's semantics: the input_fn is
called once and each replica reads the next per-replica batch, each optimizer step
applies the MEAN of the replicas' gradients (SUM for a Reduction.SUM loss), the
reported loss is the MEAN (SUM) of the replicas' losses, the global step counts steps,
and evaluation's metrics cover every replica's batches."""
import glob
import logging
import re

import numpy as np
import pytest

import tensorweave as tf

B = 4  # the input_fn's (per-replica) batch
LR = 0.1
CPU2 = tf.ConfigProto(device_count={"CPU": 2})


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(12 * B, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
         + 0.1 * rng.randn(12 * B, 1)).astype(np.float32)
    return x, y


def _make_model_fn(record, reduction="default"):
    def model_fn(features, labels, mode):
        record.append((mode, features.shape.as_list(),
                       tf.distribute.get_replica_context() is not None))
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        pred = tf.matmul(features, w) + b
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=pred)
        if reduction == "sum":
            loss = tf.losses.mean_squared_error(labels, pred,
                                                reduction=tf.losses.Reduction.SUM)
        elif reduction == "manual":
            loss = tf.reduce_mean(tf.square(pred - labels))
        else:
            loss = tf.losses.mean_squared_error(labels, pred)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "mse": tf.metrics.mean_squared_error(labels, pred),
                "pred_mean": tf.metrics.mean(pred),
                "above": tf.metrics.true_positives(labels > 0.0, pred > 0.0),
                "rmse": tf.metrics.root_mean_squared_error(labels, pred)})
        train_op = tf.train.GradientDescentOptimizer(LR).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def _input_fn(calls):
    x, y = _data()

    def input_fn(input_context=None):
        calls.append(input_context)
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(B, drop_remainder=True)
    return input_fn


def _numpy_training(num_replicas, steps, reduction="default"):
    """Weights and reported losses of TF's distributed Estimator: replica r of step s
    reads batch s * num_replicas + r; the update is the MEAN of the replicas'
    gradients (SUM for a SUM loss)."""
    x, y = _data()
    x, y = x.astype(np.float64), y.astype(np.float64)
    w, b = np.zeros((3, 1)), np.zeros(1)
    reported = []
    for s in range(steps):
        gw, gb, losses = 0.0, 0.0, []
        for r in range(num_replicas):
            k = s * num_replicas + r
            xb, yb = x[k * B:(k + 1) * B], y[k * B:(k + 1) * B]
            err = xb @ w + b - yb
            if reduction == "sum":
                losses.append((err ** 2).sum())
                gw, gb = gw + 2 * xb.T @ err, gb + 2 * err.sum(0)
            else:
                losses.append((err ** 2).mean())
                gw = gw + 2 / B * xb.T @ err / num_replicas
                gb = gb + 2 / B * err.sum(0) / num_replicas
        reported.append(sum(losses) if reduction == "sum" else np.mean(losses))
        w, b = w - LR * gw, b - LR * gb
    return w, b, reported


def _numpy_eval(w, b, num_batches, reduction="default"):
    x, y = _data()
    n = num_batches * B
    err = (x[:n] @ w + b - y[:n]).astype(np.float64)
    per_batch = (err ** 2).reshape(num_batches, B)
    loss = per_batch.sum(1) if reduction == "sum" else per_batch.mean(1)
    pred = x[:n] @ w + b
    return {"loss": loss.mean(), "mse": (err ** 2).mean(), "pred_mean": pred.mean(),
            "above": float(((y[:n] > 0) & (pred > 0)).sum()),
            "rmse": np.sqrt((err ** 2).mean())}


class _LossLog(logging.Handler):
    """Collects the (step, loss) pairs LoggingTensorHook logs."""

    def __init__(self):
        super().__init__()
        self.pairs = []

    def emit(self, record):
        m = re.search(r"loss = ([0-9.e+-]+), step = (\d+)", record.getMessage())
        if m:
            self.pairs.append((int(m.group(2)), float(m.group(1))))


def _estimator(tmp_path, strategy, record, reduction="default", session_config=None,
               **config):
    run_config = tf.estimator.RunConfig(
        train_distribute=strategy, eval_distribute=strategy, log_step_count_steps=1,
        session_config=session_config, tf_random_seed=1, **config)
    return tf.estimator.Estimator(_make_model_fn(record, reduction),
                                  model_dir=str(tmp_path), config=run_config)


def _train_and_check(est, calls, record, num_replicas, reduction="default", steps=3):
    log = _LossLog()
    logger = logging.getLogger("tensorflow")  # TF's logger name
    old_level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(log)
    try:
        est.train(_input_fn(calls), steps=steps)
    finally:
        logger.removeHandler(log)
        logger.setLevel(old_level)
    # input_fn once, told the replicas; model_fn once per replica, in replica context,
    # each replica seeing the input_fn's batch
    assert len(calls) == 1
    assert calls[0].num_replicas_in_sync == num_replicas
    assert calls[0].num_input_pipelines == 1
    assert record == [("train", [B, 3], True)] * num_replicas
    w, b, reported = _numpy_training(num_replicas, steps, reduction)
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("b"), b, rtol=1e-5, atol=1e-6)
    assert est.get_variable_value("global_step") == steps
    assert sorted(est.get_variable_names()) == ["b", "global_step", "w"]
    np.testing.assert_allclose([loss for _, loss in log.pairs], reported, rtol=1e-5)
    return w, b


@pytest.mark.parametrize("reduction", ["default", "sum", "manual"])
def test_mirrored_two_cpus_matches_numpy(tmp_path, reduction):
    record, calls = [], []
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    est = _estimator(tmp_path, strategy, record, reduction, session_config=CPU2)
    w, b = _train_and_check(est, calls, record, 2, reduction)
    record.clear()
    calls.clear()
    results = est.evaluate(_input_fn(calls), steps=2)
    assert record == [("eval", [B, 3], True)] * 2 and len(calls) == 1
    # 2 steps x 2 replicas: the first 4 batches
    expected = _numpy_eval(w, b, 4, reduction)
    for key, value in expected.items():
        np.testing.assert_allclose(results[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    assert results["global_step"] == 3


def test_mirrored_without_gpus_is_one_replica_on_the_cpu(tmp_path):
    # a program written for GPUs, run where there is none
    record, calls = [], []
    strategy = tf.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    est = _estimator(tmp_path, strategy, record)
    w, b = _train_and_check(est, calls, record, 1)
    results = est.evaluate(_input_fn([]), steps=2)
    expected = _numpy_eval(w, b, 2)
    for key, value in expected.items():
        np.testing.assert_allclose(results[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    # predict and export do not use the strategy (as TF)
    x, _ = _data()
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(x[:3]).batch(3)))
    np.testing.assert_allclose(np.array(preds), x[:3] @ w + b, rtol=1e-5, atol=1e-6)


def test_one_device_strategy(tmp_path):
    record, calls = [], []
    est = _estimator(tmp_path, tf.distribute.OneDeviceStrategy("/cpu:0"), record)
    w, b = _train_and_check(est, calls, record, 1)
    results = est.evaluate(_input_fn([]), steps=3)
    np.testing.assert_allclose(results["mse"], _numpy_eval(w, b, 3)["mse"], rtol=1e-5)


def test_train_resumes_from_checkpoint_with_hooks_and_summaries(tmp_path):
    record = []
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    est = _estimator(tmp_path, strategy, record, session_config=CPU2,
                     save_checkpoints_steps=2, save_summary_steps=1)

    class CountSteps(tf.train.SessionRunHook):
        def __init__(self):
            self.steps = 0

        def after_run(self, run_context, run_values):
            self.steps += 1

    hook = CountSteps()
    est.train(_input_fn([]), steps=2, hooks=[hook])
    assert hook.steps == 2
    est.train(_input_fn([]), max_steps=3)
    assert est.get_variable_value("global_step") == 3
    # checkpoints at steps 0, 2 and 3, loss summaries every step
    index = tf.train.get_checkpoint_state(str(tmp_path))
    assert [p.rsplit("-", 1)[1] for p in index.all_model_checkpoint_paths] == ["0", "2", "3"]
    steps = set()
    for path in glob.glob(str(tmp_path / "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "loss":
                    steps.add(event.step)
    assert len(steps) == 3  # one per step
    # the second train() resumed from step 2: the weights are those of three steps of
    # 2 replicas, the third step reading the input from its start again
    w, b, _ = _numpy_training(2, 2)
    x, y = _data()
    err = x[:2 * B] @ w + b - y[:2 * B]
    w3 = w - LR * (2 / (2 * B)) * x[:2 * B].T @ err
    np.testing.assert_allclose(est.get_variable_value("w"), w3, rtol=1e-5, atol=1e-6)


def test_run_config_arguments():
    strategy = tf.distribute.MirroredStrategy()
    config = tf.estimator.RunConfig(train_distribute=strategy)
    assert config.train_distribute is strategy and config.eval_distribute is None
    assert config.replace(model_dir="/tmp/x").train_distribute is strategy
    with pytest.raises(NotImplementedError):
        tf.estimator.RunConfig(experimental_distribute=object())


def test_input_fn_must_return_a_dataset(tmp_path):
    record = []
    est = _estimator(tmp_path, tf.distribute.MirroredStrategy(), record)
    x, y = _data()
    with pytest.raises(ValueError):
        est.train(lambda: (tf.constant(x[:B]), tf.constant(y[:B])), steps=1)


def test_metrics_in_strategy_run_aggregate_across_replicas():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    values = np.arange(8, dtype=np.float32)
    with tf.Graph().as_default(), strategy.scope():
        ds = tf.data.Dataset.from_tensor_slices(values).batch(4)
        it = strategy.experimental_distribute_dataset(ds).make_initializable_iterator()
        value, update = strategy.run(lambda v: tf.metrics.mean(v), args=(it.get_next(),))
        assert isinstance(value, tf.Tensor)  # one value for all replicas
        with tf.Session(config=CPU2) as sess:
            sess.run([tf.local_variables_initializer(), it.initializer])
            sess.run(strategy.group(update))
            assert sess.run(value) == pytest.approx(values[:4].mean())
            sess.run(strategy.group(update))
            assert sess.run(value) == pytest.approx(values.mean())
