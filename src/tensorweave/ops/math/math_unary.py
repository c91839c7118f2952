"""Elementwise unary math ops.

One table row per op: (op type, NumPy computation, allowed dtypes, gradient). The rows
register the op, its kernel and its gradient; the public builders (TF1 names) are made
from the same table. Ops whose gradient TF computes with a fused "...Grad" op (Tanh,
Sigmoid, Sqrt, Rsqrt, Reciprocal) have those fused ops here too, with their own
gradients, so higher derivatives work.
"""
from __future__ import annotations

import builtins
from typing import Callable, NamedTuple, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export  # noqa: F401
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, \
    not_differentiable, register_op
from tensorweave.runtime.optimizer import IN_PLACE_MIN_SIZE

FLOATS = _dt.FLOATS
COMPLEX = _dt.COMPLEX
FLOAT_COMPLEX = FLOATS + COMPLEX
SIGNED_INTS = (_dt.int8, _dt.int16, _dt.int32, _dt.int64)
SIGNED = FLOATS + SIGNED_INTS
SIGNED_COMPLEX = SIGNED + COMPLEX


def _same_shape(op):
    return op.inputs[0].shape


# --- NumPy computations that are more than one ufunc -------------------------------------
_TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_PI = 1.7724538509055159


def _erf_float64(x: np.ndarray) -> np.ndarray:
    """erf in float64 to ~1e-15 relative error, vectorised.

    |x| < 2.5: erf(x) = 2x/sqrt(pi) exp(-x^2) sum_n (2x^2)^n / (2n+1)!!, a series of
    positive terms (no cancellation). |x| >= 2.5: erf = 1 - erfc with erfc from its
    Laplace continued fraction, evaluated backward with a fixed depth.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    ax = np.abs(x)
    small = ax < 2.5
    if small.any():
        xs = x[small]
        x2 = xs * xs
        two_x2 = 2.0 * x2
        term = np.ones_like(xs)
        total = np.ones_like(xs)
        for n in builtins.range(1, 90):
            term = term * (two_x2 / (2 * n + 1))
            total = total + term
            if n % 8 == 0 and np.all(term <= 1e-17 * total):
                break
        out[small] = _TWO_OVER_SQRT_PI * xs * np.exp(-x2) * total
    big = ~small
    if big.any():
        xb = ax[big]
        frac = np.zeros_like(xb)
        for k in builtins.range(60, 0, -1):
            frac = (0.5 * k) / (xb + frac)
        erfc = np.exp(-xb * xb) / ((xb + frac) * _SQRT_PI)
        out[big] = np.copysign(1.0 - erfc, x[big])
    return out


def _erf(x):
    if x.dtype == np.float64:
        return _erf_float64(x)
    return _erf_float64(x).astype(x.dtype)


def _sigmoid(x):
    if x.dtype.kind == "c":
        return 1.0 / (1.0 + np.exp(-x))
    # With e = exp(-|x|) (never overflows), r = 1 / (1 + e) is sigmoid(|x|) and e * r is
    # sigmoid(-|x|), with full relative precision for x << 0.
    if type(x) is np.ndarray and (x.dtype == np.float32 or x.dtype == np.float64):
        # The choice between r and e * r without a branch: r times max(e, x >= 0), a
        # factor of 1 for x >= 0 and of e (<= 1) below, NaN staying NaN. np.where
        # mispredicts on values of random sign: 4.9 -> 1.0 ms for 1M float32 values,
        # the same results bit for bit.
        e = np.abs(x, out=np.empty_like(x))
        np.negative(e, out=e)
        np.exp(e, out=e)
        r = np.add(e, 1, out=np.empty_like(x))
        np.reciprocal(r, out=r)
        np.maximum(e, np.greater_equal(x, 0), out=e)
        return np.multiply(r, e, out=r)
    e = np.exp(-np.abs(x))
    r = 1 / (1 + e)
    return np.where(x >= 0, r, e * r).astype(x.dtype, copy=False)


def _round(x):
    if x.dtype.kind == "c":
        return np.rint(x.real) + 1j * np.rint(x.imag)
    if x.dtype.kind in "iu":
        return x
    return np.rint(x)  # half to even, as TF's Round


def _reciprocal(x):
    if x.dtype.kind in "iu":
        if np.any(x == 0):
            raise ZeroDivisionError
        # integer 1/x truncates: 1 and -1 stay, every other value becomes 0
        return np.where(np.abs(x) == 1, x, np.zeros((), x.dtype))
    return np.reciprocal(x)


def _rsqrt(x):
    return (1 / np.sqrt(x)).astype(x.dtype, copy=False)


def _sign(x):
    return np.sign(x)  # complex: x / |x| (0 for 0), as TF


# --- gradients ----------------------------------------------------------------------------
def _conj(t):
    if t.dtype.is_complex:
        return conj(t)
    return t


def _mb():
    from tensorweave.ops.math import math_binary
    return math_binary


def _grad_neg(op, grad):
    return -grad if isinstance(grad, IndexedSlices) else negative(grad)


def _grad_abs(op, grad):
    from tensorweave.ops.math import math_binary
    return math_binary.multiply(grad, sign(op.inputs[0]))


def _grad_sign(op, grad):
    from tensorweave.ops.array import array_ops
    return array_ops.zeros_like(op.inputs[0])


def _grad_square(op, grad):
    mb = _mb()
    x = op.inputs[0]
    two = convert_to_tensor(2, dtype=x.dtype)
    return mb.multiply(grad, mb.multiply(two, _conj(x)))


def _grad_exp(op, grad):
    return _mb().multiply(grad, _conj(op.outputs[0]))


def _grad_expm1(op, grad):
    return _mb().multiply(grad, _conj(exp(op.inputs[0])))


def _grad_log(op, grad):
    return _mb().multiply(grad, reciprocal(_conj(op.inputs[0])))


def _grad_log1p(op, grad):
    mb = _mb()
    x = op.inputs[0]
    return mb.multiply(grad, reciprocal(mb.add(convert_to_tensor(1, dtype=x.dtype),
                                               _conj(x))))


def _grad_sin(op, grad):
    return _mb().multiply(grad, _conj(cos(op.inputs[0])))


def _grad_cos(op, grad):
    return negative(_mb().multiply(grad, _conj(sin(op.inputs[0]))))


def _grad_tan(op, grad):
    return _mb().multiply(grad, square(reciprocal(_conj(cos(op.inputs[0])))))


def _rsqrt_one_minus_square(x):
    mb = _mb()
    return rsqrt(mb.subtract(convert_to_tensor(1, dtype=x.dtype), square(x)))


def _grad_asin(op, grad):
    return _mb().multiply(grad, _conj(_rsqrt_one_minus_square(op.inputs[0])))


def _grad_acos(op, grad):
    return negative(_mb().multiply(grad, _conj(_rsqrt_one_minus_square(op.inputs[0]))))


def _grad_atan(op, grad):
    mb = _mb()
    x = op.inputs[0]
    return mb.multiply(grad, _conj(reciprocal(mb.add(convert_to_tensor(1, dtype=x.dtype),
                                                     square(x)))))


def _grad_sinh(op, grad):
    return _mb().multiply(grad, _conj(cosh(op.inputs[0])))


def _grad_cosh(op, grad):
    return _mb().multiply(grad, _conj(sinh(op.inputs[0])))


def _grad_asinh(op, grad):
    # d asinh(x) = 1 / cosh(asinh(x))
    return _mb().multiply(grad, _conj(reciprocal(cosh(op.outputs[0]))))


def _grad_acosh(op, grad):
    # d acosh(x) = 1 / sinh(acosh(x))
    return _mb().multiply(grad, _conj(reciprocal(sinh(op.outputs[0]))))


def _grad_atanh(op, grad):
    mb = _mb()
    x = op.inputs[0]
    return mb.multiply(grad, _conj(reciprocal(
        mb.subtract(convert_to_tensor(1, dtype=x.dtype), square(x)))))


def _grad_erf(op, grad):
    mb = _mb()
    x = op.inputs[0]
    c = convert_to_tensor(_TWO_OVER_SQRT_PI, dtype=x.dtype)
    return mb.multiply(grad, mb.multiply(c, exp(negative(square(x)))))


def _grad_none(op, grad):
    return None


def _fused_grad(grad_op_type: str) -> Callable:
    """Gradient computed by a fused op of the forward output: GradOp(y, dy)."""
    def grad_fn(op, grad):
        return apply_op(grad_op_type, [_conj(op.outputs[0]), grad]).outputs[0]
    return grad_fn


class Row(NamedTuple):
    op_type: str
    compute: Callable
    allowed: Sequence[_dt.DType]
    grad: Optional[Callable]  # None: not differentiable
    out: Optional[_dt.DType] = None  # fixed output dtype (bool for predicates)


_TABLE = [
    Row("Neg", np.negative, SIGNED_COMPLEX, _grad_neg),
    Row("Abs", np.abs, SIGNED, _grad_abs),
    Row("Sign", _sign, SIGNED_COMPLEX, _grad_sign),
    Row("Square", np.square, SIGNED_COMPLEX + (_dt.uint8, _dt.uint16, _dt.uint32,
                                                 _dt.uint64), _grad_square),
    Row("Sqrt", np.sqrt, FLOAT_COMPLEX, _fused_grad("SqrtGrad")),
    Row("Rsqrt", _rsqrt, FLOAT_COMPLEX, _fused_grad("RsqrtGrad")),
    Row("Exp", np.exp, FLOAT_COMPLEX, _grad_exp),
    Row("Expm1", np.expm1, FLOAT_COMPLEX, _grad_expm1),
    Row("Log", np.log, FLOAT_COMPLEX, _grad_log),
    Row("Log1p", np.log1p, FLOAT_COMPLEX, _grad_log1p),
    Row("Sin", np.sin, FLOAT_COMPLEX, _grad_sin),
    Row("Cos", np.cos, FLOAT_COMPLEX, _grad_cos),
    Row("Tan", np.tan, FLOAT_COMPLEX, _grad_tan),
    Row("Asin", np.arcsin, FLOAT_COMPLEX, _grad_asin),
    Row("Acos", np.arccos, FLOAT_COMPLEX, _grad_acos),
    Row("Atan", np.arctan, FLOAT_COMPLEX, _grad_atan),
    Row("Sinh", np.sinh, FLOAT_COMPLEX, _grad_sinh),
    Row("Cosh", np.cosh, FLOAT_COMPLEX, _grad_cosh),
    Row("Asinh", np.arcsinh, FLOAT_COMPLEX, _grad_asinh),
    Row("Acosh", np.arccosh, FLOAT_COMPLEX, _grad_acosh),
    Row("Atanh", np.arctanh, FLOAT_COMPLEX, _grad_atanh),
    Row("Tanh", np.tanh, FLOAT_COMPLEX, _fused_grad("TanhGrad")),
    Row("Sigmoid", _sigmoid, FLOAT_COMPLEX, _fused_grad("SigmoidGrad")),
    Row("Erf", _erf, FLOATS, _grad_erf),
    Row("Floor", np.floor, FLOATS, _grad_none),
    Row("Ceil", np.ceil, FLOATS, _grad_none),
    Row("Round", _round, SIGNED_COMPLEX, _grad_none),
    Row("Rint", np.rint, FLOATS, _grad_none),  # half to even
    Row("Reciprocal", _reciprocal, SIGNED_COMPLEX, _fused_grad("ReciprocalGrad")),
    Row("Conj", np.conj, COMPLEX + (_dt.variant,), lambda op, grad: conj(grad)),
    Row("IsNan", np.isnan, FLOATS, None, _dt.bool),
    Row("IsInf", np.isinf, FLOATS, None, _dt.bool),
    Row("IsFinite", np.isfinite, FLOATS, None, _dt.bool),
    Row("LogicalNot", np.logical_not, None, None, _dt.bool),
]


_IN_PLACE_UFUNCS = frozenset([np.negative, np.square, np.sqrt, np.exp, np.log, np.tanh])


def can_overwrite(target, other=None) -> bool:
    """Whether an elementwise ufunc of float `target` (and `other`, of its dtype, of its
    shape or a single value) may write its result into `target`, an array the plan
    marked as the node's own (runtime/optimizer.mark_temporaries): a writable NumPy
    array of its own memory, of IN_PLACE_MIN_SIZE values or more, shaped and typed as
    the result."""
    return type(target) is np.ndarray and target.size >= IN_PLACE_MIN_SIZE and \
        target.dtype.kind == "f" and target.flags.writeable and target.flags.owndata and \
        (other is None or type(other) is np.ndarray and other.dtype == target.dtype and
         (other.shape == target.shape or other.size == 1 and other.ndim <= target.ndim))


def _make_in_place_kernel(ufunc, plain: Callable) -> Callable:
    """The KernelDef.in_place variant of a unary row's kernel `plain`."""
    def run(ctx, x):
        if can_overwrite(x):
            return ufunc(x, out=x)
        return plain(ctx, x)
    return run


