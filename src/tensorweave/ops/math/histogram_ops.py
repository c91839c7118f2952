"""Binning values: histograms with equal-width bins, HistogramFixedWidth
(`tf.histogram_fixed_width`) and `tf.histogram_fixed_width_bins` (a composition: the bin
index of each value); and Bucketize, the bucket of each value among sorted boundaries
(what a bucketized feature column computes).

Values below value_range[0] count in the first bin, values at or above value_range[1]
in the last, as in TF.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (TypeAttr, kernel, not_differentiable,
                                             register_op)
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.framework.tensor_util import constant_value

_VALUE_TYPES = (_dt.int32, _dt.int64, _dt.float32, _dt.float64)


def _histogram_shape(op) -> TensorShape:
    with_rank(op.inputs[1].shape, 1)
    with_rank(op.inputs[2].shape, 0)
    nbins = constant_value(op.inputs[2])
    if nbins is not None and int(nbins) < 0:
        raise ValueError("Dimension size, given by scalar input 2, must be non-negative but "
                         "is %d for '%s' (op: 'HistogramFixedWidth')" % (int(nbins), op.name))
    return TensorShape([None if nbins is None else int(nbins)])


register_op("HistogramFixedWidth", inputs=["values: T", "value_range: T", "nbins: int32"],
            outputs=["out: dtype"],
            attrs={"T": TypeAttr(_VALUE_TYPES),
                   "dtype": TypeAttr((_dt.int32, _dt.int64), default=_dt.int32)},
            shape=_histogram_shape)
not_differentiable("HistogramFixedWidth")


def _bin_indices(ctx, values, value_range, nbins):
    """The bin of each value (float64 arithmetic, as TF's kernel), checking inputs."""
    xp = ctx.xp
    nbins = int(nbins)
    if nbins <= 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "nbins should be a positive number, but got '%d'" % nbins)
    if value_range.shape != (2,):
        raise errors.InvalidArgumentError(
            None, ctx.op, "value_range should be a vector of 2 elements, got shape %s"
            % list(value_range.shape))
    lo, hi = value_range.tolist()
    if not lo < hi:
        raise errors.InvalidArgumentError(
            None, ctx.op, "value_range should satisfy value_range[0] < value_range[1], but "
            "got '[%s, %s]'" % (lo, hi))
    v = values.reshape(-1).astype(np.float64)
    if xp.isnan(v).any():
        raise errors.InvalidArgumentError(None, ctx.op,
                                          "Histogram values must not contain NaN")
    step = (float(hi) - float(lo)) / nbins
    idx = xp.floor((xp.maximum(v, lo) - lo) / step)
    return xp.minimum(idx, nbins - 1).astype(np.int64), nbins


@kernel("HistogramFixedWidth")
def _histogram_kernel(ctx, values, value_range, nbins):
    idx, n = _bin_indices(ctx, values, value_range, nbins)
    out = _dt.as_dtype(ctx.attrs["dtype"]).as_numpy_dtype
    return ctx.xp.bincount(idx, minlength=n).astype(out)


@tf_export("histogram_fixed_width")
def histogram_fixed_width(values, value_range, nbins=100, dtype=_dt.int32,
                          name: Optional[str] = None) -> Tensor:
    """Counts `values` into `nbins` equal-width bins spanning `value_range`.

    Args:
      values: a numeric Tensor.
      value_range: a Tensor [lo, hi] of the type of `values`; values below lo go to
        the first bin, values >= hi to the last.
      nbins: an int32 scalar, the number of bins (> 0).
      dtype: the output type, int32 or int64.
      name: op name.

    Returns:
      A 1-D Tensor of `nbins` counts of type `dtype`.

    Raises:
      InvalidArgumentError: at run time, nbins <= 0, lo >= hi or a NaN value.
    """
    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        return apply_op("HistogramFixedWidth", [values, value_range, nbins],
                        {"dtype": _dt.as_dtype(dtype)}, name=scope).outputs[0]


@tf_export("histogram_fixed_width_bins")
def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dt.int32,
                               name: Optional[str] = None) -> Tensor:
    """The bin index of each element of `values` for `nbins` equal-width bins spanning
    `value_range` (values outside go to the first or last bin).

    Args:
      values: a numeric Tensor.
      value_range: a Tensor [lo, hi] of the type of `values`.
      nbins: an int32 scalar, the number of bins.
      dtype: accepted as TF1 does; the result is int32 (as TF1's).
      name: name scope.

    Returns:
      An int32 Tensor of the shape of `values`.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        shape = array_ops.shape(values)
        values = array_ops.reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=_dt.int32, name="nbins")
        nbins_float = math_ops.cast(nbins, values.dtype)
        scaled = math_binary.truediv(values - value_range[0], value_range[1] - value_range[0],
                                  name="scaled_values")
        indices = math_unary.floor(nbins_float * scaled, name="indices")
        indices = math_ops.cast(math_ops.clip_by_value(indices, 0, nbins_float - 1),
                                _dt.int32)
        return array_ops.reshape(indices, shape)


# --- Bucketize ---------------------------------------------------------------------------
register_op("Bucketize", inputs=["input: T"], outputs=["output: int32"],
            attrs={"T": TypeAttr(_VALUE_TYPES), "boundaries": []},
            shape=lambda op: op.inputs[0].shape)
not_differentiable("Bucketize")


@kernel("Bucketize")
def _bucketize_kernel(ctx, x):
    # the number of boundaries <= each value (TF's upper bound); NaN sorts after them all
    boundaries = np.asarray(ctx.attrs["boundaries"], dtype=np.float64)
    return ctx.xp.searchsorted(boundaries, x.astype(np.float64), side="right") \
        .astype(np.int32).reshape(x.shape)


def bucketize(values, boundaries, name: Optional[str] = None) -> Tensor:
    """The bucket of each of `values`: the number of `boundaries` (sorted floats) less than
    or equal to it, so bucket i holds [boundaries[i-1], boundaries[i]).

    Raises:
      ValueError: boundaries that are not sorted.
    """
    boundaries = [float(b) for b in boundaries]
    if any(b > c for b, c in zip(boundaries, boundaries[1:])):
        raise ValueError("Expected sorted 'boundaries'")
    return apply_op("Bucketize", [values], {"boundaries": boundaries},
                    name=name or "Bucketize").outputs[0]
