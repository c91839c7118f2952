"""Local response normalization (LRN) and fused batch normalization (FusedBatchNormV3)
(part of the nn family).

Both ops compute in float32 whatever their 16-bit input type, as TF's kernels do. Their
gradients are compositions of graph ops (not TF's LRNGrad / FusedBatchNormGradV3
kernels), so they can be differentiated again.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.nn.nn_ops import merge_dims, with_rank

_HALF_FLOAT = (_dt.float16, _dt.bfloat16, _dt.float32)


# --- LRN -----------------------------------------------------------------------------------
def _lrn_shape(op) -> TensorShape:
    return with_rank(op.inputs[0].shape, 4)


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


@kernel("LRN")
def _lrn_kernel(ctx, x):
    if x.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be 4-dimensional")
    radius = ctx.attrs["depth_radius"]
    if radius < 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "depth_radius = %d must be non-negative" % radius)
    work = x.astype(np.float32, copy=False)
    norm = ctx.attrs["bias"] + ctx.attrs["alpha"] * _window_sum(ctx.xp, work * work,
                                                               min(radius, x.shape[-1]))
    out = work * norm ** np.float32(-ctx.attrs["beta"])
    return out.astype(x.dtype, copy=False)


def _window_sum_graph(a: Tensor, radius: int) -> Tensor:
    """_window_sum in graph ops (differentiable): differences of a cumulative sum."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math.scan_ops import cumsum
    padded = array_ops.pad(a, [[0, 0], [0, 0], [0, 0], [radius + 1, radius]])
    total = cumsum(padded, axis=3)
    return total[..., 2 * radius + 1:] - total[..., :-(2 * radius + 1)]


@gradient("LRN")
def _lrn_grad(op, grad):
    # y_d = x_d N_d^-beta, N_d = bias + alpha sum_{j in window(d)} x_j^2, so
    # dx_j = g_j N_j^-beta - 2 alpha beta x_j sum_{d in window(j)} g_d y_d / N_d
    from tensorweave.ops.math import math_binary, math_ops
    radius = op._get_attr("depth_radius")
    bias, alpha, beta = op._get_attr("bias"), op._get_attr("alpha"), op._get_attr("beta")
    dtype = op.inputs[0].dtype

    def f32(t):
        return t if dtype == _dt.float32 else math_ops.cast(t, _dt.float32)
    x, y, g = f32(op.inputs[0]), f32(op.outputs[0]), f32(grad)
    norm = bias + alpha * _window_sum_graph(x * x, radius)
    dx = g * math_binary.pow(norm, -beta) - \
        (2.0 * alpha * beta) * x * _window_sum_graph(g * y / norm, radius)
    return [dx if dtype == _dt.float32 else math_ops.cast(dx, dtype)]


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


# --- FusedBatchNormV3 ----------------------------------------------------------------------
_FORMATS = ("NHWC", "NCHW", "NDHWC", "NCDHW")


def _channel_axis(data_format: str) -> int:
    return 1 if data_format.startswith("NC") else -1


def _fused_batch_norm_shape(op):
    fmt = op._get_attr("data_format")
    x = with_rank(op.inputs[0].shape, len(fmt))
    axis = _channel_axis(fmt)
    channels = x.as_list()[axis] if x.ndims is not None else None
    checked = [1, 2]
    if not op._get_attr("is_training") or op._get_attr("exponential_avg_factor") != 1.0:
        checked += [3, 4]
    for i in checked:
        vec = with_rank(op.inputs[i].shape, 1)
        channels = merge_dims(channels, vec.as_list()[0])
    if x.ndims is not None:
        dims = x.as_list()
        dims[axis] = channels
        x = TensorShape(dims)
    vec = TensorShape([channels])
    return [x, vec, vec, vec, vec, unknown_shape()]


