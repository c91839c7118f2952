"""Fake quantization (TF1 `tf.quantization.fake_quant_*`, what quantization-aware training
inserts): float32 values rounded onto the 2^num_bits-level grid of a range [min, max] and
back to float32, with the straight-through gradient.

The range is first *nudged* so that 0.0 is exactly a grid point (zero padding must stay
exact once quantized). With levels quant_min..quant_max (quant_min 1 with `narrow_range`,
else 0; quant_max 2^num_bits - 1):

    scale = (max - min) / (quant_max - quant_min)
    zero_point = round(quant_min - min / scale), half away from zero, clamped to the levels
    nudged_min = (quant_min - zero_point) * scale,  nudged_max = (quant_max - zero_point) * scale

then x is clamped to [nudged_min, nudged_max] and snapped to the nearest grid point (ties
upward). Everything is computed in float32 with the operations of TF's kernels in their
order, so the results match TF's bit for bit: the rounding of `scale` decides, e.g.,
whether min=-1, max=1 puts zero at level 127 or 128.

Three forward ops: FakeQuantWithMinMaxArgs (the range as attrs), FakeQuantWithMinMaxVars
(as scalar tensors: variables in QAT) and FakeQuantWithMinMaxVarsPerChannel (as [d]
tensors, one range per entry of the last dimension). Each has a gradient op of TF's name:
the incoming gradient passes where x lies inside the nudged range and is 0 outside; for
the Vars ops the gradients of the elements below the range sum into min's, those above
into max's. As in TF, the gradient ops have no gradient (tf.gradients raises LookupError).

As TF: num_bits outside [2, 16] and min >= max for the Args ops are InvalidArgumentErrors
when the op runs (not when it is built); the Vars ops take any min and max at run time
(min > max gives a constant: every x clamps to nudged_min), and min == max == 0 gives
zeros (the gradient then passes through unchanged). One difference: TF's CPU kernels run
with subnormal floats flushed to zero, so there a subnormal x just outside a nudged bound
of exactly 0 counts as inside (and a subnormal min or max as 0); here values are compared
as they are.
"""
from __future__ import annotations

import collections
import numbers
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, merge_dim, with_rank, \
    with_rank_at_least, with_rank_at_most
from tensorweave.ops.array.array_util import merge_shapes
from tensorweave.ops.math.quantize_ops import no_gradient

_F32 = np.float32
_HALF = _F32(0.5)
_RANGE_ATTRS = {"num_bits": 8, "narrow_range": False}
_ARGS_ATTRS = {"min": -6.0, "max": 6.0, **_RANGE_ATTRS}


# --- shape functions (TF's, with its messages) ---------------------------------------------
def _first_input_shape(op) -> TensorShape:
    return op.inputs[0].shape


def _vars_shape(op) -> TensorShape:
    with_rank(op.inputs[1].shape, 0)
    with_rank(op.inputs[2].shape, 0)
    return op.inputs[0].shape


def _dims(shape: TensorShape):
    return None if shape.ndims is None else shape.as_list()


def _vars_gradient_shape(op):
    gradients, inputs, lo, hi = (_dims(t.shape) for t in op.inputs)
    merged = merge_shapes(gradients, inputs)
    merge_shapes(with_rank(TensorShape(lo), 0).as_list(), hi)
    scalar = TensorShape([])
    return [TensorShape(merged), scalar, scalar]


def _per_channel_shape(op) -> TensorShape:
    x = with_rank_at_least(op.inputs[0].shape, 1)
    depth = x.as_list()[-1] if x.ndims is not None else None
    lo = with_rank(op.inputs[1].shape, 1).as_list()[0]
    hi = with_rank(op.inputs[2].shape, 1).as_list()[0]
    merge_dim(depth, lo)
    merge_dim(depth, hi)
    merge_dim(lo, hi)
    return x


