"""tf.estimator.Estimator: train, evaluate, predict and export a linear model trained by
SGD. Variable and metric values are checked against the same SGD and metrics computed
with NumPy; files written, error classes and messages are what TensorFlow 2.15
(tensorflow-estimator 2.15) gave for the same programs."""
import functools
import glob
import os

import numpy as np
import pytest

import tensorweave as tf

from linear_problem import (LR, X, Y, eval_input_fn, linear, linear_model_fn,
                            predict_input_fn, sgd, train_input_fn)

model_fn = linear_model_fn(double=True, mean_pred=True)  # params["lr"]: LR


def step_only_model_fn(features, labels, mode):
    """Counts steps without changing the weights (to read warm-started values)."""
    pred = linear(features, init=5.0)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=pred)
    return tf.estimator.EstimatorSpec(
        mode, loss=tf.reduce_mean(tf.square(pred - labels)),
        train_op=tf.assign_add(tf.train.get_global_step(), 1))


def estimator(tmp_path, name="model", fn=model_fn, **config):
    params = {"lr": LR} if fn is model_fn else None
    return tf.estimator.Estimator(fn, model_dir=str(tmp_path / name), params=params,
                                  config=tf.estimator.RunConfig(**config))


def model_files(model_dir):
    return sorted(f for f in os.listdir(model_dir) if not f.startswith("events"))


def summaries(directory):
    """{tag: [(step, simple_value or None), ...]} of the event files in `directory`."""
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "events*"))):
        for event in tf.train.summary_iterator(path):
            for v in event.summary.value:
                value = v.simple_value if v.HasField("simple_value") else None
                found.setdefault(v.tag, []).append((event.step, value))
    return found


class RecordingHook(tf.train.SessionRunHook):
    def __init__(self):
        self.calls = []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("create")

    def before_run(self, run_context):
        self.calls.append("before")

    def after_run(self, run_context, run_values):
        self.calls.append("after")

    def end(self, session):
        self.calls.append("end")


def ckpt_index_files(model_dir):
    return sorted(f for f in os.listdir(model_dir) if f.endswith(".index"))


# --- train ---------------------------------------------------------------------------

def test_numpy_reference_is_tfs():
    w, b = sgd(5)
    np.testing.assert_allclose(w.ravel(), [0.6059519052505493, 0.018446918576955795],
                               rtol=1e-6)
    np.testing.assert_allclose(b, [0.1352541297674179], rtol=1e-6)


def test_train_runs_sgd_saves_checkpoints_and_calls_hooks(tmp_path):
    seen = []

    def recording_model_fn(features, labels, mode, params, config):
        seen.append((mode, params, config.model_dir, config.save_checkpoints_steps))
        return model_fn(features, labels, mode, params)
    model_dir = str(tmp_path / "m")
    est = tf.estimator.Estimator(
        recording_model_fn, model_dir=model_dir, params={"lr": LR},
        config=tf.estimator.RunConfig(save_checkpoints_steps=2, keep_checkpoint_max=2))
    assert est.latest_checkpoint() is None
    hook = RecordingHook()
    assert est.train(train_input_fn, steps=5, hooks=[hook]) is est
    assert seen == [("train", {"lr": LR}, model_dir, 2)]
    assert hook.calls == ["begin", "create"] + ["before", "after"] * 5 + ["end"]
    w, b = sgd(5)
    np.testing.assert_allclose(est.get_variable_value("w"), w, rtol=1e-5)
    np.testing.assert_allclose(est.get_variable_value("b"), b, rtol=1e-5)
    assert est.get_variable_value("global_step") == 5
    assert est.get_variable_names() == ["b", "global_step", "w"]
    assert est.latest_checkpoint() == os.path.join(model_dir, "model.ckpt-5")
    # saved at steps 0, 2, 4 and 5; two kept
    assert model_files(model_dir) == [
        "checkpoint", "graph.pbtxt", "model.ckpt-4.data-00000-of-00001", "model.ckpt-4.index",
        "model.ckpt-4.meta", "model.ckpt-5.data-00000-of-00001", "model.ckpt-5.index",
        "model.ckpt-5.meta"]
    with open(os.path.join(model_dir, "checkpoint")) as f:
        assert f.read() == ('model_checkpoint_path: "model.ckpt-5"\n'
                            'all_model_checkpoint_paths: "model.ckpt-4"\n'
                            'all_model_checkpoint_paths: "model.ckpt-5"\n')


