"""Small tf.math functions: bincount (ops Bincount and TF 2's DenseBincount, which
tf.RaggedTensor row partitions use inside TF 2 SavedModels), and compositions: polyval,
zero_fraction, is_non_decreasing, is_strictly_increasing."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.ops.math import math_binary, math_ops, reduction_ops


# --- Bincount -------------------------------------------------------------------------------
def _bincount_shape(op):
    with_rank(op.inputs[1].shape, 0)
    size = tensor_util.constant_value(op.inputs[1])
    return TensorShape([None if size is None else int(size)])


register_op("Bincount", inputs=["arr: int32", "size: int32", "weights: T"],
            outputs=["bins: T"],
            attrs={"T": TypeAttr((_dt.int32, _dt.int64, _dt.float32, _dt.float64))},
            shape=_bincount_shape)


def _bins(ctx, size) -> int:
    """The `size` input of Bincount / DenseBincount: the number of bins (TF's error)."""
    size = int(size)
    if size < 0:
        raise errors.InvalidArgumentError(None, ctx.op,
                                          "size (%d) must be non-negative" % size)
    return size


@kernel("Bincount")
def _bincount_kernel(ctx, arr, size, weights):
    size = _bins(ctx, size)
    if weights.size and weights.shape != arr.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, "If weights are passed, they must have the same shape (%s) as arr "
            "(%s)" % (list(weights.shape), list(arr.shape)))
    flat = arr.reshape(-1)
    if flat.size and flat.min() < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Input arr must be non-negative!")
    keep = flat < size  # values at or beyond size are dropped
    w = weights.reshape(-1)[keep] if weights.size else None
    counts = np.bincount(flat[keep], weights=w, minlength=size)[:size]
    return counts.astype(weights.dtype, copy=False)


not_differentiable("Bincount")


# --- DenseBincount: Bincount with int64 values, 2-D (per-row) counts, binary output ------
_INDEX_TYPES = (_dt.int32, _dt.int64)


def _dense_bincount_shape(op):
    arr = op.inputs[0].shape
    with_rank(op.inputs[1].shape, 0)
    size = tensor_util.constant_value(op.inputs[1])
    if size is not None and int(size) < 0:
        raise ValueError("size (%d) must be non-negative" % int(size))
    if arr.ndims is None:
        return TensorShape(None)
    if arr.ndims > 2:
        raise ValueError("Shape must be at most rank 2 but is rank %d" % arr.ndims)
    bins = None if size is None else int(size)
    return TensorShape([bins] if arr.ndims <= 1 else [arr.dims[0].value, bins])


register_op("DenseBincount", inputs=["input: Tidx", "size: Tidx", "weights: T"],
            outputs=["output: T"],
            attrs={"Tidx": TypeAttr(_INDEX_TYPES),
                   "T": TypeAttr((_dt.int32, _dt.int64, _dt.float32, _dt.float64)),
                   "binary_output": False},
            shape=_dense_bincount_shape)


@kernel("DenseBincount")
def _dense_bincount_kernel(ctx, arr, size, weights):
    size = _bins(ctx, size)
    if weights.size and weights.shape != arr.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, "`weights` must be the same shape as `arr` or a length-0 `Tensor`, "
            "in which case it acts as all weights equal to 1. Received %s"
            % list(weights.shape))
    if arr.size and arr.min() < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Input arr must be non-negative!")
    rows = arr if arr.ndim == 2 else arr.reshape(1, -1)
    if ctx.attrs["binary_output"]:  # presence of each value, whatever the weights
        counts = _row_counts(rows, size, None) != 0
    else:
        counts = _row_counts(rows, size, weights.reshape(rows.shape) if weights.size else None)
    out_shape = (rows.shape[0], size) if arr.ndim == 2 else (size,)
    return counts.reshape(out_shape).astype(weights.dtype)


def _row_counts(rows: np.ndarray, size: int, weights: Optional[np.ndarray]) -> np.ndarray:
    """[rows, size]: per row, the (weighted) count of each value below `size`."""
    counts = np.zeros((rows.shape[0], size), np.float64 if weights is not None else np.int64)
    for i, row in enumerate(rows):
        keep = row < size  # values at or beyond size are dropped
        w = weights[i][keep] if weights is not None else None
        counts[i] = np.bincount(row[keep], weights=w, minlength=size)[:size]
    return counts


not_differentiable("DenseBincount")


