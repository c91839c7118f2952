"""Executing the plans of steps without control flow (OSDI §3.1, white paper §3.1), and
what every executor shares: tracing, step state, the error of a failed kernel.

* `run_steps` - the one per-step kernel call: lowered steps (`lowered`: `(fn, ctx, ins,
  out, n_out, free)` and how to gather the inputs) in plan order over one flat value
  list; per node a tuple unpack, one call and a store, dead values dropped right after
  their last reader. SequentialPlan.run (and the structured executor's root frame) is
  this loop; so is the first phase of a dataflow step.
* `run_dataflow` - pending-count scheduling (`_schedule`): cheap kernels run inline on
  the calling thread, pool kernels on the session's inter-op pool (NumPy releases the
  GIL, so two big matmuls overlap on two cores), asynchronous kernels call back when
  done. Values are freed by per-slot use counts. A plan without pool kernels first runs
  its steps with `run_steps`: each asynchronous kernel is wrapped (`_inline_async`) as a
  synchronous step that returns its result when the kernel finished inside its call (a
  dequeue from a queue that holds enough elements) and otherwise raises `_Waiting`,
  which hands the rest of the step over to the scheduler.
* `run_sequential_traced` - the traced run of sequential and structured plans; the
  traced runs of the other executors record from their own loops. Every record is made
  through `StepTrace.record`, and nothing of it runs when tracing is off.

The first error stops the step; it is raised with the failing op's name and the user
line that created it. State is only changed by kernels that ran before the failure.
"""
from __future__ import annotations

import queue
import threading
import time
from collections import deque
from operator import itemgetter
from typing import List, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import provenance as _provenance
from tensorweave.runtime.devices import nbytes_of
from tensorweave.runtime.values import DEAD


def kernel_error(op, exc: BaseException, iterations=()) -> errors.OpError:
    """The OpError to raise for `exc` thrown by the kernel of `op`: it names the op, the
    user line that created it and the control flow around it, with `iterations`
    ((frame name, iteration) of each enclosing loop, innermost first) as the executor
    knew them when the kernel failed (runtime/provenance.py)."""
    if isinstance(exc, errors.OpError):
        if exc.op is not None and (exc.op is not op or hasattr(exc, "_tw_base")):
            return exc
        if op is None:
            return exc
        return _provenance.with_context(errors.with_op(exc, op), op, iterations)
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
    err = errors.with_op(cls(None, op, "%s (in op %s of type %s)" % (msg, op.name, op.type)),
                         op)
    return _provenance.with_context(err, op, iterations)


class StepTrace:
    """The records of one traced run (RunOptions.trace_level > 0), filled by every
    executor and turned into RunMetadata.step_stats by the session
    (runtime/step_stats.py).

    `records` holds one tuple per kernel execution (per iteration inside loops):
    (op, device, start, end, outputs, thread id, frame name, iteration, allocator bytes
    in use at the end); start and end are time.perf_counter() values, `wall0_us`/`perf0`
    relate them to the wall clock (µs since the epoch); `outputs` describes each output
    as (slot, dtype, shape, bytes) (dtype and shape None for a value that is not an
    array; dead outputs are left out). The frame name is "" and the iteration 0 outside
    loops. Appends are single list appends (atomic), so partitions running on several
    threads share one trace without a lock. `remote` holds the step stats that the tasks
    of a cluster returned (dicts in step_stats.to_wire form), merged by the session.
    """

    __slots__ = ("records", "wall0_us", "perf0", "remote")

    def __init__(self):
        self.records: List[tuple] = []
        self.perf0 = time.perf_counter()
        self.wall0_us = time.time_ns() // 1000
        self.remote: List[dict] = []

    def record(self, op, device, t0: float, t1: float, outputs=(),
               frame_name: str = "", iteration: int = 0, thread_id: Optional[int] = None):
        """Records one kernel execution; `outputs` are its output values."""
        self.records.append((op, device, t0, t1, describe_outputs(outputs),
                             threading.get_ident() if thread_id is None else thread_id,
                             frame_name, iteration, device.allocator.bytes_in_use))


