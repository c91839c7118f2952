"""ImageSummary, AudioSummaryV2 and AudioSummary: pixels and samples decoded with Pillow
and the standard library's `wave`, checked against TF's rules written out by hand (and
the values real TF gave for the same inputs, noted where used)."""
import io
import wave

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_builder import apply_op

summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
Image = pytest.importorskip("PIL.Image")


def values_of(sess, t):
    out = summary_pb2.Summary.FromString(sess.run(t))
    return list(out.value)


def pixels(value) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(value.image.encoded_image_string)))


# --- images ---------------------------------------------------------------------------------
def test_uint8_images_are_written_unchanged(sess):
    x = (np.arange(2 * 3 * 2 * 4) * 5 % 256).astype(np.uint8).reshape(2, 3, 2, 4)
    s = tf.summary.image("img", tf.constant(x))
    assert s.op.type == "ImageSummary" and s.shape.as_list() == [] and s.dtype == tf.string
    vals = values_of(sess, s)
    assert [v.tag for v in vals] == ["img/image/0", "img/image/1"]
    for i, v in enumerate(vals):
        assert (v.image.height, v.image.width, v.image.colorspace) == (3, 2, 4)
        im = Image.open(io.BytesIO(v.image.encoded_image_string))
        assert im.format == "PNG" and im.mode == "RGBA"
        np.testing.assert_array_equal(pixels(v), x[i])


def test_max_outputs_and_tags(sess):
    x = np.zeros((5, 2, 2, 3), np.uint8)
    assert [v.tag for v in values_of(sess, tf.summary.image("a", x, max_outputs=3))] == [
        "a/image/0", "a/image/1", "a/image/2"]
    one = values_of(sess, tf.summary.image("b", x, max_outputs=1, family="fam"))
    assert [v.tag for v in one] == ["fam/fam/b/image"]
    assert Image.open(io.BytesIO(one[0].image.encoded_image_string)).mode == "RGB"
    assert values_of(sess, tf.summary.image("c", np.zeros((0, 2, 2, 1), np.uint8))) == []


def _affine(c, scale, offset, dtype):
    """c * scale + offset in the image's dtype, one element: float16 rounds after each
    operation (Eigen's half), float64 computes in double, float32 in float."""
    if dtype == np.float16:
        product = np.float16(np.float32(c) * np.float32(np.float16(scale)))
        return np.float16(np.float32(product) + np.float32(np.float16(offset)))
    kind = np.float64 if dtype == np.float64 else np.float32
    return kind(c) * kind(scale) + kind(offset)


def reference_float_image(img):
    """TF's scaling of one float image, element by element: min and max in float32
    over the pixels whose channels are all finite, the transform in the image's dtype,
    truncated to uint8 (a non-finite result, from a float16 scale that overflowed, is
    0)."""
    finite = [float(v) for px in img.reshape(-1, img.shape[-1]) if np.isfinite(px).all()
              for v in np.float32(px)]
    lo, hi = (min(finite), max(finite)) if finite else (np.inf, -np.inf)
    if lo < 0:
        m = np.float32(max(abs(lo), abs(hi)))
        scale, offset = (np.float32(0) if m < np.float32(1e-6) else np.float32(127) / m,
                         np.float32(128))
    else:
        scale, offset = (np.float32(0) if np.float32(hi) < np.float32(1e-6)
                         else np.float32(255) / np.float32(hi), np.float32(0))
    out = np.zeros(img.shape, np.uint8)
    with np.errstate(over="ignore", invalid="ignore"):
        for idx in np.ndindex(img.shape[:2]):
            px = img[idx]
            if not np.isfinite(px).all():
                out[idx] = [255, 0, 0, 255][:img.shape[2]]
                continue
            scaled = [_affine(c, scale, offset, img.dtype) for c in px]
            out[idx] = [int(v) if np.isfinite(v) else 0 for v in scaled]
    return out


