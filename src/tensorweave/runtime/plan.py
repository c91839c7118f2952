"""Compiling one step signature (fetches, feeds, targets) into an immutable plan.

build_plan: prune (§3.2: only what the fetches and targets need, feeds cut the graph)
-> place (devices, colocation with resources) -> optimize (runtime/optimizer.py; steps
without control flow) -> choose the executor (runtime/policy.choose_executor) -> lower
into the plan type of that executor, flat arrays it walks without touching the graph:

  SequentialPlan  steps in topological order over one value list (run_steps)
  StructuredPlan  the same, with each while loop one step (a frames.LoopProgram)
  DataflowPlan    the steps plus successor lists and pending/use counts (run_dataflow)
  TaggedPlan      a tagged.TaggedProgram (run_tagged)

A step whose nodes are on several devices is partitioned instead (runtime/partition.py,
one step graph per device with _Send/_Recv between them) into a PartitionedPlan
(runtime/partitioned_plan.py) holding one of the plans above per device.

Each has `run(feed_values, env, options, trace) -> fetched values`. A plan is immutable
and shared by concurrent runs; everything mutable during a run lives in the executor's
per-run locals (and the StepState of a dataflow or tagged step).
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.runtime import determinism as _determinism
from tensorweave.runtime import executor as _ex
from tensorweave.runtime import frames as _frames
from tensorweave.runtime import optimizer as _opt
from tensorweave.runtime import placer as _placer
from tensorweave.runtime import policy as _policy
from tensorweave.runtime import tagged as _tagged
from tensorweave.runtime.devices import Device, DeviceManager
from tensorweave.runtime.executor import run_steps

CONTROL_FLOW_OPS = _policy.CONTROL_FLOW_OPS


class KernelContext:
    """What a kernel sees: its op, attrs, device, array namespace and resources.

    One per node per plan; shared by concurrent runs, so kernels keep per-run values
    off it. `state` is per (session, op) and survives across plans (e.g. RNG state).
    """

    __slots__ = ("op", "attrs", "device", "xp", "resources", "state", "session",
                 "node_name")

    def __init__(self, op, attrs, device: Device, session, state):
        self.op = op
        self.attrs = attrs
        self.device = device
        self.xp = device.xp if op is None else device.kernel_xp(op)
        self.resources = device.resources
        self.session = session
        self.state = state
        self.node_name = op.name if op is not None else "<folded>"


class Step:
    """One lowered node (immutable).

    `fn(ctx, *inputs)` (asynchronous kernels: `fn(ctx, state, done, *inputs)`) reads
    slots `ins` and writes slots [out, out + n_out); `free` lists the slots whose last
    reader it is. `cheap` is policy.kernel_weight(...) == CHEAP; `on_pool` says whether a
    dataflow or tagged executor sends it to the thread pool. `loop` is the LoopProgram
    of a structured plan's loop step (None otherwise); `guarded` says whether the step
    may receive dead inputs (it then returns dead outputs without running).
    """

    __slots__ = ("index", "fn", "ctx", "ins", "out", "n_out", "free", "cheap", "is_async",
                 "on_pool", "op", "loop", "guarded")

    def __init__(self, index, fn, ctx, ins, out, n_out, free, op, cheap=True,
                 is_async=False, on_pool=False, loop=None, guarded=False):
        self.index, self.fn, self.ctx, self.ins, self.out = index, fn, ctx, ins, out
        self.n_out, self.free, self.op = n_out, free, op
        self.cheap, self.is_async, self.on_pool = cheap, is_async, on_pool
        self.loop, self.guarded = loop, guarded


class Plan:
    """What the session needs of every plan. `executor` names the executor
    (policy.SEQUENTIAL, ...); `dead_fetch` lists fetch indices a cond may leave dead;
    `needs_pool` whether a step may run on the session's thread pool."""

    executor = ""

    def __init__(self):
        self.stamp = 0
        self.n_nodes_before_opt = 0
        self.dead_fetch: Tuple[int, ...] = ()
        self.needs_pool = False
        self.step_graphs: tuple = ()  # the step graph of each partition (one per device)
        # one program for a step spanning CPU devices (partitioned_plan.runs_fused)
        self.fused = False
        # (index, copy) of the feeds and fetches on devices that are not host memory
        # (the GPU): feeds are copied in before a run, fetches out after it
        self.feeds_to_device: tuple = ()
        self.fetches_to_host: tuple = ()

    def partition_graphs(self) -> list:
        """One `tensorflow.GraphDef` per partition (RunOptions.output_partition_graphs);
        a fused plan reports the partitions its one program stands for."""
        from tensorweave.runtime.partition import graph_def_of, partition
        graphs = self.step_graphs
        if self.fused:
            graphs = [p.graph for p in partition(self.step_graphs[0]).parts]
        return [graph_def_of(g) for g in graphs]

    def run(self, feed_values, env: _ex.RunEnv, options=None, trace=None) -> list:
        """The fetched values of one run (`trace`: a StepTrace to fill, or None)."""
        raise NotImplementedError("%s does not define run(): every plan type runs its "
                                  "own executor" % type(self).__name__)


