"""Reader state for reader_ops.py: the request pipeline every reader shares and one
class per kind of reader (what a work unit is, how its records are read).

Invariants of a `ReaderResource`:
  * one request (read, read_up_to, reset, serialize, restore) runs at a time, in arrival
    order; the others wait in `_waiting` (a step cancelled while waiting there is
    finished at once with the cancellation error). `_busy` is True while a request runs
    or waits on the filename queue.
  * only the running request touches the file state (`work`, the open stream), so it
    needs no lock; the counters change under `_lock`, which never guards I/O or a call
    into the queue.
  * a file is opened once per work unit and read through a buffered stream.
  * each request's `done` is called exactly once.

A running request that needs a new work unit calls the queue's `dequeue_async`; if the
queue answers at once the request goes on in the same call, otherwise it resumes in the
callback, on whichever thread fills or closes the queue.
"""
from __future__ import annotations

import threading
from collections import deque
from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import errors
from tensorweave.ops.io import lmdb_io, record_io

_SUSPENDED = object()


# --- the request pipeline -----------------------------------------------------------------
class _Request:
    """One pending reader op: "read" (limit 1, scalar outputs), "read_up_to", "reset",
    "serialize" or "restore" (of `payload`)."""

    __slots__ = ("ctx", "state", "done", "queue", "limit", "kind", "payload", "token",
                 "_once")

    def __init__(self, ctx, state, done, kind: str, queue=None, limit: int = 0,
                 payload=None):
        self.ctx, self.state, self.done, self.queue = ctx, state, done, queue
        self.limit, self.kind, self.payload = limit, kind, payload
        self.token = 0
        self._once = threading.Lock()

    def finish(self, result=None, exc=None) -> None:
        if self._once.acquire(blocking=False):
            if exc is not None:
                self.done(exc=exc)
            else:
                self.done(result=result)


def _plain_error(exc: BaseException) -> BaseException:
    """An error to hand to `done`: OpErrors lose any op they name, so the executor
    attributes them to the reader op; OSErrors become TF's file errors."""
    if isinstance(exc, errors.OpError):
        return type(exc)(None, None, exc.message)
    if isinstance(exc, OSError):
        return record_io.file_error(exc, exc.filename or "")
    return exc


