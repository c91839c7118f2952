"""MetaGraphDef: a graph with what a program needs to use it again (`export_meta_graph`,
`import_meta_graph`), written next to each checkpoint as "<prefix>.meta".

On disk it is TensorFlow's `MetaGraphDef` protocol buffer (the message classes that the
`tensorboard` package ships): binary, or the protobuf text format with `as_text=True`,
so TensorFlow reads our .meta files and we read TF's. In memory it is the MetaGraphDef
class below, whose graph_def is the GraphDef of framework/serialize.py (decoded attrs);
`to_proto()` / `from_proto()` convert. The older tensorweave JSON form (below) is still
read, and `repr()` shows it, as the readable debug form:

    {"format": "tensorweave.MetaGraphDef", "version": 1,
     "meta_info_def": {"meta_graph_version": "", "tensorflow_version": "0.1.0",
                       "stripped_op_list": ["Const", "VarHandleOp", ...], "tags": []},
     "graph_def": <the GraphDef document of framework/serialize.py>,
     "saver_def": {"filename_tensor_name": "save/Const:0",
                   "save_tensor_name": "save/control_dependency:0",
                   "restore_op_name": "save/restore_all", "max_to_keep": 5,
                   "sharded": false, "keep_checkpoint_every_n_hours": 10000.0,
                   "version": 2} | null,
     "collection_def": {"<collection key>": {"kind": K, "value": [...]}}}

Collection kinds: "node_list" (tensor and operation names), "variables" (one VariableDef
object per variable: variable_name, initial_value_name, initializer_name, snapshot_name,
trainable, is_resource, and a partition's save_slice_info_def: full_name, full_shape,
var_offset, var_shape), "savers" (SaverDef objects), "int64_list", "float_list",
"bytes_list" (base64), "queue_runners" (one QueueRunnerDef object per QueueRunner:
queue_name, enqueue_op_name, close_op_name, cancel_op_name,
queue_closed_exception_types). A collection whose items have none of these forms is
left out with a warning, as TF does. In the protobuf, "variables", "savers" and
"queue_runners" collections are `bytes_list`s of serialized VariableDef / SaverDef /
QueueRunnerDef messages, as TF writes them; on reading, TF's variable collection keys
(variables, trainable_variables, global_step, ...), "savers" and "queue_runners" are
decoded. TF's cond_context and while_context collections are not needed: importing the
graph rebuilds every loop's and cond's context from the graph itself
(ops/control_flow/imported_contexts.py), so gradients through them work; they are
skipped silently (other collections of protos tensorweave has no form for, with a
warning). On export, the while loops are written to "while_context" as TF's
WhileContextDef messages (ops/control_flow/context_protos.py), which TensorFlow needs to
differentiate the loops of a graph it imports from us.
"""
from __future__ import annotations

import base64
import json
import logging
import math
import re
from typing import Any, Dict, List, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework import graph_def_lowering as _lowering
from tensorweave.framework import graph_def_proto as _gp
from tensorweave.framework import registry as _reg
from tensorweave.framework import serialize as _ser
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.ref_variables import REF_VARIABLE_ATTR
from tensorweave.train.queue_runner import QueueRunner, QueueRunnerDef

FORMAT = "tensorweave.MetaGraphDef"
VERSION = 1
_log = logging.getLogger("tensorflow")
# Collections whose bytes_list items TF writes as serialized VariableDef messages.
_VARIABLE_KEYS = ("variables", "trainable_variables", "local_variables", "model_variables",
                  "moving_average_variables", "metric_variables", "global_step",
                  "concatenated_variables")
_CONTEXT_KEYS = ("cond_context", "while_context")
_VARIABLE_NAMES_FIELDS = ("variable_name", "initial_value_name", "initializer_name",
                          "snapshot_name", "trainable", "is_resource")
# and a partition's SaveSliceInfoDef, a dict of its fields here
_VARIABLE_FIELDS = _VARIABLE_NAMES_FIELDS + ("save_slice_info_def",)


def _set_fields(variable_def: dict) -> dict:
    """A VariableDef's fields without those not set (save_slice_info_def None)."""
    return {k: v for k, v in variable_def.items() if v is not None}


def _slice_def_fields(variable_def) -> Optional[dict]:
    """A VariableDef message's SaveSliceInfoDef as a dict (None when it has none)."""
    if not variable_def.HasField("save_slice_info_def"):
        return None
    sd = variable_def.save_slice_info_def
    return {"full_name": sd.full_name, "full_shape": list(sd.full_shape),
            "var_offset": list(sd.var_offset), "var_shape": list(sd.var_shape)}


def _pbs():
    from tensorboard.compat.proto import meta_graph_pb2, saver_pb2, variable_pb2
    return meta_graph_pb2, saver_pb2, variable_pb2



