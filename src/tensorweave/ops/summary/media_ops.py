"""Summary ops for media: ImageSummary (PNG, encoded with Pillow), AudioSummary and
AudioSummaryV2 (16-bit PCM WAV, written with the standard library's `wave`), and the TF1
builders `tf.summary.image` and `tf.summary.audio`.

Images follow TF's rules. uint8 images are written as they are. A float image is scaled
on its own, from the min and max of its good pixels (those whose channels are all
finite): if they are all >= 0 the values are multiplied by 255 / max (so the largest is
255), otherwise by 127 / max(|min|, |max|) and shifted by 128 (so 0 is gray), in the
image's own dtype; the result is truncated to uint8, a maximum below 1e-6 gives a black
image, and a pixel with a NaN or infinite channel is painted `bad_color` (red). An image
with no rows or no columns is an error. Only the first
`max_images` images are written, tagged "<tag>/image/<i>" ("<tag>/image" when
`max_images` is 1). Audio samples are clipped to [-1, 1] and written as
round(x * 32768) clamped to the int16 range, tagged "<tag>/audio/<i>".
"""
from __future__ import annotations

import io
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.summary import summary_util as _util

_ZERO_THRESHOLD = np.float32(1e-6)
_PIL_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def _scalar_shape(op) -> TensorShape:
    return TensorShape([])


register_op("ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
            attrs={"max_images": 3,
                   "T": TypeAttr((_dt.uint8, _dt.float32, _dt.float16, _dt.float64),
                                 default=_dt.float32),
                   "bad_color": np.array([255, 0, 0, 255], dtype=np.uint8)},
            shape=_scalar_shape)
register_op("AudioSummaryV2", inputs=["tag: string", "tensor: float32", "sample_rate: float32"],
            outputs=["summary: string"], attrs={"max_outputs": 3}, shape=_scalar_shape)
register_op("AudioSummary", inputs=["tag: string", "tensor: float32"],
            outputs=["summary: string"], attrs={"sample_rate": 0.0, "max_outputs": 3},
            shape=_scalar_shape)
for _op_type in ("ImageSummary", "AudioSummaryV2", "AudioSummary"):
    not_differentiable(_op_type)


def _at_least_one(op_type: str, attr: str, value) -> int:
    """A builder's check of an int attr with minimum 1 (TF's build-time ValueError)."""
    value = int(value)
    if value < 1:
        raise ValueError("Attr '%s' of '%s' Op passed %d less than minimum 1."
                         % (attr, op_type, value))
    return value


def _check_max(ctx, attr: str) -> int:
    n = int(ctx.attrs[attr])
    if n < 1:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Attr %s has value %d less than minimum 1" % (attr, n))
    return n


# --- images -------------------------------------------------------------------------------
def _image_scale(lo: np.float32, hi: np.float32) -> tuple:
    """(scale, offset) as float32, from the finite pixels' min and max (TF's rules)."""
    if lo < 0:
        max_val = max(abs(lo), abs(hi))
        scale = np.float32(0) if max_val < _ZERO_THRESHOLD else np.float32(127) / max_val
        return np.float32(scale), np.float32(128)
    scale = np.float32(0) if hi < _ZERO_THRESHOLD else np.float32(255) / hi
    return np.float32(scale), np.float32(0)


def _to_uint8(values: np.ndarray) -> np.ndarray:
    """Truncates toward zero as C++'s float-to-uint8 cast does on TF's CPU; a non-finite
    value (a float16 scale that overflowed) becomes 0."""
    ok = np.isfinite(values)
    return np.clip(np.trunc(np.where(ok, values, 0)), 0, 255).astype(np.uint8)


def _float_image_to_uint8(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """One [h, w, c] float image as uint8, scaled by TF's rules (module docstring).

    The min and max are taken in float32 over the pixels whose channels are all finite;
    the affine transform is computed in the image's own dtype, rounding after each
    operation for float16 and in double for float64, as TF's kernel does.
    """
    good_pixels = np.isfinite(image).all(axis=-1)
    finite = image[good_pixels].astype(np.float32)
    lo = finite.min() if finite.size else np.float32(np.inf)
    hi = finite.max() if finite.size else np.float32(-np.inf)
    scale, offset = _image_scale(lo, hi)
    with np.errstate(over="ignore", invalid="ignore"):
        scale, offset = image.dtype.type(scale), image.dtype.type(offset)
        out = _to_uint8(image * scale + offset)
    out[~good_pixels] = bad_color[:image.shape[-1]]
    return out


def encode_png(image: np.ndarray) -> bytes:
    """A [h, w, c] uint8 image (c in 1, 3, 4) as PNG bytes (Pillow)."""
    from PIL import Image
    depth = image.shape[-1]
    pixels = image[:, :, 0] if depth == 1 else image
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels), _PIL_MODES[depth]).save(buf, format="PNG")
    return buf.getvalue()


