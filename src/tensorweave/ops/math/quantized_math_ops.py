"""The integer arithmetic of TF1's quantized inference graphs (what graph_transforms'
quantize_nodes emits) and its range ops: QuantizedMatMul, Requantize,
RequantizationRange and QuantizeDownAndShrinkRange.

A quantized tensor travels with the float range [min, max] its integers stand for. The
helpers here reproduce TF's conversions bit for bit (quantization_utils.h):

  float_to_quantized     one float onto a range's levels, in double precision
                         (FloatToQuantized / FloatToQuantizedUnclamped)
  quantized_to_float     one level back to a float, in double precision (QuantizedToFloat)
  product_range          the range of a product of two quantized tensors
                         (QuantizationRangeForMultiplication, float32)
  requantize_levels      levels moved from one range (and type) to another: TF's Eigen
                         path through float32 (MIN_FIRST both ways), or for qint32 to
                         quint8 its 16.16 fixed-point path

The ops run on the host, on the kernels TF registers (quint8 x quint8 -> qint32 for the
product, qint32 -> quint8/qint8 for the requantization); another type combination raises
TF's "No OpKernel was registered" error. None is differentiable: tf.gradients through
one raises LookupError, as in TF.
"""
from __future__ import annotations

from typing import Dict, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.ops.math import matmul_ops
from tensorweave.ops.math.fake_quant_ops import _float_str
from tensorweave.ops.math.quantize_ops import (_QUANTIZED, _dequantize_min_first, _min_first,
                                               as_integers, as_quantized, float_to_integers,
                                               integer_dtype, integer_limits, no_gradient,
                                               round_half_away)

_F32 = np.float32


# --- TF's conversions between floats and levels ------------------------------------------
def _steps(dtype: _dt.DType) -> int:
    return 1 << (8 * integer_dtype(dtype).itemsize)


def _range_width(lo, hi, dtype) -> float:
    """(max - min) stretched by steps / (steps - 1), in double (TF's `range`)."""
    steps = _steps(dtype)
    return float(_F32(_F32(hi) - _F32(lo))) * (steps / (steps - 1.0))


def float_to_quantized_unclamped(x, lo, hi, dtype: _dt.DType) -> np.ndarray:
    """TF's FloatToQuantizedUnclamped: the level of each float of `x` (int64), unclamped."""
    lowest = integer_limits(dtype)[0]
    x = np.asarray(x, _F32).astype(np.float64)
    if _F32(lo) == _F32(hi):
        return np.full(x.shape, lowest, np.int64)
    scale = _steps(dtype) / _range_width(lo, hi, dtype)
    levels = round_half_away(x * scale) - round_half_away(np.float64(_F32(lo)) * scale)
    return levels.astype(np.int64) + lowest


def float_to_quantized(x, lo, hi, dtype: _dt.DType) -> np.ndarray:
    """TF's FloatToQuantized: float_to_quantized_unclamped clamped into the type (int64)."""
    lowest, highest = integer_limits(dtype)
    return np.clip(float_to_quantized_unclamped(x, lo, hi, dtype), lowest, highest)


def quantized_to_float(q, lo, hi, dtype: _dt.DType) -> np.ndarray:
    """TF's QuantizedToFloat: the float32 each level of `q` stands for in [lo, hi]."""
    lo, hi = _F32(lo), _F32(hi)
    q = np.asarray(q)
    if lo == hi:
        return np.full(q.shape, lo, _F32)
    scale = _range_width(lo, hi, dtype) / _steps(dtype)
    # the minimum rounded in float32, as DEQUANTIZE_WITH_EIGEN computes it
    min_rounded = _F32(round_half_away(_F32(lo / _F32(scale))) * _F32(scale))
    # TF's quantized integers convert to double through float (a qint32 loses its low bits)
    offsets = q.astype(_F32).astype(np.float64) - integer_limits(dtype)[0]
    return (np.float64(min_rounded) + offsets * scale).astype(_F32)


def _float_for_one_level(lo, hi, dtype) -> np.float32:
    lowest, highest = integer_limits(dtype)
    return _F32(_F32(_F32(hi) - _F32(lo)) / _F32(highest - lowest))


def product_range(a_range, a_dtype, b_range, b_dtype, out_dtype) -> Tuple[_F32, _F32]:
    """TF's QuantizationRangeForMultiplication: the float32 range of the levels of a
    product of two quantized tensors, in `out_dtype`."""
    level = _float_for_one_level(*a_range, a_dtype) * _float_for_one_level(*b_range, b_dtype)
    lowest, highest = integer_limits(out_dtype)
    return _F32(level * _F32(lowest)), _F32(level * _F32(highest))


