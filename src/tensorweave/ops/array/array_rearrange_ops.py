"""Rearranging entries: Roll, SpaceToDepth, DepthToSpace, SpaceToBatchND, BatchToSpaceND,
and the builders over them (repeat, parallel_stack, space_to_batch, batch_to_space,
required_space_to_batch_paddings)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.array import array_util as _u


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


_INDEX = TypeAttr(_u.INDEX_TYPES, default=_dt.int32)


# --- Roll ---------------------------------------------------------------------------------
def _roll_shape(op):
    x, shift, axis = op.inputs
    s = _u.with_rank_at_most(_u.dims_of(shift.shape), 1)
    a = _u.with_rank_at_most(_u.dims_of(axis.shape), 1)
    if s is not None and a is not None and len(s) == len(a) == 1:
        _u.merge_shapes(s, a)
    return x.shape


register_op("Roll", inputs=["input: T", "shift: Tshift", "axis: Taxis"],
            outputs=["output: T"], attrs={"Tshift": _INDEX, "Taxis": _INDEX},
            shape=_roll_shape)


@kernel("Roll")
def _roll_kernel(ctx, x, shift, axis):
    if shift.ndim > 1:
        raise _invalid(ctx, "shift must be a scalar or a 1-D vector. Found: %s"
                       % _u.shape_str(shift.shape))
    if axis.ndim > 1:
        raise _invalid(ctx, "axis must be a scalar or a 1-D vector. Found: %s"
                       % _u.shape_str(axis.shape))
    if shift.shape != axis.shape:
        raise _invalid(ctx, "shift and axis must have the same size")
    shifts = [int(s) for s in np.asarray(shift).reshape(-1)]
    axes = []
    for a in np.asarray(axis).reshape(-1).tolist():
        a = int(a) + x.ndim if a < 0 else int(a)
        if not 0 <= a < x.ndim:
            raise _invalid(ctx, "axis %d is out of range" % a)
        axes.append(a)
    if not axes:
        return x.copy()
    return ctx.xp.roll(x, shifts, axes)


@gradient("Roll")
def _roll_grad(op, grad):
    _, shift, axis = op.inputs
    return [roll(grad, -shift, axis), None, None]


@tf_export("roll", "manip.roll")
def roll(input, shift, axis, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Rolls the entries of `input` by `shift` places along `axis` (TF1 `tf.roll`).

    Args:
      input: a Tensor.
      shift: int32/int64 scalar or 1-D: the shift along each axis (negative: backwards).
      axis: int32/int64 scalar or 1-D of the size of `shift`; an axis named twice rolls
        by the sum of its shifts.
      name: op name.

    Returns:
      A Tensor of the shape and dtype of `input`.

    Raises:
      ValueError: `shift` and `axis` have statically different sizes.
      InvalidArgumentError (at run time): an axis out of range.
    """
    return apply_op("Roll", [input, shift, axis], name=name or "Roll").outputs[0]


