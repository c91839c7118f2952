"""Reductions (Sum, Mean, Max, Min, Prod, Any, All and their composites), ArgMax/ArgMin,
Cumsum/Cumprod.

Every reduction op has the inputs (input: T, reduction_indices: Tidx) and the attr
keep_dims, one shape function and one axis check in the kernels. Gradients broadcast the
output gradient back over the reduced axes; the shape with reduced axes kept as 1 is
computed statically when the rank and the axes are known at build time (the common case)
and with a few int32 ops otherwise.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape

_INDEX_TYPES = (_dt.int32, _dt.int64)
# half-precision inputs are accumulated in float32, as TF's kernels do
_LOW_PRECISION = (np.dtype(np.float16), np.dtype(_dt.bfloat16.as_numpy_dtype))


# --- shared: axes, shape function, kernels -----------------------------------------------
def _reduction_shape(op) -> TensorShape:
    x_shape = op.inputs[0].shape
    idx = op.inputs[1]
    if idx.shape.ndims is not None and idx.shape.ndims > 1:
        raise ValueError("Shape must be at most rank 1 but is rank %d" % idx.shape.ndims)
    keep = op._get_attr("keep_dims")
    axes = tensor_util.constant_value(idx)
    rank = x_shape.ndims
    if axes is None or rank is None:
        return unknown_shape(rank) if keep and rank is not None else unknown_shape()
    reduced = set()
    for a in np.asarray(axes).reshape(-1).tolist():
        if a < -rank or a >= rank:
            raise ValueError("Invalid reduction dimension %d for input with %d dimensions."
                             % (a, rank))
        reduced.add(a % rank)
    dims = []
    for i, d in enumerate(x_shape.as_list()):
        if i in reduced:
            if keep:
                dims.append(1)
        else:
            dims.append(d)
    return TensorShape(dims)


# (rank, axis, axis, ...) -> the normalised axes tuple, for axes that passed the checks
# below; bounded, since a program uses few distinct reduction axes
_AXES_CACHE: dict = {}
_AXES_CACHE_LIMIT = 4096


def _kernel_axes(ctx, x, axes) -> tuple:
    """Normalised reduction axes of a kernel call; InvalidArgumentError like TF's."""
    rank = x.ndim
    if type(axes) is not np.ndarray:
        axes = np.asarray(axes)
    if axes.ndim == 1:
        key = (rank, *axes.tolist())
    else:
        key = (rank, *axes.reshape(-1).tolist())
    out = _AXES_CACHE.get(key)
    if out is not None:
        return out
    out = []
    for a in key[1:]:
        if a < -rank or a >= rank:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Invalid reduction dimension (%d for input with %d dimension(s)"
                % (a, rank))
        a = a % rank
        if a in out:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Invalid reduction arguments: Axes contains duplicate "
                "dimension: %d" % a)
        out.append(a)
    out = tuple(out)
    if len(_AXES_CACHE) < _AXES_CACHE_LIMIT:
        _AXES_CACHE[key] = out
    return out


_STATIC_LIMIT = 1024  # the most elements a reduction is evaluated on at build time


def _register_reduction(op_type: str, allowed, reduce_fn, input_dtype=None) -> None:
    if input_dtype is None:
        inputs = ["input: T", "reduction_indices: Tidx"]
        attrs = {"T": TypeAttr(allowed), "Tidx": TypeAttr(_INDEX_TYPES, default=_dt.int32),
                 "keep_dims": False}
    else:
        inputs = ["input: bool", "reduction_indices: Tidx"]
        attrs = {"Tidx": TypeAttr(_INDEX_TYPES, default=_dt.int32), "keep_dims": False}
    register_op(op_type, inputs=inputs,
                outputs=["output: T" if input_dtype is None else "output: bool"],
                attrs=attrs, shape=_reduction_shape)

    def _kernel(ctx, x, axes):
        ax = _kernel_axes(ctx, x, axes)
        # no axis: each value reduced alone is itself (TF forwards the input's buffer);
        # NumPy would copy it (the bias add's gradient sums its larger side over none)
        out = reduce_fn(ctx.xp, x, ax, ctx.attrs["keep_dims"]) if ax else x
        # a full reduction gives a NumPy scalar: the kernel returns arrays
        return out if type(out) is np.ndarray else ctx.xp.asarray(out)
    kernel(op_type)(_kernel)

    @tensor_util.register_static_value(op_type)
    def _static_value(op, index):
        # a reduction of a small integer value known at build time (a shape's product,
        # as Keras' batch_flatten takes it) is known too, as TF's shape inference
        # evaluates it: reshapes to it get static shapes
        if op.inputs[0].dtype.base_dtype not in (_dt.int32, _dt.int64):
            return None
        x = tensor_util.constant_value(op.inputs[0])
        axes = tensor_util.constant_value(op.inputs[1])
        if x is None or axes is None or x.size > _STATIC_LIMIT:
            return None
        x = np.asarray(x)
        try:
            ax = tuple(int(a) % x.ndim for a in np.asarray(axes).reshape(-1)) \
                if x.ndim else ()
            out = reduce_fn(np, x, ax, op._get_attr("keep_dims"))
        except (ValueError, TypeError, ZeroDivisionError):
            return None
        return np.asarray(out, dtype=x.dtype)


