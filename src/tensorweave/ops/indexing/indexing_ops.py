"""Slicing ops (Slice, StridedSlice, StridedSliceGrad) and `Tensor.__getitem__`.

The rest of the indexing family lives next door: gathers and scatters in `indexing_gather.py` (GatherV2, GatherNd, ScatterNd,
OneHot), selections in `indexing_select.py` (Where, Select, SelectV2, boolean_mask,
sequence_mask, Unique, TopKV2).

A strided-slice spec is expanded once into per-dimension entries (`_expand_spec`); the
shape function and the kernel both read that expansion, so static shapes and run-time
results follow the same rules (TF's: an ellipsis bit wins over a new-axis bit at the same
position, a new-axis bit wins over a shrink bit, a shrink ignores the masks).
"""
from __future__ import annotations

import builtins
import functools
import numbers
import types
from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework import shapes as _shapes
from tensorweave.framework.shapes import Dimension, TensorShape, unknown_shape
from tensorweave.runtime.values import element

newaxis = None
export(newaxis, "newaxis")

_INDEX_TYPES = (_dt.int32, _dt.int64)
# StridedSlice alone also takes int16 index tensors (its gradient does not)
_SLICE_INDEX_TYPES = (_dt.int16,) + _INDEX_TYPES
_pyslice = builtins.slice  # `slice` below is tf.slice


# --- helpers shared by the family --------------------------------------------------------
def shape_str(shape) -> str:
    """TF's way of printing a concrete shape: [2,3]."""
    return "[%s]" % ",".join(str(int(d)) for d in shape)


def partial_shape_str(shape: TensorShape) -> str:
    """TF's way of printing a static shape: [4,?,3], or ? for an unknown rank."""
    if shape.ndims is None:
        return "?"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


def debug_index(shape, flat_index: int) -> str:
    """TF's SliceDebugString: "[1,0]" for element `flat_index` of an array of `shape`,
    "" for a scalar."""
    if len(shape) == 0:
        return ""
    return "[%s]" % ",".join(str(int(i)) for i in np.unravel_index(flat_index, shape))


def merge_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """Merges two static shapes with TF's shape-inference messages."""
    if a.ndims is None:
        return b
    if b.ndims is None:
        return a
    if a.ndims != b.ndims:
        raise ValueError("Shapes must be equal rank, but are %d and %d" % (a.ndims, b.ndims))
    dims = []
    for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
        if x is not None and y is not None and x != y:
            raise ValueError("Dimension %d in both shapes must be equal, but are %d and %d. "
                             "Shapes are %s and %s." % (i, x, y, partial_shape_str(a),
                                                         partial_shape_str(b)))
        dims.append(x if x is not None else y)
    return TensorShape(dims)


with_rank, with_rank_at_least = _shapes.with_rank, _shapes.with_rank_at_least


def merge_dims(a: Dimension, b: Dimension) -> Dimension:
    """Merges two dimensions with TF's message for unequal ones."""
    return Dimension(_shapes.merge_dim(a.value, b.value))


def shape_tensor(t: Tensor, out_type=_dt.int32) -> Tensor:
    """The shape of `t` as a 1-D tensor: a constant when it is fully known statically."""
    if t.shape.is_fully_defined():
        return convert_to_tensor(np.asarray(t.shape.as_list(), dtype=out_type.as_numpy_dtype))
    from tensorweave.ops.array import array_ops
    return array_ops.shape(t, out_type=out_type)


def invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, message)


_lowest, _highest = np.minimum.reduce, np.maximum.reduce


def outside(indices, limit: int) -> bool:
    """Whether any of the integer `indices` lies outside [0, limit). NumPy arrays are
    reduced by the ufuncs themselves (ndarray.min/max pass through a Python-level
    wrapper each, a visible cost in small index kernels that run every step)."""
    if indices.size == 0:
        return False
    if type(indices) is np.ndarray:
        return bool(_lowest(indices, axis=None) < 0 or _highest(indices, axis=None) >= limit)
    return bool(indices.min() < 0 or indices.max() >= limit)


