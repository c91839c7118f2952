"""The RaggedTensorToTensor op: the dense tensor of a ragged one given as flat values and
row partitions (TF 2's `RaggedTensor.to_tensor`, found in the functions of TF 2
SavedModels). tensorweave's own `to_tensor` is a composition of dense ops
(ragged_conversion_ops); this kernel is what imported graphs call.

A row partition level is given as ROW_SPLITS (one tensor per level) or, for every level,
as VALUE_ROWIDS after one FIRST_DIM_SIZE scalar (the outermost number of rows). Each
value lands at [row, column, ...] of the output, padded with `default_value`; `shape`
(a scalar -1 or one entry per output dim, -1 meaning the bounding size) crops or pads.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.framework.tensor_util import constant_value

_INDEX_TYPES = (_dt.int32, _dt.int64)
_PARTITION_TYPES = ("ROW_SPLITS", "VALUE_ROWIDS", "FIRST_DIM_SIZE")


def _partition_types(attr) -> List[str]:
    """The row_partition_types attr as str, checked against the kinds TF knows.

    Raises:
      ValueError: none, or an unknown kind.
    """
    types = [t.decode() if isinstance(t, bytes) else t for t in attr]
    if not types:
        raise ValueError("row_partition_types must name at least one partition")
    for t in types:
        if t not in _PARTITION_TYPES:
            raise ValueError("Unknown string for partition info type: %s" % t)
    return types


def _ragged_rank(types: Sequence[str]) -> int:
    """Number of ragged dims: one per partition tensor but FIRST_DIM_SIZE."""
    return len(types) - (1 if types and types[0] == "FIRST_DIM_SIZE" else 0)


# --- shape function ------------------------------------------------------------------------
def _to_tensor_shape(op):
    shape_in, values, default = op.inputs[0], op.inputs[1], op.inputs[2]
    ragged_rank = _ragged_rank(_partition_types(op.get_attr("row_partition_types")))
    if values.shape.ndims is None:
        return unknown_shape()
    inner = values.shape[1:]
    _check_default(default.shape, values.shape)
    result = TensorShape([None] * (ragged_rank + 1)).concatenate(inner)
    wanted = constant_value(shape_in)
    if wanted is None or np.ndim(wanted) == 0:
        return result
    if len(wanted) != result.ndims:
        raise ValueError("rt_input.shape and shape=%s are incompatible: rank %d != %d"
                         % (list(wanted), result.ndims, len(wanted)))
    dims = [None if d < 0 else int(d) for d in wanted]
    for i, (have, want) in enumerate(zip(result.as_list(), dims)):
        if have is not None and want is not None and have != want:
            raise ValueError("rt_input.shape and shape=%s are incompatible: "
                             "rt_input.shape[%d] = %d but shape[%d] = %d"
                             % (_fmt(dims), i, have, i, want))
    return result.merge_with(TensorShape(dims))


def _fmt(dims) -> str:
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


def _check_default(default: TensorShape, flat: TensorShape) -> None:
    """default_value must broadcast to one inner element of the flat values."""
    if default.ndims is None or flat.ndims is None:
        return
    inner = flat.as_list()[1:]
    if default.ndims > len(inner):
        raise ValueError("default_value.shape=%s and rt_input.flat_values.shape=%s are "
                         "incompatible: default_value.rank = %d must be less than "
                         "rt_input.flat_values.rank = %d"
                         % (_fmt(default.as_list()), _fmt(flat.as_list()), default.ndims,
                            flat.ndims))
    for i in range(1, default.ndims + 1):
        d, f = default.as_list()[-i], inner[-i]
        if d is not None and f is not None and d != 1 and d != f:
            raise ValueError("default_value.shape=%s and rt_input.flat_values.shape=%s are "
                             "incompatible: default_value.shape[%d] = %d but "
                             "rt_input.flat_values.shape[%d] = %d"
                             % (_fmt(default.as_list()), _fmt(flat.as_list()), -i, d, -i, f))


register_op("RaggedTensorToTensor",
            inputs=["shape: Tshape", "values: T", "default_value: T",
                    "row_partition_tensors: num_row_partition_tensors * Tindex"],
            outputs=["result: T"],
            attrs={"T": TypeAttr(), "Tindex": TypeAttr(_INDEX_TYPES),
                   "Tshape": TypeAttr(_INDEX_TYPES), "num_row_partition_tensors": REQUIRED,
                   "row_partition_types": REQUIRED},
            shape=_to_tensor_shape)


# --- kernel --------------------------------------------------------------------------------
def _levels(types: Sequence[str], parts: Sequence[np.ndarray]
            ) -> Tuple[int, List[Tuple[np.ndarray, np.ndarray, int]]]:
    """(number of outer rows, per ragged level (parent row of each child, column of each
    child in its row, longest row)), outermost level first."""
    if types[0] == "FIRST_DIM_SIZE":
        nrows = int(parts[0])
        levels = [_from_rowids(np.asarray(ids, np.int64)) for ids in parts[1:]]
    else:
        nrows = len(parts[0]) - 1
        levels = [_from_splits(np.asarray(s, np.int64)) for s in parts]
    return nrows, levels


def _from_splits(splits: np.ndarray) -> Tuple[np.ndarray, np.ndarray, int]:
    lengths = np.diff(splits)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    return rows, np.arange(len(rows)) - splits[rows], int(lengths.max(initial=0))


def _from_rowids(rowids: np.ndarray) -> Tuple[np.ndarray, np.ndarray, int]:
    starts = np.searchsorted(rowids, rowids, side="left")
    cols = np.arange(len(rowids)) - starts
    return rowids, cols, int(cols.max(initial=-1)) + 1


def _value_coords(nrows: int, levels, nvalues: int) -> Tuple[np.ndarray, List[int]]:
    """([n, ragged_rank + 1] coordinate of each of the first n values, bounding outer
    shape)."""
    coords = np.arange(nrows)[:, None]
    bounds = [nrows]
    for depth, (rows, cols, longest) in enumerate(levels):
        # the innermost splits may promise more values than there are: those never exist
        count = min(len(rows), nvalues) if depth == len(levels) - 1 else len(rows)
        coords = np.concatenate([coords[rows[:count]], cols[:count, None]], axis=1)
        bounds.append(longest)
    return coords, bounds


@kernel("RaggedTensorToTensor", cheap=False)
def _to_tensor_kernel(ctx, shape, values, default, *parts):
    types = _partition_types(ctx.attrs["row_partition_types"])
    nrows, levels = _levels(types, parts)
    coords, bounds = _value_coords(nrows, levels, len(values))
    out_shape = bounds + list(values.shape[1:])
    if np.ndim(shape) == 1:
        if len(shape) != len(out_shape):
            raise errors.InvalidArgumentError(
                None, ctx.op, "shape must have rank %d, got %d" % (len(out_shape), len(shape)))
        out_shape = [int(s) if s >= 0 else b for s, b in zip(shape, out_shape)]
    try:
        out = np.empty(out_shape, values.dtype)
        out[...] = default
    except ValueError:
        raise errors.InvalidArgumentError(
            None, ctx.op, "default_value of shape %s does not broadcast to %s"
            % (list(np.shape(default)), out_shape[len(bounds):])) from None
    inside = np.all(coords < np.asarray(out_shape[:len(bounds)]), axis=1)
    kept = values[:len(coords)][inside]
    out[tuple(coords[inside].T)] = kept.reshape((len(kept),) + tuple(out_shape[len(bounds):]))
    return out


# --- gradient ------------------------------------------------------------------------------
@gradient("RaggedTensorToTensor")
def _to_tensor_grad(op, grad):
    """The values' gradient gathers `grad` where each value landed; the default value's
    sums `grad` over the padding, reduced to the default value's shape."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops, segment_ops
    from tensorweave.ops.math.math_grad_util import unbroadcast
    values, default = op.inputs[1], op.inputs[2]
    parts = list(op.inputs[3:])
    outer_rank = _ragged_rank(_partition_types(op.get_attr("row_partition_types"))) + 1
    nvalues = array_ops.shape(values, out_type=_dt.int64)[0]
    ids = ragged_tensor_to_tensor(
        array_ops.shape(op.outputs[0], out_type=_dt.int64)[:outer_rank],
        math_ops.range(nvalues), np.int64(-1), parts, op.get_attr("row_partition_types"))
    flat_ids = array_ops.reshape(ids, [-1])
    inner = array_ops.shape(grad)[outer_rank:]
    flat_grad = array_ops.reshape(grad, array_ops.concat([[-1], inner], 0))
    values_grad = segment_ops.unsorted_segment_sum(flat_grad, flat_ids, nvalues)
    padding = math_ops.cast(math_binary.less(flat_ids, 0), grad.dtype)
    padding = array_ops.reshape(padding, array_ops.concat(
        [[-1], array_ops.ones_like(inner)], 0))
    default_grad = reduction_ops.reduce_sum(math_binary.multiply(flat_grad, padding), [0])
    one_element = array_ops.zeros_like(flat_grad[0])  # broadcast of default to an element
    _, default_grad = unbroadcast(default_grad, one_element, default)
    return [None, values_grad, default_grad] + [None] * len(parts)


