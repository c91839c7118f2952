"""tf.keras.preprocessing.image: ImageDataGenerator, its iterators and the image helpers,
against values worked out by hand or with NumPy, and against what TF 2.15's Keras computed
for seeded runs (tests/fixtures/tf1/keras_image_expected.npz, written by
make_keras_image_fixture.py)."""
import importlib.util
import io
import os
import sys

import numpy as np
import pytest
from PIL import Image

import tensorweave as tf
from tensorweave.framework import api_export

I = tf.keras.preprocessing.image
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")
LAST = dict(row_axis=0, col_axis=1, channel_axis=2)  # axes of one channels_last image


def _images(n=10, shape=(5, 6, 3), seed=0):
    return np.random.RandomState(seed).rand(n, *shape).astype("float32")


class _IndexIterator(I.Iterator):
    """Batches are the index arrays themselves (no transformation, no SciPy)."""

    def _get_batches_of_transformed_samples(self, index_array):
        return np.array(index_array)


def test_exports():
    names = ["ImageDataGenerator", "Iterator", "NumpyArrayIterator", "DirectoryIterator",
             "apply_affine_transform", "apply_brightness_shift", "apply_channel_shift",
             "array_to_img", "img_to_array", "load_img", "save_img", "random_brightness",
             "random_channel_shift", "random_rotation", "random_shear", "random_shift",
             "random_zoom"]
    # exactly TF 2.15's tf.compat.v1.keras.preprocessing.image (smart_resize is v2-only)
    assert sorted(api_export.exported("keras.preprocessing.image")) == sorted(names)
    for name in ("load_img", "img_to_array", "array_to_img", "save_img"):
        assert getattr(tf.keras.utils, name) is getattr(I, name)
    assert issubclass(I.Iterator, tf.keras.utils.Sequence)
    assert issubclass(I.DataFrameIterator, I.Iterator)
    assert tf.keras.preprocessing.image is sys.modules["tensorweave.keras.preprocessing.image"]


