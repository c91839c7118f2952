"""Shape-inference helpers shared by the array op modules (TF's InferenceContext rules).

Dimensions are handled as plain ints with None for unknown, so each rule reads like the
arithmetic it performs; errors are ValueErrors that `apply_op` turns into TF1's
build-time message naming the op and its input shapes.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework import shapes as _shapes
from tensorweave.framework.shapes import TensorShape, unknown_shape

# Integer index types accepted by the Tshape/Tidx/Tperm/... attrs.
INDEX_TYPES = (_dt.int32, _dt.int64)


def const_value(t) -> Optional[np.ndarray]:
    """The build-time value of `t` (a Tensor), or None."""
    return tensor_util.constant_value(t)


def const_int(t) -> Optional[int]:
    """The build-time value of a one-element integer tensor, or None."""
    v = tensor_util.constant_value(t)
    if v is None or np.size(v) != 1:
        return None
    return int(np.asarray(v).reshape(()))


def const_ints(t) -> Optional[List[int]]:
    """The build-time value of an integer tensor as a flat list, or None."""
    v = tensor_util.constant_value(t)
    if v is None:
        return None
    return [int(x) for x in np.asarray(v).reshape(-1).tolist()]


def shape_from_tensor(t) -> TensorShape:
    """TF's MakeShapeFromShapeTensor: the (partial) shape a 1-D shape tensor describes."""
    if t.shape.ndims is not None and t.shape.ndims > 1:
        # TF's message names rank 1 though a scalar is allowed too
        raise ValueError("Shape must be rank 1 but is rank %d" % t.shape.ndims)
    v = tensor_util.constant_value(t)
    if v is not None:
        for d in np.asarray(v).reshape(-1).tolist():
            if d < -1:
                raise ValueError("Invalid value in tensor used for shape: %d" % d)
    return tensor_util.constant_value_as_shape(t)


def dims_of(shape: TensorShape) -> Optional[List[Optional[int]]]:
    """The dims of `shape` as a list of ints/None, or None for unknown rank."""
    return None if shape.ndims is None else shape.as_list()


def dim_mul(a: Optional[int], b: Optional[int]) -> Optional[int]:
    """InferenceContext::Multiply: 0 and 1 are absorbing/neutral even against unknowns."""
    if a == 0 or b == 0:
        return 0
    if a == 1:
        return b
    if b == 1:
        return a
    if a is None or b is None:
        return None
    return a * b


def dim_add(a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a is None or b is None:
        return None
    return a + b


merge_dim = _shapes.merge_dim  # InferenceContext::Merge for dimensions


def shape_str(dims) -> str:
    if dims is None:
        return "?"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


def merge_shapes(a, b):
    """InferenceContext::Merge for shapes given as dim lists (None: unknown rank)."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise ValueError("Shapes must be equal rank, but are %d and %d" % (len(a), len(b)))
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x is not None and y is not None and x != y:
            raise ValueError("Dimension %d in both shapes must be equal, but are %d and %d. "
                             "Shapes are %s and %s." % (i, x, y, shape_str(a), shape_str(b)))
        out.append(x if x is not None else y)
    return out


def with_rank(dims, rank: int):
    """InferenceContext::WithRank on a dim list (None: unknown rank)."""
    return _shapes.with_rank(TensorShape(dims), rank).as_list()


def with_rank_at_least(dims, rank: int):
    _shapes.with_rank_at_least(TensorShape(dims), rank)
    return dims


def with_rank_at_most(dims, rank: int):
    _shapes.with_rank_at_most(TensorShape(dims), rank)
    return dims


def scalar_axis(t, rank: Optional[int]) -> Optional[int]:
    """MakeDimForScalarInputWithNegativeIndexing: the non-negative axis named by the
    scalar tensor `t` for a tensor of `rank`, or None when unknown."""
    with_rank(dims_of(t.shape), 0)
    v = const_int(t)
    if v is None:
        return None
    if rank is None:
        return v if v >= 0 else None
    if v < -rank or v >= rank:
        raise ValueError("Dimension size, given by scalar input %d must be in range [%d, %d)"
                         % (v, -rank, rank))
    return v + rank if v < 0 else v


def to_shape(dims) -> TensorShape:
    return unknown_shape() if dims is None else TensorShape(dims)
