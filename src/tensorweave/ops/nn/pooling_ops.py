"""2-D pooling: MaxPool, AvgPool and their gradient ops (MaxPoolGrad, MaxPoolGradGrad,
AvgPoolGrad).

Kernels loop over the kh*kw taps of the window, each tap a strided slice of the padded
NHWC input covering every output position at once (4 slices for a 2x2 pool).
Max pooling follows TF's CPU kernels on NaN: the forward maximum ignores NaN and never
goes below the dtype's lowest finite value (an all-NaN or all -inf window gives that
lowest value); the gradient (and MaxPoolWithArgmax's argmax) goes to each window's first
real (unpadded) cell in row-major window order unless a later cell is strictly greater,
so a NaN first cell keeps it and a later NaN never takes it.
Average pooling with SAME padding divides by the number of real (unpadded) elements of
each window. max_pool_v2/avg_pool_v2 dispatch on the input's rank to the 1-D and 3-D
builders of pooling_nd_ops.py.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops import onednn
from tensorweave.ops.nn.max_pool_tiles import max_pool_grad_tiled, route, tiles_exactly
from tensorweave.ops.nn.conv_ops import (Window, _check_enum, _convert_padding, _get_sequence,
                                      _spatial_axes, channels_back, channels_last,
                                      channels_last_shape, check_window_attrs, explicit_pairs,
                                      lookup_renamed, make_window, pad_nhwc, rank4,
                                      shape_tensor, window_output_size)

_MAX_POOL_TYPES = _dt.REAL_NUMBERS
_AVG_POOL_TYPES = _dt.FLOATS


# --- geometry ----------------------------------------------------------------------------
def pooled_shape(input_shape: TensorShape, ksize: Sequence[int], strides: Sequence[int],
                 padding: str, explicit_paddings: Sequence[int] = ()) -> TensorShape:
    """The pooled shape of the rank-4 `input_shape`, `explicit_paddings` (8 ints) read
    for EXPLICIT padding only. As TF infers, every dimension but the batch is windowed
    (the kernels reject a batch window)."""
    dims = rank4(input_shape)
    pads = [(0, 0)] * 4
    if padding == "EXPLICIT":
        flat = list(explicit_paddings)
        pads = [(flat[2 * a], flat[2 * a + 1]) for a in range(4)]
    return TensorShape(dims[:1] + [window_output_size(d, k, s, 1, padding, p) for d, k, s, p
                                   in zip(dims[1:], ksize[1:], strides[1:], pads[1:])])


def _pool_shape_of(op, input_shape: TensorShape) -> TensorShape:
    padding, _ = check_window_attrs(op, names=("ksize", "strides"))
    explicit = op._get_attr("explicit_paddings") if padding == "EXPLICIT" else ()
    return pooled_shape(input_shape, op._get_attr("ksize"), op._get_attr("strides"), padding,
                        explicit)


def _pool_shape(op):
    return _pool_shape_of(op, op.inputs[0].shape)


def _pool_windows(op, attrs, in_nhwc):
    """The H and W windows of a pooling kernel of `op` with the window attrs `attrs`;
    batch/depth pooling is rejected."""
    fmt = attrs["data_format"]
    ksize, strides = list(attrs["ksize"]), list(attrs["strides"])
    h_ax, w_ax = _spatial_axes(fmt)
    d_ax = 1 if fmt == "NCHW" else 3
    if ksize[0] != 1 or strides[0] != 1:
        raise errors.UnimplementedError(None, op, "Pooling is not yet supported on the "
                                        "batch dimension.")
    if ksize[d_ax] != 1 or strides[d_ax] != 1:
        raise errors.UnimplementedError(None, op, "Pooling across the depth dimension is "
                                        "not supported by tensorweave (ksize %s, strides %s)"
                                        % (ksize, strides))
    ph, pw = explicit_pairs(attrs, fmt) if attrs.get("padding") == "EXPLICIT" else \
        ((0, 0), (0, 0))
    pad = attrs["padding"]
    wh = make_window(in_nhwc[1], ksize[h_ax], strides[h_ax], 1, pad, ph)
    ww = make_window(in_nhwc[2], ksize[w_ax], strides[w_ax], 1, pad, pw)
    return wh, ww


def _taps(wh: Window, ww: Window):
    """(index, row slice, column slice) of every window tap, in row-major window order."""
    return [(i * ww.k + j, wh.tap(i), ww.tap(j)) for i in range(wh.k) for j in range(ww.k)]


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _lowest(dtype: np.dtype):
    """The padding value of max pooling: below every real value but NaN."""
    return -np.inf if _is_float(dtype) else np.iinfo(dtype).min


def _max_pool_nhwc(x: np.ndarray, wh: Window, ww: Window):
    """(pooled, padded input): TF's forward MaxPool, which ignores NaN (fmax) and starts
    from the dtype's lowest finite value, so an all-NaN or all -inf window gives it."""
    xp = pad_nhwc(x, wh, ww, _lowest(x.dtype))
    taps = _taps(wh, ww)
    fmax = np.fmax if _is_float(x.dtype) else np.maximum
    out = xp[:, taps[0][1], taps[0][2]].copy()
    for _, rows, cols in taps[1:]:
        fmax(out, xp[:, rows, cols], out=out)
    if _is_float(x.dtype) and out.size:
        lowest = np.array(_dt.as_dtype(x.dtype).min, dtype=x.dtype)
        if not out.min() >= lowest:  # a NaN or -inf maximum: rare, so check first
            fmax(out, lowest, out=out)
    return out, xp


