"""The checkpoint file format: documented, checksummed, atomic writes (OSDI §4.3).

A checkpoint is named by a *prefix* (e.g. ``/ckpt/model.ckpt-100``) and is the set of
files that begin with it, as in TensorFlow's V2 format:

    <prefix>.index                       JSON (UTF-8): what the checkpoint holds
    <prefix>.data-00000-of-00001         raw tensor bytes (one file per shard)

Index, format version 1::

    {"format": "tensorweave.checkpoint", "version": 1,
     "shards": [{"file": "model.ckpt-100.data-00000-of-00001", "size": 4104}],
     "tensors": {
        "W": {"dtype": "float32", "shape": [2, 3],
              "slices": [{"slice": "", "shard": 0, "offset": 0, "length": 24,
                          "crc32": 2893432211}]},
        ...}}

* ``shards[i].file`` is the shard's file name when it was written (for people); as in
  TF, readers find shard i at ``<prefix>.data-<i>-of-<n>`` of the prefix they open, so
  a checkpoint can be moved to another directory or renamed to another prefix as a
  whole (index and data files together). ``size`` is the file's length in bytes,
  checked when it is first read.
* ``dtype`` is a tensorweave dtype name; ``shape`` is the full shape of the tensor.
* ``slices`` lists the stored pieces of the tensor: ``slice`` is TF's slice spec (``""``:
  the whole tensor; else one ``start,length`` or ``-`` (whole extent) per dimension,
  joined by ``:``, e.g. ``"0,2:-"``); ``shard``, ``offset`` and ``length`` say where its
  bytes are; ``crc32`` is ``zlib.crc32`` of exactly those bytes, verified on every read
  (a mismatch raises DataLossError naming the tensor).

Tensor bytes, per slice, in C (row-major) order:

* numbers: little-endian, the dtype's natural width (bfloat16: 2 bytes; complex64:
  two float32, real first); bool: one byte, 0 or 1.
* strings: for each element, its length as a little-endian uint64, then its bytes.

Writes are atomic. Every file is first written in full to a temporary file in the same
directory (``<name>.tempstate<16 hex digits>``) and fsync'ed; then the data files are
moved into place with ``os.replace`` and the index last, and the directory is fsync'ed.
The index is the commit point: a prefix without an index is not a checkpoint, so a crash
during a save leaves only temporary files and never touches other checkpoints. A save
removes the temporaries that killed saves to its prefix left behind.

Saving again to the *same* prefix keeps TF's file names and stays atomic (commit_files):
between the data rename and the index rename the old index would name the new data. So
before the renames the current pair is hard-linked to the *backup* prefix
``<prefix>.tw-previous`` (data first, its index last: the backup index is the backup's
commit point), and the backup is removed (index first) once the new index is in place.
A reader opening a prefix whose index is the same file as its backup's index (a save
was interrupted before its index rename: the data may already be new) reads the
backup, the previous checkpoint, instead (readable_prefix); once the new index is in
place the two differ and the prefix itself is read. Where hard links are not available
(and for URLs) the previous checkpoint is not kept, and a crash between the two renames
leaves a mismatched pair, caught on open by the checksums. A prefix may also be a URL
(``memory://``, ``s3://``, ... through fsspec, as tf.gfile): the same steps run with the
filesystem's own move, without fsync, as atomic as that store makes a move. One writer
per prefix at a time (as in TF); saves within one process are serialized.

Nothing here is pickled; a reader needs only ``json`` and ``numpy``.

TensorFlow's own V2 format (a "tensor bundle") is read and written by tensor_bundle.py;
this format stays the Saver's default, for the reasons given there.
"""
from __future__ import annotations

import difflib
import json
import os
import re
import secrets
import threading
import zlib
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.platform import file_io

FORMAT = "tensorweave.checkpoint"
VERSION = 1
INDEX_SUFFIX = ".index"


# --- names -------------------------------------------------------------------------------
def index_file(prefix: str) -> str:
    return prefix + INDEX_SUFFIX


