"""The plan of a step whose nodes are on more than one device (OSDI §3.3).

`build_partitioned_plan` partitions the placed step graph (runtime/partition.py) and
lowers each partition with `plan.lower` into the plan type of its own executor (a
partition holding a `_Send` or `_Recv` is a DataflowPlan: transfers are asynchronous
kernels). `PartitionedPlan.run` runs the partitions concurrently as one step:

  * one LocalRendezvous per run, shared by the partitions through their common
    `TransferStepState`, which is registered with the session (Session.close cancels it)
    and carries the deadline of RunOptions.timeout_in_ms;
  * when every kernel is cheap, the only kernels that wait are Recvs and the
    partitions depend on each other without a cycle (`inline_order`), they run one
    after another on the calling thread, each Send before its Recv: concurrency buys
    nothing there (the GIL), and a two-device step then costs about 10 us instead of
    about 70 us with a thread hand-off (2-core machine);
  * when every partition is a tagged program of cheap kernels whose only waiting
    kernels are Sends and Recvs (a loop split across devices, `interleaved`), they
    take turns on the calling thread (tagged.tagged_steps yields when it would wait):
    a split loop's iterations cost no thread hand-off (about 60 us instead of 100 us
    per iteration of a two-device loop);
  * otherwise the first partition runs on the calling thread, the others on
    `_RUNNERS`, threads kept for partitions only (a new thread per partition per run
    costs about twice as much; a partition that waits for a Recv holds its thread,
    so it must not take one of the kernel pool's threads: that could starve the heavy
    kernels the other partitions wait for);
  * the first error cancels the step state, which aborts the rendezvous: every pending
    Recv (and queue wait) of every partition finishes with a CancelledError, so no
    partition hangs; the error raised is the first failure that was not such a
    cancellation, naming the failing op and its device.

A step with control flow over several devices: when its control flow is on one device
and only live root-frame values cross devices, that partition runs on the tagged
executor with the step's TransferStepState (a structured one when it has no transfers)
and the others as usual. When control flow spans devices (`check_control_flow`), every
partition runs on the tagged executor, so deadness travels over Send/Recv and keys
carry frame and iteration, and each split loop has the control-loop state machine of
EuroSys 2018 Figure 6 on each of its devices (partition.py); Recvs are then not
rescheduled (a gate that may be dead would make its Recv dead).
"""
from __future__ import annotations

import os
import queue
import threading
import time
from typing import List

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import executor as _ex
from tensorweave.runtime import optimizer as _opt
from tensorweave.runtime import partition as _part
from tensorweave.runtime import policy as _policy
from tensorweave.runtime import recv_scheduling as _recv_scheduling
from tensorweave.runtime import tagged as _tagged
from tensorweave.runtime.plan import DataflowPlan, Plan, TaggedPlan, \
    WaitingStructuredPlan, _FlatPlan, _lower_control_flow, lower
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.send_recv_ops import TransferStepState, transfer_compression

PARTITIONED = "partitioned"


class _Runners:
    """Threads that run partitions: an idle one takes the next partition; when none is
    idle a new one starts; one idle for `idle_s` seconds ends. Cheaper than a thread
    per partition per run, and unbounded, so waiting partitions never starve others."""

    def __init__(self, idle_s: float = 30.0):
        self._idle: List[queue.SimpleQueue] = []
        self._lock = threading.Lock()
        self._idle_s = idle_s

    def submit(self, fn, *args) -> None:
        with self._lock:
            q = self._idle.pop() if self._idle else None
        if q is None:
            q = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(q,), name="tw-partition",
                             daemon=True).start()
        q.put((fn, args))

    def _work(self, q: queue.SimpleQueue) -> None:
        np.seterr(all="ignore")  # kernels compute silently, as on the calling thread
        while True:
            try:
                fn, args = q.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if q in self._idle:
                        self._idle.remove(q)
                        return
                continue  # taken by submit just now: its work is on the way
            fn(*args)
            # an idle thread must not keep its last partition's plan (and graph) alive
            del fn, args
            with self._lock:
                self._idle.append(q)

    def forget_in_child(self) -> None:
        """After a fork, in the child: the idle threads did not survive it (a partition
        handed to one would never run, and its step would wait for it forever), and
        the lock may be held by one of them."""
        self._idle = []
        self._lock = threading.Lock()