def _per_channel_gradient_shape(op):
    gradients, inputs, lo, hi = (_dims(t.shape) for t in op.inputs)
    merged = TensorShape(merge_shapes(gradients, inputs))
    merged = with_rank_at_most(with_rank_at_least(merged, 1), 4)
    depth = merged.as_list()[-1] if merged.ndims is not None else None
    channels = merge_shapes(with_rank(TensorShape(lo), 1).as_list(), [depth])
    channels = TensorShape(merge_shapes(hi, channels))
    return [merged, channels, channels]


_GRADIENT_OUTPUTS = ["backprops_wrt_input: float32", "backprop_wrt_min: float32",
                     "backprop_wrt_max: float32"]
register_op("FakeQuantWithMinMaxArgs", inputs=["inputs: float32"],
            outputs=["outputs: float32"], attrs=_ARGS_ATTRS, shape=_first_input_shape)
register_op("FakeQuantWithMinMaxArgsGradient",
            inputs=["gradients: float32", "inputs: float32"], outputs=["backprops: float32"],
            attrs=_ARGS_ATTRS, shape=_first_input_shape)  # TF's: gradients' shape
register_op("FakeQuantWithMinMaxVars", inputs=["inputs: float32", "min: float32",
                                               "max: float32"],
            outputs=["outputs: float32"], attrs=_RANGE_ATTRS, shape=_vars_shape)
register_op("FakeQuantWithMinMaxVarsGradient",
            inputs=["gradients: float32", "inputs: float32", "min: float32", "max: float32"],
            outputs=_GRADIENT_OUTPUTS, attrs=_RANGE_ATTRS, shape=_vars_gradient_shape)
register_op("FakeQuantWithMinMaxVarsPerChannel",
            inputs=["inputs: float32", "min: float32", "max: float32"],
            outputs=["outputs: float32"], attrs=_RANGE_ATTRS, shape=_per_channel_shape)
register_op("FakeQuantWithMinMaxVarsPerChannelGradient",
            inputs=["gradients: float32", "inputs: float32", "min: float32", "max: float32"],
            outputs=_GRADIENT_OUTPUTS, attrs=_RANGE_ATTRS, shape=_per_channel_gradient_shape)


# --- the arithmetic, in float32 as TF's kernels (fake_quant_ops_functor.h) ------------------
def _round_half_away(xp, z):
    """std::round of z >= 0 (ties away from zero; np.rint would round them to even)."""
    whole = xp.floor(z)
    return whole + (z - whole >= _HALF)


def _nudge(xp, lo, hi, quant_min: int, quant_max: int):
    """(nudged_min, nudged_max, scale, inv_scale) for ranges [lo, hi] (float32 arrays of
    one shape): the range moved so that 0.0 is a grid point. With lo > hi the scale is
    negative and the formulas run on regardless, as in TF."""
    qmin, qmax = _F32(quant_min), _F32(quant_max)
    scale = (hi - lo) / (qmax - qmin)
    inv_scale = (qmax - qmin) / (hi - lo)  # not 1 / scale: TF recomputes it, unrounded
    from_min = qmin - lo / scale
    zero_point = xp.where(from_min < qmin, qmin,
                          xp.where(from_min > qmax, qmax, _round_half_away(xp, from_min)))
    # an infinite min or max makes from_min NaN; TF's cast of NaN to uint16 gives 0 (x86)
    zero_point = xp.where(xp.isnan(zero_point), _F32(0), zero_point)
    return (qmin - zero_point) * scale, (qmax - zero_point) * scale, scale, inv_scale


