"""2-D convolution: Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter and their builders.

The kernels work in NHWC (NCHW is transposed in and out) and lower every convolution
to one BLAS matrix product:

* forward and backprop-filter build the "im2col" matrix of the padded input - a strided
  view with one row per output position and one column per (kh, kw, in_channel) tap,
  copied once - and multiply it by the filter reshaped to [kh*kw*in, out] (forward) or
  by the output gradient (filter gradient);
* backprop-input multiplies the output gradient by the filter of each tap and adds the
  result into a strided slice of the padded input gradient (col2im, one loop over the
  kh*kw taps).

Window geometry follows TF: SAME gives ceil(in / stride) outputs with the padding split
as evenly as possible (the extra row/column after), VALID gives
(in - effective_filter) // stride + 1, EXPLICIT takes the pads from `explicit_paddings`.
Pooling (MaxPool, AvgPool) lives in pooling_ops.py and shares the helpers here.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.math.blas import large_product
from tensorweave.ops import onednn

_CONV_TYPES = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64, _dt.int32)
_PADDINGS = ("SAME", "VALID", "EXPLICIT")
_FORMATS = ("NHWC", "NCHW")


# --- argument normalisation (builders) ---------------------------------------------------
def _get_sequence(value, n: int, channel_index: int, name: str) -> List[int]:
    """A length-(n+2) stride/dilation/ksize list from an int or a list of 1, n or n+2
    entries, with ones in the batch and channel positions (TF's _get_sequence)."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, (int, np.integer)):
        seq = [int(value)]
    else:
        seq = [int(v) for v in value]
    if len(seq) == n + 2:
        return seq
    if len(seq) == 1:
        seq = seq * n
    elif len(seq) != n:
        raise ValueError("%s should be of length 1, %d or %d. Received: %s=%s of length %d"
                         % (name, n, n + 2, name, value, len(seq)))
    return [1, 1] + seq if channel_index == 1 else [1] + seq + [1]


def _convert_padding(padding, expected_length: int = 4) -> Tuple[str, List[int]]:
    """("SAME" | "VALID" | "EXPLICIT", flat explicit paddings) from a padding argument."""
    if isinstance(padding, (list, tuple)):
        flat = []
        for i, pair in enumerate(padding):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError("When `padding` is a list, each element of `padding` must be "
                                 "a list/tuple of size 2. Received: padding=%s with element "
                                 "at index %d: %r" % (padding, i, pair))
            flat.extend(int(p) for p in pair)
        if len(padding) != expected_length:
            raise ValueError("When padding is a list, it must be of size %d. Received: "
                             "padding=%s of size %d" % (expected_length, padding, len(padding)))
        return "EXPLICIT", flat
    if isinstance(padding, bytes):
        padding = padding.decode()
    if padding == "EXPLICIT":
        raise ValueError('"EXPLICIT" is not a valid value for `padding`. To use explicit '
                         'padding, `padding` must be a list.')
    return padding, []


def _check_enum(op_type: str, attr: str, value, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError("Attr '%s' of '%s' Op passed string '%s' not in: %s." % (
            attr, op_type, value, ", ".join('"%s"' % a for a in allowed)))


def _check_list_attr(op_type: str, name: str, value) -> List[int]:
    """Raw-op list attrs (strides of conv2d_backprop_*): a list is required, as TF."""
    if not isinstance(value, (list, tuple)):
        raise TypeError("Expected list for '%s' argument to '%s' Op, not %r."
                        % (name, op_type, value))
    return [int(v) for v in value]


def _spatial_axes(data_format: str) -> Tuple[int, int]:
    return (2, 3) if data_format.startswith("NC") else (1, 2)


# --- window geometry (shared with pooling_ops) -------------------------------------------
class Window:
    """One spatial dimension of a window op: sizes, stride, dilation and padding."""

    __slots__ = ("size", "k", "stride", "dilation", "out", "pad_before", "pad_after")

    def __init__(self, size, k, stride, dilation, out, pad_before, pad_after):
        self.size, self.k, self.stride, self.dilation = size, k, stride, dilation
        self.out, self.pad_before, self.pad_after = out, pad_before, pad_after

    @property
    def padded(self) -> int:
        return self.size + self.pad_before + self.pad_after

    def tap(self, i: int) -> slice:
        """The padded-input positions that tap i of every window reads (none for an empty
        output, whose stop would otherwise be negative: counted from the end)."""
        start = i * self.dilation
        return slice(start, start + max((self.out - 1) * self.stride + 1, 0), self.stride)


def window_output_size(size: Optional[int], k: Optional[int], stride: int, dilation: int,
                       padding: str, pads=(0, 0)) -> Optional[int]:
    """The output size of one dimension (None when unknown), as TF's
    GetWindowedOutputSize; raises ValueError for a negative size."""
    if size is None:
        return None
    if padding == "SAME":
        return -(-size // stride)
    if k is None:
        return None
    eff = (k - 1) * dilation + 1
    total = size + (pads[0] + pads[1] if padding == "EXPLICIT" else 0)
    if total < eff:
        raise ValueError("Negative dimension size caused by subtracting %d from %d"
                         % (eff, total))
    return (total - eff) // stride + 1


def make_window(size: int, k: int, stride: int, dilation: int, padding: str,
                pads=(0, 0)) -> Window:
    """The Window of one dimension at run time (all sizes known).

    Raises:
      InvalidArgumentError: a VALID or EXPLICIT window larger than the padded input by
        more than a stride, with TF's message (GetWindowedOutputSize).
    """
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        before, after = total // 2, total - total // 2
    else:
        before, after = (int(pads[0]), int(pads[1])) if padding == "EXPLICIT" else (0, 0)
        # TF's size, C++ division (toward zero): an input up to a stride short of the
        # window gives an empty output, a shorter one an error
        out = int((size + before + after - eff + stride) / stride)
        if out < 0:
            raise errors.InvalidArgumentError(
                None, None, "Computed output size would be negative: %d [input_size: %d, "
                "effective_filter_size: %d, stride: %d]" % (out, size, eff, stride))
    return Window(size, k, stride, dilation, out, before, after)


def pad_nhwc(x: np.ndarray, wh: Window, ww: Window, value=0) -> np.ndarray:
    """x padded in H and W by the windows' pads (x itself when there is no padding)."""
    if not (wh.pad_before or wh.pad_after or ww.pad_before or ww.pad_after):
        return x
    n, h, w, c = x.shape
    out = np.full((n, wh.padded, ww.padded, c), value, dtype=x.dtype)
    out[:, wh.pad_before:wh.pad_before + h, ww.pad_before:ww.pad_before + w] = x
    return out


def channels_last(x: np.ndarray, data_format: str) -> np.ndarray:
    """`x` ([N, C, ...] or [N, ..., C] as `data_format` says) as [N, ..., C] (a view)."""
    return np.moveaxis(x, 1, -1) if data_format.startswith("NC") else x


def channels_back(y: np.ndarray, data_format: str) -> np.ndarray:
    """The inverse of channels_last: [N, ..., C] back in `data_format` (contiguous)."""
    return np.ascontiguousarray(np.moveaxis(y, -1, 1)) if data_format.startswith("NC") else y


def channels_last_shape(shape, data_format: str) -> Tuple[int, ...]:
    """A shape in `data_format` as the [N, ..., C] shape of channels_last."""
    shape = tuple(int(d) for d in shape)
    return (shape[0],) + shape[2:] + (shape[1],) if data_format.startswith("NC") else shape


def explicit_pairs(attrs, data_format: str):
    """((top, bottom), (left, right)) from the flat explicit_paddings attr."""
    flat = list(attrs.get("explicit_paddings") or [0] * 8)
    h, w = _spatial_axes(data_format)
    return (flat[2 * h], flat[2 * h + 1]), (flat[2 * w], flat[2 * w + 1])


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """Half precision is computed in float32 (BLAS has no half kernels)."""
    return np.dtype(np.float32) if dtype.kind == "f" and dtype.itemsize < 4 or \
        dtype.name == "bfloat16" else dtype


# --- kernels' core (NHWC NumPy) ----------------------------------------------------------
def _im2col(xp: np.ndarray, wh: Window, ww: Window) -> np.ndarray:
    """[N*OH*OW, KH*KW*C]: row (n, oh, ow) holds every tap of that output's window.

    With several channels the rows are copied from one strided view (runs of C
    contiguous values). With one channel (grayscale images) those runs are single values
    and the copy crawls, so the matrix is built transposed instead, one tap at a time
    (runs of OW values, ~3x faster), and returned as the transpose of that copy: BLAS
    reads either order without another copy."""
    n, _, _, c = xp.shape
    if c == 1:
        cols = np.empty((wh.k, ww.k, n, wh.out, ww.out), dtype=xp.dtype)
        for i in range(wh.k):
            rows = wh.tap(i)
            for j in range(ww.k):
                cols[i, j] = xp[:, rows, ww.tap(j), 0]
        return cols.reshape(wh.k * ww.k, n * wh.out * ww.out).T
    s0, s1, s2, s3 = xp.strides
    view = as_strided(xp, (n, wh.out, ww.out, wh.k, ww.k, c),
                      (s0, s1 * wh.stride, s2 * ww.stride, s1 * wh.dilation,
                       s2 * ww.dilation, s3), writeable=False)
    return view.reshape(n * wh.out * ww.out, wh.k * ww.k * c)


# im2col is built and consumed in batch chunks of about this many bytes, so each chunk
# is still in cache when the matrix product reads it (~20% faster than one big matrix).
_IM2COL_CHUNK_BYTES = 4 << 20


def _batch_chunks(xp: np.ndarray, wh: Window, ww: Window):
    """Yields (first image, last image + 1) covering the batch in cache-sized chunks."""
    n = xp.shape[0]
    row_bytes = wh.out * ww.out * wh.k * ww.k * xp.shape[3] * xp.itemsize
    step = max(1, _IM2COL_CHUNK_BYTES // max(row_bytes, 1))
    for start in range(0, n, step):
        yield start, min(start + step, n)


def conv2d_nhwc(x: np.ndarray, w: np.ndarray, wh: Window, ww: Window) -> np.ndarray:
    """The 2-D convolution of NHWC `x` with `w` [kh, kw, ci, co] over the windows `wh`, `ww`."""
    fast = onednn.conv(x, w, (wh, ww))
    if fast is not None:
        return fast
    kh, kw, ci, co = w.shape
    n = x.shape[0]
    xp = pad_nhwc(x, wh, ww)
    w2 = w.reshape(kh * kw * ci, co)
    per_image = wh.out * ww.out
    out = np.empty((n * per_image, co), dtype=np.result_type(x, w))
    with large_product(n * per_image * w2.size):
        for a, b in _batch_chunks(xp, wh, ww):
            np.matmul(_im2col(xp[a:b], wh, ww), w2, out=out[a * per_image:b * per_image])
    return out.reshape(n, wh.out, ww.out, co)


def conv2d_backprop_filter_nhwc(x: np.ndarray, filter_shape, dy: np.ndarray, wh: Window,
                                ww: Window) -> np.ndarray:
    """The filter gradient of conv2d_nhwc, of shape `filter_shape`."""
    fast = onednn.conv_backprop_filter(x, filter_shape, dy, (wh, ww))
    if fast is not None:
        return fast
    kh, kw, ci, co = filter_shape
    xp = pad_nhwc(x, wh, ww)
    dw = None
    with large_product(dy.size * kh * kw * ci):
        for a, b in _batch_chunks(xp, wh, ww):
            part = np.matmul(_im2col(xp[a:b], wh, ww).T, dy[a:b].reshape(-1, co))
            dw = part if dw is None else np.add(dw, part, out=dw)
    if dw is None:  # empty batch
        dw = np.zeros((kh * kw * ci, co), dtype=np.result_type(x, dy))
    return dw.reshape(kh, kw, ci, co)


def conv2d_backprop_input_nhwc(input_shape, w: np.ndarray, dy: np.ndarray, wh: Window,
                               ww: Window) -> np.ndarray:
    """The input gradient of conv2d_nhwc, of the NHWC shape `input_shape`."""
    fast = onednn.conv_backprop_input(input_shape, w, dy, (wh, ww))
    if fast is not None:
        return fast
    n, h, wd, ci = input_shape
    kh, kw, _, co = w.shape
    dxp = np.zeros((n, wh.padded, ww.padded, ci), dtype=dy.dtype)
    dy2 = dy.reshape(-1, co)
    taps = w.reshape(kh * kw, ci, co)
    buf = np.empty((dy2.shape[0], ci), dtype=dy.dtype)
    with large_product(dy2.size * kh * kw * ci):
        for i in range(kh):
            rows = wh.tap(i)
            for j in range(kw):
                np.matmul(dy2, taps[i * kw + j].T, out=buf)
                dxp[:, rows, ww.tap(j)] += buf.reshape(n, wh.out, ww.out, ci)
    if dxp.shape[1:3] == (h, wd):
        return dxp
    return np.ascontiguousarray(dxp[:, wh.pad_before:wh.pad_before + h,
                                    ww.pad_before:ww.pad_before + wd])


# --- shared attr handling -----------------------------------------------------------------
def _conv_windows(ctx, in_nhwc, filter_shape) -> Tuple[Window, Window]:
    """Validates the conv attrs at run time and returns the H and W windows."""
    attrs = ctx.attrs
    fmt = attrs["data_format"]
    strides, dilations = list(attrs["strides"]), list(attrs["dilations"])
    h_ax, w_ax = _spatial_axes(fmt)
    other = (0, 1 if fmt == "NCHW" else 3)  # batch and depth
    if any(strides[a] != 1 for a in other):
        raise errors.UnimplementedError(None, ctx.op, "Current implementation does not yet "
                                        "support strides in the batch and depth dimensions.")
    if any(dilations[a] != 1 for a in other):
        raise errors.UnimplementedError(None, ctx.op, "Current implementation does not yet "
                                        "support dilations in the batch and depth dimensions.")
    kh, kw, fci, fco = (int(d) for d in filter_shape)
    if fci == 0 or in_nhwc[3] % fci:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input depth must be evenly divisible by filter depth: %d vs %d"
            % (in_nhwc[3], fci))
    groups = in_nhwc[3] // fci
    if groups > 1 and fco % groups:
        raise errors.InvalidArgumentError(
            None, ctx.op, "output depth must be evenly divisible by number of groups: %d vs "
            "%d" % (fco, groups))
    ph, pw = explicit_pairs(attrs, fmt)
    pad = attrs["padding"]
    wh = make_window(in_nhwc[1], kh, strides[h_ax], dilations[h_ax], pad, ph)
    ww = make_window(in_nhwc[2], kw, strides[w_ax], dilations[w_ax], pad, pw)
    return wh, ww


def _check_out_backprop(ctx, name, dy_nhwc, wh: Window, ww: Window, in_size, filt) -> None:
    for dim, win in ((1, wh), (2, ww)):
        if dy_nhwc[dim] != win.out:
            raise errors.InvalidArgumentError(
                None, ctx.op, "%s: Size of out_backprop doesn't match computed: actual = %d, "
                "computed = %d spatial_dim: %d input: %d filter: %d output: %d stride: %d "
                "dilation: %d" % (name, dy_nhwc[dim], win.out, dim, in_size[dim], win.k,
                                  dy_nhwc[dim], win.stride, win.dilation))
    if dy_nhwc[3] != filt[3]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s: filter and out_backprop must have the same out_depth (%d vs %d)"
            % (name, filt[3], dy_nhwc[3]))
    if dy_nhwc[0] != in_size[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s: input and out_backprop must have the same batch size (%d vs %d)"
            % (name, in_size[0], dy_nhwc[0]))


def _sizes_arg(ctx, value, what: str) -> Tuple[int, ...]:
    v = np.asarray(value).reshape(-1)
    if v.size != 4:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s must be a 4-element vector, got shape %s"
            % (what, list(np.shape(value))))
    if (v < 0).any():
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be non-negative: %s"
                                          % (what, v.tolist()))
    return tuple(int(d) for d in v)