_RUNNERS = _Runners()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_RUNNERS.forget_in_child)


class PartitionedPlan(Plan):
    """The per-device plans of one step and how feeds and fetches map onto them.

    Invariants: `plans[k]` runs partition k (device `devices[k]`) and reads the step's
    feeds `feed_indices[k]`; the step's fetch i is output `fetch_map[i][1]` of plan
    `fetch_map[i][0]`. Immutable, shared by concurrent runs; each run has its own
    rendezvous and step state.
    """

    executor = PARTITIONED

    def __init__(self, plans, devices, feed_indices, fetch_map, graphs, inline_order=None):
        Plan.__init__(self)
        self.plans = tuple(plans)
        self.devices = tuple(devices)
        self.feed_indices = tuple(tuple(f) for f in feed_indices)
        self.fetch_map = tuple(fetch_map)
        self.needs_pool = any(p.needs_pool for p in self.plans)
        self.step_graphs = tuple(graphs)
        self._dataflow = tuple(isinstance(p, DataflowPlan) for p in self.plans)
        self._tagged = tuple(isinstance(p, TaggedPlan) for p in self.plans)
        # the step's fetches that may be dead (fetched from a control-flow partition)
        self.dead_fetch = tuple(g for g, (k, j) in enumerate(self.fetch_map)
                                if j in getattr(self.plans[k], "dead_fetch", ()))
        # partitions in Send-before-Recv order, when they run on the calling thread
        self.inline_order = inline_order
        # tagged partitions of cheap kernels, interleaved on the calling thread
        self.interleaved = inline_order is None and len(self.plans) > 1 and all(
            isinstance(p, TaggedPlan) and _tagged.cooperative(p.program)
            for p in self.plans)

    def run(self, feed_values, env: _ex.RunEnv, options=None, trace=None,
            rendezvous=None) -> list:
        """The step's fetches (`rendezvous`: the step's, when a cluster task runs its
        partitions of a step; a new LocalRendezvous otherwise)."""
        ms = (options.timeout_in_ms if options is not None else 0) or env.timeout_ms
        rendezvous = rendezvous if rendezvous is not None else LocalRendezvous()
        state = TransferStepState(rendezvous, time.monotonic() + ms / 1000.0
                                  if ms > 0 else None)
        state.add_cancel_callback(rendezvous.abort)
        with env._lock:  # RunEnv.begin_step, with the state this step needs
            if env.closed:
                raise RuntimeError("Attempted to use a closed Session.")
            env._live.add(state)
        n = len(self.plans)
        results: list = [None] * n
        failures: list = []  # (partition, exception)
        try:
            if self.interleaved:
                self._run_interleaved(feed_values, env, trace, state, results, failures)
            elif self.inline_order is not None:
                for k in self.inline_order:
                    self._run_one(k, feed_values, env, options, trace, state, results,
                                  failures)
                    if failures:
                        break
            else:
                finished = threading.Semaphore(0)
                for k in range(1, n):
                    _RUNNERS.submit(self._run_on_runner, k, feed_values, env, options,
                                    trace, state, results, failures, finished)
                self._run_one(0, feed_values, env, options, trace, state, results, failures)
                for _ in range(1, n):
                    finished.acquire()
        finally:
            env.end_step(state)
        if failures:
            raise self._step_error(failures)
        return [results[k][j] for k, j in self.fetch_map]

    def _run_one(self, k, feed_values, env, options, trace, state, results, failures):
        """Runs partition k; a failure is recorded and cancels the step."""
        try:
            feeds = [feed_values[g] for g in self.feed_indices[k]]
            if self._dataflow[k]:
                results[k] = _ex._run_dataflow(self.plans[k], feeds, env.pool, trace, state)
            elif self._tagged[k]:
                results[k] = _tagged.run_tagged(self.plans[k].program, feeds, env.pool,
                                                trace, state)
            elif isinstance(self.plans[k], WaitingStructuredPlan):
                results[k] = self.plans[k].run_in_step(feeds, state, trace)
            else:
                results[k] = self.plans[k].run(feeds, env, options, trace)
        except BaseException as e:  # noqa: B036 - raised by the calling thread
            failures.append((k, e))
            state.cancel(errors.CancelledError(
                None, None, "Step cancelled: %s" % getattr(e, "message", e)))

    def _run_interleaved(self, feed_values, env, trace, state, results, failures):
        """Runs the tagged partitions in turn on the calling thread: each runs until it
        waits for a Recv (a Send in another partition completes it on this thread);
        when none can go on, the thread waits for the next completion of any of them
        (a value another task or thread sent may be for any partition), until the
        deadline. No thread hand-off per transfer: a loop split across devices costs
        what its kernels cost."""
        n = len(self.plans)
        wake = _Wakeup()
        queues = [_WakingQueue(wake) for _ in range(n)]
        gens = {}
        for k in range(n):
            feeds = [feed_values[g] for g in self.feed_indices[k]]
            gens[k] = _tagged.tagged_steps(self.plans[k].program, feeds, env.pool, trace,
                                           state, queues[k])
        started = set()
        overdue = None  # past the deadline: it takes the timeout (tagged._next_done)
        while gens:
            for k in list(gens):
                try:
                    if k in started:
                        gens[k].send(k == overdue)
                    else:
                        started.add(k)
                        next(gens[k])
                except StopIteration as stop:
                    results[k] = stop.value
                    del gens[k]
                except BaseException as e:  # noqa: B036 - raised by the calling thread
                    del gens[k]
                    failures.append((k, e))
                    state.cancel(errors.CancelledError(
                        None, None, "Step cancelled: %s" % getattr(e, "message", e)))
            if gens and not wake.wait_for_any([queues[k] for k in gens], state):
                overdue = next(iter(gens))

    def _run_on_runner(self, k, feed_values, env, options, trace, state, results, failures,
                       finished):
        try:
            self._run_one(k, feed_values, env, options, trace, state, results, failures)
        finally:
            finished.release()

    def _step_error(self, failures: list) -> BaseException:
        """The error to raise: the first failure that is not the cancellation another
        partition's failure caused, naming its device."""
        first = None
        for k, f in failures:
            if not isinstance(f, errors.OpError):
                return f
            if first is None or (isinstance(first[1], errors.CancelledError) and
                                 not isinstance(f, errors.CancelledError)):
                first = (k, f)
        k, err = first
        device = self.devices[k].name
        if device in err.message:
            return err
        return type(err)(err.node_def, err.op, "%s\n\t [[partition on device %s]]"
                         % (err.message, device))


