"""Padding, broadcasting and reversing: Pad, PadV2, MirrorPad, MirrorPadGrad, BroadcastTo,
ReverseV2, ReverseSequence."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.array import array_util as _u


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


def _dims_text(shape) -> str:
    return "[%s]" % ",".join(str(int(d)) for d in shape)


_TPADDINGS = TypeAttr(_u.INDEX_TYPES, default=_dt.int32)


# --- Pad, PadV2 ---------------------------------------------------------------------------
def _pad_shape(op):
    x, paddings_t = op.inputs[0], op.inputs[1]
    pdims = _u.with_rank(_u.dims_of(paddings_t.shape), 2)
    if pdims[1] is not None and pdims[1] != 2:
        raise ValueError("Dimension must be 2 but is %d" % pdims[1])
    in_dims = _u.dims_of(x.shape)
    n = pdims[0]
    if n is not None:
        in_dims = _u.with_rank(in_dims, n)
    elif in_dims is not None:
        n = len(in_dims)
    if len(op.inputs) == 3:
        _u.with_rank(_u.dims_of(op.inputs[2].shape), 0)
    paddings = _u.const_value(paddings_t)
    if paddings is None:
        return unknown_shape(n)
    paddings = np.asarray(paddings).reshape(-1, 2).tolist()
    in_dims = _u.with_rank(in_dims, len(paddings))
    out = []
    for d, (before, after) in zip(in_dims, paddings):
        if before < 0 or after < 0:
            raise ValueError("Paddings must be non-negative")
        out.append(_u.dim_add(d, before + after))
    return TensorShape(out)


register_op("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs={"Tpaddings": _TPADDINGS}, shape=_pad_shape)
register_op("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
            outputs=["output: T"], attrs={"Tpaddings": _TPADDINGS}, shape=_pad_shape)


def _check_paddings(ctx, x, paddings, what="Paddings", check_each=None):
    if np.ndim(paddings) != 2 or paddings.shape[1] != 2:
        raise _invalid(ctx, "paddings must be a matrix with 2 columns: %s"
                       % _dims_text(np.shape(paddings)))
    if paddings.shape[0] != np.ndim(x):
        raise _invalid(ctx, "The first dimension of paddings must be the rank of inputs%s %s"
                       % (_dims_text(paddings.shape), _dims_text(np.shape(x))))
    pads = [(int(a), int(b)) for a, b in paddings.tolist()]
    for d, (a, b) in zip(np.shape(x), pads):
        if a < 0 or b < 0:
            raise _invalid(ctx, "%s must be non-negative: %d %d" % (what, a, b))
        if check_each is not None:
            check_each(d, a, b)
    return pads


def _pad_constant(ctx, x, paddings, value):
    pads = _check_paddings(ctx, x, paddings)
    if not any(a or b for a, b in pads):
        return x
    out_shape = [d + a + b for d, (a, b) in zip(x.shape, pads)]
    out = ctx.xp.full(out_shape, value, dtype=x.dtype)
    out[tuple(slice(a, a + d) for d, (a, _) in zip(x.shape, pads))] = x
    return out


@kernel("Pad")
def _pad_kernel(ctx, x, paddings):
    return _pad_constant(ctx, x, paddings, b"" if x.dtype == object else 0)


@kernel("PadV2")
def _pad_v2_kernel(ctx, x, paddings, constant_values):
    if np.ndim(constant_values) != 0:
        raise _invalid(ctx, "constant_values must be a scalar. Found: %s"
                       % _dims_text(np.shape(constant_values)))
    return _pad_constant(ctx, x, paddings, constant_values)


def _pad_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing import indexing_ops
    x, a = op.inputs[0], op.inputs[1]
    begin = array_ops.unstack(a, num=2, axis=1)[0]
    x_grad = indexing_ops.slice(grad, begin, array_ops.shape(x, out_type=begin.dtype))
    return [x_grad] + [None] * (len(op.inputs) - 1)


gradient("Pad")(_pad_grad)
gradient("PadV2")(_pad_grad)


# --- MirrorPad, MirrorPadGrad -------------------------------------------------------------
def _mirror_pad_shape(op, sign):
    x, paddings_t = op.inputs
    pdims = _u.with_rank(_u.dims_of(paddings_t.shape), 2)
    r = pdims[0]
    if r is None:
        return _u.to_shape(None if x.shape.ndims is None else [None] * x.shape.ndims)
    in_dims = _u.with_rank(_u.dims_of(x.shape), r)
    _u.merge_shapes(pdims, [r, 2])
    paddings = _u.const_value(paddings_t)
    if paddings is None:
        return unknown_shape(r)
    out = []
    for i, (d, (left, right)) in enumerate(zip(in_dims, np.asarray(paddings).tolist())):
        if left < 0 or right < 0:
            raise ValueError("Paddings must be non-negative")
        if d is not None and d + sign * (left + right) < 0:
            raise ValueError("Negative dimension size caused by subtracting %d from %d"
                             % (left + right, d))
        out.append(None if d is None else d + sign * (left + right))
    return TensorShape(out)


_MODE = {"REFLECT", "SYMMETRIC"}
register_op("MirrorPad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
            attrs={"Tpaddings": _TPADDINGS, "mode": "REFLECT"},
            shape=lambda op: _mirror_pad_shape(op, 1))
register_op("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"],
            outputs=["output: T"], attrs={"Tpaddings": _TPADDINGS, "mode": "REFLECT"},
            shape=lambda op: _mirror_pad_shape(op, -1))


@kernel("MirrorPad")
def _mirror_pad_kernel(ctx, x, paddings):
    symmetric = ctx.attrs["mode"] == "SYMMETRIC"

    def check(d, a, b):
        if symmetric and (a > d or b > d):
            raise _invalid(ctx, "paddings must be no greater than the dimension size: %d, %d "
                           "greater than %d" % (a, b, d))
        if not symmetric and (a >= d or b >= d):
            raise _invalid(ctx, "paddings must be less than the dimension size: %d, %d not "
                           "less than %d" % (a, b, d))
    pads = _check_paddings(ctx, x, paddings, "paddings", check)
    if not any(a or b for a, b in pads):
        return x
    return ctx.xp.pad(x, pads, mode="symmetric" if symmetric else "reflect")


@kernel("MirrorPadGrad")
def _mirror_pad_grad_kernel(ctx, g, paddings):
    """Folds the padded borders of `g` back onto the elements they mirrored."""
    xp = ctx.xp
    pads = _check_paddings(ctx, g, paddings, "paddings")
    offset = 0 if ctx.attrs["mode"] == "SYMMETRIC" else 1
    out = g
    for axis, (a, b) in enumerate(pads):
        if not (a or b):
            continue
        moved = xp.moveaxis(out, axis, 0)
        n = moved.shape[0]
        m = n - a - b
        if m < 0 or a > m - offset or b > m - offset:
            raise _invalid(ctx, "paddings must be less than the dimension size: %d, %d not "
                           "less than %d" % (a, b, m))
        core = moved[a:n - b].copy()
        if a:
            core[offset:offset + a] += moved[:a][::-1]
        if b:
            core[m - offset - b:m - offset] += moved[n - b:][::-1]
        out = xp.moveaxis(core, 0, axis)
    return xp.ascontiguousarray(out) if out is not g else g


@gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [apply_op("MirrorPadGrad", [grad, op.inputs[1]],
                     {"mode": op._get_attr("mode")}).outputs[0], None]


@gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return [apply_op("MirrorPad", [grad, op.inputs[1]],
                     {"mode": op._get_attr("mode")}).outputs[0], None]


@tf_export("pad")
def pad(tensor, paddings, mode: str = "CONSTANT", name: Optional[str] = None,
        constant_values=0) -> Tensor:
    """Pads a tensor (TF1 `tf.pad`).

    Args:
      tensor: a Tensor.
      paddings: int32/int64 [rank(tensor), 2]: how much to add before and after each dim.
      mode: "CONSTANT", "REFLECT" or "SYMMETRIC" (case-insensitive).
      name: op name.
      constant_values: the fill value in CONSTANT mode (same dtype as `tensor`).

    Returns:
      A Tensor.

    Raises:
      ValueError: an unknown `mode`.
    """
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.ndim(constant_values) == 0 and \
                not isinstance(constant_values, (str, bytes)) and constant_values == 0:
            result = apply_op("Pad", [tensor, paddings], name=name or "Pad").outputs[0]
        else:
            result = apply_op("PadV2", [tensor, paddings, constant_values],
                              name=name or "PadV2").outputs[0]
    elif mode in _MODE:
        result = apply_op("MirrorPad", [tensor, paddings], {"mode": mode},
                          name=name or "MirrorPad").outputs[0]
    else:
        raise ValueError('Value of argument `mode` expected to be one of "CONSTANT", '
                         '"REFLECT", or "SYMMETRIC". Received `mode` = %s' % mode)
    # Restore what the shape function cannot see (a partially known paddings value).
    in_dims = _u.dims_of(result.op.inputs[0].shape)
    if isinstance(paddings, Tensor):
        pads = tensor_util.constant_value(paddings, partial=True)
    else:  # entries that are tensors count as unknown
        pads = [[None if isinstance(v, Tensor) else v for v in row] for row in paddings]
    if in_dims is not None and not result.shape.is_fully_defined() and pads is not None:
        new = []
        for p, d in zip(np.asarray(pads, dtype=object).tolist(), in_dims):
            new.append(None if p is None or d is None or any(v is None for v in p)
                       else d + sum(p))
        result.set_shape(new)
    return result


# --- BroadcastTo --------------------------------------------------------------------------
def _broadcast_to_shape(op):
    x, shape_t = op.inputs
    _u.with_rank(_u.dims_of(shape_t.shape), 1)
    out = _u.dims_of(_u.shape_from_tensor(shape_t))
    in_dims = _u.dims_of(x.shape)
    if out is None or in_dims is None:
        return _u.to_shape(out)
    _u.with_rank_at_most(in_dims, len(out))
    r, n = len(out), len(in_dims)
    for i in range(n):
        d = in_dims[n - 1 - i]
        if d is not None and d > 1:
            out[r - 1 - i] = _u.merge_dim(d, out[r - 1 - i])
    return TensorShape(out)


register_op("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
            attrs={"Tidx": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_broadcast_to_shape)


@kernel("BroadcastTo")
def _broadcast_to_kernel(ctx, x, shape):
    # no Python-level helper on the usual path: a gradient of a sum broadcasts once
    # per variable per training step
    rank = shape.ndim if type(shape) is np.ndarray else np.ndim(shape)
    if rank != 1:
        raise _invalid(ctx, "Shape must be rank 1 but is rank %d" % rank)
    target = shape.tolist()  # Python ints (shape is int32 or int64)
    if target and min(target) < 0:
        raise _invalid(ctx, "Dimension %d must be >= 0" % min(target))
    in_shape = x.shape if type(x) is np.ndarray else tuple(np.shape(x))
    if len(in_shape) > len(target):
        raise _invalid(ctx, "Rank of input (%d) must be no greater than rank of output shape "
                       "(%d)." % (len(in_shape), len(target)))
    if tuple(target) == in_shape:
        return x
    for d, t in zip(in_shape[::-1], target[::-1]):
        if d != t and d != 1:
            raise _invalid(ctx, "Incompatible shapes: %s vs. %s"
                           % (_dims_text(in_shape), _dims_text(target)))
    # Materialize (TF does too): a read-only stride-0 view would leak to fetches. Filling
    # an empty array broadcasts the same way, without broadcast_to's Python-level setup.
    out = ctx.xp.empty(target, dtype=x.dtype)
    out[...] = x
    return out


@gradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_grad_util, reduction_ops
    x = op.inputs[0]
    in_shape, out_shape = x.shape, op.outputs[0].shape
    if in_shape.is_fully_defined() and out_shape.is_fully_defined():
        dims, out = in_shape.as_list(), out_shape.as_list()
        lead = len(out) - len(dims)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(dims)
                                    if d == 1 and out[lead + i] != 1]
        summed = reduction_ops.reduce_sum(grad, axes) if axes else grad
        return [array_ops.reshape(summed, dims), None]
    shape_t = op.inputs[1]
    x_shape = array_ops.shape(x, out_type=shape_t.dtype)
    _, axes = math_grad_util.broadcast_gradient_args(shape_t, x_shape)
    summed = reduction_ops.reduce_sum(grad, axes, keepdims=True)
    return [array_ops.reshape(summed, x_shape), None]


@tf_export("broadcast_to")
def broadcast_to(input, shape, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Broadcasts `input` to `shape` by NumPy rules (TF1 `tf.broadcast_to`).

    Args:
      input: a Tensor.
      shape: 1-D int32/int64: the target shape.
      name: op name.

    Returns:
      A Tensor of shape `shape`.
    """
    return apply_op("BroadcastTo", [input, shape], name=name or "BroadcastTo").outputs[0]