def _add_reduce(xp, x, ax, acc, keep):
    if xp is np:
        if 0 < len(ax) < x.ndim and x.size >= _BLOCKED_MIN_SIZE and x.flags.c_contiguous:
            if len(ax) == 1 and ax[0] == x.ndim - 1 and x.shape[-1] < _SHORT_ROW and \
                    x.dtype.kind in "fiu":
                return _short_trailing_sum(x, acc, keep)
            blocked = _blocked_leading_sum(x, ax, acc, keep)
            if blocked is not None:
                return blocked
        # NumPy's add.reduce is np.sum without its Python wrapper (a few microseconds per
        # call); other array modules (CuPy) have sum
        return np.add.reduce(x, axis=ax, dtype=acc, keepdims=keep)
    return xp.sum(x, axis=ax, dtype=acc, keepdims=keep)


# Blocked sums over leading axes (the bias gradients of NHWC activations: [N, H, W, C] ->
# [C]). NumPy reduces the leading axes of a [rows, K] array one row at a time, one
# inner loop of K elements per row: for small K the loop overhead dominates (a
# [64, 28, 28, 32] -> [32] sum took 0.83 ms). Summing blocks of m rows as one long
# row first ([rows/m, m*K] -> [m*K]), then the m partial rows ([m, K] -> [K]), runs
# about sqrt(rows) short loops instead of `rows` (0.13 ms there) and is more accurate
# (a two-level sum rather than one running sum).
_BLOCKED_MIN_SIZE = 1 << 15   # below this the plain reduction costs a few microseconds
_BLOCKED_MAX_ROW = 1 << 10    # rows at least this long already reduce at full speed


def _blocked_leading_sum(x, ax, acc, keep):
    """The sum of C-contiguous `x` over `ax` when `ax` are its leading axes and the kept
    part is short; None otherwise (the caller then reduces the usual way)."""
    k = len(ax)
    if sorted(ax) != list(range(k)):
        return None
    kept = x.shape[k:]
    row = 1
    for d in kept:
        row *= d
    # (x has at least _BLOCKED_MIN_SIZE elements: row > 0); a row of 1 is one contiguous
    # run, which NumPy already sums at full speed
    if row >= _BLOCKED_MAX_ROW or row == 1:
        return None
    rows = x.size // row
    m = max(2, int(rows ** 0.5))  # m rows per block, about rows/m blocks
    blocks = rows // m
    flat = x.reshape(rows, row)
    partial = np.add.reduce(flat[:blocks * m].reshape(blocks, m * row), axis=0, dtype=acc)
    out = np.add.reduce(partial.reshape(m, row), axis=0, dtype=acc)
    if blocks * m < rows:
        out += np.add.reduce(flat[blocks * m:], axis=0, dtype=acc)
    return out.reshape((1,) * k + kept if keep else kept)


# Sums over a short last axis (RGB weights, [N, 3] coordinates): NumPy runs one inner
# loop per row, so [16, 224, 224, 3] -> [16, 224, 224] took 17 ms. Adding the columns
# as whole strided arrays takes 0.6 ms, and in the order NumPy adds fewer than eight
# values ((x0 + x1) + x2 ...), so the sums are the same bits.
_SHORT_ROW = 8


