"""crop_and_resize and patch extraction (ops/image/crop_patch_ops.py) against
plain-loop NumPy references, with their gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

_RNG = np.random.RandomState(0)
_IMG = _RNG.uniform(0, 1, (2, 7, 9, 3)).astype(np.float32)
_BOXES = np.array([[0.1, 0.2, 0.8, 0.7], [0.9, -0.1, 0.2, 1.2], [0.33, 0.41, 0.33, 0.41]],
                  np.float32)
_IND = np.array([0, 1, 1], np.int32)


def _reference_crop(img, boxes, ind, ch, cw, method="bilinear", extrapolation=0.0):
    _, h, w, d = img.shape
    out = np.zeros([len(boxes), ch, cw, d])
    for n, (y1, x1, y2, x2) in enumerate(boxes.astype(np.float64)):
        for i in range(ch):
            y = y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1 \
                else 0.5 * (y1 + y2) * (h - 1)
            for j in range(cw):
                x = x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1 \
                    else 0.5 * (x1 + x2) * (w - 1)
                if not (0 <= y <= h - 1 and 0 <= x <= w - 1):
                    out[n, i, j] = extrapolation
                    continue
                im = img[ind[n]].astype(np.float64)
                if method == "nearest":
                    out[n, i, j] = im[int(np.floor(y + 0.5)), int(np.floor(x + 0.5))]
                    continue
                t, b, l, r = int(np.floor(y)), int(np.ceil(y)), int(np.floor(x)), \
                    int(np.ceil(x))
                fy, fx = y - t, x - l
                top = im[t, l] * (1 - fx) + im[t, r] * fx
                bottom = im[b, l] * (1 - fx) + im[b, r] * fx
                out[n, i, j] = top * (1 - fy) + bottom * fy
    return out


def test_crop_and_resize_values(sess):
    c1 = tf.image.crop_and_resize(_IMG, _BOXES, _IND, [5, 4])
    c2 = tf.image.crop_and_resize(_IMG, _BOXES, _IND, [1, 3], method="nearest",
                                  extrapolation_value=-1)
    u8 = (_IMG * 255).astype(np.uint8)
    c3 = tf.image.crop_and_resize(u8, _BOXES, box_indices=_IND, crop_size=[3, 3])
    assert c1.shape.as_list() == [3, 5, 4, 3] and c1.dtype == tf.float32
    assert c3.dtype == tf.float32
    v1, v2, v3 = sess.run([c1, c2, c3])
    np.testing.assert_allclose(v1, _reference_crop(_IMG, _BOXES, _IND, 5, 4), atol=1e-5)
    np.testing.assert_allclose(v2, _reference_crop(_IMG, _BOXES, _IND, 1, 3, "nearest", -1),
                               atol=1e-6)
    np.testing.assert_allclose(v3, _reference_crop(u8, _BOXES, _IND, 3, 3), atol=1e-3)
    assert (v1[1] == 0).any()  # the second box reaches outside the image


def test_crop_and_resize_shapes_and_errors(sess):
    img = tf.placeholder(tf.float32, [None, None, None, 2])
    size = tf.placeholder(tf.int32, [2])
    assert tf.image.crop_and_resize(img, _BOXES, _IND, size).shape.as_list() == \
        [3, None, None, 2]
    with pytest.raises(ValueError):
        tf.image.crop_and_resize(img, _BOXES, [0, 1], [2, 2])
    with pytest.raises(ValueError, match="both"):
        tf.image.crop_and_resize(img, _BOXES, _IND, [2, 2], box_indices=_IND)
    with pytest.raises(ValueError, match="method"):
        tf.image.crop_and_resize(img, _BOXES, _IND, [2, 2], method="bicubic")
    for bad in ([0, 1, 2], [-1, 0, 0]):  # TF's class for an index out of range
        with pytest.raises(tf.errors.OutOfRangeError, match="box_index has values outside"):
            sess.run(tf.image.crop_and_resize(_IMG, _BOXES, bad, [2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="crop dimensions must be"):
        sess.run(tf.image.crop_and_resize(img, _BOXES, _IND, size),
                 {img: np.zeros([2, 3, 3, 2]), size: [0, 2]})


def test_crop_and_resize_gradients(sess):
    image = tf.constant(_IMG)
    boxes0 = np.array([[0.12, 0.21, 0.83, 0.71], [0.77, 0.06, 0.24, 0.93]], np.float32)
    boxes = tf.constant(boxes0)
    crops = tf.image.crop_and_resize(image, boxes, [0, 1], [3, 4])
    assert compute_gradient_error(image, list(_IMG.shape), crops, [2, 3, 4, 3],
                                  x_init_value=_IMG, delta=1e-2) < 2e-3
    assert compute_gradient_error(boxes, [2, 4], crops, [2, 3, 4, 3], x_init_value=boxes0,
                                  delta=1e-3) < 2e-2
    gi, gb = tf.gradients(crops, [image, boxes])
    assert gi.shape.as_list() == list(_IMG.shape) and gb.shape.as_list() == [2, 4]


def _reference_patches(x, k, s, r, padding):
    spatial = x.ndim - 2
    outs, befores = [], []
    for i in range(spatial):
        eff = k[i] + (k[i] - 1) * (r[i] - 1)
        n = x.shape[1 + i]
        if padding == "VALID":
            out, before = -(-(n - eff + 1) // s[i]), 0
        else:
            out = -(-n // s[i])
            before = max((out - 1) * s[i] + eff - n, 0) // 2
        outs.append(out)
        befores.append(before)
    res = np.zeros([x.shape[0]] + outs + [int(np.prod(k)) * x.shape[-1]], x.dtype)
    for pos in np.ndindex(*outs):
        vals = []
        for off in np.ndindex(*k):
            src = [pos[i] * s[i] - befores[i] + off[i] * r[i] for i in range(spatial)]
            inside = all(0 <= src[i] < x.shape[1 + i] for i in range(spatial))
            vals.append(x[(slice(None),) + tuple(src)] if inside
                        else np.zeros([x.shape[0], x.shape[-1]], x.dtype))
        res[(slice(None),) + pos] = np.concatenate(vals, axis=-1)
    return res


@pytest.mark.parametrize("k, s, r, padding", [
    ([3, 2], [2, 3], [1, 2], "SAME"), ([2, 3], [1, 2], [2, 1], "VALID"),
    ([1, 1], [1, 1], [1, 1], "VALID"), ([4, 4], [3, 3], [1, 1], "SAME")])
def test_extract_image_patches(sess, k, s, r, padding):
    p = tf.image.extract_patches(_IMG, [1] + k + [1], [1] + s + [1], [1] + r + [1], padding)
    ref = _reference_patches(_IMG, k, s, r, padding)
    assert p.shape.as_list() == list(ref.shape) and p.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(p), ref)


def test_extract_image_patches_v1_names_ints_and_unknown_shapes(sess):
    ints = np.arange(2 * 4 * 5 * 1).reshape(2, 4, 5, 1).astype(np.int32)
    p = tf.extract_image_patches(ints, ksizes=[1, 2, 2, 1], strides=[1, 1, 1, 1],
                                 rates=[1, 1, 1, 1], padding="VALID")
    assert tf.image.extract_image_patches is tf.extract_image_patches
    np.testing.assert_array_equal(sess.run(p), _reference_patches(ints, [2, 2], [1, 1],
                                                                  [1, 1], "VALID"))
    x = tf.placeholder(tf.float32, [None, None, 5, 3])
    q = tf.image.extract_patches(x, [1, 2, 2, 1], [1, 1, 2, 1], [1, 1, 1, 1], "SAME")
    assert q.shape.as_list() == [None, None, 3, 12]
    with pytest.raises(ValueError, match="both"):
        tf.extract_image_patches(ints, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID",
                                 sizes=[1, 2, 2, 1])
    with pytest.raises(ValueError, match="padding"):
        tf.image.extract_patches(ints, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError):
        tf.image.extract_patches(ints, [2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_extract_volume_patches(sess, padding):
    vol = _RNG.uniform(0, 1, (1, 5, 6, 7, 2)).astype(np.float32)
    p = tf.extract_volume_patches(vol, [1, 2, 3, 2, 1], [1, 2, 2, 3, 1], padding)
    ref = _reference_patches(vol, [2, 3, 2], [2, 2, 3], [1, 1, 1], padding)
    assert p.shape.as_list() == list(ref.shape)
    np.testing.assert_array_equal(sess.run(p), ref)


def test_patch_gradients(sess):
    x0 = _RNG.randn(2, 5, 4, 2)
    x = tf.constant(x0)
    p = tf.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME")
    assert compute_gradient_error(x, [2, 5, 4, 2], p, p.shape.as_list(), x_init_value=x0) \
        < 1e-8
    (g,) = tf.gradients(p, x)
    assert g.shape.as_list() == [2, 5, 4, 2]
    v0 = _RNG.randn(1, 3, 4, 3, 1)
    v = tf.constant(v0)
    q = tf.extract_volume_patches(v, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID")
    assert compute_gradient_error(v, [1, 3, 4, 3, 1], q, q.shape.as_list(),
                                  x_init_value=v0) < 1e-8
