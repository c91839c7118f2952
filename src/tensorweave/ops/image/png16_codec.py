"""16-bit color PNGs, which Pillow does not keep: it reads 16-bit RGB, RGBA and gray+alpha
images as 8-bit and writes no 16-bit color PNG. DecodePng / DecodeImage and EncodePng
use these functions for those images only, through pypng (a dependency); every other
PNG goes through Pillow.
"""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import png

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# channels of the 16-bit color types: RGB, gray + alpha, RGBA
_CHANNELS = {2: 3, 4: 2, 6: 4}


class PngError(ValueError):
    """Malformed or unsupported PNG data (the kernel reports it as InvalidArgument)."""


def is_16bit_color(data: bytes) -> bool:
    """Whether `data` is a 16-bit RGB, RGBA or gray+alpha PNG (read from its header)."""
    if not data.startswith(_SIGNATURE) or len(data) < 29 or data[12:16] != b"IHDR":
        return False
    depth, color = struct.unpack(">BB", data[24:26])
    return depth == 16 and color in _CHANNELS


def decode(data: bytes) -> np.ndarray:
    """A 16-bit color PNG as [height, width, channels] uint16 pixels.

    Raises:
      PngError: corrupt data, or a tRNS (transparent color) chunk, which is not
        supported for these images.
    """
    try:
        width, height, rows, info = png.Reader(bytes=data).read()
        if "transparent" in info:
            raise PngError("16-bit color PNGs with a tRNS (transparent color) chunk are "
                           "not supported")
        pixels = np.vstack([np.asarray(row, np.uint16) for row in rows])
    except (png.Error, zlib.error) as e:
        raise PngError("corrupt or truncated image data: %s" % e) from None
    if info["bitdepth"] != 16 or info["planes"] not in (2, 3, 4):
        raise PngError("not a 16-bit color PNG")
    return pixels.reshape(height, width, info["planes"])


def encode(pixels: np.ndarray, level: int) -> bytes:
    """[height, width, 2|3|4] uint16 pixels as a 16-bit PNG, zlib `level` (-1: zlib's
    default)."""
    height, width, channels = pixels.shape
    writer = png.Writer(width, height, greyscale=channels == 2, alpha=channels in (2, 4),
                        bitdepth=16, compression=None if level == -1 else level)
    out = io.BytesIO()
    writer.write_array(out, np.ascontiguousarray(pixels, np.uint16).reshape(-1))
    return out.getvalue()