def describe_outputs(outputs) -> tuple:
    """(slot, dtype, shape, bytes) of each live output value (see StepTrace)."""
    out = []
    for slot, v in enumerate(outputs):
        if v is DEAD:
            continue
        dtype = getattr(v, "dtype", None)
        if isinstance(dtype, np.dtype):  # NumPy (or CuPy) arrays and scalars
            out.append((slot, dtype, tuple(v.shape), nbytes_of(v)))
        else:  # bytes, handles, TensorArray flows: no array description
            out.append((slot, None, None, nbytes_of(v)))
    return tuple(out)


class StepState:
    """What one running step shares with its asynchronous kernels: cancellation and
    the deadline. A kernel that waits (a queue dequeue on an empty queue, an enqueue on a
    full one) registers a callback with `add_cancel_callback`; when the step is cancelled
    (Session.close, a deadline, another kernel's error) the callback must call that
    kernel's `done(exc=...)` promptly, so the step can finish and free its caller.

    Invariants: `cancel` runs every registered callback exactly once, outside the lock;
    a callback added after cancellation runs at once. `at_end` callbacks (what a kernel
    holds for the rest of the step, as a mutex lock) run exactly once, when the step
    ends (`end`, called by whoever registered the step), or at once if it has ended.
    """

    __slots__ = ("_lock", "_callbacks", "_next", "cancelled", "deadline", "_at_end")

    def __init__(self, deadline: Optional[float] = None):
        self._lock = threading.Lock()
        self._callbacks: dict = {}
        self._next = 0
        self.cancelled: Optional[errors.OpError] = None
        self.deadline = deadline  # time.monotonic() value, or None
        self._at_end: Optional[list] = None  # None: none registered; () once ended

    def at_end(self, fn) -> None:
        """Registers `fn()` to run when the step ends (at once if it has ended)."""
        with self._lock:
            if self._at_end != ():
                if self._at_end is None:
                    self._at_end = []
                self._at_end.append(fn)
                return
        fn()

    def end(self) -> None:
        """Ends the step: runs the `at_end` callbacks (executors call this, when
        `_at_end` is not None, after the step's last kernel finished)."""
        with self._lock:
            fns, self._at_end = self._at_end or [], ()
        for fn in fns:
            fn()

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


class RunEnv:
    """What a running plan needs from its session (one per session): the inter-op
    thread pool (created by the session when a plan needs it), the default deadline, and
    the running steps that `close` cancels.

    Invariants: a step is registered by `begin_step` and removed by `end_step`; after
    `close`, `begin_step` raises and every registered step has been cancelled.
    """

    __slots__ = ("pool", "timeout_ms", "closed", "_live", "_lock")

    def __init__(self, timeout_ms: int = 0):
        self.pool: Optional[ThreadPool] = None
        self.timeout_ms = timeout_ms
        self.closed = False
        self._live: set = set()
        self._lock = threading.Lock()

    def begin_step(self, options=None) -> StepState:
        """A registered StepState with the deadline of RunOptions.timeout_in_ms, else
        ConfigProto.operation_timeout_in_ms."""
        ms = (options.timeout_in_ms if options is not None else 0) or self.timeout_ms
        state = StepState(time.monotonic() + ms / 1000.0 if ms > 0 else None)
        with self._lock:
            if self.closed:
                raise RuntimeError("Attempted to use a closed Session.")
            self._live.add(state)
        return state

    def begin_service(self) -> StepState:
        """A registered StepState without a deadline, for work that spans many steps of
        the session (an input worker's feeder): Session.close cancels it like a step."""
        state = self.begin_step()
        state.deadline = None
        return state

    def end_step(self, state: StepState) -> None:
        with self._lock:
            self._live.discard(state)
        if state._at_end is not None:
            state.end()

    def close(self, exc: errors.OpError) -> None:
        """Cancels the running steps with `exc` and refuses new ones; stops the pool."""
        with self._lock:
            self.closed = True
            steps, self._live = list(self._live), set()
        for state in steps:  # steps blocked in asynchronous kernels end with this error
            state.cancel(exc)
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None