def _short_trailing_sum(x, acc, keep):
    out = x[..., 0].astype(acc)  # a copy, also when the dtype is already `acc`
    for i in range(1, x.shape[-1]):
        out += x[..., i]
    return out[..., None] if keep else out


def _sum(xp, x, ax, keep):
    if x.dtype in _LOW_PRECISION:
        return _add_reduce(xp, x, ax, np.float32, keep).astype(x.dtype)
    return _add_reduce(xp, x, ax, x.dtype, keep)


def _mean(xp, x, ax, keep):
    count = 1
    for a in ax:
        count *= x.shape[a]
    if x.dtype.kind in "iu":
        # TF sums in a 64-bit accumulator (the mean of 200s in uint8 is 200), so only
        # int64 sums wrap; the quotient truncates toward zero, as C++'s division
        wide = np.dtype(np.int64 if x.dtype.kind == "i" else np.uint64)
        total = xp.sum(x, axis=ax, dtype=wide, keepdims=keep)
        if count == 0:
            return total.astype(x.dtype)
        q = total // wide.type(count)
        if x.dtype.kind == "i":
            q = q + ((total % wide.type(count) != 0) & (total < 0)).astype(wide)
        return q.astype(x.dtype)
    if count == 0:  # the mean of nothing is NaN (without NumPy's warning)
        shape = xp.sum(x, axis=ax, keepdims=keep).shape
        return xp.full(shape, np.nan, dtype=x.dtype)
    acc = np.float32 if x.dtype in _LOW_PRECISION else x.dtype
    # sum / count: the same value as xp.mean without its Python-level overhead
    total = _add_reduce(xp, x, ax, acc, keep)
    return (total / count).astype(x.dtype, copy=False)  # a Python int keeps the dtype


def _extreme(fn, initial_of):
    def reduce(xp, x, ax, keep):
        if x.size == 0:
            return fn(x, axis=ax, keepdims=keep, initial=initial_of(x.dtype))
        return fn(x, axis=ax, keepdims=keep)
    return reduce


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" or dtype in _LOW_PRECISION else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" or dtype in _LOW_PRECISION else np.iinfo(dtype).max


def _prod(xp, x, ax, keep):
    # NumPy's multiply.reduce is np.prod without its Python wrapper
    prod = np.multiply.reduce if xp is np else xp.prod
    if x.dtype in _LOW_PRECISION:
        return prod(x, axis=ax, dtype=np.float32, keepdims=keep).astype(x.dtype)
    return prod(x, axis=ax, dtype=x.dtype, keepdims=keep)


_register_reduction("Sum", _dt.NUMBERS, _sum)
_register_reduction("Mean", _dt.NUMBERS, _mean)
_register_reduction("Prod", _dt.NUMBERS, _prod)
_register_reduction("Max", _dt.REAL_NUMBERS, _extreme(np.max, _lowest))
_register_reduction("Min", _dt.REAL_NUMBERS, _extreme(np.min, _highest))


def _logical_reduction(ufunc, name: str):
    """Any/All: NumPy's logical ufunc's reduce, without np.any's Python wrapper (half of
    a small reduction's time); other array modules' any/all."""
    def reduce(xp, x, ax, keep):
        if xp is np:
            return ufunc.reduce(x, axis=ax, keepdims=keep)
        return getattr(xp, name)(x, axis=ax, keepdims=keep)
    return reduce


_register_reduction("Any", None, _logical_reduction(np.logical_or, "any"),
                    input_dtype=_dt.bool)
_register_reduction("All", None, _logical_reduction(np.logical_and, "all"),
                    input_dtype=_dt.bool)
not_differentiable("Any")
not_differentiable("All")


# --- counting: Sum(Cast(bool)) ------------------------------------------------------------
# What the step-graph pass `fuse_count_true` (runtime/optimizer.py) makes of a Sum whose
# input is a Cast of bool that nothing else reads (tf.metrics.auc's confusion counts,
# `reduce_sum(cast(correct, float32))`): the counts without the float array as large as
# the input (41 MB for AUC's 200 thresholds of 51,200 predictions, 7.6 ms of the cast and
# sum against 0.3 ms of counting). A sum of zeros and ones is exact in any order while the
# count fits the type's integers, so the counts are the sum's bits; beyond that the
# kernel casts and sums.
_COUNT_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.int64)
_EXACT_COUNT = {np.dtype(np.float32): 1 << 24, np.dtype(np.float64): 1 << 53,
                np.dtype(np.int32): (1 << 31) - 1, np.dtype(np.int64): (1 << 63) - 1}