def test_steps_are_more_steps_and_max_steps_a_global_step(tmp_path):
    calls = []

    def counting_model_fn(features, labels, mode, params):
        calls.append(mode)
        return model_fn(features, labels, mode, params)
    est = tf.estimator.Estimator(counting_model_fn, model_dir=str(tmp_path), params={"lr": LR},
                                 config=tf.estimator.RunConfig(save_checkpoints_steps=2))
    est.train(train_input_fn, steps=5)
    # max_steps already reached: returns at once, without building the model
    assert est.train(train_input_fn, max_steps=3) is est
    assert len(calls) == 1 and est.get_variable_value("global_step") == 5
    est.train(train_input_fn, max_steps=7)
    assert est.get_variable_value("global_step") == 7
    est.train(train_input_fn, steps=1)
    assert est.get_variable_value("global_step") == 8
    np.testing.assert_allclose(est.get_variable_value("w"), sgd(8)[0], rtol=1e-5)
    for kwargs, message in [(dict(steps=0), "Must specify steps > 0, given: 0"),
                            (dict(steps=-1), "Must specify steps > 0, given: -1"),
                            (dict(max_steps=0), "Must specify max_steps > 0, given: 0"),
                            (dict(steps=1, max_steps=2),
                             "Can not provide both steps and max_steps.")]:
        with pytest.raises(ValueError) as e:
            est.train(train_input_fn, **kwargs)
        assert str(e.value) == message


def test_train_stops_at_the_end_of_the_input(tmp_path):
    def one_pass():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(1)
    est = estimator(tmp_path)
    est.train(one_pass)
    assert est.get_variable_value("global_step") == 4
    est.train(one_pass, steps=10)
    assert est.get_variable_value("global_step") == 8


def test_input_fn_and_model_fn_receive_what_they_ask_for(tmp_path):
    got = {}

    def input_fn(mode, params, config):
        got.update(mode=mode, params=params, config=type(config))
        return train_input_fn()
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.5})
    est.train(input_fn, steps=1)
    assert got == dict(mode="train", params={"lr": 0.5}, config=tf.estimator.RunConfig)
    # params are copied: changing what the estimator returns changes nothing
    est.params["lr"] = 3.0
    assert est.params == {"lr": 0.5}

    def tensors_input_fn():
        return {"x": tf.constant(X)}, tf.constant(Y)
    est = estimator(tmp_path, "tensors")
    est.train(tensors_input_fn, steps=3)
    np.testing.assert_allclose(est.get_variable_value("w"), sgd(3)[0], rtol=1e-5)


def test_spec_hooks_run(tmp_path):
    counts = {"train": 0, "chief": 0, "eval": 0}

    class Count(tf.train.SessionRunHook):
        def __init__(self, key):
            self.key = key

        def before_run(self, run_context):
            counts[self.key] += 1

    def hooked(features, labels, mode):
        pred = linear(features)
        return tf.estimator.EstimatorSpec(
            mode, loss=tf.reduce_mean(tf.square(pred - labels)),
            train_op=tf.assign_add(tf.train.get_global_step(), 1),
            training_hooks=[Count("train")], training_chief_hooks=[Count("chief")],
            evaluation_hooks=[Count("eval")])
    est = estimator(tmp_path, fn=hooked)
    est.train(train_input_fn, steps=3)
    est.evaluate(train_input_fn, steps=2)
    assert counts == {"train": 3, "chief": 3, "eval": 2}


def test_config_intervals_shape_the_files(tmp_path):
    est = estimator(tmp_path, "default")
    est.train(train_input_fn, steps=3)
    assert model_files(est.model_dir) == [
        "checkpoint", "graph.pbtxt", "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index",
        "model.ckpt-0.meta", "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index",
        "model.ckpt-3.meta"]
    assert {tag: [s for s, _ in v] for tag, v in summaries(est.model_dir).items()} == \
        {"loss": [1]}
    est = estimator(tmp_path, "tuned", save_summary_steps=2, log_step_count_steps=2,
                    save_checkpoints_steps=3, keep_checkpoint_max=1,
                    checkpoint_save_graph_def=False)
    est.train(train_input_fn, steps=7)
    assert model_files(est.model_dir) == [
        "checkpoint", "model.ckpt-7.data-00000-of-00001", "model.ckpt-7.index"]
    tags = summaries(est.model_dir)
    assert {tag: [s for s, _ in v] for tag, v in tags.items()} == \
        {"loss": [1, 3, 5, 7], "global_step/sec": [3, 5, 7]}
    # the loss summarized at step 3 is the loss before the third update
    w, b = sgd(2)
    np.testing.assert_allclose(tags["loss"][1][1], np.mean((X @ w + b - Y) ** 2), rtol=1e-5)
    est = estimator(tmp_path, "no_saves", save_checkpoints_secs=None)
    est.train(train_input_fn, steps=2)
    assert model_files(est.model_dir) == []