# --- against TF 2.15 ----------------------------------------------------------------------
def test_seeded_runs_match_tf215(tmp_path):
    pytest.importorskip("scipy")
    pytest.importorskip("pandas")
    spec = importlib.util.spec_from_file_location(
        "make_keras_image_fixture", os.path.join(FIXTURES, "make_keras_image_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.warns(UserWarning):
        ours = module.run_cases(tf, str(tmp_path))
    expected = dict(np.load(os.path.join(FIXTURES, "keras_image_expected.npz")))
    assert sorted(ours) == sorted(expected) and len(expected) == 96
    for key, want in expected.items():
        got = ours[key]
        assert got.dtype == want.dtype and got.shape == want.shape, key
        if want.dtype.kind == "f":
            tol = 1e-6 if key.startswith("model_fit") else 1e-5  # losses: float32 sums
            np.testing.assert_allclose(got, want, rtol=tol, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)


# --- the iterators' order -----------------------------------------------------------------
def test_iterator_order_next_and_getitem():
    it = _IndexIterator(10, 4, shuffle=False, seed=None)
    assert len(it) == 3 and iter(it) is it
    assert [next(it).tolist() for _ in range(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9],
                                                     [0, 1, 2, 3]]
    assert it.total_batches_seen == 4 and it.batch_index == 1
    it.reset()
    assert it.next().tolist() == [0, 1, 2, 3]
    assert it[2].tolist() == [8, 9]
    with pytest.raises(ValueError, match="has length 3"):
        it[3]
    # a seeded shuffle: the RNG is reseeded with seed + total_batches_seen per batch, and
    # a pass's order is drawn when the pass begins
    it = _IndexIterator(10, 4, shuffle=True, seed=5)
    perm = np.random.RandomState(5).permutation(10)
    assert it.next().tolist() == perm[:4].tolist()
    assert it.next().tolist() == perm[4:8].tolist()
    assert it.next().tolist() == perm[8:].tolist()
    assert it.next().tolist() == np.random.RandomState(8).permutation(10)[:4].tolist()
    # the Sequence interface draws the order on first use and again in on_epoch_end
    seq = _IndexIterator(10, 4, shuffle=True, seed=None)
    np.random.seed(3)
    assert seq[1].tolist() == np.random.RandomState(3).permutation(10)[4:8].tolist()
    np.random.seed(4)
    seq.on_epoch_end()
    assert seq[0].tolist() == np.random.RandomState(4).permutation(10)[:4].tolist()
    assert len(_IndexIterator(0, 4, True, None)) == 0


def test_flow_batches_without_transformations():
    pytest.importorskip("scipy")
    x, y = _images(), np.arange(10)
    gen = I.ImageDataGenerator()
    it = gen.flow(x, y, batch_size=4, shuffle=False)
    assert isinstance(it, I.NumpyArrayIterator) and len(it) == 3
    bx, by = next(it)
    np.testing.assert_array_equal(bx, x[:4])
    np.testing.assert_array_equal(by, y[:4])
    weights = np.linspace(0, 1, 10)
    bx, by, bw = gen.flow(x, y, sample_weight=weights, batch_size=3, shuffle=False)[3]
    np.testing.assert_array_equal(bx, x[9:])
    np.testing.assert_array_equal(bw, weights[9:])
    extra = np.arange(10) * 2
    (bx, be), by = gen.flow((x, extra), y, batch_size=5, shuffle=False)[1]
    np.testing.assert_array_equal(be, extra[5:])
    only_x = gen.flow(x.astype("float64"), batch_size=10, shuffle=False).next()
    assert only_x.dtype == np.float32 and only_x.shape == x.shape
    with pytest.raises(ValueError, match="same length"):
        gen.flow(x, y[:3])
    with pytest.raises(ValueError, match="rank 4"):
        gen.flow(x[0])
    with pytest.warns(UserWarning, match="5 channels"):
        gen.flow(np.zeros((2, 4, 4, 5)))


def test_flow_subsets():
    pytest.importorskip("scipy")
    x = _images()
    y = np.array([0, 1, 2] * 3 + [0])
    gen = I.ImageDataGenerator(validation_split=0.3)
    val = gen.flow(x, y, batch_size=10, shuffle=False, subset="validation")
    train = gen.flow(x, y, batch_size=10, shuffle=False, subset="training")
    np.testing.assert_array_equal(val.next()[0], x[:3])
    np.testing.assert_array_equal(train.next()[1], y[3:])
    with pytest.raises(ValueError, match="different number of classes"):
        gen.flow(x, np.arange(10), subset="training")
    assert gen.flow(x, np.arange(10), subset="training", ignore_class_split=True).n == 7
    with pytest.raises(ValueError, match="Invalid subset"):
        gen.flow(x, y, subset="test")


# --- random parameters --------------------------------------------------------------------
def test_random_transform_draw_order():
    gen = I.ImageDataGenerator(rotation_range=10, height_shift_range=0.1, width_shift_range=3,
                               shear_range=5, zoom_range=0.2, horizontal_flip=True,
                               channel_shift_range=0.2, brightness_range=(0.5, 1.5))
    params = gen.get_random_transform((6, 7, 3), seed=0)
    rng = np.random.RandomState(0)
    theta = rng.uniform(-10, 10)
    tx = rng.uniform(-0.1, 0.1) * 6  # a fraction of the rows
    ty = rng.choice(3) * rng.choice([-1, 1])  # whole pixels in (-3, 3)
    shear = rng.uniform(-5, 5)
    zx, zy = rng.uniform(0.8, 1.2, 2)
    flip_h, flip_v = rng.random_sample() < 0.5, rng.random_sample() < 0.5
    assert params == {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx,
                      "zy": zy, "flip_horizontal": flip_h, "flip_vertical": False * flip_v,
                      "channel_shift_intensity": rng.uniform(-0.2, 0.2),
                      "brightness": rng.uniform(0.5, 1.5)}
    # a list draws an element and a sign; fractions scale by the image size
    params = I.ImageDataGenerator(width_shift_range=[0.25, 0.5]).get_random_transform(
        (4, 8, 1), seed=1)
    rng = np.random.RandomState(1)
    assert params["ty"] == rng.choice([0.25, 0.5]) * rng.choice([-1, 1]) * 8
    assert params["theta"] == 0 and params["zx"] == 1 and params["brightness"] is None


def test_constructor_settings():
    gen = I.ImageDataGenerator(zoom_range=0.25, data_format="channels_first")
    assert gen.zoom_range == [0.75, 1.25]
    assert (gen.channel_axis, gen.row_axis, gen.col_axis) == (1, 2, 3)
    assert gen.dtype == "float32"
    with pytest.warns(UserWarning) as record:
        gen = I.ImageDataGenerator(zca_whitening=True, featurewise_std_normalization=True,
                                   samplewise_std_normalization=True)
    assert len(record) == 4  # Keras judges each implication on the arguments
    assert gen.featurewise_center and not gen.featurewise_std_normalization
    assert gen.samplewise_center
    for kwargs in (dict(data_format="NHWC"), dict(validation_split=1.5),
                   dict(zoom_range=[1, 2, 3]), dict(brightness_range=1.5)):
        with pytest.raises(ValueError):
            I.ImageDataGenerator(**kwargs)


# --- transformations ----------------------------------------------------------------------
def test_affine_transform_by_hand():
    pytest.importorskip("scipy")
    x = np.arange(20, dtype="float32").reshape(4, 5, 1)
    fill = dict(fill_mode="constant", cval=-1.0)
    shifted = I.apply_affine_transform(x, tx=1, **LAST, **fill)[..., 0]
    want = np.hstack([x[:, 1:, 0], -np.ones((4, 1))])  # tx moves along the columns
    np.testing.assert_array_equal(shifted, want)
    shifted = I.apply_affine_transform(x, ty=2, **LAST, **fill)[..., 0]
    np.testing.assert_array_equal(shifted, np.vstack([x[2:, :, 0], -np.ones((2, 5))]))
    square = np.arange(16, dtype="float32").reshape(4, 4, 1)
    turned = I.apply_affine_transform(square, theta=90, order=0, **LAST)
    np.testing.assert_array_equal(turned[..., 0], np.rot90(square[..., 0]))
    zoomed = I.apply_affine_transform(x, zx=0.5, order=0, **LAST)[..., 0]
    np.testing.assert_array_equal(zoomed[0], [1, 1, 2, 2, 3])
    # channels first: the same map on every channel
    two = np.stack([x[..., 0], 10 * x[..., 0]])
    out = I.apply_affine_transform(two, tx=1, **fill)
    np.testing.assert_array_equal(out[1], np.hstack([10 * x[:, 1:, 0], -np.ones((4, 1))]))
    assert I.apply_affine_transform(x, **LAST) is x  # neutral parameters
    with pytest.raises(ValueError, match="distinct"):
        I.apply_affine_transform(x, row_axis=0, col_axis=0, channel_axis=2)
    with pytest.raises(ValueError, match="first and last"):
        I.apply_affine_transform(x, row_axis=0, col_axis=2, channel_axis=1)
    with pytest.raises(ValueError, match="2D images"):
        I.apply_affine_transform(x[..., 0], **LAST)
    # the generator's height shift moves along the columns too (as TF 2.15's Keras)
    gen = I.ImageDataGenerator(height_shift_range=[1], **fill)
    params = gen.get_random_transform(x.shape, seed=0)
    assert (params["tx"], params["ty"]) == (-1, 0)
    np.testing.assert_array_equal(gen.apply_transform(x, params)[:, 0, 0], [-1] * 4)


def test_flips_and_random_functions():
    pytest.importorskip("scipy")
    x = _images(1, (4, 5, 2))[0]
    gen = I.ImageDataGenerator()
    np.testing.assert_array_equal(gen.apply_transform(x, {"flip_horizontal": True}),
                                  x[:, ::-1])
    np.testing.assert_array_equal(gen.apply_transform(x, {"flip_vertical": True}), x[::-1])
    np.random.seed(2)
    got = I.random_rotation(x, 30, **LAST)
    theta = np.random.RandomState(2).uniform(-30, 30)
    np.testing.assert_array_equal(got, I.apply_affine_transform(x, theta=theta, **LAST))
    np.random.seed(3)
    got = I.random_shift(x, 0.2, 0.4, **LAST)
    rng = np.random.RandomState(3)
    tx, ty = rng.uniform(-0.4, 0.4) * 4, rng.uniform(-0.2, 0.2) * 5
    np.testing.assert_array_equal(got, I.apply_affine_transform(x, tx=tx, ty=ty, **LAST))
    np.random.seed(4)
    zx, zy = np.random.RandomState(4).uniform(0.5, 1.5, 2)
    np.testing.assert_array_equal(I.random_zoom(x, (0.5, 1.5), **LAST),
                                  I.apply_affine_transform(x, zx=zx, zy=zy, **LAST))
    with pytest.raises(ValueError, match="two floats"):
        I.random_zoom(x, (0.5,))


def test_channel_and_brightness_shifts():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)  # channels first
    got = I.apply_channel_shift(x, 5.5, channel_axis=0)
    np.testing.assert_array_equal(got, np.clip(x + np.float32(5.5), 0, 23))
    np.random.seed(1)
    shift = np.random.RandomState(1).uniform(-30, 30)
    np.testing.assert_array_equal(I.random_channel_shift(x, 30, 0),
                                  I.apply_channel_shift(x, shift, 0))
    img = np.random.RandomState(0).randint(0, 256, (4, 5, 3)).astype("float32")
    np.testing.assert_array_equal(I.apply_brightness_shift(img, 1.0, scale=False), img)
    assert not I.apply_brightness_shift(img, 0.0).any()
    # out of [0, 255]: through 8 bits, then back to the image's range
    wide = img * 2 - 100
    back = I.apply_brightness_shift(wide, 1.0, scale=False)
    scaled = ((wide - wide.min()) / (wide.max() - wide.min()) * 255).astype("uint8")
    np.testing.assert_allclose(back, scaled / 255 * (wide.max() - wide.min()) + wide.min(),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="two floats"):
        I.random_brightness(img, (0.5,))


def test_no_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.ndimage", None)
    x = _images(2, (3, 3, 1))
    with pytest.raises(ImportError, match="Image transformations require SciPy"):
        I.apply_affine_transform(x[0], theta=10, **LAST)
    with pytest.raises(ImportError, match="require SciPy"):
        next(I.ImageDataGenerator(horizontal_flip=True).flow(x))


# --- normalization ------------------------------------------------------------------------
def test_standardize_and_fit():
    x = _images(6, (3, 4, 3)) * 10
    gen = I.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True,
                               rescale=0.5)
    with pytest.warns(UserWarning, match="hasn't been fit"):
        gen.standardize(np.copy(x[0]))
    gen.fit(x)
    mean = (x * 0.5).mean(axis=(0, 1, 2), dtype="float64")
    std = (x * 0.5).std(axis=(0, 1, 2), dtype="float64")
    np.testing.assert_allclose(gen.mean.ravel(), mean, rtol=1e-5)
    np.testing.assert_allclose(gen.std.ravel(), std, rtol=1e-5)
    assert gen.mean.shape == (1, 1, 3)
    sample = np.copy(x[1])
    out = gen.standardize(sample)
    assert out is sample  # in place
    np.testing.assert_allclose(out, (x[1] * 0.5 - mean) / (std + 1e-6), rtol=1e-4, atol=1e-5)
    with pytest.warns(UserWarning, match="overrides setting of `samplewise_center`"):
        gen = I.ImageDataGenerator(samplewise_std_normalization=True,
                                   preprocessing_function=lambda v: v + 1, dtype="float64")
    img = x[2].astype("float64")
    want = (img + 1 - (img + 1).mean()) / ((img + 1).std() + 1e-6)
    np.testing.assert_allclose(gen.standardize(np.copy(img)), want, rtol=1e-12)
    with pytest.raises(ValueError, match="rank 4"):
        gen.fit(x[0])


