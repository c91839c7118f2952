"""TensorFlow's crop search of SampleDistortedBoundingBox, bit for bit.

TF's CPU kernel draws from one Philox stream word by word (SimplePhilox): per attempt a
float32 aspect ratio, then, when the crop can be made, an exact uniform integer for its
height and one for each offset along which it is smaller than the image. The first
crop that covers enough of some box wins; after `max_attempts` failures the crop is the
whole image. The arithmetic is TF's float32 (its `lrintf`, `sqrtf` and integer casts),
so the crops are TF's.
"""
from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence

import numpy as np

from tensorweave.ops.random import philox

_F32 = np.float32
_MAX_WORD = 0xFFFFFFFF
_EPSILON = float(_F32(1e-7))   # TF's kEps, a float promoted to double
_MIN_AREA = _F32(1.0)          # boxes and crops smaller than a pixel never count


class Rect(NamedTuple):
    """An integer rectangle [min_x, max_x) x [min_y, max_y) (TF's Rectangle)."""
    min_x: int
    min_y: int
    max_x: int
    max_y: int

    def area(self) -> np.float32:
        return _F32((self.max_x - self.min_x) * (self.max_y - self.min_y))

    def intersect(self, other: "Rect") -> "Rect":
        lo_x, lo_y = max(self.min_x, other.min_x), max(self.min_y, other.min_y)
        hi_x, hi_y = min(self.max_x, other.max_x), min(self.max_y, other.max_y)
        if lo_x > hi_x or lo_y > hi_y:
            return Rect(0, 0, 0, 0)
        return Rect(lo_x, lo_y, hi_x, hi_y)


class _Draws:
    """TF's SimplePhilox over a Philox stream: 32-bit words in order."""

    def __init__(self, key: philox.Key, counter: philox.Counter):
        self._words = philox.WordStream(key, counter)

    def unit_float(self) -> np.float32:
        """[0, 1) from the low 23 bits of a word (TF's RandFloat)."""
        bits = (self._words() & 0x7FFFFF) | 0x3F800000
        return np.array(bits, np.uint32).view(np.float32) - _F32(1)

    def uniform(self, n: int) -> int:
        """An exact uniform integer in [0, n) (TF's ExactUniformInt): masked for a power
        of two, else words below `2**32 mod n` rejected."""
        if n & (n - 1) == 0:
            return self._words() & (n - 1)
        reject_below = _MAX_WORD % n + 1
        word = self._words()
        while word < reject_below:
            word = self._words()
        return word % n


def _lrint(x) -> int:
    """C's lrintf: to the nearest integer, ties to even."""
    return int(np.rint(_F32(x)))


def _max_height(width: int, height: int, max_area: np.float32, ratio: np.float32) -> int:
    """The tallest crop of the aspect ratio within the area and the image."""
    tallest = _lrint(np.sqrt(max_area / ratio))
    if _lrint(_F32(tallest) * ratio) > width:
        # the smallest height whose rounded width fits (in double, as TF computes it)
        tallest = int((width + 0.5 - _EPSILON) / float(ratio))
        if _lrint(_F32(tallest) * ratio) > width:
            tallest -= 1
    return min(tallest, height)


def _random_crop(width: int, height: int, min_rel: np.float32, max_rel: np.float32,
                 ratio: np.float32, draws: _Draws) -> Optional[Rect]:
    """One attempt of TF's GenerateRandomCrop; None when no crop fits."""
    if max_rel <= 0 or ratio <= 0 or width <= 0 or height <= 0 or min_rel > max_rel:
        return None
    min_area = min_rel * _F32(width) * _F32(height)
    max_area = max_rel * _F32(width) * _F32(height)
    max_height = _max_height(width, height, max_area, ratio)
    crop_h = min(_lrint(np.sqrt(min_area / ratio)), max_height)
    if crop_h < max_height:
        crop_h += draws.uniform(max_height - crop_h + 1)
    crop_w = _lrint(_F32(crop_h) * ratio)
    area = _F32(crop_w * crop_h)
    # rounding may leave the area just outside the range: one pixel taller, or shorter
    if area < min_area:
        crop_h += 1
        crop_w = _lrint(_F32(crop_h) * ratio)
        area = _F32(crop_w * crop_h)
    if area > max_area:
        crop_h -= 1
        crop_w = _lrint(_F32(crop_h) * ratio)
        area = _F32(crop_w * crop_h)
    if (area < min_area or area > max_area or crop_w > width or crop_h > height
            or crop_w <= 0 or crop_h <= 0):
        return None
    y = draws.uniform(height - crop_h) if crop_h < height else 0
    x = draws.uniform(width - crop_w) if crop_w < width else 0
    return Rect(x, y, x + crop_w, y + crop_h)


def _covers(crop: Rect, min_covered: np.float32, boxes: Sequence[Rect]) -> bool:
    """Whether the crop is at least a pixel and holds `min_covered` of some box."""
    if crop.area() < _MIN_AREA:
        return False
    for box in boxes:
        box_area = box.area()
        if box_area >= _MIN_AREA and crop.intersect(box).area() / box_area >= min_covered:
            return True
    return False


def pixel_boxes(boxes: np.ndarray, width: int, height: int) -> List[Rect]:
    """Normalized [y_min, x_min, y_max, x_max] float32 boxes `[n, 4]` as TF's integer
    rectangles (coordinates times the size, truncated)."""
    scaled = boxes.astype(np.float32) * np.array([height, width, height, width], np.float32)
    return [Rect(int(x0), int(y0), int(x1), int(y1))
            for y0, x0, y1, x1 in np.trunc(scaled).astype(np.int64).tolist()]


def sample_crop(key: philox.Key, counter: philox.Counter, width: int, height: int,
                boxes: Sequence[Rect], min_covered: float, ratio_range: Sequence[float],
                area_range: Sequence[float], max_attempts: int) -> Rect:
    """TF's crop of a `height` x `width` image from the stream (key, counter): the first
    of `max_attempts` random crops covering `min_covered` of one of `boxes`, else the
    whole image."""
    draws = _Draws(key, counter)
    lo_ratio, hi_ratio = _F32(ratio_range[0]), _F32(ratio_range[1])
    min_rel, max_rel = _F32(area_range[0]), _F32(area_range[1])
    covered = _F32(min_covered)
    for _ in range(max_attempts):
        ratio = draws.unit_float() * (hi_ratio - lo_ratio) + lo_ratio
        crop = _random_crop(width, height, min_rel, max_rel, ratio, draws)
        if crop is not None and _covers(crop, covered, boxes):
            return crop
    return Rect(0, 0, width, height)
