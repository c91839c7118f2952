"""Quantization to and from the quantized integer types (TF1 `tf.quantization.quantize`,
`dequantize` and `quantized_concat`): QuantizeV2, Dequantize and QuantizedConcat.

A quantized tensor is an integer tensor of a quantized dtype (qint8, quint8, qint16,
quint16, qint32) together with the float range [min, max] it represents. Three mappings,
the `mode` attr (T's integer range is [lowest, highest]):

  MIN_COMBINED  min..max onto lowest..highest, linearly (the unsigned types round half up,
                the signed ones half away from zero)
  MIN_FIRST     as MIN_COMBINED with min first rounded onto the grid (TF's "Eigen" path)
  SCALED        one scale, 0.0 staying 0: lowest..highest (lowest + 1 with
                `narrow_range`) = scale * [min', max'], the widest range that fits

QuantizeV2 first widens [min, max] to hold 0 and to be at least `ensure_minimum_range`
times max(1, |min|, |max|) wide, and outputs the range it used. With `axis`, every slice
along it has its own range (not for MIN_FIRST, as in TF). Every step is computed in
float32 as TF's kernels do (quantize_op.cc, dequantize_op.cc), so results match TF's bit
for bit; a float that overflows the integer type converts as x86 does (to int32's lowest,
then truncated), which is what TF's kernels give. The ops run on the host (structured
NumPy arrays carry the quantized dtypes) and have no gradient (LookupError), as in TF.
"""
from __future__ import annotations

import collections
import types
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
from tensorweave.ops.array import array_join_ops

_F32 = np.float32
_QUANTIZED = (_dt.qint8, _dt.quint8, _dt.qint32, _dt.qint16, _dt.quint16)  # TF's order
_MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")
_QUANTIZE_ROUND_MODES = ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN")


# --- the quantized types at run time ----------------------------------------------------
def integer_dtype(dtype: _dt.DType) -> np.dtype:
    """The plain NumPy integer type under a quantized dtype (int8 for qint8)."""
    return np.dtype(dtype.as_numpy_dtype[0])


def integer_limits(dtype: _dt.DType):
    """(lowest, highest) of a quantized dtype, as Python ints."""
    info = np.iinfo(integer_dtype(dtype))
    return int(info.min), int(info.max)


def as_integers(x) -> np.ndarray:
    """A quantized array (structured, or already plain) as its plain integers."""
    x = np.asarray(x)
    return x.view(x.dtype[0]) if x.dtype.names else x


def as_quantized(values: np.ndarray, dtype: _dt.DType) -> np.ndarray:
    """Plain integers as an array of the quantized dtype."""
    return np.ascontiguousarray(values, integer_dtype(dtype)).view(dtype.as_numpy_dtype)


