"""Math builders: cast, add_n, clip_by_value, range, linspace; Tensor operator overloads."""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export  # noqa: F401
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, as_shape, unknown_shape
from tensorweave.ops.math import bitwise_ops, math_binary, math_unary

_NUMBERS = _dt.NUMBERS


def _tensor_like(v) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


# --- Cast ---------------------------------------------------------------------------------
register_op("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
            attrs={"SrcT": TypeAttr(), "DstT": TypeAttr(), "Truncate": False},
            shape=lambda op: op.inputs[0].shape)


def _cast_array(x, dst: _dt.DType):
    """`x` converted to `dst` as TF's Cast: complex to real drops the imaginary part,
    float to int truncates toward zero (NaN and out-of-range values as the C cast)."""
    np_dst = dst.as_numpy_dtype
    kind = x.dtype.kind
    if x.dtype == np_dst:
        return x
    if dst is _dt.string or kind == "O":
        raise NotImplementedError("Cast %s to %s is not supported" % (
            _dt.type_string(_dt.as_dtype(x.dtype)), _dt.type_string(dst)))
    if kind == "c" and not dst.is_complex:
        x = x.real  # to bool as well: TF's 1j is False
    if dst is _dt.bool:
        return x != 0
    if kind in "biu":  # integers and bools convert without floating-point errors
        return x.astype(np_dst)
    with np.errstate(all="ignore"):
        return x.astype(np_dst)


@kernel("Cast")
def _cast_kernel(ctx, x):
    dst = ctx.attrs["DstT"]
    if dst.is_floating and isinstance(x, np.generic) and x.dtype.kind in "biu":
        # an integer or bool NumPy scalar (a loop counter) to a float: the scalar
        # type's constructor, exact as astype and half its cost (never a device array)
        return dst.as_numpy_dtype(x)
    try:
        return _cast_array(x, dst)
    except NotImplementedError as e:
        raise errors.UnimplementedError(None, ctx.op, str(e)) from None


@tensor_util.register_static_value("Cast")
def _cast_static_value(op, index):
    v = tensor_util.constant_value(op.inputs[0])
    if v is None:
        return None
    try:
        return _cast_array(np.asarray(v), op._get_attr("DstT"))
    except NotImplementedError:
        return None


_CAST_DIFFERENTIABLE = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64,
                        _dt.complex64, _dt.complex128)


@gradient("Cast")
def _cast_grad(op, grad):
    src = op.inputs[0].dtype
    if src in _CAST_DIFFERENTIABLE and grad.dtype in _CAST_DIFFERENTIABLE:
        return [cast(grad, src)]
    return [None]


@tf_export("cast", "dtypes.cast")
def cast(x, dtype, name: Optional[str] = None):
    """Casts a tensor to a new type (TF1 `tf.cast`).

    Complex to real drops the imaginary part; float to int truncates toward zero. A
    tensor that already has `dtype` is returned as is (no op).

    Args:
      x: a Tensor, IndexedSlices, SparseTensor or value convertible to a Tensor.
      dtype: the destination type.
      name: op name (default "Cast").

    Returns:
      A Tensor (or IndexedSlices, SparseTensor: its values cast) with the shape of `x`
      and type `dtype`.

    Raises:
      TypeError: `dtype` is not a DType.
    """
    base = _dt.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype is base:
        return x
    g = _graph.get_default_graph()
    with g.name_scope(name or "Cast") as scope:
        if isinstance(x, IndexedSlices):
            return IndexedSlices(cast(x.values, base, name=scope), x.indices, x.dense_shape)
        from tensorweave.framework.sparse_tensor import SparseTensor
        if isinstance(x, SparseTensor):
            return SparseTensor(x.indices, cast(x.values, base, name=scope), x.dense_shape)
        x = convert_to_tensor(x, name="x")
        if x.dtype is base:
            return x
        return apply_op("Cast", [x], {"DstT": base}, name=scope).outputs[0]


def _cast_alias(tf_name: str, dtype: _dt.DType, default_name: str) -> Callable:
    def alias(x, name: str = default_name):
        return cast(x, dtype, name=name)
    alias.__name__ = alias.__qualname__ = tf_name
    alias.__doc__ = """Casts a tensor to %s (TF1 `tf.%s`, deprecated: use `tf.cast`).

    Args:
      x: a Tensor or IndexedSlices.
      name: op name.

    Returns:
      A Tensor (or IndexedSlices) of type %s with the shape of `x`.
    """ % (dtype.name, tf_name, dtype.name)
    return alias


