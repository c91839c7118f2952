"""dtype conversion, color spaces and color adjustments (ops/image/color_ops.py) against
NumPy / colorsys references; gradients of the float formulas checked numerically."""
import colorsys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

RGB = np.random.RandomState(0).uniform(0, 1, [4, 5, 3]).astype(np.float32)
U8 = (RGB * 255).astype(np.uint8)


def _hsv(rgb):
    return np.array([colorsys.rgb_to_hsv(*p) for p in rgb.reshape(-1, 3)]).reshape(rgb.shape)


def _rgb(hsv):
    return np.array([colorsys.hsv_to_rgb(*p) for p in hsv.reshape(-1, 3)]).reshape(hsv.shape)


def test_convert_image_dtype(sess):
    cases = [(np.array([0, 128, 255], np.uint8), tf.float32, [0.0, 128 / 255, 1.0]),
             (np.array([0.0, 0.5, 1.0], np.float32), tf.uint8, [0, 127, 255]),
             (np.array([0, 128, 255], np.uint8), tf.int32, [0, 128 << 23, 255 << 23]),
             (np.array([0, 2 ** 30, 2 ** 31 - 1], np.int32), tf.uint8, [0, 128, 255]),
             (np.array([0.25], np.float64), tf.float16, [0.25])]
    for value, dtype, want in cases:
        y = tf.image.convert_image_dtype(value, dtype)
        assert y.dtype == dtype
        np.testing.assert_allclose(sess.run(y), want, rtol=1e-6)
    over = tf.image.convert_image_dtype(np.array([1.5, -0.5], np.float32), tf.uint8,
                                        saturate=True)
    np.testing.assert_array_equal(sess.run(over), [255, 0])
    same = tf.constant(U8)
    assert tf.image.convert_image_dtype(same, tf.uint8).op.type == "Identity"
    with pytest.raises(AttributeError):
        tf.image.convert_image_dtype(same, tf.string)


def test_hsv_round_trip(sess):
    hsv = sess.run(tf.image.rgb_to_hsv(RGB))
    np.testing.assert_allclose(hsv, _hsv(RGB), atol=1e-6)
    np.testing.assert_allclose(sess.run(tf.image.hsv_to_rgb(hsv)), RGB, atol=1e-6)
    gray = np.full([2, 3], 0.4, np.float32)
    np.testing.assert_allclose(sess.run(tf.image.rgb_to_hsv(gray)), _hsv(gray), atol=1e-7)
    with pytest.raises(ValueError, match="Dimension must be 3 but is 4"):
        tf.image.rgb_to_hsv(tf.zeros([2, 4]))
    with pytest.raises(TypeError):
        tf.image.rgb_to_hsv(U8)


def test_grayscale(sess):
    gray = tf.image.rgb_to_grayscale(RGB)
    assert gray.shape.as_list() == [4, 5, 1]
    want = RGB @ np.array([0.2989, 0.5870, 0.1140], np.float32)
    np.testing.assert_allclose(sess.run(gray)[..., 0], want, rtol=1e-6)
    gray8 = tf.image.rgb_to_grayscale(U8)
    assert gray8.dtype == tf.uint8
    rgb = tf.image.grayscale_to_rgb(gray)
    assert rgb.shape.as_list() == [4, 5, 3]
    np.testing.assert_allclose(sess.run(rgb), np.repeat(sess.run(gray), 3, -1))
    assert tf.image.grayscale_to_rgb(tf.placeholder(tf.float32, [None, 2, 1])).shape.as_list() \
        == [None, 2, 3]
    with pytest.raises(ValueError, match="should be size 1"):
        tf.image.grayscale_to_rgb(RGB)


