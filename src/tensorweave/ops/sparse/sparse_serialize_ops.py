"""SparseTensors as strings: SerializeSparse, SerializeManySparse, DeserializeManySparse.
Each SparseTensor is three serialized `TensorProto`s (indices, values, dense shape), the
form TensorFlow writes; the protobuf classes come from the `tensorboard` package and are
imported when a kernel runs."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, with_rank
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.sparse import sparse_util as _su

_SPARSE_IN = ["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"]


def _string_content(strings) -> bytes:
    """Strings as TF's C++ writes them into `tensor_content` (every length as a varint,
    then the bytes), the form of TF's serialized SparseTensor values."""
    from tensorweave.ops.io.sstable import put_varint
    return b"".join([put_varint(len(s)) for s in strings] + list(strings))


def _serialize(arr: np.ndarray) -> bytes:
    from tensorboard.compat.proto import tensor_pb2
    from tensorweave.framework.graph_def_proto import array_to_tensor_proto
    proto = tensor_pb2.TensorProto()
    arr = np.asarray(arr)
    array_to_tensor_proto(arr, proto, content=True)  # a kernel's bytes (C++'s)
    if proto.string_val:  # C++ puts strings in tensor_content too
        del proto.string_val[:]
        proto.tensor_content = _string_content(
            [x if isinstance(x, bytes) else str(x).encode() for x in arr.reshape(-1)])
    return proto.SerializeToString()


def _parse(ctx, data: bytes, what: str) -> np.ndarray:
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import tensor_pb2
    from tensorweave.framework.graph_def_proto import tensor_proto_to_array
    proto = tensor_pb2.TensorProto()
    try:
        proto.ParseFromString(data)
    except DecodeError:
        raise _su.invalid(ctx, "Could not parse serialized proto") from None
    try:
        return np.array(tensor_proto_to_array(proto))
    except ValueError as e:
        raise _su.invalid(ctx, "Could not parse serialized_sparse %s: %s" % (what, e)) \
            from None


def _check_out_type(ctx):
    if ctx.attrs["out_type"] is not _dt.string:
        raise _su.invalid(ctx, "tensorweave serializes SparseTensors to strings only "
                          "(out_type=variant is not supported)")


for _op_type, _shape in (("SerializeSparse", lambda op: TensorShape([3])),
                         ("SerializeManySparse", lambda op: TensorShape([None, 3]))):
    register_op(_op_type, inputs=_SPARSE_IN, outputs=["serialized_sparse: out_type"],
                attrs={"T": TypeAttr(), "out_type": TypeAttr((_dt.string,),
                                                             default=_dt.string)},
                shape=_shape)
    not_differentiable(_op_type)


def _objects(items, shape):
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


@kernel("SerializeSparse")
def _serialize_sparse_kernel(ctx, indices, values, shape):
    _check_out_type(ctx)
    _su.check_sparse(ctx, indices, values, shape)
    return _objects([_serialize(indices), _serialize(values), _serialize(shape)], (3,))


@kernel("SerializeManySparse")
def _serialize_many_sparse_kernel(ctx, indices, values, shape):
    _check_out_type(ctx)
    _su.check_sparse(ctx, indices, values, shape)
    if shape.size < 2:
        raise _su.invalid(ctx, "Rank of input SparseTensor should be > 1, but saw rank: %d"
                          % shape.size)
    n = int(shape[0])
    batch = indices[:, 0]
    if ((batch < 0) | (batch >= n)).any():
        raise _su.invalid(ctx, "Batch index out of range [0, %d)" % n)
    order = np.argsort(batch, kind="stable")
    starts = np.searchsorted(batch[order], np.arange(n + 1))
    items = []
    for i in range(n):  # one serialized SparseTensor per minibatch entry
        rows = order[starts[i]:starts[i + 1]]
        items += [_serialize(indices[rows, 1:]), _serialize(values[rows]),
                  _serialize(np.asarray(shape[1:], np.int64))]
    return _objects(items, (n, 3))


def _deserialize_many_shape(op):
    """TF's: a [N, 3] matrix of strings."""
    serialized = with_rank(op.inputs[0].shape, 2)
    columns = serialized.as_list()[1] if serialized.ndims is not None else None
    if columns is not None and columns != 3:
        raise ValueError("Dimension must be 3 but is %d" % columns)
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


register_op("DeserializeManySparse", inputs=["serialized_sparse: string"],
            outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
            attrs={"dtype": REQUIRED}, shape=_deserialize_many_shape)
not_differentiable("DeserializeManySparse")


