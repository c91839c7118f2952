"""Image resizing: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea and
their gradients (part of the image family), and `tf.image.resize_images`.

Every method is separable: along each spatial axis, output position o reads a few input
positions ("taps") with weights. The taps follow TF's kernels exactly (float32 scale,
TF1's legacy sampling or half-pixel centers, the 1024-entry Keys cubic table), so the
results match TF's. ResizeBilinear does TF's float32 lerps, along the width then the
height, so its values are TF's to the bit; the other methods sum the weighted taps of the
height axis, then of the width axis. A gradient applies the adjoint: each input position
sums the weighted gradients of the output positions that read it (the taps transposed, a
gather like the forward pass); it is itself differentiated by resizing again. TF has
no gradient for ResizeArea; here it has one, through the op ResizeAreaGrad (named like
TF's other resize gradients).
"""
from __future__ import annotations

import enum
from typing import Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, with_rank

_IMAGE_TYPES = (_dt.int8, _dt.uint8, _dt.int16, _dt.uint16, _dt.int32, _dt.int64,
                _dt.bfloat16, _dt.float16, _dt.float32, _dt.float64)
_GRAD_TYPES = {"ResizeBilinear": (_dt.float32, _dt.bfloat16, _dt.float16, _dt.float64),
               "ResizeBicubic": (_dt.float32, _dt.float64),
               "ResizeArea": (_dt.float32, _dt.bfloat16, _dt.float16, _dt.float64),
               "ResizeNearestNeighbor": (_dt.uint8, _dt.int8, _dt.int32, _dt.float16,
                                         _dt.float32, _dt.float64, _dt.bfloat16)}
_CUBIC_TABLE_SIZE = 1024


# --- taps along one axis -------------------------------------------------------------------
def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32((in_size - 1) / np.float32(out_size - 1))
    return np.float32(in_size / np.float32(out_size))


def _cubic_coefficients(a: float) -> np.ndarray:
    """TF's Keys cubic table: row i holds the weights at distance i/1024 and 1 + i/1024."""
    x = np.arange(_CUBIC_TABLE_SIZE + 1, dtype=np.float32) / np.float32(_CUBIC_TABLE_SIZE)
    a = np.float32(a)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far_x = x + np.float32(1.0)
    far = ((a * far_x - 5 * a) * far_x + 8 * a) * far_x - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)


def _taps(method: str, in_size: int, out_size: int, align_corners: bool,
          half_pixel: bool) -> Tuple[np.ndarray, np.ndarray]:
    """(indices, weights), both [taps, out_size]: output o = sum_k w[k, o] * in[idx[k, o]]."""
    scale = _scale(in_size, out_size, align_corners)
    o = np.arange(out_size, dtype=np.float32)
    last = in_size - 1
    if method == "ResizeNearestNeighbor":
        pos = (o + np.float32(0.5)) * scale if half_pixel else o * scale
        # roundf (half away from zero) with align_corners, floor otherwise
        idx = np.floor(pos + np.float32(0.5)) if align_corners else np.floor(pos)
        idx = np.clip(idx.astype(np.int64), 0, last)
        return idx[None], np.ones((1, out_size), np.float32)
    if method == "ResizeArea":
        start, end = o * scale, (o + 1) * scale
        first = np.floor(start).astype(np.int64)
        span = int(np.max(np.ceil(end).astype(np.int64) - first)) if out_size else 1
        i = first[None, :] + np.arange(span)[:, None]
        weight = np.minimum(i + 1, end[None]) - np.maximum(i, start[None])
        weight = np.where(i < np.ceil(end)[None], weight, 0).astype(np.float32) / scale
        return np.clip(i, 0, last), weight.astype(np.float32)
    pos = (o + np.float32(0.5)) * scale - np.float32(0.5) if half_pixel else o * scale
    base = np.floor(pos)
    frac = (pos - base).astype(np.float32)
    base = base.astype(np.int64)
    if method == "ResizeBilinear":
        lower = np.maximum(base, 0)
        upper = np.minimum(np.ceil(pos).astype(np.int64), last)
        return np.stack([lower, upper]), np.stack([1 - frac, frac]).astype(np.float32)
    # ResizeBicubic: Keys cubic, a = -0.5 with half-pixel centers (taps outside the image
    # get no weight, the rest are renormalized), else -0.75 with edge taps repeated
    table = _cubic_coefficients(-0.5 if half_pixel else -0.75)
    offset = np.rint(frac * _CUBIC_TABLE_SIZE).astype(np.int64)
    weights = np.stack([table[offset, 1], table[offset, 0],
                        table[_CUBIC_TABLE_SIZE - offset, 0],
                        table[_CUBIC_TABLE_SIZE - offset, 1]])
    wanted = base[None, :] + np.arange(-1, 3)[:, None]
    idx = np.clip(wanted, 0, last)
    if half_pixel:
        weights = np.where(idx == wanted, weights, 0)
        total = weights.sum(axis=0)
        weights = np.where(np.abs(total) >= 1000 * np.finfo(np.float32).tiny,
                           weights / np.where(total == 0, 1, total), weights)
    return idx, weights.astype(np.float32)


