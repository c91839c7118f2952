"""Image resizing (ops/image/resize_ops.py) against per-pixel NumPy references written
from the sampling rules of TF's kernels (bilinear: TF's float32 arithmetic, to the bit), and
gradients checked numerically and as the adjoint of the resize."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.image import resize_ops
from tensorweave.test import compute_gradient_error

IMG = np.random.RandomState(0).uniform(0, 10, [2, 5, 7, 2]).astype(np.float32)
SIZES = [(3, 4), (8, 11), (5, 7), (1, 1)]
MODES = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel)


def _scale(n_in, n_out, align):
    return np.float32((n_in - 1) / (n_out - 1)) if align and n_out > 1 \
        else np.float32(n_in / n_out)


def _bilinear_1d(n_in, n_out, align, half):
    """[(lower, upper, lerp)] per output position."""
    s = _scale(n_in, n_out, align)
    out = []
    for o in range(n_out):
        x = (np.float32(o) + np.float32(0.5)) * s - np.float32(0.5) if half \
            else np.float32(o) * s
        out.append((max(int(math.floor(x)), 0), min(int(math.ceil(x)), n_in - 1),
                    x - math.floor(x)))
    return out


def _bilinear(img, size, align, half):
    """TF's per-pixel arithmetic, in float32 for float32 images."""
    rows = _bilinear_1d(img.shape[1], size[0], align, half)
    cols = _bilinear_1d(img.shape[2], size[1], align, half)
    out = np.zeros((img.shape[0], size[0], size[1], img.shape[3]))
    for i, (t, b, ly) in enumerate(rows):
        for j, (le, r, lx) in enumerate(cols):
            top = img[:, t, le] + (img[:, t, r] - img[:, t, le]) * lx
            bottom = img[:, b, le] + (img[:, b, r] - img[:, b, le]) * lx
            out[:, i, j] = top + (bottom - top) * ly
    return out


def _nearest(img, size, align, half):
    def index(o, n_in, n_out):
        s = _scale(n_in, n_out, align)
        x = (np.float32(o) + np.float32(0.5)) * s if half else np.float32(o) * s
        i = int(math.floor(x + 0.5)) if align else int(math.floor(x))
        return min(max(i, 0), n_in - 1)
    r = [index(o, img.shape[1], size[0]) for o in range(size[0])]
    c = [index(o, img.shape[2], size[1]) for o in range(size[1])]
    return img[:, r][:, :, c]


def _area(img, size, align):
    def weights(n_in, n_out):
        s = _scale(n_in, n_out, align)
        w = np.zeros((n_out, n_in))
        for o in range(n_out):
            lo, hi = o * s, (o + 1) * s
            for i in range(int(math.floor(lo)), int(math.ceil(hi))):
                w[o, min(i, n_in - 1)] += (min(i + 1, hi) - max(i, lo)) / s
        return w
    wr, wc = weights(img.shape[1], size[0]), weights(img.shape[2], size[1])
    return np.einsum("oh,bhwc,pw->bopc", wr, img, wc)


def _keys(a, t):
    t = abs(t)
    if t <= 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a


def _bicubic(img, size, align, half):
    a = -0.5 if half else -0.75

    def weights(n_in, n_out):
        s = _scale(n_in, n_out, align)
        w = np.zeros((n_out, n_in))
        for o in range(n_out):
            x = (np.float32(o) + np.float32(0.5)) * s - np.float32(0.5) if half \
                else np.float32(o) * s
            base = math.floor(x)
            frac = round((x - base) * 1024) / 1024  # TF's 1024-entry table
            taps = {}
            for k in range(-1, 3):
                i = base + k
                wk = _keys(a, k - frac)
                if half and not 0 <= i < n_in:
                    continue  # outside the image: no weight, renormalized below
                taps[min(max(i, 0), n_in - 1)] = taps.get(min(max(i, 0), n_in - 1), 0) + wk
            total = sum(taps.values()) if half else 1.0
            for i, wk in taps.items():
                w[o, i] += wk / total
        return w
    wr, wc = weights(img.shape[1], size[0]), weights(img.shape[2], size[1])
    return np.einsum("oh,bhwc,pw->bopc", wr, img, wc)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("align,half", MODES)
def test_bilinear_nearest_bicubic(sess, size, align, half):
    for fn, ref, tol in [(tf.image.resize_bilinear, _bilinear, 0),
                         (tf.image.resize_nearest_neighbor, _nearest, 0),
                         (tf.image.resize_bicubic, _bicubic, 1e-4)]:
        y = fn(IMG, size, align_corners=align, half_pixel_centers=half)
        assert y.shape.as_list() == [2, size[0], size[1], 2]
        out = sess.run(y)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, ref(IMG, size, align, half), rtol=tol, atol=tol)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("align", [False, True])
