"""Bounding boxes on images: drawing them (DrawBoundingBoxesV2) and sampling a distorted
crop that covers them (SampleDistortedBoundingBoxV2). Non-max suppression is in
nms_ops.py. Neither op is differentiable.
"""
from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (TypeAttr, kernel, not_differentiable,
                                             register_op)
from tensorweave.framework.shapes import TensorShape, with_rank

# --- DrawBoundingBoxesV2 ------------------------------------------------------------------
# TF's default palette (RGBA), used in turn by the boxes when no colors are given
_DEFAULT_COLORS = np.array([
    [1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
    [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]],
    np.float32)


_DEPTH_MESSAGE = "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)"


def _draw_shape(op) -> TensorShape:
    images = with_rank(op.inputs[0].shape, 4)
    # TF checks a depth known at build time in the shape function (a ValueError there).
    if images[3].value is not None and images[3].value not in (1, 3, 4):
        raise ValueError(_DEPTH_MESSAGE)
    with_rank(op.inputs[1].shape, 3)
    with_rank(op.inputs[2].shape, 2)
    return images


register_op("DrawBoundingBoxesV2", inputs=["images: T", "boxes: float", "colors: float"],
            outputs=["output: T"],
            attrs={"T": TypeAttr((_dt.float32, _dt.float16), default=_dt.float32)},
            shape=_draw_shape)
not_differentiable("DrawBoundingBoxesV2")


@kernel("DrawBoundingBoxesV2")
def _draw_kernel(ctx, images, boxes, colors):
    if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
        raise errors.InvalidArgumentError(None, ctx.op, _DEPTH_MESSAGE)
    if boxes.ndim != 3 or boxes.shape[0] != images.shape[0] or boxes.shape[2] != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "boxes must be [batch, num_boxes, "
                                          "4], got %s" % list(boxes.shape))
    depth = images.shape[3]
    palette = colors
    if not colors.size:
        palette = _DEFAULT_COLORS.copy()
        # TF's default palette draws every box white-ish on a gray image: channel 0 of each
        # default colour becomes 1 (colours given by the user are kept as they are).
        if depth == 1:
            palette[:, 0] = 1
    if palette.ndim != 2 or palette.shape[1] < depth:
        raise errors.InvalidArgumentError(None, ctx.op, "colors must be [num_colors, >= %d]"
                                          % depth)
    canvas = images.copy()
    height, width = images.shape[1:3]
    # float -> int truncates toward zero, as TF's static_cast
    rows = np.trunc(boxes[..., [0, 2]].astype(np.float32) * (height - 1)).astype(np.int64)
    cols = np.trunc(boxes[..., [1, 3]].astype(np.float32) * (width - 1)).astype(np.int64)
    for b in range(boxes.shape[0]):
        for k in range(boxes.shape[1]):
            (r0, r1), (c0, c1) = rows[b, k], cols[b, k]
            if r0 > r1 or c0 > c1 or r0 >= height or r1 < 0 or c0 >= width or c1 < 0:
                continue
            color = palette[k % len(palette), :depth].astype(images.dtype)
            rc0, rc1 = max(r0, 0), min(r1, height - 1)
            cc0, cc1 = max(c0, 0), min(c1, width - 1)
            if r0 >= 0:
                canvas[b, r0, cc0:cc1 + 1] = color
            if r1 < height:
                canvas[b, r1, cc0:cc1 + 1] = color
            if c0 >= 0:
                canvas[b, rc0:rc1 + 1, c0] = color
            if c1 < width:
                canvas[b, rc0:rc1 + 1, c1] = color
    return canvas


@tf_export("image.draw_bounding_boxes")
def draw_bounding_boxes(images, boxes, name: Optional[str] = None, colors=None) -> Tensor:
    """Draws the outlines of `boxes` (1 pixel wide) on a batch of images.

    Args:
      images: a float32/float16 Tensor [batch, height, width, depth], depth 1, 3 or 4.
      boxes: a float32 Tensor [batch, num_boxes, 4] of [y_min, x_min, y_max, x_max]
        relative to the image size.
      name: op name.
      colors: a float32 Tensor [num_colors, 4] of RGBA colors used in turn (default:
        TF's palette of 10 colors).

    Returns:
      A Tensor like `images` with the boxes drawn.
    """
    if colors is None:
        colors = np.zeros([0, 0], np.float32)
    return apply_op("DrawBoundingBoxesV2", [images, boxes, colors],
                    name=name or "DrawBoundingBoxesV2").outputs[0]


# --- SampleDistortedBoundingBoxV2 -----------------------------------------------------------
_SIZE_TYPES = (_dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64)


