"""TensorFlow's GraphDef protocol buffer, both ways.

`graph_to_proto` writes a graph as `tensorflow.GraphDef` (the message class that the
`tensorboard` package ships as `tensorboard.compat.proto.graph_pb2.GraphDef`): TF's op
types and attr names, attr values as `AttrValue`s (dtypes as `DataType` enums, shapes as
`TensorShapeProto`, arrays as `TensorProto`: raw little-endian `tensor_content` for
numbers, `string_val` for strings), inputs as "op", "op:i" and "^op", devices, and the
"_class" colocation attr, so TensorFlow and TensorBoard read it as one of their own.
Both writers lower tensorweave's private ops (the fused assert kernels, ...) to the
standard ops TF builds for them (graph_def_lowering.py), unless `lower=False`: the
partition graphs and the graphs sent to tensorweave's own workers keep them.

`graph_def_from_proto` turns such a message (written by TF or by us) into the GraphDef
of `framework/serialize.py`, whose nodes carry decoded attr values and whose `library`
holds the decoded FunctionDefs (function_library.py) that TF 2.x's functional ops call;
`import_graph_def` and `graph_from_proto` import from there. The JSON form of
serialize.py stays the readable debug form.

The protobuf modules are imported inside functions: `import tensorweave` does not load
them.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import function_library as _flib
from tensorweave.framework import graph_def_lowering as _lowering
from tensorweave.framework import registry as _reg
from tensorweave.framework import serialize as _ser
from tensorweave.framework.shapes import TensorShape

# The GraphDef version of TensorFlow 1.15, the last TF1 release: what TF reads our
# graphs as. (Our own importer does not depend on it.)
TF_PRODUCER = 134
TF_MIN_CONSUMER = 0
_REF_OFFSET = 100  # DT_FLOAT_REF = DT_FLOAT + 100 and so on


def _pb():
    from tensorboard.compat.proto import (attr_value_pb2, graph_pb2, node_def_pb2,
                                          tensor_pb2, tensor_shape_pb2, versions_pb2)
    return graph_pb2, node_def_pb2, attr_value_pb2, tensor_pb2, tensor_shape_pb2, versions_pb2


def is_graph_def_proto(obj) -> bool:
    """Whether `obj` is a GraphDef message: tensorboard's copy of the proto (package
    "tensorboard") or TensorFlow's own ("tensorflow"); both have the same wire form."""
    return is_message(obj, "GraphDef")


def is_message(obj, name: str) -> bool:
    """Whether `obj` is a `name` protobuf message, TF's or tensorboard's copy."""
    if isinstance(obj, type):
        return False
    desc = getattr(obj, "DESCRIPTOR", None)
    return getattr(desc, "full_name", None) in ("tensorflow." + name, "tensorboard." + name)


class FuncAttr:
    """A function-valued attr (TF's `NameAttrList`): a function name and its attrs."""

    def __init__(self, name: str, attr: Optional[dict] = None):
        self.name = name
        self.attr = dict(attr or {})

    def __eq__(self, other):
        return isinstance(other, FuncAttr) and (self.name, self.attr) == (other.name,
                                                                            other.attr)

    def __repr__(self):
        return "FuncAttr(%r, %r)" % (self.name, self.attr)


# --- dtypes, shapes, tensors -------------------------------------------------------------
# DataType enum -> DType, filled as enums are met: decoding a GraphDef asks this for
# nearly every node, and `as_dtype`'s general dispatch costs more than the lookup
_DTYPE_OF_ENUM = {}


def dtype_from_enum(enum: int) -> _dt.DType:
    """The DType of a `DataType` enum value; reference types (DT_*_REF) give their base."""
    found = _DTYPE_OF_ENUM.get(enum)
    if found is not None:
        return found
    base = enum - _REF_OFFSET if enum > _REF_OFFSET else enum
    try:
        found = _dt.as_dtype(base)
    except (TypeError, ValueError, KeyError):
        raise ValueError("GraphDef uses DataType enum %d, which tensorweave does not "
                         "support" % base) from None
    _DTYPE_OF_ENUM[enum] = found
    return found