def test_area(sess, size, align):
    out = sess.run(tf.image.resize_area(IMG, size, align_corners=align))
    np.testing.assert_allclose(out, _area(IMG, size, align), rtol=1e-5, atol=1e-5)


def test_types(sess):
    u8 = (IMG * 20).astype(np.uint8)
    near = tf.image.resize_nearest_neighbor(u8, [3, 3])
    assert near.dtype == tf.uint8 and sess.run(near).dtype == np.uint8
    np.testing.assert_array_equal(sess.run(near), _nearest(u8, (3, 3), False, False))
    bil = tf.image.resize_bilinear(u8, [3, 3])
    assert bil.dtype == tf.float32
    # each pixel cast to float32 as it is read, as TF does
    np.testing.assert_array_equal(sess.run(bil), _bilinear(u8.astype(np.float32), (3, 3),
                                                           False, False))
    assert tf.image.resize_bilinear(IMG.astype(np.float64), [3, 3]).dtype == tf.float32


def test_resize_images(graph):
    x = tf.placeholder(tf.uint8, [2, 4, 6, 3])
    types = {0: ("ResizeBilinear", tf.float32), 1: ("ResizeNearestNeighbor", tf.uint8),
             2: ("ResizeBicubic", tf.float32), 3: ("ResizeArea", tf.float32)}
    for method, (op_type, dtype) in types.items():
        y = tf.image.resize_images(x, [3, 5], method=method)
        assert (y.op.type, y.dtype, y.shape.as_list()) == (op_type, dtype, [2, 3, 5, 3])
    assert tf.image.resize is tf.image.resize_images
    assert tf.image.ResizeMethod.BICUBIC == 2
    single = tf.placeholder(tf.float32, [4, 6, 3])
    assert tf.image.resize_images(single, [3, 5]).shape.as_list() == [3, 5, 3]
    assert tf.image.resize_images(single, [4, 6]) is not None
    unknown = tf.image.resize_images(tf.placeholder(tf.float32, [None, None, 3]),
                                     tf.placeholder(tf.int32, [2]))
    assert unknown.shape.as_list() == [None, None, 3]
    keep = tf.image.resize_images(tf.placeholder(tf.float32, [10, 20, 3]), [5, 5],
                                  preserve_aspect_ratio=True)
    assert keep.shape.as_list() == [2, 5, 3]
    with pytest.raises(ValueError, match="must have either 3 or 4 dimensions"):
        tf.image.resize_images(tf.placeholder(tf.float32, [10, 20]), [5, 5])
    with pytest.raises(ValueError, match="1-D Tensor of 2 elements"):
        tf.image.resize_images(x, [5, 5, 1])
    with pytest.raises(ValueError, match="Resize method is not implemented: 7"):
        tf.image.resize_images(x, [5, 5], method=7)


@pytest.mark.parametrize("method, op", [("bilinear", "ResizeBilinear"),
                                        ("nearest", "ResizeNearestNeighbor"),
                                        ("bicubic", "ResizeBicubic"), ("area", "ResizeArea"),
                                        (1.0, "ResizeNearestNeighbor")])
def test_resize_images_method_names(sess, method, op):
    y = tf.image.resize_images(tf.ones([1, 2, 2, 1]), [3, 3], method=method)
    assert y.op.type == op
    np.testing.assert_allclose(sess.run(y), np.ones([1, 3, 3, 1]), rtol=1e-6)


def test_resize_images_unknown_method_names():
    with pytest.raises(ValueError, match="Resize method is not implemented: lanczos3"):
        tf.image.resize_images(tf.ones([1, 2, 2, 1]), [3, 3], method="lanczos3")
    with pytest.raises(ValueError, match="Resize method is not implemented: BILINEAR"):
        tf.image.resize_images(tf.ones([1, 2, 2, 1]), [3, 3], method="BILINEAR")
    # nothing to resize: TF returns the images without looking at the method
    same = tf.ones([1, 2, 2, 1])
    assert tf.image.resize_images(same, [2, 2], method="lanczos3") is same


def test_resize_images_values(sess):
    dynamic = tf.placeholder(tf.float32, [10, 20, 1])
    y = tf.image.resize_images(dynamic, tf.constant([5, 5]), preserve_aspect_ratio=True)
    out = sess.run(y, {dynamic: np.ones([10, 20, 1], np.float32)})
    assert out.shape == (2, 5, 1) and np.allclose(out, 1.0)
    same = tf.placeholder(tf.float32, [4, 6, 3])
    assert tf.image.resize_images(same, [4, 6]).op.type != "ResizeBilinear"