def data_file(prefix: str, shard: int = 0, num_shards: int = 1) -> str:
    return "%s.data-%05d-of-%05d" % (prefix, shard, num_shards)


def sharded_filename(basename: str, shard: int, num_shards: int) -> str:
    """TF's ShardedFilename: "<basename>-00001-of-00004"."""
    return "%s-%05d-of-%05d" % (basename, shard, num_shards)


def checkpoint_exists(prefix: str) -> bool:
    return file_io.isfile(index_file(prefix))


# --- slice specs -------------------------------------------------------------------------
def parse_shape_and_slice(spec: str) -> Tuple[Optional[List[int]], Optional[List[Tuple]]]:
    """(full shape, [(start, length), ...]) of TF's "shape_and_slice" string; (None, None)
    for "" (the whole tensor). Raises ValueError on a malformed spec."""
    spec = spec.strip()
    if not spec:
        return None, None
    parts = spec.split(" ")
    try:
        shape = [int(p) for p in parts[:-1]]
        extents = []
        for dim, s in zip(shape, parts[-1].split(":")):
            if s == "-":
                extents.append((0, dim))
            else:
                start, length = (int(x) for x in s.split(","))
                extents.append((start, length))
    except ValueError:
        raise ValueError("Malformed shape_and_slice spec %r: expected '<dims> <slices>', "
                         "e.g. '10 20 0,5:-'" % spec) from None
    if len(extents) != len(shape) or len(parts[-1].split(":")) != len(shape):
        raise ValueError("Malformed shape_and_slice spec %r: %d dims but %d slice extents"
                         % (spec, len(shape), len(parts[-1].split(":"))))
    for dim, (start, length) in zip(shape, extents):
        if start < 0 or length < 0 or start + length > dim:
            raise ValueError("Slice %r of shape_and_slice spec %r is out of range"
                             % (parts[-1], spec))
    return shape, extents


def _slice_text(extents: Sequence[Tuple[int, int]], shape: Sequence[int]) -> str:
    if all(s == 0 and n == d for (s, n), d in zip(extents, shape)):
        return ""
    return ":".join("-" if (s == 0 and n == d) else "%d,%d" % (s, n)
                    for (s, n), d in zip(extents, shape))


def _extents_of(slice_text: str, shape: Sequence[int]) -> List[Tuple[int, int]]:
    if not slice_text:
        return [(0, d) for d in shape]
    return parse_shape_and_slice(" ".join(str(d) for d in shape) + " " + slice_text)[1] \
        if shape else []


# --- encoding ----------------------------------------------------------------------------
def _np_dtype(dt: _dt.DType) -> np.dtype:
    return np.dtype(dt.as_numpy_dtype).newbyteorder("<")


def encode(arr: np.ndarray, dt: _dt.DType) -> bytes:
    """The bytes of `arr` (see the module docstring)."""
    if dt is _dt.string:
        items = [x if isinstance(x, bytes) else str(x).encode() for x in
                 np.asarray(arr, dtype=object).reshape(-1)]
        out = bytearray()
        for x in items:
            out += len(x).to_bytes(8, "little")
            out += x
        return bytes(out)
    return np.ascontiguousarray(arr, dtype=_np_dtype(dt)).tobytes()


def decode(buf: bytes, dt: _dt.DType, shape: Sequence[int], what: str) -> np.ndarray:
    """The array stored in `buf` (DataLossError mentioning `what` if malformed)."""
    count = int(np.prod(shape, dtype=np.int64))
    if dt is _dt.string:
        flat = np.empty(count, dtype=object)
        pos = 0
        for i in range(count):
            if pos + 8 > len(buf):
                raise errors.DataLossError(None, None, "Truncated string data for %s" % what)
            n = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
            flat[i] = bytes(buf[pos:pos + n])
            pos += n
        if pos != len(buf):
            raise errors.DataLossError(None, None, "Malformed string data for %s" % what)
        return flat.reshape(shape)
    np_dt = _np_dtype(dt)
    if len(buf) != count * np_dt.itemsize:
        raise errors.DataLossError(None, None, "Size of the stored data of %s (%d bytes) "
                                   "does not match its shape %s and dtype %s"
                                   % (what, len(buf), list(shape), dt.name))
    return np.frombuffer(buf, dtype=np_dt).astype(np.dtype(dt.as_numpy_dtype)) \
        .reshape(shape)