def lowered(fn, ctx, ins: tuple, out: int, n_out: int, free: tuple) -> tuple:
    """The tuple `run_steps` walks for one step: `(fn, ctx, ins, out, n_out, free)`
    followed by the number of inputs and, for three or more, an `itemgetter` of them
    (a C call where a list comprehension would run a Python frame per kernel)."""
    n_in = len(ins)
    return (fn, ctx, ins, out, n_out, free, n_in, itemgetter(*ins) if n_in > 2 else None)


def run_steps(flat, ops, vals: list) -> None:
    """Runs lowered steps (`lowered`) in order over the value list `vals`: per node a
    tuple unpack, one call and a store. The one per-step kernel call of the untraced
    sequential and dataflow executors."""
    k = 0
    try:
        for fn, ctx, ins, out, n_out, free, n, gather in flat:
            if n == 1:
                r = fn(ctx, vals[ins[0]])
            elif n == 2:
                r = fn(ctx, vals[ins[0]], vals[ins[1]])
            elif n == 0:
                r = fn(ctx)
            else:
                r = fn(ctx, *gather(vals))
            if n_out == 1:
                vals[out] = r
            elif n_out:
                vals[out:out + n_out] = r
            if free:
                for i in free:
                    vals[i] = None
            k += 1
    except BaseException as e:  # noqa: B036 - re-raised with op context
        if isinstance(e, (KeyboardInterrupt, SystemExit, _Waiting)):
            raise
        err = kernel_error(ops[k], e)
        if err is e:  # already names its op (e.g. raised inside a compiled loop)
            raise
        raise err from e


def run_sequential_traced(plan, feed_values, trace: StepTrace) -> list:
    """`run_steps` over `plan.steps` with a record per kernel, and allocator accounting
    of the live values (peak bytes) on devices whose allocator does not track values
    itself (a tracking allocator already charges every output, devices.py). A loop step
    of the structured executor runs its traced variant, which records each op of each
    iteration (runtime/frames.py)."""
    vals = [None] * plan.n_slots
    for s, v in zip(plan.feed_slots, feed_values):
        vals[s] = v
    clock = time.perf_counter
    live = {}
    for step in plan.steps:
        alloc = step.ctx.device.allocator
        args = [vals[i] for i in step.ins]
        t0 = clock()
        try:
            if step.loop is not None:
                r = step.loop.call_traced(step.ctx, trace, args, step.guarded)
            else:
                r = step.fn(step.ctx, *args)
        except BaseException as e:  # noqa: B036
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            for a, b in live.values():
                a.deallocate(b)
            err = kernel_error(step.op, e)
            if err is e:
                raise
            raise err from e
        t1 = clock()
        outs = [r] if step.n_out == 1 else (list(r) if step.n_out else [])
        for j, v in enumerate(outs):
            vals[step.out + j] = v
            if not alloc.tracking:
                b = nbytes_of(v)
                alloc.allocate(b)
                live[step.out + j] = (alloc, b)
        if step.loop is None and not (step.guarded and all(v is DEAD for v in outs)):
            trace.record(step.op, step.ctx.device, t0, t1, outs)
        for i in step.free:
            vals[i] = None
            e = live.pop(i, None)
            if e is not None:
                e[0].deallocate(e[1])
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
            # an idle thread must not keep its last kernel's inputs and outputs alive
            del item, fn, args

    def submit(self, fn, *args) -> None:
        self._q.put((fn, args))

    def shutdown(self) -> None:
        for _ in self._threads:
            self._q.put(None)


class _Waiting(Exception):
    """Raised by an inline asynchronous step whose kernel waits: step `index` has not
    finished, `completion` will receive its outcome (run_dataflow hands over)."""

    def __init__(self, index: int, completion: "_Completion"):
        super().__init__(index)
        self.index, self.completion = index, completion