def test_run_time_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="align_corners must be False"):
        sess.run(tf.image.resize_bilinear(IMG, [3, 3], align_corners=True,
                                          half_pixel_centers=True))
    size = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="output dimensions must be pos"):
        sess.run(tf.image.resize_area(IMG, size), {size: [0, 3]})
    img = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input must be 4-dimensional"):
        sess.run(tf.image.resize_bilinear(img, [3, 3]), {img: np.zeros([2, 2, 1])})


@pytest.mark.parametrize("method", ["bilinear", "nearest_neighbor", "bicubic", "area"])
@pytest.mark.parametrize("size", [(3, 4), (7, 9)])
def test_gradients(graph, method, size):
    fn = getattr(tf.image, "resize_" + method)
    x0 = np.random.RandomState(1).uniform(-1, 1, [1, 4, 5, 2]).astype(np.float32)
    x = tf.placeholder(tf.float32, x0.shape)
    y = fn(x, size)
    with tf.Session():
        err = compute_gradient_error(x, list(x0.shape), y, [1, size[0], size[1], 2],
                                     x_init_value=x0, delta=1e-2)
    assert err < 2e-3


def test_second_order_gradient(sess):
    x = tf.constant(IMG[:1])
    y = tf.image.resize_bilinear(x, [3, 4], half_pixel_centers=True)
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    (gg,) = tf.gradients(tf.reduce_sum(g), x)  # through ResizeBilinearGrad's gradient
    assert gg is not None and sess.run(gg).shape == IMG[:1].shape


@pytest.mark.parametrize("size", [(4, 6), (9, 13), (17, 20), (3, 30)])
@pytest.mark.parametrize("align,half", MODES)
def test_bilinear_batches_in_chunks(sess, monkeypatch, size, align, half):
    # several images a step, RGB pixels (gathered as single floats), uint8 read as float32,
    # halving (only every other row read): TF's arithmetic to the bit in every case
    monkeypatch.setattr(resize_ops, "_CHUNK_ELEMENTS", 1000)
    img = np.random.RandomState(2).uniform(-5, 300, [5, 9, 13, 3]).astype(np.float32)
    for images in (img, img.astype(np.uint8)):
        out = sess.run(tf.image.resize_bilinear(images, size, align_corners=align,
                                                half_pixel_centers=half))
        np.testing.assert_array_equal(
            out, _bilinear(images.astype(np.float32), size, align, half))
        # the chunks' last pass writes into the output (nearest: any dtype, kept)
        near = sess.run(tf.image.resize_nearest_neighbor(images, size, align_corners=align,
                                                         half_pixel_centers=half))
        assert near.dtype == images.dtype
        np.testing.assert_array_equal(near, _nearest(images, size, align, half))


@pytest.mark.parametrize("method", ["bilinear", "nearest_neighbor", "bicubic", "area"])
@pytest.mark.parametrize("size", [(4, 6), (3, 5), (17, 20)])
def test_gradients_are_the_adjoint(sess, monkeypatch, method, size):
    # <resize(x), g> == <x, gradient(g)>: the transposed taps, padded where an input
    # position is read by fewer outputs (none, when halving), over chunks of the batch
    monkeypatch.setattr(resize_ops, "_CHUNK_ELEMENTS", 1000)
    rs = np.random.RandomState(3)
    x0 = rs.uniform(-1, 1, [5, 9, 12, 3]).astype(np.float32)
    g0 = rs.uniform(-1, 1, [5, size[0], size[1], 3]).astype(np.float32)
    x = tf.constant(x0)
    y = getattr(tf.image, "resize_" + method)(x, size)
    (dx,) = tf.gradients(y, x, grad_ys=tf.constant(g0))
    out, grad = sess.run([y, dx])
    np.testing.assert_allclose(np.sum(out.astype(np.float64) * g0),
                               np.sum(x0.astype(np.float64) * grad), rtol=1e-5)


def test_gradient_reaches_only_the_pixels_read(sess):
    # halving with TF1's sampling reads the even rows and columns only: an infinite
    # gradient leaves the others at 0 (no NaN from a padded tap of weight 0)
    x = tf.constant(IMG[:, :4, :6])
    g0 = np.ones([2, 2, 3, 2], np.float32)
    g0[0, 1, 1, 0] = np.inf
    (dx,) = tf.gradients(tf.image.resize_bilinear(x, [2, 3]), x, grad_ys=tf.constant(g0))
    grad = sess.run(dx)
    np.testing.assert_array_equal(grad[:, 1::2], 0)
    np.testing.assert_array_equal(grad[:, :, 1::2], 0)
    others = np.ones(grad.shape, bool)
    others[0, 2, 2, 0] = False  # NaN there, as in TF: inf times the other tap's weight 0
    assert np.isnan(grad[0, 2, 2, 0]) and np.isfinite(grad[others]).all()