def test_zca_whitening():
    x = _images(8, (2, 2, 3)).astype("float64")
    with pytest.warns(UserWarning, match="overrides setting of `featurewise_center`"):
        gen = I.ImageDataGenerator(zca_whitening=True, zca_epsilon=1e-3, dtype="float64")
    gen.fit(x)
    flat = (x - x.mean(axis=(0, 1, 2))).reshape(8, -1)
    u, s, _ = np.linalg.svd(flat.T, full_matrices=False)
    want = u @ np.diag(np.sqrt(8) / (s + 1e-3)) @ u.T
    np.testing.assert_allclose(gen.zca_whitening_matrix, want, rtol=1e-8, atol=1e-8)
    white = gen.standardize(np.copy(x))
    np.testing.assert_allclose(white.reshape(8, -1), flat @ want, rtol=1e-8, atol=1e-8)


# --- files --------------------------------------------------------------------------------
def test_array_img_round_trips(tmp_path):
    rgb = np.random.RandomState(0).randint(0, 256, (4, 5, 3)).astype("float32")
    img = I.array_to_img(rgb, scale=False)
    assert img.mode == "RGB" and img.size == (5, 4)
    np.testing.assert_array_equal(I.img_to_array(img), rgb)
    scaled = np.asarray(I.array_to_img(rgb / 10 + 3))
    np.testing.assert_array_equal(
        scaled, ((rgb - rgb.min()) / (rgb.max() - rgb.min()) * 255).astype("uint8"))
    assert I.array_to_img(np.full((2, 2, 1), 300.0), scale=False).mode == "I"
    assert I.array_to_img(np.zeros((2, 2, 4))).mode == "RGBA"
    cf = I.img_to_array(img, data_format="channels_first", dtype="int32")
    assert cf.shape == (3, 4, 5) and cf.dtype == np.int32
    gray = I.img_to_array(Image.fromarray(rgb[..., 0].astype("uint8")))
    assert gray.shape == (4, 5, 1)
    with pytest.raises(ValueError, match="rank 3"):
        I.array_to_img(rgb[0])
    with pytest.raises(ValueError, match="channel number"):
        I.array_to_img(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="data_format"):
        I.img_to_array(img, data_format="NCHW")
    path = tmp_path / "a.png"
    I.save_img(str(path), rgb, scale=False)
    np.testing.assert_array_equal(I.img_to_array(I.load_img(path)), rgb)
    buffer = io.BytesIO()
    I.save_img(buffer, rgb, file_format="png", scale=False)
    buffer.seek(0)
    assert I.load_img(buffer, color_mode="rgba").mode == "RGBA"
    with pytest.warns(UserWarning, match="RGBA"):
        I.save_img(str(tmp_path / "b.jpg"), np.zeros((2, 2, 4)), file_format="jpeg")
    assert Image.open(str(tmp_path / "b.jpg")).mode == "RGB"


