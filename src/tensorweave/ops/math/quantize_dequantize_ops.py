"""Simulated quantization of floats (TF1 `tf.quantization.quantize_and_dequantize` and
`quantize_and_dequantize_v2`): QuantizeAndDequantizeV2, QuantizeAndDequantizeV4 and
QuantizeAndDequantizeV4Grad.

The values are scaled onto the integer levels of `num_bits` bits (signed: -2^(b-1) ..
2^(b-1) - 1, the lowest left out with `narrow_range`; unsigned: 0 .. 2^b - 1), rounded
(`round_mode` HALF_TO_EVEN or HALF_UP) and scaled back. The scale is the largest one that
keeps 0 at 0 and maps the range [min, max] into the levels; the range is the given one
(`range_given`, values clamped to it) or the input's own, per slice along `axis` if set.
The arithmetic is in the input's type, as TF's kernels do (quantize_and_dequantize_op.h).

V2 and V4 compute the same; their gradients differ: V2's passes the incoming gradient
through unchanged (straight-through), V4's (QuantizeAndDequantizeV4Grad) passes it only
where the input lies inside [input_min, input_max] and gives zeros to min and max (and,
as TF registers none, has no gradient itself: LookupError).

As TF 2.21: float32 and float64 run (half and bfloat16 have no CPU kernel), and a range
given together with `axis` fails when the op runs ("input_min must be a scalar.").
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, with_rank, \
    with_rank_at_least
from tensorweave.ops.array.array_util import merge_shapes
from tensorweave.ops.math.quantize_ops import check_string_attr, no_gradient, python_axis

_TYPES = (_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64)
_ROUND_MODES = ("HALF_TO_EVEN", "HALF_UP")
_ATTRS = {"signed_input": True, "num_bits": 8, "range_given": False,
          "T": TypeAttr(_TYPES), "round_mode": "HALF_TO_EVEN", "narrow_range": False,
          "axis": -1}


def _invalid(ctx, message: str):
    return errors.InvalidArgumentError(None, ctx.op, message)


def _number_str(v) -> str:
    """A float as TF's StrCat prints it: the shortest of 6 or 9 (float32) / 15 or 17
    (float64) significant digits that reads back."""
    short, full = (6, 9) if np.asarray(v).dtype == np.float32 else (15, 17)
    text = "%.*g" % (short, v)
    return text if type(v)(text) == v else "%.*g" % (full, v)


# --- the arithmetic, in the input's type -----------------------------------------------------
def _levels(attrs):
    """(lowest, highest) integer level for the num_bits, signed_input, narrow_range attrs."""
    bits = attrs["num_bits"]
    if not attrs["signed_input"]:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)) + (1 if attrs["narrow_range"] else 0), (1 << (bits - 1)) - 1


def _scale(lo, hi, levels):
    """(scale, inverse scale, min, max): the largest scale keeping 0 at 0 with [lo, hi]
    inside the levels, and the range it actually covers (TF's ComputeQuantizationRange)."""
    t = type(lo)
    low_level, high_level = levels
    big = t(np.finfo(t).max)
    from_min = t(low_level) / lo if t(low_level) * lo > 0 else big
    from_max = t(high_level) / hi if t(high_level) * hi > 0 else big
    if from_min < from_max:  # the side that sets the scale keeps its end
        inverse = lo / t(low_level)
        return from_min, inverse, lo, t(high_level) * inverse
    inverse = hi / t(high_level)
    return from_max, inverse, t(low_level) * inverse, hi


def _round(x, round_mode: str):
    return np.rint(x) if round_mode == "HALF_TO_EVEN" else np.floor(x + x.dtype.type(0.5))


def _quantize_dequantize_slice(x, lo, hi, attrs):
    scale, inverse, lo, hi = _scale(lo, hi, _levels(attrs))
    if attrs["range_given"]:  # clamped so that the levels do not overflow; as C's
        # std::min then std::max (a NaN stays, 0.0 clamped at -0.0 stays 0.0, and with
        # max < min every value ends at min)
        x = np.where(hi < x, hi, x)
        x = np.where(x < lo, lo, x)
    return _round(x * scale, attrs["round_mode"]) * inverse


def _check_kernel(ctx, x) -> None:
    """TF's checks when the kernel is built and when it starts."""
    attrs = ctx.attrs
    if attrs["T"] in (_dt.bfloat16, _dt.float16):
        type_name = "HALF" if attrs["T"] == _dt.float16 else "BFLOAT16"
        raise _invalid(ctx, "No OpKernel was registered to support Op '%s' with these "
                       "attrs: [T=DT_%s] on CPU" % (ctx.op.type, type_name))
    bits, signed = attrs["num_bits"], attrs["signed_input"]
    if not 0 < bits < (62 if signed else 63):
        raise _invalid(ctx, "num_bits is out of range: %d with signed_input_ %d"
                       % (bits, signed))
    if attrs["axis"] >= np.ndim(x):
        raise _invalid(ctx, "Axis is out of bounds: %d for input of rank %d"
                       % (attrs["axis"], np.ndim(x)))


def _given_range(ctx, lo, hi):
    lo, hi = np.asarray(lo), np.asarray(hi)
    if lo.ndim != 0:  # with `axis` too: TF 2.21 takes only a scalar range as given
        raise _invalid(ctx, "input_min must be a scalar.")
    if hi.ndim != 0:
        raise _invalid(ctx, "input_max must be a scalar.")
    if lo > hi:
        raise _invalid(ctx, "Invalid range: input_min %s > input_max %s"
                       % (_number_str(lo[()]), _number_str(hi[()])))
    return lo[()], hi[()]


def _quantize_dequantize_kernel(ctx, x, lo, hi):
    _check_kernel(ctx, x)
    attrs = ctx.attrs
    x = np.asarray(x)
    if attrs["range_given"]:
        lo, hi = _given_range(ctx, lo, hi)
        return _quantize_dequantize_slice(x, lo, hi, attrs)
    axis = attrs["axis"]
    if axis == -1:
        return _quantize_dequantize_slice(x, x.min(), x.max(), attrs)
    moved = np.moveaxis(x, axis, 0)
    out = [_quantize_dequantize_slice(s, s.min(), s.max(), attrs) for s in moved]
    return np.moveaxis(np.stack(out), 0, axis).astype(x.dtype, copy=False)


def _backward_kernel(ctx, g, x, lo, hi):
    """Gradient where `x` lies in [lo, hi] (per slice along `axis`), zeros for the range."""
    axis = ctx.attrs["axis"]
    g, x, lo, hi = (np.asarray(v) for v in (g, x, lo, hi))
    if g.shape != x.shape:
        raise _invalid(ctx, "gradient and input must be the same size")
    if axis >= x.ndim:
        raise _invalid(ctx, "Axis requested is larger than input dimensions. Axis: %d "
                       "Input Dimensions: %d" % (axis, x.ndim))
    channels = 1 if axis == -1 else x.shape[axis]
    for name, value in (("input_min", lo), ("input_max", hi)):
        if value.size != channels:
            raise _invalid(ctx, "%s has incorrect size, expected %d was %d"
                           % (name, channels, value.size))
    bounds = (lo, hi)
    if axis != -1:  # the ranges along `axis`, broadcast over the other dimensions
        where = [1] * x.ndim
        where[axis] = channels
        bounds = (lo.reshape(where), hi.reshape(where))
    inside = ((x >= bounds[0]) & (x <= bounds[1])).astype(x.dtype)
    return [g * inside, np.zeros_like(lo), np.zeros_like(hi)]


# --- shapes and registration ------------------------------------------------------------------
def _minmax_shape(op, lo_index: int, x_shape: TensorShape) -> TensorShape:
    """TF's: min and max of one shape, scalars or with `axis` vectors of that dimension."""
    axis = op.get_attr("axis")
    rank = 0 if axis == -1 else 1
    minmax = with_rank(op.inputs[lo_index].shape, rank)
    minmax = TensorShape(merge_shapes(op.inputs[lo_index + 1].shape.as_list()
                                      if op.inputs[lo_index + 1].shape.ndims is not None
                                      else None, minmax.as_list()))
    if axis < -1:
        raise ValueError("axis should be at least -1, got %d" % axis)
    if axis != -1:
        x = with_rank_at_least(x_shape, axis + 1)
        merge_dim(minmax.as_list()[0], x.as_list()[axis] if x.ndims is not None else None)
    return minmax


def _forward_shape(op) -> TensorShape:
    _minmax_shape(op, 1, op.inputs[0].shape)
    return op.inputs[0].shape


def _backward_shape(op):
    g, x = op.inputs[0].shape, op.inputs[1].shape
    merged = TensorShape(merge_shapes(g.as_list() if g.ndims is not None else None,
                                      x.as_list() if x.ndims is not None else None))
    minmax = _minmax_shape(op, 2, merged)
    return [merged, minmax, minmax]


_FORWARD_INPUTS = ["input: T", "input_min: T", "input_max: T"]
for _op_type in ("QuantizeAndDequantizeV2", "QuantizeAndDequantizeV4"):
    register_op(_op_type, inputs=_FORWARD_INPUTS, outputs=["output: T"], attrs=_ATTRS,
                shape=_forward_shape)
    kernel(_op_type)(_quantize_dequantize_kernel)
register_op("QuantizeAndDequantizeV4Grad",
            inputs=["gradients: T", "input: T", "input_min: T", "input_max: T"],
            outputs=["input_backprop: T", "input_min_backprop: T", "input_max_backprop: T"],
            attrs={"T": TypeAttr(_TYPES), "axis": -1}, shape=_backward_shape)
kernel("QuantizeAndDequantizeV4Grad")(_backward_kernel)
gradient("QuantizeAndDequantizeV4Grad")(no_gradient)


@gradient("QuantizeAndDequantizeV2")
def _straight_through_grad(op, grad):
    return [grad, None, None]


@gradient("QuantizeAndDequantizeV4")
def _inside_range_grad(op, grad):
    return list(apply_op("QuantizeAndDequantizeV4Grad", [grad] + list(op.inputs),
                         {"axis": op.get_attr("axis")},
                         name="QuantizeAndDequantizeV4Grad").outputs)


# --- public builders ------------------------------------------------------------------------
def _build(op_type: str, input, input_min, input_max, signed_input, num_bits,  # noqa: A002
           range_given, round_mode, name, narrow_range, axis) -> Tensor:
    check_string_attr(op_type, "round_mode", round_mode, _ROUND_MODES)
    for arg, value in (("signed_input", signed_input), ("range_given", range_given),
                       ("narrow_range", narrow_range)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError("Expected bool for argument '%s' not %r." % (arg, value))
    attrs = {"signed_input": bool(signed_input), "num_bits": int(num_bits),
             "range_given": bool(range_given), "round_mode": round_mode,
             "narrow_range": bool(narrow_range), "axis": python_axis(input, axis)}
    return apply_op(op_type, [input, input_min, input_max], attrs,
                    name=name or op_type).outputs[0]


@tf_export("quantization.quantize_and_dequantize")
def quantize_and_dequantize(input, input_min, input_max, signed_input=True,  # noqa: A002
                            num_bits=8, range_given=False, round_mode="HALF_TO_EVEN",
                            name: Optional[str] = None, narrow_range=False,
                            axis: Optional[int] = None) -> Tensor:
    """Quantizes then dequantizes `input` (see the module docstring); the gradient passes
    straight through.

    Args:
      input: a float Tensor.
      input_min, input_max: the range when `range_given` (scalars; vectors along `axis`).
      signed_input: signed levels (else 0 .. 2^num_bits - 1).
      num_bits: the bits of the levels.
      range_given: use [input_min, input_max] (else the input's own min and max).
      round_mode: "HALF_TO_EVEN" or "HALF_UP".
      name: op name.
      narrow_range: leave out the lowest signed level.
      axis: the dimension whose slices are quantized on their own (None: all together).

    Returns:
      A Tensor of the type and shape of `input`.
    """
    return _build("QuantizeAndDequantizeV2", input, input_min, input_max, signed_input,
                  num_bits, range_given, round_mode, name, narrow_range, axis)


@tf_export("quantization.quantize_and_dequantize_v2")
def quantize_and_dequantize_v2(input, input_min, input_max, signed_input=True,  # noqa: A002
                               num_bits=8, range_given=False, round_mode="HALF_TO_EVEN",
                               name: Optional[str] = None, narrow_range=False,
                               axis: Optional[int] = None) -> Tensor:
    """As `quantize_and_dequantize` (same arguments and values), with a gradient that is
    0 where `input` lies outside [input_min, input_max]."""
    return _build("QuantizeAndDequantizeV4", input, input_min, input_max, signed_input,
                  num_bits, range_given, round_mode, name, narrow_range, axis)