def _any(type_url: str, value: bytes):
    """A protobuf `Any` message (an any_list collection's item)."""
    from google.protobuf import any_pb2
    return any_pb2.Any(type_url=type_url, value=value)


def _is_any(obj) -> bool:
    """Whether `obj` is a protobuf `Any` message."""
    return getattr(getattr(obj, "DESCRIPTOR", None), "full_name", None) == \
        "google.protobuf.Any"


def _copied(message):
    """A copy of protobuf `message` that belongs to no parent message."""
    out = type(message)()
    out.CopyFrom(message)
    return out


def _json_float(f: float):
    return f if math.isfinite(f) else repr(f)


@tf_export("train.SaverDef")
class SaverDef:
    """The names a Saver runs (TF1 `tf.train.SaverDef`): feed `filename_tensor_name`
    with a checkpoint prefix, then fetch `save_tensor_name` to save or run
    `restore_op_name` to restore."""

    class CheckpointFormatVersion:
        LEGACY = 0
        V1 = 1
        V2 = 2

    LEGACY, V1, V2 = 0, 1, 2
    _FIELDS = ("filename_tensor_name", "save_tensor_name", "restore_op_name", "max_to_keep",
               "sharded", "keep_checkpoint_every_n_hours", "version")

    def __init__(self, filename_tensor_name: str = "", save_tensor_name: str = "",
                 restore_op_name: str = "", max_to_keep: int = 0, sharded: bool = False,
                 keep_checkpoint_every_n_hours: float = 0.0, version: int = 2):
        self.filename_tensor_name = filename_tensor_name
        self.save_tensor_name = save_tensor_name
        self.restore_op_name = restore_op_name
        self.max_to_keep = max_to_keep
        self.sharded = sharded
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.version = version

    def _to_json(self) -> dict:
        d = {k: getattr(self, k) for k in self._FIELDS}
        d["keep_checkpoint_every_n_hours"] = _json_float(float(
            self.keep_checkpoint_every_n_hours))
        return d

    @classmethod
    def _from_json(cls, d: dict) -> "SaverDef":
        kw = {k: d[k] for k in cls._FIELDS if k in d}
        if "keep_checkpoint_every_n_hours" in kw:
            kw["keep_checkpoint_every_n_hours"] = float(kw["keep_checkpoint_every_n_hours"])
        return cls(**kw)

    def to_proto(self):
        """The `SaverDef` protobuf message."""
        proto = _pbs()[1].SaverDef()
        for k in self._FIELDS:
            setattr(proto, k, getattr(self, k))
        return proto

    @classmethod
    def from_proto(cls, proto) -> "SaverDef":
        return cls(**{k: getattr(proto, k) for k in cls._FIELDS})

    def SerializeToString(self) -> bytes:  # noqa: N802 - TF's protobuf method name
        """TF's binary `SaverDef`."""
        return self.to_proto().SerializeToString()

    @classmethod
    def FromString(cls, data) -> "SaverDef":  # noqa: N802
        """A SaverDef from TF's binary `SaverDef` (or our older JSON form)."""
        if bytes(data[:1]) in (b"{", "{"):
            return cls._from_json(json.loads(data))
        proto = _pbs()[1].SaverDef()
        proto.ParseFromString(bytes(data))
        return cls.from_proto(proto)

    def ParseFromString(self, data) -> int:  # noqa: N802
        """Replaces the fields by those of TF's binary `SaverDef` `data`; returns the
        number of bytes read (as protobuf does)."""
        self.CopyFrom(type(self).FromString(data))
        return len(data)

    def CopyFrom(self, other: "SaverDef") -> None:  # noqa: N802
        for k in self._FIELDS:
            setattr(self, k, getattr(other, k))

    def __eq__(self, other):
        return isinstance(other, SaverDef) and self._to_json() == other._to_json()

    def __repr__(self):
        version = {0: "LEGACY", 1: "V1", 2: "V2"}.get(self.version, self.version)
        return ('filename_tensor_name: "%s"\nsave_tensor_name: "%s"\nrestore_op_name: "%s"\n'
                "max_to_keep: %d\nsharded: %s\nkeep_checkpoint_every_n_hours: %g\n"
                "version: %s\n" % (self.filename_tensor_name, self.save_tensor_name,
                                   self.restore_op_name, self.max_to_keep,
                                   str(bool(self.sharded)).lower(),
                                   self.keep_checkpoint_every_n_hours, version))


