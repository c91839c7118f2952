"""More tf.keras layers against NumPy references (explicit loops for the convolutions) and
TF 2.15's Keras (names, configs, shapes): LayerNormalization, PReLU, ThresholdedReLU,
the noise and spatial-dropout layers, ActivityRegularization, Dot, the 1-D/3-D padding,
cropping and upsampling layers, DepthwiseConv1D/2D, grouped Conv, 'gelu'; configs of the
separable and transposed convolutions; Dense on sparse inputs; merge layers' output
shapes from tuples; sublayers in dicts; a functional model's `add_loss`."""
import json
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

K = tf.keras
L = tf.keras.layers


@pytest.fixture(autouse=True)
def _keras(keras_graph):
    yield keras_graph


def _session():
    return K.backend.get_session()


def _run(fetches, feed=None):
    return _session().run(fetches, feed)


def _randn(*shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _set_random_weights(layer, seed=1):
    rng = np.random.RandomState(seed)
    values = [rng.uniform(-1, 1, size=tuple(w.shape.as_list())).astype(w.dtype.as_numpy_dtype)
              for w in layer.weights]
    layer.set_weights(values)
    return values


def _gradient_error(x, x_value, y, feed=None):
    """The largest difference between the Jacobian of `y` by `x` and its finite
    differences, at `x_value` (`feed`: the other placeholders' values)."""
    feed = dict(feed or {})
    feed.pop(x, None)
    y_shape = list(_run(y, {**feed, x: x_value}).shape)
    with _session().as_default():
        return compute_gradient_error(x, list(x_value.shape), y, y_shape,
                                      x_init_value=x_value, delta=1e-6,
                                      extra_feed_dict=feed)


def _config_round_trip(layer):
    config = layer.get_config()
    again = type(layer).from_config(config).get_config()
    config.pop("name")
    again.pop("name")
    assert again == config
    return layer.get_config()


# --- normalization and activations --------------------------------------------------------
def _layer_norm(x, axes, gamma, beta, eps):
    mean = x.mean(axis=tuple(axes), keepdims=True)
    var = x.var(axis=tuple(axes), keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


@pytest.mark.parametrize("axis, param_shape, shape", [
    (-1, (3,), (1, 1, 3)), ([1, 2], (4, 3), (1, 4, 3)), (1, (4,), (1, 4, 1))])
def test_layer_normalization_normalizes_each_example(axis, param_shape, shape):
    x = tf.placeholder(tf.float64, [2, 4, 3])
    layer = L.LayerNormalization(axis=axis, epsilon=1e-6, dtype="float64")
    y = layer(x)
    assert [w.name for w in layer.weights] == ["layer_normalization/gamma:0",
                                               "layer_normalization/beta:0"]
    gamma, beta = _set_random_weights(layer)
    assert gamma.shape == param_shape
    xv = _randn(2, 4, 3, dtype=np.float64)
    axes = layer.axis  # a list of non-negative axes once built, as TF's
    assert axes == ([2] if axis == -1 else [1, 2] if axis == [1, 2] else [1])
    expected = _layer_norm(xv, axes, gamma.reshape(shape), beta.reshape(shape), 1e-6)
    np.testing.assert_allclose(_run(y, {x: xv}), expected, rtol=1e-10, atol=1e-10)
    assert _gradient_error(x, xv, y) < 1e-7


def test_layer_normalization_config_and_errors():
    layer = L.LayerNormalization(center=False, gamma_regularizer="l2")
    y = layer(tf.placeholder(tf.float32, [None, 4, 3]))
    assert [w.name for w in layer.weights] == ["layer_normalization/gamma:0"]
    assert y.shape.as_list() == [None, 4, 3] and layer.supports_masking
    assert len(layer.losses) == 1
    config = _config_round_trip(layer)
    assert config["axis"] == [2] and config["epsilon"] == 0.001
    assert layer.compute_output_shape((None, 4, 3)) == (None, 4, 3)
    with pytest.raises(TypeError, match="Expected an int or a list/tuple of ints"):
        L.LayerNormalization(axis="x")
    with pytest.raises(ValueError, match="Invalid value for `axis` argument"):
        L.LayerNormalization(axis=3)(tf.placeholder(tf.float32, [None, 3]))
    with pytest.raises(ValueError, match="Duplicate axis"):
        L.LayerNormalization(axis=[1, -1])(tf.placeholder(tf.float32, [None, 3]))


def test_prelu_learns_a_slope_per_entry_or_shared():
    x = tf.placeholder(tf.float64, [2, 4, 3])
    layer = L.PReLU(dtype="float64")
    y = layer(x)
    assert [w.name for w in layer.weights] == ["p_re_lu/alpha:0"]
    (alpha,) = _set_random_weights(layer)
    assert alpha.shape == (4, 3)
    xv = _randn(2, 4, 3, dtype=np.float64)
    np.testing.assert_allclose(_run(y, {x: xv}), np.where(xv >= 0, xv, alpha * xv))
    assert _gradient_error(x, xv, y) < 1e-8
    shared = L.PReLU(alpha_initializer="ones", shared_axes=[1], dtype="float64")
    ys = shared(x)
    assert shared.alpha.shape.as_list() == [1, 3]
    assert shared.input_spec.axes == {2: 3}
    (alpha,) = _set_random_weights(shared, seed=3)
    np.testing.assert_allclose(_run(ys, {x: xv}), np.where(xv >= 0, xv, alpha * xv))
    config = _config_round_trip(shared)
    assert config["shared_axes"] == [1]
    assert config["alpha_initializer"] == {"class_name": "Ones", "config": {"dtype": "float32"}}


def test_thresholded_relu_and_gelu():
    xv = np.array([[-3.0, -0.5, 0.0, 0.5, 0.7, 3.0]], np.float32)
    layer = L.ThresholdedReLU(0.5)
    np.testing.assert_array_equal(_run(layer(tf.constant(xv))), np.where(xv > 0.5, xv, 0.0))
    assert _config_round_trip(layer)["theta"] == 0.5
    with pytest.raises(ValueError, match="should be >=0"):
        L.ThresholdedReLU(-1.0)
    gelu = K.activations.get("gelu")
    assert not hasattr(K.activations, "gelu")  # TF's v1 API exports it by name only
    assert K.activations.serialize(gelu) == "gelu"
    exact = np.array([[0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xv[0]]])
    out = gelu(tf.constant(xv))
    assert out.name.startswith("Gelu/")
    np.testing.assert_allclose(_run(out), exact, rtol=1e-6, atol=1e-7)
    approx = 0.5 * xv * (1 + np.tanh(np.sqrt(2 / np.pi) * (xv + 0.044715 * xv ** 3)))
    np.testing.assert_allclose(_run(gelu(tf.constant(xv), approximate=True)), approx,
                               rtol=1e-6, atol=1e-7)
    # TF 2.15: Dense(2, 'gelu', ones) on ones([1, 2]) -> 1.9545
    dense = L.Dense(2, activation="gelu", kernel_initializer="ones")
    y = dense(tf.ones([1, 2]))
    np.testing.assert_allclose(_run(y), [[1.9545, 1.9545]], rtol=1e-4)
    x = tf.placeholder(tf.float64, [6])
    assert _gradient_error(x, xv[0].astype(np.float64), gelu(x)) < 1e-8


# --- noise, dropout, activity regularization -----------------------------------------------
def test_noise_layers_are_the_identity_in_inference_and_random_in_training():
    xv = np.ones((200, 50), np.float32)
    x = tf.constant(xv)
    for layer in (L.GaussianNoise(0.5, seed=1), L.GaussianDropout(0.5, seed=1)):
        assert layer.supports_masking
        np.testing.assert_array_equal(_run(layer(x)), xv)  # learning phase 0
        np.testing.assert_array_equal(_run(layer(x, training=False)), xv)
        out = _run(layer(x, training=True))
        assert abs(out.mean() - 1.0) < 0.02
        assert layer.compute_output_shape((None, 50)) == tf.TensorShape([None, 50])
    # GaussianNoise: + N(0, 0.5); GaussianDropout: * N(1, sqrt(rate / (1 - rate)) = 1)
    assert abs(_run(L.GaussianNoise(0.5)(x, training=True)).std() - 0.5) < 0.02
    assert abs(_run(L.GaussianDropout(0.5)(x, training=True)).std() - 1.0) < 0.03
    assert L.GaussianNoise(0.1).get_config() == {
        "name": "gaussian_noise_2", "trainable": True, "dtype": None, "stddev": 0.1,
        "seed": None}
    learning = K.backend.learning_phase()
    y = L.GaussianNoise(1.0)(x)
    assert _run(y, {learning: 1}).std() > 0.5


@pytest.mark.parametrize("make, shape, spatial", [
    (lambda: L.SpatialDropout1D(0.5), (8, 30, 6), (1,)),
    (lambda: L.SpatialDropout2D(0.5), (8, 5, 6, 6), (1, 2)),
    (lambda: L.SpatialDropout2D(0.5, data_format="channels_first"), (8, 6, 5, 6), (2, 3)),
    (lambda: L.SpatialDropout3D(0.5), (8, 3, 4, 5, 6), (1, 2, 3))])
def test_spatial_dropout_drops_whole_feature_maps(make, shape, spatial):
    layer = make()
    xv = np.ones(shape, np.float32)
    out = _run(layer(tf.constant(xv), training=True))
    assert set(np.unique(out)) <= {0.0, 2.0}  # kept maps scaled by 1 / (1 - rate)
    first = out[tuple(slice(0, 1) if a in spatial else slice(None)
                      for a in range(len(shape)))]
    np.testing.assert_array_equal(out, np.broadcast_to(first, shape))  # same along space
    assert 0 < out.mean() < 2
    np.testing.assert_array_equal(_run(layer(tf.constant(xv))), xv)
    assert set(layer.get_config()) == {"name", "trainable", "dtype", "rate", "noise_shape",
                                       "seed"}
    with pytest.raises(ValueError, match="expected ndim=%d" % len(shape)):
        make()(tf.ones([2] * (len(shape) + 1)))


def test_activity_regularization_adds_its_loss():
    xv = _randn(4, 3)
    layer = L.ActivityRegularization(l1=0.1, l2=0.01)
    y = layer(tf.constant(xv))
    (loss,) = layer.losses
    expected = (0.1 * np.abs(xv).sum() + 0.01 * np.square(xv).sum()) / 4
    np.testing.assert_allclose(_run(loss), expected, rtol=1e-5)
    np.testing.assert_array_equal(_run(y), xv)
    assert layer.get_config() == {"name": "activity_regularization", "trainable": True,
                                  "dtype": "float32", "l1": 0.1, "l2": 0.01}


# --- Dot --------------------------------------------------------------------------------------
def test_dot_of_two_inputs_along_axes():
    a = tf.placeholder(tf.float64, [2, 3])
    b = tf.placeholder(tf.float64, [2, 3])
    av, bv = _randn(2, 3, seed=3, dtype=np.float64), _randn(2, 3, seed=4, dtype=np.float64)
    feed = {a: av, b: bv}
    dot = L.Dot(axes=1)([a, b])
    assert dot.shape.as_list() == [2, 1]
    np.testing.assert_allclose(_run(dot, feed), (av * bv).sum(axis=1, keepdims=True))
    cosine = L.dot([a, b], axes=-1, normalize=True)
    norms = np.linalg.norm(av, axis=1) * np.linalg.norm(bv, axis=1)
    np.testing.assert_allclose(_run(cosine, feed)[:, 0], (av * bv).sum(axis=1) / norms)
    assert _gradient_error(a, av, cosine, feed) < 1e-8
    x3 = tf.placeholder(tf.float64, [2, 4, 3])
    y3 = tf.placeholder(tf.float64, [2, 5, 3])
    xv, yv = _randn(2, 4, 3, seed=5, dtype=np.float64), _randn(2, 5, 3, seed=6,
                                                               dtype=np.float64)
    out = L.Dot(axes=2)([x3, y3])
    assert out.shape.as_list() == [2, 4, 5]
    np.testing.assert_allclose(_run(out, {x3: xv, y3: yv}), np.einsum("bik,bjk->bij", xv, yv))
    z = tf.placeholder(tf.float64, [2, 4, 2])
    zv = _randn(2, 4, 2, seed=7, dtype=np.float64)
    out = L.Dot(axes=(1, 1))([x3, z])
    np.testing.assert_allclose(_run(out, {x3: xv, z: zv}), np.einsum("bki,bkj->bij", xv, zv))
    assert _gradient_error(x3, xv, out, {z: zv}) < 1e-8


def test_dot_shapes_config_and_errors():
    layer = L.Dot(axes=(1, 1), name="d")
    assert layer.compute_output_shape([(None, 4, 3), (None, 4, 2)]) == \
        tf.TensorShape([None, 3, 2])
    assert L.Dot(axes=1).compute_output_shape([(None, 3), (None, 3)]) == \
        tf.TensorShape([None, 1])
    assert layer.get_config() == {"name": "d", "trainable": True, "dtype": None,
                                  "axes": (1, 1), "normalize": False}
    with pytest.raises(ValueError, match=r"Incompatible input shapes: axis values 4 \(at axis "
                                         r"1\) != 5 \(at axis 1\)"):
        L.Dot(axes=1)([tf.ones([2, 4, 3]), tf.ones([2, 5, 3])])
    with pytest.raises(ValueError, match="it should contain two elements"):
        L.Dot(axes=(1, 2, 3))
    with pytest.raises(TypeError, match="it should be a list or an int"):
        L.Dot(axes="x")


# --- padding, cropping, upsampling -------------------------------------------------------
@pytest.mark.parametrize("make, shape, reference, out_shape", [
    (lambda: L.ZeroPadding1D((1, 2)), (2, 4, 3),
     lambda x: np.pad(x, [(0, 0), (1, 2), (0, 0)]), (None, 7, 3)),
    (lambda: L.ZeroPadding3D(((1, 0), (0, 2), 1)), (2, 2, 2, 2, 1),
     lambda x: np.pad(x, [(0, 0), (1, 0), (0, 2), (1, 1), (0, 0)]), (None, 3, 4, 4, 1)),
    (lambda: L.ZeroPadding3D(1, data_format="channels_first"), (2, 1, 2, 2, 2),
     lambda x: np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)]), (None, 1, 4, 4, 4)),
    (lambda: L.Cropping1D((1, 0)), (2, 4, 3), lambda x: x[:, 1:], (None, 3, 3)),
    (lambda: L.Cropping3D(((1, 0), (0, 1), 1)), (2, 3, 3, 3, 1),
     lambda x: x[:, 1:, :-1, 1:-1], (None, 2, 2, 1, 1)),
    (lambda: L.UpSampling1D(3), (2, 4, 3), lambda x: np.repeat(x, 3, axis=1), (None, 12, 3)),
    (lambda: L.UpSampling3D((1, 2, 3)), (2, 2, 2, 2, 1),
     lambda x: np.repeat(np.repeat(x, 2, axis=2), 3, axis=3), (None, 2, 4, 6, 1))])
