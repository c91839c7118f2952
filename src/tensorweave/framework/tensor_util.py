"""Build-time values of tensors, for shape functions (TF1 `tf.get_static_value`)."""
from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np

from tensorweave.framework.graph import Tensor
from tensorweave.framework.shapes import TensorShape, unknown_shape

# op type -> fn(op) returning the constant value of output 0 or None. Op families add
# rows for ops whose value is known at build time (Shape of a known shape, Pack, ...).
_STATIC_VALUE: Dict[str, Callable] = {}


def register_static_value(op_type: str):
    def deco(fn):
        _STATIC_VALUE[op_type] = fn
        return fn
    return deco


def constant_value(tensor, partial: bool = False) -> Optional[np.ndarray]:
    """The value of `tensor` if it can be computed at graph-build time, else None."""
    if not isinstance(tensor, Tensor):
        if isinstance(tensor, (np.ndarray, np.generic, int, float, list, tuple)):
            return np.asarray(tensor)
        return None
    op = tensor.op
    fn = _STATIC_VALUE.get(op.type)
    if fn is None:
        return None
    try:
        return fn(op, tensor.value_index)
    except (ValueError, TypeError, IndexError):
        return None


get_static_value = constant_value


def constant_value_as_shape(tensor) -> TensorShape:
    """The shape described by a 1-D int tensor, with unknown entries where its value is
    not known at build time (as TF's tensor_util.constant_value_as_shape)."""
    if not isinstance(tensor, Tensor):
        return TensorShape([None if d is None or d == -1 else int(d)
                            for d in np.asarray(tensor).reshape(-1).tolist()]) \
            if np.ndim(tensor) > 0 else TensorShape([])
    shape = tensor.shape
    if shape.ndims == 0:
        v = constant_value(tensor)
        if v is not None and int(v) == -1:
            return unknown_shape()
        raise ValueError("Shape must be rank 1 but is rank 0")
    v = constant_value(tensor)
    if v is not None:
        return TensorShape([None if d < 0 else int(d) for d in v.reshape(-1).tolist()])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack":
        dims = []
        for t in op.inputs:
            c = constant_value(t)
            dims.append(None if c is None or int(c) < 0 else int(c))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        out = TensorShape([])
        for t in op.inputs[:-1]:
            out = out.concatenate(constant_value_as_shape(t))
        return out
    n = shape[0].value if shape.ndims == 1 else None
    return unknown_shape(n) if n is not None else unknown_shape()
