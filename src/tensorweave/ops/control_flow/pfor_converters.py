"""The op converters of `tf.vectorized_map` (pfor.py): one row per op type, mapping an op
whose inputs are (tensor, stacked) pairs to its batched outputs.

A converter returns one (tensor, stacked) pair per output of the op (or an Operation
for an op without outputs), or raises pfor.ConversionNotImplemented for inputs it does
not handle, and the op falls back to a while_loop. Each is the same op (`recreate`) on
inputs that carry the batch dimension first, with the attrs and axis inputs that refer
to dimensions moved by one, or a composition of ops with the same values:

* elementwise ops: the stacked inputs' ranks aligned (size-1 dimensions after the batch
  dimension), so broadcasting pairs the same dimensions as in one iteration;
* ops that act on the innermost dimensions or on leading batch dimensions (softmax,
  matrix decompositions, ...): the same op on the stacked input;
* ops with an axis: the axis moved past the batch dimension (negative axes, counted
  from the end, stay);
* ops with a leading batch dimension of their own (convolutions, pooling, losses): the
  two leading dimensions merged into one around the op.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
from tensorweave.ops.control_flow.pfor import ConversionNotImplemented, PForInput, recreate
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_ops, reduction_ops

CONVERTERS: Dict[str, Callable[[PForInput], object]] = {}
Outputs = List[Tuple[Tensor, bool]]


def register(*op_types: str):
    def deco(fn):
        for t in op_types:
            if t in CONVERTERS:
                raise ValueError("pfor converter for %s registered twice" % t)
            CONVERTERS[t] = fn
        return fn
    return deco


def _stacked_outputs(op) -> Outputs:
    return [(t, True) for t in op.outputs]


# --- helpers ----------------------------------------------------------------------------------
def _inner_rank(pin: PForInput, i: int):
    t, stacked = pin.inputs[i]
    r = t.shape.ndims
    return None if r is None else r - (1 if stacked else 0)


def _shift_axis(axis):
    """An axis (or axes) of one iteration's value as an axis of the stacked value (a
    Python int, an array or an int tensor): non-negative axes move up by one, negative
    ones, counted from the end, stay."""
    if isinstance(axis, Tensor):
        value = tensor_util.constant_value(axis)
        if value is None:
            return indexing_select.where_v2(math_binary.greater_equal(axis, 0), axis + 1,
                                            axis)
        axis = value
    a = np.asarray(axis)
    shifted = np.where(a >= 0, a + 1, a).astype(a.dtype if a.dtype.kind in "iu" else
                                                np.int64)
    return int(shifted) if shifted.ndim == 0 else shifted


def _with_leading(value, first) -> Tensor:
    """The 1-D int tensor `[first] + value` (a shape, begin or size vector)."""
    value = convert_to_tensor(value)
    static = tensor_util.constant_value(value)
    if static is not None and not isinstance(first, Tensor):
        return convert_to_tensor(np.concatenate([[first], static]).astype(static.dtype))
    first = math_ops.cast(array_ops.reshape(first, [1]), value.dtype)
    return array_join_ops.concat([first, value], 0)


def _expand_after_batch(t: Tensor, k) -> Tensor:
    """t with k size-1 dimensions inserted after dimension 0 (k an int or int tensor)."""
    if not isinstance(k, Tensor):
        for _ in range(k):
            t = array_ops.expand_dims(t, 1)
        return t
    shape = array_ops.shape(t)
    ones = array_fill_ops.fill(array_ops.reshape(math_binary.maximum(k, 0), [1]), 1)
    return array_ops.reshape(t, array_join_ops.concat([shape[:1], ones, shape[1:]], 0))


def _aligned(pin: PForInput, indices=None) -> List[Tensor]:
    """The inputs `indices` for a broadcasting elementwise op: each stacked input given
    size-1 dimensions after its batch dimension up to the largest rank of one
    iteration's inputs; loop invariants as they are."""
    indices = range(len(pin.inputs)) if indices is None else indices
    ranks = [_inner_rank(pin, i) for i in indices]
    out = []
    if all(r is not None for r in ranks):
        top = max(ranks)
        for i, r in zip(indices, ranks):
            t, stacked = pin.inputs[i]
            out.append(_expand_after_batch(t, top - r) if stacked else t)
        return out
    dyn = [array_ops.rank(pin.inputs[i][0]) - (1 if pin.inputs[i][1] else 0)
           for i in indices]
    top = reduction_ops.reduce_max(array_join_ops.stack(dyn))
    for i, r in zip(indices, dyn):
        t, stacked = pin.inputs[i]
        out.append(_expand_after_batch(t, top - r) if stacked else t)
    return out