class _FlatPlan(Plan):
    """A plan over one flat value list.

    Invariants:
      * `steps` is a topological order; step i reads only slots written by earlier
        steps or feed slots, and writes slots [out, out + n_out).
      * `free` of a step lists the slots whose last reader is that step (never fetch
        slots), so the sequential loop drops dead values right away.
      * `flat` holds each step as the tuple run_steps walks, `ops` each step's op.
    """

    def __init__(self, steps, n_slots: int, feed_slots: tuple, fetch_slots: tuple):
        Plan.__init__(self)
        self.steps: Tuple[Step, ...] = tuple(steps)
        self.n_slots = n_slots
        self.feed_slots = feed_slots
        self.fetch_slots = fetch_slots
        self.flat = tuple(_ex.lowered(s.fn, s.ctx, s.ins, s.out, s.n_out, s.free)
                          for s in self.steps)
        self.ops = tuple(s.op for s in self.steps)


class SequentialPlan(_FlatPlan):
    """Steps without control flow, nothing to wait for or to overlap: run in plan order
    on the calling thread."""

    executor = _policy.SEQUENTIAL

    def run(self, feed_values, env, options=None, trace=None) -> list:
        if trace is not None:
            return _ex.run_sequential_traced(self, feed_values, trace)
        vals = [None] * self.n_slots
        for s, v in zip(self.feed_slots, feed_values):
            vals[s] = v
        run_steps(self.flat, self.ops, vals)
        return [vals[i] for i in self.fetch_slots]


class StructuredPlan(SequentialPlan):
    """A control-flow step on the structured executor: the root frame's steps run like
    a SequentialPlan's, each while loop is one step calling its compiled LoopProgram
    (runtime/frames.py); values a cond leaves dead are `values.DEAD`."""

    executor = _policy.STRUCTURED


class WaitingStructuredPlan(StructuredPlan):
    """A StructuredPlan whose one asynchronous kernel waits in place
    (policy.waits_in_place): each run is a step registered with the session, so that
    Session.close and the deadline end a wait, and its StepState is published on the
    running thread for that kernel (executor.waiting_in_place)."""

    def run(self, feed_values, env, options=None, trace=None) -> list:
        state = env.begin_step(options)
        try:
            return self.run_in_step(feed_values, state, trace)
        finally:
            env.end_step(state)

    def run_in_step(self, feed_values, state: _ex.StepState, trace=None) -> list:
        """A run under the registered `state` (a partitioned step's: its cancellation,
        by another partition's failure too, ends the wait)."""
        running = _ex.running_step
        outer, running.state = running.state, state
        try:
            out = SequentialPlan.run(self, feed_values, None, None, trace)
        finally:
            running.state = outer
        if state.cancelled is not None:
            raise state.cancelled  # cancelled from outside while it ran (Session.close)
        return out


class DataflowPlan(_FlatPlan):
    """Steps that may wait (asynchronous kernels) or overlap heavy kernels on the pool.

    Invariants (beyond _FlatPlan's): `succ[i]` are the steps that depend on step i,
    `pending0[i]` the number of steps step i depends on, `uses0[s]` the number of
    readers of slot s. `inline` (no step on the pool): `flat` is runnable by run_steps,
    each asynchronous step wrapped by executor.inline_async with the StepState read from
    slot `state_slot` as its first input.
    """

    executor = _policy.DATAFLOW

    def __init__(self, steps, n_slots, feed_slots, fetch_slots, succ, pending0, uses0):
        _FlatPlan.__init__(self, steps, n_slots + 1, feed_slots, fetch_slots)
        self.state_slot = n_slots
        self.succ: Tuple[Tuple[int, ...], ...] = succ
        self.pending0: List[int] = pending0
        self.uses0: List[int] = uses0
        self.needs_pool = any(s.on_pool for s in self.steps)
        self.inline = not self.needs_pool
        self.flat = tuple(
            _ex.lowered(_ex.inline_async(s), s.ctx, (self.state_slot,) + s.ins, s.out,
                        s.n_out, s.free)
            if s.is_async else f for f, s in zip(self.flat, self.steps))

    # run(feed_values, env, options=None, trace=None): executor.run_dataflow itself is
    # the method (no extra call per run: queue steps are on input pipelines' hot path)
    run = _ex.run_dataflow


