"""Elementwise work over large arrays, chunk by chunk, shared with one helper thread.

An update written as a sequence of NumPy operations (Adam's eleven) makes a pass over
its arrays per operation: on a 1.6M-value variable, 2.1 ms of which the temporaries'
traffic is a fifth (chunks of 64K values keep them in the core's cache: 1.7 ms). NumPy
releases the GIL inside its loops, so a helper thread taking every other chunk runs on
the second core (1.0 ms on two cores; TensorFlow's Eigen takes 0.56 ms with its intra-op
pool). The helper is used only while the machine has a core to spare: not on one core,
and not while ops/math/blas.py counts it as contended (other processes, or this one's
input workers, taking the CPU), where a helper waiting for a core would make the whole
update wait for it. (Right after products on oneDNN, whose OpenMP threads spin on the
other core a while, the helper gains little: where oneDNN is installed, Adam's large
float32 updates run on its threads instead, ops/onednn.adam.)
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional, Sequence

import numpy as np

from tensorweave.ops.math import blas

CHUNK = 1 << 16          # values per chunk: its temporaries stay in the core's cache
MIN_SPLIT = 1 << 19      # values from which a helper thread pays for its hand-off

_POOL: Optional[ThreadPoolExecutor] = None
_POOL_LOCK = threading.Lock()


def _helper() -> Optional[ThreadPoolExecutor]:
    global _POOL
    if (os.cpu_count() or 1) < 2 or blas.machine_contended():
        return None
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(1, thread_name_prefix="tensorweave-split-work")
    return _POOL


def _run(update: Callable, arrays: Sequence[np.ndarray], first: int, step: int) -> None:
    size = arrays[0].size
    for start in range(first * CHUNK, size, step * CHUNK):
        end = min(start + CHUNK, size)
        update(*(a[start:end] for a in arrays))


def in_chunks(update: Callable, arrays: Sequence[np.ndarray]) -> bool:
    """Runs `update(*parts)` on consecutive chunks of the flattened `arrays` (all of one
    size), every other chunk on the helper thread where that pays; False, having run
    nothing, where the arrays are not all C-contiguous NumPy arrays of one size (the
    caller then runs `update` on them whole). `update` must touch nothing but its
    chunks: the chunks of the two threads run at once."""
    size = arrays[0].size
    if any(type(a) is not np.ndarray or a.size != size or not a.flags.c_contiguous
           for a in arrays):
        return False
    flat = [a.reshape(-1) for a in arrays]
    pool = _helper() if size >= MIN_SPLIT else None
    if pool is None:
        _run(update, flat, 0, 1)
        return True
    helper = pool.submit(_run, update, flat, 1, 2)
    try:
        _run(update, flat, 0, 2)
    finally:
        helper.result()  # (the helper's error, if any, after this thread's chunks)
    return True