def test_padding_cropping_upsampling(make, shape, reference, out_shape):
    layer = make()
    x = tf.placeholder(tf.float64, (None,) + shape[1:])
    y = layer(x)
    assert y.shape.as_list() == list(out_shape)
    assert layer.compute_output_shape((None,) + shape[1:]) == tf.TensorShape(out_shape)
    xv = _randn(*shape, seed=2, dtype=np.float64)
    np.testing.assert_array_equal(_run(y, {x: xv}), reference(xv))
    _config_round_trip(layer)
    assert _gradient_error(x, xv, y) < 1e-8


def test_padding_cropping_configs_and_errors():
    # TF 2.15's configs
    assert L.ZeroPadding1D((1, 2)).get_config()["padding"] == (1, 2)
    assert L.ZeroPadding3D(((1, 0), (0, 2), 1)).get_config()["padding"] == \
        ((1, 0), (0, 2), (1, 1))
    assert L.Cropping1D((1, 0)).get_config() == {"name": "cropping1d", "trainable": True,
                                                 "dtype": None, "cropping": (1, 0)}
    assert L.UpSampling3D((1, 2, 3)).get_config()["size"] == (1, 2, 3)
    assert L.UpSampling1D(3).get_config()["size"] == 3
    with pytest.raises(ValueError, match="`padding` should have 3 elements"):
        L.ZeroPadding3D((1, 1))
    with pytest.raises(ValueError, match="`cropping` should be either an int, a tuple of 3 "
                                         "ints"):
        L.Cropping3D(1.5)
    with pytest.raises(ValueError, match="cropping parameter of Cropping layer must be "
                                         "greater than the input shape"):
        L.Cropping1D((2, 2))(tf.ones([1, 4, 3]))


