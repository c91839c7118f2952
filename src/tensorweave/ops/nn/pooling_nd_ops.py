"""3-D pooling (MaxPool3D, AvgPool3D and their gradient ops), 1-D pooling through the
2-D ops, and `tf.nn.pool`.

The 3-D kernels loop over the taps of the window, each tap a strided slice of the padded
channels-last input covering every output position at once, as the 2-D kernels of
pooling_ops.py do. Max pooling follows TF's CPU kernels, NaN included (see
`_max_pool_nd` and `_max_masks`): they differ from the 2-D ones. Average pooling divides
by the number of real (unpadded) elements of each window.

float32 average pooling, its gradient and max pooling of finite values run on oneDNN's
kernels (ops/onednn.py) where it is there. TF's own builds differ on max pooling's
non-finite values: with oneDNN (the default on x86) NaN is skipped and a window of -inf
gives the lowest finite float, its Eigen kernels do as `_max_pool_nd`; so an input with
a NaN or -inf stays on `_max_pool_nd`, the same result whichever kernel runs.
"""
from __future__ import annotations

from functools import reduce
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops import onednn
from tensorweave.ops.nn.conv_nd_gemm import pad_nd, taps, unpad_nd
from tensorweave.ops.nn.conv_nd_ops import (channels_back, channels_last, channels_last_shape,
                                            check_nd_attrs, check_rank, dims_of_rank,
                                            sizes_arg, spatial_axes)
from tensorweave.ops.nn.conv_ops import (_check_enum, _get_sequence, make_window,
                                         shape_tensor, window_output_size)
from tensorweave.ops.nn.pooling_ops import (_half_to_float, avg_pool, max_pool,
                                            register_max_pool_routing_gradients)

_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_FORMATS_3D = ("NDHWC", "NCDHW")


# --- ops ----------------------------------------------------------------------------------
def _pool3d_shape_of(op, input_shape) -> TensorShape:
    padding, fmt = check_nd_attrs(op, 5, _FORMATS_3D, names=("ksize", "strides"))
    dims = dims_of_rank(input_shape, 5)
    ksize, strides = op._get_attr("ksize"), op._get_attr("strides")
    return TensorShape([d if a not in spatial_axes(fmt, 5) else
                        window_output_size(d, k, s, 1, padding)
                        for a, (d, k, s) in enumerate(zip(dims, ksize, strides))])


_POOL3D_ATTRS = {"ksize": [1] * 5, "strides": [1] * 5, "padding": "VALID",
                 "data_format": "NDHWC"}

register_op("MaxPool3D", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_TYPES), **_POOL3D_ATTRS},
            shape=lambda op: _pool3d_shape_of(op, op.inputs[0].shape))
register_op("MaxPool3DGrad",
            inputs=["orig_input: TInput", "orig_output: TInput", "grad: T"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(_TYPES, _dt.float32), "TInput": TypeAttr(_TYPES, _dt.float32),
                   **_POOL3D_ATTRS},
            shape=lambda op: TensorShape(dims_of_rank(op.inputs[0].shape, 5)))
register_op("MaxPool3DGradGrad",
            inputs=["orig_input: T", "orig_output: T", "grad: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.REAL_NUMBERS), **_POOL3D_ATTRS},
            shape=lambda op: _pool3d_shape_of(op, op.inputs[0].shape).merge_with(
                op.inputs[1].shape))
register_op("AvgPool3D", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(_TYPES), **_POOL3D_ATTRS},
            shape=lambda op: _pool3d_shape_of(op, op.inputs[0].shape))
register_op("AvgPool3DGrad", inputs=["orig_input_shape: int32", "grad: T"],
            outputs=["output: T"], attrs={"T": TypeAttr(_TYPES), **_POOL3D_ATTRS},
            shape=lambda op: TensorShape(dims_of_rank(
                tensor_util.constant_value_as_shape(op.inputs[0]), 5)))


# --- kernels ------------------------------------------------------------------------------
def _windows(ctx, in_cl):
    attrs = ctx.attrs
    fmt = attrs["data_format"]
    ksize, strides = list(attrs["ksize"]), list(attrs["strides"])
    d_ax = 1 if fmt.startswith("NC") else 4
    if ksize[0] != 1 or strides[0] != 1 or ksize[d_ax] != 1 or strides[d_ax] != 1:
        raise errors.UnimplementedError(None, ctx.op, "Pooling is not yet supported on the "
                                        "batch nor channel dimension.")
    return [make_window(in_cl[i + 1], ksize[a], strides[a], 1, attrs["padding"])
            for i, a in enumerate(spatial_axes(fmt, 5))]