def _check_rank4(ctx, name, arr) -> None:
    if arr.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be 4-dimensional: %s"
                                          % (name, list(arr.shape)))


# --- shape functions ---------------------------------------------------------------------
def rank4(shape: TensorShape) -> List[Optional[int]]:
    """The dims of a rank-4 (or unknown-rank) shape; ValueError otherwise (TF's text)."""
    if shape.ndims is None:
        return [None] * 4
    if shape.ndims != 4:
        raise ValueError("Shape must be rank 4 but is rank %d" % shape.ndims)
    return shape.as_list()


def check_four_positive(op, names) -> None:
    """Build-time check that each list attr in `names` holds 4 positive values."""
    for name in names:
        value = op._get_attr(name)
        if len(value) != 4:
            raise ValueError("%s requires the %s attribute to contain 4 values, but got: %d"
                             % (op.type, name, len(value)))
        if any(int(v) < 1 for v in value):
            raise ValueError("%s: all %s values must be positive, got %s"
                             % (op.type, name, list(value)))


def check_window_attrs(op, names=("strides", "dilations")) -> Tuple[str, str]:
    """Build-time checks of padding/data_format/list attrs; returns (padding, format)."""
    padding, fmt = op._get_attr("padding"), op._get_attr("data_format")
    allowed = _PADDINGS if "explicit_paddings" in op._attrs else _PADDINGS[:2]
    _check_enum(op.type, "padding", padding, allowed)
    _check_enum(op.type, "data_format", fmt, _FORMATS)
    check_four_positive(op, names)
    if padding == "EXPLICIT":
        flat = list(op._get_attr("explicit_paddings"))
        if len(flat) != 8:
            raise ValueError("explicit_paddings attribute must contain 8 values, but got: %d"
                             % len(flat))
        b = 0
        d = 1 if fmt == "NCHW" else 3
        if any(flat[2 * a] or flat[2 * a + 1] for a in (b, d)):
            raise ValueError("Nonzero explicit padding in the batch or depth dimensions is "
                             "not supported")
        if any(p < 0 for p in flat):
            raise ValueError("All elements of explicit_paddings must be nonnegative, got %s"
                             % flat)
    return padding, fmt


