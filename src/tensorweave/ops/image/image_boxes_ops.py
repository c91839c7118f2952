"""Bounding boxes: non-max suppression (NonMaxSuppressionV3/V4/V5,
NonMaxSuppressionWithOverlaps, CombinedNonMaxSuppression), drawing boxes
(DrawBoundingBoxesV2) and sampling a distorted crop (SampleDistortedBoundingBoxV2).

Boxes are [y1, x1, y2, x2] with either pair of corners first. Non-max suppression is
TF's greedy algorithm: candidates scoring above `score_threshold` are visited by
decreasing score (lower index first on ties); a candidate is dropped when its IoU with
an already selected box exceeds `iou_threshold`. With `soft_nms_sigma > 0` (Soft-NMS,
Bodla et al. 2017) a candidate's score is instead multiplied by exp(-iou^2 / (2 sigma))
for each selected box, and it goes back in the queue while it stays above the
threshold. None of these ops is differentiable.
"""
from __future__ import annotations

import collections

import heapq
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (TypeAttr, kernel, not_differentiable,
                                             register_op)
from tensorweave.framework.shapes import TensorShape, merge_dim, with_rank
from tensorweave.framework.tensor_util import constant_value

_BOX_TYPES = (_dt.float16, _dt.float32)


# --- the greedy algorithm -------------------------------------------------------------------
def _iou_with(boxes: np.ndarray, i: int, others: np.ndarray) -> np.ndarray:
    """IoU of box i with the boxes `others` (indices); 0 where an area is not positive."""
    b = boxes.astype(np.float32)
    ymin = np.minimum(b[:, 0], b[:, 2])
    ymax = np.maximum(b[:, 0], b[:, 2])
    xmin = np.minimum(b[:, 1], b[:, 3])
    xmax = np.maximum(b[:, 1], b[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    ih = np.maximum(np.minimum(ymax[i], ymax[others]) - np.maximum(ymin[i], ymin[others]), 0)
    iw = np.maximum(np.minimum(xmax[i], xmax[others]) - np.maximum(xmin[i], xmin[others]), 0)
    inter = ih * iw
    union = area[i] + area[others] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = np.where((area[i] > 0) & (area[others] > 0), inter / union, 0.0)
    return iou.astype(np.float32)


def _greedy_nms(similarity, scores: np.ndarray, max_output: int, threshold: float,
                score_threshold: float):
    """(selected indices, their scores) of hard NMS; `similarity(i, js)` -> array."""
    scores = scores.astype(np.float32)
    order = np.argsort(-scores, kind="stable")
    order = order[scores[order] > score_threshold]
    active = np.ones(len(order), dtype=bool)
    selected = []
    pos = 0
    while len(selected) < max_output:
        while pos < len(order) and not active[pos]:
            pos += 1
        if pos >= len(order):
            break
        best = order[pos]
        selected.append(best)
        active[pos] = False
        rest = np.nonzero(active)[0]
        if rest.size:
            sim = similarity(best, order[rest])
            active[rest[sim > threshold]] = False
    idx = np.asarray(selected, dtype=np.int64)
    return idx, scores[idx]


def _soft_nms(similarity, scores: np.ndarray, max_output: int, score_threshold: float,
              sigma: float):
    """Soft-NMS with a priority queue, each candidate compared with every box selected
    since it was last compared."""
    scale = -0.5 / sigma
    scores = scores.astype(np.float32)
    heap = [(-float(s), int(i), 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    selected, selected_scores = [], []
    while len(selected) < max_output and heap:
        neg, i, begin = heapq.heappop(heap)
        original = score = -neg
        if begin < len(selected):
            sims = similarity(i, np.asarray(selected[begin:][::-1], dtype=np.int64))
            for sim in sims:  # the most recently selected first, as TF
                score *= float(np.exp(scale * sim * sim))
                if score <= score_threshold:
                    break
        if score == original:
            selected.append(i)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, i, len(selected)))
    return np.asarray(selected, dtype=np.int64), np.asarray(selected_scores, np.float32)


def _check_nms_inputs(ctx, boxes, scores, max_output_size, iou_threshold=None):
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "boxes must be of shape [num_boxes, "
                                          "4], got %s" % list(boxes.shape))
    if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "scores has incompatible shape: %s for %d boxes"
            % (list(scores.shape), boxes.shape[0]))
    if np.ndim(max_output_size) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "max_output_size must be 0-D, got "
                                          "shape %s" % list(np.shape(max_output_size)))
    if int(max_output_size) < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "max_output_size must be >= 0")
    if iou_threshold is not None and not 0.0 <= float(iou_threshold) <= 1.0:
        raise errors.InvalidArgumentError(None, ctx.op, "iou_threshold must be in [0, 1]")