class TaggedPlan(Plan):
    """A control-flow step on the tagged-token executor (runtime/tagged.py)."""

    executor = _policy.TAGGED

    def __init__(self, program):
        Plan.__init__(self)
        self.program = program
        self.dead_fetch = tuple(range(len(program.fetch)))
        self.needs_pool = program.uses_pool

    def run(self, feed_values, env, options=None, trace=None) -> list:
        state = env.begin_step(options)
        try:
            return _tagged.run_tagged(self.program, feed_values, env.pool, trace, state)
        finally:
            env.end_step(state)


class KernelBinder:
    """Binds step-graph nodes to kernels for one session: the kernel function, and a
    KernelContext holding the session's per-op state (e.g. RNG state) and device. This is
    all that lowering needs of the session."""

    def __init__(self, session, devices: DeviceManager):
        self.session = session
        self.devices = devices
        self._op_state = session._op_state
        # the deterministic mode (runtime/determinism.py): asynchronous kernels are
        # waited for inside their call, so no completion can reorder a step
        self._deterministic = _determinism.of_session(session)

    def bind(self, n: _opt.Node):
        """(kernel fn, KernelContext, KernelDef or None for a constant) of node `n`."""
        if n.type == "Const":
            fn, kd = _const_fn(n.device_values()), None
        else:
            kd = _reg.get_kernel(n.type, n.device.device_type)
            # a device that counts its memory (a limit, an accelerator) wraps the kernel;
            # any other device returns `fn` itself and costs nothing per run
            fn = n.device.bind_kernel(_kernel_fn(kd, n), n.op, n.n_out, kd.is_async)
            if self._deterministic:
                if kd.is_async and n.type not in ("_Send", "_Recv"):
                    # (a Recv must not block: partitions may take turns on one thread)
                    fn = _determinism.blocking_async(fn)
                recorder = getattr(self.session, "_tw_recorder", None)
                if recorder is not None:  # a session recording its inputs (replay.py)
                    fn = recorder.bind_kernel(fn, n, kd.is_async)
        state = self._op_state.setdefault(n.op, {}) if n.stateful and n.op is not None \
            else {}
        return fn, KernelContext(n.op, n.attrs, n.device, self.session, state), kd

    def context(self, op) -> KernelContext:
        """A context on the default device with no state (a structured loop's step)."""
        return KernelContext(op, {}, self.devices.default, self.session, {})

    def run_for_folding(self, n: _opt.Node, ins: list) -> list:
        """Runs the CPU kernel of `n` on constant inputs (constant folding)."""
        k = _reg.get_kernel(n.type, "CPU")
        if k.is_async:
            raise ValueError("async kernels are not folded")
        ctx = KernelContext(n.op, n.attrs, self.devices.default, self.session, {})
        with np.errstate(all="ignore"):  # as in the executor
            r = _kernel_fn(k, n)(ctx, *ins)
        return [r] if n.n_out == 1 else list(r)


