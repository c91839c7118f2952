"""Whole-model saving in Keras' HDF5 format (keras/saving_model_hdf5.py): `Model.save`,
`tf.keras.models.save_model` / `load_model`, checked against models TF 2.15's Keras
saved (tests/fixtures/tf1/keras_model, written by make_keras_model_fixture.py, which
builds the same models in both frameworks) and against the layout TF writes."""
import builtins
import importlib.util
import json
import logging
import os

import numpy as np
import pytest

import tensorweave as tf

h5py = pytest.importorskip("h5py")

K = tf.keras
L = tf.keras.layers
HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")
FIXTURE = os.path.join(HERE, "keras_model")


def _fixture_module():
    spec = importlib.util.spec_from_file_location(
        "make_keras_model_fixture", os.path.join(HERE, "make_keras_model_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


models = _fixture_module()


@pytest.fixture(scope="module")
def expected():
    return dict(np.load(os.path.join(FIXTURE, "expected.npz")))


def _one(values):
    return values if len(values) > 1 else values[0]


def _as_list(values):
    return values if isinstance(values, list) else [values]


def _trained(name):
    """The fixture's model `name`, built and trained here as the script does in TF."""
    model = models.build(tf, name)
    models.fixed_weights(model)
    for step in range(2):
        model.train_on_batch(*models.data(name, step))
    return model


def _text(value):
    return value.decode("utf8") if isinstance(value, bytes) else value


# --- TF wrote, tensorweave loads -------------------------------------------------------------
@pytest.mark.parametrize("name,optimizer,config,metrics_names", [
    ("functional", "Adam", {"learning_rate": 0.01, "beta_1": 0.8, "beta_2": 0.999,
                            "epsilon": 1e-7, "decay": 0.0, "amsgrad": False},
     ["loss", "o1_loss", "o2_loss", "o1_mean_absolute_error", "o2_acc", "o2_auc"]),
    ("rnn", "RMSprop", {"learning_rate": 0.005, "rho": 0.8, "momentum": 0.5,
                        "centered": False}, ["loss", "acc"]),
    ("custom", "SGD", {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True},
     ["loss", "mean_pred"]),
])
def test_tf_written_model_loads(keras_graph, expected, name, optimizer, config,
                                metrics_names):
    model = K.models.load_model(os.path.join(FIXTURE, name + ".h5"),
                                custom_objects=models.custom_objects(tf))
    x = _one(models._load(expected, name, "x"))
    for got, want in zip(_as_list(model.predict(x)), models._load(expected, name, "pred")):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert type(model.optimizer).__name__ == optimizer
    got_config = model.optimizer.get_config()
    for key, value in config.items():
        assert got_config[key] == pytest.approx(value), key
    assert model.metrics_names == metrics_names
    assert K.backend.get_value(model.optimizer.iterations) == 2
    for got, want in zip(model.optimizer.get_weights(), models._load(expected, name, "opt")):
        np.testing.assert_array_equal(got, want)
    if name in models.NEXT_STEP:
        model.train_on_batch(x, _one(models._load(expected, name, "y")))
        for got, want in zip(model.get_weights(), models._load(expected, name, "next")):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert K.backend.get_value(model.optimizer.iterations) == 3


def test_layout_is_tfs(keras_graph, tmp_path):
    """The same model trained here is written as TF wrote it: the same attributes (the
    configs' JSON byte for byte), groups, dataset names, shapes and dtypes."""
    path = str(tmp_path / "functional.h5")
    _trained("functional").save(path)

    def layout(f):
        entries = []
        f.visititems(lambda name, obj: entries.append(
            (name, getattr(obj, "shape", None), str(getattr(obj, "dtype", "")),
             sorted((k, str(np.asarray(v).tolist())) for k, v in obj.attrs.items()))))
        return entries

    with h5py.File(path, "r") as ours, \
            h5py.File(os.path.join(FIXTURE, "functional.h5"), "r") as tfs:
        assert dict(ours.attrs) == dict(tfs.attrs)
        assert layout(ours) == layout(tfs)
        for key in ours.attrs:
            assert ours.attrs.get_id(key).get_type().get_cset() == \
                tfs.attrs.get_id(key).get_type().get_cset(), key


def test_file_attributes(keras_graph, tmp_path):
    model = _trained("functional")
    path = str(tmp_path / "m.h5")
    model.save(path)
    with h5py.File(path, "r") as f:
        assert _text(f.attrs["keras_version"]) == "2.15.0"
        assert _text(f.attrs["backend"]) == "tensorflow"
        config = json.loads(f.attrs["model_config"])
        assert config["class_name"] == "Functional"
        assert config["config"]["name"] == "mm"
        assert [layer["name"] for layer in config["config"]["layers"]] == \
            ["a", "h", "bn", "b", "cat", "o1", "o2"]
        assert json.loads(f.attrs["training_config"]) == {
            "loss": ["mse", {"class_name": "BinaryCrossentropy", "config": {
                "reduction": "auto", "name": "binary_crossentropy", "from_logits": False,
                "label_smoothing": 0.0, "axis": -1, "fn": "binary_crossentropy"}}],
            "metrics": {"o1": ["mae"], "o2": ["accuracy", {"class_name": "AUC", "config": {
                "name": "o2_auc", "dtype": "float32", "num_thresholds": 200, "curve": "ROC",
                "summation_method": "interpolation", "multi_label": False,
                "num_labels": None, "label_weights": None, "from_logits": False}}]},
            "loss_weights": [1.0, 0.5], "sample_weight_mode": None,
            "weighted_metrics": None,
            "optimizer_config": {"class_name": "Adam", "config": {
                "name": "Adam", "learning_rate": 0.009999999776482582, "decay": 0.0,
                "beta_1": 0.800000011920929, "beta_2": 0.9990000128746033,
                "epsilon": 1e-07, "amsgrad": False}}}
        weights = f["model_weights"]
        assert [_text(n) for n in weights.attrs["layer_names"]] == \
            ["a", "h", "bn", "b", "cat", "o1", "o2"]
        assert [_text(n) for n in weights["bn"].attrs["weight_names"]] == \
            ["bn/gamma:0", "bn/beta:0", "bn/moving_mean:0", "bn/moving_variance:0"]
        np.testing.assert_array_equal(weights["h"]["h/kernel:0"][()],
                                      K.backend.get_value(model.get_layer("h").kernel))
        names = [_text(n) for n in f["optimizer_weights"].attrs["weight_names"]]
        slots = ["h/kernel", "h/bias", "bn/gamma", "bn/beta", "o1/kernel", "o1/bias",
                 "o2/kernel", "o2/bias"]
        assert names == ["training/Adam/iter:0"] + \
            ["training/Adam/%s/m:0" % s for s in slots] + \
            ["training/Adam/%s/v:0" % s for s in slots]
        assert f["optimizer_weights"]["training/Adam/iter:0"][()] == 2
        assert f["optimizer_weights"]["training/Adam/iter:0"].dtype == np.int64


# --- round trips here ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["functional", "rnn"])
def test_round_trip_continues_training(keras_graph, tmp_path, name):
    model = _trained(name)
    path = str(tmp_path / "model.h5")
    model.save(path)
    loaded = K.models.load_model(path)
    x, y = models.data(name, 10)
    for got, want in zip(_as_list(loaded.predict(x)), _as_list(model.predict(x))):
        np.testing.assert_array_equal(got, want)
    assert K.backend.get_value(loaded.optimizer.iterations) == 2
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    assert loaded.metrics_names == model.metrics_names
    model.train_on_batch(x, y)
    loaded.train_on_batch(x, y)
    for got, want in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(got, want)
    assert K.backend.get_value(loaded.optimizer.iterations) == 3


def test_custom_objects_and_their_errors(keras_graph, tmp_path):
    objects = models.custom_objects(tf)
    model = _trained("custom")
    path = str(tmp_path / "custom.h5")
    model.save(path)
    with pytest.raises(ValueError, match="Unknown layer: 'Scale'"):
        K.models.load_model(path)
    with pytest.raises(ValueError, match="Unknown loss function: 'scaled_mse'"):
        K.models.load_model(path, custom_objects={"Scale": objects["Scale"]})
    with pytest.raises(ValueError, match="Unknown metric function: 'mean_pred'"):
        K.models.load_model(path, custom_objects={"Scale": objects["Scale"],
                                                  "scaled_mse": objects["scaled_mse"]})
    uncompiled = K.models.load_model(path, custom_objects={"Scale": objects["Scale"]},
                                     compile=False)
    assert getattr(uncompiled, "optimizer", None) is None
    with K.utils.custom_object_scope(objects):
        loaded = K.models.load_model(path)
    x, _ = models.data("custom", 10)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert loaded.loss is objects["scaled_mse"]
    assert loaded.metrics_names == ["loss", "mean_pred"]
    for got, want in zip(loaded.optimizer.get_weights(), model.optimizer.get_weights()):
        np.testing.assert_array_equal(got, want)


def test_without_optimizer(keras_graph, tmp_path, caplog):
    model = _trained("functional")
    path = str(tmp_path / "m.h5")
    K.models.save_model(model, path, include_optimizer=False)
    with h5py.File(path, "r") as f:
        assert "training_config" not in f.attrs
        assert "optimizer_weights" not in f
    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        loaded = K.models.load_model(path)
    assert "No training configuration found in the save file" in caplog.text
    assert getattr(loaded, "optimizer", None) is None
    x, _ = models.data("functional", 10)
    for got, want in zip(loaded.predict(x), model.predict(x)):
        np.testing.assert_array_equal(got, want)
    uncompiled = K.Sequential([L.Dense(2, input_shape=(3,), name="d")])
    uncompiled.save(str(tmp_path / "u.h5"))
    with h5py.File(str(tmp_path / "u.h5"), "r") as f:
        assert sorted(f.attrs) == ["backend", "keras_version", "model_config"]
        assert list(f) == ["model_weights"]


def test_tf_optimizer_is_not_saved(keras_graph, tmp_path, caplog):
    model = K.Sequential([L.Dense(1, input_shape=(2,))])
    model.compile(tf.train.GradientDescentOptimizer(0.1), loss="mse")
    model.train_on_batch(np.ones((2, 2), np.float32), np.ones((2, 1), np.float32))
    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        model.save(str(tmp_path / "m.h5"))
    assert "TensorFlow optimizers do not make it possible" in caplog.text
    with h5py.File(str(tmp_path / "m.h5"), "r") as f:
        assert "training_config" not in f.attrs and "optimizer_weights" not in f


def test_h5py_files_and_default_format(keras_graph, tmp_path):
    model = _trained("rnn")
    x, _ = models.data("rnn", 10)
    with h5py.File(str(tmp_path / "open.h5"), "w") as f:
        model.save(f)
    with h5py.File(str(tmp_path / "open.h5"), "r") as f:
        loaded = K.models.load_model(f)
        assert f.id.valid  # left open
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    plain = str(tmp_path / "no_extension")
    model.save(plain)  # TF 1.x's default format is HDF5
    assert h5py.is_hdf5(plain)
    np.testing.assert_array_equal(K.models.load_model(plain).predict(x), model.predict(x))
    model.save(str(tmp_path / "m.h5"), save_format="tf")  # an HDF5 path wins
    assert h5py.is_hdf5(str(tmp_path / "m.h5"))
    model.save(str(tmp_path / "sub" / "dir" / "m.keras"))
    assert h5py.is_hdf5(str(tmp_path / "sub" / "dir" / "m.keras"))


def test_overwrite_false_asks(keras_graph, tmp_path, monkeypatch, capsys):
    model = K.Sequential([L.Dense(2, input_shape=(3,), name="d")])
    path = str(tmp_path / "m.h5")
    model.save(path)
    before = os.path.getmtime(path), os.path.getsize(path)
    model.compile("sgd", "mse")
    answers = iter(["maybe", "n"])
    prompts = []
    monkeypatch.setattr(builtins, "input", lambda prompt: prompts.append(prompt) or
                        next(answers))
    model.save(path, overwrite=False)
    assert prompts == ["[WARNING] %s already exists - overwrite? [y/n]" % path,
                       'Enter "y" (overwrite) or "n" (cancel).']
    assert (os.path.getmtime(path), os.path.getsize(path)) == before
    with h5py.File(path, "r") as f:
        assert "training_config" not in f.attrs
    monkeypatch.setattr(builtins, "input", lambda prompt: " Y ")
    model.save(path, overwrite=False)
    assert "[TIP] Next time specify overwrite=True!" in capsys.readouterr().out
    with h5py.File(path, "r") as f:
        assert "training_config" in f.attrs
    monkeypatch.setattr(builtins, "input", lambda prompt: pytest.fail("asked"))
    model.save(str(tmp_path / "new.h5"), overwrite=False)


def test_errors(keras_graph, tmp_path):
    model = K.Sequential([L.Dense(2, input_shape=(3,))])
    with pytest.raises(NotImplementedError, match="SavedModel"):
        model.save(str(tmp_path / "saved"), save_format="tf")
    with pytest.raises(NotImplementedError, match="SavedModel"):
        K.models.save_model(model, str(tmp_path / "saved"), save_format="tensorflow")
    with pytest.raises(ValueError, match="Unknown `save_format` argument"):
        model.save(str(tmp_path / "m.h5"), save_format="pickle")

    class Subclassed(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(1)

        def call(self, inputs):
            return self.dense(inputs)

    subclassed = Subclassed()
    subclassed(tf.placeholder(tf.float32, [None, 2]))
    with pytest.raises(NotImplementedError, match="requires the model to be a Functional "
                                                  "model or a Sequential model"):
        subclassed.save(str(tmp_path / "s.h5"))
    with pytest.raises(ValueError, match="have not yet been created|not yet been built"):
        K.Sequential([L.Dense(2)]).save(str(tmp_path / "unbuilt.h5"))
    with pytest.raises(OSError, match="No file or directory found at"):
        K.models.load_model(str(tmp_path / "missing.h5"))
    with pytest.raises(NotImplementedError, match="SavedModel"):
        K.models.load_model(str(tmp_path))
    with pytest.raises(OSError, match="Unable to load model"):
        K.models.load_model(42)
    model.save_weights(str(tmp_path / "weights.h5"))
    with pytest.raises(ValueError, match="No model config found in the file at"):
        K.models.load_model(str(tmp_path / "weights.h5"))
