"""JPEG-specific ops beside the codecs of codec_ops.py: ExtractJpegShape,
DecodeAndCropJpeg, EncodeJpegVariableQuality, and the image augmentations built on them
(adjust_jpeg_quality, random_jpeg_quality).

Pillow decodes the whole image and the crop is taken from it; TF's libjpeg decodes only
the window, so the cropped pixels can differ by a few levels near chroma block edges
(the decoded pixels already can, see codec_ops.py).
"""
from __future__ import annotations

import io
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.ops.image.codec_ops import _contents, _decode, _format_of, _invalid, _jpeg_attrs


def _crop_shape(op) -> TensorShape:
    """[crop_height, crop_width, channels], the window's sizes when it is a constant."""
    from tensorweave.framework import tensor_util
    with_rank(op.inputs[0].shape, 0)
    window = tensor_util.constant_value(op.inputs[1])
    h = w = None
    if window is not None and np.size(window) == 4:
        h, w = (int(v) for v in np.reshape(window, -1)[2:])
    return TensorShape([h, w, op._get_attr("channels") or None])


register_op("ExtractJpegShape", inputs=["contents: string"],
            outputs=["image_shape: output_type"],
            attrs={"output_type": TypeAttr((_dt.int32, _dt.int64), default=_dt.int32)},
            shape=lambda op: (with_rank(op.inputs[0].shape, 0), TensorShape([3]))[1])
register_op("DecodeAndCropJpeg", inputs=["contents: string", "crop_window: int32"],
            outputs=["image: uint8"],
            attrs={"channels": 0, "ratio": 1, "fancy_upscaling": True,
                   "try_recover_truncated": False, "acceptable_fraction": 1.0,
                   "dct_method": ""},
            shape=lambda op: _crop_shape(op))
register_op("EncodeJpegVariableQuality", inputs=["images: uint8", "quality: int32"],
            outputs=["contents: string"],
            shape=lambda op: (with_rank(op.inputs[0].shape, 3), TensorShape([]))[1])
for _op in ("ExtractJpegShape", "DecodeAndCropJpeg", "EncodeJpegVariableQuality"):
    not_differentiable(_op)


def _jpeg(ctx, contents) -> bytes:
    data = _contents(ctx, contents)
    if _format_of(data) != "JPEG":
        raise _invalid(ctx, "Not a JPEG file: starts with %s"
                       % " ".join("0x%02x" % b for b in data[:2]))
    return data


@kernel("ExtractJpegShape")
def _extract_jpeg_shape_kernel(ctx, contents):
    from PIL import Image, UnidentifiedImageError
    data = _jpeg(ctx, contents)
    try:
        image = Image.open(io.BytesIO(data))
    except (UnidentifiedImageError, OSError) as e:
        raise _invalid(ctx, "Invalid JPEG data: %s" % str(e).split(" <")[0]) from None
    width, height = image.size
    channels = len(image.getbands())
    return np.array([height, width, channels], dtype=ctx.attrs["output_type"].as_numpy_dtype)


@kernel("DecodeAndCropJpeg")
def _decode_and_crop_jpeg_kernel(ctx, contents, crop_window):
    ratio = ctx.attrs["ratio"]
    if ratio not in (1, 2, 4, 8):
        raise _invalid(ctx, "ratio must be 1, 2, 4 or 8, got %d" % ratio)
    window = np.asarray(crop_window).reshape(-1)
    if window.size != 4:
        raise _invalid(ctx, "crop_window must be shape [4], got %s"
                       % list(np.shape(crop_window)))
    image = _decode(ctx, _jpeg(ctx, contents), ctx.attrs["channels"], np.uint8, False, ratio,
                    **_jpeg_attrs(ctx))
    y, x, h, w = (int(v) for v in window)
    height, width = image.shape[:2]
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > height or x + w > width:
        raise _invalid(ctx, "Invalid JPEG data or crop window: x=%d, y=%d, w=%d, h=%d for "
                       "image_width: %d and image_height: %d" % (x, y, w, h, width, height))
    return np.ascontiguousarray(image[y:y + h, x:x + w])


@kernel("EncodeJpegVariableQuality")
def _encode_jpeg_variable_quality_kernel(ctx, images, quality):
    from PIL import Image
    q = int(np.asarray(quality))
    if np.ndim(quality) != 0:
        raise _invalid(ctx, "quality must be a scalar, got %s" % list(np.shape(quality)))
    if not 0 <= q <= 100:
        raise _invalid(ctx, "quality must be in [0,100], got %d" % q)
    if images.ndim != 3 or images.shape[-1] not in (1, 3):
        raise _invalid(ctx, "image must be 3-dimensional with 1 or 3 channels, got %s"
                       % list(images.shape))
    gray = images.shape[-1] == 1
    picture = Image.fromarray(np.ascontiguousarray(images[..., 0] if gray else images),
                              "L" if gray else "RGB")
    buf = io.BytesIO()
    picture.save(buf, format="JPEG", quality=q)
    return np.array(buf.getvalue(), dtype=object)


