"""Reinterpreting and marking tensors: Bitcast (`tf.bitcast`, the bytes of a tensor seen
as another type) and GuaranteeConst (`tf.guarantee_const`, an identity promising that
its input does not change between runs).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import (TypeAttr, kernel, not_differentiable,
                                             register_op)
from tensorweave.framework.shapes import TensorShape, unknown_shape

# as TF: the quantized types too (their values are structured NumPy arrays of one field)
_BITCAST_TYPES = _dt.REAL_NUMBERS + _dt.COMPLEX + tuple(
    sorted(_dt.QUANTIZED_DTYPES, key=lambda d: d.as_datatype_enum))


def _bitcast_shape(op) -> TensorShape:
    s = op.inputs[0].shape
    src, dst = op._get_attr("T"), op._get_attr("type")
    src_size, dst_size = src.size, dst.size
    if s.ndims is None:
        return unknown_shape()
    dims = s.as_list()
    if src_size == dst_size:
        return s
    if src_size > dst_size:
        return TensorShape(dims + [src_size // dst_size])
    if not dims:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if dims[-1] is not None and dims[-1] != dst_size // src_size:
        raise ValueError("Cannot bitcast from %d to %d due to shape. %d does not match %d"
                         % (src.as_datatype_enum, dst.as_datatype_enum, dims[-1],
                            dst_size // src_size))
    return TensorShape(dims[:-1])


register_op("Bitcast", inputs=["input: T"], outputs=["output: type"],
            attrs={"T": TypeAttr(_BITCAST_TYPES), "type": TypeAttr(_BITCAST_TYPES)},
            shape=_bitcast_shape)
not_differentiable("Bitcast")


@kernel("Bitcast")
def _bitcast_kernel(ctx, x):
    src = np.dtype(x.dtype)
    dst = np.dtype(_dt.as_dtype(ctx.attrs["type"]).as_numpy_dtype)
    x = ctx.xp.asarray(x, order="C")  # keeps a 0-d value 0-d (ascontiguousarray does not)
    if src.itemsize == dst.itemsize:
        return x.view(dst)
    if src.itemsize > dst.itemsize:
        return x.reshape(x.shape + (1,)).view(dst)
    ratio = dst.itemsize // src.itemsize
    if x.ndim == 0 or x.shape[-1] != ratio:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Cannot bitcast from %s to %s: the last dimension of the input "
            "(shape %s) must be %d" % (ctx.attrs["T"].name,
                                       _dt.as_dtype(ctx.attrs["type"]).name,
                                       list(x.shape), ratio))
    return x.view(dst).reshape(x.shape[:-1])


@tf_export("bitcast")
def bitcast(input, type, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's names
    """The bytes of `input` reinterpreted as `type`, without copying the values.

    When `type` is smaller than the input's type, a last dimension of
    size(input type) / size(type) is added; when it is larger, the input's last
    dimension must be size(type) / size(input type) and is removed.

    Args:
      input: a numeric Tensor.
      type: the DType to reinterpret as.
      name: op name.

    Returns:
      A Tensor of type `type`.

    Raises:
      ValueError: the input's last dimension does not fit a larger `type`.
    """
    return apply_op("Bitcast", [input], {"type": _dt.as_dtype(type)},
                    name=name or "Bitcast").outputs[0]


register_op("GuaranteeConst", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr()}, shape=lambda op: op.inputs[0].shape, stateful=True)
not_differentiable("GuaranteeConst")


@kernel("GuaranteeConst")
def _guarantee_const_kernel(ctx, x):
    return x


@tf_export("guarantee_const")
def guarantee_const(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Returns `input`, promising the runtime that its value does not change between
    runs (TF uses the promise for optimizations; tensorweave checks nothing).

    Args:
      input: a Tensor.
      name: op name.

    Returns:
      A Tensor equal to `input`.
    """
    return apply_op("GuaranteeConst", [input], name=name or "GuaranteeConst").outputs[0]
