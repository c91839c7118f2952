"""tf.estimator.export: serving receivers, ExportOutputs and the signature helpers of
Estimator.export_saved_model. Expected messages, names and signature maps are what
TensorFlow 2.15 (tensorflow-estimator 2.15, tf.compat.v1 graph mode) gave for the same
calls."""
import logging
import os
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator import export as export_lib

E = tf.estimator.export

CLASSIFY_SINGLE_STRING = (
    "{} signatures can only accept a single tensor input of type tf.string. Please check "
    "to make sure that you have structured the serving_input_receiver_fn so that it "
    "creates a single string placeholder. If your model function expects multiple "
    "inputs, then use `tf.io.parse_example()` to parse the string into multiple "
    "tensors.\n Received: ")


@pytest.fixture
def tensors(graph):
    return dict(s=tf.placeholder(tf.string, [None], name="ex"),
                f=tf.placeholder(tf.float32, [None, 3], name="f"),
                i=tf.placeholder(tf.int64, [None], name="i"),
                sp=tf.sparse_placeholder(tf.float32, name="sp"))


def _signature_map(sig_map):
    """key -> (inputs by name, outputs by name, method), to compare with TF's."""
    return {k: ({n: i.name for n, i in v.inputs.items()},
                {n: i.name for n, i in v.outputs.items()}, v.method_name)
            for k, v in sig_map.items()}


# --- receivers ------------------------------------------------------------------------------
def test_a_single_feature_and_receiver_tensor_are_wrapped_in_dicts(tensors):
    r = E.ServingInputReceiver(tensors["f"], tensors["s"])
    assert r.features == {"feature": tensors["f"]}
    assert r.receiver_tensors == {"input": tensors["s"]}
    assert r.receiver_tensors_alternatives is None
    assert isinstance(r, tuple) and r._fields == (
        "features", "receiver_tensors", "receiver_tensors_alternatives")
    # int feature keys and SparseTensor features are allowed
    r = E.ServingInputReceiver({1: tensors["f"], "sp": tensors["sp"]}, {"x": tensors["s"]})
    assert r.features[1] is tensors["f"] and r.features["sp"] is tensors["sp"]


def test_receiver_alternatives_are_wrapped_in_place(tensors):
    alternatives = {"alt": tensors["f"]}
    r = E.ServingInputReceiver(tensors["f"], tensors["s"], alternatives)
    assert r.receiver_tensors_alternatives == {"alt": {"input": tensors["f"]}}
    assert alternatives == {"alt": {"input": tensors["f"]}}  # TF rewrites the dict too


@pytest.mark.parametrize("features, receivers, alternatives, message", [
    (None, "s", None, "features must be defined."),
    ("f", None, None, "receiver_tensors must be defined."),
    ({1.5: "f"}, "s", None, "feature keys must be strings or ints: 1.5."),
    ({"a": "f"}, {1: "s"}, None, "receiver_tensor keys must be strings: 1."),
    ({"a": 3}, "s", None, "feature a must be a Tensor, SparseTensor, or RaggedTensor."),
    ({"a": "f"}, {"b": "x"}, None,
     "receiver_tensor b must be a Tensor, SparseTensor, or RaggedTensor."),
    (np.ones(3), "s", None, "feature feature must be a Tensor, SparseTensor, or "
     "RaggedTensor."),
    ("f", "s", {"alt": 3}, "receiver_tensors_alternative input must be a Tensor, "
     "SparseTensor, or RaggedTensor."),
    ("f", "s", {"alt": {1: "f"}}, "receiver_tensors_alternative keys must be strings: 1."),
])
def test_receiver_errors_are_tfs(tensors, features, receivers, alternatives, message):
    def resolve(v):
        if isinstance(v, str) and v in tensors:
            return tensors[v]
        if isinstance(v, dict):
            return {k: resolve(x) for k, x in v.items()}
        return v
    with pytest.raises(ValueError) as e:
        E.ServingInputReceiver(resolve(features), resolve(receivers), resolve(alternatives))
    assert str(e.value) == message


def test_alternatives_must_be_a_dict(tensors):
    with pytest.raises(ValueError, match="^receiver_tensors_alternatives must be a dict: "):
        E.ServingInputReceiver(tensors["f"], tensors["s"], tensors["f"])


