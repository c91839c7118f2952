"""Grayscale morphology: Dilation2D (tf.nn.dilation2d), its gradient ops, and erosion2d
by duality (the negated dilation of the negated input by the reflected kernel).

A dilation is a max pooling whose window adds a per-tap, per-channel kernel value:
out[b, y, x, c] = max over taps (i, j) of in[b, y*sh + i*rh, x*sw + j*rw, c] + k[i, j, c]
over the taps inside the input: as TF's kernel, a tap in the SAME padding is skipped (its
candidate is the dtype's lowest value, so a filter value added to the padding can neither
win nor, for integers, wrap around). As TF's CPU kernel, the gradient goes to the first
maximum of each window in row-major tap order.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import (TypeAttr, gradient, kernel, not_differentiable,
                                            register_op)
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.nn.conv_ops import (check_four_positive, lookup_renamed, make_window,
                                         pad_nhwc, rank4, window_output_size)
from tensorweave.ops.nn.pooling_ops import _lowest

_ATTRS = {"T": TypeAttr(_dt.REAL_NUMBERS), "strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1],
          "padding": "VALID"}


def _dilation_shape(op) -> TensorShape:
    padding = op._get_attr("padding")
    if padding not in ("SAME", "VALID"):
        raise ValueError("%s: padding must be SAME or VALID, got %r" % (op.type, padding))
    check_four_positive(op, ("strides", "rates"))
    strides, rates = op._get_attr("strides"), op._get_attr("rates")
    if strides[0] != 1 or strides[3] != 1 or rates[0] != 1 or rates[3] != 1:
        raise ValueError("%s: strides and rates must be 1 in the batch and depth "
                         "dimensions, got %s and %s" % (op.type, list(strides), list(rates)))
    n, h, w, c = rank4(op.inputs[0].shape)
    kernel_dims = op.inputs[1].shape.with_rank(3).as_list()
    return TensorShape([n, window_output_size(h, kernel_dims[0], strides[1], rates[1],
                                              padding),
                        window_output_size(w, kernel_dims[1], strides[2], rates[2], padding),
                        c if c is not None else kernel_dims[2]])


register_op("Dilation2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
            attrs=_ATTRS, shape=_dilation_shape)
register_op("Dilation2DBackpropInput", inputs=["input: T", "filter: T", "out_backprop: T"],
            outputs=["in_backprop: T"], attrs=_ATTRS,
            shape=lambda op: TensorShape(rank4(op.inputs[0].shape)))
register_op("Dilation2DBackpropFilter", inputs=["input: T", "filter: T", "out_backprop: T"],
            outputs=["filter_backprop: T"], attrs=_ATTRS,
            shape=lambda op: op.inputs[1].shape.with_rank(3))
# TF registers no gradient for the backprop ops either
not_differentiable("Dilation2DBackpropInput")
not_differentiable("Dilation2DBackpropFilter")


def _inside(w) -> np.ndarray:
    """[k, out] bool: whether tap i of output position o reads inside the input (not
    the padding) in the dimension of Window `w`."""
    at = (np.arange(w.k)[:, None] * w.dilation + np.arange(w.out)[None, :] * w.stride
          - w.pad_before)
    return (at >= 0) & (at < w.size)


def _dilate(ctx, x, k) -> tuple:
    """(output, first-max tap per output, padded input, windows) of a dilation."""
    if x.ndim != 4 or k.ndim != 3 or k.shape[2] != x.shape[3]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "input must be 4-dimensional and filter 3-dimensional with the "
            "input's depth, got %s and %s" % (list(x.shape), list(k.shape)))
    a = ctx.attrs
    strides, rates, pad = a["strides"], a["rates"], a["padding"]
    wh = make_window(x.shape[1], k.shape[0], strides[1], rates[1], pad)
    ww = make_window(x.shape[2], k.shape[1], strides[2], rates[2], pad)
    lowest = _lowest(x.dtype)
    xp = pad_nhwc(x, wh, ww, lowest)
    rows_inside, cols_inside = _inside(wh), _inside(ww)
    best = first = None
    for t in range(k.shape[0] * k.shape[1]):
        i, j = divmod(t, k.shape[1])
        cand = xp[:, wh.tap(i), ww.tap(j), :] + k[i, j]
        inside = rows_inside[i][:, None, None] & cols_inside[j][None, :, None]
        if not inside.all():
            cand = np.where(inside, cand, lowest).astype(x.dtype, copy=False)
        if best is None:
            best, first = cand, np.zeros(cand.shape, np.int64)
        else:
            better = cand > best
            np.copyto(best, cand, where=better)
            first[better] = t
    return best, first, xp, wh, ww


@kernel("Dilation2D", cheap=False)
def _dilation_kernel(ctx, x, k):
    return _dilate(ctx, x, k)[0]


def _routed(ctx, x, k, dy) -> tuple:
    """(padded input, windows, [(i, j, the part of `dy` whose window's first maximum is
    tap (i, j))]) for the gradient kernels."""
    out, first, xp, wh, ww = _dilate(ctx, x, k)
    if dy.shape != out.shape:
        raise errors.InvalidArgumentError(None, ctx.op, "out_backprop must be of shape %s, "
                                          "got %s" % (list(out.shape), list(dy.shape)))
    return xp, wh, ww, [(i, j, dy * (first == t))
                        for t, (i, j) in enumerate(np.ndindex(*k.shape[:2]))]


@kernel("Dilation2DBackpropInput", cheap=False)
def _dilation_backprop_input_kernel(ctx, x, k, dy):
    xp, wh, ww, routed = _routed(ctx, x, k, dy)
    dxp = np.zeros(xp.shape, dtype=dy.dtype)
    for i, j, part in routed:
        dxp[:, wh.tap(i), ww.tap(j), :] += part
    return np.ascontiguousarray(dxp[:, wh.pad_before:wh.pad_before + x.shape[1],
                                    ww.pad_before:ww.pad_before + x.shape[2]])


@kernel("Dilation2DBackpropFilter", cheap=False)
def _dilation_backprop_filter_kernel(ctx, x, k, dy):
    dk = np.zeros(k.shape, dtype=dy.dtype)
    for i, j, part in _routed(ctx, x, k, dy)[3]:
        dk[i, j] = part.sum(axis=(0, 1, 2))
    return dk


@gradient("Dilation2D")
def _dilation_grad(op, grad):
    attrs = {k: op._get_attr(k) for k in ("strides", "rates", "padding")}
    x, k = op.inputs
    return [apply_op("Dilation2DBackpropInput", [x, k, grad], attrs,
                     name="Dilation2DBackpropInput").outputs[0],
            apply_op("Dilation2DBackpropFilter", [x, k, grad], attrs,
                     name="Dilation2DBackpropFilter").outputs[0]]


@tf_export("nn.dilation2d")
def dilation2d(input, filter=None, strides=None, rates=None,  # noqa: A002
               padding: Optional[str] = None, name: Optional[str] = None, filters=None,
               dilations=None) -> Tensor:
    """Grayscale dilation of a 4-D NHWC input by a per-channel 3-D kernel (TF1
    `tf.nn.dilation2d`).

    Args:
      input: a 4-D Tensor [batch, height, width, depth] of a real number type.
      filter: the kernel [height, width, depth] (alias `filters`).
      strides: a list of 4 ints, 1 in the batch and depth dimensions.
      rates: the input stride of the taps, a list of 4 ints (alias `dilations`).
      padding: "SAME" or "VALID".
      name: op name.
      filters, dilations: the TF2 names of `filter` and `rates`.

    Returns:
      A Tensor of the input's type.
    """
    filter = lookup_renamed("filters", filters, "filter", filter)  # noqa: A001
    rates = lookup_renamed("dilations", dilations, "rates", rates)
    return apply_op("Dilation2D", [input, filter],
                    {"strides": [int(s) for s in strides], "rates": [int(r) for r in rates],
                     "padding": padding}, name=name or "Dilation2D").outputs[0]


@tf_export("nn.erosion2d")
def erosion2d(value, kernel, strides, rates, padding: str,
              name: Optional[str] = None) -> Tensor:
    """Grayscale erosion (TF1 `tf.nn.erosion2d`): the negated dilation of the negated
    input by the kernel reflected in both spatial dimensions.

    Args:
      value: a 4-D Tensor [batch, height, width, depth].
      kernel: [height, width, depth].
      strides, rates, padding: as for `dilation2d`.
      name: name scope.

    Returns:
      A Tensor of the input's type.
    """
    from tensorweave.ops.array.array_pad_ops import reverse
    from tensorweave.ops.math.math_unary import negative
    with name_scope(name, "erosion2d", [value, kernel]) as scope:
        return negative(dilation2d(negative(value), reverse(kernel, [0, 1]), strides, rates,
                                   padding, name=scope))
