"""Max pooling that also returns where each maximum came from: MaxPoolWithArgmax, and the
ops of its gradients (MaxPoolGradWithArgmax, MaxPoolGradGradWithArgmax).

An argmax is a flat index into the NHWC input, `(y * width + x) * channels + c`, plus
`b * height * width * channels` with `include_batch_in_index`. As in TF's CPU kernel, a
window's argmax is its first real cell in row-major window order unless a later cell
is strictly greater (a NaN first cell keeps it, a later NaN never takes it), and the
output is the argmax cell's value: NaN or -inf where TF's MaxPool gives the lowest value.
The gradient scatters each output's gradient to its argmax (several outputs may share
one input); its own gradient gathers from there, and the gather's gradient scatters
again.
"""
from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.nn.conv_ops import check_four_positive, make_window, pad_nhwc, rank4, \
    window_output_size
from tensorweave.ops.nn.pooling_ops import _lowest, winning_taps

_ARGMAX_TYPES = (_dt.int32, _dt.int64)
_ATTRS = {"ksize": [1, 1, 1, 1], "strides": [1, 1, 1, 1], "padding": "VALID",
          "include_batch_in_index": False, "T": TypeAttr(_dt.REAL_NUMBERS)}


def _pooled_shape(op, input_shape: TensorShape) -> TensorShape:
    padding = op._get_attr("padding")
    if padding not in ("SAME", "VALID"):
        raise ValueError("%s: padding must be SAME or VALID, got %r" % (op.type, padding))
    check_four_positive(op, ("ksize", "strides"))
    ksize, strides = op._get_attr("ksize"), op._get_attr("strides")
    dims = rank4(input_shape)
    return TensorShape([window_output_size(d, k, s, 1, padding, (0, 0))
                        for d, k, s in zip(dims, ksize, strides)])


register_op("MaxPoolWithArgmax", inputs=["input: T"],
            outputs=["output: T", "argmax: Targmax"],
            attrs=dict(_ATTRS, Targmax=TypeAttr(_ARGMAX_TYPES, default=_dt.int64)),
            shape=lambda op: [_pooled_shape(op, op.inputs[0].shape)] * 2)
register_op("MaxPoolGradWithArgmax", inputs=["input: T", "grad: T", "argmax: Targmax"],
            outputs=["output: T"], attrs=dict(_ATTRS, Targmax=TypeAttr(_ARGMAX_TYPES)),
            shape=lambda op: TensorShape(rank4(op.inputs[0].shape)))
register_op("MaxPoolGradGradWithArgmax", inputs=["input: T", "grad: T", "argmax: Targmax"],
            outputs=["output: T"], attrs=dict(_ATTRS, Targmax=TypeAttr(_ARGMAX_TYPES)),
            shape=lambda op: _pooled_shape(op, op.inputs[0].shape))


def _windows(ctx, x):
    """The H and W windows of `ctx`'s op over the NHWC input `x`."""
    if x.ndim != 4:
        raise errors.InvalidArgumentError(None, ctx.op, "input must be 4-dimensional: %s"
                                          % list(x.shape))
    ksize, strides = list(ctx.attrs["ksize"]), list(ctx.attrs["strides"])
    if ksize[0] != 1 or strides[0] != 1 or ksize[3] != 1 or strides[3] != 1:
        raise errors.UnimplementedError(None, ctx.op, "Pooling is only supported over the "
                                        "height and width dimensions (ksize %s, strides %s)"
                                        % (ksize, strides))
    pad = ctx.attrs["padding"]
    return (make_window(x.shape[1], ksize[1], strides[1], 1, pad, (0, 0)),
            make_window(x.shape[2], ksize[2], strides[2], 1, pad, (0, 0)))


def _argmax(x: np.ndarray, wh, ww, with_batch: bool, dtype) -> tuple:
    """(pooled, flat argmax of each output) of NHWC `x`."""
    tap, pooled = winning_taps(pad_nhwc(x, wh, ww, _lowest(x.dtype)), wh, ww)
    tap = tap.astype(np.int64)
    n, h, w, c = x.shape
    rows = (np.arange(wh.out) * wh.stride - wh.pad_before)[:, None, None] + tap // ww.k
    cols = (np.arange(ww.out) * ww.stride - ww.pad_before)[None, :, None] + tap % ww.k
    index = (rows * w + cols) * c + np.arange(c)
    if with_batch:
        index += (np.arange(n) * (h * w * c))[:, None, None, None]
    return pooled, index.astype(dtype, copy=False)


def _flat_positions(ctx, x, argmax, n_out: int) -> np.ndarray:
    """The argmax values as indices into the flattened input, each checked."""
    per_image = int(np.prod(x.shape[1:]))
    pos = argmax.astype(np.int64).reshape(len(x), -1) if len(x) else \
        np.zeros((0, n_out), np.int64)
    if not ctx.attrs["include_batch_in_index"]:
        pos = pos + (np.arange(len(x)) * per_image)[:, None]
    pos = pos.reshape(-1)
    bad = (pos < 0) | (pos >= x.size)
    if bad.any():
        raise errors.InvalidArgumentError(
            None, ctx.op, "Received argmax value %d which is out of range for an input of "
            "shape %s" % (int(argmax.reshape(-1)[np.argmax(bad)]), list(x.shape)))
    return pos