def test_a_variable_is_not_a_feature(tensors):
    v = tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="^feature feature must be a Tensor, SparseTensor"):
        E.ServingInputReceiver(v, tensors["s"])


def test_tensor_serving_input_receiver_keeps_the_feature_as_is(tensors):
    r = E.TensorServingInputReceiver(tensors["f"], tensors["s"])
    assert r.features is tensors["f"] and r.receiver_tensors == {"input": tensors["s"]}
    r = E.TensorServingInputReceiver(tensors["sp"], {"x": tensors["s"]})
    assert r.features is tensors["sp"]
    with pytest.raises(ValueError, match="^features must be defined.$"):
        E.TensorServingInputReceiver(None, tensors["s"])
    for bad in ({"a": tensors["f"]}, 3):
        with pytest.raises(ValueError) as e:
            E.TensorServingInputReceiver(bad, tensors["s"])
        assert str(e.value) == "feature must be a Tensor, SparseTensor, or RaggedTensor."


def test_parsing_receiver_parses_fed_examples(graph):
    fn = E.build_parsing_serving_input_receiver_fn(
        {"x": tf.FixedLenFeature([2], tf.float32), "v": tf.VarLenFeature(tf.int64)},
        default_batch_size=2)
    r = fn()
    serialized = r.receiver_tensors["examples"]
    assert list(r.receiver_tensors) == ["examples"]
    assert serialized.name == "input_example_tensor:0"  # as TF names it
    assert serialized.shape.as_list() == [2] and serialized.dtype == tf.string
    assert r.features["x"].shape.as_list() == [2, 2]
    assert isinstance(r.features["v"], tf.SparseTensor)

    def example(x, v):
        return tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
            "v": tf.train.Feature(int64_list=tf.train.Int64List(value=v))}
        )).SerializeToString()
    with tf.Session() as sess:
        x, v = sess.run([r.features["x"], r.features["v"]],
                        {serialized: [example([1, 2], [7]), example([3, 4], [8, 9])]})
    np.testing.assert_array_equal(x, [[1, 2], [3, 4]])
    assert v.indices.tolist() == [[0, 0], [1, 0], [1, 1]] and v.values.tolist() == [7, 8, 9]


def test_raw_receiver_makes_placeholders_like_the_given_tensors(graph):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    z = tf.zeros([4, 2, 3], tf.int32, name="zz")
    fn = E.build_raw_serving_input_receiver_fn({"a": x, "b": z}, default_batch_size=5)
    r = fn()
    assert r.features == r.receiver_tensors
    # TF 2.15: 'x_1:0' (5, 2) float32 and 'zz_1:0' (5, 2, 3) int32
    assert r.features["a"].name == "x_1:0" and r.features["a"].shape.as_list() == [5, 2]
    assert r.features["b"].name == "zz_1:0" and r.features["b"].shape.as_list() == [5, 2, 3]
    assert r.features["b"].dtype == tf.int32 and r.features["a"].op.type == "Placeholder"
    r = E.build_raw_serving_input_receiver_fn({"a": x})()
    assert r.features["a"].shape.as_list() == [None, 2]


# --- export outputs -------------------------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda t: E.ClassificationOutput(), "Cannot create a ClassificationOutput with empty "
     "arguments. At least one of `scores` and `classes` must be defined."),
    (lambda t: E.ClassificationOutput(scores=3.0),
     "Classification scores must be a float32 Tensor; got 3.0"),
    (lambda t: E.RegressionOutput(None), "Regression output value must be a float32 "
     "Tensor; got None"),
    (lambda t: E.PredictOutput(None), "Prediction output value must be a Tensor; got None."),
    (lambda t: E.PredictOutput({1: t["f"]}), "Prediction output key must be a string; got 1."),
    (lambda t: E.PredictOutput({"a": 3}), "Prediction output value must be a Tensor; got 3."),
])
def test_export_output_errors_are_tfs(tensors, make, message):
    with pytest.raises(ValueError) as e:
        make(tensors)
    assert str(e.value) == message


