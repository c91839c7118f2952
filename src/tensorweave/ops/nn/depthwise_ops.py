"""Depthwise convolution: DepthwiseConv2dNative and its two backprop ops, and the
composite builders depthwise_conv2d, separable_conv2d and atrous_conv2d.

A depthwise convolution convolves each input channel with its own `channel_multiplier`
filters: filter [kh, kw, in_channels, multiplier], output channel c*multiplier + m. The
kernels loop over the kh*kw taps and the multipliers; each step is one product of a
strided slice of the padded input (every output position at once) with that tap's
weights for one multiplier (the layout is explained above the kernels).
"""
from __future__ import annotations

import itertools
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops import onednn
from tensorweave.ops.nn.conv_nd_gemm import pad_nd, taps, unpad_nd
from tensorweave.ops.nn.conv_nd_ops import (channels_back, channels_last, channels_last_shape,
                                            check_rank, sizes_arg)
from tensorweave.ops.nn.conv_ops import (_compute_dtype, _conv_attrs, _spatial_axes,
                                         check_window_attrs, conv2d, explicit_pairs,
                                         lookup_renamed, make_window, rank4,
                                         register_conv_gradients,
                                         window_output_size)

_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


# --- shapes -------------------------------------------------------------------------------
def _depthwise_shape(op):
    padding, fmt = check_window_attrs(op)
    x = rank4(op.inputs[0].shape)
    f = rank4(op.inputs[1].shape)
    n, h, w, c = (x[0], x[2], x[3], x[1]) if fmt == "NCHW" else x
    if c is not None and f[2] is not None and c != f[2]:
        raise ValueError("Dimensions must be equal, but are %d and %d for '%s' (op: "
                         "'DepthwiseConv2dNative')" % (c, f[2], op.name))
    strides, dilations = op._get_attr("strides"), op._get_attr("dilations")
    h_ax, w_ax = _spatial_axes(fmt)
    ph, pw = explicit_pairs(op._attrs, fmt)
    oh = window_output_size(h, f[0], strides[h_ax], dilations[h_ax], padding, ph)
    ow = window_output_size(w, f[1], strides[w_ax], dilations[w_ax], padding, pw)
    in_depth = c if c is not None else f[2]
    out_c = None if in_depth is None or f[3] is None else in_depth * f[3]
    return TensorShape([n, out_c, oh, ow] if fmt == "NCHW" else [n, oh, ow, out_c])


def _backprop_input_shape(op):
    check_window_attrs(op)
    return TensorShape(rank4(tensor_util.constant_value_as_shape(op.inputs[0])))


def _backprop_filter_shape(op):
    check_window_attrs(op)
    return TensorShape(rank4(tensor_util.constant_value_as_shape(op.inputs[1])))


_ATTRS = {"T": TypeAttr(_TYPES), "strides": [1, 1, 1, 1], "padding": "VALID",
          "explicit_paddings": [], "data_format": "NHWC", "dilations": [1, 1, 1, 1]}

register_op("DepthwiseConv2dNative", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=dict(_ATTRS), shape=_depthwise_shape)
register_op("DepthwiseConv2dNativeBackpropInput",
            inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
            outputs=["output: T"], attrs=dict(_ATTRS), shape=_backprop_input_shape)
register_op("DepthwiseConv2dNativeBackpropFilter",
            inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"], attrs=dict(_ATTRS), shape=_backprop_filter_shape)


# --- kernels ------------------------------------------------------------------------------
def _windows(ctx, in_cl, filter_shape):
    attrs = ctx.attrs
    fmt = attrs["data_format"]
    strides, dilations = list(attrs["strides"]), list(attrs["dilations"])
    h_ax, w_ax = _spatial_axes(fmt)
    other = (0, 1 if fmt == "NCHW" else 3)
    if any(strides[a] != 1 for a in other) or any(dilations[a] != 1 for a in other):
        raise errors.InvalidArgumentError(None, ctx.op, "Current implementation does not yet "
                                          "support strides or dilations in the batch and "
                                          "depth dimensions.")
    if in_cl[3] != filter_shape[2]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input and filter must have the same depth: %d vs %d"
            % (in_cl[3], filter_shape[2]))
    ph, pw = explicit_pairs(attrs, fmt)
    pad = attrs["padding"]
    return [make_window(in_cl[1], int(filter_shape[0]), strides[h_ax], dilations[h_ax], pad,
                        ph),
            make_window(in_cl[2], int(filter_shape[1]), strides[w_ax], dilations[w_ax], pad,
                        pw)]