# --- declarations -------------------------------------------------------------------------
def _nms_shape(op) -> TensorShape:
    boxes = with_rank(op.inputs[0].shape, 2)
    scores = with_rank(op.inputs[1].shape, 1)
    merge_dim(boxes.dims[1].value, 4)
    merge_dim(boxes.dims[0].value, scores.dims[0].value)
    for t in op.inputs[2:]:
        with_rank(t.shape, 0)
    return TensorShape([None])


def _padded_len(op):
    if op._get_attr("pad_to_max_output_size"):
        n = constant_value(op.inputs[2])
        if n is not None:
            return int(n)
    return None


def _nms_padded_shapes(op, n_outputs: int) -> list:
    _nms_shape(op)
    selected = TensorShape([_padded_len(op)])
    return [selected] * (n_outputs - 1) + [TensorShape([])]


register_op("NonMaxSuppressionV3",
            inputs=["boxes: T", "scores: T", "max_output_size: int32",
                    "iou_threshold: T_threshold", "score_threshold: T_threshold"],
            outputs=["selected_indices: int32"],
            attrs={"T": TypeAttr(_BOX_TYPES, default=_dt.float32),
                   "T_threshold": TypeAttr(_BOX_TYPES, default=_dt.float32)},
            shape=_nms_shape)
register_op("NonMaxSuppressionV4",
            inputs=["boxes: T", "scores: T", "max_output_size: int32",
                    "iou_threshold: T_threshold", "score_threshold: T_threshold"],
            outputs=["selected_indices: int32", "valid_outputs: int32"],
            attrs={"T": TypeAttr(_BOX_TYPES, default=_dt.float32),
                   "T_threshold": TypeAttr(_BOX_TYPES, default=_dt.float32),
                   "pad_to_max_output_size": False},
            shape=lambda op: _nms_padded_shapes(op, 2))