class ReaderResource:
    """The state of one reader; subclasses read one kind of work unit."""

    type_name = "ReaderBase"
    supports_serialize = False   # Identity and WholeFile readers save their base state

    def __init__(self):
        self._lock = threading.Lock()
        self._busy = False
        self._waiting: deque = deque()
        self.work: Optional[bytes] = None
        self.work_started = 0
        self.work_finished = 0
        self.records_produced = 0

    # hooks for the kinds of reader ----------------------------------------------------
    def on_work_started(self) -> None:
        """Opens `self.work`."""

    def on_work_finished(self) -> None:
        """Closes what on_work_started opened."""

    def read_records(self, limit: int) -> Tuple[List[bytes], List[bytes], bool]:
        """Up to `limit` records of the current work unit, and whether it is done."""
        raise NotImplementedError("reader kind %s does not define read_records"
                                  % type(self).__name__)

    def serialize(self) -> bytes:
        """The reader's state as TF's ReaderBaseState proto (readers that support it)."""
        if not self.supports_serialize:
            raise errors.UnimplementedError(
                None, None, "Reader SerializeState is not supported by %s" % self.type_name)
        with self._lock:
            ints = (self.work_started, self.work_finished, self.records_produced)
        out = bytearray()
        for field, v in enumerate(ints, 1):
            if v:
                out += _varint(field << 3) + _varint(v)
        if self.work:
            out += _varint(4 << 3 | 2) + _varint(len(self.work)) + self.work
        return bytes(out)

    def restore(self, state: bytes) -> None:
        """Restores a state made by `serialize`."""
        if not self.supports_serialize:
            raise errors.UnimplementedError(
                None, None, "Reader RestoreState is not supported by %s" % self.type_name)
        try:
            fields = _parse_base_state(state)
        except (ValueError, IndexError):
            raise errors.InvalidArgumentError(
                None, None, "Could not parse state for %s: %r" % (self.type_name, state)) \
                from None
        started, finished, produced = (fields.get(i, 0) for i in (1, 2, 3))
        work = fields.get(4, b"")
        if min(started, finished, produced) < 0:
            raise errors.InvalidArgumentError(None, None, "Unexpected negative value when "
                                              "restoring in %s" % self.type_name)
        if started - finished != (1 if work else 0):
            raise errors.InvalidArgumentError(
                None, None, "Inconsistent work started vs. finished when restoring in %s: "
                "work_started=%d work_finished=%d current_work=%r"
                % (self.type_name, started, finished, work))
        self.work = work or None
        with self._lock:
            self.work_started, self.work_finished = started, finished
            self.records_produced = produced

    # ----------------------------------------------------------------------------------
    def counters(self) -> Tuple[int, int]:
        with self._lock:
            return self.records_produced, self.work_finished

    def submit(self, req: _Request) -> None:
        with self._lock:
            run_now = not self._busy
            if run_now:
                self._busy = True
            else:
                self._waiting.append(req)
        if run_now:
            self._drive(req)
        else:
            req.token = req.state.add_cancel_callback(
                lambda exc: self._cancel_waiting(req, exc))

    def _cancel_waiting(self, req: _Request, exc) -> None:
        with self._lock:
            try:
                self._waiting.remove(req)
            except ValueError:
                return  # already running: the queue's own cancellation applies
        req.finish(exc=exc)

    def _next(self) -> Optional[_Request]:
        with self._lock:
            if not self._waiting:
                self._busy = False
                return None
            req = self._waiting.popleft()
        if req.token:
            req.state.remove_cancel_callback(req.token)
        return req

    def _drive(self, req: Optional[_Request]) -> None:
        while req is not None:
            try:
                finished = self._run(req)
            except Exception as e:  # noqa: BLE001 - handed to the step as its error
                req.finish(exc=_plain_error(e))
                finished = True
            if not finished:
                return  # waiting on the queue; _resume goes on
            req = self._next()

    def _run(self, req: _Request) -> bool:
        """Runs `req` to its end (True) or until it waits for a work unit (False)."""
        if req.kind == "reset":
            self._reset()
            req.finish(result=None)
            return True
        if req.kind == "serialize":
            req.finish(result=np.array(self.serialize(), dtype=object))
            return True
        if req.kind == "restore":
            self.restore(req.payload)
            req.finish(result=None)
            return True
        while True:
            if self.work is None:
                got = self._dequeue(req)
                if got is _SUSPENDED:
                    return False
                if not self._start_work(req, *got):
                    return True
            try:
                keys, values, at_end = self.read_records(req.limit)
            except Exception as e:  # noqa: BLE001
                req.finish(exc=_plain_error(e))
                return True
            if at_end:
                self._end_work()
            if keys:
                with self._lock:
                    self.records_produced += len(keys)
                req.finish(result=_outputs(req.kind, keys, values))
                return True

    def _dequeue(self, req: _Request):
        """(result, exc) of dequeueing one work unit, or _SUSPENDED if it will come
        later through `_resume`."""
        from tensorweave.ops.data_flow import queue_ops
        box: list = []
        gate = threading.Lock()
        waiting = [False]

        def got(result=None, exc=None):
            with gate:
                if not waiting[0]:
                    box.append((result, exc))
                    return
            self._resume(req, result, exc)

        try:
            queue_ops.lookup_queue(req.ctx, req.queue).dequeue_async(req.state, got)
        except Exception as e:  # noqa: BLE001
            return None, e
        with gate:
            if box:
                return box[0]
            waiting[0] = True
        return _SUSPENDED

    def _resume(self, req: _Request, result, exc) -> None:
        try:
            started = self._start_work(req, result, exc)
        except Exception as e:  # noqa: BLE001
            req.finish(exc=_plain_error(e))
            started = False
        self._drive(req if started else self._next())

    def _start_work(self, req: _Request, result, exc) -> bool:
        """Installs the dequeued work unit; on failure finishes `req` and says False."""
        if exc is None:
            work, exc = _work_unit(result)
        if exc is not None:
            req.finish(exc=_plain_error(exc))
            return False
        self.work = work
        try:
            self.on_work_started()
        except Exception as e:  # noqa: BLE001 - the file is skipped; the error reported
            self.work = None
            req.finish(exc=_plain_error(e))
            return False
        with self._lock:
            self.work_started += 1
        return True

    def _end_work(self) -> None:
        self.on_work_finished()
        self.work = None
        with self._lock:
            self.work_finished += 1

    def _reset(self) -> None:
        if self.work is not None:
            self.on_work_finished()
            self.work = None
        with self._lock:
            self.work_started = self.work_finished = self.records_produced = 0