# --- Slice -------------------------------------------------------------------------------
def _slice_shape(op):
    inp, begin, size = op.inputs
    n = merge_shapes(with_rank(begin.shape, 1), with_rank(size.shape, 1))[0].value
    in_shape = with_rank(inp.shape, n) if n is not None else inp.shape
    s = tensor_util.constant_value(size)
    if s is None:
        # a partly known size still gives its known entries (a -1 among them unknown)
        sizes = tensor_util.constant_value_as_shape(size)
        return sizes if sizes.ndims is not None else unknown_shape(in_shape.ndims)
    for v in s.reshape(-1).tolist():
        if v < -1:
            raise ValueError("Invalid value in tensor used for shape: %d" % v)
    # the known entries of begin size the -1 dimensions of known input size
    b = tensor_util.constant_value_as_shape(begin)
    dims = []
    for i, si in enumerate(s.tolist()):
        d = in_shape[i].value if in_shape.ndims is not None else None
        bi = b[i].value if b.ndims is not None else None
        if si == -1 and d is not None and bi is not None and bi > d:
            raise ValueError("Negative dimension size caused by subtracting %d from %d"
                             % (bi, d))
        dims.append(si if si != -1 else None if d is None or bi is None else d - bi)
    return TensorShape(dims)


register_op("Slice", inputs=["input: T", "begin: Index", "size: Index"], outputs=["output: T"],
            attrs={"T": TypeAttr(), "Index": TypeAttr(_INDEX_TYPES)}, shape=_slice_shape)


@kernel("Slice")
def _slice_kernel(ctx, x, begin, size):
    if begin.ndim != 1 or size.ndim != 1 or begin.size != x.ndim or size.size != x.ndim:
        raise invalid(ctx, "Expected begin and size arguments to be 1-D tensors of size %d, "
                      "but got shapes %s and %s instead." % (x.ndim, shape_str(begin.shape),
                                                             shape_str(size.shape)))
    index = []
    for i, (b, s) in enumerate(zip(begin.tolist(), size.tolist())):
        d = x.shape[i]
        if s == -1:
            s = d - b
        if not 0 <= b <= d:
            raise invalid(ctx, "Expected begin[%d] in [0, %d], but got %d" % (i, d, b))
        if not 0 <= s <= d - b:
            raise invalid(ctx, "Expected size[%d] in [0, %d], but got %d" % (i, d - b, s))
        index.append(_pyslice(b, b + s))
    return element(x[tuple(index)])  # x[()] of a 0-d string array is its bare element


@gradient("Slice")
def _slice_grad(op, grad):
    x, begin, _ = op.inputs
    y = op.outputs[0]
    index_type = begin.dtype
    b = tensor_util.constant_value(begin)
    if b is not None and y.shape.is_fully_defined():
        end = convert_to_tensor(b + np.asarray(y.shape.as_list(), dtype=b.dtype))
    else:
        from tensorweave.ops.math import math_binary
        end = math_binary.add(begin, shape_tensor(y, index_type))
    if x.shape.ndims is not None:
        strides = convert_to_tensor(np.ones(x.shape.ndims, index_type.as_numpy_dtype))
    else:
        from tensorweave.ops.array import array_ops
        strides = array_ops.ones_like(begin)
    dx = strided_slice_grad(shape_tensor(x, index_type), begin, end, strides, grad)
    if begin.shape.ndims == 1:  # x's rank, known from begin's length
        dx.set_shape(unknown_shape(begin.shape[0].value))
    return [dx, None, None]


@tf_export("slice")
def slice(input_, begin, size, name: Optional[str] = None) -> Tensor:  # noqa: A001
    """Extracts a slice of `size` elements starting at `begin` from a tensor (TF1 `tf.slice`).

    Args:
      input_: a Tensor.
      begin: 1-D int32/int64, the start offset in each dimension.
      size: 1-D int32/int64, the number of elements in each dimension; -1 takes all
        remaining elements of that dimension.
      name: op name.

    Returns:
      A Tensor of the same type as `input_`.

    Raises:
      InvalidArgumentError (at run time): `begin` or `size` out of range.
    """
    return apply_op("Slice", [input_, begin, size], name=name or "Slice").outputs[0]


# --- StridedSlice ------------------------------------------------------------------------
_ELLIPSIS, _NEW, _SHRINK, _RANGE, _FULL = range(5)