# --- convolutions -------------------------------------------------------------------------
def _depthwise_reference(x, kernel, bias, strides, dilation):
    """A valid depthwise convolution of NHWC `x` by an explicit loop."""
    n, h, w, c = x.shape
    kh, kw, _, m = kernel.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh, ow = (h - eh) // strides[0] + 1, (w - ew) // strides[1] + 1
    out = np.zeros((n, oh, ow, c * m))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for ch in range(c):
                    for q in range(m):
                        total = 0.0
                        for di in range(kh):
                            for dj in range(kw):
                                total += x[b, i * strides[0] + di * dilation[0],
                                           j * strides[1] + dj * dilation[1], ch] * \
                                    kernel[di, dj, ch, q]
                        out[b, i, j, ch * m + q] = total + bias[ch * m + q]
    return out


@pytest.mark.parametrize("kwargs, strides, dilation", [
    (dict(kernel_size=3, depth_multiplier=2), (1, 1), (1, 1)),
    (dict(kernel_size=(2, 3), strides=2), (2, 2), (1, 1)),
    (dict(kernel_size=2, dilation_rate=2), (1, 1), (2, 2))])
def test_depthwise_conv2d_against_a_loop(kwargs, strides, dilation):
    x = tf.placeholder(tf.float64, [2, 6, 7, 3])
    layer = L.DepthwiseConv2D(dtype="float64", **kwargs)
    y = layer(x)
    assert [w.name for w in layer.weights] == ["depthwise_conv2d/depthwise_kernel:0",
                                               "depthwise_conv2d/bias:0"]
    kernel, bias = _set_random_weights(layer)
    xv = _randn(2, 6, 7, 3, dtype=np.float64)
    expected = _depthwise_reference(xv, kernel, bias, strides, dilation)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(_run(y, {x: xv}), expected, rtol=1e-10, atol=1e-10)
    assert layer.compute_output_shape((None, 6, 7, 3)) == \
        tf.TensorShape((None,) + expected.shape[1:])
    assert _gradient_error(x, xv, y) < 1e-7


