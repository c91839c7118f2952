"""Dataset.prefetch(buffer_size): a thread of its own reads the input ahead, up to
`buffer_size` elements (AUTOTUNE: 2), while the consumer works on the elements it has.

Reading overlaps the training step wherever one of the two leaves the GIL (BLAS
products, NumPy's larger operations, Pillow's codecs, file reads), as TF's prefetch
overlaps them on threads of its own. The input is read by that one thread alone, in
order, so the elements and their errors arrive as without prefetching. The thread ends
with the pass: at the end of the input, or when the consumer stops (a `take`, a
re-initialized or dropped iterator, the session's close).
"""
from __future__ import annotations

import queue
import threading
import weakref

from tensorweave.framework import errors
from tensorweave.framework.registry import kernel
from tensorweave.data.pipeline import DatasetValue, reader

_END = object()
_POLL_S = 0.05  # how often a blocked producer looks whether the consumer has gone


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class Prefetch(DatasetValue):
    """The input, read ahead by a thread (see the module docstring)."""

    def __init__(self, source, buffer_size: int):
        self.source = source
        self.buffer_size = 2 if buffer_size < 0 else max(int(buffer_size), 1)

    def _elements(self, ctx, with_errors: bool):
        """Starts the reading thread now (so an interleave's open inputs all read ahead)
        and returns the generator that hands out what it reads. A generator dropped
        before its first element still stops the thread (a finalizer on it)."""
        return self._read_ahead(ctx, reader(self.source, with_errors))

    def elements_after(self, ctx, n: int):
        return self._read_ahead(ctx, lambda c: self.source.elements_after(c, n))

    def _read_ahead(self, ctx, source):
        buffer: "queue.Queue" = queue.Queue(self.buffer_size)
        stop = threading.Event()
        thread = threading.Thread(target=self._produce, args=(ctx, source, buffer, stop),
                                  name="tw-data-prefetch", daemon=True)
        thread.start()
        handed_out = self._hand_out(buffer, stop, thread)
        weakref.finalize(handed_out, stop.set)
        return handed_out

    @staticmethod
    def _hand_out(buffer: "queue.Queue", stop: threading.Event, thread: threading.Thread):
        try:
            while True:
                item = buffer.get()
                if item is _END:
                    return
                if isinstance(item, _Failure):
                    raise item.error
                yield item
        finally:
            stop.set()
            while thread.is_alive():  # unblock a producer waiting on a full buffer
                try:
                    buffer.get_nowait()
                except queue.Empty:
                    pass
                thread.join(_POLL_S)

    def _produce(self, ctx, source, buffer: "queue.Queue", stop: threading.Event) -> None:
        inputs = iter(())
        try:
            inputs = source(ctx)
            for element in inputs:
                if not self._put(buffer, element, stop):
                    return
            self._put(buffer, _END, stop)
        except BaseException as e:  # noqa: BLE001 - handed to the consumer, in order
            self._put(buffer, _Failure(e), stop)
        finally:
            close = getattr(inputs, "close", None)
            if close is not None:
                close()

    @staticmethod
    def _put(buffer: "queue.Queue", item, stop: threading.Event) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False


@kernel("PrefetchDataset")
def _prefetch_kernel(ctx, d, buffer_size):
    import numpy as np
    size = int(np.asarray(buffer_size))
    if size < -1:
        raise errors.InvalidArgumentError(None, ctx.op, "buffer_size must be >= 0 or set "
                                          "buffer_size to be -1 for auto-tuning")
    return d if size == 0 else Prefetch(d, size)