# --- builder -------------------------------------------------------------------------------
def ragged_tensor_to_tensor(shape, values, default_value, row_partition_tensors,
                            row_partition_types, name: Optional[str] = None) -> Tensor:
    """Adds a RaggedTensorToTensor op (TF's `gen_ragged_conversion_ops` wrapper).

    Args:
      shape: an int32/int64 Tensor: -1, or the output shape with -1 for bounding dims.
      values: the flat values, [nvals, ...].
      default_value: what fills the places no value holds; broadcasts to one element.
      row_partition_tensors: the partition tensors, outermost first.
      row_partition_types: one of "ROW_SPLITS", "VALUE_ROWIDS", "FIRST_DIM_SIZE" per
        partition tensor.
      name: op name (default "RaggedTensorToTensor").

    Returns:
      The dense Tensor.

    Raises:
      ValueError: an unknown partition type, or shapes that cannot agree.
    """
    with name_scope(name, "RaggedTensorToTensor", [values, default_value]) as scope:
        values = convert_to_tensor(values, name="values")
        default_value = convert_to_tensor(default_value, dtype=values.dtype,
                                          name="default_value")
        parts = [convert_to_tensor(p) for p in row_partition_tensors]
        shape = convert_to_tensor(shape, name="shape")
        return apply_op("RaggedTensorToTensor", [shape, values, default_value, parts],
                        attrs={"row_partition_types": list(row_partition_types)},
                        name=scope).outputs[0]