@kernel("MaxPoolWithArgmax", cheap=False)
def _max_pool_with_argmax_kernel(ctx, x):
    wh, ww = _windows(ctx, x)
    if x.size == 0:  # TF's CPU kernel refuses any empty input, a zero batch included
        raise errors.InvalidArgumentError(None, ctx.op, "tensor_in must not be empty")
    return _argmax(x, wh, ww, ctx.attrs["include_batch_in_index"],
                   ctx.attrs["Targmax"].as_numpy_dtype)


def _checked_positions(ctx, x, grad, argmax, grad_like_input: bool) -> tuple:
    """(pooled shape, flat input positions of `argmax`) for the gradient kernels, after
    checking the shapes of `grad` (the input's or the pooled one) and `argmax`."""
    wh, ww = _windows(ctx, x)
    pooled = (x.shape[0], wh.out, ww.out, x.shape[3])
    want = x.shape if grad_like_input else pooled
    if grad.shape != want or argmax.shape != pooled:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected grad of shape %s and argmax of shape %s, got %s and %s"
            % (list(want), list(pooled), list(grad.shape), list(argmax.shape)))
    return pooled, _flat_positions(ctx, x, argmax, wh.out * ww.out * x.shape[3])


@kernel("MaxPoolGradWithArgmax", cheap=False)
def _grad_with_argmax_kernel(ctx, x, grad, argmax):
    _, pos = _checked_positions(ctx, x, grad, argmax, False)
    out = np.bincount(pos, weights=grad.reshape(-1).astype(np.float64), minlength=x.size)
    return out.astype(x.dtype).reshape(x.shape)


@kernel("MaxPoolGradGradWithArgmax", cheap=False)
def _grad_grad_with_argmax_kernel(ctx, x, grad, argmax):
    pooled, pos = _checked_positions(ctx, x, grad, argmax, True)
    return grad.reshape(-1)[pos].reshape(pooled)


def _argmax_attrs(op) -> dict:
    return {k: op._get_attr(k) for k in ("ksize", "strides", "padding",
                                        "include_batch_in_index")}


@gradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, unused_argmax_grad):
    return [apply_op("MaxPoolGradWithArgmax", [op.inputs[0], grad, op.outputs[1]],
                     _argmax_attrs(op), name="MaxPoolGradWithArgmax").outputs[0]]


@gradient("MaxPoolGradWithArgmax")
def _grad_with_argmax_grad(op, grad):
    from tensorweave.ops.array import array_ops
    x = op.inputs[0]
    return [array_ops.zeros_like(x),
            apply_op("MaxPoolGradGradWithArgmax", [x, grad, op.inputs[2]],
                     _argmax_attrs(op), name="MaxPoolGradGradWithArgmax").outputs[0],
            None]


@gradient("MaxPoolGradGradWithArgmax")
def _grad_grad_with_argmax_grad(op, grad):
    # a gather from the argmaxes: its adjoint is the scatter of MaxPoolGradWithArgmax
    from tensorweave.ops.array import array_ops
    x = op.inputs[0]
    return [array_ops.zeros_like(x),
            apply_op("MaxPoolGradWithArgmax", [x, grad, op.inputs[2]], _argmax_attrs(op),
                     name="MaxPoolGradWithArgmax").outputs[0],
            None]


MaxPoolWithArgmaxOutput = collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


@tf_export("nn.max_pool_with_argmax")
def max_pool_with_argmax(input, ksize, strides, padding, data_format: str = "NHWC",  # noqa: A002
                         Targmax=None, name: Optional[str] = None,  # noqa: N803
                         output_dtype=None, include_batch_in_index: bool = False):
    """Max pooling that also returns the flat index of each maximum (TF1
    `tf.nn.max_pool_with_argmax`).

    Args:
      input: a 4-D NHWC Tensor of a real number type.
      ksize: a list of 4 ints: the window size per dimension (1 for batch and depth).
      strides: a list of 4 ints: the window step per dimension.
      padding: "SAME" or "VALID".
      data_format: must be "NHWC".
      Targmax: deprecated name of `output_dtype`.
      name: name of the op.
      output_dtype: tf.int64 (default) or tf.int32, the argmax's type.
      include_batch_in_index: count the batch into the flat index.

    Returns:
      A (output, argmax) namedtuple: the pooled values and, for each, its flat index
      `(y * width + x) * channels + c` (plus `b * height * width * channels` with
      `include_batch_in_index`) into the input.

    Raises:
      ValueError: a data_format other than NHWC, both `Targmax` and `output_dtype`, or
        bad ksize/strides/padding.
      TypeError: ksize or strides not a list.
    """
    if data_format != "NHWC":
        raise ValueError("`data_format` values other  than 'NHWC' are not supported. "
                         "Received: data_format=%s" % data_format)
    if Targmax is not None and output_dtype is not None:
        raise ValueError("Cannot specify both 'output_dtype' and 'Targmax'.")
    dtype = _dt.as_dtype(output_dtype if output_dtype is not None else
                         Targmax if Targmax is not None else _dt.int64)
    for arg, value in (("ksize", ksize), ("strides", strides)):
        if not isinstance(value, (list, tuple)):
            raise TypeError("Expected list for '%s' argument to 'max_pool_with_argmax' Op, "
                            "not %s." % (arg, value))
    with name_scope(name, "MaxPoolWithArgmax", [input]) as scope:
        op = apply_op("MaxPoolWithArgmax", [input],
                      {"ksize": [int(k) for k in ksize], "strides": [int(s) for s in strides],
                       "padding": padding, "Targmax": dtype,
                       "include_batch_in_index": bool(include_batch_in_index)}, name=scope)
    return MaxPoolWithArgmaxOutput(*op.outputs)