def _conv2d_shape(op):
    padding, fmt = check_window_attrs(op)
    x = rank4(op.inputs[0].shape)
    f = rank4(op.inputs[1].shape)
    n, h, w, c = (x[0], x[2], x[3], x[1]) if fmt == "NCHW" else x
    if c is not None and f[2] is not None and (f[2] == 0 or c % f[2]):
        raise ValueError("Depth of input (%d) is not a multiple of input depth of filter (%d)"
                         % (c, f[2]))
    if c is not None and f[2] and f[3] is not None and f[3] % (c // f[2]):
        raise ValueError("Depth of output (%d) is not a multiple of the number of groups (%d)"
                         % (f[3], c // f[2]))
    strides, dilations = op._get_attr("strides"), op._get_attr("dilations")
    h_ax, w_ax = _spatial_axes(fmt)
    ph, pw = explicit_pairs(op._attrs, fmt)
    oh = window_output_size(h, f[0], strides[h_ax], dilations[h_ax], padding, ph)
    ow = window_output_size(w, f[1], strides[w_ax], dilations[w_ax], padding, pw)
    dims = [n, f[3], oh, ow] if fmt == "NCHW" else [n, oh, ow, f[3]]
    return TensorShape(dims)


def _conv2d_backprop_input_shape(op):
    _, fmt = check_window_attrs(op)
    f = rank4(op.inputs[1].shape)
    dy = rank4(op.inputs[2].shape)
    depth_ax = 1 if fmt == "NCHW" else 3
    if dy[depth_ax] is not None and f[3] is not None and dy[depth_ax] != f[3]:
        raise ValueError("Dimensions must be equal, but are %d and %d" % (dy[depth_ax], f[3]))
    dims = rank4(tensor_util.constant_value_as_shape(op.inputs[0]))
    # as TF, the batch comes from out_backprop (checked against input_sizes when both are
    # known): an unknown out_backprop batch leaves it unknown even with constant sizes
    if dims[0] is not None and dy[0] is not None and dims[0] != dy[0]:
        raise ValueError("Dimensions must be equal, but are %d and %d" % (dims[0], dy[0]))
    dims[0] = dy[0]
    return TensorShape(dims)


def _conv2d_backprop_filter_shape(op):
    check_window_attrs(op)
    rank4(op.inputs[0].shape)
    rank4(op.inputs[2].shape)
    return TensorShape(rank4(tensor_util.constant_value_as_shape(op.inputs[1])))


_CONV_ATTRS = {"T": TypeAttr(_CONV_TYPES), "strides": [1, 1, 1, 1], "use_cudnn_on_gpu": True,
               "padding": "VALID", "explicit_paddings": [], "data_format": "NHWC",
               "dilations": [1, 1, 1, 1]}

register_op("Conv2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=dict(_CONV_ATTRS), shape=_conv2d_shape)
register_op("_FusedConv2D", inputs=["input: T", "filter: T", "args: num_args * T"],
            outputs=["output: T"],
            attrs={**_CONV_ATTRS, "fused_ops": [], "epsilon": 0.0001,
                   "leakyrelu_alpha": 0.2},
            shape=_conv2d_shape)
register_op("Conv2DBackpropInput",
            inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
            outputs=["output: T"], attrs=dict(_CONV_ATTRS),
            shape=_conv2d_backprop_input_shape)
register_op("Conv2DBackpropFilter",
            inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
            outputs=["output: T"], attrs=dict(_CONV_ATTRS),
            shape=_conv2d_backprop_filter_shape)


# --- kernels -----------------------------------------------------------------------------
@kernel("Conv2D", cheap=False, threaded=onednn.runs_float32)
def _conv2d_kernel(ctx, x, w):
    fmt, xn, w, wins = _conv2d_operands(ctx, x, w)
    return channels_back(_conv2d_values(xn, w, wins).astype(x.dtype, copy=False), fmt)


def _conv2d_operands(ctx, x, w):
    """(data_format, x as NHWC, w, (H window, W window)), both in the compute dtype."""
    _check_rank4(ctx, "input", x)
    _check_rank4(ctx, "filter", w)
    fmt = ctx.attrs["data_format"]
    xn = channels_last(x, fmt)
    wins = _conv_windows(ctx, xn.shape, w.shape)
    ct = _compute_dtype(x.dtype)
    return fmt, xn.astype(ct, copy=False), w.astype(ct, copy=False), wins


def _conv2d_values(xn: np.ndarray, w: np.ndarray, wins) -> np.ndarray:
    """The NHWC convolution, group by group (one group for a plain convolution)."""
    parts = [conv2d_nhwc(xn[..., i], w[..., o], *wins)
             for i, o in _group_slices(xn.shape[3], w.shape)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=3)


# _FusedConv2D and _FusedConv3D: what Grappler's remapper (and runtime/optimizer.py's
# fuse_conv_bias_relu) makes of a convolution -> BiasAdd [-> Relu]; fused_ops -> apply ReLU
_FUSED_EPILOGUES = {("BiasAdd",): False, ("BiasAdd", "Relu"): True}


def fused_epilogue(ctx, args, channels: int):
    """(bias, relu) of a fused convolution: its one bias argument, checked against the
    `channels` of the result, and whether ReLU follows."""
    fused = tuple(ctx.attrs["fused_ops"])
    if fused not in _FUSED_EPILOGUES or len(args) != 1:
        raise errors.UnimplementedError(
            None, ctx.op, "%s with fused_ops %s and %d arguments is not supported (BiasAdd, "
            "optionally followed by Relu, with one bias)" % (ctx.op.type, list(fused),
                                                             len(args)))
    bias = args[0]
    if bias.shape != (channels,):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Must provide as many biases as the last dimension of the input "
            "tensor: %s vs. %s" % (list(bias.shape), [channels]))
    return bias, _FUSED_EPILOGUES[fused]


def add_bias_relu(out: np.ndarray, bias: np.ndarray, relu: bool) -> np.ndarray:
    """The epilogue in place on `out` (channels last), where oneDNN did not run it."""
    out += bias
    if relu:
        np.maximum(out, 0, out=out)
    return out


@kernel("_FusedConv2D", cheap=False, threaded=onednn.runs_float32)
def _fused_conv2d_kernel(ctx, x, w, *args):
    fmt, xn, w, wins = _conv2d_operands(ctx, x, w)
    bias, relu = fused_epilogue(ctx, args, w.shape[3])
    bias = bias.astype(xn.dtype, copy=False)
    out = onednn.conv(xn, w, wins, bias=bias, relu=relu) if xn.shape[3] == w.shape[2] \
        else None
    if out is None:
        out = add_bias_relu(_conv2d_values(xn, w, wins), bias, relu)
    return channels_back(out.astype(x.dtype, copy=False), fmt)


def _group_slices(in_depth: int, filter_shape) -> list:
    """(input channels, output channels) of each group of a convolution: TF's grouped
    convolution has input depth = groups * the filter's input depth, and each group's
    output channels see its input channels only. One pair for a plain convolution."""
    fci, fco = int(filter_shape[2]), int(filter_shape[3])
    groups = in_depth // fci
    step = fco // groups
    return [(slice(g * fci, (g + 1) * fci), slice(g * step, (g + 1) * step))
            for g in range(groups)]


@kernel("Conv2DBackpropInput", cheap=False, threaded=onednn.runs_float32)
def _conv2d_backprop_input_kernel(ctx, input_sizes, w, dy):
    _check_rank4(ctx, "filter", w)
    _check_rank4(ctx, "out_backprop", dy)
    fmt = ctx.attrs["data_format"]
    in_shape = channels_last_shape(_sizes_arg(ctx, input_sizes, "input_sizes"), fmt)
    dyn = channels_last(dy, fmt)
    wh, ww = _conv_windows(ctx, in_shape, w.shape)
    _check_out_backprop(ctx, "Conv2DCustomBackpropInput", dyn.shape, wh, ww, in_shape,
                        w.shape)
    ct = _compute_dtype(dy.dtype)
    w, dyn = w.astype(ct, copy=False), dyn.astype(ct, copy=False)
    group_shape = tuple(in_shape[:3]) + (w.shape[2],)
    parts = [conv2d_backprop_input_nhwc(group_shape, w[..., o], dyn[..., o], wh, ww)
             for _, o in _group_slices(in_shape[3], w.shape)]
    dx = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=3)
    return channels_back(dx.astype(dy.dtype, copy=False), fmt)


@kernel("Conv2DBackpropFilter", cheap=False, threaded=onednn.runs_float32)
def _conv2d_backprop_filter_kernel(ctx, x, filter_sizes, dy):
    _check_rank4(ctx, "input", x)
    _check_rank4(ctx, "out_backprop", dy)
    fmt = ctx.attrs["data_format"]
    f_shape = _sizes_arg(ctx, filter_sizes, "filter_sizes")
    xn, dyn = channels_last(x, fmt), channels_last(dy, fmt)
    wh, ww = _conv_windows(ctx, xn.shape, f_shape)
    _check_out_backprop(ctx, "Conv2DCustomBackpropFilter", dyn.shape, wh, ww, xn.shape,
                        f_shape)
    ct = _compute_dtype(x.dtype)
    xn, dyn = xn.astype(ct, copy=False), dyn.astype(ct, copy=False)
    kh, kw, fci, _ = f_shape
    parts = [conv2d_backprop_filter_nhwc(xn[..., i], (kh, kw, fci, o.stop - o.start),
                                         dyn[..., o], wh, ww)
             for i, o in _group_slices(xn.shape[3], f_shape)]
    dw = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=3)
    return dw.astype(x.dtype, copy=False)


# --- gradients ---------------------------------------------------------------------------
def shape_tensor(t: Tensor) -> Tensor:
    """The shape of `t` as an int32 tensor: a constant when it is known at build time."""
    if t.shape.is_fully_defined():
        from tensorweave.ops.array.constant_op import constant
        return constant(np.array(t.shape.as_list(), dtype=np.int32))
    from tensorweave.ops.array import array_ops
    return array_ops.shape(t)


def register_conv_gradients(forward: str, backprop_input: str, backprop_filter: str,
                            attr_names: Sequence[str]) -> None:
    """Registers the gradients of a convolution op and of its two backprop ops, which are
    each other's adjoints: `y = forward(x, w)`, `dx = backprop_input(shape(x), w, dy)`,
    `dw = backprop_filter(x, shape(w), dy)`, all sharing the attrs `attr_names`.

    backprop_input is linear in w and dy: d/d(dy) is forward(grad, w), d/dw the filter
    gradient of that convolution with grad as its input (likewise for backprop_filter).
    """
    def attrs(op) -> dict:
        return {k: op._get_attr(k) for k in attr_names}

    def grad_input(x, w, dy, op):
        return apply_op(backprop_input, [x, w, dy], attrs(op), name=backprop_input).outputs[0]

    def grad_filter(x, w, dy, op):
        return apply_op(backprop_filter, [x, w, dy], attrs(op),
                        name=backprop_filter).outputs[0]

    def conv(x, w, op):
        return apply_op(forward, [x, w], attrs(op), name=forward).outputs[0]

    @gradient(forward)
    def _forward_grad(op, grad):
        x, w = op.inputs
        return [grad_input(shape_tensor(x), w, grad, op),
                grad_filter(x, shape_tensor(w), grad, op)]

    @gradient(backprop_input)
    def _backprop_input_grad(op, grad):
        _, w, dy = op.inputs
        return [None, grad_filter(grad, shape_tensor(w), dy, op), conv(grad, w, op)]

    @gradient(backprop_filter)
    def _backprop_filter_grad(op, grad):
        x, _, dy = op.inputs
        return [grad_input(shape_tensor(x), grad, dy, op), None, conv(x, grad, op)]


register_conv_gradients("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                        ("strides", "padding", "explicit_paddings", "data_format",
                         "dilations", "use_cudnn_on_gpu"))


