"""Shape checks and tensors as protocol buffers: EnsureShape, BroadcastArgs
(broadcast_dynamic_shape), broadcast_static_shape, SerializeTensor, ParseTensor,
make_tensor_proto and make_ndarray (TF's `TensorProto`, the message class the
`tensorboard` package ships, imported lazily)."""
from __future__ import annotations

import base64
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, as_shape, unknown_shape
from tensorweave.ops.array import array_util as _u


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


# --- EnsureShape --------------------------------------------------------------------------
def _ensure_shape_shape(op):
    have = _u.dims_of(op.inputs[0].shape)
    want = op._get_attr("shape")
    return _u.to_shape(_u.merge_shapes(_u.dims_of(want), have))


register_op("EnsureShape", inputs=["input: T"], outputs=["output: T"],
            attrs={"T": TypeAttr(), "shape": TensorShape(None)}, shape=_ensure_shape_shape)


@kernel("EnsureShape")
def _ensure_shape_kernel(ctx, x):
    want = ctx.attrs["shape"]
    if not want.is_compatible_with(TensorShape(list(x.shape))):
        name = ctx.op.inputs[0].name
        name = name[:-2] if name.endswith(":0") else name
        raise _invalid(ctx, "Shape of tensor %s %s is not compatible with expected shape %s."
                       % (name, _u.shape_str(x.shape), _shape_text(want)))
    return x


def _shape_text(shape: TensorShape) -> str:
    if shape.ndims is None:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


@gradient("EnsureShape")
def _ensure_shape_grad(op, grad):
    return [grad]


@tf_export("ensure_shape")
def ensure_shape(x, shape, name: Optional[str] = None) -> Tensor:
    """`x`, checked at run time to have a shape compatible with `shape` (TF1).

    Args:
      x: a Tensor.
      shape: a TensorShape or list (None entries: any size); the static shape of the
        result is the merge of the two.
      name: op name.

    Returns:
      `x` (the same values).

    Raises:
      ValueError: the static shape of `x` is incompatible with `shape`.
      InvalidArgumentError (at run time): the actual shape is incompatible.
    """
    shape = as_shape(shape) if not isinstance(shape, TensorShape) else shape
    return apply_op("EnsureShape", [x], {"shape": shape},
                    name=name or "EnsureShape").outputs[0]


# --- BroadcastArgs, broadcast_*_shape -------------------------------------------------------
def _broadcast_args_shape(op):
    a = _u.with_rank(_u.dims_of(op.inputs[0].shape), 1)
    b = _u.with_rank(_u.dims_of(op.inputs[1].shape), 1)
    if a[0] is None or b[0] is None:
        return TensorShape([None])
    return TensorShape([max(a[0], b[0])])