def _same_op_stacked(pin: PForInput, inputs=None, attrs=None) -> Outputs:
    new = recreate(pin.op, inputs if inputs is not None else
                   [t for t, _ in pin.inputs], [], attrs)
    return _stacked_outputs(new)


def _all_stacked(pin: PForInput, indices=None) -> List[Tensor]:
    indices = range(len(pin.inputs)) if indices is None else indices
    return [pin.stacked_input(i) for i in indices]


# --- elementwise ------------------------------------------------------------------------------
_UNARY = (
    "Abs", "Acos", "Acosh", "Angle", "Asin", "Bitcast", "Asinh", "Atan", "Atanh", "BesselI0",
    "BesselI0e", "BesselI1", "BesselI1e", "BesselJ0", "BesselJ1", "BesselK0", "BesselK0e",
    "BesselK1", "BesselK1e", "BesselY0", "BesselY1", "Cast", "Ceil", "CheckNumerics",
    "CheckNumericsV2", "ComplexAbs", "Conj", "Cos", "Cosh", "Dawsn", "Digamma", "Elu",
    "Erf", "Erfc", "Erfinv", "Exp", "Expint", "Expm1", "FakeQuantWithMinMaxArgs", "Floor",
    "FresnelCos", "FresnelSin", "Identity", "Imag", "Invert", "IsFinite", "IsInf",
    "IsNan", "LeakyRelu", "Lgamma", "Log", "Log1p", "LogicalNot", "Ndtri", "Neg",
    "OnesLike", "PreventGradient", "Real", "Reciprocal", "Relu", "Relu6", "Rint", "Round",
    "Rsqrt", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Spence",
    "Sqrt", "Square", "StopGradient", "Tan", "Tanh", "ZerosLike",
    # act on the last dimension
    "Softmax", "LogSoftmax")


@register(*_UNARY)
def _convert_unary(pin: PForInput) -> Outputs:
    return _same_op_stacked(pin)


_BROADCASTING = (
    "Add", "AddV2", "Atan2", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Complex",
    "Div", "DivNoNan", "Equal", "FloorDiv", "FloorMod", "Greater", "GreaterEqual", "Igamma",
    "IgammaGradA", "Igammac", "LeftShift", "Less", "LessEqual", "LogicalAnd", "LogicalOr",
    "Maximum", "Minimum", "Mul", "MulNoNan", "NextAfter", "NotEqual", "Polygamma", "Pow",
    "RealDiv", "RightShift", "SquaredDifference", "Sub", "TruncateDiv", "TruncateMod",
    "Xdivy", "Xlog1py", "Xlogy", "Zeta", "SelectV2")  # Betainc does not broadcast


@register(*_BROADCASTING)
def _convert_broadcasting(pin: PForInput) -> Outputs:
    return _same_op_stacked(pin, _aligned(pin))


_SAME_SHAPE = ("ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad",
               "SoftsignGrad", "TanhGrad", "SigmoidGrad", "RsqrtGrad", "SqrtGrad",
               "ReciprocalGrad", "LeakyReluGrad", "AddN", "Cross")


@register(*_SAME_SHAPE)
def _convert_same_shape(pin: PForInput) -> Outputs:
    return _same_op_stacked(pin, _all_stacked(pin))


