"""Keyed tensor exchange between the partitions of one step (OSDI §3.3, white paper §3.2).

A `_Send` kernel hands its value to the step's rendezvous under a key; the matching
`_Recv` kernel asks for the same key and is called back when the value is there. The
key names the transfer completely, so the two sides never talk to each other directly:

    "<src_device>;<src_incarnation hex>;<dst_device>;<tensor_name>;<frame_id>:<iter_id>"

(`create_key` / `parse_key`). Frame and iteration are part of the key so that, once
loops span devices, the values of different iterations never mix.

`Rendezvous` is the interface the executors use; `LocalRendezvous` is the in-process
one (one per step). A remote rendezvous (gRPC between processes) implements the same
three methods: `send` never blocks, `recv_async` calls back exactly once, `abort` wakes
every pending receiver with the error.
"""
from __future__ import annotations

import threading
from typing import Callable, Dict, NamedTuple, Optional

from tensorweave.framework import errors

# done_callback(value, is_dead, error): error is None on success
RecvCallback = Callable[[object, bool, Optional[errors.OpError]], None]


class ParsedKey(NamedTuple):
    """The parts of a rendezvous key."""
    src_device: str
    src_incarnation: int
    dst_device: str
    tensor_name: str
    frame_id: int
    iter_id: int


def create_key(src_device: str, src_incarnation: int, dst_device: str, tensor_name: str,
               frame_id: int = 0, iter_id: int = 0) -> str:
    """The rendezvous key of one transfer (see the module docstring)."""
    return "%s;%x;%s;%s;%d:%d" % (src_device, src_incarnation, dst_device, tensor_name,
                                  frame_id, iter_id)


def parse_key(key: str) -> ParsedKey:
    """The parts of a key made by `create_key`.

    Raises:
      InvalidArgumentError: `key` is not a rendezvous key.
    """
    parts = key.split(";")
    if len(parts) != 5 or not all(parts[:4]):
        raise errors.InvalidArgumentError(None, None, "Invalid rendezvous key: %s" % key)
    frame, sep, it = parts[4].partition(":")
    try:
        incarnation = int(parts[1], 16)
        frame_id, iter_id = int(frame), int(it)
    except ValueError:
        raise errors.InvalidArgumentError(None, None,
                                          "Invalid rendezvous key: %s" % key) from None
    if not sep:
        raise errors.InvalidArgumentError(None, None, "Invalid rendezvous key: %s" % key)
    return ParsedKey(parts[0], incarnation, parts[2], parts[3], frame_id, iter_id)


class Rendezvous:
    """A keyed exchange of tensors between the partitions of one step.

    Each key is sent once and received once per step. `send` never blocks;
    `recv_async` calls `done_callback(value, is_dead, error)` exactly once, at once if
    the value is there, otherwise from the thread that sends it or aborts. After
    `abort(error)`, pending and later receives get `error` and sends raise it.
    """

    def send(self, key: str, value, is_dead: bool = False) -> None:
        raise NotImplementedError("%s does not implement send()" % type(self).__name__)

    def recv_async(self, key: str, done_callback: RecvCallback) -> None:
        raise NotImplementedError("%s does not implement recv_async()" % type(self).__name__)

    def abort(self, error: errors.OpError) -> None:
        raise NotImplementedError("%s does not implement abort()" % type(self).__name__)


class _Waiter:
    """A receive that came before its send."""

    __slots__ = ("callback",)

    def __init__(self, callback: RecvCallback):
        self.callback = callback


class LocalRendezvous(Rendezvous):
    """The rendezvous of one step in this process (thread-safe).

    Values are passed by reference, never copied: in-process partitions share host
    memory, and kernels never mutate their inputs.

    Invariants: `_table[key]` is either a `(value, is_dead)` tuple (sent, not yet
    received) or a `_Waiter` (received, not yet sent); an entry is removed when its
    pair meets. Once `_error` is set the table is empty and stays so. Callbacks run
    outside the lock.
    """

    __slots__ = ("_lock", "_table", "_error")

    def __init__(self):
        self._lock = threading.Lock()
        self._table: Dict[str, object] = {}
        self._error: Optional[errors.OpError] = None

    def send(self, key: str, value, is_dead: bool = False) -> None:
        with self._lock:
            if self._error is not None:
                raise self._error
            entry = self._table.pop(key, None)
            if entry is None:
                self._table[key] = (value, is_dead)
                return
            if not isinstance(entry, _Waiter):
                self._table[key] = entry
                raise errors.AbortedError(None, None, "Duplicated send: %s" % key)
        entry.callback(value, is_dead, None)

    def recv_async(self, key: str, done_callback: RecvCallback) -> None:
        with self._lock:
            error = self._error
            if error is None:
                entry = self._table.pop(key, None)
                if entry is None:
                    self._table[key] = _Waiter(done_callback)
                    return
                if isinstance(entry, _Waiter):
                    self._table[key] = entry
                    error = errors.AbortedError(None, None, "Duplicated recv: %s" % key)
        if error is not None:
            done_callback(None, False, error)
            return
        done_callback(entry[0], entry[1], None)

    def take(self, key: str):
        """The `(value, is_dead)` sent under `key`, removed as a receive removes it, or
        None when nothing was sent under it (yet): then nothing changes, and a
        `recv_async` waits for it (or reports the abort or duplicate)."""
        with self._lock:
            entry = self._table.get(key)
            if entry is None or type(entry) is _Waiter:
                return None
            del self._table[key]
            return entry

    def abort(self, error: errors.OpError) -> None:
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            table, self._table = self._table, {}
        for entry in table.values():
            if isinstance(entry, _Waiter):
                entry.callback(None, False, error)

    @property
    def aborted(self) -> Optional[errors.OpError]:
        """The error the rendezvous was aborted with, or None."""
        return self._error

    def pending_keys(self) -> list:
        """The keys sent but not received or received but not sent (for diagnostics)."""
        with self._lock:
            return sorted(self._table)
