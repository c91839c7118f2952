"""Image codecs through Pillow: DecodeJpeg, DecodePng, DecodeBmp, DecodeGif, DecodeWebP,
DecodeImage, EncodeJpeg, EncodePng (part of the image family).

As TF 2's kernels do, every decoder reads any of the formats (the format is taken from
the data, not the op). Channel conversions follow TF: RGB to gray with libpng's
fixed-point weights (libjpeg's own luma for JPEG), 8-bit to 16-bit by multiplying by 257,
16-bit to 8-bit by dropping the low byte. Pillow is imported inside the kernels, so
importing tensorweave does not load it; 16-bit color PNGs, which Pillow reads and writes
as 8-bit only, go through png16_codec. JPEG pixels come from Pillow's libjpeg and can
differ by a few levels from TF's build of libjpeg-turbo.

WebP follows TF 2.x's decoder: no channel conversion (the channels asked for must be the
file's, 3 or 4, and an animation's must be RGBA), uint8 only, and every frame
[frames, h, w, c] whichever op decodes it but DecodeImage with expand_animations=False
(its first frame). Pillow decodes through libwebp, as TF does, and gives TF's pixels
for lossy and lossless files.
"""
from __future__ import annotations

import io
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape, with_rank
from tensorweave.ops.image import png16_codec

_UNKNOWN_FORMAT = "Unknown image file format. One of JPEG, PNG, GIF, BMP, WebP required."
_SIGNATURES = ((b"\xff\xd8\xff", "JPEG"), (b"\x89PNG\r\n\x1a\n", "PNG"), (b"GIF87a", "GIF"),
               (b"GIF89a", "GIF"), (b"BM", "BMP"))
# JPEG XL: a bare codestream, or the ISO BMFF container's signature box
_JPEG_XL = (b"\xff\x0a", b"\x00\x00\x00\x0cJXL \x0d\x0a\x87\x0a")


def _invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, message)


def _contents(ctx, contents) -> bytes:
    value = contents.item() if isinstance(contents, np.ndarray) else contents
    if isinstance(contents, np.ndarray) and contents.ndim != 0:
        raise _invalid(ctx, "contents must be scalar, got shape %s" % (list(contents.shape),))
    return value.encode() if isinstance(value, str) else bytes(value)


def _format_of(data: bytes) -> Optional[str]:
    for signature, fmt in _SIGNATURES:
        if data.startswith(signature):
            return fmt
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


def _gray(pixels: np.ndarray) -> np.ndarray:
    """TF's RGB to gray, libpng's png_do_rgb_to_gray with TF's weights 0.299 and 0.587 in
    15-bit fixed point (9797, 19234 and 32768 - 9797 - 19234 for blue): truncated for
    8-bit samples, rounded for 16-bit ones."""
    rgb = pixels[..., :3].astype(np.int64)
    half = 16384 if pixels.dtype == np.uint16 else 0
    gray = (9797 * rgb[..., 0] + 19234 * rgb[..., 1] + 3737 * rgb[..., 2] + half) >> 15
    return gray.astype(pixels.dtype)[..., None]


def _to_channels(pixels: np.ndarray, channels: int) -> np.ndarray:
    """[h, w, c] pixels converted to `channels` (0: as they are)."""
    have = pixels.shape[-1]
    if channels == 0 or channels == have:
        return pixels
    opaque = np.iinfo(pixels.dtype).max
    color = pixels[..., :3] if have >= 3 else np.repeat(pixels[..., :1], 3, axis=-1)
    alpha = pixels[..., -1:] if have in (2, 4) else np.full(pixels.shape[:-1] + (1,), opaque,
                                                             pixels.dtype)
    gray = _gray(pixels) if have >= 3 else pixels[..., :1]
    if channels == 1:
        return gray
    if channels == 3:
        return color
    return np.concatenate([color, alpha], axis=-1)


