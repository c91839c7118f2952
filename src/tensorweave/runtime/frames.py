"""Lowering steps with control flow: frames, deadness, and the structured fast path.

A step holding Switch/Merge/Enter/Exit/NextIteration ops is a dataflow graph with
cycles. Values carry a tag (frame, iteration) and may be *dead* (EuroSys 2018 §4.3,
Figure 5): a Switch sends its input to one output and a dead token to the other; a node
with a dead input does not run and sends dead tokens on; Merge forwards whichever input
is live; Enter moves a value into a child frame, NextIteration into the next iteration,
Exit back to the parent frame.

Two executions of that semantics share the analysis in this module:

* the structured executor (this module): each loop frame becomes one compound step of
  its parent frame, running its iterations one after another with the cond part, the
  predicate test and the body as flat step lists over one value array; the loop
  machinery (Merge/Switch/NextIteration/LoopCond, Identity forwarding) costs slot
  aliasing at compile time and nothing per iteration. Dead tokens exist only where a
  cond can make them (`DEAD` in a slot; steps downstream of a cond Switch check for it).
  This is one valid schedule of the dataflow graph - iterations in order - and is the
  fast path for steps of cheap kernels. A step's one asynchronous kernel (a dequeue in
  a loop body, or feeding a loop) waits in place, on the calling thread, when the
  policy found that nothing else in the step could end its wait
  (policy.waits_in_place). A traced run uses a second variant of each loop function,
  compiled the first time a traced run needs it, that records every op of every
  iteration with its frame name and iteration number.
* the tagged executor (runtime/tagged.py): the general token-passing executor with
  per-frame, per-iteration state, `parallel_iterations`, non-strict iterations, the
  thread pool and asynchronous kernels. Used when the step has heavy kernels that can
  overlap or kernels that must wait while others of the step run.
"""
from __future__ import annotations

import itertools
import linecache
import threading
import time
import weakref
from typing import Dict, List, NamedTuple, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import optimizer as _opt
from tensorweave.runtime import provenance as _provenance
from tensorweave.runtime import executor as _ex
from tensorweave.runtime.executor import kernel_error
from tensorweave.runtime.values import DEAD, loop_value


class NotStructured(Exception):
    """The graph has control flow the structured executor does not compile (the tagged
    executor runs it)."""


class Frame:
    """A loop frame of the step (static): its name, parent, parallel_iterations and
    the nodes whose values live in it."""

    def __init__(self, name: str, parent: Optional["Frame"]):
        self.name = name
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.parallel_iterations = 10
        self.members: list = []   # nodes whose outputs live in this frame, in DAG order
        self.enters: list = []
        self.exits: list = []
        self.children: List["Frame"] = []

    def __repr__(self):
        return "<Frame %s>" % (self.name or "root")


def is_back_edge(node, src) -> bool:
    return node.type in ("Merge", "RefMerge") and src.type in ("NextIteration",
                                                               "RefNextIteration")


def analyze(nodes: list):
    """(DAG order without back edges, {id(node): Frame}, root Frame).

    Raises:
      InvalidArgumentError: a node whose inputs come from different frames.
    """
    index = {id(n): i for i, n in enumerate(nodes)}
    idx = _opt.stable_topological_indices(
        [{index[id(p)] for p, _ in n.inputs if not is_back_edge(n, p)}
         | {index[id(c)] for c in n.control_inputs} for n in nodes])
    if idx is None:
        raise errors.InvalidArgumentError(
            None, None, "The step graph has a cycle that is not a while loop (a "
            "NextIteration -> Merge back edge).")
    order = [nodes[i] for i in idx]
    root = Frame("", None)
    children: Dict[tuple, Frame] = {}
    frame_of: Dict[int, Frame] = {}
    for n in order:
        data = [p for p, _ in n.inputs if not is_back_edge(n, p)]
        if n.type in ("Enter", "RefEnter"):
            parent = frame_of[id(data[0])]
            key = (id(parent), n.attrs["frame_name"])
            f = children.get(key)
            if f is None:
                f = children[key] = Frame(n.attrs["frame_name"], parent)
                f.parallel_iterations = int(n.attrs.get("parallel_iterations", 10))
                parent.children.append(f)
            f.enters.append(n)
        elif n.type in ("Exit", "RefExit"):
            inner = frame_of[id(data[0])]
            if inner.parent is None:
                raise errors.InvalidArgumentError(
                    None, n.op, "Exit node %s is not inside a loop frame." % n.name)
            f = inner.parent
            inner.exits.append(n)
        else:
            srcs = data or list(n.control_inputs)
            f = frame_of[id(srcs[0])] if srcs else root
            if n.type not in ("Merge", "RefMerge", "ControlTrigger"):
                for p in data[1:]:
                    if frame_of[id(p)] is not f:
                        raise errors.InvalidArgumentError(
                            None, n.op, "%s has inputs from different frames: %s is in "
                            "frame '%s' and %s in frame '%s'." % (
                                n.name, data[0].name, f.name or "root", p.name,
                                frame_of[id(p)].name or "root"))
        frame_of[id(n)] = f
        f.members.append(n)
    return order, frame_of, root