def prune(fetches: Sequence[Tensor], targets: Sequence[Operation],
          feeds: Sequence[Tensor]) -> _opt.StepGraph:
    """The step graph of exactly the ops needed; fed tensors become feed nodes."""
    feed_nodes: Dict[Tensor, _opt.Node] = {}
    for i, t in enumerate(feeds):
        n = _opt.Node(t.op, "_Feed", {}, 1, t.name, True, t.op._device)
        n.feed_index = i
        feed_nodes[t] = n
    nodes: Dict[Operation, _opt.Node] = {}
    order: List[_opt.Node] = list(feed_nodes.values())

    def node_for(op: Operation) -> _opt.Node:
        n = nodes.get(op)
        if n is None:
            op_def = op._op_def
            n = _opt.Node(op, op._type, op._attrs, len(op._outputs), op._name,
                          op_def.stateful if op_def is not None else True, op._device)
            nodes[op] = n
        return n

    def ref(t: Tensor):
        fn = feed_nodes.get(t)
        if fn is not None:
            return fn, 0
        return node_for(t._op), t._value_index

    def fed_placeholder(op: Operation):
        """The feed node replacing a fed Placeholder, which TF1 also puts in place of
        the Placeholder's outgoing control edges; None for any other op."""
        if op._type in ("Placeholder", "PlaceholderV2"):
            return feed_nodes.get(op._outputs[0])
        return None

    # iterative post-order DFS so deep graphs do not hit the recursion limit
    roots = [t._op for t in fetches if t not in feed_nodes] + list(targets)
    visited = set()
    for root in roots:
        if root in visited:
            continue
        stack = [(root, False)]
        while stack:
            op, expanded = stack.pop()
            if expanded:
                n = node_for(op)
                n.inputs = [ref(t) for t in op._inputs]
                n.control_inputs = [fed_placeholder(c) or node_for(c)
                                    for c in op._control_inputs]
                order.append(n)
                continue
            if op in visited:
                continue
            visited.add(op)
            stack.append((op, True))
            for c in reversed(op._control_inputs):
                if c not in visited and fed_placeholder(c) is None:
                    stack.append((c, False))
            for t in reversed(op._inputs):
                if t not in feed_nodes and t._op not in visited:
                    stack.append((t._op, False))
    fetch_refs = [ref(t) for t in fetches]
    target_nodes = [nodes[op] for op in targets]
    for n, _ in fetch_refs:
        n.keep = True
    for n in target_nodes:
        n.keep = True
    return _opt.StepGraph(order, fetch_refs, target_nodes)


def place(sg: _opt.StepGraph, devices: DeviceManager, allow_soft_placement: bool,
          log_device_placement: bool = False, strategy: str = "default") -> None:
    """Assigns each node a Device of the session: runtime/placer.place (colocation
    groups, merged requests, kernels per device type, the strategy for the rest)."""
    _placer.place(sg, devices, allow_soft_placement, log_device_placement, strategy)


def build_plan(fetches: Sequence[Tensor], targets: Sequence[Operation],
               feeds: Sequence[Tensor], binder: KernelBinder, policy: _policy.ExecutionPolicy,
               opts: Dict[str, bool], allow_soft_placement: bool = False) -> Plan:
    """The plan of one step signature (see the module docstring); `opts` are the graph
    optimizations to run (config.optimizations_enabled)."""
    sg = prune(fetches, targets, feeds)
    n_before = len(sg.nodes)
    place(sg, binder.devices, allow_soft_placement,
          *_placer.placement_options(getattr(binder.session, "_config", None)))
    sg = optimize(sg, binder, opts)
    fused = False
    partitioned = len({id(n.device) for n in sg.nodes}) > 1
    if partitioned:
        from tensorweave.runtime import partitioned_plan as _pp
        fused = _pp.runs_fused(sg, binder, policy)
    if partitioned and not fused:  # one step graph per device, Send/Recv between them
        plan = _pp.build_partitioned_plan(sg, binder, policy)
    else:
        executor = _policy.choose_executor(sg, policy)
        if executor in (_policy.SEQUENTIAL, _policy.DATAFLOW):
            plan = lower(sg, binder, policy, executor)
        else:
            plan = _lower_control_flow(sg, binder, policy, executor)
        plan.step_graphs = (sg,)
        plan.fused = fused
    plan.n_nodes_before_opt = n_before
    plan.feeds_to_device = feeds_to_device(sg)
    plan.fetches_to_host = tuple((i, p.device.copy_to_host)
                                 for i, (p, _) in enumerate(sg.fetches)
                                 if not p.device.host_memory)
    return plan


def feeds_to_device(sg: _opt.StepGraph) -> tuple:
    """(feed index, copy) of each feed of an op on a device with memory of its own (a
    GPU): fed values arrive in host memory and are copied there before the step."""
    return tuple((n.feed_index, n.device.copy_from_host) for n in sg.nodes
                 if n.type == "_Feed" and not n.device.host_memory)