# --- applying taps ---------------------------------------------------------------------------
# Arrays are handled as 2-D [outer, size * inner] around the resized axis: a gather along it
# (np.take) gives [outer, len(idx) * inner], and a per-position vector is repeated `inner`
# times to match, so every multiply and add is one flat pass (broadcasting a [n, 1] vector
# over a [outer, n, 3] array runs an inner loop of 3 elements, several times slower).
def _split(shape, axis: int) -> Tuple[int, int, int]:
    return (int(np.prod(shape[:axis], dtype=np.int64)), shape[axis],
            int(np.prod(shape[axis + 1:], dtype=np.int64)))


def _gather(xp, x, axis: int, idx, out=None):
    """np.take(x, idx, axis) as [outer, len(idx) * inner], into the C-contiguous NumPy
    array `out` of that size where given (then `out` is returned, reshaped)."""
    outer, size, inner = _split(x.shape, axis)
    block = inner * x.dtype.itemsize
    # (a take into `out` in mode "raise" would go through a buffer; the indices are the
    # taps', within the axis)
    into = {} if out is None else {"out": out.reshape(outer, len(idx) * inner),
                                   "mode": "clip"}
    if inner > 1 and block < 16 and block & (block - 1):
        # np.take copies blocks of 1, 2, 4, 8, 16 or 32 bytes by assignment, others with a
        # memmove each (an RGB pixel of float32: 12 bytes, 1.5x slower than taking its 3
        # floats one by one): take single elements instead
        flat = (idx[:, None] * inner + np.arange(inner)).ravel()
        return xp.take(x.reshape(outer, size * inner), xp.asarray(flat), axis=1, **into)
    if into:
        into["out"] = into["out"].reshape(outer, len(idx), inner)
    taken = xp.take(x.reshape(outer, size, inner), xp.asarray(idx), axis=1, **into)
    return taken.reshape(outer, len(idx) * inner)


def _spread(xp, values, inner: int, dtype=np.float32):
    """Per-position `values` laid out like a gathered row: each repeated `inner` times."""
    return xp.asarray(np.repeat(np.asarray(values, dtype), inner))


def _resized_shape(shape, axis: int, size: int):
    return shape[:axis] + (size,) + shape[axis + 1:]


def _weighted_sum(xp, x, axis: int, idx, weights):
    """sum_k weights[k] * x[idx[k]] along `axis`, summed in the order of the taps."""
    inner = _split(x.shape, axis)[2]
    out = None
    for k in range(idx.shape[0]):
        term = _gather(xp, x, axis, idx[k])
        term *= _spread(xp, weights[k], inner, term.dtype)
        out = term if out is None else xp.add(out, term, out=out)
    return out.reshape(_resized_shape(x.shape, axis, idx.shape[1]))


def _lerp(xp, x, axis: int, lower, upper, frac, dest=None):
    """TF's lerp along `axis` in float32: x[lower] + (x[upper] - x[lower]) * frac (x of any
    real type, each element cast to float32 as it is read, as TF does); into the float32
    array `dest` of the result's size where given."""
    inner = _split(x.shape, axis)[2]
    a = _gather(xp, x, axis, lower).astype(np.float32, copy=False)
    if np.array_equal(lower, upper):  # every position on the grid: x[upper] is a again
        out = xp.subtract(a, a)
    else:
        out = _gather(xp, x, axis, upper).astype(np.float32, copy=False)
        out -= a
    out *= _spread(xp, frac, inner)
    out = xp.add(out, a, out=out if dest is None else dest.reshape(out.shape))
    return out.reshape(_resized_shape(x.shape, axis, len(lower)))