register_op("NonMaxSuppressionV5",
            inputs=["boxes: T", "scores: T", "max_output_size: int32",
                    "iou_threshold: T", "score_threshold: T", "soft_nms_sigma: T"],
            outputs=["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
            attrs={"T": TypeAttr(_BOX_TYPES, default=_dt.float32),
                   "pad_to_max_output_size": False},
            shape=lambda op: _nms_padded_shapes(op, 3))


def _overlaps_shape(op) -> TensorShape:
    overlaps = with_rank(op.inputs[0].shape, 2)
    scores = with_rank(op.inputs[1].shape, 1)
    merge_dim(overlaps.dims[0].value, overlaps.dims[1].value)
    merge_dim(overlaps.dims[0].value, scores.dims[0].value)
    for t in op.inputs[2:]:
        with_rank(t.shape, 0)
    return TensorShape([None])


register_op("NonMaxSuppressionWithOverlaps",
            inputs=["overlaps: float", "scores: float", "max_output_size: int32",
                    "overlap_threshold: float", "score_threshold: float"],
            outputs=["selected_indices: int32"], shape=_overlaps_shape)

for _t in ("NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5",
           "NonMaxSuppressionWithOverlaps"):
    not_differentiable(_t)


def _pad(values: np.ndarray, length: int, dtype) -> np.ndarray:
    out = np.zeros([length], dtype=dtype)
    out[:len(values)] = values
    return out


@kernel("NonMaxSuppressionV3")
def _nms_v3_kernel(ctx, boxes, scores, max_output_size, iou_threshold, score_threshold):
    _check_nms_inputs(ctx, boxes, scores, max_output_size, iou_threshold)
    idx, _ = _greedy_nms(lambda i, js: _iou_with(boxes, i, js), scores,
                         int(max_output_size), float(iou_threshold), float(score_threshold))
    return idx.astype(np.int32)


@kernel("NonMaxSuppressionV4")
def _nms_v4_kernel(ctx, boxes, scores, max_output_size, iou_threshold, score_threshold):
    _check_nms_inputs(ctx, boxes, scores, max_output_size, iou_threshold)
    n = int(max_output_size)
    idx, _ = _greedy_nms(lambda i, js: _iou_with(boxes, i, js), scores, n,
                         float(iou_threshold), float(score_threshold))
    valid = np.int32(len(idx))
    if ctx.attrs["pad_to_max_output_size"]:
        return _pad(idx, n, np.int32), valid
    return idx.astype(np.int32), valid


@kernel("NonMaxSuppressionV5")
def _nms_v5_kernel(ctx, boxes, scores, max_output_size, iou_threshold, score_threshold,
                   soft_nms_sigma):
    _check_nms_inputs(ctx, boxes, scores, max_output_size, iou_threshold)
    sigma = float(soft_nms_sigma)
    if sigma < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "soft_nms_sigma must be "
                                          "non-negative, got %s" % sigma)
    n = int(max_output_size)
    sim = lambda i, js: _iou_with(boxes, i, js)  # noqa: E731
    if sigma > 0:
        idx, sel = _soft_nms(sim, scores, n, float(score_threshold), sigma)
    else:
        idx, sel = _greedy_nms(sim, scores, n, float(iou_threshold), float(score_threshold))
    valid = np.int32(len(idx))
    sel = sel.astype(scores.dtype)
    if ctx.attrs["pad_to_max_output_size"]:
        return _pad(idx, n, np.int32), _pad(sel, n, scores.dtype), valid
    return idx.astype(np.int32), sel, valid


@kernel("NonMaxSuppressionWithOverlaps")
def _nms_overlaps_kernel(ctx, overlaps, scores, max_output_size, overlap_threshold,
                         score_threshold):
    if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1]:
        raise errors.InvalidArgumentError(None, ctx.op, "overlaps must be square, got "
                                          "shape %s" % list(overlaps.shape))
    if scores.ndim != 1 or scores.shape[0] != overlaps.shape[0]:
        raise errors.InvalidArgumentError(None, ctx.op, "scores has incompatible shape")
    idx, _ = _greedy_nms(lambda i, js: overlaps[js, i], scores, int(max_output_size),
                         float(overlap_threshold), float(score_threshold))
    return idx.astype(np.int32)


# --- builders -------------------------------------------------------------------------------
def _thresholds(dtype, *values):
    return [convert_to_tensor(v, dtype=dtype) if not isinstance(v, Tensor) else v
            for v in values]


@tf_export("image.non_max_suppression")
def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name: Optional[str] = None) -> Tensor:
    """Greedily selects boxes by decreasing score, dropping those overlapping a selected
    box with IoU > `iou_threshold`.

    Args:
      boxes: a float Tensor [num_boxes, 4] of [y1, x1, y2, x2].
      scores: a float Tensor [num_boxes].
      max_output_size: an int32 scalar, the most boxes selected.
      iou_threshold: a float in [0, 1].
      score_threshold: boxes scoring at or below it are never selected.
      name: name scope.

    Returns:
      An int32 Tensor [M] of indices into `boxes`, M <= max_output_size.

    Raises:
      InvalidArgumentError: at run time, bad shapes or an iou_threshold outside [0, 1].
    """
    with name_scope(name, "non_max_suppression"):
        iou, score = _thresholds(_dt.float32, iou_threshold, score_threshold)
        return apply_op("NonMaxSuppressionV3",
                        [boxes, scores, max_output_size, iou, score],
                        name="NonMaxSuppressionV3").outputs[0]


