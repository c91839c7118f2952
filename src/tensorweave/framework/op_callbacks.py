"""Op callbacks: functions called with each op the op builders create (TF's
op_callbacks, which tfdbg v2 and `tf.debugging.enable_check_numerics` use).

A callback is registered per thread, as TF's: ops built on other threads do not see
it. `apply_op` (framework/op_builder.py) calls `invoke(op)` after an op is created and
its shapes inferred. Ops that callbacks create are not passed to callbacks again.
"""
from __future__ import annotations

import threading
from typing import Callable, List

from tensorweave.framework.graph import Operation


class _CallbackState(threading.local):
    def __init__(self):
        self.callbacks: List[Callable[[Operation], None]] = []
        self.invoking = False


_STATE = _CallbackState()


def add_op_callback(fn: Callable[[Operation], None]) -> None:
    """Registers `fn(op)` for the ops built on this thread from now on (once)."""
    if fn not in _STATE.callbacks:
        _STATE.callbacks.append(fn)


def remove_op_callback(fn: Callable[[Operation], None]) -> None:
    """Removes a callback of this thread.

    Raises:
      KeyError: `fn` is not registered on this thread.
    """
    try:
        _STATE.callbacks.remove(fn)
    except ValueError:
        raise KeyError("The op callback %r has not been registered." % (fn,)) from None


def should_invoke() -> bool:
    """Whether ops created now on this thread go to callbacks."""
    return bool(_STATE.callbacks) and not _STATE.invoking


def invoke(op: Operation) -> None:
    """Calls this thread's callbacks with `op` (none of them sees the ops they create)."""
    if _STATE.invoking:
        return
    _STATE.invoking = True
    try:
        for fn in list(_STATE.callbacks):
            fn(op)
    finally:
        _STATE.invoking = False
