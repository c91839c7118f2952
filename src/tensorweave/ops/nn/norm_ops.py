"""Local response normalization: LRN and its gradient op LRNGrad (part of the nn family;
fused batch normalization is in batch_norm_ops.py).

Both compute in float32 whatever their 16-bit input type, as TF's kernels do; float32
ones run on oneDNN's LRN (ops/onednn.py), the kernels TF's x86 builds use. LRN's gradient
is TF's LRNGrad op, which has no gradient, as in TF. (LRNGrad is not yet in the GPU
kernel table, framework/gpu_kernels.py, written by a survey on a GPU machine: until it
is, on a GPU it is placed on the CPU.)
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops import onednn
from tensorweave.ops.math.quantize_ops import no_gradient
from tensorweave.ops.nn.nn_ops import with_rank

_HALF_FLOAT = (_dt.float16, _dt.bfloat16, _dt.float32)


# --- LRN -----------------------------------------------------------------------------------
def _lrn_shape(op) -> TensorShape:
    return with_rank(op.inputs[0].shape, 4)


_LRN_ATTRS = ("depth_radius", "bias", "alpha", "beta")

register_op("LRN", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_HALF_FLOAT, default=_dt.float32), "depth_radius": 5,
                   "bias": 1.0, "alpha": 1.0, "beta": 0.5},
            shape=_lrn_shape)


def _window_sum(xp, a: np.ndarray, radius: int) -> np.ndarray:
    """sum(a[..., d - radius : d + radius + 1]) for every d of the last axis (zero padded):
    2 * radius + 1 shifted slices added, so no element-level loop and no cumsum error."""
    depth = a.shape[-1]
    padded = xp.zeros(a.shape[:-1] + (depth + 2 * radius,), dtype=a.dtype)
    padded[..., radius:radius + depth] = a
    out = xp.zeros_like(a)
    for offset in range(2 * radius + 1):
        out += padded[..., offset:offset + depth]
    return out


def _lrn_attrs(attrs: dict) -> tuple:
    return tuple(attrs[k] for k in _LRN_ATTRS)


@kernel("LRN", cheap=False, threaded=onednn.runs_float32)
def _lrn_kernel(ctx, x):
    if x.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be 4-dimensional")
    radius = ctx.attrs["depth_radius"]
    if radius < 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "depth_radius = %d must be non-negative" % radius)
    fast = onednn.lrn(x, *_lrn_attrs(ctx.attrs))
    if fast is not None:
        return fast
    work = x.astype(np.float32, copy=False)
    norm = ctx.attrs["bias"] + ctx.attrs["alpha"] * _window_sum(ctx.xp, work * work,
                                                               min(radius, x.shape[-1]))
    out = work * norm ** np.float32(-ctx.attrs["beta"])
    return out.astype(x.dtype, copy=False)


def _lrn_grad_shape(op) -> TensorShape:
    shape = with_rank(op.inputs[0].shape, 4)
    for t in op.inputs[1:]:
        shape = shape.merge_with(with_rank(t.shape, 4))
    return shape


register_op("LRNGrad", inputs=["input_grads: T", "input_image: T", "output_image: T"],
            outputs=["output: T"],
            attrs={"depth_radius": 5, "bias": 1.0, "alpha": 1.0, "beta": 0.5,
                   "T": TypeAttr(_HALF_FLOAT, default=_dt.float32)},
            shape=_lrn_grad_shape)


@kernel("LRNGrad", cheap=False, threaded=onednn.runs_float32)
def _lrn_grad_kernel(ctx, grads, x, y):
    # y_d = x_d N_d^-beta, N_d = bias + alpha sum_{j in window(d)} x_j^2, so
    # dx_j = g_j N_j^-beta - 2 alpha beta x_j sum_{d in window(j)} g_d y_d / N_d
    # (the windows are symmetric); N from input_image, y is output_image as given
    if not grads.ndim == x.ndim == y.ndim == 4:
        raise errors.InvalidArgumentError(None, ctx.op, "inputs must be 4-dimensional")
    if not grads.shape == x.shape == y.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input_grads, input_image, and out_image should have the same "
            "shape")
    # (oneDNN recomputes the output; NumPy's formula reads output_image as given)
    fast = onednn.lrn_grad(grads, x, *_lrn_attrs(ctx.attrs))
    if fast is not None:
        return fast
    radius = min(ctx.attrs["depth_radius"], x.shape[-1])
    alpha, beta = np.float32(ctx.attrs["alpha"]), np.float32(ctx.attrs["beta"])
    g, work, out = (a.astype(np.float32, copy=False) for a in (grads, x, y))
    norm = np.float32(ctx.attrs["bias"]) + alpha * _window_sum(ctx.xp, work * work, radius)
    dx = g * norm ** -beta - \
        (2 * alpha * beta) * work * _window_sum(ctx.xp, g * out / norm, radius)
    return dx.astype(x.dtype, copy=False)


@gradient("LRN")
def _lrn_grad(op, grad):
    # TF's _LRNGrad: the LRNGrad op of the input, the output and the output's gradient
    attrs = {k: op._get_attr(k) for k in _LRN_ATTRS}
    return [apply_op("LRNGrad", [grad, op.inputs[0], op.outputs[0]], attrs,
                     name="LRNGrad").outputs[0]]


# TF registers no gradient for LRNGrad: tf.gradients through it raises LookupError
gradient("LRNGrad")(no_gradient)


@tf_export("nn.local_response_normalization", "nn.lrn")
def local_response_normalization(input, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5,
                                 name: Optional[str] = None) -> Tensor:
    """Local response normalization over the last (depth) dimension.

    `output[..., d] = input[..., d] / (bias + alpha * sqr_sum[..., d]) ** beta`, where
    `sqr_sum[..., d]` sums `input[..., d - depth_radius : d + depth_radius + 1] ** 2`.

    Args:
      input: a 4-D Tensor of type float16, bfloat16 or float32.
      depth_radius: half-width of the normalization window (an int >= 0).
      bias: an offset, usually positive, avoiding division by 0.
      alpha: a scale factor.
      beta: an exponent.
      name: op name.

    Returns:
      A Tensor of the type and shape of `input`.

    Raises:
      ValueError: `input` is not 4-D.
      TypeError: `input` has another type.
    """
    return apply_op("LRN", [input], {"depth_radius": int(depth_radius), "bias": float(bias),
                                     "alpha": float(alpha), "beta": float(beta)},
                    name=name or "LRN").outputs[0]