def register_fused_conv_gradient(fused_type: str, backprop_input: str,
                                 backprop_filter: str, attr_names: Sequence[str]) -> None:
    """Registers the gradient of a fused convolution: that of the chain it stands for
    (TF registers none: Grappler fuses after the gradients are built), ReluGrad, then
    the bias's and the convolution's, which share the attrs `attr_names`."""
    @gradient(fused_type)
    def _fused_conv_grad(op, grad):
        fused = tuple(op._get_attr("fused_ops"))
        if fused not in _FUSED_EPILOGUES:
            raise LookupError("No gradient defined for %s with fused_ops %s"
                              % (fused_type, list(fused)))
        if _FUSED_EPILOGUES[fused]:
            grad = apply_op("ReluGrad", [grad, op.outputs[0]], name="ReluGrad").outputs[0]
        x, w = op.inputs[0], op.inputs[1]
        attrs = {k: op._get_attr(k) for k in attr_names}
        dx = apply_op(backprop_input, [shape_tensor(x), w, grad], attrs,
                      name=backprop_input).outputs[0]
        dw = apply_op(backprop_filter, [x, shape_tensor(w), grad], attrs,
                      name=backprop_filter).outputs[0]
        # BiasAddGrad's NHWC is any channels-last layout, NCHW any channels-first one
        bias_format = "NCHW" if attrs["data_format"].startswith("NC") else "NHWC"
        db = apply_op("BiasAddGrad", [grad], {"data_format": bias_format},
                      name="BiasAddGrad").outputs[0]
        return [dx, dw, db]


