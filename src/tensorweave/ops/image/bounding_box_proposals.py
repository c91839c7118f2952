"""Region proposals of a Faster R-CNN region proposal network (arXiv:1506.01497, eq. 2):
GenerateBoundingBoxProposals.

For each image, TF's kernel
  1. orders the H*W*A anchor positions by decreasing score (ties: lower index first)
     and keeps the first `pre_nms_topn`;
  2. decodes each kept position's deltas [dy, dx, dh, dw] against its anchor
     [y1, x1, y2, x2] (dh and dw capped at log(1000 / 16)), the anchor's center moved by
     (dy * height, dx * width) and its sides scaled by (exp(dh), exp(dw));
  3. clips the boxes to [0, image height] x [0, image width];
  4. drops boxes whose shorter side is below min_size * image scale;
  5. runs greedy non-max suppression (IoU > nms_threshold suppresses) for at most
     `post_nms_topn` boxes;
  6. writes them in score order, zero-padded to `post_nms_topn`.

TF registers only a GPU kernel for this op; this CPU kernel follows it step for step. The
anchors tensor is [H, W, 4 * A]: one anchor per position and anchor index, as the GPU
kernel reads it. The op is not differentiable.
"""
from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.ops.array.array_pad_ops import _int_attr
from tensorweave.ops.image.nms_ops import _greedy_nms, iou_similarity

# the largest log-scale a decoded side may take (TF's bbox_xform_clip default)
_BBOX_XFORM_CLIP = np.float32(np.log(1000.0 / 16.0))


def _proposals_shape(op) -> list:
    scores = with_rank(op.inputs[0].shape, 4)
    with_rank(op.inputs[1].shape, 4)
    image_info = with_rank(op.inputs[2].shape, 2)
    info_len = image_info.dims[1].value
    if info_len is not None and info_len != 5:
        raise ValueError("Dimension must be 5 but is %d" % info_len)
    with_rank(op.inputs[3].shape, 3)
    for scalar in op.inputs[4:]:
        with_rank(scalar.shape, 0)
    batch, post_nms_topn = scores.dims[0].value, op._get_attr("post_nms_topn")
    return [TensorShape([batch, post_nms_topn, 4]), TensorShape([batch, post_nms_topn])]


register_op("GenerateBoundingBoxProposals",
            inputs=["scores: float", "bbox_deltas: float", "image_info: float",
                    "anchors: float", "nms_threshold: float", "pre_nms_topn: int32",
                    "min_size: float"],
            outputs=["rois: float", "roi_probabilities: float"],
            attrs={"post_nms_topn": 300}, shape=_proposals_shape)
not_differentiable("GenerateBoundingBoxProposals")


# --- the kernel -----------------------------------------------------------------------------
def _scalar(ctx, value, index: int):
    if np.ndim(value) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected a scalar in input %d but "
                                          "got shape %s" % (index, list(np.shape(value))))
    return value[()]