def test_export_output_dtype_checks(tensors):
    with pytest.raises(ValueError, match="^Classification scores must be a float32 Tensor; "
                       "got Tensor\\(\"i:0\""):
        E.ClassificationOutput(scores=tensors["i"])
    with pytest.raises(ValueError, match="^Classification classes must be a string Tensor"):
        E.ClassificationOutput(classes=tensors["f"])
    with pytest.raises(ValueError, match="^Regression output value must be a float32"):
        E.RegressionOutput(tensors["i"])
    with pytest.raises(ValueError, match="^Prediction output value must be a Tensor; got "
                       "SparseTensor"):
        E.PredictOutput({"x": tensors["sp"]})
    with pytest.raises(TypeError):
        E.ExportOutput()  # abstract (TF's is only by convention)


def test_predict_output_keys(tensors):
    assert E.PredictOutput(tensors["f"]).outputs == {"output": tensors["f"]}
    assert E.PredictOutput({("a", "b"): tensors["f"]}).outputs == {"a/b": tensors["f"]}


def test_classify_and_regress_need_one_string_input(tensors):
    s, f = tensors["s"], tensors["f"]
    for output, kind in ((E.ClassificationOutput(scores=f), "Classification"),
                         (E.RegressionOutput(f), "Regression")):
        for receivers in ({"a": f}, {"a": s, "b": s}):
            with pytest.raises(ValueError) as e:
                output.as_signature_def(receivers)
            assert str(e.value) == CLASSIFY_SINGLE_STRING.format(kind) + str(receivers)
    sig = E.ClassificationOutput(scores=f, classes=tf.as_string(tensors["i"])) \
        .as_signature_def({"x": s})
    assert _signature_map({"k": sig})["k"] == (
        {"inputs": "ex:0"}, {"scores": "f:0", "classes": "AsString:0"},
        "tensorflow/serving/classify")


def test_get_export_outputs(tensors):
    f = tensors["f"]
    out = export_lib.get_export_outputs(None, f)
    assert list(out) == ["serving_default"] and out["serving_default"].outputs == {
        "output": f}
    predict = E.PredictOutput(f)
    assert export_lib.get_export_outputs({"a": predict}, f) == {
        "a": predict, "serving_default": predict}
    assert export_lib.get_export_outputs({}, f) == {}
    with pytest.raises(TypeError, match=r"^`export_outputs` must be dict, received: \[1\].$"):
        export_lib.get_export_outputs([1], f)
    with pytest.raises(TypeError) as e:
        export_lib.get_export_outputs({"a": 1}, f)
    assert str(e.value) == ("Values in `export_outputs` must be ExportOutput objects, "
                            "received: {'a': 1}.")
    with pytest.raises(ValueError) as e:
        export_lib.get_export_outputs({"a": predict, "b": E.PredictOutput(f)}, f)
    assert str(e.value) == (
        "Multiple `export_outputs` were provided, but none of them are specified as the "
        "default. Use`tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY` to specify a "
        "default.")


# --- build_all_signature_defs ---------------------------------------------------------------
def _model(graph):
    s = tf.placeholder(tf.string, [None], name="ex")
    x = tf.parse_example(s, {"x": tf.FixedLenFeature([2], tf.float32)})["x"]
    score = tf.identity(x * 2., name="score")
    cls = tf.as_string(tf.argmax(x, 1), name="cls")
    other = tf.placeholder(tf.float32, [None], name="other")
    dep = tf.add(x[:, 0], other, name="dep")
    reg = tf.identity(x[:, 0], name="reg")
    outputs = {"serving_default": E.PredictOutput({"s": score}),
               "cl": E.ClassificationOutput(scores=score, classes=cls),
               "reg": E.RegressionOutput(reg), "bad": E.PredictOutput({"d": dep})}
    return s, x, outputs


