"""Neural-network ops (`tf.nn`): the activations live here; the family continues in
nn_softmax.py (Softmax, LogSoftmax, BiasAdd, InTopKV2), nn_impl.py (composites: dropout,
moments, batch_normalization, l2_normalize, crelu, xw_plus_b) and nn_losses.py; the
package imports them all.

The activations are a table, one row per op: its kernel, the kernel of its gradient op of
TF's name (ReluGrad, EluGrad, ...), whether that op reads the features or the outputs, and
the gradient of the gradient op, so second derivatives work. One loop registers them.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, register_op
from tensorweave.framework import shapes as _shapes
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops import onednn
from tensorweave.ops.math.math_unary import can_overwrite
from tensorweave.ops.select_bits import select

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


# --- shared helpers ------------------------------------------------------------------------
# shared with other families; kept importable from here
with_rank, with_rank_at_least, merge_dims = _shapes.with_rank, _shapes.with_rank_at_least, \
    _shapes.merge_dim


def _merge_inputs_shape(op) -> TensorShape:
    """Shape fn of the activation gradient ops: both inputs have the output's shape."""
    a, b = op.inputs[0].shape, op.inputs[1].shape
    if a.ndims is None:
        return b
    if b.ndims is None:
        return a
    if a.ndims != b.ndims:
        raise ValueError("Shapes must be equal rank, but are %d and %d" % (a.ndims, b.ndims))
    return TensorShape([merge_dims(x, y) for x, y in zip(a.as_list(), b.as_list())])


def _same_shape(op) -> TensorShape:
    return op.inputs[0].shape


def compute_dtype(x: np.ndarray):
    """The NumPy dtype to compute transcendental functions of `x` in: float32 for the
    16-bit floats (float16, bfloat16), else x's own dtype."""
    return np.float32 if x.dtype.itemsize == 2 and x.dtype.kind not in "iu" else x.dtype


def _zero(x: np.ndarray):
    # a NumPy scalar (not a 0-d array) so that CuPy arrays accept it as well
    return x.dtype.type(0)


def _grad_op(op_type: str, gradients, features, attrs=None) -> Tensor:
    return apply_op(op_type, [gradients, features], attrs, name=op_type).outputs[0]


def _zeros_like(t: Tensor) -> Tensor:
    from tensorweave.ops.array import array_ops
    return array_ops.zeros_like(t)


# --- kernels: forward `(ctx, features)` and backward `(ctx, gradients, features or outputs)`
# np.maximum against a scalar zero runs a scalar loop that branches on every element's
# sign (~4x slower on activations of random sign: 0.49 ms for cnn_train's 1.6M float32
# values); against a contiguous block of zeros it runs its SIMD loop (0.19 ms), NaN
# propagating the same way.
_ZEROS_BLOCK = 4096


def _zeros_block(dtype) -> np.ndarray:
    block = np.zeros(_ZEROS_BLOCK, dtype)
    block.flags.writeable = False
    return block


_ZEROS = {np.dtype(t): _zeros_block(t) for t in (np.float32, np.float64)}


def _relu_kernel(ctx, x):
    if type(x) is np.ndarray and x.size >= onednn.ELTWISE_MIN_SIZE:
        out = onednn.relu(x)  # every core (ops/onednn.py); None without oneDNN or on NaN
        if out is not None:
            return out
    zeros = _ZEROS.get(x.dtype) if type(x) is np.ndarray and x.size > _ZEROS_BLOCK else None
    if zeros is None or not x.flags.c_contiguous:
        return ctx.xp.maximum(x, _zero(x))
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    whole = flat.size - flat.size % _ZEROS_BLOCK
    np.maximum(flat[:whole].reshape(-1, _ZEROS_BLOCK), zeros,
               out=out[:whole].reshape(-1, _ZEROS_BLOCK))
    np.maximum(flat[whole:], zeros[:flat.size - whole], out=out[whole:])
    return out.reshape(x.shape)