def _check_layout(ctx, scores, bbox_deltas, image_info, anchors) -> None:
    """Checks that the inputs describe the same images, positions and anchors."""
    if scores.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "scores must be rank 4 [num_images, "
                                          "height, width, num_anchors], got shape %s"
                                          % list(scores.shape))
    batch, height, width, num_anchors = scores.shape
    if num_anchors and (anchors.ndim != 3 or anchors.shape[2] // num_anchors != 4):
        raise errors.OutOfRangeError(None, ctx.op, "Box dimensions need to be 4")
    expected = {"bbox_deltas": (bbox_deltas, (batch, height, width, 4 * num_anchors)),
                "image_info": (image_info, (batch, 5)),
                "anchors": (anchors, (height, width, 4 * num_anchors))}
    for what, (value, shape) in expected.items():
        if value.shape != shape:
            raise errors.InvalidArgumentError(
                None, ctx.op, "%s must have shape %s for scores of shape %s, got %s"
                % (what, list(shape), list(scores.shape), list(value.shape)))


def _decode_boxes(anchors: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """[n, 4] boxes [y1, x1, y2, x2] from anchors [y1, x1, y2, x2] and [dy, dx, dh, dw]
    deltas, in float32 as TF's kernel computes them."""
    dy, dx, dh, dw = deltas.T
    sizes = anchors[:, 2:] - anchors[:, :2]                      # (height, width)
    centers = anchors[:, :2] + np.float32(0.5) * sizes
    centers = centers + sizes * np.stack([dy, dx], 1)
    log_scale = np.minimum(np.stack([dh, dw], 1), _BBOX_XFORM_CLIP)
    sizes = sizes * np.exp(log_scale)
    half = np.float32(0.5) * sizes
    return np.concatenate([centers - half, centers + half], 1)


def _clip_to_image(boxes: np.ndarray, image_height, image_width) -> np.ndarray:
    limits = np.array([image_height, image_width] * 2, np.float32)
    return np.maximum(np.minimum(boxes, limits), np.float32(0))


def _image_proposals(scores, deltas, anchors, info, nms_threshold, pre_nms_topn,
                     min_size, post_nms_topn):
    """(boxes [k, 4], scores [k]) of one image, k <= post_nms_topn, in score order."""
    flat_scores = scores.reshape(-1)
    order = np.argsort(-flat_scores, kind="stable")[:pre_nms_topn]
    boxes = _decode_boxes(anchors.reshape(-1, 4)[order], deltas.reshape(-1, 4)[order])
    boxes = _clip_to_image(boxes, info[0], info[1])
    sides = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    kept = sides >= np.float32(min_size) * info[2]
    boxes, kept_scores = boxes[kept], flat_scores[order][kept]
    # the boxes are already in score order: NMS ranks them by position, so that equal or
    # infinite scores keep that order
    ranks = np.arange(len(boxes), 0, -1).astype(np.float32)
    selected, _ = _greedy_nms(iou_similarity(boxes), ranks, post_nms_topn,
                              nms_threshold, 0.0)
    return boxes[selected], kept_scores[selected]


@kernel("GenerateBoundingBoxProposals")
def _proposals_kernel(ctx, scores, bbox_deltas, image_info, anchors, nms_threshold,
                      pre_nms_topn, min_size):
    post_nms_topn = ctx.attrs["post_nms_topn"]
    if post_nms_topn <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "post_nms_topn can't be 0 or less")
    nms_threshold = float(_scalar(ctx, nms_threshold, 4))
    if not 0.0 <= nms_threshold <= 1.0:
        raise errors.InvalidArgumentError(None, ctx.op, "nms_threshold should be between 0 "
                                          "and 1. Got %g" % nms_threshold)
    pre_nms_topn = int(_scalar(ctx, pre_nms_topn, 5))
    if pre_nms_topn <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "pre_nms_topn should be greater "
                                          "than 0, got %d" % pre_nms_topn)
    min_size = _scalar(ctx, min_size, 6)
    _check_layout(ctx, scores, bbox_deltas, image_info, anchors)
    batch = scores.shape[0]
    rois = np.zeros([batch, post_nms_topn, 4], np.float32)
    probabilities = np.zeros([batch, post_nms_topn], np.float32)
    for b in range(batch):
        boxes, kept = _image_proposals(scores[b], bbox_deltas[b], anchors, image_info[b],
                                       nms_threshold, pre_nms_topn, min_size, post_nms_topn)
        rois[b, :len(boxes)] = boxes
        probabilities[b, :len(kept)] = kept
    return rois, probabilities


# --- the builder ----------------------------------------------------------------------------
GenerateBoundingBoxProposals = collections.namedtuple(
    "GenerateBoundingBoxProposals", ["rois", "roi_probabilities"])


@tf_export("image.generate_bounding_box_proposals")
def generate_bounding_box_proposals(scores, bbox_deltas, image_info, anchors,
                                    nms_threshold=0.7, pre_nms_topn=6000, min_size=16,
                                    post_nms_topn: int = 300,
                                    name: Optional[str] = None):
    """Generates bounding box proposals from box deltas encoded against anchors.

    Args:
      scores: a float32 Tensor [num_images, height, width, num_anchors], the score of each
        anchor at each position (any order).
      bbox_deltas: a float32 Tensor [num_images, height, width, 4 * num_anchors] of
        [dy, dx, dh, dw] per anchor.
      image_info: a float32 Tensor [num_images, 5]: image height, width, scale (the last
        two entries are unused).
      anchors: a float32 Tensor [height, width, 4 * num_anchors] of [y1, x1, y2, x2]
        anchor boxes per position.
      nms_threshold: a float32 scalar in [0, 1], the IoU above which a box is suppressed.
      pre_nms_topn: an int32 scalar > 0, how many top-scoring boxes are decoded.
      min_size: a float32 scalar; boxes whose shorter side is below min_size * scale are
        discarded.
      post_nms_topn: an int > 0, the number of proposals returned per image.
      name: the op's name.

    Returns:
      A namedtuple (rois, roi_probabilities): rois float32 [num_images, post_nms_topn, 4]
      of [y1, x1, y2, x2] boxes by decreasing score, roi_probabilities float32
      [num_images, post_nms_topn] their scores; both zero-padded past the proposals found.

    Raises:
      TypeError: post_nms_topn is not an int.
      ValueError: at build time, inputs of the wrong rank or image_info not [n, 5].
      InvalidArgumentError: at run time, a threshold outside [0, 1], pre_nms_topn or
        post_nms_topn not positive, or inputs whose shapes disagree.
      OutOfRangeError: at run time, anchors whose last dimension is not 4 * num_anchors.
    """
    op = apply_op("GenerateBoundingBoxProposals",
                  [scores, bbox_deltas, image_info, anchors, nms_threshold, pre_nms_topn,
                   min_size],
                  {"post_nms_topn": _int_attr(post_nms_topn, "post_nms_topn")}, name=name)
    return GenerateBoundingBoxProposals(*op.outputs)