def _pixels(image) -> np.ndarray:
    """A Pillow image as [h, w, c] uint8 (or uint16 for 16-bit grayscale) pixels."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        return np.asarray(image, dtype=np.uint16)[..., None]
    if mode in ("1", "L"):
        return np.asarray(image.convert("L"))[..., None]
    if mode in ("LA", "La"):
        return np.asarray(image.convert("LA"))
    if mode in ("RGBA", "RGBa", "PA") or (mode == "P" and "transparency" in image.info):
        return np.asarray(image.convert("RGBA"))
    return np.asarray(image.convert("RGB"))


def _jpeg_pixels(ctx, data: bytes, channels: int, ratio: int, dct_method: str,
                 fancy_upscaling: bool) -> Optional[np.ndarray]:
    """A JPEG decoded by libjpeg-turbo (simplejpeg) with TF's decoder settings: the fast
    integer DCT unless dct_method is "INTEGER_ACCURATE" (TF's default "" is the fast
    one), fancy upsampling as asked, libjpeg's scaling by `ratio`, and its own luma for
    one channel. None for CMYK/YCCK files and for headers libjpeg-turbo's API declines
    (unusual sampling factors): Pillow decodes those."""
    import simplejpeg
    try:
        height, width, space, _ = simplejpeg.decode_jpeg_header(data)
    except ValueError:
        return None  # a header libjpeg-turbo's API declines (odd sampling): Pillow decodes
    if space not in ("Gray", "YCbCr", "RGB"):
        return None
    try:
        gray = channels == 1 or (channels == 0 and space == "Gray")
        pixels = simplejpeg.decode_jpeg(
            data, colorspace="GRAY" if gray else "RGB",
            fastdct=dct_method != "INTEGER_ACCURATE", fastupsample=not fancy_upscaling,
            min_height=-(-height // ratio), min_width=-(-width // ratio), min_factor=ratio)
    except ValueError as e:
        raise _invalid(ctx, "Invalid JPEG data or crop window, data size %d: %s"
                       % (len(data), e)) from None
    return pixels if pixels.ndim == 3 else pixels[..., None]


def _pillow_frames(ctx, data: bytes, fmt: str, channels: int, ratio: int, animations: bool,
                   still_gifs_only: bool) -> list:
    """The frames of an image Pillow decodes, each [h, w, c]."""
    from PIL import Image, UnidentifiedImageError
    try:
        image = Image.open(io.BytesIO(data))
        if fmt == "JPEG" and (ratio != 1 or channels == 1):
            # libjpeg's own downscaling and luma, as TF's decoder uses
            image.draft("L" if channels == 1 else image.mode,
                        (max(1, image.size[0] // ratio), max(1, image.size[1] // ratio)))
        n_frames = getattr(image, "n_frames", 1) if fmt == "GIF" and animations else 1
        if fmt == "GIF" and still_gifs_only and getattr(image, "n_frames", 1) > 1:
            # decode_png / decode_jpeg take a GIF only if it has a single frame
            raise _invalid(ctx, "Got %d frames, but animated gifs can only be decoded by "
                           "tf.io.decode_gif or tf.io.decode_image" % image.n_frames)
        frames = []
        for i in range(n_frames):
            image.seek(i)
            frame = image.convert("RGB") if fmt == "GIF" else image
            frames.append(_pixels(frame))
        return frames
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as e:
        reason = str(e).split(" <")[0]  # without the repr of Pillow's buffer
        raise _invalid(ctx, "Invalid %s data: %s" % (fmt, reason)) from None


def _webp_frames(ctx, data: bytes, channels: int, dtype: np.dtype) -> np.ndarray:
    """The frames of a WebP image, [frames, h, w, c] uint8, with TF's checks: the
    channels asked for must be the file's (TF converts none), 3 or 4."""
    from PIL import Image
    if channels == 1:
        raise _invalid(ctx, "WebP only supports 3 or 4 channels")
    if dtype != np.uint8:
        raise _invalid(ctx, "WebP only supports uint8 for dtype")
    try:
        image = Image.open(io.BytesIO(data))
    except (OSError, ValueError, SyntaxError):
        raise _invalid(ctx, "Failed to decode WebP header.") from None
    have = 4 if image.mode == "RGBA" else 3
    n_frames = getattr(image, "n_frames", 1)
    if n_frames > 1 and channels == 3:
        raise _invalid(ctx, "WebP Animation must be 4 channel RGBA")
    if channels not in (0, have) or (n_frames > 1 and have != 4):
        raise _invalid(ctx, "Number of channels requested does not match input")
    frames = []
    try:
        for i in range(n_frames):
            image.seek(i)
            frames.append(np.asarray(image.convert("RGBA" if have == 4 else "RGB")))
    except (OSError, ValueError, EOFError):
        raise _invalid(ctx, "Failed to decode WebP image.") from None
    return np.stack(frames)