@pytest.mark.parametrize("case,want", [
    # values real TF gave for these inputs
    ("neg", [67, 97, 128, 146, 158, 188, 248, 255, 255, 1, 188, 188]),
    ("pos", [0, 12, 25, 38, 63, 89, 127, 242, 255, 255, 0, 0]),
])
def test_float_image_scaling(sess, case, want):
    x = {"neg": [-1, -0.5, 0, 0.3, 0.5, 1, 2, np.nan, np.inf, -2.1, 0.999, 1.001],
         "pos": [0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.9, 2.0, np.nan, 0.004, 0.0039]}[case]
    img = np.array(x, np.float32).reshape(1, 3, 4, 1)
    (v,) = values_of(sess, tf.summary.image("i", img, max_outputs=1))
    assert pixels(v).ravel().tolist() == want
    assert pixels(v).tolist() == reference_float_image(img[0])[:, :, 0].tolist()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_images_each_scaled_on_their_own(sess, dtype):
    rng = np.random.RandomState(1)
    x = rng.standard_normal((3, 4, 5, 3)).astype(dtype)
    x[1] = np.abs(x[1]) * 10     # all positive
    x[2, 1, 2, 0] = np.inf       # one bad pixel
    vals = values_of(sess, tf.summary.image("rgb", x))
    assert len(vals) == 3
    for i, v in enumerate(vals):
        assert pixels(v).tolist() == reference_float_image(x[i]).tolist()
    assert pixels(vals[2])[1, 2].tolist() == [255, 0, 0]


@pytest.mark.parametrize("dtype,x,want", [
    # values real TF 2.21 gave for these inputs: float16 is scaled in half precision
    # (228, not 227), float64 in double (0 and 170, not 1 and 171), and a float16 scale
    # that overflows (255 / 0.00227 > 65504) gives a black image
    (np.float16, [1.763671875, 0.39990234375, 0.97900390625, 2.240234375, 1.8681640625,
                  -0.97705078125, 0.9501953125, -0.1510009765625, -0.10302734375,
                  0.410888671875, 0.14404296875, 1.4541015625],
     [228, 150, 183, 255, 233, 72, 181, 119, 122, 151, 136, 210]),
    (np.float64, [0.761, 0.122, 0.444, 0.334, 1.494, -0.205, 0.313, -0.854, -2.553, 0.654,
                  0.864, -0.742],
     [165, 134, 150, 144, 202, 117, 143, 85, 0, 160, 170, 91]),
    (np.float16, [0.002269744873046875, 0.0014543533325195312, 4.601478576660156e-05,
                  0.00018703937530517578, 0.0015325546264648438, 0.001468658447265625],
     [0] * 6),
])
def test_float16_and_float64_images_scaled_in_their_dtype(sess, dtype, x, want):
    img = np.array(x, dtype).reshape(1, 1, -1, 1)
    (v,) = values_of(sess, tf.summary.image("i", img, max_outputs=1))
    assert pixels(v).ravel().tolist() == want
    assert pixels(v).ravel().tolist() == reference_float_image(img[0]).ravel().tolist()


def test_bad_pixel_channels_left_out_of_min_and_max(sess):
    # the finite 20.0 beside the NaN does not set the scale: 3.0 does (TF 2.21's pixels)
    x = np.array([[[[1., 20., np.nan], [-5., 0.5, 0.25]],
                   [[0.1, 3., 0.2], [0.3, 0.4, 0.5]]]], np.float32)
    (v,) = values_of(sess, tf.summary.image("i", x, max_outputs=1))
    assert pixels(v).ravel().tolist() == [255, 0, 0, 1, 140, 134, 130, 204, 133, 135, 138,
                                          140]


@pytest.mark.parametrize("shape", [(2, 0, 2, 3), (2, 2, 0, 1), (0, 0, 2, 3)])
@pytest.mark.parametrize("dtype", [tf.uint8, tf.float32])
def test_images_with_no_pixels_are_an_error(sess, shape, dtype):
    s = tf.summary.image("i", tf.zeros(shape, dtype))
    want = "input tensor must have non-zero dims. Found: [%s]." % ", ".join(map(str, shape))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(s)
    assert info.value.message.startswith(want)


def test_tiny_and_zero_images_are_black(sess):
    x = np.stack([np.full((2, 2, 1), 9e-7, np.float32), np.zeros((2, 2, 1), np.float32),
                  np.full((2, 2, 1), 1e-6, np.float32)])
    vals = values_of(sess, tf.summary.image("t", x))
    assert [pixels(v).ravel().tolist() for v in vals] == [[0] * 4, [0] * 4, [255] * 4]


