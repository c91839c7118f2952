"""Fused batch normalization (FusedBatchNorm, V2, V3), its gradient ops
(FusedBatchNormGrad, V2, V3) and the old BatchNormWithGlobalNormalization (and its Grad)
(part of the nn family).

The three forward versions share one kernel and differ only in their signatures (V1:
all float32; V2: 16-bit x with float32 statistics; V3: a sixth, empty reserve output
and 5-D formats); likewise the three gradient versions. The gradient of a forward op is
TF's: its gradient op, fed the batch statistics the forward op saved (training) or the
given ones (inference); the gradient of a gradient op is the derivative of TF's
composite formula (_BatchNormGrad), which recomputes the batch statistics from x in
training, as in TF. All of them compute in float32 whatever their 16-bit input type, as
TF's kernels do; large float32 ones run on oneDNN's batch normalization (ops/onednn.py),
the kernels TF's x86 builds use.

The gradient ops are not yet in the GPU kernel table (framework/gpu_kernels.py is
written by a survey on a GPU machine, not run since the gradient moved to them): until
it is, on a GPU they are placed on the CPU.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops import onednn
from tensorweave.ops.math.quantize_ops import no_gradient
from tensorweave.ops.nn.nn_ops import compute_dtype, merge_dims, with_rank

_HALF_FLOAT = (_dt.float16, _dt.bfloat16, _dt.float32)
_FORMATS = ("NHWC", "NCHW", "NDHWC", "NCDHW")
_FORMATS_4D = ("NHWC", "NCHW")  # the V1 and V2 ops take 4-D tensors only


def _channel_axis(data_format: str) -> int:
    return 1 if data_format.startswith("NC") else -1


def _data_format(op) -> str:
    """The op's data_format attr, checked against the values its version allows (TF's
    attr check at build time)."""
    fmt = op._get_attr("data_format")
    allowed = _FORMATS if op.type.endswith("V3") else _FORMATS_4D
    if fmt not in allowed:
        raise ValueError("Attr 'data_format' of '%s' Op passed string '%s' not in: %s."
                         % (op.type, fmt, ", ".join('"%s"' % f for f in allowed)))
    return fmt


def _with_channels(shape: TensorShape, axis: int, channels) -> TensorShape:
    """`shape` (of known rank) with its channel dimension set to `channels`."""
    dims = shape.as_list()
    dims[axis] = channels
    return TensorShape(dims)


def _merge_channels(op, channels, indices: Sequence[int]):
    """`channels` merged with the length of each vector input at `indices`."""
    for i in indices:
        channels = merge_dims(channels, with_rank(op.inputs[i].shape, 1).as_list()[0])
    return channels


# --- FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3 ------------------------------------
def _fused_batch_norm_shape(op) -> List[TensorShape]:
    fmt = _data_format(op)
    x = with_rank(op.inputs[0].shape, len(fmt))
    axis = _channel_axis(fmt)
    checked = [1, 2]
    if not op._get_attr("is_training") or op._get_attr("exponential_avg_factor") != 1.0:
        checked += [3, 4]
    channels = _merge_channels(op, x.as_list()[axis], checked)
    vec = TensorShape([channels])
    shapes = [_with_channels(x, axis, channels), vec, vec, vec, vec]
    return shapes + [unknown_shape()] if op.type in _SIX_OUTPUTS else shapes


_SIX_OUTPUTS = ("FusedBatchNormV3", "_FusedBatchNormEx")


_FORWARD_ATTRS = {"epsilon": 0.0001, "exponential_avg_factor": 1.0, "data_format": "NHWC",
                  "is_training": True}
_FORWARD_OUTPUTS = ["y: T", "batch_mean: {U}", "batch_variance: {U}",
                    "reserve_space_1: {U}", "reserve_space_2: {U}"]


def _register_forward(name: str, stats: str, x_types, third_reserve: bool) -> None:
    """Registers one version of FusedBatchNorm; `stats` is the type of its statistics
    ("T" for V1, "U" for V2 and V3)."""
    type_attrs = {"T": TypeAttr(x_types)}
    if stats == "U":
        type_attrs["U"] = TypeAttr((_dt.float32,))
    outputs = [o.format(U=stats) for o in _FORWARD_OUTPUTS]
    if third_reserve:
        outputs.append("reserve_space_3: U")
    register_op(name, inputs=["x: T"] + ["%s: %s" % (i, stats) for i in
                                         ("scale", "offset", "mean", "variance")],
                outputs=outputs, attrs={**type_attrs, **_FORWARD_ATTRS},
                shape=_fused_batch_norm_shape)


_register_forward("FusedBatchNorm", "T", (_dt.float32,), False)
_register_forward("FusedBatchNormV2", "U", _HALF_FLOAT, False)
_register_forward("FusedBatchNormV3", "U", _HALF_FLOAT, True)
# what Grappler's remapper (and runtime/optimizer.py's fuse_batch_norm_relu) makes of a
# FusedBatchNormV3 whose y only a Relu reads; side inputs are not supported
register_op("_FusedBatchNormEx",
            inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U",
                    "side_input: num_side_inputs * T"],
            outputs=[o.format(U="U") for o in _FORWARD_OUTPUTS] + ["reserve_space_3: U"],
            attrs={"T": TypeAttr(_HALF_FLOAT), "U": TypeAttr((_dt.float32,)),
                   **_FORWARD_ATTRS, "num_side_inputs": 0, "activation_mode": "Identity"},
            shape=_fused_batch_norm_shape)


def _per_channel(xp, v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """A [C] vector shaped to broadcast against x along its channel axis."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def _check_layout(ctx, x) -> Tuple[str, int]:
    """(data_format, channel axis) of the kernel input x, checked to fit the format."""
    fmt = ctx.attrs["data_format"]
    if fmt not in _FORMATS:
        raise errors.InvalidArgumentError(None, ctx.op, "Invalid data format: %s" % fmt)
    if x.ndim != len(fmt):
        raise errors.InvalidArgumentError(
            None, ctx.op, "input must be %d-dimensional%s" % (len(fmt), str(x.shape)))
    return fmt, _channel_axis(fmt) % x.ndim


