"""N-d convolution: Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2 (and their V1
forms, which take the input or filter itself instead of its shape, have no data_format
and no gradient, as in TF), and the composite builders conv1d, conv3d_transpose and
convolution.

The kernels work channels-last with any number of spatial dimensions and lower the
convolution to matrix products (conv_nd_gemm.py). The attr, shape and kernel-argument
helpers here are shared with depthwise_ops.py and pooling_nd_ops.py.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops import onednn
from tensorweave.ops.math.quantize_ops import no_gradient
from tensorweave.ops.nn.conv_nd_gemm import (conv_nd, conv_nd_backprop_filter,
                                             conv_nd_backprop_input)
from tensorweave.ops.nn.conv_ops import (Window, _check_enum, _compute_dtype, _get_sequence,
                                         add_bias_relu, channels_back, channels_last,
                                         channels_last_shape, conv2d, fused_epilogue,
                                         lookup_renamed, make_window,
                                         register_conv_gradients,
                                         register_fused_conv_gradient, window_output_size)

_CONV3D_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_FORMATS_3D = ("NDHWC", "NCDHW")


# --- N-d helpers (channels-last arrays: [batch, *spatial, channels]) -----------------------
def spatial_axes(data_format: str, rank: int) -> List[int]:
    """The axes of the spatial dimensions of a tensor of `rank` in `data_format`."""
    return list(range(2, rank)) if data_format.startswith("NC") else list(range(1, rank - 1))


# --- attrs and shapes ---------------------------------------------------------------------
def data_format_attr(attrs: dict, channels_last: str) -> str:
    """The data_format attr of an op or kernel; `channels_last` for an op without one
    (the V1 backprop ops, channels last only)."""
    return attrs.get("data_format", channels_last)


def check_nd_attrs(op, rank: int, formats, names=("strides", "dilations")) -> Tuple[str, str]:
    """Checks an N-d op's padding, data_format and `names` list attrs (rank entries,
    1 on the batch and channel dimensions) at build time; returns (padding, data_format).
    An op without a data_format attr is in the first (channels-last) of `formats`."""
    padding, fmt = op._get_attr("padding"), data_format_attr(op.attrs, formats[0])
    _check_enum(op.type, "padding", padding, ("SAME", "VALID"))
    _check_enum(op.type, "data_format", fmt, formats)
    for name in names:
        value = op._get_attr(name)
        if len(value) != rank:
            raise ValueError("%s requires the %s attribute to contain %d values, but got: %d"
                             % (op.type, name, rank, len(value)))
        if any(int(v) < 1 for v in value):
            raise ValueError("%s: all %s values must be positive, got %s"
                             % (op.type, name, list(value)))
        other = (0, 1 if fmt.startswith("NC") else rank - 1)
        if any(int(value[a]) != 1 for a in other):
            raise ValueError("%s: %s in the batch and depth dimensions must be 1, got %s"
                             % (op.type, name, list(value)))
    return padding, fmt


def dims_of_rank(shape: TensorShape, rank: int) -> List[Optional[int]]:
    """The dims of `shape` as a list of `rank` entries (all None when its rank is unknown)."""
    if shape.ndims is None:
        return [None] * rank
    if shape.ndims != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, shape.ndims))
    return shape.as_list()


def _conv3d_shape(op):
    padding, fmt = check_nd_attrs(op, 5, _FORMATS_3D)
    x = dims_of_rank(op.inputs[0].shape, 5)
    f = dims_of_rank(op.inputs[1].shape, 5)
    axes = spatial_axes(fmt, 5)
    c = x[1] if fmt == "NCDHW" else x[4]
    if c is not None and f[3] is not None and (f[3] == 0 or c % f[3]):
        raise ValueError("Depth of input (%d) is not a multiple of input depth of filter (%d)"
                         % (c, f[3]))
    strides, dilations = op._get_attr("strides"), op._get_attr("dilations")
    outs = [window_output_size(x[a], f[i], strides[a], dilations[a], padding)
            for i, a in enumerate(axes)]
    return TensorShape([x[0], f[4]] + outs if fmt == "NCDHW" else [x[0]] + outs + [f[4]])


def _conv3d_backprop_input_shape(op):
    check_nd_attrs(op, 5, _FORMATS_3D)
    dims = dims_of_rank(tensor_util.constant_value_as_shape(op.inputs[0]), 5)
    return TensorShape(dims)


def _conv3d_backprop_filter_shape(op):
    check_nd_attrs(op, 5, _FORMATS_3D)
    return TensorShape(dims_of_rank(tensor_util.constant_value_as_shape(op.inputs[1]), 5))


def _conv3d_backprop_v1_shape(op):
    # the shape of the input (Conv3DBackpropInput) or filter (...Filter) it is given
    check_nd_attrs(op, 5, _FORMATS_3D)
    given = op.inputs[0] if op.type == "Conv3DBackpropInput" else op.inputs[1]
    return TensorShape(dims_of_rank(given.shape, 5))


_CONV3D_ATTRS = {"T": TypeAttr(_CONV3D_TYPES), "strides": [1] * 5, "padding": "VALID",
                 "data_format": "NDHWC", "dilations": [1] * 5}

register_op("Conv3D", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=dict(_CONV3D_ATTRS), shape=_conv3d_shape)
# what Grappler's remapper (and runtime/optimizer.py) makes of Conv3D -> bias [-> Relu]
register_op("_FusedConv3D", inputs=["input: T", "filter: T", "args: num_args * T"],
            outputs=["output: T"],
            attrs={**_CONV3D_ATTRS, "T": TypeAttr((_dt.float16, _dt.bfloat16, _dt.float32)),
                   "padding_list": [], "fused_ops": [], "epsilon": 0.0001,
                   "leakyrelu_alpha": 0.2},
            shape=_conv3d_shape)
register_op("Conv3DBackpropInputV2",
            inputs=["input_sizes: Tshape", "filter: T", "out_backprop: T"],
            outputs=["output: T"],
            attrs={**_CONV3D_ATTRS, "Tshape": TypeAttr((_dt.int32, _dt.int64), _dt.int32)},
            shape=_conv3d_backprop_input_shape)
register_op("Conv3DBackpropFilterV2",
            inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"], attrs=dict(_CONV3D_ATTRS),
            shape=_conv3d_backprop_filter_shape)
# the V1 forms (deprecated at GraphDef version 10): no bfloat16, no data_format
for _v1 in ("Conv3DBackpropInput", "Conv3DBackpropFilter"):
    register_op(_v1, inputs=["input: T", "filter: T", "out_backprop: T"],
                outputs=["output: T"],
                attrs={"T": TypeAttr((_dt.float16, _dt.float32, _dt.float64)),
                       "strides": REQUIRED, "padding": REQUIRED, "dilations": [1] * 5},
                shape=_conv3d_backprop_v1_shape)


# --- kernels ------------------------------------------------------------------------------
def check_rank(ctx, what: str, arr, rank: int) -> None:
    """Raises InvalidArgumentError unless the kernel input `arr` has rank `rank`."""
    if arr.ndim != rank:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be %d-dimensional: %s"
                                          % (what, rank, list(arr.shape)))


def sizes_arg(ctx, value, rank: int, what: str) -> Tuple[int, ...]:
    """A kernel's shape input (input_sizes, filter_sizes) as a tuple of `rank` non-negative
    ints."""
    v = np.asarray(value).reshape(-1)
    if v.size != rank:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be a %d-element vector, got "
                                          "shape %s" % (what, rank, list(np.shape(value))))
    if (v < 0).any():
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be non-negative: %s"
                                          % (what, v.tolist()))
    return tuple(int(d) for d in v)


def conv_windows(ctx, in_cl, ks: Sequence[int]) -> List[Window]:
    """The windows of a channels-last input of shape `in_cl` for a filter of spatial
    sizes `ks`, from the op's strides/dilations/padding attrs."""
    attrs = ctx.attrs
    axes = spatial_axes(data_format_attr(attrs, "NDHWC"), len(in_cl))
    strides, dilations = attrs["strides"], attrs.get("dilations") or [1] * len(in_cl)
    return [make_window(in_cl[i + 1], int(k), int(strides[a]), int(dilations[a]),
                        attrs["padding"]) for i, (a, k) in enumerate(zip(axes, ks))]


