"""Executing a Plan (OSDI §3.1, white paper §3.1).

Two executors share the plan format:

* `run_sequential` - the fast path for control-flow-free steps without overlapping heavy
  kernels: the steps run in the plan's topological order on the calling thread, values
  live in one flat list, and dead values are dropped right after their last reader.
  Per node this is a tuple unpack, one call and a store.
* `run_dataflow` - pending-count scheduling: cheap kernels run inline on the calling
  thread, heavy ones on the session's inter-op pool (NumPy releases the GIL, so two big
  matmuls overlap on two cores), asynchronous kernels call back when done. Values are
  freed by per-slot use counts. A plan without pool kernels first runs like
  `run_sequential` while its asynchronous kernels finish inside their calls (a dequeue
  from a queue that holds enough elements), and hands over to the scheduler at the
  first kernel that waits.

The first error stops the step; it is raised with the failing op's name and the user
line that created it. State is only changed by kernels that ran before the failure.
"""
from __future__ import annotations

import queue
import threading
import time
from collections import deque
from typing import List, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime.devices import nbytes_of


def kernel_error(op, exc: BaseException) -> errors.OpError:
    """The OpError to raise for `exc` thrown by the kernel of `op`."""
    if isinstance(exc, errors.OpError):
        if exc.op is not None and exc.op is not op:
            return exc
        return errors.with_op(exc, op) if op is not None else exc
    if isinstance(exc, (ValueError, IndexError, TypeError, ZeroDivisionError, KeyError,
                        FloatingPointError, OverflowError)):
        cls = errors.InvalidArgumentError
    elif isinstance(exc, MemoryError):
        cls = errors.ResourceExhaustedError
    else:
        cls = errors.InternalError
    msg = "%s: %s" % (type(exc).__name__, exc) if cls is errors.InternalError else str(exc)
    if op is None:
        return cls(None, None, msg)
    return errors.with_op(cls(None, op, "%s (in op %s of type %s)" % (msg, op.name, op.type)),
                          op)


class StepStats:
    """Per-step tracing: node timings and allocator accounting (RunMetadata)."""

    def __init__(self):
        self.nodes: List[tuple] = []
        self.start = time.time()

    def record(self, step, t0, t1, out_bytes):
        self.nodes.append((step.op.name if step.op is not None else "<const>", t0, t1,
                           out_bytes, threading.get_ident(), step.ctx.device))


class StepState:
    """What one running step shares with its asynchronous kernels: cancellation and
    the deadline. A kernel that waits (a queue dequeue on an empty queue, an enqueue on a
    full one) registers a callback with `add_cancel_callback`; when the step is cancelled
    (Session.close, a deadline, another kernel's error) the callback must call that
    kernel's `done(exc=...)` promptly, so the step can finish and free its caller.

    Invariants: `cancel` runs every registered callback exactly once, outside the lock;
    a callback added after cancellation runs at once.
    """

    __slots__ = ("_lock", "_callbacks", "_next", "cancelled", "deadline")

    def __init__(self, deadline: Optional[float] = None):
        self._lock = threading.Lock()
        self._callbacks: dict = {}
        self._next = 0
        self.cancelled: Optional[errors.OpError] = None
        self.deadline = deadline  # time.monotonic() value, or None

    def add_cancel_callback(self, fn) -> int:
        """Registers `fn(exc)` to run if the step is cancelled; returns a token."""
        with self._lock:
            if self.cancelled is None:
                self._next += 1
                self._callbacks[self._next] = fn
                return self._next
            exc = self.cancelled
        fn(exc)
        return 0

    def remove_cancel_callback(self, token: int) -> None:
        with self._lock:
            self._callbacks.pop(token, None)

    def cancel(self, exc: errors.OpError) -> None:
        with self._lock:
            if self.cancelled is not None:
                return
            self.cancelled = exc
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        for fn in callbacks:
            fn(exc)


def run_sequential(plan, feed_values, stats: Optional[StepStats] = None) -> list:
    vals = [None] * plan.n_slots
    for s, v in zip(plan.feed_slots, feed_values):
        vals[s] = v
    if stats is not None:
        return _run_sequential_traced(plan, vals, stats)
    run_flat(plan.flat, plan.ops, vals)
    return [vals[i] for i in plan.fetch_slots]


def run_flat(flat, ops, vals: list) -> None:
    """Runs lowered steps `(fn, ctx, ins, out, n_out, free)` in order over the value
    list `vals`: per node a tuple unpack, one call and a store. Also the per-iteration
    loop of the structured control-flow executor (runtime/frames.py)."""
    k = 0
    try:
        for fn, ctx, ins, out, n_out, free in flat:
            n = len(ins)
            if n == 0:
                r = fn(ctx)
            elif n == 1:
                r = fn(ctx, vals[ins[0]])
            elif n == 2:
                r = fn(ctx, vals[ins[0]], vals[ins[1]])
            else:
                r = fn(ctx, *[vals[i] for i in ins])
            if n_out == 1:
                vals[out] = r
            elif n_out:
                vals[out:out + n_out] = r
            if free:
                for i in free:
                    vals[i] = None
            k += 1
    except BaseException as e:  # noqa: B036 - re-raised with op context
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise kernel_error(ops[k], e) from e