def test_nan_loss_stops_training(tmp_path):
    def nan_model_fn(features, labels, mode):
        loss = tf.reduce_mean(linear(features)) * float("nan")
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1))
    with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
        estimator(tmp_path, fn=nan_model_fn).train(train_input_fn, steps=2)


def test_tf_random_seed_fixes_the_initial_values(tmp_path):
    def random_model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1))
    values = []
    for i, seed in enumerate([1, 1, 2]):
        est = estimator(tmp_path, str(i), fn=random_model_fn, tf_random_seed=seed)
        est.train(train_input_fn, steps=1)
        values.append(est.get_variable_value("w"))
    np.testing.assert_array_equal(values[0], values[1])
    assert not np.array_equal(values[0], values[2])


def test_saving_listeners_hooks_stopping_and_keeping_all(tmp_path):
    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.calls = []

        def begin(self):
            self.calls.append("begin")

        def before_save(self, session, step):
            self.calls.append(("before", step))

        def after_save(self, session, step):
            self.calls.append(("after", step))

        def end(self, session, step):
            self.calls.append(("end", step))

    class StopAtOnce(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.request_stop()
    listener = Listener()
    est = estimator(tmp_path)
    est.train(train_input_fn, steps=3, saving_listeners=[listener])
    assert listener.calls == ["begin", ("before", 0), ("after", 0), ("before", 3),
                              ("after", 3), ("end", 3)]
    est.train(train_input_fn, steps=5, hooks=[StopAtOnce()])
    assert est.get_variable_value("global_step") == 4
    # keep_checkpoint_max=0 keeps every checkpoint (the state lists the last only)
    est = estimator(tmp_path, "all", save_checkpoints_steps=1, keep_checkpoint_max=0)
    est.train(train_input_fn, steps=4)
    assert ckpt_index_files(est.model_dir) == ["model.ckpt-%d.index" % i for i in range(5)]
    with open(os.path.join(est.model_dir, "checkpoint")) as f:
        assert f.read().count("all_model_checkpoint_paths") == 1


def test_model_fn_as_a_method_or_a_partial(tmp_path):
    class Model:
        def model_fn(self, features, labels, mode, config):
            return model_fn(features, labels, mode, {"lr": LR})

    def with_lr(features, labels, mode, lr):
        return model_fn(features, labels, mode, {"lr": lr})

    def with_kwargs(features, labels, mode, **kwargs):
        return model_fn(features, labels, mode, {"lr": LR})
    # the arguments checked are the positional ones a call passes, as TF's fn_args
    for i, fn in enumerate([Model().model_fn, functools.partial(with_lr, lr=LR),
                            with_kwargs]):
        est = tf.estimator.Estimator(fn, model_dir=str(tmp_path / str(i)))
        est.train(train_input_fn, steps=2)
        np.testing.assert_allclose(est.get_variable_value("w"), sgd(2)[0], rtol=1e-5)


# --- evaluate ------------------------------------------------------------------------

def numpy_metrics(w, b, rows=slice(None)):
    pred, y = (X @ w + b)[rows], Y[rows]
    return {"loss": np.mean((pred - y) ** 2), "mae": np.mean(np.abs(pred - y)),
            "mean_pred": np.mean(pred)}


def test_evaluate_returns_the_metrics_and_writes_summaries(tmp_path):
    est = estimator(tmp_path, save_checkpoints_steps=100)
    est.train(train_input_fn, steps=8)
    results = est.evaluate(eval_input_fn)
    assert sorted(results) == ["global_step", "loss", "mae", "mean_pred"]
    assert results["global_step"] == 8 and isinstance(results["global_step"], np.int64)
    assert all(isinstance(results[k], np.float32) for k in ("loss", "mae", "mean_pred"))
    expected = numpy_metrics(*sgd(8))
    for key, value in expected.items():
        np.testing.assert_allclose(results[key], value, rtol=1e-5)
    np.testing.assert_allclose(results["loss"], 0.06081342324614525, rtol=1e-5)  # TF 2.15
    # steps=1: the first batch of two only
    first = est.evaluate(eval_input_fn, steps=1, name="one")
    for key, value in numpy_metrics(*sgd(8), rows=slice(0, 2)).items():
        np.testing.assert_allclose(first[key], value, rtol=1e-5)
    assert est.eval_dir() == os.path.join(est.model_dir, "eval")
    assert est.eval_dir("one") == os.path.join(est.model_dir, "eval_one")
    written = summaries(est.eval_dir("one"))
    assert sorted(written) == ["checkpoint_path", "loss", "mae", "mean_pred"]
    assert [s for s, _ in written["loss"]] == [8]
    np.testing.assert_allclose(written["mae"][0][1], first["mae"], rtol=1e-6)
    assert [s for s, _ in summaries(est.eval_dir())["loss"]] == [8]
    # steps beyond the input end with the input
    ten = est.evaluate(eval_input_fn, steps=10)
    np.testing.assert_allclose(ten["loss"], results["loss"], rtol=1e-6)
    with pytest.raises(ValueError, match=r"^Must specify steps > 0, given: 0$"):
        est.evaluate(eval_input_fn, steps=0)
    with pytest.raises(TypeError, match="^Hooks must be a SessionRunHook, given: x$"):
        est.evaluate(eval_input_fn, hooks=["x"])


def test_eval_results_of_every_kind_are_summarized(tmp_path):
    def kinds_model_fn(features, labels, mode):
        pred = linear(features)
        loss = tf.reduce_mean(tf.square(pred - labels))
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1),
            eval_metric_ops={
                "vec": tf.metrics.mean_tensor(tf.reshape(pred[:2], [2])),
                "count": (tf.constant(7, tf.int64), tf.no_op()),
                "text": (tf.summary.scalar("inner", tf.constant(3.0)), tf.no_op())})
    est = estimator(tmp_path, fn=kinds_model_fn)
    est.train(train_input_fn, steps=1)
    results = est.evaluate(eval_input_fn)
    assert results["count"] == 7 and isinstance(results["count"], np.int64)
    assert isinstance(results["text"], bytes)
    # the mean over the two eval batches of the first two predictions of each (all 0)
    np.testing.assert_array_equal(results["vec"], [0.0, 0.0])
    kinds = {}
    for path in glob.glob(os.path.join(est.eval_dir(), "events*")):
        for event in tf.train.summary_iterator(path):
            for v in event.summary.value:
                kinds[v.tag] = (event.step, v.WhichOneof("value"),
                                v.simple_value if v.HasField("simple_value") else None)
    assert kinds == {"count": (1, "simple_value", 7.0), "loss": (1, "simple_value", 1.5),
                     "text/0": (1, "simple_value", 3.0), "vec": (1, "tensor", None),
                     "checkpoint_path": (1, "tensor", None)}


