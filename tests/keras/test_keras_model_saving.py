"""tf.keras model configs, JSON, clone_model, Lambda configs, custom objects, and
save_weights/load_weights in TF's checkpoint format (against a checkpoint and a JSON
config TF 2.15 wrote: tests/fixtures/tf1/keras_weights, make_keras_weights_fixture.py)
and in Keras' HDF5 layout (with h5py)."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1", "keras_weights")
_GLOROT = {"class_name": "GlorotUniform", "config": {"seed": None, "dtype": "float32"}}
_ZEROS = {"class_name": "Zeros", "config": {"dtype": "float32"}}


def dense_config(name, units, activation="linear", dtype="float32", **extra):
    config = {"name": name, "trainable": True}
    config.update(extra)
    config.update(dtype=dtype, units=units, activation=activation, use_bias=True,
                  kernel_initializer=_GLOROT, bias_initializer=_ZEROS,
                  kernel_regularizer=None, bias_regularizer=None,
                  activity_regularizer=None, kernel_constraint=None, bias_constraint=None)
    return {"class_name": "Dense", "config": config}


def input_config(name, shape):
    return {"class_name": "InputLayer", "config": {
        "batch_input_shape": (None,) + shape, "dtype": "float32", "sparse": False,
        "ragged": False, "name": name}}


def double(t):  # a Lambda function written by name
    return t * 2.0


def run(*tensors, feed_dict=None):
    return K.backend.get_session().run(list(tensors), feed_dict=feed_dict)


def set_random_weights(model, seed=0):
    rng = np.random.RandomState(seed)
    values = [rng.uniform(0.5, 1.5, w.shape).astype(w.dtype) for w in model.get_weights()]
    model.set_weights(values)
    return values


# --- functional configs --------------------------------------------------------------------
def test_functional_config_is_tf_format(keras_graph):
    a = K.Input((4,), name="a")
    b = K.Input((3,))
    c = L.Concatenate()([L.Dense(5, activation="relu")(a), b])
    shared = L.Dense(2)
    model = K.Model([a, b], [shared(c), shared(L.Dense(8)(b))], name="mm")
    config = model.get_config()
    entry = {layer["name"]: layer for layer in config["layers"]}
    assert [layer["name"] for layer in config["layers"]] == [
        "a", "dense", "input_1", "concatenate", "dense_2", "dense_1"]
    assert entry["a"] == dict(input_config("a", (4,)), name="a", inbound_nodes=[])
    assert entry["dense"] == dict(dense_config("dense", 5, "relu"), name="dense",
                                  inbound_nodes=[[["a", 0, 0, {}]]])
    assert entry["concatenate"]["inbound_nodes"] == [[["dense", 0, 0, {}],
                                                      ["input_1", 0, 0, {}]]]
    # the shared layer: one node per call inside the model
    assert entry["dense_1"]["inbound_nodes"] == [[["concatenate", 0, 0, {}]],
                                                 [["dense_2", 0, 0, {}]]]
    assert config["input_layers"] == [["a", 0, 0], ["input_1", 0, 0]]
    assert config["output_layers"] == [["dense_1", 0, 0], ["dense_1", 1, 0]]
    assert config["name"] == "mm" and config["trainable"] is True
    payload = json.loads(model.to_json())
    assert payload["class_name"] == "Functional" and payload["keras_version"] == "2.15.0"
    assert payload["backend"] == "tensorflow"
    assert payload["config"] == json.loads(json.dumps(config))


def test_functional_round_trip_rebuilds_the_graph(keras_graph):
    x = K.Input((4,))
    inner = K.Sequential([L.Dense(3, input_shape=(4,))], name="inner")
    y = L.Lambda(double)(inner(x))
    y = L.Dropout(0.5)(y, training=False)
    model = K.Model(x, y)
    config = model.get_config()
    entry = {layer["name"]: layer for layer in config["layers"]}
    # TF's Keras counts the calls of a nested Sequential from 1 (its own node is 0)
    assert entry["lambda"]["inbound_nodes"] == [[["inner", 1, 0, {}]]]
    assert entry["dropout"]["inbound_nodes"] == [[["lambda", 0, 0, {"training": False}]]]
    assert entry["lambda"]["config"]["function"] == "double"
    assert entry["lambda"]["config"]["function_type"] == "function"
    assert entry["lambda"]["config"]["module"] == __name__
    rebuilt = K.Model.from_config(config)
    assert rebuilt.get_config() == config
    assert rebuilt.layers[2].function is double
    assert all(a is not b for a, b in zip(rebuilt.weights, model.weights))
    values = set_random_weights(model)
    rebuilt.set_weights(values)
    feed = np.random.RandomState(1).randn(2, 4).astype(np.float32)
    out, again = run(model.output, rebuilt.output,
                     feed_dict={model.input: feed, rebuilt.input: feed})
    np.testing.assert_allclose(again, out, rtol=1e-6)
    np.testing.assert_allclose(out, (feed @ values[0] + values[1]) * 2, rtol=1e-5)


def test_nested_functional_model_shared_twice(keras_graph):
    inner_in = K.Input((3,))
    inner = K.Model(inner_in, L.Dense(2)(inner_in), name="innerf")
    x = K.Input((3,))
    model = K.Model(x, L.Add()([inner(x), inner(L.Dense(3)(x))]))
    config = model.get_config()
    add = [layer for layer in config["layers"] if layer["name"] == "add"][0]
    assert add["inbound_nodes"] == [[["innerf", 1, 0, {}], ["innerf", 2, 0, {}]]]
    rebuilt = K.models.model_from_json(model.to_json())
    assert json.loads(rebuilt.to_json()) == json.loads(model.to_json())
    assert len(rebuilt.get_layer("innerf")._inbound_nodes) == 2


def test_sequential_configs(keras_graph):
    model = K.Sequential([L.Dense(2, input_shape=(3,), name="sd"),
                          L.Activation("relu", name="sa")], name="sq")
    config = model.get_config()
    assert config == {"name": "sq", "layers": [
        input_config("sd_input", (3,)), dense_config("sd", 2, batch_input_shape=(None, 3)),
        {"class_name": "Activation", "config": {"name": "sa", "trainable": True,
                                                "dtype": "float32", "activation": "relu"}}]}
    rebuilt = K.Sequential.from_config(config)
    assert [layer.name for layer in rebuilt.layers] == ["sd", "sa"]
    assert rebuilt.get_config() == config and rebuilt.input_shape == (None, 3)
    built = K.Sequential([L.Dense(3), L.Dense(2)], name="later")
    built.build((None, 5))
    assert built.get_config()["build_input_shape"] == (None, 5)
    again = K.models.model_from_json(built.to_json())
    assert again.built and [w.shape.as_list() for w in again.weights] == \
        [[5, 3], [3], [3, 2], [2]]
    unbuilt = K.Sequential([L.Dense(3)])
    assert "build_input_shape" not in unbuilt.get_config()
    assert not K.Sequential.from_config(unbuilt.get_config()).built


def test_tf_written_json_loads(keras_graph):
    with open(os.path.join(FIXTURE, "model.json")) as f:
        text = f.read()
    model = K.models.model_from_json(text)
    assert type(model).__name__ == "Sequential" and model.name == "dense2"
    assert [layer.name for layer in model.layers] == ["hidden", "out"]
    assert json.loads(model.to_json()) == json.loads(text)
    expected = np.load(os.path.join(FIXTURE, "expected.npz"))
    model.set_weights([expected["w%d" % i] for i in range(4)])
    np.testing.assert_allclose(model.predict(expected["x"]), expected["y"], rtol=1e-5)


def test_model_from_config_and_layer_serialize(keras_graph):
    layer = L.Dense(2, name="zz")
    assert L.serialize(layer) == dense_config("zz", 2, dtype=None)  # not built: no dtype
    copy = L.deserialize(L.serialize(layer))
    assert type(copy).__name__ == "Dense" and copy is not layer and copy.units == 2
    model = K.models.model_from_config({"class_name": "Sequential", "config": {
        "name": "s", "layers": [dense_config("d", 4, batch_input_shape=(None, 2))]}})
    assert model.output_shape == (None, 4)
    with pytest.raises(TypeError, match="`model_from_config` expects a dictionary"):
        K.models.model_from_config([])
    with pytest.raises(ValueError, match="Unknown layer: 'Nope'"):
        L.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(RuntimeError, match="has been removed due to security risk"):
        model.to_yaml()


# --- Lambda layers and custom objects ------------------------------------------------------
def test_lambda_functions_by_name_only(keras_graph):
    config = L.Lambda(double, output_shape=(3,), arguments={}).get_config()
    assert config == {"name": "lambda", "trainable": True, "dtype": None,
                      "function": "double", "function_type": "function", "module": __name__,
                      "output_shape": (3,), "output_shape_type": "raw",
                      "output_shape_module": None, "arguments": {}}
    layer = L.Lambda.from_config(json.loads(json.dumps(config)))
    assert layer.function is double and layer._output_shape == (3,)
    with pytest.raises(NotImplementedError,
                       match="Cannot serialize the function .* Python bytecode"):
        L.Lambda(lambda t: t + 1).get_config()

    def nested(t):
        return t

    with pytest.raises(NotImplementedError, match="register_keras_serializable"):
        L.Lambda(nested).get_config()
    bytecode = dict(config, function=["4wEAAAAA", None, None], function_type="lambda")
    with pytest.raises(NotImplementedError, match="serialized as Python bytecode"):
        L.Lambda.from_config(bytecode)
    with pytest.raises(ValueError, match="Unknown function of a Lambda layer: 'missing'"):
        L.Lambda.from_config(dict(config, function="missing"))


def test_custom_objects(keras_graph):
    class Scale(L.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, inputs):
            return inputs * self.factor

        def get_config(self):
            config = super().get_config()
            config["factor"] = self.factor
            return config

    def halve(t):
        return t / 2.0

    x = K.Input((2,))
    model = K.Model(x, Scale(3.0)(x))
    text = model.to_json()
    with pytest.raises(ValueError, match="Unknown layer: 'Scale'"):
        K.models.model_from_json(text)
    rebuilt = K.models.model_from_json(text, custom_objects={"Scale": Scale})
    assert rebuilt.layers[1].factor == 3.0
    with K.utils.custom_object_scope({"Scale": Scale}):
        assert K.models.model_from_json(text).layers[1].factor == 3.0
    registered = K.utils.register_keras_serializable("tests")(halve)
    try:
        config = L.Lambda(registered).get_config()
        assert config["function"] == "tests>halve"
        assert L.Lambda.from_config(config).function is halve
        assert K.utils.get_registered_name(halve) == "tests>halve"
    finally:
        K.utils.get_custom_objects().pop("tests>halve")


# --- clone_model ---------------------------------------------------------------------------
def test_clone_functional_model(keras_graph):
    x = K.Input((3,), name="x")
    h = L.Dense(4, activation="relu")(x)
    model = K.Model(x, [L.Dense(2)(h), h], name="two")
    clone = K.models.clone_model(model)
    assert clone.name == "two" and clone.get_config() == model.get_config()
    assert not set(map(id, clone.weights)) & set(map(id, model.weights))
    values = set_random_weights(model)
    clone.set_weights(values)
    feed = np.ones((1, 3), np.float32)
    a, b = run(model.outputs[0], clone.outputs[0],
               feed_dict={model.input: feed, clone.input: feed})
    np.testing.assert_allclose(a, b, rtol=1e-6)
    new_input = K.Input((3,))
    on_input = K.models.clone_model(model, input_tensors=new_input)
    assert on_input.input is new_input
    shared = K.models.clone_model(model, clone_function=lambda layer: layer)
    assert set(map(id, shared.weights)) == set(map(id, model.weights))

    class Sub(K.Model):
        def call(self, inputs):
            return inputs

    with pytest.raises(ValueError, match="got a subclassed model instead"):
        K.models.clone_model(Sub())


def test_clone_sequential_model(keras_graph):
    model = K.Sequential([L.Dense(3, input_shape=(2,)), L.Dense(1)], name="seq")
    clone = K.models.clone_model(model)
    assert type(clone).__name__ == "Sequential" and clone.name == "seq"
    assert clone.get_config()["layers"][1:] == model.get_config()["layers"][1:]
    assert not set(map(id, clone.weights)) & set(map(id, model.weights))
    placeholder = tf.placeholder(tf.float32, (None, 2))
    on_tensor = K.models.clone_model(model, input_tensors=placeholder)
    set_random_weights(model)
    on_tensor.set_weights(model.get_weights())
    feed = np.arange(4, dtype=np.float32).reshape(2, 2)
    a, b = run(model.output, on_tensor.output,
               feed_dict={model.input: feed, placeholder: feed})
    np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match="we expect at most one tensor"):
        K.models.clone_model(model, input_tensors=[placeholder, placeholder])


# --- save_weights / load_weights: TF checkpoints -------------------------------------------
def fixture_model():
    return K.Sequential([L.Dense(3, activation="relu", input_shape=(4,), name="hidden"),
                         L.Dense(2, name="out")], name="dense2")


def test_load_weights_tf_wrote(keras_graph):
    model = fixture_model()
    status = model.load_weights(os.path.join(FIXTURE, "dense2"))
    assert status.assert_consumed() is status and status.expect_partial() is status
    expected = np.load(os.path.join(FIXTURE, "expected.npz"))
    for got, i in zip(model.get_weights(), range(4)):
        np.testing.assert_array_equal(got, expected["w%d" % i])
    np.testing.assert_allclose(model.predict(expected["x"]), expected["y"], rtol=1e-5)


def test_save_weights_writes_what_tf_writes(keras_graph, tmp_path):
    from tensorboard.compat.proto import trackable_object_graph_pb2
    model = fixture_model()
    expected = np.load(os.path.join(FIXTURE, "expected.npz"))
    model.set_weights([expected["w%d" % i] for i in range(4)])
    prefix = str(tmp_path / "dense2")
    model.save_weights(prefix)
    ours, theirs = tf.train.load_checkpoint(prefix), \
        tf.train.load_checkpoint(os.path.join(FIXTURE, "dense2"))
    assert tf.train.list_variables(prefix) == \
        tf.train.list_variables(os.path.join(FIXTURE, "dense2"))
    assert "layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE" in \
        ours.get_variable_to_shape_map()
    for name in theirs.get_variable_to_shape_map():
        if name == "_CHECKPOINTABLE_OBJECT_GRAPH":
            graphs = []
            for reader in (ours, theirs):
                graph = trackable_object_graph_pb2.TrackableObjectGraph()
                graph.ParseFromString(reader.get_tensor(name))
                graphs.append(graph)
            assert graphs[0] == graphs[1]
        else:
            np.testing.assert_array_equal(ours.get_tensor(name), theirs.get_tensor(name))
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == prefix
    with open(tmp_path / "checkpoint") as f:
        assert 'model_checkpoint_path: "dense2"' in f.read()  # relative, as TF writes it



def test_save_weights_makes_the_prefix_directories(keras_graph, tmp_path):
    # as TF 2.15's Keras (its checkpoint writer makes them): checked there by hand
    model = fixture_model()
    prefix = str(tmp_path / "run" / "ckpt" / "w")
    model.save_weights(prefix)
    assert tf.train.get_checkpoint_state(str(tmp_path / "run" / "ckpt")) \
        .model_checkpoint_path == prefix
    again = fixture_model()
    again.load_weights(prefix).assert_consumed()
    for a, b in zip(again.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)

def test_round_trips_of_functional_and_subclassed_models(keras_graph, tmp_path):
    x = K.Input((4,))
    inner = K.Sequential([L.Dense(3, input_shape=(4,)), L.BatchNormalization()],
                         name="inner")
    functional = K.Model(x, L.Dense(2)(inner(L.Dense(4)(x))))

    class Sub(K.Model):
        def __init__(self):
            super().__init__()
            self.a = L.Dense(3)
            self.blocks = [L.Dense(2), L.Dense(2)]

        def call(self, inputs):
            return self.blocks[1](self.blocks[0](self.a(inputs)))

    subclassed = Sub()
    subclassed(tf.ones((2, 4)))
    keys = {}
    for name, model in (("functional", functional), ("subclassed", subclassed)):
        values = set_random_weights(model, seed=len(name))
        prefix = str(tmp_path / name)
        model.save_weights(prefix)
        keys[name] = sorted(n for n, _ in tf.train.list_variables(prefix))
        model.set_weights([np.zeros_like(v) for v in values])
        model.load_weights(prefix)
        for got, want in zip(model.get_weights(), values):
            np.testing.assert_array_equal(got, want)
    assert "layer_with_weights-1/layer_with_weights-1/moving_variance/.ATTRIBUTES/" \
        "VARIABLE_VALUE" in keys["functional"]
    assert keys["subclassed"] == ["_CHECKPOINTABLE_OBJECT_GRAPH"] + [
        "%s/%s/.ATTRIBUTES/VARIABLE_VALUE" % (path, weight)
        for path in ("a", "blocks/0", "blocks/1") for weight in ("bias", "kernel")]

    class Part(K.Model):  # holds `a` only, plus a layer the checkpoint does not have
        def __init__(self):
            super().__init__()
            self.a = L.Dense(3)
            self.extra = L.Dense(1)

        def call(self, inputs):
            return self.extra(self.a(inputs))

    part = Part()
    part(tf.ones((2, 4)))
    status = part.load_weights(str(tmp_path / "subclassed"))
    np.testing.assert_array_equal(part.a.get_weights()[0], subclassed.a.get_weights()[0])
    with pytest.raises(AssertionError, match="Unused attributes in the checkpoint: "
                                             r"\['blocks/0/bias"):
        status.assert_consumed()
    with pytest.raises(AssertionError, match="extra/kernel"):
        status.assert_existing_objects_matched()


def test_weight_loading_errors(keras_graph, tmp_path):
    model = fixture_model()
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        model.load_weights(str(tmp_path / "missing"))
    with pytest.raises(NotImplementedError, match="by_name=True"):
        model.load_weights(os.path.join(FIXTURE, "dense2"), by_name=True)
    with pytest.raises(ValueError, match="skip_mismatch can only be set to True when "
                                         "by_name is True"):
        model.load_weights(os.path.join(FIXTURE, "dense2"), skip_mismatch=True)
    with pytest.raises(ValueError, match='looks like an HDF5 file'):
        model.save_weights(str(tmp_path / "w.h5"), save_format="tf")
    with pytest.raises(ValueError, match="Unknown format"):
        model.save_weights(str(tmp_path / "w"), save_format="pickle")
    wider = K.Sequential([L.Dense(5, input_shape=(4,)), L.Dense(2)])
    with pytest.raises(ValueError, match="Received incompatible tensor with shape"):
        wider.load_weights(os.path.join(FIXTURE, "dense2"))
    other = K.Sequential([L.Flatten(input_shape=(2, 2))])
    with pytest.raises(AssertionError, match="Nothing except the root object matched"):
        other.load_weights(os.path.join(FIXTURE, "dense2"))
    with pytest.raises(NotImplementedError, match="model.to_json"):
        model.save(str(tmp_path / "model"), save_format="tf")
    with pytest.raises(NotImplementedError, match="SavedModel"):
        K.models.load_model(str(tmp_path))
    unbuilt = K.Sequential([L.Dense(2)])
    with pytest.raises(ValueError):
        unbuilt.save_weights(str(tmp_path / "unbuilt"))


# --- save_weights / load_weights: Keras HDF5 -----------------------------------------------
def test_hdf5_weights(keras_graph, tmp_path):
    h5py = pytest.importorskip("h5py")
    model = fixture_model()
    values = set_random_weights(model)
    path = str(tmp_path / "w.h5")
    model.save_weights(path)
    def text(values):
        return [v.decode() if isinstance(v, bytes) else v for v in values]

    with h5py.File(path, "r") as f:
        assert text(f.attrs["layer_names"]) == ["hidden", "out"]
        assert text([f.attrs["keras_version"]]) == ["2.15.0"]
        assert text(f["out"].attrs["weight_names"]) == ["out/kernel:0", "out/bias:0"]
        np.testing.assert_array_equal(f["out"]["out/kernel:0"][()], values[2])
        assert "top_level_model_weights" in f
    model.set_weights([np.zeros_like(v) for v in values])
    model.load_weights(path)
    for got, want in zip(model.get_weights(), values):
        np.testing.assert_array_equal(got, want)
    renamed = K.Sequential([L.Dense(3, input_shape=(4,), name="other"),
                            L.Dense(2, name="out")])
    renamed.load_weights(path, by_name=True)
    np.testing.assert_array_equal(renamed.layers[1].get_weights()[0], values[2])
    assert not np.array_equal(renamed.layers[0].get_weights()[1], values[1])
    three = K.Sequential([L.Dense(3, input_shape=(4,)), L.Dense(2), L.Dense(1)])
    with pytest.raises(ValueError, match="Layer count mismatch"):
        three.load_weights(path)
    mismatched = K.Sequential([L.Dense(5, input_shape=(4,), name="hidden"),
                               L.Dense(2, name="out")])
    # TF 2.15 numbers the layer by its place in the file
    with pytest.raises(ValueError, match=r"Shape mismatch in layer #0 \(named hidden\) for "
                                         r"weight hidden_\d+/kernel:0\. Weight expects shape "
                                         r"\(4, 5\)\. Received saved weight with shape \(4, 3\)"):
        mismatched.load_weights(path, by_name=True)
    mismatched.load_weights(path, by_name=True, skip_mismatch=True)
    np.testing.assert_array_equal(mismatched.layers[1].get_weights()[1], values[3])
    no_bias = K.Sequential([L.Dense(3, input_shape=(4,), name="hidden"),
                            L.Dense(2, name="out", use_bias=False)])
    with pytest.raises(ValueError, match=r"^Weight count mismatch for layer #1 \(named out\)\. "
                                         r"Layer expects 1 weight\(s\)\. Received 2 saved "
                                         r"weight\(s\)$"):
        no_bias.load_weights(path, by_name=True)


def test_hdf5_without_h5py_names_the_extra(keras_graph, tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_h5py(name, *args, **kwargs):
        if name == "h5py":
            raise ImportError("No module named 'h5py'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_h5py)
    with pytest.raises(ImportError, match=r"tensorweave\[keras-h5\]"):
        fixture_model().save_weights(str(tmp_path / "w.h5"))


# --- the optimizer's state in TF-format checkpoints ----------------------------------------
ADAM_FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1",
                            "keras_weights_adam")


def _adam_resumed(prefix, load_before_compile):
    model = fixture_model()
    if load_before_compile:
        model.load_weights(prefix)
    model.compile(K.optimizers.Adam(0.05), "mse")
    if not load_before_compile:
        model.load_weights(prefix)
    return model


@pytest.mark.parametrize("load_before_compile", [False, True])
def test_tf_written_optimizer_state_resumes_training(keras_graph, load_before_compile):
    # TF 2.15 restores iter, lr and the Adam slots (deferred until the train function
    # makes them); expected.npz holds what TF computed after the same two epochs
    expected = np.load(os.path.join(ADAM_FIXTURE, "expected.npz"))
    model = _adam_resumed(os.path.join(ADAM_FIXTURE, "dense2_adam"), load_before_compile)
    history = model.fit(expected["x"], expected["y"], batch_size=4, epochs=2,
                        shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], expected["losses"], rtol=1e-5)
    for i, got in enumerate(model.get_weights()):
        np.testing.assert_allclose(got, expected["w%d" % i], rtol=1e-5, atol=1e-6)
    assert K.backend.get_value(model.optimizer.iterations) == expected["iterations"]
    assert K.backend.get_value(model.optimizer.lr) == pytest.approx(float(expected["lr"]))


def test_optimizer_state_is_written_as_tf_writes_it(keras_graph, tmp_path):
    from tensorboard.compat.proto import trackable_object_graph_pb2
    expected = np.load(os.path.join(ADAM_FIXTURE, "expected.npz"))
    model = fixture_model()
    model.set_weights([np.load(os.path.join(FIXTURE, "expected.npz"))["w%d" % i]
                       for i in range(4)])
    model.compile(K.optimizers.Adam(0.05), "mse")
    model.fit(expected["x"], expected["y"], batch_size=4, epochs=1, shuffle=False,
              verbose=0)
    K.backend.set_value(model.optimizer.lr, 0.02)
    prefix = str(tmp_path / "dense2_adam")
    model.save_weights(prefix)
    theirs_prefix = os.path.join(ADAM_FIXTURE, "dense2_adam")
    assert tf.train.list_variables(prefix) == tf.train.list_variables(theirs_prefix)
    assert "layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/" \
        "VARIABLE_VALUE" in dict(tf.train.list_variables(prefix))
    ours, theirs = tf.train.load_checkpoint(prefix), tf.train.load_checkpoint(theirs_prefix)
    graphs = []
    for reader in (ours, theirs):
        graph = trackable_object_graph_pb2.TrackableObjectGraph()
        graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
        graphs.append(graph)
    assert graphs[0] == graphs[1]
    for name, _ in tf.train.list_variables(theirs_prefix):
        if name != "_CHECKPOINTABLE_OBJECT_GRAPH":
            np.testing.assert_allclose(ours.get_tensor(name), theirs.get_tensor(name),
                                       rtol=1e-5, atol=1e-7)