def _make_kernel(compute: Callable) -> Callable:
    def run(ctx, x):
        try:
            return compute(x)
        except ZeroDivisionError:
            raise errors.InvalidArgumentError(None, ctx.op, "Integer division by zero") \
                from None
    return run


def _make_grad(fn: Callable) -> Callable:
    def run(op, grad):
        return [fn(op, grad)]
    return run


# TF's OpDef defaults T here only; a SavedModel's functions omit attrs left at defaults
_DEFAULT_T = {"Conj": _dt.complex64}


def register_rows(rows: Sequence[Row]) -> None:
    """Registers each row's op, kernel and gradient (or not_differentiable)."""
    for row in rows:
        if row.out is _dt.bool and row.allowed is None:
            register_op(row.op_type, inputs=["x: bool"], outputs=["y: bool"],
                        shape=_same_shape)
        elif row.out is _dt.bool:
            register_op(row.op_type, inputs=["x: T"], outputs=["y: bool"],
                        attrs={"T": TypeAttr(row.allowed)}, shape=_same_shape)
        else:
            default = _DEFAULT_T.get(row.op_type, REQUIRED)
            register_op(row.op_type, inputs=["x: T"], outputs=["y: T"],
                        attrs={"T": TypeAttr(row.allowed, default=default)},
                        shape=_same_shape)
        plain = _make_kernel(row.compute)
        in_place = _make_in_place_kernel(row.compute, plain) \
            if row.compute in _IN_PLACE_UFUNCS else None
        kernel(row.op_type, in_place=in_place)(plain)
        if row.grad is None:
            not_differentiable(row.op_type)
        else:
            gradient(row.op_type)(_make_grad(row.grad))