@functools.lru_cache(maxsize=4096)
def _expand_spec(rank: int, n: int, ellipsis_mask: int, new_axis_mask: int,
                 shrink_axis_mask: int) -> Tuple[Tuple[int, int, int], ...]:
    """Expands a sparse slice spec of length `n` over an input of rank `rank`.

    Returns one entry per output-producing item, in order, as (kind, spec_index,
    input_dim): kind _NEW (input_dim -1), _SHRINK, _RANGE (spec_index names begin/end/
    strides) or _FULL (an input dimension covered by the ellipsis; spec_index -1).

    Raises:
      ValueError: more than one ellipsis, or the spec names more dimensions than `rank`.
    """
    kinds = []
    for i in range(n):
        if ellipsis_mask >> i & 1:
            kinds.append(_ELLIPSIS)
        elif new_axis_mask >> i & 1:
            kinds.append(_NEW)
        elif shrink_axis_mask >> i & 1:
            kinds.append(_SHRINK)
        else:
            kinds.append(_RANGE)
    if kinds.count(_ELLIPSIS) > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    if _ELLIPSIS not in kinds:
        kinds.append(_ELLIPSIS)  # an implicit ellipsis ends every spec
    consumed = sum(1 for k in kinds if k in (_SHRINK, _RANGE))
    if consumed and rank == 0:
        raise ValueError("Attempting to slice scalar input.")
    if consumed > rank:
        raise ValueError("Index out of range using input dim %d; input has only %d dims"
                         % (rank, rank))
    out = []
    dim = 0
    for i, k in enumerate(kinds):
        if k == _ELLIPSIS:
            for _ in range(rank - consumed):
                out.append((_FULL, -1, dim))
                dim += 1
        elif k == _NEW:
            out.append((_NEW, i, -1))
        else:
            out.append((k, i, dim))
            dim += 1
    return tuple(out)


def _spec_args(attrs) -> tuple:
    return (attrs["ellipsis_mask"], attrs["new_axis_mask"], attrs["shrink_axis_mask"])


def _check_shrink_strides(spec, strides, dims) -> None:
    """Raises TF's error for a shrunk axis (of those in `spec` of known size in `dims`)
    with a negative stride. The shape function checks them all before any bounds (an
    axis of unknown size waits for the run)."""
    for kind, i, dim in spec:
        if kind == _SHRINK and strides[i] < 0 and dims[dim] is not None:
            raise ValueError("only stride 1 allowed on non-range indexing.")


def _shrink_index(b: int, d: int, dim: int) -> int:
    x = b + d if b < 0 else b
    if not 0 <= x < d:
        raise ValueError("slice index %d of dimension %d out of bounds." % (x, dim))
    return x


def _range_size(b, e, s, d, begin_masked, end_masked) -> Optional[int]:
    """Number of elements of `begin:end:stride` over a dimension of size d (TF/Python
    clamping); None when not known statically."""
    if s > 0:
        lo, hi = 0, d
    else:
        lo, hi = -1, d - 1

    def canonical(x, masked, is_begin):
        if masked:
            return (lo if s > 0 else hi) if is_begin else (hi if s > 0 else lo)
        x = x + d if x < 0 else x
        return min(max(x, lo), hi)

    length = canonical(e, end_masked, False) - canonical(b, begin_masked, True)
    if length == 0 or (length < 0) != (s < 0):
        return 0
    return -(-length // s)


def _strided_slice_shape(op):
    inp, begin, end, strides = op.inputs
    n = merge_shapes(with_rank(begin.shape, 1), with_rank(end.shape, 1))
    n = merge_shapes(n, with_rank(strides.shape, 1))[0].value
    s = tensor_util.constant_value(strides)
    in_shape = inp.shape
    if in_shape.ndims is None or n is None or s is None:
        return unknown_shape()
    attrs = op.attrs
    b = tensor_util.constant_value(begin)
    e = tensor_util.constant_value(end)
    s = s.tolist()
    for i, si in enumerate(s):
        if si == 0:
            raise ValueError("strides[%d] must be non-zero" % i)
    spec = _expand_spec(in_shape.ndims, n, *_spec_args(attrs))
    _check_shrink_strides(spec, s, in_shape.as_list())
    bmask, emask = attrs["begin_mask"], attrs["end_mask"]
    dims: List[Optional[int]] = []
    for kind, i, dim in spec:
        if kind == _NEW:
            dims.append(1)
            continue
        d = in_shape[dim].value
        if kind == _FULL:
            dims.append(d)
            continue
        if kind == _SHRINK:
            if d is not None and b is not None:
                _shrink_index(int(b[i]), d, dim)
            continue
        bm, em = bool(bmask >> i & 1), bool(emask >> i & 1)
        if d is None:
            dims.append(None)
        elif b is not None and e is not None:
            dims.append(_range_size(int(b[i]), int(e[i]), s[i], d, bm, em))
        elif bm and em:
            dims.append(_range_size(0, 0, s[i], d, True, True))
        else:
            dims.append(None)
    return TensorShape(dims)


_MASK_ATTRS = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
               "shrink_axis_mask": 0}
