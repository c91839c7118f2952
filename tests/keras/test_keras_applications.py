"""tf.keras.applications (keras/applications/) and tf.keras.utils.get_file
(keras/data_utils.py), checked against TF 2.15's Keras: the layer and weight names,
shapes and order, the predictions with the same weights and the 'imagenet' files Keras
asks for are fixtures TF wrote (tests/fixtures/tf1/keras_applications, written by
make_keras_applications_fixture.py); preprocessing against values computed by hand;
downloads from a local HTTP server and file:// URLs."""
import contextlib
import gzip
import hashlib
import http.server
import importlib.util
import io
import json
import os
import shutil
import tarfile
import threading
import types
import zipfile

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.keras.applications import (densenet, imagenet_utils, inception_v3,
                                            mobilenet, resnet, vgg, xception)

K = tf.keras
A = tf.keras.applications
HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")
FIXTURE = os.path.join(HERE, "keras_applications")


def _fixture_module():
    spec = importlib.util.spec_from_file_location(
        "make_keras_applications_fixture",
        os.path.join(HERE, "make_keras_applications_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fx = _fixture_module()


@pytest.fixture(scope="module")
def names():
    with gzip.open(os.path.join(FIXTURE, "names.json.gz"), "rt") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def expected():
    return dict(np.load(os.path.join(FIXTURE, "expected.npz")))


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh home directory: ~/.keras is created there."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("KERAS_HOME", raising=False)
    return path


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving tmp_path/www; `requests` lists the paths
    asked for."""
    root = tmp_path / "www"
    root.mkdir()
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield types.SimpleNamespace(root=root, requests=requests,
                                    url="http://127.0.0.1:%d/" % httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _assert_close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


# --- the architectures ----------------------------------------------------------------------
@pytest.mark.parametrize("key", [k for k in fx.CONFIGS if k not in fx.FULL])
def test_layers_and_weights_as_tf(keras_graph, names, key):
    """Model name, layer names and classes, weight names and shapes in Keras' order."""
    assert fx.describe(fx.build(tf, key)) == names[key]


@pytest.mark.parametrize("key", [k for k in fx.FULL if k != "mobilenet_tiny"])
def test_predictions_as_tf(keras_graph, names, expected, key):
    """With the same weights (in model.weights order) the same outputs as TF's."""
    model = fx.build(tf, key)
    assert fx.describe(model) == names[key]
    model.set_weights(fx.weight_values(model))
    _assert_close(model.predict(fx.images(fx.CONFIGS[key][2])), expected[key])


def test_loads_weights_tf_saved(keras_graph, names, expected, tmp_path):
    """A weights file TF's save_weights wrote loads by topology (`weights=path`)."""
    pytest.importorskip("h5py")
    path = str(tmp_path / "mobilenet_tiny.h5")
    with gzip.open(os.path.join(FIXTURE, "mobilenet_tiny.h5.gz"), "rb") as src, \
            open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    _, kwargs, shape = fx.CONFIGS["mobilenet_tiny"]
    model = A.mobilenet.MobileNet(weights=path, **kwargs)
    assert fx.describe(model) == names["mobilenet_tiny"]
    for got, want in zip(model.get_weights(), fx.weight_values(model)):
        np.testing.assert_array_equal(got, want)
    _assert_close(model.predict(fx.images(shape)), expected["mobilenet_tiny"])


@pytest.mark.parametrize("called", [False, True])
def test_frozen_base_transfer_learning_as_tf(keras_graph, expected, called):
    """base.trainable = False under a new head: the same losses over three epochs and
    the same predictions as TF (batch statistics in training, as TF1's Keras); the
    base's weights stay as they were."""
    model, base = fx.transfer(tf, called)
    assert len(model.trainable_weights) == 2
    x, y = fx.transfer_data()
    xp = A.mobilenet.preprocess_input(x.copy())
    history = model.fit(xp, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    prefix = "transfer_%s_" % ("called" if called else "functional")
    np.testing.assert_allclose(history.history["loss"], expected[prefix + "loss"], rtol=1e-4)
    np.testing.assert_allclose(model.predict(xp), expected[prefix + "pred"], rtol=1e-4,
                               atol=1e-5)
    for got, want in zip(base.get_weights(), fx.weight_values(base, 3)):
        np.testing.assert_array_equal(got, want)


def test_namespaces(names):
    for namespace, public in names["namespaces"].items():
        module = getattr(A, namespace)
        missing = [n for n in public if not hasattr(module, n)]
        assert not missing, (namespace, missing)
    assert A.resnet50.ResNet50 is A.resnet.ResNet50 is A.ResNet50
    assert A.resnet50.preprocess_input is A.resnet.preprocess_input
    assert A.vgg16.decode_predictions is A.imagenet_utils.decode_predictions
    from tensorweave.keras.applications.vgg16 import VGG16
    assert VGG16 is A.VGG16
    with pytest.raises(AttributeError, match="EfficientNetB0 is not provided"):
        A.EfficientNetB0
    with pytest.raises(AttributeError, match="nasnet is not provided"):
        A.nasnet
    assert not hasattr(A, "NoSuchModel")


def test_input_tensor(keras_graph):
    """A Keras tensor is used as it is (the model starts at its sources); a plain
    tensor becomes the model's input."""
    placeholder = tf.placeholder(tf.float32, (None, 32, 32, 3))
    model = A.VGG16(weights=None, include_top=False, input_tensor=placeholder)
    assert model.inputs[0] is placeholder
    inputs = K.Input((40, 40, 3))
    cropped = K.layers.Cropping2D(4)(inputs)
    model = A.MobileNetV2(weights=None, include_top=False, alpha=0.35,
                          input_tensor=cropped, pooling="avg")
    assert model.inputs == [inputs] and model.name == "mobilenetv2_0.35_None"  # as TF
    assert model.layers[1].name == "cropping2d"
    x = np.random.RandomState(0).uniform(0, 255, (2, 40, 40, 3)).astype("float32")
    assert model.predict(x).shape == (2, 1280)


def test_preprocess_then_call_as_layer(keras_graph):
    """Keras' docstring example: preprocess_input on an Input, the model called on it."""
    inputs = K.Input((32, 32, 3))
    core = A.MobileNet(weights=None, include_top=False, alpha=0.25,
                       input_shape=(32, 32, 3), pooling="max")
    model = K.Model(inputs, core(A.mobilenet.preprocess_input(inputs)))
    x = np.random.RandomState(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    _assert_close(model.predict(x), core.predict(x / 127.5 - 1.0))


# --- 'imagenet' weights: the files Keras asks for ----------------------------------------
_DENSENET_BLOCKS = {"DenseNet121": (6, 12, 24, 16), "DenseNet169": (6, 12, 32, 32),
                    "DenseNet201": (6, 12, 48, 32)}


def _weights_file(fn: str, include_top: bool):
    if fn.startswith("VGG"):
        return vgg.weights_file(fn.lower(), include_top)
    if fn.startswith("ResNet"):
        return resnet.weights_file(fn.lower(), include_top)
    if fn.startswith("DenseNet"):
        return densenet.weights_file(_DENSENET_BLOCKS[fn], include_top)
    return {"InceptionV3": inception_v3, "Xception": xception}[fn].weights_file(include_top)


class _Stop(Exception):
    pass


@contextlib.contextmanager
def _recording_get_file(monkeypatch):
    calls = []

    def recorder(fname=None, origin=None, **kwargs):
        calls.append([fname, origin, kwargs.get("cache_subdir"), kwargs.get("file_hash")])
        raise _Stop()

    monkeypatch.setattr(imagenet_utils, "get_file", recorder)
    yield calls


def test_imagenet_files_as_keras(monkeypatch):
    """File names, URLs, cache subdirectory and hashes of every model's 'imagenet'
    weights (and of the class index), as Keras' get_file calls recorded."""
    with open(os.path.join(FIXTURE, "files.json")) as f:
        files = json.load(f)
    with _recording_get_file(monkeypatch) as calls:
        for fn, kwargs, call in files:
            if fn == "decode_predictions":
                monkeypatch.setattr(imagenet_utils, "CLASS_INDEX", None)
                with pytest.raises(_Stop):
                    A.imagenet_utils.decode_predictions(np.zeros((1, 1000)))
                assert calls[-1] == call
            elif fn.startswith("MobileNet"):
                if "input_shape" in kwargs:
                    kwargs["input_shape"] = tuple(kwargs["input_shape"])
                with tf.Graph().as_default(), pytest.raises(_Stop):
                    getattr(A, fn)(weights="imagenet", **kwargs)
                assert calls[-1] == call, (fn, kwargs)
            else:
                file_name, url, file_hash = _weights_file(fn, kwargs["include_top"])
                assert [file_name, url, "models", file_hash] == call, (fn, kwargs)


def test_imagenet_weights_download_and_cache(keras_graph, server, home, monkeypatch):
    """weights='imagenet' fetches Keras' file name into ~/.keras/models once and loads it."""
    pytest.importorskip("h5py")
    kwargs = dict(alpha=0.25, include_top=False, input_shape=(128, 128, 3))
    source = A.MobileNet(weights=None, **kwargs)
    values = fx.weight_values(source, 7)
    source.set_weights(values)
    file_name = "mobilenet_2_5_128_tf_no_top.h5"
    source.save_weights(str(server.root / file_name))
    monkeypatch.setattr(mobilenet, "BASE_WEIGHT_PATH", server.url)
    for _ in range(2):
        model = A.MobileNet(weights="imagenet", **kwargs)
        for got, want in zip(model.get_weights(), values):
            np.testing.assert_array_equal(got, want)
    assert server.requests == ["/" + file_name]
    assert (home / ".keras" / "models" / file_name).is_file()


def test_imagenet_weights_hash_checked(keras_graph, server, home, monkeypatch):
    """A downloaded weights file is checked against Keras' md5 before loading."""
    (server.root / "vgg16").mkdir()
    (server.root / "vgg16" / "vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5"
     ).write_bytes(b"not the weights")
    monkeypatch.setattr(vgg, "_BASE", server.url)
    with pytest.raises(ValueError, match="6d6bbae143d832006294945121d1f1fc"):
        A.VGG16(weights="imagenet", include_top=False)


def test_decode_predictions(server, home, monkeypatch):
    index = {str(i): ["n%08d" % i, "class_%d" % i] for i in range(1000)}
    data = json.dumps(index).encode()
    (server.root / "index.json").write_bytes(data)
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX", None)
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX_PATH", server.url + "index.json")
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX_HASH", hashlib.md5(data).hexdigest())
    preds = np.zeros((2, 1000), "float32")
    preds[0, [3, 500, 999]] = [0.2, 0.5, 0.3]
    preds[1, [0, 1]] = [0.9, 0.1]
    got = A.resnet50.decode_predictions(preds, top=3)
    assert [r[:2] for r in got[0]] == [("n00000500", "class_500"), ("n00000999", "class_999"),
                                       ("n00000003", "class_3")]
    assert [r[2] for r in got[0]] == pytest.approx([0.5, 0.3, 0.2])
    assert [r[0] for r in got[1][:2]] == ["n00000000", "n00000001"]
    assert len(A.vgg16.decode_predictions(preds)[1]) == 5
    assert server.requests == ["/index.json"]
    assert (home / ".keras" / "models" / "imagenet_class_index.json").read_bytes() == data
    with pytest.raises(ValueError, match=r"Found array with shape: \(2, 999\)"):
        A.imagenet_utils.decode_predictions(np.zeros((2, 999)))
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX", None)
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX_HASH", "0" * 32)
    with pytest.raises(ValueError, match="Incomplete or corrupted file"):
        A.imagenet_utils.decode_predictions(preds)


# --- argument checks ----------------------------------------------------------------------
def _shape(input_shape, **kwargs):
    args = dict(default_size=224, min_size=32, data_format="channels_last",
                require_flatten=False, weights=None)
    args.update(kwargs)
    return imagenet_utils.obtain_input_shape(input_shape, **args)


def test_obtain_input_shape():
    assert _shape(None) == (None, None, 3)
    assert _shape(None, require_flatten=True) == (224, 224, 3)
    assert _shape(None, data_format="channels_first") == (3, None, None)
    assert _shape(None, require_flatten=True, weights="imagenet") == (224, 224, 3)
    assert _shape((64, 48, 3), weights="imagenet") == (64, 48, 3)
    assert _shape((3, 64, 48), data_format="channels_first") == (3, 64, 48)
    assert _shape((64, None, 1)) == (64, None, 1)
    with pytest.warns(UserWarning, match="with 4 input channels"):
        assert _shape((64, 64, 4)) == (64, 64, 4)
    with pytest.raises(ValueError, match=r"`input_shape` should be \(224, 224, 3\)"):
        _shape((200, 200, 3), require_flatten=True, weights="imagenet")
    with pytest.raises(ValueError, match="must be a tuple of three integers"):
        _shape((64, 64))
    with pytest.raises(ValueError, match="The input must have 3 channels"):
        _shape((64, 64, 1), weights="imagenet")
    with pytest.raises(ValueError, match="Input size must be at least 32x32"):
        _shape((31, 64, 3))
    with pytest.raises(ValueError, match="Input size must be at least 75x75"):
        _shape((3, 80, 74), min_size=75, data_format="channels_first")
    with pytest.raises(ValueError, match="you should specify a static `input_shape`"):
        _shape((None, None, 3), require_flatten=True)


@pytest.mark.parametrize("fn,kwargs,message", [
    ("VGG16", dict(weights="/no/such/file.h5"), "The `weights` argument should be"),
    ("VGG19", dict(classes=10), "`classes` should be 1000"),
    ("ResNet50", dict(weights=None, foo=1), "Unknown argument"),
    ("MobileNet", dict(depth_multiplier=2), "depth multiplier must be 1"),
    ("MobileNet", dict(alpha=0.3), "alpha can be one of"),
    ("MobileNetV2", dict(alpha=0.2), "alpha must be one of"),
    ("InceptionV3", dict(weights=None, include_top=False, input_shape=(74, 80, 3)),
     "at least 75x75"),
    ("Xception", dict(weights=None, include_top=False, input_shape=(71, 70, 3)),
     "at least 71x71"),
    ("DenseNet121", dict(input_shape=(224, 224, 1), include_top=False),
     "must have 3 channels"),
    ("VGG16", dict(classifier_activation="relu", include_top=True, input_shape=None),
     "Only `None` and `softmax` activations"),
])
def test_argument_errors(keras_graph, monkeypatch, fn, kwargs, message):
    with _recording_get_file(monkeypatch), pytest.raises(ValueError, match=message):
        getattr(A, fn)(**kwargs)


def test_mobilenet_v2_input_tensor_checks(keras_graph):
    inputs = K.Input((64, 48, 3))
    with pytest.raises(ValueError, match=r"input_tensor.shape\[2\] must equal"):
        A.MobileNetV2(weights=None, input_tensor=inputs, input_shape=(64, 64, 3),
                      include_top=False)
    with pytest.raises(ValueError, match="input_tensor is not a Keras tensor"):
        A.MobileNetV2(weights=None, input_shape=(64, 64, 3), include_top=False,
                      input_tensor=tf.placeholder(tf.float32, (None, 64, 64, 3)))


def test_layers_and_classifier_activation_arguments(keras_graph):
    """ResNet50's **kwargs: `classifier_activation`, and `layers`, the module whose
    classes build the model (as Keras' own tests pass it)."""
    made = []

    class Conv2D(K.layers.Conv2D):
        def __init__(self, *args, **kwargs):
            made.append(kwargs.get("name"))
            super().__init__(*args, **kwargs)

    layers = types.SimpleNamespace(**{n: getattr(K.layers, n) for n in dir(K.layers)
                                      if not n.startswith("_")})
    layers.Conv2D = Conv2D
    model = A.ResNet50(weights=None, input_shape=(32, 32, 3), classes=3,
                       classifier_activation=None, layers=layers)
    assert len(made) == 53 and made[0] == "conv1_conv"
    assert model.get_layer("predictions").get_config()["activation"] == "linear"
    model = A.MobileNet(weights=None, include_top=False, alpha=0.25, layers=layers)
    assert made[53:56] == ["conv1", "conv_pw_1", "conv_pw_2"]


def test_model_names_and_heads(keras_graph):
    model = A.MobileNet(weights=None, include_top=False, alpha=0.5)
    assert model.name == "mobilenet_0.50_None"
    assert model.output.shape.as_list() == [None, None, None, 512]
    model = A.ResNet50V2(weights=None, include_top=False, input_shape=(32, 32, 3),
                         pooling="max")
    assert model.layers[-1].name == "max_pool" and model.output.shape.as_list() == [None, 2048]
    model = A.VGG16(weights=None, include_top=False, pooling="avg")
    assert type(model.layers[-1]).__name__ == "GlobalAveragePooling2D"


# --- preprocess_input ---------------------------------------------------------------------
PIXEL = [10.0, 20.0, 30.0]  # R, G, B
CAFFE = [30 - 103.939, 20 - 116.779, 10 - 123.68]  # B, G, R minus Keras' ImageNet means
TF_MODE = [10 / 127.5 - 1, 20 / 127.5 - 1, 30 / 127.5 - 1]
TORCH = [(10 / 255 - 0.485) / 0.229, (20 / 255 - 0.456) / 0.224, (30 / 255 - 0.406) / 0.225]
MODES = {"vgg16": CAFFE, "vgg19": CAFFE, "resnet": CAFFE, "resnet50": CAFFE,
         "resnet_v2": TF_MODE, "mobilenet": TF_MODE, "mobilenet_v2": TF_MODE,
         "inception_v3": TF_MODE, "xception": TF_MODE, "densenet": TORCH}


@pytest.mark.parametrize("namespace", sorted(MODES))
def test_preprocess_input_modes(namespace):
    fn = getattr(A, namespace).preprocess_input
    want = np.array(MODES[namespace])
    x = np.tile(np.array(PIXEL, "float32"), (2, 3, 4, 1))
    y = fn(x)
    np.testing.assert_allclose(y, np.broadcast_to(want, y.shape), rtol=1e-6, atol=1e-6)
    # Keras writes over a float input (through the BGR view in caffe mode).
    assert np.shares_memory(x, y)
    assert not np.array_equal(x, np.tile(np.array(PIXEL, "float32"), (2, 3, 4, 1)))
    channels_first = np.tile(np.array(PIXEL)[:, None, None], (1, 2, 5))
    y = fn(channels_first, data_format="channels_first")
    assert y.dtype == np.float64
    np.testing.assert_allclose(y[:, 1, 3], want, rtol=1e-12)
    ints = np.array([[PIXEL]], "uint8")
    y = fn(ints)
    assert y.dtype == np.float32 and ints[0, 0, 0] == 10
    np.testing.assert_allclose(y[0, 0], want, rtol=1e-6)
    with tf.Graph().as_default():
        image = tf.placeholder(tf.float32, (None, 2, 2, 3))
        with tf.Session() as sess:
            got = sess.run(fn(image), {image: np.tile(np.array(PIXEL), (1, 2, 2, 1))})
    np.testing.assert_allclose(got[0, 1, 0], want, rtol=1e-5)
    with pytest.raises(ValueError, match="Expected data_format"):
        fn(np.zeros((1, 2, 2, 3)), data_format="NHWC")


def test_preprocess_input_symbolic_channels_first():
    with tf.Graph().as_default():
        image = tf.placeholder(tf.float64, (1, 3, 2, 2))
        out = A.imagenet_utils.preprocess_input(image, data_format="channels_first",
                                                mode="torch")
        assert out.dtype == tf.float64
        with tf.Session() as sess:
            got = sess.run(out, {image: np.tile(np.array(PIXEL)[:, None, None], (1, 1, 2, 2))})
        # Keras' mean constant is floatx (float32), cast to the input's dtype.
        mean = np.array([0.485, 0.456, 0.406], "float32").astype("float64")
        want = (np.array(PIXEL) / 255 - mean) / np.array([0.229, 0.224, 0.225])
        np.testing.assert_allclose(got[0, :, 1, 1], want, rtol=1e-12)
        # As in TF, a 3-D channels_first tensor meets BiasAdd's NCHW channel axis (1).
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            A.imagenet_utils.preprocess_input(tf.placeholder(tf.float32, (3, 2, 2)),
                                              data_format="channels_first")
    with pytest.raises(ValueError, match="Expected mode to be one of"):
        A.imagenet_utils.preprocess_input(np.zeros((1, 2, 2, 3)), mode="bgr")


# --- get_file -----------------------------------------------------------------------------
def test_get_file_download_and_cache(server, home, capsys):
    data = b"some data\n"
    (server.root / "a.txt").write_bytes(data)
    path = K.utils.get_file("b.txt", server.url + "a.txt")
    assert path == str(home / ".keras" / "datasets" / "b.txt")
    assert open(path, "rb").read() == data
    assert "Downloading data from %sa.txt" % server.url in capsys.readouterr().out
    assert K.utils.get_file("b.txt", server.url + "a.txt") == path  # cached
    assert K.utils.get_file(origin=server.url + "a.txt", cache_subdir="sub") == \
        str(home / ".keras" / "sub" / "a.txt")
    assert server.requests == ["/a.txt", "/a.txt"]


def test_get_file_hashes(server, tmp_path, capsys):
    data = b"payload"
    (server.root / "p.bin").write_bytes(data)
    md5, sha = hashlib.md5(data).hexdigest(), hashlib.sha256(data).hexdigest()
    cache = str(tmp_path)
    url = server.url + "p.bin"
    assert K.utils.get_file("m.bin", url, file_hash=md5, cache_dir=cache)
    assert K.utils.get_file("s.bin", url, file_hash=sha, cache_dir=cache)
    assert K.utils.get_file("d.bin", url, md5_hash=md5, cache_dir=cache)
    with pytest.raises(ValueError, match="The md5 file hash does not match"):
        K.utils.get_file("x.bin", url, file_hash=sha, hash_algorithm="md5", cache_dir=cache)
    # A cached file of another hash is downloaded again.
    stale = tmp_path / "datasets" / "m.bin"
    stale.write_bytes(b"stale")
    capsys.readouterr()
    assert K.utils.get_file("m.bin", url, file_hash=md5, cache_dir=cache) == str(stale)
    assert stale.read_bytes() == data
    assert "local file was found, but it seems to be incomplete" in capsys.readouterr().out
    assert server.requests.count("/p.bin") == 5


def test_get_file_extracts_archives(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    with tarfile.open(src / "arch.tar.gz", "w:gz") as archive:
        for name, data in (("arch/x.txt", b"x"), ("../evil.txt", b"evil")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    with zipfile.ZipFile(src / "z.zip", "w") as archive:
        archive.writestr("zdir/z.txt", "zz")
    cache = tmp_path / "cache"
    cache.mkdir()
    url = "file://" + str(src) + "/"
    with pytest.warns(UserWarning, match="Skipping invalid path.*evil.txt"):
        path = K.utils.get_file("arch.tar.gz", url + "arch.tar.gz", untar=True,
                                cache_dir=str(cache))
    assert path == str(cache / "datasets" / "arch")
    assert (cache / "datasets" / "arch" / "x.txt").read_bytes() == b"x"
    assert not (cache / "evil.txt").exists()
    path = K.utils.get_file("z.zip", url + "z.zip", extract=True, cache_dir=str(cache))
    assert path == str(cache / "datasets" / "z.zip")
    assert (cache / "datasets" / "zdir" / "z.txt").read_text() == "zz"
    K.utils.get_file("y.zip", url + "z.zip", extract=True, archive_format="tar",
                     cache_dir=str(cache), cache_subdir="other")
    assert os.listdir(cache / "other") == ["y.zip"]


def test_get_file_errors(server, tmp_path):
    with pytest.raises(ValueError, match='specify the "origin" argument'):
        K.utils.get_file("a.txt")
    with pytest.raises(ValueError, match="Can't parse the file name"):
        K.utils.get_file(origin=server.url, cache_dir=str(tmp_path))
    with pytest.raises(Exception, match="URL fetch failure on .*missing.txt: 404"):
        K.utils.get_file("m.txt", server.url + "missing.txt", cache_dir=str(tmp_path))
    assert not (tmp_path / "datasets" / "m.txt").exists()


def test_get_file_unwritable_cache_falls_back_to_tmp(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(b"a")
    subdir = "tw_get_file_%d" % os.getpid()
    try:
        path = K.utils.get_file("a.txt", "file://" + str(src), cache_subdir=subdir,
                                cache_dir=str(tmp_path / "missing"))
        assert path == os.path.join("/tmp", ".keras", subdir, "a.txt")
    finally:
        shutil.rmtree(os.path.join("/tmp", ".keras", subdir), ignore_errors=True)