# --- atomic files ------------------------------------------------------------------------
def _temp_name(path: str) -> str:
    return "%s.tempstate%s" % (path, secrets.token_hex(8))


def _write_temp(path: str, chunks: Iterable[bytes]) -> str:
    """Writes `chunks` to a fsync'ed temporary file next to `path`; returns its name."""
    tmp = _temp_name(path)
    try:
        with file_io.open_file(tmp, "wb") as f:
            for c in chunks:
                f.write(c)
            f.flush()
            if file_io.can_fsync(f):
                os.fsync(f.fileno())
    except BaseException:
        _remove_quietly(tmp)
        raise
    return tmp


def _remove_quietly(path: str) -> None:
    try:
        file_io.remove(path)
    except OSError:
        pass


def _fsync_dir(directory: str) -> None:
    if not file_io.is_local(directory):
        return
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_WRITE_LOCK = threading.RLock()  # serializes checkpoint writes within the process
_TEMP_SUFFIX = re.compile(r"\.tempstate[0-9a-f]{16}$")
BACKUP_SUFFIX = ".tw-previous"


def backup_prefix(prefix: str) -> str:
    """Where a save to `prefix` keeps the previous checkpoint until its index is in."""
    return prefix + BACKUP_SUFFIX


_DATA_SUFFIX_LEN = len(".data-00000-of-00001")


def _data_files(prefix: str) -> List[str]:
    """The data shards of checkpoint `prefix`, as gfile.glob names them (a bare relative
    prefix comes back from "./", so take a shard's suffix from its end, not its start)."""
    import glob as _glob
    return file_io.glob(_glob.escape(prefix) + ".data-?????-of-?????")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(file_io._local(a), file_io._local(b))
    except OSError:
        return False


def readable_prefix(prefix: str) -> str:
    """The prefix to read for the checkpoint `prefix`: its backup while a save to it is
    between its data and index renames (see the module docstring), else `prefix`."""
    if not file_io.is_local(prefix):
        return prefix
    backup = index_file(backup_prefix(prefix))
    if os.path.isfile(file_io._local(backup)) and _same_file(index_file(prefix), backup):
        return backup_prefix(prefix)
    return prefix


def _remove_stale_temps(paths: Sequence[str], prefix: Optional[str] = None) -> None:
    """Removes the temporaries of `paths` (and of any file of checkpoint `prefix`) that
    killed writes left behind. Call with _WRITE_LOCK held, before writing temporaries."""
    dirs: Dict[str, List[str]] = {}
    for p in paths:
        dirs.setdefault(os.path.dirname(p), []).append(os.path.basename(p))
    if prefix is not None:
        dirs.setdefault(os.path.dirname(prefix), [])
    for d, bases in dirs.items():
        try:
            names = file_io.listdir(d or ".")
        except OSError:
            continue
        own = re.compile(r"%s\.(index|data-\d{5}-of-\d{5})$"
                         % re.escape(os.path.basename(prefix))) \
            if prefix is not None and os.path.dirname(prefix) == d else None
        for name in names:
            m = _TEMP_SUFFIX.search(name)
            if m is None:
                continue
            final = name[:m.start()]
            if final in bases or (own is not None and own.match(final)):
                _remove_quietly(os.path.join(d, name) if d else name)


def _remove_backup(backup: str) -> None:
    _remove_quietly(index_file(backup))   # the backup's commit point goes first
    for p in _data_files(backup):
        _remove_quietly(p)


