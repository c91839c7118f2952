"""The run-time accumulators behind accumulator_ops.py (OSDI 2016 §4.4, synchronous
replication): one aggregates dense gradients, the other IndexedSlices.

An accumulator holds the sum of the gradients applied since the last take, a counter of
them, and a *global step*: a gradient whose `local_step` is older than the global step is
stale and dropped without a word (before any validation, as in TF). A take waits until
`num_required` gradients are in, hands out their mean (reduction "MEAN", per index for the
sparse accumulator: each row is divided by the number of gradients that had that index)
or their sum ("SUM"), resets the sum and counter and advances the global step by one.
`set_global_step` moves it anywhere (a move backwards is logged, as TF does).

Nothing blocks a thread: a take that cannot finish is parked as a `_Taker` and finished
by the apply that brings the last gradient it needs, or failed by the cancellation of its
own step (Session.close, RunOptions.timeout_in_ms, another kernel's error).

Beyond TF, for diagnosing and tuning synchronous training, every gradient may carry the
id of the replica that computed it (`replica_id` >= 0; -1 means unknown). The
accumulator remembers which replicas contributed to the step being accumulated, when
the step began, and a bounded log of (step, replica, seconds after the step began) for
every arrival, stale ones included (`status()`).

Invariants (all under `_lock`; callbacks are never called while holding it):
  * takers are served strictly in arrival order; a taker is `active` exactly while it
    sits in `_takers`, and whoever removes it calls its `done` once.
  * `_counter` is the number of gradients in the sum; `_counter == 0` iff the sum is
    empty (`_sum is None` for the dense accumulator, no rows for the sparse one).
  * stored sums are private arrays: an applied gradient is copied before being added to.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.platform import tf_logging as logging

_LOG_LENGTH = 4096   # arrivals remembered by `status()`
_STARTS_KEPT = 512   # step start times remembered


def _dims_str(dims) -> str:
    return "[%s]" % ",".join("?" if d is None or d < 0 else str(d) for d in dims)


class _Taker:
    __slots__ = ("state", "done", "need", "token", "active")

    def __init__(self, state, done, need: int):
        self.state, self.done, self.need = state, done, need
        self.token = 0
        self.active = True


class AccumulatorBase:
    """What the dense and sparse accumulators share: global step, counter, takers,
    the replica log. Subclasses implement `_validate`, `_add`, `_result`, `_reset`."""

    kind = "ConditionalAccumulator"

    def __init__(self, name: str, dtype, shape, reduction_type: str):
        self.name = name
        self.dtype = dtype
        self.shape = shape          # tuple of dims (None unknown), or None: unknown rank
        self.reduction_type = reduction_type
        self._lock = threading.Lock()
        self._global_step = 0
        self._counter = 0
        self._takers: deque = deque()
        self._round_ids: set = set()
        self._arrivals: deque = deque(maxlen=_LOG_LENGTH)
        self._starts = {0: time.monotonic()}

    # --- the public API -----------------------------------------------------------------
    def num_accumulated(self) -> int:
        with self._lock:
            return self._counter

    def global_step(self) -> int:
        with self._lock:
            return self._global_step

    def set_global_step(self, step: int) -> None:
        with self._lock:
            if step < self._global_step:
                logging.warning("Attempt to set current_global_step_ to smaller value: "
                                "current_global_step_ = %d >= %d = new_global_step.",
                                self._global_step, step)
            if step != self._global_step:
                self._start_step(step)
            self._global_step = step

    def apply(self, local_step: int, grad, replica_id: int = -1) -> None:
        """Adds `grad` (validated) unless `local_step` is stale; serves waiting takers.

        Raises:
          InvalidArgumentError: the gradient does not fit the accumulator.
        """
        finished: list = []
        with self._lock:
            start = self._starts.get(local_step)
            self._arrivals.append((local_step, replica_id,
                                   time.monotonic() - start if start is not None
                                   else float("nan")))
            if local_step < self._global_step:
                return  # stale: dropped silently
            self._validate(grad)
            self._add(grad)
            self._counter += 1
            if replica_id >= 0:
                self._round_ids.add(replica_id)
            self._serve(finished)
        self._finish_all(finished)

    def take_async(self, state, done, num_required: int) -> None:
        """Calls `done(result=...)` once `num_required` gradients are in (now or later),
        or `done(exc=...)` if the step is cancelled first."""
        if num_required < 1:
            done(exc=errors.InvalidArgumentError(
                None, None, "Argument num_required must be positive, but was %d"
                % num_required))
            return
        finished: list = []
        w = None
        with self._lock:
            w = _Taker(state, done, num_required)
            self._takers.append(w)
            self._serve(finished)
        self._finish_all(finished)
        if w.active:
            w.token = state.add_cancel_callback(lambda exc: self._cancel(w, exc))

    def status(self) -> tuple:
        """(global step, gradients in the sum, sorted ids of the replicas that
        contributed to them, seconds since the step began, arrivals log as three arrays:
        steps, replica ids, seconds after their step began)."""
        with self._lock:
            log = list(self._arrivals)
            start = self._starts.get(self._global_step)
            return (self._global_step, self._counter, sorted(self._round_ids),
                    time.monotonic() - start if start is not None else 0.0,
                    np.array([a[0] for a in log], np.int64),
                    np.array([a[1] for a in log], np.int32),
                    np.array([a[2] for a in log], np.float64))

    # --- internals ----------------------------------------------------------------------
    def _start_step(self, step: int) -> None:
        self._starts[step] = time.monotonic()
        if len(self._starts) > _STARTS_KEPT:
            for s in sorted(self._starts)[:len(self._starts) - _STARTS_KEPT]:
                del self._starts[s]

    def _serve(self, finished: list) -> None:
        """Finishes the head takers while enough gradients are in (under the lock)."""
        while self._takers and self._counter >= self._takers[0].need:
            w = self._takers.popleft()
            w.active = False
            result = self._result()
            self._reset()
            self._counter = 0
            self._round_ids = set()
            self._global_step += 1  # a take implicitly advances the global step
            self._start_step(self._global_step)
            finished.append((w, result))

    def _cancel(self, w: _Taker, exc) -> None:
        with self._lock:
            if not w.active:
                return
            w.active = False
            self._takers.remove(w)
        w.done(exc=exc)

    @staticmethod
    def _finish_all(finished: list) -> None:
        for w, result in finished:
            if w.token:
                w.state.remove_cancel_callback(w.token)
            w.done(result=result)

    def _mismatch(self, msg: str, *args):
        return errors.InvalidArgumentError(None, None, msg % args)


class DenseAccumulator(AccumulatorBase):
    """Aggregates dense gradients of one shape (fixed by the attr, or by the first
    gradient of each round when the attr leaves dimensions unknown)."""

    def __init__(self, name, dtype, shape, reduction_type):
        super().__init__(name, dtype, shape, reduction_type)
        self._sum: Optional[np.ndarray] = None

    def _validate(self, grad) -> None:
        want = self.shape
        if want is not None and (grad.ndim != len(want) or any(
                w is not None and w != d for w, d in zip(want, grad.shape))):
            raise self._mismatch("Shape mismatch: expected %s, got %s", _dims_str(want),
                                 _dims_str(grad.shape))
        if self._sum is not None and self._sum.shape != grad.shape:
            raise self._mismatch("Shape mismatch: expected %s, got %s",
                                 _dims_str(self._sum.shape), _dims_str(grad.shape))

    def _add(self, grad) -> None:
        if self._sum is None:
            self._sum = np.array(grad, dtype=grad.dtype, copy=True)
        else:
            np.add(self._sum, grad, out=self._sum)

    def _result(self):
        if self.reduction_type == "MEAN":
            return (self._sum / self._counter).astype(self._sum.dtype, copy=False)
        return self._sum

    def _reset(self) -> None:
        self._sum = None


class SparseAccumulator(AccumulatorBase):
    """Aggregates IndexedSlices: per index, the sum of the rows applied for it and the
    number of gradients that had it. Indices may come in any order and repeat within a
    gradient (repeated rows are summed and count as one gradient for that index); the
    result has sorted unique indices."""

    kind = "SparseConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type):
        super().__init__(name, dtype, shape, reduction_type)
        self._indices = np.zeros((0,), np.int64)
        self._values: Optional[np.ndarray] = None
        self._counts = np.zeros((0,), np.int64)
        self._dense_shape: Optional[list] = None  # dims seen (-1 unknown) while counting

    def _validate(self, grad) -> None:
        indices, values, grad_shape = grad
        want = self.shape
        if grad_shape is not None and want is not None:
            if len(grad_shape) < len(want):
                raise self._mismatch("Shape mismatch: expected shape rank at least %d, "
                                     "got %d", len(want), len(grad_shape))
            for i, w in enumerate(want):
                if w is not None and w != grad_shape[i]:
                    raise self._mismatch("Shape mismatch: expected shape dim %d to be %d, "
                                         "got %d", i, w, grad_shape[i])
        if want is not None:
            if values.ndim < len(want):
                raise self._mismatch("Shape mismatch: expected values rank at least %d, "
                                     "got %d", len(want), values.ndim)
            for i in range(1, len(want)):
                if want[i] is not None and want[i] != values.shape[i]:
                    raise self._mismatch("Shape mismatch: expected values dim %d to be %d, "
                                         "got %d", i, want[i], values.shape[i])
        if values.ndim == 0 or len(indices) != values.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, "Expected %d non-empty input values, got %d"
                % (len(indices), values.shape[0] if values.ndim else 0))
        limit = want[0] if want is not None and want and want[0] is not None else None
        if limit is None and grad_shape is not None and len(grad_shape):
            limit = int(grad_shape[0])
        if limit is not None and len(indices):
            bad = np.flatnonzero((indices >= limit) | (indices < 0))
            if len(bad):
                raise self._mismatch("Shape mismatch: index of slice %d exceeded limits of "
                                     "shape; index is %d exceeded %d", int(bad[0]),
                                     int(indices[bad[0]]), limit)
        if self._values is not None:
            have = self._values.shape
            if values.ndim != len(have):
                raise self._mismatch("Shape mismatch: expected values rank %d, got %d",
                                     len(have), values.ndim)
            for i in range(1, len(have)):
                if have[i] != values.shape[i]:
                    raise self._mismatch("Shape mismatch: expected values dim %d to be %d, "
                                         "got %d", i, have[i], values.shape[i])

    def _add(self, grad) -> None:
        indices, values, grad_shape = grad
        # the dense shape handed out: the attr's known dims, then the gradients' shapes,
        # then the rows' dims; -1 where nothing says (dim 0 without a gradient shape)
        rank = max(len(self.shape or ()), values.ndim,
                   len(grad_shape) if grad_shape is not None else 0)
        if self._dense_shape is None:
            self._dense_shape = [-1 if d is None else d for d in (self.shape or ())]
        dims = self._dense_shape + [-1] * (rank - len(self._dense_shape))
        if grad_shape is not None:
            dims = [int(g) if d < 0 else d for d, g in zip(dims, grad_shape)] + \
                dims[len(grad_shape):]
        self._dense_shape = [values.shape[i] if d < 0 and 0 < i < values.ndim else d
                             for i, d in enumerate(dims)]
        # one gradient: repeated indices summed, each index counted once
        if self._values is None:
            all_idx, all_vals = indices, values
            old = 0
        else:
            all_idx = np.concatenate([self._indices, indices])
            all_vals = np.concatenate([self._values, values.astype(self._values.dtype,
                                                                   copy=False)])
            old = len(self._indices)
        uniq, inv = np.unique(all_idx, return_inverse=True)
        sums = np.zeros((len(uniq),) + values.shape[1:], dtype=values.dtype)
        np.add.at(sums, inv, all_vals)
        counts = np.zeros(len(uniq), np.int64)
        if old:
            np.add.at(counts, inv[:old], self._counts)
        new_idx = np.unique(inv[old:])
        counts[new_idx] += 1
        self._indices, self._values, self._counts = uniq.astype(np.int64), sums, counts

    def _result(self):
        values = self._values
        if self.reduction_type == "MEAN" and len(values):
            div = self._counts.reshape((-1,) + (1,) * (values.ndim - 1))
            values = (values / div).astype(values.dtype, copy=False)
        return (self._indices, values, np.array(self._dense_shape, np.int64))

    def _reset(self) -> None:
        self._indices = np.zeros((0,), np.int64)
        self._values = None
        self._counts = np.zeros((0,), np.int64)
        self._dense_shape = None