def optimize(sg: _opt.StepGraph, binder: KernelBinder, opts: Dict[str, bool]):
    """The placed step graph `sg` after the graph optimizations `opts` asks for (in
    steps with control flow, NoOps and unread nodes are kept). Deterministic: tasks
    that optimize the same placed step graph get the same nodes and names (distributed
    workers rely on it)."""
    # With control flow, a fused chain is joined by plain edges, so it lies in one frame
    # and one branch, and is dead exactly when one of its inputs is; a folded node keeps
    # its inputs' control inputs (a constant in a loop body or branch has the pivot's),
    # so it stays in its frame and branch. Unread nodes are not dropped there.
    plain = not any(n.type in CONTROL_FLOW_OPS for n in sg.nodes)
    if plain and opts.get("prune_noops"):
        sg = _opt.remove_dead_noops(sg)
    if opts.get("cse"):
        sg = _opt.eliminate_common_subexpressions(sg)
    if opts.get("fold"):
        sg = _opt.fold_constants(_opt.materialize_shapes(sg), binder.run_for_folding)
        if plain and opts.get("prune_noops"):
            sg = _drop_unused(sg)
    if opts.get("remap"):
        sg = _remap(sg)
    return _opt.mark_temporaries(sg)


def _remap(sg: _opt.StepGraph) -> _opt.StepGraph:
    sg = _opt.fuse_batch_norm_relu(_opt.fuse_conv_bias_relu(sg, _fusable_conv),
                                   _fusable_batch_norm)
    return _opt.fuse_count_true(sg, _fusable_count)


def _fusable_conv(n: _opt.Node) -> bool:
    """Whether a Conv2D (Conv3D) node may become a _FusedConv2D (_FusedConv3D): float32
    channels last on a CPU device (the fused kernels are NumPy's and oneDNN's)."""
    channels_last = "NHWC" if n.type == "Conv2D" else "NDHWC"
    return n.attrs.get("data_format", channels_last) == channels_last and \
        n.attrs.get("T") == _dt.float32 and n.device.device_type == "CPU"


def _fusable_batch_norm(n: _opt.Node) -> bool:
    """Whether a FusedBatchNormV3 node may become a _FusedBatchNormEx: float32 NHWC or
    NCHW (the fused op's formats) on a CPU device (the fused kernel is NumPy's and
    oneDNN's)."""
    return n.attrs.get("data_format", "NHWC") in ("NHWC", "NCHW") and \
        n.attrs.get("T") == _dt.float32 and n.device.device_type == "CPU"


def _fusable_count(cast: _opt.Node) -> bool:
    """Whether a Cast node and the Sum reading it may become a _CountTrue: a cast of bool
    to a type _CountTrue takes, on a CPU device (the counting kernel is NumPy's)."""
    return cast.attrs.get("SrcT") == _dt.bool and cast.device.device_type == "CPU" and \
        cast.attrs.get("DstT") in _reg.get_op_def("_CountTrue").attrs["T"].allowed


def _lower_control_flow(sg, binder, policy, executor: str) -> Plan:
    if executor == _policy.STRUCTURED:
        try:
            return _structured_plan(_frames.compile_structured(sg, binder))
        except _frames.NotStructured:
            pass  # the tagged executor runs every graph
    return TaggedPlan(_tagged.compile_tagged(sg, binder, policy))


def _structured_plan(parts) -> StructuredPlan:
    frees = free_lists([s.step[2] for s in parts.steps], set(parts.fetch_slots))
    plan = (WaitingStructuredPlan if parts.waits else StructuredPlan)(
        [Step(k, s.step[0], s.step[1], s.step[2], s.step[3], s.step[4], frees[k], s.op,
              loop=s.loop, guarded=s.guarded) for k, s in enumerate(parts.steps)],
        parts.n_slots, parts.feed_slots, parts.fetch_slots)
    plan.dead_fetch = parts.dead_fetch
    return plan


def _drop_unused(sg: _opt.StepGraph) -> _opt.StepGraph:
    """After folding, constants that fed folded nodes may have no reader left."""
    used = {id(n) for n in sg.targets} | {id(n) for n, _ in sg.fetches}
    for n in reversed(sg.nodes):
        if id(n) in used or n.stateful:
            used.add(id(n))
            for p, _ in n.inputs:
                used.add(id(p))
            for c in n.control_inputs:
                used.add(id(c))
    sg.nodes = [n for n in sg.nodes if id(n) in used]
    return sg