def _first_real_offsets(win: Window) -> np.ndarray:
    """[out]: the offset in each window of its first real (unpadded) position."""
    offsets = win.pad_before - np.arange(win.out) * win.stride
    return np.clip(offsets, 0, win.k - 1)


def winning_taps(xp: np.ndarray, wh: Window,
                 ww: Window) -> Tuple[np.ndarray, np.ndarray]:
    """The cell of each window that TF's CPU MaxPoolGrad and MaxPoolWithArgmax pick.

    TF scans a window from its first real cell and moves on only to a strictly greater
    cell. A NaN first cell thus keeps the window (NaN compares false): it is replaced by
    +inf in the running maximum, which nothing beats; later NaN never win (fmax).

    Args:
      xp: the NHWC input padded by the windows' pads (padding below every real value).
      wh: the H window.
      ww: the W window.

    Returns:
      (tap, value), both of the pooled shape: the picked tap (row-major window index,
      int8 or int32) and its value (NaN where the first real cell is NaN).
    """
    r0, c0 = _first_real_offsets(wh), _first_real_offsets(ww)
    taps = _taps(wh, ww)
    if r0.any() or c0.any():  # padding before some windows: gather their first cells
        rows = np.arange(wh.out) * wh.stride + r0
        cols = np.arange(ww.out) * ww.stride + c0
        best = xp[:, rows[:, None], cols[None, :]]  # (a copy)
    else:  # tap 0 starts every window: the scan goes on from tap 1
        best = xp[:, taps[0][1], taps[0][2]].copy()
        taps = taps[1:]
    floats = _is_float(xp.dtype)
    first_nan = np.isnan(best) if floats else None
    has_first_nan = floats and first_nan.any()
    if has_first_nan:
        best[first_nan] = np.inf
    tap_type = np.int8 if wh.k * ww.k <= 127 else np.int32
    tap = np.empty(best.shape, dtype=tap_type)
    tap[...] = (r0[:, None] * ww.k + c0[None, :]).astype(tap_type)[:, :, None]
    bigger = np.fmax if floats else np.maximum
    beats = np.empty(best.shape, dtype=bool)
    beaten_to = np.empty(best.shape, dtype=tap_type)
    for t, rows_t, cols_t in taps:
        values = xp[:, rows_t, cols_t]
        np.greater(values, best, out=beats)
        bigger(best, values, out=best)
        # taps come in increasing order: the last tap to beat the maximum is the largest
        np.multiply(beats.view(np.int8), tap_type(t), out=beaten_to)
        np.maximum(tap, beaten_to, out=tap)
    if has_first_nan:
        best[first_nan] = np.nan
    return tap, best