@register("Select")
def _convert_select(pin: PForInput) -> Outputs:
    # Select's condition is elementwise, or a vector choosing rows of t and e
    c_rank, t_rank = _inner_rank(pin, 0), _inner_rank(pin, 1)
    if c_rank is None or t_rank is None:
        raise ConversionNotImplemented("Select with inputs of unknown rank")
    cond, t, e = _all_stacked(pin)
    for _ in range(t_rank - c_rank):  # a scalar or a vector of rows: over whole rows
        cond = array_ops.expand_dims(cond, -1)
    return [(indexing_select.where_v2(cond, t, e), True)]


# --- reductions and scans ---------------------------------------------------------------------
@register("Sum", "Prod", "Max", "Min", "Mean", "All", "Any", "ArgMax",
          "ArgMin", "Cumsum", "Cumprod", "CumulativeLogsumexp", "ReverseV2")
def _convert_axis_input_1(pin: PForInput) -> Outputs:
    axis = pin.unstacked_input(1)
    return _same_op_stacked(pin, [pin.stacked_input(0), convert_to_tensor(
        _shift_axis(axis), dtype=axis.dtype)])


@register("FakeQuantWithMinMaxVars")
def _convert_fake_quant_vars(pin: PForInput) -> Outputs:
    return _same_op_stacked(pin, [pin.stacked_input(0), pin.unstacked_input(1),
                                  pin.unstacked_input(2)])


@register("IdentityN")
def _convert_identity_n(pin: PForInput) -> Outputs:
    new = recreate(pin.op, [t for t, _ in pin.inputs], [])
    return [(t, stacked) for t, (_, stacked) in zip(new.outputs, pin.inputs)]


@register("EnsureShape")
def _convert_ensure_shape(pin: PForInput) -> Outputs:
    shape = pin.attr("shape")
    return _same_op_stacked(pin, [pin.stacked_input(0)], {
        "shape": TensorShape([None]).concatenate(shape)})


@register("TopKV2")
def _convert_top_k(pin: PForInput) -> Outputs:
    return _same_op_stacked(pin, [pin.stacked_input(0), pin.unstacked_input(1)])


@register("L2Loss")
def _convert_l2_loss(pin: PForInput) -> Outputs:
    x = pin.stacked_input(0)
    rank = x.shape.ndims
    if rank is None:
        raise ConversionNotImplemented("L2Loss of unknown rank")
    total = reduction_ops.reduce_sum(x * x, axis=list(range(1, rank))) if rank > 1 else x * x
    return [(total * np.array(0.5, x.dtype.as_numpy_dtype), True)]


# --- shapes -----------------------------------------------------------------------------------
@register("Shape")
def _convert_shape(pin: PForInput) -> Outputs:
    return [(array_ops.shape(pin.input(0), out_type=pin.attr("out_type"))[1:], False)]


@register("ShapeN")
def _convert_shape_n(pin: PForInput) -> Outputs:
    out = []
    for t, stacked in pin.inputs:
        s = array_ops.shape(t, out_type=pin.attr("out_type"))
        out.append((s[1:] if stacked else s, False))
    return out


@register("Size")
def _convert_size(pin: PForInput) -> Outputs:
    t = pin.input(0)
    return [(math_ops.cast(reduction_ops.reduce_prod(array_ops.shape(t)[1:]),
                           pin.attr("out_type")), False)]


@register("Rank")
def _convert_rank(pin: PForInput) -> Outputs:
    return [(array_ops.rank(pin.input(0)) - 1, False)]


# --- reshaping --------------------------------------------------------------------------------
@register("Reshape")
def _convert_reshape(pin: PForInput) -> Outputs:
    shape = pin.unstacked_input(1)
    return _same_op_stacked(pin, [pin.stacked_input(0),
                                  _with_leading(shape, _batch_of(pin, shape.dtype))])


def _batch_of(pin: PForInput, dtype=_dt.int32):
    n = pin.pfor.loop_len_static
    return n if n is not None else math_ops.cast(pin.pfor.loop_len, dtype)


@register("ExpandDims")
def _convert_expand_dims(pin: PForInput) -> Outputs:
    axis = pin.unstacked_input(1)
    return _same_op_stacked(pin, [pin.stacked_input(0), convert_to_tensor(
        _shift_axis(axis), dtype=axis.dtype)])