def check_out_backprop(ctx, dy_cl, wins: Sequence[Window], batch: int, depth: int) -> None:
    """Raises InvalidArgumentError unless `dy_cl` (channels last) is the output shape the
    windows give."""
    expected = (batch,) + tuple(w.out for w in wins) + (depth,)
    if tuple(dy_cl) != expected:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Size of out_backprop doesn't match computed: actual = %s, "
            "computed = %s" % (list(dy_cl), list(expected)))


def _check_depth(ctx, in_depth: int, filter_in: int) -> None:
    if in_depth != filter_in:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Input depth must be equal to filter in depth: %d vs %d (grouped "
            "convolution is not supported)" % (in_depth, filter_in))


def _conv3d_operands(ctx, x, w):
    """(data_format, x channels last, w, windows), both in the compute dtype."""
    check_rank(ctx, "input", x, 5)
    check_rank(ctx, "filter", w, 5)
    fmt = ctx.attrs["data_format"]
    xc = channels_last(x, fmt)
    _check_depth(ctx, xc.shape[-1], w.shape[3])
    wins = conv_windows(ctx, xc.shape, w.shape[:3])
    ct = _compute_dtype(x.dtype)
    return fmt, xc.astype(ct, copy=False), w.astype(ct, copy=False), wins


@kernel("Conv3D", cheap=False, threaded=onednn.runs_float32)
def _conv3d_kernel(ctx, x, w):
    fmt, xc, w, wins = _conv3d_operands(ctx, x, w)
    return channels_back(conv_nd(xc, w, wins).astype(x.dtype, copy=False), fmt)