register_op("StridedSlice", inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(), "Index": TypeAttr(_SLICE_INDEX_TYPES), **_MASK_ATTRS},
            shape=_strided_slice_shape)


def _numpy_index(ctx, shape, begin, end, strides) -> tuple:
    """The NumPy index tuple equivalent to a strided-slice spec, validated as TF does."""
    if not (begin.ndim == end.ndim == strides.ndim == 1 and
            begin.size == end.size == strides.size):
        raise invalid(ctx, "Expected begin, end, and strides to be 1D equal size tensors, but "
                      "got shapes %s, %s, and %s instead." % (
                          shape_str(begin.shape), shape_str(end.shape),
                          shape_str(strides.shape)))
    attrs = ctx.attrs
    b, e, s = begin.tolist(), end.tolist(), strides.tolist()
    try:
        for i, si in enumerate(s):
            if si == 0:
                raise ValueError("strides[%d] must be non-zero" % i)
        spec = _expand_spec(len(shape), len(s), *_spec_args(attrs))
        bmask, emask = attrs["begin_mask"], attrs["end_mask"]
        index = []
        for kind, i, dim in spec:
            if kind == _NEW:
                index.append(None)
            elif kind == _FULL:
                index.append(_pyslice(None))
            elif kind == _SHRINK:
                # at run time TF checks axis by axis: stride, then bounds
                _check_shrink_strides([(kind, i, dim)], s, shape)
                index.append(_shrink_index(b[i], shape[dim], dim))
            else:
                index.append(_pyslice(None if bmask >> i & 1 else b[i],
                                   None if emask >> i & 1 else e[i], s[i]))
    except ValueError as err:
        raise invalid(ctx, str(err)) from None
    return tuple(index)


def _remembered_index(ctx, shape, begin, end, strides) -> tuple:
    """`_numpy_index`, remembered by the node for the next run when its spec cannot
    change: `begin`, `end` and `strides` are then the very read-only arrays of the last
    run (constants), and `shape` is the same. Most slices of a training step are
    `tf.shape(x)[0]` or `x[:, k]` with constant specs; this saves their parsing."""
    memo = ctx.state["index"] if "index" in ctx.state else None
    if memo is not None and memo[0] is begin and memo[1] is end and memo[2] is strides \
            and memo[3] == shape and not (begin.flags.writeable or end.flags.writeable
                                          or strides.flags.writeable):
        return memo[4]
    index = _numpy_index(ctx, shape, begin, end, strides)
    if type(begin) is type(end) is type(strides) is np.ndarray and not (
            begin.flags.writeable or end.flags.writeable or strides.flags.writeable):
        ctx.state["index"] = (begin, end, strides, shape, index)
    return index


@kernel("StridedSlice")
def _strided_slice_kernel(ctx, x, begin, end, strides):
    # every axis shrunk: one element, which NumPy gives bare for a string array
    return element(x[_remembered_index(ctx, x.shape, begin, end, strides)])


@tensor_util.register_static_value("StridedSlice")
def _strided_slice_value(op, index):
    """A slice of a value known at build time (`tf.shape(x)[0]` of a known shape), so
    that shapes built from it are known too, as TF's constant folding makes them."""
    vals = [tensor_util.constant_value(t) for t in op.inputs]
    if any(v is None for v in vals):
        return None
    x, begin, end, strides = (np.asarray(v) for v in vals)
    spec = types.SimpleNamespace(attrs=op._attrs, op=op)
    try:
        return np.asarray(x[_numpy_index(spec, x.shape, begin, end, strides)])
    except (errors.OpError, IndexError, ValueError):
        return None  # the kernel will say what is wrong


@gradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    dx = strided_slice_grad(shape_tensor(x, begin.dtype), begin, end, strides, grad,
                            **{k: op._get_attr(k) for k in _MASK_ATTRS})
    return [dx, None, None, None]


def _strided_slice_grad_shape(op):
    with_rank(op.inputs[0].shape, 1)
    return tensor_util.constant_value_as_shape(op.inputs[0])


register_op("StridedSliceGrad",
            inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(), "Index": TypeAttr(_INDEX_TYPES), **_MASK_ATTRS},
            shape=_strided_slice_grad_shape)


@kernel("StridedSliceGrad")
def _strided_slice_grad_kernel(ctx, shape, begin, end, strides, dy):
    shape = tuple(shape.tolist())
    index = _numpy_index(ctx, shape, begin, end, strides)
    out = ctx.xp.zeros(shape, dtype=dy.dtype)
    target = out[index]
    if target.shape != dy.shape:
        raise invalid(ctx, "shape of dy was %s instead of %s" % (shape_str(dy.shape),
                                                                 shape_str(target.shape)))
    out[index] = dy
    return out


@gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    ddy = strided_slice(grad, begin, end, strides, **{k: op._get_attr(k) for k in _MASK_ATTRS})
    return [None, None, None, None, ddy]


def strided_slice_grad(shape, begin, end, strides, dy, begin_mask: int = 0, end_mask: int = 0,
                       ellipsis_mask: int = 0, new_axis_mask: int = 0,
                       shrink_axis_mask: int = 0, name: Optional[str] = None) -> Tensor:
    """The gradient of `strided_slice`: `dy` scattered into zeros of `shape`."""
    attrs = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    return apply_op("StridedSliceGrad", [shape, begin, end, strides, dy], attrs,
                    name=name or "StridedSliceGrad").outputs[0]


@tf_export("strided_slice")
def strided_slice(input_, begin, end, strides=None, begin_mask: int = 0, end_mask: int = 0,
                  ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0,
                  var=None, name: Optional[str] = None) -> Tensor:
    """Extracts a strided slice of a tensor (TF1 `tf.strided_slice`).

    Position i of `begin`, `end`, `strides` describes one item of a Python slice spec;
    bit i of the masks says: begin_mask/end_mask - ignore begin[i]/end[i] (take the
    widest range); ellipsis_mask - this item is `...`; new_axis_mask - insert a new
    dimension of size 1; shrink_axis_mask - take the single index begin[i] and drop the
    dimension.

    Args:
      input_: a Tensor.
      begin, end: 1-D int16/int32/int64 tensors.
      strides: 1-D tensor of the same type, non-zero entries (default all ones).
      begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask: int bit masks.
      var: accepted for compatibility with TF1 (variable slices); unused.
      name: op name.

    Returns:
      A Tensor of the same type as `input_`.

    Raises:
      ValueError: at build time, when the spec is invalid for the static shape.
      InvalidArgumentError: at run time, for an out-of-range shrink index or zero stride.
    """
    del var  # sliced assignment is provided by variables, not by this op
    if strides is None:
        b = convert_to_tensor(begin) if not isinstance(begin, Tensor) else begin
        n = b.shape[0].value if b.shape.ndims == 1 else None
        if n is None:
            from tensorweave.ops.array import array_ops
            strides = array_ops.ones_like(b)
        else:
            strides = np.ones(n, dtype=b.dtype.as_numpy_dtype)
        begin = b
    attrs = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    return apply_op("StridedSlice", [input_, begin, end, strides], attrs,
                    name=name or "StridedSlice").outputs[0]


# --- Tensor.__getitem__ ------------------------------------------------------------------
_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) "
                     "and scalar tf.int32/tf.int64 tensors are valid indices")


def _check_index(idx) -> None:
    if isinstance(idx, (numbers.Integral, Dimension)) and not isinstance(idx, bool):
        return
    dtype = getattr(idx, "dtype", None)
    ok = False
    if dtype is not None and not isinstance(idx, (list, tuple)):
        try:
            ok = _dt.as_dtype(dtype) in _SLICE_INDEX_TYPES
        except TypeError:
            ok = False
        shape = getattr(idx, "shape", None)
        rank = shape.ndims if isinstance(shape, TensorShape) else (
            len(shape) if shape is not None else None)
        ok = ok and rank in (0, None)
    if not ok:
        raise TypeError(_SLICE_TYPE_ERROR + ", got {!r}".format(idx))