register_fused_conv_gradient("_FusedConv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                             ("strides", "padding", "explicit_paddings", "data_format",
                              "dilations", "use_cudnn_on_gpu"))


# --- builders ----------------------------------------------------------------------------
def lookup_renamed(new_name: str, new_value, old_name: str, old_value):
    """TF's deprecated_argument_lookup: the value of whichever of two names was given."""
    if new_value is not None:
        if old_value is not None:
            raise ValueError("Cannot specify both '%s' and '%s'." % (old_name, new_name))
        return new_value
    return old_value


def _conv_attrs(op_type, strides, padding, data_format, dilations, use_cudnn_on_gpu,
                normalise_lists: bool) -> dict:
    if data_format is None:
        data_format = "NHWC"
    channel_index = 1 if str(data_format).startswith("NC") else 3
    if normalise_lists:
        strides = _get_sequence(strides, 2, channel_index, "strides")
        dilations = _get_sequence(dilations, 2, channel_index, "dilations")
    else:
        strides = _check_list_attr(op_type, "strides", strides)
        dilations = _check_list_attr(op_type, "dilations", dilations)
    padding, explicit = _convert_padding(padding)
    _check_enum(op_type, "padding", padding, _PADDINGS)
    _check_enum(op_type, "data_format", data_format, _FORMATS)
    return {"strides": strides, "padding": padding, "explicit_paddings": explicit,
            "data_format": data_format, "dilations": dilations,
            "use_cudnn_on_gpu": bool(use_cudnn_on_gpu)}


