"""Elementwise binary math ops, comparisons and logical ops.

NumPy broadcasting, TF dtype rules: both inputs have one dtype (no implicit promotion; a
Python value converts to the other input's dtype). One table row per op: (op type,
NumPy computation, allowed dtypes, output dtype, gradient). Gradients undo broadcasting
with `math_grad_util.unbroadcast`.
"""
from __future__ import annotations

import operator
from typing import Callable, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export  # noqa: F401
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import broadcast_shapes
from tensorweave.ops.math import math_unary
from tensorweave.ops.math.math_grad_util import unbroadcast
from tensorweave.ops.math.math_unary import can_overwrite
from tensorweave.runtime.optimizer import IN_PLACE_ATTR

FLOATS = _dt.FLOATS
COMPLEX = _dt.COMPLEX
FLOAT_COMPLEX = FLOATS + COMPLEX
INTS = _dt.INTEGERS
REAL = FLOATS + INTS
NUMBERS = REAL + COMPLEX


def _broadcast_shape(op):
    return broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)


class _IntegerDivisionByZero(Exception):
    pass


class _UncheckedDivisionByZero(Exception):
    """An integer TruncateDiv or TruncateMod by zero: TF's kernels for these two do not
    check their divisor, and its binary-op kernel reports the failure as an internal
    error (TF 2.21), not Div's and FloorDiv's InvalidArgumentError."""


class _NegativeIntegerPower(Exception):
    pass


def _is_int(a) -> bool:
    return a.dtype.kind in "iu"


def _check_divisor(x, y, error=_IntegerDivisionByZero):
    # as TF, only divisions that are computed fail: an empty result divides nothing
    if np.count_nonzero(y == 0) and np.size(x) != 0:   # (np.any's wrapper: 1.3 us more)
        raise error


# --- NumPy computations (the executor silences NumPy floating-point warnings) ------------
def _truediv(x, y):
    if _is_int(x):
        _check_divisor(x, y)
        return _truncated_quotient(x, y)
    return np.true_divide(x, y)


def _floordiv(x, y):
    if _is_int(x):
        _check_divisor(x, y)
        return np.floor_divide(x, y)
    return np.floor(np.true_divide(x, y))  # TF: floor(x / y), 1/0 -> inf


def _floormod(x, y):
    if _is_int(x):
        _check_divisor(x, y)
        return np.remainder(x, y)
    # TF's float kernel: C's fmod, moved by y when the signs differ (so a zero keeps
    # x's sign, where np.remainder gives y's: floormod(0., -3.) is 0.0, not -0.0)
    with np.errstate(invalid="ignore"):
        t = np.fmod(x, y)
        return np.where((t != 0) & ((y < 0) != (t < 0)), t + y, t).astype(t.dtype, copy=False)


def _truncatediv(x, y):
    if not _is_int(x):
        return np.trunc(np.true_divide(x, y))
    _check_divisor(x, y, _UncheckedDivisionByZero)
    return _truncated_quotient(x, y)


def _truncated_quotient(x, y):
    """x / y rounded toward zero, for integers y holds no zero in."""
    q = np.floor_divide(x, y)
    if x.dtype.kind == "u":
        return q
    # floor and truncation differ where the remainder is nonzero and the signs differ
    fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    return q + fix.astype(q.dtype)


def _truncatemod(x, y):
    if _is_int(x):
        _check_divisor(x, y, _UncheckedDivisionByZero)
    return np.fmod(x, y)


def _div(x, y):
    """TF's Div op: C semantics (truncation) for ints, true division otherwise."""
    return _truediv(x, y)


def _pow(x, y):
    if _is_int(x) and np.any(y < 0):
        raise _NegativeIntegerPower
    return np.power(x, y)


def _squared_difference(x, y):
    d = np.subtract(x, y)
    if d.dtype.kind == "c":
        return d * np.conj(d)
    return d * d


def _div_no_nan(x, y):
    safe = np.where(y == 0, np.ones((), y.dtype), y)
    return np.where(y == 0, np.zeros((), x.dtype), np.true_divide(x, safe))