# --- ReverseV2 ----------------------------------------------------------------------------
def _canonical_axes(axes, rank, error):
    seen = []
    for i, a in enumerate(axes):
        c = a + rank if a < 0 else a
        if c < 0 or c >= rank:
            raise error("'axis'[%d] = %d is out of valid range [0, %d" % (i, a, rank - 1))
        if c in seen:
            raise error("axis %d specified more than once." % c)
        seen.append(c)
    return seen


def _reverse_shape(op):
    x, axis_t = op.inputs
    _u.with_rank(_u.dims_of(axis_t.shape), 1)
    r = x.shape.ndims
    if r is not None and r > 8:
        raise ValueError("reverse does not work on tensors with more than 8 dimensions")
    axes = _u.const_ints(axis_t)
    if axes is not None and r is not None:
        _canonical_axes(axes, r, ValueError)
    return x.shape


register_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
            attrs={"Tidx": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_reverse_shape)


@kernel("ReverseV2")
def _reverse_kernel(ctx, x, axis):
    if np.ndim(axis) != 1:
        raise _invalid(ctx, "'dims' must be 1-dimension, not %d" % np.ndim(axis))
    key = (np.ndim(x), *axis.tolist())
    index = _REVERSE_INDEX.get(key)
    if index is None:
        r = key[0]
        axes = _canonical_axes(list(key[1:]), r, lambda m: _invalid(ctx, m))
        index = tuple(slice(None, None, -1) if i in axes else slice(None)
                      for i in range(r)) if axes else ()
        if len(_REVERSE_INDEX) < 256:   # a program reverses along few axes
            _REVERSE_INDEX[key] = index
    return x[index] if index else x