register_op("_CountTrue", inputs=["input: bool", "reduction_indices: Tidx"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(_COUNT_TYPES), "Tidx": TypeAttr(_INDEX_TYPES, default=_dt.int32),
                   "keep_dims": False},
            shape=_reduction_shape)
not_differentiable("_CountTrue")


@kernel("_CountTrue")
def _count_true_kernel(ctx, x, axes):
    ax = _kernel_axes(ctx, x, axes)
    dtype = np.dtype(ctx.attrs["T"].as_numpy_dtype)
    keep = ctx.attrs["keep_dims"]
    if ctx.xp is not np or not ax or \
            math.prod(x.shape[a] for a in ax) > _EXACT_COUNT[dtype]:
        values = x.astype(dtype)
        return _sum(ctx.xp, values, ax, keep) if ax else values
    return count_true(x, ax, keep).astype(dtype)


# a byte lane of a uint64 sum holds the ones of at most 255 words
_LANE_WORDS = 255
_LANE_MIN_ROW = 256   # shorter rows are counted by NumPy's sum of bytes


def count_true(x: np.ndarray, ax: tuple, keep: bool = False) -> np.ndarray:
    """The number of True values of the bool array `x` over the axes `ax`, as int64.

    Rows reduced along contiguous trailing axes are read 8 values a word: the words of
    up to 255 of them summed as uint64 keep each byte's count in its byte (a 1 adds 1 to
    its byte, whose total stays below 256), so the row's count is the sum of the bytes
    of a few words (a [200, 51200] count: 0.2 ms against 1.2 for a sum of bytes)."""
    trailing = sorted(ax) == list(range(x.ndim - len(ax), x.ndim))
    row = math.prod(x.shape[a] for a in ax)
    if not (trailing and x.flags.c_contiguous and row % 8 == 0 and row >= _LANE_MIN_ROW):
        return np.add.reduce(x.view(np.uint8), axis=ax, dtype=np.int64, keepdims=keep)
    kept = x.shape[:x.ndim - len(ax)]
    outer = x.size // row
    words = x.reshape(outer, row).view(np.uint64)
    n_words = words.shape[1]
    full = n_words - n_words % _LANE_WORDS
    counts = np.zeros(outer, np.int64)
    if full:
        lanes = np.add.reduce(words[:, :full].reshape(outer, -1, _LANE_WORDS), axis=2)
        counts += np.add.reduce(lanes.view(np.uint8).reshape(outer, -1), axis=1,
                                dtype=np.int64)
    if full < n_words:
        lanes = np.add.reduce(words[:, full:], axis=1)
        counts += np.add.reduce(lanes.view(np.uint8).reshape(outer, 8), axis=1,
                                dtype=np.int64)
    return counts.reshape(kept + (1,) * len(ax) if keep else kept)


# --- builders -----------------------------------------------------------------------------
def _resolve(axis, reduction_indices, keepdims, keep_dims):
    if axis is not None and reduction_indices is not None:
        raise ValueError("Cannot specify both 'reduction_indices' and 'axis'.")
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    axis = reduction_indices if axis is None else axis
    keep = keep_dims if keepdims is None else keepdims
    return axis, bool(keep) if keep is not None else False


def _axis_tensor(x: Tensor, axis):
    """The reduction_indices input: all axes when `axis` is None (a "Const" of the
    current scope, not of the op's, as TF names it)."""
    if axis is None:
        rank = x.shape.ndims
        if rank is not None:
            return convert_to_tensor(np.arange(rank, dtype=np.int32), name="Const")
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.math import math_ops
        return math_ops.range(0, array_ops.rank(x))
    if isinstance(axis, Tensor) or hasattr(axis, "_as_graph_element"):
        return axis
    arr = np.asarray(axis)
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.int32)
    if arr.dtype.kind in "iu" and arr.dtype != np.int64:
        return arr.astype(np.int32)
    return axis