def shape_to_proto(shape: TensorShape, proto) -> None:
    """Fills a `TensorShapeProto` (unknown dims are -1, unknown rank `unknown_rank`)."""
    proto.SetInParent()  # a scalar shape sets no field, but is set
    if shape.ndims is None:
        proto.unknown_rank = True
        return
    for d in shape.as_list():
        proto.dim.add().size = -1 if d is None else d


def shape_from_proto(proto) -> TensorShape:
    """The TensorShape of a `TensorShapeProto` (negative sizes are unknown dims)."""
    if proto.unknown_rank:
        return _UNKNOWN_SHAPE
    return _shape_of_sizes(tuple([d.size for d in proto.dim]))


_UNKNOWN_SHAPE = TensorShape(None)


@functools.lru_cache(maxsize=4096)
def _shape_of_sizes(sizes: tuple) -> TensorShape:
    # TensorShapes are immutable, and a GraphDef repeats the same few shapes in many
    # attrs ("shape", "_output_shapes", ...): one object per distinct shape
    return TensorShape([None if d < 0 else d for d in sizes])


# DataType -> the repeated field that holds its values when tensor_content is empty
_VAL_FIELDS = {
    "float32": "float_val", "float64": "double_val", "int32": "int_val", "int16": "int_val",
    "int8": "int_val", "uint8": "int_val", "uint16": "int_val", "int64": "int64_val",
    "bool": "bool_val", "string": "string_val", "float16": "half_val",
    "bfloat16": "half_val", "uint32": "uint32_val", "uint64": "uint64_val",
    "complex64": "scomplex_val", "complex128": "dcomplex_val",
    **{name: "int_val" for name in ("qint8", "quint8", "qint16", "quint16", "qint32")},
}


# the dtypes TF writes as raw `tensor_content` (when more than one value is stored); the
# others, and single values, go in their typed `*_val` field
_CONTENT_TYPES = frozenset(["float16", "float32", "float64", "int8", "int16", "int32",
                            "int64", "uint8", "uint32", "uint64", "qint8", "quint8", "qint16",
                            "quint16", "qint32"])


def _plain_numpy_dtype(dt) -> np.dtype:
    """The NumPy type of a dtype's values in a TensorProto: a quantized type's integers
    (its arrays are structured, one integer field)."""
    np_dt = np.dtype(dt.as_numpy_dtype)
    return np.dtype(np_dt[0]) if np_dt.names else np_dt


def array_to_tensor_proto(arr: np.ndarray, proto, values: Optional[np.ndarray] = None,
                          content: bool = False) -> None:
    """Fills a `TensorProto` with `arr` the way TF writes it (byte for byte): as Python's
    make_tensor_proto, raw `tensor_content` for more than one value of a
    `_CONTENT_TYPES` dtype, else the typed value field, and with `values` (fewer values
    than `arr` holds, which repeats the last) only those; with `content`, as TF's
    kernels (C++ AsProtoTensorContent), `tensor_content` for every number type."""
    arr = np.asarray(arr)
    dt = _dt.string if arr.dtype == object or arr.dtype.kind in "SU" else _dt.as_dtype(
        arr.dtype)
    proto.dtype = dt.as_datatype_enum
    proto.tensor_shape.SetInParent()  # a scalar's shape is set, and empty
    for d in arr.shape:
        proto.tensor_shape.dim.add().size = d
    if arr.dtype.names:  # a quantized array: its integers
        arr = arr.view(arr.dtype[0])
        values = None if values is None else np.asarray(values).view(arr.dtype)
    flat = arr.reshape(-1) if values is None else np.asarray(values, arr.dtype).reshape(-1)
    if dt is _dt.string:
        proto.string_val.extend(x if isinstance(x, bytes) else str(x).encode() for x in flat)
        return
    np_dt = _plain_numpy_dtype(dt)
    if content or (values is None and arr.size > 1 and dt.name in _CONTENT_TYPES):
        proto.tensor_content = np.ascontiguousarray(arr,
                                                    dtype=np_dt.newbyteorder("<")).tobytes()
        return
    field = _VAL_FIELDS.get(dt.name)
    if field is None:
        raise ValueError("TensorProto of dtype %s has no tensorweave form" % dt.name)
    flat = flat.astype(np_dt)
    if field == "half_val":
        flat = flat.view(np.uint16)
    elif field in ("scomplex_val", "dcomplex_val"):
        flat = np.stack([flat.real, flat.imag], axis=-1).reshape(-1)
    getattr(proto, field).extend(flat.tolist())


