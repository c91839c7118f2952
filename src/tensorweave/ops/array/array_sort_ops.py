"""Sorting and searching: sort, argsort (over TopKV2), searchsorted (LowerBound,
UpperBound), setdiff1d (ListDiff), unravel_index (UnravelIndex)."""
from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.array import array_util as _u


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


# --- sort, argsort ------------------------------------------------------------------------
_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _order_reversed(values: Tensor) -> Tensor:
    """An order-reversing bijection of `values` that is its own inverse: -x for floats,
    ~x (= -x - 1 in two's complement, no overflow) for signed and max - x for unsigned
    integers."""
    dt = values.dtype
    if dt.is_integer and dt.is_unsigned:
        return convert_to_tensor(np.array(dt.max, dt.as_numpy_dtype)) - values
    if dt.is_integer:
        return -values - convert_to_tensor(np.array(1, dt.as_numpy_dtype))
    return -values


def _sort(values, axis, direction, return_argsort: bool, name, default_name):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing.indexing_select import top_k
    if direction not in _DIRECTIONS:
        raise ValueError("Argument `direction` should be one of ASCENDING, DESCENDING. "
                         "Received: direction=%s" % (direction,))
    with name_scope(name, default_name, [values]):
        values = convert_to_tensor(values, name="values")
        if isinstance(axis, Tensor):
            const = _u.const_int(axis)
            if const is None:
                raise ValueError("axis must be a constant scalar")
            axis = const
        axis = int(axis)
        ndims = values.shape.ndims
        if ndims is not None and not -ndims <= axis < ndims:
            raise ValueError("axis = %d not in [%d, %d)" % (axis, -ndims, ndims))
        if axis != -1 and ndims is None:
            raise ValueError("sort along axis %d needs a known rank (only axis=-1 works "
                             "for an input of unknown rank)" % axis)
        last = axis == -1 or axis % ndims == ndims - 1
        perm = None
        if not last:
            axis %= ndims
            perm = list(range(ndims))
            perm[axis], perm[-1] = ndims - 1, axis
            values_t = array_ops.transpose(values, perm)
        else:
            values_t = values
        ascending = direction == "ASCENDING"
        key = _order_reversed(values_t) if ascending else values_t
        k = array_ops.shape(key)[-1]
        out, indices = top_k(key, k, sorted=True)
        if return_argsort:
            out = indices
        elif ascending:
            out = _order_reversed(out)
        if perm is not None:
            out = array_ops.transpose(out, perm)
        out.set_shape(values.shape)
        return out


@tf_export("sort")
def sort(values, axis=-1, direction: str = "ASCENDING", name: Optional[str] = None) -> Tensor:
    """Sorts a tensor along one axis (TF1 `tf.sort`).

    Args:
      values: a real or integer Tensor of rank >= 1.
      axis: a constant scalar axis; -1 (the last) by default.
      direction: "ASCENDING" or "DESCENDING".
      name: op name scope.

    Returns:
      A Tensor of the shape and dtype of `values`, sorted along `axis`.

    Raises:
      ValueError: a bad direction, or an axis that is not constant or not in range.
    """
    return _sort(values, axis, direction, False, name, "sort")


@tf_export("argsort")
def argsort(values, axis=-1, direction: str = "ASCENDING", stable: bool = False,
            name: Optional[str] = None) -> Tensor:
    """The int32 indices that sort `values` along `axis` (TF1 `tf.argsort`).

    The sort is always stable here (equal values keep their order), which is a valid
    result for `stable=False` too.

    Args:
      values: a real or integer Tensor of rank >= 1.
      axis: a constant scalar axis; -1 (the last) by default.
      direction: "ASCENDING" or "DESCENDING".
      stable: whether equal values must keep their order.
      name: op name scope.

    Returns:
      An int32 Tensor of the shape of `values`.

    Raises:
      ValueError: a bad direction, or an axis that is not constant or not in range.
    """
    del stable  # always stable
    return _sort(values, axis, direction, True, name, "argsort")


# --- LowerBound, UpperBound, searchsorted -------------------------------------------------
def _bound_shape(op):
    seq, vals = op.inputs
    s = seq.shape.with_rank(2)
    v = vals.shape.with_rank(2)
    s[0].merge_with(v[0])
    return TensorShape([s[0].merge_with(v[0]), v[1]])


