"""Bounding boxes on images: drawing them (DrawBoundingBoxesV2) and sampling a distorted
crop that covers them (SampleDistortedBoundingBox, V2 and stateless: TF's values, the
search in distorted_crop_sampler.py). Non-max suppression is in
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
from tensorweave.ops.image import distorted_crop_sampler

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
    """TF's checks: image_size [3], bounding_boxes [batch, N, 4], a scalar coverage (V2
    and stateless), a seed [2] (stateless)."""
    image_size = with_rank(op.inputs[0].shape, 1)
    boxes = with_rank(op.inputs[1].shape, 3)
    if len(op.inputs) > 2:
        with_rank(op.inputs[2].shape, 0)
    if len(op.inputs) > 3:
        _check_dim(with_rank(op.inputs[3].shape, 1), 0, 2)
    _check_dim(image_size, 0, 3)
    _check_dim(boxes, 2, 4)
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


_SAMPLE_ATTRS = {"T": TypeAttr(_SIZE_TYPES), "aspect_ratio_range": [0.75, 1.33],
                 "area_range": [0.05, 1.0], "max_attempts": 100,
                 "use_image_if_no_bounding_boxes": False}
_SAMPLE_OUTPUTS = ["begin: T", "size: T", "bboxes: float"]
register_op("SampleDistortedBoundingBoxV2",
            inputs=["image_size: T", "bounding_boxes: float", "min_object_covered: float"],
            outputs=_SAMPLE_OUTPUTS, attrs=dict(_SAMPLE_ATTRS, seed=0, seed2=0),
            shape=_sample_distorted_shape, stateful=True)
register_op("SampleDistortedBoundingBox", inputs=["image_size: T", "bounding_boxes: float"],
            outputs=_SAMPLE_OUTPUTS,
            attrs=dict(_SAMPLE_ATTRS, seed=0, seed2=0, min_object_covered=0.1),
            shape=_sample_distorted_shape, stateful=True)
register_op("StatelessSampleDistortedBoundingBox",
            inputs=["image_size: T", "bounding_boxes: float", "min_object_covered: float",
                    "seed: Tseed"],
            outputs=_SAMPLE_OUTPUTS,
            attrs=dict(_SAMPLE_ATTRS, Tseed=TypeAttr((_dt.int32, _dt.int64))),
            shape=_sample_distorted_shape)
for _op_type in ("SampleDistortedBoundingBoxV2", "SampleDistortedBoundingBox",
                 "StatelessSampleDistortedBoundingBox"):
    not_differentiable(_op_type)


def _image_height_width(ctx, image_size):
    """(height, width) of TF's checked `image_size` (its depth unused)."""
    size = np.asarray(image_size)
    if size.ndim != 1 or size.size != 3:
        raise errors.InvalidArgumentError(None, ctx.op, "image_size must contain 3 elements, "
                                          "got shape %s" % list(size.shape))
    dims = []
    for what, value in (("height", int(size[0])), ("width", int(size[1]))):
        if not 0 <= value < 2 ** 31 - 1:   # TF reads them as uint64 against int32 max
            raise errors.InvalidArgumentError(None, ctx.op, "image %s cannot be >= int32 max"
                                              % what)
        dims.append(value)
    return dims[0], dims[1]


def _check_ranges(ctx) -> None:
    """TF's checks of the attrs: positive ranges and areas at most 1 (a decreasing range
    is allowed: ratios are then drawn from [max, min]; an area range no crop can meet
    gives the whole image)."""
    ratio_range, area_range = ctx.attrs["aspect_ratio_range"], ctx.attrs["area_range"]
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
    if ctx.attrs["max_attempts"] <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Max attempts must be positive: %d"
                                          % ctx.attrs["max_attempts"])