register_rows(_TABLE)

# --- ComplexAbs: |x| of a complex tensor is real ------------------------------------------
register_op("ComplexAbs", inputs=["x: T"], outputs=["y: Tout"],
            attrs={"T": TypeAttr(COMPLEX, default=_dt.complex64),
                   "Tout": TypeAttr((_dt.float32, _dt.float64), default=_dt.float32)},
            shape=_same_shape)


@kernel("ComplexAbs")
def _complex_abs_kernel(ctx, x):
    return np.abs(x)


@gradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    # d|x| = Re(conj(x)/|x| dx): the gradient is grad * x / |x| (0 where x == 0).
    from tensorweave.ops.math import math_binary, math_ops
    x, y = op.inputs[0], op.outputs[0]
    return [math_binary.div_no_nan(math_binary.multiply(math_ops.cast(grad, x.dtype), x),
                                   math_ops.cast(y, x.dtype))]


# --- fused gradient ops: GradOp(y, dy) where y is the forward output ---------------------
# z = GradOp(y, dy) is holomorphic in both inputs, so (TF's convention for complex
# gradients) each input's gradient is grad * conj(dz/dinput): conj(y) and conj(dy) below.
_F32_F64 = (np.dtype(np.float32), np.dtype(np.float64))


def _tanh_grad(y, dy):
    if type(y) is np.ndarray and type(dy) is np.ndarray and y.shape == dy.shape and \
            y.ndim and y.dtype in _F32_F64 and dy.dtype is y.dtype:
        z = y * y  # one temporary, updated in place (a hot op of RNN/loop gradients)
        np.subtract(1, z, z)
        return np.multiply(dy, z, z)
    return dy * (1 - y * y)