def _run_sequential_traced(plan, vals, stats: StepStats) -> list:
    clock = time.perf_counter
    live = {}
    for step in plan.steps:
        alloc = step.ctx.device.allocator
        t0 = clock()
        try:
            r = step.fn(step.ctx, *[vals[i] for i in step.ins])
        except BaseException as e:  # noqa: B036
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            for s, (a, b) in live.items():
                a.deallocate(b)
            raise kernel_error(step.op, e) from e
        t1 = clock()
        outs = [r] if step.n_out == 1 else (list(r) if step.n_out else [])
        nb = 0
        for j, v in enumerate(outs):
            vals[step.out + j] = v
            b = nbytes_of(v)
            nb += b
            alloc.allocate(b)
            live[step.out + j] = (alloc, b)
        for i in step.free:
            vals[i] = None
            e = live.pop(i, None)
            if e is not None:
                e[0].deallocate(e[1])
        stats.record(step, t0, t1, nb)
    result = [vals[i] for i in plan.fetch_slots]
    for a, b in live.values():
        a.deallocate(b)
    return result


class ThreadPool:
    """A fixed pool of daemon threads for heavy kernels (inter_op_parallelism_threads)."""

    def __init__(self, n: int):
        self._q: "queue.SimpleQueue" = queue.SimpleQueue()
        self._threads = []
        for i in range(n):
            t = threading.Thread(target=self._work, name="tw-inter-op-%d" % i, daemon=True)
            t.start()
            self._threads.append(t)

    def _work(self):
        np.seterr(all="ignore")  # this thread's own NumPy state: kernels compute silently
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, args = item
            fn(*args)

    def submit(self, fn, *args) -> None:
        self._q.put((fn, args))

    def shutdown(self) -> None:
        for _ in self._threads:
            self._q.put(None)


class _Completion:
    """The `done` handed to one call of an asynchronous kernel.

    Most calls finish inside the kernel (a dequeue from a queue that holds enough
    elements): `done` is then called before the kernel returns, and the executor
    completes the node on the spot, with no round trip through the step's done queue.
    After the call the executor `settle`s: if `done` has not been called yet, the
    kernel is waiting, and the later call, from whatever thread, goes to the done
    queue. The lock orders "called" against "settled", so the outcome is delivered
    exactly once; a second call of `done` is ignored.
    """

    __slots__ = ("_lock", "_done_q", "step", "t0", "_state", "result", "exc")

    _RUNNING, _FINISHED, _WAITING = 0, 1, 2

    def __init__(self, done_q, step, t0: float):
        self._lock = threading.Lock()
        self._done_q, self.step, self.t0 = done_q, step, t0
        self._state = self._RUNNING
        self.result = self.exc = None

    def __call__(self, result=None, exc=None) -> None:
        with self._lock:
            state, self._state = self._state, self._FINISHED
            if state == self._RUNNING:
                self.result, self.exc = result, exc
            if state != self._WAITING:
                return
        self._done_q.put((self.step, result, exc, self.t0, time.perf_counter()))

    def settle(self) -> bool:
        """True if `done` was called during the kernel call (`result`/`exc` hold the
        outcome); otherwise marks the kernel as waiting and returns False."""
        with self._lock:
            if self._state == self._FINISHED:
                return True
            self._state = self._WAITING
            return False


def run_dataflow(plan, feed_values, pool: ThreadPool, stats: Optional[StepStats] = None,
                 state: Optional[StepState] = None) -> list:
    """Runs a step that may wait (asynchronous kernels) or overlap heavy kernels.

    Without thread-pool kernels the steps first run in plan order on the calling
    thread, as in `run_sequential`, as long as every asynchronous kernel finishes
    inside its call; the first one that waits hands the rest of the step to the
    pending-count scheduler (`_schedule`), which runs whatever does not depend on the
    waiting kernel meanwhile. Either way a step runs each node once, in an order the
    graph allows, with the same errors, cancellation and deadline.
    """
    if state is None:
        state = StepState()
    vals = [None] * plan.n_slots
    for s, v in zip(plan.feed_slots, feed_values):
        vals[s] = v
    seq = plan.inline_steps if stats is None else None
    if seq is None:
        return _schedule(plan, vals, pool, stats, state, 0, None)
    waiting = _run_inline(seq, plan, vals, state)
    if waiting is not None:
        return _schedule(plan, vals, pool, stats, state, *waiting)
    if state.cancelled is not None:
        raise state.cancelled  # cancelled from outside while it ran (Session.close)
    return [vals[i] for i in plan.fetch_slots]


