"""The 16-bit color PNG codec (ops/image/png16_codec.py): images written here with each
row filter and with Adam7 interlacing, by the PNG 1.2 definitions, must decode to the
pixels they were made from."""
import struct
import zlib

import numpy as np
import pytest

from tensorweave.ops.image import png16_codec

ADAM7 = ((0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2),
         (1, 0, 2, 1))


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def _filter_rows(rows: np.ndarray, bpp: int, kinds) -> bytes:
    """Scanlines filtered as the PNG definition says, row r with kinds[r % len(kinds)]."""
    out = bytearray()
    prior = [0] * rows.shape[1]
    for r, row in enumerate(rows.tolist()):
        kind = kinds[r % len(kinds)]
        line = []
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b = prior[i]
            c = prior[i - bpp] if i >= bpp else 0
            pred = [0, a, b, (a + b) // 2, _paeth(a, b, c)][kind]
            line.append((x - pred) & 0xFF)
        out.append(kind)
        out.extend(line)
        prior = row
    return bytes(out)


def _png(pixels: np.ndarray, kinds, interlace: bool) -> bytes:
    height, width, channels = pixels.shape
    color = {3: 2, 2: 4, 4: 6}[channels]
    bpp = 2 * channels
    as_bytes = np.ascontiguousarray(pixels, ">u2").view(np.uint8).reshape(height, width, bpp)
    if interlace:
        body = b"".join(_filter_rows(as_bytes[y0::dy, x0::dx].reshape(
            len(range(y0, height, dy)), -1), bpp, kinds)
            for y0, x0, dy, dx in ADAM7 if y0 < height and x0 < width)
    else:
        body = _filter_rows(as_bytes.reshape(height, -1), bpp, kinds)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 16, color, 0, 0, int(interlace))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + \
        chunk(b"IDAT", zlib.compress(body)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("channels", [2, 3, 4])
@pytest.mark.parametrize("kind", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("interlace", [False, True])
def test_decodes_every_filter_and_interlacing(channels, kind, interlace):
    rng = np.random.RandomState(kind + 10 * channels)
    # 11 x 13: every Adam7 pass is there, with partial blocks at the edges
    pixels = rng.randint(0, 65536, [11, 13, channels]).astype(np.uint16)
    data = _png(pixels, [kind, (kind + 2) % 5], interlace)
    assert png16_codec.is_16bit_color(data)
    out = png16_codec.decode(data)
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, pixels)


def test_tiny_interlaced_image():
    pixels = np.array([[[1, 2, 3]]], np.uint16) * 1000  # only the first Adam7 pass
    np.testing.assert_array_equal(png16_codec.decode(_png(pixels, [4], True)), pixels)


def test_encode_then_decode():
    pixels = np.arange(2 * 3 * 4, dtype=np.uint16).reshape(2, 3, 4) * 2731
    np.testing.assert_array_equal(png16_codec.decode(png16_codec.encode(pixels, 9)), pixels)


def test_what_it_does_not_take():
    pixels = np.ones([2, 2, 3], np.uint16)
    data = _png(pixels, [0], False)
    assert not png16_codec.is_16bit_color(b"GIF89a")
    trns = struct.pack(">I", 6) + b"tRNS" + b"\0" * 6 + b"\0\0\0\0"
    with pytest.raises(png16_codec.PngError, match="tRNS"):
        png16_codec.decode(data[:33] + trns + data[33:])
    with pytest.raises(png16_codec.PngError, match="corrupt|truncated"):
        png16_codec.decode(data[:45] + data[-12:])
