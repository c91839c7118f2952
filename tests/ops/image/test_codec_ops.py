"""Image codecs (ops/image/codec_ops.py) against files written and decoded by real
TensorFlow (fixtures/, made by fixtures/make_fixtures.py)."""
import os

import numpy as np
import pytest

import tensorweave as tf

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))
IMAGE = EXPECTED["image"]
# Pillow's libjpeg and TF's libjpeg-turbo may round a few pixels differently
JPEG_TOLERANCE = 6


def _read(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        return f.read()


@pytest.mark.parametrize("name", ["rgb.png", "rgba.png", "gray16.png", "rgb.bmp", "rgb.jpg",
                                  "gray.jpg", "anim.gif"])
def test_decode_image_like_tf(sess, name):
    key = name.replace(".", "_")
    data = _read(name)
    channel_options = [None] if name.endswith("gif") else \
        ([None, 3] if name.endswith("bmp") else [None, 1, 3])
    for channels in channel_options:
        want = EXPECTED[key if channels is None else "%s_c%d" % (key, channels)]
        got = sess.run(tf.image.decode_image(data, channels=channels))
        assert got.dtype == np.uint8 and got.shape == want.shape
        tolerance = JPEG_TOLERANCE if name.endswith("jpg") else 0
        assert np.abs(got.astype(int) - want.astype(int)).max() <= tolerance, (name, channels)


def test_decoders_read_any_format_and_static_shapes(sess):
    png, jpg = _read("rgb.png"), _read("rgb.jpg")
    assert tf.image.decode_jpeg(jpg).shape.as_list() == [None, None, None]
    assert tf.image.decode_jpeg(jpg, channels=3).shape.as_list() == [None, None, 3]
    assert tf.image.decode_png(png, channels=4).shape.as_list() == [None, None, 4]
    assert tf.image.decode_bmp(_read("rgb.bmp")).shape.as_list() == [None, None, None]
    assert tf.image.decode_gif(png).shape.as_list() == [None, None, None, 3]
    assert tf.image.decode_image(png).shape.ndims is None
    assert tf.image.decode_image(png, expand_animations=False).shape.as_list() == \
        [None, None, None]
    assert tf.io.decode_png is tf.image.decode_png
    np.testing.assert_array_equal(sess.run(tf.image.decode_png(png)), IMAGE)
    np.testing.assert_array_equal(sess.run(tf.image.decode_jpeg(png)), IMAGE)  # as TF 2
    assert sess.run(tf.image.decode_gif(_read("anim.gif"))).shape == (3, 4, 5, 3)
    first = sess.run(tf.image.decode_image(_read("anim.gif"), expand_animations=False))
    np.testing.assert_array_equal(first, EXPECTED["anim_gif"][0])


def test_decoders_refuse_what_tf_refuses(sess):
    for name, fmt, decoder in [("rgb.png", "PNG", "png"), ("rgb.jpg", "JPEG", "jpeg"),
                               ("anim.gif", "GIF", "gif")]:
        message = ("Trying to decode %s format using DecodeBmp op. Use `decode_%s` or "
                   "`decode_image` instead." % (fmt, decoder))
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(tf.image.decode_bmp(_read(name)))
    for decode in (tf.image.decode_png, tf.image.decode_jpeg):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Got 3 frames, but animated gifs can only be decoded by "
                                 "tf.io.decode_gif or tf.io.decode_image"):
            sess.run(decode(_read("anim.gif")))


def test_sixteen_bit_png(sess):
    png16, png = _read("gray16.png"), _read("rgb.png")
    out = sess.run(tf.image.decode_png(png16, dtype=tf.uint16))
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, EXPECTED["gray16_png_u16"])
    np.testing.assert_array_equal(sess.run(tf.image.decode_png(png, dtype=tf.uint16)),
                                  EXPECTED["rgb_png_u16"])
    back = sess.run(tf.image.decode_png(sess.run(tf.image.encode_png(out)), dtype=tf.uint16))
    np.testing.assert_array_equal(back, out)