def _check_vectors(ctx, channels: int, vectors) -> None:
    for what, v in vectors:
        if v.ndim != 1 or v.shape[0] != channels:
            raise errors.InvalidArgumentError(
                None, ctx.op, "%s must have the same number of elements as the channels of "
                "x, got %d and %d" % (what, v.size, channels))


def _fused_batch_norm_values(ctx, x, scale, offset, mean, variance,
                             relu: bool = False) -> tuple:
    """y, the running mean and variance, and the mean and variance used (the six
    outputs of FusedBatchNormV3, the last an empty reserve); with `relu`, max(y, 0)."""
    xp = ctx.xp
    fmt, axis = _check_layout(ctx, x)
    channels = x.shape[axis]
    training = ctx.attrs["is_training"]
    factor = np.float32(ctx.attrs["exponential_avg_factor"])
    vectors = [("scale", scale), ("offset", offset)]
    if not training or factor != 1:
        vectors += [("mean", mean), ("variance", variance)]
    _check_vectors(ctx, channels, vectors)
    eps = np.float32(ctx.attrs["epsilon"])
    work = x.astype(np.float32, copy=False)
    reduce_axes = tuple(i for i in range(x.ndim) if i != axis)
    fast = onednn.batch_norm(work, scale, offset, eps, axis, relu=True) \
        if relu and training else None
    if fast is not None and not (np.isfinite(fast[1]).all() and np.isfinite(fast[2]).all()):
        # x holds a NaN or an infinity, so y may hold NaN, which oneDNN's ReLU turns into
        # 0 and TF's Relu keeps (finite statistics mean a finite y)
        fast = None
    applied = fast is not None
    if fast is None:
        fast = onednn.batch_norm(work, scale, offset, eps, axis,
                                 *(() if training else (mean, variance)))
    if training:
        count = x.size // max(channels, 1)
        if fast is not None:
            y, batch_mean, batch_var = fast
        else:
            batch_mean = work.mean(axis=reduce_axes, dtype=np.float32) if count else \
                xp.full(channels, np.nan, np.float32)
            centered = work - _per_channel(xp, batch_mean, x.ndim, axis)
            batch_var = (centered * centered).mean(axis=reduce_axes, dtype=np.float32) \
                if count else xp.full(channels, np.nan, np.float32)
        unbiased = batch_var * np.float32(count / max(count - 1, 1))
        if factor != 1:
            running_mean = (1 - factor) * mean + factor * batch_mean
            running_var = (1 - factor) * variance + factor * unbiased
        else:
            running_mean, running_var = batch_mean, unbiased
        used_mean, used_var = batch_mean, batch_var
    else:
        used_mean, used_var = mean, variance
        if fast is not None:
            y = fast[0]
        else:
            centered = work - _per_channel(xp, mean, x.ndim, axis)
        running_mean, running_var = mean.copy(), variance.copy()
    if fast is None:
        inv = scale * (1.0 / xp.sqrt(used_var + eps)).astype(np.float32)
        y = centered * _per_channel(xp, inv, x.ndim, axis) + \
            _per_channel(xp, offset, x.ndim, axis)
    if relu and not applied:
        y = xp.maximum(y, np.float32(0))  # TF's Relu (NaN stays NaN)
    return (y.astype(x.dtype, copy=False), running_mean.astype(np.float32),
            running_var.astype(np.float32), used_mean.astype(np.float32),
            used_var.astype(np.float32), xp.zeros(0, np.float32))