def _bound_kernel(side_right: bool):
    def body(ctx, seq, vals):
        xp = ctx.xp
        if seq.shape[0] != vals.shape[0]:
            raise _invalid(ctx, "Leading dim_size of both tensors must match.")
        rows, n = seq.shape
        m = vals.shape[1]
        out_dt = ctx.attrs["out_type"].as_numpy_dtype
        if rows == 0 or m == 0:
            return xp.zeros(vals.shape, dtype=out_dt)
        # one stable sort of each row's sequence and values together: a value's position
        # counts the sequence entries before it (values go before equal entries for the
        # lower bound, after them for the upper bound)
        row = xp.concatenate([xp.repeat(xp.arange(rows), n), xp.repeat(xp.arange(rows), m)])
        key = xp.concatenate([seq.reshape(-1), vals.reshape(-1)])
        is_seq = xp.concatenate([xp.ones(rows * n, np.int64), xp.zeros(rows * m, np.int64)])
        tag = (1 - is_seq) if side_right else is_seq
        order = xp.lexsort((tag, key, row))
        seq_sorted = is_seq[order]
        before = xp.cumsum(seq_sorted) - seq_sorted
        pos = xp.empty_like(before)
        pos[order] = before - row[order] * n
        return pos[rows * n:].reshape(vals.shape).astype(out_dt)
    return body


_BOUND_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64, _dt.int8, _dt.int16,
                _dt.int32, _dt.int64, _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64)