def _transpose_taps(idx, weights, in_size: int):
    """The adjoint's taps: for each input position, the output positions that read it
    (k-major, then by output position, the order of a scatter-add over the taps), padded
    with weight 0 and index out_size, a zero slice appended to the adjoint's input."""
    taps, out_size = idx.shape
    dst = idx.ravel()
    order = np.argsort(dst, kind="stable")
    dst = dst[order]
    src = np.tile(np.arange(out_size), taps)[order]
    counts = np.bincount(dst, minlength=in_size)
    rank = np.arange(dst.size) - np.repeat(np.cumsum(counts) - counts, counts)
    adj_idx = np.full((max(int(counts.max()), 1), in_size), out_size)
    adj_weights = np.zeros(adj_idx.shape, np.float32)
    adj_idx[rank, dst] = src
    adj_weights[rank, dst] = weights.ravel()[order]
    return adj_idx, adj_weights


def _adjoint_axis(xp, dy, axis: int, adj_idx, adj_weights):
    """The adjoint of the taps along `axis` (scatter-adding w * dy[o] into each tap's
    input position), as a weighted sum with the transposed taps."""
    pad = list(dy.shape)
    pad[axis] = 1
    padded = xp.concatenate([dy, xp.zeros(pad, dy.dtype)], axis=axis)
    return _weighted_sum(xp, padded, axis, adj_idx, adj_weights)


# --- the ops ---------------------------------------------------------------------------------
def _check_attrs(ctx, method: str):
    align = ctx.attrs["align_corners"]
    half = ctx.attrs.get("half_pixel_centers", False)
    if align and half:
        raise errors.InvalidArgumentError(
            None, ctx.op, "If half_pixel_centers is True, align_corners must be False.")
    return align, half


def _check_size(ctx, images, size) -> Tuple[int, int]:
    if images.ndim != 4:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input must be 4-dimensional[%s]" % ",".join(map(str, images.shape)))
    if size.shape != (2,):
        raise errors.InvalidArgumentError(
            None, ctx.op, "shape_t must be 1-dimensional and 2 elements, got shape %s"
            % (list(size.shape),))
    h, w = int(size[0]), int(size[1])
    if h <= 0 or w <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "output dimensions must be positive")
    if images.shape[1] == 0 or images.shape[2] == 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input image must be of non-zero size")
    return h, w


# Images are resized a few at a time: the temporaries of a step (about 2 MiB each) are
# reused by the allocator from one step to the next and partly stay in cache, where
# full-batch ones are fresh memory, paged in again on every run (which costs about as
# much as the arithmetic: 36 ms against 25 ms for 32 images of 224x224 to 300x300).
_CHUNK_ELEMENTS = 1 << 19


