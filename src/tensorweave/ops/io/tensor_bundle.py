"""TensorFlow's V2 checkpoint format (the "tensor bundle"): reading and writing.

A bundle named by a prefix is ``<prefix>.index``, an SSTable (ops/io/sstable.py), and
``<prefix>.data-<shard>-of-<num_shards>`` files of raw tensor bytes. The table maps:

* ``""`` to a BundleHeaderProto: ``num_shards``, ``endianness`` (0: little) and
  ``version`` (a VersionDef; producer 1);
* every tensor name to a BundleEntryProto: ``dtype``, ``shape``, ``shard_id``, ``offset``
  and ``size`` of its bytes in that data file, and ``crc32c``, their masked CRC32C. A
  tensor saved in slices (a partitioned variable) has instead a ``slices`` list of
  TensorSliceProtos, and each slice's entry is stored under a key made from the name and
  the slice with LevelDB's OrderedCode (it starts with a 0 byte, so it sorts first and is
  hidden from the variable maps).

Tensor bytes are little-endian in C order; bool is one byte; a string tensor is the
varint64 length of each element, then the masked CRC32C of those lengths taken as
little-endian uint32s (4 bytes), then the elements' bytes. Its entry's checksum covers
the lengths (as uint32s), that 4-byte checksum and the bytes.

The protos are not generated code: their descriptors are built here, once and lazily,
on top of the `tensorboard` package's TensorShapeProto, DataType and VersionDef.

The bundle is what `Saver` writes, with or without `write_version=tf.train.SaverDef.V2`,
as TF1's does, so TensorFlow reads every checkpoint written here. Its commit is that of
tensorweave's own format (checkpoint_format.py: data files written under temporary
names, renamed, the index renamed last, the previous checkpoint of the same prefix kept
until the new one is complete). That format -- a JSON index that also records each data
file's size -- is still read by every reader (RestoreV2, Saver.restore,
tf.train.load_checkpoint; the two are told apart by the magic number that ends a
bundle's index) and written by a SaveV2 op whose attr ``_checkpoint_format`` is
"tensorweave" (checkpoints of earlier tensorweave releases are in it).
"""
from __future__ import annotations

import os
import re
import struct
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.ops.io import checkpoint_format as _fmt
from tensorweave.ops.io import sstable
from tensorweave.platform import file_io

FORMAT_ATTR = "_checkpoint_format"
BUNDLE_FORMAT = "tensor_bundle"
OWN_FORMAT = "tensorweave"
_VERSION = 1              # kTensorBundleVersion: the producer version written
_MIN_CONSUMER = 0
_protos = None


# --- the protos --------------------------------------------------------------------------
def protos():
    """(BundleHeaderProto, BundleEntryProto, TensorSliceProto) classes, built once."""
    global _protos
    if _protos is None:
        _protos = _build_protos()
    return _protos


def _build_protos():
    from google.protobuf import descriptor_pb2
    from tensorboard.compat.proto import tensor_shape_pb2, types_pb2, versions_pb2
    from tensorweave.framework.proto_classes import add_field as field, \
        default_pool_message_classes
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="tensorweave/ops/io/tensor_bundle.proto",
                                           package="tensorweave.bundle", syntax="proto3")
    f.dependency.extend([tensor_shape_pb2.DESCRIPTOR.name, types_pb2.DESCRIPTOR.name,
                         versions_pb2.DESCRIPTOR.name])

    sl = f.message_type.add(name="TensorSliceProto")
    ext = sl.nested_type.add(name="Extent")
    ext.oneof_decl.add(name="has_length")
    field(ext, "start", 1, F.TYPE_INT64)
    field(ext, "length", 2, F.TYPE_INT64, oneof=0)
    field(sl, "extent", 1, F.TYPE_MESSAGE, ".tensorweave.bundle.TensorSliceProto.Extent",
          repeated=True)
    header = f.message_type.add(name="BundleHeaderProto")
    endian = header.enum_type.add(name="Endianness")
    endian.value.add(name="LITTLE", number=0)
    endian.value.add(name="BIG", number=1)
    field(header, "num_shards", 1, F.TYPE_INT32)
    field(header, "endianness", 2, F.TYPE_ENUM,
          ".tensorweave.bundle.BundleHeaderProto.Endianness")
    field(header, "version", 3, F.TYPE_MESSAGE, ".tensorboard.VersionDef")
    entry = f.message_type.add(name="BundleEntryProto")
    field(entry, "dtype", 1, F.TYPE_ENUM, ".tensorboard.DataType")
    field(entry, "shape", 2, F.TYPE_MESSAGE, ".tensorboard.TensorShapeProto")
    field(entry, "shard_id", 3, F.TYPE_INT32)
    field(entry, "offset", 4, F.TYPE_INT64)
    field(entry, "size", 5, F.TYPE_INT64)
    field(entry, "crc32c", 6, F.TYPE_FIXED32)
    field(entry, "slices", 7, F.TYPE_MESSAGE, ".tensorweave.bundle.TensorSliceProto",
          repeated=True)
    names = ["tensorweave.bundle." + n for n in ("BundleHeaderProto", "BundleEntryProto",
                                                 "TensorSliceProto")]
    classes = default_pool_message_classes([f], names)
    return tuple(classes[n] for n in names)