def test_evaluate_a_given_checkpoint(tmp_path):
    est = estimator(tmp_path, save_checkpoints_steps=1, keep_checkpoint_max=10)
    est.train(train_input_fn, steps=3)
    results = est.evaluate(eval_input_fn, checkpoint_path=os.path.join(est.model_dir,
                                                                        "model.ckpt-1"))
    assert results["global_step"] == 1
    np.testing.assert_allclose(results["loss"], numpy_metrics(*sgd(1))["loss"], rtol=1e-5)
    with pytest.raises(ValueError, match="^The passed save_path is not a valid checkpoint: "):
        est.evaluate(eval_input_fn, checkpoint_path=os.path.join(est.model_dir,
                                                                 "model.ckpt-99"))


def test_without_a_checkpoint_evaluate_and_predict_use_the_initial_values(tmp_path):
    # TF 2.15 runs the initializers here (it raises only for the calls below)
    est = estimator(tmp_path)
    results = est.evaluate(eval_input_fn)
    assert results["global_step"] == 0
    np.testing.assert_allclose(results["loss"], np.mean(Y ** 2))
    assert os.listdir(est.model_dir) == ["eval"]
    assert [p["y"][0] for p in est.predict(predict_input_fn())] == [0.0] * 4
    message = "Could not find trained model in model_dir: %s." % est.model_dir
    for call in (est.get_variable_names, lambda: est.get_variable_value("w")):
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    assert str(e.value) == "Couldn't find trained model at %s." % est.model_dir


def test_reserved_metric_names(tmp_path):
    def with_metric(name):
        def fn(features, labels, mode):
            pred = linear(features)
            loss = tf.reduce_mean(tf.square(pred - labels))
            return tf.estimator.EstimatorSpec(
                mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1),
                eval_metric_ops={name: tf.metrics.mean(loss)})
        return fn
    est = estimator(tmp_path, fn=with_metric("loss"))
    est.train(train_input_fn, steps=1)  # only evaluation refuses it
    with pytest.raises(ValueError) as e:
        est.evaluate(eval_input_fn)
    assert str(e.value) == ('Metric with name "loss" is not allowed, because Estimator '
                            'already defines a default metric with the same name.')
    with pytest.raises(ValueError) as e:
        estimator(tmp_path, "g", fn=with_metric("global_step")).evaluate(eval_input_fn)
    assert str(e.value) == ('Metric with name `global_step` is not allowed, because '
                            'Estimator already defines a default metric with the same name.')