def _decode_string_content(content: bytes, size: int) -> list:
    """Strings from a `tensor_content` as TF's C++ writes them (AsProtoTensorContent, e.g.
    a serialized SparseTensor's values): the `size` lengths as varints, then the bytes."""
    lengths, pos = [], 0
    for _ in range(size):
        n = shift = 0
        while True:
            if pos >= len(content):
                raise ValueError("TensorProto string content ends inside its lengths")
            byte = content[pos]
            pos += 1
            n |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        lengths.append(n)
    strings = []
    for n in lengths:
        strings.append(bytes(content[pos:pos + n]))
        pos += n
    if pos != len(content):
        raise ValueError("TensorProto string content does not hold %d strings" % size)
    return strings


def tensor_proto_to_array(proto) -> np.ndarray:
    """The (read-only) array a `TensorProto` holds: from `tensor_content`, or from the
    typed value fields, where fewer values than elements repeat the last one (as TF)."""
    dt = dtype_from_enum(proto.dtype)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    size = math.prod(shape)  # (NumPy's prod costs more than decoding a scalar)
    if dt is _dt.string:
        vals = _decode_string_content(proto.tensor_content, size) if proto.tensor_content \
            else list(proto.string_val)
        flat = np.empty(size, dtype=object)
        flat[:] = _filled(vals, size, b"")
        arr = flat.reshape(shape)
    else:
        np_dt = _plain_numpy_dtype(dt)
        if proto.tensor_content:
            raw = np.frombuffer(proto.tensor_content, dtype=np_dt.newbyteorder("<"))
            if raw.size != size:
                raise ValueError("TensorProto holds %d values of %s for shape %s"
                                 % (raw.size, dt.name, list(shape)))
            arr = raw.astype(np_dt).reshape(shape)
        else:
            field = _VAL_FIELDS.get(dt.name)
            if field is None:
                raise ValueError("TensorProto of dtype %s has no tensorweave form" % dt.name)
            vals = np.asarray(list(getattr(proto, field)))
            if field == "half_val":
                vals = vals.astype(np.uint16).view(np_dt)
            elif field in ("scomplex_val", "dcomplex_val"):
                vals = vals.reshape(-1, 2) if vals.size else vals.reshape(0, 2)
                vals = vals[:, 0] + 1j * vals[:, 1]
            arr = _filled(vals.astype(np_dt), size, np_dt.type(0)).astype(np_dt).reshape(shape)
        if dt.is_quantized:
            arr = arr.view(dt.as_numpy_dtype)
    arr.setflags(write=False)
    return arr


def _filled(vals, size: int, zero):
    if len(vals) == size:
        return vals
    if len(vals) > size:
        raise ValueError("TensorProto holds %d values for %d elements" % (len(vals), size))
    if isinstance(vals, np.ndarray):
        fill = vals[-1] if len(vals) else zero
        return np.concatenate([vals, np.full(size - len(vals), fill, vals.dtype)])
    return list(vals) + [vals[-1] if vals else zero] * (size - len(vals))