@tf_export("math.bincount", "bincount")
def bincount(arr, weights=None, minlength=None, maxlength=None,
             dtype=_dt.int32) -> Tensor:
    """Counts the occurrences of each value in an integer array (TF1 `tf.math.bincount`).

    The output has max(arr) + 1 bins (0 for an empty `arr`), at least `minlength` and at
    most `maxlength`; values beyond the last bin are dropped.

    Args:
      arr: an int32 or int64 Tensor of non-negative values.
      weights: None, or a Tensor of the shape of `arr`: each value adds its weight instead
        of 1.
      minlength: the least number of bins.
      maxlength: the most number of bins.
      dtype: the output dtype when `weights` is None.

    Returns:
      A 1-D Tensor of the dtype of `weights` (or `dtype`).

    Raises:
      InvalidArgumentError (at run time): a negative value in `arr`.
    """
    with _graph.name_scope(None, "bincount", [arr, weights, minlength, maxlength]):
        arr = convert_to_tensor(arr, name="arr")
        if arr.dtype.base_dtype == _dt.int64:  # TF 2's bincount counts int64 values too
            arr = math_ops.cast(arr, _dt.int32)
        arr = convert_to_tensor(arr, dtype=_dt.int32, name="arr")
        static = tensor_util.constant_value(arr)
        bounds = (minlength, maxlength)
        if static is not None and not any(isinstance(b, Tensor) for b in bounds):
            size = int(static.max()) + 1 if static.size else 0
            if minlength is not None:
                size = max(int(minlength), size)
            if maxlength is not None:
                size = min(int(maxlength), size)
            output_size = convert_to_tensor(np.int32(size), name="output_size")
        else:
            from tensorweave.ops.array import array_ops
            nonempty = math_ops.cast(math_binary.greater(array_ops.size(arr), 0), _dt.int32)
            output_size = math_binary.multiply(
                nonempty, math_binary.add(reduction_ops.reduce_max(arr), 1))
            if minlength is not None:
                output_size = math_binary.maximum(
                    convert_to_tensor(minlength, dtype=_dt.int32), output_size)
            if maxlength is not None:
                output_size = math_binary.minimum(
                    convert_to_tensor(maxlength, dtype=_dt.int32), output_size)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
        else:
            weights = convert_to_tensor(np.zeros([0], _dt.as_dtype(dtype).as_numpy_dtype))
        return apply_op("Bincount", [arr, output_size, weights],
                        name="Bincount").outputs[0]


# --- compositions ---------------------------------------------------------------------------
@tf_export("math.polyval")
def polyval(coeffs, x, name: Optional[str] = None) -> Tensor:
    """Evaluates the polynomial coeffs[0] x^(n-1) + ... + coeffs[n-1] by Horner's rule
    (TF1 `tf.math.polyval`).

    Args:
      coeffs: a list of Tensors (or values), highest power first.
      x: a Tensor.
      name: name scope (default "polyval").

    Returns:
      A Tensor of the dtype of `x` (zeros like `x` for an empty `coeffs`).

    Raises:
      ValueError: `coeffs` is not a list.
    """
    from tensorweave.ops.array import array_fill_ops
    if not isinstance(coeffs, list):
        raise ValueError("Argument coeffs must be list type found {}.".format(type(coeffs)))
    with _graph.name_scope(name, "polyval", [x] + coeffs):
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return array_fill_ops.zeros_like(x, name=name)
        coeffs = [convert_to_tensor(c, dtype=x.dtype, name="coeffs_%d" % i)
                  for i, c in enumerate(coeffs)]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = math_binary.add(c, math_binary.multiply(p, x))
        return p


@tf_export("math.zero_fraction", "nn.zero_fraction")
def zero_fraction(value, name: Optional[str] = None) -> Tensor:
    """The fraction of zeros in `value`, as float32 (TF1 `tf.math.zero_fraction`); NaN
    for an empty tensor.

    Args:
      value: a numeric Tensor.
      name: name scope (default "zero_fraction").

    Returns:
      A float32 scalar.
    """
    from tensorweave.ops.array import array_ops
    with _graph.name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zero = convert_to_tensor(np.zeros((), value.dtype.as_numpy_dtype))
        zeros = reduction_ops.reduce_sum(math_ops.cast(math_binary.equal(value, zero),
                                                       _dt.int64))
        size = math_ops.cast(array_ops.size(value, out_type=_dt.int64), _dt.float64)
        fraction = math_binary.realdiv(math_ops.cast(zeros, _dt.float64), size)
        return math_ops.cast(fraction, _dt.float32, name="fraction")


def _monotonic(x, name, default_name, compare) -> Tensor:
    from tensorweave.ops.array import array_ops
    with _graph.name_scope(name, default_name, [x]):
        x = convert_to_tensor(x, name="x")
        if not (x.dtype.is_floating or x.dtype.is_integer or x.dtype.is_complex):
            raise TypeError("Expected x to be numeric, instead found: %s" % x)
        flat = array_ops.reshape(x, [-1])
        diff = math_binary.subtract(flat[1:], flat[:-1])  # empty for fewer than 2 values
        zero = convert_to_tensor(0, dtype=diff.dtype)
        return reduction_ops.reduce_all(compare(zero, diff))


@tf_export("math.is_non_decreasing", "is_non_decreasing", "debugging.is_non_decreasing")
def is_non_decreasing(x, name: Optional[str] = None) -> Tensor:
    """Whether x[i] <= x[i + 1] over the flattened `x` (TF1 `tf.math.is_non_decreasing`);
    True for fewer than two elements.

    Args:
      x: a numeric Tensor.
      name: name scope (default "is_non_decreasing").

    Returns:
      A bool scalar.

    Raises:
      TypeError: `x` is not numeric.
    """
    return _monotonic(x, name, "is_non_decreasing", math_binary.less_equal)


@tf_export("math.is_strictly_increasing", "is_strictly_increasing",
           "debugging.is_strictly_increasing")
def is_strictly_increasing(x, name: Optional[str] = None) -> Tensor:
    """Whether x[i] < x[i + 1] over the flattened `x` (TF1
    `tf.math.is_strictly_increasing`); True for fewer than two elements.

    Args:
      x: a numeric Tensor.
      name: name scope (default "is_strictly_increasing").

    Returns:
      A bool scalar.

    Raises:
      TypeError: `x` is not numeric.
    """
    return _monotonic(x, name, "is_strictly_increasing", math_binary.less)