@kernel("FusedBatchNormV3", cheap=False, threaded=onednn.runs_float32)
def _fused_batch_norm_v3_kernel(ctx, x, scale, offset, mean, variance):
    return _fused_batch_norm_values(ctx, x, scale, offset, mean, variance)


_ACTIVATIONS = {"Identity": False, "Relu": True}  # _FusedBatchNormEx's: apply ReLU


@kernel("_FusedBatchNormEx", cheap=False, threaded=onednn.runs_float32)
def _fused_batch_norm_ex_kernel(ctx, x, scale, offset, mean, variance, *side_inputs):
    mode = ctx.attrs["activation_mode"]
    if side_inputs or mode not in _ACTIVATIONS:
        raise errors.UnimplementedError(
            None, ctx.op, "_FusedBatchNormEx with activation_mode %s and %d side inputs is "
            "not supported (Identity or Relu, no side input)" % (mode, len(side_inputs)))
    return _fused_batch_norm_values(ctx, x, scale, offset, mean, variance,
                                    relu=_ACTIVATIONS[mode])


@kernel("FusedBatchNorm", cheap=False, threaded=onednn.runs_float32)
@kernel("FusedBatchNormV2", cheap=False, threaded=onednn.runs_float32)
def _fused_batch_norm_kernel(ctx, x, scale, offset, mean, variance):
    # V1 and V2 have no third reserve output
    return _fused_batch_norm_values(ctx, x, scale, offset, mean, variance)[:5]


@gradient("FusedBatchNorm")
@gradient("FusedBatchNormV2")
@gradient("FusedBatchNormV3")
def _fused_batch_norm_grad(op, grad, *_):
    # TF's _BaseFusedBatchNormGrad: only the gradient of y flows back (as TF1), through
    # the gradient op of the forward op's version, fed the saved batch statistics in
    # training and the given ones in inference (whose data format the kernel takes
    # as it is: TF transposes NCHW to NHWC there for its GPU kernel)
    from tensorweave.ops.array import array_ops
    if grad is None:
        grad = array_ops.zeros_like(op.outputs[0])
    return _backprop_op(op, grad)


@gradient("_FusedBatchNormEx")
def _fused_batch_norm_ex_grad(op, grad, *_):
    # the gradient of the pair it stands for (TF registers none: Grappler fuses after the
    # gradients are built): ReluGrad of the output, then FusedBatchNormV3's
    from tensorweave.ops.array import array_ops
    mode = op._get_attr("activation_mode")
    if mode not in _ACTIVATIONS or op._get_attr("num_side_inputs"):
        raise LookupError("No gradient defined for _FusedBatchNormEx with activation_mode "
                          "%s and side inputs" % mode)
    if grad is None:
        grad = array_ops.zeros_like(op.outputs[0])
    if _ACTIVATIONS[mode]:
        grad = apply_op("ReluGrad", [grad, op.outputs[0]], name="ReluGrad").outputs[0]
    return _backprop_op(op, grad)


def _backprop_op(op, grad) -> list:
    """The gradients of a forward op's inputs for `grad` of its y: its gradient op's."""
    training = op._get_attr("is_training")
    statistics = op.outputs[3:5] if training else op.inputs[3:5]
    grad_type = _GRAD_OPS[op.type]
    inputs = [grad, op.inputs[0], op.inputs[1]] + list(statistics)
    if grad_type == "FusedBatchNormGradV3":
        inputs.append(op.outputs[5])
    attrs = {"epsilon": op._get_attr("epsilon"), "data_format": op._get_attr("data_format"),
             "is_training": training}
    dx, d_scale, d_offset = apply_op(grad_type, inputs, attrs, name=grad_type).outputs[:3]
    return [dx, d_scale, d_offset, None, None]