class _Wakeup:
    """What the interleaving thread waits on when no partition can go on: a put into
    any partition's queue (from a Send of another thread or task, an abort) ends the
    wait. Only a waiting thread is signalled, so a put costs one test otherwise."""

    __slots__ = ("waiting", "_signal")

    def __init__(self):
        self.waiting = False
        self._signal = threading.Semaphore(0)

    def notify(self) -> None:
        self.waiting = False
        self._signal.release()

    def wait_for_any(self, queues: list, state) -> bool:
        """Returns at once when one of `queues` has a completion, else waits for the
        next put into any of them; False once the step's deadline has passed."""
        self.waiting = True
        # a put before `waiting` was set signalled nothing: it is in its queue
        if not all(q.empty() for q in queues):
            self.waiting = False
            return True
        if state.deadline is None or state.cancelled is not None:
            got = self._signal.acquire()
        else:
            got = self._signal.acquire(
                timeout=max(0.0, state.deadline - time.monotonic()))
        self.waiting = False
        return got


class _WakingQueue(queue.SimpleQueue):
    """A partition's completion queue that also ends the interleaving thread's wait."""

    def __init__(self, wake: _Wakeup):
        self._wake = wake

    def put(self, item, block: bool = True, timeout=None) -> None:
        queue.SimpleQueue.put(self, item)
        if self._wake.waiting:
            self._wake.notify()