@tf_export("image.non_max_suppression_with_scores")
def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name: Optional[str] = None):
    """Non-max suppression also returning the selected scores; with
    `soft_nms_sigma > 0`, Soft-NMS (scores decayed, so they may be lower than given).

    Args:
      boxes, scores, max_output_size, iou_threshold, score_threshold: as in
        `non_max_suppression`.
      soft_nms_sigma: a float >= 0; 0 means hard NMS.
      name: name scope.

    Returns:
      (selected_indices int32 [M], selected_scores [M]).
    """
    with name_scope(name, "non_max_suppression_with_scores"):
        boxes = convert_to_tensor(boxes, name="boxes")
        dtype = boxes.dtype
        iou, score, sigma = _thresholds(dtype, iou_threshold, score_threshold,
                                        soft_nms_sigma)
        op = apply_op("NonMaxSuppressionV5",
                      [boxes, scores, max_output_size, iou, score, sigma],
                      {"pad_to_max_output_size": False}, name="NonMaxSuppressionV5")
        return op.outputs[0], op.outputs[1]


@tf_export("image.non_max_suppression_overlaps")
def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"),
                                 name: Optional[str] = None) -> Tensor:
    """Non-max suppression with a given overlap matrix instead of IoU.

    Args:
      overlaps: a float32 Tensor [num_boxes, num_boxes]; overlaps[i, j] is how much
        box i overlaps box j.
      scores: a float32 Tensor [num_boxes].
      max_output_size: an int32 scalar.
      overlap_threshold: boxes overlapping a selected one by more are dropped.
      score_threshold: boxes scoring at or below it are never selected.
      name: name scope.

    Returns:
      An int32 Tensor [M] of selected indices.
    """
    with name_scope(name, "non_max_suppression_overlaps"):
        thr, score = _thresholds(_dt.float32, overlap_threshold, score_threshold)
        return apply_op("NonMaxSuppressionWithOverlaps",
                        [overlaps, scores, max_output_size, thr, score],
                        name="NonMaxSuppressionWithOverlaps").outputs[0]