@kernel("_FusedConv3D", cheap=False, threaded=onednn.runs_float32)
def _fused_conv3d_kernel(ctx, x, w, *args):
    fmt, xc, w, wins = _conv3d_operands(ctx, x, w)
    bias, relu = fused_epilogue(ctx, args, w.shape[4])
    bias = bias.astype(xc.dtype, copy=False)
    out = onednn.conv(xc, w, wins, bias=bias, relu=relu)
    if out is None:
        out = add_bias_relu(conv_nd(xc, w, wins), bias, relu)
    return channels_back(out.astype(x.dtype, copy=False), fmt)


def _conv3d_backprop_input(ctx, input_sizes: Tuple[int, ...], w, dy):
    check_rank(ctx, "filter", w, 5)
    check_rank(ctx, "out_backprop", dy, 5)
    fmt = data_format_attr(ctx.attrs, "NDHWC")
    in_cl = channels_last_shape(input_sizes, fmt)
    _check_depth(ctx, in_cl[-1], w.shape[3])
    dyc = channels_last(dy, fmt)
    wins = conv_windows(ctx, in_cl, w.shape[:3])
    check_out_backprop(ctx, dyc.shape, wins, in_cl[0], w.shape[4])
    ct = _compute_dtype(dy.dtype)
    dx = conv_nd_backprop_input(in_cl, w.astype(ct, copy=False), dyc.astype(ct, copy=False),
                                wins)
    return channels_back(dx.astype(dy.dtype, copy=False), fmt)


@kernel("Conv3DBackpropInputV2", cheap=False, threaded=onednn.runs_float32)
def _conv3d_backprop_input_kernel(ctx, input_sizes, w, dy):
    return _conv3d_backprop_input(ctx, sizes_arg(ctx, input_sizes, 5, "input_sizes"), w, dy)


@kernel("Conv3DBackpropInput", cheap=False, threaded=onednn.runs_float32)
def _conv3d_backprop_input_v1_kernel(ctx, x, w, dy):
    check_rank(ctx, "input", x, 5)
    return _conv3d_backprop_input(ctx, x.shape, w, dy)


def _conv3d_backprop_filter(ctx, x, f_shape: Tuple[int, ...], dy):
    check_rank(ctx, "input", x, 5)
    check_rank(ctx, "out_backprop", dy, 5)
    fmt = data_format_attr(ctx.attrs, "NDHWC")
    xc, dyc = channels_last(x, fmt), channels_last(dy, fmt)
    _check_depth(ctx, xc.shape[-1], f_shape[3])
    wins = conv_windows(ctx, xc.shape, f_shape[:3])
    check_out_backprop(ctx, dyc.shape, wins, xc.shape[0], f_shape[4])
    ct = _compute_dtype(x.dtype)
    dw = conv_nd_backprop_filter(xc.astype(ct, copy=False), f_shape,
                                 dyc.astype(ct, copy=False), wins)
    return dw.astype(x.dtype, copy=False)


@kernel("Conv3DBackpropFilterV2", cheap=False, threaded=onednn.runs_float32)
def _conv3d_backprop_filter_kernel(ctx, x, filter_sizes, dy):
    return _conv3d_backprop_filter(ctx, x, sizes_arg(ctx, filter_sizes, 5, "filter_sizes"),
                                   dy)