def test_signatures_for_every_output_and_receiver(graph, caplog):
    s, x, outputs = _model(graph)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        sigs = export_lib.build_all_signature_defs(
            {"examples": s}, outputs, receiver_tensors_alternatives={"raw": {"x": x},
                                                                     "single": x})
    # TF 2.15 (names of the parse op aside): classify and regress only for the string
    # input; 'bad' needs the unfed placeholder 'other'
    assert _signature_map(sigs) == {
        "serving_default": ({"examples": "ex:0"}, {"s": "score:0"},
                            "tensorflow/serving/predict"),
        "cl": ({"inputs": "ex:0"}, {"classes": "cls:0", "scores": "score:0"},
               "tensorflow/serving/classify"),
        "reg": ({"inputs": "ex:0"}, {"outputs": "reg:0"}, "tensorflow/serving/regress"),
        "raw:serving_default": ({"x": x.name}, {"s": "score:0"},
                                "tensorflow/serving/predict"),
        "single:serving_default": ({"input": x.name}, {"s": "score:0"},
                                   "tensorflow/serving/predict")}
    log = caplog.text
    assert "Signatures INCLUDED in export for Predict: ['serving_default', " \
        "'raw:serving_default', 'single:serving_default']" in log
    assert "Signatures INCLUDED in export for Train: None" in log
    assert ("'bad' : The signature's input tensors ['ex:0'] are insufficient to compute "
            "its output keys ['d'] (respectively, tensors ['dep:0']) because of the "
            "dependency on `other` which is not given as a signature input, as illustrated "
            "by the following dependency path: dep (AddV2) <- other (Placeholder)") in log
    assert "'raw:cl' : " + CLASSIFY_SINGLE_STRING.format("Classification") in log


def test_a_single_receiver_tensor_is_named_input(graph):
    s, _, outputs = _model(graph)
    sigs = export_lib.build_all_signature_defs(s, outputs, serving_only=False)
    assert _signature_map(sigs)["serving_default"][0] == {"input": "ex:0"}
    assert sorted(sigs) == ["cl", "reg", "serving_default"]


def test_signature_map_needs_a_dict_of_outputs(graph):
    s, _, _ = _model(graph)
    for bad, kind in ((None, "NoneType"), ([1], "list")):
        with pytest.raises(ValueError) as e:
            export_lib.build_all_signature_defs(s, bad)
        assert str(e.value) == "`export_outputs` must be a dict. Received {} with type {}." \
            .format(bad, kind)


def test_export_directories(tmp_path):
    base = str(tmp_path)
    stamped = export_lib.get_timestamped_export_dir(base)
    assert isinstance(stamped, bytes)
    assert abs(int(os.path.basename(stamped)) - time.time()) < 5
    assert os.path.dirname(stamped) == base.encode()
    assert export_lib.get_temp_export_dir(stamped) == os.path.join(
        base.encode(), b"temp-" + os.path.basename(stamped))
    assert export_lib.get_temp_export_dir(stamped.decode()) == \
        export_lib.get_temp_export_dir(stamped)
    os.makedirs(stamped)
    # an existing directory: the next second is tried (TF waits 1 s between tries)
    again = export_lib.get_timestamped_export_dir(base.encode())
    assert int(os.path.basename(again)) > int(os.path.basename(stamped))


def test_saved_model_with_these_signatures_loads_and_serves(tmp_path):
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default() as g:
        receiver = E.build_parsing_serving_input_receiver_fn(
            {"x": tf.FixedLenFeature([2], tf.float32)})()
        w = tf.Variable([[1.0], [-2.0]], name="w")
        score = tf.matmul(receiver.features["x"], w)
        outputs = export_lib.get_export_outputs(
            {"serving_default": E.PredictOutput({"y": score}),
             "regress": E.RegressionOutput(tf.reshape(score, [-1]))}, None)
        sigs = export_lib.build_all_signature_defs(
            receiver.receiver_tensors, outputs, receiver.receiver_tensors_alternatives)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            builder.add_meta_graph_and_variables(sess, [tf.saved_model.SERVING],
                                                 signature_def_map=sigs)
            builder.save()
    example = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[3.0, 0.5]))}))
    with tf.Session(graph=tf.Graph()) as sess:
        mg = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], export_dir)
        assert sorted(mg.signature_def) == ["regress", "serving_default"]
        predict = mg.signature_def["serving_default"]
        assert predict.method_name == tf.saved_model.PREDICT_METHOD_NAME
        y = sess.run(predict.outputs["y"].name,
                     {predict.inputs["examples"].name: [example.SerializeToString()]})
        regress = mg.signature_def["regress"]
        value = sess.run(regress.outputs["outputs"].name,
                         {regress.inputs["inputs"].name: [example.SerializeToString()]})
    np.testing.assert_allclose(y, [[2.0]])  # 3 * 1 + 0.5 * -2
    np.testing.assert_allclose(value, [2.0])