def _first_max_masks(xp: np.ndarray, y: np.ndarray, wh: Window, ww: Window):
    """Yields (rows, cols, mask): mask marks the outputs whose first maximum is this tap."""
    free = np.ones(y.shape, dtype=bool)
    hit = np.empty(y.shape, dtype=bool)
    for _, rows, cols in _taps(wh, ww):
        np.equal(xp[:, rows, cols], y, out=hit)
        hit &= free
        yield rows, cols, hit
        np.greater(free, hit, out=free)  # free &= ~hit, without a temporary


def _unpad(xp: np.ndarray, shape, wh: Window, ww: Window) -> np.ndarray:
    n, h, w, c = shape
    if xp.shape == tuple(shape):
        return xp
    return np.ascontiguousarray(xp[:, wh.pad_before:wh.pad_before + h,
                                   ww.pad_before:ww.pad_before + w])


def _window_counts(wh: Window, ww: Window, dtype) -> np.ndarray:
    """[OH, OW, 1]: the number of real input elements in each window."""
    def per_dim(win: Window):
        start = np.arange(win.out) * win.stride - win.pad_before
        return np.minimum(start + win.k, win.size) - np.maximum(start, 0)
    return np.outer(per_dim(wh), per_dim(ww)).astype(dtype)[:, :, None]