class CollectionDef:
    """One exported collection: `kind` (see the module docstring) and its `value` list."""

    KINDS = ("node_list", "variables", "savers", "queue_runners", "int64_list", "float_list",
             "bytes_list", "any_list")

    def __init__(self, kind: str, value: List[Any]):
        if kind not in self.KINDS:
            raise ValueError("Unknown collection kind %r in MetaGraphDef" % kind)
        self.kind = kind
        self.value = list(value)

    def _to_json(self) -> dict:
        if self.kind == "bytes_list":
            value = [base64.b64encode(v).decode("ascii") for v in self.value]
        elif self.kind == "any_list":
            value = [{"type_url": v.type_url,
                      "value": base64.b64encode(v.value).decode("ascii")} for v in self.value]
        elif self.kind == "float_list":
            value = [_json_float(float(v)) for v in self.value]
        else:
            value = self.value
        return {"kind": self.kind, "value": value}

    @classmethod
    def _from_json(cls, d: dict) -> "CollectionDef":
        kind, value = d["kind"], list(d["value"])
        if kind == "bytes_list":
            value = [base64.b64decode(v) for v in value]
        elif kind == "any_list":
            value = [_any(v["type_url"], base64.b64decode(v["value"])) for v in value]
        elif kind == "float_list":
            value = [float(v) for v in value]
        return cls(kind, value)

    def to_proto(self):
        """TF's `CollectionDef` message: variables, savers and queue runners as a
        bytes_list of their serialized messages, as TF writes them."""
        meta_graph_pb2, _, variable_pb2 = _pbs()
        out = meta_graph_pb2.CollectionDef()
        if self.kind in ("node_list", "int64_list", "float_list", "bytes_list", "any_list"):
            getattr(out, self.kind).value.extend(self.value)
        elif self.kind == "queue_runners":
            out.bytes_list.value.extend(QueueRunnerDef(**d).SerializeToString()
                                        for d in self.value)
        elif self.kind == "variables":
            out.bytes_list.value.extend(
                variable_pb2.VariableDef(**{k: d[k] for k in _VARIABLE_FIELDS
                                            if d.get(k) is not None})
                .SerializeToString() for d in self.value)
        else:  # savers
            out.bytes_list.value.extend(SaverDef._from_json(d).SerializeToString()
                                        for d in self.value)
        return out

    # TF's protobuf view, for programs that read an exported collection the way TF
    # hands it to them: `cd.WhichOneof("kind")`, `cd.node_list.value`, ...
    def WhichOneof(self, oneof_group: str):  # noqa: N802 - TF's protobuf method name
        return self.to_proto().WhichOneof(oneof_group)

    def HasField(self, field: str) -> bool:  # noqa: N802
        return self.to_proto().HasField(field)

    def __getattr__(self, name: str):
        if name in ("node_list", "bytes_list", "int64_list", "float_list", "any_list"):
            return getattr(self.to_proto(), name)
        raise AttributeError("'CollectionDef' object has no attribute %r" % name)

    def __repr__(self):
        return "CollectionDef(%s, %r)" % (self.kind, self.value)


class MetaInfoDef:
    def __init__(self, meta_graph_version: str = "", tensorflow_version: str = "",
                 stripped_op_list: Optional[List[str]] = None, tags: Optional[List[str]] = None,
                 any_info: Optional[str] = None, stripped_default_attrs: bool = False):
        self.meta_graph_version = meta_graph_version
        self.tensorflow_version = tensorflow_version
        self.stripped_op_list = list(stripped_op_list or [])
        self.tags = list(tags or [])
        self.any_info = any_info
        # tells an importer to add the attrs left out back with their op's defaults
        self.stripped_default_attrs = stripped_default_attrs

    def _to_json(self) -> dict:
        d = {"meta_graph_version": self.meta_graph_version,
             "tensorflow_version": self.tensorflow_version,
             "stripped_op_list": self.stripped_op_list, "tags": self.tags}
        if self.any_info is not None:
            d["any_info"] = self.any_info
        if self.stripped_default_attrs:
            d["stripped_default_attrs"] = True
        return d

    @classmethod
    def _from_json(cls, d: dict) -> "MetaInfoDef":
        return cls(d.get("meta_graph_version", ""), d.get("tensorflow_version", ""),
                   d.get("stripped_op_list"), d.get("tags"), d.get("any_info"),
                   d.get("stripped_default_attrs", False))