# --- build_raw_supervised_input_receiver_fn (tf.estimator.experimental) -------------------
def test_raw_supervised_receiver_of_dicts_and_tensors(graph):
    features = {"a": tf.placeholder(tf.float32, [5, 3], name="feat_a"),
                "b": tf.constant([[1, 2]], tf.int64, name="bconst")}
    labels = tf.placeholder(tf.int32, [5], name="lab")
    receiver = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        features, labels, default_batch_size=7)()
    assert type(receiver) is export_lib.SupervisedInputReceiver
    assert sorted(receiver.features) == ["a", "b"]
    # placeholders named after the ops, batch dimension replaced (as TF names them)
    assert sorted((k, v.name, v.shape.as_list(), v.dtype) for k, v in
                  receiver.receiver_tensors.items()) == [
        ("a", "feat_a_1:0", [7, 3], tf.float32), ("b", "bconst_1:0", [7, 2], tf.int64),
        ("label", "lab_1:0", [7], tf.int32)]
    assert receiver.features["a"] is receiver.receiver_tensors["a"]
    assert receiver.labels is receiver.receiver_tensors["label"]
    assert {v.op.type for v in receiver.receiver_tensors.values()} == {"Placeholder"}
    with tf.Session() as sess:
        np.testing.assert_array_equal(
            sess.run(receiver.labels, {receiver.labels: np.arange(7)}), np.arange(7))

    receiver = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        tf.ones([2, 4], name="onef"), {"y1": labels, "y2": labels})()
    assert receiver.features.name == "onef_1:0"
    assert receiver.features.shape.as_list() == [None, 4]
    assert sorted(receiver.labels) == ["y1", "y2"]
    assert sorted((k, v.name) for k, v in receiver.receiver_tensors.items()) == [
        ("input", "onef_1:0"), ("y1", "lab_2:0"), ("y2", "lab_3:0")]


@pytest.mark.parametrize("features, labels, overlap", [
    ({"label": "L"}, "L", "{'label'}"),
    ({"x": "L", "y": "L"}, {"y": "L", "z": "L"}, "{'y'}"),
    ("L", {"input": "L"}, "{'input'}"),
])
def test_raw_supervised_receiver_overlapping_keys(graph, features, labels, overlap):
    tensor = tf.placeholder(tf.int32, [5])

    def sub(x):
        return {k: tensor for k in x} if isinstance(x, dict) else tensor
    with pytest.raises(ValueError) as info:
        tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
            sub(features), sub(labels))
    assert str(info.value) == ("Features and labels must have distinct keys. Found "
                               "overlapping keys: " + overlap)


def test_supervised_input_receiver_checks(graph):
    x = tf.placeholder(tf.float32, [None])
    receiver = export_lib.SupervisedInputReceiver({1: x}, x, x)
    assert receiver.labels is x and receiver.receiver_tensors == {"input": x}
    with pytest.raises(ValueError, match="^labels must be defined.$"):
        export_lib.SupervisedInputReceiver(x, None, x)
    with pytest.raises(ValueError, match="^label y must be a Tensor, SparseTensor"):
        export_lib.SupervisedInputReceiver(x, {"y": 3}, x)
    with pytest.raises(ValueError, match="^receiver_tensor keys must be strings: 1.$"):
        export_lib.SupervisedInputReceiver(x, x, {1: x})