def _keep_previous(prefix: str) -> Optional[str]:
    """Hard-links the checkpoint at `prefix` to its backup prefix (see the module
    docstring); the backup prefix, or None when there is nothing to keep or no links."""
    index = index_file(prefix)
    if not file_io.is_local(prefix) or not os.path.isfile(file_io._local(index)):
        return None
    backup = backup_prefix(prefix)
    if os.path.isfile(file_io._local(index_file(backup))):
        if _same_file(index, index_file(backup)):
            return backup  # an interrupted save's backup: still the readable checkpoint
        _remove_backup(backup)  # left over after its save's index was in place
    for p in _data_files(backup):
        _remove_quietly(p)
    try:
        for p in _data_files(prefix):
            os.link(file_io._local(p), file_io._local(backup + p[-_DATA_SUFFIX_LEN:]))
        os.link(file_io._local(index), file_io._local(index_file(backup)))
    except OSError:  # no hard links here: the previous checkpoint is not kept
        _remove_backup(backup)
        return None
    _fsync_dir(os.path.dirname(prefix))
    return backup


def commit_files(prefix: str, data_moves: Sequence[Tuple[str, str]], tmp_index: str) -> None:
    """Moves the data files (`data_moves`: (source, final) pairs) and then the index
    `tmp_index` of checkpoint `prefix` into place, keeping the checkpoint it replaces
    readable until the new index is in (see the module docstring)."""
    with _WRITE_LOCK:
        try:
            backup = _keep_previous(prefix)
        except BaseException:
            for tmp in [src for src, _ in data_moves] + [tmp_index]:
                if _TEMP_SUFFIX.search(tmp):
                    _remove_quietly(tmp)
            raise
        commit(list(data_moves) + [(tmp_index, index_file(prefix))])
        if backup is not None:
            _remove_backup(backup)


def commit(moves: Sequence[Tuple[str, str]]) -> None:
    """Moves each (temporary, final) pair into place in order (the index must be last),
    then syncs the directory. On failure the remaining temporaries are removed."""
    done = 0
    try:
        for tmp, final in moves:
            file_io.replace(tmp, final)
            done += 1
    finally:
        for tmp, _ in moves[done:]:
            if _TEMP_SUFFIX.search(tmp):  # not the shards a merge moves
                _remove_quietly(tmp)
    for d in {os.path.dirname(final) for _, final in moves}:
        _fsync_dir(d)


def write_atomic(path: str, data: bytes) -> None:
    """Replaces `path` by `data` atomically (temporary file, fsync, os.replace); removes
    the temporaries of `path` that killed writes left behind."""
    with _WRITE_LOCK:
        _remove_stale_temps([path])
        commit([(_write_temp(path, [data]), path)])


# --- writing -----------------------------------------------------------------------------
def _check_writable(prefix: str) -> None:
    parent = os.path.dirname(prefix) or "."
    if not file_io.parent_dir_usable(parent):
        raise errors.NotFoundError(None, None, "Failed to create a checkpoint at %s: parent "
                                   "directory %s does not exist" % (prefix, parent))


def _build(prefix: str, entries: Sequence[Tuple[str, str, np.ndarray, _dt.DType]]):
    """(data bytes chunks, index 'tensors' dict, data size) for `entries`."""
    tensors: Dict[str, dict] = {}
    chunks: List[bytes] = []
    offset = 0
    for name, spec, arr, dt in entries:
        if dt in (_dt.resource, _dt.variant):
            raise errors.InvalidArgumentError(None, None, "Cannot save tensor '%s' of dtype "
                                              "%s to a checkpoint" % (name, dt.name))
        full, extents = parse_shape_and_slice(spec)
        if full is None:
            full, extents = list(arr.shape), [(0, d) for d in arr.shape]
        if [n for _, n in extents] != list(arr.shape):
            raise errors.InvalidArgumentError(
                None, None, "Shape of tensor '%s' (%s) does not match its slice spec %r"
                % (name, list(arr.shape), spec))
        text = _slice_text(extents, full)
        entry = tensors.get(name)
        if entry is None:
            entry = tensors[name] = {"dtype": dt.name, "shape": full, "slices": []}
        elif entry["dtype"] != dt.name or entry["shape"] != full or not text or \
                any(s["slice"] in ("", text) for s in entry["slices"]):
            raise errors.InvalidArgumentError(None, None, "Tensor '%s' is saved twice" % name)
        buf = encode(arr, dt)
        entry["slices"].append({"slice": text, "shard": 0,
                                "offset": offset, "length": len(buf),
                                "crc32": zlib.crc32(buf)})
        chunks.append(buf)
        offset += len(buf)
    return chunks, tensors, offset