def _decode(ctx, data: bytes, channels: int, dtype: np.dtype, animations: bool,
            ratio: int = 1, still_gifs_only: bool = False, dct_method: str = "",
            fancy_upscaling: bool = True, webp_expand: bool = True) -> np.ndarray:
    if channels not in (0, 1, 3, 4):
        raise _invalid(ctx, "`channels` must be 0, 1, 3 or 4 but got %d" % channels)
    if not data:
        raise _invalid(ctx, "Input is empty.")
    fmt = _format_of(data)
    if fmt is None:
        if data.startswith(_JPEG_XL):
            raise errors.UnimplementedError(None, ctx.op, "%s: JPEG XL images are not "
                                            "supported" % ctx.op.type)
        raise _invalid(ctx, _UNKNOWN_FORMAT)
    if fmt == "WEBP":
        frames = _webp_frames(ctx, data, channels, dtype)
        return frames if webp_expand else frames[0]
    if fmt == "BMP" and channels not in (0, 3, 4):
        raise _invalid(ctx, "`channels` must be 0, 3 or 4 for BMP, but got %d" % channels)
    if fmt == "GIF" and channels not in (0, 3):
        raise _invalid(ctx, "`channels` must be 0 or 3 for GIF, but got %d" % channels)
    pixels = None
    if fmt == "JPEG":
        pixels = _jpeg_pixels(ctx, data, channels, ratio, dct_method, fancy_upscaling)
    elif fmt == "PNG" and png16_codec.is_16bit_color(data):
        try:
            pixels = png16_codec.decode(data)
        except png16_codec.PngError as e:
            raise _invalid(ctx, "Invalid PNG data: %s" % e) from None
    frames = [pixels] if pixels is not None else \
        _pillow_frames(ctx, data, fmt, channels, ratio, animations, still_gifs_only)
    out = []
    for pixels in frames:
        if fmt == "JPEG" and channels == 1 and pixels.shape[-1] != 1:
            from PIL import Image  # (a CMYK JPEG asked for one channel: Pillow's luma)
            pixels = np.asarray(Image.fromarray(pixels).convert("L"))[..., None]
        pixels = _to_channels(pixels, channels)
        if dtype == np.uint16 and pixels.dtype == np.uint8:
            pixels = pixels.astype(np.uint16) * np.uint16(257)
        elif dtype == np.uint8 and pixels.dtype == np.uint16:
            pixels = (pixels >> 8).astype(np.uint8)
        elif dtype == np.float32:
            if fmt == "PNG":  # TF reads a PNG as 16-bit for floats: v * 257 / 65535
                pixels = pixels.astype(np.uint16) * np.uint16(257) \
                    if pixels.dtype == np.uint8 else pixels
            scale = np.float32(1.0 / np.iinfo(pixels.dtype).max)
            pixels = pixels.astype(np.float32) * scale
        out.append(np.ascontiguousarray(pixels))
    if fmt == "GIF" and animations:
        return np.stack(out)
    return out[0]


def _decode_shape(op):
    with_rank(op.inputs[0].shape, 0)
    channels = op._get_attr("channels")
    return TensorShape([None, None, channels or None])


register_op("DecodeJpeg", inputs=["contents: string"], outputs=["image: uint8"],
            attrs={"channels": 0, "ratio": 1, "fancy_upscaling": True,
                   "try_recover_truncated": False, "acceptable_fraction": 1.0,
                   "dct_method": ""},
            shape=_decode_shape)
register_op("DecodePng", inputs=["contents: string"], outputs=["image: dtype"],
            attrs={"channels": 0, "dtype": TypeAttr((_dt.uint8, _dt.uint16), default=_dt.uint8)},
            shape=_decode_shape)
register_op("DecodeBmp", inputs=["contents: string"], outputs=["image: uint8"],
            attrs={"channels": 0}, shape=_decode_shape)
