"""Crops resized from boxes and patch extraction: CropAndResize (with its gradient ops
CropAndResizeGradImage and CropAndResizeGradBoxes), ExtractImagePatches and
ExtractVolumePatches.

CropAndResize samples, for box b = [y1, x1, y2, x2] (normalized) of image box_ind[b], the
crop_height x crop_width grid y = y1 (H-1) + i (y2-y1)(H-1)/(crop_height-1) (the box's
center when crop_height is 1), and likewise x; points outside the image get
`extrapolation_value`; "bilinear" interpolates the four neighbours, "nearest" rounds.

The gradient of a patch extraction is the sum of each patch gradient back onto the
positions it was read from: the same extraction applied to an image of position numbers
gives, for every patch element, its source position (0 for padding), and an
unsorted_segment_sum adds the gradients up. So the gradient is made of ordinary
differentiable ops.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import (TypeAttr, gradient, kernel, not_differentiable,
                                             register_op)
from tensorweave.framework.shapes import TensorShape, merge_dim, unknown_shape, with_rank
from tensorweave.framework.tensor_util import constant_value

_IMAGE_TYPES = (_dt.uint8, _dt.uint16, _dt.int8, _dt.int16, _dt.int32, _dt.int64,
                _dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_REAL = _dt.REAL_NUMBERS


# --- CropAndResize ------------------------------------------------------------------------
def _crop_shape(op) -> TensorShape:
    image = with_rank(op.inputs[0].shape, 4)
    boxes = with_rank(op.inputs[1].shape, 2)
    box_ind = with_rank(op.inputs[2].shape, 1)
    merge_dim(boxes.dims[1].value, 4)
    n = merge_dim(boxes.dims[0].value, box_ind.dims[0].value)
    with_rank(op.inputs[3].shape, 1)
    size = constant_value(op.inputs[3])
    ch, cw = (None, None) if size is None else (int(size[0]), int(size[1]))
    return TensorShape([n, ch, cw, image.dims[3].value])


register_op("CropAndResize",
            inputs=["image: T", "boxes: float", "box_ind: int32", "crop_size: int32"],
            outputs=["crops: float"],
            attrs={"T": TypeAttr(_IMAGE_TYPES), "method": "bilinear",
                   "extrapolation_value": 0.0},
            shape=_crop_shape)


def _sample_grid(boxes: np.ndarray, size: int, length: int, lo: int, hi: int):
    """Sample coordinates [num_boxes, size] along one axis (lo/hi: box columns)."""
    b0, b1 = boxes[:, lo].astype(np.float32), boxes[:, hi].astype(np.float32)
    if size > 1:
        scale = (b1 - b0) * (length - 1) / np.float32(size - 1)
        return b0[:, None] * (length - 1) + np.arange(size, dtype=np.float32) * scale[:, None]
    return np.broadcast_to((0.5 * (b0 + b1) * (length - 1))[:, None], (len(boxes), 1))


def _check_crop_inputs(ctx, image, boxes, box_ind, crop_size):
    if image.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "input image must be 4-D, got shape "
                                          "%s" % list(image.shape))
    if boxes.ndim != 2 or boxes.shape[1] != 4 or box_ind.shape != (boxes.shape[0],):
        raise errors.InvalidArgumentError(
            None, ctx.op, "boxes must be [num_boxes, 4] and box_ind [num_boxes]; got %s and "
            "%s" % (list(boxes.shape), list(box_ind.shape)))
    ch, cw = (int(v) for v in np.asarray(crop_size).reshape(-1)[:2])
    if ch <= 0 or cw <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "crop dimensions must be positive")
    if box_ind.size and (box_ind.min() < 0 or box_ind.max() >= image.shape[0]):
        # TF reports an index out of range as OutOfRangeError, as gather does
        raise errors.OutOfRangeError(None, ctx.op, "box_index has values outside "
                                     "[0, batch_size)")
    return ch, cw


def _bilinear_parts(image_shape, boxes, ch, cw):
    """Integer corners, fractions and validity masks of the sampling grid."""
    _, height, width, _ = image_shape
    in_y = _sample_grid(boxes, ch, height, 0, 2)
    in_x = _sample_grid(boxes, cw, width, 1, 3)
    valid_y = (in_y >= 0) & (in_y <= height - 1)
    valid_x = (in_x >= 0) & (in_x <= width - 1)
    top = np.clip(np.floor(in_y), 0, height - 1).astype(np.int64)
    bottom = np.clip(np.ceil(in_y), 0, height - 1).astype(np.int64)
    left = np.clip(np.floor(in_x), 0, width - 1).astype(np.int64)
    right = np.clip(np.ceil(in_x), 0, width - 1).astype(np.int64)
    return (in_y, in_x, valid_y, valid_x, top, bottom, left, right,
            (in_y - np.floor(in_y)).astype(np.float32),
            (in_x - np.floor(in_x)).astype(np.float32))


@kernel("CropAndResize", cheap=False)
def _crop_and_resize_kernel(ctx, image, boxes, box_ind, crop_size):
    ch, cw = _check_crop_inputs(ctx, image, boxes, box_ind, crop_size)
    n, depth = boxes.shape[0], image.shape[3]
    if n == 0:
        return np.zeros([0, ch, cw, depth], np.float32)
    (in_y, in_x, valid_y, valid_x, top, bottom, left, right, y_lerp,
     x_lerp) = _bilinear_parts(image.shape, boxes, ch, cw)
    b = box_ind.astype(np.int64)[:, None, None]
    img = image
    if ctx.attrs["method"] == "nearest":
        # round half away from zero, as C's roundf
        ny = np.clip(np.floor(in_y + 0.5), 0, image.shape[1] - 1).astype(np.int64)
        nx = np.clip(np.floor(in_x + 0.5), 0, image.shape[2] - 1).astype(np.int64)
        out = img[b, ny[:, :, None], nx[:, None, :], :].astype(np.float32)
    else:
        # pixels gathered by flat row number (one take, faster than 3-D fancy indexing)
        height, width = image.shape[1], image.shape[2]
        pixels = img.reshape(-1, depth)
        base = b * height

        def at(rows, cols):
            flat = (base + rows[:, :, None]) * width + cols[:, None, :]
            return pixels.take(flat, axis=0).astype(np.float32, copy=False)
        yl = y_lerp[:, :, None, None]
        xl = x_lerp[:, None, :, None]
        top_left, bottom_left = at(top, left), at(bottom, left)  # each gathered once
        top_row = top_left + (at(top, right) - top_left) * xl
        bottom_row = bottom_left + (at(bottom, right) - bottom_left) * xl
        out = top_row + (bottom_row - top_row) * yl
    inside = (valid_y[:, :, None] & valid_x[:, None, :])[..., None]
    return np.where(inside, out, np.float32(ctx.attrs["extrapolation_value"])).astype(
        np.float32)


register_op("CropAndResizeGradImage",
            inputs=["grads: float", "boxes: float", "box_ind: int32", "image_size: int32"],
            outputs=["output: T"],
            attrs={"T": TypeAttr((_dt.float16, _dt.float32, _dt.float64)),
                   "method": "bilinear"},
            shape=lambda op: _image_size_shape(op))
register_op("CropAndResizeGradBoxes",
            inputs=["grads: float", "image: T", "boxes: float", "box_ind: int32"],
            outputs=["output: float"], attrs={"T": TypeAttr(_IMAGE_TYPES),
                                              "method": "bilinear"},
            shape=lambda op: op.inputs[2].shape)
not_differentiable("CropAndResizeGradImage")
not_differentiable("CropAndResizeGradBoxes")


def _image_size_shape(op) -> TensorShape:
    size = constant_value(op.inputs[3])
    if size is None:
        return unknown_shape(4)
    return TensorShape([int(v) for v in size])


@kernel("CropAndResizeGradImage", cheap=False)
def _crop_grad_image_kernel(ctx, grads, boxes, box_ind, image_size):
    shape = tuple(int(v) for v in image_size)
    out_dtype = _dt.as_dtype(ctx.attrs["T"]).as_numpy_dtype
    out = np.zeros(shape, np.float64)
    n, ch, cw, _ = grads.shape
    if ctx.attrs["method"] != "bilinear":
        raise errors.InvalidArgumentError(None, ctx.op, "The gradient of CropAndResize is "
                                          "only defined for method 'bilinear'")
    if n:
        (_, _, valid_y, valid_x, top, bottom, left, right, yl,
         xl) = _bilinear_parts(shape, boxes, ch, cw)
        inside = (valid_y[:, :, None] & valid_x[:, None, :])[..., None]
        g = np.where(inside, grads.astype(np.float64), 0.0)
        yl = yl[:, :, None, None].astype(np.float64)
        xl = xl[:, None, :, None].astype(np.float64)
        b = np.broadcast_to(box_ind.astype(np.int64)[:, None, None], (n, ch, cw))
        for rows, cols, w in ((top, left, (1 - yl) * (1 - xl)), (top, right, (1 - yl) * xl),
                              (bottom, left, yl * (1 - xl)), (bottom, right, yl * xl)):
            r = np.broadcast_to(rows[:, :, None], (n, ch, cw))
            c = np.broadcast_to(cols[:, None, :], (n, ch, cw))
            np.add.at(out, (b, r, c), g * w)
    return out.astype(out_dtype)


@kernel("CropAndResizeGradBoxes", cheap=False)
def _crop_grad_boxes_kernel(ctx, grads, image, boxes, box_ind):
    n, ch, cw, _ = grads.shape
    out = np.zeros([n, 4], np.float32)
    if not n:
        return out
    _, height, width, _ = image.shape
    (in_y, in_x, valid_y, valid_x, top, bottom, left, right, yl,
     xl) = _bilinear_parts(image.shape, boxes, ch, cw)
    b = box_ind.astype(np.int64)[:, None, None]

    def at(rows, cols):
        return image[b, rows[:, :, None], cols[:, None, :], :].astype(np.float32)
    tl, tr, bl, br = at(top, left), at(top, right), at(bottom, left), at(bottom, right)
    ylr, xlr = yl[:, :, None, None], xl[:, None, :, None]
    top_row = tl + (tr - tl) * xlr
    bottom_row = bl + (br - bl) * xlr
    inside = (valid_y[:, :, None] & valid_x[:, None, :])[..., None]
    g = np.where(inside, grads, 0.0).astype(np.float32)
    d_y = ((bottom_row - top_row) * g).sum(axis=3)  # [n, ch, cw]: dOut/d in_y
    d_x = (((tr - tl) * (1 - ylr) + (br - bl) * ylr) * g).sum(axis=3)
    i = np.arange(ch, dtype=np.float32)[None, :, None]
    j = np.arange(cw, dtype=np.float32)[None, None, :]
    if ch > 1:
        wy2 = i / np.float32(ch - 1) * (height - 1)
        wy1 = (height - 1) - wy2
    else:
        wy1 = wy2 = np.float32(0.5 * (height - 1))
    if cw > 1:
        wx2 = j / np.float32(cw - 1) * (width - 1)
        wx1 = (width - 1) - wx2
    else:
        wx1 = wx2 = np.float32(0.5 * (width - 1))
    out[:, 0] = (d_y * wy1).sum(axis=(1, 2))
    out[:, 2] = (d_y * wy2).sum(axis=(1, 2))
    out[:, 1] = (d_x * wx1).sum(axis=(1, 2))
    out[:, 3] = (d_x * wx2).sum(axis=(1, 2))
    return out


@gradient("CropAndResize")
def _crop_and_resize_grad(op, grad):
    from tensorweave.ops.array import array_ops
    image, boxes, box_ind, _ = op.inputs
    method = op._get_attr("method")
    image_grad = None
    if image.dtype in (_dt.float16, _dt.float32, _dt.float64):
        image_grad = apply_op("CropAndResizeGradImage",
                              [grad, boxes, box_ind, array_ops.shape(image)],
                              {"T": image.dtype, "method": method},
                              name="CropAndResizeGradImage").outputs[0]
    boxes_grad = apply_op("CropAndResizeGradBoxes", [grad, image, boxes, box_ind],
                          {"method": method}, name="CropAndResizeGradBoxes").outputs[0]
    return [image_grad, boxes_grad, None, None]


@tf_export("image.crop_and_resize")
def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method: str = "bilinear",
                    extrapolation_value: float = 0.0, name: Optional[str] = None,
                    box_indices=None) -> Tensor:
    """Crops boxes out of a batch of images and resizes each crop to `crop_size`.

    Args:
      image: a numeric Tensor [batch, height, width, depth].
      boxes: a float32 Tensor [num_boxes, 4] of normalized [y1, x1, y2, x2]; y1 > y2
        flips the crop; coordinates outside [0, 1] extrapolate.
      box_ind: an int32 Tensor [num_boxes], the image of each box.
      crop_size: an int32 pair [crop_height, crop_width].
      method: "bilinear" or "nearest".
      extrapolation_value: the value of samples outside the image.
      name: op name.
      box_indices: alias of `box_ind`.

    Returns:
      A float32 Tensor [num_boxes, crop_height, crop_width, depth].

    Raises:
      ValueError: both or neither of box_ind/box_indices, or a bad method.
    """
    if (box_ind is None) == (box_indices is None):
        raise ValueError("Cannot specify both box_ind and box_indices" if box_ind is not None
                         else "box_ind (or box_indices) is required")
    box_ind = box_indices if box_ind is None else box_ind
    if crop_size is None:
        raise ValueError("crop_size is required")
    if method not in ("bilinear", "nearest"):
        raise ValueError("method must be 'bilinear' or 'nearest', got %r" % method)
    return apply_op("CropAndResize", [image, boxes, box_ind, crop_size],
                    {"method": method, "extrapolation_value": float(extrapolation_value)},
                    name=name or "CropAndResize").outputs[0]


# --- ExtractImagePatches / ExtractVolumePatches ---------------------------------------------
def _window_geometry(size: Optional[int], k: int, stride: int, rate: int, padding: str):
    """(output size, padding before) of one spatial dimension (None when unknown)."""
    eff = k + (k - 1) * (rate - 1)
    if size is None:
        return None, None
    if padding == "VALID":
        return max(0, -(-(size - eff + 1) // stride)), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + eff - size, 0) // 2


def _patch_attrs(op_type: str):
    return ("ksizes", "strides", "rates") if op_type == "ExtractImagePatches" else \
        ("ksizes", "strides")


def _patches_shape(op) -> TensorShape:
    spatial = 2 if op.type == "ExtractImagePatches" else 3
    s = with_rank(op.inputs[0].shape, spatial + 2)
    ks = op._get_attr("ksizes")
    st = op._get_attr("strides")
    rates = op._get_attr("rates") if spatial == 2 else [1] * (spatial + 2)
    for name, v in (("ksizes", ks), ("strides", st), ("rates", rates)):
        if len(v) != spatial + 2 or v[0] != 1 or v[-1] != 1:
            raise ValueError("%s %s must be a list of %d ints with 1 first and last"
                             % (op.type, name, spatial + 2))
    if s.ndims is None:
        return unknown_shape(spatial + 2)
    dims = s.as_list()
    out = [dims[0]]
    for i in range(1, spatial + 1):
        out.append(_window_geometry(dims[i], ks[i], st[i], rates[i],
                                    op._get_attr("padding"))[0])
    depth = dims[-1]
    out.append(None if depth is None else depth * int(np.prod(ks[1:-1])))
    return TensorShape(out)


for _type in ("ExtractImagePatches", "ExtractVolumePatches"):
    # TF's kernels take complex values too
    _attrs = {"T": TypeAttr(_REAL + (_dt.complex64, _dt.complex128)), "ksizes": None,
              "strides": None, "padding": None}
    if _type == "ExtractImagePatches":
        _attrs["rates"] = None
    register_op(_type, inputs=["images: T" if _type == "ExtractImagePatches" else "input: T"],
                outputs=["patches: T"], attrs=_attrs, shape=_patches_shape)


def _extract(ctx, x, spatial: int):
    ks, st = ctx.attrs["ksizes"], ctx.attrs["strides"]
    rates = ctx.attrs.get("rates") or [1] * (spatial + 2)
    padding = ctx.attrs["padding"]
    if x.ndim != spatial + 2:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be %d-D, got shape %s"
                                          % (spatial + 2, list(x.shape)))
    index = []
    pads = [(0, 0)]
    for i in range(1, spatial + 1):
        out, before = _window_geometry(x.shape[i], ks[i], st[i], rates[i], padding)
        starts = np.arange(out) * st[i] - before
        idx = starts[:, None] + np.arange(ks[i]) * rates[i]  # [out, k] in unpadded coords
        need = max(int(idx.max()) + 1 - x.shape[i], 0) if idx.size else 0
        pads.append((before, need))
        index.append(idx + before)
    pads.append((0, 0))
    padded = np.pad(x, pads)
    # broadcast the index arrays to [out_1, ..., out_s, k_1, ..., k_s]
    grids = []
    for i, idx in enumerate(index):
        shape = [1] * (2 * spatial)
        shape[i], shape[spatial + i] = idx.shape
        grids.append(idx.reshape(shape))
    patches = padded[(slice(None),) + tuple(grids)]  # [B, outs..., ks..., D]
    b = x.shape[0]
    outs = patches.shape[1:1 + spatial]
    # the depth of a patch, given (a reshape cannot infer it of an empty batch or output)
    depth = int(np.prod([ks[i] for i in range(1, spatial + 1)])) * x.shape[-1]
    return np.ascontiguousarray(patches.reshape((b,) + outs + (depth,)))


@kernel("ExtractImagePatches")
def _extract_image_patches_kernel(ctx, images):
    return _extract(ctx, images, 2)


@kernel("ExtractVolumePatches")
def _extract_volume_patches_kernel(ctx, x):
    return _extract(ctx, x, 3)


def _patches_grad(op, grad):
    """The patch gradients summed back onto their source positions (see the module
    docstring)."""
    from tensorweave.ops.array import array_join_ops, array_ops
    from tensorweave.ops.math import math_ops, reduction_ops, segment_ops
    x = op.inputs[0]
    spatial = x.shape.ndims - 2 if x.shape.ndims is not None else (
        2 if op.type == "ExtractImagePatches" else 3)
    shape = array_ops.shape(x)
    inner = shape[1:1 + spatial]
    n_pos = reduction_ops.reduce_prod(inner)
    positions = array_ops.reshape(math_ops.range(1, n_pos + 1),
                                  array_join_ops.concat([[1], inner, [1]], 0))
    attrs = {k: op._get_attr(k) for k in _patch_attrs(op.type) + ("padding",)}
    ids = apply_op(op.type, [positions], attrs, name="patch_positions").outputs[0]
    ids = array_ops.reshape(ids, [-1])  # [outs... * ks...]
    depth = shape[-1]
    g = array_ops.reshape(grad, array_join_ops.concat([shape[:1], [-1], [depth]], 0))
    g = array_ops.transpose(g, [1, 0, 2])  # [outs * ks, B, D]
    summed = segment_ops.unsorted_segment_sum(g, ids, n_pos + 1)[1:]
    back = array_ops.reshape(summed, array_join_ops.concat(
        [inner, shape[:1], [depth]], 0))
    perm = [spatial] + list(range(spatial)) + [spatial + 1]
    result = array_ops.transpose(back, perm)
    result.set_shape(x.shape)
    return [result]


gradient("ExtractImagePatches")(_patches_grad)
gradient("ExtractVolumePatches")(_patches_grad)


def _list4(v, n: int, what: str) -> list:
    v = list(v)
    if len(v) != n:
        raise ValueError("%s must be a list of %d ints, got %r" % (what, n, v))
    return [int(i) for i in v]


@tf_export("image.extract_patches")
def extract_patches(images, sizes, strides, rates, padding: str,
                    name: Optional[str] = None) -> Tensor:
    """Patches of `images`, each flattened into the depth dimension.

    Args:
      images: a 4-D Tensor [batch, rows, cols, depth].
      sizes: [1, size_rows, size_cols, 1], the patch size.
      strides: [1, stride_rows, stride_cols, 1], the distance between patch starts.
      rates: [1, rate_rows, rate_cols, 1], the dilation of a patch.
      padding: "VALID" (only whole patches) or "SAME" (zero-padded).
      name: op name.

    Returns:
      A Tensor [batch, out_rows, out_cols, size_rows * size_cols * depth].

    Raises:
      ValueError: bad sizes/strides/rates or padding.
    """
    if padding not in ("SAME", "VALID"):
        raise ValueError("padding must be 'SAME' or 'VALID', got %r" % (padding,))
    return apply_op("ExtractImagePatches", [images],
                    {"ksizes": _list4(sizes, 4, "sizes"),
                     "strides": _list4(strides, 4, "strides"),
                     "rates": _list4(rates, 4, "rates"), "padding": padding},
                    name=name or "ExtractImagePatches").outputs[0]


@tf_export("extract_image_patches", "image.extract_image_patches")
def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name: Optional[str] = None, sizes=None) -> Tensor:
    """TF1's spelling of `tf.image.extract_patches` (`ksizes`, or its alias `sizes`).

    Args:
      images, strides, rates, padding, name: as in `extract_patches`.
      ksizes: [1, size_rows, size_cols, 1].
      sizes: alias of `ksizes`.

    Returns:
      A Tensor [batch, out_rows, out_cols, size_rows * size_cols * depth].

    Raises:
      ValueError: both or neither of ksizes/sizes.
    """
    if (ksizes is None) == (sizes is None):
        raise ValueError("Cannot specify both ksizes and sizes" if ksizes is not None
                         else "ksizes (or sizes) is required")
    return extract_patches(images, ksizes if sizes is None else sizes, strides, rates,
                           padding, name=name)


@tf_export("extract_volume_patches")
def extract_volume_patches(input, ksizes: Sequence[int], strides: Sequence[int],  # noqa: A002
                           padding: str, name: Optional[str] = None) -> Tensor:
    """3-D patches of `input`, each flattened into the depth dimension.

    Args:
      input: a 5-D Tensor [batch, planes, rows, cols, depth].
      ksizes: [1, size_planes, size_rows, size_cols, 1].
      strides: [1, stride_planes, stride_rows, stride_cols, 1].
      padding: "VALID" or "SAME".
      name: op name.

    Returns:
      A Tensor [batch, out_planes, out_rows, out_cols, size_planes * size_rows *
      size_cols * depth].
    """
    if padding not in ("SAME", "VALID"):
        raise ValueError("padding must be 'SAME' or 'VALID', got %r" % (padding,))
    return apply_op("ExtractVolumePatches", [input],
                    {"ksizes": _list4(ksizes, 5, "ksizes"),
                     "strides": _list4(strides, 5, "strides"), "padding": padding},
                    name=name or "ExtractVolumePatches").outputs[0]