# --- EvalOutput -----------------------------------------------------------------------------
def test_eval_output_prefixes_keys_and_splits_metrics(graph):
    """TF 2.15: keys get their group's prefix unless they already start with it, and a
    metric becomes '<key>/value' and '<key>/update_op' outputs of one eval signature."""
    x = tf.placeholder(tf.float32, [None], name="x")
    c = tf.constant(1.0)
    out = E.EvalOutput(loss={"loss": tf.reduce_sum(x), "other": c, "lossy": c},
                       predictions={"p": x * 2, "predictionsX": c},
                       metrics={"mean": tf.metrics.mean(x), ("a", "b"): (c, c)})
    assert isinstance(out, E.ExportOutput)
    assert sorted(out.loss) == ["loss", "loss/other", "lossy"]
    assert sorted(out.predictions) == ["predictions/p", "predictionsX"]
    assert sorted(out.metrics) == ["metrics/a/b/update_op", "metrics/a/b/value",
                                   "metrics/mean/update_op", "metrics/mean/value"]
    assert out.metrics["metrics/mean/update_op"].name == "mean/update_op:0"
    sig = out.as_signature_def({"x": x})
    assert sig.method_name == "tensorflow/supervised/eval"
    assert {k: v.name for k, v in sig.inputs.items()} == {"x": "x:0"}
    assert sorted(sig.outputs) == sorted(list(out.loss) + list(out.predictions)
                                         + list(out.metrics))


def test_eval_output_single_values_and_op_wrapper(graph):
    """A bare tensor is keyed by its group's name; an update Operation is exported as an
    empty float32 constant that runs it."""
    x = tf.placeholder(tf.float32, [None], name="x")
    v = tf.Variable(0.0)
    out = E.EvalOutput(predictions=x, metrics=(tf.reduce_mean(x), v.assign_add(1.0).op))
    assert out.loss is None
    assert sorted(out.predictions) == ["predictions"]
    wrapper = out.metrics["metrics/update_op"]
    assert wrapper.op.name == "metric_op_wrapper" and wrapper.dtype == tf.float32
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(wrapper).shape == (0,)
        assert sess.run(v) == 1.0
    assert E.EvalOutput().metrics is None


@pytest.mark.parametrize("build, message", [
    (lambda: E.EvalOutput(loss=3.0), "loss output value must be a Tensor; got 3.0."),
    (lambda: E.EvalOutput(predictions={1: tf.constant(1.0)}),
     "predictions output key must be a string; got 1."),
    (lambda: E.EvalOutput(metrics={"m": (1.0, tf.no_op())}),
     "metrics/m output value must be a Tensor; got 1.0."),
    (lambda: E.EvalOutput(metrics={"m": (tf.constant(1.0), 3)}),
     "metrics/m update_op must be a Tensor or Operation; got 3."),
    (lambda: E.EvalOutput(metrics={3: (tf.constant(1.0), tf.no_op())}),
     "metrics output key must be a string; got 3."),
    (lambda: E.EvalOutput(loss=tf.constant(1.0)).as_signature_def({}),
     "tensorflow/supervised/eval `inputs` cannot be None or empty."),
])
def test_eval_output_errors(graph, build, message):
    with pytest.raises(ValueError) as err:
        build()
    assert str(err.value) == message


def test_eval_output_is_not_a_serving_signature(graph, tmp_path):
    """Estimator.export_saved_model keeps only servable signatures: the eval one goes."""
    def model_fn(features, labels, mode):
        y = features["x"] * tf.get_variable("w", [], initializer=tf.ones_initializer())
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=y, export_outputs={
                "serving_default": E.PredictOutput(y), "ev": E.EvalOutput(loss=y)})
        return tf.estimator.EstimatorSpec(
            mode, loss=tf.reduce_mean(y),
            train_op=tf.assign_add(tf.train.get_global_step(), 1))
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(lambda: ({"x": tf.constant([1.0])}, tf.constant([1.0])), steps=1)
    export_dir = est.export_saved_model(str(tmp_path / "export"),
                                        E.build_raw_serving_input_receiver_fn(
                                            {"x": tf.placeholder(tf.float32, [None])}))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sorted(meta.signature_def) == ["serving_default"]


# --- TRAIN and EVAL exports -------------------------------------------------------------------
def _supervised_estimator(tmp_path):
    """w = 1.5 after one SGD step of 0 learning rate; the model_fn also makes its train op
    and metric in EVAL (as many model_fns do)."""
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [1, 1], initializer=tf.constant_initializer(1.5))
        pred = tf.matmul(features["x"], w)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"p": pred})
        loss = tf.reduce_mean(tf.square(pred - labels))
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, predictions={"p": pred},
            train_op=tf.train.GradientDescentOptimizer(0.0).minimize(
                loss, tf.train.get_global_step()),
            eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, pred)})
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(lambda: ({"x": tf.constant([[1.0]])}, tf.constant([[1.0]])), steps=1)
    return est