def _max_pool_nd(x, wins, lowest=None):
    """(pooled, padded input) of a channels-last array, as TF's CPU MaxPool3D (an Eigen
    reduction): padding holds the lowest finite value (`lowest`, by default x's), and
    the running maximum takes each cell of the window in row-major order unless the cell
    is smaller than it. A NaN cell is thus taken (NaN compares false) and the next cell
    replaces it: whether a window gives NaN depends on where its NaN are, as in TF."""
    xp = pad_nd(x, wins, _dt.as_dtype(x.dtype).min if lowest is None else lowest)
    out = None
    for _, index in taps(wins):
        cell = xp[index]
        if out is None:
            out = cell.copy()
            continue
        after_nan = np.isnan(out)
        np.maximum(out, cell, out=out)
        np.copyto(out, cell, where=after_nan)
    return out, xp


def _max_masks(xp, y, wins, first_only: bool):
    """Yields (index, mask): mask marks the outputs this tap routes to. TF's MaxPool3DGrad
    sends a window's gradient to every cell within 1e-5 of its maximum (none when the
    maximum is NaN or infinite: the difference is NaN); its MaxPool3DGradGrad reads the
    first cell equal to the maximum only."""
    free = np.ones(y.shape, dtype=bool)
    for _, index in taps(wins):
        if first_only:
            hit = (xp[index] == y) & free
            free &= ~hit
        else:
            with np.errstate(invalid="ignore", over="ignore"):
                hit = np.abs(xp[index] - y) < 1e-5
        yield index, hit


def _window_counts(wins, dtype):
    """[*outs, 1]: the number of real input elements in each window."""
    def per_dim(w):
        start = np.arange(w.out) * w.stride - w.pad_before
        return np.minimum(start + w.k, w.size) - np.maximum(start, 0)
    counts = reduce(np.multiply.outer, [per_dim(w) for w in wins])
    return counts.astype(dtype)[..., None]


def _pooled_input(ctx, x):
    check_rank(ctx, "input", x, 5)
    fmt = ctx.attrs["data_format"]
    xc = channels_last(x, fmt)
    return fmt, xc, _windows(ctx, xc.shape)


@kernel("MaxPool3D", cheap=False, threaded=onednn.runs_float32)
def _max_pool3d_kernel(ctx, x):
    fmt, xc, wins = _pooled_input(ctx, x)
    ct = _half_to_float(x.dtype) if x.dtype.kind == "f" else x.dtype
    xc = xc.astype(ct, copy=False)
    # the minimum is NaN or -inf where the kernels could differ (module docstring)
    pooled = onednn.pool(xc, wins, "max") if ct == np.float32 and xc.size and \
        np.isfinite(np.minimum.reduce(xc, axis=None)) else None
    if pooled is None:
        pooled, _ = _max_pool_nd(xc, wins, _dt.as_dtype(x.dtype).min)
    return channels_back(pooled.astype(x.dtype, copy=False), fmt)


@kernel("MaxPool3DGrad", cheap=False)
def _max_pool3d_grad_kernel(ctx, x, y, dy):
    fmt, xc, wins = _pooled_input(ctx, x)
    dyc = channels_last(dy, fmt)
    if dyc.shape != (xc.shape[0],) + tuple(w.out for w in wins) + (xc.shape[-1],):
        raise errors.InvalidArgumentError(None, ctx.op, "Expected grad shape to be %s, but "
                                          "got %s" % (list(y.shape), list(dy.shape)))
    pooled, xp = _max_pool_nd(xc, wins)
    dxp = np.zeros(xp.shape, dtype=dy.dtype)
    for index, mask in _max_masks(xp, pooled, wins, first_only=False):
        dxp[index] += dyc * mask
    return channels_back(unpad_nd(dxp, wins), fmt)


@kernel("MaxPool3DGradGrad", cheap=False)
def _max_pool3d_grad_grad_kernel(ctx, x, y, ddx):
    fmt, xc, wins = _pooled_input(ctx, x)
    ddxc = channels_last(ddx, fmt)
    if ddxc.shape != xc.shape:
        raise errors.InvalidArgumentError(None, ctx.op, "grad must have the shape of "
                                          "orig_input: %s vs %s" % (list(ddx.shape),
                                                                    list(x.shape)))
    pooled, xp = _max_pool_nd(xc, wins)
    gp = pad_nd(ddxc, wins, 0)
    out = np.zeros(pooled.shape, dtype=ddx.dtype)
    for index, mask in _max_masks(xp, pooled, wins, first_only=True):
        out += gp[index] * mask
    return channels_back(out, fmt)