def _half_to_float(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


# --- ops ---------------------------------------------------------------------------------
_POOL_ATTRS = {"ksize": [1, 1, 1, 1], "strides": [1, 1, 1, 1], "padding": "VALID",
               "data_format": "NHWC"}
_MAX_POOL_ATTRS = {"T": TypeAttr(_MAX_POOL_TYPES), **_POOL_ATTRS, "explicit_paddings": []}
# TF's MaxPool and MaxPoolGrad default T to float32 (a SavedModel's functions omit it);
# MaxPoolGradGrad has no default
_MAX_POOL_DEFAULT_ATTRS = {**_MAX_POOL_ATTRS, "T": TypeAttr(_MAX_POOL_TYPES,
                                                            default=_dt.float32)}
_AVG_POOL_ATTRS = {"T": TypeAttr(_AVG_POOL_TYPES), **_POOL_ATTRS}

register_op("MaxPool", inputs=["input: T"], outputs=["output: T"],
            attrs=_MAX_POOL_DEFAULT_ATTRS,
            shape=_pool_shape)
register_op("MaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
            outputs=["output: T"], attrs=_MAX_POOL_DEFAULT_ATTRS,
            shape=lambda op: TensorShape(rank4(op.inputs[0].shape)))
register_op("MaxPoolGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
            outputs=["output: T"], attrs=_MAX_POOL_ATTRS,
            shape=lambda op: _pool_shape(op).merge_with(op.inputs[1].shape))
register_op("AvgPool", inputs=["value: T"], outputs=["output: T"], attrs=_AVG_POOL_ATTRS,
            shape=_pool_shape)
register_op("AvgPoolGrad", inputs=["orig_input_shape: int32", "grad: T"],
            outputs=["output: T"], attrs=_AVG_POOL_ATTRS,
            shape=lambda op: TensorShape(rank4(tensor_util.constant_value_as_shape(
                op.inputs[0]))))


def _check_input(op, x) -> None:
    if x.ndim != 4:
        raise errors.InvalidArgumentError(None, op, "input must be 4-dimensional: %s"
                                          % list(x.shape))


def _pooled_input(op, attrs, x):
    """(data_format, `x` as NHWC, H window, W window) for the kernels of MaxPool and
    AvgPool."""
    _check_input(op, x)
    fmt = attrs["data_format"]
    xn = channels_last(x, fmt)
    wh, ww = _pool_windows(op, attrs, xn.shape)
    return fmt, xn, wh, ww


# The max-pooling kernel bodies take the window attrs (ksize, strides, padding,
# data_format, explicit_paddings) as an argument: MaxPool* read them from the op's attrs,
# MaxPool*V2 (pooling_v2_ops.py) from its ksize and strides inputs.
def max_pool_values(op, attrs: dict, x: np.ndarray) -> np.ndarray:
    """MaxPool of `x` under the window attrs `attrs`, for the kernel of `op`."""
    fmt, xn, wh, ww = _pooled_input(op, attrs, x)
    fast = onednn.pool(xn, (wh, ww), "max")
    if fast is not None:
        return channels_back(fast, fmt)
    return channels_back(_max_pool_nhwc(xn, wh, ww)[0], fmt)


def max_pool_grad_values(op, attrs: dict, x: np.ndarray, y: np.ndarray,
                         dy: np.ndarray) -> np.ndarray:
    """MaxPoolGrad: `dy` routed to the cell of `x` each window picks."""
    _check_input(op, x)
    fmt = attrs["data_format"]
    xn, dyn = channels_last(x, fmt), channels_last(dy, fmt)
    wh, ww = _pool_windows(op, attrs, xn.shape)
    if dyn.shape[1:3] != (wh.out, ww.out) or dyn.shape[0] != xn.shape[0]:
        raise errors.InvalidArgumentError(None, op, "Expected grad shape to be %s, but "
                                          "got %s" % (list(y.shape), list(dy.shape)))
    fast = onednn.max_pool_grad(xn, dyn, (wh, ww))
    if fast is not None:
        return channels_back(fast, fmt)
    if tiles_exactly(wh, ww) and xn.dtype.kind in "fiu":
        dx = max_pool_grad_tiled(xn, dyn, wh, ww)
        if dx is not None:
            return channels_back(dx, fmt)
    return channels_back(_max_pool_grad_nhwc(xn, dyn, wh, ww), fmt)


def _max_pool_grad_nhwc(xn: np.ndarray, dyn: np.ndarray, wh: Window,
                        ww: Window) -> np.ndarray:
    """The general path of MaxPoolGrad: any windows, padding or overlap."""
    # The winners are recomputed from orig_input (as TF's CPU kernel), so ties and the
    # choice of window element do not depend on orig_output.
    xp = pad_nhwc(xn, wh, ww, _lowest(xn.dtype))
    tap, _ = winning_taps(xp, wh, ww)
    overlap = wh.stride < wh.k or ww.stride < ww.k
    # windows that tile the input exactly write every element once: no zero fill needed
    tiles = (wh.stride, ww.stride) == (wh.k, ww.k) and \
        xp.shape[1:3] == (wh.out * wh.k, ww.out * ww.k)
    dxp = (np.empty if tiles else np.zeros)(xp.shape, dtype=dyn.dtype)
    routed = np.empty(dyn.shape, dtype=dyn.dtype) if overlap else None
    mask = np.empty(tap.shape, dtype=bool)
    for t, rows, cols in _taps(wh, ww):
        np.equal(tap, t, out=mask)
        if overlap:
            route(dyn, mask, routed)
            dxp[:, rows, cols] += routed
        else:
            route(dyn, mask, dxp[:, rows, cols])
    return _unpad(dxp, xn.shape, wh, ww)


def max_pool_grad_grad_values(op, attrs: dict, x: np.ndarray, y: np.ndarray,
                              ddx: np.ndarray) -> np.ndarray:
    """MaxPoolGradGrad: `ddx` gathered from the first maximum of each window."""
    _check_input(op, x)
    fmt = attrs["data_format"]
    xn, ddxn = channels_last(x, fmt), channels_last(ddx, fmt)
    if ddxn.shape != xn.shape:
        raise errors.InvalidArgumentError(None, op, "grad must have the shape of "
                                          "orig_input: %s vs %s" % (list(ddx.shape),
                                                                    list(x.shape)))
    wh, ww = _pool_windows(op, attrs, xn.shape)
    pooled, xp = _max_pool_nhwc(xn, wh, ww)
    gp = pad_nhwc(ddxn, wh, ww, 0)
    out = np.zeros(pooled.shape, dtype=ddx.dtype)
    for rows, cols, mask in _first_max_masks(xp, pooled, wh, ww):
        out += gp[:, rows, cols] * mask
    return channels_back(out, fmt)


@kernel("MaxPool", cheap=False, threaded=onednn.runs_float32)
def _max_pool_kernel(ctx, x):
    return max_pool_values(ctx.op, ctx.attrs, x)


@kernel("MaxPoolGrad", cheap=False, threaded=onednn.runs_float32)
def _max_pool_grad_kernel(ctx, x, y, dy):
    return max_pool_grad_values(ctx.op, ctx.attrs, x, y, dy)


@kernel("MaxPoolGradGrad", cheap=False)
def _max_pool_grad_grad_kernel(ctx, x, y, ddx):
    return max_pool_grad_grad_values(ctx.op, ctx.attrs, x, y, ddx)


@kernel("AvgPool", cheap=False, threaded=onednn.runs_float32)
def _avg_pool_kernel(ctx, x):
    fmt, xn, wh, ww = _pooled_input(ctx.op, ctx.attrs, x)
    ct = _half_to_float(x.dtype)
    fast = onednn.pool(xn.astype(ct, copy=False), (wh, ww), "avg")
    if fast is not None:
        return channels_back(fast.astype(x.dtype, copy=False), fmt)
    xp = pad_nhwc(xn.astype(ct, copy=False), wh, ww, 0)
    taps = _taps(wh, ww)
    out = xp[:, taps[0][1], taps[0][2]].copy()
    for _, rows, cols in taps[1:]:
        out += xp[:, rows, cols]
    out /= _window_counts(wh, ww, ct)
    return channels_back(out.astype(x.dtype, copy=False), fmt)


@kernel("AvgPoolGrad", cheap=False, threaded=onednn.runs_float32)
def _avg_pool_grad_kernel(ctx, orig_input_shape, dy):
    fmt = ctx.attrs["data_format"]
    shape = np.asarray(orig_input_shape).reshape(-1)
    if shape.size != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "orig_input_shape must be a "
                                          "4-element vector, got %s" % shape.tolist())
    in_shape = channels_last_shape(shape, fmt)
    dyn = channels_last(dy, fmt)
    wh, ww = _pool_windows(ctx.op, ctx.attrs, in_shape)
    if dyn.shape != (in_shape[0], wh.out, ww.out, in_shape[3]):
        raise errors.InvalidArgumentError(None, ctx.op, "grad shape %s does not match the "
                                          "pooled shape of %s" % (list(dy.shape),
                                                                  shape.tolist()))
    ct = _half_to_float(dy.dtype)
    fast = onednn.avg_pool_grad(in_shape, dyn.astype(ct, copy=False), (wh, ww))
    if fast is not None:
        return channels_back(fast.astype(dy.dtype, copy=False), fmt)
    share = dyn.astype(ct) / _window_counts(wh, ww, ct)
    dxp = np.zeros((in_shape[0], wh.padded, ww.padded, in_shape[3]), dtype=ct)
    for _, rows, cols in _taps(wh, ww):
        dxp[:, rows, cols] += share
    return channels_back(_unpad(dxp, in_shape, wh, ww).astype(dy.dtype, copy=False), fmt)