@register("Squeeze")
def _convert_squeeze(pin: PForInput) -> Outputs:
    dims = list(pin.attr("squeeze_dims"))
    if not dims:  # squeeze every size-1 dimension: which ones must be known
        inner = pin.op.inputs[0].shape
        if inner.ndims is None or any(d is None for d in inner.as_list()):
            raise ConversionNotImplemented("Squeeze of all size-1 dimensions of a value "
                                           "whose shape is not known")
        dims = [i for i, d in enumerate(inner.as_list()) if d == 1]
        if not dims:
            return [(pin.stacked_input(0), True)]
    return _same_op_stacked(pin, [pin.stacked_input(0)],
                            {"squeeze_dims": [int(_shift_axis(d)) for d in dims]})


@register("Transpose", "ConjugateTranspose")
def _convert_transpose(pin: PForInput) -> Outputs:
    perm = pin.unstacked_input(1)
    value = tensor_util.constant_value(perm)
    if value is None or (np.asarray(value) < 0).any():
        raise ConversionNotImplemented("a permutation not known at graph construction")
    new_perm = np.concatenate([[0], np.asarray(value) + 1]).astype(value.dtype)
    return _same_op_stacked(pin, [pin.stacked_input(0), convert_to_tensor(new_perm)])


@register("Tile")
def _convert_tile(pin: PForInput) -> Outputs:
    multiples = pin.unstacked_input(1)
    return _same_op_stacked(pin, [pin.stacked_input(0), _with_leading(multiples, 1)])


@register("Pad", "PadV2", "MirrorPad")
def _convert_pad(pin: PForInput) -> Outputs:
    paddings = pin.unstacked_input(1)
    zeros = array_fill_ops.zeros([1, 2], dtype=paddings.dtype)
    inputs = [pin.stacked_input(0), array_join_ops.concat([zeros, paddings], 0)]
    if len(pin.inputs) == 3:
        inputs.append(pin.unstacked_input(2))
    return _same_op_stacked(pin, inputs)


@register("BroadcastTo")
def _convert_broadcast_to(pin: PForInput) -> Outputs:
    shape = pin.unstacked_input(1)
    n = shape.shape.as_list()[0] if shape.shape.ndims == 1 else None
    r = _inner_rank(pin, 0)
    if n is None or r is None:
        raise ConversionNotImplemented("BroadcastTo with ranks not known")
    x = _expand_after_batch(pin.stacked_input(0), n - r)
    return _same_op_stacked(pin, [x, _with_leading(shape, _batch_of(pin, shape.dtype))])


@register("Fill")
def _convert_fill(pin: PForInput) -> Outputs:
    dims = pin.unstacked_input(0)
    n = dims.shape.as_list()[0] if dims.shape.ndims == 1 else None
    if n is None:
        raise ConversionNotImplemented("Fill with a rank not known")
    value = _expand_after_batch(pin.stacked_input(1), n)
    out = apply_op("BroadcastTo", [value, _with_leading(dims, _batch_of(pin, dims.dtype))],
                   {})
    return [(out.outputs[0], True)]


# --- joins and splits -------------------------------------------------------------------------
@register("ConcatV2")
def _convert_concat(pin: PForInput) -> Outputs:
    axis = pin.unstacked_input(len(pin.inputs) - 1)
    values = _all_stacked(pin, range(len(pin.inputs) - 1))
    return _same_op_stacked(pin, values + [convert_to_tensor(_shift_axis(axis),
                                                             dtype=axis.dtype)])


@register("Pack")
def _convert_pack(pin: PForInput) -> Outputs:
    return _same_op_stacked(pin, _all_stacked(pin), {"axis": _shift_axis(pin.attr("axis"))})


@register("Unpack")
def _convert_unpack(pin: PForInput) -> Outputs:
    return _same_op_stacked(pin, [pin.stacked_input(0)],
                            {"axis": _shift_axis(pin.attr("axis"))})


@register("Split")
def _convert_split(pin: PForInput) -> Outputs:
    axis = pin.unstacked_input(0)
    return _same_op_stacked(pin, [convert_to_tensor(_shift_axis(axis), dtype=axis.dtype),
                                  pin.stacked_input(1)])