def test_depthwise_conv_same_padding_channels_first_and_1d():
    # TF 2.15: DepthwiseConv2D(3, depth_multiplier=2, padding="same") on [?, 5, 5, 2] with
    # hdr.py's weights (uniform(-1, 1), seed 1) and input (randn, seed 2) sums to -41.5878
    x = tf.placeholder(tf.float32, [None, 5, 5, 2])
    layer = L.DepthwiseConv2D(3, depth_multiplier=2, padding="same")
    y = layer(x)
    _set_random_weights(layer)
    out = _run(y, {x: _randn(2, 5, 5, 2, seed=2)})
    assert out.shape == (2, 5, 5, 4)
    np.testing.assert_allclose(out.sum(), -41.5878, rtol=1e-5)
    xv = _randn(2, 6, 7, 3, dtype=np.float64)
    first = L.DepthwiseConv2D(2, dtype="float64", data_format="channels_first",
                              activation="relu")
    yf = first(tf.constant(xv.transpose(0, 3, 1, 2)))
    kernel, bias = _set_random_weights(first)
    expected = np.maximum(_depthwise_reference(xv, kernel, bias, (1, 1), (1, 1)), 0)
    np.testing.assert_allclose(_run(yf), expected.transpose(0, 3, 1, 2), atol=1e-10)
    one = L.DepthwiseConv1D(3, depth_multiplier=2, dtype="float64")
    x1 = _randn(2, 6, 3, dtype=np.float64)
    y1 = one(tf.constant(x1))
    assert [w.shape.as_list() for w in one.weights] == [[3, 3, 2], [6]]
    kernel, bias = _set_random_weights(one)
    expected = _depthwise_reference(x1[:, None], kernel[None], bias, (1, 1), (1, 1))[:, 0]
    np.testing.assert_allclose(_run(y1), expected, atol=1e-10)