# --- gradients ---------------------------------------------------------------------------
def _pool_attrs(op, explicit: bool = True) -> dict:
    keys = ["ksize", "strides", "padding", "data_format"]
    attrs = {k: op._get_attr(k) for k in keys}
    if explicit:
        attrs["explicit_paddings"] = op._get_attr("explicit_paddings")
    return attrs


def _zeros_like(t: Tensor) -> Tensor:
    from tensorweave.ops.array.array_fill_ops import zeros_like
    return zeros_like(t)


@gradient("MaxPool")
def _max_pool_grad(op, grad):
    return [apply_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _pool_attrs(op),
                     name="MaxPoolGrad").outputs[0]]


def max_pool_routing_gradient(adjoint: str, attrs: Callable[[Operation], dict]) -> Callable:
    """The gradient function of a max pool's gradient op or gradient-of-gradient op.

    MaxPoolGrad (scatter each window's gradient to its first maximum) and MaxPoolGradGrad
    (gather from there) are linear in `grad` and each other's adjoint; the routing is
    piecewise constant in orig_input and orig_output, whose gradients are zero.

    Args:
      adjoint: the op type of the adjoint op, which the gradient builds.
      attrs: `attrs(op)` gives the attrs the adjoint takes.

    Returns:
      fn(op, grad) for an op of inputs (orig_input, orig_output, grad, *window): the
      window inputs (ksize and strides of the V2 ops) get None.
    """
    def routing_gradient(op, grad):
        x, y, _, *window = op.inputs
        routed = apply_op(adjoint, [x, y, grad, *window], attrs(op), name=adjoint)
        return [_zeros_like(x), _zeros_like(y), routed.outputs[0]] + [None] * len(window)
    return routing_gradient