# --- slice keys (LevelDB OrderedCode) ----------------------------------------------------
def _num_increasing(n: int) -> bytes:
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([len(body)]) + body


# The first two bytes of an L-byte signed number carry L in unary (after the sign bit).
_SIGNED_HEADER = {1: (0x80, 0), 2: (0xc0, 0), 3: (0xe0, 0), 4: (0xf0, 0), 5: (0xf8, 0),
                  6: (0xfc, 0), 7: (0xfe, 0), 8: (0xff, 0), 9: (0xff, 0x80),
                  10: (0xff, 0xc0)}


def _signed_num_increasing(n: int) -> bytes:
    """OrderedCode's WriteSignedNumIncreasing: the shortest big-endian two's complement
    of `n` whose first bits say its length (byte strings sort as the numbers do)."""
    bits = (~n if n < 0 else n).bit_length() + 1     # magnitude and sign
    length = next(k for k in range(1, 11) if bits <= (7 * k if k < 9 else 8 * k - 9))
    raw = bytearray((n & ((1 << (8 * length)) - 1)).to_bytes(length, "big"))
    first, second = _SIGNED_HEADER[length]
    raw[0] ^= first
    if length > 1:
        raw[1] ^= second
    return bytes(raw)


def slice_key(name: str, extents: Sequence[Tuple[int, int]]) -> bytes:
    """The table key of slice `extents` ((start, length); length -1: the whole dim)."""
    escaped = re.sub(b"[\x00\xff]", lambda m: b"\x00\xff" if m.group() == b"\x00"
                     else b"\xff\x00", name.encode("utf-8"))
    out = _num_increasing(0) + escaped + b"\x00\x01" + _num_increasing(len(extents))
    for start, length in extents:
        out += _signed_num_increasing(start) + _signed_num_increasing(length)
    return out


# --- tensor bytes ------------------------------------------------------------------------
def encode(arr: np.ndarray, dt: _dt.DType) -> Tuple[bytes, int]:
    """(bytes, masked CRC32C for the entry) of `arr`."""
    if dt is not _dt.string:
        buf = _fmt.encode(arr, dt)
        return buf, sstable.mask_crc(sstable.crc32c(buf))
    items = [x if isinstance(x, bytes) else str(x).encode() for x in
             np.asarray(arr, dtype=object).reshape(-1)]
    if any(len(x) >= 1 << 32 for x in items):
        raise errors.InvalidArgumentError(None, None, "A string element of 4 GiB or more "
                                          "cannot be saved in a tensor bundle")
    lengths = np.array([len(x) for x in items], dtype="<u4").tobytes()
    crc = sstable.crc32c(lengths)
    length_crc = struct.pack("<I", sstable.mask_crc(crc))
    body = b"".join(items)
    buf = b"".join(sstable.put_varint(len(x)) for x in items) + length_crc + body
    crc = sstable.crc32c(body, sstable.crc32c(length_crc, crc))
    return buf, sstable.mask_crc(crc)


def _string_lengths(buf: bytes, count: int) -> Tuple[List[int], int]:
    """The `count` varint lengths at the start of `buf`, and where they end."""
    lengths, pos = [], 0
    for _ in range(count):
        n, pos = sstable.get_varint(buf, pos, len(buf))
        lengths.append(n)
    return lengths, pos


