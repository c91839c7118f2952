"""Event files: TensorBoard's input, written by a background thread.

An event file is named `events.out.tfevents.<seconds>.<hostname><suffix>` and holds
serialized `Event` protocol buffers in TFRecord framing (ops/io/record_io.py); its first
event carries `file_version: "brain.Event:2"`. `EventFileWriter` serializes events in
the caller's thread and hands them to a writer thread through a bounded queue (a full
queue blocks the caller, so memory stays bounded); the thread writes them and flushes
the file at least every `flush_secs`, also when no new event arrives. An error in the
thread (a full disk) is raised by the next call of the writer. Writers still open when
the interpreter exits are flushed then (as TF's are), so a program that never closes its
writer keeps its last events.

Files are opened through `tensorweave.platform.gfile` when it exists (so remote paths
work), else as plain local files.
"""
from __future__ import annotations

import atexit
import os
import queue
import socket
import threading
import time
import weakref
from typing import Optional

from tensorweave.framework import errors
from tensorweave.ops.io import record_io

FILE_VERSION = "brain.Event:2"
_CLOSE = object()
_OPEN_WRITERS: "weakref.WeakSet[EventFileWriter]" = weakref.WeakSet()


@atexit.register
def _flush_open_writers() -> None:
    """Writes out what open writers still hold when the interpreter exits (their threads
    are daemons and would otherwise die with their queues)."""
    for writer in list(_OPEN_WRITERS):
        try:
            writer.flush()
        except Exception:  # noqa: BLE001 - exiting: a failing writer must not stop the rest
            pass


def event_pb2():
    """TensorBoard's `event_pb2` module (imported on first use)."""
    from tensorboard.compat.proto import event_pb2 as pb
    return pb


def _gfile():
    try:
        from tensorweave.platform import gfile
    except ImportError:
        return None
    return gfile


def make_dirs(path: str) -> None:
    gfile = _gfile()
    if gfile is not None:
        gfile.MakeDirs(path)
    else:
        os.makedirs(path, exist_ok=True)


def _exists(path: str) -> bool:
    gfile = _gfile()
    return gfile.Exists(path) if gfile is not None else os.path.exists(path)


def _open(path: str, mode: str):
    gfile = _gfile()
    if gfile is not None:
        return gfile.GFile(path, mode)
    try:
        return open(path, mode)
    except OSError as e:
        raise record_io.file_error(e, path) from None


# Event files this process created. Reopening a writer within the same second gives the
# same name: it adds to the file rather than truncating it (TF loses the earlier events
# then). A file of that name made by another process (two processes writing summaries
# to one directory in the same second: an evaluator and a chief) is not added to, since
# two writers would interleave their records; this process takes a name with its pid.
_CREATED: set = set()
_CREATED_LOCK = threading.Lock()


def _claim(logdir: str, base: str, suffix: str) -> str:
    """The path of this process's event file named after `base`: created empty now,
    or one it created before."""
    first = os.path.join(logdir, base + suffix)
    with _CREATED_LOCK:
        if first in _CREATED:
            return first
        if "://" in first:  # a remote file system: no exclusive create through gfile
            if not _exists(first):
                _open(first, "wb").close()
            _CREATED.add(first)
            return first
        names = [first] + [os.path.join(logdir, "%s.%d%s%s" % (
            base, os.getpid(), "" if n == 0 else ".%d" % n, suffix)) for n in range(100)]
        for path in names:
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            except FileExistsError:
                continue
            except OSError as e:
                raise record_io.file_error(e, path) from None
            _CREATED.add(path)
            return path
    raise errors.AlreadyExistsError(None, None, "no free event file name for %s in %s"
                                    % (base, logdir))


class _EventsFile:
    """One open event file: TFRecord framing over a (g)file."""

    def __init__(self, logdir: str, suffix: str):
        now = time.time()
        self.path = _claim(logdir, "events.out.tfevents.%010d.%s"
                           % (int(now), socket.gethostname()), suffix)
        self._file = _open(self.path, "ab")
        first = event_pb2().Event(wall_time=float(int(now)), file_version=FILE_VERSION)
        first.source_metadata.writer = "tensorweave"
        self.write(first.SerializeToString())
        self.flush()

    def write(self, record: bytes) -> None:
        self._file.write(record_io.encode_record(record))

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class EventFileWriter:
    """Writes `Event` protocol buffers to a new event file in `logdir`.

    Args:
      logdir: the directory (created if missing).
      max_queue: how many events may wait for the writer thread before `add_event`
        blocks.
      flush_secs: how often, in seconds, the thread flushes the file.
      filename_suffix: appended to the file's name.
    """

    def __init__(self, logdir, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: Optional[str] = None):
        self._logdir = str(logdir)
        make_dirs(self._logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()       # guards the file between thread and callers
        self._error: Optional[BaseException] = None
        self._closed = True
        self._open()

    def _open(self) -> None:
        self._file = _EventsFile(self._logdir, self._suffix)
        self._queue: queue.Queue = queue.Queue(max(int(self._max_queue), 0))
        self._thread = threading.Thread(target=self._run, name="tw-event-writer",
                                        daemon=True)
        self._closed = False
        self._thread.start()
        _OPEN_WRITERS.add(self)

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        """The path of the event file being written."""
        return self._file.path

    def _run(self) -> None:
        file, q = self._file, self._queue
        next_flush = time.monotonic() + self._flush_secs
        dirty = False
        while True:
            try:
                item = q.get(timeout=max(next_flush - time.monotonic(), 0.0))
            except queue.Empty:
                item = None
            try:
                if item is _CLOSE:
                    return
                with self._lock:
                    if item is not None:
                        file.write(item)
                        dirty = True
                    if dirty and time.monotonic() >= next_flush:
                        file.flush()
                        dirty = False
                if time.monotonic() >= next_flush:
                    next_flush = time.monotonic() + self._flush_secs
            except Exception as e:  # kept for the caller: the thread must go on draining
                self._error = self._error or e
            finally:
                if item is not None:
                    q.task_done()

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def add_event(self, event) -> None:
        """Queues an `Event` for writing (no-op once closed)."""
        if self._closed:
            return
        self._raise_error()
        self._queue.put(event.SerializeToString())

    def flush(self) -> None:
        """Writes every queued event and flushes the file."""
        if self._closed:
            return
        self._queue.join()
        with self._lock:
            self._file.flush()
        self._raise_error()

    def close(self) -> None:
        """Writes every queued event, flushes and closes the file and ends the thread;
        closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_CLOSE)
        self._thread.join()
        with self._lock:
            self._file.flush()
            self._file.close()
        self._raise_error()

    def reopen(self) -> None:
        """After `close`, starts a new event file in the same directory."""
        if self._closed:
            self._open()