def test_depthwise_conv_config_is_keras():
    layer = L.DepthwiseConv2D(3, depth_multiplier=2, padding="same", name="dw")
    config = _config_round_trip(layer)
    # TF 2.15's keys: Conv's without filters and kernel_*, plus the depthwise ones
    assert sorted(config) == [
        "activation", "activity_regularizer", "bias_constraint", "bias_initializer",
        "bias_regularizer", "data_format", "depth_multiplier", "depthwise_constraint",
        "depthwise_initializer", "depthwise_regularizer", "dilation_rate", "dtype", "groups",
        "kernel_size", "name", "padding", "strides", "trainable", "use_bias"]
    assert config["kernel_size"] == (3, 3) and config["groups"] == 1
    with pytest.raises(ValueError, match="Causal padding is only supported"):
        L.DepthwiseConv2D(3, padding="causal")
    with pytest.raises(ValueError, match="should have rank 4"):
        L.DepthwiseConv2D(3)(tf.placeholder(tf.float32, [None, 5, 5, 2, 1]))


def _grouped_reference(x, kernel, bias, groups):
    """A valid, stride-1 grouped 2-D convolution of NHWC `x` by an explicit loop."""
    n, h, w, c = x.shape
    kh, kw, cg, f = kernel.shape
    fg = f // groups
    out = np.zeros((n, h - kh + 1, w - kw + 1, f))
    for b in range(n):
        for i in range(h - kh + 1):
            for j in range(w - kw + 1):
                for o in range(f):
                    g = o // fg
                    patch = x[b, i:i + kh, j:j + kw, g * cg:(g + 1) * cg]
                    out[b, i, j, o] = (patch * kernel[:, :, :, o]).sum() + bias[o]
    return out