def _bad_color(ctx, depth: int) -> np.ndarray:
    """The `bad_color` attr as uint8 values (a TensorProto when given through raw_ops),
    checked to cover `depth` channels."""
    color = ctx.attrs["bad_color"]
    if hasattr(color, "tensor_shape"):  # a TensorProto
        from tensorweave.framework.graph_def_proto import tensor_proto_to_array
        color = tensor_proto_to_array(color)
    color = np.asarray(color).reshape(-1)
    if color.size < depth:
        raise errors.InvalidArgumentError(
            None, ctx.op, "expected depth <= bad_color.size, got depth = %d, "
            "bad_color.size = %d" % (depth, color.size))
    return color.astype(np.uint8)


def _check_image_batch(ctx, tensor: np.ndarray) -> None:
    if tensor.ndim != 4 or tensor.shape[-1] not in (1, 3, 4):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Tensor must be 4-D with last dim 1, 3, or 4, not %s"
            % _util.shape_str(tensor.shape))
    if tensor.shape[1] == 0 or tensor.shape[2] == 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input tensor must have non-zero dims. Found: [%s]."
            % ", ".join(str(d) for d in tensor.shape))


@kernel("ImageSummary")
def _image_summary_kernel(ctx, tag, tensor):
    tag_text = _util.scalar_string(ctx, tag, "Tags must be a scalar")
    max_images = _check_max(ctx, "max_images")
    _check_image_batch(ctx, tensor)
    depth = tensor.shape[-1]
    # as TF, bad_color is only read (and checked) for float images
    bad_color = None if tensor.dtype == np.uint8 else _bad_color(ctx, depth)
    pb = _util.summary_pb2()
    summary = pb.Summary()
    for i in range(min(max_images, tensor.shape[0])):
        image = tensor[i]
        if bad_color is not None:
            image = _float_image_to_uint8(image, bad_color)
        value = summary.value.add(
            tag=("%s/image" % tag_text) if max_images == 1 else "%s/image/%d" % (tag_text, i))
        value.image.height = image.shape[0]
        value.image.width = image.shape[1]
        value.image.colorspace = depth
        value.image.encoded_image_string = encode_png(image)
    return _util.serialized(summary)


# --- audio --------------------------------------------------------------------------------
def float_to_int16(samples: np.ndarray) -> np.ndarray:
    """Float samples as int16: round(x * 32768) (halves away from zero), clamped to the
    int16 range; NaN becomes 0."""
    y = np.nan_to_num(samples.astype(np.float32), nan=0.0) * np.float32(32768)
    rounded = np.sign(y) * np.floor(np.abs(y) + np.float32(0.5))
    return np.clip(rounded, -32768, 32767).astype("<i2")


def wav_frame_rate(sample_rate: float) -> int:
    """The integer rate written in the WAV header: the float32 rate rounded half to even
    (C's lrintf), and 1 for a rate that rounds to 0, as TF writes it."""
    return max(int(np.rint(np.float32(sample_rate))), 1)


def encode_wav(samples: np.ndarray, sample_rate: float) -> bytes:
    """[frames, channels] float samples as a 16-bit PCM WAV file (stdlib `wave`)."""
    import wave
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(wav_frame_rate(sample_rate))
        w.writeframes(float_to_int16(samples).tobytes())
    return buf.getvalue()


def _check_clips(ctx, tensor: np.ndarray) -> None:
    """TF's checks of an audio batch, [batch, frames] or [batch, frames, channels]."""
    if tensor.ndim not in (2, 3):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Tensor must be 3-D or 2-D, got: %s" % _util.shape_str(tensor.shape))
    if tensor.ndim == 3 and tensor.shape[0] > 0 and tensor.shape[2] == 0:
        # TF's WAV encoder sees no samples for frames it was told exist
        message = ("audio is null" if tensor.shape[1] > 0
                   else "num_channels must be in (0, 2^16), got: 0")
        raise errors.InvalidArgumentError(None, ctx.op, message)


