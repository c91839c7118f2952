"""The run-time queues behind queue_ops.py: FIFO, padding FIFO, random shuffle, priority.

A `QueueResource` holds elements and two FIFO lines of waiting requests: enqueuers
(blocked while the queue is full) and dequeuers (blocked while it holds too few elements).
Nothing ever blocks a thread: a request that cannot finish at once is parked as a
`_Waiter` and finished later, by whichever thread changes the queue (an enqueue, a
dequeue, a close) or cancels the waiting step.

Elements move in blocks, never one Python tuple per element: a *block* is a tuple of
arrays, one per component, sharing a leading dimension with one row per element (an
enqueue_many batch is one block; a single enqueue a block of one row), and a *run* is a
list of blocks in order (what one dequeue took). The FIFO queues keep a deque of
read-only blocks and hand out slices of them (a dequeue_many that falls inside one block
is a view, no copy); the random shuffle queue copies its elements into rows of one
array per component, draws row numbers in Python and gathers the drawn rows with NumPy;
the priority queue keeps a heap of one-row blocks.

Invariants (all under `_lock`; callbacks are never called while holding it):
  * requests are served strictly in arrival order within each line: the head waiter of a
    line is served before any later request of that line, and a new request joins the
    end of its line whenever the line is not empty.
  * a waiter is `active` exactly while it sits in its line; it is removed from the line
    under the lock by whoever finishes it (served, failed by close, or cancelled), so its
    `done` is called exactly once.
  * the head dequeuer may hold some elements in `taken` (a run of `ntaken` rows) while it
    waits for the rest (this is what lets dequeue_many(n) finish on a queue of capacity
    < n). If it then fails or is cancelled, those elements go back to the front of the
    queue in their order: a dequeue that does not finish consumes nothing.
  * an enqueue_many larger than the free space enqueues element by element as space
    appears (TF semantics); elements enqueued before a cancellation stay in the queue.
  * stored data is immutable: FIFO and priority blocks are read-only arrays (enqueued
    values are copied unless they are already read-only arrays owning their data, and a
    waiting enqueue owns its block), so a dequeue may hand out views of them; the random
    shuffle queue copies elements into arrays only it writes and hands out fresh copies.
"""
from __future__ import annotations

import heapq
import sys
import threading
from collections import deque
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.ops.random import philox

_UNBOUNDED = sys.maxsize


def _frozen(arr) -> np.ndarray:
    """`arr` as an array nobody else can change (a private read-only copy if needed)."""
    if type(arr) is not np.ndarray:
        arr = np.asarray(arr)
    if arr.flags.writeable or not arr.flags.owndata:
        arr = arr.copy()
        arr.setflags(write=False)
    return arr


def _rows(block: tuple) -> int:
    return len(block[0])


def _run_rows(run: list) -> int:
    return sum(len(b[0]) for b in run)


def _slice(block: tuple, start: int, stop: int) -> tuple:
    return tuple(c[start:stop] for c in block)


def _shape_str(shape) -> str:
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape)


class _Waiter:
    """One parked request. Enqueuers use `items` (a block) and `pos` (rows already in);
    dequeuers `need`/`n`/`taken` (a run)/`ntaken` (its rows)."""

    __slots__ = ("state", "done", "token", "active", "is_enqueue", "items", "pos", "need",
                 "n", "allow_small", "taken", "ntaken", "single")

    def __init__(self, state, done):
        self.state, self.done = state, done
        self.token = 0
        self.active = True
        self.is_enqueue = False
        self.items: tuple = ()
        self.pos = 0
        self.need = 0
        self.n: Optional[int] = None
        self.allow_small = False
        self.taken: list = []
        self.ntaken = 0
        self.single = False


