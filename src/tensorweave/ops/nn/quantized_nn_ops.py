"""TF1's quantized neural-network ops (`tf.nn.quantized_avg_pool`, `quantized_conv2d`,
`quantized_max_pool`, `quantized_relu_x`, and the raw QuantizedRelu, QuantizedRelu6 and
QuantizedBiasAdd of quantized inference graphs), on the integers of quantized tensors
with TF's exact arithmetic (the range helpers live in ops/math/quantized_math_ops.py).

  QuantizedMaxPool, QuantizedAvgPool   NHWC pooling of quint8/qint8 levels; the range
      passes through. The average is an int32 sum over the real (unpadded) cells divided
      by their count, truncated as C does.
  QuantizedRelu, QuantizedRelu6, QuantizedReluX   levels clamped to those of 0.0 (and of
      6.0 or max_value) in the input's range (quint8 -> quint8, qint32 -> qint32). TF
      2.21 ships no kernel for QuantizedReluX; this is TF 1.x's kernel, QuantizedRelu6's
      arithmetic with max_value for 6.
  QuantizedConv2D   quint8 x quint8 -> qint32: the sum of (input - level of 0) *
      (filter - level of 0) with int32 wrap-around, range from the product of the levels'
      widths. As TF's kernel: one stride (rows = columns), no dilation, and TF's window
      origin, ((out - 1) * stride + k - in) / 2 cells before the input (+ 1 before
      halving for VALID), in C's integer division: a SAME stride that overshoots the
      input by 2 or more starts its windows inside it.
  QuantizedBiasAdd   input and bias moved into a common qint32 range symmetric about 0
      (the widest input magnitude times 2^17) and added.
"""
from __future__ import annotations

import collections
import types
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, TypeAttr, kernel, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, with_rank, \
    with_rank_at_least
from tensorweave.ops.math.quantize_ops import _QUANTIZED, as_integers, as_quantized, \
    integer_limits
from tensorweave.ops.math.quantized_math_ops import (
    RANK_0, centred_levels, check_kernel_types, exact_product_type, float_to_quantized,
    float_to_quantized_unclamped, invalid, product_range, range_outputs, register_no_gradients,
    requantize_levels, scalar_range_shape, scalars, shape_str, wrap_to_int32)
from tensorweave.ops.nn.conv_ops import Window, _check_enum, _conv2d_shape, conv2d_nhwc, \
    make_window
from tensorweave.ops.nn.pooling_ops import _max_pool_nhwc, _window_counts, pooled_shape

_F32 = np.float32
_SCALAR = TensorShape([])
_PADDINGS = ("SAME", "VALID")


# --- QuantizedMaxPool, QuantizedAvgPool ------------------------------------------------------
def _check_window_list(op, name: str, kind: str) -> Sequence[int]:
    value = list(op._get_attr(name))
    if len(value) != 4:
        raise ValueError("%s requires the %s attribute to contain 4 values, but got: %d"
                         % (kind, name, len(value)))
    return value


def _quantized_pool_shape(kind: str):
    """TF's MaxPoolShape/AvgPoolShape (NHWC), then scalar ranges."""
    def shape_fn(op):
        padding = op._get_attr("padding")
        _check_enum(op.type, "padding", padding, _PADDINGS)
        ksize = _check_window_list(op, "ksize", kind)
        strides = _check_window_list(op, "strides", kind)
        for s in strides:
            if s <= 0:
                raise ValueError("Stride must be > 0, but got %d" % s)
        out = pooled_shape(op.inputs[0].shape, ksize, strides, padding)
        scalar_range_shape(op, 1, 2)
        return [out, _SCALAR, _SCALAR]
    return shape_fn


_POOL_INPUTS = ["input: T", "min_input: float32", "max_input: float32"]
_POOL_OUTPUTS = ["output: T", "min_output: float32", "max_output: float32"]
_POOL_ATTRS = {"T": TypeAttr(_QUANTIZED), "ksize": REQUIRED, "strides": REQUIRED,
               "padding": REQUIRED}
register_op("QuantizedMaxPool", inputs=_POOL_INPUTS,
            outputs=_POOL_OUTPUTS, attrs=_POOL_ATTRS,
            shape=_quantized_pool_shape("MaxPool"))
register_op("QuantizedAvgPool", inputs=_POOL_INPUTS,
            outputs=_POOL_OUTPUTS, attrs=_POOL_ATTRS,
            shape=_quantized_pool_shape("AvgPool"))