def _reduce(op_type: str, input_tensor, axis, keepdims, name, reduction_indices,
            keep_dims) -> Tensor:
    axis, keep = _resolve(axis, reduction_indices, keepdims, keep_dims)
    x = convert_to_tensor(input_tensor)
    out = apply_op(op_type, [x, _axis_tensor(x, axis)], {"keep_dims": keep},
                   name=name or op_type).outputs[0]
    return _may_reduce_to_scalar(keep, axis, out)


def _may_reduce_to_scalar(keep: bool, axis, out: Tensor) -> Tensor:
    # with axis=None and no keepdims the result is a scalar even when the rank is unknown
    if axis is None and not keep and not out.shape.is_fully_defined():
        out.set_shape(TensorShape([]))
    return out


def _reduction_doc(fn, what: str):
    fn.__doc__ = """Computes the %s of elements across dimensions of a tensor (TF1
    `tf.%s`).

    Reduces `input_tensor` along the dimensions in `axis`. Unless `keepdims` is true the
    rank drops by one for each entry of `axis`; otherwise reduced dimensions are kept with
    length 1. With `axis=None` all dimensions are reduced.

    Args:
      input_tensor: the tensor to reduce.
      axis: the dimensions to reduce (int, list of ints or int32/int64 Tensor), in
        `[-rank(input_tensor), rank(input_tensor))`. None reduces all dimensions.
      keepdims: if true, keep reduced dimensions with length 1.
      name: a name for the operation.
      reduction_indices: the old (deprecated) name for `axis`.
      keep_dims: the old (deprecated) name for `keepdims`.

    Returns:
      The reduced tensor.

    Raises:
      ValueError: both an argument and its deprecated alias are given, or an axis is out
        of range at build time.
      TypeError: the input has a dtype the reduction does not support.
    """ % (what, fn.__name__)
    return fn


@tf_export("reduce_sum", "math.reduce_sum")
def reduce_sum(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
               reduction_indices=None, keep_dims=None) -> Tensor:
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_mean", "math.reduce_mean")
def reduce_mean(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
                reduction_indices=None, keep_dims=None) -> Tensor:
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_max", "math.reduce_max")
def reduce_max(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
               reduction_indices=None, keep_dims=None) -> Tensor:
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_min", "math.reduce_min")
def reduce_min(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
               reduction_indices=None, keep_dims=None) -> Tensor:
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_prod", "math.reduce_prod")
def reduce_prod(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
                reduction_indices=None, keep_dims=None) -> Tensor:
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_any", "math.reduce_any")
def reduce_any(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
               reduction_indices=None, keep_dims=None) -> Tensor:
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


@tf_export("reduce_all", "math.reduce_all")
def reduce_all(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
               reduction_indices=None, keep_dims=None) -> Tensor:
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


for _fn, _what in ((reduce_sum, "sum"), (reduce_mean, "mean"), (reduce_max, "maximum"),
                   (reduce_min, "minimum"), (reduce_prod, "product"),
                   (reduce_any, "logical or"), (reduce_all, "logical and")):
    _reduction_doc(_fn, _what)