class QueueResource:
    """A bounded multi-component queue shared by the steps of one session.

    Public API (also used by readers and other resource kernels):
      enqueue_async(state, components, done, many=False)
      dequeue_async(state, done, n=None, allow_smaller=False)
      close(cancel_pending_enqueues=False), size(), is_closed()
    `done(result=[array per component])` or `done(exc=OpError)` is called exactly once,
    possibly before the call returns, possibly later from another thread.
    """

    kind = "FIFOQueue"
    _copies_on_put = False   # True: `_put` copies, so enqueued values need no frozen copy

    def __init__(self, name: str, dtypes: Sequence[_dt.DType], shapes, capacity: int):
        self.name = name
        self.dtypes = list(dtypes)
        # per component: None (any shape) or a tuple of dims (None = any size)
        self.shapes = [None if s is None else tuple(s) for s in shapes] if shapes else \
            [None] * len(self.dtypes)
        self.capacity = capacity
        self._cap = capacity if capacity >= 0 else _UNBOUNDED
        self._lock = threading.Lock()
        self._closed = False
        self._enqueuers: deque = deque()
        self._dequeuers: deque = deque()
        self._fixed = [s if s is not None and None not in s else None for s in self.shapes]
        self._init_storage()
        # the blocks storage below, not an ordered variant's: a single dequeue may take
        # its element straight from the front block (`_dequeue`)
        cls = type(self)
        self._plain = cls._take is QueueResource._take and \
            cls._reserve is QueueResource._reserve and cls._size is QueueResource._size

    # --- storage (overridden by the ordered variants) -----------------------------------
    def _init_storage(self):
        self._blocks: deque = deque()   # read-only blocks, oldest first
        self._front = 0                 # rows of _blocks[0] already taken
        self._count = 0                 # rows in _blocks, less _front

    def _size(self) -> int:
        return self._count

    def _put(self, block: tuple) -> None:
        if _rows(block):
            self._blocks.append(block)
            self._count += _rows(block)

    def _take(self, k: int) -> list:
        """Removes the `k` next elements (k <= size); returns them as a run."""
        run, blocks, front = [], self._blocks, self._front
        self._count -= k
        while k:
            block = blocks[0]
            rows = _rows(block) - front
            if rows <= k:
                blocks.popleft()
                run.append(_slice(block, front, front + rows) if front else block)
                k -= rows
                front = 0
            else:  # the rest of the block stays where it is: no view of it is made
                run.append(_slice(block, front, front + k))
                front += k
                k = 0
        self._front = front
        return run

    def _restore(self, run: list) -> None:
        """Puts back elements a dequeue had taken (they were at the front)."""
        if self._front:  # what is left of the first block becomes a block of its own
            self._blocks[0] = _slice(self._blocks[0], self._front, _rows(self._blocks[0]))
            self._front = 0
        self._blocks.extendleft(reversed(run))
        self._count += _run_rows(run)

    def _reserve(self) -> int:
        """Elements a dequeue must leave behind while the queue is open."""
        return 0

    # --- validation ---------------------------------------------------------------------
    def _check_count(self, components) -> None:
        if len(components) != len(self.dtypes):
            raise errors.InvalidArgumentError(
                None, None, "Wrong number of components in tuple. Expected %d, got %d"
                % (len(self.dtypes), len(components)))

    def _check_element_shape(self, i: int, shape: tuple, batch: Optional[int]) -> None:
        want = self.shapes[i]
        if want is None:
            return
        if len(shape) == len(want) and all(w is None or w == d for w, d in zip(want, shape)):
            return
        exp = want if batch is None else (batch,) + want
        got = shape if batch is None else (batch,) + shape
        raise errors.InvalidArgumentError(
            None, None, "Shape mismatch in tuple component %d. Expected %s, got %s"
            % (i, _shape_str(exp), _shape_str(got)))

    def _elements(self, components, many: bool) -> tuple:
        """The elements of one enqueue request as a block (frozen arrays, unless `_put`
        copies them anyway)."""
        self._check_count(components)
        own = np.asarray if self._copies_on_put else _frozen
        comps = [own(c) for c in components]
        if not many:
            for i, c in enumerate(comps):
                if c.shape != self._fixed[i]:
                    self._check_element_shape(i, c.shape, None)
            return tuple(c[np.newaxis] for c in comps)
        if comps[0].ndim == 0:
            raise errors.InvalidArgumentError(
                None, None, "Shape mismatch in tuple component 0. Expected [?%s], got []"
                % "".join("," + ("?" if d is None else str(d)) for d in self.shapes[0] or ()))
        b = comps[0].shape[0]
        for i, c in enumerate(comps):
            if c.ndim == 0 or c.shape[0] != b:
                want = self.shapes[i]
                exp = (b,) + (want if want is not None else c.shape[1:])
                raise errors.InvalidArgumentError(
                    None, None, "Shape mismatch in tuple component %d. Expected %s, got %s"
                    % (i, _shape_str(exp), _shape_str(c.shape)))
            self._check_element_shape(i, c.shape[1:], b)
        return tuple(comps)

    def _check_many(self) -> None:
        if None in self._fixed:  # a component whose shape is not fully defined
            raise errors.InvalidArgumentError(
                None, None, "%s's DequeueMany and DequeueUpTo require the components to have "
                "specified shapes." % self.kind)

    # --- results ------------------------------------------------------------------------
    def _batch(self, run: list) -> list:
        """One array per component: the rows of `run` along the first axis (views of
        the stored block when the run is one block)."""
        if not run:
            return [np.zeros((0,) + s, dtype=d.as_numpy_dtype)
                    for s, d in zip(self.shapes, self.dtypes)]
        if len(run) == 1:
            return list(run[0])
        return [np.concatenate([b[i] for b in run]) for i in range(len(self.dtypes))]

    # --- the public API -----------------------------------------------------------------
    def size(self) -> int:
        with self._lock:
            return self._size()

    def is_closed(self) -> bool:
        return self._closed

    def enqueue_async(self, state, components, done, many: bool = False) -> None:
        """Enqueues one element (`many`: a batch along the first axis of each component);
        calls `done(result=None)` once all are in, or `done(exc=...)`."""
        try:
            items = self._elements(components, many)
        except errors.OpError as e:
            done(exc=e)
            return
        finished: list = []
        w = None
        with self._lock:
            if self._closed:
                finished.append((_Waiter(state, done), None, self._closed_error()))
            elif not self._enqueuers and self._size() + _rows(items) <= self._cap:
                self._put(items)  # the fast path: room for everything, nobody ahead
                finished.append((_Waiter(state, done), None, None))
                if self._dequeuers:
                    self._flush(finished)
            else:
                w = _Waiter(state, done)
                # a waiting block outlives the kernel call: it must be our own copy
                w.is_enqueue = True
                w.items = tuple(_frozen(c) for c in items) if self._copies_on_put else items
                self._enqueuers.append(w)
                self._flush(finished)
        self._finish_all(finished)
        if w is not None and w.active:
            self._wait_for_cancel(w)

    def dequeue_async(self, state, done, n: Optional[int] = None,
                      allow_smaller: bool = False) -> None:
        """Dequeues one element (`n` None: `done(result=[array per component])`) or `n`
        elements stacked along a new first axis (`allow_smaller`: fewer once closed)."""
        self._dequeue(state, done, n, allow_smaller, False)

    def _dequeue(self, state, done, n, allow_smaller, single) -> None:
        """dequeue_async; `single` hands a one-component result as the array itself."""
        if n is None and self._plain:
            # the common case of a loop dequeuing one element: there is one, nobody waits
            # ahead of us, no enqueuer waits for room (else the general path below)
            out = None
            with self._lock:
                if self._count and not self._dequeuers and not self._enqueuers:
                    block, f = self._blocks[0], self._front
                    if f + 1 < _rows(block):
                        self._front = f + 1
                    else:
                        self._blocks.popleft()
                        self._front = 0
                    self._count -= 1
                    out = [c[f, ...] for c in block]  # views, as `_take` + `_result` give
            if out is not None:
                done(result=out[0] if single else out)
                return
        if n is not None:
            try:
                self._check_many()
            except errors.OpError as e:
                done(exc=e)
                return
        need = 1 if n is None else n
        finished: list = []
        w = got = None
        with self._lock:
            if not self._dequeuers and self._size() - (
                    0 if self._closed else self._reserve()) >= need:
                got = self._take(need)  # the fast path: enough elements, nobody ahead
                if self._enqueuers:
                    self._flush(finished)
            else:
                w = _Waiter(state, done)
                w.need, w.n, w.allow_small, w.single = need, n, allow_smaller, single
                self._dequeuers.append(w)
                self._flush(finished)
        self._finish_all(finished)
        if w is None:
            done(result=self._result(got, n, single))
        elif w.active:
            self._wait_for_cancel(w)

    def _result(self, run: list, n: Optional[int], single: bool):
        # one element: 0-d or n-d array views of its one-row block (`c[0, ...]`)
        out = [c[0, ...] for c in run[0]] if n is None else self._batch(run)
        return out[0] if single else out

    def close(self, cancel_pending_enqueues: bool = False) -> None:
        """Closes the queue: later enqueues fail, dequeues that can no longer be satisfied
        fail (dequeue_up_to gets what is left); `cancel_pending_enqueues` also fails the
        enqueues still waiting for room."""
        finished: list = []
        with self._lock:
            if self._closed and not cancel_pending_enqueues:
                raise errors.CancelledError(None, None, "Queue '%s' is already closed."
                                            % self.name)
            self._closed = True
            if cancel_pending_enqueues:
                while self._enqueuers:
                    w = self._enqueuers.popleft()
                    w.active = False
                    finished.append((w, None, self._closed_error()))
            self._flush(finished)
        self._finish_all(finished)

    # --- waiting ------------------------------------------------------------------------
    def _closed_error(self) -> errors.OpError:
        return errors.CancelledError(None, None, "%s '%s' is closed." % (self.kind, self.name))

    def _wait_for_cancel(self, w: _Waiter) -> None:
        """Registers the step's cancellation for a waiter left waiting (lock not held;
        the callback may run at once if the step is already cancelled)."""
        w.token = w.state.add_cancel_callback(lambda exc: self._cancel(w, exc))

    def _cancel(self, w: _Waiter, exc: errors.OpError) -> None:
        finished: list = []
        with self._lock:
            if not w.active:
                return  # already served or failed
            w.active = False
            line = self._enqueuers if w.is_enqueue else self._dequeuers
            line.remove(w)
            if w.taken:
                self._restore(w.taken)
                w.taken, w.ntaken = [], 0
            self._flush(finished)  # the next waiter may proceed now
        self._finish_all(finished)
        w.done(exc=exc)

    def _finish_all(self, finished: list) -> None:
        """Calls the `done` of every finished waiter (outside the lock)."""
        for w, got, exc in finished:
            if w.token:
                w.state.remove_cancel_callback(w.token)
            if exc is not None:
                w.done(exc=exc)
            elif got is None:
                w.done(result=None)
            else:
                w.done(result=self._result(got, w.n, w.single))

    def _flush(self, finished: list) -> None:
        """Serves waiters in order as far as the queue allows (under the lock); appends
        (waiter, elements or None, exc or None) for every waiter it finishes."""
        enq, deq = self._enqueuers, self._dequeuers
        while True:
            progress = False
            while enq:
                w = enq[0]
                space = self._cap - self._size()
                if space <= 0:
                    break
                total = _rows(w.items)
                k = min(space, total - w.pos)
                self._put(w.items if k == total else _slice(w.items, w.pos, w.pos + k))
                w.pos += k
                progress = True
                if w.pos < total:
                    break
                enq.popleft()
                w.active = False
                finished.append((w, None, None))
            while deq:
                w = deq[0]
                size = self._size()
                missing = w.need - w.ntaken
                avail = size if self._closed else size - self._reserve()
                if avail >= missing:
                    got = w.taken + self._take(missing) if w.taken else self._take(missing)
                elif self._closed and w.allow_small and (w.taken or size > 0):
                    got = w.taken + self._take(size)
                elif self._closed:
                    if w.taken:
                        self._restore(w.taken)
                    got = None
                else:
                    if avail > 0:
                        w.taken.extend(self._take(avail))
                        w.ntaken += avail
                        progress = True
                    break
                deq.popleft()
                w.active = False
                w.taken, w.ntaken = [], 0
                progress = True
                if got is None:
                    finished.append((w, None, errors.OutOfRangeError(
                        None, None, "%s '%s' is closed and has insufficient elements "
                        "(requested %d, current size %d)"
                        % (self.kind, self.name, w.need, self._size()))))
                else:
                    finished.append((w, got, None))
            if not progress:
                return