def _sigmoid_grad(y, dy):
    return dy * (y * (1 - y))


def _zero_where_dy_is_zero(z, dy):
    """As TF's kernels: no gradient in, none out, even where the local derivative is
    inf or NaN (sqrt at 0 masked by tf.where, say)."""
    return np.where(dy == 0, np.zeros((), z.dtype), z)


def _sqrt_grad(y, dy):
    return _zero_where_dy_is_zero(dy * (0.5 / y), dy)


def _rsqrt_grad(y, dy):
    return _zero_where_dy_is_zero(dy * (-0.5 * (y * y * y)), dy)


def _reciprocal_grad(y, dy):
    return _zero_where_dy_is_zero(-dy * (y * y), dy)


def _tanh_grad_grad(op, grad):
    mb = _mb()
    y, dy = _conj(op.inputs[0]), _conj(op.inputs[1])
    two = convert_to_tensor(-2, dtype=y.dtype)
    return [mb.multiply(grad, mb.multiply(two, mb.multiply(dy, y))), tanh_grad(y, grad)]


def _sigmoid_grad_grad(op, grad):
    mb = _mb()
    y, dy = _conj(op.inputs[0]), _conj(op.inputs[1])
    # d/dy [dy*y*(1-y)] = dy*(1-2y)
    one = convert_to_tensor(1, dtype=y.dtype)
    two = convert_to_tensor(2, dtype=y.dtype)
    gy = mb.multiply(grad, mb.multiply(dy, mb.subtract(one, mb.multiply(two, y))))
    return [gy, sigmoid_grad(y, grad)]