def _check_dy(ctx, dy_cl, wins, batch, out_depth) -> None:
    expected = (batch, wins[0].out, wins[1].out, out_depth)
    if tuple(dy_cl) != expected:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Size of out_backprop doesn't match computed: actual = %s, "
            "computed = %s" % (list(dy_cl), list(expected)))


# Layout. Output channel c*multiplier + q interleaves the multipliers, so a product with the
# [in, multiplier] weights of a tap broadcasts over an innermost axis of length `multiplier`
# and NumPy runs that many elements per inner loop. The kernels instead work on one
# multiplier q at a time, on contiguous multiplier-major arrays ([m, n, h, w, c]: the
# out_backprop transposed once, the forward's accumulator transposed once into the
# output), and multiply by each tap's weights tiled to a whole [out_width, in] row, so the
# input's, the weights' and the result's (width, channel) axes merge into one long inner
# loop whenever the width stride is 1.
_BLOCK_ELEMENTS = 1 << 17  # the forward accumulates blocks of about 512 KiB of float32,
#                            which stay in a core's L2 cache over all the taps


def _split_channels(a: np.ndarray, fmt: str, m: int) -> np.ndarray:
    """[N, H, W, C, m] view of `a` (NHWC [N, H, W, C*m] or NCHW [N, C*m, H, W]); a view
    whenever `a` is contiguous."""
    if fmt == "NCHW":
        n, cm, h, w = a.shape
        return a.reshape(n, cm // m, m, h, w).transpose(0, 3, 4, 1, 2)
    n, h, w, cm = a.shape
    return a.reshape(n, h, w, cm // m, m)


def _multiplier_major(dy: np.ndarray, fmt: str, m: int, ct) -> np.ndarray:
    """out_backprop as a contiguous [m, N, OH, OW, C] array of dtype `ct` (one copy)."""
    return np.ascontiguousarray(np.moveaxis(_split_channels(dy, fmt, m), -1, 0), dtype=ct)


def _weight_rows(w: np.ndarray, out_width: int) -> np.ndarray:
    """[taps, m, out_width, C]: each tap's weights of multiplier q tiled over a row."""
    kh, kw, c, m = w.shape
    per_tap = np.moveaxis(w.reshape(kh * kw, c, m), -1, 1)[:, :, None, :]
    return np.ascontiguousarray(np.broadcast_to(per_tap, (kh * kw, m, out_width, c)))


def _blocks(n: int, rows: int, row_elements: int):
    """(batch slice, output-row slice) blocks of about _BLOCK_ELEMENTS output elements
    (`row_elements` per output row): several whole images, or one image's rows in pieces."""
    image = max(rows * row_elements, 1)
    if image <= _BLOCK_ELEMENTS:
        step = _BLOCK_ELEMENTS // image
        for b in range(0, n, step):
            yield slice(b, min(b + step, n)), slice(0, rows)
        return
    step = max(_BLOCK_ELEMENTS // max(row_elements, 1), 1)
    for b in range(n):
        for r in range(0, rows, step):
            yield slice(b, b + 1), slice(r, min(r + step, rows))


def _tap_rows(win, i: int, rows: slice) -> slice:
    """Window.tap(i) restricted to the output rows `rows`."""
    start = i * win.dilation + rows.start * win.stride
    return slice(start, start + (rows.stop - rows.start - 1) * win.stride + 1, win.stride)


@kernel("DepthwiseConv2dNative", cheap=False, threaded=onednn.runs_float32)
def _depthwise_kernel(ctx, x, w):
    check_rank(ctx, "input", x, 4)
    check_rank(ctx, "filter", w, 4)
    fmt = ctx.attrs["data_format"]
    xc = channels_last(x, fmt)
    wins = _windows(ctx, xc.shape, w.shape)
    wh, ww = wins
    n, c, m = x.shape[0], w.shape[2], w.shape[3]
    shape = (n, c * m, wh.out, ww.out) if fmt == "NCHW" else (n, wh.out, ww.out, c * m)
    out = np.empty(shape, dtype=x.dtype)
    if out.size == 0 or wh.k * ww.k == 0:
        out[...] = 0
        return out
    ct = _compute_dtype(x.dtype)
    fast = onednn.conv(xc.astype(ct, copy=False), w.astype(ct, copy=False), wins,
                       depthwise=True)
    if fast is not None:
        return channels_back(fast, fmt).astype(x.dtype, copy=False)
    xp = np.ascontiguousarray(pad_nd(xc.astype(ct, copy=False), wins))
    rows = _weight_rows(w.astype(ct, copy=False), ww.out)
    out5 = _split_channels(out, fmt, m)
    for batch, out_rows in _blocks(n, wh.out, ww.out * c * m):
        acc = np.empty((m, batch.stop - batch.start, out_rows.stop - out_rows.start,
                        ww.out, c), dtype=ct)
        product = np.empty(acc.shape[1:], dtype=ct)
        for flat, (i, j) in enumerate(itertools.product(range(wh.k), range(ww.k))):
            xs = xp[batch, _tap_rows(wh, i, out_rows), ww.tap(j)]
            for q in range(m):
                if flat == 0:
                    np.multiply(xs, rows[flat, q], out=acc[q])
                else:
                    acc[q] += np.multiply(xs, rows[flat, q], out=product)
        out5[batch, out_rows] = np.moveaxis(acc, 0, -1)
    return out


@kernel("DepthwiseConv2dNativeBackpropInput", cheap=False, threaded=onednn.runs_float32)
def _depthwise_backprop_input_kernel(ctx, input_sizes, w, dy):
    check_rank(ctx, "filter", w, 4)
    check_rank(ctx, "out_backprop", dy, 4)
    fmt = ctx.attrs["data_format"]
    in_cl = channels_last_shape(sizes_arg(ctx, input_sizes, 4, "input_sizes"), fmt)
    dyc = channels_last(dy, fmt)
    wins = _windows(ctx, in_cl, w.shape)
    n, c, m = in_cl[0], w.shape[2], w.shape[3]
    _check_dy(ctx, dyc.shape, wins, n, c * m)
    ct = _compute_dtype(dy.dtype)
    fast = onednn.conv_backprop_input(tuple(in_cl), w.astype(ct, copy=False),
                                      dyc.astype(ct, copy=False), wins, depthwise=True)
    if fast is not None:
        return channels_back(fast, fmt).astype(dy.dtype, copy=False)
    dxp = np.zeros((n, wins[0].padded, wins[1].padded, c), dtype=ct)
    if dy.size:
        dy_m = _multiplier_major(dy, fmt, m, ct)
        rows = _weight_rows(w.astype(ct, copy=False), wins[1].out)
        total, product = np.empty(dy_m.shape[1:], dtype=ct), np.empty(dy_m.shape[1:], ct)
        for flat, index in taps(wins):
            np.multiply(dy_m[0], rows[flat, 0], out=total)
            for q in range(1, m):
                total += np.multiply(dy_m[q], rows[flat, q], out=product)
            dxp[index] += total
    return channels_back(unpad_nd(dxp, wins).astype(dy.dtype, copy=False), fmt)


@kernel("DepthwiseConv2dNativeBackpropFilter", cheap=False, threaded=onednn.runs_float32)
def _depthwise_backprop_filter_kernel(ctx, x, filter_sizes, dy):
    check_rank(ctx, "input", x, 4)
    check_rank(ctx, "out_backprop", dy, 4)
    fmt = ctx.attrs["data_format"]
    f_shape = sizes_arg(ctx, filter_sizes, 4, "filter_sizes")
    xc, dyc = channels_last(x, fmt), channels_last(dy, fmt)
    wins = _windows(ctx, xc.shape, f_shape)
    n, c, m = xc.shape[0], f_shape[2], f_shape[3]
    _check_dy(ctx, dyc.shape, wins, n, c * m)
    ct = _compute_dtype(x.dtype)
    fast = onednn.conv_backprop_filter(xc.astype(ct, copy=False), tuple(f_shape),
                                       dyc.astype(ct, copy=False), wins, depthwise=True)
    if fast is not None:
        return fast.astype(x.dtype, copy=False)
    dw = np.zeros((f_shape[0] * f_shape[1], c, m), dtype=ct)
    if dy.size:
        xp = np.ascontiguousarray(pad_nd(xc.astype(ct, copy=False), wins))
        dy_m = _multiplier_major(dy, fmt, m, ct)
        for flat, index in taps(wins):
            xs = xp[index]
            for q in range(m):
                # summed over batch and rows first, then over the width: short sums
                dw[flat, :, q] = np.einsum("nhwc,nhwc->wc", xs, dy_m[q]).sum(0)
    return dw.reshape(f_shape).astype(x.dtype, copy=False)


# --- gradients ----------------------------------------------------------------------------
register_conv_gradients("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                        "DepthwiseConv2dNativeBackpropFilter",
                        ("strides", "padding", "explicit_paddings", "data_format",
                         "dilations"))


# --- builders -----------------------------------------------------------------------------
def _native_attrs(op_type, strides, padding, data_format, dilations, normalise) -> dict:
    attrs = _conv_attrs(op_type, strides, padding, data_format, dilations, True,
                        normalise_lists=normalise)
    del attrs["use_cudnn_on_gpu"]
    return attrs


@tf_export("nn.depthwise_conv2d_native")
def depthwise_conv2d_native(input, filter, strides, padding,  # noqa: A002
                            data_format: str = "NHWC",
                            dilations=[1, 1, 1, 1],  # noqa: B006
                            name: Optional[str] = None) -> Tensor:
    """A depthwise 2-D convolution (TF1 `tf.nn.depthwise_conv2d_native`).

    `output[b, i, j, k * multiplier + q] = sum_{di, dj} input[b, i*sh + di*dh,
    j*sw + dj*dw, k] * filter[di, dj, k, q]` (NHWC, after padding).

    Args:
      input: a 4-D Tensor (NHWC or NCHW) of half, bfloat16, float32 or float64.
      filter: [filter_height, filter_width, in_channels, channel_multiplier].
      strides: a list of 4 ints.
      padding: "SAME", "VALID" or a list of 4 [before, after] pairs.
      data_format: "NHWC" (default) or "NCHW".
      dilations: a list of 4 ints.
      name: op name.

    Returns:
      A Tensor with in_channels * channel_multiplier channels, of the type of `input`.

    Raises:
      ValueError: bad attrs, ranks other than 4, or input and filter depths that differ.
    """
    attrs = _native_attrs("DepthwiseConv2dNative", strides, padding, data_format, dilations,
                          normalise=False)
    return apply_op("DepthwiseConv2dNative", [input, filter], attrs,
                    name=name or "DepthwiseConv2dNative").outputs[0]


@tf_export("nn.depthwise_conv2d_native_backprop_input", "nn.depthwise_conv2d_backprop_input")
def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop,  # noqa: A002
                                           strides, padding, data_format: str = "NHWC",
                                           dilations=[1, 1, 1, 1],  # noqa: B006
                                           name: Optional[str] = None) -> Tensor:
    """The gradient of depthwise_conv2d_native with respect to its input (TF1).

    Args:
      input_sizes: an int32 vector of 4, the input's shape.
      filter: the filter, [height, width, in_channels, multiplier].
      out_backprop: the gradient of the output.
      strides, padding, data_format, dilations: as the forward op.
      name: op name.

    Returns:
      A Tensor of shape `input_sizes`.
    """
    attrs = _native_attrs("DepthwiseConv2dNativeBackpropInput", strides, padding,
                          data_format, dilations, normalise=False)
    return apply_op("DepthwiseConv2dNativeBackpropInput", [input_sizes, filter, out_backprop],
                    attrs, name=name or "DepthwiseConv2dNativeBackpropInput").outputs[0]


@tf_export("nn.depthwise_conv2d_native_backprop_filter", "nn.depthwise_conv2d_backprop_filter")
def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop,  # noqa: A002
                                            strides, padding, data_format: str = "NHWC",
                                            dilations=[1, 1, 1, 1],  # noqa: B006
                                            name: Optional[str] = None) -> Tensor:
    """The gradient of depthwise_conv2d_native with respect to its filter (TF1).

    Args:
      input: the forward input, 4-D.
      filter_sizes: an int32 vector of 4, the filter's shape.
      out_backprop: the gradient of the output.
      strides, padding, data_format, dilations: as the forward op.
      name: op name.

    Returns:
      A Tensor of shape `filter_sizes`.
    """
    attrs = _native_attrs("DepthwiseConv2dNativeBackpropFilter", strides, padding,
                          data_format, dilations, normalise=False)
    return apply_op("DepthwiseConv2dNativeBackpropFilter", [input, filter_sizes, out_backprop],
                    attrs, name=name or "DepthwiseConv2dNativeBackpropFilter").outputs[0]


def _rate_to_dilations(rate, dilations):
    rate = lookup_renamed("dilations", dilations, "rate", rate)
    if rate is None:
        return [1, 1]
    rate = [int(r) for r in np.reshape(rate, -1)]
    if len(rate) == 1:
        rate = rate * 2
    if len(rate) != 2:
        raise ValueError("rate must be a list of 2 ints, got %s" % rate)
    if any(r < 1 for r in rate):
        raise ValueError("rate must be positive, got %s" % rate)
    return rate


def _depthwise(input, filter, strides, padding, rate, data_format, name):  # noqa: A002
    fmt = data_format or "NHWC"
    channel_index = 1 if fmt.startswith("NC") else 3
    dilations = _rate_to_dilations(rate, None)
    full = [1, 1] + dilations if channel_index == 1 else [1] + dilations + [1]
    strides = list(strides)
    if any(r > 1 for r in dilations) and any(s > 1 for s in strides):
        # TF 2 runs the strided op on the space-to-batch form of the dilation (which
        # strides each interleaved sub-image, not the dilated output)
        from tensorweave.ops.nn.conv_nd_ops import with_space_to_batch
        plain = [1, 1, 1, 1]

        def strided(converted, _num_spatial_dims, pad):
            attrs = _native_attrs("DepthwiseConv2dNative", strides, pad, fmt, plain,
                                  normalise=False)
            return apply_op("DepthwiseConv2dNative", [converted, filter], attrs,
                            name=name).outputs[0]
        filter = convert_to_tensor(filter, name="filter")
        return with_space_to_batch(input, dilations, padding, strided,
                                   filter_shape=filter.shape.as_list()[:2], data_format=fmt)
    attrs = _native_attrs("DepthwiseConv2dNative", strides, padding, fmt, full,
                          normalise=False)
    return apply_op("DepthwiseConv2dNative", [input, filter], attrs, name=name).outputs[0]


@tf_export("nn.depthwise_conv2d")
def depthwise_conv2d(input, filter, strides, padding, rate=None,  # noqa: A002
                     name: Optional[str] = None, data_format: Optional[str] = None,
                     dilations=None) -> Tensor:
    """A depthwise 2-D convolution with optional dilation (TF1 `tf.nn.depthwise_conv2d`).

    Args:
      input: a 4-D Tensor (NHWC or NCHW).
      filter: [filter_height, filter_width, in_channels, channel_multiplier].
      strides: a list of 4 ints.
      padding: "SAME" or "VALID".
      rate: an int or a list of 2 ints, the dilation rate (default 1).
      name: name scope of the op.
      data_format: "NHWC" (default) or "NCHW".
      dilations: alias of `rate`.

    Returns:
      A Tensor with in_channels * channel_multiplier channels.

    Raises:
      ValueError: rate > 1 together with strides > 1, or bad attrs.
    """
    rate = lookup_renamed("dilations", dilations, "rate", rate)
    with name_scope(name, "depthwise", [input, filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        filter = convert_to_tensor(filter, name="filter_in")  # noqa: A001
        return _depthwise(input, filter, strides, padding, rate, data_format, scope)


@tf_export("nn.separable_conv2d")
def separable_conv2d(input, depthwise_filter, pointwise_filter, strides,  # noqa: A002
                     padding, rate=None, name: Optional[str] = None,
                     data_format: Optional[str] = None, dilations=None) -> Tensor:
    """A depthwise convolution followed by a 1x1 pointwise convolution (TF1
    `tf.nn.separable_conv2d`).

    Args:
      input: a 4-D Tensor.
      depthwise_filter: [height, width, in_channels, channel_multiplier].
      pointwise_filter: [1, 1, channel_multiplier * in_channels, out_channels].
      strides: a list of 4 ints (the depthwise convolution's).
      padding: "SAME" or "VALID".
      rate: an int or a list of 2 ints, the depthwise dilation rate.
      name: name scope of the ops.
      data_format: "NHWC" (default) or "NCHW".
      dilations: alias of `rate`.

    Returns:
      A 4-D Tensor with out_channels channels.

    Raises:
      ValueError: a pointwise filter that is not [1, 1, ...], or bad attrs.
    """
    rate = lookup_renamed("dilations", dilations, "rate", rate)
    with name_scope(name, "separable_conv2d",
                    [input, depthwise_filter, pointwise_filter]) as scope:
        input = convert_to_tensor(input, name="tensor_in")  # noqa: A001
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        pw = pointwise_filter.shape
        if pw.ndims is not None:
            if pw.ndims != 4:
                raise ValueError("Shape must be rank 4 but is rank %d" % pw.ndims)
            if pw.as_list()[:2] != [1, 1] and None not in pw.as_list()[:2]:
                raise ValueError("Pointwise filter must be [1, 1, ...]: got %s" % pw)
        depthwise = _depthwise(input, depthwise_filter, strides, padding, rate, data_format,
                               "depthwise")
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], padding="VALID",
                      data_format=data_format or "NHWC", name=scope)


@tf_export("nn.atrous_conv2d")
def atrous_conv2d(value, filters, rate, padding, name: Optional[str] = None) -> Tensor:
    """A dilated ("atrous") 2-D convolution (TF1 `tf.nn.atrous_conv2d`): conv2d with
    dilations [1, rate, rate, 1].

    Args:
      value: a 4-D NHWC Tensor.
      filters: [filter_height, filter_width, in_channels, out_channels].
      rate: a positive int, the dilation rate.
      padding: "SAME" or "VALID".
      name: name scope of the op.

    Returns:
      A 4-D Tensor of the type of `value`.

    Raises:
      ValueError: rate < 1.
    """
    if int(rate) < 1:
        raise ValueError("rate %s cannot be less than one" % rate)
    from tensorweave.ops.nn.conv_nd_ops import convolution
    return convolution(value, filters, padding, dilation_rate=[int(rate)] * 2, name=name)


@tf_export("nn.atrous_conv2d_transpose")
def atrous_conv2d_transpose(value, filters, output_shape, rate, padding,
                            name: Optional[str] = None) -> Tensor:
    """The transpose of atrous_conv2d (TF1 `tf.nn.atrous_conv2d_transpose`): the input
    gradient of a convolution with dilations [1, rate, rate, 1].

    Args:
      value: a 4-D NHWC Tensor whose channels are the filter's last dimension.
      filters: [filter_height, filter_width, out_channels, in_channels].
      output_shape: a 1-D tensor or list of 4, the shape of the result.
      rate: a positive int, the dilation rate.
      padding: "SAME" or "VALID".
      name: name scope of the op.

    Returns:
      A 4-D Tensor of shape `output_shape`.

    Raises:
      ValueError: rate < 1, a bad padding, or channels that do not match the filter.
    """
    from tensorweave.ops.nn.conv_ops import conv2d_transpose
    with name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        if int(rate) < 1:
            raise ValueError("`rate` cannot be less than one. Received: rate=%s" % rate)
        if padding not in ("SAME", "VALID"):
            raise ValueError("`padding` must be either 'VALID' or 'SAME'. Received: "
                             "padding=%s" % padding)
        v, f = value.shape, filters.shape
        if v.ndims == 4 and f.ndims == 4 and v.as_list()[3] is not None and \
                f.as_list()[3] is not None and v.as_list()[3] != f.as_list()[3]:
            raise ValueError("`value` channel count must be compatible with `filters` input "
                             "channel count. Received: value.shape=%s with channel count %d "
                             "and filters.shape=%s with input channel count %d"
                             % (v, v.as_list()[3], f, f.as_list()[3]))
        return conv2d_transpose(value, filters, output_shape, [1, 1, 1, 1], padding=padding,
                                dilations=[1, int(rate), int(rate), 1], name=scope)