def _zero_where_x_zero(fn):
    """fn(x, y) where x != 0, else 0 (even where fn(x, y) is NaN or inf): Xlogy, Xdivy..."""
    def compute(x, y):
        return np.where(x == 0, np.zeros((), x.dtype), fn(x, y)).astype(x.dtype, copy=False)
    return compute


def _mul_no_nan(x, y):
    return np.where(y == 0, np.zeros((), x.dtype), x * y).astype(x.dtype, copy=False)


def _add(x, y):
    # Add (the op of imported graphs; tf.add builds AddV2) also concatenates strings
    if getattr(x, "dtype", None) is None or x.dtype.kind in "OSU":
        out = np.add(np.asarray(x, dtype=object), np.asarray(y, dtype=object))
        # two scalars give a bare bytes object: a string tensor's value is an array
        return out if type(out) is np.ndarray else np.array(out, dtype=object)
    return operator.add(x, y)


# --- gradients ----------------------------------------------------------------------------
def _conj(t):
    return math_unary._conj(t)


def _grad_add(op, grad):
    return list(unbroadcast(grad, op.inputs[0], op.inputs[1]))


def _grad_sub(op, grad):
    gx, gy = unbroadcast(grad, op.inputs[0], op.inputs[1])
    return [gx, _negated(gy)]


def _negated(grad):
    """-grad, an IndexedSlices kept sparse (a sparse update stays sparse, as TF's)."""
    return -grad if isinstance(grad, IndexedSlices) else math_unary.negative(grad)


def _grad_mul(op, grad):
    x, y = op.inputs
    gx, _ = unbroadcast(multiply(grad, _conj(y)), x, y)
    _, gy = unbroadcast(multiply(_conj(x), grad), x, y)
    return [gx, gy]


def _grad_quotient(op, grad, divide: Callable):
    """Gradient of the quotient x / y computed by `divide` (realdiv or div_no_nan)."""
    x, y = op.inputs
    cx, cy = _conj(x), _conj(y)
    gx, _ = unbroadcast(divide(grad, cy), x, y)
    _, gy = unbroadcast(multiply(grad, divide(divide(math_unary.negative(cx), cy), cy)), x, y)
    return [gx, gy]


def _grad_realdiv(op, grad):
    return _grad_quotient(op, grad, realdiv)


def _grad_div_no_nan(op, grad):
    return _grad_quotient(op, grad, div_no_nan)


def _grad_floormod(op, grad):
    # x mod y = x - floor(x / y) * y
    x, y = op.inputs
    gx, _ = unbroadcast(grad, x, y)
    _, gy = unbroadcast(multiply(grad, math_unary.negative(floordiv(x, y))), x, y)
    return [gx, gy]


