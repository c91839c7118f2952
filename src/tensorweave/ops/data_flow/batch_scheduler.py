"""The batcher behind BatchFunction (batch_ops.py): it groups the calls that concurrent
steps make (tasks) into batches and computes each batch once, on a batch thread.

A task is one step's call: input arrays with equal first dimensions, a `compute`
function (the batched function, run in that step's session) and a `done` callback. The
batcher keeps one open batch. A task joins it while it fits; with large-batch splitting,
a task that does not fit fills the open batch and goes on in the next ones. The open
batch closes when it holds `max_execution_batch_size` rows, or `timeout_s` after its
first task joined. Closed batches wait, at most `max_enqueued_batches` of them counting
the open one, for one of at most `num_threads` batch threads. That thread concatenates
the batch's rows, pads them with copies of the first row up to the next allowed batch
size, computes the outputs once with the first task's `compute`, and hands each task its
rows of them. Batch threads start when work arrives and end after a second without any,
so an idle batcher holds no thread.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Callable, List, NamedTuple, Optional, Sequence

import numpy as np

from tensorweave.framework import errors

# how long a batch thread waits for work before it ends
_IDLE_S = 1.0


class BatchOptions(NamedTuple):
    """How a batcher groups tasks (BatchFunction's attrs, checked by batch_ops.py)."""
    num_threads: int
    max_batch_size: int            # the largest task
    max_execution_batch_size: int  # the most rows computed at once
    allowed_batch_sizes: tuple     # batch sizes to pad to (empty: no padding)
    timeout_s: float
    max_enqueued_batches: int
    split: bool                    # enable_large_batch_splitting


class Task:
    """One step's call. `finish` and `fail` call `done` exactly once, from whichever
    thread completes the task (the batch thread of its last piece, or a cancellation).

    Invariant (under `_lock`): `_outputs` holds the outputs of the pieces delivered so
    far, by first row; `finished` is set once `done` has been called.
    """

    def __init__(self, inputs: Sequence[np.ndarray], compute: Callable[[list], list],
                 done: Callable):
        self.inputs = list(inputs)
        self.size = int(self.inputs[0].shape[0])
        self.compute = compute
        self.done = done
        self.pieces = 0  # how many pieces the batcher cut it into
        self.finished = False
        self._outputs: dict = {}
        self._lock = threading.Lock()

    def deliver(self, start: int, outputs: List[np.ndarray]) -> None:
        """Takes the outputs of the piece starting at row `start`; the last piece's
        delivery finishes the task with the outputs of all pieces, in row order."""
        with self._lock:
            if self.finished:
                return
            self._outputs[start] = outputs
            if len(self._outputs) < self.pieces:
                return
            self.finished = True
        parts = [self._outputs[k] for k in sorted(self._outputs)]
        self.done(result=[np.concatenate(column) if len(column) > 1 else column[0]
                          for column in zip(*parts)])

    def fail(self, exc: BaseException) -> None:
        with self._lock:
            if self.finished:
                return
            self.finished = True
        self.done(exc=exc)


class _Piece(NamedTuple):
    """Rows [start, stop) of a task, in one batch."""
    task: Task
    start: int
    stop: int


class Batcher:
    """The batcher of one BatchFunction op in one session (a resource of its device).

    Invariants (under `_cond`): `_open_rows` is the number of rows in `_open`;
    `_deadline` is the time `_open` closes, set iff `_open` is not empty; `_ready` holds
    the closed batches no thread has taken; `_threads` counts the live batch threads.
    """

    def __init__(self, options: BatchOptions, op):
        self.options = options
        self._op = op  # named in the errors of a batch
        self._cond = threading.Condition()
        self._open: List[_Piece] = []
        self._open_rows = 0
        self._deadline: Optional[float] = None
        self._ready: collections.deque = collections.deque()
        self._threads = 0
        self._released = False

    # --- submitting --------------------------------------------------------------------------
    def submit(self, task: Task) -> None:
        """Adds `task` to the open batch (and the next ones, when it is split).

        Raises:
          UnavailableError: the batches it needs would exceed max_enqueued_batches.
        """
        with self._cond:
            if task.finished:  # cancelled before it was submitted
                return
            self._check_room(task)
            start = 0
            while start < task.size:
                room = self.options.max_execution_batch_size - self._open_rows
                if room == 0 or (not self.options.split and task.size - start > room):
                    self._close_open()
                    continue
                stop = start + min(room, task.size - start)
                self._add_piece(_Piece(task, start, stop))
                start = stop
            if self._open_rows == self.options.max_execution_batch_size:
                self._close_open()
            self._start_threads()
            self._cond.notify_all()

    def _check_room(self, task: Task) -> None:
        limit = self.options.max_execution_batch_size
        room = limit - self._open_rows if self._open else 0
        if not self.options.split and task.size > room:
            new_batches = 1
        else:
            new_batches = -(-max(task.size - room, 0) // limit)
        queued = len(self._ready) + (1 if self._open else 0)
        if new_batches and queued + new_batches > self.options.max_enqueued_batches:
            raise errors.UnavailableError(None, self._op, "The batch scheduling queue to "
                                          "which this task was submitted is full")

    def _add_piece(self, piece: _Piece) -> None:
        if not self._open:
            self._deadline = time.monotonic() + self.options.timeout_s
        self._open.append(piece)
        self._open_rows += piece.stop - piece.start
        piece.task.pieces += 1

    def _close_open(self) -> None:
        if self._open:
            self._ready.append(self._open)
        self._open, self._open_rows, self._deadline = [], 0, None

    def release(self) -> None:
        """Ends the batch threads once the batches already closed have run (the
        session's resources are being dropped)."""
        with self._cond:
            self._released = True
            self._close_open()
            self._cond.notify_all()

    # --- the batch threads ---------------------------------------------------------------
    def _start_threads(self) -> None:
        wanted = min(max(self.options.num_threads, 1), len(self._ready) + bool(self._open))
        while self._threads < wanted:
            self._threads += 1
            threading.Thread(target=self._work, name="BatchFunction", daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._cond:
                batch = self._next_batch()
                if batch is None:
                    self._threads -= 1
                    return
            self._run(batch)

    def _next_batch(self) -> Optional[List[_Piece]]:
        """The next batch to compute, waiting for one; None after `_IDLE_S` without work
        (or once released and drained)."""
        idle_until = time.monotonic() + _IDLE_S
        while True:
            if self._ready:
                return self._ready.popleft()
            now = time.monotonic()
            if self._open and now >= self._deadline:
                self._close_open()
                continue
            if self._released or (not self._open and now >= idle_until):
                return None
            self._cond.wait((self._deadline if self._open else idle_until) - now)

    # --- computing one batch -------------------------------------------------------------
    def _run(self, batch: List[_Piece]) -> None:
        try:
            rows = sum(p.stop - p.start for p in batch)
            padded = self._padded_size(rows)
            inputs = [_concat_rows(batch, k, padded - rows)
                      for k in range(len(batch[0].task.inputs))]
            outputs = batch[0].task.compute(inputs)
            self._check_outputs(outputs, padded, padded - rows)
        except Exception as exc:  # noqa: BLE001 - every task of the batch fails with it
            for task in dict.fromkeys(p.task for p in batch):
                task.fail(exc)
            return
        offset = 0
        for piece in batch:
            n = piece.stop - piece.start
            piece.task.deliver(piece.start, [out[offset:offset + n] for out in outputs])
            offset += n

    def _padded_size(self, rows: int) -> int:
        return next((size for size in self.options.allowed_batch_sizes if size >= rows),
                    rows)

    def _check_outputs(self, outputs: list, batch_size: int, padding: int) -> None:
        for out in outputs:
            if np.ndim(out) == 0:
                raise errors.FailedPreconditionError(
                    None, self._op, "Batched output tensor has 0 dimensions")
            if out.shape[0] != batch_size:
                raise errors.FailedPreconditionError(
                    None, self._op, "Batched output tensor's 0th dimension does not equal "
                    "the sum of the 0th dimension sizes of the input tensors. 0th dimension "
                    "size: %d; batch size: %d; unbatched tasks size: 0; padding size: %d"
                    % (out.shape[0], batch_size - padding, padding))


def _concat_rows(batch: List[_Piece], k: int, padding: int) -> np.ndarray:
    """Input `k` of the batch: the pieces' rows, then `padding` copies of the first."""
    parts = [p.task.inputs[k][p.start:p.stop] for p in batch]
    if padding:
        parts.append(np.repeat(parts[0][:1], padding, axis=0))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