# --- attr values -------------------------------------------------------------------------
def attr_to_proto(v: Any, av, node: str = "?", key: str = "?") -> None:
    """Sets the `AttrValue` `av` to the attr value `v` (None leaves it unset)."""
    if v is None:
        return
    if isinstance(v, _dt.DType):
        av.type = v.as_datatype_enum
    elif isinstance(v, TensorShape):
        shape_to_proto(v, av.shape)
    elif isinstance(v, (bool, np.bool_)):
        av.b = bool(v)
    elif isinstance(v, (int, np.integer)):
        av.i = int(v)
    elif isinstance(v, (float, np.floating)):
        av.f = float(v)
    elif isinstance(v, str):
        av.s = v.encode()
    elif isinstance(v, bytes):
        av.s = v
    elif isinstance(v, np.ndarray):
        array_to_tensor_proto(v, av.tensor)
    elif isinstance(v, _flib.AttrPlaceholder):
        av.placeholder = v.name
    elif isinstance(v, FuncAttr):
        av.func.name = v.name
        for k, x in v.attr.items():
            attr_to_proto(x, av.func.attr[k], node, key)
    elif isinstance(v, (list, tuple)):
        _list_to_proto(v, av.list, node, key)
    else:
        raise ValueError("Cannot serialize attr '%s' of node '%s': values of type %s have "
                         "no GraphDef form" % (key, node, type(v).__name__))


def _list_to_proto(values, lst, node, key) -> None:
    lst.SetInParent()
    for x in values:
        if isinstance(x, _dt.DType):
            lst.type.append(x.as_datatype_enum)
        elif isinstance(x, TensorShape):
            shape_to_proto(x, lst.shape.add())
        elif isinstance(x, (bool, np.bool_)):
            lst.b.append(bool(x))
        elif isinstance(x, (int, np.integer)):
            lst.i.append(int(x))
        elif isinstance(x, (float, np.floating)):
            lst.f.append(float(x))
        elif isinstance(x, (str, bytes)):
            lst.s.append(x.encode() if isinstance(x, str) else x)
        elif isinstance(x, np.ndarray):
            array_to_tensor_proto(x, lst.tensor.add())
        elif isinstance(x, FuncAttr):
            f = lst.func.add()
            f.name = x.name
            for k, y in x.attr.items():
                attr_to_proto(y, f.attr[k], node, key)
        else:
            raise ValueError("Cannot serialize attr '%s' of node '%s': list items of type %s "
                             "have no GraphDef form" % (key, node, type(x).__name__))


def _text(s: bytes, as_bytes: bool):
    if as_bytes:
        return s
    try:
        return s.decode("utf-8")
    except UnicodeDecodeError:
        return s


def attr_from_proto(av, as_bytes: bool = False) -> Any:
    """The attr value an `AttrValue` holds. Strings decode to `str` when they are UTF-8
    (unless `as_bytes`: the op declares a bytes attr); an unset value gives None."""
    kind = av.WhichOneof("value")
    if kind is None:
        return None
    if kind == "placeholder":  # only in a FunctionDef's body: the caller's attr "$name"
        return _flib.AttrPlaceholder(av.placeholder)
    if kind == "type":
        return dtype_from_enum(av.type)
    if kind == "shape":
        return shape_from_proto(av.shape)
    if kind == "s":
        return _text(av.s, as_bytes)
    if kind == "tensor":
        return tensor_proto_to_array(av.tensor)
    if kind == "func":
        return FuncAttr(av.func.name, {k: attr_from_proto(x) for k, x in av.func.attr.items()})
    if kind == "list":
        lst = av.list
        for field in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
            items = getattr(lst, field)
            if len(items):
                break
        else:
            return []
        if field == "s":
            return [_text(x, as_bytes) for x in items]
        if field == "type":
            return [dtype_from_enum(x) for x in items]
        if field == "shape":
            return [shape_from_proto(x) for x in items]
        if field == "tensor":
            return [tensor_proto_to_array(x) for x in items]
        if field == "func":
            return [FuncAttr(f.name, {k: attr_from_proto(x) for k, x in f.attr.items()})
                    for f in items]
        return [bool(x) if field == "b" else x for x in items]
    return getattr(av, kind)  # i, f, b


# --- GraphDef <-> proto ------------------------------------------------------------------
def node_def_to_proto(nd: "_ser.NodeDef", proto) -> None:
    """Fills a `NodeDef` message from one of our NodeDefs."""
    proto.name = nd.name
    proto.op = nd.op
    proto.input.extend(nd.input)
    if nd.device:
        proto.device = nd.device
    for k, v in nd.attr.items():
        if v is None:
            continue
        attr_to_proto(v, proto.attr[k], nd.name, k)