def test_evaluate_keras_metrics(tmp_path):
    """Keras Metrics in eval_metric_ops accumulate over all batches like tf.metrics
    (values as TF 2.15 gave: p = 0.5 x over x = 1..4, labels 1, 0, 1, 1)."""
    x = np.array([[1.], [2.], [3.], [4.]], np.float32)
    y = np.array([[1.], [0.], [1.], [1.]], np.float32)

    def fn(features, labels, mode):
        w = tf.get_variable("w", [1, 1], initializer=tf.constant_initializer(0.5))
        pred = tf.matmul(features["x"], w)
        loss = tf.reduce_mean(tf.square(pred - labels))
        mean, acc, mse = (tf.keras.metrics.Mean(), tf.keras.metrics.BinaryAccuracy(),
                          tf.keras.metrics.MeanSquaredError())
        mean.update_state(pred)
        acc.update_state(labels, tf.sigmoid(pred))
        mse.update_state(labels, pred)
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=tf.assign_add(tf.train.get_global_step(), 1),
            eval_metric_ops={"mean_p": mean, "acc": acc, "mse": mse,
                             "tf_mean": tf.metrics.mean(pred)})

    est = estimator(tmp_path, fn=fn)
    results = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(2))
    pred = 0.5 * x
    expected = {"mean_p": pred.mean(), "tf_mean": pred.mean(),
                "acc": np.mean((1 / (1 + np.exp(-pred)) > 0.5) == y),
                "mse": np.mean((pred - y) ** 2), "loss": np.mean((pred - y) ** 2)}
    assert sorted(results) == sorted(list(expected) + ["global_step"])
    for key, value in expected.items():
        np.testing.assert_allclose(results[key], value, rtol=1e-6)


# --- predict -------------------------------------------------------------------------

def test_predict_yields_examples_or_batches(tmp_path):
    est = estimator(tmp_path)
    est.train(train_input_fn, steps=8)
    w, b = sgd(8)
    expected = X @ w + b
    examples = list(est.predict(predict_input_fn()))
    assert len(examples) == 4 and all(sorted(e) == ["double", "y"] for e in examples)
    assert all(isinstance(e["y"], np.ndarray) and e["y"].shape == (1,) for e in examples)
    np.testing.assert_allclose([e["y"] for e in examples], expected, rtol=1e-5)
    np.testing.assert_allclose([e["double"] for e in examples], 2 * expected, rtol=1e-5)
    only = list(est.predict(predict_input_fn(), predict_keys=["double"]))
    assert [sorted(e) for e in only] == [["double"]] * 4
    assert [sorted(e) for e in est.predict(predict_input_fn(), predict_keys="y")] == \
        [["y"]] * 4
    batches = list(est.predict(predict_input_fn(), yield_single_examples=False))
    assert [b["y"].shape for b in batches] == [(3, 1), (1, 1)]
    np.testing.assert_allclose(np.concatenate([b["y"] for b in batches]), expected, rtol=1e-5)
    with pytest.raises(ValueError) as e:
        list(est.predict(predict_input_fn(), predict_keys=["nope"]))
    assert str(e.value) == ("Expected to run at least one output from dict_keys(['y', "
                            "'double']), provided ['nope'].")


def test_predict_of_a_tensor_and_of_a_checkpoint(tmp_path):
    est = estimator(tmp_path, fn=step_only_model_fn, save_checkpoints_steps=1)
    est.train(train_input_fn, steps=2)
    examples = list(est.predict(predict_input_fn(4)))
    assert len(examples) == 4 and all(e.shape == (1,) for e in examples)
    np.testing.assert_allclose(examples, X @ np.full((2, 1), 5.0) + 5.0)
    assert [b.shape for b in est.predict(predict_input_fn(3),
                                         yield_single_examples=False)] == [(3, 1), (1, 1)]
    with pytest.raises(ValueError) as e:
        list(est.predict(predict_input_fn(), predict_keys=["a"]))
    assert str(e.value) == "predict_keys argument is not valid in case of non-dict predictions."
    # an input_fn with labels: the labels are dropped
    assert len(list(est.predict(eval_input_fn))) == 4
    # a given checkpoint
    trained = estimator(tmp_path, "trained", save_checkpoints_steps=1, keep_checkpoint_max=9)
    trained.train(train_input_fn, steps=3)
    first = list(trained.predict(predict_input_fn(4), checkpoint_path=os.path.join(
        trained.model_dir, "model.ckpt-1"), yield_single_examples=False))
    w, b = sgd(1)
    np.testing.assert_allclose(first[0]["y"], X @ w + b, rtol=1e-5)


