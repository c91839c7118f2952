"""MaxPoolV2, MaxPoolGradV2 and MaxPoolGradGradV2: 2-D max pooling whose window (ksize
and strides) comes as two int32 vector inputs instead of attrs.

They are MaxPool, MaxPoolGrad and MaxPoolGradGrad (pooling_ops.py) with the window read
at run time: each kernel checks the window as TF's kernels do and runs the same kernel
body, so values, ties and NaN handling are the same. As in TF: no EXPLICIT padding; a
static output shape only when both window inputs are known at build time (an unknown
shape otherwise); MaxPoolV2's gradient is MaxPoolGradV2, whose gradient is
MaxPoolGradGradV2, which has none (TF registers none: tf.gradients raises LookupError).
TF's Python API builds none of them (`tf.nn.max_pool` with a Tensor ksize raises
TypeError in TF 2.x): they come from `tf.raw_ops` and imported GraphDefs.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.math.quantize_ops import no_gradient
from tensorweave.ops.nn.conv_ops import check_window_attrs, rank4
from tensorweave.ops.nn.pooling_ops import (max_pool_grad_grad_values, max_pool_grad_values,
                                            max_pool_routing_gradient, max_pool_values,
                                            pooled_shape)

_WINDOW = ("ksize", "strides")


# --- shapes ------------------------------------------------------------------------------
def _constant_window(op: Operation) -> Optional[Tuple[List[int], List[int]]]:
    """(ksize, strides) when both window inputs (the last two) are known at build time
    and usable for shape inference, else None.

    Raises:
      ValueError: a window input that is not a vector of 4 (TF's shape function), or a
        known stride below 1.
    """
    window = op.inputs[-2:]
    for t in window:
        if t.shape.ndims is not None and t.shape.ndims != 1:
            raise ValueError("Shape must be rank 1 but is rank %d" % t.shape.ndims)
        length = t.shape.as_list()[0] if t.shape.ndims else None
        if length is not None and length != 4:
            raise ValueError("Dimension must be 4 but is %d" % length)
    values = [tensor_util.constant_value(t) for t in window]
    if any(v is None for v in values):
        return None
    ksize, strides = ([int(d) for d in np.reshape(v, -1)] for v in values)
    bad = [s for s in strides if s < 1]
    if bad:
        raise ValueError("Stride must be > 0, but got %d" % bad[0])
    if min(ksize) < 1:  # TF infers nonsense for these; the kernel rejects them
        return None
    return ksize, strides


def _pooled_v2_shape(op: Operation) -> TensorShape:
    """The output shape of MaxPoolV2 and MaxPoolGradGradV2 (TF's MaxPoolV2Shape)."""
    padding, _ = check_window_attrs(op, names=())
    rank4(op.inputs[0].shape)
    window = _constant_window(op)
    if window is None:
        return TensorShape(None)
    return pooled_shape(op.inputs[0].shape, *window, padding)


def _grad_grad_v2_shape(op: Operation) -> TensorShape:
    shape = _pooled_v2_shape(op)
    shape.merge_with(op.inputs[1].shape)  # TF checks orig_output but infers no more
    return shape


def _grad_v2_shape(op: Operation) -> TensorShape:
    check_window_attrs(op, names=())
    return TensorShape(rank4(op.inputs[0].shape))


_V2_ATTRS = {"padding": REQUIRED, "data_format": "NHWC"}
_ROUTING_INPUTS = ["orig_input: T", "orig_output: T", "grad: T", "ksize: int32",
                   "strides: int32"]

# TF defaults T to float32 for MaxPoolV2 and MaxPoolGradV2, not for MaxPoolGradGradV2
register_op("MaxPoolV2", inputs=["input: T", "ksize: int32", "strides: int32"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.REAL_NUMBERS, default=_dt.float32), **_V2_ATTRS},
            shape=_pooled_v2_shape)
register_op("MaxPoolGradV2", inputs=_ROUTING_INPUTS, outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.REAL_NUMBERS, default=_dt.float32), **_V2_ATTRS},
            shape=_grad_v2_shape)
register_op("MaxPoolGradGradV2", inputs=_ROUTING_INPUTS, outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.REAL_NUMBERS), **_V2_ATTRS},
            shape=_grad_grad_v2_shape)


# --- kernels -----------------------------------------------------------------------------
def _window_attrs(ctx, ksize, strides) -> dict:
    """The window attrs of the attr-based kernel bodies, from the window inputs.

    Raises:
      InvalidArgumentError: a window input without 4 values, a ksize below 1 or a stride
        below 1 (TF's messages).
    """
    attrs = {"padding": ctx.attrs["padding"], "data_format": ctx.attrs["data_format"]}
    for name, value in zip(_WINDOW, (ksize, strides)):
        flat = [int(v) for v in np.asarray(value).reshape(-1)]  # TF reads them flat
        if len(flat) != 4:
            raise errors.InvalidArgumentError(None, ctx.op, "Sliding window %s field must "
                                              "specify 4 dimensions" % name)
        attrs[name] = flat
    if min(attrs["ksize"]) < 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Sliding window ksize must be "
                                          "positive.")
    if min(attrs["strides"]) < 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Stride must be > 0, but got %d"
                                          % min(attrs["strides"]))
    return attrs


@kernel("MaxPoolV2", cheap=False)
def _max_pool_v2_kernel(ctx, x, ksize, strides):
    return max_pool_values(ctx.op, _window_attrs(ctx, ksize, strides), x)


@kernel("MaxPoolGradV2", cheap=False)
def _max_pool_grad_v2_kernel(ctx, x, y, dy, ksize, strides):
    return max_pool_grad_values(ctx.op, _window_attrs(ctx, ksize, strides), x, y, dy)


@kernel("MaxPoolGradGradV2", cheap=False)
def _max_pool_grad_grad_v2_kernel(ctx, x, y, ddx, ksize, strides):
    return max_pool_grad_grad_values(ctx.op, _window_attrs(ctx, ksize, strides), x, y, ddx)


# --- gradients ---------------------------------------------------------------------------
def _v2_attrs(op: Operation) -> dict:
    return {"padding": op._get_attr("padding"), "data_format": op._get_attr("data_format")}


@gradient("MaxPoolV2")
def _max_pool_v2_grad(op, grad):
    x, ksize, strides = op.inputs
    dx = apply_op("MaxPoolGradV2", [x, op.outputs[0], grad, ksize, strides], _v2_attrs(op),
                  name="MaxPoolGradV2")
    return [dx.outputs[0], None, None]


gradient("MaxPoolGradV2")(max_pool_routing_gradient("MaxPoolGradGradV2", _v2_attrs))
gradient("MaxPoolGradGradV2")(no_gradient)