@tf_export("image.extract_jpeg_shape", "io.extract_jpeg_shape")
def extract_jpeg_shape(contents, output_type=_dt.int32, name: Optional[str] = None) -> Tensor:
    """The [height, width, channels] of a JPEG image, read from its header.

    Args:
      contents: a scalar string Tensor, the JPEG-encoded image.
      output_type: tf.int32 (default) or tf.int64.
      name: op name.

    Returns:
      A 1-D Tensor of 3 values of `output_type`.
    """
    return apply_op("ExtractJpegShape", [contents],
                    {"output_type": _dt.as_dtype(output_type)},
                    name=name or "ExtractJpegShape").outputs[0]


@tf_export("image.decode_and_crop_jpeg", "io.decode_and_crop_jpeg")
def decode_and_crop_jpeg(contents, crop_window, channels: int = 0, ratio: int = 1,
                         fancy_upscaling: bool = True, try_recover_truncated: bool = False,
                         acceptable_fraction: float = 1, dct_method: str = "",
                         name: Optional[str] = None) -> Tensor:
    """Decodes a JPEG image and crops it to `crop_window`.

    Args:
      contents: a scalar string Tensor, the JPEG-encoded image.
      crop_window: an int32 vector [crop_y, crop_x, crop_height, crop_width].
      channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction,
        dct_method: as for `decode_jpeg`.
      name: op name.

    Returns:
      A uint8 Tensor [crop_height, crop_width, channels].

    """
    return apply_op("DecodeAndCropJpeg", [contents, convert_to_tensor(crop_window,
                                                                      _dt.int32)],
                    {"channels": int(channels), "ratio": int(ratio),
                     "fancy_upscaling": bool(fancy_upscaling),
                     "try_recover_truncated": bool(try_recover_truncated),
                     "acceptable_fraction": float(acceptable_fraction),
                     "dct_method": dct_method}, name=name or "DecodeAndCropJpeg").outputs[0]


@tf_export("image.adjust_jpeg_quality")
def adjust_jpeg_quality(image, jpeg_quality, dct_method: str = "",
                        name: Optional[str] = None) -> Tensor:
    """`image` encoded as a JPEG of `jpeg_quality` and decoded again (the artifacts of
    that quality), in the image's dtype.

    Args:
      image: a [height, width, 1 or 3] image of any image dtype.
      jpeg_quality: an int (or int32 scalar Tensor) in [0, 100].
      dct_method: as for `decode_jpeg`.
      name: name scope.

    Returns:
      A Tensor of the type and shape of `image`.
    """
    from tensorweave.ops.image.codec_ops import decode_jpeg
    from tensorweave.ops.image.color_ops import convert_image_dtype
    with _graph.name_scope(name, "adjust_jpeg_quality", [image]):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1] if image.shape.ndims else None
        orig_dtype = image.dtype
        image = convert_image_dtype(image, _dt.uint8, saturate=True)
        quality = convert_to_tensor(jpeg_quality, dtype=_dt.int32)
        encoded = apply_op("EncodeJpegVariableQuality", [image, quality],
                           name="EncodeJpegVariableQuality").outputs[0]
        image = decode_jpeg(encoded, channels=channels or 0, dct_method=dct_method)
        return convert_image_dtype(image, orig_dtype, saturate=True)


@tf_export("image.random_jpeg_quality")
def random_jpeg_quality(image, min_jpeg_quality: int, max_jpeg_quality: int,
                        seed: Optional[int] = None) -> Tensor:
    """`adjust_jpeg_quality` with a quality drawn uniformly from
    [min_jpeg_quality, max_jpeg_quality).

    Args:
      image: a [height, width, 1 or 3] image.
      min_jpeg_quality, max_jpeg_quality: ints, 0 <= min < max <= 100.
      seed: the op-level random seed.

    Returns:
      A Tensor of the type and shape of `image`.

    Raises:
      ValueError: the bounds are out of [0, 100] or not increasing.
    """
    from tensorweave.ops.random.random_ops import random_uniform
    if min_jpeg_quality < 0 or max_jpeg_quality < 0 or min_jpeg_quality > 100 or \
            max_jpeg_quality > 100:
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed,
                             dtype=_dt.int32)
    return adjust_jpeg_quality(image, quality)