def _checked_boxes(ctx, bounding_boxes, height: int, width: int):
    """The boxes as TF's pixel rectangles; the whole image when there are none and
    `use_image_if_no_bounding_boxes` allows it."""
    boxes = np.asarray(bounding_boxes, np.float32)
    if boxes.ndim != 3 or boxes.shape[-1] != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "input boxes must be 3-dimensional "
                                          "[batch, num_boxes, coords] with 4 coords, got "
                                          "shape %s" % list(boxes.shape))
    boxes = boxes.reshape(-1, 4)
    outside = ~((boxes >= 0) & (boxes <= 1))
    if outside.any():
        raise errors.InvalidArgumentError(None, ctx.op, "All bounding box coordinates must "
                                          "be in [0.0, 1.0]: %s" % boxes[outside][0])
    if boxes.size:
        return distorted_crop_sampler.pixel_boxes(boxes, width, height)
    if not ctx.attrs["use_image_if_no_bounding_boxes"]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "No bounding boxes provided as input. One must enable "
            "use_image_if_no_bounding_boxes if you wish to not provide any bounding "
            "boxes.")
    return [distorted_crop_sampler.Rect(0, 0, width, height)]


def _checked_covered(ctx, min_object_covered) -> float:
    if np.ndim(min_object_covered) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "min_object_covered must be 0-D, got "
                                          "shape %s" % list(np.shape(min_object_covered)))
    covered = float(np.float32(min_object_covered))
    if not covered >= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Min object covered must be "
                                          "non-negative: %s" % covered)
    return covered


def _distorted_box(ctx, image_size, bounding_boxes, covered: float, stream):
    """TF's (begin, size, bboxes) of the kernels; `stream()` gives the (key, counter) of
    the draws, taken before the checks of the inputs as TF reserves it."""
    _check_ranges(ctx)
    key, counter = stream()
    height, width = _image_height_width(ctx, image_size)
    boxes = _checked_boxes(ctx, bounding_boxes, height, width)
    a = ctx.attrs
    crop = distorted_crop_sampler.sample_crop(
        key, counter, width, height, boxes, covered, a["aspect_ratio_range"], a["area_range"],
        a["max_attempts"])
    dtype = np.asarray(image_size).dtype
    begin = np.array([crop.min_y, crop.min_x, 0], dtype)
    size = np.array([crop.max_y - crop.min_y, crop.max_x - crop.min_x, -1], dtype)
    with np.errstate(invalid="ignore", divide="ignore"):   # a 0-pixel image: NaN, as TF
        bbox = np.array([crop.min_y, crop.min_x, crop.max_y, crop.max_x], np.float32) / \
            np.array([height, width, height, width], np.float32)
    return begin, size, bbox.reshape(1, 1, 4)


def _stateful_stream(ctx):
    """The op's Philox stream: TF reserves one block per attempt per run."""
    from tensorweave.ops.random import random_ops
    return lambda: random_ops._philox_blocks(ctx, ctx.attrs["max_attempts"])


@kernel("SampleDistortedBoundingBoxV2")
def _sample_distorted_kernel(ctx, image_size, bounding_boxes, min_object_covered):
    covered = _checked_covered(ctx, min_object_covered)
    return _distorted_box(ctx, image_size, bounding_boxes, covered, _stateful_stream(ctx))


@kernel("SampleDistortedBoundingBox")
def _sample_distorted_v1_kernel(ctx, image_size, bounding_boxes):
    covered = _checked_covered(ctx, ctx.attrs["min_object_covered"])
    return _distorted_box(ctx, image_size, bounding_boxes, covered, _stateful_stream(ctx))


@kernel("StatelessSampleDistortedBoundingBox")
def _stateless_distorted_kernel(ctx, image_size, bounding_boxes, min_object_covered, seed):
    from tensorweave.ops.random import stateless_random_ops
    covered = _checked_covered(ctx, min_object_covered)
    return _distorted_box(ctx, image_size, bounding_boxes, covered,
                          lambda: stateless_random_ops._philox_of_seed(ctx, seed))


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