register_op("DecodeGif", inputs=["contents: string"], outputs=["image: uint8"],
            shape=lambda op: (with_rank(op.inputs[0].shape, 0),
                              TensorShape([None, None, None, 3]))[1])
register_op("DecodeWebP", inputs=["contents: string"], outputs=["image: dtype"],
            attrs={"channels": 0, "dtype": TypeAttr((_dt.uint8,), default=_dt.uint8)},
            shape=lambda op: (with_rank(op.inputs[0].shape, 0), TensorShape(
                [None, None, None, op._get_attr("channels") or None]))[1])


def _decode_image_shape(op):
    with_rank(op.inputs[0].shape, 0)
    if op._get_attr("expand_animations"):
        return unknown_shape()
    return TensorShape([None, None, op._get_attr("channels") or None])


register_op("DecodeImage", inputs=["contents: string"], outputs=["image: dtype"],
            attrs={"channels": 0, "expand_animations": True,
                   "dtype": TypeAttr((_dt.uint8, _dt.uint16, _dt.float32), default=_dt.uint8)},
            shape=_decode_image_shape)


def _jpeg_attrs(ctx) -> dict:
    if ctx.attrs["try_recover_truncated"]:
        raise errors.UnimplementedError(
            None, ctx.op, "%s: try_recover_truncated=True is not supported: "
            "truncated JPEG data is an error" % ctx.op.type)
    return {"dct_method": ctx.attrs["dct_method"],
            "fancy_upscaling": ctx.attrs["fancy_upscaling"]}


@kernel("DecodeJpeg")
def _decode_jpeg_kernel(ctx, contents):
    ratio = ctx.attrs["ratio"]
    if ratio not in (1, 2, 4, 8):
        raise _invalid(ctx, "ratio must be 1, 2, 4 or 8, got %d" % ratio)
    return _decode(ctx, _contents(ctx, contents), ctx.attrs["channels"], np.uint8, False,
                   ratio, still_gifs_only=True, **_jpeg_attrs(ctx))


@kernel("DecodePng")
def _decode_png_kernel(ctx, contents):
    return _decode(ctx, _contents(ctx, contents), ctx.attrs["channels"],
                   ctx.attrs["dtype"].as_numpy_dtype, False, still_gifs_only=True)


@kernel("DecodeBmp")
def _decode_bmp_kernel(ctx, contents):
    data = _contents(ctx, contents)
    fmt = _format_of(data)
    # unlike decode_png and decode_jpeg, TF's DecodeBmp accepts only BMP (and WebP) data
    if fmt not in (None, "BMP", "WEBP"):
        raise _invalid(ctx, "Trying to decode %s format using DecodeBmp op. Use `decode_%s` "
                       "or `decode_image` instead." % (fmt, fmt.lower()))
    return _decode(ctx, data, ctx.attrs["channels"], np.uint8, False)


@kernel("DecodeGif")
def _decode_gif_kernel(ctx, contents):
    frames = _decode(ctx, _contents(ctx, contents), 3, np.uint8, True)
    return frames if frames.ndim == 4 else frames[None]


@kernel("DecodeWebP")
def _decode_webp_kernel(ctx, contents):
    # TF's one image kernel: other formats are decoded too, as decode_image does
    return _decode(ctx, _contents(ctx, contents), ctx.attrs["channels"], np.uint8, True)


@kernel("DecodeImage")
def _decode_image_kernel(ctx, contents):
    expand = ctx.attrs["expand_animations"]
    return _decode(ctx, _contents(ctx, contents), ctx.attrs["channels"],
                   ctx.attrs["dtype"].as_numpy_dtype, expand, webp_expand=expand)


# --- encoders -------------------------------------------------------------------------------
def _encode_shape(op):
    image = op.inputs[0].shape
    if image.ndims is None:
        return unknown_shape()
    if image.ndims < 3:
        raise ValueError("Shape must be at least rank 3 but is rank %d" % image.ndims)
    return TensorShape(image.as_list()[:-3])


register_op("EncodePng", inputs=["image: T"], outputs=["contents: string"],
            attrs={"T": TypeAttr((_dt.uint8, _dt.uint16), default=_dt.uint8),
                   "compression": -1},
            shape=_encode_shape)