def test_load_img_modes_and_sizes(tmp_path):
    pixels = np.random.RandomState(1).randint(0, 256, (6, 10, 3)).astype("uint8")
    path = str(tmp_path / "a.png")
    Image.fromarray(pixels).save(path)
    gray = I.load_img(path, color_mode="grayscale")
    assert gray.mode == "L"
    np.testing.assert_array_equal(np.asarray(gray), np.asarray(Image.open(path).convert("L")))
    with pytest.warns(UserWarning, match="deprecated"):
        assert I.load_img(path, grayscale=True).mode == "L"
    small = I.load_img(path.encode(), target_size=(3, 5))
    # PIL's nearest halving takes the pixel right of each output center
    np.testing.assert_array_equal(np.asarray(small), pixels[1::2, 1::2])
    # keep_aspect_ratio: the centered 6x6 crop, resized to 3x3
    cropped = I.load_img(path, target_size=(3, 3), keep_aspect_ratio=True)
    np.testing.assert_array_equal(np.asarray(cropped), pixels[:, 2:8][1::2, 1::2])
    with pytest.raises(ValueError, match="Invalid interpolation"):
        I.load_img(path, target_size=(3, 3), interpolation="cubic")
    with pytest.raises(ValueError, match="color_mode"):
        I.load_img(path, color_mode="cmyk")
    with pytest.raises(TypeError, match="path-like"):
        I.load_img(3)