# (rank, *axis) -> the index reversing those axes (() for none), for axes that passed
# the checks
_REVERSE_INDEX: dict = {}


@gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [reverse(grad, op.inputs[1]), None]


@tf_export("reverse", "reverse_v2", "manip.reverse")
def reverse(tensor, axis, name: Optional[str] = None) -> Tensor:
    """Reverses the given dimensions of a tensor (TF1 `tf.reverse`, alias `tf.reverse_v2`).

    Args:
      tensor: a Tensor of rank <= 8.
      axis: 1-D int32/int64: the dimensions to reverse (negative counts from the end).
      name: op name.

    Returns:
      A Tensor of the same shape.
    """
    return apply_op("ReverseV2", [tensor, axis], name=name or "ReverseV2").outputs[0]



# --- ReverseSequence ----------------------------------------------------------------------
def _reverse_sequence_shape(op):
    x, lengths = op.inputs
    length_dims = _u.with_rank(_u.dims_of(lengths.shape), 1)
    dims = _u.dims_of(x.shape)
    if dims is None:
        return unknown_shape()
    seq_dim, batch_dim = op._get_attr("seq_dim"), op._get_attr("batch_dim")
    rank = len(dims)
    if batch_dim >= rank:
        raise ValueError("batch_dim must be < input rank: %d vs. %d" % (batch_dim, rank))
    if seq_dim >= rank:
        raise ValueError("seq_dim must be < input rank: %d vs. %d" % (seq_dim, rank))
    if batch_dim < 0:
        raise ValueError("batch_dim must be >=0, got %d" % batch_dim)
    dims[batch_dim] = _u.merge_dim(dims[batch_dim], length_dims[0])
    return TensorShape(dims)