register_op("EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
            attrs={"format": "", "quality": 95, "progressive": False, "optimize_size": False,
                   "chroma_downsampling": True, "density_unit": "in", "x_density": 300,
                   "y_density": 300, "xmp_metadata": ""},
            shape=_encode_shape)


def _each_image(image: np.ndarray, encode) -> np.ndarray:
    """encode() of every [h, w, c] image of `image`, as an object array of bytes."""
    lead = image.shape[:-3]
    flat = image.reshape((-1,) + image.shape[-3:])
    out = np.empty(len(flat), dtype=object)
    for i, one in enumerate(flat):
        out[i] = encode(one)
    return out.reshape(lead)  # a 0-d object array for one image


@kernel("EncodePng")
def _encode_png_kernel(ctx, image):
    from PIL import Image
    if image.ndim < 3:
        raise _invalid(ctx, "image must be at least 3-dimensional, got %s"
                       % (list(image.shape),))
    channels = image.shape[-1]
    if channels not in (1, 2, 3, 4):
        raise _invalid(ctx, "image must have 1, 2, 3, or 4 channels, got %d" % channels)
    level = ctx.attrs["compression"]
    if not -1 <= level <= 9:
        raise _invalid(ctx, "compression should be in [-1,9], got %d" % level)
    if 0 in image.shape[-3:-1]:
        raise _invalid(ctx, "EncodePng: an image of shape [%s] has no pixels: a PNG is at "
                       "least 1 pixel high and wide" % ",".join(map(str, image.shape)))
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels]

    def encode(one):
        if one.dtype == np.uint16 and channels > 1:
            return png16_codec.encode(one, level)
        buf = io.BytesIO()
        if one.dtype == np.uint16:
            picture = Image.fromarray(np.ascontiguousarray(one[..., 0], dtype=np.uint16))
        else:
            picture = Image.fromarray(np.ascontiguousarray(one if channels > 1
                                                           else one[..., 0]), mode)
        picture.save(buf, format="PNG", compress_level=6 if level == -1 else level)
        return buf.getvalue()
    return _each_image(image, encode)


@kernel("EncodeJpeg")
def _encode_jpeg_kernel(ctx, image):
    from PIL import Image
    if image.ndim != 3:
        raise _invalid(ctx, "image must be 3-dimensional[%s]" % ",".join(map(str, image.shape)))
    attrs = ctx.attrs
    fmt = attrs["format"]
    channels = {"": image.shape[-1], "grayscale": 1, "rgb": 3}.get(fmt)
    if channels is None:
        raise _invalid(ctx, "format must be '', 'grayscale' or 'rgb', got %s" % fmt)
    if image.shape[-1] != channels or channels not in (1, 3):
        raise _invalid(ctx, "image must have 1 or 3 channels, got [%s]"
                       % ",".join(map(str, image.shape)))
    quality = attrs["quality"]
    if not 0 <= quality <= 100:
        raise _invalid(ctx, "quality must be in [0,100], got %d" % quality)
    unit = attrs["density_unit"]
    if unit not in ("in", "cm"):
        raise _invalid(ctx, "density_unit must be 'in' or 'cm', got %s" % unit)
    per_inch = 2.54 if unit == "cm" else 1.0
    picture = Image.fromarray(np.ascontiguousarray(image[..., 0] if channels == 1 else image),
                              "L" if channels == 1 else "RGB")
    options = {"quality": quality, "progressive": attrs["progressive"],
               "optimize": attrs["optimize_size"],
               "dpi": (round(attrs["x_density"] * per_inch),
                       round(attrs["y_density"] * per_inch))}
    if channels == 3:
        options["subsampling"] = 2 if attrs["chroma_downsampling"] else 0
    if attrs["xmp_metadata"]:
        options["xmp"] = attrs["xmp_metadata"].encode()
    buf = io.BytesIO()
    picture.save(buf, format="JPEG", **options)
    return np.array(buf.getvalue(), dtype=object)


for _op in ("DecodeJpeg", "DecodePng", "DecodeBmp", "DecodeGif", "DecodeWebP",
            "DecodeImage", "EncodePng", "EncodeJpeg"):
    not_differentiable(_op)