def _is_tensor_like(v) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


def _index_dtype(values) -> _dt.DType:
    """The index type of a slice spec: int64 if any entry needs it (an int64 tensor or a
    large int), int16 if its only tensors are int16 and its ints fit, else int32."""
    tensor_types = {convert_to_tensor(v).dtype for v in values if _is_tensor_like(v)}
    ints = [int(v) for v in values if not _is_tensor_like(v)]
    if _dt.int64 in tensor_types or any(not -2**31 <= v < 2**31 for v in ints):
        return _dt.int64
    if tensor_types == {_dt.int16} and all(-2**15 <= v < 2**15 for v in ints):
        return _dt.int16
    return _dt.int32


def _pack_index(values, dtype: _dt.DType, name: str) -> Tensor:
    """Packs begin/end/strides entries (ints and scalar tensors) into one 1-D tensor."""
    if not any(_is_tensor_like(v) for v in values):
        return convert_to_tensor(np.asarray([int(v) for v in values], dtype=dtype.as_numpy_dtype),
                                 name=name)
    from tensorweave.ops.array import array_ops
    items = []
    for v in values:
        if _is_tensor_like(v):
            t = convert_to_tensor(v)
            items.append(t if t.dtype == dtype else array_ops.cast(t, dtype))
        else:
            items.append(convert_to_tensor(np.asarray(int(v), dtype=dtype.as_numpy_dtype)))
    return array_ops.stack(items, name=name)


def _slice_helper(tensor, slice_spec, var=None):
    """`tensor[slice_spec]`: NumPy-style basic indexing built from one StridedSlice.

    Supports ints (negative ones count from the end), slices with steps, `...`,
    `tf.newaxis` and scalar int16/int32/int64 tensors; a boolean tensor or array is a
    `boolean_mask`.

    Raises:
      TypeError: an index of any other type (lists, floats, non-scalar tensors).
      ValueError: an index out of range of a statically known dimension.
    """
    if isinstance(slice_spec, bool) or (
            _is_tensor_like(slice_spec) and getattr(slice_spec, "dtype", None) == _dt.bool) or (
            isinstance(slice_spec, np.ndarray) and slice_spec.dtype == np.bool_):
        from tensorweave.ops.indexing import indexing_select
        return indexing_select.boolean_mask(tensor, slice_spec)
    # TF1 reads a list like a tuple: `x[[0, 1]]` is `x[0, 1]`, not a gather
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = (slice_spec,)
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, _pyslice):
            start, stop = s.start, s.stop
            if isinstance(start, Dimension) and start.value is None:
                start = None
            if isinstance(stop, Dimension) and stop.value is None:
                stop = None
            if start is not None:
                _check_index(start)
                begin.append(start)
            else:
                begin.append(0)
                begin_mask |= bit
            if stop is not None:
                _check_index(stop)
                end.append(stop)
            else:
                end.append(0)
                end_mask |= bit
            if s.step is not None:
                _check_index(s.step)
                strides.append(s.step)
            else:
                strides.append(1)
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= bit
        else:
            _check_index(s)
            if isinstance(s, Dimension):
                s = s.value
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            shrink_axis_mask |= bit
    begin = [int(v) if isinstance(v, Dimension) else v for v in begin]
    end = [int(v) if isinstance(v, Dimension) else v for v in end]
    strides = [int(v) if isinstance(v, Dimension) else v for v in strides]
    values = [tensor] + [v for v in begin + end + strides if _is_tensor_like(v)]
    with _graph.name_scope(None, "strided_slice", values) as name:
        dtype = _index_dtype(begin + end + strides)
        packed_begin = _pack_index(begin, dtype, "stack")
        packed_end = _pack_index(end, dtype, "stack_1")
        packed_strides = _pack_index(strides, dtype, "stack_2")
        return strided_slice(tensor, packed_begin, packed_end, packed_strides,
                             begin_mask=begin_mask, end_mask=end_mask,
                             shrink_axis_mask=shrink_axis_mask, new_axis_mask=new_axis_mask,
                             ellipsis_mask=ellipsis_mask, var=var, name=name)


Tensor._override_operator("__getitem__", _slice_helper)