@kernel("AvgPool3D", cheap=False, threaded=onednn.runs_float32)
def _avg_pool3d_kernel(ctx, x):
    fmt, xc, wins = _pooled_input(ctx, x)
    ct = _half_to_float(x.dtype)
    fast = onednn.pool(xc.astype(ct, copy=False), wins, "avg")
    if fast is not None:
        return channels_back(fast.astype(x.dtype, copy=False), fmt)
    xp = pad_nd(xc.astype(ct, copy=False), wins, 0)
    out = None
    for _, index in taps(wins):
        out = xp[index].copy() if out is None else np.add(out, xp[index], out=out)
    out /= _window_counts(wins, ct)
    return channels_back(out.astype(x.dtype, copy=False), fmt)


@kernel("AvgPool3DGrad", cheap=False, threaded=onednn.runs_float32)
def _avg_pool3d_grad_kernel(ctx, orig_input_shape, dy):
    fmt = ctx.attrs["data_format"]
    in_cl = channels_last_shape(sizes_arg(ctx, orig_input_shape, 5, "orig_input_shape"), fmt)
    dyc = channels_last(dy, fmt)
    wins = _windows(ctx, in_cl)
    if dyc.shape != (in_cl[0],) + tuple(w.out for w in wins) + (in_cl[-1],):
        raise errors.InvalidArgumentError(None, ctx.op, "grad shape %s does not match the "
                                          "pooled shape of %s" % (list(dy.shape),
                                                                  list(in_cl)))
    ct = _half_to_float(dy.dtype)
    fast = onednn.avg_pool_grad(in_cl, dyc.astype(ct, copy=False), wins)
    if fast is not None:
        return channels_back(fast.astype(dy.dtype, copy=False), fmt)
    share = dyc.astype(ct) / _window_counts(wins, ct)
    dxp = np.zeros((in_cl[0],) + tuple(w.padded for w in wins) + (in_cl[-1],), dtype=ct)
    for _, index in taps(wins):
        dxp[index] += share
    return channels_back(unpad_nd(dxp, wins).astype(dy.dtype, copy=False), fmt)


# --- gradients ----------------------------------------------------------------------------
def _attrs(op) -> dict:
    return {k: op._get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}


@gradient("MaxPool3D")
def _max_pool3d_grad(op, grad):
    return [apply_op("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad], _attrs(op),
                     name="MaxPool3DGrad").outputs[0]]


register_max_pool_routing_gradients("MaxPool3DGrad", "MaxPool3DGradGrad", _attrs)


@gradient("AvgPool3D")
def _avg_pool3d_grad(op, grad):
    return [apply_op("AvgPool3DGrad", [shape_tensor(op.inputs[0]), grad], _attrs(op),
                     name="AvgPool3DGrad").outputs[0]]


@gradient("AvgPool3DGrad")
def _avg_pool3d_grad_grad(op, grad):
    return [None, apply_op("AvgPool3D", [grad], _attrs(op), name="AvgPool3D").outputs[0]]


# --- builders -----------------------------------------------------------------------------
def _pool3d(op_type, input, ksize, strides, padding, data_format, name):  # noqa: A002
    if data_format is None:
        data_format = "NDHWC"
    if isinstance(padding, bytes):
        padding = padding.decode()
    _check_enum(op_type, "padding", padding, ("SAME", "VALID"))
    _check_enum(op_type, "data_format", data_format, _FORMATS_3D)
    channel_index = 1 if data_format.startswith("NC") else 4
    attrs = {"ksize": _get_sequence(ksize, 3, channel_index, "ksize"),
             "strides": _get_sequence(strides, 3, channel_index, "strides"),
             "padding": padding, "data_format": data_format}
    return apply_op(op_type, [input], attrs, name=name or op_type).outputs[0]