class PaddingFIFOQueueResource(QueueResource):
    """A FIFO queue whose dequeue_many pads each component to the largest shape in the
    batch (zeros, empty strings); component shapes may have unknown dimensions."""

    kind = "PaddingFIFOQueue"

    def _check_many(self) -> None:
        pass  # every component has a known rank (checked when the queue is built)

    def _batch(self, run: list) -> list:
        out = []
        total = _run_rows(run)
        for i, d in enumerate(self.dtypes):
            parts = [b[i] for b in run]
            if self._fixed[i] is not None and parts:
                out.append(parts[0] if len(parts) == 1 else np.concatenate(parts))
                continue
            # every block has one shape; pad each block into the largest one
            dims = tuple(max(p.shape[k + 1] for p in parts) if parts else (s or 0)
                         for k, s in enumerate(self.shapes[i]))
            fill = b"" if d is _dt.string else 0
            arr = np.full((total,) + dims, fill, dtype=d.as_numpy_dtype)
            row = 0
            for p in parts:
                arr[(slice(row, row + len(p)),) + tuple(slice(0, k) for k in p.shape[1:])] = p
                row += len(p)
            out.append(arr)
        return out


def _draw(words: philox.WordStream, items: list, k: int) -> list:
    """Removes `k` items from `items` by TF's RandomShuffleQueue draws: each draw takes
    the item at position `word % count` among those left (the next word of the queue's
    Philox stream) and moves the last item into its place. One word per draw, so the
    order depends on the seeds alone, not on how a dequeue's draws were split between
    calls. Returns the items drawn, in order.
    """
    n = len(items)
    # Swapping the drawn item with the last one still in play leaves the same items in
    # play as moving the last one into its place, and the drawn ones at the end in
    # reverse order (one swap per draw)
    last = n - 1
    taken = words.take(k) % np.arange(n, n - k, -1, dtype=np.uint32)
    for j in taken.tolist():
        items[j], items[last] = items[last], items[j]
        last -= 1
    drawn = items[n - k:]
    drawn.reverse()
    del items[n - k:]
    return drawn