def test_bad_color_attr(sess):
    x = np.array([[[[np.nan], [0.5]]]], np.float32)
    attrs = {"max_images": 1, "bad_color": np.array([7, 8, 9], np.uint8)}
    s = apply_op("ImageSummary", ["t", x], attrs)
    (v,) = values_of(sess, s.outputs[0])
    assert pixels(v).ravel().tolist() == [7, 255]


def test_short_bad_color_is_an_error_for_float_images_only(sess):
    short = {"max_images": 1, "bad_color": np.array([7, 8], np.uint8)}
    floats = apply_op("ImageSummary", ["t", np.zeros((1, 1, 1, 3), np.float32)], short)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(floats.outputs[0])
    assert info.value.message.startswith(
        "expected depth <= bad_color.size, got depth = 3, bad_color.size = 2")
    # TF reads bad_color only to paint float images
    uint8 = apply_op("ImageSummary", ["t", np.zeros((1, 1, 1, 3), np.uint8)], short)
    (v,) = values_of(sess, uint8.outputs[0])
    assert pixels(v).ravel().tolist() == [0, 0, 0]


def test_bad_color_as_a_tensor_proto(sess):
    color = tf.make_tensor_proto(np.array([0, 255, 0], np.uint8))
    x = np.full((1, 1, 1, 3), np.nan, np.float32)
    s = tf.raw_ops.ImageSummary(tag="t", tensor=x, bad_color=color)
    (v,) = values_of(sess, s)
    assert pixels(v).ravel().tolist() == [0, 255, 0]


@pytest.mark.parametrize("shape", [(2, 2, 1), (1, 2, 2, 2), (1, 2, 2, 5)])
def test_image_shape_errors(sess, shape):
    s = tf.summary.image("i", tf.placeholder_with_default(np.zeros(shape, np.float32), None))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Tensor must be 4-D with last dim 1, 3, or 4, not \[%s\]"
                             % ",".join(map(str, shape))):
        sess.run(s)


def test_max_outputs_below_one(graph):
    with pytest.raises(ValueError, match="Attr 'max_images' of 'ImageSummary' Op passed 0 "
                                         "less than minimum 1"):
        tf.summary.image("i", tf.zeros([1, 2, 2, 1]), max_outputs=0)
    with pytest.raises(ValueError, match="Attr 'max_outputs' of 'AudioSummaryV2' Op passed "
                                         "-1 less than minimum 1"):
        tf.summary.audio("a", tf.zeros([1, 2]), 8000, max_outputs=-1)


def test_image_dtype_error(graph):
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.summary.image("i", tf.zeros([1, 2, 2, 1], tf.int32))


# --- audio ----------------------------------------------------------------------------------
def read_wav(data: bytes):
    with wave.open(io.BytesIO(data), "rb") as w:
        frames = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        return (w.getnchannels(), w.getsampwidth(), w.getframerate(),
                frames.reshape(-1, w.getnchannels()))


def reference_int16(x):
    """round(x * 32768), halves away from zero, clamped to int16."""
    out = []
    for v in np.asarray(x, np.float32).ravel():
        y = float(np.float32(v) * np.float32(32768))
        r = np.floor(abs(y) + 0.5) * (1 if y >= 0 else -1)
        out.append(int(min(max(r, -32768), 32767)))
    return out


def test_audio_summary_mono(sess):
    x = np.array([[0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 0.1, -3.0]], np.float32)
    s = tf.summary.audio("au", tf.constant(x), 8000)
    assert s.op.type == "AudioSummaryV2" and s.shape.as_list() == []
    (v,) = values_of(sess, s)
    assert v.tag == "au/audio/0"
    assert (v.audio.sample_rate, v.audio.num_channels, v.audio.length_frames,
            v.audio.content_type) == (8000.0, 1, 8, "audio/wav")
    channels, width, rate, frames = read_wav(v.audio.encoded_audio_string)
    assert (channels, width, rate) == (1, 2, 8000)
    assert frames[:, 0].tolist() == reference_int16(x[0])
    # the samples real TF wrote for the first six values
    assert frames[:6, 0].tolist() == [0, 16384, -16384, 32767, -32768, 32767]