@tf_export("image.non_max_suppression_padded")
def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"),
                               pad_to_max_output_size: bool = False,
                               name: Optional[str] = None, sorted_input: bool = False,
                               canonicalized_coordinates: bool = False,
                               tile_size: int = 512):
    """Non-max suppression returning the number of valid outputs, the indices optionally
    padded with zeros to `max_output_size`.

    Args:
      boxes: a float Tensor [num_boxes, 4] (one image; batches are not supported).
      scores, max_output_size, iou_threshold, score_threshold: as in
        `non_max_suppression`.
      pad_to_max_output_size: pad the indices to `max_output_size`.
      name: name scope.
      sorted_input, canonicalized_coordinates, tile_size: hints of TF's batched
        algorithm, which does not change the result; accepted and unused.

    Returns:
      (selected_indices int32, valid_outputs int32 scalar).

    Raises:
      ValueError: `boxes` has a batch dimension.
    """
    with name_scope(name, "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        if boxes.shape.ndims is not None and boxes.shape.ndims > 2:
            raise ValueError("non_max_suppression_padded: batched boxes (rank %d) are not "
                             "supported; boxes must be [num_boxes, 4]" % boxes.shape.ndims)
        iou, score = _thresholds(_dt.float32, iou_threshold, score_threshold)
        op = apply_op("NonMaxSuppressionV4", [boxes, scores, max_output_size, iou, score],
                      {"pad_to_max_output_size": bool(pad_to_max_output_size)},
                      name="NonMaxSuppressionV4")
        return op.outputs[0], op.outputs[1]


# --- CombinedNonMaxSuppression ------------------------------------------------------------
def _combined_total(op) -> Optional[int]:
    total = constant_value(op.inputs[3])
    if total is None:
        return None
    total = int(total)
    if op._get_attr("pad_per_class"):
        per_class = constant_value(op.inputs[2])
        classes = op.inputs[1].shape.dims[2].value if op.inputs[1].shape.ndims == 3 else None
        if per_class is None or classes is None:
            return None
        return min(total, int(per_class) * classes)
    return total


def _combined_shape(op) -> list:
    boxes = with_rank(op.inputs[0].shape, 4)
    scores = with_rank(op.inputs[1].shape, 3)
    merge_dim(boxes.dims[3].value, 4)
    batch = merge_dim(boxes.dims[0].value, scores.dims[0].value)
    merge_dim(boxes.dims[1].value, scores.dims[1].value)
    q = boxes.dims[2].value
    if q is not None and q != 1 and scores.dims[2].value is not None:
        merge_dim(q, scores.dims[2].value)
    for t in op.inputs[2:]:
        with_rank(t.shape, 0)
    total = _combined_total(op)
    return [TensorShape([batch, total, 4]), TensorShape([batch, total]),
            TensorShape([batch, total]), TensorShape([batch])]


register_op("CombinedNonMaxSuppression",
            inputs=["boxes: float", "scores: float", "max_output_size_per_class: int32",
                    "max_total_size: int32", "iou_threshold: float",
                    "score_threshold: float"],
            outputs=["nmsed_boxes: float", "nmsed_scores: float", "nmsed_classes: float",
                     "valid_detections: int32"],
            attrs={"pad_per_class": False, "clip_boxes": True}, shape=_combined_shape)
not_differentiable("CombinedNonMaxSuppression")


@kernel("CombinedNonMaxSuppression")
def _combined_nms_kernel(ctx, boxes, scores, per_class, total, iou_threshold,
                         score_threshold):
    if boxes.ndim != 4 or boxes.shape[3] != 4 or scores.ndim != 3 or \
            boxes.shape[:2] != scores.shape[:2] or boxes.shape[2] not in (1, scores.shape[2]):
        raise errors.InvalidArgumentError(
            None, ctx.op, "boxes must be [batch, num_boxes, q, 4] with q 1 or num_classes "
            "and scores [batch, num_boxes, num_classes]; got %s and %s"
            % (list(boxes.shape), list(scores.shape)))
    per_class, total = int(per_class), int(total)
    if per_class <= 0 or total <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "max_output_size_per_class and "
                                          "max_total_size must be positive")
    if not 0.0 <= float(iou_threshold) <= 1.0:
        raise errors.InvalidArgumentError(None, ctx.op, "iou_threshold must be in [0, 1]")
    batch, _, num_classes = scores.shape
    if ctx.attrs["pad_per_class"]:
        total = min(total, per_class * num_classes)
    out_boxes = np.zeros([batch, total, 4], np.float32)
    out_scores = np.zeros([batch, total], np.float32)
    out_classes = np.zeros([batch, total], np.float32)
    valid = np.zeros([batch], np.int32)
    for b in range(batch):
        found = []  # (score, class, box)
        for c in range(num_classes):
            class_boxes = boxes[b, :, 0 if boxes.shape[2] == 1 else c, :]
            idx, sel = _greedy_nms(lambda i, js: _iou_with(class_boxes, i, js),
                                   scores[b, :, c], per_class, float(iou_threshold),
                                   float(score_threshold))
            found.extend((float(s), c, class_boxes[i]) for i, s in zip(idx, sel))
        found.sort(key=lambda r: -r[0])  # stable: ties keep class order
        found = found[:total]
        valid[b] = len(found)
        for k, (s, c, box) in enumerate(found):
            out_scores[b, k], out_classes[b, k], out_boxes[b, k] = s, c, box
    if ctx.attrs["clip_boxes"]:
        out_boxes = np.clip(out_boxes, 0.0, 1.0)
    return out_boxes, out_scores, out_classes, valid


CombinedNonMaxSuppression = collections.namedtuple(
    "CombinedNonMaxSuppression",
    ["nmsed_boxes", "nmsed_scores", "nmsed_classes", "valid_detections"])


