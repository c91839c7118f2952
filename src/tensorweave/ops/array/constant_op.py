"""Const, Placeholder and PlaceholderWithDefault: where values enter the graph."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import op_builder
from tensorweave.framework import tensor_util
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.ops.array.array_util import merge_shapes

# --- Const -------------------------------------------------------------------------------
register_op("Const", outputs=["output: dtype"], attrs={"value": REQUIRED, "dtype": TypeAttr()},
            shape=lambda op: TensorShape(op._get_attr("value").shape))


@kernel("Const")
def _const_kernel(ctx):
    return ctx.attrs["value"]


not_differentiable("Const")


@tensor_util.register_static_value("Const")
def _const_value(op, index):
    return op._get_attr("value")


def _holds_none(value) -> bool:
    """Whether a nested list holds a None (which NumPy would make NaN, or an object, of
    where TF refuses it). Only a list NumPy cannot make numbers of is scanned."""
    try:
        raw = np.asarray(value)
    except ValueError:  # ragged: the conversion proper says so
        return False
    return raw.dtype == object and any(v is None for v in raw.reshape(-1).tolist())


def _numpy_dtype_name(value) -> str:
    try:
        return np.asarray(value).dtype.name
    except Exception:  # ragged, or holding tensors
        return type(value).__name__


def constant_array(value, dtype: Optional[_dt.DType], allow_cast: bool) -> np.ndarray:
    """`value` as the array tf.constant would hold (TF's conversion rules and errors:
    `allow_cast` lets a value of another type become `dtype`, as tf.constant allows and
    convert_to_tensor does not).

    Raises:
      TypeError, ValueError: as tf.constant for a value it does not take.
    """
    if dtype is None:
        dtype = _dt.dtype_of_value(value)
    elif value is None:  # NumPy would make NaN of it
        raise ValueError("None values not supported.")
    elif isinstance(value, (list, tuple)) and _holds_none(value):
        raise TypeError("Expected %s, but got None of type 'NoneType'." % dtype.name)
    if not dtype.is_numpy_compatible:  # resource, variant: no constant holds one (TF)
        raise TypeError("`dtype` %s is not compatible with %r of dtype %s."
                        % (dtype, value, _numpy_dtype_name(value)))
    if dtype is _dt.string:
        arr = op_builder.as_numpy(value, dtype)
        for v in arr.reshape(-1):  # TF turns no number (nor None) into a string
            if not isinstance(v, (bytes, str)):
                raise TypeError("Expected string, but got %r of type '%s'."
                                % (v, type(v).__name__))
        return arr
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype != object:
        # TF's make_tensor_proto: a NumPy value is cast with astype, unchecked (a float64
        # array fed to an int32 input truncates); Python values are checked below
        try:
            return np.asarray(value).astype(dtype.as_numpy_dtype)
        except (TypeError, ValueError) as e:
            raise TypeError("Expected %s, got %r of type '%s' instead. (%s)"
                            % (dtype.name, value, type(value).__name__, e)) from None
    if not isinstance(value, np.ndarray) and (dtype.is_integer or dtype.is_bool):
        # TF converts no Python float (not even 1.0) or string to an integer or bool type
        flat = np.asarray(value, dtype=object).reshape(-1) if not np.isscalar(value) else \
            [value]
        for v in flat:
            if isinstance(v, (float, str, bytes)) or \
                    (dtype.is_bool and not isinstance(v, (bool, np.bool_))):
                raise TypeError("Expected %s, but got %r of type '%s'."
                                % (dtype.name, v, type(v).__name__))
    elif not isinstance(value, np.ndarray) and dtype is not _dt.string:
        # nor a string into a number type (NumPy would parse "1.5")
        try:
            raw = np.asarray(value)
        except ValueError:  # ragged: the conversion below says so
            raw = np.zeros(0)
        if raw.dtype.kind in "USO":
            for v in raw.reshape(-1).tolist():
                if isinstance(v, (str, bytes)):
                    raise TypeError("Expected %s, but got %r of type '%s'."
                                    % (dtype.name, v, type(v).__name__))
    try:
        arr = np.asarray(value, dtype=dtype.as_numpy_dtype)
    except (TypeError, ValueError) as e:
        raise TypeError("Expected %s, got %r of type '%s' instead. (%s)"
                        % (dtype.name, value, type(value).__name__, e)) from None
    if dtype.is_integer and not isinstance(value, np.ndarray):
        info = np.iinfo(dtype.as_numpy_dtype)
        raw = np.asarray(value)
        if raw.dtype.kind in "iu" and raw.size and (raw.min() < info.min or raw.max() > info.max):
            raise TypeError("Value out of range for %s: %r" % (dtype.name, value))
    return arr


def constant(value, dtype=None, shape=None, name: str = "Const", verify_shape: bool = False,
             allow_cast: bool = True):
    """A constant tensor (TF1 `tf.constant`).

    Args:
      value: a Python scalar, nested list or NumPy array.
      dtype: the element type; inferred from `value` when None.
      shape: optional shape; a scalar (or one-element) value is broadcast to it, and a
        value with the same number of elements is reshaped to it.
      name: op name.
      verify_shape: if True, `value` must already have `shape`.

    Returns:
      A Tensor.

    Raises:
      TypeError: `value` cannot be represented in `dtype`.
      ValueError: `value` does not fit `shape`.
    """
    dtype = _dt.as_dtype(dtype) if dtype is not None else None
    arr = constant_array(value, dtype, allow_cast)
    if shape is not None:
        shape = as_shape(shape).as_list() if not isinstance(shape, (list, tuple)) else \
            [int(d) for d in shape]
        n = int(np.prod(shape)) if shape else 1
        if verify_shape and list(arr.shape) != list(shape):
            raise TypeError("Expected Tensor's shape: %s, got %s." % (tuple(shape), arr.shape))
        if arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype) if \
                arr.dtype != object else np.full(shape, arr.reshape(-1)[0], dtype=object)
        elif arr.size == n:
            arr = arr.reshape(shape)
        else:
            raise ValueError("Too many elements provided. Needed at most %d, but received %d"
                             % (n, arr.size) if arr.size > n else
                             "Expected %d elements for shape %s, got %d"
                             % (n, shape, arr.size))
    dt = dtype if dtype is not None else _dt.as_dtype(arr.dtype) if arr.dtype != object \
        else _dt.string
    if isinstance(value, np.ndarray) and np.may_share_memory(arr, value):
        arr = arr.copy()  # the graph owns its value; the caller's array stays writable
    arr.setflags(write=False)
    return apply_op("Const", [], {"value": arr, "dtype": dt}, name=name).outputs[0]


op_builder._constant_builder = constant

# --- placeholders ------------------------------------------------------------------------
register_op("Placeholder", outputs=["output: dtype"],
            attrs={"dtype": TypeAttr(), "shape": TensorShape(None)},
            shape=lambda op: op._get_attr("shape"))


@kernel("Placeholder")
def _placeholder_kernel(ctx):
    shape = ctx.attrs["shape"]
    raise errors.InvalidArgumentError(
        None, ctx.op, "You must feed a value for placeholder tensor '%s' with dtype %s%s"
        % (ctx.op.name, _dt.type_string(ctx.attrs["dtype"]),
           "" if shape.ndims is None else " and shape [%s]" % ",".join(
               "?" if d is None else str(d) for d in shape.as_list())))


not_differentiable("Placeholder")


def placeholder(dtype, shape=None, name: Optional[str] = None):
    """A tensor that must be fed (TF1 `tf.placeholder`).

    Args:
      dtype: element type.
      shape: static shape (None: any shape; None entries: any size).
      name: op name.

    Returns:
      A Tensor; running anything that needs it without feeding it raises
      InvalidArgumentError naming it.
    """
    return apply_op("Placeholder", [], {"dtype": _dt.as_dtype(dtype),
                                         "shape": as_shape(shape)},
                    name=name or "Placeholder").outputs[0]


def _placeholder_with_default_shape(op):
    """The `shape` attr, checked against the input's shape as TF merges them."""
    shape = op._get_attr("shape")
    merge_shapes(_dims(op.inputs[0].shape), _dims(shape))
    return shape


def _dims(shape: TensorShape):
    return None if shape.ndims is None else shape.as_list()


register_op("PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
            attrs={"dtype": TypeAttr(), "shape": REQUIRED},
            shape=_placeholder_with_default_shape)


@kernel("PlaceholderWithDefault")
def _placeholder_with_default_kernel(ctx, x):
    return x


def placeholder_with_default(input, shape, name: Optional[str] = None):  # noqa: A002
    """The value of `input` unless fed (TF1 `tf.placeholder_with_default`); a Python or
    NumPy `input` becomes a constant '<name>/input' in the op's scope, as TF names it.

    Raises:
      ValueError: `shape` is incompatible with the input's.
    """
    return apply_op("PlaceholderWithDefault", [input], {"shape": as_shape(shape)},
                    name=name or "PlaceholderWithDefault").outputs[0]


@gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]