def _by_chunks(xp, fn, x, out_shape, dtype):
    """fn(chunk, dest) over slices of the batch of x, gathered into one output of
    out_shape: `dest` is the chunk's slice of the output (NumPy; else None), which fn
    may write its result into (a pass fewer: 32 images of 64x64x3 to 128x128 bilinear
    1.93-2.06 -> 1.80-1.83 ms) or leave for its result to be copied into."""
    n = x.shape[0]
    per_image = max(int(np.prod(x.shape[1:])), int(np.prod(out_shape[1:])), 1)
    step = max(1, _CHUNK_ELEMENTS // per_image)
    if step >= n:
        return fn(x, None)
    out = xp.empty(out_shape, dtype)
    for start in range(0, n, step):
        part = out[start:start + step]
        result = fn(x[start:start + step], part if xp is np else None)
        if xp is not np or not np.may_share_memory(result, part):
            part[...] = result
    return out


def _resize(xp, method, images, out_h, out_w, align, half):
    in_h, in_w = images.shape[1], images.shape[2]
    rows = _taps(method, in_h, out_h, align, half)
    cols = _taps(method, in_w, out_w, align, half)
    nearest = method == "ResizeNearestNeighbor"

    def resize(chunk, dest):
        if method == "ResizeBilinear":
            return _resize_bilinear(xp, chunk, rows, cols, dest)
        if nearest:  # a pure gather, any dtype
            out = _gather(xp, chunk, 1, rows[0][0]).reshape(
                _resized_shape(chunk.shape, 1, out_h))
            return _gather(xp, out, 2, cols[0][0], dest).reshape(
                _resized_shape(out.shape, 2, out_w))
        work = chunk.astype(np.float32, copy=False)
        return _weighted_sum(xp, _weighted_sum(xp, work, 1, *rows), 2, *cols)
    out_shape = (images.shape[0], out_h, out_w, images.shape[3])
    return _by_chunks(xp, resize, images, out_shape,
                      images.dtype if nearest else np.float32)


def _resize_bilinear(xp, images, rows, cols, dest=None):
    """TF's ResizeBilinear: per output pixel top = tl + (tr - tl) * x_lerp, bottom alike,
    then top + (bottom - top) * y_lerp. The width lerp of an input row is the same for
    every output row that reads it, so it is done once per row read, then the height lerp
    (into `dest` where given)."""
    (top, bottom), y_lerp = rows[0], rows[1][1]
    used = np.unique(np.concatenate([top, bottom]))
    if used.size < images.shape[1]:  # e.g. halving: only every other row is read
        images = _gather(xp, images, 1, used).reshape(
            _resized_shape(images.shape, 1, used.size))
        top, bottom = np.searchsorted(used, top), np.searchsorted(used, bottom)
    (left, right), x_lerp = cols[0], cols[1][1]
    across = _lerp(xp, images, 2, left, right, x_lerp)
    return _lerp(xp, across, 1, top, bottom, y_lerp, dest)


def _resize_adjoint(xp, method, grads, in_h, in_w, align, half):
    out_h, out_w = grads.shape[1], grads.shape[2]
    rows = _transpose_taps(*_taps(method, in_h, out_h, align, half), in_h)
    cols = _transpose_taps(*_taps(method, in_w, out_w, align, half), in_w)

    def adjoint(chunk, dest):
        return _adjoint_axis(xp, _adjoint_axis(xp, chunk, 2, *cols), 1, *rows)
    return _by_chunks(xp, adjoint, grads, (grads.shape[0], in_h, in_w, grads.shape[3]),
                      grads.dtype)


def _resize_shape(op):
    images = with_rank(op.inputs[0].shape, 4)
    size = with_rank(op.inputs[1].shape, 1)
    merge_dim(size.as_list()[0], 2)
    value = tensor_util.constant_value(op.inputs[1])
    h = w = None
    if value is not None:
        h, w = int(value[0]), int(value[1])
    dims = images.as_list() if images.ndims is not None else [None] * 4
    return TensorShape([dims[0], h, w, dims[3]])


def _grad_shape(op):
    grads = with_rank(op.inputs[0].shape, 4)
    original = with_rank(op.inputs[1].shape, 4)
    if original.ndims is None:
        return original
    dims = original.as_list()
    if grads.ndims is not None:
        g = grads.as_list()
        dims[0], dims[3] = merge_dim(dims[0], g[0]), merge_dim(dims[3], g[3])
    return TensorShape(dims)


for _method in ("ResizeBilinear", "ResizeBicubic", "ResizeArea", "ResizeNearestNeighbor"):
    _attrs = {"T": TypeAttr(_IMAGE_TYPES), "align_corners": False}
    if _method != "ResizeArea":
        _attrs["half_pixel_centers"] = False
    _out = "T" if _method == "ResizeNearestNeighbor" else "float"
    register_op(_method, inputs=["images: T", "size: int32"],
                outputs=["resized_images: %s" % _out], attrs=_attrs, shape=_resize_shape)
    _grad_attrs = dict(_attrs, T=TypeAttr(_GRAD_TYPES[_method]))
    if _method == "ResizeNearestNeighbor":
        register_op("ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"],
                    outputs=["output: T"], attrs=_grad_attrs, shape=_resize_shape)
    else:
        register_op(_method + "Grad", inputs=["grads: float", "original_image: T"],
                    outputs=["output: T"], attrs=_grad_attrs, shape=_grad_shape)


def _make_kernels(method: str):
    keep = method == "ResizeNearestNeighbor"

    @kernel(method)
    def _forward(ctx, images, size):
        align, half = _check_attrs(ctx, method)
        out_h, out_w = _check_size(ctx, images, size)
        return _resize(ctx.xp, method, images, out_h, out_w, align, half)

    if keep:
        @kernel("ResizeNearestNeighborGrad")
        def _backward(ctx, grads, size):
            align, half = _check_attrs(ctx, method)
            in_h, in_w = _check_size(ctx, grads, size)
            return _resize_adjoint(ctx.xp, method, grads, in_h, in_w, align, half)
    else:
        @kernel(method + "Grad")
        def _backward(ctx, grads, original):
            align, half = _check_attrs(ctx, method)
            if grads.ndim != 4 or original.ndim != 4:
                raise errors.InvalidArgumentError(None, ctx.op,
                                                  "input_grad must be 4-dimensional")
            dx = _resize_adjoint(ctx.xp, method, grads.astype(np.float32, copy=False),
                                 original.shape[1], original.shape[2], align, half)
            return dx.astype(original.dtype, copy=False)