def _relu_grad_kernel(ctx, g, f):
    # TF multiplies by the mask (an inf or NaN gradient at f <= 0 gives NaN, as there);
    # also several times faster than a select on data whose sign is random
    if g.shape != f.shape or g.dtype != f.dtype:
        return ctx.xp.multiply(g, f > 0, dtype=g.dtype)
    if type(f) is np.ndarray and f.size >= onednn.ELTWISE_MIN_SIZE:
        out = onednn.relu_grad(g, f)  # every core (ops/onednn.py); NaN features mask, as here
        if out is not None:
            return out
    # the mask written as 0/1 of g's dtype, then a same-dtype multiply in place: ~15%
    # faster than multiplying by a bool mask (a casting loop), and no bool temporary
    out = ctx.xp.greater(f, _zero(f), out=ctx.xp.empty_like(g))
    return ctx.xp.multiply(g, out, out=out)


def _relu_grad_in_place(ctx, g, f):
    """ReluGrad writing into `g` where the plan marked it as the node's own
    (runtime/optimizer.mark_temporaries): on oneDNN's passes, where a new array would
    be as much memory again to write (cnn_train's first ReluGrad, 6.4 MB: 0.39 -> 0.21
    ms; the plan marks the gradient alone, and the passes check the shapes, types and
    size they take); elsewhere the plain kernel."""
    if can_overwrite(g):
        out = onednn.relu_grad(g, f, into_grad=True)
        if out is not None:
            return out
    return _relu_grad_kernel(ctx, g, f)


def _relu6_kernel(ctx, x):
    return ctx.xp.minimum(ctx.xp.maximum(x, _zero(x)), x.dtype.type(6))


def _relu6_grad_kernel(ctx, g, f):
    return ctx.xp.multiply(g, (f > 0) & (f < 6), dtype=g.dtype)


def _leaky_relu_kernel(ctx, x):
    alpha = x.dtype.type(ctx.attrs["alpha"])
    if 0 < alpha <= 1 and x.dtype.kind == "f":
        # max(x, alpha * x) is TF's select bit for bit there (alpha * x rounds to at most
        # |x|; NaN, the infinities and -0.0 come out alike; alpha 0 would make 0 * inf
        # NaN) and 4x cheaper than NumPy's where on a mask
        out = ctx.xp.multiply(x, alpha)
        return ctx.xp.maximum(x, out, out=out)
    return select(x > 0, x, x * alpha, ctx.xp)


def _leaky_relu_grad_kernel(ctx, g, f):
    alpha = g.dtype.type(ctx.attrs["alpha"])
    return select(f > 0, g, g * alpha, ctx.xp)


def _expm1_of_negative_part(xp, x):
    work = x.astype(compute_dtype(x), copy=False)
    return xp.expm1(xp.minimum(work, 0))


def _elu_kernel(ctx, x):
    xp = ctx.xp
    return select(x < 0, _expm1_of_negative_part(xp, x), x, xp).astype(x.dtype, copy=False)


def _elu_grad_kernel(ctx, g, y):
    out = select(y < 0, g * (y + y.dtype.type(1)), g, ctx.xp)
    return out.astype(g.dtype, copy=False)


def _selu_kernel(ctx, x):
    xp = ctx.xp
    neg = (_SELU_SCALE * _SELU_ALPHA) * _expm1_of_negative_part(xp, x)
    return select(x < 0, neg, _SELU_SCALE * x.astype(neg.dtype), xp).astype(x.dtype,
                                                                             copy=False)


def _selu_grad_kernel(ctx, g, y):
    work = compute_dtype(y)
    g32, y32 = g.astype(work, copy=False), y.astype(work, copy=False)
    out = select(y32 < 0, g32 * (y32 + _SELU_SCALE * _SELU_ALPHA), g32 * _SELU_SCALE, ctx.xp)
    return out.astype(g.dtype, copy=False)


def _stable_sigmoid(xp, x):
    return 0.5 * (1.0 + xp.tanh(0.5 * x))


def _softplus_kernel(ctx, x):
    work = x.astype(compute_dtype(x), copy=False)
    return ctx.xp.logaddexp(work, work.dtype.type(0)).astype(x.dtype, copy=False)


def _softplus_grad_kernel(ctx, g, f):
    work = compute_dtype(f)
    out = g.astype(work, copy=False) * _stable_sigmoid(ctx.xp, f.astype(work, copy=False))
    return out.astype(g.dtype, copy=False)


def _softsign_kernel(ctx, x):
    xp = ctx.xp
    return (x / (xp.abs(x) + x.dtype.type(1))).astype(x.dtype, copy=False)


