"""tf.estimator.TrainSpec, EvalSpec and train_and_evaluate, locally and as the tasks of a
TF_CONFIG cluster that need no server (evaluator, a cluster of one chief or master).
Expected results, exporter calls and messages are what TensorFlow 2.15
(tensorflow-estimator 2.15) gave for the same programs; metric values are checked
against NumPy."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf

from linear_problem import X, Y, eval_input_fn, linear_model_fn, sgd, train_input_fn


@pytest.fixture(autouse=True)
def no_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)


def numpy_metrics(steps):
    w, b = sgd(steps)
    err = X @ w + b - Y
    return {"loss": np.mean(err ** 2), "mae": np.mean(np.abs(err))}


model_fn = linear_model_fn(lr=0.1)


def serving_input_fn():
    x = tf.placeholder(tf.float32, [None, 2])
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


class RecordingExporter(tf.estimator.Exporter):
    """Records (checkpoint, global step, final?, loss) of each export."""

    def __init__(self):
        self.calls = []
        self.paths = []

    @property
    def name(self):
        return "rec"

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        self.paths.append(export_path)
        self.calls.append((os.path.basename(checkpoint_path), int(eval_result["global_step"]),
                           is_the_final_export, float(eval_result["loss"])))
        return "rec-%d" % eval_result["global_step"]


def make_estimator(model_dir, **config):
    return tf.estimator.Estimator(model_fn, model_dir=str(model_dir),
                                  config=tf.estimator.RunConfig(**config))


def assert_metrics(metrics, steps):
    assert sorted(metrics) == ["global_step", "loss", "mae"]
    assert metrics["global_step"] == steps
    for key, value in numpy_metrics(steps).items():
        np.testing.assert_allclose(metrics[key], value, rtol=1e-5)


def assert_calls(calls, expected):
    assert [c[:3] for c in calls] == [e[:3] for e in expected]
    np.testing.assert_allclose([c[3] for c in calls], [e[3] for e in expected], rtol=1e-5)


# --- specs ---------------------------------------------------------------------------

def test_train_spec_checks():
    assert tuple(tf.estimator.TrainSpec(train_input_fn))[1:] == (None, (), ())
    for kwargs, error, message in [
            (dict(input_fn=3), TypeError, "`input_fn` must be callable, given: 3"),
            (dict(max_steps=0), ValueError, "Must specify max_steps > 0, given: 0"),
            (dict(max_steps=-1), ValueError, "Must specify max_steps > 0, given: -1"),
            (dict(hooks=["x"]), TypeError,
             "All hooks must be `SessionRunHook` instances, given: x"),
            (dict(saving_listeners=["x"]), TypeError,
             "All saving_listeners must be `CheckpointSaverListener` instances, given: x")]:
        kwargs.setdefault("input_fn", train_input_fn)
        with pytest.raises(error) as e:
            tf.estimator.TrainSpec(**kwargs)
        assert str(e.value) == message


def test_eval_spec_checks():
    spec = tf.estimator.EvalSpec(eval_input_fn)
    assert tuple(spec)[1:] == (100, None, (), (), 120, 600)
    latest = tf.estimator.LatestExporter("a", serving_input_fn)
    assert tf.estimator.EvalSpec(eval_input_fn, exporters=latest).exporters == (latest,)
    for kwargs, error, message in [
            (dict(input_fn=None), TypeError, "`input_fn` must be callable, given: None"),
            (dict(steps=0), ValueError, "Must specify steps > 0, given: 0"),
            (dict(name=3), TypeError, "`name` must be string, given: 3"),
            (dict(hooks=[1]), TypeError,
             "All hooks must be `SessionRunHook` instances, given: 1"),
            (dict(start_delay_secs=-1), ValueError,
             "Must specify start_delay_secs >= 0, given: -1"),
            (dict(throttle_secs=-1), ValueError, "Must specify throttle_secs >= 0, given: -1"),
            (dict(exporters=3), TypeError, "`exporters` must be an Exporter, an iterable of "
                                           "Exporter, or `None`, found 3."),
            (dict(exporters=[3]), TypeError, "`exporters` must be an Exporter, an iterable "
                                             "of Exporter, or `None`, found [3]."),
            (dict(exporters=[latest, tf.estimator.LatestExporter("a", serving_input_fn)]),
             ValueError, "`exporters` must have unique names. Such a name cannot be `None`. "
                         "All exporter names: ['a', 'a']"),
            (dict(exporters=[tf.estimator.LatestExporter("", serving_input_fn)]), ValueError,
             "An Exporter cannot have a name that is `None` or empty. All exporter names: "
             "['']")]:
        kwargs.setdefault("input_fn", eval_input_fn)
        with pytest.raises(error) as e:
            tf.estimator.EvalSpec(**kwargs)
        assert str(e.value) == message


def test_train_and_evaluate_argument_types(tmp_path):
    est = make_estimator(tmp_path)
    train = tf.estimator.TrainSpec(train_input_fn, max_steps=1)
    evaluate = tf.estimator.EvalSpec(eval_input_fn)
    for args, message in [
            ((3, train, evaluate),
             "`estimator` must have type `tf.estimator.Estimator`. Got: <class 'int'>"),
            ((est, 3, evaluate),
             "`train_spec` must have type `tf.estimator.TrainSpec`. Got: <class 'int'>"),
            ((est, train, 3),
             "`eval_spec` must have type `tf.estimator.EvalSpec`. Got: <class 'int'>")]:
        with pytest.raises(TypeError) as e:
            tf.estimator.train_and_evaluate(*args)
        assert str(e.value) == message


# --- local ---------------------------------------------------------------------------

def test_local_run_evaluates_and_exports_each_checkpoint(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_steps=2)
    recorder = RecordingExporter()
    latest = tf.estimator.LatestExporter("lat", serving_input_fn, exports_to_keep=2)
    train = tf.estimator.TrainSpec(train_input_fn, max_steps=5)
    evaluate = tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0, name="n",
                                     exporters=[recorder, latest])
    result = tf.estimator.train_and_evaluate(est, train, evaluate)
    assert isinstance(result, tuple) and len(result) == 2
    metrics, exports = result
    assert_metrics(metrics, 5)
    # the checkpoint of step 0 is not evaluated; the last one is the final export
    assert_calls(recorder.calls, [("model.ckpt-%d" % s, s, s == 5, numpy_metrics(s)["loss"])
                                  for s in (2, 4, 5)])
    assert recorder.paths == [os.path.join(est.model_dir, "export", "rec")] * 3
    assert exports[0] == "rec-5"
    lat_dir = os.path.join(est.model_dir, "export", "lat")
    assert os.path.dirname(exports[1]) == lat_dir.encode()
    assert len(os.listdir(lat_dir)) == 2  # three exports, two kept
    with tf.Session(graph=tf.Graph()) as session:
        meta_graph = tf.saved_model.loader.load(session, ["serve"], exports[1])
        sig = meta_graph.signature_def["serving_default"]
        served = session.run(sig.outputs["y"].name, {sig.inputs["x"].name: X})
    w, b = sgd(5)
    np.testing.assert_allclose(served, X @ w + b, rtol=1e-5)
    loss_steps = []
    for path in sorted(os.listdir(est.eval_dir("n"))):
        for event in tf.train.summary_iterator(os.path.join(est.eval_dir("n"), path)):
            loss_steps += [event.step for v in event.summary.value if v.tag == "loss"]
    assert loss_steps == [2, 4, 5]
    # max_steps reached already: no training, no evaluation
    recorder.calls.clear()
    assert tf.estimator.train_and_evaluate(est, train, evaluate) == (None, None)
    assert recorder.calls == []


def test_throttle_secs_skips_checkpoints_but_not_the_last(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_steps=1)
    recorder = RecordingExporter()
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn, max_steps=4),
        tf.estimator.EvalSpec(eval_input_fn, steps=1, throttle_secs=1000, exporters=recorder))
    # steps=1: the first eval batch (two rows) only
    w, b = sgd(4)
    err = (X @ w + b - Y)[:2]
    np.testing.assert_allclose(metrics["loss"], np.mean(err ** 2), rtol=1e-5)
    np.testing.assert_allclose(metrics["loss"], 0.03372922167181969, rtol=1e-5)  # TF 2.15
    assert exports == ["rec-4"]
    assert [c[:3] for c in recorder.calls] == [("model.ckpt-1", 1, False),
                                               ("model.ckpt-4", 4, True)]


def test_finite_input_without_max_steps(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_steps=100)

    def one_pass():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(1)
    metrics, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(one_pass), tf.estimator.EvalSpec(eval_input_fn,
                                                                     throttle_secs=0))
    assert metrics["global_step"] == 4 and exports == []
    np.testing.assert_allclose(metrics["loss"], 0.3025091886520386, rtol=1e-5)  # TF 2.15


def test_local_run_needs_checkpoints(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_secs=None)
    with pytest.raises(ValueError) as e:
        tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(train_input_fn, max_steps=2),
                                        tf.estimator.EvalSpec(eval_input_fn, throttle_secs=0))
    assert str(e.value) == (
        "There should be a CheckpointSaverHook to use saving_listeners. Please set one of the "
        "RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs.")


# --- cluster tasks -------------------------------------------------------------------

def set_task(monkeypatch, cluster, task_type, index=0):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster,
                                                "task": {"type": task_type, "index": index}}))


def test_evaluator_evaluates_the_final_checkpoint_and_exits(monkeypatch, tmp_path):
    make_estimator(tmp_path).train(train_input_fn, max_steps=3)
    set_task(monkeypatch, {"chief": ["localhost:1"]}, "evaluator")
    recorder = RecordingExporter()
    result = tf.estimator.train_and_evaluate(
        make_estimator(tmp_path), tf.estimator.TrainSpec(train_input_fn, max_steps=3),
        tf.estimator.EvalSpec(eval_input_fn, steps=None, start_delay_secs=0, throttle_secs=0,
                              exporters=recorder, name="ev"))
    assert result is None
    assert_calls(recorder.calls, [("model.ckpt-3", 3, True, numpy_metrics(3)["loss"])])
    assert os.path.isdir(os.path.join(str(tmp_path), "eval_ev"))


def test_tasks_train_and_evaluate_refuses(monkeypatch, tmp_path):
    set_task(monkeypatch, {"chief": ["localhost:1"], "evaluator": ["a:1", "b:1"]},
             "evaluator", 1)
    specs = (tf.estimator.TrainSpec(train_input_fn, max_steps=3),
             tf.estimator.EvalSpec(eval_input_fn, start_delay_secs=0))
    with pytest.raises(ValueError) as e:
        tf.estimator.train_and_evaluate(make_estimator(tmp_path), *specs)
    assert str(e.value) == ("For distributed training, there can only be one `evaluator` task "
                            "(with task id 0).  Given task id 1")
    set_task(monkeypatch, {"chief": ["localhost:1"], "foo": ["localhost:2"]}, "foo")
    with pytest.raises(ValueError) as e:
        tf.estimator.train_and_evaluate(make_estimator(tmp_path), *specs)
    assert str(e.value) == ("Task type foo is not supported. Supported task types are "
                            "['chief', 'evaluator', 'master', 'ps', 'worker']")


def test_a_cluster_of_one_chief_trains_without_a_server(monkeypatch, tmp_path):
    set_task(monkeypatch, {"chief": ["localhost:1"]}, "chief")
    est = make_estimator(tmp_path)
    assert tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn, max_steps=2),
        tf.estimator.EvalSpec(eval_input_fn, start_delay_secs=0)) is None
    assert est.get_variable_value("global_step") == 2
    np.testing.assert_allclose(est.get_variable_value("w"), sgd(2)[0], rtol=1e-5)
    assert not os.path.exists(est.eval_dir())  # the chief does not evaluate


def test_a_master_trains_and_evaluates(monkeypatch, tmp_path):
    set_task(monkeypatch, {"master": ["localhost:1"]}, "master")
    est = make_estimator(tmp_path, save_checkpoints_steps=1)
    recorder = RecordingExporter()
    assert tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input_fn, max_steps=2),
        tf.estimator.EvalSpec(eval_input_fn, start_delay_secs=0, throttle_secs=0,
                              exporters=recorder)) is None
    assert_calls(recorder.calls, [("model.ckpt-%d" % s, s, s == 2, numpy_metrics(s)["loss"])
                                  for s in (1, 2)])