for _method in ("ResizeBilinear", "ResizeBicubic", "ResizeArea", "ResizeNearestNeighbor"):
    _make_kernels(_method)


def _resize_attrs(op) -> dict:
    attrs = {"align_corners": op._get_attr("align_corners")}
    if op.type not in ("ResizeArea", "ResizeAreaGrad"):
        attrs["half_pixel_centers"] = op._get_attr("half_pixel_centers")
    return attrs


def _make_gradients(method: str):
    grad_op = "ResizeNearestNeighborGrad" if method == "ResizeNearestNeighbor" \
        else method + "Grad"

    @gradient(method)
    def _forward_grad(op, grad):
        image = op.inputs[0]
        if image.dtype.base_dtype not in _GRAD_TYPES[method] or not (
                image.dtype.is_floating):
            return [None, None]
        if method == "ResizeNearestNeighbor":
            from tensorweave.ops.array import array_ops
            size = array_ops.shape(image)[1:3]
            return [apply_op(grad_op, [grad, size], _resize_attrs(op)).outputs[0], None]
        return [apply_op(grad_op, [grad, image], _resize_attrs(op)).outputs[0], None]

    @gradient(grad_op)
    def _backward_grad(op, grad):
        # the gradient op is linear in `grads`: its adjoint is the resize itself
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.math import math_ops
        size = array_ops.shape(op.inputs[0])[1:3]
        resized = apply_op(method, [grad, size], _resize_attrs(op)).outputs[0]
        if resized.dtype != op.inputs[0].dtype:
            resized = math_ops.cast(resized, op.inputs[0].dtype)
        return [resized, None]


for _method in ("ResizeBilinear", "ResizeBicubic", "ResizeArea", "ResizeNearestNeighbor"):
    _make_gradients(_method)


# --- builders --------------------------------------------------------------------------------
def _resize_builder(method: str, tf_name: str, what: str, half_pixel: bool = True):
    def resize(images, size, align_corners: bool = False, name: Optional[str] = None,
               half_pixel_centers: bool = False) -> Tensor:
        attrs = {"align_corners": bool(align_corners)}
        if half_pixel:
            attrs["half_pixel_centers"] = bool(half_pixel_centers)
        elif half_pixel_centers:
            raise ValueError("%s has no half_pixel_centers argument" % tf_name)
        return apply_op(method, [images, convert_to_tensor(size, dtype=_dt.int32)], attrs,
                        name=name or method).outputs[0]
    resize.__name__ = resize.__qualname__ = tf_name
    resize.__doc__ = """Resizes a batch of images to `size` with %s interpolation.

    Args:
      images: a 4-D Tensor [batch, height, width, channels] of a real type.
      size: a 1-D int32 Tensor of 2 elements: new_height, new_width (positive).
      align_corners: if True, the corner pixels of the input and output are aligned
        (their centers coincide), and the scale is (in - 1) / (out - 1).
      name: op name.
      half_pixel_centers: sample at pixel centers (the usual convention of image
        libraries) instead of TF1's legacy top-left corners; needs align_corners False.

    Returns:
      A 4-D Tensor [batch, new_height, new_width, channels] of %s.

    Raises:
      InvalidArgumentError (at run time): both align_corners and half_pixel_centers, or
        a size that is not positive.
    """ % (what, "the type of `images`" if method == "ResizeNearestNeighbor" else "float32")
    return tf_export("image." + tf_name)(resize)


resize_bilinear = _resize_builder("ResizeBilinear", "resize_bilinear", "bilinear")
resize_nearest_neighbor = _resize_builder("ResizeNearestNeighbor", "resize_nearest_neighbor",
                                          "nearest-neighbor")
resize_bicubic = _resize_builder("ResizeBicubic", "resize_bicubic", "bicubic")