def test_grouped_convolutions_against_a_loop():
    x = tf.placeholder(tf.float64, [2, 5, 5, 4])
    layer = L.Conv2D(6, 3, groups=2, dtype="float64")
    y = layer(x)
    assert layer.kernel.shape.as_list() == [3, 3, 2, 6]
    kernel, bias = _set_random_weights(layer)
    xv = _randn(2, 5, 5, 4, dtype=np.float64)
    np.testing.assert_allclose(_run(y, {x: xv}), _grouped_reference(xv, kernel, bias, 2),
                               rtol=1e-10, atol=1e-10)
    assert _gradient_error(x, xv, y) < 1e-7
    assert _config_round_trip(layer)["groups"] == 2
    # a causal grouped Conv1D: the 2-D reference on a height of 1, left-padded
    one = L.Conv1D(6, 2, groups=3, padding="causal", dtype="float64")
    x1 = _randn(2, 5, 3, dtype=np.float64)
    y1 = one(tf.constant(x1))
    kernel, bias = _set_random_weights(one)
    padded = np.pad(x1, [(0, 0), (1, 0), (0, 0)])[:, None]
    np.testing.assert_allclose(_run(y1), _grouped_reference(padded, kernel[None], bias, 3)[:, 0],
                               atol=1e-10)
    with pytest.raises(ValueError, match="The number of input channels must be evenly "
                                         "divisible by the number of groups"):
        L.Conv2D(4, 3, groups=2)(tf.placeholder(tf.float32, [None, 5, 5, 3]))