def _check_dim(shape: TensorShape, axis: int, size: int) -> None:
    dim = shape.dims[axis].value
    if dim is not None and dim != size:
        raise ValueError("Dimension must be %d but is %d" % (size, dim))


def _sample_distorted_shape(op):
    """TF's checks: image_size [3], bounding_boxes [batch, N, 4], a scalar coverage."""
    image_size = with_rank(op.inputs[0].shape, 1)
    boxes = with_rank(op.inputs[1].shape, 3)
    with_rank(op.inputs[2].shape, 0)
    _check_dim(image_size, 0, 3)
    _check_dim(boxes, 2, 4)
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


register_op("SampleDistortedBoundingBoxV2",
            inputs=["image_size: T", "bounding_boxes: float", "min_object_covered: float"],
            outputs=["begin: T", "size: T", "bboxes: float"],
            attrs={"T": TypeAttr(_SIZE_TYPES), "seed": 0, "seed2": 0,
                   "aspect_ratio_range": [0.75, 1.33], "area_range": [0.05, 1.0],
                   "max_attempts": 100, "use_image_if_no_bounding_boxes": False},
            shape=_sample_distorted_shape, stateful=True)
not_differentiable("SampleDistortedBoundingBoxV2")


def _random_crops(gen, n: int, height: int, width: int, ratio_range, area_range):
    """`n` candidate crops (y, x, h, w) and whether each is valid: an aspect ratio and an
    area drawn uniformly, the height rounded and the offset drawn uniformly."""
    total = float(height * width)
    # drawn as TF does, low + (high - low) * u, so a decreasing range works too
    ratio = ratio_range[0] + (ratio_range[1] - ratio_range[0]) * gen.random(n)
    min_area, max_area = area_range[0] * total, area_range[1] * total
    lo = np.rint(np.sqrt(min_area / ratio))
    hi = np.rint(np.sqrt(max_area / ratio))
    hi = np.where(np.rint(hi * ratio) > width, np.floor((width + 0.5 - 1e-7) / ratio), hi)
    hi = np.minimum(hi, height)
    lo = np.minimum(lo, hi)
    h = lo + np.floor(gen.random(n) * (hi - lo + 1))
    w = np.rint(h * ratio)
    area = h * w
    grow = area < min_area
    h = np.where(grow, h + 1, h)
    w = np.where(grow, np.rint(h * ratio), w)
    area = h * w
    shrink = area > max_area
    h = np.where(shrink, h - 1, h)
    w = np.where(shrink, np.rint(h * ratio), w)
    area = h * w
    ok = (area >= min_area) & (area <= max_area) & (w <= width) & (h <= height) & \
        (w > 0) & (h > 0)
    y = np.floor(gen.random(n) * np.maximum(height - h + 1, 1))
    x = np.floor(gen.random(n) * np.maximum(width - w + 1, 1))
    return np.stack([y, x, h, w], 1).astype(np.int64), ok