_POOL_KERNELS = [{"T": _dt.qint8}, {"T": _dt.quint8}]
_POOL_RANGE = "%(name)s shape must be rank 0 but is rank %(rank)d, received shape: %(shape)s"


def _pool_windows(ctx, x: np.ndarray):
    """The H and W windows, after TF's PoolParameters checks."""
    ksize, strides = list(ctx.attrs["ksize"]), list(ctx.attrs["strides"])
    if x.ndim != 4:
        raise invalid(ctx, "tensor_in_shape must have 2 spatial dimensions. %d 0" % x.ndim)
    if ksize[0] != 1 or strides[0] != 1:
        raise errors.UnimplementedError(None, ctx.op, "Pooling is not yet supported on the "
                                        "batch dimension.")
    if ksize[3] != 1:
        spatial = ksize[1] != 1 or ksize[2] != 1
        raise errors.UnimplementedError(None, ctx.op, (
            "MaxPooling supports exactly one of pooling across depth or pooling across "
            "width/height.") if spatial else "%s: pooling across the depth dimension is not "
            "supported by tensorweave (ksize %s)" % (ctx.op.type, ksize))
    if min(ksize) <= 0:
        raise invalid(ctx, "Sliding window ksize must be positive. The specified or "
                      "inferred ksize is: %s" % ",".join(str(k) for k in ksize))
    padding = ctx.attrs["padding"]
    return (make_window(x.shape[1], ksize[1], strides[1], 1, padding),
            make_window(x.shape[2], ksize[2], strides[2], 1, padding))


def _pool_levels(ctx, x, lo, hi):
    """(levels of x, windows, range outputs) for both pooling kernels."""
    check_kernel_types(ctx, _POOL_KERNELS)
    levels = as_integers(x)
    wh, ww = _pool_windows(ctx, levels)
    lo, hi = scalars(ctx, (lo, hi), ("min_input", "max_input"), _POOL_RANGE)
    return levels, wh, ww, range_outputs(lo, hi)


@kernel("QuantizedMaxPool", cheap=False)
def _quantized_max_pool_kernel(ctx, x, lo, hi):
    levels, wh, ww, ranges = _pool_levels(ctx, x, lo, hi)
    pooled = _max_pool_nhwc(levels, wh, ww)[0]
    return [as_quantized(pooled, ctx.attrs["T"])] + ranges


def _window_sums(levels: np.ndarray, wh: Window, ww: Window) -> np.ndarray:
    """int32 sums of the real cells of every window (padding adds nothing)."""
    n, h, w, c = levels.shape
    padded = np.zeros((n, wh.padded, ww.padded, c), np.int32)
    padded[:, wh.pad_before:wh.pad_before + h, ww.pad_before:ww.pad_before + w] = levels
    sums = np.zeros((n, wh.out, ww.out, c), np.int32)
    for i in range(wh.k):
        for j in range(ww.k):
            sums += padded[:, wh.tap(i), ww.tap(j)]
    return sums