class _Completion:
    """The `done` handed to one call of an asynchronous kernel.

    Most calls finish inside the kernel (a dequeue from a queue that holds enough
    elements): `done` is then called before the kernel returns, and the executor
    completes the node on the spot, with no round trip through a done queue. After the
    call the executor `settle`s: if `done` has not been called yet, the kernel is
    waiting, and the later call, from whatever thread, goes to the done queue (created
    then, if the call was inline). The lock orders "called" against "settled", so the
    outcome is delivered exactly once; a second call of `done` is ignored.
    """

    __slots__ = ("_lock", "done_q", "step", "t0", "_state", "result", "exc")

    _RUNNING, _FINISHED, _WAITING = 0, 1, 2

    def __init__(self, done_q, step, t0: float):
        self._lock = threading.Lock()
        self.done_q, self.step, self.t0 = done_q, step, t0
        self._state = self._RUNNING
        self.result = self.exc = None

    def __call__(self, result=None, exc=None) -> None:
        with self._lock:
            state, self._state = self._state, self._FINISHED
            if state == self._RUNNING:
                self.result, self.exc = result, exc
            if state != self._WAITING:
                return
        self.done_q.put((self.step, result, exc, self.t0, time.perf_counter(), None))

    def settle(self) -> bool:
        """True if `done` was called during the kernel call (`result`/`exc` hold the
        outcome); otherwise marks the kernel as waiting and returns False."""
        with self._lock:
            if self._state == self._FINISHED:
                return True
            if self.done_q is None:
                self.done_q = queue.SimpleQueue()
            self._state = self._WAITING
            return False


def inline_async(step):
    """The asynchronous kernel of `step` as a synchronous step function for
    `run_steps`: `fn(ctx, state, *inputs)` (the StepState comes from the plan's state
    slot) returns the result when the kernel finished inside its call, raises its error,
    or raises `_Waiting` when it waits."""
    fn = step.fn
    index = step.index

    def run(ctx, state, *args):
        done = _Completion(None, step, 0.0)  # untraced: no start time needed
        try:
            fn(ctx, state, done, *args)
        except BaseException as e:  # noqa: B036 - reported like a later failure
            _failed_inside(done, e)
        if done.settle():
            if done.exc is None:
                return done.result
            raise done.exc
        raise _Waiting(index, done)
    return run


def call_and_wait(fn, ctx, state: StepState, args):
    """Calls the asynchronous kernel `fn(ctx, state, done, *args)` and waits on the
    calling thread for its outcome: returns its result or raises its error.

    The step's cancellation ends the wait (the kernel's cancel callback calls `done`
    with the error), and so does its deadline: when it passes, the step is cancelled."""
    # No lock on the common path (the kernel calls `done` inside its call): `done`
    # appends the outcome, then wakes a waiter if one is registered; the caller
    # registers its waiter, then looks for the outcome again. Under the GIL one of the
    # two always sees the other's write.
    outcome: list = []
    waiter: list = []

    def done(result=None, exc=None):
        if not outcome:
            outcome.append((result, exc))
            if waiter:
                waiter[0].set()
    try:
        fn(ctx, state, done, *args)
    except BaseException as e:  # noqa: B036 - reported like a later failure
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        done(exc=e)
    if not outcome:
        event = threading.Event()
        waiter.append(event)
        deadline = getattr(state, "deadline", None)
        while not outcome and not event.wait(
                None if deadline is None else max(0.0, deadline - time.monotonic())):
            # the deadline passed: cancelling the step makes the kernel call back
            state.cancel(errors.DeadlineExceededError(
                None, None, "Timed out waiting for notification"))
            deadline = None
    result, exc = outcome[0]
    if exc is not None:
        raise exc
    return result


class _RunningStep(threading.local):
    """The StepState of the step a structured plan runs on this thread (None when
    none), for its asynchronous kernels that wait in place (`waiting_in_place`)."""
    state: Optional[StepState] = None


running_step = _RunningStep()


def waiting_in_place(fn):
    """The asynchronous kernel `fn(ctx, state, done, *inputs)` as a synchronous kernel
    `fn(ctx, *inputs)` of a compiled step: it waits on the calling thread
    (`call_and_wait`) under the StepState its plan published in `running_step`. Only
    for steps where waiting cannot hold back what it waits for
    (policy.waits_in_place)."""
    def run(ctx, *args):
        return call_and_wait(fn, ctx, running_step.state, args)
    return run