def _maybe_dead_or_in_frame(sg: _opt.StepGraph, frame_of, root) -> set:
    """The ids of the nodes of `sg` whose value may be dead or belongs to a loop frame:
    every node inside a loop frame, and what a root-frame Switch's outputs reach, up to
    a Merge of the root (a cond's Merge built outside any cond: live)."""
    from tensorweave.runtime import frames as _frames
    out = {id(n) for n in sg.nodes if frame_of[id(n)] is not root}
    succ: dict = {}
    for n in sg.nodes:
        for p, _ in n.inputs:
            if not _frames.is_back_edge(n, p):
                succ.setdefault(id(p), []).append(n)
        for c in n.control_inputs:
            succ.setdefault(id(c), []).append(n)
    stack = [n for n in sg.nodes if n.type in ("Switch", "RefSwitch")]
    seen = {id(n) for n in stack}
    while stack:
        n = stack.pop()
        out.add(id(n))
        for m in succ.get(id(n), ()):
            if id(m) in seen:
                continue
            seen.add(id(m))
            if m.type in ("Merge", "RefMerge") and frame_of[id(m)] is root and \
                    getattr(m.op, "_control_flow_context", None) is None:
                continue  # a cond's Merge at the root: its value is live
            stack.append(m)
    return out


def check_control_flow(sg: _opt.StepGraph, devices: list) -> bool:
    """Whether the step's control flow spans devices: control-flow ops on several
    devices, or a value that may be dead or that belongs to a loop frame crossing
    devices (a loop's Enter may read a live root-frame value from another device
    without it). Such a step runs every partition on the tagged executor: deadness
    travels over Send/Recv, keys carry frame and iteration, and each loop split across
    devices gets the control-loop state machine of EuroSys 2018 Figure 6 on each of its
    devices (partition.py).

    Raises:
      UnimplementedError: a loop split across devices whose frame has no LoopCond, or
        whose control flow uses reference (Ref*) control-flow ops.
    """
    cf = [n for n in sg.nodes if n.type in _policy.CONTROL_FLOW_OPS]
    if not cf:
        return False
    from tensorweave.runtime import frames as _frames
    _, frame_of, root = _frames.analyze(sg.nodes)
    split = len({id(n.device) for n in cf}) > 1
    if not split:
        bad = _maybe_dead_or_in_frame(sg, frame_of, root)
        for n in sg.nodes:
            into_frame = frame_of[id(n)] is not root and n.type not in ("Enter",
                                                                         "RefEnter")
            srcs = [p for p, _ in n.inputs if not _frames.is_back_edge(n, p)]
            if any(p.device is not n.device and (id(p) in bad or into_frame)
                   for p in srcs + list(n.control_inputs)):
                split = True
                break
        if not split:
            return False
    frame_devices = _part.frame_devices(sg, frame_of)
    problems = []

    def walk(f):
        devs = frame_devices.get(id(f), [])
        if f is not root and len(devs) > 1:
            refs = sorted({n.type for n in f.members if n.type.startswith("Ref") and
                           n.type in _policy.CONTROL_FLOW_OPS})
            if _part.loop_cond_of(f) is None:
                problems.append("while loop '%s' has no LoopCond" % f.name)
            elif refs:
                problems.append("while loop '%s' uses %s" % (f.name, ", ".join(refs)))
        for c in f.children:
            walk(c)
    walk(root)
    if problems:
        raise errors.UnimplementedError(
            None, None, "Running control flow split across the devices of a step (%s) is "
            "not supported here: %s. Place the loop on one device (tf.device) to run it."
            % (", ".join(d.name for d in devices), "; ".join(problems)))
    return True


def runs_fused(sg: _opt.StepGraph, binder, policy: _policy.ExecutionPolicy) -> bool:
    """Whether the step graph `sg`, placed on several devices, runs as ONE compiled
    program instead of partitions: its control flow spans devices, every device is a
    CPU device of this process without a memory limit (host memory shared by all: a
    Send/Recv between them would pass a reference), no transfer compression changes the
    values, and the whole step is of cheap synchronous kernels that the structured
    executor compiles. A loop split across such devices then costs what it costs on one
    device (its kernels still run with their own device's context and resources),
    instead of a Send/Recv of the predicate per iteration and device (EuroSys Figure
    6); `RunOptions.output_partition_graphs` still reports the partitions it stands for.
    Off with `policy.fuse_host_partitions` False."""
    if not policy.fuse_host_partitions or \
            transfer_compression(getattr(binder.session, "_config", None)) is not None:
        return False
    for d in _part.devices_of(sg):
        if d.device_type != "CPU" or not d.host_memory or d.allocator.tracking:
            return False
    if not any(n.type in _policy.CONTROL_FLOW_OPS for n in sg.nodes):
        return False  # no control flow: partitions already run inline or overlap
    return _policy.choose_executor(sg, policy) == _policy.STRUCTURED


