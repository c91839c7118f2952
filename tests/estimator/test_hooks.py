"""tf.estimator.experimental.InMemoryEvaluatorHook and make_stop_at_checkpoint_step_hook.
The evaluations' steps and values are checked against NumPy SGD of the linear model;
TensorFlow 2.15 (tensorflow-estimator 2.15) wrote eval summaries at the same global
steps with the same values, stopped at the same steps and raised the same errors."""
import glob
import json
import os

import numpy as np
import pytest

import tensorweave as tf

from linear_problem import X, Y, eval_input_fn, linear_model_fn, sgd, train_input_fn

NO_CHECKPOINTS = dict(log_step_count_steps=None, save_summary_steps=None,
                      save_checkpoints_steps=None, save_checkpoints_secs=None)
WORKER_TF_CONFIG = json.dumps({
    "cluster": {"chief": ["localhost:1"], "worker": ["localhost:2"]},
    "task": {"type": "worker", "index": 0}})


def sgd_losses(steps, lr=0.1):
    """[(mse, mae) of the model after k full-batch SGD steps from 0, k = 0..steps]."""
    out = []
    for k in range(steps + 1):
        w, b = sgd(k, lr)
        err = X @ w + b - Y
        out.append((np.mean(err ** 2), np.mean(np.abs(err))))
    return out


model_fn = linear_model_fn(lr=0.1)


def eval_events(directory):
    """[(step, {tag: simple_value})] of the event files in `directory`."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.train.summary_iterator(path):
            values = {v.tag: v.simple_value for v in event.summary.value
                      if v.HasField("simple_value")}
            if values:
                out.append((event.step, values))
    return out


def make_estimator(model_dir, **config):
    return tf.estimator.Estimator(model_fn, model_dir=str(model_dir),
                                  config=tf.estimator.RunConfig(**config))


def test_in_memory_evaluation_every_n_steps_and_at_end(tmp_path):
    est = make_estimator(tmp_path, **NO_CHECKPOINTS)
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn,
                                                           every_n_iter=3)
    est.train(train_input_fn, steps=7, hooks=[hook])
    assert est.latest_checkpoint() is None  # evaluated without any checkpoint
    assert os.listdir(str(tmp_path)) == ["eval"]
    events = eval_events(est.eval_dir())
    # at session creation, after steps 3 and 6, and at the end (TF: 0, 3, 6, 7)
    assert [step for step, _ in events] == [0, 3, 6, 7]
    reference = sgd_losses(7)
    for step, values in events:
        assert sorted(values) == ["loss", "mae"]
        np.testing.assert_allclose([values["loss"], values["mae"]], reference[step],
                                   rtol=1e-5)
    np.testing.assert_allclose(events[-1][1]["loss"], 0.061728, rtol=1e-5)  # TF's value


def test_named_evaluation_with_steps_evaluates_the_last_step_twice(tmp_path):
    est = make_estimator(tmp_path, **NO_CHECKPOINTS)
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn, steps=1,
                                                           name="x", every_n_iter=3)
    est.train(train_input_fn, steps=6, hooks=[hook])
    assert os.listdir(str(tmp_path)) == ["eval_x"]
    events = eval_events(est.eval_dir("x"))
    assert [step for step, _ in events] == [0, 3, 6, 6]
    w, b = np.zeros((2, 1)), np.zeros(1)
    first_batch_loss = {}
    for step in range(7):
        err = X[:2] @ w + b - Y[:2]
        first_batch_loss[step] = np.mean(err ** 2)
        full_err = X @ w + b - Y
        w, b = w - 0.2 * X.T @ full_err / 4, b - 0.2 * full_err.mean(0)
    for step, values in events:  # one batch of 2: TF gave 2.5, 0.047576, 0.022775
        np.testing.assert_allclose(values["loss"], first_batch_loss[step], rtol=1e-5)


def test_hook_reused_over_train_calls(tmp_path):
    est = make_estimator(tmp_path, log_step_count_steps=None, save_summary_steps=None,
                         save_checkpoints_steps=2)
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn,
                                                           every_n_iter=4)
    est.train(train_input_fn, steps=5, hooks=[hook])
    est.train(train_input_fn, steps=3, hooks=[hook])
    # the step count restarts with each train(): 0, 4, end 5; then 5, end 8 (as TF)
    assert [step for step, _ in eval_events(est.eval_dir())] == [0, 4, 5, 5, 8]


def test_train_only_variables_and_train_and_evaluate(tmp_path):
    """Momentum's slot variables exist only in training: they are left out of the copy."""
    def momentum_model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = tf.estimator.Estimator(momentum_model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(log_step_count_steps=None,
                                                               save_summary_steps=None))
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn,
                                                           every_n_iter=2)
    tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn, max_steps=5, hooks=[hook]),
        tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0))
    w, velocity, losses = np.zeros((2, 1)), np.zeros((2, 1)), {}
    for step in range(6):
        err = X @ w - Y
        losses[step] = np.mean(err ** 2)
        velocity = 0.9 * velocity + 2 * X.T @ err / 4
        w = w - 0.1 * velocity
    events = eval_events(est.eval_dir())
    # the hook at 0, 2, 4 and its end, then train_and_evaluate's evaluation (as TF)
    assert [step for step, _ in events] == [0, 2, 4, 5, 5]
    for step, values in events:  # TF: 1.5, 0.569334, 0.433994, 0.217942, 0.217942
        np.testing.assert_allclose(values["loss"], losses[step], rtol=1e-5)