def _requantize_fixed_point(q: np.ndarray, in_range, out_range) -> np.ndarray:
    """qint32 to quint8 as TF's specialised RequantizeManyInNewRangeUsingEigen does it:
    16.16 fixed point, the constants computed once in float and double."""
    in_lo, in_hi = _F32(in_range[0]), _F32(in_range[1])
    out_lo, out_hi = _F32(out_range[0]), _F32(out_range[1])
    in_width, out_width = _F32(in_hi - in_lo), _F32(out_hi - out_lo)
    shift = 16
    recip_out_width = _F32(0.0 if out_width == 0 else 255.0 / float(out_width))
    in_rezero = _F32(float(_F32(in_lo + in_hi)) / 2.0)
    scale_fp = 0 if out_width == 0 else int(255.0 * (1 << shift) * float(in_width)
                                            / float(out_width))
    in_offset_fp = int(_F32(_F32(in_rezero * recip_out_width) * _F32(1 << shift)))
    out_offset_fp = 0 if out_width == 0 else int((1 << shift) * (float(out_lo) * 255.0)
                                                 / float(out_width))
    with np.errstate(over="ignore"):  # int64 products wrap as TF's do
        fixed = (q.astype(np.int64) * np.int64(scale_fp)) >> 32
        fixed += np.int64(in_offset_fp - out_offset_fp + (1 << (shift - 1)))
    return np.clip(fixed >> shift, 0, 255)


def requantize_levels(q, in_dtype: _dt.DType, in_range, out_dtype: _dt.DType,
                      out_range) -> np.ndarray:
    """Levels of `q` (range `in_range`) as levels of `out_dtype` in `out_range` (plain
    integers of out_dtype's NumPy type), as TF's RequantizeManyInNewRangeUsingEigen."""
    q = as_integers(q)
    if in_dtype == _dt.qint32 and out_dtype == _dt.quint8:
        return _requantize_fixed_point(q, in_range, out_range).astype(np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        floats = _dequantize_min_first(q, _F32(in_range[0]), _F32(in_range[1]), in_dtype)
        levels = _min_first(floats, _F32(out_range[0]), _F32(out_range[1]), out_dtype)
    return float_to_integers(levels, integer_dtype(out_dtype))


# --- kernel helpers shared by the quantized ops --------------------------------------------
def invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, message)


shape_str = matmul_ops._size_str  # a shape as TF's messages print it: [2,3]


def check_kernel_types(ctx, registered: Sequence[Dict[str, _dt.DType]]) -> None:
    """Raises TF's error when the op's type attrs match none of the kernels TF registers
    (each a {type attr: dtype} dict)."""
    if any(all(ctx.attrs[a] == t for a, t in kernel_types.items())
           for kernel_types in registered):
        return
    names = sorted(registered[0])
    given = ", ".join("%s=DT_%s" % (a, ctx.attrs[a].name.upper()) for a in names)
    kernels = "\n".join("  device='CPU'; " + "; ".join(
        "%s in [DT_%s]" % (a, k[a].name.upper()) for a in names) for k in registered)
    raise invalid(ctx, "No OpKernel was registered to support Op '%s' used by {{node %s}} "
                  "with these attrs: [%s]\nRegistered devices: [CPU]\nRegistered kernels:\n%s"
                  % (ctx.op.type, ctx.op.name, given, kernels))


def scalar_input(ctx, value, name: str, template: str) -> _F32:
    """A range input that must be a scalar; `template` is TF's message for another rank
    (formatted with name, rank and shape)."""
    value = np.asarray(value, _F32)
    if value.ndim != 0:
        raise invalid(ctx, template % {"name": name, "rank": value.ndim,
                                       "shape": shape_str(value.shape)})
    return _F32(value)


RANK_0 = "%(name)s must be rank 0 but is rank %(rank)d"


def scalars(ctx, values, names, template: str = RANK_0):
    """scalar_input over several range inputs, in order."""
    return [scalar_input(ctx, v, n, template) for v, n in zip(values, names)]


def range_outputs(lo, hi):
    """The (min, max) outputs: float32 scalars."""
    return [np.array(lo, _F32), np.array(hi, _F32)]


def scalar_range_shape(op, first: int, count: int) -> None:
    """Build-time check (TF's) that inputs first..first+count-1 are scalars."""
    for t in op.inputs[first:first + count]:
        with_rank(t.shape, 0)


def register_no_gradients(*op_types: str) -> None:
    """TF registers no gradient for the quantized ops: tf.gradients raises LookupError."""
    for op_type in op_types:
        gradient(op_type)(no_gradient)