def _sqrt_grad_grad(op, grad):
    mb = _mb()
    y = op.inputs[0]
    z = op.outputs[0]
    # d/dy [0.5*dy/y] = -z/y
    return [negative(mb.multiply(grad, _conj(mb.realdiv(z, y)))), sqrt_grad(_conj(y), grad)]


def _rsqrt_grad_grad(op, grad):
    mb = _mb()
    y, dy = op.inputs
    c = convert_to_tensor(-1.5, dtype=y.dtype)
    gy = mb.multiply(grad, _conj(mb.multiply(c, mb.multiply(dy, square(y)))))
    return [gy, rsqrt_grad(_conj(y), grad)]


def _reciprocal_grad_grad(op, grad):
    mb = _mb()
    y, dy = op.inputs
    c = convert_to_tensor(-2, dtype=y.dtype)
    gy = mb.multiply(grad, _conj(mb.multiply(c, mb.multiply(dy, y))))
    return [gy, reciprocal_grad(_conj(y), grad)]


_FUSED = [
    ("TanhGrad", _tanh_grad, _tanh_grad_grad),
    ("SigmoidGrad", _sigmoid_grad, _sigmoid_grad_grad),
    ("SqrtGrad", _sqrt_grad, _sqrt_grad_grad),
    ("RsqrtGrad", _rsqrt_grad, _rsqrt_grad_grad),
    ("ReciprocalGrad", _reciprocal_grad, _reciprocal_grad_grad),
]


def _make_fused_kernel(compute: Callable) -> Callable:
    # the executors run kernels with floating-point errors ignored (as TF computes inf/NaN
    # silently), so no errstate here: entering one costs more than the op at small sizes
    def run(ctx, y, dy):
        z = compute(y, dy)
        if type(z) is np.ndarray and z.dtype is y.dtype:
            return z  # the hot case (float arrays): no conversion calls
        return ctx.xp.asarray(z).astype(y.dtype, copy=False)
    return run


for _name, _compute, _grad_fn in _FUSED:
    register_op(_name, inputs=["y: T", "dy: T"], outputs=["z: T"],
                attrs={"T": TypeAttr(FLOAT_COMPLEX)}, shape=_same_shape)
    kernel(_name)(_make_fused_kernel(_compute))
    gradient(_name)(_grad_fn)


def _fused_builder(op_type: str) -> Callable:
    def build(y, dy, name: Optional[str] = None) -> Tensor:
        return apply_op(op_type, [y, dy], name=name or op_type).outputs[0]
    build.__name__ = op_type
    build.__doc__ = "The gradient of the forward op from its output `y` and `dy` (%s)." \
        % op_type
    return build


tanh_grad = _fused_builder("TanhGrad")
sigmoid_grad = _fused_builder("SigmoidGrad")
sqrt_grad = _fused_builder("SqrtGrad")
rsqrt_grad = _fused_builder("RsqrtGrad")
reciprocal_grad = _fused_builder("ReciprocalGrad")