def _quantize(xp, x, nudged_min, nudged_max, scale, inv_scale, divide: bool):
    """x clamped to the nudged range and snapped to its grid. TF's Vars kernel divides by
    the scale where the Args and per-channel kernels multiply by its inverse; the two
    differ in the last bit, which can move a value onto the next grid point."""
    quant_zero = xp.floor(-nudged_min * inv_scale + _HALF)
    out = xp.empty_like(x)  # every step in place in this one buffer
    xp.minimum(x, nudged_max, out=out)
    xp.maximum(out, nudged_min, out=out)
    xp.subtract(out, nudged_min, out=out)
    if divide:
        xp.divide(out, scale, out=out)
    else:
        xp.multiply(out, inv_scale, out=out)
    xp.subtract(out, quant_zero, out=out)
    xp.add(out, _HALF, out=out)
    xp.floor(out, out=out)
    return xp.multiply(out, scale, out=out)


def _mask(condition):
    """A comparison as float32 0/1: TF multiplies the gradient by it (so a NaN gradient
    stays NaN, and a negative one where the mask is 0 gives -0)."""
    return condition.astype(_F32)


def _inside(x, nudged_min, nudged_max):
    return _mask((x >= nudged_min) & (x <= nudged_max))  # both bounds belong to the range


# --- run-time checks (TF makes them in its kernels, so the graph builds) -------------------
def _invalid(ctx, message: str):
    return errors.InvalidArgumentError(None, ctx.op, message)


def _float_str(v) -> str:
    """A float32 as TF's StrCat prints it: the shortest of %.6g and %.9g that reads back."""
    text = "%.6g" % v
    return text if _F32(text) == v else "%.9g" % v


def _levels(ctx):
    """(quant_min, quant_max) from the num_bits and narrow_range attrs."""
    num_bits = ctx.attrs["num_bits"]
    if not 2 <= num_bits <= 16:
        raise _invalid(ctx, "num_bits must be between 2 and 16, inclusive")
    return (1 if ctx.attrs["narrow_range"] else 0), (1 << num_bits) - 1


def _args_range(ctx):
    """The nudged range of an Args op's attrs (checked as TF does, min first)."""
    lo, hi = _F32(ctx.attrs["min"]), _F32(ctx.attrs["max"])
    if not lo < hi:
        raise _invalid(ctx, "min has to be smaller than max, was: %s >= %s"
                       % (_float_str(lo), _float_str(hi)))
    return _nudge(np, lo, hi, *_levels(ctx))


def _check_rank(ctx, name: str, value, rank: int) -> None:
    if value.ndim != rank:
        raise _invalid(ctx, "`%s` must be rank %d but is rank %d" % (name, rank, value.ndim))


def _check_same_shape(ctx, g, x) -> None:
    if g.shape != x.shape:
        raise _invalid(ctx, "gradient and input must be the same size")