@tf_export("image.combined_non_max_suppression")
def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class: bool = False, clip_boxes: bool = True,
                                 name: Optional[str] = None):
    """Non-max suppression per class and per batch entry, the survivors of all classes
    merged by decreasing score.

    Args:
      boxes: a float32 Tensor [batch, num_boxes, q, 4]; q is 1 (boxes shared by all
        classes) or num_classes.
      scores: a float32 Tensor [batch, num_boxes, num_classes].
      max_output_size_per_class: an int32 scalar, the most boxes kept per class.
      max_total_size: an int32 scalar, the most boxes kept per batch entry.
      iou_threshold: a float in [0, 1].
      score_threshold: boxes scoring at or below it are dropped.
      pad_per_class: pad to min(max_total_size, max_output_size_per_class *
        num_classes) instead of max_total_size.
      clip_boxes: clip the output coordinates to [0, 1].
      name: name scope.

    Returns:
      A CombinedNonMaxSuppression namedtuple, as TF's: (nmsed_boxes [batch, T, 4],
      nmsed_scores [batch, T], nmsed_classes [batch, T] (float32), valid_detections
      int32 [batch]), zero-padded past the valid entries.
    """
    with name_scope(name, "combined_non_max_suppression"):
        iou, score = _thresholds(_dt.float32, iou_threshold, score_threshold)
        op = apply_op("CombinedNonMaxSuppression",
                      [boxes, scores, max_output_size_per_class, max_total_size, iou, score],
                      {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)},
                      name="CombinedNonMaxSuppression")
        return CombinedNonMaxSuppression(*op.outputs)


# --- DrawBoundingBoxesV2 ------------------------------------------------------------------
# TF's default palette (RGBA), used in turn by the boxes when no colors are given
_DEFAULT_COLORS = np.array([
    [1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
    [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]],
    np.float32)


def _draw_shape(op) -> TensorShape:
    images = with_rank(op.inputs[0].shape, 4)
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
        raise errors.InvalidArgumentError(
            None, ctx.op, "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA), "
            "got images of shape %s" % list(images.shape))
    if boxes.ndim != 3 or boxes.shape[0] != images.shape[0] or boxes.shape[2] != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "boxes must be [batch, num_boxes, "
                                          "4], got %s" % list(boxes.shape))
    palette = colors if colors.size else _DEFAULT_COLORS
    depth = images.shape[3]
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

register_op("SampleDistortedBoundingBoxV2",
            inputs=["image_size: T", "bounding_boxes: float", "min_object_covered: float"],
            outputs=["begin: T", "size: T", "bboxes: float"],
            attrs={"T": TypeAttr(_SIZE_TYPES), "seed": 0, "seed2": 0,
                   "aspect_ratio_range": [0.75, 1.33], "area_range": [0.05, 1.0],
                   "max_attempts": 100, "use_image_if_no_bounding_boxes": False},
            shape=lambda op: [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])],
            stateful=True)
not_differentiable("SampleDistortedBoundingBoxV2")


def _random_crops(gen, n: int, height: int, width: int, ratio_range, area_range):
    """`n` candidate crops (y, x, h, w) and whether each is valid: an aspect ratio and an
    area drawn uniformly, the height rounded and the offset drawn uniformly."""
    total = float(height * width)
    ratio = gen.uniform(ratio_range[0], ratio_range[1], n)
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
    ratio_range, area_range = a["aspect_ratio_range"], a["area_range"]
    if not (len(ratio_range) == 2 and 0 < ratio_range[0] <= ratio_range[1]):
        raise errors.InvalidArgumentError(None, ctx.op, "aspect_ratio_range must be 2 "
                                          "positive increasing values")
    if not (len(area_range) == 2 and 0 < area_range[0] <= area_range[1] <= 1):
        raise errors.InvalidArgumentError(None, ctx.op, "area_range must be 2 values in "
                                          "(0, 1], increasing")
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
      seed, seed2: the random seeds (TF1 rules with the graph seed).
      min_object_covered: the fraction of some bounding box the crop must contain.
      aspect_ratio_range: [min, max] width/height of the crop (default [0.75, 1.33]).
      area_range: [min, max] fraction of the image the crop covers (default [0.05, 1]).
      max_attempts: crops tried before returning the whole image (default 100).
      use_image_if_no_bounding_boxes: with no boxes, act as if the whole image were one.
      name: name scope.

    Returns:
      (begin [offset_y, offset_x, 0], size [height, width, -1], bboxes [1, 1, 4]): begin
      and size of the type of `image_size`, bboxes the crop as a normalized box.
    """
    from tensorweave.ops.random import random_ops
    with name_scope(name, "sample_distorted_bounding_box"):
        s1, s2 = random_ops.get_seed(seed)
        attrs = {"seed": s1 or 0, "seed2": int(seed2) if seed2 is not None else (s2 or 0)}
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
        return tuple(op.outputs)