def _receiver_fns():
    supervised = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 1])}, tf.placeholder(tf.float32, [None, 1]))
    serving = E.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 1])})
    return supervised, serving


def _load(export_dir, tags, signature_key=None):
    """(tags, {signature key: (method, inputs, outputs)}, collection keys, outputs run)."""
    x = np.array([[1.0], [2.0], [3.0]], np.float32)
    y = np.array([[2.0], [4.0], [5.0]], np.float32)
    with tf.Graph().as_default() as g, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, tags, export_dir)
        signatures = {k: (v.method_name, sorted(v.inputs), sorted(v.outputs))
                      for k, v in meta.signature_def.items()}
        values = None
        if signature_key:
            sig = meta.signature_def[signature_key]
            feed = {g.get_tensor_by_name(sig.inputs[k].name): x if k == "x" else y
                    for k in sig.inputs}
            values = sess.run({k: g.get_tensor_by_name(v.name)
                               for k, v in sig.outputs.items()
                               if not k.endswith("update_op")}, feed)
        collections = sorted(k for k in meta.collection_def if k.startswith("saved_model"))
        return list(meta.meta_info_def.tags), signatures, collections, values


def test_export_all_saved_models_writes_a_meta_graph_per_mode(tmp_path):
    """As TF 2.15: one variables/ for all; 'train' and 'eval' signatures of the loss,
    predictions and metrics; the train op in its collection."""
    est = _supervised_estimator(tmp_path)
    supervised, serving = _receiver_fns()
    M = tf.estimator.ModeKeys
    export_dir = est.experimental_export_all_saved_models(
        str(tmp_path / "export"), {M.TRAIN: supervised, M.EVAL: supervised,
                                   M.PREDICT: serving})
    assert sorted(os.listdir(export_dir)) == [b"saved_model.pb", b"variables"]
    supervised_outputs = ["loss", "metrics/mae/update_op", "metrics/mae/value",
                          "predictions/p"]
    tags, signatures, collections, values = _load(export_dir, ["train"], "train")
    assert tags == ["train"]
    assert signatures == {"train": ("tensorflow/supervised/training", ["label", "x"],
                                    supervised_outputs)}
    assert collections == ["saved_model_main_op", "saved_model_train_op"]
    pred = 1.5 * np.array([[1.0], [2.0], [3.0]])
    np.testing.assert_allclose(values["predictions/p"], pred)
    np.testing.assert_allclose(values["loss"], np.mean((pred - [[2], [4], [5]]) ** 2),
                               rtol=1e-6)
    tags, signatures, _, values = _load(export_dir, ["eval"], "eval")
    assert signatures == {"eval": ("tensorflow/supervised/eval", ["label", "x"],
                                   supervised_outputs)}
    assert values["metrics/mae/value"] == 0.0  # no update run yet
    tags, signatures, collections, values = _load(export_dir, ["serve"], "serving_default")
    assert signatures == {"serving_default": ("tensorflow/serving/predict", ["x"], ["p"])}
    assert collections == ["saved_model_main_op"]
    np.testing.assert_allclose(values["p"], pred)


def test_export_saved_model_of_one_mode_and_errors(tmp_path):
    est = _supervised_estimator(tmp_path)
    supervised, serving = _receiver_fns()
    export_dir = est.export_saved_model(str(tmp_path / "e"), supervised,
                                        experimental_mode=tf.estimator.ModeKeys.EVAL)
    assert _load(export_dir, ["eval"])[0] == ["eval"]
    for receivers, keys in [({}, "[]"), ({tf.estimator.ModeKeys.TRAIN: None}, "['train']")]:
        with pytest.raises(ValueError) as e:
            est.experimental_export_all_saved_models(str(tmp_path / "e"), receivers)
        assert str(e.value) == "No valid modes for exporting found. Got dict_keys(%s)." % keys
    with pytest.raises(ValueError) as e:
        est.export_saved_model(str(tmp_path / "e"), serving, experimental_mode="foo")
    assert str(e.value) == "No valid modes for exporting found. Got dict_keys(['foo'])."