@kernel("SampleDistortedBoundingBoxV2")
def _sample_distorted_kernel(ctx, image_size, bounding_boxes, min_object_covered):
    from tensorweave.ops.random import random_ops
    a = ctx.attrs
    size = np.asarray(image_size).reshape(-1)
    if size.shape != (3,) or size[0] <= 0 or size[1] <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "image_size must contain 3 elements "
                                          "with positive height and width, got %s"
                                          % size.tolist())
    height, width = int(size[0]), int(size[1])
    boxes = np.asarray(bounding_boxes, np.float32).reshape(-1, 4)
    if boxes.size and ((boxes < 0) | (boxes > 1)).any():
        raise errors.InvalidArgumentError(None, ctx.op, "All bounding box coordinates must "
                                          "be in [0.0, 1.0]: %s" % boxes.tolist())
    covered = float(min_object_covered)
    if covered < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "min_object_covered must be "
                                          "non-negative: %s" % covered)
    # TF's checks: positive ranges and areas at most 1; a decreasing range is allowed
    # (ratios are then drawn from [max, min]; an area range no crop can meet gives the
    # whole image)
    ratio_range, area_range = a["aspect_ratio_range"], a["area_range"]
    if len(ratio_range) != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "Aspect ratio range field must "
                                          "specify 2 dimensions")
    if not (ratio_range[0] > 0 and ratio_range[1] > 0):
        raise errors.InvalidArgumentError(None, ctx.op, "Aspect ratio range must be "
                                          "positive: [%g, %g]" % tuple(ratio_range))
    if len(area_range) != 2:
        raise errors.InvalidArgumentError(None, ctx.op, "Area range field must specify 2 "
                                          "dimensions")
    if not (area_range[0] > 0 and area_range[1] > 0):
        raise errors.InvalidArgumentError(None, ctx.op, "Area range must be positive: "
                                          "[%g, %g]" % tuple(area_range))
    if not (area_range[0] <= 1 and area_range[1] <= 1):
        raise errors.InvalidArgumentError(None, ctx.op, "Area range must be less than or "
                                          "equal to 1.0: [%g, %g]" % tuple(area_range))
    if not boxes.size:
        if not a["use_image_if_no_bounding_boxes"]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "No bounding boxes provided as input. One must enable "
                "use_image_if_no_bounding_boxes if you wish to not provide any bounding "
                "boxes.")
        boxes = np.array([[0.0, 0.0, 1.0, 1.0]], np.float32)
    # boxes in pixels: x truncated as TF's integer rectangles
    py0 = np.trunc(boxes[:, 0] * height)
    px0 = np.trunc(boxes[:, 1] * width)
    py1 = np.trunc(boxes[:, 2] * height)
    px1 = np.trunc(boxes[:, 3] * width)
    box_area = (py1 - py0) * (px1 - px0)
    gen, lock = random_ops._generator(ctx)
    with lock:
        crops, ok = _random_crops(gen, max(int(a["max_attempts"]), 1), height, width,
                                  ratio_range, area_range)
    y, x, h, w = (crops[:, i:i + 1].astype(np.float64) for i in range(4))
    ih = np.maximum(np.minimum(y + h, py1) - np.maximum(y, py0), 0)
    iw = np.maximum(np.minimum(x + w, px1) - np.maximum(x, px0), 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(box_area > 0, ih * iw / box_area, -1.0)
    good = ok & (frac >= covered).any(axis=1)
    if good.any():
        cy, cx, ch, cw = crops[int(np.argmax(good))]
    else:  # no attempt worked: the whole image
        cy, cx, ch, cw = 0, 0, height, width
    dtype = np.asarray(image_size).dtype
    begin = np.array([cy, cx, 0], dtype)
    size_out = np.array([ch, cw, -1], dtype)
    bbox = np.array([[[cy / height, cx / width, (cy + ch) / height, (cx + cw) / width]]],
                    np.float32)
    return begin, size_out, bbox


# TF returns the op's outputs as a namedtuple named after the op
SampleDistortedBoundingBoxV2 = collections.namedtuple("SampleDistortedBoundingBoxV2",
                                                      ["begin", "size", "bboxes"])


@tf_export("image.sample_distorted_bounding_box")
def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None,
                                  name: Optional[str] = None):
    """A random crop of an image covering enough of at least one bounding box, for data
    augmentation: feed `begin` and `size` to `tf.slice`.

    Args:
      image_size: an integer Tensor [height, width, channels].
      bounding_boxes: a float32 Tensor [batch, N, 4] of normalized [y_min, x_min, y_max,
        x_max] boxes.
      seed, seed2: the op's seeds, as TF1 passes them (the graph seed is not used;
        with neither, each session draws differently).
      min_object_covered: the fraction of some bounding box the crop must contain.
      aspect_ratio_range: [min, max] width/height of the crop (default [0.75, 1.33]).
      area_range: [min, max] fraction of the image the crop covers (default [0.05, 1]).
      max_attempts: crops tried before returning the whole image (default 100).
      use_image_if_no_bounding_boxes: with no boxes, act as if the whole image were one.
      name: name scope.

    Returns:
      A namedtuple (begin [offset_y, offset_x, 0], size [height, width, -1], bboxes
      [1, 1, 4]): begin and size of the type of `image_size`, bboxes the crop as a
      normalized box.
    """
    with name_scope(name, "sample_distorted_bounding_box"):
        # TF1's wrapper passes both seeds to the op as they are: the graph seed is not
        # used, so with neither seed the op is nondeterministic even under
        # tf.set_random_seed
        attrs = {"seed": int(seed or 0), "seed2": int(seed2 or 0)}
        if aspect_ratio_range is not None:
            attrs["aspect_ratio_range"] = [float(v) for v in aspect_ratio_range]
        if area_range is not None:
            attrs["area_range"] = [float(v) for v in area_range]
        if max_attempts is not None:
            attrs["max_attempts"] = int(max_attempts)
        if use_image_if_no_bounding_boxes is not None:
            attrs["use_image_if_no_bounding_boxes"] = bool(use_image_if_no_bounding_boxes)
        covered = convert_to_tensor(min_object_covered, dtype=_dt.float32,
                                    name="min_object_covered")
        op = apply_op("SampleDistortedBoundingBoxV2", [image_size, bounding_boxes, covered],
                      attrs, name="SampleDistortedBoundingBoxV2")
        return SampleDistortedBoundingBoxV2(*op.outputs)