def graph_def_to_proto(graph_def: "_ser.GraphDef", lower: bool = True):
    """The `tensorflow.GraphDef` message of one of our GraphDefs (its function library
    included); with `lower`, its private ops lowered to standard TF ops
    (graph_def_lowering.py)."""
    library = graph_def.library
    if lower:
        graph_def = _lowering.lower_private_ops(graph_def)
    graph_pb2 = _pb()[0]
    out = graph_pb2.GraphDef()
    out.versions.producer = TF_PRODUCER
    out.versions.min_consumer = TF_MIN_CONSUMER
    for nd in graph_def.node:
        node_def_to_proto(nd, out.node.add())
    for fdef in (library.functions.values() if library else ()):
        function_def_to_proto(fdef, out.library.function.add())
    return out


def _arg_def_to_proto(arg: "_flib.ArgDef", proto) -> None:
    proto.name = arg.name
    if arg.dtype is not None:
        proto.type = arg.dtype.as_datatype_enum
    proto.type_attr = arg.type_attr
    proto.number_attr = arg.number_attr
    proto.type_list_attr = arg.type_list_attr


def function_def_to_proto(fdef: "_flib.FunctionDef", proto) -> None:
    """Fills a `FunctionDef` message from one of function_library's FunctionDefs."""
    proto.signature.name = fdef.name
    for arg in fdef.input_args:
        _arg_def_to_proto(arg, proto.signature.input_arg.add())
    for arg in fdef.output_args:
        _arg_def_to_proto(arg, proto.signature.output_arg.add())
    proto.signature.control_output.extend(sorted(fdef.control_ret))
    for nd in fdef.nodes:
        node_def_to_proto(nd, proto.node_def.add())
    proto.ret.update(fdef.ret)
    proto.control_ret.update(fdef.control_ret)
    for k, v in fdef.attr.items():
        attr_to_proto(v, proto.attr[k], fdef.name, k)


def graph_to_proto(graph, from_version: Optional[int] = None, add_shapes: bool = False,
                   lower: bool = True):
    """The `tensorflow.GraphDef` message of `graph`.

    Args:
      graph: a Graph.
      from_version: only the ops created after the graph's `version` was this.
      add_shapes: add each node's output shapes as the attr "_output_shapes".
      lower: replace tensorweave's private ops by the standard TF ops that compute the
        same (graph_def_lowering.py), so that TensorFlow can load the graph.

    Returns:
      A `tensorboard.compat.proto.graph_pb2.GraphDef`.
    """
    graph_pb2 = _pb()[0]
    out = graph_pb2.GraphDef()
    out.versions.producer = TF_PRODUCER
    out.versions.min_consumer = TF_MIN_CONSUMER
    ops = graph._ops if from_version is None else [op for op in graph._ops
                                                   if op._seq > from_version]
    nodes = [_ser.node_def_of(op, add_shapes) for op in ops]
    if lower:
        def shape_of(name, index):
            return graph._ops_by_name[name]._outputs[index]._shape
        nodes = _lowering.lower_private_ops(_ser.GraphDef(nodes), shape_of,
                                            reserved=graph._ops_by_name).node
    for nd in nodes:
        node_def_to_proto(nd, out.node.add())
    return out


# op type -> (its OpDef, the attrs of it whose default is bytes); the OpDef is kept to
# notice a re-registration
_BYTES_ATTRS = {}


def _bytes_attrs(op_type: str) -> frozenset:
    """The attrs of `op_type` whose default is bytes (kept as bytes on import).

    Only the ops registered so far are looked at: the libraries registered on first use
    (registry._LAZY_OP_MODULES) declare no bytes attr, and a GraphDef's TF1 reference
    ops (VariableV2, Assign, ...), which no library registers, must not load them."""
    op_def = _reg.find_op_def(op_type)
    if op_def is None:
        return frozenset()
    cached = _BYTES_ATTRS.get(op_type)
    if cached is None or cached[0] is not op_def:
        cached = _BYTES_ATTRS[op_type] = (op_def, frozenset(
            k for k, d in op_def.attrs.items() if isinstance(d, bytes)))
    return cached[1]