# --- builders --------------------------------------------------------------------------------
@tf_export("image.decode_jpeg", "io.decode_jpeg")
def decode_jpeg(contents, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1,
                dct_method: str = "", name: Optional[str] = None) -> Tensor:
    """Decodes a JPEG (or PNG, GIF's first frame, BMP) image to uint8 [h, w, channels].

    Args:
      contents: a scalar string Tensor, the encoded image.
      channels: 0 (as stored), 1 (grayscale) or 3 (RGB).
      ratio: downscaling by 1, 2, 4 or 8 while decoding.
      fancy_upscaling: libjpeg's smooth chroma upsampling (False: the fast one).
      try_recover_truncated: must be False (truncated data is an error; True raises
        UnimplementedError when run).
      acceptable_fraction: unused unless try_recover_truncated.
      dct_method: "" or "INTEGER_FAST" (libjpeg-turbo's fast integer DCT, TF's default)
        or "INTEGER_ACCURATE" (the slow, exact one).
      name: op name.

    Returns:
      A uint8 Tensor [height, width, channels].
    """
    return apply_op("DecodeJpeg", [contents],
                    {"channels": int(channels), "ratio": int(ratio),
                     "fancy_upscaling": bool(fancy_upscaling),
                     "try_recover_truncated": bool(try_recover_truncated),
                     "acceptable_fraction": float(acceptable_fraction),
                     "dct_method": dct_method}, name=name or "DecodeJpeg").outputs[0]


@tf_export("image.decode_png", "io.decode_png")
def decode_png(contents, channels: int = 0, dtype=_dt.uint8,
               name: Optional[str] = None) -> Tensor:
    """Decodes a PNG (or other supported format) image to [h, w, channels].

    Args:
      contents: a scalar string Tensor, the encoded image.
      channels: 0 (as stored), 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA).
      dtype: uint8 or uint16.
      name: op name.

    Returns:
      A Tensor of `dtype` [height, width, channels].
    """
    return apply_op("DecodePng", [contents], {"channels": int(channels),
                                              "dtype": _dt.as_dtype(dtype)},
                    name=name or "DecodePng").outputs[0]


@tf_export("image.decode_bmp", "io.decode_bmp")
def decode_bmp(contents, channels: int = 0, name: Optional[str] = None) -> Tensor:
    """Decodes a BMP (or other supported format) image to uint8 [h, w, channels].

    Args:
      contents: a scalar string Tensor, the encoded image.
      channels: 0 (as stored), 1, 3 or 4.
      name: op name.

    Returns:
      A uint8 Tensor [height, width, channels].
    """
    return apply_op("DecodeBmp", [contents], {"channels": int(channels)},
                    name=name or "DecodeBmp").outputs[0]


@tf_export("image.decode_gif", "io.decode_gif")
def decode_gif(contents, name: Optional[str] = None) -> Tensor:
    """Decodes every frame of a GIF to uint8 RGB [frames, h, w, 3].

    Args:
      contents: a scalar string Tensor, the encoded image.
      name: op name.

    Returns:
      A uint8 Tensor [num_frames, height, width, 3].
    """
    return apply_op("DecodeGif", [contents], name=name or "DecodeGif").outputs[0]


@tf_export("image.decode_webp", "io.decode_webp")
def decode_webp(contents, channels: int = 0, dtype=_dt.uint8,
                name: Optional[str] = None) -> Tensor:
    """Decodes a WebP image (still or animated) to uint8 [frames, h, w, channels].

    Args:
      contents: a scalar string Tensor, the encoded image.
      channels: 0 (as stored), 3 (RGB) or 4 (RGBA); it must be the file's own (no
        conversion), and 4 for an animation.
      dtype: uint8.
      name: op name.

    Returns:
      A uint8 Tensor [num_frames, height, width, channels] (one frame for a still
      image). Other formats are decoded as decode_image decodes them.
    """
    return apply_op("DecodeWebP", [contents], {"channels": int(channels),
                                               "dtype": _dt.as_dtype(dtype)},
                    name=name or "DecodeWebP").outputs[0]


