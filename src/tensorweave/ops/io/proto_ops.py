"""`tf.io.decode_proto` and `tf.io.encode_proto` (DecodeProtoV2, EncodeProto): fields of
serialized protocol buffer messages as tensors, and back.

The message types come from a descriptor pool: "local://" (or "") is the protobuf
library's default pool (every message class the program imported; TF's own protos, as
the `tensorboard` package ships them, are loaded when a type is not found there, as
TF's pool has them), "bytes://<FileDescriptorSet>" one built from the bytes, and
anything else the path of a file holding a serialized FileDescriptorSet (`protoc
--descriptor_set_out=... --include_imports`).

Decoding reads the wire format itself, as TF's kernel does on its fast path, so the
values are TF's for every message the wire format allows: a repeated field in packed
and unpacked form alike, the last value of a non-repeated field that occurs twice (the
last occurrence of a message field), enum numbers the enum does not declare, strings
that are not UTF-8, unknown fields and fields of a wrong wire type skipped. With
`sanitize=True` or `message_format="text"` each message is first parsed into a message
object and serialized again (TF does the same), so there a repeated message field
merges. Each output has the shape of the input plus one dimension, as long as the
largest number of values of that field in the batch (at least 1): the `sizes` output
counts the values of each message, and the rest is padding, the field's default value
(its declared default for an optional field, zero or "" for a repeated one).

Encoding writes the fields in field-number order, each repeated field packed when its
descriptor says so, the first `sizes[..., i]` values of each field's last dimension.

The dtypes a field may be decoded to or encoded from are TF's:
double: float64; float: float32, float64; int32, sint32, sfixed32: int32, int64; int64,
sint64, sfixed64: int64; uint32, fixed32: uint32, uint64; uint64, fixed64: uint64;
bool: bool; enum: int32; string, bytes, message, group: string.
Neither op is differentiable.
"""
from __future__ import annotations

import collections
import struct
import threading
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import (REQUIRED, TypeListAttr, kernel, not_differentiable,
                                            register_op)
from tensorweave.framework.shapes import TensorShape, unknown_shape, with_rank_at_least

# FieldDescriptor.TYPE_* (descriptor.proto numbers, fixed by the protobuf format)
_DOUBLE, _FLOAT, _INT64, _UINT64, _INT32, _FIXED64, _FIXED32, _BOOL, _STRING, _GROUP, \
    _MESSAGE, _BYTES, _UINT32, _ENUM, _SFIXED32, _SFIXED64, _SINT32, _SINT64 = range(1, 19)
_TYPE_NAMES = {_DOUBLE: "double", _FLOAT: "float", _INT64: "int64", _UINT64: "uint64",
               _INT32: "int32", _FIXED64: "fixed64", _FIXED32: "fixed32", _BOOL: "bool",
               _STRING: "string", _GROUP: "group", _MESSAGE: "message", _BYTES: "bytes",
               _UINT32: "uint32", _ENUM: "enum", _SFIXED32: "sfixed32",
               _SFIXED64: "sfixed64", _SINT32: "sint32", _SINT64: "sint64"}
_ALLOWED = {
    _DOUBLE: (_dt.float64,), _FLOAT: (_dt.float32, _dt.float64),
    _INT32: (_dt.int32, _dt.int64), _SINT32: (_dt.int32, _dt.int64),
    _SFIXED32: (_dt.int32, _dt.int64), _INT64: (_dt.int64,), _SINT64: (_dt.int64,),
    _SFIXED64: (_dt.int64,), _UINT32: (_dt.uint32, _dt.uint64),
    _FIXED32: (_dt.uint32, _dt.uint64), _UINT64: (_dt.uint64,), _FIXED64: (_dt.uint64,),
    _BOOL: (_dt.bool,), _ENUM: (_dt.int32,), _STRING: (_dt.string,),
    _BYTES: (_dt.string,), _MESSAGE: (_dt.string,), _GROUP: (_dt.string,)}