_GRAD_OPS = {"FusedBatchNorm": "FusedBatchNormGrad", "FusedBatchNormV2": "FusedBatchNormGradV2",
             "FusedBatchNormV3": "FusedBatchNormGradV3",
             "_FusedBatchNormEx": "FusedBatchNormGradV3"}


# --- FusedBatchNormGrad, FusedBatchNormGradV2, FusedBatchNormGradV3 ------------------------
def _fused_batch_norm_grad_shape(op) -> List[TensorShape]:
    fmt = _data_format(op)
    rank, axis = len(fmt), _channel_axis(fmt)
    dy = with_rank(op.inputs[0].shape, rank)
    x = with_rank(op.inputs[1].shape, rank)
    channels = merge_dims(dy.as_list()[axis], x.as_list()[axis])
    channels = _merge_channels(op, channels, [2, 3, 4])
    vec, empty = TensorShape([channels]), TensorShape([0])
    return [_with_channels(dy, axis, channels), vec, vec, empty, empty]


_GRAD_ATTRS = {"epsilon": 0.0001, "data_format": "NHWC", "is_training": True}

register_op("FusedBatchNormGrad",
            inputs=["y_backprop: T", "x: T", "scale: T", "reserve_space_1: T",
                    "reserve_space_2: T"],
            outputs=["x_backprop: T", "scale_backprop: T", "offset_backprop: T",
                     "reserve_space_3: T", "reserve_space_4: T"],
            attrs={"T": TypeAttr((_dt.float32,)), **_GRAD_ATTRS},
            shape=_fused_batch_norm_grad_shape)
register_op("FusedBatchNormGradV2",
            inputs=["y_backprop: T", "x: T", "scale: float32", "reserve_space_1: U",
                    "reserve_space_2: U"],
            outputs=["x_backprop: T", "scale_backprop: U", "offset_backprop: U",
                     "reserve_space_3: U", "reserve_space_4: U"],
            attrs={"T": TypeAttr(_HALF_FLOAT), "U": TypeAttr((_dt.float32,)),
                   **_GRAD_ATTRS},
            shape=_fused_batch_norm_grad_shape)
register_op("FusedBatchNormGradV3",
            inputs=["y_backprop: T", "x: T", "scale: float32", "reserve_space_1: U",
                    "reserve_space_2: U", "reserve_space_3: U"],
            outputs=["x_backprop: T", "scale_backprop: U", "offset_backprop: U",
                     "reserve_space_4: U", "reserve_space_5: U"],
            attrs={"T": TypeAttr(_HALF_FLOAT), "U": TypeAttr((_dt.float32,)),
                   **_GRAD_ATTRS},
            shape=_fused_batch_norm_grad_shape)