@kernel("Conv3DBackpropFilter", cheap=False, threaded=onednn.runs_float32)
def _conv3d_backprop_filter_v1_kernel(ctx, x, w, dy):
    check_rank(ctx, "filter", w, 5)
    return _conv3d_backprop_filter(ctx, x, w.shape, dy)


# --- gradients ----------------------------------------------------------------------------
register_conv_gradients("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2",
                        ("strides", "padding", "data_format", "dilations"))
register_fused_conv_gradient("_FusedConv3D", "Conv3DBackpropInputV2",
                             "Conv3DBackpropFilterV2",
                             ("strides", "padding", "data_format", "dilations"))
# TF registers no gradient for the V1 forms: tf.gradients through them raises LookupError
gradient("Conv3DBackpropInput")(no_gradient)
gradient("Conv3DBackpropFilter")(no_gradient)


# --- builders -----------------------------------------------------------------------------
def _conv3d_builder_attrs(strides, padding, data_format, dilations) -> dict:
    if data_format is None:
        data_format = "NDHWC"
    if isinstance(padding, bytes):
        padding = padding.decode()
    channel_index = 1 if str(data_format).startswith("NC") else 4
    _check_enum("Conv3D", "padding", padding, ("SAME", "VALID"))
    _check_enum("Conv3D", "data_format", data_format, _FORMATS_3D)
    return {"strides": _get_sequence(strides, 3, channel_index, "strides"),
            "padding": padding, "data_format": data_format,
            "dilations": _get_sequence(dilations, 3, channel_index, "dilations")}


@tf_export("nn.conv3d")
def conv3d(input, filter=None, strides=None, padding=None,  # noqa: A002
           data_format: str = "NDHWC", dilations=[1, 1, 1, 1, 1],  # noqa: B006
           name: Optional[str] = None, filters=None) -> Tensor:
    """Computes a 3-D convolution of a 5-D `input` with a 5-D `filter` (TF1 `tf.nn.conv3d`).

    Args:
      input: [batch, in_depth, in_height, in_width, in_channels] (NDHWC) or
        [batch, in_channels, in_depth, in_height, in_width] (NCDHW); half, bfloat16,
        float32 or float64.
      filter: [filter_depth, filter_height, filter_width, in_channels, out_channels].
      strides: an int or a list of 1, 3 or 5 ints.
      padding: "SAME" or "VALID".
      data_format: "NDHWC" (default) or "NCDHW".
      dilations: an int or a list of 1, 3 or 5 ints.
      name: op name.
      filters: alias of `filter`.

    Returns:
      A Tensor of the type of `input`.

    Raises:
      ValueError: bad padding, data_format, strides or ranks; a VALID window larger than
        the input.
    """
    filter = lookup_renamed("filters", filters, "filter", filter)  # noqa: A001
    attrs = _conv3d_builder_attrs(strides, padding, data_format, dilations)
    return apply_op("Conv3D", [input, filter], attrs, name=name or "Conv3D").outputs[0]


@tf_export("nn.conv3d_backprop_filter_v2", "nn.conv3d_backprop_filter")
def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides,  # noqa: A002
                              padding, data_format: str = "NDHWC",
                              dilations=[1, 1, 1, 1, 1],  # noqa: B006
                              name: Optional[str] = None) -> Tensor:
    """The gradient of conv3d with respect to its filter (TF1
    `tf.nn.conv3d_backprop_filter_v2`).

    Args:
      input: the convolution's 5-D input.
      filter_sizes: an int32 vector of 5, the filter's shape.
      out_backprop: the gradient of the convolution's output.
      strides: a list of 5 ints.
      padding: "SAME" or "VALID".
      data_format: "NDHWC" or "NCDHW".
      dilations: a list of 5 ints.
      name: op name.

    Returns:
      A Tensor of shape `filter_sizes` and the type of `input`.
    """
    attrs = _conv3d_builder_attrs(strides, padding, data_format, dilations)
    return apply_op("Conv3DBackpropFilterV2", [input, filter_sizes, out_backprop], attrs,
                    name=name or "Conv3DBackpropFilterV2").outputs[0]


