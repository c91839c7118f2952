"""Mutexes: MutexV2, MutexLock, ConsumeMutexLock (what `tf.CriticalSection` runs on).

A mutex is a resource (white paper §4.6) in the session's resource manager under
(container, shared_name), or under a name unique to the op when `shared_name` is empty.
MutexLock outputs a lock (a variant tensor) once it holds the mutex; like a queue's
dequeue it is asynchronous, so a step waiting for a mutex another step holds takes no
thread. The lock is given back when ConsumeMutexLock runs, or, as TF frees the lock
tensor at the latest when the step ends, when the step that took it ends (a failed or
cancelled step, or one whose ConsumeMutexLock was pruned). Waiting steps get the mutex
in the order they asked for it; a waiting step that is cancelled (Session.close, a
deadline, another kernel's error) leaves the line with CancelledError.
"""
from __future__ import annotations

import itertools
import threading
from collections import deque
from typing import Optional

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape

_UNIQUE = itertools.count()  # unshared mutexes: "_<n>_<node name>", as TF's resources


class MutexResource:
    """One mutex: held or free, and the steps waiting for it, first come first served.

    Invariants: `_held` is True while a MutexLockValue of this mutex is not released;
    `_waiters` is empty when `_held` is False; every waiter's `done` is called exactly
    once (granted, or cancelled while waiting).
    """

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._held = False
        self._waiters: deque = deque()  # _Waiter entries

    def acquire_async(self, state, done) -> None:
        """Calls `done(result=MutexLockValue)` once this step holds the mutex (at once if
        it is free), or `done(exc=CancelledError)` if the step is cancelled first."""
        with self._lock:
            if not self._held:
                self._held = True
                waiter = None
            else:
                waiter = _Waiter(state, done)
                self._waiters.append(waiter)
        if waiter is None:
            _grant(self, state, done)
            return
        token = state.add_cancel_callback(lambda exc: self._cancel(waiter, exc))
        waiter.set_token(token)

    def _cancel(self, waiter: "_Waiter", exc) -> None:
        with self._lock:
            try:
                self._waiters.remove(waiter)
            except ValueError:
                return  # granted meanwhile: the step ends and gives the mutex back
        waiter.done(exc=errors.CancelledError(
            None, None, "Cancelled while waiting for mutex %s: %s"
            % (self.name, getattr(exc, "message", exc))))

    def release(self) -> None:
        """Gives the mutex to the first waiting step, or frees it."""
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
            else:
                self._held = False
                return
        waiter.clear_cancel_callback()
        _grant(self, waiter.state, waiter.done)

    def is_held(self) -> bool:
        with self._lock:
            return self._held


class _Waiter:
    __slots__ = ("state", "done", "_token", "_cleared", "_guard")

    def __init__(self, state, done):
        self.state, self.done = state, done
        self._token = None
        self._cleared = False
        self._guard = threading.Lock()

    def set_token(self, token: int) -> None:
        with self._guard:
            if not self._cleared:
                self._token = token
                return
        self.state.remove_cancel_callback(token)  # granted before the token was known

    def clear_cancel_callback(self) -> None:
        with self._guard:
            self._cleared = True
            token = self._token
        if token:
            self.state.remove_cancel_callback(token)


def _grant(mutex: MutexResource, state, done) -> None:
    lock = MutexLockValue(mutex)
    state.at_end(lock.release)  # the latest time TF frees the lock tensor
    done(result=lock)


class MutexLockValue:
    """The run-time value of a MutexLock output: holds the mutex until `release`."""

    __slots__ = ("mutex", "_released", "_guard")

    def __init__(self, mutex: MutexResource):
        self.mutex = mutex
        self._released = False
        self._guard = threading.Lock()

    def release(self) -> None:
        """Gives the mutex back (once; later calls do nothing)."""
        with self._guard:
            if self._released:
                return
            self._released = True
        self.mutex.release()

    def __repr__(self):
        return "<MutexLock %s%s>" % (self.mutex.name, " (released)" if self._released
                                     else "")


class MutexHandle:
    """The run-time value of a mutex resource tensor."""

    __slots__ = ("container", "name", "manager", "mutex")

    def __init__(self, container: str, name: str, manager, mutex: MutexResource):
        self.container, self.name, self.manager, self.mutex = container, name, manager, mutex

    def __repr__(self):
        return "<MutexHandle %s/%s>" % (self.container or "localhost", self.name)


# --- the ops ------------------------------------------------------------------------------
register_op("MutexV2", outputs=["resource: resource"],
            attrs={"container": "", "shared_name": ""}, stateful=True,
            shape=lambda op: TensorShape([]))
register_op("MutexLock", inputs=["mutex: resource"], outputs=["mutex_lock: variant"],
            stateful=True, shape=lambda op: TensorShape([]))
register_op("ConsumeMutexLock", inputs=["mutex_lock: variant"], stateful=True,
            shape=lambda op: [])
for _type in ("MutexV2", "MutexLock", "ConsumeMutexLock"):
    not_differentiable(_type)


@kernel("MutexV2")
def _mutex_kernel(ctx):
    st, a, mgr = ctx.state, ctx.attrs, ctx.resources
    name = st.get("name")
    if name is None:
        name = st["name"] = a["shared_name"] or "_%d_%s" % (next(_UNIQUE), ctx.op.name)
    mutex = mgr.lookup_or_create(a["container"], name, lambda: MutexResource(name))
    if not isinstance(mutex, MutexResource):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Resource %s/%s is not a mutex" % (a["container"] or "localhost",
                                                             name))
    h = st.get("handle")
    if h is None or h.mutex is not mutex or h.manager is not mgr:
        h = st["handle"] = MutexHandle(a["container"], name, mgr, mutex)
    return h


@kernel("MutexLock", is_async=True)
def _mutex_lock_kernel(ctx, state, done, handle):
    if type(handle) is not MutexHandle:
        raise errors.InvalidArgumentError(None, ctx.op, "Expected a mutex handle, got %r"
                                          % (handle,))
    handle.mutex.acquire_async(state, done)


@kernel("ConsumeMutexLock")
def _consume_mutex_lock_kernel(ctx, lock):
    if type(lock) is not MutexLockValue:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Expected input mutex_lock to be a MutexLock, got %r" % (lock,))
    lock.release()


# --- builders (TF's gen_resource_variable_ops: raw ops, used by CriticalSection) ------------
def mutex_v2(container: str = "", shared_name: str = "", name: Optional[str] = None) -> Tensor:
    """Creates a mutex resource (TF's `MutexV2`), shared by `shared_name` if given."""
    return apply_op("MutexV2", [], {"container": container or "",
                                    "shared_name": shared_name or ""},
                    name=name or "MutexV2").outputs[0]


def mutex_lock(mutex, name: Optional[str] = None) -> Tensor:
    """A lock of `mutex`, available once the step holds the mutex (`MutexLock`)."""
    return apply_op("MutexLock", [mutex], {}, name=name or "MutexLock").outputs[0]


def consume_mutex_lock(mutex_lock_tensor, name: Optional[str] = None) -> Operation:
    """Gives back the mutex `mutex_lock_tensor` holds (`ConsumeMutexLock`)."""
    return apply_op("ConsumeMutexLock", [mutex_lock_tensor], {},
                    name=name or "ConsumeMutexLock")