to_float = tf_export("to_float")(_cast_alias("to_float", _dt.float32, "ToFloat"))
to_double = tf_export("to_double")(_cast_alias("to_double", _dt.float64, "ToDouble"))
to_int32 = tf_export("to_int32")(_cast_alias("to_int32", _dt.int32, "ToInt32"))
to_int64 = tf_export("to_int64")(_cast_alias("to_int64", _dt.int64, "ToInt64"))
to_bfloat16 = tf_export("to_bfloat16")(_cast_alias("to_bfloat16", _dt.bfloat16, "ToBFloat16"))
to_complex64 = tf_export("to_complex64")(
    _cast_alias("to_complex64", _dt.complex64, "ToComplex64"))
to_complex128 = tf_export("to_complex128")(
    _cast_alias("to_complex128", _dt.complex128, "ToComplex128"))


def _saturation_bounds(src: _dt.DType, dst: _dt.DType):
    """(lo, hi) NumPy scalars of `src` to clamp to before casting to `dst` (None where
    no clamp is needed). Bounds are moved inward until they cast into `dst`'s range."""
    src_np = np.dtype(src.as_numpy_dtype)
    # the limits as Python numbers, which compare exactly (NumPy would round an int)
    dst_min, dst_max, src_min, src_max = (
        v if isinstance(v, int) else float(v) for v in (dst.min, dst.max, src.min, src.max))
    lo = hi = None
    if dst_min > src_min:
        lo = np.asarray(dst_min).astype(src_np)
        while lo.item() < dst_min:  # .item() compares exactly; float() rounds an int64
            lo = np.nextafter(lo, np.asarray(np.inf, dtype=src_np)) if src.is_floating \
                else lo + 1
    if dst_max < src_max:
        hi = np.asarray(dst_max).astype(src_np)
        while hi.item() > dst_max:
            hi = np.nextafter(hi, np.asarray(-np.inf, dtype=src_np)) if src.is_floating \
                else hi - 1
    return lo, hi


@tf_export("saturate_cast", "dtypes.saturate_cast")
def saturate_cast(value, dtype, name: Optional[str] = None) -> Tensor:
    """Casts `value` to `dtype`, clamping to the range of `dtype` first (TF1
    `tf.saturate_cast`).

    Complex values cast to a real type lose their imaginary part first; a cast to a
    complex type clamps to the range of its real part type (the real and imaginary parts
    separately for complex input), as TF 2 does.

    Args:
      value: a Tensor.
      dtype: the destination type.
      name: op name (default "saturate_cast").

    Returns:
      `value` clamped and cast to `dtype`.
    """
    g = _graph.get_default_graph()
    with g.name_scope(name or "saturate_cast") as scope:
        value = convert_to_tensor(value, name="value")
        dtype = _dt.as_dtype(dtype).base_dtype
        if value.dtype.is_complex and not dtype.is_complex:
            value = cast(value, value.dtype.real_dtype)
        for t in (value.dtype, dtype):
            if t.is_bool:  # as TF: bool has no range to saturate to
                raise TypeError("Cannot find minimum value of %s with type %s." % (t, t))
        target = dtype.real_dtype if dtype.is_complex else dtype
        if value.dtype.is_complex:  # complex to complex: clamp both parts
            from tensorweave.ops.math import complex_ops
            parts = [_clamp(part, target) for part in
                     (complex_ops.real(value), complex_ops.imag(value))]
            return cast(complex_ops.complex(parts[0], parts[1]), dtype, name=scope)
        return cast(_clamp(value, target), dtype, name=scope)


def _clamp(value: Tensor, dst: _dt.DType) -> Tensor:
    """`value` (real) clamped to the range of the real type `dst`."""
    lo, hi = _saturation_bounds(value.dtype, dst)
    if lo is not None:
        value = math_binary.maximum(value, convert_to_tensor(lo, dtype=value.dtype))
    if hi is not None:
        value = math_binary.minimum(value, convert_to_tensor(hi, dtype=value.dtype))
    return value


# --- AddN ---------------------------------------------------------------------------------
def _add_n_shape(op):
    shape = unknown_shape()
    for t in op.inputs:
        shape = shape.merge_with(t.shape)
    return shape


register_op("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
            attrs={"T": TypeAttr(_NUMBERS + (_dt.variant,))}, shape=_add_n_shape)