def float_to_integers(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """C's float-to-integer conversion as TF's x86 kernels do it: truncation toward zero
    through int32 (a NaN or a value outside int32 becomes int32's lowest), then the
    integer's low bits."""
    wide = np.asarray(x, np.float64)
    bad = ~((wide > -2.0 ** 31 - 1) & (wide < 2.0 ** 31))  # NaN included
    with np.errstate(invalid="ignore"):
        ints = np.where(bad, -2 ** 31, np.trunc(np.where(bad, 0.0, wide))).astype(np.int64)
    return ints.astype(dtype)


def round_half_away(x: np.ndarray) -> np.ndarray:
    """std::round: ties away from zero (np.rint rounds them to even), exact in float32."""
    whole = np.trunc(x)
    return whole + np.sign(x) * (np.abs(x - whole) >= _F32(0.5))


def _invalid(ctx, message: str):
    return errors.InvalidArgumentError(None, ctx.op, message)


# --- QuantizeV2 ---------------------------------------------------------------------------
def _quantization_range(in_min, in_max, ensure_minimum_range: float):
    """[min, max] widened to hold 0 and to a minimum width (TF's nudging)."""
    lo = min(_F32(0), in_min)
    epsilon = max(_F32(1), max(abs(in_min), abs(in_max))) * _F32(ensure_minimum_range)
    return lo, max(_F32(0), max(in_max, _F32(lo + epsilon)))


def _min_combined(x, lo, hi, dtype):
    lowest, highest = integer_limits(dtype)
    scale = _F32((float(highest) - float(lowest)) / float(_F32(hi - lo)))
    clipped = np.maximum(np.minimum(x, hi), lo)
    if lowest < 0:
        half_range = _F32((float(highest) - float(lowest) + 1) / 2.0)
        return round_half_away((clipped - lo) * scale - half_range)
    return (clipped - lo) * scale + _F32(0.5)


def _min_first(x, lo, hi, dtype):
    lowest, highest = integer_limits(dtype)
    steps = float(1 << (8 * integer_dtype(dtype).itemsize))
    scale = _F32(0) if hi == lo else _F32((steps - 1.0) / float(_F32(hi - lo)))
    min_scaled = round_half_away(_F32(lo * scale))
    shifted = round_half_away(x * scale) - _F32(min_scaled - _F32(lowest))
    # bounds that convert back to int32 (TF's lower/upper_bound_float)
    bounds = (max(_F32(lowest), _F32(-2.147483648e9)), min(_F32(highest), _F32(2.14748352e9)))
    return np.minimum(np.maximum(shifted, bounds[0]), bounds[1])


def _scaled_factor(lo, hi, dtype, narrow_range: bool):
    """(scale, lowest level, highest level) of SCALED mode for the range [lo, hi]."""
    lowest, highest = integer_limits(dtype)
    low_level = lowest + (1 if narrow_range else 0)
    big = _F32(np.finfo(np.float32).max)
    from_min = _F32(low_level) / lo if _F32(low_level) * lo > 0 else big
    from_max = _F32(highest) / hi if _F32(highest) * hi > 0 else big
    return min(from_min, from_max), low_level, highest


def _scaled(x, lo, hi, dtype, attrs):
    scale, low_level, highest = _scaled_factor(lo, hi, dtype, attrs["narrow_range"])
    lo, hi = _F32(_F32(low_level) / scale), _F32(_F32(highest) / scale)
    product = np.maximum(np.minimum(x, hi), lo) * scale
    rounded = np.rint(product) if attrs["round_mode"] == "HALF_TO_EVEN" \
        else round_half_away(product)
    return rounded, lo, hi


def _quantize_slice(ctx, x, in_min, in_max):
    """(integers, output min, output max) for one range."""
    attrs, dtype = ctx.attrs, ctx.attrs["T"]
    in_min, in_max = _F32(in_min), _F32(in_max)
    if in_max < in_min:
        raise _invalid(ctx, "input_max_range must be larger than input_min_range.")
    lo, hi = _quantization_range(in_min, in_max, attrs["ensure_minimum_range"])
    with np.errstate(invalid="ignore", over="ignore"):
        if attrs["mode"] == "MIN_COMBINED":
            levels = _min_combined(x, lo, hi, dtype)
        elif attrs["mode"] == "MIN_FIRST":
            levels = _min_first(x, lo, hi, dtype)
        else:
            levels, lo, hi = _scaled(x, lo, hi, dtype, attrs)
    return float_to_integers(levels, integer_dtype(dtype)), lo, hi


def _check_attrs(ctx, round_modes) -> None:
    """TF checks the string attrs when the kernel is built, that is when the op runs."""
    mode = ctx.attrs["mode"]
    if mode not in _MODES:
        raise _invalid(ctx, "Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', "
                       "is '%s'" % mode)
    round_mode = ctx.attrs.get("round_mode", round_modes[0])
    if round_mode not in round_modes:
        raise _invalid(ctx, "Round mode string must be %s, is '%s'"
                       % (" or ".join("'%s'" % r for r in round_modes), round_mode))
    if round_mode == "HALF_TO_EVEN" and mode != "SCALED":
        raise _invalid(ctx, "Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', "
                       "but mode is '%s'." % mode)


def _num_slices(ctx, x: np.ndarray, lo, hi, verb: str) -> int:
    """The number of ranges the `axis` attr asks for, checked against min and max;
    `verb` is "Quantize" or "Dequantize" (for the messages)."""
    axis = ctx.attrs["axis"]
    if axis >= x.ndim:
        raise _invalid(ctx, "Axis must be less than input dimension(%d), got %d"
                       % (x.ndim, axis))
    slices = 1 if axis == -1 else x.shape[axis]
    for name, value in (("min", lo), ("max", hi)):
        if np.size(value) == slices:
            continue
        if verb == "Dequantize":
            raise _invalid(ctx, "input_%s_tensor must have as many elements as input on the "
                           "dequantization axis (%d), got %d, expected %d"
                           % (name, axis, np.size(value), slices))
        if axis == -1:
            raise _invalid(ctx, "If axis is not specified, %s_range must contain a single "
                           "float element, but it contains %d elements"
                           % (name, np.size(value)))
        raise _invalid(ctx, "If axis is specified, %s_range must be a 1-D tensor whose size "
                       "matches the axis dimension of the input and output tensors, but "
                       "%s_range is a 1-D tensor of size %d and input's axis dimension is "
                       "of size %d" % (name, name, np.size(value), slices))
    if slices > 1 and ctx.attrs["mode"] == "MIN_FIRST":
        raise errors.UnimplementedError(None, ctx.op, "MIN_FIRST mode is not implemented "
                                        "for %s with axis != -1." % verb)
    return slices


@kernel("QuantizeV2")
def _quantize_kernel(ctx, x, lo, hi):
    _check_attrs(ctx, _QUANTIZE_ROUND_MODES)
    x = np.asarray(x, _F32)
    lo, hi = np.asarray(lo, _F32), np.asarray(hi, _F32)
    dtype = ctx.attrs["T"]
    if _num_slices(ctx, x, lo, hi, "Quantize") == 1:
        # one range: TF outputs scalar ranges even when `axis` names a dimension of 1
        q, out_lo, out_hi = _quantize_slice(ctx, x, lo.reshape(-1)[0], hi.reshape(-1)[0])
        return [as_quantized(q, dtype), np.array(out_lo, _F32), np.array(out_hi, _F32)]
    axis = ctx.attrs["axis"]
    moved = np.moveaxis(x, axis, 0)
    parts = [_quantize_slice(ctx, moved[i], lo[i], hi[i]) for i in range(moved.shape[0])]
    q = np.moveaxis(np.stack([p[0] for p in parts]), 0, axis)
    return [as_quantized(q, dtype), np.array([p[1] for p in parts], _F32),
            np.array([p[2] for p in parts], _F32)]


# --- Dequantize ---------------------------------------------------------------------------
def _dequantize_min_first(q: np.ndarray, lo, hi, dtype) -> np.ndarray:
    """MIN_FIRST's floats (TF's DEQUANTIZE_WITH_EIGEN): the grid of [lo, hi] with lo
    rounded onto it."""
    steps = float(1 << (8 * integer_dtype(dtype).itemsize))
    scale = _F32(float(_F32(hi - lo)) / (steps - 1.0))
    min_rounded = lo if hi == lo else _F32(round_half_away(_F32(lo / scale)) * scale)
    return _F32(min_rounded - _F32(integer_limits(dtype)[0]) * scale) + q.astype(_F32) * scale


def _dequantize_slice(ctx, q: np.ndarray, lo, hi):
    dtype, mode = ctx.attrs["T"], ctx.attrs["mode"]
    lowest, highest = integer_limits(dtype)
    lo, hi = _F32(lo), _F32(hi)
    if mode == "MIN_COMBINED":
        half_range = _F32(0) if lowest == 0 else \
            _F32((_F32(highest) - _F32(lowest) + _F32(1)) / _F32(2))
        scale = _F32((hi - lo) / _F32(_F32(highest) - _F32(lowest)))
        return (q.astype(_F32) + half_range) * scale + lo
    if mode == "MIN_FIRST":
        return _dequantize_min_first(q, lo, hi, dtype)
    low_level = lowest + (1 if ctx.attrs["narrow_range"] else 0)
    scale = _F32(hi / _F32(highest)) if lowest == 0 else \
        max(_F32(lo / _F32(low_level)), _F32(hi / _F32(highest)))
    # TF's kernel goes through float and back to int first (qint32's highest overflows)
    levels = float_to_integers(q.astype(_F32), np.int32).astype(_F32)
    return levels * scale


@kernel("Dequantize")
def _dequantize_kernel(ctx, q, lo, hi):
    out_dtype = ctx.attrs["dtype"]
    if out_dtype == _dt.bfloat16 and ctx.attrs["mode"] != "MIN_COMBINED":
        raise _invalid(ctx, "When output type is bfloat16, Mode string must be "
                       "'MIN_COMBINED', is '%s'" % ctx.attrs["mode"])
    _check_attrs(ctx, ("HALF_AWAY_FROM_ZERO",))
    q = as_integers(q)
    lo, hi = np.asarray(lo, _F32), np.asarray(hi, _F32)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if _num_slices(ctx, q, lo, hi, "Dequantize") == 1:
            out = _dequantize_slice(ctx, q, lo.reshape(-1)[0], hi.reshape(-1)[0])
        else:
            axis = ctx.attrs["axis"]
            moved = np.moveaxis(q, axis, 0)
            out = np.moveaxis(np.stack([_dequantize_slice(ctx, moved[i], lo[i], hi[i])
                                        for i in range(moved.shape[0])]), 0, axis)
    return np.asarray(out, _F32).astype(out_dtype.as_numpy_dtype)


# --- shape functions and registration ------------------------------------------------------
def _range_shape(op) -> TensorShape:
    """TF's: min and max scalars, or with `axis` vectors as long as that dimension."""
    axis = op.get_attr("axis")
    if axis < -1:
        raise ValueError("axis should be at least -1, got %d" % axis)
    rank = 0 if axis == -1 else 1
    with_rank(op.inputs[1].shape, rank)
    minmax = with_rank(op.inputs[2].shape, rank)
    if axis != -1:
        x = with_rank_at_least(op.inputs[0].shape, axis + 1)
        depth = x.as_list()[axis] if x.ndims is not None else None
        merge_dim(minmax.as_list()[0], depth)
    return minmax


def _quantize_shape(op):
    minmax = _range_shape(op)
    return [op.inputs[0].shape, minmax, minmax]


def _dequantize_shape(op):
    axis, rank = op.get_attr("axis"), op.inputs[0].shape.ndims
    if axis != -1 and axis >= (-1 if rank is None else rank):  # TF's, unknown rank too
        raise ValueError("Axis must be less than input dimension(%d), got %d"
                         % (-1 if rank is None else rank, axis))
    _range_shape(op)
    return op.inputs[0].shape


_RANGE_OUTPUTS = ["output_min: float32", "output_max: float32"]
register_op("QuantizeV2", inputs=["input: float32", "min_range: float32",
                                  "max_range: float32"],
            outputs=["output: T"] + _RANGE_OUTPUTS,
            attrs={"T": TypeAttr(_QUANTIZED), "mode": "MIN_COMBINED",
                   "round_mode": "HALF_AWAY_FROM_ZERO", "narrow_range": False, "axis": -1,
                   "ensure_minimum_range": 0.01},
            shape=_quantize_shape)
register_op("Dequantize", inputs=["input: T", "min_range: float32", "max_range: float32"],
            outputs=["output: dtype"],
            attrs={"T": TypeAttr(_QUANTIZED), "mode": "MIN_COMBINED", "narrow_range": False,
                   "axis": -1, "dtype": TypeAttr((_dt.bfloat16, _dt.float32),
                                                 default=_dt.float32)},
            shape=_dequantize_shape)


# --- QuantizedConcat ----------------------------------------------------------------------
def _quantized_concat_shape(op):
    n = op.get_attr("N")
    for t in op.inputs[1 + n:]:
        with_rank(t.shape, 0)
    # ConcatV2's rule, whose op takes the values first and the axis last
    concat = types.SimpleNamespace(inputs=list(op.inputs[1:1 + n]) + [op.inputs[0]])
    scalar = TensorShape([])
    return [array_join_ops._concat_shape(concat), scalar, scalar]


register_op("QuantizedConcat",
            inputs=["concat_dim: int32", "values: N * T", "input_mins: N * float32",
                    "input_maxes: N * float32"],
            outputs=["output: T"] + _RANGE_OUTPUTS, attrs={"T": TypeAttr()},
            shape=_quantized_concat_shape)


def _concat_range(dtype, mins, maxes):
    """The output range: every input's, holding 0, symmetric for a signed type."""
    lo = min(_F32(0), min(_F32(m) for m in mins))
    hi = max(_F32(m) for m in maxes)
    if integer_limits(dtype)[0] < 0:
        largest = max(abs(lo), abs(hi))
        return -largest, largest
    return lo, hi


def _requantize(q: np.ndarray, dtype, old, new) -> np.ndarray:
    """Integers of range `old` moved to range `new`: through floats, both ways as
    MIN_FIRST mode (TF's QuantizedConcat does the same)."""
    with np.errstate(invalid="ignore", over="ignore"):
        floats = _dequantize_min_first(q, old[0], old[1], dtype)
        return float_to_integers(_min_first(floats, new[0], new[1], dtype),
                                 integer_dtype(dtype))


@kernel("QuantizedConcat")
def _quantized_concat_kernel(ctx, axis, *args):
    n = ctx.attrs["N"]
    dtype = ctx.attrs["T"]
    if dtype not in (_dt.quint8, _dt.qint32):  # TF's CPU kernels
        raise _invalid(ctx, "No OpKernel was registered to support Op 'QuantizedConcat' "
                       "with these attrs: [N=%d, T=DT_%s]" % (n, dtype.name.upper()))
    values, mins, maxes = args[:n], args[n:2 * n], args[2 * n:]
    out_lo, out_hi = _concat_range(dtype, mins, maxes)
    parts = []
    for q, lo, hi in zip(values, mins, maxes):
        q = as_integers(q)
        same = _F32(lo) == out_lo and _F32(hi) == out_hi
        parts.append(q if same else _requantize(q, dtype, (_F32(lo), _F32(hi)),
                                                (out_lo, out_hi)))
    joined = array_join_ops._concat_kernel(ctx, *parts, axis)
    return [as_quantized(joined, dtype), np.array(out_lo, _F32), np.array(out_hi, _F32)]


def no_gradient(op, *unused_grads):
    """The gradient of an op TF registers none for: tf.gradients through it raises
    LookupError, as in TF (registered so that the registry knows the op's status)."""
    raise LookupError("No gradient defined for operation '%s' (op type: %s)"
                      % (op.name, op.type))


for _op_type in ("QuantizeV2", "Dequantize", "QuantizedConcat"):
    gradient(_op_type)(no_gradient)


# --- public builders ------------------------------------------------------------------------
QuantizeV2 = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])
QuantizedConcat = collections.namedtuple("QuantizedConcat",
                                         ["output", "output_min", "output_max"])