@tf_export("nn.conv2d")
def conv2d(input, filter=None, strides=None, padding=None,  # noqa: A002
           use_cudnn_on_gpu: bool = True, data_format: str = "NHWC",
           dilations=[1, 1, 1, 1], name: Optional[str] = None,  # noqa: B006
           filters=None) -> Tensor:
    """Computes a 2-D convolution of a 4-D `input` with a 4-D `filter` (TF1 `tf.nn.conv2d`).

    Each output element is the sum over a window of `input` of the window times the
    filter: `output[b, i, j, k] = sum_{di, dj, q} input[b, i*sh + di*dh, j*sw + dj*dw, q]
    * filter[di, dj, q, k]` (in NHWC, after padding).

    Args:
      input: a Tensor of shape [batch, in_height, in_width, in_channels] (NHWC) or
        [batch, in_channels, in_height, in_width] (NCHW); half, bfloat16, float32,
        float64 or int32.
      filter: a Tensor of the same type, [filter_height, filter_width, in_channels,
        out_channels].
      strides: an int or a list of 1, 2 or 4 ints: the window step per dimension.
      padding: "SAME", "VALID", or a list of 4 [before, after] pairs (explicit padding;
        the batch and channel pairs must be [0, 0]).
      use_cudnn_on_gpu: accepted for compatibility.
      data_format: "NHWC" (default) or "NCHW".
      dilations: an int or a list of 1, 2 or 4 ints: the filter dilation per dimension.
      name: op name.
      filters: alias of `filter`.

    Returns:
      A Tensor of the type of `input`.

    Raises:
      ValueError: bad padding, strides or data_format; ranks other than 4; an input depth
        that is not a multiple of the filter's; a window larger than a VALID input.
    """
    filter = lookup_renamed("filters", filters, "filter", filter)  # noqa: A001
    attrs = _conv_attrs("Conv2D", strides, padding, data_format, dilations,
                        use_cudnn_on_gpu, normalise_lists=True)
    return apply_op("Conv2D", [input, filter], attrs, name=name or "Conv2D").outputs[0]