def test_model_fn_local_init_op_is_joined_with_the_default(tmp_path):
    """An EVAL scaffold's own local_init_op still leaves the metric variables
    initialized (TF groups it with the default local init op)."""
    def local_init_model_fn(features, labels, mode):
        spec = model_fn(features, labels, mode)
        if mode != tf.estimator.ModeKeys.EVAL:
            return spec
        return spec._replace(scaffold=tf.train.Scaffold(local_init_op=tf.no_op()))

    est = tf.estimator.Estimator(local_init_model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(**NO_CHECKPOINTS))
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn,
                                                           every_n_iter=2)
    est.train(train_input_fn, steps=3, hooks=[hook])
    events = eval_events(est.eval_dir())
    assert [step for step, _ in events] == [0, 2, 3]  # TF: loss 1.5, 0.080777, 0.070055
    reference = sgd_losses(3)
    for step, values in events:
        np.testing.assert_allclose([values["loss"], values["mae"]], reference[step],
                                   rtol=1e-5)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(every_n_iter=0), ValueError, "invalid every_n_iter=0."),
    (dict(every_n_iter=None), ValueError, "invalid every_n_iter=None."),
    (dict(steps=0), ValueError, "Must specify steps > 0, given: 0"),
    (dict(hooks=[1]), TypeError, "Hooks must be a SessionRunHook, given: 1"),
])
def test_argument_errors(tmp_path, kwargs, error, message):
    est = make_estimator(tmp_path)
    with pytest.raises(error) as info:
        tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn, **kwargs)
    assert str(info.value) == message


def test_cluster_config_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", WORKER_TF_CONFIG)
    est = make_estimator(tmp_path)
    with pytest.raises(ValueError) as info:
        tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn)
    assert str(info.value) == ("InMemoryEvaluator supports only single machine (aka Local) "
                               "setting.")


@pytest.mark.parametrize("scaffold_kwargs, message", [
    ("saver", "InMemoryEvaluator does not support custom saver"),
    ("init_fn", "InMemoryEvaluator does not support custom init_fn"),
])
def test_custom_scaffold_is_refused(tmp_path, scaffold_kwargs, message):
    def custom_model_fn(features, labels, mode):
        spec = model_fn(features, labels, mode)
        kwargs = {"saver": tf.train.Saver()} if scaffold_kwargs == "saver" else \
            {"init_fn": lambda scaffold, session: None}
        return spec._replace(scaffold=tf.train.Scaffold(**kwargs))

    est = tf.estimator.Estimator(custom_model_fn, model_dir=str(tmp_path),
                                 config=tf.estimator.RunConfig(**NO_CHECKPOINTS))
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_input_fn)
    with pytest.raises(ValueError) as info:
        est.train(train_input_fn, steps=1, hooks=[hook])
    assert str(info.value) == message


# --- make_stop_at_checkpoint_step_hook ------------------------------------------------------
def run_until_stopped(hook, limit=12):
    """The number of global-step increments a MonitoredSession with `hook` ran."""
    with tf.Graph().as_default():
        increment = tf.assign_add(tf.train.get_or_create_global_step(), 1)
        runs = 0
        with tf.train.MonitoredSession(hooks=[hook]) as session:
            while not session.should_stop() and runs < limit:
                session.run(increment)
                runs += 1
    return runs


def test_chief_gets_stop_at_step_hook(tmp_path):
    hook = tf.estimator.experimental.make_stop_at_checkpoint_step_hook(
        make_estimator(tmp_path), 3)
    assert type(hook) is tf.train.StopAtStepHook
    assert run_until_stopped(hook) == 3


def test_non_chief_waits_for_the_checkpoint(tmp_path, monkeypatch):
    trained = make_estimator(tmp_path, log_step_count_steps=None, save_summary_steps=None,
                             save_checkpoints_steps=100)
    trained.train(train_input_fn, steps=8)  # checkpoint of step 8
    monkeypatch.setenv("TF_CONFIG", WORKER_TF_CONFIG)
    worker = make_estimator(tmp_path)
    assert not worker.config.is_chief
    make = tf.estimator.experimental.make_stop_at_checkpoint_step_hook
    # step 8 is in the checkpoint: stops there
    assert run_until_stopped(make(worker, 8, wait_after_file_check_secs=0)) == 8
    # step 9 never is: from step 9 on each run looks and waits (TF: runs to the limit)
    assert run_until_stopped(make(worker, 9, wait_after_file_check_secs=0)) == 12
    with pytest.raises(ValueError) as info:
        make(worker, None)
    assert str(info.value) == "last_step must be specified."
    with tf.Graph().as_default(), pytest.raises(RuntimeError) as info:
        make(worker, 3).begin()
    assert str(info.value) == "Global step should be created to use StopAtCheckpointStepHook."