@tf_export("nn.conv3d_transpose")
def conv3d_transpose(value, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NDHWC",
                     name: Optional[str] = None, input=None, filters=None,  # noqa: A002
                     dilations=None) -> Tensor:
    """The transpose of conv3d (TF1 `tf.nn.conv3d_transpose`).

    Args:
      value: a 5-D Tensor whose channels are the filter's last dimension.
      filter: [depth, height, width, output_channels, in_channels].
      output_shape: a 1-D int32 tensor or list of 5, the shape of the result.
      strides: an int or a list of 1, 3 or 5 ints.
      padding: "SAME" or "VALID".
      data_format: "NDHWC" or "NCDHW".
      name: name scope of the op.
      input: alias of `value`.
      filters: alias of `filter`.
      dilations: an int or a list of 1, 3 or 5 ints.

    Returns:
      A Tensor of shape `output_shape` and the type of `value`.
    """
    value = lookup_renamed("input", input, "value", value)
    filter = lookup_renamed("filters", filters, "filter", filter)  # noqa: A001
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        attrs = _conv3d_builder_attrs(strides, padding, data_format, dilations)
        sizes = output_shape if isinstance(output_shape, Tensor) else convert_to_tensor(
            output_shape, dtype=_dt.int32, name="input_sizes")
        return apply_op("Conv3DBackpropInputV2", [sizes, filter, value], attrs,
                        name=scope).outputs[0]


@tf_export("nn.conv1d")
def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format: Optional[str] = None, name: Optional[str] = None,
           input=None, dilations=None) -> Tensor:  # noqa: A002
    """A 1-D convolution (TF1 `tf.nn.conv1d`): the input gets a height of 1 and goes
    through Conv2D.

    Args:
      value: a 3-D Tensor [batch, in_width, in_channels] (NWC) or
        [batch, in_channels, in_width] (NCW).
      filters: [filter_width, in_channels, out_channels].
      stride: an int or a list of 1 or 3 ints.
      padding: "SAME" or "VALID".
      use_cudnn_on_gpu: accepted for compatibility.
      data_format: "NWC" (default) or "NCW".
      name: name scope of the ops.
      input: alias of `value`.
      dilations: an int or a list of 1 or 3 ints.

    Returns:
      A 3-D Tensor of the type of `value`.

    Raises:
      ValueError: a data_format other than NWC/NCW (or NHWC/NCHW).
    """
    from tensorweave.ops.array.array_ops import expand_dims, squeeze
    value = lookup_renamed("input", input, "value", value)
    with name_scope(name, "conv1d", [value, filters]) as scope:
        if data_format is None or data_format in ("NHWC", "NWC"):
            fmt, spatial_start, channel_index = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            fmt, spatial_start, channel_index = "NCHW", -2, 1
        else:
            raise ValueError("`data_format` must be 'NWC' or 'NCW'. Received: "
                             "data_format=%s" % data_format)
        strides = [1] + _get_sequence(stride, 1, channel_index, "stride")
        dilations = [1] + _get_sequence(dilations, 1, channel_index, "dilations")
        value = expand_dims(value, spatial_start)
        filters = expand_dims(filters, 0)
        result = conv2d(value, filters, strides, padding,
                        use_cudnn_on_gpu=True if use_cudnn_on_gpu is None else
                        use_cudnn_on_gpu, data_format=fmt, dilations=dilations, name=scope)
        return squeeze(result, [spatial_start])