def _vars_range(ctx, x, lo, hi, per_channel: bool):
    """The nudged ranges of a Vars op's min and max (0-d, or [d] per channel), and where
    min == max == 0 (TF's "no range yet": zeros out, the gradient passes through)."""
    levels = _levels(ctx)
    if per_channel:
        if x.ndim == 0:  # TF crashes (a CHECK in TensorShape::dim_size)
            raise _invalid(ctx, "`inputs` must be rank at least 1 but is rank 0")
        for name, value in (("min", lo), ("max", hi)):
            _check_rank(ctx, name, value, 1)
            if value.shape[0] != x.shape[-1]:
                raise _invalid(ctx, "%s has incorrect size, expected %d was %d"
                               % (name, x.shape[-1], value.shape[0]))
    else:
        _check_rank(ctx, "min", lo, 0)
        _check_rank(ctx, "max", hi, 0)
    xp = ctx.xp
    unset = (lo == 0) & (hi == 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _nudge(xp, lo, xp.where(unset, _F32(1), hi), *levels), unset


# --- kernels ----------------------------------------------------------------------------------
@kernel("FakeQuantWithMinMaxArgs")
def _args_kernel(ctx, x):
    with np.errstate(invalid="ignore", over="ignore"):
        return _quantize(ctx.xp, x, *_args_range(ctx), divide=False)


@kernel("FakeQuantWithMinMaxArgsGradient")
def _args_gradient_kernel(ctx, g, x):
    nudged_min, nudged_max = _args_range(ctx)[:2]  # TF checks the attrs first
    if g.shape != x.shape:
        raise _invalid(ctx, "Inputs to operation %s of type %s must have the same size and "
                       "shape.  Input 0: [%s] != input 1: [%s]"
                       % (ctx.op.name, ctx.op.type, ",".join(map(str, g.shape)),
                          ",".join(map(str, x.shape))))
    return g * _inside(x, nudged_min, nudged_max)


def _vars_forward(ctx, x, lo, hi, per_channel: bool, divide: bool):
    nudged, unset = _vars_range(ctx, x, lo, hi, per_channel)
    with np.errstate(invalid="ignore", over="ignore"):
        out = _quantize(ctx.xp, x, *nudged, divide=divide)
    return ctx.xp.where(unset, _F32(0), out) if unset.any() else out


def _vars_backward(ctx, g, x, lo, hi, per_channel: bool):
    _check_same_shape(ctx, g, x)
    (nudged_min, nudged_max, _, _), unset = _vars_range(ctx, x, lo, hi, per_channel)
    # per channel: sum over every dimension but the last (TF's flat_inner_dims<2>)
    axes = tuple(range(x.ndim - 1)) if per_channel else None
    xp, zero = ctx.xp, _F32(0)
    return [xp.where(unset, g, g * _inside(x, nudged_min, nudged_max)),
            xp.where(unset, zero, xp.sum(g * _mask(x < nudged_min), axis=axes, dtype=_F32)),
            xp.where(unset, zero, xp.sum(g * _mask(x > nudged_max), axis=axes, dtype=_F32))]


@kernel("FakeQuantWithMinMaxVars")
def _vars_kernel(ctx, x, lo, hi):
    return _vars_forward(ctx, x, lo, hi, per_channel=False, divide=True)


@kernel("FakeQuantWithMinMaxVarsGradient")
def _vars_gradient_kernel(ctx, g, x, lo, hi):
    return _vars_backward(ctx, g, x, lo, hi, per_channel=False)


@kernel("FakeQuantWithMinMaxVarsPerChannel")
def _per_channel_kernel(ctx, x, lo, hi):
    return _vars_forward(ctx, x, lo, hi, per_channel=True, divide=False)


@kernel("FakeQuantWithMinMaxVarsPerChannelGradient")
def _per_channel_gradient_kernel(ctx, g, x, lo, hi):
    return _vars_backward(ctx, g, x, lo, hi, per_channel=True)


# --- gradients --------------------------------------------------------------------------------
def _attrs_of(op, names) -> dict:
    return {k: op._get_attr(k) for k in names}


@gradient("FakeQuantWithMinMaxArgs")
def _args_grad(op, grad):
    return [apply_op("FakeQuantWithMinMaxArgsGradient", [grad, op.inputs[0]],
                     _attrs_of(op, _ARGS_ATTRS), name="FakeQuantWithMinMaxArgsGradient")
            .outputs[0]]


def _vars_grad(op, grad):
    grad_type = op.type + "Gradient"
    return list(apply_op(grad_type, [grad] + list(op.inputs), _attrs_of(op, _RANGE_ATTRS),
                         name=grad_type).outputs)


gradient("FakeQuantWithMinMaxVars")(_vars_grad)
gradient("FakeQuantWithMinMaxVarsPerChannel")(_vars_grad)


for _op_type in ("FakeQuantWithMinMaxArgsGradient", "FakeQuantWithMinMaxVarsGradient",
                 "FakeQuantWithMinMaxVarsPerChannelGradient"):
    gradient(_op_type)(no_gradient)  # TF registers none: LookupError


# --- public builders ------------------------------------------------------------------------
def _float_attr(value, arg_name: str, default: float) -> float:
    """TF's conversion of a float attr argument (None takes the default), rounded to the
    float32 the attr holds."""
    if value is None:
        value = default
    if not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError("Expected float for argument '%s' not %r." % (arg_name, value))
    return float(_F32(value))


def _range_attrs(num_bits, narrow_range) -> dict:
    """The num_bits and narrow_range attrs, converted as TF's op builder does (an int
    attr truncates floats; a bool attr takes only bools; None takes the default)."""
    if num_bits is None:
        num_bits = 8
    if isinstance(num_bits, (str, bytes)):
        raise TypeError("Expected int for argument 'num_bits' not %r." % (num_bits,))
    try:
        num_bits = int(num_bits)
    except (TypeError, ValueError):
        raise TypeError("Expected int for argument 'num_bits' not %r." % (num_bits,)) \
            from None
    if narrow_range is None:
        narrow_range = False
    if not isinstance(narrow_range, bool):
        raise TypeError("Expected bool for argument 'narrow_range' not %r." % (narrow_range,))
    return {"num_bits": num_bits, "narrow_range": narrow_range}


def _args_attrs(min, max, num_bits, narrow_range) -> dict:  # noqa: A002 - TF's names
    return {"min": _float_attr(min, "min", -6.0), "max": _float_attr(max, "max", 6.0),
            **_range_attrs(num_bits, narrow_range)}


FakeQuantWithMinMaxVarsGradient = collections.namedtuple(
    "FakeQuantWithMinMaxVarsGradient",
    ["backprops_wrt_input", "backprop_wrt_min", "backprop_wrt_max"])
FakeQuantWithMinMaxVarsPerChannelGradient = collections.namedtuple(
    "FakeQuantWithMinMaxVarsPerChannelGradient",
    ["backprops_wrt_input", "backprop_wrt_min", "backprop_wrt_max"])


@tf_export("quantization.fake_quant_with_min_max_args", "fake_quant_with_min_max_args")
def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8,  # noqa: A002
                                 narrow_range=False, name: Optional[str] = None) -> Tensor:
    """Fake-quantizes `inputs` onto the grid of the range [min, max], given as floats
    (TF1 `tf.quantization.fake_quant_with_min_max_args`); see the module docstring.

    Args:
      inputs: a float32 Tensor.
      min, max: the range (floats; min < max, checked when the op runs).
      num_bits: the bits of the grid, 2 to 16 (checked when the op runs).
      narrow_range: leave out the lowest level (quant_min 1 instead of 0).
      name: op name.

    Returns:
      A float32 Tensor of the shape of `inputs`.
    """
    return apply_op("FakeQuantWithMinMaxArgs", [inputs],
                    _args_attrs(min, max, num_bits, narrow_range),
                    name=name or "FakeQuantWithMinMaxArgs").outputs[0]