@tf_export("image.decode_image", "io.decode_image")
def decode_image(contents, channels=None, dtype=_dt.uint8, name: Optional[str] = None,
                 expand_animations: bool = True) -> Tensor:
    """Decodes a JPEG, PNG, GIF, BMP or WebP image, whatever the format.

    Args:
      contents: a scalar string Tensor, the encoded image.
      channels: None/0 (as stored) or 1, 3, 4.
      dtype: the result type; integer and float images are scaled as
        convert_image_dtype does.
      name: name scope.
      expand_animations: GIFs and WebP images give all frames [frames, h, w, c] (so
        the static rank is unknown); if False, the first frame only.

    Returns:
      A Tensor of `dtype`: [h, w, channels], or [frames, h, w, c] for an animated GIF
      and any WebP image (WebP: uint8 only).
    """
    dtype = _dt.as_dtype(dtype)
    with _graph.name_scope(name, "decode_image", [contents]):
        contents = convert_to_tensor(contents, dtype=_dt.string, name="contents")
        # as TF: other types are decoded as uint16 (the most precision) and converted
        native = dtype if dtype in (_dt.uint8, _dt.uint16, _dt.float32) else _dt.uint16
        image = apply_op("DecodeImage", [contents],
                         {"channels": int(channels or 0), "dtype": native,
                          "expand_animations": bool(expand_animations)},
                         name="DecodeImage").outputs[0]
        if native != dtype:
            from tensorweave.ops.image.color_ops import convert_image_dtype
            image = convert_image_dtype(image, dtype)
        return image


@tf_export("image.encode_png", "io.encode_png")
def encode_png(image, compression: int = -1, name: Optional[str] = None) -> Tensor:
    """Encodes a uint8 or uint16 image [h, w, channels] (or a batch) as PNG.

    Args:
      image: a uint8 or uint16 Tensor with 1 to 4 channels (uint16: 1 channel).
      compression: zlib level 0-9, or -1 for the default.
      name: op name.

    Returns:
      A string Tensor (one PNG per image).
    """
    return apply_op("EncodePng", [image], {"compression": int(compression)},
                    name=name or "EncodePng").outputs[0]


@tf_export("image.encode_jpeg", "io.encode_jpeg")
def encode_jpeg(image, format: str = "", quality: int = 95,  # noqa: A002
                progressive: bool = False, optimize_size: bool = False,
                chroma_downsampling: bool = True, density_unit: str = "in",
                x_density: int = 300, y_density: int = 300, xmp_metadata: str = "",
                name: Optional[str] = None) -> Tensor:
    """Encodes a uint8 image [h, w, 1 or 3] as JPEG.

    Args:
      image: a uint8 Tensor with 1 or 3 channels.
      format: "" (from the channels), "grayscale" or "rgb".
      quality: 0-100.
      progressive: a progressive JPEG.
      optimize_size: optimize the Huffman tables.
      chroma_downsampling: 4:2:0 chroma (else 4:4:4).
      density_unit: "in" or "cm" (stored as dots per inch).
      x_density, y_density: the pixel density.
      xmp_metadata: an XMP packet to embed.
      name: op name.

    Returns:
      A scalar string Tensor.
    """
    return apply_op("EncodeJpeg", [image],
                    {"format": format, "quality": int(quality),
                     "progressive": bool(progressive), "optimize_size": bool(optimize_size),
                     "chroma_downsampling": bool(chroma_downsampling),
                     "density_unit": density_unit, "x_density": int(x_density),
                     "y_density": int(y_density), "xmp_metadata": xmp_metadata},
                    name=name or "EncodeJpeg").outputs[0]


@tf_export("image.is_jpeg", "io.is_jpeg")
def is_jpeg(contents, name: Optional[str] = None) -> Tensor:
    """Whether `contents` starts with the JPEG signature (a scalar bool Tensor).

    Args:
      contents: a scalar string Tensor.
      name: name scope.

    Returns:
      A scalar bool Tensor.
    """
    from tensorweave.ops.math import math_binary
    from tensorweave.ops.string import string_ops
    with _graph.name_scope(name, "is_jpeg", [contents]):
        head = string_ops.substr(contents, 0, 3)
        return math_binary.equal(head, b"\xff\xd8\xff", name="is_jpeg")