@tf_export("nn.convolution")
def convolution(input, filter=None, padding=None, strides=None,  # noqa: A002
                dilation_rate=None, name: Optional[str] = None,
                data_format: Optional[str] = None, filters=None, dilations=None) -> Tensor:
    """An N-d convolution, N = 1, 2 or 3 from the rank of `input` (TF1
    `tf.nn.convolution`).

    Args:
      input: a Tensor of rank N+2 (its rank must be known at build time).
      filter: a Tensor of rank N+2, [*spatial, in_channels, out_channels].
      padding: "SAME" or "VALID".
      strides: a list of N ints (default ones).
      dilation_rate: a list of N ints (default ones).
      name: name scope of the op.
      data_format: channels-last ("NWC", "NHWC", "NDHWC", the default) or channels-first.
      filters: alias of `filter`.
      dilations: alias of `dilation_rate`.

    Returns:
      A Tensor of rank N+2 and the type of `input`.

    Raises:
      ValueError: an unknown input rank, N not in 1..3, both strides and dilation rates
        above 1, or a bad padding.
    """
    filter = lookup_renamed("filters", filters, "filter", filter)  # noqa: A001
    dilation_rate = lookup_renamed("dilations", dilations, "dilation_rate", dilation_rate)
    with name_scope(name, "convolution", [input, filter]) as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        rank = input.shape.ndims
        if rank is None:
            filter_rank = convert_to_tensor(filter).shape.ndims
            rank = filter_rank
        if rank is None:
            raise ValueError("tf.nn.convolution needs the rank of `input` or `filter` to "
                             "be known at build time")
        n = rank - 2
        if n not in (1, 2, 3):
            raise ValueError("`input.shape.rank` must be 3, 4 or 5. Received: input.shape=%s"
                             % input.shape)
        strides = [1] * n if strides is None else [int(s) for s in np.reshape(strides, -1)]
        rates = [1] * n if dilation_rate is None else \
            [int(r) for r in np.reshape(dilation_rate, -1)]
        if len(strides) != n or len(rates) != n:
            raise ValueError("strides and dilation_rate must have %d entries; got %s and %s"
                             % (n, strides, rates))
        if any(s > 1 for s in strides) and any(r > 1 for r in rates):
            raise ValueError("`strides > 1` not supported in conjunction with "
                             "`dilation_rate > 1`. Received: strides=%s and "
                             "dilation_rate=%s" % (strides, rates))
        channels_first = data_format is not None and str(data_format).startswith("NC")
        if n == 1:
            return conv1d(input, filter, strides, padding,
                          data_format="NCW" if channels_first else "NWC",
                          dilations=rates, name=scope)
        if n == 2:
            return conv2d(input, filter, strides, padding,
                          data_format="NCHW" if channels_first else "NHWC",
                          dilations=rates, name=scope)
        return conv3d(input, filter, strides, padding,
                      data_format="NCDHW" if channels_first else "NDHWC",
                      dilations=rates, name=scope)


@tf_export("nn.conv1d_transpose")
def conv1d_transpose(input, filters, output_shape, strides,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NWC", dilations=None,
                     name: Optional[str] = None) -> Tensor:
    """The transpose of conv1d (TF1 `tf.nn.conv1d_transpose`), through
    Conv2DBackpropInput with a height of 1.

    Args:
      input: a 3-D Tensor [batch, width, in_channels] (NWC) or [batch, in_channels,
        width] (NCW); its channels are the filter's last dimension.
      filters: [filter_width, output_channels, in_channels].
      output_shape: a 1-D tensor or list of 3, the shape of the result.
      strides: an int or a list of 1 or 3 ints.
      padding: "SAME" or "VALID".
      data_format: "NWC" (default) or "NCW".
      dilations: an int or a list of 1 or 3 ints.
      name: name scope of the ops.

    Returns:
      A 3-D Tensor of shape `output_shape` and the type of `input`.

    Raises:
      ValueError: a data_format other than NWC/NCW.
    """
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.array.array_ops import expand_dims, squeeze
    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        if data_format is None or data_format == "NWC":
            fmt, spatial_start, channel_index = "NHWC", 1, 2
        elif data_format == "NCW":
            fmt, spatial_start, channel_index = "NCHW", 2, 1
        else:
            raise ValueError("`data_format` must be 'NWC' or 'NCW'. Received: "
                             "data_format=%s" % data_format)
        strides = [1] + _get_sequence(strides, 1, channel_index, "stride")
        dilations = [1] + _get_sequence(dilations, 1, channel_index, "dilations")
        input = expand_dims(input, spatial_start)  # noqa: A001
        filters = expand_dims(filters, 0)
        if isinstance(output_shape, Tensor):
            sizes = concat([output_shape[:spatial_start], [1], output_shape[spatial_start:]],
                           0)
        else:
            dims = [int(d) for d in np.reshape(output_shape, -1)]
            sizes = dims[:spatial_start] + [1] + dims[spatial_start:]
        from tensorweave.ops.nn.conv_ops import conv2d_backprop_input
        result = conv2d_backprop_input(sizes, filters, input, strides, padding,
                                       data_format=fmt, dilations=dilations, name=scope)
        return squeeze(result, [spatial_start])