def _write_tree(root):
    """root/{a,b}/...: a has 3 images (one nested, one RGBA), b has 2; plus a text file.
    Returns {relative path: RGB pixels}."""
    rng = np.random.RandomState(2)
    pixels = {}
    for rel in ("a/x0.png", "a/sub/x1.bmp", "a/x2.png", "b/y0.png", "b/y1.PNG"):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        arr = rng.randint(0, 256, (4, 6, 3)).astype("uint8")
        Image.fromarray(arr).save(os.path.join(root, rel), format=rel[-3:].upper())
        pixels[rel] = arr
    with open(os.path.join(root, "b", "notes.txt"), "w") as f:
        f.write("x")
    return pixels


def test_flow_from_directory(tmp_path, capsys):
    pytest.importorskip("scipy")
    pixels = _write_tree(str(tmp_path))
    gen = I.ImageDataGenerator(validation_split=0.5)
    it = gen.flow_from_directory(str(tmp_path), target_size=(4, 6), batch_size=5,
                                 shuffle=False)
    assert "Found 5 images belonging to 2 classes." in capsys.readouterr().out
    files = ["a/x0.png", "a/x2.png", "a/sub/x1.bmp", "b/y0.png", "b/y1.PNG"]  # walk order
    assert it.filenames == [os.path.join(*f.split("/")) for f in files]
    assert it.class_indices == {"a": 0, "b": 1} and it.samples == 5
    np.testing.assert_array_equal(it.classes, [0, 0, 0, 1, 1])
    assert it.filepaths[2] == os.path.join(str(tmp_path), "a", "sub", "x1.bmp")
    bx, by = it.next()
    np.testing.assert_array_equal(bx, np.stack([pixels[f] for f in files]))
    np.testing.assert_array_equal(by, np.eye(2)[[0, 0, 0, 1, 1]])
    it = gen.flow_from_directory(str(tmp_path), target_size=(4, 6), color_mode="grayscale",
                                 classes=["b"], class_mode="sparse", shuffle=False)
    bx, by = it.next()
    assert bx.shape == (2, 4, 6, 1) and by.tolist() == [0.0, 0.0]
    want = np.asarray(Image.fromarray(pixels["b/y0.png"]).convert("L"))
    np.testing.assert_array_equal(bx[0, ..., 0], want)
    val = gen.flow_from_directory(str(tmp_path), target_size=(2, 2), subset="validation",
                                  class_mode=None, shuffle=False)
    # the first half of each class's files
    assert val.filenames == [os.path.join("a", "x0.png"), os.path.join("b", "y0.png")]
    assert val.next().shape == (2, 2, 2, 3)  # x alone for class_mode None
    bx, by = gen.flow_from_directory(str(tmp_path), target_size=(4, 6), class_mode="input",
                                     color_mode="rgba", batch_size=1, shuffle=False)[0]
    assert bx.shape == (1, 4, 6, 4) and np.array_equal(bx, by) and by is not bx
    with pytest.raises(ValueError, match="class_mode"):
        gen.flow_from_directory(str(tmp_path), class_mode="raw")
    with pytest.raises(ValueError, match="color mode"):
        gen.flow_from_directory(str(tmp_path), color_mode="hsv")