def test_decode_image_to_float(sess):
    out = sess.run(tf.image.decode_image(_read("rgb.png"), dtype=tf.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, IMAGE / 255.0, rtol=1e-6)
    out = sess.run(tf.image.decode_image(_read("rgb.png"), dtype=tf.float64))
    assert out.dtype == np.float64


def test_png_round_trip_and_batch(sess):
    encoded = tf.image.encode_png(IMAGE, compression=9)
    assert encoded.shape.as_list() == [] and encoded.dtype == tf.string
    data = sess.run(encoded)
    assert isinstance(data, bytes) and data.startswith(b"\x89PNG")
    np.testing.assert_array_equal(sess.run(tf.image.decode_png(data)), IMAGE)
    batch = tf.image.encode_png(np.stack([IMAGE, IMAGE[::-1]]))
    assert batch.shape.as_list() == [2]
    out = sess.run(batch)
    np.testing.assert_array_equal(sess.run(tf.image.decode_png(out[1])), IMAGE[::-1])


@pytest.mark.parametrize("chroma", [True, False])
def test_jpeg_round_trip(sess, chroma):
    # a smooth image: JPEG keeps it within a few levels
    rows, cols = np.meshgrid(np.arange(6), np.arange(7), indexing="ij")
    smooth = np.stack([rows * 40, cols * 30, rows * 10 + cols * 10], -1).astype(np.uint8)
    data = sess.run(tf.image.encode_jpeg(smooth, quality=100, chroma_downsampling=chroma,
                                         progressive=True, density_unit="cm"))
    assert sess.run(tf.image.is_jpeg(data)) and not sess.run(tf.image.is_jpeg(_read("rgb.png")))
    out = sess.run(tf.image.decode_jpeg(data, dct_method="INTEGER_ACCURATE"))
    assert out.shape == smooth.shape
    assert np.abs(out.astype(int) - smooth).max() <= (32 if chroma else 4)
    fast = sess.run(tf.image.decode_jpeg(data))  # TF's default: the fast integer DCT
    assert np.abs(fast.astype(int) - smooth).max() <= (32 if chroma else 12)
    gray = sess.run(tf.image.decode_jpeg(sess.run(tf.image.encode_jpeg(IMAGE[..., :1]))))
    assert gray.shape == (6, 7, 1)
    half = sess.run(tf.image.decode_jpeg(data, ratio=2))
    assert half.shape == (3, 4, 3)


def test_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        sess.run(tf.image.decode_png(b"garbage"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid PNG data"):
        sess.run(tf.image.decode_png(_read("rgb.png")[:40]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be 0, 3 or 4 for BMP"):
        sess.run(tf.image.decode_image(_read("rgb.bmp"), channels=1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="image must have 1 or 3 channels"):
        sess.run(tf.image.encode_jpeg(np.zeros([2, 2, 2], np.uint8)))
    with pytest.raises(ValueError, match="rank 3"):
        tf.image.encode_png(np.zeros([2, 2], np.uint8))
    with pytest.raises(tf.errors.UnimplementedError, match="try_recover_truncated"):
        sess.run(tf.image.decode_jpeg(_read("photo.jpg"), try_recover_truncated=True))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid JPEG data"):
        sess.run(tf.image.decode_jpeg(_read("photo.jpg")[:300]))
    with pytest.raises(TypeError):  # a float tensor (a NumPy array is cast, as in TF)
        tf.image.encode_jpeg(tf.zeros([2, 2, 3], tf.float32))


def test_jpeg_decoding_is_tfs_for_every_dct_method_and_upsampling(sess):
    # TF's default dct_method "" is libjpeg's fast integer DCT, not the accurate one, and
    # fancy_upscaling=False its fast chroma upsampling: each decodes other pixels
    # (jpeg_expected.npz: TF's decodings of photo.jpg, written by make_fixtures.py dct)
    expected = np.load(os.path.join(FIXTURES, "jpeg_expected.npz"))
    data = _read("photo.jpg")
    got = {}
    for dct in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        for fancy in (True, False):
            key = "%s_%s" % (dct or "default", "fancy" if fancy else "plain")
            got[key] = tf.image.decode_jpeg(data, dct_method=dct, fancy_upscaling=fancy)
    got["default_c1"] = tf.image.decode_jpeg(data, channels=1)
    got["default_ratio2"] = tf.image.decode_jpeg(data, ratio=2)
    got["accurate_ratio4_c1"] = tf.image.decode_jpeg(
        data, ratio=4, channels=1, dct_method="INTEGER_ACCURATE")
    got["decode_image"] = tf.io.decode_image(data)
    got["crop"] = tf.image.decode_and_crop_jpeg(data, [3, 5, 10, 12])
    got = sess.run(got)
    assert sorted(got) == sorted(expected.files)
    for key in expected.files:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)
    assert not np.array_equal(got["default_fancy"], got["INTEGER_ACCURATE_fancy"])
    assert not np.array_equal(got["default_fancy"], got["default_plain"])


PNG_EXPECTED = np.load(os.path.join(FIXTURES, "png_expected.npz"))


@pytest.mark.parametrize("key", ["rgb16", "smooth16", "rgba16", "ga16", "rgb8"])
def test_png_decodings_are_tfs(sess, key):
    # PNGs TF encoded (every row filter type occurs) and TF's decodings of them: 16-bit
    # color kept exactly, libpng's RGB-to-gray (truncated at 8 bits, rounded at 16),
    # gray to RGB, alpha dropped or added, 16 to 8 bits by the high byte
    data = PNG_EXPECTED[key + "_png"].tobytes()
    pixels = PNG_EXPECTED[key]
    sixteen = pixels.dtype == np.uint16
    np.testing.assert_array_equal(
        sess.run(tf.image.decode_png(data, dtype=tf.uint16 if sixteen else tf.uint8)), pixels)
    for channels in (0, 1, 3, 4):
        want = PNG_EXPECTED["%s_c%d_u8" % (key, channels)]
        got = sess.run(tf.image.decode_png(data, channels=channels))
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, want, err_msg="%s c%d" % (key, channels))
        if sixteen:
            want = PNG_EXPECTED["%s_c%d_u16" % (key, channels)]
            got = sess.run(tf.image.decode_png(data, channels=channels, dtype=tf.uint16))
            np.testing.assert_array_equal(got, want, err_msg="%s c%d u16" % (key, channels))
    np.testing.assert_array_equal(sess.run(tf.image.decode_image(data, dtype=tf.float32)),
                                  PNG_EXPECTED[key + "_f32"])
    # other dtypes: decoded as uint16, then converted (TF's most precise path)
    got = sess.run(tf.image.decode_image(data, dtype=tf.int32))
    np.testing.assert_array_equal(got, PNG_EXPECTED[key + "_i32"])


def test_rgb_to_gray_is_libpngs_fixed_point(sess):
    # (9797 r + 19234 g + 3737 b) >> 15 for 8-bit samples, plus 16384 before the shift for
    # 16-bit ones; TF's decoder gets these from libpng
    for key in ("rgb8", "rgb16"):
        rgb = PNG_EXPECTED[key].astype(np.int64)
        half = 16384 if key == "rgb16" else 0
        want = (9797 * rgb[..., 0] + 19234 * rgb[..., 1] + 3737 * rgb[..., 2] + half) >> 15
        dtype = tf.uint16 if key == "rgb16" else tf.uint8
        got = sess.run(tf.image.decode_png(PNG_EXPECTED[key + "_png"].tobytes(), channels=1,
                                           dtype=dtype))
        np.testing.assert_array_equal(got[..., 0], want)


def test_sixteen_bit_color_png_round_trip(sess):
    rng = np.random.RandomState(1)
    for channels in (2, 3, 4):
        pixels = rng.randint(0, 65536, [5, 6, channels]).astype(np.uint16)
        for level in (-1, 0, 9):
            data = sess.run(tf.image.encode_png(pixels, compression=level))
            back = sess.run(tf.image.decode_png(data, dtype=tf.uint16))
            assert back.dtype == np.uint16
            np.testing.assert_array_equal(back, pixels)


def test_decode_channels_two_is_refused(sess):
    # TF's decoders take 0, 1, 3 or 4 channels (a gray + alpha PNG still decodes to 2
    # channels with channels=0)
    for decode in (tf.image.decode_png, tf.image.decode_jpeg, tf.image.decode_image):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="`channels` must be 0, 1, 3 or 4 but got 2"):
            sess.run(decode(_read("rgb.png"), channels=2))
    ga = sess.run(tf.image.decode_png(PNG_EXPECTED["ga16_png"].tobytes(), dtype=tf.uint16))
    np.testing.assert_array_equal(ga, PNG_EXPECTED["ga16"])


def test_encode_png_of_one_image_is_a_string_scalar(sess):
    encoded = tf.image.encode_png(IMAGE)
    length = tf.strings.length(encoded)
    head = tf.strings.substr(encoded, 0, 8)
    n, h = sess.run([length, head])
    assert n > 8 and h == b"\x89PNG\r\n\x1a\n"


def test_encode_png_of_an_empty_image(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="has no pixels"):
        sess.run(tf.image.encode_png(np.zeros([0, 2, 3], np.uint8)))


def test_decode_image_to_float_rounds_as_tf(sess):
    # TF reads a PNG as 16-bit for floats (v * 257 * float32(1 / 65535)); the other
    # formats are scaled from 8 bits (v * float32(1 / 255))
    png = sess.run(tf.image.decode_image(_read("rgb.png"), dtype=tf.float32))
    np.testing.assert_array_equal(
        png, (IMAGE.astype(np.float32) * 257) * np.float32(1.0 / 65535))
    bmp = sess.run(tf.image.decode_image(_read("rgb.bmp"), dtype=tf.float32))
    np.testing.assert_array_equal(bmp, IMAGE.astype(np.float32) * np.float32(1.0 / 255))


# --- WebP: files written by Pillow, decoded by TF 2.21 (fixtures/make_fixtures.py webp) ---
WEBP = np.load(os.path.join(FIXTURES, "webp_expected.npz"))
WEBP_FILES = ["rgb_lossy", "rgba_lossy", "anim_rgba"]


@pytest.mark.parametrize("key", WEBP_FILES)
def test_webp_decodes_to_tfs_pixels_by_every_op(sess, key):
    data = _read(key + ".webp")
    got = sess.run({"webp": tf.io.decode_webp(data), "image": tf.io.decode_image(data),
                    "first": tf.io.decode_image(data, expand_animations=False),
                    "png_op": tf.io.decode_png(data)})
    for name, value in got.items():
        want = WEBP["%s_%s" % (key, name) if name != "webp" else key]
        assert value.dtype == np.uint8 and value.shape == want.shape, (key, name)
        np.testing.assert_array_equal(value, want, err_msg="%s %s" % (key, name))
    # the lossless animation's frames are the pixels Pillow was given
    if key == "anim_rgba":
        assert not np.array_equal(got["webp"][0], got["webp"][1])


def test_webp_channels_must_be_the_files_own(sess):
    rgb, rgba, anim = (_read(k + ".webp") for k in WEBP_FILES)
    assert sess.run(tf.io.decode_webp(rgb, channels=3)).shape == (1, 13, 19, 3)
    assert sess.run(tf.image.decode_webp(rgba, channels=4)).shape == (1, 13, 19, 4)
    assert tf.io.decode_webp(rgb, channels=3).shape.as_list() == [None, None, None, 3]
    assert tf.io.decode_webp(rgb).shape.as_list() == [None, None, None, None]
    # TF 2.21's messages, run by run
    cases = [(tf.io.decode_webp(rgb, channels=4), "Number of channels requested does not "
              "match input"),
             (tf.io.decode_webp(rgba, channels=3), "Number of channels requested"),
             (tf.io.decode_webp(rgb, channels=1), "WebP only supports 3 or 4 channels"),
             (tf.io.decode_webp(rgb, channels=2), "`channels` must be 0, 1, 3 or 4 but got 2"),
             (tf.io.decode_image(anim, channels=3), "WebP Animation must be 4 channel RGBA"),
             (tf.io.decode_image(rgb, dtype=tf.float32), "WebP only supports uint8 for dtype"),
             (tf.io.decode_image(rgb, dtype=tf.float64), "WebP only supports uint8 for dtype"),
             (tf.io.decode_webp(b""), "Input is empty."),
             (tf.io.decode_png(b""), "Input is empty."),
             (tf.io.decode_webp(b"RIFF\0\0\0\0WEBPVP8 " + b"\0" * 20),
              "Failed to decode WebP header."),
             (tf.io.decode_webp(b"garbage"), "Unknown image file format")]
    for tensor, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(tensor)
    with pytest.raises(ValueError, match="rank 0"):
        tf.io.decode_webp([rgb])


def test_webp_of_an_rgb_animation_is_refused(sess):
    """TF reads WebP animations as RGBA only (its own decoder aborts the process on an
    RGB one with channels=0; tensorweave raises TF's error for channels=3)."""
    from PIL import Image
    import io
    frames = [Image.fromarray(np.full((4, 5, 3), v, np.uint8)) for v in (10, 200)]
    buf = io.BytesIO()
    frames[0].save(buf, format="WEBP", save_all=True, append_images=frames[1:],
                   lossless=True)
    for channels, message in ((0, "Number of channels requested"),
                              (3, "WebP Animation must be 4 channel RGBA"),
                              (4, "Number of channels requested")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(tf.io.decode_webp(buf.getvalue(), channels=channels))


def test_decode_webp_reads_other_formats_as_decode_image(sess):
    png = _read("rgb.png")
    np.testing.assert_array_equal(sess.run(tf.io.decode_webp(png)), EXPECTED["rgb_png"])


def test_jpeg_xl_is_refused_as_unsupported(sess):
    with pytest.raises(tf.errors.UnimplementedError, match="JPEG XL"):
        sess.run(tf.io.decode_image(b"\xff\x0a" + b"\0" * 30))