register_op("ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"],
            outputs=["output: T"],
            attrs={"seq_dim": REQUIRED, "batch_dim": 0,
                   "Tlen": TypeAttr(_u.INDEX_TYPES, default=_dt.int64)},
            shape=_reverse_sequence_shape)


def _check_reverse_sequence(ctx, x, lengths, seq_dim, batch_dim):
    """TF's run-time checks, in TF's order."""
    if batch_dim < 0:
        raise _invalid(ctx, "Invalid batch_dim %d" % batch_dim)
    if seq_dim < 0:
        raise _invalid(ctx, "Invalid seq_dim %d" % seq_dim)
    if np.ndim(lengths) != 1:
        raise _invalid(ctx, "seq_lengths must be 1-dim, not %d" % np.ndim(lengths))
    if batch_dim == seq_dim:
        raise _invalid(ctx, "batch_dim == seq_dim == %d" % seq_dim)
    rank = np.ndim(x)
    if seq_dim >= rank:
        raise _invalid(ctx, "seq_dim must be < input rank ( %d vs. %d)" % (seq_dim, rank))
    if batch_dim >= rank:
        raise _invalid(ctx, "batch_dim must be < input rank ( %d vs. %d)" % (batch_dim, rank))
    if lengths.size != x.shape[batch_dim]:
        raise _invalid(ctx, "Length of seq_lengths != input.dims(%d), (%d vs. %d)"
                       % (batch_dim, lengths.size, x.shape[batch_dim]))
    bad = np.flatnonzero((lengths < 0) | (lengths > x.shape[seq_dim]))
    if bad.size:
        i = int(bad[0])
        if lengths[i] < 0:
            raise _invalid(ctx, "seq_lens(%d) < 0" % i)
        raise _invalid(ctx, "seq_lens(%d) > input.dims(%d)" % (i, seq_dim))