def _run_inline(seq, plan, vals: list, state: StepState):
    """Runs `seq` in order over `vals` until an asynchronous kernel waits. Returns None
    when every step ran, else `(k, completion)`: steps before k ran, step k waits."""
    k = 0
    try:
        for fn, ctx, ins, out, n_out, free, is_async in seq:
            if is_async:
                done = _Completion(queue.SimpleQueue(), plan.steps[k], time.perf_counter())
                try:
                    fn(ctx, state, done, *[vals[i] for i in ins])
                except BaseException as e:  # noqa: B036 - reported like a later failure
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    done(exc=e)
                if not done.settle():
                    return k, done
                if done.exc is not None:
                    raise done.exc
                r = done.result
            else:
                n = len(ins)
                if n == 0:
                    r = fn(ctx)
                elif n == 1:
                    r = fn(ctx, vals[ins[0]])
                elif n == 2:
                    r = fn(ctx, vals[ins[0]], vals[ins[1]])
                else:
                    r = fn(ctx, *[vals[i] for i in ins])
            if n_out == 1:
                vals[out] = r
            elif n_out:
                vals[out:out + n_out] = r
            if free:
                for i in free:
                    vals[i] = None
            k += 1
    except BaseException as e:  # noqa: B036 - re-raised with op context
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        raise kernel_error(plan.ops[k], e) from e
    return None


def _schedule(plan, vals: list, pool: ThreadPool, stats: Optional[StepStats],
              state: StepState, start: int, waiting: Optional[_Completion]) -> list:
    """Pending-count scheduling of the steps from `start` on: steps before `start` have
    run (their values are in `vals`, dead ones freed), and `waiting` (if any) is the
    completion of step `start`, an asynchronous kernel still running."""
    steps = plan.steps
    succ = plan.succ
    pending = list(plan.pending0)
    uses = list(plan.uses0)
    keep = set(plan.fetch_slots)
    if waiting is None:
        done_q: "queue.SimpleQueue" = queue.SimpleQueue()
        ready = deque(k for k, p in enumerate(pending) if p == 0)
        outstanding = 0
    else:
        done_q = waiting._done_q
        for k in range(start):
            for j in succ[k]:
                pending[j] -= 1
            for i in steps[k].ins:
                uses[i] -= 1
        ready = deque(k for k in range(start + 1, len(steps)) if pending[k] == 0)
        outstanding = 1
    error: Optional[errors.OpError] = None
    clock = time.perf_counter

    def run_remote(step, args):
        t0 = clock()
        try:
            r = step.fn(step.ctx, *args)
            done_q.put((step, r, None, t0, clock()))
        except BaseException as e:  # noqa: B036 - handed to the scheduling thread
            done_q.put((step, None, e, t0, clock()))

    def complete(step, r, t0, t1):
        if step.n_out == 1:
            vals[step.out] = r
        elif step.n_out:
            vals[step.out:step.out + step.n_out] = r
        if stats is not None:
            stats.record(step, t0, t1, sum(nbytes_of(vals[step.out + j])
                                           for j in range(step.n_out)))
        for i in step.ins:
            uses[i] -= 1
            if uses[i] == 0 and i not in keep:
                vals[i] = None
        for j in succ[step.index]:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)

    while True:
        while ready and error is None:
            step = steps[ready.popleft()]
            args = [vals[i] for i in step.ins]
            if step.is_async:
                done = _Completion(done_q, step, clock())
                try:
                    step.fn(step.ctx, state, done, *args)
                except BaseException as e:  # noqa: B036 - reported like a later failure
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    done(exc=e)
                if not done.settle():
                    outstanding += 1
                elif done.exc is not None:
                    error = kernel_error(step.op, done.exc)
                    break
                else:
                    complete(step, done.result, done.t0, clock())
            elif step.cheap:
                t0 = clock()
                try:
                    r = step.fn(step.ctx, *args)
                except BaseException as e:  # noqa: B036
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    error = kernel_error(step.op, e)
                    break
                complete(step, r, t0, clock())
            else:
                outstanding += 1
                pool.submit(run_remote, step, args)
        if error is None and state.cancelled is not None:
            error = state.cancelled  # cancelled from outside (Session.close)
        elif error is not None and state.cancelled is None:
            # stop kernels still waiting (e.g. on a queue) so the step can end
            state.cancel(errors.CancelledError(None, None, "Step cancelled: %s"
                                               % error.message))
        if outstanding == 0:
            break
        item = _next_done(done_q, state)
        if item is None:  # the deadline passed: cancel the waiting kernels, then finish
            error = error or errors.DeadlineExceededError(
                None, None, "Timed out waiting for notification")
            state.cancel(error)
            continue
        step, r, exc, t0, t1 = item
        outstanding -= 1
        if exc is not None:
            if error is None:
                error = kernel_error(step.op, exc)
            continue
        if error is None:
            complete(step, r, t0, t1)
    if error is not None:
        raise error
    return [vals[i] for i in plan.fetch_slots]


def _next_done(done_q, state: StepState):
    """The next finished kernel, or None once the step's deadline has passed."""
    if state.deadline is None or state.cancelled is not None:
        return done_q.get()
    remaining = state.deadline - time.monotonic()
    try:
        return done_q.get(timeout=remaining) if remaining > 0 else done_q.get_nowait()
    except queue.Empty:
        return None