def _softsign_grad_kernel(ctx, g, f):
    xp = ctx.xp
    denom = xp.abs(f) + f.dtype.type(1)
    return (g / (denom * denom)).astype(g.dtype, copy=False)


# --- gradients of the Grad ops (second derivatives): `op` is the Grad op ---------------------
def _piecewise_linear_grad_gradient(op, grad):
    # backprop is `gradients` times a slope that is constant between the kinks: linear in
    # `gradients`, flat in `features`.
    features = op.inputs[1]
    return [_grad_op(op.type, grad, features, _own_attrs(op)), _zeros_like(features)]


def _negative_part_grad_gradient(op, grad):
    # d(backprop)/d(outputs) is `grad * gradients` where outputs < 0, else 0: that is
    # ReluGrad(grad * gradients, -outputs).
    from tensorweave.ops.math import math_binary, math_unary
    gradients, outputs = op.inputs
    d_outputs = _grad_op("ReluGrad", math_binary.multiply(grad, gradients),
                         math_unary.negative(outputs))
    return [_grad_op(op.type, grad, outputs), d_outputs]


def _softplus_grad_gradient(op, grad):
    # backprop = dy * sigmoid(x); d/dx sigmoid(x) = 1 / (exp(-x) + 2 + exp(x)).
    from tensorweave.ops.math import math_binary, math_unary
    dy, x = op.inputs
    ddy = _grad_op("SoftplusGrad", grad, x)
    denom = math_binary.add(math_binary.add(math_unary.exp(math_unary.negative(x)), 2.0),
                            math_unary.exp(x))
    d2x = math_binary.divide(math_binary.multiply(grad, dy), denom)
    return [ddy, d2x]


def _softsign_grad_gradient(op, grad):
    # backprop = dy / (1 + |x|)^2; d/dx = -2 dy sign(x) / (1 + |x|)^3.
    from tensorweave.ops.math import math_binary, math_unary
    dy, x = op.inputs
    ddy = _grad_op("SoftsignGrad", grad, x)
    one_plus_abs = math_binary.add(math_unary.abs(x), 1.0)
    cube = math_binary.multiply(math_unary.square(one_plus_abs), one_plus_abs)
    d2x = math_binary.divide(
        math_binary.multiply(math_binary.multiply(grad, dy), math_unary.sign(x)), cube)
    return [ddy, math_binary.multiply(d2x, -2.0)]


# --- the table: one row per activation -------------------------------------------------------
class _Activation(NamedTuple):
    op_type: str                  # the forward op; its gradient op is op_type + "Grad"
    types: Sequence[_dt.DType]    # allowed values of the type attr T
    forward: Callable             # kernel of op_type
    backward: Callable            # kernel of op_type + "Grad"
    grad_reads: str               # "features" or "outputs": the Grad op's second input
    grad_of_grad: Callable        # gradient function of the Grad op
    attrs: Optional[dict] = None  # further attrs with their defaults (both ops have them)
    type_default: Any = REQUIRED  # default of T
    backward_in_place: Optional[Callable] = None  # the Grad kernel's KernelDef.in_place


_ACTIVATIONS = {row.op_type: row for row in [
    _Activation("Relu", _dt.REAL_NUMBERS, _relu_kernel, _relu_grad_kernel, "outputs",
                _piecewise_linear_grad_gradient, backward_in_place=_relu_grad_in_place),
    _Activation("Relu6", _dt.REAL_NUMBERS, _relu6_kernel, _relu6_grad_kernel, "outputs",
                _piecewise_linear_grad_gradient),
    _Activation("LeakyRelu", _dt.FLOATS, _leaky_relu_kernel, _leaky_relu_grad_kernel,
                "features", _piecewise_linear_grad_gradient, attrs={"alpha": 0.2},
                type_default=_dt.float32),
    _Activation("Elu", _dt.FLOATS, _elu_kernel, _elu_grad_kernel, "outputs",
                _negative_part_grad_gradient),
    _Activation("Selu", _dt.FLOATS, _selu_kernel, _selu_grad_kernel, "outputs",
                _negative_part_grad_gradient),
    _Activation("Softplus", _dt.FLOATS, _softplus_kernel, _softplus_grad_kernel, "features",
                _softplus_grad_gradient),
    _Activation("Softsign", _dt.FLOATS, _softsign_kernel, _softsign_grad_kernel, "features",
                _softsign_grad_gradient),
]}