_SCALAR = TensorShape([])


# --- QuantizedMatMul ----------------------------------------------------------------------
def _quantized_matmul_shape(op):
    scalar_range_shape(op, 2, 4)
    return [matmul_ops._matmul_shape(op), _SCALAR, _SCALAR]


register_op("QuantizedMatMul",
            inputs=["a: T1", "b: T2", "min_a: float32", "max_a: float32", "min_b: float32",
                    "max_b: float32"],
            outputs=["out: Toutput", "min_out: float32", "max_out: float32"],
            attrs={"T1": TypeAttr(_QUANTIZED), "T2": TypeAttr(_QUANTIZED),
                   "Toutput": TypeAttr(_QUANTIZED, default=_dt.qint32),
                   "transpose_a": False, "transpose_b": False,
                   "Tactivation": TypeAttr(_QUANTIZED, default=_dt.quint8)},
            shape=_quantized_matmul_shape)

_PRODUCT_KERNELS = [{"T1": _dt.quint8, "T2": _dt.quint8, "Toutput": _dt.qint32}]


def exact_product_type(a: np.ndarray, b: np.ndarray, depth: int) -> type:
    """float64, whose BLAS products are fast, when every sum of `depth` products of the
    integers of `a` and `b` is exact in it (below 2^53); else int64."""
    largest = max(int(np.abs(a).max(initial=0)), 1) * max(int(np.abs(b).max(initial=0)), 1)
    return np.float64 if depth * largest < 2 ** 53 else np.int64


def wrap_to_int32(sums: np.ndarray) -> np.ndarray:
    """Exact integer sums (float64 or int64) as TF's int32 accumulators hold them
    (wrapped modulo 2^32)."""
    return sums.astype(np.int64).astype(np.int32)


def centred_levels(q, lo, hi, dtype: _dt.DType) -> np.ndarray:
    """Levels minus the level of 0.0 (int64): the integers TF's quantized products
    multiply."""
    return as_integers(q).astype(np.int64) - float_to_quantized_unclamped(0.0, lo, hi, dtype)


def _matmul_ranges(ctx, min_a, max_a, min_b, max_b):
    """The four ranges, with TF's checks (min_a by rank, the others by element count)."""
    template = "%(name)s must be a scalar, but got shape%(shape)s"
    min_a = scalar_input(ctx, min_a, "min_a", template)
    others = []
    for value, name in ((max_a, "max_a"), (min_b, "min_b"), (max_b, "max_b")):
        if np.size(value) != 1:
            raise invalid(ctx, template % {"name": name, "shape": shape_str(np.shape(value))})
        others.append(_F32(np.reshape(value, -1)[0]))
    max_a, min_b, max_b = others
    for lo, hi, name in ((min_a, max_a, "a"), (min_b, max_b, "b")):
        if not hi > lo:
            raise invalid(ctx, "max_%s must be larger than min_%s." % (name, name))
    return (min_a, max_a), (min_b, max_b)


@kernel("QuantizedMatMul", cheap=False)
def _quantized_matmul_kernel(ctx, a, b, min_a, max_a, min_b, max_b):
    check_kernel_types(ctx, _PRODUCT_KERNELS)
    a_range, b_range = _matmul_ranges(ctx, min_a, max_a, min_b, max_b)
    a, b = as_integers(a), as_integers(b)
    for i, arr in enumerate((a, b)):
        if arr.ndim != 2:
            raise invalid(ctx, "In[%d] is not a matrix" % i)
    lhs = a.T if ctx.attrs["transpose_a"] else a
    rhs = b.T if ctx.attrs["transpose_b"] else b
    if lhs.shape[1] != rhs.shape[0]:
        raise invalid(ctx, "Matrix size-incompatible: In[0]: [%d,%d], In[1]: [%d,%d]"
                      % (a.shape + b.shape))
    lhs = centred_levels(lhs, *a_range, _dt.quint8)
    rhs = centred_levels(rhs, *b_range, _dt.quint8)
    compute = exact_product_type(lhs, rhs, lhs.shape[1])
    out = wrap_to_int32(np.matmul(lhs.astype(compute), rhs.astype(compute)))
    lo, hi = product_range(a_range, _dt.quint8, b_range, _dt.quint8, _dt.qint32)
    return [as_quantized(out, _dt.qint32)] + range_outputs(lo, hi)


# --- Requantize, RequantizationRange, QuantizeDownAndShrinkRange -----------------------------
def _same_shape(first_range: int, count: int):
    def shape_fn(op):
        scalar_range_shape(op, first_range, count)
        return [op.inputs[0].shape, _SCALAR, _SCALAR]
    return shape_fn