# --- builders -----------------------------------------------------------------------------
_DOC = """Computes {what} element-wise (TF1 `tf.{tf_name}`).

    Args:
      x: a Tensor (or value convertible to one) of type {types}.
      name: op name (default "{op_type}").

    Returns:
      A Tensor of {out} with the shape of `x`.

    Raises:
      TypeError: `x` has a dtype the op does not support.
    """


# The ops that map 0 to 0, which TF applies to a SparseTensor's values (its dispatch of
# these builders): f(sparse) is a SparseTensor of the same indices.
_ZERO_PRESERVING = frozenset(["Abs", "Neg", "Sign", "Square", "Sqrt", "Sin", "Tan", "Tanh",
                              "Asin", "Atan", "Asinh", "Atanh", "Erf", "BesselI0e",
                              "BesselI1e"])


def _on_sparse_values(x, apply: Callable):
    """`x` with `apply` applied to its values when it is a SparseTensor, else None."""
    from tensorweave.framework.sparse_tensor import SparseTensor
    if not isinstance(x, SparseTensor):
        return None
    return SparseTensor(x.indices, apply(x.values), x.dense_shape)


def make_builder(op_type: str, tf_name: str, what: str,
                 table: Sequence[Row] = _TABLE) -> Callable:
    """The TF1 builder `tf_name(x, name=None)` of the row of `table` for `op_type`."""
    row = next(r for r in table if r.op_type == op_type)
    on_sparse = op_type in _ZERO_PRESERVING

    def build(x, name: Optional[str] = None) -> Tensor:
        if on_sparse and not isinstance(x, Tensor):
            sparse = _on_sparse_values(x, lambda v: build(v, name))
            if sparse is not None:
                return sparse
        return apply_op(op_type, [x], name=name or op_type).outputs[0]
    build.__name__ = build.__qualname__ = tf_name
    build.__doc__ = _DOC.format(
        what=what, tf_name=tf_name, op_type=op_type,
        types="bool" if row.allowed is None else ", ".join(d.name for d in row.allowed),
        out="bool" if row.out is _dt.bool else "the dtype of `x`")
    return build


negative = tf_export("negative", "math.negative")(make_builder("Neg", "negative", "-x"))
sign = tf_export("sign", "math.sign")(make_builder("Sign", "sign", "the sign of x (x/|x| "
                                                               "for complex)"))
square = tf_export("square", "math.square")(make_builder("Square", "square", "x * x"))
sqrt = tf_export("sqrt", "math.sqrt")(make_builder("Sqrt", "sqrt", "the square root of x"))
rsqrt = tf_export("rsqrt", "math.rsqrt")(make_builder("Rsqrt", "rsqrt", "1 / sqrt(x)"))
exp = tf_export("exp", "math.exp")(make_builder("Exp", "exp", "e ** x"))
expm1 = tf_export("expm1", "math.expm1")(make_builder("Expm1", "expm1", "e ** x - 1"))
log = tf_export("log", "math.log")(make_builder("Log", "log", "the natural logarithm of x"))
log1p = tf_export("log1p", "math.log1p")(make_builder("Log1p", "log1p", "log(1 + x)"))
sin = tf_export("sin", "math.sin")(make_builder("Sin", "sin", "the sine of x"))
cos = tf_export("cos", "math.cos")(make_builder("Cos", "cos", "the cosine of x"))
tan = tf_export("tan", "math.tan")(make_builder("Tan", "tan", "the tangent of x"))
asin = tf_export("asin", "math.asin")(make_builder("Asin", "asin", "the arcsine of x"))
acos = tf_export("acos", "math.acos")(make_builder("Acos", "acos", "the arccosine of x"))
atan = tf_export("atan", "math.atan")(make_builder("Atan", "atan", "the arctangent of x"))
sinh = tf_export("sinh", "math.sinh")(make_builder("Sinh", "sinh",
                                                   "the hyperbolic sine of x"))
cosh = tf_export("cosh", "math.cosh")(make_builder("Cosh", "cosh",
                                                   "the hyperbolic cosine of x"))
asinh = tf_export("asinh", "math.asinh")(make_builder("Asinh", "asinh",
                                                      "the inverse hyperbolic sine of x"))