_DT_NAMES = {_dt.float32: "DT_FLOAT", _dt.float64: "DT_DOUBLE", _dt.int32: "DT_INT32",
             _dt.int64: "DT_INT64", _dt.uint32: "DT_UINT32", _dt.uint64: "DT_UINT64",
             _dt.bool: "DT_BOOL", _dt.string: "DT_STRING"}
_VARINT, _I64, _LEN, _SGROUP, _EGROUP, _I32 = 0, 1, 2, 3, 4, 5
_WIRE = {_DOUBLE: _I64, _FIXED64: _I64, _SFIXED64: _I64, _FLOAT: _I32, _FIXED32: _I32,
         _SFIXED32: _I32, _STRING: _LEN, _BYTES: _LEN, _MESSAGE: _LEN, _GROUP: _SGROUP}
_MASK32, _MASK64 = (1 << 32) - 1, (1 << 64) - 1


def _wire_type(ftype: int) -> int:
    return _WIRE.get(ftype, _VARINT)


def _tf_dtype_name(dtype) -> str:
    """TF's DataTypeString: "float" for float32, "double" for float64, else the name."""
    return {"float32": "float", "float64": "double"}.get(dtype.name, dtype.name)


# --- descriptor pools -----------------------------------------------------------------------
_POOLS: Dict[bytes, object] = {}
_POOLS_LOCK = threading.Lock()
_LOCAL = [False]  # TF's own protos loaded into the default pool


def _load_tf_protos() -> None:
    """Imports the tensorboard package's copies of TF's protos (tensorflow.Summary, ...),
    which registers them in the default pool, as TF's local pool holds them."""
    if _LOCAL[0]:
        return
    import importlib
    import pkgutil
    try:
        import tensorboard.compat.proto as protos
    except ImportError:
        _LOCAL[0] = True
        return
    for info in pkgutil.iter_modules(protos.__path__):
        if info.name.endswith("_pb2"):
            try:
                importlib.import_module("tensorboard.compat.proto." + info.name)
            except Exception:  # noqa: BLE001 - a proto module that does not load is skipped
                continue
    _LOCAL[0] = True


def _pool_from_file_set(data: bytes, source: str):
    from google.protobuf import descriptor_pb2, descriptor_pool
    file_set = descriptor_pb2.FileDescriptorSet()
    try:
        file_set.ParseFromString(data)
        pool = descriptor_pool.DescriptorPool()
        remaining = list(file_set.file)
        added: set = set()
        while remaining:  # dependencies first, whatever order the set lists them in
            ready = [f for f in remaining if all(d in added for d in f.dependency)]
            if not ready:
                ready = remaining[:1]
            for f in ready:
                pool.Add(f)
                added.add(f.name)
                remaining.remove(f)
    except Exception:  # noqa: BLE001 - any parse or build failure: TF's message
        raise _not_a_file_set(source) from None
    return pool


