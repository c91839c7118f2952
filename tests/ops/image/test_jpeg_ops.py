"""JPEG shape, crop-decoding and quality ops (ops/image/jpeg_ops.py): against Pillow's
own decode of the same bytes and TF's shapes, names and errors (checked by hand against
TensorFlow 2.21)."""
import io

import numpy as np
import pytest

import tensorweave as tf


def _jpeg(image: np.ndarray, quality: int = 90) -> bytes:
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(image[..., 0] if image.shape[-1] == 1 else image).save(
        buf, format="JPEG", quality=quality)
    return buf.getvalue()


def _pillow(data: bytes) -> np.ndarray:
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(data)))


IMAGE = (np.random.RandomState(0).rand(6, 8, 3) * 255).astype(np.uint8)


def test_extract_jpeg_shape(sess):
    for image in (IMAGE, IMAGE[..., :1]):
        shape = tf.image.extract_jpeg_shape(_jpeg(image))
        wide = tf.io.extract_jpeg_shape(_jpeg(image), output_type=tf.int64)
        assert shape.name.startswith("ExtractJpegShape") and shape.shape.as_list() == [3]
        got, got64 = sess.run([shape, wide])
        assert got.dtype == np.int32 and got64.dtype == np.int64
        assert got.tolist() == got64.tolist() == list(image.shape)
    png = tf.image.encode_png(IMAGE)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Not a JPEG file: starts with 0x89 0x50"):
        sess.run(tf.image.extract_jpeg_shape(png))


def test_decode_and_crop_jpeg(sess):
    data = _jpeg(IMAGE)
    # Pillow decodes with libjpeg's accurate DCT (TF's default is the fast one)
    crop = tf.image.decode_and_crop_jpeg(data, [1, 2, 3, 4], dct_method="INTEGER_ACCURATE")
    assert crop.name == "DecodeAndCropJpeg:0" and crop.shape.as_list() == [3, 4, None]
    np.testing.assert_array_equal(sess.run(crop), _pillow(data)[1:4, 2:6])
    window = tf.placeholder(tf.int32, [4])
    gray = tf.io.decode_and_crop_jpeg(data, window, channels=1)
    assert gray.shape.as_list() == [None, None, 1]
    assert sess.run(gray, {window: [0, 0, 6, 8]}).shape == (6, 8, 1)
    for bad in ([0, 0, 7, 8], [5, 0, 2, 2], [-1, 0, 2, 2], [0, 0, 0, 2]):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Invalid JPEG data or crop window"):
            sess.run(gray, {window: bad})


def test_adjust_and_random_jpeg_quality(sess):
    floats = tf.constant(IMAGE, tf.float32) / 255.0
    low = tf.image.adjust_jpeg_quality(floats, 10, dct_method="INTEGER_ACCURATE")
    assert low.dtype == tf.float32 and low.shape.as_list() == [None, None, 3]
    assert low.name.startswith("adjust_jpeg_quality/")
    want = _pillow(_jpeg(IMAGE, quality=10)).astype(np.float32) / 255.0
    np.testing.assert_allclose(sess.run(low), want, atol=1.5 / 255)  # 8-bit round trips
    q = tf.placeholder(tf.int32, [])
    as_uint8 = tf.image.adjust_jpeg_quality(IMAGE, q, dct_method="INTEGER_ACCURATE")
    for quality in (5, 95):
        np.testing.assert_array_equal(sess.run(as_uint8, {q: quality}),
                                      _pillow(_jpeg(IMAGE, quality)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="quality must be in"):
        sess.run(as_uint8, {q: 101})
    random = tf.image.random_jpeg_quality(IMAGE, 20, 21, seed=3)  # quality 20 only
    np.testing.assert_array_equal(sess.run(random),  # decoded with TF's default fast DCT
                                  sess.run(tf.image.decode_jpeg(_jpeg(IMAGE, 20))))
    with pytest.raises(ValueError, match="must be less than"):
        tf.image.random_jpeg_quality(IMAGE, 50, 40)
    with pytest.raises(ValueError, match="between 0 and 100"):
        tf.image.random_jpeg_quality(IMAGE, -1, 40)
