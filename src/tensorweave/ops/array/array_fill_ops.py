"""Fills: Fill, ZerosLike, OnesLike and the builders zeros, ones, zeros_like, ones_like.

Like TF1, `zeros`/`ones` make a Const when the shape is static and small (< 1000
elements) and a Fill otherwise; `zeros_like` is a constant when the input's shape is
fully defined, and `ones_like` is `ones(shape(x))`.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (TypeAttr, gradient, kernel, not_differentiable,
                                             register_op)
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.array import array_util as _u
from tensorweave.ops.array.constant_op import constant


# --- Fill -------------------------------------------------------------------------------
def _fill_shape(op):
    dims_t, value_t = op.inputs
    _u.with_rank(_u.dims_of(dims_t.shape), 1)
    _u.with_rank(_u.dims_of(value_t.shape), 0)
    out = _u.shape_from_tensor(dims_t)
    dims = _u.const_ints(dims_t)
    if dims is not None and any(d < 0 for d in dims):
        raise ValueError("Fill dimensions must be >= 0")
    return out


register_op("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
            attrs={"index_type": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_fill_shape)


@kernel("Fill")
def _fill_kernel(ctx, dims, value):
    if np.ndim(dims) != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "dims must represent a vector, got "
                                          "shape %s" % _u.shape_str(np.shape(dims)))
    if np.ndim(value) > 1 or np.size(value) != 1:  # a 1-element vector is accepted (TF)
        raise errors.InvalidArgumentError(None, ctx.op, "value must represent a scalar, got "
                                          "shape %s" % _u.shape_str(np.shape(value)))
    value = value.reshape(())
    shape = [int(d) for d in dims.tolist()]
    for d in shape:
        if d < 0:
            raise errors.InvalidArgumentError(None, ctx.op, "Dimension %d must be >= 0" % d)
    return ctx.xp.full(shape, value, dtype=value.dtype)


@gradient("Fill")
def _fill_grad(op, grad):
    from tensorweave.ops.math import reduction_ops
    return [None, reduction_ops.reduce_sum(grad)]


@tensor_util.register_static_value("Fill")
def _fill_value(op, index):
    s = op.outputs[0].shape
    v = tensor_util.constant_value(op.inputs[1])
    if v is None or not s.is_fully_defined():
        return None
    return np.full(s.as_list(), v, dtype=v.dtype)


@tf_export("fill")
def fill(dims, value, name: Optional[str] = None) -> Tensor:
    """A tensor of shape `dims` filled with the scalar `value` (TF1 `tf.fill`).

    Args:
      dims: a 1-D int32/int64 tensor or list: the output shape.
      value: a scalar.
      name: op name.

    Returns:
      A Tensor with the dtype of `value`.
    """
    return apply_op("Fill", [dims, value], name=name or "Fill").outputs[0]


# --- zeros / ones -------------------------------------------------------------------------
def _contains_tensor(x) -> bool:
    if isinstance(x, Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_tensor(v) for v in x)
    return False


def _filled(shape, value, dtype: _dt.DType, name: str) -> Tensor:
    """TF1's zeros/ones body: a small static shape gives a Const, else a Fill."""
    if not isinstance(shape, Tensor):
        # tensors first: np.ndim of a list holding one would ask it for a NumPy value
        if isinstance(shape, TensorShape) or (not _contains_tensor(shape) and
                                               np.ndim(shape) > 0):
            if isinstance(shape, TensorShape):
                if not shape.is_fully_defined():
                    raise ValueError("Cannot convert a partially known TensorShape %s to a "
                                     "Tensor." % (shape,))
                dims = shape.as_list()
            else:
                dims = [int(d) for d in np.asarray(shape).reshape(-1).tolist()]
            # a negative dimension goes on to Fill, whose shape function reports it
            if min(dims, default=0) >= 0 and int(np.prod(dims, dtype=np.int64)) < 1000:
                return constant(value, dtype=dtype, shape=dims, name=name)
            big = any(d >= 2 ** 31 for d in dims)
            shape = constant(dims, dtype=_dt.int64 if big else _dt.int32)
        elif not _contains_tensor(shape) and np.ndim(shape) == 0:
            # TF reshapes a scalar shape to [-1] and its shape inference sees the value.
            shape = constant([int(shape)], dtype=_dt.int32)
        else:
            shape = convert_to_tensor(shape, dtype=_dt.int32)
    if shape.shape.ndims == 0:
        from tensorweave.ops.array import array_ops
        shape = array_ops.reshape(shape, [-1])
    return fill(shape, constant(value, dtype=dtype), name=name)