def lower(sg: _opt.StepGraph, binder: KernelBinder, policy: _policy.ExecutionPolicy,
          executor: str = _policy.SEQUENTIAL) -> Plan:
    """Flattens a step graph without control flow into slots and steps: a SequentialPlan
    or a DataflowPlan (see their invariants)."""
    nodes = _opt.topological_order(sg.nodes)
    slot_of: Dict[int, int] = {}
    n_slots = 0
    feed_slots: Dict[int, int] = {}
    for n in nodes:
        slot_of[id(n)] = n_slots
        if n.type == "_Feed":
            feed_slots[n.feed_index] = n_slots
        n_slots += n.n_out
    feeds = tuple(feed_slots[i] for i in range(len(feed_slots)))
    fetch_slots = tuple(slot_of[id(n)] + i for n, i in sg.fetches)

    run_nodes = [n for n in nodes if n.type != "_Feed"]
    ins_of = [tuple(slot_of[id(p)] + i for p, i in n.inputs) for n in run_nodes]
    frees = free_lists(ins_of, set(fetch_slots))
    bound = [binder.bind(n) for n in run_nodes]
    weights = [_policy.kernel_weight(kd, _policy.static_cost(n), policy, n.attrs)
               for n, (_, _, kd) in zip(run_nodes, bound)]
    # the pool is used only where heavy kernels can overlap; otherwise a step waiting on
    # a queue still needs the dataflow executor, but its heavy kernels run inline
    pool = executor == _policy.DATAFLOW and _policy.uses_thread_pool(run_nodes, weights,
                                                                      policy)
    steps = [Step(k, fn, ctx, ins_of[k], slot_of[id(n)], n.n_out, frees[k], n.op,
                  cheap=w == _policy.CHEAP, is_async=kd is not None and kd.is_async,
                  on_pool=pool and w != _policy.CHEAP)
             for k, (n, (fn, ctx, kd), w) in enumerate(zip(run_nodes, bound, weights))]
    if executor == _policy.SEQUENTIAL:
        return SequentialPlan(steps, n_slots, feeds, fetch_slots)
    index = {id(n): k for k, n in enumerate(run_nodes)}
    uses = [0] * n_slots
    for ins in ins_of:
        for s in ins:
            uses[s] += 1
    succ: List[set] = [set() for _ in run_nodes]
    pending0 = [0] * len(run_nodes)
    for k, n in enumerate(run_nodes):
        preds = {index[id(p)] for p, _ in n.inputs if id(p) in index}
        preds |= {index[id(c)] for c in n.control_inputs if id(c) in index}
        pending0[k] = len(preds)
        for p in preds:
            succ[p].add(k)
    return DataflowPlan(steps, n_slots, feeds, fetch_slots,
                        tuple(tuple(sorted(s)) for s in succ), pending0, uses)


def free_lists(ins_per_step, keep: set) -> List[tuple]:
    """For each step, the slots whose last reader it is (never those in `keep`)."""
    last: Dict[int, int] = {}
    for k, ins in enumerate(ins_per_step):
        for s in ins:
            last[s] = k
    frees: List[list] = [[] for _ in ins_per_step]
    for s, k in last.items():
        if s not in keep:
            frees[k].append(s)
    return [tuple(f) for f in frees]


def _const_fn(values):
    if len(values) == 1:
        v = values[0]
        return lambda ctx: v
    vs = tuple(values)
    return lambda ctx: vs


def _unwrap(r):
    return r[0] if isinstance(r, (list, tuple)) else r


def _kernel_fn(kd, n: _opt.Node):
    """The kernel function the executor calls for node `n`."""
    if kd.in_place is not None and _opt.IN_PLACE_ATTR in n.attrs:
        return kd.in_place
    op_def = n.op._op_def if n.op is not None else None
    if n.n_out == 1 and op_def is not None and not op_def.simple_outputs and \
            not kd.bare_single:
        return _single_of_list(kd.fn, kd.is_async)
    return kd.fn


def _single_of_list(fn, is_async: bool):
    """The kernel of an op with list outputs ("N * T") that has exactly one output in
    this graph: the kernel returns a one-element list, the executor wants the value."""
    if is_async:
        def run_async(ctx, state, done, *args):
            fn(ctx, state, lambda result=None, exc=None: done(_unwrap(result), exc), *args)
        return run_async
    return lambda ctx, *args: _unwrap(fn(ctx, *args))
