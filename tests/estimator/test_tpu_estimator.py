"""tf.estimator.tpu on the path TPU programs take without a TPU: TPUEstimator(use_tpu=False)
with the RunConfig/TPUConfig of Google's BERT run_classifier.py.

A small BERT-like classifier (an embedding table, mean pooling, a dense layer; Adam) is
trained, evaluated through eval_metrics (metric values checked against NumPy on the
weights read back from the checkpoint), used for prediction and exported. The batch
sizes params carry per mode, the checkpoint steps, the summary steps of the
examples/sec hook, the host_call steps and the error classes and messages are what
TensorFlow 2.15 (tensorflow-estimator 2.15) gave for the same programs; where tensorweave
must differ (no TPU) the tests say so."""
import glob
import logging
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.saved_model import saved_model_file

TPU = tf.estimator.tpu
VOCAB, SEQ, DIM, CLASSES = 20, 6, 8, 2
_rng = np.random.RandomState(0)
IDS = _rng.randint(0, VOCAB, size=(64, SEQ)).astype(np.int32)
LABELS = (IDS[:, 0] % 2).astype(np.int32)


def input_fn_builder(n):
    """BERT's input_fn_builder: the first n examples, batched by params["batch_size"]."""
    def input_fn(params):
        SEEN.append(("input_fn", _public(params)))
        d = tf.data.Dataset.from_tensor_slices(({"input_ids": IDS[:n]}, LABELS[:n]))
        return d.batch(params["batch_size"], drop_remainder=True)
    return input_fn


SEEN = []   # (who, mode, params) of every input_fn and model_fn call
HOST = []   # (mode, global step) of every host_call run


@pytest.fixture(autouse=True)
def _fresh_records():
    # after the module's `trained` fixture (a wider scope is set up first)
    del SEEN[:], HOST[:]


def _public(params):
    return sorted(params.items())


def warm_start_scaffold_fn(init_checkpoint):
    """run_classifier.py's scaffold_fn: "emb" initialized from the checkpoint."""
    if not init_checkpoint:
        return None

    def scaffold_fn():
        tf.train.init_from_checkpoint(init_checkpoint, {"emb": "emb"})
        return tf.train.Scaffold()
    return scaffold_fn


def model_fn(features, labels, mode, params, config):
    """BERT's model_fn_builder in miniature: a TPUEstimatorSpec per mode, with
    scaffold_fn warm-starting "emb" from params["init_ckpt"], eval_metrics from a
    metric_fn (list or dict tensors) and a host_call recording each step."""
    SEEN.append(("model_fn", mode, _public(params), config.log_step_count_steps))
    emb = tf.get_variable("emb", [VOCAB, DIM],
                          initializer=tf.truncated_normal_initializer(stddev=0.5))
    w = tf.get_variable("out/w", [DIM, CLASSES],
                        initializer=tf.truncated_normal_initializer(stddev=0.5))
    b = tf.get_variable("out/b", [CLASSES], initializer=tf.zeros_initializer())
    pooled = tf.reduce_mean(tf.nn.embedding_lookup(emb, features["input_ids"]), axis=1)
    logits = tf.matmul(pooled, w) + b
    scaffold_fn = warm_start_scaffold_fn(params.get("init_ckpt"))
    if mode == tf.estimator.ModeKeys.PREDICT:
        return TPU.TPUEstimatorSpec(mode, scaffold_fn=scaffold_fn, predictions={
            "probs": tf.nn.softmax(logits),
            "pred": tf.argmax(logits, axis=-1, output_type=tf.int32)})
    per_example_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                      logits=logits)
    loss = tf.reduce_mean(per_example_loss)

    def host_fn(global_step, loss):
        record = tf.py_func(lambda s, _: HOST.append((mode, int(s[0]))) or np.int64(0),
                            [global_step, loss], tf.int64)
        return [record]
    host_call = (host_fn, [tf.reshape(tf.train.get_global_step(), [1]),
                           tf.reshape(loss, [1])])
    if mode == tf.estimator.ModeKeys.TRAIN:
        if params.get("frozen"):  # counts steps, changes no weight
            train_op = tf.assign_add(tf.train.get_global_step(), 1)
        else:
            train_op = tf.train.AdamOptimizer(0.05).minimize(
                loss, global_step=tf.train.get_global_step())
        return TPU.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                    scaffold_fn=scaffold_fn, host_call=host_call)

    def metric_fn(per_example_loss, label_ids, logits):
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {"eval_accuracy": tf.metrics.accuracy(label_ids, predictions),
                "eval_loss": tf.metrics.mean(per_example_loss)}
    tensors = [per_example_loss, labels, logits]
    if params.get("dict_metrics"):
        tensors = dict(zip(["per_example_loss", "label_ids", "logits"], tensors))
    return TPU.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, tensors),
                                scaffold_fn=scaffold_fn, host_call=host_call)