def check_string_attr(op_type: str, attr: str, value, allowed) -> None:
    """An enumerated string attr checked when the op is built, with TF's message."""
    if value not in allowed:
        raise ValueError("Attr '%s' of '%s' Op passed string '%s' not in: %s." % (
            attr, op_type, value, ", ".join('"%s"' % a for a in allowed)))


def python_axis(input_tensor, axis: Optional[int]) -> int:
    """The `axis` argument as TF's wrappers pass it: None is -1 (one range), a negative
    axis counts from the end of a known rank."""
    if axis is None:
        return -1
    if axis < 0:
        ndims = input_tensor.shape.ndims if isinstance(input_tensor, Tensor) \
            else np.ndim(input_tensor)
        if ndims is None:
            raise ValueError("input should have known rank to use negative axis.")
        axis %= ndims
    return axis


@tf_export("quantization.quantize", "quantize")
def quantize(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002
             round_mode="HALF_AWAY_FROM_ZERO", name: Optional[str] = None,
             narrow_range: bool = False, axis: Optional[int] = None,
             ensure_minimum_range: float = 0.01) -> QuantizeV2:
    """Quantizes a float32 tensor to the quantized type `T` (see the module docstring).

    Args:
      input: a float32 Tensor.
      min_range, max_range: float32 scalars, or with `axis` vectors (one range per slice).
      T: the quantized dtype (qint8, quint8, qint16, quint16, qint32).
      mode: "MIN_COMBINED", "MIN_FIRST" or "SCALED".
      round_mode: "HALF_AWAY_FROM_ZERO", or "HALF_TO_EVEN" (SCALED mode only).
      name: op name.
      narrow_range: SCALED mode leaves out the lowest level.
      axis: the dimension whose slices have ranges of their own (None: one range).
      ensure_minimum_range: the least width of the range, relative to its magnitude.

    Returns:
      A namedtuple (output, output_min, output_max): the integers and the range used.

    Raises:
      ValueError: an unknown mode, or ranges whose shape does not fit `axis`.
      TypeError: `T` not a quantized type, or `input` not float32.
    """
    return quantize_v2(input, min_range, max_range, T, mode=mode, name=name,
                       round_mode=round_mode, narrow_range=narrow_range, axis=axis,
                       ensure_minimum_range=ensure_minimum_range)