def _work_unit(result) -> Tuple[Optional[bytes], Optional[BaseException]]:
    """The file name in a dequeued tuple, checked as TF's ReaderBase checks it."""
    if len(result) != 1:
        return None, errors.InvalidArgumentError(None, None, "Expected single component queue")
    arr = np.asarray(result[0], dtype=object)
    if arr.size != 1:
        return None, errors.InvalidArgumentError(
            None, None, "Expected to dequeue a one-element string tensor")
    work = arr.reshape(-1)[0]
    if isinstance(work, str):
        work = work.encode("utf-8")
    if not isinstance(work, bytes):
        return None, errors.InvalidArgumentError(
            None, None, "Expected queue with single string component")
    return work, None


def _outputs(kind: str, keys: List[bytes], values: List[bytes]):
    if kind == "read":
        return [np.array(keys[0], dtype=object), np.array(values[0], dtype=object)]
    k = np.empty(len(keys), dtype=object)
    v = np.empty(len(values), dtype=object)
    k[:] = keys
    v[:] = values
    return [k, v]


# --- the kinds of reader ------------------------------------------------------------------
class TextLineReaderResource(ReaderResource):
    """Lines of text files. The file is read in chunks and each chunk is cut into lines
    once, with one `bytes.split`; requests then take slices of that list (a trailing
    "\r" of a line is dropped, as TensorFlow does)."""

    type_name = "TextLineReader"

    def __init__(self, skip_header_lines: int):
        super().__init__()
        self.skip_header_lines = skip_header_lines
        self._file = None
        self._lines: List[bytes] = []   # complete lines read; those from _used on are unread
        self._used = 0
        self._tail = b""     # the unfinished line after the last "\n" read
        self._cr = False     # some chunk held a "\r"
        self._eof = False
        self._line = 0

    def on_work_started(self) -> None:
        self._file = record_io.open_input(self.work)
        self._lines, self._used, self._tail = [], 0, b""
        self._cr = self._eof = False
        self._line = 0
        self._line = len(self._take_lines(self.skip_header_lines)[0])

    def on_work_finished(self) -> None:
        self._file.close()
        self._file = None
        self._lines, self._used, self._tail = [], 0, b""

    def _take_lines(self, n: int) -> Tuple[List[bytes], bool]:
        """Up to `n` lines (without their "\n"; the last one of the file may lack it)
        and whether the file is exhausted."""
        while not self._eof and len(self._lines) - self._used < n:
            chunk = self._file.read(record_io._BUFFER_SIZE)
            if not chunk:
                self._eof = True
                break
            self._cr = self._cr or b"\r" in chunk
            parts = chunk.split(b"\n")
            parts[0] = self._tail + parts[0]
            self._tail = parts.pop()
            if self._used:
                del self._lines[:self._used]
                self._used = 0
            self._lines += parts
        start, stop = self._used, self._used + n
        if stop <= len(self._lines):
            self._used = stop
            return self._lines[start:stop], (self._eof and stop == len(self._lines)
                                             and not self._tail)
        lines = self._lines[start:]  # the file ended before n newlines
        if self._tail not in (b"", b"\r"):
            lines.append(self._tail)  # as TF: an unterminated last line that is empty or
        self._lines, self._used, self._tail = [], 0, b""  # "\r" is none
        return lines, True

    def read_records(self, limit):
        lines, at_end = self._take_lines(limit)
        if self._cr:
            lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        first = self._line + 1
        self._line += len(lines)
        key = self.work.replace(b"%", b"%%") + b":%d"
        return list(map(key.__mod__, range(first, self._line + 1))), lines, at_end