register_op("FusedBatchNormV3",
            inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
            outputs=["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U",
                     "reserve_space_2: U", "reserve_space_3: U"],
            attrs={"T": TypeAttr(_HALF_FLOAT), "U": TypeAttr((_dt.float32,)),
                   "epsilon": 0.0001, "exponential_avg_factor": 1.0, "data_format": "NHWC",
                   "is_training": True},
            shape=_fused_batch_norm_shape)


def _per_channel(xp, v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """A [C] vector shaped to broadcast against x along its channel axis."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


@kernel("FusedBatchNormV3")
def _fused_batch_norm_kernel(ctx, x, scale, offset, mean, variance):
    xp = ctx.xp
    fmt = ctx.attrs["data_format"]
    if fmt not in _FORMATS:
        raise errors.InvalidArgumentError(None, ctx.op, "Invalid data format: %s" % fmt)
    if x.ndim != len(fmt):
        raise errors.InvalidArgumentError(
            None, ctx.op, "input must be %d-dimensional%s" % (len(fmt), str(x.shape)))
    axis = _channel_axis(fmt) % x.ndim
    channels = x.shape[axis]
    training = ctx.attrs["is_training"]
    factor = np.float32(ctx.attrs["exponential_avg_factor"])
    vectors = [("scale", scale), ("offset", offset)]
    if not training or factor != 1:
        vectors += [("mean", mean), ("variance", variance)]
    for what, v in vectors:
        if v.ndim != 1 or v.shape[0] != channels:
            raise errors.InvalidArgumentError(
                None, ctx.op, "%s must have the same number of elements as the channels of "
                "x, got %d and %d" % (what, v.size, channels))
    eps = np.float32(ctx.attrs["epsilon"])
    work = x.astype(np.float32, copy=False)
    reduce_axes = tuple(i for i in range(x.ndim) if i != axis)
    if training:
        count = x.size // max(channels, 1)
        batch_mean = work.mean(axis=reduce_axes, dtype=np.float32) if count else \
            xp.full(channels, np.nan, np.float32)
        centered = work - _per_channel(xp, batch_mean, x.ndim, axis)
        batch_var = (centered * centered).mean(axis=reduce_axes, dtype=np.float32) if count \
            else xp.full(channels, np.nan, np.float32)
        unbiased = batch_var * np.float32(count / max(count - 1, 1))
        if factor != 1:
            running_mean = (1 - factor) * mean + factor * batch_mean
            running_var = (1 - factor) * variance + factor * unbiased
        else:
            running_mean, running_var = batch_mean, unbiased
        used_mean, used_var = batch_mean, batch_var
    else:
        used_mean, used_var = mean, variance
        centered = work - _per_channel(xp, mean, x.ndim, axis)
        running_mean, running_var = mean.copy(), variance.copy()
    inv = scale * (1.0 / xp.sqrt(used_var + eps)).astype(np.float32)
    y = centered * _per_channel(xp, inv, x.ndim, axis) + _per_channel(xp, offset, x.ndim, axis)
    return (y.astype(x.dtype, copy=False), running_mean.astype(np.float32),
            running_var.astype(np.float32), used_mean.astype(np.float32),
            used_var.astype(np.float32), xp.zeros(0, np.float32))


@gradient("FusedBatchNormV3")
def _fused_batch_norm_grad(op, grad, *_):
    # only the gradient of y flows back (as TF1). In training the batch statistics are
    # recomputed from x as TF's _BatchNormGrad does (the variance around a stopped
    # mean), so a second derivative follows them as TF's does; in inference they are
    # the given mean and variance.
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    from tensorweave.ops.math.reduction_ops import reduce_mean, reduce_sum
    x, scale = op.inputs[0], op.inputs[1]
    fmt = op._get_attr("data_format")
    rank = len(fmt)
    axis = _channel_axis(fmt) % rank
    reduce_axes = [i for i in range(rank) if i != axis]
    if grad is None:
        grad = array_ops.zeros_like(op.outputs[0])

    def f32(t):
        return t if t.dtype == _dt.float32 else math_ops.cast(t, _dt.float32)

    def per_channel(v):
        if axis == rank - 1:
            return v
        return array_ops.reshape(v, [-1] + [1] * (rank - 1 - axis))
    dy, work = f32(grad), f32(x)
    if op._get_attr("is_training"):
        from tensorweave.ops.control_flow.structure import stop_gradient
        mean = reduce_mean(work, reduce_axes)
        var = reduce_mean(math_binary.squared_difference(
            work, per_channel(stop_gradient(mean))), reduce_axes)
    else:
        mean, var = op.inputs[3], op.inputs[4]
    rstd = math_unary.rsqrt(var + op._get_attr("epsilon"))
    xhat = (work - per_channel(mean)) * per_channel(rstd)
    d_offset = reduce_sum(dy, reduce_axes)
    d_scale = reduce_sum(dy * xhat, reduce_axes)
    if op._get_attr("is_training"):
        count = math_ops.cast(array_ops.size(x), _dt.float32) / \
            math_ops.cast(array_ops.size(scale), _dt.float32)
        dx = per_channel(scale * rstd) * (
            dy - per_channel(d_offset / count) - xhat * per_channel(d_scale / count))
    else:
        dx = dy * per_channel(scale * rstd)
    if x.dtype != _dt.float32:
        dx = math_ops.cast(dx, x.dtype)
    return [dx, d_scale, d_offset, None, None]


@tf_export("nn.fused_batch_norm")
def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon: float = 0.001,
                     data_format: str = "NHWC", is_training: bool = True,
                     name: Optional[str] = None,
                     exponential_avg_factor: float = 1.0) -> Tuple[Tensor, Tensor, Tensor]:
    """Batch normalization of a 4-D (or 5-D) tensor in one op.

    In training, x is normalized with the mean and variance of the batch (over all but
    the channel dimension); the returned variance is the unbiased (n / (n - 1)) one, and
    with `exponential_avg_factor` f != 1 the returned statistics are
    `(1 - f) * mean + f * batch_mean` (likewise the variance). In inference, x is
    normalized with the given `mean` and `variance`, which are returned.

    Args:
      x: a 4-D Tensor (NHWC or NCHW; 5-D for NDHWC, NCDHW) of float16, bfloat16 or float32.
      scale: a 1-D float32 Tensor of the channels' scales.
      offset: a 1-D float32 Tensor of the channels' offsets.
      mean: a 1-D float32 Tensor for inference (or the running mean when
        `exponential_avg_factor` != 1); None in training.
      variance: likewise, the variance.
      epsilon: a small float added to the variance.
      data_format: "NHWC", "NCHW", "NDHWC" or "NCDHW".
      is_training: whether to use the batch statistics.
      name: op name.
      exponential_avg_factor: the weight of the batch statistics in the running ones.

    Returns:
      A tuple (y, batch_mean, batch_variance).

    Raises:
      ValueError: `mean`/`variance` missing where they are needed, or a shape mismatch.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or
                                                              variance is None):
        raise ValueError("Both `mean` and `variance` must be a 1D tensor when `is_training` "
                         "is False or `exponential_avg_factor` != 1.0. Received: `mean` %s "
                         "and `variance` %s" % (mean, variance))
    if data_format not in _FORMATS:
        raise ValueError("data_format must be one of %s, got %r" % (_FORMATS, data_format))
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    mean = convert_to_tensor([] if mean is None else mean, dtype=_dt.float32)
    variance = convert_to_tensor([] if variance is None else variance, dtype=_dt.float32)
    op = apply_op("FusedBatchNormV3", [x, scale, offset, mean, variance],
                  {"epsilon": float(epsilon), "data_format": data_format,
                   "is_training": bool(is_training),
                   "exponential_avg_factor": float(exponential_avg_factor)},
                  name=name or "FusedBatchNormV3")
    return op.outputs[0], op.outputs[1], op.outputs[2]
