"""Dataset.map with num_parallel_calls: up to that many elements mapped at once, on a
thread pool shared by every pipeline of the process, and handed out in input order (TF1's
deterministic order).

A map function runs as a nested Session.run (dataset_ops.py). Kernels that spend their
time outside the GIL (Pillow's image codecs, NumPy's larger array operations) then run
side by side; pure-Python work gains nothing. The input is read by the consuming thread
alone, in order, so sources and their state (a shuffle buffer, a file position) are
never shared between threads.
"""
from __future__ import annotations

import collections
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from tensorweave.framework import errors
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import DatasetFunction
from tensorweave.data.pipeline_transforms import Map

_POOL: Optional[ThreadPoolExecutor] = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=max(4, 2 * (os.cpu_count() or 1)),
                                       thread_name_prefix="tw-data-map")
        return _POOL


def parallelism(num_parallel_calls: int) -> int:
    """The number of elements in flight: AUTOTUNE (-1) is the number of cores."""
    return os.cpu_count() or 1 if num_parallel_calls < 0 else num_parallel_calls


class _ParallelMap(Map):
    """A map whose function runs for up to `calls` elements at once (a map's passes and
    skips, with its own `_mapped`)."""

    def __init__(self, source, fn: DatasetFunction, calls: int):
        super().__init__(source, fn)
        self.calls = calls

    def _mapped(self, ctx, source, errors_as_elements: bool = False):
        pool, run, feed = _pool(), self.fn.run, self.feed
        inputs = source(ctx)
        pending = collections.deque()
        try:
            for element in inputs:
                pending.append(_Ready(element) if isinstance(element, _pipe.ElementError)
                               else pool.submit(run, ctx, element, feed))
                if len(pending) >= self.calls:
                    result = self._result(pending.popleft(), errors_as_elements)
                    if result is not None:
                        yield result
            while pending:
                result = self._result(pending.popleft(), errors_as_elements)
                if result is not None:
                    yield result
        finally:
            for future in pending:  # stopped early: the rest is not wanted
                future.cancel()
            close = getattr(inputs, "close", None)
            if close is not None:
                close()

    def _result(self, future, errors_as_elements: bool):
        try:
            return future.result()
        except errors.OpError as err:
            if self.skip_errors:  # tf.data.experimental.ignore_errors
                return None
            if errors_as_elements:
                return _pipe.ElementError(err)
            raise


class _Ready:
    """An error element from the input, in the queue of results in its place."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value

    def cancel(self) -> bool:
        return False


_kernels.dataset_op("ParallelMapDataset", ["input_dataset: variant",
                                      "num_parallel_calls: int64"], {"f": ""},
               functions=True)


@_kernels.function_kernel("ParallelMapDataset")
def _parallel_map_kernel(ctx, d, num_parallel_calls):
    import numpy as np
    calls = int(np.asarray(num_parallel_calls))
    if calls == 0 or calls < -1:
        raise errors.InvalidArgumentError(None, ctx.op, "num_parallel_calls must be greater "
                                          "than zero or AUTOTUNE (-1), got %d." % calls)
    return _ParallelMap(d, _kernels.function_of(ctx, ctx.attrs["f"]), parallelism(calls))