def _index_bytes(shards: List[dict], tensors: Dict[str, dict]) -> bytes:
    doc = {"format": FORMAT, "version": VERSION, "shards": shards,
           "tensors": dict(sorted(tensors.items()))}
    return json.dumps(doc, sort_keys=False, separators=(",", ":")).encode()


def write(prefix: str, entries: Sequence[Tuple[str, str, np.ndarray, _dt.DType]]) -> None:
    """Writes a one-shard checkpoint atomically.

    Args:
      prefix: the checkpoint prefix.
      entries: (tensor name, slice spec ("" for the whole tensor), array, dtype).

    Raises:
      NotFoundError: the parent directory does not exist.
      InvalidArgumentError: a tensor is saved twice, or its shape contradicts its spec.
    """
    _check_writable(prefix)
    chunks, tensors, size = _build(prefix, entries)
    data_path = data_file(prefix)
    index = _index_bytes([{"file": os.path.basename(data_path), "size": size}], tensors)
    write_files(prefix, [(data_path, chunks)], index)


def write_files(prefix: str, data: Sequence[Tuple[str, Iterable[bytes]]],
                index: bytes) -> None:
    """Writes checkpoint `prefix` from its data files ((path, chunks) pairs) and index
    bytes: stale temporaries removed, temporaries written and fsync'ed, committed."""
    with _WRITE_LOCK:
        _remove_stale_temps([p for p, _ in data] + [index_file(prefix)], prefix)
        moves = []
        try:
            for path, chunks in data:
                moves.append((_write_temp(path, chunks), path))
            tmp_index = _write_temp(index_file(prefix), [index])
        except BaseException:
            for tmp, _ in moves:
                _remove_quietly(tmp)
            raise
        commit_files(prefix, moves, tmp_index)


def _joinable_slices(a: dict, b: dict) -> bool:
    """Whether entries `a` and `b` are slices of one tensor (same dtype and full shape,
    no whole-tensor piece), which a merge joins."""
    return (a["dtype"] == b["dtype"] and list(a["shape"]) == list(b["shape"]) and
            all(s["slice"] for s in a["slices"] + b["slices"]))


def merge(source_prefixes: Sequence[str], destination: str,
          delete_old_dirs: bool = True) -> None:
    """Merges one-shard checkpoints into one checkpoint with one shard each (TF's
    MergeV2Checkpoints): data files are renamed, the merged index is written last."""
    readers = [CheckpointReader(p) for p in source_prefixes]
    n = len(readers)
    tensors: Dict[str, dict] = {}
    shards, moves = [], []
    for i, r in enumerate(readers):
        if len(r._shards) != 1:
            raise errors.InvalidArgumentError(None, None, "MergeV2Checkpoints: %s has %d "
                                              "shards; expected 1" % (r.prefix, len(r._shards)))
        final = data_file(destination, i, n)
        shards.append({"file": os.path.basename(final), "size": r._shards[0]["size"]})
        moves.append((r._shard_path(0), final))
        for name, entry in r._tensors.items():
            pieces = [dict(s, shard=i) for s in entry["slices"]]
            old = tensors.get(name)
            if old is not None and _joinable_slices(old, entry):
                old["slices"].extend(pieces)   # a partitioned variable saved per device
                continue
            if old is not None:
                raise errors.InvalidArgumentError(None, None, "MergeV2Checkpoints: tensor '%s' "
                                                  "is in more than one source" % name)
            tensors[name] = dict(entry, slices=pieces)
    _check_writable(destination)
    with _WRITE_LOCK:
        _remove_stale_temps([index_file(destination)], destination)
        tmp_index = _write_temp(index_file(destination), [_index_bytes(shards, tensors)])
        commit_files(destination, moves, tmp_index)
    for r in readers:
        _remove_quietly(index_file(r.prefix))
        if delete_old_dirs:
            try:
                file_io.rmdir(os.path.dirname(r.prefix) or ".")
            except OSError:
                pass