@tf_export("quantization.fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_args_gradient")
def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6,  # noqa: A002
                                          max=6, num_bits=8,  # noqa: A002
                                          narrow_range=False,
                                          name: Optional[str] = None) -> Tensor:
    """The gradient of `fake_quant_with_min_max_args`: `gradients` where `inputs` lies in
    the nudged range, 0 elsewhere (TF1 `tf.quantization.fake_quant_with_min_max_args_
    gradient`).

    Args:
      gradients: float32, the gradient of the fake-quantized output.
      inputs: float32 of the same shape, the values that were fake-quantized.
      min, max, num_bits, narrow_range: as for `fake_quant_with_min_max_args`.
      name: op name.

    Returns:
      A float32 Tensor: the gradient with respect to `inputs`.
    """
    return apply_op("FakeQuantWithMinMaxArgsGradient", [gradients, inputs],
                    _args_attrs(min, max, num_bits, narrow_range),
                    name=name or "FakeQuantWithMinMaxArgsGradient").outputs[0]


@tf_export("quantization.fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars")
def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8,  # noqa: A002
                                 narrow_range=False, name: Optional[str] = None) -> Tensor:
    """Fake-quantizes `inputs` onto the grid of the range [min, max] given as scalar
    tensors, variables in quantization-aware training (TF1
    `tf.quantization.fake_quant_with_min_max_vars`); see the module docstring.

    Args:
      inputs: a float32 Tensor.
      min, max: float32 scalars.
      num_bits: the bits of the grid, 2 to 16 (checked when the op runs).
      narrow_range: leave out the lowest level.
      name: op name.

    Returns:
      A float32 Tensor of the shape of `inputs`.
    """
    return apply_op("FakeQuantWithMinMaxVars", [inputs, min, max],
                    _range_attrs(num_bits, narrow_range),
                    name=name or "FakeQuantWithMinMaxVars").outputs[0]