def test_flow_from_dataframe(tmp_path):
    pytest.importorskip("scipy")
    pd = pytest.importorskip("pandas")
    pixels = _write_tree(str(tmp_path))
    df = pd.DataFrame({"file": ["a/x0.png", "b/y0.png", "b/notes.txt", "a/x2.png"],
                       "label": ["a", "b", "b", "a"], "value": [1.5, 2.5, 0.0, 3.5],
                       "w": [1.0, 2.0, 3.0, 4.0]})
    gen = I.ImageDataGenerator()
    with pytest.warns(UserWarning, match="1 invalid image filename"):
        it = gen.flow_from_dataframe(df, str(tmp_path), x_col="file", y_col="value",
                                     weight_col="w", class_mode="raw", target_size=(4, 6),
                                     shuffle=False)
    assert it.filenames == ["a/x0.png", "b/y0.png", "a/x2.png"]
    bx, by, bw = it.next()
    np.testing.assert_array_equal(bx[1], pixels["b/y0.png"])
    assert by.tolist() == [1.5, 2.5, 3.5] and bw.tolist() == [1.0, 2.0, 4.0]
    with pytest.warns(UserWarning):
        it = gen.flow_from_dataframe(df, str(tmp_path), x_col="file", y_col="label",
                                     class_mode="binary", target_size=(4, 6), shuffle=False)
    assert it.class_indices == {"a": 0, "b": 1} and it.classes == [0, 1, 0]
    assert it.next()[1].tolist() == [0.0, 1.0, 0.0]
    with pytest.raises(TypeError, match="must be strings"):
        gen.flow_from_dataframe(df, x_col="value")
    with pytest.raises(ValueError, match="2 classes"):
        gen.flow_from_dataframe(df.assign(label=["a", "b", "c", "a"]), x_col="file",
                                y_col="label", class_mode="binary")
    with pytest.raises(TypeError, match="DataFrame"):
        gen.flow_from_dataframe({"filename": []})


def test_flow_from_dataframe_needs_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="requires pandas"):
        I.ImageDataGenerator().flow_from_dataframe(None)


# --- smart_resize (TF 2's, reached through this module) -----------------------------------
def test_smart_resize():
    x = np.arange(32, dtype="float32").reshape(4, 8, 1)
    out = I.smart_resize(x, (4, 4))  # the centered 4x4 crop, at its own size
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, x[:, 2:6])
    batch = np.stack([x, x + 1]).astype("uint8")
    near = I.smart_resize(batch, (2, 2), interpolation="nearest")
    assert near.dtype == np.uint8 and near.shape == (2, 2, 2, 1)
    np.testing.assert_array_equal(near[1, ..., 0], x[1::2, 3:6:2, 0] + 1)
    with tf.Graph().as_default():
        tensor = I.smart_resize(tf.constant(x), (2, 8))
        assert isinstance(tensor, tf.Tensor)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(tensor).shape, (2, 8, 1))
    with pytest.raises(ValueError, match="rank"):
        I.smart_resize(x[0], (2, 2))
    with pytest.raises(NotImplementedError, match="lanczos3"):
        I.smart_resize(x, (2, 2), interpolation="lanczos3")
    with pytest.raises(ValueError, match="2 integers"):
        I.smart_resize(x, (2,))