@register("SplitV")
def _convert_split_v(pin: PForInput) -> Outputs:
    axis = pin.unstacked_input(2)
    return _same_op_stacked(pin, [pin.stacked_input(0), pin.unstacked_input(1),
                                  convert_to_tensor(_shift_axis(axis), dtype=axis.dtype)])


# --- slicing and gathering --------------------------------------------------------------------
@register("Slice")
def _convert_slice(pin: PForInput) -> Outputs:
    begin, size = pin.unstacked_input(1), pin.unstacked_input(2)
    return _same_op_stacked(pin, [pin.stacked_input(0), _with_leading(begin, 0),
                                  _with_leading(size, -1)])


@register("StridedSlice")
def _convert_strided_slice(pin: PForInput) -> Outputs:
    begin, end, strides = (pin.unstacked_input(i) for i in (1, 2, 3))
    attrs = {k: pin.attr(k) << 1 for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                           "new_axis_mask", "shrink_axis_mask")}
    attrs["begin_mask"] |= 1
    attrs["end_mask"] |= 1
    return _same_op_stacked(pin, [pin.stacked_input(0), _with_leading(begin, 0),
                                  _with_leading(end, 0), _with_leading(strides, 1)], attrs)


@register("GatherV2")
def _convert_gather(pin: PForInput) -> Outputs:
    axis = pin.unstacked_input(2)
    batch_dims = pin.attr("batch_dims")
    params_stacked, indices_stacked = pin.is_stacked(0), pin.is_stacked(1)
    if params_stacked and not indices_stacked:
        if batch_dims:
            raise ConversionNotImplemented("GatherV2 with batch_dims of stacked params")
        return _same_op_stacked(pin, [pin.input(0), pin.input(1), convert_to_tensor(
            _shift_axis(axis), dtype=axis.dtype)])
    if not params_stacked:
        value = tensor_util.constant_value(axis)
        if batch_dims or value is None or int(value) != 0:
            raise ConversionNotImplemented("GatherV2 of stacked indices along axis != 0")
        params = pin.input(0)
        n = pin.pfor.loop_len_static
        if n is not None and pin.input(1) is pin.pfor.loop_indices and params.shape.ndims \
                and params.shape[0].value == n:
            return [(params, True)]  # elems[i] over all i: the elems themselves
        return _same_op_stacked(pin)
    # both stacked: one more batch dimension
    rank = pin.op.inputs[0].shape.ndims
    value = tensor_util.constant_value(axis)
    if value is None or (int(value) < 0 and rank is None):
        raise ConversionNotImplemented("GatherV2 with an axis not known")
    a = int(value) if int(value) >= 0 else int(value) + rank
    return _same_op_stacked(pin, [pin.input(0), pin.input(1),
                                  convert_to_tensor(a + 1, dtype=axis.dtype)],
                            {"batch_dims": (batch_dims if batch_dims >= 0 else
                                            batch_dims + pin.op.inputs[1].shape.ndims) + 1})


@register("ResourceGather")
def _convert_resource_gather(pin: PForInput) -> Outputs:
    pin.unstacked_input(0)
    if not pin.is_stacked(1):  # a read at loop invariant indices: loop invariant
        return [(recreate(pin.op, [pin.input(0), pin.input(1)], []).outputs[0], False)]
    if pin.attr("batch_dims"):
        raise ConversionNotImplemented("ResourceGather with batch_dims")
    return _same_op_stacked(pin)


@register("GatherNd")
def _convert_gather_nd(pin: PForInput) -> Outputs:
    pin.unstacked_input(0)
    return _same_op_stacked(pin)


@register("OneHot")
def _convert_one_hot(pin: PForInput) -> Outputs:
    for i in (1, 2, 3):
        pin.unstacked_input(i)
    return _same_op_stacked(pin, None, {"axis": _shift_axis(pin.attr("axis"))})


@register("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin",
          "UnsortedSegmentProd")