register_op("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
            attrs={"T": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_broadcast_args_shape)
not_differentiable("BroadcastArgs")


@kernel("BroadcastArgs")
def _broadcast_args_kernel(ctx, s0, s1):
    if s0.ndim != 1 or s1.ndim != 1:
        raise _invalid(ctx, "In[0] and In[1] must be vectors.")
    n = max(s0.size, s1.size)
    a = [1] * (n - s0.size) + [int(d) for d in s0.tolist()]
    b = [1] * (n - s1.size) + [int(d) for d in s1.tolist()]
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise _invalid(ctx, "Incompatible shapes: %s vs. %s"
                           % (_u.shape_str(s0.tolist()), _u.shape_str(s1.tolist())))
        out.append(y if x == 1 else x)
    return ctx.xp.asarray(out, dtype=s0.dtype)


@tf_export("broadcast_dynamic_shape")
def broadcast_dynamic_shape(shape_x, shape_y) -> Tensor:
    """The shape two shapes broadcast to, as a 1-D Tensor (TF1).

    Args:
      shape_x: 1-D int32/int64 Tensor.
      shape_y: 1-D Tensor of the same type.

    Returns:
      A 1-D Tensor of the same type.

    Raises:
      TypeError: shapes of two different types.
      InvalidArgumentError (at run time): the shapes do not broadcast.
    """
    return apply_op("BroadcastArgs", [shape_x, shape_y], name="BroadcastArgs").outputs[0]


@tf_export("broadcast_static_shape")
def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The static shape two TensorShapes broadcast to (TF1).

    Args:
      shape_x: a TensorShape.
      shape_y: a TensorShape.

    Returns:
      A TensorShape (unknown rank if either rank is unknown).

    Raises:
      ValueError: the shapes do not broadcast.
    """
    from tensorweave.framework.shapes import broadcast_shapes
    x, y = as_shape(shape_x), as_shape(shape_y)
    try:
        return broadcast_shapes(x, y)
    except ValueError:
        raise ValueError(
            "Incompatible shapes for broadcasting. Two shapes are compatible if for each "
            "dimension pair they are either equal or one of them is 1. Received: %s and %s."
            % (tuple(x.as_list()), tuple(y.as_list()))) from None


# --- TensorProto: make_tensor_proto, make_ndarray, SerializeTensor, ParseTensor -----------
def _tensor_pb2():
    from tensorboard.compat.proto import tensor_pb2
    return tensor_pb2


@tf_export("make_tensor_proto")
def make_tensor_proto(values, dtype=None, shape=None, verify_shape: bool = False,
                      allow_broadcast: bool = False):
    """A `TensorProto` holding `values` (TF1 `tf.make_tensor_proto`).

    Args:
      values: a Python or NumPy value (nested lists, scalars, bytes/str for strings).
      dtype: the DType of the proto (inferred from `values` when None).
      shape: the shape of the proto; fewer values than it needs repeat the last one.
      verify_shape: require `values` to have exactly `shape`.
      allow_broadcast: broadcast `values` to `shape` (NumPy rules).

    Returns:
      A `TensorProto` (the message class of `tensorboard.compat.proto.tensor_pb2`, the
      same wire form as TensorFlow's).

    Raises:
      TypeError: `verify_shape` and the shapes differ, or values that do not convert
        to `dtype` as tf.constant converts them.
      ValueError: None values, more values than `shape` holds, or both `verify_shape`
        and `allow_broadcast`.
    """
    from tensorweave.framework.graph_def_proto import array_to_tensor_proto
    if verify_shape and allow_broadcast:
        raise ValueError("allow_broadcast and verify_shape are not both allowed.")
    dtype = None if dtype is None else _dt.as_dtype(dtype)
    if dtype is _dt.string or (dtype is None and _is_text(values)):
        arr = np.asarray(values, dtype=object)
        arr = np.vectorize(lambda v: v.encode() if isinstance(v, str) else v,
                           otypes=[object])(arr) if arr.size else arr
    else:
        if values is None:
            raise ValueError("None values not supported.")
        # tf.constant's conversion: TF's dtype inference (Python floats as float32, ints
        # that fit as int32, NumPy values keep theirs) and its type checks (no float
        # into an integer dtype, no int into bool)
        from tensorweave.ops.array.constant_op import constant_array
        arr = constant_array(values, dtype, True)
    given = None
    if shape is not None:
        shape = [int(d) for d in shape]
        size = int(np.prod(shape, dtype=np.int64))
        if verify_shape and list(arr.shape) != shape:
            raise TypeError("Expected Tensor's shape: %s, but got %s."
                            % (tuple(shape), arr.shape))
        if allow_broadcast:
            arr = np.broadcast_to(arr, shape)
        elif arr.size > size:
            raise ValueError("Too many elements provided. Takes at most %d, but got %d."
                             % (size, arr.size))
        elif arr.size < size:
            if arr.size == 0:
                raise ValueError("No values to fill a tensor of shape %s." % (shape,))
            given = arr.reshape(-1)  # written as they are: a reader repeats the last
            arr = np.concatenate([given, np.repeat(given[-1:], size - given.size)])
        arr = arr.reshape(shape)
    proto = _tensor_pb2().TensorProto()
    array_to_tensor_proto(arr, proto, given)
    return proto


def _is_text(values) -> bool:
    probe = values
    while isinstance(probe, (list, tuple)) and probe:
        probe = probe[0]
    if isinstance(probe, np.ndarray):
        return probe.dtype == object or probe.dtype.kind in "SU"
    return isinstance(probe, (bytes, str))


@tf_export("make_ndarray")
def make_ndarray(tensor) -> np.ndarray:
    """The NumPy array a `TensorProto` holds (TF1 `tf.make_ndarray`).

    Args:
      tensor: a `TensorProto` (TensorFlow's or the tensorboard package's), or the value
        a Const op's `get_attr("value")` gives here (an ndarray, where TF gives a
        TensorProto), so `tf.make_ndarray(op.get_attr("value"))` works as in TF.

    Returns:
      A new (writable) ndarray of the proto's dtype and shape; strings are bytes objects.

    Raises:
      ValueError: a dtype tensorweave does not support.
    """
    if isinstance(tensor, np.ndarray):
        return np.array(tensor)
    from tensorweave.framework.graph_def_proto import tensor_proto_to_array
    return np.array(tensor_proto_to_array(tensor))


register_op("SerializeTensor", inputs=["tensor: T"], outputs=["serialized: string"],
            attrs={"T": TypeAttr()}, shape=lambda op: TensorShape([]))
register_op("ParseTensor", inputs=["serialized: string"], outputs=["output: out_type"],
            attrs={"out_type": TypeAttr()},
            shape=lambda op: unknown_shape())  # TF's: the kernel checks for a scalar
not_differentiable("SerializeTensor")
not_differentiable("ParseTensor")


@kernel("SerializeTensor")
def _serialize_tensor_kernel(ctx, x):
    from tensorweave.framework.graph_def_proto import array_to_tensor_proto
    proto = _tensor_pb2().TensorProto()
    host = np.asarray(x.get() if hasattr(x, "get") else x)
    if ctx.attrs["T"] is _dt.string:
        host = host.astype(object)
    array_to_tensor_proto(host, proto, content=True)  # a kernel's bytes (C++'s)
    out = np.empty((), dtype=object)
    out[()] = proto.SerializeToString()
    return out


@kernel("ParseTensor")
def _parse_tensor_kernel(ctx, serialized):
    from google.protobuf.message import DecodeError
    from tensorweave.framework.graph_def_proto import dtype_from_enum, tensor_proto_to_array
    if np.ndim(serialized) != 0:
        raise _invalid(ctx, "Expected `serialized` to be a scalar, got shape: %s"
                       % _u.shape_str(np.shape(serialized)))
    data = serialized[()]
    proto = _tensor_pb2().TensorProto()
    try:
        proto.ParseFromString(data)
    except DecodeError:
        raise _invalid(ctx, "Could not parse `serialized` as TensorProto, base64: %s"
                       % base64.b64encode(data).decode("ascii")) from None
    want = ctx.attrs["out_type"]
    try:
        got = dtype_from_enum(proto.dtype)
    except ValueError as e:
        raise _invalid(ctx, str(e)) from None
    if got != want:
        raise _invalid(ctx, "Type mismatch between parsed tensor (%s) and dtype (%s)"
                       % (_dt.type_string(got), _dt.type_string(want)))
    try:
        arr = tensor_proto_to_array(proto)
    except ValueError as e:
        raise _invalid(ctx, str(e)) from None
    return ctx.xp.asarray(np.array(arr))


@tf_export("serialize_tensor", "io.serialize_tensor")
def serialize_tensor(tensor, name: Optional[str] = None) -> Tensor:
    """A scalar string: `tensor` as a serialized `TensorProto` (TF1).

    Args:
      tensor: a Tensor.
      name: op name.

    Returns:
      A scalar string Tensor that `parse_tensor` (or TensorFlow's) reads back.
    """
    return apply_op("SerializeTensor", [tensor], name=name or "SerializeTensor").outputs[0]


@tf_export("parse_tensor", "io.parse_tensor")
def parse_tensor(serialized, out_type, name: Optional[str] = None) -> Tensor:
    """The tensor a serialized `TensorProto` holds (TF1 `tf.io.parse_tensor`).

    Args:
      serialized: a scalar string Tensor.
      out_type: the DType the proto must have.
      name: op name.

    Returns:
      A Tensor of type `out_type` and unknown static shape.

    Raises:
      InvalidArgumentError (at run time): not a TensorProto, or of another dtype.
    """
    return apply_op("ParseTensor", [convert_to_tensor(serialized, dtype=_dt.string)],
                    {"out_type": _dt.as_dtype(out_type)},
                    name=name or "ParseTensor").outputs[0]