def _string_crc(buf: bytes, count: int) -> int:
    """The entry checksum of string tensor bytes `buf` (lengths counted as uint32s)."""
    lengths, pos = _string_lengths(buf, count)
    crc = sstable.crc32c(np.array(lengths, dtype="<u4").tobytes())
    return sstable.crc32c(buf[pos:], crc)


def _decode_strings(buf: bytes, count: int, what: str) -> np.ndarray:
    try:
        lengths, pos = _string_lengths(buf, count)
    except ValueError:
        raise errors.DataLossError(None, None, "Malformed string lengths of %s" % what) \
            from None
    pos += 4                                           # the lengths' checksum
    flat = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        flat[i] = bytes(buf[pos:pos + n])
        pos += n
    if pos != len(buf):
        raise errors.DataLossError(None, None, "Malformed string data of %s" % what)
    return flat


# --- reading -----------------------------------------------------------------------------
def is_sstable(path: str) -> bool:
    """Whether the file `path` is an SSTable, by its magic number."""
    try:
        with file_io.open_file(path, "rb") as f:
            size = file_io.size_of(f)
            if size < sstable.FOOTER_SIZE:
                return False
            f.seek(size - 8)
            return struct.unpack("<Q", f.read(8))[0] == sstable.MAGIC
    except (OSError, errors.OpError):
        return False


def is_bundle(prefix: str) -> bool:
    """Whether `<prefix>.index` is an SSTable (a TF bundle), by its magic number."""
    return is_sstable(_fmt.index_file(prefix))


def _check_not_a_table(prefix: str) -> None:
    """With no `<prefix>.index`, TF opens `prefix` itself as a TF1 (V1) checkpoint table:
    a directory or a file that is no table there (say the directory of the checkpoints,
    or a data shard) is a DataLossError, not a missing checkpoint."""
    if file_io.exists(_fmt.index_file(prefix)) or not file_io.exists(prefix):
        return
    if file_io.isdir(prefix):
        reason = "Is a directory"
    elif not is_sstable(prefix):
        reason = "not an SSTable"
    else:
        return
    raise errors.DataLossError(None, None, "Unable to open table file %s: %s: perhaps your "
                               "file is in a different file format and you need to use a "
                               "different restore operator?" % (prefix, reason))


def open_checkpoint(prefix: str):
    """A reader of the checkpoint `prefix` in any format: a TF bundle, a TF1 V1
    checkpoint (ops/io/tensor_slice_v1.py) or ours (NotFoundError if none,
    DataLossError when `prefix` names a file or directory that is no checkpoint); of
    the checkpoint a save to `prefix` replaces while that save is being committed
    (checkpoint_format.readable_prefix)."""
    from tensorweave.ops.io import tensor_slice_v1
    prefix = _fmt.readable_prefix(prefix)
    if is_bundle(prefix):
        return BundleReader(prefix)
    _check_not_a_table(prefix)
    if tensor_slice_v1.v1_files(prefix):
        return tensor_slice_v1.V1Reader(prefix)
    return _fmt.CheckpointReader(prefix)


def _shape_of(proto) -> List[int]:
    if proto.unknown_rank or any(d.size < 0 for d in proto.dim):
        raise ValueError("unknown shape")
    return [int(d.size) for d in proto.dim]


def _extents_of(slice_proto, full: Sequence[int]) -> List[Tuple[int, int]]:
    out = []
    for e, dim in zip(slice_proto.extent, full):
        out.append((int(e.start), int(e.length) if e.HasField("length") else dim))
    if len(slice_proto.extent) != len(full):
        raise ValueError("slice rank differs from the tensor's")
    return out


