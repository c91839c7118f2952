"""Deterministic mode: runs of a concurrent program that are bit-for-bit reproducible.

Turned on per session with `ConfigProto(experimental={'deterministic': True})` (a field of
tensorweave's own) or for every session of a process with the environment variable
`TF_DETERMINISTIC_OPS=1` (TensorFlow's name for op determinism) or `TW_DETERMINISTIC=1`.
It is read once, into `ExecutionPolicy.deterministic` (runtime/policy.py); everything
below is decided when a plan is built or a resource is created, so a session without
the mode runs exactly the code it ran before (nothing is checked per kernel or per run).

What the mode fixes, and where:

* Scheduling order. Every kernel is CHEAP (policy.kernel_weight), so no kernel runs on
  the inter-op pool and the session has one inter-op thread; asynchronous kernels (queue
  enqueues and dequeues, reader reads, Recv) are bound by `KernelBinder.bind`
  (runtime/plan.py) through `blocking_async`: the executor's thread waits for the
  kernel's completion inside the call. So each executor runs the kernels of a step one
  at a time in an order that depends only on the plan: SEQUENTIAL and STRUCTURED in plan
  order, DATAFLOW in plan order too (an asynchronous kernel always "finishes inside its
  call"), TAGGED in the FIFO order of its ready queue, which no completion from another
  thread can reorder. The cost: nothing overlaps within a step, and a step that would
  need one of its own kernels to run while another of its kernels waits (a dequeue
  placed before the enqueue that feeds it, in one step) waits until its deadline.
* Gradient aggregation. Already fixed without the mode: autodiff/gradients.py collects
  the partial gradients of a tensor in an order that is a function of the graph (op ids),
  AddN adds its inputs left to right, IndexedSlices are concatenated in that order and
  scattered with ordered NumPy adds.
* Random ops without seeds. TF1 draws fresh entropy for an op with neither a graph nor
  an op seed; in this mode such an op (RandomUniform, dropout, RandomShuffle behind
  string_input_producer(shuffle=True), candidate samplers, ...) is seeded by `name_seed`
  (CRC-32 of its op name), and an unseeded RandomShuffleQueue (shuffle_batch) likewise.
  Seeded ops are unchanged.
* Queue draws. A RandomShuffleQueue dequeue picks among the elements present, which
  depends on when it ran. In this mode it draws only once the queue is full (capacity
  reached) or closed (ops/data_flow/queue_resources.py, `draw_when_full`), so what it
  can pick from is a function of the sequence of enqueues (a program that dequeues from
  a shuffle queue that never fills and is never closed waits, until its deadline, where
  TF1 would draw once min_after_dequeue is exceeded). The threads of one
  QueueRunner take turns around each run of their enqueue op (`Turnstile`, in a fixed
  round-robin order), so the sequence of enqueues into each queue is fixed too.

Together: two runs of a program whose only concurrency is QueueRunner threads feeding
queues and one thread running the training steps produce bit-identical variables.
Not covered: several user threads calling Session.run concurrently on shared state
(their interleaving is the program's), steps placed on several devices (partitions run
concurrently) and sessions on a cluster (`grpc://` targets).

Recording the inputs of a session and replaying them: tensorweave/replay.py.
"""
from __future__ import annotations

import os
import threading
import zlib
from typing import Optional, Tuple

from tensorweave.runtime import executor as _executor

ENV_VARS = ("TF_DETERMINISTIC_OPS", "TW_DETERMINISTIC")
_TRUE = ("1", "true", "True", "TRUE", "yes")


def from_environment(environ=None) -> bool:
    """Whether the environment turns the mode on for every session
    (TF_DETERMINISTIC_OPS or TW_DETERMINISTIC set to 1/true)."""
    environ = os.environ if environ is None else environ
    return any(environ.get(v, "") in _TRUE for v in ENV_VARS)


def of_session(session) -> bool:
    """Whether `session` (a Session or the weak proxy kernels hold) runs in the mode."""
    try:
        policy = session._policy
    except (AttributeError, ReferenceError):
        return False
    return bool(getattr(policy, "deterministic", False))


def name_seed(name: str) -> Tuple[int, int]:
    """The (seed, seed2) pair of an unseeded random op or queue named `name` in the mode:
    a function of the name only, never (0, 0) (which means "no seed")."""
    data = name.encode("utf-8")
    return (zlib.crc32(data) & 0x7FFFFFFF) or 1, (zlib.crc32(data[::-1]) & 0x7FFFFFFF) or 1


def blocking_async(fn):
    """The asynchronous kernel `fn(ctx, state, done, *inputs)` as one that always
    completes inside its call: it waits (on the calling thread) for `fn` to call back,
    then calls `done` with the outcome. The step's deadline and cancellation still
    apply: the wait ends when the step is cancelled (the kernel's cancel callback calls
    back with the error) or its deadline passes (the step is then cancelled)."""
    def run(ctx, state, done, *args):
        try:
            result = _executor.call_and_wait(fn, ctx, state, args)
        except Exception as e:  # the kernel's error, delivered as its outcome
            done(result=None, exc=e)
            return
        done(result=result, exc=None)
    return run


class Turnstile:
    """Fixed round-robin turns among `n` threads (the threads of one QueueRunner).

    Thread i calls `enter(i)` before each run of its enqueue op and `exit(i)` after it;
    turns go 0, 1, ..., n-1, 0, ... among the threads that have not `leave`n. A thread
    that ends (its queue closed, an error) calls `leave(i)`, from inside or outside its
    turn, and the turn passes on.
    """

    def __init__(self, n: int):
        self._cond = threading.Condition()
        self._order = list(range(n))  # threads still taking turns, in turn order
        self._pos = 0                 # index into _order of the thread whose turn it is

    def enter(self, i: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._order[self._pos] == i)

    def exit(self, i: int) -> None:
        with self._cond:
            self._pos = (self._pos + 1) % len(self._order)
            self._cond.notify_all()

    def leave(self, i: int) -> None:
        with self._cond:
            if i not in self._order:
                return
            k = self._order.index(i)
            del self._order[k]
            if k < self._pos:
                self._pos -= 1
            if self._order and self._pos >= len(self._order):
                self._pos = 0
            if not self._order:
                self._order.append(-1)  # nobody left: no thread's turn
                self._pos = 0
            self._cond.notify_all()


# The stream a thread's Session calls belong to (replay.py): QueueRunner threads set
# theirs to (queue name, thread index); other threads have none.
_stream = threading.local()


def set_stream(label: Optional[Tuple[str, int]]) -> None:
    """Tags the Session calls of the current thread as those of QueueRunner thread
    `label` = (queue name, index), or untags them (None)."""
    _stream.label = label


def current_stream() -> Optional[Tuple[str, int]]:
    return getattr(_stream, "label", None)
