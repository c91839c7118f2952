"""Compiling one step signature (fetches, feeds, targets) into an immutable Plan.

build_plan: prune (§3.2: only what the fetches and targets need, feeds cut the graph)
-> place (devices, colocation with resources) -> optimize (runtime/optimizer.py) ->
lower into flat arrays the executor walks without touching the graph.

A Plan is immutable and shared by concurrent runs; everything mutable during a run
lives in the executor's per-run locals.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import registry as _reg
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.runtime import optimizer as _opt
from tensorweave.runtime.devices import Device, DeviceManager

# Control-flow op types: a plan holding any of them runs on the tagged executor.
CONTROL_FLOW_OPS = frozenset({"Switch", "Merge", "Enter", "Exit", "NextIteration",
                              "LoopCond", "RefSwitch", "RefMerge", "RefEnter",
                              "RefNextIteration", "ControlTrigger"})


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
        self.xp = device.xp
        self.resources = device.resources
        self.session = session
        self.state = state
        self.node_name = op.name if op is not None else "<folded>"


class Step:
    """One lowered node (immutable)."""

    __slots__ = ("index", "fn", "ctx", "ins", "out", "n_out", "free", "cheap", "is_async",
                 "op", "cost")

    def __init__(self, index, fn, ctx, ins, out, n_out, free, cheap, is_async, op, cost):
        self.index, self.fn, self.ctx, self.ins, self.out = index, fn, ctx, ins, out
        self.n_out, self.free, self.cheap, self.is_async = n_out, free, cheap, is_async
        self.op, self.cost = op, cost


class Plan:
    """The compiled form of one step signature.

    Invariants:
      * `steps` is a topological order; step i reads only slots written by earlier
        steps or feed slots, and writes slots [out, out + n_out).
      * `free` of a step lists the slots whose last reader is that step (never fetch
        slots), so the sequential executor drops dead values right away.
      * `succ`/`pending0`/`uses0` describe the same graph for the dataflow executor.
    """

    def __init__(self):
        self.steps: Tuple[Step, ...] = ()
        self.flat: tuple = ()
        self.ops: tuple = ()  # the op of each step (error messages)
        self.n_slots = 0
        self.feed_slots: Tuple[int, ...] = ()
        self.fetch_slots: Tuple[int, ...] = ()
        self.parallel = False
        self.succ: Tuple[Tuple[int, ...], ...] = ()
        self.pending0: List[int] = []
        self.uses0: List[int] = []
        self.stamp = 0
        self.n_nodes_before_opt = 0
        self.executor = None
        self.dead_fetch: Tuple[int, ...] = ()  # fetches a cond may leave dead
        self.tagged = None  # control-flow program of the tagged executor
        # `flat` with each step's is_async, when no step goes to the thread pool: the
        # dataflow executor then runs the steps in order until a kernel waits
        self.inline_steps: Optional[tuple] = None


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
                n.control_inputs = [node_for(c) for c in op._control_inputs]
                order.append(n)
                continue
            if op in visited:
                continue
            visited.add(op)
            stack.append((op, True))
            for c in reversed(op._control_inputs):
                if c not in visited:
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


def place(sg: _opt.StepGraph, devices: DeviceManager, allow_soft_placement: bool) -> None:
    """Assigns each node a device of the session; raises InvalidArgumentError for a
    constraint no device meets (unless soft placement)."""
    for n in sg.nodes:
        spec = n.device
        if not spec:
            n.device = devices.default
            continue
        found = devices.find(spec)
        if not found:
            # a resource user follows its resource; otherwise soft placement may rescue
            if allow_soft_placement:
                n.device = devices.default
                continue
            raise errors.InvalidArgumentError(
                None, n.op, "Cannot assign a device for operation %s: Operation was "
                "explicitly assigned to %s but available devices are [ %s ]. Make sure the "
                "device specification refers to a valid device." % (
                    n.name, spec, ", ".join(d.name for d in devices.devices)))
        n.device = found[0]
    # ops consuming a resource handle run where the resource lives
    for n in sg.nodes:
        for p, _ in n.inputs:
            if p.type in ("VarHandleOp",) and p.device is not n.device:
                n.device = p.device


def build_plan(session, fetches: Sequence[Tensor], targets: Sequence[Operation],
               feeds: Sequence[Tensor], opts: Dict[str, bool]) -> Plan:
    sg = prune(fetches, targets, feeds)
    n_before = len(sg.nodes)
    place(sg, session._device_manager, session._allow_soft_placement)
    if any(n.type in CONTROL_FLOW_OPS for n in sg.nodes):
        return _build_control_flow_plan(session, sg, n_before)
    if opts.get("prune_noops"):
        sg = _opt.remove_dead_noops(sg)
    if opts.get("cse"):
        sg = _opt.eliminate_common_subexpressions(sg)
    if opts.get("fold"):
        sg = _opt.fold_constants(sg, lambda n, ins: _run_for_folding(session, n, ins))
        if opts.get("prune_noops"):
            sg = _drop_unused(sg)
    plan = lower(session, sg)
    plan.n_nodes_before_opt = n_before
    return plan


def _build_control_flow_plan(session, sg, n_before: int) -> Plan:
    """Steps with control flow: the structured executor when the step is cheap and
    synchronous, else the tagged executor (runtime/frames.py, runtime/tagged.py)."""
    from tensorweave.runtime import frames, tagged

    def make_step(n):
        return _step_parts(session, n)
    plan = None
    forced = os.environ.get("TW_EXECUTOR") == "tagged"  # tests run both executors
    if not forced and not _needs_tagged(session, sg):
        try:
            plan = frames.compile_structured(session, sg, make_step)
        except frames.NotStructured:
            plan = None
    if plan is None:
        plan = tagged.compile_tagged(session, sg, make_step)
    plan.n_nodes_before_opt = n_before
    return plan


def _needs_tagged(session, sg) -> bool:
    """Asynchronous kernels wait on the tagged executor; heavy kernels overlap there
    (across loop iterations too) when there are threads to overlap them on."""
    heavy = 0
    for n in sg.nodes:
        if n.type in ("_Feed", "Const") or n.type in CONTROL_FLOW_OPS:
            continue
        kd = _reg.get_kernel(n.type, n.device.device_type)
        if kd.is_async:
            return True
        if _cost(n) >= _PARALLEL_MIN_FLOPS:
            heavy += 1
    return heavy >= 1 and session._inter_op_threads >= 2 and _frames_parallel(sg)


def _frames_parallel(sg) -> bool:
    # a heavy kernel inside a loop with parallel_iterations > 1 can overlap with itself
    return any(n.type == "Enter" and int(n.attrs.get("parallel_iterations", 10)) > 1
               for n in sg.nodes)


def _run_for_folding(session, n: _opt.Node, ins: list) -> list:
    k = _reg.get_kernel(n.type, "CPU")
    if k.is_async:
        raise ValueError("async kernels are not folded")
    ctx = KernelContext(n.op, n.attrs, session._device_manager.default, session, {})
    with np.errstate(all="ignore"):  # as in the executor
        r = _kernel_fn(k, n)(ctx, *ins)
    return [r] if n.n_out == 1 else list(r)


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


def _const_fn(values):
    if len(values) == 1:
        v = values[0]
        return lambda ctx: v
    vs = tuple(values)
    return lambda ctx: vs


def _feed_fn(ctx):  # never called: feed slots are written by the executor
    raise AssertionError("feed nodes do not run")


def lower(session, sg: _opt.StepGraph) -> Plan:
    """Flattens the step graph into slots and steps (see Plan's invariants)."""
    nodes = _opt.topological_order(sg.nodes)
    plan = Plan()
    slot_of: Dict[int, int] = {}
    n_slots = 0
    feed_slots: Dict[int, int] = {}
    for n in nodes:
        slot_of[id(n)] = n_slots
        if n.type == "_Feed":
            feed_slots[n.feed_index] = n_slots
        n_slots += n.n_out
    plan.n_slots = n_slots
    plan.feed_slots = tuple(feed_slots[i] for i in range(len(feed_slots)))
    plan.fetch_slots = tuple(slot_of[id(n)] + i for n, i in sg.fetches)

    run_nodes = [n for n in nodes if n.type != "_Feed"]
    index = {id(n): k for k, n in enumerate(run_nodes)}
    ins_of = [tuple(slot_of[id(p)] + i for p, i in n.inputs) for n in run_nodes]
    uses = [0] * n_slots
    for ins in ins_of:
        for s in ins:
            uses[s] += 1
    frees = free_lists(ins_of, set(plan.fetch_slots))

    parts = [_step_parts(session, n) for n in run_nodes]
    succ: List[set] = [set() for _ in run_nodes]
    pending0 = [0] * len(run_nodes)
    for k, n in enumerate(run_nodes):
        preds = {index[id(p)] for p, _ in n.inputs if id(p) in index}
        preds |= {index[id(c)] for c in n.control_inputs if id(c) in index}
        pending0[k] = len(preds)
        for p in preds:
            succ[p].add(k)
    plan.succ = tuple(tuple(sorted(s)) for s in succ)
    plan.pending0 = pending0
    plan.uses0 = uses
    overlap = _heavy_overlap([c[4] for c in parts], plan.succ, session)
    # Without two heavy kernels that can overlap, the pool would only add a hand-off per
    # heavy kernel (a step waiting on a queue still needs the dataflow executor, but its
    # matmuls are cheaper run inline than sent to a worker).
    set_steps(plan, [Step(k, fn, ctx, ins_of[k], slot_of[id(n)], n.n_out, frees[k],
                          cheap or not overlap, is_async, n.op, cost)
                     for k, (n, (fn, ctx, cheap, is_async, cost))
                     in enumerate(zip(run_nodes, parts))])
    plan.parallel = overlap or any(s.is_async for s in plan.steps)
    return plan


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


def set_steps(plan: Plan, steps) -> None:
    """Installs the lowered steps and the flat tuples the sequential loop walks."""
    plan.steps = tuple(steps)
    plan.flat = tuple((s.fn, s.ctx, s.ins, s.out, s.n_out, s.free) for s in plan.steps)
    plan.ops = tuple(s.op for s in plan.steps)
    plan.inline_steps = tuple(f + (s.is_async,) for f, s in zip(plan.flat, plan.steps)) \
        if all(s.cheap or s.is_async for s in plan.steps) else None


def _step_parts(session, n: _opt.Node):
    """(kernel fn, KernelContext, cheap, is_async, FLOP estimate) of one node."""
    if n.type == "Const":
        fn, cheap, is_async = _const_fn(n.value if n.value is not None
                                        else [n.attrs["value"]]), True, False
    else:
        kd = _reg.get_kernel(n.type, n.device.device_type)
        fn, cheap, is_async = _kernel_fn(kd, n), kd.cheap, kd.is_async
    state = session._op_state.setdefault(n.op, {}) if n.stateful and n.op is not None \
        else {}
    ctx = KernelContext(n.op, n.attrs, n.device, session, state)
    return fn, ctx, cheap, is_async, _cost(n)


def _unwrap(r):
    return r[0] if isinstance(r, (list, tuple)) else r


def _kernel_fn(kd, n: _opt.Node):
    """The kernel function the executor calls for node `n`."""
    op_def = n.op._op_def if n.op is not None else None
    if n.n_out == 1 and op_def is not None and not op_def.simple_outputs:
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


def _cost(n: _opt.Node) -> float:
    """Rough FLOP estimate from static shapes (0 when unknown or trivial)."""
    op = n.op
    if op is None or n.type not in ("MatMul", "BatchMatMulV2", "Conv2D",
                                    "Conv2DBackpropInput", "Conv2DBackpropFilter"):
        return 0.0
    try:
        if n.type == "MatMul":
            a, b = op.inputs[0].shape.as_list(), op.inputs[1].shape.as_list()
            m = a[1] if n.attrs.get("transpose_a") else a[0]
            kk = a[0] if n.attrs.get("transpose_a") else a[1]
            nn = b[0] if n.attrs.get("transpose_b") else b[1]
            return 2.0 * m * kk * nn
        if n.type == "BatchMatMulV2":
            return 2.0 * (op.outputs[0].shape.num_elements() or 0) * \
                (op.inputs[0].shape.as_list()[-2 if n.attrs.get("adj_x") else -1] or 0)
        # convolutions: 2 * (elements of the conv output) * (filter height * width * in)
        if n.type == "Conv2DBackpropFilter":
            filt, conv_out = op.outputs[0].shape, op.inputs[2].shape
        elif n.type == "Conv2DBackpropInput":
            filt, conv_out = op.inputs[1].shape, op.inputs[2].shape
        else:
            filt, conv_out = op.inputs[1].shape, op.outputs[0].shape
        kh, kw, cin = filt.as_list()[:3]
        return 2.0 * (conv_out.num_elements() or 0) * (kh or 0) * (kw or 0) * (cin or 0)
    except (TypeError, ValueError, IndexError):
        return 0.0


_PARALLEL_MIN_FLOPS = 2e8


def _heavy_overlap(costs, succ, session) -> bool:
    """Whether two heavy kernels can overlap on the thread pool: heavy nodes at the same
    dataflow depth are independent of each other."""
    if session._inter_op_threads < 2:
        return False
    heavy = [k for k, c in enumerate(costs) if c >= _PARALLEL_MIN_FLOPS]
    if len(heavy) < 2:
        return False
    depth = [0] * len(costs)
    for k in range(len(costs)):
        for j in succ[k]:
            if depth[k] + 1 > depth[j]:
                depth[j] = depth[k] + 1
    levels = [depth[k] for k in heavy]
    return len(set(levels)) < len(levels)
