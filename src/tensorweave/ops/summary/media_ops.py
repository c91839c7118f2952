"""Summary ops for media: ImageSummary (PNG, encoded with Pillow), AudioSummary and
AudioSummaryV2 (16-bit PCM WAV, written with the standard library's `wave`), and the TF1
builders `tf.summary.image` and `tf.summary.audio`.

Images follow TF's rules. uint8 images are written as they are. A float image is scaled
on its own: if its finite values are all >= 0 they are multiplied by 255 / max (so the
largest is 255), otherwise by 127 / max(|min|, |max|) and shifted by 128 (so 0 is gray);
the result is truncated to uint8, a maximum below 1e-6 gives a black image, and a pixel
with a NaN or infinite channel is painted `bad_color` (red). Only the first
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
def _float_image_to_uint8(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """One [h, w, c] float image as uint8, scaled by TF's rules (module docstring)."""
    image = image.astype(np.float32, copy=False)
    finite = np.isfinite(image)
    ok = finite.any()
    lo = image.min(initial=np.inf, where=finite) if ok else np.float32(0)
    hi = image.max(initial=-np.inf, where=finite) if ok else np.float32(0)
    if lo < 0:
        max_val = max(abs(lo), abs(hi))
        scale = np.float32(0) if max_val < _ZERO_THRESHOLD else np.float32(127) / max_val
        offset = np.float32(128)
    else:
        scale = np.float32(0) if hi < _ZERO_THRESHOLD else np.float32(255) / hi
        offset = np.float32(0)
    scaled = np.where(finite, image, np.float32(0)) * np.float32(scale) + offset
    out = scaled.astype(np.uint8)  # truncates, as TF's cast does
    bad_pixels = ~finite.all(axis=-1)
    if bad_pixels.any():
        out[bad_pixels] = bad_color[:image.shape[-1]]
    return out


def encode_png(image: np.ndarray) -> bytes:
    """A [h, w, c] uint8 image (c in 1, 3, 4) as PNG bytes (Pillow)."""
    from PIL import Image
    depth = image.shape[-1]
    pixels = image[:, :, 0] if depth == 1 else image
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels), _PIL_MODES[depth]).save(buf, format="PNG")
    return buf.getvalue()


@kernel("ImageSummary")
def _image_summary_kernel(ctx, tag, tensor):
    tag_text = _util.scalar_string(ctx, tag, "Tags")
    max_images = _check_max(ctx, "max_images")
    if tensor.ndim != 4 or tensor.shape[-1] not in (1, 3, 4):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Tensor must be 4-D with last dim 1, 3, or 4, not %s"
            % _util.shape_str(tensor.shape))
    bad_color = np.asarray(ctx.attrs["bad_color"]).reshape(-1)
    depth = tensor.shape[-1]
    if bad_color.size < depth:
        raise errors.InvalidArgumentError(
            None, ctx.op, "bad_color must have at least %d elements, got %d"
            % (depth, bad_color.size))
    bad_color = bad_color.astype(np.uint8)
    pb = _util.summary_pb2()
    summary = pb.Summary()
    for i in range(min(max_images, tensor.shape[0])):
        image = tensor[i]
        if image.dtype != np.uint8:
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


def encode_wav(samples: np.ndarray, sample_rate: float) -> bytes:
    """[frames, channels] float samples as a 16-bit PCM WAV file (stdlib `wave`)."""
    import wave
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(float_to_int16(samples).tobytes())
    return buf.getvalue()


def _audio_summary(ctx, tag, tensor, sample_rate: float):
    tag_text = _util.scalar_string(ctx, tag, "Tags")
    max_outputs = _check_max(ctx, "max_outputs")
    if not sample_rate > 0:
        raise errors.InvalidArgumentError(None, ctx.op, "sample_rate must be > 0")
    if tensor.ndim not in (2, 3):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Tensor must be 3-D or 2-D, got: %s" % _util.shape_str(tensor.shape))
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