@kernel("QuantizedAvgPool", cheap=False)
def _quantized_avg_pool_kernel(ctx, x, lo, hi):
    levels, wh, ww, ranges = _pool_levels(ctx, x, lo, hi)
    sums = _window_sums(levels, wh, ww)
    counts = _window_counts(wh, ww, np.int32)
    # int32 division as C does it: toward zero (qint8 sums can be negative)
    means = np.sign(sums) * (np.abs(sums) // counts)
    lowest, highest = integer_limits(ctx.attrs["T"])
    return [as_quantized(np.clip(means, lowest, highest), ctx.attrs["T"])] + ranges


# --- QuantizedRelu, QuantizedRelu6, QuantizedReluX ------------------------------------------
def _relu_shape(num_ranges: int):
    def shape_fn(op):
        scalar_range_shape(op, 1, num_ranges)
        return [op.inputs[0].shape, _SCALAR, _SCALAR]
    return shape_fn


_RELU_ATTRS = {"Tinput": TypeAttr(_QUANTIZED), "out_type": TypeAttr(_QUANTIZED,
                                                                      default=_dt.quint8)}
_RELU_OUTPUTS = ["activations: out_type", "min_activations: float32",
                 "max_activations: float32"]
_RELU_RANGES = ["min_features: float32", "max_features: float32"]
register_op("QuantizedRelu", inputs=["features: Tinput"] + _RELU_RANGES,
            outputs=_RELU_OUTPUTS, attrs=_RELU_ATTRS, shape=_relu_shape(2))
register_op("QuantizedRelu6", inputs=["features: Tinput"] + _RELU_RANGES,
            outputs=_RELU_OUTPUTS, attrs=_RELU_ATTRS, shape=_relu_shape(2))
register_op("QuantizedReluX", inputs=["features: Tinput", "max_value: float32"] + _RELU_RANGES,
            outputs=_RELU_OUTPUTS, attrs=_RELU_ATTRS, shape=_relu_shape(3))
_RELU_KERNELS = [{"Tinput": _dt.qint32, "out_type": _dt.qint32},
                 {"Tinput": _dt.quint8, "out_type": _dt.quint8}]
_RELU_RANGE = "`%(name)s` must be rank 0 but is rank %(rank)d"


def _clamped_relu(ctx, features, lo, hi, top: Optional[float]):
    """The levels of `features` clamped to those of 0.0 and `top` (None: no top)."""
    check_kernel_types(ctx, _RELU_KERNELS)
    lo, hi = scalars(ctx, (lo, hi), ("min_input", "max_input"), _RELU_RANGE)
    dtype = ctx.attrs["Tinput"]
    levels = np.maximum(as_integers(features), float_to_quantized(0.0, lo, hi, dtype))
    if top is not None:
        levels = np.minimum(levels, float_to_quantized(top, lo, hi, dtype))
    return [as_quantized(levels, ctx.attrs["out_type"])] + range_outputs(lo, hi)


@kernel("QuantizedRelu")
def _quantized_relu_kernel(ctx, features, lo, hi):
    return _clamped_relu(ctx, features, lo, hi, None)


@kernel("QuantizedRelu6")
def _quantized_relu6_kernel(ctx, features, lo, hi):
    return _clamped_relu(ctx, features, lo, hi, 6.0)


@kernel("QuantizedReluX")
def _quantized_relu_x_kernel(ctx, features, max_value, lo, hi):
    top = scalars(ctx, (max_value,), ("max_value",), _RELU_RANGE)[0]
    return _clamped_relu(ctx, features, lo, hi, top)


# --- QuantizedConv2D --------------------------------------------------------------------------
def _quantized_conv_shape(op):
    """Conv2D's shape function on an NHWC view of the op (QuantizedConv2D has no
    data_format attr), then scalar ranges."""
    _check_enum(op.type, "padding", op._get_attr("padding"), _PADDINGS)
    # TF's Conv2DShape messages, which the shared shape function words differently
    for name, text in (("strides", "Conv2D on data format NHWC requires the stride"),
                       ("dilations", "Conv2D requires the dilation")):
        if len(op._get_attr(name)) != 4:
            raise ValueError("%s attribute to contain 4 values, but got: %d"
                             % (text, len(op._get_attr(name))))
    for stride in op._get_attr("strides"):
        if stride <= 0:
            raise ValueError("Stride must be > 0, but got %d" % stride)
    attrs = dict(op._attrs, data_format="NHWC")
    nhwc = types.SimpleNamespace(type=op.type, inputs=op.inputs, _attrs=attrs,
                                 _get_attr=attrs.__getitem__)
    scalar_range_shape(op, 2, 4)
    return [_conv2d_shape(nhwc), _SCALAR, _SCALAR]


register_op("QuantizedConv2D",
            inputs=["input: Tinput", "filter: Tfilter", "min_input: float32",
                    "max_input: float32", "min_filter: float32", "max_filter: float32"],
            outputs=["output: out_type", "min_output: float32", "max_output: float32"],
            attrs={"Tinput": TypeAttr(_QUANTIZED), "Tfilter": TypeAttr(_QUANTIZED),
                   "out_type": TypeAttr(_QUANTIZED, default=_dt.qint32),
                   "strides": REQUIRED, "padding": REQUIRED, "dilations": [1, 1, 1, 1]},
            shape=_quantized_conv_shape)
_CONV_KERNELS = [{"Tinput": _dt.quint8, "Tfilter": _dt.quint8, "out_type": _dt.qint32}]


def _check_conv_attrs(ctx) -> int:
    """TF's kernel-construction checks; returns the one stride."""
    strides, dilations = list(ctx.attrs["strides"]), list(ctx.attrs["dilations"])
    if len(strides) != 4:
        raise invalid(ctx, "Sliding window strides field must specify 4 dimensions")
    if len(dilations) != 4:
        raise invalid(ctx, "Dilations field must specify 4 dimensions")
    checks = (
        (strides[1] == strides[2], "Current implementation only supports equal length "
                                   "strides in the row and column dimensions."),
        (strides[0] == 1 and strides[3] == 1, "Current implementation does not yet support "
                                              "strides in the batch and depth dimensions."),
        (dilations[1] == 1 and dilations[2] == 1, "Current implementation only supports "
                                                  "dilated rate as 1 in the row and column "
                                                  "dimensions."),
        (dilations[0] == 1 and dilations[3] == 1, "Current implementation does not yet "
                                                  "support dilations in the batch and depth "
                                                  "dimensions."))
    for ok, message in checks:
        if not ok:
            raise invalid(ctx, message)
    return strides[1]


def _im2col_window(size: int, k: int, stride: int, padding: str):
    """(Window over a re-padded input, cells cut from the input's start, pad before,
    pad after) reproducing TF's window origin: ((out - 1) * stride + k - size) / 2 cells
    before the input for SAME (that + 1, halved, for VALID), divided as C does (toward
    zero), so a SAME window whose stride overshoots the input starts inside it."""
    out = make_window(size, k, stride, 1, padding).out
    overshoot = (out - 1) * stride + k - size + (1 if padding == "VALID" else 0)
    before = int(overshoot / 2)
    cut = max(-before, 0)
    before = max(before, 0)
    after = max((out - 1) * stride + k - before - (size - cut), 0)
    return Window(before + size - cut + after, k, stride, 1, out, 0, 0), cut, before, after


def _conv_levels(ctx, x, f, lo_x, hi_x, lo_f, hi_f) -> np.ndarray:
    """The int32 output levels of QuantizedConv2D."""
    stride = _check_conv_attrs(ctx)
    x, f = as_integers(x), as_integers(f)
    for name, arr in (("input", x), ("filter", f)):
        if arr.ndim != 4:
            raise invalid(ctx, "%s must be rank 4 but is rank %d" % (name, arr.ndim))
    if x.shape[3] != f.shape[2]:
        raise invalid(ctx, "input and filter must have the same depth: %d vs %d"
                      % (x.shape[3], f.shape[2]))
    padding = ctx.attrs["padding"]
    (wh, cut_h, top, bottom), (ww, cut_w, left, right) = (
        _im2col_window(x.shape[1], f.shape[0], stride, padding),
        _im2col_window(x.shape[2], f.shape[1], stride, padding))
    if 0 in (x.shape[0], wh.out, ww.out, f.shape[3]):
        # TF's kernel aborts the process (CHECK_GT) on an empty output
        raise invalid(ctx, "QuantizedConv2D: an empty output (shape %s) is not supported"
                      % shape_str([x.shape[0], wh.out, ww.out, f.shape[3]]))
    offset = int(float_to_quantized_unclamped(0.0, lo_x, hi_x, _dt.quint8))
    centred = centred_levels(x[:, cut_h:, cut_w:], lo_x, hi_x, _dt.quint8)
    # TF's im2col fills the border with the input's zero level stored as quint8 (its low
    # byte); with a negative zero level its reference path reads the border as 0.
    border = 0 if offset < 0 else (offset & 0xFF) - offset
    padded = np.pad(centred, ((0, 0), (top, bottom), (left, right), (0, 0)),
                    constant_values=border)
    filt = centred_levels(f, lo_f, hi_f, _dt.quint8)
    compute = exact_product_type(padded, filt, f.shape[0] * f.shape[1] * f.shape[2])
    product = conv2d_nhwc(padded.astype(compute), filt.astype(compute), wh, ww)
    return wrap_to_int32(product)


@kernel("QuantizedConv2D", cheap=False)
def _quantized_conv2d_kernel(ctx, x, f, lo_x, hi_x, lo_f, hi_f):
    check_kernel_types(ctx, _CONV_KERNELS)
    lo_x, hi_x, lo_f, hi_f = scalars(ctx, (lo_x, hi_x, lo_f, hi_f), (
        "min_input", "max_input", "min_filter", "max_filter"), RANK_0)
    levels = _conv_levels(ctx, x, f, lo_x, hi_x, lo_f, hi_f)
    lo, hi = product_range((lo_x, hi_x), _dt.quint8, (lo_f, hi_f), _dt.quint8, _dt.qint32)
    return [as_quantized(levels, _dt.qint32)] + range_outputs(lo, hi)


# --- QuantizedBiasAdd -------------------------------------------------------------------------
def _quantized_bias_add_shape(op):
    x = with_rank_at_least(op.inputs[0].shape, 2)
    bias = with_rank(op.inputs[1].shape, 1)
    last = merge_dim(x.as_list()[-1] if x.ndims is not None else None, bias.as_list()[0])
    scalar_range_shape(op, 2, 4)
    out = TensorShape(x.as_list()[:-1] + [last]) if x.ndims is not None else x
    return [out, _SCALAR, _SCALAR]


register_op("QuantizedBiasAdd",
            inputs=["input: T1", "bias: T2", "min_input: float32", "max_input: float32",
                    "min_bias: float32", "max_bias: float32"],
            outputs=["output: out_type", "min_out: float32", "max_out: float32"],
            attrs={"T1": TypeAttr(_QUANTIZED), "T2": TypeAttr(_QUANTIZED),
                   "out_type": TypeAttr(_QUANTIZED)},
            shape=_quantized_bias_add_shape)
_BIAS_ADD_KERNELS = [{"T1": _dt.qint8, "T2": _dt.qint8, "out_type": _dt.qint32},
                     {"T1": _dt.quint8, "T2": _dt.quint8, "out_type": _dt.qint32}]


def _check_bias(ctx, x: np.ndarray, bias: np.ndarray) -> None:
    if x.ndim < 2:
        raise invalid(ctx, "Input tensor must be at least 2D: %s" % shape_str(x.shape))
    if bias.ndim != 1:
        raise invalid(ctx, "Biases must be 1D: %s" % shape_str(bias.shape))
    if bias.shape[0] != x.shape[-1]:
        raise invalid(ctx, "Must provide as many biases as the last dimension of the input "
                      "tensor: %s vs. %s" % (shape_str(bias.shape), shape_str(x.shape)))


@kernel("QuantizedBiasAdd", cheap=False)
def _quantized_bias_add_kernel(ctx, x, bias, lo_x, hi_x, lo_b, hi_b):
    check_kernel_types(ctx, _BIAS_ADD_KERNELS)
    lo_x, hi_x, lo_b, hi_b = scalars(ctx, (lo_x, hi_x, lo_b, hi_b), (
        "min_input", "max_input", "min_bias", "max_bias"), RANK_0)
    x, bias = as_integers(x), as_integers(bias)
    _check_bias(ctx, x, bias)
    # symmetric about 0, room for the widest input and 2^17 levels of headroom
    hi = _F32(max(hi_x, -lo_x, hi_b, -lo_b) * _F32(1 << 17))
    total = (-hi, hi)
    in_type = ctx.attrs["T1"]
    zero = float_to_quantized(0.0, -hi, hi, _dt.qint32).astype(np.int32)
    with np.errstate(over="ignore"):  # int32 sums wrap as TF's do
        out = (requantize_levels(x, in_type, (lo_x, hi_x), _dt.qint32, total)
               + (requantize_levels(bias, in_type, (lo_b, hi_b), _dt.qint32, total) + zero))
    return [as_quantized(out, _dt.qint32)] + range_outputs(-hi, hi)


register_no_gradients("QuantizedMaxPool", "QuantizedAvgPool", "QuantizedRelu",
                      "QuantizedRelu6", "QuantizedReluX", "QuantizedConv2D", "QuantizedBiasAdd")


# --- public builders (tf.nn) --------------------------------------------------------------------
QuantizedAvgPool = collections.namedtuple("QuantizedAvgPool",
                                          ["output", "min_output", "max_output"])
QuantizedMaxPool = collections.namedtuple("QuantizedMaxPool",
                                          ["output", "min_output", "max_output"])
QuantizedConv2D = collections.namedtuple("QuantizedConv2D",
                                         ["output", "min_output", "max_output"])
QuantizedReluX = collections.namedtuple("QuantizedReluX",
                                        ["activations", "min_activations", "max_activations"])


def _int_list(value, arg: str, op_name: str):
    if not isinstance(value, (list, tuple)):
        raise TypeError("Expected list for '%s' argument to '%s' Op, not %r."
                        % (arg, op_name, value))
    return [int(v) for v in value]


def _pool(op_type, result, input, min_input, max_input, ksize, strides,  # noqa: A002
          padding, name):
    wrapper = "quantized_%s" % ("avg_pool" if op_type == "QuantizedAvgPool" else "max_pool")
    attrs = {"ksize": _int_list(ksize, "ksize", wrapper),
             "strides": _int_list(strides, "strides", wrapper), "padding": padding}
    op = apply_op(op_type, [input, min_input, max_input], attrs, name=name or op_type)
    return result(*op.outputs)


@tf_export("nn.quantized_avg_pool")
def quantized_avg_pool(input, min_input, max_input, ksize, strides, padding,  # noqa: A002
                       name: Optional[str] = None) -> QuantizedAvgPool:
    """Average pooling of a quantized NHWC tensor (quint8 or qint8 run, as in TF).

    Args:
      input: a 4-D quantized Tensor [batch, height, width, channels].
      min_input, max_input: float32 scalars, the range the input's levels stand for.
      ksize, strides: lists of 4 ints (the batch and depth entries 1).
      padding: "SAME" or "VALID".
      name: op name.

    Returns:
      A namedtuple (output, min_output, max_output): the pooled levels (truncated
      integer means of the real cells) and the input's range.

    Raises:
      ValueError: a rank other than 4, ranges not scalars, bad ksize/strides/padding.
    """
    return _pool("QuantizedAvgPool", QuantizedAvgPool, input, min_input, max_input, ksize,
                 strides, padding, name)


@tf_export("nn.quantized_max_pool")
def quantized_max_pool(input, min_input, max_input, ksize, strides, padding,  # noqa: A002
                       name: Optional[str] = None) -> QuantizedMaxPool:
    """Max pooling of a quantized NHWC tensor (quint8 or qint8 run, as in TF).

    Args:
      input: a 4-D quantized Tensor [batch, height, width, channels].
      min_input, max_input: float32 scalars, the range the input's levels stand for.
      ksize, strides: lists of 4 ints (the batch and depth entries 1).
      padding: "SAME" or "VALID".
      name: op name.

    Returns:
      A namedtuple (output, min_output, max_output): the pooled levels and the input's
      range.

    Raises:
      ValueError: a rank other than 4, ranges not scalars, bad ksize/strides/padding.
    """
    return _pool("QuantizedMaxPool", QuantizedMaxPool, input, min_input, max_input, ksize,
                 strides, padding, name)


@tf_export("nn.quantized_conv2d")
def quantized_conv2d(input, filter, min_input, max_input, min_filter,  # noqa: A002
                     max_filter, strides, padding, out_type=_dt.qint32,
                     dilations=(1, 1, 1, 1), name: Optional[str] = None) -> QuantizedConv2D:
    """2-D convolution of quantized tensors (quint8 x quint8 -> qint32 runs, as in TF).

    Args:
      input: a 4-D quantized Tensor [batch, height, width, in_channels].
      filter: a 4-D quantized Tensor [height, width, in_channels, out_channels].
      min_input, max_input, min_filter, max_filter: float32 scalars, the ranges.
      strides: 4 ints, equal for rows and columns, 1 for batch and depth.
      padding: "SAME" or "VALID".
      out_type: the output's quantized type (qint32).
      dilations: 4 ints, all 1 (TF's kernel has no dilation).
      name: op name.

    Returns:
      A namedtuple (output, min_output, max_output): the accumulated products and the
      range one output level stands for.

    Raises:
      ValueError: bad ranks, depths, strides or padding.
    """
    attrs = {"strides": _int_list(strides, "strides", "quantized_conv2d"),
             "padding": padding, "out_type": out_type,
             "dilations": _int_list(dilations, "dilations", "quantized_conv2d")}
    op = apply_op("QuantizedConv2D", [input, filter, min_input, max_input, min_filter,
                                      max_filter], attrs, name=name or "QuantizedConv2D")
    return QuantizedConv2D(*op.outputs)


@tf_export("nn.quantized_relu_x")
def quantized_relu_x(features, max_value, min_features, max_features,
                     out_type=_dt.quint8, name: Optional[str] = None) -> QuantizedReluX:
    """min(max(features, 0), max_value) on quantized levels (quint8 -> quint8 and
    qint32 -> qint32; TF 1.x's kernel, which TF 2.21 no longer ships).

    Args:
      features: a quantized Tensor.
      max_value: a float32 scalar, the upper bound.
      min_features, max_features: float32 scalars, the range of `features`.
      out_type: the output's quantized type (that of `features`).
      name: op name.

    Returns:
      A namedtuple (activations, min_activations, max_activations); the range is the
      input's.
    """
    op = apply_op("QuantizedReluX", [features, max_value, min_features, max_features],
                  {"out_type": out_type}, name=name or "QuantizedReluX")
    return QuantizedReluX(*op.outputs)
