"""YIQ/YUV, PSNR, SSIM and Sobel edges (ops/image/image_metrics_ops.py) against NumPy
references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_RNG = np.random.RandomState(0)
_A = _RNG.uniform(0, 1, (2, 16, 14, 3)).astype(np.float32)
_B = np.clip(_A + _RNG.normal(0, 0.1, _A.shape), 0, 1).astype(np.float32)


def test_color_spaces(sess):
    # Y is the luma of both; I, Q, U, V of a grey pixel are 0
    grey = np.full([1, 1, 3], 0.5, np.float32)
    red = np.array([[[1.0, 0.0, 0.0]]], np.float32)
    yiq, yuv = sess.run([tf.image.rgb_to_yiq(grey), tf.image.rgb_to_yuv(red)])
    np.testing.assert_allclose(yiq, [[[0.5, 0, 0]]], atol=1e-4)  # TF's rounded coefficients
    np.testing.assert_allclose(yuv[..., 0], [[0.299]], atol=1e-6)
    np.testing.assert_allclose(yuv[..., 2], [[0.701 * 0.877283]], atol=1e-5)
    back_q = tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(_A))
    back_v = tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(_A))
    assert back_q.shape.as_list() == [2, 16, 14, 3] and back_q.dtype == tf.float32
    q, v = sess.run([back_q, back_v])
    np.testing.assert_allclose(q, _A, atol=1e-4)
    np.testing.assert_allclose(v, _A, atol=1e-5)
    x64 = tf.constant(_A[0, :2, :2].astype(np.float64))
    assert tf.image.rgb_to_yuv(x64).dtype == tf.float64
    with pytest.raises(TypeError):
        tf.image.rgb_to_yiq(tf.constant([[1, 2, 3]]))
    with pytest.raises(ValueError, match="must be 3"):
        tf.image.rgb_to_yuv(tf.zeros([2, 4]))
    assert compute_gradient_error(x64, [2, 2, 3], tf.image.rgb_to_yiq(x64), [2, 2, 3]) < 1e-8


def test_psnr(sess):
    a, b = tf.constant(_A), tf.constant(_B)
    p = tf.image.psnr(a, b, 1.0)
    assert p.shape.as_list() == [2] and p.dtype == tf.float32
    mse = ((_A.astype(np.float64) - _B) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(sess.run(p), -10 * np.log10(mse), rtol=1e-5)
    ua, ub = (_A * 255).astype(np.uint8), (_B * 255).astype(np.uint8)
    pu = tf.image.psnr(tf.constant(ua), tf.constant(ub), 255)
    mse_u = ((ua.astype(np.float64) - ub) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(sess.run(pu), 20 * np.log10(255) - 10 * np.log10(mse_u),
                               rtol=1e-5)
    with pytest.raises(ValueError):
        tf.image.psnr(tf.zeros([4, 4, 3]), tf.zeros([4, 5, 3]), 1.0)


def _ssim_reference(x, y, max_val, size=11, sigma=1.5, k1=0.01, k2=0.03):
    x, y = x.astype(np.float64), y.astype(np.float64)
    c = np.arange(size) - (size - 1) / 2.0
    g = np.exp(-(c[:, None] ** 2 + c[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()
    win = np.lib.stride_tricks.sliding_window_view

    def mean(t):  # [B, H, W, C] -> [B, H', W', C]
        return np.einsum("bhwcij,ij->bhwc", win(t, (size, size), axis=(1, 2)), g)
    mx, my = mean(x), mean(y)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    lum = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * (mean(x * y) - mx * my) + c2) / (mean(x * x + y * y) - mx ** 2 - my ** 2 + c2)
    return (lum * cs)


def test_ssim(sess):
    s = tf.image.ssim(tf.constant(_A), tf.constant(_B), 1.0)
    m = tf.image.ssim(tf.constant(_A), tf.constant(_B), 1.0, return_index_map=True)
    s7 = tf.image.ssim(tf.constant(_A), tf.constant(_B), 1.0, filter_size=7, filter_sigma=1.0,
                       k1=0.02, k2=0.05)
    same = tf.image.ssim(tf.constant(_A), tf.constant(_A), 1.0)
    sv, mv, s7v, samev = sess.run([s, m, s7, same])
    ref = _ssim_reference(_A, _B, 1.0)
    np.testing.assert_allclose(sv, ref.mean(axis=(1, 2, 3)), atol=1e-5)
    np.testing.assert_allclose(mv, ref.mean(axis=3), atol=1e-5)
    assert mv.shape == (2, 6, 4)
    np.testing.assert_allclose(s7v, _ssim_reference(_A, _B, 1.0, 7, 1.0, 0.02, 0.05).mean(
        axis=(1, 2, 3)), atol=1e-5)
    np.testing.assert_allclose(samev, [1.0, 1.0], atol=1e-6)
    small = tf.placeholder(tf.float32, [1, None, None, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least filter_size"):
        sess.run(tf.image.ssim(small, small, 1.0), {small: np.zeros([1, 5, 5, 1])})
    # sizes known at build time are checked there, as TF's convolution shape does
    with pytest.raises(ValueError, match="Negative dimension size caused by subtracting 11 "
                                         "from 4"):
        tf.image.ssim(tf.ones([1, 4, 4, 1]), tf.ones([1, 4, 4, 1]), 1.0)
    with pytest.raises(ValueError, match="subtracting 11 from 4"):
        tf.image.ssim(tf.ones([1, 12, 4, 1]), tf.ones([1, 12, 4, 1]), 1.0)


def test_sobel_edges(sess):
    img = _A[:1, :6, :5]
    e = tf.image.sobel_edges(tf.constant(img))
    assert e.shape.as_list() == [1, 6, 5, 3, 2]
    p = np.pad(img, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect").astype(np.float64)
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    ref = np.zeros([1, 6, 5, 3, 2])
    for i in range(3):
        for j in range(3):
            window = p[:, i:i + 6, j:j + 5]
            ref[..., 0] += ky[i, j] * window
            ref[..., 1] += ky.T[i, j] * window
    np.testing.assert_allclose(sess.run(e), ref, atol=1e-5)
    x64 = tf.constant(img.astype(np.float64))
    assert compute_gradient_error(x64, [1, 6, 5, 3], tf.image.sobel_edges(x64),
                                  [1, 6, 5, 3, 2]) < 1e-8


def test_resize_with_crop_or_pad_alias():
    assert tf.image.resize_with_crop_or_pad is tf.image.resize_image_with_crop_or_pad


def test_ssim_multiscale_matches_tensorflow(sess):
    """TensorFlow 2.21's values for these images (odd sizes: the repeated last row and
    column), default and custom scales; identical images give 1."""
    rs = np.random.RandomState(0)
    a = rs.rand(2, 181, 177, 3).astype(np.float32)
    b = np.clip(a + rs.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)
    default = tf.image.ssim_multiscale(a, b, 1.0)
    custom = tf.image.ssim_multiscale(a * 255, b * 255, 255.0, power_factors=(0.5, 0.5),
                                      filter_size=7)
    same = tf.image.ssim_multiscale(a, a, 1.0)
    assert default.shape.as_list() == [2]
    got = sess.run([default, custom, same])
    np.testing.assert_allclose(got[0], [0.9553699, 0.9524891], rtol=2e-5)
    np.testing.assert_allclose(got[1], [0.94685745, 0.94615966], rtol=2e-5)
    np.testing.assert_allclose(got[2], [1.0, 1.0], rtol=1e-5)


def test_ssim_broadcasts_the_batch(sess):
    # each image keeps its own batch dimensions; the SSIM terms broadcast (as TF)
    s = tf.image.ssim(tf.constant(_A), tf.constant(_B[:1]), 1.0)
    t = tf.image.ssim(tf.constant(_A[:1]), tf.constant(_B), 1.0)
    assert s.shape.as_list() == [2] and t.shape.as_list() == [2]
    ref = _ssim_reference(_A, np.broadcast_to(_B[:1], _A.shape), 1.0).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(sess.run(s), ref, atol=1e-5)
    ref = _ssim_reference(np.broadcast_to(_A[:1], _B.shape), _B, 1.0).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(sess.run(t), ref, atol=1e-5)
    # the static shape comes from the known image when the other is unknown
    ph = tf.placeholder(tf.float32, [None, None, None, 3])
    u = tf.image.ssim(ph, tf.constant(_B), 1.0)
    assert u.shape.as_list() == [2]
    np.testing.assert_allclose(sess.run(u, {ph: _A}), _ssim_reference(_A, _B, 1.0).mean(
        axis=(1, 2, 3)), atol=1e-5)


def test_ssim_gradient():
    x0 = _A[:, :12, :12, :1].astype(np.float64)
    x = tf.constant(x0)
    y = tf.image.ssim(x, tf.constant(_B[:1, :12, :12, :1].astype(np.float64)), 1.0,
                      filter_size=5, filter_sigma=1.0)
    # the SSIM arithmetic is float32, as TF's
    assert compute_gradient_error(x, list(x0.shape), y, [2], x_init_value=x0,
                                  delta=1e-3) < 2e-3


def test_ssim_multiscale_broadcasts_the_batch(sess):
    """TensorFlow 2.21's values: the first image against each of a batch."""
    rs = np.random.RandomState(0)
    a = rs.rand(2, 181, 177, 3).astype(np.float32)
    b = np.clip(a + rs.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)
    default = tf.image.ssim_multiscale(a, b[:1], 1.0)
    custom = tf.image.ssim_multiscale(b[:1], a, 1.0, power_factors=(0.5, 0.5), filter_size=7)
    assert default.shape.as_list() == [2] and custom.shape.as_list() == [2]
    got = sess.run([default, custom])
    np.testing.assert_allclose(got[0], [0.9553699, 0.07633731], rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], [0.94685745, 0.01026198], rtol=2e-5, atol=1e-5)


def test_ssim_multiscale_checks_every_scale(sess):
    # 16 x 16 halves to 8, 4, 2, 1: the second scale is already smaller than the window
    out = tf.image.ssim_multiscale(tf.constant(_A[:, :16, :14]), tf.constant(_B[:, :16, :14]),
                                   1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least filter_size"):
        sess.run(out)