@kernel("AddN")
def _add_n_kernel(ctx, *xs):
    first = xs[0]
    if len(xs) == 1:
        return first
    if type(first) is np.ndarray and len(xs) == 2 and type(xs[1]) is np.ndarray and \
            first.shape == xs[1].shape:
        return np.add(first, xs[1])  # the usual sum of two gradients, with no other call
    if not hasattr(first, "dtype"):  # variant values (TensorLists) add themselves
        for x in xs[1:]:
            first = first.add(x, ctx.op)
        return first
    shape = np.shape(first)
    for i, x in enumerate(xs[1:], 1):
        if np.shape(x) != shape:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Inputs to operation %s of type AddN must have the same size "
                "and shape.  Input 0: %s != input %d: %s" % (ctx.op.name, list(shape), i,
                                                              list(np.shape(x))))
    out = np.add(first, xs[1])
    if isinstance(out, np.ndarray) and out.ndim:
        for x in xs[2:]:
            np.add(out, x, out=out)  # `out` is our own buffer
    else:
        for x in xs[2:]:
            out = out + x
    return out


@gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


_ADD_N_ERROR = ("inputs must be a list of at least one Tensor/IndexedSlices with the same "
                "dtype and shape")


@tf_export("add_n", "math.add_n")
def add_n(inputs, name: Optional[str] = None) -> Tensor:
    """Adds all input tensors element-wise (TF1 `tf.add_n`).

    IndexedSlices inputs are converted to dense tensors.

    Args:
      inputs: a list of Tensors (or IndexedSlices), all of one dtype and shape.
      name: op name (default "AddN").

    Returns:
      A Tensor of the dtype and shape of the inputs. A single input is returned as is
      (through an Identity op named `name` when a name is given).

    Raises:
      ValueError: `inputs` is not a non-empty list, or the shapes differ.
      TypeError: the dtypes differ.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError(_ADD_N_ERROR)
    tensors = [convert_to_tensor(x) for x in inputs]
    if len(tensors) == 1:
        if name:
            from tensorweave.ops.control_flow import structure
            return structure.identity(tensors[0], name=name)
        return tensors[0]
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise TypeError("Tensors in list passed to 'inputs' of 'AddN' Op have types [%s] that "
                        "don't all match." % ", ".join(t.dtype.name for t in tensors))
    return apply_op("AddN", [tensors], name=name or "AddN").outputs[0]


@tf_export("accumulate_n", "math.accumulate_n")
def accumulate_n(inputs, shape=None, tensor_dtype=None, name: Optional[str] = None):
    """Returns the element-wise sum of a list of tensors (TF1 `tf.math.accumulate_n`).

    Computed as `add_n`; `shape` and `tensor_dtype` are checked against the inputs.

    Args:
      inputs: a list of Tensors of one dtype and shape.
      shape: expected shape of the inputs (optional).
      tensor_dtype: expected dtype of the inputs (optional).
      name: op name.

    Returns:
      A Tensor of the shape and dtype of the inputs.

    Raises:
      ValueError: `inputs` is empty, or dtypes/shapes of the inputs differ or do not
        match `shape`.
      TypeError: `tensor_dtype` differs from the inputs' dtype.
    """
    message = "inputs must be a list of at least one Tensor with the same dtype and shape"
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError(message)
    tensors = [convert_to_tensor(x) for x in inputs]
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise ValueError(message)
    merged = as_shape(shape) if shape is not None else unknown_shape()
    for t in tensors:
        merged = merged.merge_with(t.shape)
    if tensor_dtype is not None and _dt.as_dtype(tensor_dtype) is not tensors[0].dtype:
        raise TypeError("The `tensor_dtype` argument is %s, but `input` is of type %s. These "
                        "must be equal. Try casting the input to the desired type."
                        % (_dt.as_dtype(tensor_dtype), tensors[0].dtype))
    return add_n(tensors, name=name)


# --- clip_by_value, scalar_mul -----------------------------------------------------------
@tf_export("clip_by_value")
def clip_by_value(t, clip_value_min, clip_value_max, name: Optional[str] = None):
    """Clips tensor values to [clip_value_min, clip_value_max] (TF1 `tf.clip_by_value`).

    Built as maximum(minimum(t, clip_value_max), clip_value_min), so the gradient
    passes to `t` where it is inside the range (boundaries included).

    Args:
      t: a Tensor or IndexedSlices.
      clip_value_min: scalar or tensor broadcastable to the shape of `t`.
      clip_value_max: scalar or tensor broadcastable to the shape of `t`.
      name: op name (default "clip_by_value").

    Returns:
      A clipped Tensor (or IndexedSlices) with the shape of `t`.

    Raises:
      ValueError: the clip values would broadcast `t` to a bigger shape.
    """
    g = _graph.get_default_graph()
    with g.name_scope(name or "clip_by_value") as scope:
        values = convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t,
                                   name="t")
        t_min = math_binary.minimum(values, clip_value_max)
        values.shape.merge_with(t_min.shape)
        t_max = math_binary.maximum(t_min, clip_value_min, name=scope)
        values.shape.merge_with(t_max.shape)
    if isinstance(t, IndexedSlices):
        return IndexedSlices(t_max, t.indices, t.dense_shape)
    return t_max


@tf_export("scalar_mul", "math.scalar_mul")
def scalar_mul(scalar, x, name: Optional[str] = None):
    """Multiplies a scalar by a Tensor or IndexedSlices (TF1 `tf.scalar_mul`).

    Args:
      scalar: a 0-D value, converted to the dtype of `x`.
      x: a Tensor or IndexedSlices.
      name: op name (default "Mul").

    Returns:
      `scalar * x`, of the type of `x`.

    Raises:
      ValueError: `scalar` is not 0-D.
    """
    if not isinstance(x, IndexedSlices):
        x = convert_to_tensor(x, name="x")
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError("The input scalar must be a 0-D value. Received shape %s."
                         % scalar.shape)
    if isinstance(x, IndexedSlices):
        return IndexedSlices(math_binary.multiply(scalar, x.values, name=name), x.indices,
                             x.dense_shape)
    return math_binary.multiply(scalar, x, name=name)


# --- Range ------------------------------------------------------------------------------
_RANGE_TYPES = (_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64, _dt.int8, _dt.int16,
                _dt.int32, _dt.int64, _dt.uint16, _dt.uint32, _dt.uint64)


def _range_size(start, limit, delta) -> int:
    """Number of elements of range(start, limit, delta); ValueError when invalid."""
    if delta == 0:
        raise ValueError("Requires delta != 0: %s" % delta)
    if delta > 0 and start > limit:
        raise ValueError("Requires start <= limit when delta > 0: %s/%s" % (start, limit))
    if delta < 0 and start < limit:
        raise ValueError("Requires start >= limit when delta < 0: %s/%s" % (start, limit))
    if isinstance(start, (np.integer, int)):
        start, limit, delta = int(start), int(limit), int(delta)
        return (abs(limit - start) + abs(delta) - 1) // abs(delta)
    with np.errstate(all="ignore"):
        return int(math.ceil(abs(float((limit - start) / delta))))


def _range_values(start, limit, delta, np_dtype):
    start, limit, delta = (np.asarray(v).reshape(()).astype(np_dtype)[()]
                           for v in (start, limit, delta))
    n = _range_size(start, limit, delta)
    if np.dtype(np_dtype).kind in "iu":
        return np.arange(int(start), int(start) + n * int(delta), int(delta),
                         dtype=np_dtype)[:n]
    return (start + np.arange(n).astype(np_dtype) * delta).astype(np_dtype, copy=False)


def _check_scalar(t: Tensor, what: str) -> None:
    if t.shape.ndims is not None and t.shape.ndims != 0:
        raise ValueError("Shape must be rank 0 but is rank %d (%s)" % (t.shape.ndims, what))


def _range_shape(op):
    for t, what in zip(op.inputs, ("start", "limit", "delta")):
        _check_scalar(t, what)
    values = [tensor_util.constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return TensorShape([None])
    np_dtype = op._get_attr("Tidx").as_numpy_dtype
    start, limit, delta = (np.asarray(v).astype(np_dtype)[()] for v in values)
    return TensorShape([_range_size(start, limit, delta)])


register_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"],
            outputs=["output: Tidx"],
            attrs={"Tidx": TypeAttr(_RANGE_TYPES, default=_dt.int32)}, shape=_range_shape)


@kernel("Range")
def _range_kernel(ctx, start, limit, delta):
    for v, what in zip((start, limit, delta), ("start", "limit", "delta")):
        if np.ndim(v) != 0:
            raise errors.InvalidArgumentError(None, ctx.op, "%s must be a scalar, not shape %s"
                                              % (what, list(np.shape(v))))
    try:
        return _range_values(start, limit, delta, ctx.attrs["Tidx"].as_numpy_dtype)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, ctx.op, str(e)) from None


@tensor_util.register_static_value("Range")
def _range_static_value(op, index):
    values = [tensor_util.constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return None
    return _range_values(*values, op._get_attr("Tidx").as_numpy_dtype)


not_differentiable("Range")

_RANGE_HIERARCHY = (_dt.int32, _dt.int64, _dt.float32, _dt.float64)


@tf_export("range")
def range(start, limit=None, delta=1, dtype=None, name: str = "range") -> Tensor:  # noqa: A001
    """A 1-D tensor of the numbers start, start + delta, ... up to (not including)
    `limit` (TF1 `tf.range`).

    `range(n)` counts from 0. Without `dtype` the type is the widest of the arguments'
    types in the order int32 < int64 < float32 < float64 (Python ints are int32,
    floats float32).

    Args:
      start: 0-D number; the first value (or the limit when `limit` is None).
      limit: 0-D number; the exclusive upper (or lower, for negative delta) bound.
      delta: 0-D number, not 0; the increment.
      dtype: the type of the result.
      name: op name.

    Returns:
      A 1-D Tensor.

    Raises:
      ValueError: at build time, when the arguments are known and invalid (delta == 0,
        or start and limit on the wrong side of each other).
      TypeError: a value does not fit `dtype`.
    """
    if limit is None:
        start, limit = 0, start
    g = _graph.get_default_graph()
    with g.name_scope(name or "Range") as scope:
        args = []
        for value, arg_name in ((start, "start"), (limit, "limit"), (delta, "delta")):
            if not _tensor_like(value):
                value = convert_to_tensor(value, dtype=dtype, name=arg_name)
            else:
                value = convert_to_tensor(value)
            args.append(value)
        if dtype is None:
            for t in args:
                if t.dtype not in _RANGE_HIERARCHY:
                    raise TypeError("Unsupported dtype %s for range; expected one of %s"
                                    % (t.dtype.name,
                                       ", ".join(d.name for d in _RANGE_HIERARCHY)))
            inferred = max((t.dtype for t in args), key=_RANGE_HIERARCHY.index)
        else:
            inferred = _dt.as_dtype(dtype)
        args = [cast(t, inferred) for t in args]
        return apply_op("Range", args, name=scope).outputs[0]


# --- LinSpace ----------------------------------------------------------------------------
def _lin_space_shape(op):
    _check_scalar(op.inputs[0], "start")
    _check_scalar(op.inputs[1], "stop")
    _check_scalar(op.inputs[2], "num")
    num = tensor_util.constant_value(op.inputs[2])
    if num is None:
        return TensorShape([None])
    if int(num) < 0:
        raise ValueError("Requires num >= 0: %d" % int(num))
    return TensorShape([int(num)])


register_op("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"], outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.FLOATS),
                   "Tidx": TypeAttr((_dt.int32, _dt.int64), default=_dt.int32)},
            shape=_lin_space_shape)


@kernel("LinSpace")
def _lin_space_kernel(ctx, start, stop, num):
    for v, what in zip((start, stop, num), ("start", "stop", "num")):
        if np.ndim(v) != 0:
            raise errors.InvalidArgumentError(None, ctx.op, "%s must be a scalar, not shape %s"
                                              % (what, list(np.shape(v))))
    n = int(num)
    if n < 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Requires num >= 0: %d" % n)
    dtype = np.asarray(start).dtype
    if n == 1:
        return np.full([1], start, dtype=dtype)
    out = np.arange(n).astype(dtype)
    if n > 1:
        step = (stop - start) / np.asarray(n - 1).astype(dtype)
        out = (start + out * step).astype(dtype, copy=False)
        out[-1] = stop
    return out


not_differentiable("LinSpace")


@tf_export("linspace", "lin_space")
def linspace(start, stop, num, name: Optional[str] = None) -> Tensor:
    """`num` evenly spaced values from `start` to `stop`, both included (TF1
    `tf.linspace` / `tf.lin_space`).

    Integer `start`/`stop` are computed in float64 (as TF does).

    Args:
      start: 0-D float tensor, the first value.
      stop: 0-D tensor of the same type, the last value.
      num: 0-D int32/int64 tensor, the number of values (0 gives an empty tensor).
      name: op name (default "LinSpace").

    Returns:
      A 1-D Tensor of the type of `start`.
    """
    g = _graph.get_default_graph()
    with g.name_scope(name or "LinSpace") as scope:
        start, stop = math_binary._convert_pair(start, stop)
        if start.dtype is not stop.dtype:
            raise TypeError("Input 'stop' of 'LinSpace' Op has type %s that does not match "
                            "type %s of argument 'start'." % (stop.dtype.name,
                                                              start.dtype.name))
        if start.dtype.is_integer:
            start, stop = cast(start, _dt.float64), cast(stop, _dt.float64)
        return apply_op("LinSpace", [start, stop, num], name=scope).outputs[0]


lin_space = linspace


# --- Tensor operator overloads ------------------------------------------------------------
_PLAIN_VALUES = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, list, tuple)


def _binary_operator(fn: Callable, op_name: str, py_name: str) -> tuple:
    """(forward, reflected) methods for a Python binary operator: the other operand is
    converted to this tensor's dtype (TF1's binary_op_wrapper)."""

    def convert_other(self, other, arg_name):
        if _tensor_like(other):
            return other
        try:
            return convert_to_tensor(other, dtype=self.dtype.base_dtype, name=arg_name)
        except TypeError:
            if not isinstance(other, _PLAIN_VALUES) and \
                    hasattr(type(other), "__r%s__" % py_name):
                return NotImplemented
            raise

    def scope_of(t):
        # in t's graph, made the default when it is not (as TF, for `x * 2` written after
        # leaving `with g.as_default()`)
        g = t._op._graph
        if g is _graph.get_default_graph():
            return g.name_scope(op_name)
        return _graph.name_scope(op_name, values=[t])

    def forward(self, other):
        with scope_of(self) as scope:
            y = convert_other(self, other, "y")
            if y is NotImplemented:
                return NotImplemented
            return fn(self, y, name=scope)

    def reflected(self, other):
        with scope_of(self) as scope:
            x = convert_other(self, other, "x")
            return fn(x, self, name=scope)

    forward.__name__ = "__%s__" % py_name
    reflected.__name__ = "__r%s__" % py_name
    return forward, reflected


def _matmul(a, b, name=None):
    from tensorweave.ops.math import matmul_ops
    return matmul_ops.matmul(a, b, name=name)


def _and(x, y, name=None):
    """TF's `&`: logical for bools, bitwise for integers (as TF 2.x's operators)."""
    if x.dtype.base_dtype == _dt.bool:
        return math_binary.logical_and(x, y, name=name)
    return bitwise_ops.bitwise_and(x, y, name=name)


def _or(x, y, name=None):
    if x.dtype.base_dtype == _dt.bool:
        return math_binary.logical_or(x, y, name=name)
    return bitwise_ops.bitwise_or(x, y, name=name)


def _xor(x, y, name=None):
    if x.dtype.base_dtype == _dt.bool:
        return math_binary.logical_xor(x, y, name=name)
    return bitwise_ops.bitwise_xor(x, y, name=name)


_BINARY_OPERATORS = [
    ("add", "add", math_binary.add),
    ("sub", "sub", math_binary.subtract),
    ("mul", "mul", math_binary.multiply),
    ("truediv", "truediv", math_binary.truediv),
    ("floordiv", "floordiv", math_binary.floordiv),
    ("mod", "mod", math_binary.floormod),
    ("pow", "pow", math_binary.pow),
    ("and", "and", _and),
    ("or", "or", _or),
    ("xor", "xor", _xor),
    ("matmul", "matmul", _matmul),
]

for _py_name, _op_name, _fn in _BINARY_OPERATORS:
    _fwd, _rev = _binary_operator(_fn, _op_name, _py_name)
    Tensor._override_operator("__%s__" % _py_name, _fwd)
    Tensor._override_operator("__r%s__" % _py_name, _rev)


def _neg(self):
    return math_unary.negative(self)


def _abs(self):
    return math_unary.abs(self)


def _invert(self):
    if self.dtype.base_dtype == _dt.bool:
        return math_unary.logical_not(self)
    return bitwise_ops.invert(self)


def _lt(self, other):
    return math_binary.less(self, other)


def _le(self, other):
    return math_binary.less_equal(self, other)


def _gt(self, other):
    return math_binary.greater(self, other)


def _ge(self, other):
    return math_binary.greater_equal(self, other)


# `==` and `!=` are not overloaded: TF1 graph tensors compare by identity.
for _py_name, _fn in (("__neg__", _neg), ("__abs__", _abs), ("__invert__", _invert),
                      ("__lt__", _lt), ("__le__", _le), ("__gt__", _gt), ("__ge__", _ge)):
    Tensor._override_operator(_py_name, _fn)