def test_separable_and_transposed_convolution_configs_are_keras():
    conv_keys = ["activation", "activity_regularizer", "bias_constraint", "bias_initializer",
                 "bias_regularizer", "data_format", "dilation_rate", "dtype", "filters",
                 "groups", "kernel_constraint", "kernel_initializer", "kernel_regularizer",
                 "kernel_size", "name", "padding", "strides", "trainable", "use_bias"]
    separable = L.SeparableConv1D(4, 3, strides=2)
    config = _config_round_trip(separable)
    assert L.SeparableConv1D.from_config(config).kernel_size == (3,)
    assert sorted(config) == sorted(conv_keys + [
        "depth_multiplier", "depthwise_constraint", "depthwise_initializer",
        "depthwise_regularizer", "pointwise_constraint", "pointwise_initializer",
        "pointwise_regularizer"])
    # TF 2.15 writes Conv's unused kernel_initializer too (its default)
    assert config["kernel_initializer"]["class_name"] == "GlorotUniform"
    two = L.SeparableConv2D(3, 3, depth_multiplier=2)
    assert L.SeparableConv2D.from_config(_config_round_trip(two)).depth_multiplier == 2
    assert sorted(_config_round_trip(L.Conv2DTranspose(2, 3))) == sorted(
        conv_keys + ["output_padding"])
    keys3 = sorted(_config_round_trip(L.Conv3DTranspose(2, 3)))
    assert keys3 == sorted([k for k in conv_keys if k != "dilation_rate"] + ["output_padding"])
    config = L.Conv2D(4, 3).get_config()
    assert list(config)[list(config).index("dilation_rate") + 1] == "groups"  # Keras' order


# --- sparse inputs, shapes of merges ---------------------------------------------------------
def test_dense_on_sparse_inputs():
    st = tf.SparseTensor(indices=[[0, 1], [2, 3]], values=[2.0, 3.0], dense_shape=[3, 4])
    layer = L.Dense(2, activation="relu")
    y = layer(st)
    kernel, bias = _set_random_weights(layer)
    dense = np.zeros((3, 4), np.float32)
    dense[0, 1], dense[2, 3] = 2.0, 3.0
    np.testing.assert_allclose(_run(y), np.maximum(dense @ kernel + bias, 0), rtol=1e-6)
    # a sparse Input, in a model
    sp = K.Input(shape=(4,), sparse=True, name="spin")
    assert isinstance(sp, tf.SparseTensor) and sp.values.name == "spin/values:0"
    out = L.Dense(2, kernel_initializer="ones", name="sd")(sp)
    model = K.Model(sp, out)
    assert out.shape.as_list() == [None, 2] and model.layers[0].get_config()["sparse"]
    _run(tf.variables_initializer(model.weights))
    value = tf.SparseTensorValue([[0, 1], [1, 3]], [2.0, 3.0], [2, 4])
    np.testing.assert_array_equal(_run(out, {sp: value}), [[2.0, 2.0], [3.0, 3.0]])
    np.testing.assert_array_equal(_run(model(st)), [[2.0, 2.0], [0.0, 0.0], [3.0, 3.0]])


