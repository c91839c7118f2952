"""The assert_* family (TF1 `tf.assert_equal`, `tf.debugging.assert_rank`, ...).

TF1 semantics: each assert returns an Operation to use in `tf.control_dependencies`.
When the values are known at build time and the condition fails, InvalidArgumentError
is raised right away; statically incompatible shapes raise ValueError; static rank and
dtype failures raise ValueError / TypeError. Otherwise the check runs with the step.

The element-wise comparison, the tolerance test and the rank test each run inside one
private assert kernel (`_AssertCompare`, `_AssertNear`, `_AssertRank`) with NumPy, rather
than as Equal + All + Assert, so an assert costs one kernel call. Their failure message
is the same "assertion failed: [..] [..]" as TF's Assert op.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Operation, Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import (REQUIRED, TypeAttr, TypeListAttr, kernel,
                                             not_differentiable, register_op)
from tensorweave.framework.shapes import broadcast_shapes
from tensorweave.ops.debug.debug_ops import assertion_failed

_ORDERED = (_dt.float32, _dt.float64, _dt.int32, _dt.uint8, _dt.int16, _dt.int8, _dt.int64,
            _dt.bfloat16, _dt.uint16, _dt.float16, _dt.uint32, _dt.uint64)
_COMPARISONS = {"equal": ("==", np.equal), "not_equal": ("!=", np.not_equal),
                "less": ("<", np.less), "less_equal": ("<=", np.less_equal),
                "greater": (">", np.greater), "greater_equal": (">=", np.greater_equal)}


def _no_op(name: str) -> Operation:
    from tensorweave.ops.control_flow import structure
    return structure.no_op(name=name)


def _message_prefix(message) -> str:
    return "%s.  " % message if message else ""


def _broadcast_shape_fn(op):
    broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)
    return []


def _broadcast_or_fail(x, y, fn):
    try:
        return fn(x, y)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, "Incompatible shapes: [%s] vs. [%s]"
            % (",".join(map(str, np.shape(x))), ",".join(map(str, np.shape(y))))) from None


# --- _AssertCompare --------------------------------------------------------------------
register_op("_AssertCompare", inputs=["x: T", "y: T", "data: Tdata"],
            attrs={"T": TypeAttr(), "Tdata": TypeListAttr(), "comparison": REQUIRED,
                   "summarize": 3},
            shape=_broadcast_shape_fn, stateful=True)


@kernel("_AssertCompare")
def _assert_compare_kernel(ctx, x, y, *data):
    fn = _COMPARISONS[ctx.attrs["comparison"]][1]
    if not np.all(_broadcast_or_fail(x, y, fn)):
        raise assertion_failed(data, ctx.attrs["summarize"])
    return None


not_differentiable("_AssertCompare")


# --- _AssertNear -------------------------------------------------------------------------
register_op("_AssertNear", inputs=["x: T", "y: T", "rtol: T", "atol: T", "data: Tdata"],
            attrs={"T": TypeAttr(), "Tdata": TypeListAttr(), "summarize": 3},
            shape=_broadcast_shape_fn, stateful=True)


@kernel("_AssertNear")
def _assert_near_kernel(ctx, x, y, rtol, atol, *data):
    diff = np.abs(_broadcast_or_fail(x, y, np.subtract))
    if not np.all(diff <= atol + rtol * np.abs(y)):
        raise assertion_failed(data, ctx.attrs["summarize"])
    return None


not_differentiable("_AssertNear")


# --- _AssertRank -------------------------------------------------------------------------
# mode: "equal" / "at_least" compare rank(x) with ranks[0]; "in" with any of `ranks`.
# shape_index >= 0: the run-time shape of x is inserted there into the printed data.
register_op("_AssertRank", inputs=["x: T", "ranks: N * int32", "data: Tdata"],
            attrs={"T": TypeAttr(), "Tdata": TypeListAttr(), "mode": REQUIRED,
                   "shape_index": -1, "summarize": 3},
            shape=lambda op: [], stateful=True)


@kernel("_AssertRank")
def _assert_rank_kernel(ctx, x, *rest):
    attrs = ctx.attrs
    n = attrs["N"]
    ranks, data = rest[:n], list(rest[n:])
    for r in ranks:
        if np.ndim(r) != 0:
            raise assertion_failed(["Rank must be a scalar. Received rank: ", r],
                                   attrs["summarize"])
    have = np.ndim(x)
    mode = attrs["mode"]
    if mode == "equal":
        ok = have == int(ranks[0])
    elif mode == "at_least":
        ok = have >= int(ranks[0])
    else:
        ok = any(have == int(r) for r in ranks)
    if not ok:
        if attrs["shape_index"] >= 0:
            data.insert(attrs["shape_index"], np.array(np.shape(x), dtype=np.int32))
        raise assertion_failed(data, attrs["summarize"])
    return None


not_differentiable("_AssertRank")


# --- static checks -----------------------------------------------------------------------
def _static_str(d) -> str:
    if isinstance(d, Tensor):
        v = tensor_util.constant_value(d)
        return str(d) if v is None else str(v)
    return str(d)


def _assert_static(condition, data) -> None:
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(_static_str(d) for d in data))


def _summarize(summarize) -> int:
    return 3 if summarize is None else int(summarize)


def _binary_assert(comparison: str, opname: str, x, y, data, summarize, message,
                   name) -> Operation:
    sym, static_fn = _COMPARISONS[comparison]
    with name_scope(name, opname, [x, y, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if comparison not in ("equal", "not_equal") and x.dtype.base_dtype not in _ORDERED:
            # TF compares with tf.less and its kin, which take real numbers only
            raise TypeError("Value passed to parameter 'x' has DataType %s not in list of "
                            "allowed values: %s" % (x.dtype.base_dtype.name,
                                                    ", ".join(d.name for d in _ORDERED)))
        if data is None:
            data = ["Condition x %s y did not hold element-wise:" % sym,
                    "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
        if message is not None:
            data = [message] + list(data)
        op = apply_op("_AssertCompare", [x, y, list(data)],
                      {"comparison": comparison, "summarize": _summarize(summarize)},
                      name="Assert")
        xs, ys = tensor_util.constant_value(x), tensor_util.constant_value(y)
        if xs is not None and ys is not None:
            _assert_static(np.all(static_fn(xs, ys)), data)
        return op


def _doc(template: str, sym: str):
    """Decorator setting a family member's docstring: `template` with its comparison."""
    def deco(fn):
        fn.__doc__ = template % sym
        return fn
    return deco