def test_predictions_of_different_batch_lengths(tmp_path):
    def uneven(features, labels, mode):
        pred = linear(features)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": pred,
                                                                 "first": pred[:1]})
        return tf.estimator.EstimatorSpec(
            mode, loss=tf.reduce_mean(pred), train_op=tf.assign_add(
                tf.train.get_global_step(), 1))
    est = estimator(tmp_path, fn=uneven)
    with pytest.raises(ValueError) as e:
        list(est.predict(predict_input_fn(4)))
    assert str(e.value) == ("Batch length of predictions should be same. first has "
                            "different batch length than others.")
    assert len(list(est.predict(predict_input_fn(4), yield_single_examples=False))) == 1


# --- export --------------------------------------------------------------------------

def serving_input_fn():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"inp": x})


def serve(export_dir, inputs):
    with tf.Session(graph=tf.Graph()) as session:
        meta_graph = tf.saved_model.loader.load(session, ["serve"], export_dir)
        assert sorted(meta_graph.signature_def) == ["serving_default"]
        sig = meta_graph.signature_def["serving_default"]
        assert sig.method_name == "tensorflow/serving/predict"
        assert sorted(sig.inputs) == ["inp"] and sorted(sig.outputs) == ["double", "y"]
        return session.run({k: v.name for k, v in sig.outputs.items()},
                           {sig.inputs["inp"].name: inputs})


def test_export_saved_model(tmp_path):
    est = estimator(tmp_path, save_checkpoints_steps=1, keep_checkpoint_max=9)
    est.train(train_input_fn, steps=4)
    base = str(tmp_path / "export")
    path = est.export_saved_model(base, serving_input_fn)
    assert isinstance(path, bytes)
    assert os.path.dirname(path) == base.encode() and os.path.basename(path).isdigit()
    assert sorted(os.listdir(path)) == [b"saved_model.pb", b"variables"]
    served = serve(path, X)
    w, b = sgd(4)
    np.testing.assert_allclose(served["y"], X @ w + b, rtol=1e-5)
    np.testing.assert_allclose(served["double"], 2 * (X @ w + b), rtol=1e-5)
    # the variables in TF's V2 format, so TensorFlow Serving loads them: the index is a
    # TF table (its footer ends with the table magic number 0xdb4775248b80fb57)
    with open(os.path.join(path.decode(), "variables", "variables.index"), "rb") as f:
        assert f.read()[-8:] == (0xdb4775248b80fb57).to_bytes(8, "little")

    extra = tmp_path / "extra.txt"
    extra.write_text("hi")
    # another base: a second export into `base` within the same second waits for the next
    path = est.export_saved_model(base + "_text", serving_input_fn,
                                  assets_extra={"sub/e.txt": str(extra)},
                                  as_text=True, checkpoint_path=os.path.join(
                                      est.model_dir, "model.ckpt-1"))
    assert sorted(os.listdir(path)) == [b"assets.extra", b"saved_model.pbtxt", b"variables"]
    with open(os.path.join(path.decode(), "assets.extra", "sub", "e.txt")) as f:
        assert f.read() == "hi"
    w, b = sgd(1)
    np.testing.assert_allclose(serve(path, X)["y"], X @ w + b, rtol=1e-5)
    with pytest.raises(ValueError, match="^An input_receiver_fn must be defined.$"):
        est.export_saved_model(base, None)
    # TF1's name
    path = est.export_savedmodel(base + "_old", serving_input_fn)
    np.testing.assert_allclose(serve(path, X)["y"], X @ sgd(4)[0] + sgd(4)[1], rtol=1e-5)


# --- construction --------------------------------------------------------------------

def test_model_fn_arguments_are_checked():
    def no_features(labels, mode):
        pass

    def extra(features, labels, mode, foo):
        pass

    def no_params(features, labels, mode):
        pass
    for fn, params, message in [
            (no_features, None, "model_fn (%s) must include features argument." % no_features),
            (extra, None, "model_fn (%s) has following not expected args: ['foo']" % extra),
            (no_params, {"a": 1}, "model_fn (%s) does not include params argument, but params "
                                  "({'a': 1}) is passed to Estimator." % no_params),
            (functools.partial(extra, 1), None, "model_fn (%s) must include features "
                                                "argument." % functools.partial(extra, 1)),
            (None, None, "model_fn must be provided to Estimator.")]:
        with pytest.raises(ValueError) as e:
            tf.estimator.Estimator(fn, params=params)
        assert str(e.value) == message