def test_merge_output_shapes_from_tuples_and_lists():
    # TF 2.15: (?, 3) and (?, 5)
    assert L.Add().compute_output_shape([(None, 3), (None, 3)]) == tf.TensorShape([None, 3])
    assert L.Multiply().compute_output_shape([[None, 4, 1], [None, 4, 3]]) == \
        tf.TensorShape([None, 4, 3])
    assert L.Concatenate().compute_output_shape([(None, 2), (None, 3)]) == \
        tf.TensorShape([None, 5])
    assert L.Concatenate().compute_output_shape([[None, 2], [None, 3]]) == \
        tf.TensorShape([None, 5])
    assert L.Concatenate(axis=1).compute_output_shape(
        [tf.TensorShape([None, 2, 3]), (None, 4, 3)]) == tf.TensorShape([None, 6, 3])
    # TF 2.15 returns the shape it is given for these
    assert L.Dropout(0.3).compute_output_shape((None, 4)) == (None, 4)
    assert L.Activation("relu").compute_output_shape((None, 4)) == (None, 4)
    assert L.BatchNormalization().compute_output_shape((None, 4)) == (None, 4)


# --- model structure -----------------------------------------------------------------------
def test_sublayers_in_a_dict_are_ordered_by_key():
    class Blocks(K.Model):
        def __init__(self):
            super().__init__()
            self.blocks = {"b": L.Dense(1, name="b"), "a": L.Dense(2, name="a")}

        def call(self, x):
            return self.blocks["b"](x) + self.blocks["a"](x)[:, :1]

    model = Blocks()
    model(tf.ones([1, 3]))
    # TF 2.15: ['a', 'b'] and [(3, 2), (2,), (3, 1), (1,)]
    assert [layer.name for layer in model.layers] == ["a", "b"]
    assert [w.shape for w in model.get_weights()] == [(3, 2), (2,), (3, 1), (1,)]


def test_functional_add_loss_is_added_again_when_the_model_is_called():
    inp = K.Input(shape=(3,))
    h = L.Dense(2, kernel_initializer="ones")(inp)
    encoder = K.Model(inp, h)
    encoder.add_loss(tf.reduce_mean(h))
    assert [layer.name for layer in encoder.layers] == [
        "input_1", "dense", "tf_op_layer_Mean", "add_loss"]
    encoder.add_loss(tf.reduce_sum(inp) * 2.0)
    x2 = K.Input(shape=(3,))
    outer = K.Model(x2, encoder(x2))
    # TF 2.15's names
    assert [t.name for t in outer.losses] == [
        "Mean:0", "model/tf_op_layer_Mean/Mean:0", "mul:0", "model/tf_op_layer_mul/mul:0"]
    assert outer.get_losses_for(None) == []
    assert [t.name for t in outer.get_losses_for(x2)] == [
        "model/tf_op_layer_Mean/Mean:0", "model/tf_op_layer_mul/mul:0"]
    values = _run(outer.losses, {inp: np.ones((1, 3)), x2: 2 * np.ones((1, 3))})
    np.testing.assert_allclose(values, [3.0, 6.0, 6.0, 12.0])  # TF: [3, 6, 6, 12]
    # a Sequential model trains on it: mse 9 + sum 12 (TF: 21.0)
    seq = K.Sequential([L.Dense(2, input_shape=(3,), kernel_initializer="ones")])
    seq.add_loss(tf.reduce_sum(seq.outputs[0]))
    seq.compile("sgd", "mse")
    assert seq.evaluate(np.ones((2, 3), np.float32), np.zeros((2, 2), np.float32),
                        verbose=0) == pytest.approx(21.0)


def test_new_layers_serialize_by_class_name():
    for layer in (L.LayerNormalization(axis=1), L.PReLU(shared_axes=[1]), L.Dot(axes=2),
                  L.DepthwiseConv2D(3), L.SpatialDropout2D(0.2), L.Masking(1.0),
                  L.UpSampling3D(2), L.Cropping1D(2)):
        config = L.serialize(layer)
        assert config["class_name"] == type(layer).__name__
        json.dumps(config)
        again = L.deserialize(config)
        assert type(again) is type(layer) and again.get_config() == layer.get_config()
