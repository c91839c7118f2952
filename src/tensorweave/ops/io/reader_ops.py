"""Readers driven by a filename queue: TextLine, FixedLengthRecord, TFRecord, Identity,
WholeFile, LMDB.

The I/O subgraph of OSDI §3.2: a reader is a stateful resource (like a variable, §3.1)
that turns "work units" (file names dequeued from a queue) into (key, value) records.
The *ReaderV2 ops name the reader (created in the device's resource manager, keyed by
container and shared_name, else the op name); ReaderReadV2 / ReaderReadUpToV2 and the
other ops that change the reader are asynchronous kernels: when the current file is
exhausted they ask the queue for the next one with `dequeue_async` and hold no thread
while the queue is empty. The reader state and its request pipeline are in
reader_kinds.py. LMDBReader, whose TF op has a `Ref(string)` handle only, keeps TF's
op name with a resource handle (tensorweave has no reference dtypes).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import REQUIRED, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.io import lmdb_io, record_io
from tensorweave.ops.io.reader_kinds import FixedLengthRecordReaderResource, \
    IdentityReaderResource, LMDBReaderResource, ReaderResource, TextLineReaderResource, \
    TFRecordReaderResource, WholeFileReaderResource, _Request

_SCALAR = TensorShape([])


# --- handle ops ---------------------------------------------------------------------------
class ReaderHandle:
    """The run-time value of a reader handle: the reader resource itself."""

    __slots__ = ("reader", "name")

    def __init__(self, reader: ReaderResource, name: str):
        self.reader, self.name = reader, name

    def __repr__(self):
        return "<ReaderHandle %s (%s)>" % (self.name, self.reader.type_name)


def _check_nonnegative(ctx, names) -> None:
    for n in names:
        if ctx.attrs[n] < 0:
            raise errors.InvalidArgumentError(None, ctx.op, "%s must be >= 0 not %d"
                                              % (n, ctx.attrs[n]))


def _make_text_line(ctx):
    _check_nonnegative(ctx, ["skip_header_lines"])
    return TextLineReaderResource(ctx.attrs["skip_header_lines"])


def _make_fixed_length(ctx):
    a = ctx.attrs
    _check_nonnegative(ctx, ["header_bytes", "footer_bytes", "hop_bytes"])
    if a["record_bytes"] <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "record_bytes must be > 0 not %d"
                                          % a["record_bytes"])
    encoding = _as_str(a["encoding"])
    if encoding not in ("", "ZLIB", "GZIP"):
        raise errors.InvalidArgumentError(None, ctx.op, 'encoding must be "", "ZLIB" or '
                                          '"GZIP", not "%s"' % encoding)
    return FixedLengthRecordReaderResource(a["header_bytes"], a["record_bytes"],
                                           a["footer_bytes"], a["hop_bytes"], encoding)


def _make_tf_record(ctx):
    compression = _as_str(ctx.attrs["compression_type"])
    if compression not in ("", "ZLIB", "GZIP"):
        raise errors.InvalidArgumentError(None, ctx.op, 'compression_type must be "", '
                                          '"ZLIB" or "GZIP", not "%s"' % compression)
    return TFRecordReaderResource(compression)


def _make_lmdb(ctx):
    lmdb_io.lmdb_module()  # without the package, the reader's first run says so
    return LMDBReaderResource()


def _as_str(v) -> str:
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


_HANDLE_ATTRS = {"container": "", "shared_name": ""}
_READER_KINDS = {
    "TextLineReaderV2": ({"skip_header_lines": 0}, _make_text_line),
    "FixedLengthRecordReaderV2": ({"header_bytes": 0, "record_bytes": REQUIRED,
                                   "footer_bytes": 0, "hop_bytes": 0, "encoding": ""},
                                  _make_fixed_length),
    "TFRecordReaderV2": ({"compression_type": ""}, _make_tf_record),
    "IdentityReaderV2": ({}, lambda ctx: IdentityReaderResource()),
    "WholeFileReaderV2": ({}, lambda ctx: WholeFileReaderResource()),
    "LMDBReader": ({}, _make_lmdb),
}


def _register_reader(op_type: str, attrs: dict, make) -> None:
    register_op(op_type, outputs=["reader_handle: resource"],
                attrs=dict(attrs, **_HANDLE_ATTRS), shape=lambda op: _SCALAR, stateful=True)
    not_differentiable(op_type)

    @kernel(op_type)
    def _handle_kernel(ctx):
        a = ctx.attrs
        name = _as_str(a["shared_name"]) or ctx.op.name
        reader = ctx.resources.lookup_or_create(_as_str(a["container"]), name,
                                                lambda: make(ctx))
        h = ctx.state.get("handle")
        if h is None or h.reader is not reader:
            h = ctx.state["handle"] = ReaderHandle(reader, name)
        return h


for _op_type, (_attrs, _make) in _READER_KINDS.items():
    _register_reader(_op_type, _attrs, _make)


# --- reading ops --------------------------------------------------------------------------
def _reader_of(ctx, handle) -> ReaderResource:
    if not isinstance(handle, ReaderHandle):
        raise errors.InvalidArgumentError(None, ctx.op, "Expected a reader handle, got %r"
                                          % (handle,))
    return handle.reader


register_op("ReaderReadV2", inputs=["reader_handle: resource", "queue_handle: resource"],
            outputs=["key: string", "value: string"], shape=lambda op: [_SCALAR, _SCALAR],
            stateful=True)
not_differentiable("ReaderReadV2")


@kernel("ReaderReadV2", is_async=True)
def _read_kernel(ctx, state, done, reader_handle, queue_handle):
    _submit(ctx, state, done, reader_handle, "read", queue=queue_handle, limit=1)


def _submit(ctx, state, done, reader_handle, kind: str, **kw) -> None:
    if not isinstance(reader_handle, ReaderHandle):
        done(exc=errors.InvalidArgumentError(None, None, "Expected a reader handle, got %r"
                                             % (reader_handle,)))
        return
    reader_handle.reader.submit(_Request(ctx, state, done, kind, **kw))


register_op("ReaderReadUpToV2", inputs=["reader_handle: resource", "queue_handle: resource",
                                        "num_records: int64"],
            outputs=["keys: string", "values: string"],
            shape=lambda op: [TensorShape([None]), TensorShape([None])], stateful=True)
not_differentiable("ReaderReadUpToV2")


@kernel("ReaderReadUpToV2", is_async=True)
def _read_up_to_kernel(ctx, state, done, reader_handle, queue_handle, num_records):
    n = np.asarray(num_records)  # a bad count raises here; the executor reports it
    if n.ndim != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "num_records must be a scalar, "
                                          "got shape %s" % (list(n.shape),))
    if int(n) <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "num_records must be > 0, got %d"
                                          % int(n))
    _submit(ctx, state, done, reader_handle, "read_up_to", queue=queue_handle, limit=int(n))


register_op("ReaderResetV2", inputs=["reader_handle: resource"], stateful=True)
not_differentiable("ReaderResetV2")


@kernel("ReaderResetV2", is_async=True)
def _reset_kernel(ctx, state, done, reader_handle):
    _submit(ctx, state, done, reader_handle, "reset")


def _register_counter(op_type: str, output: str, index: int) -> None:
    register_op(op_type, inputs=["reader_handle: resource"], outputs=[output + ": int64"],
                shape=lambda op: _SCALAR, stateful=True)
    not_differentiable(op_type)

    @kernel(op_type)
    def _counter_kernel(ctx, reader_handle):
        return np.array(_reader_of(ctx, reader_handle).counters()[index], dtype=np.int64)


_register_counter("ReaderNumRecordsProducedV2", "records_produced", 0)
_register_counter("ReaderNumWorkUnitsCompletedV2", "units_completed", 1)

register_op("ReaderSerializeStateV2", inputs=["reader_handle: resource"],
            outputs=["state: string"], shape=lambda op: _SCALAR, stateful=True)
not_differentiable("ReaderSerializeStateV2")


@kernel("ReaderSerializeStateV2", is_async=True)
def _serialize_kernel(ctx, state, done, reader_handle):
    _submit(ctx, state, done, reader_handle, "serialize")


register_op("ReaderRestoreStateV2", inputs=["reader_handle: resource", "state: string"],
            stateful=True)
not_differentiable("ReaderRestoreStateV2")


@kernel("ReaderRestoreStateV2", is_async=True)
def _restore_kernel(ctx, state, done, reader_handle, saved):
    s = np.asarray(saved, dtype=object)
    if s.ndim != 0:
        done(exc=errors.InvalidArgumentError(None, None, "Reader state must be scalar, got "
                                             "shape %s" % (list(s.shape),)))
        return
    _submit(ctx, state, done, reader_handle, "restore", payload=s.item())


# --- the TF1 classes ----------------------------------------------------------------------
def _queue_ref(queue):
    from tensorweave.framework.graph import Tensor
    return queue if isinstance(queue, Tensor) else queue.queue_ref


@tf_export("ReaderBase")
class ReaderBase:
    """Base class for different Reader types, that produce a record every step.

    Conceptually, Readers convert string 'work units' into records (key, value pairs).
    Typically the 'work units' are filenames and the records are extracted from the
    contents of those files. Work units are dequeued from a queue when the reader needs
    one (when the previous one is exhausted).

    Args:
      reader_ref: the resource handle of the reader.
      supports_serialize: whether the reader implements serialize_state/restore_state.
    """

    def __init__(self, reader_ref, supports_serialize: bool = False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        """Op that implements the reader."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        """Whether the Reader implementation can serialize its state."""
        return self._supports_serialize

    def read(self, queue, name: Optional[str] = None):
        """Returns the next record (key, value) pair produced by a reader.

        Will dequeue a work unit from queue if necessary (e.g. when the reader needs to
        start reading from a new file since it has finished with the previous file).

        Args:
          queue: a Queue or a resource tensor handle to a queue of string work units.
          name: a name for the operation (optional).

        Returns:
          A tuple of Tensors (key, value): string scalars.

        Raises:
          OutOfRangeError (at run time): the queue is closed and empty.
        """
        op = apply_op("ReaderReadV2", [self._reader_ref, _queue_ref(queue)],
                      name=name or "ReaderReadV2")
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name: Optional[str] = None):
        """Returns up to num_records (key, value) pairs produced by a reader.

        Will dequeue a work unit from queue if necessary. It may return fewer than
        num_records even before the last batch: one call never spans two work units.

        Args:
          queue: a Queue or a resource tensor handle to a queue of string work units.
          num_records: number of records to read (int64 scalar, > 0).
          name: a name for the operation (optional).

        Returns:
          A tuple of Tensors (keys, values): string vectors of the same length.
        """
        op = apply_op("ReaderReadUpToV2", [self._reader_ref, _queue_ref(queue), num_records],
                      name=name or "ReaderReadUpToV2")
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name: Optional[str] = None):
        """Returns the number of records this reader has produced (int64 scalar)."""
        return apply_op("ReaderNumRecordsProducedV2", [self._reader_ref],
                        name=name or "ReaderNumRecordsProducedV2").outputs[0]

    def num_work_units_completed(self, name: Optional[str] = None):
        """Returns the number of work units this reader has finished processing."""
        return apply_op("ReaderNumWorkUnitsCompletedV2", [self._reader_ref],
                        name=name or "ReaderNumWorkUnitsCompletedV2").outputs[0]

    def serialize_state(self, name: Optional[str] = None):
        """Produces a string tensor that encodes the state of a reader.

        Not all Readers support being serialized, so this can produce an
        UnimplementedError at run time.
        """
        return apply_op("ReaderSerializeStateV2", [self._reader_ref],
                        name=name or "ReaderSerializeStateV2").outputs[0]

    def restore_state(self, state, name: Optional[str] = None):
        """Restore a reader to a previously saved state (from serialize_state).

        Not all Readers support being restored, so this can produce an
        UnimplementedError at run time.

        Returns:
          The created Operation.
        """
        return apply_op("ReaderRestoreStateV2", [self._reader_ref, state],
                        name=name or "ReaderRestoreStateV2")

    def reset(self, name: Optional[str] = None):
        """Restore a reader to its initial clean state.

        Returns:
          The created Operation.
        """
        return apply_op("ReaderResetV2", [self._reader_ref], name=name or "ReaderResetV2")


def _reader_op(op_type: str, attrs: dict, name: Optional[str]):
    return apply_op(op_type, [], attrs, name=name or op_type).outputs[0]


@tf_export("WholeFileReader")
class WholeFileReader(ReaderBase):
    """A Reader that outputs the entire contents of a file as a value.

    To use, enqueue filenames in a Queue. The output of read will be a filename (key)
    and the contents of that file (value).

    Args:
      name: a name for the operation (optional).
    """

    def __init__(self, name: Optional[str] = None):
        super().__init__(_reader_op("WholeFileReaderV2", {}, name), supports_serialize=True)


@tf_export("TextLineReader")
class TextLineReader(ReaderBase):
    """A Reader that outputs the lines of a file delimited by newlines.

    Newlines are stripped from the output. Keys are "<filename>:<line number>" (1-based,
    header lines counted).

    Args:
      skip_header_lines: an optional int. Defaults to 0. Number of lines to skip from
        the beginning of every file.
      name: a name for the operation (optional).
    """

    def __init__(self, skip_header_lines: Optional[int] = None, name: Optional[str] = None):
        attrs = {"skip_header_lines": 0 if skip_header_lines is None else skip_header_lines}
        super().__init__(_reader_op("TextLineReaderV2", attrs, name))


@tf_export("FixedLengthRecordReader")
class FixedLengthRecordReader(ReaderBase):
    """A Reader that outputs fixed-length records from a file.

    Keys are "<filename>:<record index>" (0-based).

    Args:
      record_bytes: an int, the number of bytes of a record.
      header_bytes: an optional int. Defaults to 0. Bytes skipped at the start.
      footer_bytes: an optional int. Defaults to 0. Bytes ignored at the end.
      hop_bytes: an optional int. Defaults to 0 (= record_bytes). The distance between
        the starts of consecutive records (records may overlap).
      name: a name for the operation (optional).
      encoding: the type of encoding for the file: "", "ZLIB" or "GZIP".
    """

    def __init__(self, record_bytes: int, header_bytes: Optional[int] = None,
                 footer_bytes: Optional[int] = None, hop_bytes: Optional[int] = None,
                 name: Optional[str] = None, encoding: Optional[str] = None):
        attrs = {"record_bytes": record_bytes, "header_bytes": header_bytes or 0,
                 "footer_bytes": footer_bytes or 0, "hop_bytes": hop_bytes or 0,
                 "encoding": encoding or ""}
        super().__init__(_reader_op("FixedLengthRecordReaderV2", attrs, name))


@tf_export("TFRecordReader")
class TFRecordReader(ReaderBase):
    """A Reader that outputs the records from a TFRecords file.

    Keys are "<filename>:<offset of the record>".

    Args:
      name: a name for the operation (optional).
      options: a TFRecordOptions object or a compression type (optional).
    """

    def __init__(self, name: Optional[str] = None, options=None):
        compression = record_io.TFRecordOptions.get_compression_type_string(options)
        super().__init__(_reader_op("TFRecordReaderV2", {"compression_type": compression},
                                    name))


@tf_export("LMDBReader")
class LMDBReader(ReaderBase):
    """A Reader that outputs the records from a LMDB file.

    A work unit names an LMDB database: its data file, or a directory holding
    data.mdb. The records of each come in key order; a record's key and value are the
    database's own (ops/io/lmdb_io.py).

    Args:
      name: a name for the operation (optional).
      options: a LMDBRecordOptions object (optional); unused, as in TF.

    Raises:
      ImportError: the `lmdb` package is not installed (`pip install
        'tensorweave[lmdb]'`).
    """

    def __init__(self, name: Optional[str] = None, options=None):
        del options  # TF takes it and does not use it
        try:
            lmdb_io.lmdb_module()
        except errors.UnimplementedError as e:
            raise ImportError(e.message) from None
        super().__init__(_reader_op("LMDBReader", {}, name))


@tf_export("IdentityReader")
class IdentityReader(ReaderBase):
    """A Reader that outputs the queued work as both the key and value.

    To use, enqueue strings in a Queue. read will take the front work string and output
    (work, work).

    Args:
      name: a name for the operation (optional).
    """

    def __init__(self, name: Optional[str] = None):
        super().__init__(_reader_op("IdentityReaderV2", {}, name), supports_serialize=True)