@tf_export("nn.conv_transpose")
def conv_transpose(input, filters, output_shape, strides, padding: str = "SAME",  # noqa: A002
                   data_format: Optional[str] = None, dilations=None,
                   name: Optional[str] = None) -> Tensor:
    """The transpose of a 1-D, 2-D or 3-D convolution, chosen by the length of
    `output_shape` (TF1 `tf.nn.conv_transpose`).

    Args:
      input: a Tensor of rank N + 2.
      filters: [spatial dims..., output_channels, in_channels].
      output_shape: a list or 1-D tensor of N + 2 values, the shape of the result.
      strides: an int or a list of 1, N or N + 2 ints.
      padding: "SAME" or "VALID".
      data_format: the channels-last format (default NWC, NHWC or NDHWC) or the
        channels-first one.
      dilations: an int or a list of 1, N or N + 2 ints.
      name: name scope of the ops.

    Returns:
      A Tensor of shape `output_shape`.

    Raises:
      ValueError: an `output_shape` that is not sized or not of 3, 4 or 5 values.
    """
    with name_scope(name, "conv_transpose", [input, filters, output_shape]) as scope:
        if isinstance(output_shape, Tensor):
            n = output_shape.shape.as_list()[0] - 2
        elif hasattr(output_shape, "__len__"):
            n = len(output_shape) - 2
        else:
            raise ValueError("`output_shape` must be a tensor or sized collection. Received: "
                             "output_shape=%s" % (output_shape,))
        if not 1 <= n <= 3:
            raise ValueError("`output_shape` must be of length 3, 4 or 5. Received: "
                             "output_shape=%s of length %d." % (output_shape, n + 2))
        fmt = data_format or ("NWC", "NHWC", "NDHWC")[n - 1]
        channel_index = 1 if fmt.startswith("NC") else n + 1
        strides = _get_sequence(strides, n, channel_index, "strides")
        if dilations is not None:
            dilations = _get_sequence(dilations, n, channel_index, "dilations")
        if n == 1:
            return conv1d_transpose(input, filters, output_shape, strides, padding=padding,
                                    data_format=fmt, dilations=dilations, name=scope)
        from tensorweave.ops.nn.conv_ops import conv2d_transpose
        build = conv2d_transpose if n == 2 else conv3d_transpose
        return build(input, filters, output_shape, strides, padding=padding, data_format=fmt,
                     dilations=dilations, name=scope)