def register_max_pool_routing_gradients(grad_type: str, grad_grad_type: str,
                                        attrs: Callable[[Operation], dict]) -> None:
    """Registers the gradients of a max pool's gradient op and of its gradient-of-gradient
    op, each the other (see max_pool_routing_gradient). `attrs(op)` gives the attrs both
    ops take."""
    gradient(grad_type)(max_pool_routing_gradient(grad_grad_type, attrs))
    gradient(grad_grad_type)(max_pool_routing_gradient(grad_type, attrs))


register_max_pool_routing_gradients("MaxPoolGrad", "MaxPoolGradGrad", _pool_attrs)


@gradient("AvgPool")
def _avg_pool_grad(op, grad):
    return [apply_op("AvgPoolGrad", [shape_tensor(op.inputs[0]), grad],
                     _pool_attrs(op, explicit=False), name="AvgPoolGrad").outputs[0]]


@gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return [None, apply_op("AvgPool", [grad], _pool_attrs(op, explicit=False),
                           name="AvgPool").outputs[0]]


# --- builders ----------------------------------------------------------------------------
def _pool(op_type: str, default_name: str, value, ksize, strides, padding, data_format,
          name, explicit_ok: bool) -> Tensor:
    from tensorweave.framework.graph import name_scope
    with name_scope(name, default_name, [value]) as scope:
        if data_format is None:
            data_format = "NHWC"
        channel_index = 1 if str(data_format).startswith("NC") else 3
        ksize = _get_sequence(ksize, 2, channel_index, "ksize")
        strides = _get_sequence(strides, 2, channel_index, "strides")
        if any(k == 0 for k in ksize):
            raise ValueError("`ksize` cannot be zero. Received: ksize=%s" % ksize)
        padding, explicit = _convert_padding(padding)
        _check_enum(op_type, "padding", padding,
                    ("SAME", "VALID", "EXPLICIT") if explicit_ok else ("SAME", "VALID"))
        _check_enum(op_type, "data_format", data_format, ("NHWC", "NCHW"))
        attrs = {"ksize": ksize, "strides": strides, "padding": padding,
                 "data_format": data_format}
        if explicit_ok:
            attrs["explicit_paddings"] = explicit
        return apply_op(op_type, [value], attrs, name=scope).outputs[0]


@tf_export("nn.max_pool")
def max_pool(value, ksize, strides, padding, data_format: str = "NHWC",
             name: Optional[str] = None, input=None) -> Tensor:  # noqa: A002
    """Max pooling over 2-D windows of a 4-D input (TF1 `tf.nn.max_pool`).

    Args:
      value: a 4-D Tensor (NHWC or NCHW) of a real number type.
      ksize: an int or a list of 1, 2 or 4 ints: the window size per dimension.
      strides: an int or a list of 1, 2 or 4 ints: the window step per dimension.
      padding: "SAME", "VALID" or a list of 4 [before, after] pairs.
      data_format: "NHWC" (default) or "NCHW".
      name: name scope of the op.
      input: alias of `value`.

    Returns:
      A Tensor of the type of `value` holding each window's maximum.

    Raises:
      ValueError: a zero `ksize`, a bad padding or data_format, an input of rank other
        than 4, or a VALID window larger than the input.
    """
    value = lookup_renamed("input", input, "value", value)
    return _pool("MaxPool", "MaxPool", value, ksize, strides, padding, data_format, name,
                 explicit_ok=True)


@tf_export("nn.max_pool2d")
def max_pool2d(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
               name: Optional[str] = None) -> Tensor:
    """Max pooling over 2-D windows (TF1 `tf.nn.max_pool2d`); see `max_pool`."""
    return _pool("MaxPool", "MaxPool2d", input, ksize, strides, padding, data_format,
                 name, explicit_ok=True)