@tf_export("reduce_logsumexp", "math.reduce_logsumexp")
def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name: Optional[str] = None,
                     reduction_indices=None, keep_dims=None) -> Tensor:
    """Computes log(sum(exp(elements))) across dimensions, without overflow (TF1
    `tf.reduce_logsumexp`).

    The maximum along `axis` (zero where it is not finite) is subtracted before the
    exponentials and added back after the log; it is held constant for gradients.

    Args:
      input_tensor: a floating-point tensor.
      axis, keepdims, name, reduction_indices, keep_dims: as for `reduce_sum`.

    Returns:
      The reduced tensor.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing import indexing_select
    from tensorweave.ops.math import math_binary, math_unary
    from tensorweave.ops.control_flow import structure
    axis, keep = _resolve(axis, reduction_indices, keepdims, keep_dims)
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        my_max = structure.stop_gradient(indexing_select.where(
            math_unary.is_finite(raw_max), raw_max, array_ops.zeros_like(raw_max)))
        result = math_unary.log(reduce_sum(math_unary.exp(math_binary.subtract(x, my_max)),
                                           axis, keepdims=keep))
        if not keep:
            my_max = array_ops.reshape(my_max, array_ops.shape(result))
        result = math_binary.add(result, my_max, name=scope)
    return _may_reduce_to_scalar(keep, axis, result)


@tf_export("count_nonzero", "math.count_nonzero")
def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=_dt.int64,
                  name: Optional[str] = None, reduction_indices=None, keep_dims=None,
                  input=None) -> Tensor:  # noqa: A002
    """Computes the number of nonzero elements across dimensions (TF1
    `tf.count_nonzero`).

    Args:
      input_tensor: a numeric, bool or string tensor (strings count when non-empty).
      axis, keepdims, reduction_indices, keep_dims: as for `reduce_sum`.
      dtype: the output dtype (default int64).
      name: a name for the operation.
      input: the old name of `input_tensor`.

    Returns:
      The count, of type `dtype`.
    """
    from tensorweave.ops.array import constant_op
    from tensorweave.ops.math import math_binary, math_ops
    if input is not None and input_tensor is not None:
        raise ValueError("Cannot specify both 'input' and 'input_tensor'.")
    input_tensor = input if input_tensor is None else input_tensor
    axis, keep = _resolve(axis, reduction_indices, keepdims, keep_dims)
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input")
        zero = constant_op.constant(b"" if x.dtype is _dt.string else
                                    False if x.dtype is _dt.bool else 0, dtype=x.dtype)
        nonzero = math_ops.cast(math_binary.not_equal(x, zero), _dt.int64)
        return math_ops.cast(reduce_sum(nonzero, axis=axis, keepdims=keep), dtype=dtype)


@tf_export("math.reduce_variance")
def reduce_variance(input_tensor, axis=None, keepdims: bool = False,
                    name: Optional[str] = None) -> Tensor:
    """Computes the variance of elements across dimensions (TF `tf.math.reduce_variance`):
    mean(|x - mean(x)|^2) over `axis`.

    As TF's graph: the mean over `axis` first (so a bad axis raises its ValueError
    before the type check), then the squares of the deviations, `conj(d) * d` for
    complex input.

    Args:
      input_tensor: a floating-point or complex tensor.
      axis: dimensions to reduce; None reduces all.
      keepdims: keep reduced dimensions with length 1.
      name: a name for the operation.

    Returns:
      The variance; real for complex input.

    Raises:
      TypeError: integer or bool input.
      ValueError: an axis out of range, known when the graph is built.
    """
    from tensorweave.ops.math import complex_ops, math_binary, math_unary
    with name_scope(name, "reduce_variance", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        means = reduce_mean(x, axis=axis, keepdims=True)
        if means.dtype.is_integer or means.dtype.is_bool:
            raise TypeError("Input must be either real or complex. Received integer "
                            "type %s." % means.dtype.name)
        diff = math_binary.subtract(x, means)
        if diff.dtype.is_complex:
            squared = complex_ops.real(math_binary.multiply(math_unary.conj(diff), diff))
        else:
            squared = math_unary.square(diff)
        return reduce_mean(squared, axis=axis, keepdims=keepdims)


@tf_export("math.reduce_std")
def reduce_std(input_tensor, axis=None, keepdims: bool = False,
               name: Optional[str] = None) -> Tensor:
    """Computes the standard deviation of elements across dimensions (TF
    `tf.math.reduce_std`): sqrt(reduce_variance(...)).

    Args and Returns: as for `reduce_variance`.
    """
    from tensorweave.ops.math import math_unary
    with name_scope(name, "reduce_std", [input_tensor]):
        return math_unary.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


@tf_export("math.reduce_euclidean_norm")
def reduce_euclidean_norm(input_tensor, axis=None, keepdims: bool = False,
                          name: Optional[str] = None) -> Tensor:
    """Computes sqrt(sum(|x|^2)) across dimensions (TF `tf.math.reduce_euclidean_norm`).

    Composite: for complex input the result is the (complex-typed) norm, like TF's; for
    integers the square root of the integer sum of squares, truncated (TF's
    EuclideanNorm kernel on ints).
    """
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    with name_scope(name, "reduce_euclidean_norm", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        sq = math_binary.multiply(math_unary.conj(x) if x.dtype.is_complex else x, x)
        total = reduce_sum(sq, axis=axis, keepdims=keepdims)
        if x.dtype.is_integer:
            root = math_unary.sqrt(math_ops.cast(total, _dt.float64))
            return math_ops.cast(root, x.dtype.base_dtype)
        return math_unary.sqrt(total)


# make the reduction gradients and arg/scan ops (split for size) part of this family