@kernel("FusedBatchNormGrad", cheap=False, threaded=onednn.runs_float32)
@kernel("FusedBatchNormGradV2", cheap=False, threaded=onednn.runs_float32)
@kernel("FusedBatchNormGradV3", cheap=False, threaded=onednn.runs_float32)
def _fused_batch_norm_grad_kernel(ctx, dy, x, scale, mean, variance, *_):
    """dx, d_scale, d_offset from the saved batch statistics (training: TF's formula with
    the batch mean and biased variance) or the given ones (inference); two empty
    reserve outputs."""
    xp = ctx.xp
    fmt, axis = _check_layout(ctx, x)
    if dy.shape != x.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, "x and y_backprop must have same shape, but x has shape %s and "
            "y_backprop has shape %s" % (list(x.shape), list(dy.shape)))
    channels = x.shape[axis]
    _check_vectors(ctx, channels, [("scale", scale), ("reserve_space_1", mean),
                                   ("reserve_space_2", variance)])
    reduce_axes = tuple(i for i in range(x.ndim) if i != axis)
    g = dy.astype(np.float32, copy=False)
    fast = onednn.batch_norm_grad(g, x.astype(np.float32, copy=False), scale, mean, variance,
                                  np.float32(ctx.attrs["epsilon"]), axis,
                                  ctx.attrs["is_training"])
    empty = xp.zeros(0, np.float32)
    if fast is not None:
        dx, d_scale, d_offset = fast
        return dx.astype(x.dtype, copy=False), d_scale, d_offset, empty, empty
    rstd = (1.0 / xp.sqrt(variance + np.float32(ctx.attrs["epsilon"]))).astype(np.float32)
    xhat = (x.astype(np.float32, copy=False) - _per_channel(xp, mean, x.ndim, axis)) * \
        _per_channel(xp, rstd, x.ndim, axis)
    d_offset = g.sum(axis=reduce_axes, dtype=np.float32)
    d_scale = (g * xhat).sum(axis=reduce_axes, dtype=np.float32)
    if ctx.attrs["is_training"]:
        count = np.float32(max(x.size // max(channels, 1), 1))
        g = g - _per_channel(xp, d_offset / count, x.ndim, axis) - \
            xhat * _per_channel(xp, d_scale / count, x.ndim, axis)
    dx = g * _per_channel(xp, scale * rstd, x.ndim, axis)
    return dx.astype(x.dtype, copy=False), d_scale, d_offset, empty, empty


def _backprop_graph(dy: Tensor, x: Tensor, scale: Tensor, mean: Tensor, variance: Tensor,
                    epsilon: float, data_format: str, is_training: bool) -> List[Tensor]:
    """[dx, d_scale, d_offset] of batch normalization in graph ops (TF's
    _BatchNormGrad). In training the batch statistics are recomputed from x (the
    variance around a stopped mean), so their derivatives follow x as TF's do; `mean`
    and `variance` are used in inference only."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.control_flow.structure import stop_gradient
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    from tensorweave.ops.math.reduction_ops import reduce_mean, reduce_sum
    rank = len(data_format)
    axis = _channel_axis(data_format) % rank
    reduce_axes = [i for i in range(rank) if i != axis]

    def f32(t):
        return t if t.dtype == _dt.float32 else math_ops.cast(t, _dt.float32)

    def per_channel(v):
        if axis == rank - 1:
            return v
        return array_ops.reshape(v, [-1] + [1] * (rank - 1 - axis))
    g, work = f32(dy), f32(x)
    if is_training:
        mean = reduce_mean(work, reduce_axes)
        variance = reduce_mean(math_binary.squared_difference(
            work, per_channel(stop_gradient(mean))), reduce_axes)
    rstd = math_unary.rsqrt(variance + epsilon)
    xhat = (work - per_channel(mean)) * per_channel(rstd)
    d_offset = reduce_sum(g, reduce_axes)
    d_scale = reduce_sum(g * xhat, reduce_axes)
    if is_training:
        count = math_ops.cast(array_ops.size(x), _dt.float32) / \
            math_ops.cast(array_ops.size(scale), _dt.float32)
        g = g - per_channel(d_offset / count) - xhat * per_channel(d_scale / count)
    dx = g * per_channel(scale * rstd)
    if x.dtype != _dt.float32:
        dx = math_ops.cast(dx, x.dtype)
    return [dx, d_scale, d_offset]


@gradient("FusedBatchNormGrad")
@gradient("FusedBatchNormGradV2")
@gradient("FusedBatchNormGradV3")
def _fused_batch_norm_grad_grad(op, *grads):
    # TF's _FusedBatchNormGradGrad: the partial derivatives of the composite formula with
    # respect to y_backprop, x and scale (held as leaves: the walk stops at them)
    from tensorweave.autodiff.gradients import gradients
    dy, x, scale, mean, variance = op.inputs[:5]
    outputs = _backprop_graph(dy, x, scale, mean, variance, op._get_attr("epsilon"),
                              op._get_attr("data_format"), op._get_attr("is_training"))
    seeded = [(y, g) for y, g in zip(outputs, grads[:3]) if g is not None]
    none_for_statistics = [None] * (len(op.inputs) - 3)
    if not seeded:
        return [None, None, None] + none_for_statistics
    leaves = [dy, x, scale]
    partials = gradients([y for y, _ in seeded], leaves, grad_ys=[g for _, g in seeded],
                         stop_gradients=leaves)
    return partials + none_for_statistics


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


# --- BatchNormWithGlobalNormalization and its Grad (deprecated at GraphDef version 9) -----
_GLOBAL_NORM_TYPES = (_dt.float16, _dt.float32, _dt.float64)  # TF's CPU kernels
_GLOBAL_NORM_ATTRS = {"T": TypeAttr(_GLOBAL_NORM_TYPES), "variance_epsilon": REQUIRED,
                      "scale_after_normalization": REQUIRED}


def _global_norm_shape(op) -> TensorShape:
    t = with_rank(op.inputs[0].shape, 4)
    channels = _merge_channels(op, t.as_list()[3], [1, 2, 3, 4])
    return _with_channels(t, 3, channels)


def _global_norm_grad_shape(op) -> List[TensorShape]:
    t = with_rank(op.inputs[0].shape, 4)
    backprop = with_rank(op.inputs[4].shape, 4)
    dims = [merge_dims(a, b) for a, b in zip(t.as_list(), backprop.as_list())]
    channels = _merge_channels(op, dims[3], [1, 2, 3])
    vec = TensorShape([channels])
    return [_with_channels(TensorShape(dims), 3, channels), vec, vec, vec, vec]


register_op("BatchNormWithGlobalNormalization",
            inputs=["t: T", "m: T", "v: T", "beta: T", "gamma: T"], outputs=["result: T"],
            attrs=dict(_GLOBAL_NORM_ATTRS), shape=_global_norm_shape)
register_op("BatchNormWithGlobalNormalizationGrad",
            inputs=["t: T", "m: T", "v: T", "gamma: T", "backprop: T"],
            outputs=["dx: T", "dm: T", "dv: T", "db: T", "dg: T"],
            attrs=dict(_GLOBAL_NORM_ATTRS), shape=_global_norm_grad_shape)


def _check_global_norm_inputs(ctx, t, vectors, backprop=None) -> None:
    if t.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be 4-dimensional%s"
                                          % str(t.shape))
    for what, v in vectors:
        if v.ndim != 1 or v.shape[0] != t.shape[3]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "%s must be 1-dimensional with the depth of the input (%d), "
                "got shape %s" % (what, t.shape[3], list(v.shape)))
    if backprop is not None and backprop.shape != t.shape:
        raise errors.InvalidArgumentError(
            None, ctx.op, "out_backprop must have the shape of the input %s, got %s"
            % (list(t.shape), list(backprop.shape)))


@kernel("BatchNormWithGlobalNormalization")
def _global_norm_kernel(ctx, t, m, v, beta, gamma):
    _check_global_norm_inputs(ctx, t, [("mean", m), ("var", v), ("beta", beta),
                                       ("gamma", gamma)])
    ct = np.dtype(compute_dtype(t)).type  # float32 for float16
    scale = 1.0 / ctx.xp.sqrt(v.astype(ct) + ct(ctx.attrs["variance_epsilon"]))
    if ctx.attrs["scale_after_normalization"]:
        scale = scale * gamma.astype(ct)
    out = (t.astype(ct) - m.astype(ct)) * scale + beta.astype(ct)
    return out.astype(t.dtype, copy=False)


@kernel("BatchNormWithGlobalNormalizationGrad")
def _global_norm_grad_kernel(ctx, t, m, v, gamma, backprop):
    # TF's BatchNormGrad functor: with r = rsqrt(v + eps) and s = gamma (or 1 when not
    # scale_after_normalization): dx = backprop * s r, db = sum(backprop),
    # dm = -db s r, dv = sum(backprop (t - m)) s (-r^3 / 2), dg = sum(backprop (t - m)) r
    # (zeros when gamma is not used)
    _check_global_norm_inputs(ctx, t, [("mean", m), ("var", v), ("gamma", gamma)],
                              backprop)
    ct = np.dtype(compute_dtype(t)).type  # float32 for float16
    g = backprop.astype(ct)
    rstd = 1.0 / ctx.xp.sqrt(v.astype(ct) + ct(ctx.attrs["variance_epsilon"]))
    scaled = ctx.attrs["scale_after_normalization"]
    s = gamma.astype(ct) if scaled else ctx.xp.ones_like(rstd)
    db = g.sum(axis=(0, 1, 2))
    centered_sum = (g * (t.astype(ct) - m.astype(ct))).sum(axis=(0, 1, 2))
    dg = centered_sum * rstd if scaled else ctx.xp.zeros_like(rstd)
    dv = centered_sum * s * (-0.5 * rstd ** 3)
    outs = (g * (s * rstd), -db * s * rstd, dv, db, dg)
    return tuple(o.astype(t.dtype, copy=False) for o in outs)


@gradient("BatchNormWithGlobalNormalization")
def _global_norm_gradient(op, grad):
    # TF's _BatchNormWithGlobalNormalizationGrad: the Grad op's five outputs are the
    # gradients of (t, m, v, beta, gamma)
    t, m, v, _, gamma = op.inputs
    attrs = {k: op._get_attr(k) for k in ("variance_epsilon", "scale_after_normalization")}
    return list(apply_op("BatchNormWithGlobalNormalizationGrad", [t, m, v, gamma, grad],
                         attrs, name="BatchNormWithGlobalNormalizationGrad").outputs)


# TF registers no gradient for the Grad op: tf.gradients through it raises LookupError
gradient("BatchNormWithGlobalNormalizationGrad")(no_gradient)