@tf_export("nn.conv2d_backprop_input")
def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None,  # noqa: A002
                          strides=None, padding=None, use_cudnn_on_gpu: bool = True,
                          data_format: str = "NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                          name: Optional[str] = None, filters=None) -> Tensor:
    """The gradient of conv2d with respect to its input (TF1 `tf.nn.conv2d_backprop_input`).

    Args:
      input_sizes: an int32 vector, the shape of the convolution's input.
      filter: the convolution's filter, [filter_height, filter_width, in, out].
      out_backprop: the gradient of the convolution's output.
      strides: a list of 4 ints (as the raw op: required to be a list).
      padding: "SAME", "VALID" or a list of 4 [before, after] pairs.
      use_cudnn_on_gpu: accepted for compatibility.
      data_format: "NHWC" or "NCHW".
      dilations: a list of 4 ints.
      name: op name.
      filters: alias of `filter`.

    Returns:
      A Tensor of shape `input_sizes` and the type of `filter`.
    """
    filter = lookup_renamed("filters", filters, "filter", filter)  # noqa: A001
    attrs = _conv_attrs("conv2d_backprop_input", strides, padding, data_format, dilations,
                        use_cudnn_on_gpu, normalise_lists=False)
    return apply_op("Conv2DBackpropInput", [input_sizes, filter, out_backprop], attrs,
                    name=name or "Conv2DBackpropInput").outputs[0]


