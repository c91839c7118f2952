"""tf.estimator.experimental early stopping: the stop_if_*_hook predicates over eval
event files, the chief's hook (checks every N steps, sets signal_early_stopping/STOP)
and the non-chief's hook (stops on the flag). Predicate results are hand-computed from
the written values; the global steps training stopped at, messages and error classes are
what TensorFlow 2.15 (tensorflow-estimator 2.15) gave for the same programs."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.early_stopping import read_eval_metrics

from linear_problem import eval_input_fn, linear_model_fn, train_input_fn

ES = tf.estimator.experimental
CONFIG = dict(log_step_count_steps=None, save_summary_steps=None)
WORKER_TF_CONFIG = json.dumps({
    "cluster": {"chief": ["localhost:1"], "worker": ["localhost:2"]},
    "task": {"type": "worker", "index": 0}})
model_fn = linear_model_fn(lr=0.2)


@pytest.fixture
def estimator(tmp_path):
    return tf.estimator.Estimator(model_fn, model_dir=str(tmp_path),
                                  config=tf.estimator.RunConfig(**CONFIG))


# --- the predicates over written eval results ---------------------------------------------
# acc by step, written out of order; a later event of step 50 overrides its acc
ACC = [(30, 0.65), (10, 0.5), (20, 0.7), (40, 0.69), (50, 0.68)]


@pytest.fixture
def written(estimator):
    writer = tf.summary.FileWriter(estimator.eval_dir())
    for step, acc in ACC:
        writer.add_summary(tf.Summary(value=[
            tf.Summary.Value(tag="acc", simple_value=acc),
            tf.Summary.Value(tag="loss", simple_value=1 - acc)]), step)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.9)]), 50)
    writer.close()
    return estimator


def test_read_eval_metrics(written, tmp_path):
    metrics = read_eval_metrics(written.eval_dir())
    assert list(metrics) == [10, 20, 30, 40, 50]
    expected = dict(ACC)
    expected[50] = 0.9
    for step, values in metrics.items():
        assert sorted(values) == ["acc", "loss"]
        np.testing.assert_allclose(values["acc"], expected[step], rtol=1e-6)
        np.testing.assert_allclose(values["loss"], 1 - dict(ACC)[step], rtol=1e-6)
    assert read_eval_metrics(str(tmp_path / "missing")) == {}


def test_corrupted_event_file_is_skipped(written):
    path = os.path.join(written.eval_dir(), "events.out.tfevents.999.corrupt")
    with open(path, "wb") as f:
        f.write(b"\x01\x02\x03garbage-not-a-record" * 3)
    assert list(read_eval_metrics(written.eval_dir())) == [10, 20, 30, 40, 50]


# loss: 10: 0.5, 20: 0.3, 30: 0.35, 40: 0.31, 50: 0.32; acc 50 is 0.9
@pytest.mark.parametrize("make, args, kwargs, stops", [
    (ES.stop_if_higher_hook, ("acc", 0.9), {}, False),
    (ES.stop_if_higher_hook, ("acc", 0.89), {}, True),
    (ES.stop_if_higher_hook, ("loss", 0.49), {"min_steps": 20}, False),
    (ES.stop_if_higher_hook, ("loss", 0.49), {"min_steps": 10}, True),
    (ES.stop_if_lower_hook, ("loss", 0.3), {}, False),
    (ES.stop_if_lower_hook, ("loss", 0.31), {}, True),
    (ES.stop_if_lower_hook, ("loss", 0.35), {"min_steps": 30}, True),
    # best acc 0.9 at 50; 0.7 at 20 is best until then: 30 steps after it is 50
    (ES.stop_if_no_increase_hook, ("acc", 30), {}, False),
    (ES.stop_if_no_increase_hook, ("acc", 20), {}, True),
    (ES.stop_if_no_increase_hook, ("loss", 20), {}, True),
    (ES.stop_if_no_increase_hook, ("loss", 21), {}, True),
    # best loss 0.3 at 20: step 40 is 20 after it, step 50 is 30 after it
    (ES.stop_if_no_decrease_hook, ("loss", 30), {}, True),
    (ES.stop_if_no_decrease_hook, ("loss", 31), {}, False),
    # from step 30: best 0.31 at 40, step 50 is 10 after it
    (ES.stop_if_no_decrease_hook, ("loss", 10), {"min_steps": 30}, True),
    (ES.stop_if_no_decrease_hook, ("loss", 11), {"min_steps": 30}, False),
])
def test_predicates(written, make, args, kwargs, stops):
    hook = make(written, *args, **kwargs)
    assert hook._should_stop_fn() is stops


def test_predicate_over_another_eval_dir(written, tmp_path):
    other = tmp_path / "other"
    hook = ES.stop_if_higher_hook(written, "acc", 0.0, eval_dir=str(other))
    assert hook._should_stop_fn() is False  # nothing there
    hook = ES.stop_if_higher_hook(written, "acc", 0.0, eval_dir=written.eval_dir())
    assert hook._should_stop_fn() is True


def test_missing_metric_is_a_key_error(written):
    with pytest.raises(KeyError, match="missing"):
        ES.stop_if_higher_hook(written, "missing", 1.0)._should_stop_fn()


# --- the chief's hook in training -----------------------------------------------------------
def test_predicate_checked_every_n_steps(estimator):
    calls = []

    def should_stop():
        calls.append(True)
        return len(calls) == 3

    hook = ES.make_early_stopping_hook(estimator, should_stop, run_every_secs=None,
                                       run_every_steps=3)
    estimator.train(train_input_fn, steps=20, hooks=[hook])
    # checked after the first step, then every 3: the third check stops at step 7
    assert len(calls) == 3
    assert estimator.get_variable_value("global_step") == 7
    assert "signal_early_stopping/STOP" in estimator.get_variable_names()
    assert estimator.get_variable_value("signal_early_stopping/STOP")


def train_and_evaluate_rounds(estimator, hook, rounds=6):
    """The global step of each of `rounds` (train 3 steps, evaluate) rounds."""
    steps = []
    for _ in range(rounds):
        estimator.train(train_input_fn, steps=3, hooks=[hook])
        steps.append(int(estimator.evaluate(eval_input_fn)["global_step"]))
    return steps


def test_stop_if_lower_between_evaluations(estimator):
    # eval loss after 3 steps is 0.09506 < 0.1: every later train() stops after a step
    hook = ES.stop_if_lower_hook(estimator, "loss", 0.1, run_every_secs=None,
                                 run_every_steps=1)
    assert train_and_evaluate_rounds(estimator, hook) == [3, 4, 5, 6, 7, 8]


def test_stop_if_lower_with_min_steps(estimator):
    hook = ES.stop_if_lower_hook(estimator, "loss", 0.1, min_steps=12, run_every_secs=None,
                                 run_every_steps=1)
    assert train_and_evaluate_rounds(estimator, hook) == [3, 6, 9, 12, 13, 14]


def test_stop_if_no_decrease_between_evaluations(estimator):
    # eval mae: 3: 0.27513, 6: 0.19892, 9: 0.19605 (best), 12: 0.19872, 15: 0.19974
    hook = ES.stop_if_no_decrease_hook(estimator, "mae", 6, run_every_secs=None,
                                       run_every_steps=1)
    assert train_and_evaluate_rounds(estimator, hook) == [3, 6, 9, 12, 15, 16]


def test_stop_if_higher_never_reached(estimator):
    hook = ES.stop_if_higher_hook(estimator, "mae", 0.9, run_every_secs=None,
                                  run_every_steps=1)
    assert train_and_evaluate_rounds(estimator, hook, rounds=3) == [3, 6, 9]


# --- the non-chief's hook ---------------------------------------------------------------
def test_non_chief_stops_on_the_flag(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", WORKER_TF_CONFIG)
    worker = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path),
                                    config=tf.estimator.RunConfig())
    assert not worker.config.is_chief
    hook = ES.stop_if_higher_hook(worker, "acc", 0.0)
    assert type(hook).__name__ == "_CheckForStoppingHook"
    with tf.Graph().as_default():
        increment = tf.assign_add(tf.train.get_or_create_global_step(), 1)
        with tf.variable_scope("signal_early_stopping", reuse=tf.AUTO_REUSE):
            stop = tf.get_variable("STOP", shape=[], dtype=tf.bool)
        set_stop = tf.assign(stop, True)  # what the chief's hook runs
        runs = 0
        with tf.train.SingularMonitoredSession(hooks=[hook]) as session:
            while not session.should_stop() and runs < 20:
                session.run(increment)
                runs += 1
                if runs == 4:
                    session.raw_session().run(set_stop)
        # the hook creates no second flag
        assert [v.name for v in tf.global_variables()] == [
            "global_step:0", "signal_early_stopping/STOP:0"]
    assert runs == 5  # the first run after the flag was set


# --- argument errors ----------------------------------------------------------------------
def test_argument_errors(estimator):
    with pytest.raises(TypeError) as info:
        ES.make_early_stopping_hook(object(), lambda: False)
    assert str(info.value) == ("`estimator` must have type `tf.estimator.Estimator`. "
                               "Got: <class 'object'>")
    with pytest.raises(ValueError) as info:
        ES.make_early_stopping_hook(estimator, lambda: False, run_every_steps=5)
    assert str(info.value) == "Only one of `run_every_secs` and `run_every_steps` must be set."
    with pytest.raises(TypeError) as info:
        ES.make_early_stopping_hook(estimator, 3)
    assert str(info.value) == "`should_stop_fn` must be callable."