# --- repeat, parallel_stack ---------------------------------------------------------------
@tf_export("repeat")
def repeat(input, repeats, axis=None, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Repeats each entry of `input` along `axis` (TF1 `tf.repeat`, as `np.repeat`).

    Args:
      input: a Tensor.
      repeats: an int scalar (every entry) or 1-D Tensor of the size of `input`'s `axis`.
      axis: a Python int; None flattens `input` first.
      name: op name scope.

    Returns:
      A Tensor with `input`'s dims, `axis` resized to the sum of the repeats.

    Raises:
      InvalidArgumentError (at run time): `repeats` does not broadcast to the axis.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_pad_ops import broadcast_to
    from tensorweave.ops.indexing.indexing_gather import gather
    from tensorweave.ops.math import math_ops, reduction_ops, scan_ops
    with name_scope(name, "Repeat", [input, repeats]):
        x = convert_to_tensor(input, name="input")
        repeats_t = convert_to_tensor(repeats, name="repeats")
        if repeats_t.dtype is _dt.int64:
            from tensorweave.ops.math.math_ops import cast
            repeats_t = cast(repeats_t, _dt.int32)
        elif repeats_t.dtype is not _dt.int32:
            raise TypeError("repeats must be an int32 or int64 tensor, got %s"
                            % repeats_t.dtype.name)
        if axis is None:
            x = array_ops.reshape(x, [-1])
            axis = 0
        axis = int(axis)
        ndims = x.shape.ndims
        if ndims is not None:
            if not -ndims <= axis < ndims:
                raise ValueError("axis = %d not in [%d, %d)" % (axis, -ndims, ndims))
            axis %= ndims
        counts = broadcast_to(repeats_t, array_ops.reshape(array_ops.shape(x)[axis], [1]))
        if axis == 0:
            # TF takes the rows through a boolean mask (a Where), so the length is
            # unknown to shape inference even for constant repeats, as here
            from tensorweave.ops.indexing.indexing_select import sequence_mask, where
            index = where(sequence_mask(counts))[:, 0]
        else:
            ends = array_ops.reshape(scan_ops.cumsum(counts), [1, -1])
            total = reduction_ops.reduce_sum(counts)
            positions = array_ops.reshape(math_ops.range(total), [1, -1])
            # entry j comes from the first input whose running end exceeds j
            index = array_ops.reshape(apply_op("UpperBound", [ends, positions]).outputs[0],
                                      [-1])
        out = gather(x, index, axis=axis)
        count = _u.const_value(repeats_t)
        if ndims is not None and count is not None and np.ndim(count) == 0:
            dims = x.shape.as_list()
            dims[axis] = _u.dim_mul(dims[axis], int(count))
            out.set_shape(dims)
        return out


@tf_export("parallel_stack")
def parallel_stack(values, name: str = "parallel_stack") -> Tensor:
    """Stacks tensors of one fully known shape into one of rank + 1 (TF1
    `tf.parallel_stack`); the same result as `tf.stack(values)`.

    Args:
      values: a list of Tensors of the same shape and dtype.
      name: op name scope.

    Returns:
      A Tensor of shape [len(values)] + shape.

    Raises:
      ValueError: the shape of the values is not fully known, or they differ.
    """
    from tensorweave.ops.array.array_join_ops import stack
    with name_scope(name, "parallel_stack", values):
        values = [convert_to_tensor(v) for v in values]
        shape = values[0].shape
        if not shape.is_fully_defined():
            raise ValueError("parallel_stack needs values of a fully known shape, got %s"
                             % shape)
        return stack(values, axis=0)


# --- SpaceToDepth, DepthToSpace -------------------------------------------------------------
def _depth_shape(to_depth: bool):
    def shape_fn(op):
        bs = op._get_attr("block_size")
        nchw = op._get_attr("data_format") == "NCHW"
        dims = _u.dims_of(op.inputs[0].shape)
        if dims is None:
            return unknown_shape(4)
        dims = _u.with_rank(dims, 4)
        n, h, w, c = (dims[0], dims[2], dims[3], dims[1]) if nchw else dims
        if bs < 2:
            raise ValueError("Value for attr 'block_size' of %d must be at least minimum 2"
                             % bs)

        def divide(d, by):
            if d is None:
                return None
            if d % by:
                raise ValueError("Dimension size must be evenly divisible by %d but is %d"
                                 % (by, d))
            return d // by
        if to_depth:
            h, w, c = divide(h, bs), divide(w, bs), _u.dim_mul(c, bs * bs)
        else:
            c = divide(c, bs * bs)
            h, w = _u.dim_mul(h, bs), _u.dim_mul(w, bs)
        return TensorShape([n, c, h, w] if nchw else [n, h, w, c])
    return shape_fn


for _op_type, _to_depth in (("SpaceToDepth", True), ("DepthToSpace", False)):
    register_op(_op_type, inputs=["input: T"], outputs=["output: T"],
                attrs={"T": TypeAttr(), "block_size": 2, "data_format": "NHWC"},
                shape=_depth_shape(_to_depth))


def _nhwc(ctx, x):
    if x.ndim != 4:
        raise _invalid(ctx, "Input rank should be: 4 instead of: %d" % x.ndim)
    nchw = ctx.attrs["data_format"] == "NCHW"
    return (x.transpose(0, 2, 3, 1) if nchw else x), nchw


@kernel("SpaceToDepth")
def _space_to_depth_kernel(ctx, x):
    bs = ctx.attrs["block_size"]
    x, nchw = _nhwc(ctx, x)
    n, h, w, c = x.shape
    if h % bs or w % bs:
        raise _invalid(ctx, "Image width %d and height %d should be divisible by block_size: "
                       "%d" % (w, h, bs))
    y = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
    y = y.reshape(n, h // bs, w // bs, bs * bs * c)
    return ctx.xp.ascontiguousarray(y.transpose(0, 3, 1, 2) if nchw else y)


@kernel("DepthToSpace")
def _depth_to_space_kernel(ctx, x):
    bs = ctx.attrs["block_size"]
    x, nchw = _nhwc(ctx, x)
    n, h, w, c = x.shape
    if c % (bs * bs):
        raise _invalid(ctx, "Input depth dimension %d should be divisible by: %d"
                       % (c, bs * bs))
    y = x.reshape(n, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
    y = y.reshape(n, h * bs, w * bs, c // (bs * bs))
    return ctx.xp.ascontiguousarray(y.transpose(0, 3, 1, 2) if nchw else y)


@gradient("SpaceToDepth")
def _space_to_depth_grad(op, grad):
    return [depth_to_space(grad, op._get_attr("block_size"),
                           data_format=op._get_attr("data_format"))]


@gradient("DepthToSpace")
def _depth_to_space_grad(op, grad):
    return [space_to_depth(grad, op._get_attr("block_size"),
                           data_format=op._get_attr("data_format"))]


def _check_format(data_format: str) -> str:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format must be 'NHWC' or 'NCHW', got %r (NCHW_VECT_C is not "
                         "supported)" % (data_format,))
    return data_format


@tf_export("space_to_depth", "nn.space_to_depth")
def space_to_depth(input, block_size: int, name: Optional[str] = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    """Moves blocks of `block_size` x `block_size` pixels into the depth (TF1).

    Args:
      input: a 4-D Tensor.
      block_size: an int >= 2 dividing the height and width.
      name: op name.
      data_format: "NHWC" or "NCHW".

    Returns:
      A Tensor [batch, height / block_size, width / block_size, depth * block_size**2]
      (NHWC).

    Raises:
      ValueError: a static dimension not divisible by `block_size`.
    """
    return apply_op("SpaceToDepth", [input], {"block_size": int(block_size),
                                              "data_format": _check_format(data_format)},
                    name=name or "SpaceToDepth").outputs[0]


@tf_export("depth_to_space", "nn.depth_to_space")
def depth_to_space(input, block_size: int, name: Optional[str] = None,  # noqa: A002
                   data_format: str = "NHWC") -> Tensor:
    """Moves depth into blocks of `block_size` x `block_size` pixels (TF1; the inverse
    of `space_to_depth`).

    Args:
      input: a 4-D Tensor whose depth is divisible by `block_size**2`.
      block_size: an int >= 2.
      name: op name.
      data_format: "NHWC" or "NCHW".

    Returns:
      A Tensor [batch, height * block_size, width * block_size, depth / block_size**2]
      (NHWC).

    Raises:
      ValueError: a static depth not divisible by `block_size**2`.
    """
    return apply_op("DepthToSpace", [input], {"block_size": int(block_size),
                                              "data_format": _check_format(data_format)},
                    name=name or "DepthToSpace").outputs[0]


# --- SpaceToBatchND, BatchToSpaceND ---------------------------------------------------------
def _batch_shape(to_batch: bool):
    def shape_fn(op):
        x, block_t, pads_t = op.inputs
        _u.with_rank(_u.dims_of(block_t.shape), 1)
        _u.with_rank(_u.dims_of(pads_t.shape), 2)
        dims = _u.dims_of(x.shape)
        block = _u.const_ints(block_t)
        pads = _u.const_value(pads_t)
        if dims is None:
            return unknown_shape()
        if block is None or pads is None:
            m = block_t.shape[0].value
            if m is None:
                return unknown_shape(len(dims))
            return TensorShape([None] * (m + 1) + dims[m + 1:])
        m = len(block)
        if len(dims) < m + 1:
            raise ValueError("Shape must be at least rank %d but is rank %d"
                             % (m + 1, len(dims)))
        pads = np.asarray(pads).reshape(m, 2).tolist()
        if any(b < 1 for b in block):
            raise ValueError("block_shape must be positive")
        if any(p < 0 for row in pads for p in row):
            raise ValueError("%s must be non-negative" % ("paddings" if to_batch else "crops"))
        prod = int(np.prod(block))
        out = [_u.dim_mul(dims[0], prod) if to_batch else
               (None if dims[0] is None else _exact(dims[0], prod))]
        for d, b, (lo, hi) in zip(dims[1:m + 1], block, pads):
            if d is None:
                out.append(None)
            elif to_batch:
                out.append(_exact(d + lo + hi, b))
            else:
                out.append(d * b - lo - hi)
        return TensorShape(out + dims[m + 1:])
    return shape_fn


def _exact(d: int, by: int) -> int:
    if d % by:
        raise ValueError("Dimension size must be evenly divisible by %d but is %d" % (by, d))
    return d // by


register_op("SpaceToBatchND", inputs=["input: T", "block_shape: Tblock_shape",
                                      "paddings: Tpaddings"], outputs=["output: T"],
            attrs={"T": TypeAttr(), "Tblock_shape": _INDEX, "Tpaddings": _INDEX},
            shape=_batch_shape(True))
register_op("BatchToSpaceND", inputs=["input: T", "block_shape: Tblock_shape",
                                      "crops: Tcrops"], outputs=["output: T"],
            attrs={"T": TypeAttr(), "Tblock_shape": _INDEX, "Tcrops": _INDEX},
            shape=_batch_shape(False))


def _block_args(ctx, x, block_shape, pads, what):
    if block_shape.ndim != 1:
        raise _invalid(ctx, "block_shape must be one-dimensional")
    m = block_shape.shape[0]
    if pads.shape != (m, 2):
        raise _invalid(ctx, "%s should have shape [%d, 2] instead of %s"
                       % (what, m, _u.shape_str(pads.shape)))
    if x.ndim < m + 1:
        raise _invalid(ctx, "input rank should be >= %d instead of %d" % (m + 1, x.ndim))
    block = [int(b) for b in block_shape.tolist()]
    pads = [(int(a), int(b)) for a, b in pads.tolist()]
    if any(b < 1 for b in block):
        raise _invalid(ctx, "All values in block_shape must be positive, got value, %d "
                       "instead." % min(block))
    if any(p < 0 for row in pads for p in row):
        raise _invalid(ctx, "%s must be non-negative" % ("Paddings" if what == "paddings"
                                                         else "Crops"))
    return block, pads


@kernel("SpaceToBatchND")
def _space_to_batch_kernel(ctx, x, block_shape, paddings):
    xp = ctx.xp
    block, pads = _block_args(ctx, x, block_shape, paddings, "paddings")
    m = len(block)
    padded = xp.pad(x, [(0, 0)] + pads + [(0, 0)] * (x.ndim - m - 1))
    for i, (d, b) in enumerate(zip(padded.shape[1:m + 1], block)):
        if d % b:
            raise _invalid(ctx, "padded_shape[%d]=%d is not divisible by block_shape[%d]=%d"
                           % (i, d, i, b))
    n, rest = padded.shape[0], padded.shape[m + 1:]
    split = [n]
    for d, b in zip(padded.shape[1:m + 1], block):
        split += [d // b, b]
    y = padded.reshape(split + list(rest))
    # [n, d1/b1, b1, ..., dm/bm, bm, rest] -> [b1, ..., bm, n, d1/b1, ..., dm/bm, rest]
    perm = [2 * i + 2 for i in range(m)] + [0] + [2 * i + 1 for i in range(m)] + \
        list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm)
    return xp.ascontiguousarray(y.reshape([n * int(np.prod(block))] + split[1::2]
                                          + list(rest)))


@kernel("BatchToSpaceND")
def _batch_to_space_kernel(ctx, x, block_shape, crops):
    xp = ctx.xp
    block, crop = _block_args(ctx, x, block_shape, crops, "crops")
    m = len(block)
    prod = int(np.prod(block))
    if x.shape[0] % prod:
        raise _invalid(ctx, "Input batch dimension (%d) is not divisible by product of "
                       "block sizes (%d)" % (x.shape[0], prod))
    n = x.shape[0] // prod
    inner, rest = list(x.shape[1:m + 1]), list(x.shape[m + 1:])
    y = x.reshape(block + [n] + inner + rest)
    # [b1, ..., bm, n, d1, ..., dm, rest] -> [n, d1, b1, ..., dm, bm, rest]
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm).reshape([n] + [d * b for d, b in zip(inner, block)] + rest)
    for i, ((lo, hi), d) in enumerate(zip(crop, y.shape[1:m + 1])):
        if lo + hi > d:
            raise _invalid(ctx, "Cropped size must be non-negative: start: %d end: %d "
                           "size %d" % (lo, hi, d))
    index = tuple([slice(None)] + [slice(lo, d - hi) for (lo, hi), d in
                                   zip(crop, y.shape[1:m + 1])])
    return xp.ascontiguousarray(y[index])


@gradient("SpaceToBatchND")
def _space_to_batch_grad(op, grad):
    return [batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@gradient("BatchToSpaceND")
def _batch_to_space_grad(op, grad):
    return [space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@tf_export("space_to_batch_nd", "manip.space_to_batch_nd")
def space_to_batch_nd(input, block_shape, paddings,  # noqa: A002
                      name: Optional[str] = None) -> Tensor:
    """Pads the M spatial dims of `input` and moves blocks of them into the batch (TF1).

    Args:
      input: N-D Tensor [batch] + spatial_shape (M dims) + remaining_shape.
      block_shape: 1-D int32/int64 Tensor of M positive block sizes.
      paddings: int32/int64 Tensor [M, 2] of non-negative paddings (start, end); each
        padded spatial dim must be divisible by its block size.
      name: op name.

    Returns:
      A Tensor [batch * prod(block_shape)] + padded_spatial / block_shape +
      remaining_shape.

    Raises:
      ValueError: statically known sizes that do not divide.
    """
    return apply_op("SpaceToBatchND", [input, block_shape, paddings],
                    name=name or "SpaceToBatchND").outputs[0]


@tf_export("batch_to_space_nd", "manip.batch_to_space_nd")
def batch_to_space_nd(input, block_shape, crops,  # noqa: A002
                      name: Optional[str] = None) -> Tensor:
    """Moves blocks of the batch back into M spatial dims and crops them (TF1; the
    inverse of `space_to_batch_nd`).

    Args:
      input: N-D Tensor [batch * prod(block_shape)] + spatial_shape + remaining_shape.
      block_shape: 1-D int32/int64 Tensor of M positive block sizes.
      crops: int32/int64 Tensor [M, 2] of non-negative crops (start, end).
      name: op name.

    Returns:
      A Tensor [batch] + spatial_shape * block_shape - crops + remaining_shape.
    """
    return apply_op("BatchToSpaceND", [input, block_shape, crops],
                    name=name or "BatchToSpaceND").outputs[0]


def _square_block(block_size, block_shape, what: str):
    if block_size is not None and block_shape is not None:
        raise ValueError("Cannot specify both 'block_size' and 'block_shape'.")
    size = block_size if block_size is not None else block_shape
    if size is None:
        raise ValueError("%s needs block_size" % what)
    return np.array([int(size), int(size)], dtype=np.int64)


@tf_export("space_to_batch", "nn.space_to_batch")
def space_to_batch(input, paddings, block_size=None, name: Optional[str] = None,  # noqa: A002
                   block_shape=None) -> Tensor:
    """`space_to_batch_nd` over the height and width of a 4-D tensor with a square
    block (TF1 `tf.space_to_batch`).

    Args:
      input: a 4-D Tensor [batch, height, width, depth].
      paddings: an int Tensor [2, 2].
      block_size: an int >= 2 (`block_shape` is its deprecated alias).
      name: op name.
      block_shape: the same as `block_size`.

    Returns:
      A 4-D Tensor [batch * block_size**2, height', width', depth].
    """
    block = _square_block(block_size, block_shape, "space_to_batch")
    return space_to_batch_nd(input, block.astype(np.int32), paddings, name=name)


@tf_export("batch_to_space")
def batch_to_space(input, crops, block_size, name: Optional[str] = None,  # noqa: A002
                   block_shape=None) -> Tensor:
    """`batch_to_space_nd` over the height and width of a 4-D tensor with a square
    block (TF1 `tf.batch_to_space`).

    Args:
      input: a 4-D Tensor [batch * block_size**2, height, width, depth].
      crops: an int Tensor [2, 2].
      block_size: an int >= 2 (`block_shape` is its alias).
      name: op name.
      block_shape: the same as `block_size`.

    Returns:
      A 4-D Tensor [batch, height * block_size - crops, width * block_size - crops, depth].
    """
    block = _square_block(block_size, block_shape, "batch_to_space")
    return batch_to_space_nd(input, block.astype(np.int32), crops, name=name)


@tf_export("required_space_to_batch_paddings")
def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name: Optional[str] = None):
    """The paddings and crops that make `input_shape` divisible by `block_shape` (TF1).

    Args:
      input_shape: int32 Tensor [N]: the spatial shape.
      block_shape: int32 Tensor [N]: the block sizes.
      base_paddings: optional int32 Tensor [N, 2]: the minimum paddings (zeros).
      name: op name scope.

    Returns:
      `(paddings, crops)`, two int32 Tensors [N, 2]: `paddings` adds to the end of each
      dimension what makes it divisible, `crops` is that addition alone.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_fill_ops import zeros_like
    from tensorweave.ops.array.array_join_ops import stack
    from tensorweave.ops.math import math_binary
    with name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtype=_dt.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=_dt.int32, name="block_shape")
        block_shape.shape.assert_is_fully_defined()
        block_shape.shape.assert_has_rank(1)
        n = block_shape.shape[0].value
        if base_paddings is None:
            base_paddings = np.zeros((n, 2), np.int32)
        base_paddings = convert_to_tensor(base_paddings, dtype=_dt.int32,
                                          name="base_paddings")
        const_block = tensor_util.constant_value(block_shape)
        const_shape = tensor_util.constant_value(input_shape)
        const_base = tensor_util.constant_value(base_paddings)
        if const_block is not None and const_shape is not None and const_base is not None:
            # all known at build time: the results are constants, as TF's
            const_base = np.asarray(const_base, np.int32).reshape(n, 2)
            full = np.asarray(const_shape, np.int32) + const_base[:, 0] + const_base[:, 1]
            block = np.asarray(const_block, np.int32)
            extra = (block - full % block) % block
            paddings = np.stack([const_base[:, 0], const_base[:, 1] + extra], axis=1)
            crops = np.stack([np.zeros_like(extra), extra], axis=1)
            return (convert_to_tensor(paddings.astype(np.int32), name="paddings"),
                    convert_to_tensor(crops.astype(np.int32), name="crops"))
        starts = array_ops.reshape(base_paddings[:, 0], [n])
        ends = array_ops.reshape(base_paddings[:, 1], [n])
        full = input_shape + starts + ends
        extra = math_binary.floormod(block_shape - math_binary.floormod(full, block_shape),
                                     block_shape)
        paddings = stack([starts, ends + extra], axis=1, name="paddings")
        crops = stack([zeros_like(extra), extra], axis=1, name="crops")
        return paddings, crops