@tf_export("nn.conv2d_backprop_filter")
def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides,  # noqa: A002
                           padding, use_cudnn_on_gpu: bool = True,
                           data_format: str = "NHWC", dilations=[1, 1, 1, 1],  # noqa: B006
                           name: Optional[str] = None) -> Tensor:
    """The gradient of conv2d with respect to its filter
    (TF1 `tf.nn.conv2d_backprop_filter`).

    Args:
      input: the convolution's input, 4-D.
      filter_sizes: an int32 vector, the shape of the filter.
      out_backprop: the gradient of the convolution's output.
      strides: a list of 4 ints.
      padding: "SAME", "VALID" or a list of 4 [before, after] pairs.
      use_cudnn_on_gpu: accepted for compatibility.
      data_format: "NHWC" or "NCHW".
      dilations: a list of 4 ints.
      name: op name.

    Returns:
      A Tensor of shape `filter_sizes` and the type of `input`.
    """
    attrs = _conv_attrs("conv2d_backprop_filter", strides, padding, data_format, dilations,
                        use_cudnn_on_gpu, normalise_lists=False)
    return apply_op("Conv2DBackpropFilter", [input, filter_sizes, out_backprop], attrs,
                    name=name or "Conv2DBackpropFilter").outputs[0]


@tf_export("nn.conv2d_transpose")
def conv2d_transpose(value=None, filter=None, output_shape=None,  # noqa: A002
                     strides=None, padding: str = "SAME", data_format: str = "NHWC",
                     name: Optional[str] = None, input=None, filters=None,  # noqa: A002
                     dilations=None) -> Tensor:
    """The transpose of conv2d (TF1 `tf.nn.conv2d_transpose`): the gradient of conv2d with
    respect to its input, used as a learned upsampling.

    Args:
      value: a 4-D Tensor [batch, height, width, in_channels] (NHWC) whose channels are
        the filter's output channels.
      filter: [height, width, output_channels, in_channels].
      output_shape: a 1-D int32 tensor or list, the shape of the result.
      strides: an int or a list of 1, 2 or 4 ints.
      padding: "SAME", "VALID" or a list of 4 [before, after] pairs.
      data_format: "NHWC" or "NCHW".
      name: name scope of the op.
      input: alias of `value`.
      filters: alias of `filter`.
      dilations: an int or a list of 1, 2 or 4 ints.

    Returns:
      A Tensor of shape `output_shape` and the type of `value`.

    Raises:
      ValueError: the channels of `value` differ from the filter's last dimension.
    """
    from tensorweave.framework.graph import name_scope
    value = lookup_renamed("input", input, "value", value)
    filter = lookup_renamed("filters", filters, "filter", filter)  # noqa: A001
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        attrs = _conv_attrs("Conv2DBackpropInput", strides, padding, data_format, dilations,
                            True, normalise_lists=True)
        sizes = output_shape if isinstance(output_shape, Tensor) else convert_to_tensor(
            output_shape, dtype=_dt.int32, name="input_sizes")
        return apply_op("Conv2DBackpropInput", [sizes, filter, value], attrs,
                        name=scope).outputs[0]