class FixedLengthRecordReaderResource(ReaderResource):
    """Records of `record_bytes` bytes starting every `hop_bytes` (default
    `record_bytes`) bytes after a header; a record must end before the footer."""

    type_name = "FixedLengthRecordReader"

    def __init__(self, header_bytes, record_bytes, footer_bytes, hop_bytes, encoding):
        super().__init__()
        self.header_bytes, self.record_bytes = header_bytes, record_bytes
        self.footer_bytes, self.hop_bytes = footer_bytes, hop_bytes
        self.encoding = encoding
        self._stream = None
        self._buf, self._pos, self._number = b"", 0, 0

    def on_work_started(self) -> None:
        self._stream = record_io.open_input(self.work, self.encoding)
        self._buf, self._pos, self._number = b"", 0, 0
        if self.header_bytes and len(self._stream.read(self.header_bytes)) < self.header_bytes:
            self.on_work_finished()
            raise errors.OutOfRangeError(None, None, "reached end of file")

    def on_work_finished(self) -> None:
        self._stream.close()
        self._stream = None
        self._buf = b""

    def _fill(self, n: int) -> bool:
        """Makes `n` bytes available from `_pos` (which may lie past the buffer)."""
        while len(self._buf) - self._pos < n:
            chunk = self._stream.read(max(record_io._BUFFER_SIZE, n))
            if not chunk:
                return False
            if self._pos >= len(self._buf):
                self._pos -= len(self._buf)
                self._buf = chunk
            else:
                self._buf = self._buf[self._pos:] + chunk
                self._pos = 0
        return True

    def read_records(self, limit):
        keys, values = [], []
        size = self.record_bytes
        need, step = size + self.footer_bytes, self.hop_bytes or size
        for _ in range(limit):
            if not self._fill(need):
                return keys, values, True
            values.append(self._buf[self._pos:self._pos + size])
            keys.append(b"%s:%d" % (self.work, self._number))
            self._number += 1
            self._pos += step
        return keys, values, False


class TFRecordReaderResource(ReaderResource):
    type_name = "TFRecordReader"

    def __init__(self, compression_type: str):
        super().__init__()
        self.compression_type = compression_type
        self._reader = None

    def on_work_started(self) -> None:
        self._reader = record_io.RecordReader(self.work, self.compression_type)

    def on_work_finished(self) -> None:
        self._reader.close()
        self._reader = None

    def read_records(self, limit):
        offsets, values, at_end = self._reader.read_many(limit)
        key = self.work.replace(b"%", b"%%") + b":%d"
        return list(map(key.__mod__, offsets)), values, at_end


class LMDBReaderResource(ReaderResource):
    """The records of LMDB databases (lmdb_io.py), each from its first key to its last
    in key order; a record's key and value are the database's own (TF 1.x's)."""

    type_name = "LMDBReader"

    def __init__(self):
        super().__init__()
        self._database = None

    def on_work_started(self) -> None:
        self._database = lmdb_io.Database(self.work)

    def on_work_finished(self) -> None:
        self._database.close()
        self._database = None

    def read_records(self, limit):
        return self._database.read(limit)


class WholeFileReaderResource(ReaderResource):
    type_name = "WholeFileReader"
    supports_serialize = True

    def read_records(self, limit):
        with record_io.open_input(self.work) as f:
            return [self.work], [f.read()], True


class IdentityReaderResource(ReaderResource):
    """Each work unit is one record: key and value are the work unit itself."""

    type_name = "IdentityReader"
    supports_serialize = True

    def read_records(self, limit):
        return [self.work], [self.work], True

def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _parse_base_state(data: bytes) -> dict:
    """Fields 1-3 (int64) and 4 (bytes) of a ReaderBaseState proto."""
    def varint(i):
        shift = result = 0
        while True:
            b = data[i]
            result |= (b & 0x7F) << shift
            i += 1
            if not b & 0x80:
                return result, i
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")
    fields, i = {}, 0
    while i < len(data):
        tag, i = varint(i)
        field, wire = tag >> 3, tag & 7
        if field in (1, 2, 3) and wire == 0:
            v, i = varint(i)
            fields[field] = v - (1 << 64) if v >= 1 << 63 else v
        elif field == 4 and wire == 2:
            n, i = varint(i)
            if i + n > len(data):
                raise ValueError("truncated")
            fields[4], i = bytes(data[i:i + n]), i + n
        else:
            raise ValueError("unexpected field")
    return fields
