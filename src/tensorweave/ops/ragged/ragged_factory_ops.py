"""tf.ragged.constant, constant_value and placeholder: RaggedTensors from Python lists
and from feeds."""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import name_scope
from tensorweave.framework.shapes import as_shape
from tensorweave.ops.array.constant_op import constant as dense_constant, \
    placeholder as dense_placeholder
from tensorweave.ops.array.array_ops import reshape
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
from tensorweave.ops.ragged.ragged_tensor_value import RaggedTensorValue

_LISTS = (list, tuple)


def _is_list(x) -> bool:
    return isinstance(x, _LISTS) or (isinstance(x, np.ndarray) and x.ndim > 0)


def _scalar_depths(pylist, depth: int = 0) -> Tuple[set, int]:
    """(depths at which scalars sit, deepest list nesting seen)."""
    if not _is_list(pylist):
        return {depth}, depth
    depths, deepest = set(), depth + 1
    for item in pylist:
        d, m = _scalar_depths(item, depth + 1)
        depths |= d
        deepest = max(deepest, m)
    return depths, deepest


def _split_levels(pylist, ragged_rank: int, inner_shape, row_splits_dtype):
    """(inner items, [row_splits per ragged level, outermost first], inner_shape).

    Raises:
      ValueError: scalars at different depths, or a ragged_rank / inner_shape that does
        not fit the nesting of `pylist`.
    """
    depths, deepest = _scalar_depths(pylist)
    if len(depths) > 1:
        raise ValueError("all scalar values must have the same nesting depth")
    depth = depths.pop() if depths else None
    if ragged_rank is None:
        known = depth if depth is not None else deepest
        extra = 0 if inner_shape is None else len(inner_shape)
        ragged_rank = max(1, known - 1 - extra)
    if depth is not None and (ragged_rank >= depth or (
            inner_shape is not None and ragged_rank + len(inner_shape) + 1 != depth)):
        raise ValueError("Invalid pylist=%r: incompatible with ragged_rank=%d%s"
                         % (pylist, ragged_rank, "" if inner_shape is None else
                            " and inner_shape=%s" % (tuple(inner_shape),)))
    items, nested_splits = pylist, []
    for _ in range(ragged_rank):
        splits, flat = [0], []
        for row in items:
            if not _is_list(row):
                raise ValueError("pylist has scalar values depth %s, but ragged_rank=%d "
                                 "requires scalar value depth greater than %d"
                                 % (depth, ragged_rank, ragged_rank))
            flat.extend(row)
            splits.append(len(flat))
        nested_splits.append(np.array(splits, dtype=row_splits_dtype.as_numpy_dtype))
        items = flat
    if inner_shape is None and depth is not None and not items:
        inner_shape = ()
    if inner_shape is None and items:
        shapes = {np.shape(x) for x in items}
        if len(shapes) > 1:
            raise ValueError("inner values have inconsistent shape")
        inner_shape = shapes.pop()
    return items, nested_splits, tuple(inner_shape or ())


@tf_export("ragged.constant")
def constant(pylist, dtype=None, ragged_rank: Optional[int] = None, inner_shape=None,
             name: Optional[str] = None, row_splits_dtype=_dt.int64):
    """A constant RaggedTensor from a nested Python list (TF1 `tf.ragged.constant`).

    Args:
      pylist: nested lists of scalars, all at one depth.
      dtype: of the values (inferred as tf.constant does: int32, float32, string).
      ragged_rank: ragged dimensions (default: all but those of inner_shape).
      inner_shape: the shape of the uniform innermost values.
      row_splits_dtype: int64 or int32.

    Returns:
      A RaggedTensor, or a dense Tensor for a scalar or ragged_rank=0.

    Raises:
      ValueError: scalars at different depths, or ragged_rank/inner_shape not fitting.
    """
    row_splits_dtype = _dt.as_dtype(row_splits_dtype)
    with name_scope(name, "RaggedConstant", []):
        if not _is_list(pylist) or ragged_rank == 0:
            return dense_constant(pylist, dtype=dtype)
        items, nested_splits, inner = _split_levels(pylist, ragged_rank, inner_shape,
                                                    row_splits_dtype)
        values = dense_constant(items if items else np.zeros((0,) + inner, np.float32),
                                dtype=dtype, name="values")
        if inner_shape is not None:
            values = reshape(values, (-1,) + inner)
        result = values
        for splits in reversed(nested_splits):
            result = RaggedTensor(result, dense_constant(splits), internal=True)
        return result


@tf_export("ragged.constant_value")
def constant_value(pylist, dtype=None, ragged_rank: Optional[int] = None, inner_shape=None,
                   row_splits_dtype="int64"):
    """A RaggedTensorValue (NumPy parts) from a nested Python list (TF1).

    Returns:
      A RaggedTensorValue, or a NumPy array for a scalar or ragged_rank=0.
    """
    row_splits_dtype = _dt.as_dtype(row_splits_dtype)
    np_dtype = _dt.as_dtype(dtype).as_numpy_dtype if dtype is not None else None
    if not _is_list(pylist) or ragged_rank == 0:
        return np.array(pylist, dtype=np_dtype)
    items, nested_splits, inner = _split_levels(pylist, ragged_rank, inner_shape,
                                                row_splits_dtype)
    values = np.array(items, dtype=np_dtype).reshape((-1,) + inner)
    result = values
    for splits in reversed(nested_splits):
        result = RaggedTensorValue(result, splits)
    return result


@tf_export("ragged.placeholder")
def placeholder(dtype, ragged_rank: int, value_shape=None, name: Optional[str] = None):
    """A RaggedTensor to be fed with a RaggedTensorValue (TF1 `tf.ragged.placeholder`):
    placeholders "flat_values" ([None] + value_shape) and "row_splits_<i>" (int64).

    Raises:
      ValueError: a negative ragged_rank.
    """
    if not isinstance(ragged_rank, int) or ragged_rank < 0:
        raise ValueError("ragged_rank must be a nonnegative integer; got %r"
                         % (ragged_rank,))
    with name_scope(name, "RaggedPlaceholder", []):
        value_shape = as_shape(value_shape if value_shape is not None else [])
        flat_shape = as_shape([None]).concatenate(value_shape)
        if ragged_rank == 0:
            return dense_placeholder(dtype, value_shape, name="flat_values")
        result = dense_placeholder(dtype, flat_shape, name="flat_values")
        splits: List = [dense_placeholder(_dt.int64, [None], name="row_splits_%d" % i)
                        for i in range(ragged_rank)]
        for s in reversed(splits):
            result = RaggedTensor(result, s, internal=True)
        return result
