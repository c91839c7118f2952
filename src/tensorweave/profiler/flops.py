"""Floating-point operation counts of ops, by TF1's rules (tf.profiler's "flops"
statistics): only the op types listed here count, each by its row's formula over static
shapes; an op whose shapes the formula needs are not fully known counts nothing (TF
logs "incomplete shape" and counts nothing too).

A formula gets `(in_shapes, out_shapes, attrs)`: lists of shapes (tuples of ints, None
for an unknown dimension, None for an unknown rank) and the op's attrs, and returns the
count (raising _Incomplete when a shape it needs is not fully known).
"""
from __future__ import annotations

from typing import Callable, Dict, Optional


class _Incomplete(Exception):
    """A shape the formula needs is not fully known."""


def _n(shape) -> int:
    """The number of elements of a fully known shape."""
    if shape is None or any(d is None for d in shape):
        raise _Incomplete()
    n = 1
    for d in shape:
        n *= d
    return n


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= int(v)
    return n


def _nhwc(attrs) -> None:
    fmt = attrs.get("data_format", "NHWC")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    if fmt != "NHWC":
        raise ValueError("Only NHWC format is supported in flops computations")


def _unary(per_element: int) -> Callable:
    return lambda ins, outs, attrs: _n(ins[0]) * per_element


def _binary(per_element: int) -> Callable:
    return lambda ins, outs, attrs: _n(outs[0]) * per_element


def _reduction(reduce_flops: int, finalize_flops: int) -> Callable:
    # reduce_flops per input element, finalize_flops per output element, and the
    # first element of each output needs no reduction step
    return lambda ins, outs, attrs: (_n(ins[0]) * reduce_flops
                                     + _n(outs[0]) * (finalize_flops - reduce_flops))


def _pool(ins, outs, attrs) -> int:
    _nhwc(attrs)
    return _prod(attrs["ksize"]) * _n(outs[0])


def _avg_pool_grad(ins, outs, attrs) -> int:
    _nhwc(attrs)  # a multiply and an add per window element of each gradient element
    return _prod(attrs["ksize"]) * _n(ins[1]) * 2


def _max_pool_grad(ins, outs, attrs) -> int:
    _nhwc(attrs)  # the max pool again, then one flop per original output element
    n_out = _n(ins[1])
    return _prod(attrs["ksize"]) * n_out + n_out


def _conv_backprop(image, kernel, strides) -> float:
    # 2 * image elements * kernel elements / (input depth * stride area), as TF counts
    return 2 * _n(image) * _n(kernel) / (image[-1] * strides[1] * strides[2])


def _conv2d_backprop_input(ins, outs, attrs):
    _nhwc(attrs)
    return _conv_backprop(outs[0], ins[1], attrs["strides"])


def _conv2d_backprop_filter(ins, outs, attrs):
    _nhwc(attrs)
    return _conv_backprop(ins[0], outs[0], attrs["strides"])


def _conv2d(ins, outs, attrs) -> int:
    # per output element, a multiply-add per filter tap and input channel
    filt = ins[1]
    _n(ins[0]), _n(filt)
    return _n(outs[0]) * filt[0] * filt[1] * filt[2] * 2


def _depthwise_conv2d(ins, outs, attrs) -> int:
    filt = ins[1]
    _n(ins[0]), _n(filt)
    return _n(outs[0]) * filt[0] * filt[1] * 2


def _dilation2d(ins, outs, attrs) -> int:
    filt = ins[1]
    _n(ins[0]), _n(filt)
    return _n(outs[0]) * filt[0] * filt[1] * 2


def _add_n(ins, outs, attrs) -> int:
    return _n(ins[0]) * (len(ins) - 1) if ins else 0


def _mat_mul(ins, outs, attrs) -> int:
    a = ins[0]
    _n(a)
    k = a[0] if attrs.get("transpose_a") else a[1]
    return 2 * k * _n(outs[0])


def _batch_mat_mul(ins, outs, attrs) -> int:
    # TF reads a `transpose_a` attr, which BatchMatMul ops lack (theirs is adj_x): k is
    # always the last dimension of x
    a = ins[0]
    _n(a)
    k = a[-2] if attrs.get("transpose_a") else a[-1]
    return 2 * k * _n(outs[0])


# op type -> formula: TF1's op types with a registered "flops" statistic
FLOPS: Dict[str, Callable] = {
    # unary
    "Reciprocal": _unary(1), "Square": _unary(1), "Rsqrt": _unary(2), "Log": _unary(1),
    "Neg": _unary(1), "AssignSub": _unary(1), "AssignAdd": _unary(1),
    "L2Loss": lambda ins, outs, attrs: _n(ins[0]) * 3 - 1,
    "Softmax": _unary(5),
    # binary, per output element
    "Add": _binary(1), "AddV2": _binary(1), "Sub": _binary(1), "Mul": _binary(1),
    "RealDiv": _binary(1), "Maximum": _binary(1), "Minimum": _binary(1), "Pow": _binary(1),
    "RsqrtGrad": _binary(4), "GreaterEqual": _binary(1), "Greater": _binary(1),
    "LessEqual": _binary(1), "Less": _binary(1), "Equal": _binary(1),
    "NotEqual": _binary(1), "SquaredDifference": _binary(2),
    # reductions
    "Mean": _reduction(1, 1), "Sum": _reduction(1, 0), "ArgMax": _reduction(1, 0),
    "ArgMin": _reduction(1, 0), "BiasAddGrad": _reduction(1, 0),
    # convolution and pooling (NHWC only, as TF)
    "AvgPool": _pool, "MaxPool": _pool, "AvgPoolGrad": _avg_pool_grad,
    "MaxPoolGrad": _max_pool_grad, "Conv2DBackpropInput": _conv2d_backprop_input,
    "Conv2DBackpropFilter": _conv2d_backprop_filter, "Conv2D": _conv2d,
    "DepthwiseConv2dNative": _depthwise_conv2d, "Dilation2D": _dilation2d,
    # other
    "AddN": _add_n, "MatMul": _mat_mul, "BatchMatMul": _batch_mat_mul,
    "BatchMatMulV2": _batch_mat_mul, "BatchMatMulV3": _batch_mat_mul,
    "BiasAdd": lambda ins, outs, attrs: _n(ins[0]),
}


def float_ops(op_type: str, in_shapes, out_shapes, attrs) -> Optional[int]:
    """The flops of one op by TF1's rules: None when its type has no flops statistic,
    a shape it needs is not fully known, or its data format is not NHWC (TF skips such
    ops the same way)."""
    fn = FLOPS.get(op_type)
    if fn is None:
        return None
    try:
        return int(fn(in_shapes, out_shapes, attrs))
    except (_Incomplete, ValueError, IndexError, TypeError):
        return None