for _op_type, _right in (("LowerBound", False), ("UpperBound", True)):
    register_op(_op_type, inputs=["sorted_inputs: T", "values: T"], outputs=["output: out_type"],
                attrs={"T": TypeAttr(_BOUND_TYPES),
                       "out_type": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
                shape=_bound_shape)
    kernel(_op_type)(_bound_kernel(_right))
    not_differentiable(_op_type)


@tf_export("searchsorted")
def searchsorted(sorted_sequence, values, side: str = "left", out_type=_dt.int32,
                 name: Optional[str] = None) -> Tensor:
    """Where `values` would go in the innermost dimension of `sorted_sequence` (TF1).

    Args:
      sorted_sequence: N-D Tensor sorted along its innermost dimension.
      values: N-D Tensor whose leading N-1 dimensions match those of `sorted_sequence`.
      side: "left" (first position, LowerBound) or "right" (last, UpperBound).
      out_type: int32 or int64.
      name: op name.

    Returns:
      A Tensor of the shape of `values` and type `out_type`.

    Raises:
      ValueError: a bad `side`.
      InvalidArgumentError (at run time): the leading dimensions differ.
    """
    from tensorweave.ops.array import array_ops
    if side not in ("left", "right"):
        raise ValueError("Argument `side` must be either 'right' or 'left'. Received: "
                         "`side` = '%s'." % (side,))
    op_type = "LowerBound" if side == "left" else "UpperBound"
    with name_scope(name, "searchsorted", [sorted_sequence, values]):
        seq = convert_to_tensor(sorted_sequence, name="sorted_sequence")
        vals = convert_to_tensor(values, name="values", dtype=seq.dtype)
        seq_n = array_ops.shape(seq)[-1]
        vals_shape = array_ops.shape(vals)
        seq_2d = array_ops.reshape(seq, [-1, seq_n])
        vals_2d = array_ops.reshape(vals, [-1, vals_shape[-1]])
        out = apply_op(op_type, [seq_2d, vals_2d], {"out_type": _dt.as_dtype(out_type)},
                       name=op_type).outputs[0]
        out = array_ops.reshape(out, vals_shape)
        out.set_shape(vals.shape)
        return out


# --- ListDiff (setdiff1d) -----------------------------------------------------------------
ListDiffOutput = collections.namedtuple("ListDiff", ["out", "idx"])


def _list_diff_shape(op):
    _u.with_rank(_u.dims_of(op.inputs[0].shape), 1)
    _u.with_rank(_u.dims_of(op.inputs[1].shape), 1)
    return [TensorShape([None]), TensorShape([None])]


register_op("ListDiff", inputs=["x: T", "y: T"], outputs=["out: T", "idx: out_idx"],
            attrs={"T": TypeAttr(), "out_idx": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_list_diff_shape)
not_differentiable("ListDiff")


@kernel("ListDiff")
def _list_diff_kernel(ctx, x, y):
    xp = ctx.xp
    if x.ndim != 1:
        raise _invalid(ctx, "x should be a 1D vector.")
    if y.ndim != 1:
        raise _invalid(ctx, "y should be a 1D vector.")
    keep = ~xp.isin(x, y)
    idx = xp.flatnonzero(keep).astype(ctx.attrs["out_idx"].as_numpy_dtype)
    return x[keep], idx


@tf_export("setdiff1d")
def setdiff1d(x, y, index_dtype=_dt.int32, name: Optional[str] = None) -> ListDiffOutput:
    """The entries of `x` not in `y`, in order, and their positions in `x` (TF1).

    Args:
      x: 1-D Tensor.
      y: 1-D Tensor of the same dtype.
      index_dtype: int32 or int64, the type of `idx`.
      name: op name.

    Returns:
      A namedtuple `ListDiff(out, idx)`: `out = x[idx]`, both 1-D.

    Raises:
      ValueError: `x` or `y` is statically not 1-D.
    """
    x = convert_to_tensor(x, name="x")
    op = apply_op("ListDiff", [x, convert_to_tensor(y, dtype=x.dtype, name="y")],
                  {"out_idx": _dt.as_dtype(index_dtype)}, name=name or "ListDiff")
    return ListDiffOutput(*op.outputs)


# --- UnravelIndex ---------------------------------------------------------------------------
def _unravel_shape(op):
    indices, dims = op.inputs
    dims_shape = dims.shape.with_rank(1)
    ind = indices.shape
    if ind.ndims is None:
        return unknown_shape()
    if ind.ndims == 0:
        return TensorShape([dims_shape[0]])
    return TensorShape([dims_shape[0]]).concatenate(ind)


register_op("UnravelIndex", inputs=["indices: Tidx", "dims: Tidx"], outputs=["output: Tidx"],
            attrs={"Tidx": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)}, shape=_unravel_shape)
not_differentiable("UnravelIndex")


@kernel("UnravelIndex")
def _unravel_kernel(ctx, indices, dims):
    xp = ctx.xp
    if indices.ndim > 1:
        raise _invalid(ctx, "The indices can only be scalar or vector, got %s"
                       % _u.shape_str(indices.shape))
    if dims.ndim != 1:
        raise _invalid(ctx, "The indices can only be 1-D, got %s" % _u.shape_str(dims.shape))
    negative = np.flatnonzero(np.asarray(dims) < 0)
    if negative.size:
        raise _invalid(ctx, "Input dims cannot be negative. Got dim = %d"
                       % int(dims[negative[0]]))
    total = int(np.prod(np.asarray(dims, dtype=np.int64)))
    if ((indices < 0) | (indices >= total)).any():
        raise _invalid(ctx, "index is out of bound as with dims")
    coords = np.unravel_index(np.asarray(indices, dtype=np.int64),
                              tuple(int(d) for d in dims))
    return xp.stack([xp.asarray(c) for c in coords]).astype(indices.dtype)


@tf_export("unravel_index")
def unravel_index(indices, dims, name: Optional[str] = None) -> Tensor:
    """Converts flat indices into coordinates in an array of shape `dims` (TF1).

    Args:
      indices: a 0-D or 1-D int32/int64 Tensor of flat (row-major) indices.
      dims: a 1-D Tensor of the same type: the shape indexed into.
      name: op name.

    Returns:
      A Tensor of shape [len(dims)] (0-D indices) or [len(dims), N] (1-D indices).

    Raises:
      InvalidArgumentError (at run time): an index out of bounds or a negative dim.
    """
    indices = convert_to_tensor(indices, name="indices")
    return apply_op("UnravelIndex", [indices, convert_to_tensor(dims, dtype=indices.dtype,
                                                                name="dims")],
                    name=name or "UnravelIndex").outputs[0]