@tf_export("nn.max_pool_v2")
def max_pool_v2(input, ksize, strides, padding, data_format: Optional[str] = None,  # noqa
                name: Optional[str] = None) -> Tensor:
    """Max pooling over N-d windows, N = rank - 2 in 1..3 (TF1 `tf.nn.max_pool_v2`):
    max_pool1d, max_pool or max_pool3d.

    Raises:
      ValueError: an input of unknown rank or of a rank other than 3, 4 or 5.
    """
    return _pool_v2("max", input, ksize, strides, padding, data_format, name)


@tf_export("nn.avg_pool")
def avg_pool(value, ksize, strides, padding, data_format: str = "NHWC",
             name: Optional[str] = None, input=None) -> Tensor:  # noqa: A002
    """Average pooling over 2-D windows of a 4-D input (TF1 `tf.nn.avg_pool`).

    With SAME padding each output is the mean of the real input elements of its window
    (padding is not counted).

    Args:
      value: a 4-D Tensor of half, bfloat16, float32 or float64.
      ksize: an int or a list of 1, 2 or 4 ints.
      strides: an int or a list of 1, 2 or 4 ints.
      padding: "SAME" or "VALID".
      data_format: "NHWC" (default) or "NCHW".
      name: name scope of the op.
      input: alias of `value`.

    Returns:
      A Tensor of the type of `value`.

    Raises:
      ValueError: as `max_pool`.
      TypeError: an integer input.
    """
    value = lookup_renamed("input", input, "value", value)
    return _pool("AvgPool", "AvgPool", value, ksize, strides, padding, data_format, name,
                 explicit_ok=False)


@tf_export("nn.avg_pool2d")
def avg_pool2d(value, ksize, strides, padding, data_format: str = "NHWC",
               name: Optional[str] = None, input=None) -> Tensor:  # noqa: A002
    """Average pooling over 2-D windows (TF1 `tf.nn.avg_pool2d`); see `avg_pool`."""
    value = lookup_renamed("input", input, "value", value)
    return _pool("AvgPool", "AvgPool", value, ksize, strides, padding, data_format, name,
                 explicit_ok=False)


@tf_export("nn.avg_pool_v2")
def avg_pool_v2(input, ksize, strides, padding, data_format: Optional[str] = None,  # noqa
                name: Optional[str] = None) -> Tensor:
    """Average pooling over N-d windows, N = rank - 2 in 1..3 (TF1 `tf.nn.avg_pool_v2`):
    avg_pool1d, avg_pool or avg_pool3d."""
    return _pool_v2("avg", input, ksize, strides, padding, data_format, name)


def _pool_v2(kind: str, input, ksize, strides, padding, data_format, name):  # noqa: A002
    """Dispatches max_pool_v2/avg_pool_v2 on the static rank of `input`."""
    from tensorweave.framework.op_builder import convert_to_tensor
    from tensorweave.ops.nn import pooling_nd_ops
    input = convert_to_tensor(input, name="input")  # noqa: A001
    if input.shape.ndims is None:
        raise ValueError("Cannot take the length of shape with unknown rank.")
    n = input.shape.ndims - 2
    if not 1 <= n <= 3:
        raise ValueError("`input.shape.rank` must be 3, 4 or 5. Received: input.shape=%s of "
                         "rank %d." % (input.shape, n + 2))
    channel_index = n + 1 if data_format is None or not str(data_format).startswith("NC") \
        else 1
    ksize = _get_sequence(ksize, n, channel_index, "ksize")
    strides = _get_sequence(strides, n, channel_index, "strides")
    if n == 2:
        return _pool("MaxPool" if kind == "max" else "AvgPool",
                     "MaxPool2d" if kind == "max" else "AvgPool", input, ksize, strides,
                     padding, data_format, name, explicit_ok=kind == "max")
    fn = getattr(pooling_nd_ops, "%s_pool%dd" % (kind, n))
    fmt = data_format or ("NWC" if n == 1 else "NDHWC")
    return fn(input, ksize, strides, padding, data_format=fmt, name=name)