def test_audio_summary_stereo_batch_and_max_outputs(sess):
    x = np.random.RandomState(0).uniform(-1, 1, (3, 5, 2)).astype(np.float32)
    vals = values_of(sess, tf.summary.audio("st", x, tf.constant(16000.0), max_outputs=2))
    assert [v.tag for v in vals] == ["st/audio/0", "st/audio/1"]
    for i, v in enumerate(vals):
        channels, _, rate, frames = read_wav(v.audio.encoded_audio_string)
        assert (channels, rate, v.audio.length_frames) == (2, 16000, 5)
        assert frames.ravel().tolist() == reference_int16(x[i])
    (one,) = values_of(sess, tf.summary.audio("m", x, 100.0, max_outputs=1))
    assert one.tag == "m/audio"


def test_audio_summary_bytes_match_tensorflow(sess):
    # the WAV real TF wrote for [[[0.1, -0.1], [0.2, -0.2], [0.3, -0.3]]] at 16 kHz
    want = bytes.fromhex("524946463000000057415645666d74201000000001000200803e000000fa0000"
                         "04001000646174610c000000cd0c33f39a1966e666269ad9")
    x = np.array([[[0.1, -0.1], [0.2, -0.2], [0.3, -0.3]]], np.float32)
    (v,) = values_of(sess, tf.summary.audio("a", x, 16000, max_outputs=2))
    assert v.audio.encoded_audio_string == want


def test_audio_summary_v1_op(sess):
    x = np.array([[0.25, -0.25]], np.float32)
    s = apply_op("AudioSummary", ["old", x], {"sample_rate": 22050.0})
    (v,) = values_of(sess, s.outputs[0])
    assert v.tag == "old/audio/0" and v.audio.sample_rate == 22050.0
    assert read_wav(v.audio.encoded_audio_string)[3].ravel().tolist() == [8192, -8192]


@pytest.mark.parametrize("shape", [(4,), (1, 2, 2, 2)])
def test_audio_rank_error(sess, shape):
    s = tf.summary.audio("a", tf.placeholder_with_default(np.zeros(shape, np.float32), None),
                         8000)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Tensor must be 3-D or 2-D, got: \[%s\]"
                             % ",".join(map(str, shape))):
        sess.run(s)


@pytest.mark.parametrize("rate", [0.0, -5.0])
def test_audio_sample_rate_error(sess, rate):
    s = tf.summary.audio("a", tf.zeros([1, 4]), rate)
    with pytest.raises(tf.errors.InvalidArgumentError, match="sample_rate must be > 0"):
        sess.run(s)


@pytest.mark.parametrize("rate,header_rate", [
    # the rates TF writes in the WAV header: the float32 rate rounded half to even
    # (lrintf), 1 for a rate that rounds to 0
    (44100.5, 44100), (44101.5, 44102), (2.7, 3), (0.4, 1), (8000.0, 8000)])
def test_wav_header_rate_rounded_as_tf(sess, rate, header_rate):
    (v,) = values_of(sess, tf.summary.audio("a", tf.zeros([1, 2]), rate))
    assert v.audio.sample_rate == np.float32(rate)
    assert read_wav(v.audio.encoded_audio_string)[2] == header_rate


@pytest.mark.parametrize("shape,message", [
    ((1, 3, 0), "audio is null"),
    ((1, 0, 0), "num_channels must be in (0, 2^16), got: 0")])
def test_audio_with_no_channels_is_an_error(sess, shape, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(tf.summary.audio("a", tf.zeros(shape), 8000.0))
    assert info.value.message.startswith(message)


@pytest.mark.parametrize("build,message", [
    (lambda: tf.raw_ops.ImageSummary(tag=["a"], tensor=tf.zeros([1, 1, 1, 1])),
     "Tags must be a scalar"),
    (lambda: tf.raw_ops.AudioSummaryV2(tag=["a"], tensor=tf.zeros([1, 2]), sample_rate=2.0),
     "Tag must be a scalar")])
def test_media_tag_must_be_scalar(sess, build, message):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(build())
    assert info.value.message.split("\n")[0] == message


def test_media_ops_are_not_differentiable():
    from tensorweave.framework import registry
    for op_type in ("ImageSummary", "AudioSummaryV2", "AudioSummary"):
        assert registry.get_gradient(op_type) == (True, None)