def node_def_from_proto(proto) -> "_ser.NodeDef":
    """Our NodeDef (decoded attr values) of a `tensorflow.NodeDef` message."""
    attr = proto.attr
    if attr:
        as_bytes = _bytes_attrs(proto.op)
        # (keys then lookups: the protobuf map's items() iterates in Python)
        attrs = {k: attr_from_proto(attr[k], k in as_bytes) for k in attr}
    else:
        attrs = {}
    return _ser.NodeDef(proto.name, proto.op, list(proto.input), proto.device, attrs)


def graph_def_from_proto(proto) -> "_ser.GraphDef":
    """Our GraphDef (decoded attrs, and its function library) of a `tensorflow.GraphDef`
    message.

    Raises:
      ValueError: a value with no tensorweave form.
    """
    library = _flib.FunctionLibrary([function_def_from_proto(f)
                                     for f in proto.library.function])
    return _ser.GraphDef([node_def_from_proto(n) for n in proto.node],
                         _ser.VersionDef(proto.versions.producer,
                                         proto.versions.min_consumer), library)


def _arg_def_from_proto(arg) -> "_flib.ArgDef":
    return _flib.ArgDef(arg.name, dtype_from_enum(arg.type) if arg.type else None,
                        arg.type_attr, arg.number_attr, arg.type_list_attr)


def function_def_from_proto(proto) -> "_flib.FunctionDef":
    """The `FunctionDef` (function_library.py) of a `tensorflow.FunctionDef` message;
    its body is decoded when first read."""
    sig = proto.signature
    return _flib.FunctionDef(
        sig.name, [_arg_def_from_proto(a) for a in sig.input_arg],
        [_arg_def_from_proto(a) for a in sig.output_arg],
        lambda: [node_def_from_proto(n) for n in proto.node_def], dict(proto.ret),
        dict(proto.control_ret), {k: attr_from_proto(v) for k, v in proto.attr.items()})


def parse_graph_def(data) -> "_ser.GraphDef":
    """Our GraphDef of serialized bytes: tensorweave JSON, a binary `tensorflow.GraphDef`
    or its protobuf text form."""
    from google.protobuf import message
    if isinstance(data, str):
        data = data.encode()
    data = bytes(data)
    if data.lstrip()[:1] == b"{":
        return _ser.GraphDef._from_json(data)
    graph_pb2 = _pb()[0]
    proto = graph_pb2.GraphDef()
    try:
        proto.ParseFromString(data)
    except message.DecodeError:
        from google.protobuf import text_format  # (loaded only for the text form)
        try:
            text_format.Parse(data.decode("utf-8"), proto)
        except (UnicodeDecodeError, text_format.ParseError) as e:
            raise ValueError("Not a tensorweave GraphDef nor a TensorFlow GraphDef protobuf "
                             "(binary or text): %s" % e) from None
    return graph_def_from_proto(proto)


def as_graph_def_object(graph_def) -> "_ser.GraphDef":
    """Our GraphDef of whatever `import_graph_def` accepts: ours, a `tensorflow.GraphDef`
    message, or serialized bytes of either."""
    if isinstance(graph_def, _ser.GraphDef):
        return graph_def
    if is_graph_def_proto(graph_def):
        return graph_def_from_proto(graph_def)
    if isinstance(graph_def, (bytes, bytearray, str)):
        return parse_graph_def(graph_def)
    raise TypeError("graph_def must be a GraphDef proto, got %s" % type(graph_def).__name__)


def graph_from_proto(graph_def):
    """A new Graph holding the nodes of `graph_def` (a `tensorflow.GraphDef` message, our
    GraphDef, or serialized bytes), with their names unchanged."""
    from tensorweave.framework.graph import Graph
    g = Graph()
    with g.as_default():
        _ser.import_graph_def(as_graph_def_object(graph_def), name="")
    return g