def run_config(model_dir, save=3, log=4, iterations=2, **tpu):
    """run_classifier.py's RunConfig."""
    return TPU.RunConfig(
        cluster=None, master=None, model_dir=str(model_dir), save_checkpoints_steps=save,
        log_step_count_steps=log,
        tpu_config=TPU.TPUConfig(
            iterations_per_loop=iterations, num_shards=8,
            per_host_input_for_training=TPU.InputPipelineConfig.PER_HOST_V2, **tpu))


def estimator(model_dir, params=None, **kwargs):
    config = kwargs.pop("config", None) or run_config(model_dir)
    sizes = dict(train_batch_size=8, eval_batch_size=4, predict_batch_size=2)
    sizes.update(kwargs)
    return TPU.TPUEstimator(use_tpu=False, model_fn=model_fn, config=config,
                            params=params, **sizes)


def summary_steps(directory):
    """{tag: [steps]} of the event files in `directory`."""
    found = {}
    for path in sorted(glob.glob(os.path.join(str(directory), "events*"))):
        for event in tf.train.summary_iterator(path):
            for v in event.summary.value:
                found.setdefault(v.tag, []).append(event.step)
    return found


def numpy_logits(model_dir, ids):
    reader = tf.train.load_checkpoint(str(model_dir))
    emb, w, b = (reader.get_tensor(n) for n in ("emb", "out/w", "out/b"))
    return emb[ids].mean(axis=1) @ w + b