class BundleReader(_fmt.CheckpointReader):
    """Reads a TF bundle; the interface of checkpoint_format.CheckpointReader.

    Raises NotFoundError when `<prefix>.index` is missing, DataLossError when the index
    (block checksums, protos) or a tensor's bytes (CRC32C) are damaged, and
    UnimplementedError for a big-endian bundle or a compressed index.
    """

    def __init__(self, prefix: str):
        self.prefix = prefix
        path = _fmt.index_file(prefix)
        try:
            raw = file_io.read_bytes(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise errors.NotFoundError(None, None, "Unsuccessful TensorSliceReader "
                                       "constructor: Failed to find any matching files "
                                       "for %s" % prefix) from None
        header_cls, entry_cls, _ = protos()
        from google.protobuf.message import DecodeError
        table = sstable.read_table(raw, path)
        self._raw = table
        try:
            if not table or table[0][0] != b"":
                raise DecodeError("no header")
            header = header_cls.FromString(table[0][1])
            entries = {k: entry_cls.FromString(v) for k, v in table[1:]}
        except DecodeError as e:
            raise errors.DataLossError(None, None, "Corrupted checkpoint index %s: %s"
                                       % (path, e)) from None
        if header.endianness != 0:
            raise errors.UnimplementedError(None, None, "Checkpoint %s is big-endian; only "
                                            "little-endian bundles are supported" % prefix)
        if header.version.min_consumer > _VERSION or \
                _VERSION in header.version.bad_consumers:
            raise errors.UnimplementedError(
                None, None, "Checkpoint %s needs a reader of version >= %d (bundle version "
                "%d here)" % (prefix, header.version.min_consumer, _VERSION))
        self._num_shards = max(int(header.num_shards), 1)
        self._shards = [{"file": os.path.basename(_fmt.data_file(prefix, i, self._num_shards))}
                        for i in range(self._num_shards)]
        self._checked_sizes = set()
        self._entries = entries
        self._tensors: Dict[str, dict] = {}
        self._unsupported: Dict[str, str] = {}     # name -> DT_ name of dtypes we lack
        for key, e in entries.items():
            if key.startswith(b"\x00"):
                continue
            try:
                supported = not _dt.as_dtype(int(e.dtype)).is_quantized  # no qint reads
            except TypeError:
                supported = False
            if not supported:
                self._unsupported[key.decode("utf-8", "replace")] = _dt_enum_name(e.dtype)
                continue
            try:
                self._tensors[key.decode("utf-8")] = self._entry_dict(key, e)
            except (ValueError, TypeError, UnicodeDecodeError) as err:
                raise errors.DataLossError(None, None, "Corrupted checkpoint index %s: bad "
                                           "entry %r (%s)" % (path, key, err)) from None

    def _entry_dict(self, key: bytes, e) -> dict:
        dt = _dt.as_dtype(int(e.dtype))
        full = _shape_of(e.shape)
        if not e.slices:
            pieces = [self._piece("", e)]
        else:
            pieces = []
            for s in e.slices:
                stored = [(int(x.start), int(x.length) if x.HasField("length") else -1)
                          for x in s.extent]
                piece = self._entries.get(slice_key(key.decode("utf-8"), stored))
                if piece is None:
                    raise ValueError("slice %s has no data entry" % stored)
                pieces.append(self._piece(_fmt._slice_text(_extents_of(s, full), full),
                                          piece))
        return {"dtype": dt.name, "shape": full, "slices": pieces}

    def _entry(self, name: str) -> dict:
        if name in self._unsupported:
            raise errors.UnimplementedError(None, None, "Tensor '%s' of checkpoint %s has "
                                            "dtype %s, which tensorweave does not support"
                                            % (name, self.prefix, self._unsupported[name]))
        return super()._entry(name)

    @staticmethod
    def _piece(text: str, e) -> dict:
        return {"slice": text, "shard": int(e.shard_id), "offset": int(e.offset),
                "length": int(e.size), "crc32c": int(e.crc32c)}

    def _read_bytes(self, name: str, piece: dict) -> bytes:
        shard = piece["shard"]
        if not 0 <= shard < self._num_shards:
            raise errors.DataLossError(None, None, "Checkpoint %s: tensor '%s' names shard "
                                       "%d of %d" % (self.prefix, name, shard,
                                                     self._num_shards))
        path = self._shard_path(shard)
        try:
            with file_io.open_file(path, "rb") as f:
                f.seek(piece["offset"])
                buf = f.read(piece["length"])
        except FileNotFoundError:
            raise self._missing(path, name) from None
        if len(buf) != piece["length"]:
            raise errors.DataLossError(None, None, "Checkpoint %s: data file %s is truncated "
                                       "(tensor '%s')" % (self.prefix, path, name))
        return buf

    def _decode(self, buf: bytes, dt: _dt.DType, shape, what: str, piece=None) -> np.ndarray:
        count = int(np.prod(shape, dtype=np.int64))
        if dt is _dt.string:
            try:
                crc = _string_crc(buf, count)
            except ValueError:
                crc = None
        else:
            crc = sstable.crc32c(buf)
        if piece is not None and crc != sstable.unmask_crc(piece["crc32c"]):
            raise errors.DataLossError(
                None, None, "Checksum does not match: stored %d vs. calculated on the "
                "restored bytes %s (%s)" % (sstable.unmask_crc(piece["crc32c"]), crc, what))
        if dt is _dt.string:
            return _decode_strings(buf, count, what).reshape(shape)
        return _fmt.decode(buf, dt, shape, what)

    def debug_string(self) -> bytes:
        """TF's: a line "<key> (<DT_ENUM>) [<dims>]" per stored entry, the slices of a
        partitioned tensor included (by their raw keys) and the tensor itself left out;
        bytes, since slice keys are not text."""
        lines = []
        for key, e in sorted(self._entries.items()):
            if e.slices:
                continue
            dims = ",".join(str(d.size) for d in e.shape.dim)
            lines.append(key + (" (%s) [%s]\n" % (_dt_enum_name(int(e.dtype)), dims)).encode())
        return b"".join(lines)


def _dt_enum_name(enum: int) -> str:
    from tensorboard.compat.proto import types_pb2
    try:
        return types_pb2.DataType.Name(int(enum))
    except ValueError:
        return "DataType %d" % enum


# --- writing -----------------------------------------------------------------------------
def _shape_proto(entry, dims: Sequence[int]) -> None:
    entry.shape.SetInParent()             # TF writes the (empty) shape of a scalar too
    for d in dims:
        entry.shape.dim.add(size=int(d))


def _build(entries: Sequence[Tuple[str, str, np.ndarray, _dt.DType]]):
    """({key: BundleEntryProto}, data chunks, data size) for `entries`."""
    _, entry_cls, slice_cls = protos()
    table: Dict[bytes, object] = {}
    chunks: List[bytes] = []
    offset = 0
    for name, spec, arr, dt in entries:
        if dt in (_dt.resource, _dt.variant):
            raise errors.InvalidArgumentError(None, None, "Cannot save tensor '%s' of dtype "
                                              "%s to a checkpoint" % (name, dt.name))
        full, extents = _fmt.parse_shape_and_slice(spec)
        if full is None:
            full, extents = list(arr.shape), None
        lengths = list(arr.shape) if extents is None else [n for _, n in extents]
        if lengths != list(arr.shape):
            raise errors.InvalidArgumentError(
                None, None, "Shape of tensor '%s' (%s) does not match its slice spec %r"
                % (name, list(arr.shape), spec))
        key = name.encode("utf-8")
        if key.startswith(b"\x00") or not key:
            raise errors.InvalidArgumentError(None, None, "Cannot save a tensor named %r in "
                                              "a tensor bundle" % name)
        buf, crc = encode(arr, dt)
        data = entry_cls(dtype=dt.as_datatype_enum, offset=offset, size=len(buf), crc32c=crc)
        _shape_proto(data, lengths)
        chunks.append(buf)
        offset += len(buf)
        if extents is None:
            if key in table:
                raise errors.InvalidArgumentError(None, None, "Tensor '%s' is saved twice"
                                                  % name)
            table[key] = data
            continue
        whole = table.get(key)
        if whole is None:
            whole = table[key] = entry_cls(dtype=dt.as_datatype_enum)
            _shape_proto(whole, full)
        elif not whole.slices or whole.dtype != dt.as_datatype_enum or \
                _shape_of(whole.shape) != full:
            raise errors.InvalidArgumentError(None, None, "Tensor '%s' is saved twice" % name)
        s = slice_cls()
        stored = []
        for (start, length), text in zip(extents, spec.split()[-1].split(":")):
            if text.strip() == "-":               # TF keeps "the whole dim" as no length
                s.extent.add(start=0)
                stored.append((0, -1))
            else:
                s.extent.add(start=start, length=length)
                stored.append((start, length))
        skey = slice_key(name, stored)
        if skey in table:
            raise errors.InvalidArgumentError(None, None, "Tensor '%s' is saved twice" % name)
        whole.slices.append(s)
        table[skey] = data
    return table, chunks, offset


def _index_bytes(table: Dict[bytes, object], num_shards: int) -> bytes:
    header_cls, _, _ = protos()
    header = header_cls(num_shards=num_shards, endianness=0)
    header.version.producer = _VERSION
    header.version.min_consumer = _MIN_CONSUMER
    items = [(b"", header.SerializeToString())]
    items += [(k, table[k].SerializeToString()) for k in sorted(table)]
    return sstable.write_table(items)


def write(prefix: str, entries: Sequence[Tuple[str, str, np.ndarray, _dt.DType]]) -> None:
    """Writes a one-shard TF bundle atomically (data file first, the index last).

    Args:
      prefix: the checkpoint prefix.
      entries: (tensor name, slice spec ("" for the whole tensor), array, dtype).

    Raises:
      NotFoundError: the parent directory does not exist.
      InvalidArgumentError: a tensor is saved twice, or its shape contradicts its spec.
    """
    _fmt._check_writable(prefix)
    table, chunks, _ = _build(entries)
    _fmt.write_files(prefix, [(_fmt.data_file(prefix), chunks)], _index_bytes(table, 1))


def merge(source_prefixes: Sequence[str], destination: str,
          delete_old_dirs: bool = True) -> None:
    """MergeV2Checkpoints of one-shard checkpoints: bundles are merged into a bundle (the
    slices of a tensor partitioned over sources are joined), tensorweave checkpoints by
    checkpoint_format.merge; a mix of both raises InvalidArgumentError."""
    kinds = {is_bundle(p) for p in source_prefixes}
    if kinds != {True}:
        if True in kinds:
            raise errors.InvalidArgumentError(None, None, "MergeV2Checkpoints: the sources "
                                              "mix TF bundles and tensorweave checkpoints")
        _fmt.merge(source_prefixes, destination, delete_old_dirs)
        return
    readers = [BundleReader(p) for p in source_prefixes]
    n = len(readers)
    table: Dict[bytes, object] = {}
    moves = []
    for i, r in enumerate(readers):
        if r._num_shards != 1:
            raise errors.InvalidArgumentError(None, None, "MergeV2Checkpoints: %s has %d "
                                              "shards; expected 1" % (r.prefix, r._num_shards))
        moves.append((r._shard_path(0), _fmt.data_file(destination, i, n)))
        for key, e in r._entries.items():
            old = table.get(key)
            if old is not None and e.slices and old.slices and old.dtype == e.dtype:
                old.slices.extend(e.slices)
                continue
            if old is not None:
                raise errors.InvalidArgumentError(None, None, "MergeV2Checkpoints: tensor %r "
                                                  "is in more than one source" % key)
            if not e.slices:
                e.shard_id = i
            table[key] = e
    _fmt._check_writable(destination)
    with _fmt._WRITE_LOCK:
        _fmt._remove_stale_temps([_fmt.index_file(destination)], destination)
        tmp_index = _fmt._write_temp(_fmt.index_file(destination), [_index_bytes(table, n)])
        _fmt.commit_files(destination, moves, tmp_index)
    for r in readers:
        _fmt._remove_quietly(_fmt.index_file(r.prefix))
        if delete_old_dirs:
            try:
                file_io.rmdir(os.path.dirname(r.prefix) or ".")
            except OSError:
                pass


def write_format(attrs: Dict[str, object]) -> Optional[str]:
    """The format a SaveV2 op with `attrs` writes: BUNDLE_FORMAT (TF's V2, the default,
    as TF's SaveV2 writes) or None (tensorweave's own, for the attr value "tensorweave")."""
    value = attrs.get(FORMAT_ATTR)
    if isinstance(value, bytes):
        value = value.decode()
    if value == OWN_FORMAT:
        return None
    if value not in (None, "", BUNDLE_FORMAT):
        raise ValueError("Unknown checkpoint format %r in attr %s (expected %r or %r)"
                         % (value, FORMAT_ATTR, BUNDLE_FORMAT, OWN_FORMAT))
    return BUNDLE_FORMAT