_BINARY_DOC = """Asserts `x %s y` element-wise (with broadcasting).

    Args:
      x: a Tensor.
      y: a Tensor of the same dtype, broadcastable with `x`.
      data: tensors to print on failure (default: the condition, x and y).
      summarize: how many entries of each tensor to print (default 3).
      message: prefix of the error message.
      name: name scope.

    Returns:
      An Operation to run (e.g. in `tf.control_dependencies`).

    Raises:
      InvalidArgumentError: the condition fails and `x`, `y` are known at build time
        (else at run time).
      ValueError: `x` and `y` have incompatible static shapes.
    """


@tf_export("assert_equal", "debugging.assert_equal")
@_doc(_BINARY_DOC, "==")
def assert_equal(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    with name_scope(name, "assert_equal", [x, y, data]):
        if x is y:
            return _no_op("NoOp")
    # a second scope of the same name, as TF's (assert_equal_1/... for the first call)
    return _binary_assert("equal", "assert_equal", x, y, data, summarize, message, name)


@tf_export("assert_none_equal", "debugging.assert_none_equal")
@_doc(_BINARY_DOC, "!=")
def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    return _binary_assert("not_equal", "assert_none_equal", x, y, data, summarize, message,
                          name)


@tf_export("assert_less", "debugging.assert_less")
@_doc(_BINARY_DOC, "<")
def assert_less(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    return _binary_assert("less", "assert_less", x, y, data, summarize, message, name)


@tf_export("assert_less_equal", "debugging.assert_less_equal")
@_doc(_BINARY_DOC, "<=")
def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    return _binary_assert("less_equal", "assert_less_equal", x, y, data, summarize, message,
                          name)


@tf_export("assert_greater", "debugging.assert_greater")
@_doc(_BINARY_DOC, ">")
def assert_greater(x, y, data=None, summarize=None, message=None, name=None) -> Operation:
    return _binary_assert("greater", "assert_greater", x, y, data, summarize, message, name)


@tf_export("assert_greater_equal", "debugging.assert_greater_equal")
@_doc(_BINARY_DOC, ">=")
def assert_greater_equal(x, y, data=None, summarize=None, message=None,
                         name=None) -> Operation:
    return _binary_assert("greater_equal", "assert_greater_equal", x, y, data, summarize,
                          message, name)


def _sign_assert(opname: str, sym: str, zero_first: bool, strict: bool, x, data, summarize,
                 message, name) -> Operation:
    message = _message_prefix(message)
    with name_scope(name, opname, [x, data]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message, "Condition x %s 0 did not hold element-wise:" % sym,
                    "x (%s) = " % x.name, x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        compare = assert_less if strict else assert_less_equal
        a, b = (zero, x) if zero_first else (x, zero)
        return compare(a, b, data=data, summarize=summarize)


_SIGN_DOC = """Asserts `x %s 0` element-wise.

    Args:
      x: a numeric Tensor.
      data: tensors to print on failure (default: the condition and x).
      summarize: how many entries of each tensor to print (default 3).
      message: prefix of the error message.
      name: name scope.

    Returns:
      An Operation to run (e.g. in `tf.control_dependencies`).

    Raises:
      InvalidArgumentError: the condition fails and `x` is known at build time (else at
        run time).
    """


@tf_export("assert_positive", "debugging.assert_positive")
@_doc(_SIGN_DOC, ">")
def assert_positive(x, data=None, summarize=None, message=None, name=None) -> Operation:
    return _sign_assert("assert_positive", ">", True, True, x, data, summarize, message, name)


@tf_export("assert_negative", "debugging.assert_negative")
@_doc(_SIGN_DOC, "<")
def assert_negative(x, data=None, summarize=None, message=None, name=None) -> Operation:
    return _sign_assert("assert_negative", "<", False, True, x, data, summarize, message,
                        name)


@tf_export("assert_non_negative", "debugging.assert_non_negative")
@_doc(_SIGN_DOC, ">=")
def assert_non_negative(x, data=None, summarize=None, message=None, name=None) -> Operation:
    return _sign_assert("assert_non_negative", ">=", True, False, x, data, summarize,
                        message, name)


@tf_export("assert_non_positive", "debugging.assert_non_positive")
@_doc(_SIGN_DOC, "<=")
def assert_non_positive(x, data=None, summarize=None, message=None, name=None) -> Operation:
    return _sign_assert("assert_non_positive", "<=", False, False, x, data, summarize,
                        message, name)


@tf_export("assert_near", "debugging.assert_near")
def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None) -> Operation:
    """Asserts `|x - y| <= atol + rtol * |y|` element-wise (checked at run time).

    Args:
      x: a floating or complex Tensor.
      y: a Tensor of the same dtype, broadcastable with `x`.
      rtol: relative tolerance (default 10 * eps of the dtype).
      atol: absolute tolerance (default 10 * eps of the dtype).
      data: tensors to print on failure.
      summarize: how many entries of each tensor to print (default 3).
      message: prefix of the error message.
      name: name scope.

    Returns:
      An Operation to run (e.g. in `tf.control_dependencies`).

    Raises:
      ValueError: `x` and `y` have incompatible static shapes.
    """
    message = _message_prefix(message)
    with name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        eps = np.finfo(x.dtype.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol",
                                 dtype=x.dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol",
                                 dtype=x.dtype)
        if data is None:
            data = [message, "x and y not equal to tolerance rtol = %s, atol = %s"
                    % (rtol, atol), "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
        return apply_op("_AssertNear", [x, y, rtol, atol, list(data)],
                        {"summarize": _summarize(summarize)}, name="Assert")


# --- ranks -------------------------------------------------------------------------------
_X_SHAPE = object()  # where the run-time shape of x goes in the printed data


def _rank_assert(mode: str, x, ranks, data, summarize, message, scope_name) -> Operation:
    """Static rank check if possible, else the _AssertRank op. Runs inside the scope."""
    phrase = {"equal": "must have rank", "at_least": "must have rank at least",
              "in": "must have rank in"}[mode]
    message = _message_prefix(message)
    x = convert_to_tensor(x, name="x")
    ranks = [convert_to_tensor(r, name="rank") for r in ranks]
    if data is None:
        data = [message, "Tensor %s %s" % (x.name, phrase)] + ranks + \
            ["Received shape: ", _X_SHAPE]
    for r in ranks:
        assert_type(r, _dt.int32)
        if r.shape.ndims is not None and r.shape.ndims != 0:
            raise ValueError("Rank must be a scalar.")
    statics = [tensor_util.constant_value(r) for r in ranks]
    x_rank = x.shape.ndims
    if all(s is not None for s in statics) and x_rank is not None:
        wanted = [int(s) for s in statics]
        ok = {"equal": x_rank == wanted[0], "at_least": x_rank >= wanted[0],
              "in": x_rank in wanted}[mode]
        if not ok:
            want = tuple(wanted) if mode == "in" else wanted[0]
            raise ValueError("%sTensor %s %s %s.  Received rank %d, shape %s"
                             % (message, x.name, phrase, want, x_rank, x.shape))
        return _no_op("static_checks_determined_all_ok")
    data = list(data)
    shape_index = data.index(_X_SHAPE) if any(d is _X_SHAPE for d in data) else -1
    if shape_index >= 0:
        del data[shape_index]
    return apply_op("_AssertRank", [x, ranks, data],
                    {"mode": mode, "shape_index": shape_index,
                     "summarize": _summarize(summarize)}, name="Assert")


@tf_export("assert_rank", "debugging.assert_rank")
def assert_rank(x, rank, data=None, summarize=None, message=None, name=None) -> Operation:
    """Asserts that `x` has rank `rank`.

    Args:
      x: a Tensor.
      rank: a scalar int32 (Tensor).
      data: tensors to print on failure (default: the requirement and x's shape).
      summarize: how many entries of each tensor to print (default 3).
      message: prefix of the error message.
      name: name scope.

    Returns:
      An Operation (a NoOp when the check passed at build time).

    Raises:
      ValueError: the static rank differs, or `rank` is not a scalar.
      TypeError: `rank` is not int32.
    """
    with name_scope(name, "assert_rank", [x, rank] + list(data or [])):
        return _rank_assert("equal", x, [rank], data, summarize, message, name)


@tf_export("assert_rank_at_least", "debugging.assert_rank_at_least")
def assert_rank_at_least(x, rank, data=None, summarize=None, message=None,
                         name=None) -> Operation:
    """Asserts that `x` has rank `rank` or more (see `assert_rank` for the arguments).

    Returns:
      An Operation (a NoOp when the check passed at build time).

    Raises:
      ValueError: the static rank is smaller, or `rank` is not a scalar.
    """
    with name_scope(name, "assert_rank_at_least", [x, rank] + list(data or [])):
        return _rank_assert("at_least", x, [rank], data, summarize, message, name)


@tf_export("assert_rank_in", "debugging.assert_rank_in")
def assert_rank_in(x, ranks, data=None, summarize=None, message=None,
                   name=None) -> Operation:
    """Asserts that the rank of `x` is one of `ranks` (scalar int32 values).

    Returns:
      An Operation (a NoOp when the check passed at build time).

    Raises:
      ValueError: the static rank is not in `ranks`, or a rank is not a scalar.
    """
    with name_scope(name, "assert_rank_in", [x] + list(ranks) + list(data or [])):
        return _rank_assert("in", x, list(ranks), data, summarize, message, name)


# --- dtypes and static properties ----------------------------------------------------
@tf_export("assert_type", "debugging.assert_type")
def assert_type(tensor, tf_type, message=None, name=None) -> Operation:
    """Statically asserts that `tensor` has dtype `tf_type`.

    Returns:
      A NoOp.

    Raises:
      TypeError: the dtype differs.
    """
    tf_type = _dt.as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        from tensorweave.framework.sparse_tensor import SparseTensor
        if not isinstance(tensor, SparseTensor):  # a SparseTensor's dtype is its values'
            tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype is not tf_type:
            raise TypeError("%s%s must be of type %r; got %r" % (
                _message_prefix(message), getattr(tensor, "name", "tensor"), tf_type,
                tensor.dtype))
        return _no_op("statically_determined_correct_type")


@tf_export("assert_integer", "debugging.assert_integer")
def assert_integer(x, message=None, name=None) -> Operation:
    """Statically asserts that `x` has an integer dtype.

    Returns:
      A NoOp.

    Raises:
      TypeError: `x` is not of an integer dtype.
    """
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError('%sExpected "x" to be integer type.  Found: %s of dtype %s'
                            % (_message_prefix(message), x.name, x.dtype))
        return _no_op("statically_determined_was_integer")


@tf_export("assert_scalar", "debugging.assert_scalar")
def assert_scalar(tensor, name=None, message=None) -> Tensor:
    """Statically asserts that `tensor` is a scalar; returns it.

    Raises:
      ValueError: the static rank is not 0 (or unknown).
    """
    with name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor)
        shape = tensor.shape
        if shape.ndims != 0:
            raise ValueError("%sExpected scalar shape for %s, saw shape: %s."
                             % (_message_prefix(message), tensor.name, shape))
        return tensor


@tf_export("assert_proper_iterable", "debugging.assert_proper_iterable")
def assert_proper_iterable(values) -> None:
    """Raises TypeError unless `values` is a "proper" iterable (not a Tensor, array or
    string)."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)):
        raise TypeError('Expected argument "values" to be a "proper" iterable.  Found: %s'
                        % type(values))
    if not hasattr(values, "__iter__"):
        raise TypeError('Expected argument "values" to be iterable.  Found: %s'
                        % type(values))


@tf_export("assert_same_float_dtype", "debugging.assert_same_float_dtype")
def assert_same_float_dtype(tensors=None, dtype=None):
    """Checks that all `tensors` (and `dtype`, if given) share one floating dtype.

    Returns:
      That dtype (float32 when there is nothing to check).

    Raises:
      ValueError: the dtypes differ, or the common one is not floating.
    """
    expected = _dt.as_dtype(dtype) if dtype is not None else None
    first = None
    for t in tensors or []:
        if t is None:
            continue
        have = t.dtype
        if expected is None:
            expected, first = have, getattr(t, "name", str(t))
        elif have is not expected:
            raise ValueError("%s, type=%s, must be of the same type (%s)%s." % (
                getattr(t, "name", str(t)), have, expected,
                " as %s" % first if first else ""))
    if expected is None:
        return _dt.float32
    if not expected.is_floating:
        raise ValueError("Expected floating point type, got %s." % expected)
    return expected


@tf_export("is_numeric_tensor", "debugging.is_numeric_tensor")
def is_numeric_tensor(tensor) -> bool:
    """True if `tensor` is a Tensor of a numeric (integer, floating or complex) dtype."""
    return isinstance(tensor, Tensor) and tensor.dtype in _dt.NUMBERS