@tf_export("image.resize_area")
def resize_area(images, size, align_corners: bool = False,
                name: Optional[str] = None) -> Tensor:
    """Resizes a batch of images to `size`, each output pixel the area-weighted mean of
    the input pixels it covers.

    Args:
      images: a 4-D Tensor [batch, height, width, channels] of a real type.
      size: a 1-D int32 Tensor of 2 elements: new_height, new_width (positive).
      align_corners: if True, the scale is (in - 1) / (out - 1).
      name: op name.

    Returns:
      A float32 Tensor [batch, new_height, new_width, channels].
    """
    return apply_op("ResizeArea", [images, convert_to_tensor(size, dtype=_dt.int32)],
                    {"align_corners": bool(align_corners)}, name=name or "ResizeArea").outputs[0]


class ResizeMethod(enum.IntEnum):
    """The methods of `tf.image.resize_images` (TF1's values)."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


export(ResizeMethod, "image.ResizeMethod")

_RESIZERS = {0: "ResizeBilinear", 1: "ResizeNearestNeighbor", 2: "ResizeBicubic",
             3: "ResizeArea"}
# TF2's ResizeMethod strings that TF1's resize_images also accepts (the others, such as
# 'lanczos3', are not implemented there).
_METHOD_NAMES = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


def _resizer(method) -> str:
    """The resize op for `method`: a ResizeMethod int or one of TF2's method strings."""
    if isinstance(method, str):
        index = _METHOD_NAMES.get(method)
    else:
        # compared by equality as TF does, so 1.0 also means NEAREST_NEIGHBOR
        index = next((i for i in _RESIZERS if method == i), None)
    if index is None:
        raise ValueError("Resize method is not implemented: %s" % (method,))
    return _RESIZERS[index]


def _aspect_size(images: Tensor, size: Tensor, height, width):
    """The largest size within `size` keeping the aspect ratio of the images."""
    value = tensor_util.constant_value(size)
    if value is not None and height is not None and width is not None:
        scale = min(np.float32(value[0]) / np.float32(height),
                    np.float32(value[1]) / np.float32(width))
        return convert_to_tensor([int(np.round(scale * np.float32(height))),
                                  int(np.round(scale * np.float32(width)))], _dt.int32,
                                 name="size")
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    shape = math_ops.cast(array_ops.shape(images)[1:3], _dt.float32)
    target = math_ops.cast(size, _dt.float32)
    scale = math_binary.minimum(target[0] / shape[0], target[1] / shape[1])
    return math_ops.cast(math_unary.round(scale * shape), _dt.int32, name="size")


@tf_export("image.resize_images", "image.resize")
def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners: bool = False,
                  preserve_aspect_ratio: bool = False, name: Optional[str] = None) -> Tensor:
    """Resizes images (one [height, width, channels] or a batch) to `size` (TF1's
    `tf.image.resize_images`, also `tf.image.resize` in TF1).

    Images already of the requested (static) size are returned unresized.

    Args:
      images: a 3-D or 4-D Tensor of a real type.
      size: a 1-D int32 Tensor of 2 elements: new_height, new_width.
      method: a ResizeMethod (BILINEAR, NEAREST_NEIGHBOR, BICUBIC, AREA), its int, or
        one of the strings 'bilinear', 'nearest', 'bicubic', 'area'.
      align_corners: align the corner pixels (see resize_bilinear).
      preserve_aspect_ratio: resize to the largest size within `size` that keeps the
        aspect ratio.
      name: name scope (default "resize").

    Returns:
      The resized images, float32 except for NEAREST_NEIGHBOR (the input's type), of
      rank of `images`.

    Raises:
      ValueError: `images` not 3-D or 4-D, `size` not 2 elements, or an unknown method.
    """
    from tensorweave.ops.array import array_ops
    with _graph.name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = images.shape.ndims == 4
        if images.shape.ndims == 3:
            images = array_ops.expand_dims(images, 0)
        elif not is_batch:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, _dt.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, "
                             "new_width")
        if preserve_aspect_ratio:
            size = _aspect_size(images, size, height, width)
        value = tensor_util.constant_value(size)
        new_h, new_w = (int(value[0]), int(value[1])) if value is not None else (None, None)
        if new_h is not None and (new_h, new_w) == (height, width):
            return images if is_batch else array_ops.squeeze(images, axis=[0])
        # like TF, an unknown method is only an error when there is something to resize
        op = _resizer(method)
        attrs = {"align_corners": bool(align_corners)}
        if op != "ResizeArea":
            attrs["half_pixel_centers"] = False
        out = apply_op(op, [images, size], attrs, name=op).outputs[0]
        return out if is_batch else array_ops.squeeze(out, axis=[0])