# --- the structured executor -------------------------------------------------------------


def dead_aware(fn, n_data: int, n_out: int, live_marker: bool):
    """`fn` for a node that may receive dead inputs (data or control liveness values
    after its `n_data` data inputs): dead in, dead out, and the kernel does not run."""
    dead_out = DEAD if (n_out == 1 or live_marker) else (DEAD,) * n_out

    def run(ctx, *args):
        for a in args:
            if a is DEAD:
                return dead_out
        r = fn(ctx, *args[:n_data]) if len(args) != n_data else fn(ctx, *args)
        return True if live_marker else r
    return run


class _Slots:
    """Value-list slots handed out in order: `alloc(n)` reserves n contiguous ones."""

    __slots__ = ("n",)

    def __init__(self):
        self.n = 0

    def alloc(self, n: int) -> int:
        s = self.n
        self.n += max(n, 0)
        return s


class LoweredStep(NamedTuple):
    """One compiled step of a frame: `step` is `(fn, ctx, ins, out, n_out)`; `loop` the
    LoopProgram when the step runs a child loop; `guarded` whether the step may receive
    dead inputs (then `fn` skips the kernel and returns dead outputs)."""
    step: tuple
    op: object
    loop: Optional["LoopProgram"]
    guarded: bool


_loop_ids = itertools.count(1)