def test_model_dir_and_config(tmp_path):
    with pytest.raises(ValueError) as e:
        tf.estimator.Estimator(model_fn, config="x")
    assert str(e.value) == "config must be an instance of `RunConfig`, but provided x."
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    with pytest.raises(ValueError) as e:
        tf.estimator.Estimator(model_fn, model_dir=a, config=tf.estimator.RunConfig(model_dir=b))
    assert str(e.value) == (
        "`model_dir` are set both in constructor and `RunConfig`, but with different values. "
        "In constructor: '%s', in `RunConfig`: '%s' " % (a, b))
    est = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(model_dir=b))
    assert est.model_dir == b and est.config.model_dir == b
    est = tf.estimator.Estimator(model_fn, model_dir=tmp_path / "p")  # a PathLike
    assert est.model_dir == str(tmp_path / "p") and est.config.model_dir == est.model_dir
    est = tf.estimator.Estimator(model_fn)
    assert os.path.isdir(est.model_dir)
    assert est.config.session_config is not None
    assert (est.config.save_checkpoints_secs, est.config.save_checkpoints_steps) == (600, None)


def test_model_fn_contract_is_checked_when_called(tmp_path):
    def no_labels(features, mode):
        return tf.estimator.EstimatorSpec(
            mode, loss=tf.reduce_mean(linear(features)),
            train_op=tf.assign_add(tf.train.get_global_step(), 1))

    def not_a_spec(features, labels, mode):
        return {"loss": tf.reduce_mean(linear(features))}
    with pytest.raises(ValueError) as e:
        estimator(tmp_path, fn=no_labels).train(train_input_fn, steps=1)
    assert str(e.value) == "model_fn does not take labels, but input_fn returns labels."
    with pytest.raises(ValueError) as e:
        estimator(tmp_path, fn=not_a_spec).train(train_input_fn, steps=1)
    assert str(e.value) == "model_fn should return an EstimatorSpec."
    est = estimator(tmp_path)
    with pytest.raises(TypeError, match="^Hooks must be a SessionRunHook, given: x$"):
        est.train(train_input_fn, steps=1, hooks=["x"])
    with pytest.raises(TypeError) as e:
        est.train(train_input_fn, steps=1, saving_listeners=["x"])
    assert str(e.value) == "saving_listeners must be a list of CheckpointSaverListener, " \
                           "given: x"
    with tf.Graph().as_default():
        spec = est.model_fn({"x": tf.constant(X)}, None, "infer", est.config)
        assert isinstance(spec, tf.estimator.EstimatorSpec)
        assert sorted(spec.predictions) == ["double", "y"]


def test_train_refused_on_evaluator_and_ps_tasks(monkeypatch, tmp_path):
    import json
    for task in ("evaluator", "ps"):
        monkeypatch.setenv("TF_CONFIG", json.dumps({
            "cluster": {"chief": ["localhost:1"], "ps": ["localhost:2"]},
            "task": {"type": task, "index": 0}}))
        est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": LR})
        with pytest.raises(ValueError, match="^Train has been called wrong configuration. "
                                             "Please use tf.estimator.train_and_evaluate"):
            est.train(train_input_fn, steps=1)


# --- warm start ----------------------------------------------------------------------

@pytest.fixture
def trained_dir(tmp_path):
    est = estimator(tmp_path, "source")
    est.train(train_input_fn, steps=3)
    return est.model_dir


def warm_started(tmp_path, name, warm_start_from, fn=step_only_model_fn):
    est = tf.estimator.Estimator(fn, model_dir=str(tmp_path / name),
                                 warm_start_from=warm_start_from)
    est.train(train_input_fn, steps=1)
    return est.get_variable_value("w"), est.get_variable_value("b")


def test_warm_start_from_a_model_dir(tmp_path, trained_dir):
    w3, b3 = sgd(3)
    w, b = warm_started(tmp_path, "all", trained_dir)
    np.testing.assert_allclose(w, w3, rtol=1e-5)
    np.testing.assert_allclose(b, b3, rtol=1e-5)
    settings = tf.estimator.WarmStartSettings(trained_dir, vars_to_warm_start="w.*")
    w, b = warm_started(tmp_path, "regex", settings)
    np.testing.assert_allclose(w, w3, rtol=1e-5)
    np.testing.assert_array_equal(b, [5.0])
    checkpoint = tf.train.latest_checkpoint(trained_dir)
    w, b = warm_started(tmp_path, "list", tf.estimator.WarmStartSettings(
        checkpoint, vars_to_warm_start=["b"]))
    np.testing.assert_array_equal(w, np.full((2, 1), 5.0))
    np.testing.assert_allclose(b, b3, rtol=1e-5)