class _ShuffleArrays:
    """Random-shuffle storage for fully defined shapes: one array per component, whose
    rows (slots) never move. `_slots` lists the slots in use in queue order (the
    positions the draws pick from) and `_free` the slots to reuse, so a draw moves one
    Python int, not a row; the arrays grow by doubling up to the capacity."""

    def __init__(self, dtypes, shapes, capacity: int):
        self._dtypes = [np.dtype(d.as_numpy_dtype) for d in dtypes]
        self._capacity = capacity
        self._arrays = [np.empty((0,) + s, dt) for s, dt in zip(shapes, self._dtypes)]
        self._objects = any(dt == object for dt in self._dtypes)
        self._slots: list = []
        self._free: list = []   # slots not in use; the next ones used are at the end
        self.n = 0

    def _grow(self, rows: int) -> None:
        size = len(self._arrays[0])
        new_size = max(size + rows, min(self._capacity, max(64, 2 * size)))
        grown = []
        for a in self._arrays:
            new = np.empty((new_size,) + a.shape[1:], a.dtype)
            new[:size] = a
            grown.append(new)
        self._arrays = grown
        self._free += range(new_size - 1, size - 1, -1)

    def put(self, block: tuple) -> None:
        rows, free = _rows(block), self._free
        if len(free) < rows:
            self._grow(rows - len(free))
        slots = free[len(free) - rows:]
        del free[len(free) - rows:]
        slots.reverse()
        # fresh slots are consecutive (a slice assignment); reused ones are scattered
        first = slots[0]
        where = slice(first, first + rows) if slots[-1] == first + rows - 1 and \
            slots == list(range(first, first + rows)) else np.array(slots, np.intp)
        for a, c in zip(self._arrays, block):
            a[where] = c
        self._slots += slots
        self.n += rows

    def take(self, k: int, words: philox.WordStream) -> list:
        drawn = _draw(words, self._slots, k)
        idx = np.array(drawn, np.intp)
        out = tuple(a.take(idx, axis=0) for a in self._arrays)
        if self._objects:
            for a in self._arrays:
                if a.dtype == object:
                    a[idx] = None  # drop references to the removed strings
        self._free += drawn
        self.n -= k
        return [out]