class LoopProgram:
    """One loop frame compiled for the structured executor (immutable; runs are
    re-entrant: each run has its own locals).

    The whole loop - enter values, presets, the cond steps, the predicate test, the body
    steps and the carry of loop variables - is compiled into one Python function whose
    slots are local variables (`compile_runner`): per step one call and one store, no
    interpretation of step tuples. A kernel error is attributed to its step's op from
    the line of the generated code it was raised on, with the iteration it failed in
    (`_it`, one local increment per iteration; runtime/provenance.py). The generated source is registered
    with `linecache` (under `filename`), so tracebacks through it show its lines.

    `run_traced`, the traced variant (a record per op per iteration, nested loops
    traced too), is generated the first time a traced run needs it.
    """

    def __init__(self, frame: Frame):
        self.frame = frame
        self.n_slots = 0
        self.presets: List[tuple] = []        # (slot, value) written at loop start
        self.enter_slots: List[int] = []      # slot of each Enter, in super-step input order
        self.merge_init: List[tuple] = []     # (merge slot, enter slot)
        self.carry: List[tuple] = []          # (merge slot, NextIteration input slot)
        self.cond_steps: tuple = ()           # (fn, ctx, ins, out, n_out)
        self.body_steps: tuple = ()
        self.ops: tuple = ()                  # op of each cond step, then each body step
        self.loops: tuple = ()                # per step: the child LoopProgram or None
        self.guarded: tuple = ()              # per step: may receive dead inputs
        self.pred_slot = -1
        self.exit_slots: List[int] = []
        self.run = None                       # fn(ctx, *enter_values) -> exit value(s)
        self.source = ""                      # the generated code of `run`
        self.filename = ""                    # its name in tracebacks and linecache
        self._traced = None                   # fn(ctx, trace, *enter_values), lazily
        self._traced_lock = threading.Lock()

    def __call__(self, ctx, *enter_values):
        return self.run(ctx, *enter_values)

    def compile_runner(self) -> None:
        """Generates `run` from the compiled parts (see the class docstring)."""
        self.run, self.source, self.filename = self._generate(traced=False)

    def run_traced(self, ctx, trace, *enter_values):
        """`run` recording each op of each iteration into `trace` (a StepTrace)."""
        fn = self._traced
        if fn is None:
            with self._traced_lock:
                if self._traced is None:
                    self._traced = self._generate(traced=True)[0]
                fn = self._traced
        return fn(ctx, trace, *enter_values)

    def call_traced(self, ctx, trace, args, guarded: bool):
        """The loop step's traced call: dead outputs for a dead input when `guarded`
        (as `dead_aware` does for `run`), else `run_traced`."""
        if guarded:
            for a in args:
                if a is DEAD:
                    n = len(self.exit_slots)
                    return DEAD if n == 1 else (DEAD,) * n
        return self.run_traced(ctx, trace, *args)

    def _generate(self, traced: bool):
        """(run function, source, filename) of the untraced or traced variant."""
        args: Dict[str, object] = {}
        lines: List[str] = []
        line_step: Dict[int, int] = {}
        written = set(self.enter_slots) | {sl for sl, _ in self.presets} | \
            {m for m, _ in self.merge_init}
        read = set()

        def emit_steps(steps, first: int, indent: str):
            for k, (fn, ctx, ins, out, n_out) in enumerate(steps, first):
                args["f%d" % k], args["c%d" % k] = fn, ctx
                read.update(ins)
                outs = ", ".join("v%d" % (out + j) for j in range(n_out))
                child = self.loops[k] if traced else None
                if child is not None:
                    args["f%d" % k] = _traced_loop_step(child, self.guarded[k])
                    call = "f%d(c%d, _tr%s)" % (k, k, "".join(", v%d" % i for i in ins))
                else:
                    call = "f%d(c%d%s)" % (k, k, "".join(", v%d" % i for i in ins))
                if n_out == 1:
                    call = "v%d = %s" % (out, call)
                elif n_out:
                    call = "%s, = %s" % (outs, call)
                written.update(range(out, out + n_out))
                if traced and child is None:
                    lines.append(indent + "_t = _clock()")
                lines.append(indent + call)
                line_step[len(lines)] = k
                if traced and child is None:
                    lines.append(indent + "_rec(_tr, %d, _t, _clock(), (%s), _it)"
                                 % (k, outs + "," if outs else ""))

        enters = ["e%d" % j for j in range(len(self.enter_slots))]
        lines.append("def make(%s):" % ", ".join(
            ["_fail", "_clock", "_rec"] + ["p%d" % sl for sl, _ in self.presets] +
            ["f%d, c%d" % (k, k) for k in range(len(self.ops))]))
        lines.append("    def run(%s):" % ", ".join(["ctx"] + (["_tr"] if traced else [])
                                                    + enters))
        init_at = len(lines)
        for sl, _ in self.presets:
            lines.append("        v%d = p%d" % (sl, sl))
        for sl, e in zip(self.enter_slots, enters):
            lines.append("        v%d = _loop_value(%s)" % (sl, e))
        for m, e in self.merge_init:
            lines.append("        v%d = v%d" % (m, e))
        lines.append("        _it = 0")  # the iteration, for errors (and the trace)
        lines.append("        try:")
        lines.append("            while True:")
        emit_steps(self.cond_steps, 0, " " * 16)
        lines.append("                if not v%d:" % self.pred_slot)
        lines.append("                    break")
        emit_steps(self.body_steps, len(self.cond_steps), " " * 16)
        if self.carry:
            lines.append("                %s = %s" % (
                ", ".join("v%d" % m for m, _ in self.carry),
                ", ".join("v%d" % n for _, n in self.carry)))
            read.update(n for _, n in self.carry)
        lines.append("                _it += 1")
        lines.append("        except BaseException as e:")
        lines.append("            err = _fail(e, _it)")
        lines.append("            if err is e:")
        lines.append("                raise")
        lines.append("            raise err from e")
        read.update(self.exit_slots)
        read.add(self.pred_slot)
        if len(self.exit_slots) == 1:
            lines.append("        return v%d" % self.exit_slots[0])
        else:
            lines.append("        return (%s)" % "".join("v%d, " % sl for sl in self.exit_slots))
        lines.append("    return run")
        # slots read but written by no step (e.g. a Merge's value_index) start as None
        unset = ["        v%d = None" % sl for sl in sorted(read - written)]
        lines[init_at:init_at] = unset
        line_step = {ln + len(unset) if ln > init_at else ln: k
                     for ln, k in line_step.items()}
        ops, loops, frame_name = self.ops, self.loops, self.frame.name

        def fail(e: BaseException, iteration: int) -> BaseException:
            # the failing step's op, with this loop's iteration (runtime/provenance.py);
            # an error of a nested loop gets this loop's level added
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                return e
            k = line_step.get(e.__traceback__.tb_lineno)
            if k is None:
                return e
            if loops[k] is not None:
                return _provenance.add_loop_level(e, frame_name, iteration)
            return kernel_error(ops[k], e, ((frame_name, iteration),))
        source = "\n".join(lines) + "\n"
        filename = "<tensorweave while loop %s #%d%s>" % (
            self.frame.name, next(_loop_ids), " traced" if traced else "")
        register_source(self, filename, source)
        ns: Dict[str, object] = {"_loop_value": loop_value}
        exec(compile(source, filename, "exec"), ns)
        for sl, v in self.presets:
            args["p%d" % sl] = v
        rec = _recorder(self) if traced else None
        return ns["make"](fail, time.perf_counter, rec, **args), source, filename