@tf_export("nn.max_pool3d")
def max_pool3d(input, ksize, strides, padding, data_format: str = "NDHWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """Max pooling over 3-D windows of a 5-D input (TF1 `tf.nn.max_pool3d`).

    Args:
      input: a 5-D Tensor (NDHWC or NCDHW) of half, bfloat16, float32 or float64.
      ksize: an int or a list of 1, 3 or 5 ints.
      strides: an int or a list of 1, 3 or 5 ints.
      padding: "SAME" or "VALID".
      data_format: "NDHWC" (default) or "NCDHW".
      name: op name.

    Returns:
      A Tensor of the type of `input`.

    Raises:
      ValueError: bad attrs, a rank other than 5, pooling over batch or channels.
    """
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


@tf_export("nn.avg_pool3d")
def avg_pool3d(input, ksize, strides, padding, data_format: str = "NDHWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """Average pooling over 3-D windows of a 5-D input (TF1 `tf.nn.avg_pool3d`); with SAME
    padding each window's mean counts only its real elements.

    Args:
      input: a 5-D Tensor (NDHWC or NCDHW) of half, bfloat16, float32 or float64.
      ksize: an int or a list of 1, 3 or 5 ints.
      strides: an int or a list of 1, 3 or 5 ints.
      padding: "SAME" or "VALID".
      data_format: "NDHWC" (default) or "NCDHW".
      name: op name.

    Returns:
      A Tensor of the type of `input`.
    """
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


def _pool1d(pool2d, default_name, input, ksize, strides, padding, data_format,  # noqa: A002
            name):
    from tensorweave.ops.array.array_ops import expand_dims, squeeze
    with name_scope(name, default_name, [input]) as scope:
        if data_format is None or data_format == "NWC":
            fmt, expanding_dim = "NHWC", 1
        elif data_format == "NCW":
            fmt, expanding_dim = "NCHW", 2
        else:
            raise ValueError("`data_format` must be 'NWC' or 'NCW'. Received: "
                             "data_format=%s" % data_format)
        channel_index = 1 if fmt == "NCHW" else 2
        ksize = [1] + _get_sequence(ksize, 1, channel_index, "ksize")
        strides = [1] + _get_sequence(strides, 1, channel_index, "strides")
        expanded = expand_dims(input, expanding_dim)
        result = pool2d(expanded, ksize, strides, padding, data_format=fmt, name=scope)
        return squeeze(result, expanding_dim)


@tf_export("nn.max_pool1d")
def max_pool1d(input, ksize, strides, padding, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """Max pooling over 1-D windows of a 3-D input (TF1 `tf.nn.max_pool1d`), through the
    2-D MaxPool with a height of 1.

    Args:
      input: a 3-D Tensor [batch, width, channels] (NWC) or [batch, channels, width] (NCW).
      ksize: an int or a list of 1 or 3 ints.
      strides: an int or a list of 1 or 3 ints.
      padding: "SAME", "VALID" or a list of 3 [before, after] pairs.
      data_format: "NWC" (default) or "NCW".
      name: name scope of the ops.

    Returns:
      A 3-D Tensor of the type of `input`.
    """
    return _pool1d(max_pool, "MaxPool1d", input, ksize, strides, padding, data_format, name)


@tf_export("nn.avg_pool1d")
def avg_pool1d(input, ksize, strides, padding, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """Average pooling over 1-D windows of a 3-D input (TF1 `tf.nn.avg_pool1d`), through
    the 2-D AvgPool with a height of 1.

    Args:
      input: a 3-D Tensor (NWC or NCW) of half, bfloat16, float32 or float64.
      ksize: an int or a list of 1 or 3 ints.
      strides: an int or a list of 1 or 3 ints.
      padding: "SAME" or "VALID".
      data_format: "NWC" (default) or "NCW".
      name: name scope of the ops.

    Returns:
      A 3-D Tensor of the type of `input`.
    """
    return _pool1d(avg_pool, "AvgPool1D", input, ksize, strides, padding, data_format, name)


def _strides_and_dilation_rate(n: int, strides, dilation_rate):
    """TF's _get_strides_and_dilation_rate: both as int32 vectors of n values, checked."""
    if dilation_rate is None:
        dilation_rate = [1] * n
    elif len(dilation_rate) != n:
        raise ValueError("`len(dilation_rate)` should be %d. Received: dilation_rate=%s of "
                         "length %d" % (n, dilation_rate, len(dilation_rate)))
    dilation_rate = np.array(dilation_rate, dtype=np.int32)
    if np.any(dilation_rate < 1):
        raise ValueError("all values of `dilation_rate` must be positive. Received: "
                         "dilation_rate=%s" % dilation_rate)
    if strides is None:
        strides = [1] * n
    elif len(strides) != n:
        raise ValueError("`len(strides)` should be %d. Received: strides=%s of length %d"
                         % (n, strides, len(strides)))
    strides = np.array(strides, dtype=np.int32)
    if np.any(strides < 1):
        raise ValueError("all values of `strides` must be positive. Received: strides=%s"
                         % strides)
    if np.any(strides > 1) and np.any(dilation_rate > 1):
        raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                         "1`. Received: strides=%s and dilation_rate=%s"
                         % (strides, dilation_rate))
    return strides, dilation_rate


