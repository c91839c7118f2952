"""TensorFlow's V1 checkpoints (the "tensor slice" format of TF1's
`Saver(write_version=tf.train.SaverDef.V1)`, in which many published TF1 models were
saved): `tf.train.list_variables`, `load_variable`, `init_from_checkpoint`, RestoreV2 and
`Saver.restore` read them as TF does, and the SaveSlices op (io_ops.py) writes them.

A V1 checkpoint is one SSTable file named by the checkpoint path itself (a sharded save
writes "<path>-00000-of-00002", ... and records the pattern "<path>-?????-of-00002"). Each
table maps:

* ``""`` to a SavedTensorSlices whose ``meta`` lists, for every tensor of the file, a
  SavedSliceMeta: ``name``, ``shape``, ``type`` (DataType) and the ``slice``s stored;
* the key of each slice (OrderedCode of the name and the extents, the key a V2 bundle
  gives its slices: tensor_bundle.slice_key) to a SavedTensorSlices whose ``data`` is a
  SavedSlice holding the values as a TensorProto (typed value fields, no dtype or shape:
  those come from the meta). A dimension a slice covers whole is an extent with no start
  or length in its TensorSliceProto, (0, -1) in its key.

Only the tensors the meta lists are read, as in TF: another SSTable (a V2 ".index" file)
reads as a checkpoint without tensors. The protos are built here, lazily, on top of the
`tensorboard` package's TensorProto, TensorShapeProto, DataType and VersionDef.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.ops.io import checkpoint_format as _fmt
from tensorweave.ops.io import sstable
from tensorweave.ops.io import tensor_bundle as _bundle
from tensorweave.platform import file_io

_SLICES_CLASS = None


def _saved_tensor_slices_class():
    """The SavedTensorSlices message class (and, through its fields, the others)."""
    global _SLICES_CLASS
    if _SLICES_CLASS is None:
        _SLICES_CLASS = _build_protos()
    return _SLICES_CLASS


def _build_protos():
    from google.protobuf import descriptor_pb2
    from tensorboard.compat.proto import (tensor_pb2, tensor_shape_pb2, types_pb2,
                                          versions_pb2)
    from tensorweave.framework.proto_classes import add_field, \
        default_pool_message_classes
    _bundle.protos()  # TensorSliceProto, in the default pool
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="tensorweave/ops/io/tensor_slice_v1.proto",
                                           package="tensorweave.slices", syntax="proto3")
    f.dependency.extend([tensor_pb2.DESCRIPTOR.name, tensor_shape_pb2.DESCRIPTOR.name,
                         types_pb2.DESCRIPTOR.name, versions_pb2.DESCRIPTOR.name,
                         "tensorweave/ops/io/tensor_bundle.proto"])
    slice_type = ".tensorweave.bundle.TensorSliceProto"

    def message(name, *fields):
        msg = f.message_type.add(name=name)
        for number, (fname, ftype, type_name, repeated) in enumerate(fields, start=1):
            add_field(msg, fname, number, ftype, type_name, repeated)

    message("SavedSliceMeta", ("name", F.TYPE_STRING, None, False),
            ("shape", F.TYPE_MESSAGE, ".tensorboard.TensorShapeProto", False),
            ("type", F.TYPE_ENUM, ".tensorboard.DataType", False),
            ("slice", F.TYPE_MESSAGE, slice_type, True))
    message("SavedTensorSliceMeta",
            ("tensor", F.TYPE_MESSAGE, ".tensorweave.slices.SavedSliceMeta", True),
            ("versions", F.TYPE_MESSAGE, ".tensorboard.VersionDef", False))
    message("SavedSlice", ("name", F.TYPE_STRING, None, False),
            ("slice", F.TYPE_MESSAGE, slice_type, False),
            ("data", F.TYPE_MESSAGE, ".tensorboard.TensorProto", False))
    message("SavedTensorSlices",
            ("meta", F.TYPE_MESSAGE, ".tensorweave.slices.SavedTensorSliceMeta", False),
            ("data", F.TYPE_MESSAGE, ".tensorweave.slices.SavedSlice", False))
    name = "tensorweave.slices.SavedTensorSlices"
    return default_pool_message_classes([f], [name])[name]


def v1_files(pattern: str) -> List[str]:
    """The files of the V1 checkpoint `pattern` (a path, or a sharded save's pattern):
    the SSTables it matches, [] when it is no V1 checkpoint."""
    paths = sorted(p for p in file_io.glob(pattern) if file_io.isfile(p))
    if not paths or not all(_bundle.is_sstable(p) for p in paths):
        return []
    return paths


class V1Reader(_fmt.CheckpointReader):
    """Reads a V1 checkpoint; the interface of checkpoint_format.CheckpointReader.

    Raises NotFoundError when `pattern` matches no SSTable, DataLossError when a table
    or a message in it is damaged, and UnimplementedError for a quantized tensor.
    """

    def __init__(self, pattern: str):
        self.prefix = pattern
        paths = v1_files(pattern)
        if not paths:
            raise errors.NotFoundError(None, None, "Unsuccessful TensorSliceReader "
                                       "constructor: Failed to find any matching files "
                                       "for %s" % pattern)
        self._shards = [{"file": p} for p in paths]
        self._tables: List[Dict[bytes, bytes]] = []
        self._tensors: Dict[str, dict] = {}
        self._unsupported: Dict[str, str] = {}
        for index, path in enumerate(paths):
            table = dict(sstable.read_table(file_io.read_bytes(path), path))
            self._tables.append(table)
            for meta in self._parse(table.get(b"", b""), path).meta.tensor:
                self._add_meta(meta, index)

    def _parse(self, raw: bytes, what: str):
        from google.protobuf.message import DecodeError
        try:
            return _saved_tensor_slices_class().FromString(raw)
        except DecodeError as e:
            raise errors.DataLossError(None, None, "Corrupted V1 checkpoint %s: %s"
                                       % (what, e)) from None

    def _add_meta(self, meta, shard: int) -> None:
        try:
            dt = _dt.as_dtype(int(meta.type))
            supported = not dt.is_quantized
        except TypeError:
            supported = False
        if not supported:
            self._unsupported[meta.name] = _bundle._dt_enum_name(int(meta.type))
            return
        full = _bundle._shape_of(meta.shape)
        entry = self._tensors.setdefault(meta.name, {"dtype": dt.name, "shape": full,
                                                     "slices": []})
        for s in meta.slice:
            stored = [(int(x.start), int(x.length) if x.HasField("length") else -1)
                      for x in s.extent]
            entry["slices"].append({
                "slice": _fmt._slice_text(_bundle._extents_of(s, full), full),
                "shard": shard, "key": _bundle.slice_key(meta.name, stored)})

    def _entry(self, name: str) -> dict:
        if name in self._unsupported:
            raise errors.UnimplementedError(None, None, "Tensor '%s' of checkpoint %s has "
                                            "dtype %s, which tensorweave does not support"
                                            % (name, self.prefix, self._unsupported[name]))
        return super()._entry(name)

    def _read_bytes(self, name: str, piece: dict) -> bytes:
        raw = self._tables[piece["shard"]].get(piece["key"])
        if raw is None:
            raise errors.DataLossError(None, None, "V1 checkpoint %s lists a slice of tensor "
                                       "'%s' that it does not hold"
                                       % (self._shards[piece["shard"]]["file"], name))
        return raw

    def _decode(self, buf: bytes, dt: _dt.DType, shape, what: str, piece=None) -> np.ndarray:
        from tensorweave.framework.graph_def_proto import tensor_proto_to_array
        data = self._parse(buf, what).data.data
        data.dtype = dt.as_datatype_enum
        data.tensor_shape.Clear()
        for d in shape:
            data.tensor_shape.dim.add(size=int(d))
        try:
            return np.array(tensor_proto_to_array(data))
        except ValueError as e:
            raise errors.DataLossError(None, None, "Corrupted V1 checkpoint data of %s: %s"
                                       % (what, e)) from None


# --- writing -----------------------------------------------------------------------------
# the TensorProto field each dtype's values go in; TF writes no other dtype in V1
_VALUE_FIELDS = {
    "float32": "float_val", "float64": "double_val", "int32": "int_val", "int16": "int_val",
    "int8": "int_val", "uint8": "int_val", "uint16": "int_val", "int64": "int64_val",
    "bool": "bool_val", "string": "string_val", "float16": "half_val",
    "complex64": "scomplex_val", "complex128": "dcomplex_val",
}
_CHECKPOINT_VERSION = 1   # TF_CHECKPOINT_VERSION, the producer version written


def _fill_values(proto, arr: np.ndarray, dt: _dt.DType) -> None:
    field = getattr(proto, _VALUE_FIELDS[dt.name])
    flat = np.asarray(arr).reshape(-1)
    if dt is _dt.string:
        field.extend(v if isinstance(v, bytes) else str(v).encode("utf-8") for v in flat)
    elif dt.name == "float16":
        field.extend(int(v) for v in flat.astype(np.float16).view(np.uint16))
    elif dt.is_complex:
        pairs = np.stack([flat.real, flat.imag], axis=-1).reshape(-1)
        field.extend(pairs.tolist())
    else:
        field.extend(flat.astype(dt.as_numpy_dtype).tolist())


def _slice_proto(proto, extents: Sequence[Tuple[int, int]], full: Sequence[int]) -> None:
    for (start, length), dim in zip(extents, full):
        extent = proto.extent.add()
        if not (start == 0 and length == dim):
            extent.start, extent.length = start, length


def _raise_unsavable(dt: _dt.DType) -> None:
    """TF's errors for a dtype V1 has no form for: the unsigned 32 and 64-bit ints fail
    in the slice serialization, the others when the save op checks its inputs."""
    if dt in (_dt.uint32, _dt.uint64):
        raise errors.InvalidArgumentError(None, None, "Tensor slice serialization not "
                                          "implemented for dtype %d" % dt.as_datatype_enum)
    raise errors.UnimplementedError(None, None, "Saving data type %s not yet supported"
                                    % dt.name)


def write(path: str, entries: Sequence[Tuple[str, str, np.ndarray, _dt.DType]]) -> None:
    """Writes the V1 checkpoint file `path` atomically.

    Args:
      path: the file (for a sharded save, one shard's name).
      entries: (tensor name, slice spec ("" for the whole tensor), array, dtype).

    Raises:
      UnimplementedError, InvalidArgumentError: a dtype the V1 format has no form for
        (as TF's).
      InvalidArgumentError: a slice saved twice, or a shape that contradicts its spec.
    """
    cls = _saved_tensor_slices_class()
    metas: Dict[str, object] = {}
    table: Dict[bytes, bytes] = {}
    for name, spec, arr, dt in entries:
        if dt.name not in _VALUE_FIELDS:
            _raise_unsavable(dt)
        full, extents = _fmt.parse_shape_and_slice(spec)
        if full is None:
            full, extents = list(np.shape(arr)), [(0, d) for d in np.shape(arr)]
        if [n for _, n in extents] != list(np.shape(arr)):
            raise errors.InvalidArgumentError(None, None, "Tensor %s of shape %s does not "
                                              "fit its slice spec %r"
                                              % (name, list(np.shape(arr)), spec))
        key = _bundle.slice_key(name, [(s, -1 if (s == 0 and n == d) else n)
                                       for (s, n), d in zip(extents, full)])
        if key in table:
            raise errors.InvalidArgumentError(None, None, "Slice %r of tensor %s is saved "
                                              "twice" % (spec, name))
        meta = metas.get(name)
        if meta is None:
            meta = metas[name] = cls().meta.tensor.add()
            meta.name, meta.type = name, dt.as_datatype_enum
            for d in full:
                meta.shape.dim.add(size=int(d))
        _slice_proto(meta.slice.add(), extents, full)
        value = cls()
        value.data.name = name
        _slice_proto(value.data.slice, extents, full)
        _fill_values(value.data.data, arr, dt)
        table[key] = value.SerializeToString()
    header = cls()
    header.meta.versions.producer = _CHECKPOINT_VERSION
    for name in sorted(metas):
        header.meta.tensor.add().CopyFrom(metas[name])
    table[b""] = header.SerializeToString()
    _fmt._check_writable(path)
    _fmt.write_atomic(path, sstable.write_table(sorted(table.items())))