@tf_export("quantize_v2")
def quantize_v2(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002
                name: Optional[str] = None, round_mode="HALF_AWAY_FROM_ZERO",
                narrow_range: bool = False, axis: Optional[int] = None,
                ensure_minimum_range: float = 0.01) -> QuantizeV2:
    """`tf.quantization.quantize` under its TF1 name (`name` before `round_mode`)."""
    check_string_attr("QuantizeV2", "mode", mode, _MODES)
    check_string_attr("QuantizeV2", "round_mode", round_mode, _QUANTIZE_ROUND_MODES)
    attrs = {"T": T, "mode": mode, "round_mode": round_mode, "narrow_range": narrow_range,
             "axis": python_axis(input, axis),
             "ensure_minimum_range": float(ensure_minimum_range)}
    op = apply_op("QuantizeV2", [input, min_range, max_range], attrs,
                  name=name or "QuantizeV2")
    return QuantizeV2(*op.outputs)


@tf_export("quantization.dequantize", "dequantize")
def dequantize(input, min_range, max_range, mode="MIN_COMBINED",  # noqa: A002
               name: Optional[str] = None, axis: Optional[int] = None,
               narrow_range: bool = False, dtype=_dt.float32) -> Tensor:
    """The floats that quantized integers stand for (the inverse of `quantize`).

    Args:
      input: a Tensor of a quantized type.
      min_range, max_range: the range it represents (float32 scalars, or with `axis`
        one per slice).
      mode: "MIN_COMBINED", "MIN_FIRST" or "SCALED", as it was quantized.
      name: op name.
      axis: the dimension whose slices have ranges of their own (None: one range).
      narrow_range: SCALED mode's levels leave out the lowest.
      dtype: float32, or bfloat16 (MIN_COMBINED mode only).

    Returns:
      A Tensor of `dtype` and of the shape of `input`.
    """
    check_string_attr("Dequantize", "mode", mode, _MODES)
    attrs = {"mode": mode, "narrow_range": narrow_range, "axis": python_axis(input, axis),
             "dtype": dtype}
    return apply_op("Dequantize", [input, min_range, max_range], attrs,
                    name=name or "Dequantize").outputs[0]


@tf_export("quantization.quantized_concat", "quantized_concat")
def quantized_concat(concat_dim, values, input_mins, input_maxes,
                     name: Optional[str] = None) -> QuantizedConcat:
    """Concatenates quantized tensors of different ranges along `concat_dim`, each moved
    to one common range (quint8 and qint32 run, as in TF).

    Args:
      concat_dim: an int32 scalar, the dimension to join along.
      values: a list of Tensors of one quantized type.
      input_mins, input_maxes: float32 scalars, each value's range.
      name: op name.

    Returns:
      A namedtuple (output, output_min, output_max).

    Raises:
      ValueError: lists of different lengths, or shapes that do not concatenate.
    """
    for arg, given in (("input_mins", input_mins), ("input_maxes", input_maxes)):
        if len(given) != len(values):
            raise ValueError("List argument '%s' to 'quantized_concat' Op with length %d "
                             "must match length %d of argument 'values'."
                             % (arg, len(given), len(values)))
    op = apply_op("QuantizedConcat", [concat_dim, list(values), list(input_mins),
                                      list(input_maxes)], name=name or "QuantizedConcat")
    return QuantizedConcat(*op.outputs)