@tf_export("nn.pool")
def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name: Optional[str] = None, data_format: Optional[str] = None,
         dilations=None) -> Tensor:
    """N-d max or average pooling, N = 1, 2 or 3 from `window_shape` (TF1 `tf.nn.pool`).

    With a dilation rate above 1 the window samples every `rate`-th input position: the
    input goes through space_to_batch_nd (one batch per phase of the rate), a VALID
    pool with the undilated window runs on it, and batch_to_space_nd puts the result
    back, as TF does (`tf.nn.with_space_to_batch`); gradients flow through all three.

    Args:
      input: a Tensor of rank N+2.
      window_shape: a list of N ints.
      pooling_type: "MAX" or "AVG".
      padding: "SAME" or "VALID" (only "VALID" with a dilation rate above 1, as TF).
      dilation_rate: a list of N ints >= 1 (default ones).
      strides: a list of N ints >= 1 (default ones); all ones when a rate is above 1.
      name: name scope of the op.
      data_format: channels-last (default) or channels-first ("NCW", "NCHW", "NCDHW").
      dilations: alias of `dilation_rate`.

    Returns:
      A Tensor of rank N+2.

    Raises:
      ValueError: a bad pooling_type, N outside 1..3, mismatched lengths, values below
        1, strides above 1 with a dilation rate above 1, SAME padding with a dilation
        rate above 1, strides above the window, or a 1-D data_format other than NWC/NCW
        (TF's messages).
    """
    from tensorweave.ops.array.array_ops import expand_dims, squeeze
    from tensorweave.ops.nn.conv_nd_ops import with_space_to_batch
    from tensorweave.ops.nn.conv_ops import lookup_renamed
    dilation_rate = lookup_renamed("dilations", dilations, "dilation_rate", dilation_rate)
    with name_scope(name, "%s_pool" % str(pooling_type).lower(), [input]) as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        n = len(window_shape)
        if n < 1 or n > 3:
            raise ValueError("`len(window_shape)` must be 1, 2, or 3. Received: "
                             "window_shape=%s of length %d" % (window_shape, n))
        input.shape.with_rank(n + 2)
        strides, dilation_rate = _strides_and_dilation_rate(n, strides, dilation_rate)
        if padding == "SAME" and np.any(dilation_rate > 1):
            raise ValueError("pooling with 'SAME' padding is not implemented for "
                             "`dilation_rate` > 1. Received: padding=%s and "
                             "dilation_rate=%s" % (padding, dilation_rate))
        if np.any(strides > np.asarray(window_shape)):
            raise ValueError("`strides` > `window_shape` not supported due to "
                             "inconsistency between CPU and GPU implementations. Received: "
                             "strides=%s and window_shape=%s" % (strides, window_shape))
        pooling_ops = {("MAX", 1): max_pool, ("MAX", 2): max_pool, ("MAX", 3): max_pool3d,
                       ("AVG", 1): avg_pool, ("AVG", 2): avg_pool, ("AVG", 3): avg_pool3d}
        if (pooling_type, n) not in pooling_ops:
            raise ValueError("%d-D %s pooling is not supported." % (n, pooling_type))
        fn = pooling_ops[(pooling_type, n)]
        window = [int(k) for k in window_shape]
        steps = [int(k) for k in strides]
        if data_format is None or not data_format.startswith("NC"):
            window, steps = [1] + window + [1], [1] + steps + [1]
            spatial_dims = list(range(1, n + 1))
        else:
            window, steps = [1, 1] + window, [1, 1] + steps
            spatial_dims = list(range(2, n + 2))
        if n == 1:
            if data_format is None or data_format == "NWC":
                fmt = "NHWC"
            elif data_format == "NCW":
                fmt = "NCHW"
            else:
                raise ValueError("data_format must be either 'NWC' or 'NCW'. Received: "
                                 "data_format=%s" % data_format)
            window, steps = [1] + window, [1] + steps
        else:
            fmt = data_format or ("NHWC" if n == 2 else "NDHWC")

        def op(converted, _, converted_padding):
            if n == 1:
                converted = expand_dims(converted, spatial_dims[0])
            result = fn(converted, window, steps, converted_padding, data_format=fmt,
                        name=scope)
            if n == 1:
                result = squeeze(result, [spatial_dims[0]])
            return result

        return with_space_to_batch(input, dilation_rate, padding, op,
                                   filter_shape=window_shape, spatial_dims=spatial_dims)