@tf_export("zeros")
def zeros(shape, dtype=_dt.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of zeros (TF1 `tf.zeros`).

    Args:
      shape: a list/tuple of ints, a TensorShape, or a 1-D int32 tensor.
      dtype: element type (False for bool, b"" for string).
      name: op name.

    Returns:
      A Tensor of `shape` and `dtype`.
    """
    dtype = _dt.as_dtype(dtype).base_dtype
    with name_scope(name, "zeros", [shape]) as name:
        zero = False if dtype is _dt.bool else b"" if dtype is _dt.string else 0
        return _filled(shape, zero, dtype, name)


@tf_export("ones")
def ones(shape, dtype=_dt.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of ones (TF1 `tf.ones`).

    Args:
      shape: a list/tuple of ints, a TensorShape, or a 1-D int32 tensor.
      dtype: element type.
      name: op name.

    Returns:
      A Tensor of `shape` and `dtype`.
    """
    dtype = _dt.as_dtype(dtype).base_dtype
    with name_scope(name, "ones", [shape]) as name:
        return _filled(shape, True if dtype is _dt.bool else 1, dtype, name)


# --- ZerosLike, OnesLike ------------------------------------------------------------------
register_op("ZerosLike", inputs=["x: T"], outputs=["y: T"],
            shape=lambda op: op.inputs[0].shape)


@kernel("ZerosLike")
def _zeros_like_kernel(ctx, x):
    if not hasattr(x, "dtype"):  # a variant value (a TensorList) makes its own zeros
        return x.zeros_like()
    if x.dtype == object:
        return np.full(x.shape, b"", dtype=object)
    if type(x) is np.ndarray:
        return np.zeros(x.shape, x.dtype)  # (np.zeros_like: Python-level calls)
    return ctx.xp.zeros_like(x)


not_differentiable("ZerosLike")

register_op("OnesLike", inputs=["x: T"], outputs=["y: T"],
            attrs={"T": TypeAttr(_dt.NUMBERS + (_dt.bool,))},
            shape=lambda op: op.inputs[0].shape)


@kernel("OnesLike")
def _ones_like_kernel(ctx, x):
    return ctx.xp.ones_like(x)


not_differentiable("OnesLike")


@tf_export("zeros_like")
def zeros_like(tensor, dtype=None, name: Optional[str] = None,
               optimize: bool = True) -> Tensor:
    """A tensor of zeros with the shape of `tensor` (TF1 `tf.zeros_like`).

    Args:
      tensor: a Tensor.
      dtype: element type of the result (default: that of `tensor`).
      name: op name.
      optimize: if True, a constant is made when the shape is fully defined.

    Returns:
      A Tensor.
    """
    from tensorweave.ops.array import array_ops
    with name_scope(name, "zeros_like", [tensor]) as name:
        tensor = convert_to_tensor(tensor, name="tensor")
        if optimize and tensor.shape.is_fully_defined() and tensor.dtype is not _dt.variant:
            return zeros(tensor.shape, dtype=dtype or tensor.dtype, name=name)
        if dtype is not None and _dt.as_dtype(dtype) is not tensor.dtype:
            return zeros(array_ops._shape_internal(tensor, optimize=optimize), dtype=dtype,
                         name=name)
        return apply_op("ZerosLike", [tensor], name=name).outputs[0]


@tf_export("ones_like")
def ones_like(tensor, dtype=None, name: Optional[str] = None,
              optimize: bool = True) -> Tensor:
    """A tensor of ones with the shape of `tensor` (TF1 `tf.ones_like`).

    Args:
      tensor: a Tensor.
      dtype: element type of the result (default: that of `tensor`).
      name: op name.
      optimize: if True, the shape is a constant when fully defined.

    Returns:
      A Tensor.
    """
    from tensorweave.ops.array import array_ops
    with name_scope(name, "ones_like", [tensor]) as name:
        tensor = convert_to_tensor(tensor, name="tensor")
        ones_shape = array_ops._shape_internal(tensor, optimize=optimize)
        ret = ones(ones_shape, dtype=dtype or tensor.dtype, name=name)
        ret.set_shape(tensor.shape)
        return ret