@kernel("ReverseSequence")
def _reverse_sequence_kernel(ctx, x, lengths):
    seq_dim, batch_dim = ctx.attrs["seq_dim"], ctx.attrs["batch_dim"]
    _check_reverse_sequence(ctx, x, lengths, seq_dim, batch_dim)
    if lengths.size == 0 or lengths.max() <= 1:
        return x  # nothing to reverse: every prefix has at most one step
    xp = ctx.xp
    steps = xp.arange(x.shape[seq_dim], dtype=lengths.dtype)[None, :]    # [1, T]
    ends = lengths[:, None]                                                # [B, 1]
    source = xp.where(steps < ends, ends - 1 - steps, steps)               # [B, T]
    if batch_dim > seq_dim:
        source = source.T
    # Broadcast the [B, T] source steps over the other axes of x.
    index_shape = [1] * x.ndim
    index_shape[batch_dim], index_shape[seq_dim] = x.shape[batch_dim], x.shape[seq_dim]
    return xp.take_along_axis(x, source.reshape(index_shape), axis=seq_dim)


@gradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [reverse_sequence(grad, op.inputs[1], seq_axis=op._get_attr("seq_dim"),
                             batch_axis=op._get_attr("batch_dim")), None]


def _int_attr(value, arg_name: str) -> int:
    """TF's conversion of an int attr argument (floats truncate; None and strings fail)."""
    if not isinstance(value, (str, bytes)):
        try:
            return int(value)
        except (TypeError, ValueError):
            pass
    raise TypeError("Expected int for argument '%s' not %r." % (arg_name, value))


def _renamed_arg(new_name: str, new_value, old_name: str, old_value):
    if new_value is not None and old_value is not None:
        raise ValueError("Cannot specify both '%s' and '%s'." % (old_name, new_name))
    return old_value if new_value is None else new_value


@tf_export("reverse_sequence")
def reverse_sequence(input, seq_lengths, seq_axis: Optional[int] = None,  # noqa: A002
                     batch_axis: Optional[int] = None, name: Optional[str] = None,
                     seq_dim: Optional[int] = None,
                     batch_dim: Optional[int] = None) -> Tensor:
    """Reverses variable length slices (TF1 `tf.reverse_sequence`).

    For each index b along `batch_axis`, the first `seq_lengths[b]` slices along
    `seq_axis` are reversed; the slices past the length stay where they are.

    Args:
      input: a Tensor.
      seq_lengths: 1-D int32/int64 of size `input.shape[batch_axis]`, each entry
        in [0, input.shape[seq_axis]].
      seq_axis: the (non-negative) axis that is partially reversed.
      batch_axis: the (non-negative) axis along which the lengths vary (default 0).
      name: op name.
      seq_dim: deprecated alias of `seq_axis`.
      batch_dim: deprecated alias of `batch_axis`.

    Returns:
      A Tensor with the shape and dtype of `input`.

    Raises:
      ValueError: an axis given under both names, or shapes that do not fit (an axis out
        of range, lengths that are not a vector of the batch size).
      TypeError: a missing or non-integer `seq_axis`, or lengths not int32/int64.
    """
    seq_axis = _renamed_arg("seq_axis", seq_axis, "seq_dim", seq_dim)
    batch_axis = _renamed_arg("batch_axis", batch_axis, "batch_dim", batch_dim)
    attrs = {"seq_dim": _int_attr(seq_axis, "seq_dim"),
             "batch_dim": 0 if batch_axis is None else _int_attr(batch_axis, "batch_dim")}
    if not isinstance(seq_lengths, Tensor) and not hasattr(seq_lengths, "dtype"):
        # As TF: Python lengths keep their own inferred type (int32) when it is allowed,
        # rather than taking the attr's default (int64).
        try:
            inferred = _dt.dtype_of_value(seq_lengths)
        except (TypeError, ValueError):
            inferred = None
        if inferred in _u.INDEX_TYPES:
            attrs["Tlen"] = inferred
    return apply_op("ReverseSequence", [input, seq_lengths], attrs,
                    name=name or "ReverseSequence").outputs[0]