def test_warm_start_renamed_variables_and_from_a_saved_model(tmp_path, trained_dir):
    w3, b3 = sgd(3)

    def renamed(features, labels, mode):
        pred = linear(features, init=5.0, w_name="w2")
        return tf.estimator.EstimatorSpec(
            mode, loss=tf.reduce_mean(pred), train_op=tf.assign_add(
                tf.train.get_global_step(), 1))
    est = tf.estimator.Estimator(renamed, model_dir=str(tmp_path / "renamed"),
                                 warm_start_from=tf.estimator.WarmStartSettings(
                                     trained_dir, var_name_to_prev_var_name={"w2": "w"}))
    est.train(train_input_fn, steps=1)
    np.testing.assert_allclose(est.get_variable_value("w2"), w3, rtol=1e-5)
    source = tf.estimator.Estimator(model_fn, model_dir=trained_dir, params={"lr": LR})
    saved_model = source.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    w, b = warm_started(tmp_path, "saved", saved_model)
    np.testing.assert_allclose(w, w3, rtol=1e-5)
    np.testing.assert_allclose(b, b3, rtol=1e-5)


def test_warm_start_only_without_own_checkpoint(tmp_path, trained_dir):
    est = tf.estimator.Estimator(step_only_model_fn, model_dir=str(tmp_path / "own"),
                                 warm_start_from=trained_dir)
    # before any training, predict and evaluate read the warm-start checkpoint
    w3, b3 = sgd(3)
    predicted = [p[0] for p in est.predict(predict_input_fn())]
    np.testing.assert_allclose(predicted, (X @ w3 + b3).ravel(), rtol=1e-5)
    est.train(train_input_fn, steps=1)
    # a checkpoint of its own now: a changed source is not read again
    tf.estimator.Estimator(model_fn, model_dir=trained_dir, params={"lr": LR}).train(
        train_input_fn, steps=2)
    est.train(train_input_fn, steps=1)
    assert est.get_variable_value("global_step") == 2
    np.testing.assert_allclose(est.get_variable_value("w"), w3, rtol=1e-5)


def test_export_without_own_checkpoint_exports_the_warm_start(tmp_path, trained_dir):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "own"),
                                 params={"lr": LR}, warm_start_from=trained_dir)
    path = est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    w, b = sgd(3)
    np.testing.assert_allclose(serve(path, X)["y"], X @ w + b, rtol=1e-5)


def test_warm_start_settings_arguments():
    settings = tf.estimator.WarmStartSettings("/ckpt")
    assert settings.vars_to_warm_start == ".*"
    assert settings.var_name_to_vocab_info == {} and settings.var_name_to_prev_var_name == {}
    with pytest.raises(ValueError, match="^`ckpt_to_initialize_from` MUST be set in "
                                         "WarmStartSettings$"):
        tf.estimator.WarmStartSettings("")
    with pytest.raises(ValueError) as e:
        tf.estimator.Estimator(model_fn, params={"lr": LR}, warm_start_from=3)
    assert str(e.value) == ("warm_start_from must be a string or a WarmStartSettings, "
                            "instead got <class 'int'>")


def test_evaluate_with_a_scaffold_local_init_op_also_initializes_the_metrics(tmp_path):
    """A model_fn's own Scaffold(local_init_op=...) is grouped with the default local
    init op, so the metrics' variables are initialized too (TF 2.15 gives these values;
    it used to fail with "Variables not initialized: mean_absolute_error/total")."""
    ran = []

    def fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        if mode != tf.estimator.ModeKeys.EVAL:
            return spec
        marker = tf.Variable(0, name="marker", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        ran.append(marker)
        return spec._replace(scaffold=tf.train.Scaffold(local_init_op=marker.assign(7)))
    est = tf.estimator.Estimator(fn, model_dir=str(tmp_path), params={"lr": LR})
    result = est.evaluate(eval_input_fn)
    w, b = sgd(0)
    pred = X @ w + b
    assert result["global_step"] == 0
    np.testing.assert_allclose(result["loss"], np.mean((pred - Y) ** 2), rtol=1e-6)
    np.testing.assert_allclose(result["mae"], np.mean(np.abs(pred - Y)), rtol=1e-6)
    assert len(ran) == 1