def _audio_summary(ctx, tag, tensor, sample_rate: float):
    max_outputs = _check_max(ctx, "max_outputs")
    tag_text = _util.scalar_string(ctx, tag, "Tag must be a scalar")
    _check_clips(ctx, tensor)
    if not sample_rate > 0:
        raise errors.InvalidArgumentError(None, ctx.op, "sample_rate must be > 0")
    if tensor.ndim == 2:
        tensor = tensor[:, :, None]
    pb = _util.summary_pb2()
    summary = pb.Summary()
    for i in range(min(max_outputs, tensor.shape[0])):
        value = summary.value.add(
            tag=("%s/audio" % tag_text) if max_outputs == 1 else "%s/audio/%d" % (tag_text, i))
        value.audio.sample_rate = sample_rate
        value.audio.num_channels = tensor.shape[2]
        value.audio.length_frames = tensor.shape[1]
        value.audio.content_type = "audio/wav"
        value.audio.encoded_audio_string = encode_wav(tensor[i], sample_rate)
    return _util.serialized(summary)


@kernel("AudioSummaryV2")
def _audio_summary_v2_kernel(ctx, tag, tensor, sample_rate):
    rate = np.asarray(sample_rate).reshape(-1)
    if rate.size != 1:
        raise errors.InvalidArgumentError(
            None, ctx.op, "sample_rate must be rank-0 or contain a single value")
    return _audio_summary(ctx, tag, tensor, float(rate[0]))


@kernel("AudioSummary")
def _audio_summary_v1_kernel(ctx, tag, tensor):
    return _audio_summary(ctx, tag, tensor, float(ctx.attrs["sample_rate"]))


# --- builders -----------------------------------------------------------------------------
@tf_export("summary.image")
def image(name: str, tensor, max_outputs: int = 3, collections: Optional[Sequence[str]] = None,
          family: Optional[str] = None) -> Tensor:
    """Outputs a `Summary` protocol buffer with images.

    `tensor` is a 4-D `[batch_size, height, width, channels]` uint8 or float Tensor with
    1 (grayscale), 3 (RGB) or 4 (RGBA) channels. Float images are scaled to [0, 255]
    one by one (see the module docstring); the first `max_outputs` images are written,
    tagged "name/image/0", "name/image/1", ... ("name/image" when `max_outputs` is 1).

    Args:
      name: a name for the op; the base of the tags.
      tensor: the images (uint8, float16, float32 or float64).
      max_outputs: the most images to write (>= 1).
      collections: graph collection keys; defaults to `[GraphKeys.SUMMARIES]`.
      family: optional; a prefix of the tags, and the tab TensorBoard shows them under.

    Returns:
      A scalar Tensor of type `string`: the serialized `Summary`.

    Raises:
      ValueError: `max_outputs` is less than 1.
      TypeError: `tensor` has another dtype.
    """
    with _util.summary_scope(name, family, values=[tensor]) as (tag, scope):
        max_images = _at_least_one("ImageSummary", "max_images", max_outputs)
        val = apply_op("ImageSummary", [tag, tensor], {"max_images": max_images},
                       name=scope).outputs[0]
        _util.collect(val, collections)
    return val


@tf_export("summary.audio")
def audio(name: str, tensor, sample_rate, max_outputs: int = 3,
          collections: Optional[Sequence[str]] = None, family: Optional[str] = None) -> Tensor:
    """Outputs a `Summary` protocol buffer with audio.

    `tensor` is a float Tensor `[batch_size, frames, channels]` or `[batch_size, frames]`
    with samples in [-1.0, 1.0]; each of the first `max_outputs` clips is written as a
    16-bit WAV file, tagged "name/audio/0", ... ("name/audio" when `max_outputs` is 1).

    Args:
      name: a name for the op; the base of the tags.
      tensor: the float32 audio.
      sample_rate: a scalar float32 Tensor (or Python number): the sample rate in Hz.
      max_outputs: the most clips to write (>= 1).
      collections: graph collection keys; defaults to `[GraphKeys.SUMMARIES]`.
      family: optional; a prefix of the tags, and the tab TensorBoard shows them under.

    Returns:
      A scalar Tensor of type `string`: the serialized `Summary`.

    Raises:
      ValueError: `max_outputs` is less than 1.
    """
    with _util.summary_scope(name, family, values=[tensor]) as (tag, scope):
        max_outputs = _at_least_one("AudioSummaryV2", "max_outputs", max_outputs)
        val = apply_op("AudioSummaryV2", [tag, tensor, sample_rate],
                       {"max_outputs": max_outputs}, name=scope).outputs[0]
        _util.collect(val, collections)
    return val