def _range_only_shape(op):
    scalar_range_shape(op, 1, 2)
    return [_SCALAR, _SCALAR]


_REQUANTIZE_ATTRS = {"Tinput": TypeAttr(_QUANTIZED), "out_type": TypeAttr(_QUANTIZED)}
_RANGE_IN = ["input_min: float32", "input_max: float32"]
_RANGE_OUT = ["output_min: float32", "output_max: float32"]
register_op("Requantize",
            inputs=["input: Tinput"] + _RANGE_IN + ["requested_output_min: float32",
                                                    "requested_output_max: float32"],
            outputs=["output: out_type"] + _RANGE_OUT, attrs=_REQUANTIZE_ATTRS,
            shape=_same_shape(1, 4))
register_op("RequantizationRange", inputs=["input: Tinput"] + _RANGE_IN, outputs=_RANGE_OUT,
            attrs={"Tinput": TypeAttr(_QUANTIZED)}, shape=_range_only_shape)
register_op("QuantizeDownAndShrinkRange", inputs=["input: Tinput"] + _RANGE_IN,
            outputs=["output: out_type"] + _RANGE_OUT, attrs=_REQUANTIZE_ATTRS,
            shape=_same_shape(1, 2))

_REQUANTIZE_KERNELS = [{"Tinput": _dt.qint32, "out_type": _dt.quint8},
                       {"Tinput": _dt.qint32, "out_type": _dt.qint8}]


def _first_floats(ctx, *values):
    """TF's reads of range inputs (`flat<float>()(0)`): the first element, none is an
    error (TF's message for RequantizationRange)."""
    for value, what in zip(values, ("min", "max", "requested output min",
                                    "requested output max")):
        if np.size(value) == 0:
            raise invalid(ctx, "Input %s must not be empty." % what)
    return [_F32(np.reshape(np.asarray(v, _F32), -1)[0]) for v in values]


@kernel("Requantize")
def _requantize_kernel(ctx, q, in_lo, in_hi, out_lo, out_hi):
    check_kernel_types(ctx, _REQUANTIZE_KERNELS)
    in_lo, in_hi, out_lo, out_hi = _first_floats(ctx, in_lo, in_hi, out_lo, out_hi)
    if not out_lo <= 0:
        raise invalid(ctx, "requested_output_min must be <= 0, but got %s" % _float_str(out_lo))
    if not out_hi >= out_lo:
        raise invalid(ctx, "requested_output_max must be >= requested_output_min, but got "
                      "%s and %s" % (_float_str(out_hi), _float_str(out_lo)))
    out_type = ctx.attrs["out_type"]
    levels = requantize_levels(q, _dt.qint32, (in_lo, in_hi), out_type, (out_lo, out_hi))
    return [as_quantized(levels, out_type)] + range_outputs(out_lo, out_hi)


def _actual_range(q: np.ndarray, in_lo, in_hi):
    """The float range the levels of `q` (qint32) use, holding 0 (TF scans from the
    type's extremes, so an empty tensor gives min 0 and the range of the lowest level)."""
    lowest, highest = integer_limits(_dt.qint32)
    q = as_integers(q)
    smallest = int(q.min()) if q.size else highest
    largest = int(q.max()) if q.size else lowest
    lo = min(_F32(0), quantized_to_float(smallest, in_lo, in_hi, _dt.qint32)[()])
    return _F32(lo), quantized_to_float(largest, in_lo, in_hi, _dt.qint32)[()]


@kernel("RequantizationRange")
def _requantization_range_kernel(ctx, q, in_lo, in_hi):
    check_kernel_types(ctx, [{"Tinput": _dt.qint32}])
    in_lo, in_hi = _first_floats(ctx, in_lo, in_hi)
    return range_outputs(*_actual_range(q, in_lo, in_hi))


@kernel("QuantizeDownAndShrinkRange")
def _quantize_down_and_shrink_range_kernel(ctx, q, in_lo, in_hi):
    check_kernel_types(ctx, [{"Tinput": _dt.qint32, "out_type": _dt.quint8}])
    in_lo, in_hi = _first_floats(ctx, in_lo, in_hi)
    out_lo, out_hi = _actual_range(q, in_lo, in_hi)
    levels = requantize_levels(q, _dt.qint32, (in_lo, in_hi), _dt.quint8, (out_lo, out_hi))
    return [as_quantized(levels, _dt.quint8)] + range_outputs(out_lo, out_hi)


register_no_gradients("QuantizedMatMul", "Requantize", "RequantizationRange",
                      "QuantizeDownAndShrinkRange")