def test_adjustments_float(sess):
    out = sess.run(tf.image.adjust_brightness(RGB, 0.1))
    np.testing.assert_allclose(out, RGB + 0.1, rtol=1e-6)
    mean = RGB.mean(axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(sess.run(tf.image.adjust_contrast(RGB, 1.5)),
                               (RGB - mean) * 1.5 + mean, rtol=1e-5, atol=1e-6)
    hsv = _hsv(RGB)
    for delta in (0.2, -0.7):
        shifted = hsv.copy()
        shifted[..., 0] = (shifted[..., 0] + delta) % 1.0
        np.testing.assert_allclose(sess.run(tf.image.adjust_hue(RGB, delta)), _rgb(shifted),
                                   atol=2e-6)
    for factor in (0.5, 3.0):
        scaled = hsv.copy()
        scaled[..., 1] = np.clip(scaled[..., 1] * factor, 0, 1)
        np.testing.assert_allclose(sess.run(tf.image.adjust_saturation(RGB, factor)),
                                   _rgb(scaled), atol=2e-6)


def test_adjustments_keep_integer_types(sess):
    for fn in (lambda x: tf.image.adjust_brightness(x, 0.1),
               lambda x: tf.image.adjust_contrast(x, 1.5),
               lambda x: tf.image.adjust_hue(x, 0.2),
               lambda x: tf.image.adjust_saturation(x, 0.5)):
        y = fn(U8)
        assert y.dtype == tf.uint8 and y.shape.as_list() == [4, 5, 3]
        assert sess.run(y).dtype == np.uint8
    bright = sess.run(tf.image.adjust_brightness(U8, 0.5))
    want = np.clip(U8 / 255 + 0.5, 0, 1) * 255.5
    np.testing.assert_array_equal(bright, want.astype(np.uint8))  # saturated, as TF


def test_per_image_standardization(sess):
    for image in (RGB, U8, np.stack([RGB, RGB * 2])):
        y = tf.image.per_image_standardization(image)
        assert y.dtype == tf.float32
        x = image.astype(np.float64)  # TF casts, it does not rescale a uint8 image
        axes = (-1, -2, -3)
        std = np.maximum(x.std(axis=axes, keepdims=True), 1 / np.sqrt(np.prod(x.shape[-3:])))
        np.testing.assert_allclose(sess.run(y), (x - x.mean(axis=axes, keepdims=True)) / std,
                                   rtol=1e-4, atol=1e-5)
    flat = sess.run(tf.image.per_image_standardization(np.ones([2, 2, 1], np.float32)))
    np.testing.assert_array_equal(flat, 0.0)
    # TF 2.21's values: uint8 and float16 images give float32, from the raw pixel values
    for dtype in (np.uint8, np.float16, np.int32):
        y = tf.image.per_image_standardization(np.array([[[0], [10]], [[20], [30]]], dtype))
        assert y.dtype == tf.float32
        np.testing.assert_allclose(sess.run(y).ravel(),
                                   [-1.3416408, -0.4472136, 0.4472136, 1.3416408], rtol=1e-6)


def test_random_adjustments(sess):
    tf.set_random_seed(1)
    for fn in (lambda x: tf.image.random_brightness(x, 0.2, seed=1),
               lambda x: tf.image.random_contrast(x, 0.5, 1.5, seed=1),
               lambda x: tf.image.random_hue(x, 0.2, seed=1),
               lambda x: tf.image.random_saturation(x, 0.5, 1.5, seed=1)):
        y = fn(RGB)
        first, second = sess.run(y), sess.run(y)
        assert first.shape == RGB.shape and not np.array_equal(first, second)
    delta = sess.run(tf.image.random_brightness(RGB, 0.2, seed=2)) - RGB
    assert np.allclose(delta, delta.flat[0], atol=1e-6) and abs(delta.flat[0]) <= 0.2
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        tf.image.random_brightness(RGB, -1.0)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(RGB, 1.0, 0.5)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tf.image.random_saturation(RGB, -1.0, 0.5)
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tf.image.random_hue(RGB, 0.6)


@pytest.mark.parametrize("fn", [tf.image.rgb_to_hsv,
                                lambda x: tf.image.adjust_contrast(x, 1.7),
                                lambda x: tf.image.adjust_hue(x, 0.1),
                                lambda x: tf.image.adjust_saturation(x, 0.6),
                                tf.image.per_image_standardization])
def test_gradients(graph, fn):
    # distinct channel values, away from the hue's branch points
    x0 = np.random.RandomState(3).uniform(0.1, 0.9, [2, 2, 3])
    x0[..., 0] += 0.05
    x = tf.placeholder(tf.float32, x0.shape)
    y = fn(x)
    with tf.Session():
        err = compute_gradient_error(x, list(x0.shape), y, list(x0.shape),
                                     x_init_value=x0.astype(np.float32), delta=1e-3)
    assert err < 5e-3
    x64 = tf.placeholder(tf.float64, x0.shape)
    if fn is tf.image.rgb_to_hsv:
        with tf.Session():
            err = compute_gradient_error(x64, list(x0.shape), fn(x64), list(x0.shape),
                                         x_init_value=x0, delta=1e-6)
        assert err < 1e-6


def test_adjust_gamma(sess):
    np.testing.assert_allclose(sess.run(tf.image.adjust_gamma(RGB, 2.2, 0.9)),
                               0.9 * RGB ** 2.2, rtol=1e-5)
    out = tf.image.adjust_gamma(U8, 0.5)
    assert out.dtype == tf.uint8
    want = np.clip(np.sqrt(U8 / 255.0), 0, 1) * 255.5
    assert np.abs(sess.run(out).astype(int) - want.astype(int)).max() <= 1
    with pytest.raises(ValueError, match="Gamma should be a non-negative real number"):
        tf.image.adjust_gamma(RGB, -1.0)
    gamma = tf.placeholder(tf.float32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Gamma should be"):
        sess.run(tf.image.adjust_gamma(RGB, gamma), {gamma: -1.0})


def test_adjust_gamma_checks_a_constant_tensor_when_it_runs(sess):
    # TF's _assert makes an Assert op of any Tensor condition, constant or not
    out = tf.image.adjust_gamma(RGB, tf.constant(-1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Gamma should be"):
        sess.run(out)
    np.testing.assert_allclose(sess.run(tf.image.adjust_gamma(RGB, tf.constant(2.0))),
                               RGB ** 2, rtol=1e-5)


def test_rgb_to_grayscale_of_unknown_rank(sess):
    ph = tf.placeholder(tf.float32)
    gray = tf.image.rgb_to_grayscale(ph)
    rgb = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3) / 144
    want = (rgb @ np.array([0.2989, 0.5870, 0.1140], np.float32))[..., None]
    np.testing.assert_allclose(sess.run(gray, {ph: rgb[0]}), want[0], rtol=1e-6)
    np.testing.assert_allclose(sess.run(gray, {ph: rgb}), want, rtol=1e-6)