def _own_attrs(op) -> dict:
    """The values on `op` (an activation or its Grad op) of its row's further attrs."""
    row = _ACTIVATIONS[op.type.removesuffix("Grad")]
    return {attr: op._get_attr(attr) for attr in row.attrs or ()}


def _activation_gradient(op, grad):
    """Gradient of every activation: its Grad op applied to `grad` and to the features or
    the outputs, as the row says."""
    row = _ACTIVATIONS[op.type]
    x = op.outputs[0] if row.grad_reads == "outputs" else op.inputs[0]
    return [_grad_op(op.type + "Grad", grad, x, _own_attrs(op))]


def _attrs_of(row: _Activation) -> dict:
    return {"T": TypeAttr(row.types, default=row.type_default), **(row.attrs or {})}


for _row in _ACTIVATIONS.values():
    register_op(_row.op_type, inputs=["features: T"], outputs=["activations: T"],
                attrs=_attrs_of(_row), shape=_same_shape)
    register_op(_row.op_type + "Grad", inputs=["gradients: T", "features: T"],
                outputs=["backprops: T"], attrs=_attrs_of(_row), shape=_merge_inputs_shape)
    kernel(_row.op_type)(_row.forward)
    kernel(_row.op_type + "Grad", in_place=_row.backward_in_place)(_row.backward)
    gradient(_row.op_type)(_activation_gradient)
    gradient(_row.op_type + "Grad")(_row.grad_of_grad)


# --- builders ------------------------------------------------------------------------------
# Each takes `features` (a Tensor) and an optional op `name`, and returns a Tensor of the
# type and shape of `features`.
def _unary(op_type: str, features, name: Optional[str]) -> Tensor:
    return apply_op(op_type, [features], name=name or op_type).outputs[0]


@tf_export("nn.relu")
def relu(features, name: Optional[str] = None) -> Tensor:
    """Rectified linear: `max(features, 0)`, for any real number type."""
    return _unary("Relu", features, name)


@tf_export("nn.relu6")
def relu6(features, name: Optional[str] = None) -> Tensor:
    """Rectified linear 6: `min(max(features, 0), 6)`, for any real number type."""
    return _unary("Relu6", features, name)


@tf_export("nn.leaky_relu")
def leaky_relu(features, alpha=0.2, name: Optional[str] = None) -> Tensor:
    """Leaky rectified linear: `features` if > 0, else `alpha * features`.

    Args:
      features: a Tensor; integer tensors are converted to float32 first (as TF does).
      alpha: slope of the negative part (a Python number).
      name: op name.

    Returns:
      A Tensor of the (floating) type and shape of `features`.
    """
    features = convert_to_tensor(features, name="features")
    if features.dtype.is_integer:
        from tensorweave.ops.math import math_ops
        features = math_ops.cast(features, _dt.float32)
    if isinstance(alpha, np.ndarray):
        alpha = alpha.item()
    return apply_op("LeakyRelu", [features], {"alpha": float(alpha)},
                    name=name or "LeakyRelu").outputs[0]


@tf_export("nn.elu")
def elu(features, name: Optional[str] = None) -> Tensor:
    """Exponential linear unit of a float Tensor: `features` if > 0, else
    `exp(features) - 1`."""
    return _unary("Elu", features, name)


@tf_export("nn.selu")
def selu(features, name: Optional[str] = None) -> Tensor:
    """Scaled exponential linear unit of a float Tensor: `scale * features` if > 0, else
    `scale * alpha * (exp(features) - 1)`, with the constants of Klambauer et al. (2017)."""
    return _unary("Selu", features, name)


@tf_export("nn.softplus", "math.softplus")
def softplus(features, name: Optional[str] = None) -> Tensor:
    """Softplus of a float Tensor: `log(exp(features) + 1)`, computed without overflow."""
    return _unary("Softplus", features, name)


@tf_export("nn.softsign", "math.softsign")
def softsign(features, name: Optional[str] = None) -> Tensor:
    """Softsign of a float Tensor: `features / (abs(features) + 1)`."""
    return _unary("Softsign", features, name)