def _convert_unsorted_segment(pin: PForInput) -> Outputs:
    num = pin.unstacked_input(2)
    id_rank = pin.op.inputs[1].shape.ndims
    if id_rank is None:
        raise ConversionNotImplemented("segment ids of unknown rank")
    data, ids = pin.stacked_input(0), pin.stacked_input(1)
    # one reduction over all iterations: iteration b's segment s is segment b * num + s
    offsets = math_ops.range(pin.pfor.loop_len, dtype=ids.dtype) * \
        math_ops.cast(num, ids.dtype)
    moved = ids + array_ops.reshape(offsets, [-1] + [1] * id_rank)
    moved = indexing_select.where_v2(math_binary.less(ids, 0), ids, moved)  # dropped
    flat_data = array_ops.reshape(
        data, array_join_ops.concat([[-1], array_ops.shape(data)[1 + id_rank:]], 0))
    total = math_ops.cast(pin.pfor.loop_len, num.dtype) * num
    out = recreate(pin.op, [flat_data, array_ops.reshape(moved, [-1]), total], [])
    out = out.outputs[0]
    batch_and_num = math_ops.cast(array_join_ops.stack(
        [math_ops.cast(pin.pfor.loop_len, num.dtype), num]), _dt.int32)
    return [(array_ops.reshape(out, array_join_ops.concat(
        [batch_and_num, array_ops.shape(out)[1:]], 0)), True)]


# --- matrix products and linear algebra -------------------------------------------------------
def _batch_matmul(x: Tensor, y: Tensor, transpose_x: bool, transpose_y: bool) -> Tensor:
    """x @ y with plain transposes (MatMul's, which do not conjugate), broadcasting over
    leading dimensions."""
    from tensorweave.ops.linalg import matrix_ops
    conj = x.dtype.is_complex
    if conj:
        x = matrix_ops.matrix_transpose(x) if transpose_x else x
        y = matrix_ops.matrix_transpose(y) if transpose_y else y
        transpose_x = transpose_y = False
    return apply_op("BatchMatMulV2", [x, y], {"adj_x": transpose_x,
                                              "adj_y": transpose_y}).outputs[0]


@register("MatMul")
def _convert_matmul(pin: PForInput) -> Outputs:
    a, b = pin.input(0), pin.input(1)
    return [(_batch_matmul(a, b, pin.attr("transpose_a"), pin.attr("transpose_b")), True)]


@register("BatchMatMulV2")
def _convert_batch_matmul(pin: PForInput) -> Outputs:
    x, y = _aligned(pin)
    return _same_op_stacked(pin, [x, y])


@register("Einsum")
def _convert_einsum(pin: PForInput) -> Outputs:
    # a new label for the loop's dimension, first in each stacked operand and the output
    equation = pin.attr("equation")
    equation = equation.decode() if isinstance(equation, bytes) else equation
    if "->" not in equation:
        raise ConversionNotImplemented("einsum without an explicit output")
    inputs, output = equation.replace(" ", "").split("->")
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            if c not in equation]
    label = free[0]
    operands = [label + sub if stacked else sub
                for sub, (_, stacked) in zip(inputs.split(","), pin.inputs)]
    return _same_op_stacked(pin, None, {"equation": "%s->%s%s" % (",".join(operands),
                                                                  label, output)})


_BATCHED_LINALG = ("Cholesky", "MatrixDeterminant", "LogMatrixDeterminant",
                   "MatrixInverse", "MatrixExponential", "MatrixLogarithm",
                   "MatrixSquareRoot", "Qr", "SelfAdjointEigV2", "Svd", "Lu",
                   "MatrixDiagPartV3", "MatrixDiagV3", "MatrixBandPart")


@register(*_BATCHED_LINALG)
def _convert_batched_linalg(pin: PForInput) -> Outputs:
    for i in range(1, len(pin.inputs)):  # k, num_rows, ...: of one iteration's matrix
        pin.unstacked_input(i)
    return _same_op_stacked(pin)


@register("MatrixSolve", "MatrixTriangularSolve", "MatrixSetDiagV3")
def _convert_batched_pair(pin: PForInput) -> Outputs:
    r0, r1 = _inner_rank(pin, 0), _inner_rank(pin, 1)
    if r0 is None or r1 is None or (pin.op.type != "MatrixSetDiagV3" and r0 != r1):
        raise ConversionNotImplemented("matrices with batch dimensions of other ranks")
    rest = [pin.unstacked_input(i) for i in range(2, len(pin.inputs))]
    return _same_op_stacked(pin, _all_stacked(pin, (0, 1)) + rest)