def build_partitioned_plan(sg: _opt.StepGraph, binder, policy: _policy.ExecutionPolicy,
                           local=None) -> PartitionedPlan:
    """The PartitionedPlan of the placed, optimized step graph `sg`, whose nodes are on
    more than one device; float32 transfers are compressed when the session's ConfigProto
    asks for it (experimental.transfer_compression, send_recv_ops.py).

    `local(device) -> bool`, when given, keeps only the partitions of the devices it
    accepts (a task of a cluster runs its own; the others run in other processes and
    meet these through a remote rendezvous): the plan's fetch_map then lists only the
    step's fetches those partitions produce, as (step fetch index, (k, j)) pairs in
    `local_fetches`, and its partitions always run on threads."""
    spanning = check_control_flow(sg, _part.devices_of(sg))
    parts = _part.partition(sg, transfer_compression(getattr(binder.session, "_config",
                                                              None)))
    if not spanning:  # a gate that may be dead would make its Recv dead
        _recv_scheduling.schedule_recvs_late(parts)  # white paper §5.2
    if local is not None:
        return _local_plan(parts, spanning, binder, policy, local)
    plans = [_lower_part(p, spanning, binder, policy) for p in parts.parts]
    return PartitionedPlan(plans, parts.devices, [p.feed_indices for p in parts.parts],
                           parts.fetch_map, [p.graph for p in parts.parts],
                           _inline_order(parts, plans))


def _lower_part(p, spanning: bool, binder, policy):
    if spanning:  # dead and in-frame values cross devices: every partition is tagged
        return TaggedPlan(_tagged.compile_tagged(p.graph, binder, policy))
    executor = _policy.choose_executor(p.graph, policy)
    if executor in (_policy.SEQUENTIAL, _policy.DATAFLOW):
        return lower(p.graph, binder, policy, executor)
    return _lower_control_flow(p.graph, binder, policy, executor)


def _local_plan(parts: _part.Partitions, spanning: bool, binder, policy, local):
    keep = [k for k, p in enumerate(parts.parts) if local(p.device)]
    index = {k: i for i, k in enumerate(keep)}
    plans = [_lower_part(parts.parts[k], spanning, binder, policy) for k in keep]
    fetch_map, local_fetches = [], []
    for g, (k, j) in enumerate(parts.fetch_map):
        if k in index:
            local_fetches.append(g)
            fetch_map.append((index[k], j))
    plan = PartitionedPlan(plans, [parts.parts[k].device for k in keep],
                           [parts.parts[k].feed_indices for k in keep], fetch_map,
                           [parts.parts[k].graph for k in keep], None)
    plan.interleaved = False  # a Recv may wait on another process: partitions on threads
    plan.local_fetches = tuple(local_fetches)
    return plan


def _inline_order(parts: _part.Partitions, plans: list):
    """The partitions in an order where every Recv comes after its Send, when running
    them one after another on the calling thread costs nothing: every kernel is cheap
    (no heavy kernel could overlap with another partition's) and the only kernels that
    wait are Recvs. None otherwise (the partitions then run on threads)."""
    for plan in plans:
        if not isinstance(plan, _FlatPlan) or isinstance(plan, WaitingStructuredPlan):
            return None  # control flow: its executor may wait on its own
        for step in plan.steps:
            if not step.cheap or (step.is_async and step.op.type not in ("_Send", "_Recv")):
                return None
    sender = {n.op.rendezvous_key: k for k, p in enumerate(parts.parts) for n in p.sends}
    preds = [{sender[n.op.rendezvous_key] for n in p.recvs} for p in parts.parts]
    order = _opt.stable_topological_indices(preds)
    return tuple(order) if order is not None else None