def log_softmax(logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A TPUEstimator trained 7 steps of batch 8 (max_steps=7), and what it recorded."""
    model_dir = tmp_path_factory.mktemp("bert")
    del SEEN[:], HOST[:]
    est = estimator(model_dir, params={"extra": 1})
    est.train(input_fn_builder(56), max_steps=7)
    recorded = {"seen": list(SEEN), "host": list(HOST)}
    del SEEN[:], HOST[:]
    return est, recorded


# --- train ---------------------------------------------------------------------------

def test_train_params_checkpoints_host_call_and_summaries(trained):
    est, recorded = trained
    # TF 2.15: batch_size is the global train batch size (no shards on CPU), model_fn
    # also gets use_tpu=False, and its config has log_step_count_steps=None
    assert recorded["seen"] == [
        ("input_fn", [("batch_size", 8), ("extra", 1)]),
        ("model_fn", "train", [("batch_size", 8), ("extra", 1), ("use_tpu", False)], None)]
    assert est.params == {"extra": 1}
    assert est.config.log_step_count_steps is None
    assert est.config.tpu_config.iterations_per_loop == 2
    # the host_call ran on every step, seeing the step before it
    assert recorded["host"] == [("train", s) for s in range(7)]
    # TF 2.15: checkpoints every save_checkpoints_steps (iterations_per_loop does not
    # change that on CPU), plus step 0 and the last step
    state = tf.train.get_checkpoint_state(est.model_dir)
    assert sorted(int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths) \
        == [0, 3, 6, 7]
    # TF 2.15: no loss logging; global_step/sec and examples/sec every
    # ceil(log_step_count_steps 4 / iterations_per_loop 2) = 2 steps
    assert summary_steps(est.model_dir) == {
        "examples/sec": [3, 5, 7], "global_step/sec": [3, 5, 7], "loss": [1]}


class _LinearModel:
    """A one-layer regression with a host_call writing a tf.summary.scalar."""

    @staticmethod
    def input_fn(params):
        x = np.ones([40, 3], np.float32)
        return tf.data.Dataset.from_tensor_slices(({"x": x}, np.ones([40], np.float32))) \
            .batch(params["batch_size"])

    @staticmethod
    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", [3, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w)[:, 0] - labels))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.train.get_global_step())
        if params.get("plain"):
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

        def host_fn(loss):
            return [tf.summary.scalar("hc_loss", loss[0])]
        return TPU.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                    host_call=(host_fn, [tf.reshape(loss, [1])]))


@pytest.mark.parametrize("log, iterations, params, expected", [
    (4, 1, None, [5, 9]),
    (4, 3, None, [3, 5, 7, 9]),
    (4, "100s", None, []),   # every 100 seconds
    (None, 1, None, []),
    (4, 1, {"plain": True}, [5, 9]),  # an EstimatorSpec from model_fn gets the hook too
])
def test_examples_per_second_cadence(tmp_path, log, iterations, params, expected):
    config = TPU.RunConfig(model_dir=str(tmp_path), save_summary_steps=3,
                           log_step_count_steps=log, save_checkpoints_steps=100,
                           tpu_config=TPU.TPUConfig(iterations_per_loop=iterations))
    est = TPU.TPUEstimator(model_fn=_LinearModel.model_fn, config=config, use_tpu=False,
                           train_batch_size=4, params=params)
    est.train(_LinearModel.input_fn, max_steps=10)
    tags = summary_steps(tmp_path)
    assert tags.get("examples/sec", []) == expected
    assert tags.get("global_step/sec", []) == expected
    # TF 2.15: the host_call's summary is merged by the Estimator's summary saver
    assert tags["loss"] == [1, 4, 7, 10]
    assert tags.get("hc_loss") == (None if params else [1, 4, 7, 10])


# --- evaluate ------------------------------------------------------------------------

@pytest.mark.parametrize("dict_metrics", [False, True])
def test_evaluate_eval_metrics_match_numpy(trained, dict_metrics):
    est, _ = trained
    params = {"extra": 1, "dict_metrics": True} if dict_metrics else {"extra": 1}
    est = estimator(est.model_dir, params=params, config=est.config)
    results = est.evaluate(input_fn_builder(16), steps=3 if dict_metrics else None)
    n = 12 if dict_metrics else 16
    logits = numpy_logits(est.model_dir, IDS[:n])
    accuracy = np.mean(logits.argmax(axis=1) == LABELS[:n])
    mean_loss = -log_softmax(logits)[np.arange(n), LABELS[:n]].mean()
    assert sorted(results) == ["eval_accuracy", "eval_loss", "global_step", "loss"]
    assert results["global_step"] == 7
    np.testing.assert_allclose(results["eval_accuracy"], accuracy, rtol=1e-6)
    np.testing.assert_allclose(results["eval_loss"], mean_loss, rtol=1e-5)
    np.testing.assert_allclose(results["loss"], mean_loss, rtol=1e-5)
    assert SEEN == [("input_fn", _public(dict(params, batch_size=4))),
                    ("model_fn", "eval", _public(dict(params, batch_size=4, use_tpu=False)),
                     None)]
    assert HOST == [("eval", 7)] * (n // 4)   # the host_call runs on every eval step
    del SEEN[:], HOST[:]


# --- predict and export --------------------------------------------------------------

def test_predict_with_predict_batch_size(trained):
    est, _ = trained
    predictions = list(est.predict(input_fn_builder(6)))
    assert SEEN == [("input_fn", [("batch_size", 2), ("extra", 1)]),
                    ("model_fn", "infer",
                     [("batch_size", 2), ("extra", 1), ("use_tpu", False)], None)]
    assert HOST == []
    del SEEN[:]
    logits = numpy_logits(est.model_dir, IDS[:6])
    np.testing.assert_allclose([p["probs"] for p in predictions],
                               np.exp(log_softmax(logits)), rtol=1e-5)
    assert [p["pred"] for p in predictions] == list(logits.argmax(axis=1))
    batches = list(est.predict(input_fn_builder(6), yield_single_examples=False))
    assert [len(b["pred"]) for b in batches] == [2, 2, 2]
    del SEEN[:]


def serving_input_fn():
    ids = tf.placeholder(tf.int32, [None, SEQ], name="input_ids")
    return tf.estimator.export.ServingInputReceiver({"input_ids": ids}, {"input_ids": ids})


def test_export_saved_model_writes_the_cpu_metagraph(trained, tmp_path, caplog):
    est, _ = trained
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        path = est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    # TF 2.15 calls model_fn with use_tpu=False and no batch size for export, and (with
    # the default export_to_tpu=True) also writes a ["serve", "tpu"] metagraph of TPU ops;
    # tensorweave has no TPU ops, writes the CPU one only and says so
    assert SEEN == [("model_fn", "infer", [("extra", 1), ("use_tpu", False)], None)]
    del SEEN[:]
    assert "exports only the CPU metagraph" in caplog.text
    saved = saved_model_file.read(path)
    assert [list(m.meta_info_def.tags) for m in saved.meta_graphs] == [["serve"]]
    with tf.Session(graph=tf.Graph()) as session:
        meta_graph = tf.saved_model.loader.load(session, ["serve"], path)
        sig = meta_graph.signature_def["serving_default"]
        served = session.run({k: v.name for k, v in sig.outputs.items()},
                             {sig.inputs["input_ids"].name: IDS[:5]})
    np.testing.assert_allclose(served["probs"],
                               np.exp(log_softmax(numpy_logits(est.model_dir, IDS[:5]))),
                               rtol=1e-5)

    caplog.clear()
    quiet = estimator(est.model_dir, params={"extra": 1}, config=est.config,
                      export_to_tpu=False)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        quiet.export_saved_model(str(tmp_path / "export2"), serving_input_fn)
    assert "metagraph" not in caplog.text
    del SEEN[:]


@pytest.mark.parametrize("flags, message", [
    (dict(export_to_cpu=False, export_to_tpu=False),
     "One of export_to_cpu and export_to_tpu must be true."),   # TF 2.15's
    # TF fails building the TPU metagraph; tensorweave says why it cannot
    (dict(export_to_cpu=False), "TPUEstimator(export_to_cpu=False) exports only the TPU "
     "metagraph (tags ['serve', 'tpu']), which tensorweave cannot build: it has no TPU."),
])
def test_export_flags_errors(trained, tmp_path, flags, message):
    est, _ = trained
    est = estimator(est.model_dir, params={"extra": 1}, config=est.config, **flags)
    with pytest.raises(ValueError) as e:
        est.export_saved_model(str(tmp_path / "export"), serving_input_fn)
    assert str(e.value).startswith(message)
    assert not os.path.exists(str(tmp_path / "export"))


# --- warm start through scaffold_fn --------------------------------------------------

def test_scaffold_fn_init_from_checkpoint_warm_starts(trained, tmp_path):
    est, _ = trained
    warm = estimator(tmp_path, params={"init_ckpt": est.model_dir, "frozen": True})
    warm.train(input_fn_builder(8), steps=1)
    del SEEN[:], HOST[:]
    old, new = tf.train.load_checkpoint(est.model_dir), tf.train.load_checkpoint(str(tmp_path))
    assert new.get_tensor("global_step") == 1
    np.testing.assert_array_equal(new.get_tensor("emb"), old.get_tensor("emb"))
    # out/w was not warm-started: its own random initial value
    assert not np.allclose(new.get_tensor("out/w"), old.get_tensor("out/w"))


# --- batch sizes ---------------------------------------------------------------------

def test_batch_sizes_on_cpu(tmp_path):
    # TF 2.15: without a TPU no batch size is required nor checked against num_shards;
    # a None one is left out of params
    est = estimator(tmp_path, train_batch_size=7, eval_batch_size=None)
    est.train(input_fn_builder(7), steps=1)
    assert SEEN[0] == ("input_fn", [("batch_size", 7)])
    del SEEN[:]

    def input_fn(params):
        SEEN.append(("input_fn", _public(params)))
        return input_fn_builder(8)(dict(params, batch_size=4))
    est.evaluate(input_fn, steps=1)
    assert SEEN[0] == ("input_fn", [])
    assert SEEN[2] == ("model_fn", "eval", [("use_tpu", False)], None)
    del SEEN[:], HOST[:]


# --- errors --------------------------------------------------------------------------

def _linear_estimator(tmp_path, config=None, **kwargs):
    config = config or TPU.RunConfig(model_dir=str(tmp_path))
    return TPU.TPUEstimator(model_fn=_LinearModel.model_fn, config=config, **kwargs)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(config=tf.estimator.RunConfig()), ValueError,
     "`config` must be provided with type `tpu_config.RunConfig`"),
    (dict(config=None), ValueError,
     "`config` must be provided with type `tpu_config.RunConfig`"),
    (dict(params={"batch_size": 3}), ValueError,
     "['batch_size', 'context'] are reserved keys but existed in params "
     "{'batch_size': 3}."),
    (dict(params={"context": 3}), ValueError,
     "['batch_size', 'context'] are reserved keys but existed in params {'context': 3}."),
    (dict(use_tpu=True), ValueError, "`train_batch_size` cannot be `None`"),
    (dict(use_tpu=True, train_batch_size=0), ValueError,
     "train_batch_size must be positive, got 0"),
    (dict(use_tpu=True, train_batch_size=8.0), TypeError,
     "train_batch_size must be int, got <class 'float'>"),
    (dict(use_tpu=True, train_batch_size=8, eval_batch_size=-1), ValueError,
     "eval_batch_size must be positive, got -1"),
    (dict(use_tpu=False, export_saved_model_api_version=3), ValueError,
     "export_saved_model_api_version should be 1 or 2; got 3."),
])
def test_constructor_errors(tmp_path, kwargs, error, message):
    kwargs.setdefault("use_tpu", False)
    config = kwargs.pop("config", TPU.RunConfig(model_dir=str(tmp_path)))
    with pytest.raises(error) as e:
        TPU.TPUEstimator(model_fn=_LinearModel.model_fn, config=config, **kwargs)
    assert str(e.value) == message


def test_constructor_accepts_use_tpu_key_and_rejects_what_it_lacks(tmp_path):
    est = _linear_estimator(tmp_path, use_tpu=False, params={"use_tpu": 3})
    assert est.params == {"use_tpu": 3}   # TF does not reserve it
    with pytest.raises(TypeError):
        TPU.TPUEstimator(model_fn=None, config=TPU.RunConfig(), use_tpu=False)
    with pytest.raises(ValueError, match="no TPU embedding"):
        _linear_estimator(tmp_path, use_tpu=False, embedding_config_spec=object())
    assert not hasattr(TPU, "experimental")


@pytest.mark.parametrize("call", ["train", "evaluate", "predict"])
def test_use_tpu_true_without_tpu_names_the_missing_tpu(tmp_path, call):
    # TF 2.15 raises RuntimeError('Cannot find any TPU cores in the system. ...') when
    # the mode first needs the TPU; tensorweave raises the same class, saying why
    est = _linear_estimator(tmp_path, use_tpu=True, train_batch_size=8, eval_batch_size=8,
                            predict_batch_size=8)
    with pytest.raises(RuntimeError) as e:
        if call == "train":
            est.train(_LinearModel.input_fn, steps=1)
        elif call == "evaluate":
            est.evaluate(_LinearModel.input_fn, steps=1)
        else:
            list(est.predict(_LinearModel.input_fn))
    assert str(e.value).startswith("TPUEstimator(use_tpu=True) cannot %s: tensorweave has "
                                   "no TPU support" % call)
    assert "use_tpu=False" in str(e.value)


def test_use_tpu_true_evaluates_on_cpu_without_eval_on_tpu(tmp_path):
    # TF 2.15: evaluation runs on CPU, params without batch size (eval_batch_size None)
    est = _linear_estimator(tmp_path, use_tpu=True, train_batch_size=8, eval_on_tpu=False)

    def input_fn(params):
        assert "batch_size" not in params
        return _LinearModel.input_fn({"batch_size": 4})
    results = est.evaluate(input_fn, steps=1)
    assert results["global_step"] == 0 and np.isfinite(results["loss"])


def test_input_fn_and_model_fn_need_params(tmp_path):
    def input_fn():
        return {"x": tf.ones([2, 3])}
    with pytest.raises(ValueError) as e:
        _linear_estimator(tmp_path, use_tpu=False, train_batch_size=2).train(input_fn,
                                                                              steps=1)
    assert str(e.value) == ("input_fn (%s) does not include params argument, required by "
                            "TPUEstimator to pass batch size as params[\"batch_size\"]"
                            % input_fn)

    def no_params_model_fn(features, labels, mode):
        return _LinearModel.model_fn(features, labels, mode, {})
    est = TPU.TPUEstimator(model_fn=no_params_model_fn, use_tpu=False, train_batch_size=2,
                           config=TPU.RunConfig(model_dir=str(tmp_path / "m")))
    with pytest.raises(ValueError) as e:
        est.train(_LinearModel.input_fn, steps=1)
    assert str(e.value) == ("model_fn (%s) does not include params argument, required by "
                            "TPUEstimator to pass batch size as params['batch_size']"
                            % no_params_model_fn)


def test_sliced_input_cannot_evaluate_on_cpu(tmp_path):
    config = TPU.RunConfig(model_dir=str(tmp_path), tpu_config=TPU.TPUConfig(
        eval_training_input_configuration=TPU.InputPipelineConfig.SLICED))
    est = _linear_estimator(tmp_path, config=config, use_tpu=False, train_batch_size=2,
                            eval_batch_size=2)
    est.train(_LinearModel.input_fn, steps=1)   # TF 2.15: training is not affected
    with pytest.raises(ValueError) as e:
        est.evaluate(_LinearModel.input_fn, steps=1)
    assert str(e.value) == ("Invalid TPUConfig `eval_training_input_configuration` value. "
                            "SLICED mode only works on use_tpu = True.")


# --- TPUEstimatorSpec ----------------------------------------------------------------

def _two_args(a, b):
    return {}


@pytest.mark.parametrize("eval_metrics, error, message", [
    (_two_args, ValueError, "eval_metrics should be tuple or list"),
    ((_two_args,), ValueError, "eval_metrics should have two elements."),
    ((1, "tensors"), TypeError, "eval_metrics[0] should be callable."),
    ((_two_args, "tensor"), ValueError, "eval_metrics[1] should be tuple or list, or dict."),
    ((_two_args, ["one"]), RuntimeError, "In TPUEstimatorSpec.eval_metrics, length of "
     "tensors 1 does not match method args of the function, which takes 2."),
])
def test_spec_eval_metrics_errors(graph, eval_metrics, error, message):
    loss = tf.reduce_sum(tf.constant([1.0]))
    with pytest.raises(error) as e:
        TPU.TPUEstimatorSpec("eval", loss=loss, eval_metrics=eval_metrics)
    assert str(e.value) == message


def test_spec_validation_and_as_estimator_spec(graph):
    t = tf.constant([1.0, 3.0])
    loss = tf.reduce_sum(t)
    assert TPU.TPUEstimatorSpec._fields == (
        "mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs",
        "scaffold_fn", "host_call", "training_hooks", "evaluation_hooks",
        "prediction_hooks")
    assert not issubclass(TPU.TPUEstimatorSpec, tf.estimator.EstimatorSpec)  # as in TF
    with pytest.raises(RuntimeError, match="TPUEstimatorSpec.host_call, length of tensors"):
        TPU.TPUEstimatorSpec("train", loss=loss, train_op=loss.op,
                             host_call=(_two_args, [t]))
    with pytest.raises(ValueError, match="Missing loss."):
        TPU.TPUEstimatorSpec("train", train_op=loss.op)
    with pytest.raises(ValueError, match="Missing predictions."):
        TPU.TPUEstimatorSpec("infer")
    with pytest.raises(TypeError, match="All hooks must be SessionRunHook instances"):
        TPU.TPUEstimatorSpec("train", loss=loss, train_op=loss.op, training_hooks=[1])
    # varargs metric_fns take any number of tensors; a list is passed positionally
    calls = []
    spec = TPU.TPUEstimatorSpec(
        "eval", loss=loss, eval_metrics=(lambda *a: calls.append(a) or
                                         {"m": tf.metrics.mean(a[0])}, [t, loss]))
    estimator_spec = spec.as_estimator_spec()
    assert type(estimator_spec) is tf.estimator.EstimatorSpec
    assert calls == [(t, loss)] and sorted(estimator_spec.eval_metric_ops) == ["m"]
    assert estimator_spec.scaffold is not None and estimator_spec.training_hooks == ()
    with pytest.raises(TypeError, match="unexpected keyword argument 'zz'"):
        TPU.TPUEstimatorSpec("eval", loss=loss,
                             eval_metrics=(_two_args, {"zz": t})).as_estimator_spec()
    predict = TPU.TPUEstimatorSpec("infer", predictions={"a": t})
    assert sorted(predict.export_outputs) == ["serving_default"]
    scaffold = tf.train.Scaffold()
    host = TPU.TPUEstimatorSpec("train", loss=loss, train_op=loss.op,
                                scaffold_fn=lambda: scaffold,
                                host_call=(lambda x: [x * 2], {"x": t}))
    converted = host.as_estimator_spec()
    assert converted.scaffold is scaffold
    # the host_call hook is on every mode's hook list
    assert len(converted.training_hooks) == len(converted.evaluation_hooks) == \
        len(converted.prediction_hooks) == 1


# --- TPUConfig and RunConfig ---------------------------------------------------------

_IPL_ERROR = ("Invalid TPUConfig `iterations_per_loop` value. Value must be positive "
              "integer value or time-based value `<N><s|m|h>` where <N> is anypositive "
              "integer and `s`, `m`, `h` are unit of time in seconds, minutes, hours "
              "respectively. Examples of valid values: `3600s`, `60m`, `1h`.")


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(iterations_per_loop=0), ValueError, _IPL_ERROR),
    (dict(iterations_per_loop="2x"), ValueError, _IPL_ERROR),
    (dict(iterations_per_loop=2.0), ValueError, _IPL_ERROR),
    (dict(iterations_per_loop=-1), ValueError, _IPL_ERROR),
    (dict(num_shards=0), ValueError, "TPUConfig num_shards must be positive, got 0"),
    (dict(num_shards=1.5), TypeError, "TPUConfig num_shards must be int, got <class 'float'>"),
    (dict(num_cores_per_replica=3), ValueError,
     "num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got 3"),
    (dict(input_partition_dims=[[1, 2]], num_cores_per_replica=2), ValueError,
     "input_partition_dims is only supported in PER_HOST_V2 mode."),
    (dict(input_partition_dims=[[1, 2]], per_host_input_for_training=3), ValueError,
     "input_partition_dims requires setting num_cores_per_replica."),
    (dict(input_partition_dims=[1, 2, 3]), ValueError,
     "input_partition_dims must be a list/tuple with one or two elements."),
    (dict(eval_training_input_configuration=3), ValueError,
     "eval_training_input_configuration must be PER_HOST_V1 or SLICED; got 3"),
    (dict(initial_infeed_sleep_secs=-2), ValueError,
     "TPUConfig initial_infeed_sleep_secs must be positive, got -2"),
])
def test_tpu_config_errors(kwargs, error, message):
    with pytest.raises(error) as e:
        TPU.TPUConfig(**kwargs)
    assert str(e.value) == message


def test_tpu_config_values():
    assert [TPU.InputPipelineConfig.PER_SHARD_V1, TPU.InputPipelineConfig.PER_HOST_V1,
            TPU.InputPipelineConfig.PER_HOST_V2, TPU.InputPipelineConfig.BROADCAST,
            TPU.InputPipelineConfig.SLICED] == [1, 2, 3, 4, 5]
    assert TPU.TPUConfig() == (2, None, None, 2, None, None, None, 2, 1, False, None)
    assert TPU.TPUConfig(per_host_input_for_training=False).per_host_input_for_training == 1
    assert TPU.TPUConfig(iterations_per_loop="10s").iterations_per_loop == "10s"
    assert TPU.TPUConfig(initial_infeed_sleep_secs=0).initial_infeed_sleep_secs == 0


def test_tpu_run_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = TPU.RunConfig(master="grpc://x:1")
    assert (config.master, config.evaluation_master, config.cluster) == \
        ("grpc://x:1", "grpc://x:1", None)
    assert config.tpu_config == TPU.TPUConfig() and config.session_config is None
    assert isinstance(config, tf.estimator.RunConfig)
    assert TPU.RunConfig(master="m", evaluation_master="e").evaluation_master == "e"
    replaced = TPU.RunConfig(master="m").replace(tpu_config=TPU.TPUConfig(5),
                                                 save_checkpoints_steps=7)
    assert (replaced.tpu_config.iterations_per_loop, replaced.master,
            replaced.save_checkpoints_steps) == (5, "m", 7)
    with pytest.raises(ValueError, match="Replacing master is not supported."):
        TPU.RunConfig().replace(master="m")
    with pytest.raises(ValueError) as e:
        TPU.RunConfig(master="a", cluster=object())
    assert str(e.value) == "Both master and cluster are set."
    spec = tf.train.ClusterSpec({"worker": ["localhost:2222"]})
    resolved = TPU.RunConfig(cluster=tf.distribute.cluster_resolver.SimpleClusterResolver(
        spec, master="grpc://localhost:2222"))
    assert resolved.master == resolved.evaluation_master == "grpc://localhost:2222"
    assert resolved.cluster_spec.as_dict() == spec.as_dict()
    # TPU training is in-graph: no per-worker device filters from TF_CONFIG
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, '
                                    '"task": {"type": "worker", "index": 0}}')
    assert TPU.RunConfig().session_config is None
    assert tf.estimator.RunConfig().session_config.device_filters