def _grad_pow(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing import indexing_select
    where = indexing_select.where
    x, y = op.inputs
    z = op.outputs[0]
    cx, cy, cz = _conj(x), _conj(y), _conj(z)
    one = convert_to_tensor(1, dtype=y.dtype)
    gx, _ = unbroadcast(multiply(grad, multiply(cy, pow(cx, subtract(cy, one)))), x, y)
    # d/dy x^y = x^y log(x): 0 where x <= 0 (x == 0 for complex), where log is undefined
    if x.dtype.is_complex:
        mask = not_equal(x, convert_to_tensor(0, dtype=x.dtype))
    else:
        mask = greater(x, convert_to_tensor(0, dtype=x.dtype))
    safe_x = where(mask, x, array_ops.ones_like(x))
    log_x = where(mask, math_unary.log(safe_x), array_ops.zeros_like(x))
    _, gy = unbroadcast(multiply(grad, multiply(cz, _conj(log_x))), x, y)
    return [gx, gy]


def _grad_max_min(select_x_fn):
    def grad_fn(op, grad):
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.indexing import indexing_select
        x, y = op.inputs
        where = indexing_select.where
        xmask = select_x_fn(x, y)
        zeros = array_ops.zeros_like(grad)
        gx, _ = unbroadcast(where(xmask, grad, zeros), x, y)
        _, gy = unbroadcast(where(xmask, zeros, grad), x, y)
        return [gx, gy]
    return grad_fn


def _grad_squared_difference(op, grad):
    x, y = op.inputs
    two = convert_to_tensor(2, dtype=grad.dtype)
    if grad.dtype.is_complex:
        # the output |x - y|^2 is real: only the real part of its gradient counts
        # (TF multiplies by the whole complex gradient, which is right only when it is real)
        grad = multiply(convert_to_tensor(0.5, dtype=grad.dtype), add(grad, _conj(grad)))
    d = multiply(multiply(two, grad), subtract(x, y))
    gx, gy = unbroadcast(d, x, y)
    return [gx, math_unary.negative(gy)]


def _grad_truncatemod(op, grad):
    # x mod y = x - trunc(x / y) * y (TF1 has no gradient for TruncateMod: LookupError)
    x, y = op.inputs
    gx, _ = unbroadcast(grad, x, y)
    _, gy = unbroadcast(multiply(grad, math_unary.negative(truncatediv(x, y))), x, y)
    return [gx, gy]


def _grad_xlog(op, grad, fn, dfn_dy):
    """Gradient of fn(x, y) = x * f(y) (0 where x == 0), f' given as dfn_dy(x, y)."""
    from tensorweave.ops.math import math_ops
    x, y = op.inputs
    not_zero_x = math_ops.cast(not_equal(x, convert_to_tensor(0, dtype=x.dtype)), x.dtype)
    gx, _ = unbroadcast(multiply(grad, _conj(fn(not_zero_x, y))), x, y)
    _, gy = unbroadcast(multiply(grad, _conj(dfn_dy(x, y))), x, y)
    return [gx, gy]


def _grad_xlogy(op, grad):
    return _grad_xlog(op, grad, xlogy, xdivy)


def _grad_xlog1py(op, grad):
    return _grad_xlog(op, grad, xlog1py,
                      lambda x, y: xdivy(x, add(y, convert_to_tensor(1, dtype=y.dtype))))


def _grad_xdivy(op, grad):
    return _grad_xlog(op, grad, xdivy,
                      lambda x, y: xdivy(math_unary.negative(x), math_unary.square(y)))


def _grad_mul_no_nan(op, grad):
    x, y = op.inputs
    gx, _ = unbroadcast(_binary("MulNoNan", grad, _conj(y), None, "MulNoNan"), x, y)
    _, gy = unbroadcast(_binary("MulNoNan", _conj(x), grad, None, "MulNoNan"), x, y)
    return [gx, gy]


def _grad_atan2(op, grad):
    # atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
    y, x = op.inputs
    grad_inv = realdiv(grad, add(math_unary.square(x), math_unary.square(y)))
    gy, _ = unbroadcast(multiply(x, grad_inv), y, x)
    _, gx = unbroadcast(multiply(math_unary.negative(y), grad_inv), y, x)
    return [gy, gx]


def _grad_none2(op, grad):
    return [None, None]


class Row(NamedTuple):
    op_type: str
    compute: Callable
    allowed: Optional[Sequence[_dt.DType]]  # None: any type
    grad: Optional[Callable]  # None: not differentiable
    out: Optional[_dt.DType] = None  # fixed output dtype (bool for predicates)
    attrs: Optional[dict] = None


_COMPARABLE = REAL
# Arithmetic and ordering ops use Python's operators: on arrays they are the same ufuncs,
# on NumPy scalars (loop counters, scalar bookkeeping) the scalar fast path is ~15x cheaper
# than a ufunc call.
_TABLE = [
    Row("AddV2", operator.add, NUMBERS, _grad_add),
    Row("Add", _add, (_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64, _dt.uint8,
                       _dt.int8, _dt.int16, _dt.int32, _dt.int64) + COMPLEX + (_dt.string,),
         _grad_add),
    Row("Sub", operator.sub, NUMBERS, _grad_sub),
    Row("Mul", operator.mul, NUMBERS, _grad_mul),
    Row("Div", _div, NUMBERS, _grad_realdiv),
    Row("RealDiv", _truediv, NUMBERS, _grad_realdiv),
    Row("DivNoNan", _div_no_nan, FLOAT_COMPLEX, _grad_div_no_nan),
    Row("FloorDiv", _floordiv, REAL, _grad_none2),
    Row("FloorMod", _floormod, REAL, _grad_floormod),
    Row("TruncateDiv", _truncatediv, REAL, _grad_none2),
    Row("TruncateMod", _truncatemod, FLOATS + (_dt.int32, _dt.int64), _grad_truncatemod),
    Row("Pow", _pow, FLOATS + (_dt.int8, _dt.int16, _dt.int32, _dt.int64) + COMPLEX,
         _grad_pow),
    Row("Maximum", np.maximum, REAL, _grad_max_min(lambda x, y: greater_equal(x, y))),
    Row("Minimum", np.minimum, REAL, _grad_max_min(lambda x, y: less_equal(x, y))),
    Row("SquaredDifference", _squared_difference,
         FLOATS + (_dt.int32, _dt.int64) + COMPLEX, _grad_squared_difference),
    Row("Atan2", np.arctan2, FLOATS, _grad_atan2),
    Row("Xlogy", _zero_where_x_zero(lambda x, y: x * np.log(y)), FLOAT_COMPLEX, _grad_xlogy),
    Row("Xdivy", _zero_where_x_zero(lambda x, y: x / y), FLOAT_COMPLEX, _grad_xdivy),
    Row("Xlog1py", _zero_where_x_zero(lambda x, y: x * np.log1p(y)), FLOAT_COMPLEX,
         _grad_xlog1py),
    Row("MulNoNan", _mul_no_nan, FLOAT_COMPLEX, _grad_mul_no_nan),
    Row("NextAfter", np.nextafter, (_dt.float32, _dt.float64), None),
    Row("Equal", np.equal, None, None, _dt.bool, {"incompatible_shape_error": True}),
    Row("NotEqual", np.not_equal, None, None, _dt.bool, {"incompatible_shape_error": True}),
    Row("Less", operator.lt, _COMPARABLE, None, _dt.bool),
    Row("LessEqual", operator.le, _COMPARABLE, None, _dt.bool),
    Row("Greater", operator.gt, _COMPARABLE, None, _dt.bool),
    Row("GreaterEqual", operator.ge, _COMPARABLE, None, _dt.bool),
    Row("LogicalAnd", np.logical_and, (), None, _dt.bool),
    Row("LogicalOr", np.logical_or, (), None, _dt.bool),
]


def _equality_shape(op):
    try:
        return _broadcast_shape(op)
    except ValueError:
        if op._get_attr("incompatible_shape_error"):
            raise
        from tensorweave.framework.shapes import unknown_shape
        return unknown_shape()


def _make_kernel(compute: Callable) -> Callable:
    def run(ctx, x, y):
        try:
            return compute(x, y)
        except _IntegerDivisionByZero:
            raise errors.InvalidArgumentError(None, ctx.op, "Integer division by zero") \
                from None
        except _UncheckedDivisionByZero:
            raise errors.InternalError(
                None, ctx.op, "Unexpected error in binary operator (only integer div and "
                "mod should have errors)") from None
        except _NegativeIntegerPower:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Integers to negative integer powers are not allowed") from None
        except ValueError:
            if _broadcastable(x, y):
                raise
            raise errors.InvalidArgumentError(None, ctx.op, _incompatible(x, y)) from None
    return run


def _broadcastable(x, y) -> bool:
    try:
        np.broadcast_shapes(np.shape(x), np.shape(y))
        return True
    except ValueError:
        return False


def _incompatible(x, y) -> str:
    return "Incompatible shapes: [%s] vs. [%s]" % (",".join(map(str, np.shape(x))),
                                                  ",".join(map(str, np.shape(y))))


# the ufuncs of rows whose kernels may write their result into an input array the plan
# marked as the node's own (runtime/optimizer.mark_temporaries; floats only)
_IN_PLACE_UFUNCS = {operator.add: np.add, operator.sub: np.subtract,
                    operator.mul: np.multiply, _truediv: np.true_divide,
                    np.maximum: np.maximum, np.minimum: np.minimum}


def _make_in_place_kernel(ufunc, plain: Callable) -> Callable:
    """The KernelDef.in_place variant of a binary row's kernel `plain`: the node's attr
    names the input it owns."""
    def run(ctx, x, y):
        if ctx.attrs[IN_PLACE_ATTR] == 0:
            if can_overwrite(x, y):
                return ufunc(x, y, out=x)
        elif can_overwrite(y, x):
            return ufunc(x, y, out=y)
        return plain(ctx, x, y)
    return run


def _make_equality_kernel(compute: Callable) -> Callable:
    def run(ctx, x, y):
        if not _broadcastable(x, y):
            if ctx.attrs["incompatible_shape_error"]:
                raise errors.InvalidArgumentError(None, ctx.op, _incompatible(x, y))
            # TF: incompatible shapes compare as "not equal" (a scalar)
            return np.asarray(compute is np.not_equal)
        return compute(x, y)
    return run


# TF's OpDef defaults T here only; a SavedModel's functions omit attrs left at defaults
_DEFAULT_T = {"NextAfter": _dt.float32}


def register_rows(rows: Sequence[Row]) -> None:
    """Registers each row's op, kernel and gradient (or not_differentiable)."""
    for row in rows:
        attrs = dict(row.attrs or {})
        if row.allowed == ():
            register_op(row.op_type, inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                        shape=_broadcast_shape)
        else:
            attrs["T"] = TypeAttr(row.allowed, default=_DEFAULT_T.get(row.op_type, REQUIRED))
            register_op(row.op_type, inputs=["x: T", "y: T"],
                        outputs=["z: bool" if row.out is _dt.bool else "z: T"], attrs=attrs,
                        shape=_equality_shape if row.attrs else _broadcast_shape)
        if row.attrs:
            kernel(row.op_type)(_make_equality_kernel(row.compute))
        else:
            plain = _make_kernel(row.compute)
            ufunc = _IN_PLACE_UFUNCS.get(row.compute)
            kernel(row.op_type, in_place=None if ufunc is None else
                   _make_in_place_kernel(ufunc, plain))(plain)
        if row.grad is None:
            not_differentiable(row.op_type)
        else:
            gradient(row.op_type)(row.grad)


register_rows(_TABLE)


# --- builders -----------------------------------------------------------------------------
def _binary(op_type: str, x, y, name: Optional[str], default_name: str, attrs=None) -> Tensor:
    return apply_op(op_type, [x, y], attrs, name=name or default_name).outputs[0]


def _is_string(v) -> bool:
    d = getattr(v, "dtype", None)
    if isinstance(d, _dt.DType):
        return d is _dt.string
    if isinstance(v, (str, bytes)):
        return True
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "OSU"
    return False


@tf_export("add", "math.add")
def add(x, y, name: Optional[str] = None) -> Tensor:
    """Returns x + y element-wise, with NumPy broadcasting (TF1 `tf.add`).

    Strings are concatenated (op Add); numbers use op AddV2.

    Args:
      x: a Tensor of a number type or string.
      y: a Tensor of the same dtype as `x` (a Python value converts to it).
      name: op name (default "Add").

    Returns:
      A Tensor of the dtype of `x`.

    Raises:
      TypeError: `x` and `y` have different dtypes.
      ValueError: the shapes do not broadcast.
    """
    op_type = "Add" if _is_string(x) or _is_string(y) else "AddV2"
    return _binary(op_type, x, y, name, "Add")


def _doc(what: str, tf_name: str, default_name: str, out: str = "the dtype of `x`",
         types: str = "a number type") -> str:
    return """Returns {what} element-wise, with NumPy broadcasting (TF1 `tf.{tf_name}`).

    Args:
      x: a Tensor of {types}.
      y: a Tensor of the same dtype as `x` (a Python value converts to it).
      name: op name (default "{default_name}").

    Returns:
      A Tensor of {out}.

    Raises:
      TypeError: `x` and `y` have different or unsupported dtypes.
      ValueError: the shapes do not broadcast.
    """.format(what=what, tf_name=tf_name, default_name=default_name, out=out, types=types)


def _builder(op_type: str, tf_name: str, what: str, default_name: Optional[str] = None,
             **doc_kw) -> Callable:
    default_name = default_name or op_type

    def build(x, y, name: Optional[str] = None) -> Tensor:
        return _binary(op_type, x, y, name, default_name)
    build.__name__ = build.__qualname__ = tf_name
    build.__doc__ = _doc(what, tf_name, default_name, **doc_kw)
    return build


_BOOL_OUT = {"out": "bool"}
xlogy = tf_export("math.xlogy")(_builder("Xlogy", "math.xlogy", "x * log(y), 0 where x == 0",
                                         types="a float or complex type"))
xdivy = tf_export("math.xdivy")(_builder("Xdivy", "math.xdivy", "x / y, 0 where x == 0",
                                         types="a float or complex type"))
xlog1py = tf_export("math.xlog1py")(_builder("Xlog1py", "math.xlog1py",
                                             "x * log1p(y), 0 where x == 0",
                                             types="a float or complex type"))

subtract = tf_export("subtract", "math.subtract")(_builder("Sub", "subtract", "x - y"))
multiply = tf_export("multiply", "math.multiply")(_builder("Mul", "multiply", "x * y"))
realdiv = tf_export("realdiv")(_builder("RealDiv", "realdiv", "x / y (ints truncate)"))
floordiv = tf_export("floordiv", "math.floordiv")(
    _builder("FloorDiv", "floordiv", "floor(x / y)", "floordiv"))
floor_div = tf_export("floor_div")(_builder("FloorDiv", "floor_div", "floor(x / y)"))
floormod = tf_export("floormod", "math.floormod", "mod", "math.mod")(
    _builder("FloorMod", "floormod", "x - floor(x / y) * y (the result has the sign of y)"))
truncatediv = tf_export("truncatediv")(
    _builder("TruncateDiv", "truncatediv", "x / y rounded toward zero"))
truncatemod = tf_export("truncatemod")(
    _builder("TruncateMod", "truncatemod", "the C remainder of x / y (sign of x)"))
pow = tf_export("pow", "math.pow")(_builder("Pow", "pow", "x ** y", "Pow"))  # noqa: A001
maximum = tf_export("maximum", "math.maximum")(_builder("Maximum", "maximum", "max(x, y)"))
minimum = tf_export("minimum", "math.minimum")(_builder("Minimum", "minimum", "min(x, y)"))
squared_difference = tf_export("squared_difference", "math.squared_difference")(
    _builder("SquaredDifference", "squared_difference", "(x - y) * conj(x - y)"))
equal = tf_export("equal", "math.equal")(
    _builder("Equal", "equal", "x == y", types="any dtype", **_BOOL_OUT))
not_equal = tf_export("not_equal", "math.not_equal")(
    _builder("NotEqual", "not_equal", "x != y", types="any dtype", **_BOOL_OUT))
less = tf_export("less", "math.less")(_builder("Less", "less", "x < y", **_BOOL_OUT))
less_equal = tf_export("less_equal", "math.less_equal")(
    _builder("LessEqual", "less_equal", "x <= y", **_BOOL_OUT))
greater = tf_export("greater", "math.greater")(
    _builder("Greater", "greater", "x > y", **_BOOL_OUT))
greater_equal = tf_export("greater_equal", "math.greater_equal")(
    _builder("GreaterEqual", "greater_equal", "x >= y", **_BOOL_OUT))
logical_and = tf_export("logical_and", "math.logical_and")(
    _builder("LogicalAnd", "logical_and", "x AND y", types="bool", **_BOOL_OUT))
logical_or = tf_export("logical_or", "math.logical_or")(
    _builder("LogicalOr", "logical_or", "x OR y", types="bool", **_BOOL_OUT))


@tf_export("logical_xor", "math.logical_xor")
def logical_xor(x, y, name: str = "LogicalXor") -> Tensor:
    """Returns x XOR y element-wise, with broadcasting (TF1 `tf.math.logical_xor`):
    (x OR y) AND NOT (x AND y).

    Args:
      x: a bool Tensor.
      y: a bool Tensor.
      name: op name.

    Returns:
      A bool Tensor.
    """
    return logical_and(logical_or(x, y), math_unary.logical_not(logical_and(x, y)),
                       name=name)


# --- division with TF1's Python semantics -----------------------------------------------
# int8/int16/uint8/uint16 divide in float32; wider ints in float64 (as TF's truediv).
_TRUEDIV_FLOAT = {_dt.int8: _dt.float32, _dt.uint8: _dt.float32, _dt.int16: _dt.float32,
                  _dt.uint16: _dt.float32, _dt.int32: _dt.float64, _dt.uint32: _dt.float64,
                  _dt.int64: _dt.float64, _dt.uint64: _dt.float64}


def _tensor_like(v) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


def _convert_pair(x, y):
    """Converts x, then y with x's dtype (or x with y's when only y is a tensor)."""
    if not _tensor_like(x) and _tensor_like(y):
        y = convert_to_tensor(y, name="y")
        x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
    else:
        x = convert_to_tensor(x, name="x")
        if not _tensor_like(y):
            y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        else:
            y = convert_to_tensor(y, name="y")
    return x, y


def _convert_same_dtype_pair(x, y):
    """`_convert_pair`, with TF's TypeError when the two dtypes differ."""
    x, y = _convert_pair(x, y)
    if x.dtype is not y.dtype:
        raise TypeError("`x` and `y` must have the same dtype, got %r != %r."
                        % (x.dtype, y.dtype))
    return x, y


@tf_export("truediv", "math.truediv")
def truediv(x, y, name: Optional[str] = None) -> Tensor:
    """Divides x / y elementwise with Python 3 semantics (TF1 `tf.truediv`).

    Integer inputs are cast to floating point first: int8/int16/uint8/uint16 to float32,
    int32/int64/uint32/uint64 to float64 (as TF does).

    Args:
      x: a Tensor of a number type.
      y: a Tensor of the same dtype as `x`.
      name: op name (default "truediv").

    Returns:
      A Tensor of a floating-point or complex type.

    Raises:
      TypeError: `x` and `y` have different dtypes, or are bool.
    """
    g = _graph.get_default_graph()
    with g.name_scope(name or "truediv") as scope:
        x, y = _convert_same_dtype_pair(x, y)
        if not (x.dtype.is_floating or x.dtype.is_integer or x.dtype.is_complex):
            raise TypeError("Invalid dtype %r in __truediv__. Expected one of {%s}."
                            % (x.dtype, ", ".join(repr(d) for d in NUMBERS)))
        x, y = _ints_as_floats(x, y)
        return apply_op("RealDiv", [x, y], name=scope).outputs[0]


def _ints_as_floats(x: Tensor, y: Tensor) -> Tuple[Tensor, Tensor]:
    """x and y cast to the float type TF divides their integer type in (_TRUEDIV_FLOAT),
    or unchanged."""
    target = _TRUEDIV_FLOAT.get(x.dtype)
    if target is None:
        return x, y
    from tensorweave.ops.math import math_ops
    return math_ops.cast(x, target), math_ops.cast(y, target)


@tf_export("div_no_nan", "math.divide_no_nan")
def div_no_nan(x, y, name: Optional[str] = None) -> Tensor:
    """Computes x / y elementwise, 0 where y is 0 (TF1 `tf.div_no_nan`).

    Integer inputs are cast to floating point first, as `truediv` does.

    Args:
      x: a Tensor of a number type.
      y: a Tensor of the same dtype as `x`.
      name: op name (default "div_no_nan").

    Returns:
      A Tensor of a floating-point or complex type.

    Raises:
      TypeError: `x` and `y` have different dtypes, or a type DivNoNan lacks.
    """
    g = _graph.get_default_graph()
    with g.name_scope(name or "div_no_nan") as scope:
        x, y = _ints_as_floats(*_convert_same_dtype_pair(x, y))
        return apply_op("DivNoNan", [x, y], name=scope).outputs[0]


@tf_export("divide", "math.divide")
def divide(x, y, name: Optional[str] = None):
    """Computes Python style division of `x` by `y` (TF1 `tf.divide`): `x / y`.

    Args:
      x: a Tensor or value.
      y: a Tensor or value.
      name: op name (default "truediv").

    Returns:
      A Tensor (see `truediv`).

    Raises:
      TypeError: `x` and `y` have different dtypes, or are bool.
    """
    return truediv(x, y, name=name)


@tf_export("div")
def div(x, y, name: Optional[str] = None) -> Tensor:
    """Divides x / y elementwise with Python 2 semantics (TF1 `tf.div`, deprecated):
    floor division for integers, real division for floating-point and complex types.

    Args:
      x: a Tensor of a number type.
      y: a Tensor of the same dtype as `x`.
      name: op name (default "div").

    Returns:
      A Tensor of the dtype of `x`.

    Raises:
      TypeError: `x` and `y` have different dtypes.
    """
    g = _graph.get_default_graph()
    with g.name_scope(name or "div") as scope:
        x, y = _convert_same_dtype_pair(x, y)
        op_type = "RealDiv" if x.dtype.is_floating or x.dtype.is_complex else "FloorDiv"
        return apply_op(op_type, [x, y], name=scope).outputs[0]


@tf_export("atan2", "math.atan2")
def atan2(y, x, name: Optional[str] = None) -> Tensor:
    """Computes the arctangent of y / x element-wise, in the quadrant of (x, y)
    (TF1 `tf.atan2`).

    Args:
      y: a float Tensor.
      x: a Tensor of the dtype of `y` (a Python value converts to it).
      name: op name (default "Atan2").

    Returns:
      A Tensor of the dtype of `y`, in [-pi, pi].

    Raises:
      TypeError: `y` and `x` have different or non-float dtypes.
      ValueError: the shapes do not broadcast.
    """
    return _binary("Atan2", y, x, name, "Atan2")


@tf_export("math.multiply_no_nan")
def multiply_no_nan(x, y, name: Optional[str] = None) -> Tensor:
    """Computes x * y element-wise, 0 where y is 0 even if x is NaN or infinite
    (TF1 `tf.math.multiply_no_nan`).

    Args:
      x: a float or complex Tensor.
      y: a Tensor of the dtype of `x`.
      name: op name (default "multiply_no_nan").

    Returns:
      A Tensor of the dtype of `x`.

    Raises:
      TypeError: `x` and `y` have different or unsupported dtypes.
      ValueError: the shapes do not broadcast.
    """
    return _binary("MulNoNan", x, y, name, "multiply_no_nan")


@tf_export("math.reciprocal_no_nan")
def reciprocal_no_nan(x, name: Optional[str] = None) -> Tensor:
    """Computes 1 / x element-wise, 0 where x is 0 (TF1 `tf.math.reciprocal_no_nan`).

    Args:
      x: a float or complex Tensor.
      name: op name (default "reciprocal_no_nan").

    Returns:
      A Tensor of the dtype and shape of `x`.

    Raises:
      TypeError: `x` is not a float or complex tensor.
    """
    x = convert_to_tensor(x, name="x")
    if not (x.dtype.is_floating or x.dtype.is_complex):
        raise TypeError("Value passed to parameter 'x' has DataType %s not in list of "
                        "allowed values: float16, float32, bfloat16, float64, complex64, "
                        "complex128" % x.dtype.name)
    return div_no_nan(convert_to_tensor(1, dtype=x.dtype), x,
                      name=name or "reciprocal_no_nan")


@tf_export("math.nextafter")
def nextafter(x1, x2, name: Optional[str] = None) -> Tensor:
    """Returns the next representable value of `x1` in the direction of `x2`, element-wise
    (TF1 `tf.math.nextafter`).

    Args:
      x1: a float32 or float64 Tensor.
      x2: a Tensor of the dtype of `x1`.
      name: op name (default "NextAfter").

    Returns:
      A Tensor of the dtype of `x1` and the broadcast shape.

    Raises:
      TypeError: unsupported or mismatched dtypes.
      ValueError: the shapes do not broadcast.
    """
    return _binary("NextAfter", x1, x2, name, "NextAfter")