@tf_export("nn.with_space_to_batch")
def with_space_to_batch(input, dilation_rate, padding: str, op,  # noqa: A002
                        filter_shape=None, spatial_dims=None,
                        data_format: Optional[str] = None) -> Tensor:
    """Runs `op` at a dilation rate through space-to-batch (TF1
    `tf.nn.with_space_to_batch`): the input is padded and split into `prod(rate)` batches
    of its interleaved positions, `op(converted, num_spatial_dims, "VALID")` runs on them,
    and the result is put back together and cropped. With every rate 1, it is
    `op(input, num_spatial_dims, padding)`.

    Args:
      input: a Tensor of rank at least max(spatial_dims) + 1.
      dilation_rate: an int32 vector of num_spatial_dims values.
      padding: "VALID", "SAME" (then `filter_shape` is needed) or a list of N + 2
        [before, after] pairs (batch and channels included).
      op: a function `op(input, num_spatial_dims, padding)`.
      filter_shape: the filter's shape, its first num_spatial_dims values spatial.
      spatial_dims: increasing dimensions of `input` (at least 1) that are spatial;
        default 1..N, or 2..N+1 for a channels-first `data_format`.
      data_format: "NC..." for channels first; otherwise channels last.

    Returns:
      What `op` returns, at the input's positions.

    Raises:
      ValueError: a bad padding, a missing filter_shape for SAME, bad spatial_dims, a
        rate that is not a vector of known length or has values below 1, or an input of
        too low a rank (TF's messages).
    """
    from tensorweave.ops.array import array_rearrange_ops as rearrange
    from tensorweave.ops.array.array_join_ops import concat, stack
    from tensorweave.ops.array.array_ops import shape as shape_of
    # no name scope of its own, as TF's: the ops go into the caller's scope
    input = convert_to_tensor(input, name="input")  # noqa: A001
    rate = convert_to_tensor(dilation_rate, _dt.int32, name="dilation_rate")
    if rate.shape.ndims not in (None, 1):
        raise ValueError("`dilation_rate.shape.rank` must be 1. Received: dilation_rate=%s "
                         "of rank %d" % (rate, rate.shape.ndims))
    if not rate.shape.is_fully_defined():
        raise ValueError("`dilation_rate.shape` must be fully defined. Received: "
                         "dilation_rate=%s with shape %s" % (rate, rate.shape))
    num = rate.shape.as_list()[0]
    channels_first = data_format is not None and data_format.startswith("NC")
    first = 2 if channels_first else 1
    if spatial_dims is None:
        spatial_dims = range(first, first + num)
    orig_spatial_dims = list(spatial_dims)
    spatial_dims = sorted(set(int(d) for d in orig_spatial_dims))
    if spatial_dims != orig_spatial_dims or any(d < 1 for d in spatial_dims):
        raise ValueError("`spatial_dims` must be a monotonically increasing sequence of "
                         "positive integers. Received: spatial_dims=%s" % orig_spatial_dims)
    expected_rank = spatial_dims[-1] if channels_first else spatial_dims[-1] + 1
    try:
        input.shape.with_rank_at_least(expected_rank)
    except ValueError:
        raise ValueError("`input.shape.rank` must be at least %d. Received: input.shape=%s "
                         "with rank %s" % (expected_rank, input.shape, input.shape.ndims)
                         ) from None
    const_rate = tensor_util.constant_value(rate)
    rate_value = rate
    if const_rate is not None:
        const_rate = np.asarray(const_rate, np.int32)
        rate_value = const_rate
        if np.any(const_rate < 1):
            raise ValueError("`dilation_rate` must be positive. Received: dilation_rate=%s"
                             % const_rate)
        if np.all(const_rate == 1):
            return op(input, num, padding)
    if isinstance(padding, (list, tuple)):  # explicit [before, after] pairs, batch and
        pairs = np.asarray(padding, np.int32).reshape(num + 2, 2)  # channels included
        base = pairs[2:] if channels_first else pairs[1:-1]
    elif padding == "SAME":
        if filter_shape is None:
            raise ValueError("`filter_shape` must be specified for `padding='SAME'`. "
                             "Received: filter_shape=None and padding=SAME")
        filter_shape = convert_to_tensor(filter_shape, name="filter_shape")
        const_filter = tensor_util.constant_value(filter_shape)
        if const_filter is not None and const_rate is not None:
            extra = (np.asarray(const_filter, np.int32)[:num] - 1) * const_rate
            base = np.stack([extra // 2, extra - extra // 2], axis=1).astype(np.int32)
        else:
            spatial_filter = (filter_shape if const_filter is None else
                              convert_to_tensor(np.asarray(const_filter, np.int32)))
            extra = (_as_int32(spatial_filter[:num]) - 1) * rate_value
            base = stack([extra // 2, extra - extra // 2], axis=1)
    elif padding == "VALID":
        base = np.zeros([num, 2], np.int32)
    else:
        raise ValueError("`padding` must be one of 'SAME' or 'VALID'. Received: padding=%s"
                         % padding)
    dims = input.shape.as_list() if input.shape.ndims is not None else None
    spatial_shape = None if dims is None else [dims[d] for d in spatial_dims]
    if spatial_shape is None or None in spatial_shape:
        shape_tensor = shape_of(input)
        spatial_shape = stack([shape_tensor[d] for d in spatial_dims])
    paddings, crops = rearrange.required_space_to_batch_paddings(
        input_shape=spatial_shape, base_paddings=base, block_shape=rate)

    def adjust(orig, fill):
        """[max(spatial_dims), ...]: `orig`'s rows at spatial_dims - 1, `fill` between."""
        const = tensor_util.constant_value(orig)
        value = np.asarray(const, np.int32) if const is not None else orig
        rows = orig.shape.as_list()[1:]
        parts, prev, k = [], 0, 0
        while k < len(spatial_dims):
            start = k
            if spatial_dims[k] > 1 and spatial_dims[k] - 1 > prev:
                parts.append(np.full([spatial_dims[k] - 1 - prev] + rows, fill, np.int32))
            while k + 1 < len(spatial_dims) and spatial_dims[k + 1] == spatial_dims[k] + 1:
                k += 1
            parts.append(value[start:k + 1])
            prev = spatial_dims[k]
            k += 1
        if const is not None:
            return np.concatenate(parts)
        return parts[0] if len(parts) == 1 else concat(parts, 0)

    block = adjust(rate, 1)
    converted = rearrange.space_to_batch_nd(input, block, adjust(paddings, 0))
    result = op(converted, num, "VALID")
    return rearrange.batch_to_space_nd(result, block, adjust(crops, 0))


def _as_int32(t: Tensor) -> Tensor:
    from tensorweave.ops.math.math_ops import cast
    return t if t.dtype == _dt.int32 else cast(t, _dt.int32)