class _ShuffleRows:
    """Random-shuffle storage for elements whose shapes may differ: one-row blocks in a
    list, drawn the same way as `_ShuffleArrays` draws slots."""

    def __init__(self):
        self._rows: list = []
        self.n = 0

    def put(self, block: tuple) -> None:
        self._rows.extend(_slice(block, j, j + 1) for j in range(_rows(block)))
        self.n = len(self._rows)

    def take(self, k: int, words: philox.WordStream) -> list:
        out = _draw(words, self._rows, k)
        self.n = len(self._rows)
        return out


class RandomShuffleQueueResource(QueueResource):
    """Dequeues uniformly random elements, and only while more than `min_after_dequeue`
    elements would remain (unless closed). The order is TF's: the words of
    Philox(seed, seed2); (0, 0) means nondeterministic seeds."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, dtypes, shapes, capacity, min_after_dequeue, seed, seed2):
        super().__init__(name, dtypes, shapes, capacity)
        self.min_after_dequeue = min_after_dequeue
        self._words = _word_stream(seed, seed2)

    def _init_storage(self):
        if all(s is not None for s in self._fixed):
            self._copies_on_put = True
            self._store = _ShuffleArrays(self.dtypes, self._fixed, self._cap)
        else:
            self._store = _ShuffleRows()

    def _size(self) -> int:
        return self._store.n

    def _put(self, block: tuple) -> None:
        if _rows(block):
            self._store.put(block)

    def _take(self, k: int) -> list:
        if not k:
            return []
        return self._store.take(k, self._words)

    def _restore(self, run: list) -> None:
        for block in run:
            self._store.put(block)

    def _reserve(self) -> int:
        return self.min_after_dequeue

    def draw_when_full(self, seed: int, seed2: int) -> None:
        """The deterministic mode (runtime/determinism.py): dequeues draw only while the
        queue is full (at capacity) or closed, so the elements a draw picks from are a
        function of the sequence of enqueues; an unseeded queue (`seed`, `seed2` both 0)
        draws with the generator seeded by (seed, seed2). Called once, on creation."""
        if seed or seed2:
            self._words = _word_stream(seed, seed2)
        mad = self.min_after_dequeue
        store = self._store
        cap = self._cap
        # below capacity every element is reserved: nothing can be drawn until it fills
        self._reserve = lambda: mad if store.n >= cap else store.n


def _word_stream(seed: int, seed2: int) -> philox.WordStream:
    """TF's stream of a RandomShuffleQueue: Philox(seed, seed2), random seeds if both
    are 0."""
    if seed == 0 and seed2 == 0:
        seed, seed2 = (int(w) for w in np.random.SeedSequence().generate_state(2, np.uint64))
    return philox.WordStream(*philox.key_counter_of_seeds(seed, seed2))


class PriorityQueueResource(QueueResource):
    """Dequeues the element with the smallest int64 priority (component 0) first; equal
    priorities leave in arrival order."""

    kind = "PriorityQueue"

    def _init_storage(self):
        self._heap: list = []  # (priority, sequence number, one-row block)
        self._seq = 0

    def _size(self) -> int:
        return len(self._heap)

    def _put(self, block: tuple) -> None:
        for j, priority in enumerate(block[0].tolist()):
            self._seq += 1
            heapq.heappush(self._heap, (priority, self._seq, _slice(block, j, j + 1)))

    def _take(self, k: int) -> list:
        pop = heapq.heappop
        return [pop(self._heap)[2] for _ in range(k)]

    def _restore(self, run: list) -> None:
        # taken elements had the smallest keys: they come back ahead of equal priorities
        for block in reversed(run):
            for j in reversed(range(_rows(block))):
                self._seq += 1
                heapq.heappush(self._heap, (int(block[0][j]), -self._seq,
                                            _slice(block, j, j + 1)))