@kernel("DeserializeManySparse")
def _deserialize_many_sparse_kernel(ctx, serialized):
    dtype = ctx.attrs["dtype"]
    if serialized.ndim != 2 or serialized.shape[1] != 3:
        raise _su.invalid(ctx, "Serialized sparse should be a matrix with 3 columns, got %s"
                          % _su.shape_str(serialized.shape))
    n = serialized.shape[0]
    if n == 0:
        raise _su.invalid(ctx, "Serialized sparse should have non-zero rows")
    parts = []
    for i in range(n):
        idx = _parse(ctx, serialized[i, 0], "indices").astype(np.int64)
        vals = _parse(ctx, serialized[i, 1], "values")
        shp = _parse(ctx, serialized[i, 2], "shape").astype(np.int64)
        want = np.dtype(object) if dtype is _dt.string else np.dtype(dtype.as_numpy_dtype)
        if vals.dtype != want:
            raise _su.invalid(ctx, "Requested SparseTensor of type %s but SparseTensor[%d]"
                              ".values.dtype() == %s" % (dtype.name, i, vals.dtype))
        if parts and shp.size != parts[0][2].size:
            raise _su.invalid(ctx, "Inconsistent shape across SparseTensors: rank prior to "
                              "SparseTensor[%d] was: %d but rank of SparseTensor[%d] is: %d"
                              % (i, parts[0][2].size, i, shp.size))
        parts.append((idx.reshape(-1, shp.size), vals, shp))
    rank = parts[0][2].size
    indices = np.concatenate([np.concatenate([np.full((p[0].shape[0], 1), i, np.int64), p[0]],
                                             axis=1) for i, p in enumerate(parts)])
    values = np.concatenate([p[1] for p in parts])
    shape = np.concatenate([[n], np.max([p[2] for p in parts], axis=0)]) if rank else \
        np.array([n], np.int64)
    return indices.reshape(-1, rank + 1), values, shape.astype(np.int64)


@tf_export("serialize_sparse", "io.serialize_sparse")
def serialize_sparse(sp_input, name: Optional[str] = None, out_type=_dt.string):
    """A SparseTensor as a string vector of 3 serialized TensorProtos (TF1).

    Args:
      sp_input: a SparseTensor.
      name: op name.
      out_type: tf.string (variant is not supported).

    Returns:
      A string Tensor [3]: indices, values and dense shape.
    """
    sp = _su.to_sparse(sp_input)
    return apply_op("SerializeSparse", [sp.indices, sp.values, sp.dense_shape],
                    {"out_type": _dt.as_dtype(out_type)},
                    name=name or "SerializeSparse").outputs[0]


@tf_export("serialize_many_sparse", "io.serialize_many_sparse")
def serialize_many_sparse(sp_input, name: Optional[str] = None, out_type=_dt.string):
    """A SparseTensor of rank R > 1 as N serialized SparseTensors of rank R - 1, one per
    entry of its first (minibatch) dimension (TF1).

    Args:
      sp_input: a SparseTensor.
      name: op name.
      out_type: tf.string (variant is not supported).

    Returns:
      A string Tensor [N, 3].
    """
    sp = _su.to_sparse(sp_input)
    return apply_op("SerializeManySparse", [sp.indices, sp.values, sp.dense_shape],
                    {"out_type": _dt.as_dtype(out_type)},
                    name=name or "SerializeManySparse").outputs[0]


@tf_export("deserialize_many_sparse", "io.deserialize_many_sparse")
def deserialize_many_sparse(serialized_sparse, dtype, rank=None,
                            name: Optional[str] = None) -> SparseTensor:
    """One SparseTensor from N serialized ones of one rank, stacked along a new first
    dimension (TF1); every other dimension is the largest among them.

    Args:
      serialized_sparse: a string Tensor [N, 3] (from `serialize_many_sparse`, or rows of
        `serialize_sparse`).
      dtype: the dtype of the values.
      rank: optional Python int, the rank of the result (for its static shape).
      name: op name.

    Returns:
      A SparseTensor of rank (serialized rank + 1).

    Raises:
      InvalidArgumentError (at run time): unparsable input, another dtype, mixed ranks.
    """
    with name_scope(name, "DeserializeManySparse", [serialized_sparse]) as scope:
        serialized = convert_to_tensor(serialized_sparse, dtype=_dt.string)
        op = apply_op("DeserializeManySparse", [serialized], {"dtype": _dt.as_dtype(dtype)},
                      name=scope)
        indices, values, shape = op.outputs
        if rank is not None:
            indices.set_shape([None, rank])
            shape.set_shape([rank])
        return SparseTensor(indices, values, shape)