@tf_export("quantization.fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_gradient")
def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max,  # noqa: A002
                                          num_bits=8, narrow_range=False,
                                          name: Optional[str] = None):
    """The gradients of `fake_quant_with_min_max_vars` (TF1
    `tf.quantization.fake_quant_with_min_max_vars_gradient`).

    Args:
      gradients: float32, the gradient of the fake-quantized output.
      inputs: float32 of the same shape, the values that were fake-quantized.
      min, max, num_bits, narrow_range: as for `fake_quant_with_min_max_vars`.
      name: op name.

    Returns:
      A namedtuple (backprops_wrt_input, backprop_wrt_min, backprop_wrt_max):
      `gradients` inside the nudged range (0 outside), and the sums of `gradients`
      below and above it.
    """
    op = apply_op("FakeQuantWithMinMaxVarsGradient", [gradients, inputs, min, max],
                  _range_attrs(num_bits, narrow_range),
                  name=name or "FakeQuantWithMinMaxVarsGradient")
    return FakeQuantWithMinMaxVarsGradient(*op.outputs)


@tf_export("quantization.fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel")
def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8,  # noqa: A002
                                             narrow_range=False,
                                             name: Optional[str] = None) -> Tensor:
    """Fake-quantizes each entry of the last dimension of `inputs` onto its own range
    [min[i], max[i]] (TF1 `tf.quantization.fake_quant_with_min_max_vars_per_channel`).

    Args:
      inputs: a float32 Tensor of rank >= 1, last dimension d.
      min, max: float32 Tensors of shape [d].
      num_bits: the bits of the grid, 2 to 16 (checked when the op runs).
      narrow_range: leave out the lowest level.
      name: op name.

    Returns:
      A float32 Tensor of the shape of `inputs`.
    """
    return apply_op("FakeQuantWithMinMaxVarsPerChannel", [inputs, min, max],
                    _range_attrs(num_bits, narrow_range),
                    name=name or "FakeQuantWithMinMaxVarsPerChannel").outputs[0]


@tf_export("quantization.fake_quant_with_min_max_vars_per_channel_gradient",
           "fake_quant_with_min_max_vars_per_channel_gradient")
def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min,  # noqa: A002
                                                      max, num_bits=8,  # noqa: A002
                                                      narrow_range=False,
                                                      name: Optional[str] = None):
    """The gradients of `fake_quant_with_min_max_vars_per_channel` (TF1
    `tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient`).

    Args:
      gradients: float32, the gradient of the fake-quantized output (rank 1 to 4).
      inputs: float32 of the same shape, the values that were fake-quantized.
      min, max, num_bits, narrow_range: as for `fake_quant_with_min_max_vars_per_channel`.
      name: op name.

    Returns:
      A namedtuple (backprops_wrt_input, backprop_wrt_min, backprop_wrt_max): `gradients`
      inside each channel's nudged range (0 outside), and per channel ([d]) the sums of
      `gradients` below and above it.
    """
    op = apply_op("FakeQuantWithMinMaxVarsPerChannelGradient", [gradients, inputs, min, max],
                  _range_attrs(num_bits, narrow_range),
                  name=name or "FakeQuantWithMinMaxVarsPerChannelGradient")
    return FakeQuantWithMinMaxVarsPerChannelGradient(*op.outputs)