@tf_export("MetaGraphDef")
class MetaGraphDef:
    """A graph, its saver and its collections (TF1 `tf.MetaGraphDef`), and for a
    SavedModel its signatures and assets: `signature_def` maps a key to a `SignatureDef`
    protobuf message, `asset_file_def` lists `AssetFileDef` messages (saved_model/)."""

    def __init__(self, meta_info_def: Optional[MetaInfoDef] = None,
                 graph_def: Optional[_ser.GraphDef] = None,
                 saver_def: Optional[SaverDef] = None,
                 collection_def: Optional[Dict[str, CollectionDef]] = None,
                 signature_def: Optional[Dict[str, Any]] = None,
                 asset_file_def: Optional[List[Any]] = None):
        self.meta_info_def = meta_info_def or MetaInfoDef()
        self.graph_def = graph_def or _ser.GraphDef()
        self.saver_def = saver_def
        self.collection_def = dict(collection_def or {})
        self.signature_def = dict(signature_def or {})
        self.asset_file_def = list(asset_file_def or [])

    def HasField(self, field: str) -> bool:  # noqa: N802
        return getattr(self, field, None) is not None

    def _to_json(self) -> dict:
        doc = {"format": FORMAT, "version": VERSION,
               "meta_info_def": self.meta_info_def._to_json(),
               "graph_def": self.graph_def._to_json(),
               "saver_def": None if self.saver_def is None else self.saver_def._to_json(),
               "collection_def": {k: v._to_json() for k, v in
                                  sorted(self.collection_def.items())}}
        if self.signature_def or self.asset_file_def:
            from google.protobuf import json_format
            doc["signature_def"] = {k: json_format.MessageToDict(v)
                                    for k, v in sorted(self.signature_def.items())}
            doc["asset_file_def"] = [json_format.MessageToDict(a)
                                     for a in self.asset_file_def]
        return doc

    def to_proto(self):
        """The `MetaGraphDef` protobuf message (see the module docstring)."""
        meta_graph_pb2 = _pbs()[0]
        proto = meta_graph_pb2.MetaGraphDef()
        info, mi = self.meta_info_def, proto.meta_info_def
        mi.meta_graph_version = info.meta_graph_version
        mi.tensorflow_version = info.tensorflow_version
        mi.stripped_default_attrs = info.stripped_default_attrs
        mi.tags.extend(info.tags)
        # written with the private ops lowered to standard TF ops, which the op list names
        graph_def = _lowering.lower_private_ops(self.graph_def)
        op_types = info.stripped_op_list
        lowered = _lowering.lowered_op_types()
        if any(t in lowered for t in op_types):
            op_types = sorted({t for t in op_types if t not in lowered} |
                              {n.op for n in graph_def.node})
        for op_type in op_types:
            mi.stripped_op_list.op.add().name = op_type
        proto.graph_def.CopyFrom(_gp.graph_def_to_proto(graph_def, lower=False))
        if self.saver_def is not None:
            proto.saver_def.CopyFrom(self.saver_def.to_proto())
        for key, cd in self.collection_def.items():
            proto.collection_def[key].CopyFrom(cd.to_proto())
        for key, sig in self.signature_def.items():
            proto.signature_def[key].CopyFrom(sig)
        for asset in self.asset_file_def:
            proto.asset_file_def.add().CopyFrom(asset)
        return proto

    @classmethod
    def from_proto(cls, proto) -> "MetaGraphDef":
        """Our MetaGraphDef of a `MetaGraphDef` protobuf message (written by TF or us).

        Raises:
          ValueError: the graph holds a value with no tensorweave form.
        """
        _, saver_pb2, variable_pb2 = _pbs()
        mi = proto.meta_info_def
        info = MetaInfoDef(mi.meta_graph_version, mi.tensorflow_version,
                           [op.name for op in mi.stripped_op_list.op], list(mi.tags),
                           stripped_default_attrs=mi.stripped_default_attrs)
        saver = SaverDef.from_proto(proto.saver_def) if proto.HasField("saver_def") else None
        collections = {}
        for key, cd in proto.collection_def.items():
            kind = cd.WhichOneof("kind")
            if kind is None:
                continue
            if key in _CONTEXT_KEYS:
                continue  # rebuilt from the graph on import (imported_contexts.py)
            values = list(getattr(cd, kind).value)
            if kind == "any_list":
                values = [_copied(v) for v in values]
            if kind == "bytes_list" and key in _VARIABLE_KEYS:
                defs = []
                for b in values:
                    vd = variable_pb2.VariableDef.FromString(b)
                    d = {k: getattr(vd, k) for k in _VARIABLE_NAMES_FIELDS}
                    d["save_slice_info_def"] = _slice_def_fields(vd)
                    defs.append(_set_fields(d))
                collections[key] = CollectionDef("variables", defs)
            elif kind == "bytes_list" and key == "queue_runners":
                collections[key] = CollectionDef("queue_runners", [
                    vars(QueueRunnerDef.FromString(b)) for b in values])
            elif kind == "bytes_list" and key == "savers":
                collections[key] = CollectionDef("savers", [
                    SaverDef.from_proto(saver_pb2.SaverDef.FromString(b))._to_json()
                    for b in values])
            else:
                collections[key] = CollectionDef(kind, values)
        return cls(info, _gp.graph_def_from_proto(proto.graph_def), saver, collections,
                   {k: _copied(v) for k, v in proto.signature_def.items()},
                   [_copied(a) for a in proto.asset_file_def])

    def SerializeToString(self, as_text: bool = False) -> bytes:  # noqa: N802
        """TF's binary `MetaGraphDef`, or its protobuf text form with `as_text`."""
        proto = self.to_proto()
        if as_text:
            from google.protobuf import text_format
            return text_format.MessageToString(proto).encode()
        return proto.SerializeToString()

    @classmethod
    def FromString(cls, data) -> "MetaGraphDef":  # noqa: N802
        """A MetaGraphDef of serialized bytes: TF's binary or text protobuf, or our older
        JSON form."""
        if isinstance(data, str):
            data = data.encode()
        data = bytes(data)
        if data.lstrip()[:1] == b"{":
            return cls._from_json_bytes(data)
        from google.protobuf import message
        proto = _pbs()[0].MetaGraphDef()
        try:
            proto.ParseFromString(data)
        except message.DecodeError:
            from google.protobuf import text_format  # (loaded only for the text form)
            try:
                text_format.Parse(data.decode("utf-8"), proto)
            except (UnicodeDecodeError, text_format.ParseError) as e:
                raise ValueError("Not a tensorweave MetaGraphDef nor a TensorFlow "
                                 "MetaGraphDef protobuf: %s" % e) from None
        return cls.from_proto(proto)

    @classmethod
    def _from_json_bytes(cls, data: bytes) -> "MetaGraphDef":
        try:
            doc = json.loads(data.decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError("Not a tensorweave MetaGraphDef: %s" % e) from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("Not a tensorweave MetaGraphDef (expected format %r)" % FORMAT)
        if int(doc.get("version", 0)) > VERSION:
            raise ValueError("MetaGraphDef version %s is newer than this tensorweave reads "
                             "(%d)" % (doc.get("version"), VERSION))
        graph_def = _ser.GraphDef._from_json(json.dumps(doc["graph_def"]))
        saver = doc.get("saver_def")
        signatures, assets = {}, []
        if doc.get("signature_def") or doc.get("asset_file_def"):
            from google.protobuf import json_format
            meta_graph_pb2 = _pbs()[0]
            signatures = {k: json_format.ParseDict(v, meta_graph_pb2.SignatureDef())
                          for k, v in doc.get("signature_def", {}).items()}
            assets = [json_format.ParseDict(a, meta_graph_pb2.AssetFileDef())
                      for a in doc.get("asset_file_def", [])]
        return cls(MetaInfoDef._from_json(doc.get("meta_info_def", {})), graph_def,
                   None if saver is None else SaverDef._from_json(saver),
                   {k: CollectionDef._from_json(v)
                    for k, v in doc.get("collection_def", {}).items()}, signatures, assets)

    def ParseFromString(self, data) -> None:  # noqa: N802
        other = MetaGraphDef.FromString(data)
        self.__dict__.update(other.__dict__)

    def __eq__(self, other):
        """Equal when their `MetaGraphDef` protobufs are."""
        return isinstance(other, MetaGraphDef) and self.to_proto() == other.to_proto()

    def __repr__(self):
        return json.dumps(self._to_json(), indent=1)


def read_meta_graph_file(filename: str) -> MetaGraphDef:
    """The MetaGraphDef stored in `filename` (IOError if it does not exist)."""
    from tensorweave.platform import file_io  # local disk, or a URL via fsspec
    if not file_io.isfile(filename):
        raise IOError("File %s does not exist." % filename)
    return MetaGraphDef.FromString(file_io.read_bytes(filename))


# --- export ------------------------------------------------------------------------------
def _strip_scope(name: str, scope: Optional[str]) -> Optional[str]:
    """`name` without `scope/` (None when outside the scope); handles "^op"."""
    if not scope:
        return name
    caret = name.startswith("^")
    body = name[1:] if caret else name
    if not body.startswith(scope + "/"):
        return None
    return ("^" if caret else "") + body[len(scope) + 1:]


def _scoped_graph_def(graph_def: _ser.GraphDef, scope: Optional[str], clear_devices: bool,
                      strip_default_attrs: bool, drop=None) -> _ser.GraphDef:
    nodes = []
    for nd in graph_def.node:
        if drop is not None and drop(nd.name):
            continue
        name = _strip_scope(nd.name, scope)
        if name is None:
            continue
        inputs = []
        for s in nd.input:
            stripped = _strip_scope(s, scope)
            if stripped is None:
                raise ValueError("Node '%s' in export_scope '%s' has input '%s' outside the "
                                 "scope; export a scope that holds all of its inputs"
                                 % (nd.name, scope, s))
            inputs.append(stripped)
        attrs = dict(nd.attr)
        if scope and "_class" in attrs:
            attrs["_class"] = ["loc:@" + (_strip_scope(c[5:], scope) or c[5:])
                               for c in attrs["_class"]]
        if scope and attrs.get(REF_VARIABLE_ATTR) and attrs.get("shared_name") == nd.name:
            # a TF1-style variable's resource is named after its node (as a VariableV2
            # with no shared_name): it follows the node out of the scope
            attrs["shared_name"] = name
        if strip_default_attrs:
            attrs = _without_defaults(nd.op, attrs)
        nodes.append(_ser.NodeDef(name, nd.op, inputs, "" if clear_devices else nd.device,
                                  attrs))
    return _ser.GraphDef(nodes, graph_def.versions)


def _without_defaults(op_type: str, attrs: dict) -> dict:
    try:
        op_def = _reg.get_op_def(op_type)
    except ValueError:
        return attrs
    out = {}
    for k, v in attrs.items():
        default = op_def.attrs.get(k, _reg.REQUIRED)
        if isinstance(default, (_reg.TypeAttr, _reg.TypeListAttr)):
            default = default.default
        if default is not _reg.REQUIRED and type(default) is type(v) and default == v:
            continue
        out[k] = v
    return out


# the collections TF writes as VariableDefs (its register_proto_function keys); a
# variable in any other is written by name and comes back as its tensor
_VARIABLE_COLLECTIONS = frozenset((
    _graph.GraphKeys.GLOBAL_VARIABLES, _graph.GraphKeys.TRAINABLE_VARIABLES,
    _graph.GraphKeys.MOVING_AVERAGE_VARIABLES, _graph.GraphKeys.LOCAL_VARIABLES,
    _graph.GraphKeys.MODEL_VARIABLES, _graph.GraphKeys.GLOBAL_STEP,
    _graph.GraphKeys.METRIC_VARIABLES))


def _collection_def(key: str, items: list, scope: Optional[str]) -> Optional[CollectionDef]:
    from tensorweave.ops.state.variables import Variable
    if not items:
        return None
    if key in _VARIABLE_COLLECTIONS and all(isinstance(x, Variable) for x in items):
        defs = [x.to_proto(export_scope=scope) for x in items]
        return CollectionDef("variables", [_set_fields(vars(d)) for d in defs
                                           if d is not None])
    if all(isinstance(x, (_graph.Tensor, _graph.Operation, Variable)) for x in items):
        # as TF: a variable in another collection is its tensor's name ("v:0")
        names = [_strip_scope(x.name, scope) for x in items]
        return CollectionDef("node_list", [n for n in names if n is not None])
    if key == _graph.GraphKeys.SAVEABLE_OBJECTS and \
            all(isinstance(getattr(x, "op", None), _graph.Operation) for x in items):
        # TF's form of a saveable: the name of the op it saves (a table's)
        names = [_strip_scope(x.op.name, scope) for x in items]
        return CollectionDef("node_list", [n for n in names if n is not None])
    if all(isinstance(x, QueueRunner) for x in items):
        defs = [x.to_proto(export_scope=scope) for x in items]
        return CollectionDef("queue_runners", [vars(d) for d in defs if d is not None])
    if all(hasattr(x, "to_proto") and hasattr(x, "saver_def") for x in items):
        return CollectionDef("savers", [x.to_proto(export_scope=scope)._to_json()
                                        for x in items])
    if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        return CollectionDef("int64_list", items)
    if all(isinstance(x, float) for x in items):
        return CollectionDef("float_list", items)
    if all(isinstance(x, (bytes, str)) for x in items):
        return CollectionDef("bytes_list", [x.encode() if isinstance(x, str) else x
                                            for x in items])
    if all(_is_any(x) for x in items):  # e.g. a SavedModel's assets
        return CollectionDef("any_list", items)
    _log.warning("Issue encountered when serializing %s.\nType is unsupported, or the types "
                 "of the items don't match field type in CollectionDef. Note this is a "
                 "warning and probably safe to ignore.\n'%s' items have no MetaGraphDef form",
                 key, type(items[0]).__name__)
    return None


@tf_export("train.export_meta_graph")
def export_meta_graph(filename: Optional[str] = None, meta_info_def=None, graph_def=None,
                      saver_def=None, collection_list=None, as_text: bool = False,
                      graph=None, export_scope: Optional[str] = None,
                      clear_devices: bool = False, clear_extraneous_savers: bool = False,
                      strip_default_attrs: bool = False, save_debug_info: bool = False,
                      **kwargs) -> MetaGraphDef:
    """Returns a MetaGraphDef of `graph` (default: the default graph), and writes it to
    `filename` if given (TF1 `tf.train.export_meta_graph`).

    Args:
      filename: where to write it: TF's MetaGraphDef protobuf (see the module docstring).
      meta_info_def: a MetaInfoDef to use (default: versions and the op types used).
      graph_def: the GraphDef to export, ours or TF's protobuf message (default:
        `graph.as_graph_def(add_shapes=True)`).
      saver_def: a SaverDef to include.
      collection_list: the collection keys to export (default: all).
      as_text: write the protobuf text format instead of binary.
      graph: the graph to export.
      export_scope: export only the nodes under this name scope, with the scope removed
        from their names.
      clear_devices: drop device assignments.
      clear_extraneous_savers: drop the ops of other Savers than `saver_def`'s.
      strip_default_attrs: omit attrs whose value is the op's default.
      save_debug_info: not supported (raises NotImplementedError when True).

    Returns:
      The MetaGraphDef.

    Raises:
      ValueError: `graph_def` and `graph` both given, or a node in `export_scope` has an
        input outside it.
      TypeError: an unknown keyword argument.
    """
    if kwargs:  # a TypeError, as calling TF's with an unknown keyword is
        raise TypeError("export_meta_graph() got an unexpected keyword argument '%s'"
                        % sorted(kwargs)[0])
    if save_debug_info:
        raise NotImplementedError("export_meta_graph(save_debug_info=True) is not supported "
                                  "by tensorweave: GraphDebugInfo files are not written")
    if graph is not None and graph_def is not None:
        raise ValueError("Cannot specify both graph and graph_def")
    g = graph or _graph.get_default_graph()
    if graph_def is None:
        graph_def = _ser.graph_to_graph_def(g, add_shapes=True)
    elif not isinstance(graph_def, _ser.GraphDef):
        graph_def = _gp.as_graph_def_object(graph_def)
    drop = None
    if clear_extraneous_savers and saver_def is not None:
        keep = saver_def.filename_tensor_name.split("/")[0]
        pattern = re.compile(r"save(_\d+)?$")

        def other_saver(name):
            top = name.split("/")[0]
            return bool(pattern.match(top)) and top != keep
        drop = other_saver
    graph_def = _scoped_graph_def(graph_def, export_scope, clear_devices, strip_default_attrs,
                                  drop)
    if meta_info_def is None:
        import tensorweave
        meta_info_def = MetaInfoDef(tensorflow_version=tensorweave.__version__,
                                    stripped_op_list=sorted({n.op for n in graph_def.node}),
                                    stripped_default_attrs=strip_default_attrs)
    if saver_def is not None and export_scope:
        saver_def = SaverDef(**{k: getattr(saver_def, k) for k in SaverDef._FIELDS})
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            stripped = _strip_scope(getattr(saver_def, field), export_scope)
            setattr(saver_def, field, stripped if stripped is not None
                    else getattr(saver_def, field))
    collections = {}
    keys = collection_list if collection_list is not None else g.get_all_collection_keys()
    for key in keys:
        items = g.get_collection(key)
        if clear_extraneous_savers and key == _graph.GraphKeys.SAVERS:
            continue
        try:
            cd = _collection_def(key, items, export_scope)
        except (ValueError, TypeError, AttributeError) as e:
            _log.warning("Issue encountered when serializing %s.\n%s", key, e)
            cd = None
        if cd is not None:
            collections[key] = cd
    if g._while_contexts and (collection_list is None or
                              _graph.GraphKeys.WHILE_CONTEXT in collection_list):
        from tensorweave.ops.control_flow import context_protos
        defs = context_protos.while_context_defs(g, export_scope)
        if defs:  # TF differentiates the loops of the graph it imports through these
            collections[_graph.GraphKeys.WHILE_CONTEXT] = CollectionDef("bytes_list", defs)
    mg = MetaGraphDef(meta_info_def, graph_def, saver_def, collections)
    if filename:
        from tensorweave.ops.io import checkpoint_format
        checkpoint_format.write_atomic(filename, mg.SerializeToString(as_text=as_text))
    return mg


# --- import ------------------------------------------------------------------------------
def _prefixed(name: str, scope: Optional[str]) -> str:
    return "%s/%s" % (scope, name) if scope else name


@tf_export("train.import_meta_graph")
def import_meta_graph(meta_graph_or_file, clear_devices: bool = False,
                      import_scope: Optional[str] = None, **kwargs):
    """Recreates a graph saved by `export_meta_graph` in the default graph, with its
    collections (Variables become `tf.Variable` objects again), and returns a Saver built
    from its SaverDef (TF1 `tf.train.import_meta_graph`).

    Args:
      meta_graph_or_file: a MetaGraphDef (ours or TF's protobuf message), or the path of
        a file holding one (written by TensorFlow or by us).
      clear_devices: ignore the device assignments of the imported nodes.
      import_scope: a name scope to put the imported nodes under.
      **kwargs: `input_map` and `return_elements` (as for `import_graph_def`).

    Returns:
      A Saver (from the SaverDef, or a new one when the graph has variables but no
      SaverDef), or None when there is nothing to save. As in TF, only the Saver, also
      with `return_elements` (get the elements from the graph by name).

    Raises:
      TypeError: an unknown keyword argument.
    """
    with _ser.gc_paused():  # (decoding and importing make many objects that live on)
        return _import_meta_graph(meta_graph_or_file, clear_devices, import_scope, kwargs)


def _import_meta_graph(meta_graph_or_file, clear_devices: bool, import_scope: Optional[str],
                       kwargs: dict):
    from tensorweave.ops.state.variables import Variable, VariableDef
    from tensorweave.train.saver import Saver
    input_map = kwargs.pop("input_map", None)
    return_elements = kwargs.pop("return_elements", None)
    if kwargs:  # a TypeError, as calling TF's with an unknown keyword is
        raise TypeError("import_meta_graph() got an unexpected keyword argument '%s'"
                        % sorted(kwargs)[0])
    mg = meta_graph_or_file
    if _gp.is_message(mg, "MetaGraphDef"):
        mg = MetaGraphDef.from_proto(mg)
    elif not isinstance(mg, MetaGraphDef):
        mg = read_meta_graph_file(mg)
    graph_def = mg.graph_def
    if clear_devices:
        graph_def = _scoped_graph_def(graph_def, None, True, False)
    g = _graph.get_default_graph()
    scope = _import_scope_name(g, import_scope)
    # return_elements are only checked to exist: TF returns the Saver alone
    _ser.import_graph_def(graph_def, input_map=input_map, return_elements=return_elements,
                          name=import_scope or "")
    variables_by_name: Dict[str, Variable] = {}
    for key, cd in sorted(mg.collection_def.items()):
        try:
            items = _import_collection(g, cd, scope, variables_by_name, Variable,
                                       VariableDef, Saver)
        except (KeyError, ValueError) as e:
            _log.warning("Cannot import collection %s: %s", key, e)
            continue
        if key == _graph.GraphKeys.SAVEABLE_OBJECTS and cd.kind == "node_list":
            items = _saveables_of(items)
        for item in items:
            g.add_to_collection(key, item)
    saver = None
    if mg.saver_def is not None:
        saver = Saver(saver_def=mg.saver_def, name=scope)
    elif g.get_collection(_graph.GraphKeys.GLOBAL_VARIABLES) or \
            g.get_collection(_graph.GraphKeys.SAVEABLE_OBJECTS):
        saver = Saver()
    else:
        _log.info("Saver not created because there are no variables in the graph to "
                  "restore")
    return saver


def _import_scope_name(g, import_scope: Optional[str]) -> Optional[str]:
    """The scope the imported nodes will get: as TF, `import_scope` made unique the way
    the name scope of `import_graph_def` makes it ("a" is "a_1" once "a" is taken), or
    re-entered as written when it ends with "/"."""
    if not import_scope:
        return import_scope
    if import_scope.endswith("/"):
        return import_scope[:-1]
    return g.unique_name(import_scope, mark_as_used=False)


def _saveables_of(ops: list) -> list:
    """The saveables a MetaGraphDef names by their ops (tables' saveables; TF's own
    import fails on them)."""
    from tensorweave.ops.data_flow.lookup_ops import table_saveable
    out = []
    for op in ops:
        saveable = table_saveable(op) if isinstance(op, _graph.Operation) else None
        if saveable is None:
            _log.warning("Cannot import a saveable object of %s: only tables' saveables "
                         "are rebuilt from a MetaGraphDef", op.name)
            continue
        out.append(saveable)
    return out


def _import_collection(g, cd: CollectionDef, scope, variables_by_name, Variable,
                       VariableDef, Saver) -> list:
    if cd.kind == "node_list":
        return [g.as_graph_element(_prefixed(n, scope)) for n in cd.value]
    if cd.kind == "variables":
        out = []
        for d in cd.value:
            key = _prefixed(d["variable_name"], scope)
            var = variables_by_name.get(key)
            if var is None:
                var = Variable.from_proto(VariableDef(**d), import_scope=scope)
                variables_by_name[key] = var
            out.append(var)
        return out
    if cd.kind == "savers":
        return [Saver(saver_def=SaverDef._from_json(d), name=scope) for d in cd.value]
    if cd.kind == "queue_runners":
        return [QueueRunner.from_proto(QueueRunnerDef(**d), import_scope=scope)
                for d in cd.value]
    return list(cd.value)