def _not_a_file_set(source: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(
        None, None, "Source does not represent serialized file descriptor set proto. This "
        "may be due to a missing dependency on the file containing "
        "REGISTER_DESCRIPTOR_POOL(\"%s\", ...);" % source)


def descriptor_pool_of(source) -> object:
    """The descriptor pool `descriptor_source` names (see the module docstring).

    Raises:
      InvalidArgumentError: the source is neither "local://", "bytes://..." nor a
        readable FileDescriptorSet file.
    """
    from google.protobuf import descriptor_pool
    raw = source if isinstance(source, bytes) else str(source).encode("utf-8")
    if raw in (b"", b"local://"):
        return descriptor_pool.Default()
    with _POOLS_LOCK:
        pool = _POOLS.get(raw)
    if pool is not None:
        return pool
    text = raw.decode("utf-8", "replace")
    if raw.startswith(b"bytes://"):
        pool = _pool_from_file_set(raw[len(b"bytes://"):], text)
    else:
        from tensorweave.platform import gfile
        try:
            with gfile.GFile(text, "rb") as f:
                data = f.read()
        except (errors.OpError, OSError):
            raise _not_a_file_set(text) from None  # TF reports a missing file so too
        pool = _pool_from_file_set(data, text)
    with _POOLS_LOCK:
        _POOLS[raw] = pool
    return pool


def _local_candidates(message_type: str):
    """(pool, name) pairs where "local://" looks for `message_type`: the default pool;
    tensorweave's tf.train.Example family; TF's protos as the tensorboard package ships
    them (in its own "tensorboard" package, wire-compatible with "tensorflow")."""
    from google.protobuf import descriptor_pool
    from tensorweave.ops.io import example_proto
    default = descriptor_pool.Default()
    yield default, message_type
    example = next(iter(example_proto.MESSAGES.values())).DESCRIPTOR.file.pool
    yield example, message_type
    _load_tf_protos()
    yield default, message_type
    if message_type.startswith("tensorflow."):
        yield default, "tensorboard." + message_type[len("tensorflow."):]


def _message_descriptor(source, message_type: str):
    """(pool, descriptor) of `message_type` in the pool `source` names."""
    raw = source if isinstance(source, bytes) else str(source).encode("utf-8")
    candidates = _local_candidates(message_type) if raw in (b"", b"local://") else \
        [(descriptor_pool_of(source), message_type)]
    for pool, name in candidates:
        try:
            return pool, pool.FindMessageTypeByName(name)
        except KeyError:
            continue
    raise errors.InvalidArgumentError(None, None, "No descriptor found for message type %s"
                                      % message_type)


def _field_descriptors(pool, message_desc, field_names: Sequence[str]) -> list:
    fields = []
    for name in field_names:
        field = message_desc.fields_by_name.get(name)
        if field is None:  # an extension, by its full name
            try:
                field = pool.FindExtensionByName(name)
            except KeyError:
                field = None
            if field is not None and field.containing_type is not message_desc:
                field = None
        if field is None:
            raise errors.InvalidArgumentError(None, None, "Unknown field: %s in message type "
                                              "%s" % (name, message_desc.full_name))
        fields.append(field)
    return fields


class _Schema:
    """What a kernel resolved once: the message class and the fields."""

    __slots__ = ("message_desc", "fields", "by_number")

    def __init__(self, message_desc, fields):
        self.message_desc, self.fields = message_desc, fields
        self.by_number: Dict[int, List[int]] = {}
        for i, f in enumerate(fields):
            self.by_number.setdefault(f.number, []).append(i)

    def message_class(self):
        from google.protobuf import message_factory
        return message_factory.GetMessageClass(self.message_desc)


def _schema(ctx, descriptor_source, message_type: str, field_names) -> _Schema:
    st = ctx.state
    schema = st.get("schema")
    if schema is None:
        pool, desc = _message_descriptor(descriptor_source, message_type)
        schema = st["schema"] = _Schema(desc, _field_descriptors(pool, desc, field_names))
    return schema


# --- the wire format ------------------------------------------------------------------------
class _Truncated(Exception):
    pass


def _read_varint(buf: bytes, pos: int) -> Tuple[int, int]:
    result, shift = 0, 0
    n = len(buf)
    while True:
        if pos >= n or shift > 63:
            raise _Truncated()
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _MASK64, pos
        shift += 7


def _skip_field(buf: bytes, pos: int, wire: int, number: int) -> int:
    """The position after a field's value (a group: after its end tag)."""
    if wire == _VARINT:
        return _read_varint(buf, pos)[1]
    if wire == _I64:
        pos += 8
    elif wire == _I32:
        pos += 4
    elif wire == _LEN:
        length, pos = _read_varint(buf, pos)
        pos += length
    elif wire == _SGROUP:
        while True:
            tag, pos = _read_varint(buf, pos)
            if tag & 7 == _EGROUP:
                if tag >> 3 != number:
                    raise _Truncated()
                return pos
            pos = _skip_field(buf, pos, tag & 7, tag >> 3)
    else:
        raise _Truncated()
    if pos > len(buf):
        raise _Truncated()
    return pos


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _zigzag(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return (v >> 1) ^ -(v & 1)


def _varint_value(ftype: int, v: int):
    if ftype in (_INT32, _ENUM):
        return _signed(v, 32)
    if ftype == _INT64:
        return _signed(v, 64)
    if ftype == _UINT32:
        return v & _MASK32
    if ftype == _SINT32:
        return _zigzag(v, 32)
    if ftype == _SINT64:
        return _zigzag(v, 64)
    if ftype == _BOOL:
        return v != 0
    return v  # uint64


_FIXED_FORMATS = {_DOUBLE: "<d", _FIXED64: "<Q", _SFIXED64: "<q", _FLOAT: "<f",
                  _FIXED32: "<I", _SFIXED32: "<i"}


def _decode_fields(buf: bytes, schema: _Schema) -> List[list]:
    """The values of each requested field in one binary message, in wire order (one at
    most for a non-repeated field: the last)."""
    out: List[list] = [[] for _ in schema.fields]
    pos, n = 0, len(buf)
    while pos < n:
        try:
            tag, pos = _read_varint(buf, pos)
        except _Truncated:
            raise errors.DataLossError(None, None, "CountFields: Failed to consume entire "
                                       "buffer") from None
        number, wire = tag >> 3, tag & 7
        targets = schema.by_number.get(number)
        try:
            if targets is None or number == 0:
                pos = _skip_field(buf, pos, wire, number)
                continue
            field = schema.fields[targets[0]]
            ftype = field.type
            expected = _wire_type(ftype)
            if wire == expected:
                start = pos
                pos = _skip_field(buf, pos, wire, number)
                if wire == _VARINT:
                    values = [_varint_value(ftype, _read_varint(buf, start)[0])]
                elif wire in (_I32, _I64):
                    values = [struct.unpack_from(_FIXED_FORMATS[ftype], buf, start)[0]]
                elif wire == _LEN:
                    length, body = _read_varint(buf, start)
                    values = [bytes(buf[body:body + length])]
                else:  # a group: the bytes between its tags
                    end = pos - len(_encode_varint((number << 3) | _EGROUP))
                    values = [bytes(buf[start:end])]
            elif wire == _LEN and field.is_repeated and expected != _LEN:
                length, start = _read_varint(buf, pos)  # a packed run of numbers
                pos = start + length
                if pos > n:
                    raise _Truncated()
                values = _unpack_run(buf, start, pos, ftype, expected)
            else:
                pos = _skip_field(buf, pos, wire, number)  # a wrong wire type: ignored
                continue
        except (_Truncated, struct.error):
            raise errors.DataLossError(None, None, "ReadValue: Failed skipping field when "
                                       "counting") from None
        for i in targets:
            if schema.fields[i].is_repeated:
                out[i].extend(values)
            else:
                out[i][:] = values[-1:]
    return out


def _unpack_run(buf: bytes, start: int, end: int, ftype: int, wire: int) -> list:
    if wire == _VARINT:
        values, pos = [], start
        while pos < end:
            v, pos = _read_varint(buf, pos)
            values.append(_varint_value(ftype, v))
        if pos != end:
            raise _Truncated()
        return values
    fmt = _FIXED_FORMATS[ftype]
    size = 8 if wire == _I64 else 4
    if (end - start) % size:
        raise _Truncated()
    return list(struct.unpack_from("<%d%s" % ((end - start) // size, fmt[1]), buf, start))


def _reserialized(data: bytes, schema: _Schema, text: bool) -> bytes:
    """The message parsed into a message object and serialized again (text messages,
    and binary ones with sanitize=True)."""
    from google.protobuf import text_format
    msg = schema.message_class()()
    try:
        if text:
            text_format.Parse(data.decode("utf-8") if isinstance(data, bytes) else data, msg)
        else:
            msg.ParseFromString(data)
    except Exception:  # noqa: BLE001 - any parse failure is TF's DataLoss
        raise errors.DataLossError(None, None, "Unable to parse %s protobuf"
                                   % ("text" if text else "binary")) from None
    return msg.SerializeToString()


# --- DecodeProtoV2 --------------------------------------------------------------------------
def _decode_shape(op):
    batch = op.inputs[0].shape
    n = len(op.get_attr("output_types"))
    if batch.ndims is None:
        return [unknown_shape() for _ in range(n + 1)]
    return [batch.concatenate([n])] + [batch.concatenate([None]) for _ in range(n)]


register_op("DecodeProtoV2", inputs=["bytes: string"],
            outputs=["sizes: int32", "values: output_types"],
            attrs={"message_type": REQUIRED, "field_names": REQUIRED,
                   "output_types": TypeListAttr(), "descriptor_source": "local://",
                   "message_format": "binary", "sanitize": False},
            shape=_decode_shape)
not_differentiable("DecodeProtoV2")


def _field_default(field, dtype):
    if field.is_repeated or field.type in (_MESSAGE, _GROUP):
        return b"" if dtype is _dt.string else 0
    value = field.default_value
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


@kernel("DecodeProtoV2", cheap=False)
def _decode_proto_kernel(ctx, data):
    a = ctx.attrs
    names, types = list(a["field_names"]), list(a["output_types"])
    if len(names) != len(types):
        raise errors.InvalidArgumentError(None, ctx.op, "field_names and output_types "
                                          "attributes must have the same length")
    fmt = a["message_format"]
    if fmt not in ("binary", "text"):
        raise errors.InvalidArgumentError(None, ctx.op, "format must be one of binary or text")
    schema = _schema(ctx, a["descriptor_source"], a["message_type"], names)
    for field, dtype in zip(schema.fields, types):
        if dtype not in _ALLOWED[field.type]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Unexpected output type for %s: %s to %s"
                % (field.full_name, _TYPE_NAMES[field.type], _DT_NAMES.get(
                    dtype, "DT_" + dtype.name.upper())))
    data = np.asarray(data, dtype=object)
    flat = data.reshape(-1)
    rewrite = fmt == "text" or a["sanitize"]
    decoded = []
    for b in flat:
        b = b if isinstance(b, bytes) else bytes(b, "utf-8")
        if rewrite:
            b = _reserialized(b, schema, fmt == "text")
        decoded.append(_decode_fields(b, schema))
    n_fields = len(schema.fields)
    sizes = np.zeros((len(flat), n_fields), np.int32)
    outputs = []
    for i, (field, dtype) in enumerate(zip(schema.fields, types)):
        counts = [len(d[i]) for d in decoded]
        sizes[:, i] = counts
        width = max(counts + [1])
        np_dtype = object if dtype is _dt.string else dtype.as_numpy_dtype
        out = np.empty((len(flat), width), dtype=np_dtype)
        out.fill(_field_default(field, dtype))
        for r, d in enumerate(decoded):
            if d[i]:
                out[r, :len(d[i])] = np.array(d[i], dtype=np_dtype) if np_dtype is not object \
                    else _object_row(d[i])
        outputs.append(out.reshape(data.shape + (width,)))
    return (sizes.reshape(data.shape + (n_fields,)),) + tuple(outputs)


def _object_row(values: list) -> np.ndarray:
    row = np.empty(len(values), dtype=object)
    row[:] = values
    return row


DecodeProtoOutput = collections.namedtuple("DecodeProtoV2", ["sizes", "values"])


@tf_export("io.decode_proto")
def decode_proto(bytes, message_type: str, field_names, output_types,  # noqa: A002
                 descriptor_source="local://", message_format: str = "binary",
                 sanitize: bool = False, name: Optional[str] = None):
    """Extracts fields of serialized protocol buffer messages into tensors.

    Each output is a dense tensor padded to the largest number of values of its field
    in the batch (at least 1); `sizes` gives the number of values of each field of each
    message. A message or group field decodes to its serialized bytes (DT_STRING), an
    enum field to int32, a uint64 field to uint64 (see the module docstring for every
    type).

    Args:
      bytes: a string Tensor of serialized messages, of any shape `batch_shape`.
      message_type: the full name of the message type ("package.Message").
      field_names: the names of the fields to extract (an extension by its full name).
      output_types: the dtype of each field's output.
      descriptor_source: "local://", "bytes://<serialized FileDescriptorSet>", or the
        path of a file holding a serialized FileDescriptorSet.
      message_format: "binary" or "text".
      sanitize: whether to parse and serialize each binary message again first.
      name: a name for the operation.

    Returns:
      A namedtuple (sizes, values): `sizes` an int32 Tensor of shape
      `batch_shape + [len(field_names)]`, `values` a list of Tensors of shapes
      `batch_shape + [max count]`.

    Raises:
      TypeError: `field_names` or `output_types` is not a list.
      InvalidArgumentError: at run time, for an unknown message type or field, a dtype
        the field cannot be decoded to, or a message that does not parse (DataLossError).
    """
    if not isinstance(field_names, (list, tuple)):
        raise TypeError("Expected list for 'field_names' argument to 'decode_proto_v2' Op, "
                        "not %r." % (field_names,))
    if not isinstance(output_types, (list, tuple)):
        raise TypeError("Expected list for 'output_types' argument to 'decode_proto_v2' Op, "
                        "not %r." % (output_types,))
    attrs = {"message_type": _as_str(message_type), "field_names": [_as_str(f) for f in
                                                                     field_names],
             "output_types": [_dt.as_dtype(t) for t in output_types],
             "descriptor_source": _as_source(descriptor_source),
             "message_format": _as_str(message_format or "binary"),
             "sanitize": bool(sanitize)}
    op = apply_op("DecodeProtoV2", [bytes], attrs, name=name or "DecodeProtoV2")
    return DecodeProtoOutput(op.outputs[0], list(op.outputs[1:]))


def _as_str(v) -> str:
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def _as_source(v):
    """A descriptor_source attr: bytes stay bytes (a bytes:// set is binary)."""
    if v is None:
        return "local://"
    return v if isinstance(v, bytes) else str(v)


# --- EncodeProto ----------------------------------------------------------------------------
def _encode_shape(op):
    out = unknown_shape()
    for t in reversed(op.inputs[1:]):
        s = with_rank_at_least(t.shape, 2)
        if s.ndims is not None:
            s = TensorShape(s.as_list()[:-1])
        out = out.merge_with(s)
    return out


register_op("EncodeProto", inputs=["sizes: int32", "values: Tinput_types"],
            outputs=["bytes: string"],
            attrs={"field_names": REQUIRED, "message_type": REQUIRED,
                   "descriptor_source": "local://", "Tinput_types": TypeListAttr()},
            shape=_encode_shape)
not_differentiable("EncodeProto")


def _encode_varint(v: int) -> bytes:
    v &= _MASK64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _encode_scalar(ftype: int, v) -> bytes:
    """One value of a field as the wire format writes it (no tag)."""
    if ftype in (_INT32, _ENUM):
        return _encode_varint(_signed(int(v), 32))
    if ftype in (_INT64, _UINT64):
        return _encode_varint(int(v))
    if ftype == _UINT32:
        return _encode_varint(int(v) & _MASK32)
    if ftype == _SINT32:
        s = _signed(int(v), 32)
        return _encode_varint(((s << 1) ^ (s >> 31)) & _MASK32)
    if ftype == _SINT64:
        s = _signed(int(v), 64)
        return _encode_varint((s << 1) ^ (s >> 63))
    if ftype == _BOOL:
        return b"\x01" if v else b"\x00"
    if ftype in (_FIXED32, _SFIXED32):
        return struct.pack("<I", int(v) & _MASK32)
    if ftype in (_FIXED64, _SFIXED64):
        return struct.pack("<Q", int(v) & _MASK64)
    if ftype == _FLOAT:
        return struct.pack("<f", np.float32(v))
    if ftype == _DOUBLE:
        return struct.pack("<d", float(v))
    b = v if isinstance(v, bytes) else str(v).encode("utf-8")
    return b if ftype == _GROUP else _encode_varint(len(b)) + b


def _encode_field(field, count: int, values) -> bytes:
    ftype, number = field.type, field.number
    if field.is_packed:
        payload = b"".join(_encode_scalar(ftype, v) for v in values[:max(count, 0)])
        return _encode_varint((number << 3) | _LEN) + _encode_varint(len(payload)) + payload
    out = []
    tag = _encode_varint((number << 3) | _wire_type(ftype))
    for v in values[:count]:
        out.append(tag + _encode_scalar(ftype, v))
        if ftype == _GROUP:
            out.append(_encode_varint((number << 3) | _EGROUP))
    return b"".join(out)


@kernel("EncodeProto", cheap=False)
def _encode_proto_kernel(ctx, sizes, *values):
    a = ctx.attrs
    names = list(a["field_names"])
    if len(values) != len(names):
        raise errors.InvalidArgumentError(None, ctx.op, "Length of inputs list must match "
                                          "field_names")
    schema = _schema(ctx, a["descriptor_source"], a["message_type"], names)
    for field, dtype, name in zip(schema.fields, a["Tinput_types"], names):
        if dtype not in _ALLOWED[field.type]:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Incompatible type for field %s.  Saw dtype: %s but field type "
                "is: %s" % (name, _tf_dtype_name(dtype), _TYPE_NAMES[field.type]))
    sizes = np.asarray(sizes)
    values = [np.asarray(v) for v in values]
    batch = values[0].shape[:-1] if values else sizes.shape[:-1]
    want = tuple(batch) + (len(names),)
    if sizes.shape != want:
        raise errors.InvalidArgumentError(
            None, ctx.op, "sizes should be batch_size + [len(field_names)].  Saw: [%s] but "
            "expected: [%s]" % (",".join(map(str, sizes.shape)), ",".join(map(str, want))))
    n = int(np.prod(batch, dtype=np.int64))
    flat_sizes = sizes.reshape(n, len(names))
    flat_values = [v.reshape(n, v.shape[-1]) for v in values]
    order = sorted(range(len(names)), key=lambda i: schema.fields[i].number)
    out = np.empty(n, dtype=object)
    for m in range(n):
        parts = []
        for i in order:
            count = int(flat_sizes[m, i])
            if count == 0:
                continue
            width = flat_values[i].shape[1]
            if count > width:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Size to write must not be larger than value tensor; but "
                    "saw: %d > %d at message %d field %d" % (count, width, m, i))
            parts.append(_encode_field(schema.fields[i], count, flat_values[i][m]))
        out[m] = b"".join(parts)
    return out.reshape(batch)


@tf_export("io.encode_proto")
def encode_proto(sizes, values, field_names, message_type: str,
                 descriptor_source="local://", name: Optional[str] = None) -> Tensor:
    """Serializes protocol buffer messages from tensors of their fields.

    Message `b` gets the first `sizes[b, i]` values of `values[i][b]` as field
    `field_names[i]` (every tensor of `values` has the shape `batch_shape + [k_i]`).

    Args:
      sizes: an int32 Tensor of shape `batch_shape + [len(field_names)]`.
      values: a list of Tensors, one per field, of a dtype the field can be encoded from.
      field_names: the names of the fields.
      message_type: the full name of the message type.
      descriptor_source: "local://", "bytes://<serialized FileDescriptorSet>", or the
        path of a file holding a serialized FileDescriptorSet.
      name: a name for the operation.

    Returns:
      A string Tensor of shape `batch_shape`: the serialized messages.

    Raises:
      TypeError: `sizes` is not int32, or `field_names` is not a list.
      ValueError: a value has rank below 2.
      InvalidArgumentError: at run time, for an unknown message type or field, a dtype
        the field cannot be encoded from, or sizes that do not fit the values.
    """
    if not isinstance(field_names, (list, tuple)):
        raise TypeError("Expected list for 'field_names' argument to 'encode_proto' Op, "
                        "not %r." % (field_names,))
    return apply_op("EncodeProto", [sizes, list(values)],
                    {"field_names": [_as_str(f) for f in field_names],
                     "message_type": _as_str(message_type),
                     "descriptor_source": _as_source(descriptor_source)},
                    name=name or "EncodeProto").outputs[0]
