"""The tf.keras layers added for Keras 2.15 parity: AlphaDropout, Identity,
Conv1DTranspose, the image preprocessing layers (Rescaling, Resizing, CenterCrop),
Normalization, Hashing, Discretization, CategoryEncoding, LocallyConnected1D/2D and
enable/disable_v2_dtype_behavior, against values recorded from TF 2.15's Keras
(`tensorflow.compat.v1` graph mode, `tf.disable_v2_behavior()`) and NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

K = tf.keras
L = tf.keras.layers


@pytest.fixture(autouse=True)
def _keras(keras_graph):
    yield keras_graph


def _run(fetches, feed=None):
    return K.backend.get_session().run(fetches, feed)


def _config_round_trip(layer):
    config = layer.get_config()
    again = type(layer).from_config(config).get_config()
    config.pop("name")
    again.pop("name")
    assert again == config
    return layer.get_config()


def _set_random_weights(layer, seed=1):
    rng = np.random.RandomState(seed)
    values = [rng.uniform(-1, 1, size=tuple(w.shape.as_list())).astype(np.float32)
              for w in layer.weights]
    layer.set_weights(values)


# --- AlphaDropout, Identity ----------------------------------------------------------------
def test_alpha_dropout_matches_tf_with_seeds_and_is_the_identity_in_inference():
    x_value = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    tf.set_random_seed(5)
    layer = L.AlphaDropout(0.3, seed=2)
    x = tf.constant(x_value)
    # TF 2.15: tf.set_random_seed(5); AlphaDropout(0.3, seed=2)(x, training=True)
    dropped = -1.0595481
    expected = np.array([[dropped, 0.5401873, 0.6262826, 0.71237785],
                         [dropped, 0.88456833, 0.97066367, dropped],
                         [dropped, 1.2289494, 1.3150446, 1.40114]], np.float32)
    np.testing.assert_allclose(_run(layer(x, training=True)), expected, rtol=1e-6)
    np.testing.assert_array_equal(_run(layer(x, training=False)), x_value)
    np.testing.assert_array_equal(_run(layer(x)), x_value)  # the learning phase: inference
    assert _config_round_trip(layer) == {"name": "alpha_dropout", "trainable": True,
                                         "dtype": "float32", "rate": 0.3, "seed": 2}
    assert layer.compute_output_shape((2, 3)) == (2, 3)


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    rate = 0.2
    x_value = np.random.RandomState(0).randn(200000).astype(np.float32)
    y = _run(L.AlphaDropout(rate)(tf.constant(x_value), training=True))
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    kept = np.isclose(y, a * x_value + b, atol=1e-5)
    np.testing.assert_allclose(y[~kept], a * alpha_p + b, rtol=1e-5)
    assert abs((~kept).mean() - rate) < 0.005
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    # a rate outside (0, 1) is the identity, in training too
    np.testing.assert_array_equal(
        _run(L.AlphaDropout(0.0)(tf.constant(x_value), training=True)), x_value)


def test_identity_returns_its_inputs():
    x_value = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    x = tf.constant(x_value)
    layer = L.Identity()
    np.testing.assert_array_equal(_run(layer(x)), x_value)
    out = L.Identity()([x, 2 * x])
    np.testing.assert_array_equal(_run(out[1]), 2 * x_value)
    assert _config_round_trip(layer) == {"name": "identity", "trainable": True,
                                         "dtype": "float32"}
    inputs = K.Input((3,))
    model = K.Model(inputs, L.Identity()(inputs))
    np.testing.assert_array_equal(model.predict(x_value), x_value)


# --- Conv1DTranspose -----------------------------------------------------------------------
def _conv1d_transpose_valid(x, kernel, bias, stride, dilation):
    """NumPy: each input step i adds x[i] @ kernel[k].T at output step i*stride + k*dilation
    (kernel [k, filters, in])."""
    batch, steps, _ = x.shape
    size, filters, _ = kernel.shape
    out = np.zeros((batch, (steps - 1) * stride + dilation * (size - 1) + 1, filters))
    for i in range(steps):
        for k in range(size):
            out[:, i * stride + k * dilation] += x[:, i] @ kernel[k].T
    return out + bias


@pytest.mark.parametrize("stride, dilation", [(1, 1), (2, 1), (1, 2)])
def test_conv1d_transpose_valid_matches_numpy(stride, dilation):
    x_value = np.random.RandomState(0).randn(2, 4, 3)
    x = tf.placeholder(tf.float64, [2, 4, 3])
    layer = L.Conv1DTranspose(2, 3, strides=stride, dilation_rate=dilation, dtype="float64",
                              bias_initializer="glorot_uniform")
    y = layer(x)
    assert [w.name for w in layer.weights] == ["conv1d_transpose/kernel:0",
                                               "conv1d_transpose/bias:0"]
    kernel, bias = K.backend.batch_get_value(layer.weights)
    assert kernel.shape == (3, 2, 3)
    expected = _conv1d_transpose_valid(x_value, kernel, bias, stride, dilation)
    assert y.shape.as_list() == list(expected.shape)
    assert layer.compute_output_shape((2, 4, 3)).as_list() == list(expected.shape)
    np.testing.assert_allclose(_run(y, {x: x_value}), expected, rtol=1e-10)
    with K.backend.get_session().as_default():
        error = compute_gradient_error(x, [2, 4, 3], y, list(expected.shape),
                                       x_init_value=x_value, delta=1e-6)
    assert error < 1e-6


def test_conv1d_transpose_same_padding_matches_tf():
    x_value = np.random.RandomState(0).randn(1, 3, 2).astype(np.float32)
    x = tf.placeholder(tf.float32, [1, 3, 2])
    same = L.Conv1DTranspose(2, 3, strides=2, padding="same", output_padding=1)
    dilated = L.Convolution1DTranspose(2, 2, dilation_rate=2)
    ys = [same(x), dilated(x)]
    _set_random_weights(same)
    _set_random_weights(dilated)
    # TF 2.15: weights from RandomState(1).uniform(-1, 1), in the order of layer.weights
    expected_same = [[-0.707522, -1.16561], [-2.163635, -0.474272], [-0.099225, -1.245039],
                     [-3.109614, -0.550067], [-1.359771, -0.052604], [-1.113706, -0.113759]]
    expected_dilated = [[-0.322891, -1.844211], [0.618555, -1.786784],
                        [-2.519573, -2.633652], [-2.724983, -1.228668],
                        [-0.729076, -0.792361]]
    same_value, dilated_value = _run(ys, {x: x_value})
    np.testing.assert_allclose(same_value[0], expected_same, atol=2e-6)
    np.testing.assert_allclose(dilated_value[0], expected_dilated, atol=2e-6)
    assert same.compute_output_shape((2, 5, 3)).as_list() == [2, 10, 2]


def test_conv1d_transpose_config_and_errors():
    layer = L.Conv1DTranspose(4, 3)
    config = _config_round_trip(layer)
    # TF 2.15's keys, in its order
    assert list(config) == [
        "name", "trainable", "dtype", "filters", "kernel_size", "strides", "padding",
        "data_format", "dilation_rate", "groups", "activation", "use_bias",
        "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
        "activity_regularizer", "kernel_constraint", "bias_constraint", "output_padding"]
    assert (config["kernel_size"], config["dilation_rate"], config["output_padding"]) == (
        (3,), (1,), None)
    assert L.Convolution1DTranspose is L.Conv1DTranspose
    with pytest.raises(ValueError, match="Expected a strictly positive value. Received "
                                         "filters=0"):
        L.Conv1DTranspose(0, 3)
    with pytest.raises(ValueError, match="Strides must be greater than output padding"):
        L.Conv1DTranspose(2, 3, strides=2, output_padding=2)


# --- Rescaling, Resizing, CenterCrop -------------------------------------------------------
_IMAGES = np.arange(2 * 5 * 7 * 2, dtype=np.float32).reshape(2, 5, 7, 2)

# TF 2.15: Resizing(3, 4, interpolation=...)(_IMAGES)[1, :, :, 0]
_RESIZED = {
    "bilinear": [[75.416664, 78.916664, 82.416664, 85.916664],
                 [98.75, 102.25, 105.75, 109.25],
                 [122.08333, 125.58333, 129.08333, 132.58333]],
    "nearest": [[70., 74., 78., 82.], [98., 102., 106., 110.], [126., 130., 134., 138.]],
    "bicubic": [[73.93741, 77.62508, 81.12508, 84.812744],
                [98.56233, 102.25, 105.75, 109.43767],
                [123.18726, 126.87493, 130.37494, 134.0626]],
    "area": [[76.457146, 79.88572, 83.314285, 86.74286],
             [98.85714, 102.28571, 105.71428, 109.14285],
             [121.25716, 124.68572, 128.1143, 131.54286]],
}


@pytest.mark.parametrize("interpolation", sorted(_RESIZED))
def test_resizing_matches_tf(interpolation):
    layer = L.Resizing(3, 4, interpolation=interpolation)
    out = _run(layer(tf.constant(_IMAGES)))
    assert out.shape == (2, 3, 4, 2)
    np.testing.assert_allclose(out[1, :, :, 0], _RESIZED[interpolation], rtol=2e-6)


def test_resizing_crop_to_aspect_ratio_dtypes_shapes_and_config():
    out = _run(L.Resizing(3, 3, crop_to_aspect_ratio=True)(tf.constant(_IMAGES)))
    # TF 2.15: Resizing(3, 3, crop_to_aspect_ratio=True)(_IMAGES)[1, :, :, 0]
    np.testing.assert_allclose(out[1, :, :, 0], [[77.33333, 80.666664, 84.],
                                                 [100.666664, 104., 107.333336],
                                                 [124., 127.33333, 130.66666]], rtol=2e-6)
    # a layer without a dtype takes its inputs' (TF1 graph mode)
    ints = L.Resizing(3, 4, interpolation="nearest")(tf.constant(_IMAGES.astype("int32")))
    ints = _run(ints)
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints[1, :, :, 0], _RESIZED["nearest"])
    unknown = L.Resizing(3, 4)(tf.placeholder(tf.float32, [None, None, None, 3]))
    assert unknown.shape.as_list() == [None, 3, 4, 3]
    single = L.Resizing(3, 4)(tf.placeholder(tf.float32, [5, 6, 3]))
    assert single.shape.as_list() == [3, 4, 3]
    layer = L.experimental.preprocessing.Resizing(3, 4)
    assert layer.compute_output_shape((2, 5, 7, 2)).as_list() == [2, 3, 4, 2]
    assert _config_round_trip(layer) == {
        "name": "resizing_4", "trainable": True, "dtype": None, "height": 3, "width": 4,
        "interpolation": "bilinear", "crop_to_aspect_ratio": False}
    with pytest.raises(NotImplementedError, match="Value not recognized for `interpolation`: "
                                                  "foo. Supported values are"):
        L.Resizing(3, 4, interpolation="foo")


def test_center_crop_crops_or_resizes_smaller_images():
    x = tf.constant(_IMAGES)
    np.testing.assert_array_equal(_run(L.CenterCrop(3, 4)(x)), _IMAGES[:, 1:4, 1:5])
    # TF 2.15: CenterCrop(6, 4)(_IMAGES)[1, :, :, 0] (too short: cropped to 5x3.33, resized)
    np.testing.assert_allclose(_run(L.CenterCrop(6, 4)(x))[1, :, :, 0], [
        [74., 75.25, 76.75, 78.], [84.5, 85.75, 87.25, 88.5],
        [96.166664, 97.416664, 98.916664, 100.166664],
        [107.83333, 109.08333, 110.58333, 111.83333],
        [119.5, 120.75, 122.25, 123.5], [130., 131.25, 132.75, 134.]], rtol=2e-6)
    images = tf.placeholder(tf.uint8, [None, None, None, 3])
    cropped = L.experimental.preprocessing.CenterCrop(3, 4)(images)
    assert cropped.shape.as_list() == [None, 3, 4, 3] and cropped.dtype == tf.uint8
    value = np.random.RandomState(0).randint(0, 255, (1, 6, 9, 3)).astype(np.uint8)
    np.testing.assert_array_equal(_run(cropped, {images: value}), value[:, 1:4, 2:6])
    layer = L.CenterCrop(3, 4)
    assert layer.compute_output_shape((5, 7, 2)).as_list() == [3, 4, 2]
    assert _config_round_trip(layer) == {"name": "center_crop_3", "trainable": True,
                                         "dtype": None, "height": 3, "width": 4}


def test_rescaling_scales_and_offsets():
    x_value = _IMAGES[0]
    x = tf.placeholder(tf.float32, [None, 7, 2])
    layer = L.Rescaling(1 / 127.5, offset=-1)
    y = layer(x)
    np.testing.assert_allclose(_run(y, {x: x_value}), x_value / 127.5 - 1, rtol=1e-6)
    with K.backend.get_session().as_default():
        assert compute_gradient_error(x, [5, 7, 2], y, [5, 7, 2], x_init_value=x_value) < 1e-3
    # TF 2.15 in graph mode: uint8 inputs give a uint8 layer, wrapping around
    wrapped = _run(L.Rescaling(1 / 255., offset=-1)(tf.constant(_IMAGES[0, :2, :2, 0],
                                                                 tf.uint8)))
    assert wrapped.dtype == np.uint8 and (wrapped == 255).all()
    assert L.experimental.preprocessing.Rescaling is L.Rescaling
    assert _config_round_trip(L.Rescaling(0.5, offset=1)) == {
        "name": "rescaling_2", "trainable": True, "dtype": None, "scale": 0.5, "offset": 1}


# --- Normalization -------------------------------------------------------------------------
def test_normalization_with_given_mean_and_variance_and_its_inverse():
    x_value = np.arange(12, dtype=np.float32).reshape(4, 3)
    layer = L.Normalization(mean=[1., 2, 3], variance=[4., 4, 1])
    np.testing.assert_allclose(_run(layer(tf.constant(x_value))),
                               (x_value - [1, 2, 3]) / np.sqrt([4, 4, 1]), rtol=1e-6)
    assert layer.weights == [] and layer.compute_output_shape((4, 3)) == (4, 3)
    # TF 2.15: the config keeps the arguments as given
    assert _config_round_trip(layer) == {
        "name": "normalization", "trainable": True, "dtype": "float32", "axis": (-1,),
        "invert": False, "mean": [1.0, 2, 3], "variance": [4.0, 4, 1]}
    inverse = L.experimental.preprocessing.Normalization(mean=2., variance=4., invert=True,
                                                         axis=None)
    np.testing.assert_allclose(_run(inverse(tf.constant(x_value))), 2 + 2 * x_value)
    # a zero variance divides by epsilon, not zero
    flat = L.Normalization(mean=np.array([1.]), variance=np.array([0.]))
    np.testing.assert_allclose(_run(flat(tf.constant([[1.5]]))), [[0.5 / 1e-7]], rtol=1e-6)
    assert flat.get_config()["mean"] == [1.0]


def test_normalization_weights_over_several_axes_and_its_gradient():
    x = tf.placeholder(tf.float64, [None, 2, 3])
    layer = L.Normalization(axis=(1, 2), dtype="float64")
    y = layer(x)
    assert [w.name for w in layer.weights] == ["normalization/mean:0",
                                               "normalization/variance:0",
                                               "normalization/count:0"]
    assert layer.trainable_weights == []
    rng = np.random.RandomState(0)
    mean, variance = rng.randn(2, 3), rng.uniform(0.5, 2, (2, 3))
    layer.set_weights([mean, variance, np.int64(7)])
    x_value = rng.randn(4, 2, 3)
    np.testing.assert_allclose(_run(y, {x: x_value}), (x_value - mean) / np.sqrt(variance),
                               rtol=1e-12)
    with K.backend.get_session().as_default():
        error = compute_gradient_error(x, [4, 2, 3], y, [4, 2, 3], x_init_value=x_value,
                                       delta=1e-6)
    assert error < 1e-6


def test_normalization_errors_and_adapt_in_graph_mode():
    with pytest.raises(ValueError, match="both `mean` and `variance` must be set. Got mean: "
                                         "1.0 and variance: None"):
        L.Normalization(mean=1.0)
    with pytest.raises(ValueError, match=r"must be in the range \[-ndim, ndim\). Found ndim: "
                                         r"`3`, axis: \(3,\)"):
        L.Normalization(axis=3)(tf.placeholder(tf.float32, [None, 2, 3]))
    with pytest.raises(ValueError, match="to be kept must have known shape"):
        L.Normalization(axis=1)(tf.placeholder(tf.float32, [None, None, 3]))
    # TF 2.15 under tf.compat.v1 graph mode
    with pytest.raises(RuntimeError, match="`adapt` is only supported in tensorflow v2."):
        L.Normalization().adapt(np.zeros((4, 3), np.float32))
    assert issubclass(L.Normalization, L.experimental.preprocessing.PreprocessingLayer)


# --- Hashing, Discretization, CategoryEncoding ---------------------------------------------
def test_hashing_matches_tf():
    strings = tf.constant([["A"], ["B"], ["C"], ["D"], ["E"]])
    # TF 2.15: Hashing(...)(strings), FarmHash fingerprint64 or, with a salt, SipHash
    cases = [(L.Hashing(num_bins=3), strings, [1, 0, 1, 1, 2]),
             (L.Hashing(num_bins=3, salt=133), strings, [0, 0, 2, 1, 0]),
             (L.Hashing(num_bins=3, salt=[133, 137]), strings, [1, 2, 1, 0, 2]),
             (L.Hashing(num_bins=3, mask_value=""), tf.constant([["A"], [""], ["C"]]),
              [1, 0, 2]),
             (L.Hashing(num_bins=3), tf.constant([[1], [2], [3], [4]], tf.int64),
              [0, 1, 0, 2])]
    for layer, inputs, expected in cases:
        out = layer(inputs)
        assert out.dtype == tf.int64
        np.testing.assert_array_equal(_run(out)[:, 0], expected)
    encoded = [L.Hashing(num_bins=4, output_mode="one_hot")(tf.constant(["A", "B", "C"])),
               L.Hashing(num_bins=4, output_mode="multi_hot")(tf.constant([["A", "B"],
                                                                            ["C", "A"]])),
               L.Hashing(num_bins=4, output_mode="count")(tf.constant([["A", "A"],
                                                                        ["C", "A"]]))]
    one_hot, multi_hot, count = _run(encoded)
    np.testing.assert_array_equal(one_hot, [[1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]])
    np.testing.assert_array_equal(multi_hot, [[1, 0, 0, 0], [1, 0, 0, 1]])
    np.testing.assert_array_equal(count, [[2, 0, 0, 0], [1, 0, 0, 1]])
    assert one_hot.dtype == np.float32


def test_hashing_config_and_errors():
    assert _config_round_trip(L.Hashing(3, salt=[1, 2])) == {
        "name": "hashing", "trainable": True, "dtype": "int64", "num_bins": 3,
        "salt": [1, 2], "mask_value": None, "output_mode": "int", "sparse": False}
    assert L.Hashing(3, salt=5).salt == [5, 5]
    assert L.Hashing(4).compute_output_shape((None, 3)) == (None, 3)
    with pytest.raises(ValueError, match="cannot be `None` or non-positive values. Received: "
                                         "num_bins=0."):
        L.Hashing(0)
    with pytest.raises(ValueError, match="can only be a tuple of size 2 integers, or a "
                                         "single integer. Received: salt=x."):
        L.Hashing(3, salt="x")
    with pytest.raises(ValueError, match="Unkown value for `output_mode` argument of layer "
                                         "Hashing."):
        L.Hashing(3, output_mode="foo")
    with pytest.raises(ValueError, match="`sparse` may only be true if"):
        L.Hashing(3, sparse=True)


def test_discretization_buckets_by_boundaries():
    values = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]], np.float32)
    layer = L.Discretization(bin_boundaries=[0., 1., 2.])
    ids = layer(tf.constant(values))
    counts = L.Discretization(bin_boundaries=[0., 1., 2.], output_mode="count")(
        tf.constant(values))
    one_hot = L.experimental.preprocessing.Discretization(
        bin_boundaries=[0., 1., 2.], output_mode="one_hot")(tf.constant([-1.5, 1.0, 3.4]))
    ids_value, counts_value, one_hot_value = _run([ids, counts, one_hot])
    expected = np.searchsorted([0., 1., 2.], values, side="right")
    np.testing.assert_array_equal(ids_value, expected)
    assert ids_value.dtype == np.int64
    np.testing.assert_array_equal(counts_value, [[1, 1, 1, 1], [0, 2, 1, 1]])
    np.testing.assert_array_equal(one_hot_value, [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    assert _config_round_trip(layer) == {
        "name": "discretization", "trainable": True, "dtype": "int64",
        "bin_boundaries": [0.0, 1.0, 2.0], "num_bins": None, "epsilon": 0.01,
        "output_mode": "int", "sparse": False}
    assert L.Discretization([0.], dtype="float32").dtype == "int64"  # as TF 2.15
    with pytest.raises(ValueError, match="`num_bins` must be greater than or equal to 0."):
        L.Discretization(num_bins=-1)
    with pytest.raises(ValueError, match="Both `num_bins` and `bin_boundaries` should not "
                                         "be set."):
        L.Discretization(bin_boundaries=[0.], num_bins=2)
    with pytest.raises(RuntimeError, match="only supported in tensorflow v2"):
        L.Discretization(num_bins=3).adapt(values)


def test_category_encoding_modes_weights_and_checks():
    ids = tf.constant([[0, 1], [0, 0], [1, 2], [3, 1]])
    multi_hot = L.CategoryEncoding(num_tokens=4)(ids)
    count = L.CategoryEncoding(num_tokens=4, output_mode="count")(ids)
    one_hot = L.experimental.preprocessing.CategoryEncoding(
        num_tokens=4, output_mode="one_hot")(tf.constant([3, 2, 0, 1]))
    weighted = L.CategoryEncoding(num_tokens=4, output_mode="count")(
        tf.constant([[0, 1], [0, 0]]), count_weights=tf.constant([[.1, .2], [.1, .4]]))
    single = L.CategoryEncoding(num_tokens=4)(tf.constant(2))
    values = _run([multi_hot, count, one_hot, weighted, single])
    ids_value = _run(ids)
    np.testing.assert_array_equal(values[0], [np.isin(range(4), r) for r in ids_value])
    np.testing.assert_array_equal(values[1], [np.bincount(r, minlength=4) for r in ids_value])
    np.testing.assert_array_equal(values[2], np.eye(4)[[3, 2, 0, 1]])
    np.testing.assert_allclose(values[3], [[.1, .2, 0, 0], [.5, 0, 0, 0]], rtol=1e-6)
    np.testing.assert_array_equal(values[4], [0, 0, 1, 0])
    assert values[0].dtype == np.float32 and multi_hot.shape.as_list() == [4, 4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input values must be in the "
                                                             "range 0 <= values < num_tokens"):
        _run(L.CategoryEncoding(num_tokens=4)(tf.constant([1, 5])))
    with pytest.raises(ValueError, match="maximum supported output rank is 2"):
        L.CategoryEncoding(num_tokens=4, output_mode="one_hot")(tf.constant([[1, 2]]))
    layer = L.CategoryEncoding(4, output_mode="one_hot")
    assert layer.compute_output_shape((None,)).as_list() == [None, 4]
    assert layer.compute_output_shape((None, 1)).as_list() == [None, 4]
    assert L.CategoryEncoding(4).compute_output_shape((None, 3)).as_list() == [None, 4]
    assert _config_round_trip(L.CategoryEncoding(4)) == {
        "name": "category_encoding_9", "trainable": True, "dtype": "float32",
        "num_tokens": 4, "output_mode": "multi_hot", "sparse": False}
    with pytest.raises(ValueError, match="num_tokens must be set to use this layer."):
        L.CategoryEncoding()
    with pytest.raises(ValueError, match="`num_tokens` must be >= 1. Received: num_tokens=0."):
        L.CategoryEncoding(0)
    with pytest.raises(ValueError, match="Allowed values are: or one of the following "
                                         r"values: \('count', 'one_hot', 'multi_hot'\)"):
        L.CategoryEncoding(3, output_mode="int")


# --- LocallyConnected1D/2D -----------------------------------------------------------------
def _locally_connected_2d(x, kernel, bias, size, strides):
    """NumPy, channels_last: position (i, j) has its own kernel[i * cols + j], applied to
    the patch flattened in [rows, cols, channels] order."""
    rows = (x.shape[1] - size[0]) // strides[0] + 1
    cols = (x.shape[2] - size[1]) // strides[1] + 1
    out = np.zeros((x.shape[0], rows, cols, kernel.shape[-1]))
    for i in range(rows):
        for j in range(cols):
            r, c = i * strides[0], j * strides[1]
            patch = x[:, r:r + size[0], c:c + size[1]].reshape(x.shape[0], -1)
            out[:, i, j] = patch @ kernel[i * cols + j]
    return out + bias


def test_locally_connected_2d_matches_numpy_with_its_gradient():
    x_value = np.random.RandomState(0).randn(2, 5, 4, 3)
    x = tf.placeholder(tf.float64, [None, 5, 4, 3])
    layer = L.LocallyConnected2D(2, (2, 3), strides=(2, 1), dtype="float64",
                                 bias_initializer="glorot_uniform")
    y = layer(x)
    assert [(w.name, w.shape.as_list()) for w in layer.weights] == [
        ("locally_connected2d/kernel:0", [4, 18, 2]), ("locally_connected2d/bias:0", [2, 2, 2])]
    kernel, bias = K.backend.batch_get_value(layer.weights)
    expected = _locally_connected_2d(x_value, kernel, bias, (2, 3), (2, 1))
    np.testing.assert_allclose(_run(y, {x: x_value}), expected, rtol=1e-10)
    assert y.shape.as_list() == [None, 2, 2, 2]
    with K.backend.get_session().as_default():
        error = compute_gradient_error(x, [2, 5, 4, 3], y, [2, 2, 2, 2],
                                       x_init_value=x_value, delta=1e-6)
    assert error < 1e-6


def test_locally_connected_matches_tf_in_both_data_formats():
    x1 = np.random.RandomState(0).randn(2, 6, 2).astype(np.float32)
    x2 = np.random.RandomState(0).randn(1, 4, 5, 2).astype(np.float32)
    layers = [L.LocallyConnected1D(2, 3, strides=2),
              L.LocallyConnected2D(2, (2, 3), strides=(2, 1)),
              L.LocallyConnected2D(2, (2, 3), strides=(2, 1), data_format="channels_first"),
              L.LocallyConnected1D(2, 3, data_format="channels_first")]
    inputs = [x1, x2, x2.transpose(0, 3, 1, 2), x1.transpose(0, 2, 1)]
    outputs = [layer(tf.constant(v)) for layer, v in zip(layers, inputs)]
    for layer in layers:
        _set_random_weights(layer)
    # TF 2.15, the same layers and weights (RandomState(1).uniform(-1, 1) per weight)
    expected = [
        [[[-2.265271, -0.298843], [-1.273645, 0.421412]],
         [[-0.293445, 0.651497], [-2.736119, -1.449036]]],
        [[[[-5.459617, -0.708427], [-2.206911, 1.730557], [-2.26721, -2.138602]],
          [[3.345412, -2.329462], [1.536327, 0.383372], [-0.285811, 0.734016]]]],
        [[[[-7.111141, -0.713499, -2.33848], [2.463022, -0.801509, -1.994391]],
          [[-1.49319, 1.117916, -1.36739], [-4.056246, -0.149152, -2.109889]]]],
        [[[-3.570944, -5.38392, 0.528274, 1.881386], [-2.020661, -1.307021, 0.49577,
                                                      -0.968214]],
         [[-2.162144, -2.511008, 1.222936, 3.02911], [-1.722702, -0.309241, -1.322555,
                                                      -1.787854]]]]
    for value, want in zip(_run(outputs), expected):
        np.testing.assert_allclose(value, want, atol=2e-5)
    assert [w.shape.as_list() for w in layers[3].weights] == [[4, 6, 2], [4, 2]]


def test_locally_connected_shapes_config_and_errors():
    assert L.LocallyConnected1D(2, 3, strides=2).compute_output_shape(
        (None, 6, 2)).as_list() == [None, 2, 2]
    assert L.LocallyConnected2D(2, (2, 3), data_format="channels_first").compute_output_shape(
        (None, 2, 4, 5)).as_list() == [None, 2, 3, 3]
    config = _config_round_trip(L.LocallyConnected2D(2, 3))
    assert list(config)[3:] == [
        "filters", "kernel_size", "strides", "padding", "data_format", "activation",
        "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
        "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint",
        "implementation"]
    assert (config["kernel_size"], config["strides"], config["implementation"]) == (
        (3, 3), (1, 1), 1)
    with pytest.raises(ValueError, match='only "valid" is supported if implementation is 1'):
        L.LocallyConnected1D(2, 3, padding="same")
    with pytest.raises(ValueError, match="should be fully-defined"):
        L.LocallyConnected2D(2, 3)(tf.placeholder(tf.float32, [None, None, 5, 3]))
    with pytest.raises(TypeError):  # as TF 2.15's LocallyConnected1D
        L.LocallyConnected1D(2, 3)(tf.placeholder(tf.float32, [None, None, 3]))


# --- enable/disable_v2_dtype_behavior ------------------------------------------------------
def test_v2_dtype_behavior_defaults_to_floatx_and_autocasts():
    x64 = tf.placeholder(tf.float64, [None, 3])
    assert L.Dense(2)(x64).dtype == tf.float64  # TF1: the input's dtype
    L.enable_v2_dtype_behavior()
    try:
        # TF 2.15 with enable_v2_dtype_behavior(), the same calls
        dense = L.Dense(2)
        assert dense.get_config()["dtype"] == "float32"
        assert dense(x64).dtype == tf.float32 and dense.kernel.dtype.base_dtype == tf.float32
        assert L.Activation("relu")(tf.constant([1, 2])).dtype == tf.int32  # ints stay
        assert L.Activation("relu", dtype="float64")(tf.constant([1., 2])).dtype == tf.float64
        assert L.Lambda(lambda t: t * 2, autocast=False)(x64).dtype == tf.float64
        assert tf.layers.Dense(2)(x64).dtype == tf.float64  # not the tf.layers layers
        inputs = K.Input((3,), dtype="float64")
        assert inputs.dtype == tf.float64
        assert L.Lambda(lambda t: t * 2)(inputs).dtype == tf.float32
        assert L.BatchNormalization()(tf.placeholder(tf.float16, [None, 3])).dtype == \
            tf.float32
    finally:
        L.disable_v2_dtype_behavior()
    assert L.Dense(2).get_config()["dtype"] is None
    assert L.Dense(2)(x64).dtype == tf.float64