# --- ops with a batch dimension of their own ------------------------------------------------
def _merge_batch(t: Tensor) -> Tensor:
    """[B, n, ...] -> [B * n, ...]."""
    return array_ops.reshape(t, array_join_ops.concat([[-1], array_ops.shape(t)[2:]], 0))


def _split_batch(t: Tensor, pin: PForInput, like: Tensor) -> Tensor:
    """[B * n, ...] -> [B, n, ...] with n the second dimension of `like`."""
    shape = array_join_ops.concat([array_ops.shape(like)[:2], array_ops.shape(t)[1:]], 0)
    return array_ops.reshape(t, shape)


def _folding(batch_inputs: Tuple[int, ...]):
    """A converter for an op whose inputs `batch_inputs` have a leading batch
    dimension (merged with the loop's) and whose other inputs are loop invariant."""
    def convert(pin: PForInput) -> Outputs:
        for i in range(len(pin.inputs)):
            if i not in batch_inputs:
                pin.unstacked_input(i)
        stacked = {i: pin.stacked_input(i) for i in batch_inputs}
        like = stacked[batch_inputs[0]]
        if like.shape.ndims is None:
            raise ConversionNotImplemented("a batched input of unknown rank")
        inputs = [_merge_batch(stacked[i]) if i in stacked else pin.input(i)
                  for i in range(len(pin.inputs))]
        new = recreate(pin.op, inputs, [])
        return [(_split_batch(t, pin, like), True) for t in new.outputs]
    return convert


for _op_type in ("Conv2D", "Conv3D", "DepthwiseConv2dNative", "MaxPool", "AvgPool",
                 "MaxPool3D", "AvgPool3D", "LRN", "ResizeBilinear", "ResizeNearestNeighbor",
                 "ResizeBicubic", "ResizeArea", "SpaceToDepth", "DepthToSpace",
                 "ExtractImagePatches", "Dilation2D", "BiasAdd", "InTopKV2"):
    register(_op_type)(_folding((0,)))
register("SoftmaxCrossEntropyWithLogits",
         "SparseSoftmaxCrossEntropyWithLogits")(_folding((0, 1)))
register("MaxPoolGrad", "MaxPoolGradGrad")(_folding((0, 1, 2)))


@register("BiasAddGrad")
def _convert_bias_add_grad(pin: PForInput) -> Outputs:
    x = pin.stacked_input(0)
    rank = x.shape.ndims
    if rank is None or pin.attr("data_format") not in ("NHWC", b"NHWC"):
        raise ConversionNotImplemented("BiasAddGrad of unknown rank or NCHW")
    return [(reduction_ops.reduce_sum(x, axis=list(range(1, rank - 1))), True)]


# --- random ops: one draw per iteration -------------------------------------------------------
@register("RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt")
def _convert_random(pin: PForInput) -> Outputs:
    rest = [pin.unstacked_input(i) for i in range(1, len(pin.inputs))]
    shape = pin.unstacked_input(0)
    return _same_op_stacked(pin, [_with_leading(shape, _batch_of(pin, shape.dtype))] + rest)


# --- assertions ---------------------------------------------------------------------------------
@register("_AssertCompare", "_AssertNear")
def _convert_assert_compare(pin: PForInput):
    # the assertion over every element of every iteration at once
    n = 4 if pin.op.type == "_AssertNear" else 2
    rest = [pin.unstacked_input(i) for i in range(2, n)]
    data = [t for t, _ in pin.inputs[n:]]
    return recreate(pin.op, _aligned(pin, range(2)) + rest + data, [])


@register("Assert")
def _convert_assert(pin: PForInput):
    cond = pin.input(0)
    if pin.is_stacked(0):
        cond = reduction_ops.reduce_all(cond)
    return recreate(pin.op, [cond] + [t for t, _ in pin.inputs[1:]], [])