# --- reading -----------------------------------------------------------------------------
class CheckpointReader:
    """Reads a checkpoint: its tensor names, dtypes and shapes, and tensor values.

    Raises NotFoundError ("Unsuccessful TensorSliceReader constructor: Failed to find any
    matching files for <prefix>") when there is no checkpoint at `prefix`, and
    DataLossError when the index or the data is damaged.
    """

    def __init__(self, prefix: str):
        self.prefix = prefix
        path = index_file(prefix)
        try:
            raw = file_io.read_bytes(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise errors.NotFoundError(None, None, "Unsuccessful TensorSliceReader "
                                       "constructor: Failed to find any matching files "
                                       "for %s" % prefix) from None
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise errors.DataLossError(None, None, "Unable to read checkpoint index %s: "
                                       "not a tensorweave checkpoint (%s)" % (path, e)) from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise errors.DataLossError(None, None, "Unable to read checkpoint index %s: "
                                       "not a tensorweave checkpoint" % path)
        if int(doc.get("version", 0)) > VERSION:
            raise errors.UnimplementedError(None, None, "Checkpoint %s has format version %s; "
                                            "this tensorweave reads up to version %d"
                                            % (prefix, doc.get("version"), VERSION))
        self._shards: List[dict] = list(doc.get("shards", []))
        self._tensors: Dict[str, dict] = dict(doc.get("tensors", {}))
        self._checked_sizes = set()

    # --- metadata ------------------------------------------------------------------
    def tensor_names(self) -> List[str]:
        return sorted(self._tensors)

    def has_tensor(self, name: str) -> bool:
        return name in self._tensors

    def dtype(self, name: str) -> _dt.DType:
        return _dt.as_dtype(self._entry(name)["dtype"])

    def shape(self, name: str) -> List[int]:
        return list(self._entry(name)["shape"])

    def variable_to_shape_map(self) -> Dict[str, List[int]]:
        return {k: list(v["shape"]) for k, v in self._tensors.items()}

    def variable_to_dtype_map(self) -> Dict[str, _dt.DType]:
        return {k: _dt.as_dtype(v["dtype"]) for k, v in self._tensors.items()}

    def close_matches(self, name: str, n: int = 3) -> List[str]:
        return difflib.get_close_matches(name, list(self._tensors), n=n, cutoff=0.5)

    def not_found_message(self, name: str) -> str:
        msg = "Key %s not found in checkpoint" % name
        close = self.close_matches(name)
        if close:
            msg += " (did you mean %s?)" % ", ".join(repr(c) for c in close)
        return msg

    def _entry(self, name: str) -> dict:
        entry = self._tensors.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, self.not_found_message(name))
        return entry

    # --- data ----------------------------------------------------------------------
    def _shard_path(self, shard: int) -> str:
        # relative to the prefix opened, as in TF: a checkpoint may be moved or renamed
        return data_file(self.prefix, shard, len(self._shards))

    def _missing(self, path: str, name: str) -> errors.NotFoundError:
        return errors.NotFoundError(None, None, "%s; No such file or directory (data file "
                                    "of checkpoint %s, needed for tensor '%s')"
                                    % (path, self.prefix, name))

    def _read_bytes(self, name: str, piece: dict) -> bytes:
        shard = int(piece["shard"])
        if not 0 <= shard < len(self._shards):
            raise errors.DataLossError(None, None, "Checkpoint %s: tensor '%s' names shard "
                                       "%d of %d" % (self.prefix, name, shard,
                                                     len(self._shards)))
        path = self._shard_path(shard)
        try:
            with file_io.open_file(path, "rb") as f:
                if shard not in self._checked_sizes:
                    size = file_io.size_of(f)
                    if size != self._shards[shard]["size"]:
                        raise errors.DataLossError(
                            None, None, "Checkpoint %s: data file %s has %d bytes, the index "
                            "says %d (a partial or overwritten checkpoint); cannot read "
                            "tensor '%s'" % (self.prefix, path, size,
                                             self._shards[shard]["size"], name))
                    self._checked_sizes.add(shard)
                f.seek(int(piece["offset"]))
                buf = f.read(int(piece["length"]))
        except FileNotFoundError:
            raise self._missing(path, name) from None
        if len(buf) != int(piece["length"]):
            raise errors.DataLossError(None, None, "Checkpoint %s: data file %s is truncated "
                                       "(tensor '%s')" % (self.prefix, path, name))
        crc = zlib.crc32(buf)
        if crc != int(piece["crc32"]):
            raise errors.DataLossError(
                None, None, "Checksum does not match: stored %d vs. calculated on the "
                "restored bytes %d (tensor '%s' in checkpoint %s)"
                % (int(piece["crc32"]), crc, name, self.prefix))
        return buf

    @staticmethod
    def _decode(buf: bytes, dt: _dt.DType, shape, what: str, piece: dict) -> np.ndarray:
        """The array of a slice's bytes (already checked by _read_bytes here; a subclass
        for another format checks and decodes them its way)."""
        return decode(buf, dt, shape, what)

    def read(self, name: str, shape_and_slice: str = "") -> np.ndarray:
        """The value of tensor `name` (or of the slice `shape_and_slice` of it).

        Raises:
          NotFoundError: no such tensor, or the stored slices do not cover the request.
          InvalidArgumentError: the spec's full shape differs from the stored shape.
          DataLossError: a checksum or size mismatch.
        """
        entry = self._entry(name)
        dt = _dt.as_dtype(entry["dtype"])
        full = list(entry["shape"])
        spec_shape, want = parse_shape_and_slice(shape_and_slice)
        if spec_shape is not None and spec_shape != full:
            raise errors.InvalidArgumentError(
                None, None, "tensor_name = %s; shape in shape_and_slice spec %s does not "
                "match the shape stored in checkpoint: %s" % (name, spec_shape, full))
        if want is None:
            want = [(0, d) for d in full]
        pieces = entry["slices"]
        what = "tensor '%s' in checkpoint %s" % (name, self.prefix)
        for piece in pieces:
            if _extents_of(piece["slice"], full) == list(want):
                lengths = [n for _, n in want]
                return self._decode(self._read_bytes(name, piece), dt, lengths, what,
                                    piece)
        return self._assemble(name, dt, full, want, pieces, what)

    def _assemble(self, name, dt, full, want, pieces, what) -> np.ndarray:
        lengths = [n for _, n in want]
        out = np.empty(lengths, dtype=object if dt is _dt.string else dt.as_numpy_dtype)
        covered = 0
        for piece in pieces:
            ext = _extents_of(piece["slice"], full)
            lo = [max(a, b) for (a, _), (b, _) in zip(ext, want)]
            hi = [min(a + m, b + n) for (a, m), (b, n) in zip(ext, want)]
            if any(h <= l for l, h in zip(lo, hi)):
                continue
            arr = self._decode(self._read_bytes(name, piece), dt, [n for _, n in ext], what,
                               piece)
            src = tuple(slice(l - a, h - a) for l, h, (a, _) in zip(lo, hi, ext))
            dst = tuple(slice(l - b, h - b) for l, h, (b, _) in zip(lo, hi, want))
            out[dst] = arr[src]
            covered += int(np.prod([h - l for l, h in zip(lo, hi)], dtype=np.int64))
        if covered != int(np.prod(lengths, dtype=np.int64)):
            raise errors.NotFoundError(None, None, "Can't find the requested slice %s of "
                                       "tensor '%s' in checkpoint %s"
                                       % (_slice_text(want, full) or "(all)", name,
                                          self.prefix))
        return out

    def debug_string(self) -> str:
        return "".join("%s (%s) %s\n" % (k, v["dtype"], v["shape"])
                       for k, v in sorted(self._tensors.items()))