acosh = tf_export("acosh", "math.acosh")(make_builder("Acosh", "acosh",
                                                      "the inverse hyperbolic cosine of x"))
atanh = tf_export("atanh", "math.atanh")(make_builder("Atanh", "atanh",
                                                      "the inverse hyperbolic tangent of x"))
rint = tf_export("rint", "math.rint")(make_builder("Rint", "rint", "the nearest integer "
                                                   "to x, half to even"))
tanh = tf_export("tanh", "math.tanh", "nn.tanh")(
    make_builder("Tanh", "tanh", "the hyperbolic tangent of x"))
sigmoid = tf_export("sigmoid", "math.sigmoid", "nn.sigmoid")(
    make_builder("Sigmoid", "sigmoid", "1 / (1 + exp(-x))"))
erf = tf_export("erf", "math.erf")(make_builder("Erf", "erf", "the Gauss error function of x"))
floor = tf_export("floor", "math.floor")(make_builder("Floor", "floor", "the largest integer "
                                                                    "not greater than x"))
ceil = tf_export("ceil", "math.ceil")(make_builder("Ceil", "ceil", "the smallest integer not "
                                                               "less than x"))
reciprocal = tf_export("reciprocal", "math.reciprocal")(
    make_builder("Reciprocal", "reciprocal", "1 / x"))
is_nan = tf_export("is_nan", "math.is_nan", "debugging.is_nan")(
    make_builder("IsNan", "is_nan", "whether x is NaN"))
is_inf = tf_export("is_inf", "math.is_inf", "debugging.is_inf")(make_builder("IsInf", "is_inf",
                                                     "whether x is +inf or -inf"))
is_finite = tf_export("is_finite", "math.is_finite", "debugging.is_finite")(
    make_builder("IsFinite", "is_finite", "whether x is finite (not NaN or inf)"))
logical_not = tf_export("logical_not", "math.logical_not")(
    make_builder("LogicalNot", "logical_not", "NOT x"))
_conj_op = make_builder("Conj", "conj", "the complex conjugate of x")


@tf_export("conj", "math.conj")
def conj(x, name: Optional[str] = None) -> Tensor:
    """Returns the complex conjugate of `x` element-wise (TF1 `tf.conj`).

    Real tensors are returned unchanged, as in TF.

    Args:
      x: a Tensor.
      name: op name (default "Conj").

    Returns:
      A Tensor of the dtype and shape of `x`.

    Raises:
      TypeError: `x` is neither numeric nor variant.
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex or x.dtype is _dt.variant:
        return _conj_op(x, name=name)
    if x.dtype.is_floating or x.dtype.is_integer:
        return x
    raise TypeError("Expected numeric or variant tensor, got dtype %r" % x.dtype)


@tf_export("abs", "math.abs")
def abs(x, name: Optional[str] = None) -> Tensor:  # noqa: A001 - TF's public name
    """Computes the absolute value of a tensor (TF1 `tf.abs`).

    For complex `x` the result is the real magnitude sqrt(re^2 + im^2) (op ComplexAbs).

    Args:
      x: a Tensor of a signed number type or complex type.
      name: op name (default "Abs").

    Returns:
      A Tensor of the shape of `x`; its dtype is that of `x`, or float32/float64 for
      complex64/complex128. For a SparseTensor, the SparseTensor of its values'
      absolute values.

    Raises:
      TypeError: `x` has an unsupported dtype.
    """
    sparse = _on_sparse_values(x, lambda v: abs(v, name))
    if sparse is not None:
        return sparse
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex:
        return apply_op("ComplexAbs", [x], {"Tout": x.dtype.real_dtype},
                        name=name or "Abs").outputs[0]
    return apply_op("Abs", [x], name=name or "Abs").outputs[0]


@tf_export("round", "math.round")
def round(x, name: Optional[str] = None) -> Tensor:  # noqa: A001 - TF's public name
    """Rounds `x` element-wise to the nearest integer, half to even (TF1 `tf.round`).

    Integer tensors are returned unchanged (no op is added), as in TF.

    Args:
      x: a Tensor of a float, signed integer or complex type.
      name: op name (default "Round").

    Returns:
      A Tensor of the dtype and shape of `x`.
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return apply_op("Round", [x], name=name or "Round").outputs[0]