def _failed_inside(done: "_Completion", exc: BaseException) -> None:
    """An asynchronous kernel raised instead of calling `done`: its failure."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc
    done(exc=exc)


def run_dataflow(plan, feed_values, env: RunEnv, options=None,
                 trace: Optional[StepTrace] = None) -> list:
    """Runs a DataflowPlan as one step registered with `env` (see `_run_dataflow`)."""
    # RunEnv.begin_step and end_step, inline: this is the hot path of queue steps
    ms = (options.timeout_in_ms if options is not None else 0) or env.timeout_ms
    state = StepState(time.monotonic() + ms / 1000.0 if ms > 0 else None)
    with env._lock:
        if env.closed:
            raise RuntimeError("Attempted to use a closed Session.")
        env._live.add(state)
    try:
        return _run_dataflow(plan, feed_values, env.pool, trace, state)
    finally:
        with env._lock:
            env._live.discard(state)
        if state._at_end is not None:
            state.end()


def _run_dataflow(plan, feed_values, pool: "ThreadPool", trace: Optional[StepTrace],
                  state: StepState) -> list:
    """Runs a DataflowPlan: a step that may wait (asynchronous kernels) or overlap
    heavy kernels on the pool.

    Without pool kernels (`plan.inline`) and untraced, the steps first run in plan order
    on the calling thread (`run_steps` over `plan.flat`) as long as every asynchronous
    kernel finishes inside its call; the first one that waits hands the rest of the step
    to the pending-count scheduler (`_schedule`), which runs whatever does not depend on
    the waiting kernel meanwhile. Either way a step runs each node once, in an order the
    graph allows, with the same errors, cancellation and deadline.
    """
    vals = [None] * plan.n_slots
    for s, v in zip(plan.feed_slots, feed_values):
        vals[s] = v
    if trace is not None or not plan.inline:
        return _schedule(plan, vals, pool, trace, state, 0, None)
    vals[plan.state_slot] = state
    try:
        run_steps(plan.flat, plan.ops, vals)
    except _Waiting as w:
        return _schedule(plan, vals, pool, None, state, w.index, w.completion)
    if state.cancelled is not None:
        raise state.cancelled  # cancelled from outside while it ran (Session.close)
    return [vals[i] for i in plan.fetch_slots]


def _schedule(plan, vals: list, pool: "ThreadPool", trace: Optional[StepTrace],
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
        done_q = waiting.done_q
        for k in range(start):
            for j in succ[k]:
                pending[j] -= 1
            for i in steps[k].ins:
                uses[i] -= 1
        ready = deque(k for k in range(start + 1, len(steps)) if pending[k] == 0)
        outstanding = 1
    error: Optional[errors.OpError] = None
    clock = time.perf_counter
    get_ident = threading.get_ident

    def run_remote(step, args):
        t0 = clock()
        try:
            r = step.fn(step.ctx, *args)
            done_q.put((step, r, None, t0, clock(), get_ident()))
        except BaseException as e:  # noqa: B036 - handed to the scheduling thread
            done_q.put((step, None, e, t0, clock(), get_ident()))

    # traced: allocator accounting of the live values (as run_sequential_traced does)
    live: Optional[dict] = {} if trace is not None else None

    def complete(step, r, t0, t1, tid=None):
        if step.n_out == 1:
            vals[step.out] = r
        elif step.n_out:
            vals[step.out:step.out + step.n_out] = r
        if trace is not None:
            alloc = step.ctx.device.allocator
            if not alloc.tracking:
                for j in range(step.n_out):
                    b = nbytes_of(vals[step.out + j])
                    alloc.allocate(b)
                    live[step.out + j] = (alloc, b)
            trace.record(step.op, step.ctx.device, t0, t1,
                         vals[step.out:step.out + step.n_out], thread_id=tid)
        for i in step.ins:
            uses[i] -= 1
            if uses[i] == 0 and i not in keep:
                vals[i] = None
                if live:
                    e = live.pop(i, None)
                    if e is not None:
                        e[0].deallocate(e[1])
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
            elif not step.on_pool:
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
        step, r, exc, t0, t1, tid = item
        outstanding -= 1
        if exc is not None:
            if error is None:
                error = kernel_error(step.op, exc)
            continue
        if error is None:
            complete(step, r, t0, t1, tid)
    if live:
        for a, b in live.values():
            a.deallocate(b)
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