def register_source(owner, filename: str, source: str) -> None:
    """Makes `source` the text of `filename` for tracebacks (linecache) while `owner`
    lives. linecache.checkcache keeps entries whose mtime is None."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(owner, linecache.cache.pop, filename, None)


def _recorder(prog: LoopProgram):
    """The traced loop's `_rec(trace, k, t0, t1, outputs, iteration)`: one record for
    step k of `prog` unless it was skipped for a dead input."""
    ops, guarded, name = prog.ops, prog.guarded, prog.frame.name
    devices = tuple(st[1].device for st in prog.cond_steps + prog.body_steps)

    def rec(trace, k, t0, t1, outs, iteration):
        if guarded[k] and all(v is DEAD for v in outs):
            return
        trace.record(ops[k], devices[k], t0, t1, outs, name, iteration)
    return rec


def _traced_loop_step(child: LoopProgram, guarded: bool):
    def run(ctx, trace, *args):
        return child.call_traced(ctx, trace, args, guarded)
    return run


def const_value(n, port: int = 0):
    """The value of output `port` of a Const preset in a loop frame (a folded node of
    several outputs is a Const of several), as its device keeps it
    (Node.device_values: a GPU's copy, not the host value). A numeric scalar on a
    host-memory device becomes a NumPy scalar (what ufuncs return anyway): arithmetic
    on NumPy scalars takes NumPy's scalar fast path, on 0-d arrays a full ufunc call
    (loop counters run such ops every iteration)."""
    v = n.device_values()[port]
    if type(v) is np.ndarray and v.ndim == 0 and v.dtype.kind in "biufc":
        return v[()]
    return v


class StructuredCompiler:
    """Compiles the frames of one step into flat steps (see the module docstring)."""

    def __init__(self, binder, frame_of, root: Frame):
        self.binder = binder   # plan.KernelBinder: node -> (fn, ctx, kernel def)
        self.frame_of = frame_of
        self.root = root
        self.guard: Dict[int, frozenset] = {}
        self.waits = False     # an asynchronous kernel waits in place (the plan is then
        # a plan.WaitingStructuredPlan)

    # -- helpers shared by the root frame and loop frames --
    def _frame_items(self, frame: Frame):
        """The frame's members with each child loop collapsed to one item, in a
        topological order. Items: ("node", node) or ("loop", child Frame)."""
        exit_owner = {}
        for c in frame.children:
            for x in c.exits:
                exit_owner[id(x)] = c
        inner_of = {}

        def collect(f: Frame, owner: Frame):
            for m in f.members:
                inner_of[id(m)] = owner
            for x in f.exits:
                inner_of.setdefault(id(x), owner)
            for c in f.children:
                collect(c, owner)
        for c in frame.children:
            collect(c, c)
        items = []
        key_of = {}
        for m in frame.members:
            if id(m) in exit_owner:
                continue
            key_of[id(m)] = len(items)
            items.append(("node", m))
        for c in frame.children:
            key_of[id(c)] = len(items)
            items.append(("loop", c))

        deps = [set() for _ in items]
        for k, (kind, x) in enumerate(items):
            if kind == "node":
                srcs = [p for p, _ in x.inputs if not is_back_edge(x, p)] + \
                    list(x.control_inputs)
            else:
                srcs = [e.inputs[0][0] for e in x.enters]
                for sub in _all_nodes(x):
                    for c in sub.control_inputs:
                        if inner_of.get(id(c)) is not x:
                            srcs.append(c)
            for p in srcs:
                c = exit_owner.get(id(p))
                j = key_of.get(id(c) if c is not None else id(p))
                if j is not None and j != k:
                    deps[k].add(j)
        idx = _opt.stable_topological_indices(deps)
        if idx is None:
            raise NotStructured("a loop's inputs depend on its own outputs")
        return [items[k] for k in idx], exit_owner

    def compile_frame_steps(self, frame: Frame, items, slot_of, alloc, loop_roles):
        """Flat steps for `items` of one frame. `slot_of` maps (id(node), port) -> slot;
        `alloc(n)` reserves n contiguous slots. Returns a list of LoweredStep.

        `self.guard[slot]` is the set of (predicate slot, branch) conditions under which
        the value in `slot` is live (absent: always live). Only steps with a non-empty
        guard check for dead inputs; a Merge of both sides of one predicate is live again.
        """
        guard = self.guard
        steps = []
        for kind, x in items:
            if kind == "loop":
                prog = self.compile_loop(x)
                base = alloc(len(x.exits))
                for j, e in enumerate(x.exits):
                    slot_of[(id(e), 0)] = base + j
                ins = tuple(slot_of[(id(e.inputs[0][0]), e.inputs[0][1])] for e in x.enters)
                g = _union(guard.get(s) for s in ins)
                fn = prog.run
                if g:
                    fn = dead_aware(prog.run, len(ins), len(x.exits), False)
                    for j in range(len(x.exits)):
                        guard[base + j] = g
                op = x.enters[0].op if x.enters else None
                ctx = self.binder.context(op)
                steps.append(LoweredStep((fn, ctx, ins, base, len(x.exits)), op, prog,
                                         bool(g)))
                continue
            n = x
            if loop_roles.get(id(n)) is not None:
                continue  # loop machinery: handled by the LoopProgram
            if n.type == "Identity" and not n.control_inputs:
                src = n.inputs[0]
                slot_of[(id(n), 0)] = slot_of[(id(src[0]), src[1])]
                continue
            ins = [slot_of[(id(p), i)] for p, i in n.inputs]
            ctrl = []
            for c in n.control_inputs:
                for cs in self._live_slots(c, slot_of):
                    if guard.get(cs) and cs not in ctrl:
                        ctrl.append(cs)
            fn, ctx, kd = self.binder.bind(n)
            if kd is not None and kd.is_async:
                if n.type in ("_Send", "_Recv"):
                    raise NotStructured("partition transfer %s" % n.name)
                # the policy let this step's one asynchronous kernel wait in place
                # (policy.waits_in_place); the plan publishes the step's StepState
                fn = _ex.waiting_in_place(fn)
                self.waits = True
            n_out = n.n_out
            if n.type in ("Merge", "RefMerge"):
                base = alloc(n_out)
                g = _merge_guard([guard.get(s) for s in ins])
                if g:
                    guard[base] = guard[base + 1] = g
            elif n.type == "ControlTrigger":
                # always live and does nothing: the step order already runs it after its
                # control inputs and before its control outputs, so no step is emitted
                alloc(max(n_out, 1))
                continue
            else:
                g = _union([guard.get(s) for s in ins] + [guard.get(s) for s in ctrl])
                live = n_out == 0
                base = alloc(max(n_out, 1))
                if g:
                    ins = ins + ctrl
                    fn = dead_aware(fn, len(n.inputs), n_out, live)
                    if live:
                        n_out = 1
                        slot_of[("live", id(n))] = base
                    for j in range(max(n_out, 1)):
                        guard[base + j] = g
                if n.type in ("Switch", "RefSwitch"):
                    p = ins[1]
                    guard[base] = g | {(p, 0)}
                    guard[base + 1] = g | {(p, 1)}
                    # a control edge from a Switch carries the liveness of the Switch
                    # itself (live whenever its inputs are), not that of one side
                    slot_of[("live_ins", id(n))] = tuple(s for s in ins if guard.get(s))
            for j in range(n.n_out):
                slot_of[(id(n), j)] = base + j
            steps.append(LoweredStep((fn, ctx, tuple(ins), base, n_out), n.op, None,
                                     bool(g) and n.type not in ("Merge", "RefMerge")))
        return steps

    def _live_slots(self, c, slot_of) -> tuple:
        """The slots whose values are all live exactly when the control source `c` is
        live (none: `c` is always live here)."""
        ins = slot_of.get(("live_ins", id(c)))  # a Switch: live when its inputs are
        if ins is not None:
            return ins
        s = slot_of.get((id(c), 0))
        if s is None:
            s = slot_of.get(("live", id(c)))
        return () if s is None else (s,)

    def compile_loop(self, frame: Frame) -> LoopProgram:
        prog = LoopProgram(frame)
        slot_of: Dict[tuple, int] = {}
        slots = _Slots()
        alloc = slots.alloc
        saved_guard = self.guard
        self.guard = {}
        try:
            for e in frame.enters:
                s = alloc(1)
                slot_of[(id(e), 0)] = s
                prog.enter_slots.append(s)
            loop_conds = [m for m in frame.members if m.type == "LoopCond"]
            if len(loop_conds) != 1:
                raise NotStructured("frame %s has %d LoopCond nodes" % (frame.name,
                                                                      len(loop_conds)))
            lc = loop_conds[0]
            roles: Dict[int, str] = {id(lc): "loopcond"}
            merges = []
            for m in frame.members:
                if m.type in ("Merge",) and len(m.inputs) == 2 and \
                        m.inputs[0][0].type == "Enter" and not \
                        m.inputs[0][0].attrs.get("is_constant") and \
                        m.inputs[1][0].type == "NextIteration":
                    roles[id(m)] = "merge"
                    merges.append(m)
                    s = alloc(2)
                    slot_of[(id(m), 0)] = s
                    slot_of[(id(m), 1)] = s + 1
                    prog.merge_init.append((s, slot_of[(id(m.inputs[0][0]), 0)]))
                    prog.presets.append((s + 1, None))
            switches = [m for m in frame.members if m.type == "Switch" and
                        m.inputs[1][0] is lc]
            nexts = [m for m in frame.members if m.type == "NextIteration"]
            for n in switches + nexts:
                roles[id(n)] = "machinery"

            def loop_live(c):  # live in every iteration the body runs
                if roles.get(id(c)) in ("merge", "machinery", "loopcond", "enter") or \
                        c.type == "ControlTrigger":
                    return True
                return c.type == "Identity" and not c.control_inputs and \
                    roles.get(id(c.inputs[0][0])) == "machinery"
            for m in frame.members:
                if m.type == "Const" and all(loop_live(c) for c in m.control_inputs):
                    s = alloc(m.n_out)
                    for port in range(m.n_out):
                        slot_of[(id(m), port)] = s + port
                        prog.presets.append((s + port, const_value(m, port)))
                    roles[id(m)] = "const"
            for e in frame.enters:
                roles[id(e)] = "enter"
            items, _ = self._frame_items(frame)
            # the cond part: ancestors of the LoopCond input inside this frame
            cond_nodes = set()
            stack = [lc]
            member_ids = {id(m) for m in frame.members}
            while stack:
                x = stack.pop()
                for p, _ in x.inputs:
                    if id(p) in member_ids and id(p) not in cond_nodes and \
                            not is_back_edge(x, p) and roles.get(id(p)) != "merge":
                        cond_nodes.add(id(p))
                        stack.append(p)
                for c in x.control_inputs:
                    if id(c) in member_ids and id(c) not in cond_nodes and \
                            roles.get(id(c)) != "merge":
                        cond_nodes.add(id(c))
                        stack.append(c)
            if any(x.type == "Exit" for x in frame.members if id(x) in cond_nodes):
                raise NotStructured("a loop inside the predicate of loop %s" % frame.name)
            cond_items = [it for it in items if it[0] == "node" and id(it[1]) in cond_nodes]
            body_items = [it for it in items if not (it[0] == "node" and
                                                     id(it[1]) in cond_nodes)]
            cond_steps = self.compile_frame_steps(frame, cond_items, slot_of, alloc, roles)
            src = lc.inputs[0]
            prog.pred_slot = slot_of[(id(src[0]), src[1])]
            if self.guard.get(prog.pred_slot):
                raise NotStructured("loop predicate may be dead")
            slot_of[(id(lc), 0)] = prog.pred_slot
            for sw in switches:
                d = sw.inputs[0]
                ds = slot_of[(id(d[0]), d[1])]
                slot_of[(id(sw), 1)] = ds
                slot_of[(id(sw), 0)] = ds
            body_steps = self.compile_frame_steps(frame, body_items, slot_of, alloc, roles)
            for m in merges:
                nx = m.inputs[1][0]
                src = nx.inputs[0]
                prog.carry.append((slot_of[(id(m), 0)], slot_of[(id(src[0]), src[1])]))
            for x in frame.exits:
                p, port = x.inputs[0]
                if roles.get(id(p)) != "machinery" or p.type != "Switch" or port != 0:
                    raise NotStructured("Exit %s does not follow the loop Switch" % x.name)
                prog.exit_slots.append(slot_of[(id(p), 0)])
            if any(self.guard.get(s) for _, s in prog.carry):
                raise NotStructured("a loop variable may be dead")
            prog.cond_steps = tuple(s.step for s in cond_steps)
            prog.body_steps = tuple(s.step for s in body_steps)
            prog.ops = tuple(s.op for s in cond_steps + body_steps)
            prog.loops = tuple(s.loop for s in cond_steps + body_steps)
            prog.guarded = tuple(s.guarded for s in cond_steps + body_steps)
            prog.n_slots = slots.n
            prog.compile_runner()
        finally:
            self.guard = saved_guard
        return prog


def check_fetch_in_root(n, port: int, frame_of, root: Frame) -> None:
    """Raises InvalidArgumentError for a fetch of a value computed inside a loop."""
    if frame_of[id(n)] is not root:
        raise errors.InvalidArgumentError(
            None, n.op, "Cannot fetch %s:%d: it is computed inside the while loop '%s'; "
            "fetch the loop's outputs instead." % (n.name, port, frame_of[id(n)].name))


def _union(guards) -> frozenset:
    out = frozenset()
    for g in guards:
        if g:
            out = out | g
    return out


def _merge_guard(guards) -> frozenset:
    """The guard of a Merge: live when any input is. Inputs that differ only in the
    branch of one predicate (the two sides of a cond) merge back to their common guard;
    anything else stays conservatively guarded by all of them."""
    gs = [g or frozenset() for g in guards]
    common = frozenset.intersection(*gs) if gs else frozenset()
    rests = [g - common for g in gs]
    if all(not r for r in rests):
        return common
    if all(len(r) == 1 for r in rests):
        preds = {next(iter(r))[0] for r in rests}
        branches = {next(iter(r))[1] for r in rests}
        if len(preds) == 1 and branches == {0, 1}:
            return common
    return _union(gs)


def _all_nodes(frame: Frame):
    for m in frame.members:
        yield m
    for x in frame.exits:
        yield x
    for c in frame.children:
        yield from _all_nodes(c)


class StructuredParts(NamedTuple):
    """What compile_structured returns (plan.py makes a StructuredPlan of it)."""
    steps: List[LoweredStep]     # the root frame's steps, loops as single steps
    n_slots: int
    feed_slots: tuple
    fetch_slots: tuple
    dead_fetch: tuple            # fetch indices a cond may leave dead
    waits: bool                  # an asynchronous kernel waits in place


def compile_structured(sg, binder) -> StructuredParts:
    """The root frame of a control-flow step as flat steps for the sequential loop,
    each loop one compound step (raises NotStructured when the tagged executor must run
    it). `binder` (plan.KernelBinder) supplies each node's kernel and context."""
    order, frame_of, root = analyze(sg.nodes)
    comp = StructuredCompiler(binder, frame_of, root)
    slot_of: Dict[tuple, int] = {}
    slots = _Slots()
    alloc = slots.alloc
    feed_slots = {}
    for n in root.members:
        if n.type == "_Feed":
            s = alloc(1)
            slot_of[(id(n), 0)] = s
            feed_slots[n.feed_index] = s
    for n in order:
        if n.type == "_Feed" and frame_of[id(n)] is not root:
            raise NotStructured("feed inside a loop")
    items, _ = comp._frame_items(root)
    items = [it for it in items if not (it[0] == "node" and it[1].type == "_Feed")]
    steps = comp.compile_frame_steps(root, items, slot_of, alloc, {})
    fetch_slots = []
    for n, i in sg.fetches:
        check_fetch_in_root(n, i, frame_of, root)
        fetch_slots.append(slot_of[(id(n), i)])
    return StructuredParts(
        steps, slots.n, tuple(feed_slots[i] for i in range(len(feed_slots))),
        tuple(fetch_slots),
        tuple(k for k, s in enumerate(fetch_slots) if comp.guard.get(s)), comp.waits)
