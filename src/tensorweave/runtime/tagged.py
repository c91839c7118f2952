"""The tagged-token executor (EuroSys 2018 §4.3, Figure 5) for steps with control flow.

Every value in flight belongs to a frame instance and an iteration of it, and may be
dead. The rules:

* a node runs when all its inputs of one (frame, iteration) have arrived; a node with a
  dead input does not run its kernel and sends dead values on (ControlTrigger excepted:
  it is always live);
* Merge runs as soon as one live data input has arrived (and its control inputs); it is
  dead only when all its data inputs are;
* Switch sends its data to output 1 when the predicate holds, else to output 0; the
  other output is dead;
* Enter sends its value into the child frame `frame_name` of the current iteration,
  creating it on first use: to iteration 0, or with `is_constant` to every iteration
  (a loop invariant, also delivered to iterations created later);
* NextIteration sends its value to the next iteration of its frame (dead values are
  dropped: the loop ends); at most `parallel_iterations` iterations of a frame are
  alive, further NextIteration values wait until the oldest iteration completes;
* Exit sends a live value to the parent frame; an Exit that saw no live value when its
  frame completes sends a dead one (a loop inside a branch not taken).
* `_Send` and `_Recv` (a partitioned step) run even when dead (EuroSys 2018 §4.4): a
  Send sends a dead value on, a Recv with a dead input receives and is dead, so no Recv
  is left waiting; inside a loop frame their rendezvous key carries the frame
  instance (`_FrameState.tag_id`, a hash of the loop names and parent iteration numbers
  from the root, the same in every partition) and the iteration number.

An iteration completes when nothing in it is running or pending, no child frame of it is
alive, and (iteration 0) all the frame's Enters have arrived or (later ones) the previous
iteration has completed; its state is dropped then. A frame completes with its last
iteration. Nothing waits for a whole iteration: iteration i+1 starts as soon as a
NextIteration value of iteration i exists (non-strict execution).

All bookkeeping runs on the calling thread; kernels that are not cheap
(policy.kernel_weight) run on the session's thread pool and asynchronous kernels call
back, both through one completion queue, as in runtime/executor.run_dataflow. An
untraced run schedules each island (islands.py: a cheap node with the cheap nodes fed
only by it) as one node, and inside loop frames passes values through code written for
the program (routes.py: each node's consumers spelled out) instead of the generic
`send`. A traced run takes the generic path and records each kernel execution with its
frame name and iteration number.
"""
from __future__ import annotations

import queue
import threading
import time
import zlib
from collections import deque
from functools import partial
from typing import Dict, List, Optional

from tensorweave.framework import errors
from tensorweave.runtime import frames as _frames
from tensorweave.runtime import islands as _islands
from tensorweave.runtime import policy as _policy
from tensorweave.runtime import routes as _routes
from tensorweave.runtime import send_recv_ops as _sr
from tensorweave.runtime.executor import StepState, StepTrace, _next_done, kernel_error
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.values import DEAD, loop_value, merge_index


NORMAL, SWITCH, MERGE, ENTER, EXIT, NEXT, TRIGGER, FEED, FORWARD, SEND, RECV = range(11)
_KINDS = {"Switch": SWITCH, "RefSwitch": SWITCH, "Merge": MERGE, "RefMerge": MERGE,
          "Enter": ENTER, "RefEnter": ENTER, "Exit": EXIT, "RefExit": EXIT,
          "NextIteration": NEXT, "RefNextIteration": NEXT, "ControlTrigger": TRIGGER,
          "_Feed": FEED, "LoopCond": FORWARD, "_Send": SEND, "_Recv": RECV}


class TaggedProgram:
    """The static tables of one step (immutable, shared by concurrent runs)."""

    def __init__(self):
        self.kind: List[int] = []
        self.fn: list = []
        self.ctx: list = []
        self.cheap: List[bool] = []             # policy.kernel_weight(...) == CHEAP
        self.is_async: List[bool] = []
        self.op: list = []
        self.in_base: List[int] = []
        self.n_data: List[int] = []
        self.out_edges: List[List[List[tuple]]] = []  # [node][port] -> [(dst, slot)]
        self.ctrl_out: List[List[int]] = []
        self.pending0: List[int] = []
        # an iteration's tables cover its frame's nodes only (`_by_home_frame`): per
        # frame key, the input slots (numbered from 0 in each frame) and the length of
        # the prefix of node numbers that holds its nodes
        self.frame_slots: Dict[str, int] = {}
        self.frame_nodes: Dict[str, int] = {}
        self.home: List[str] = []               # node -> key of its home frame
        self.frame_name: List[str] = []
        self.is_constant: List[bool] = []
        self.parallel_iterations: List[int] = []
        self.n_enters: Dict[str, int] = {}      # static frame key -> number of Enters
        self.frame_key: List[Optional[str]] = []  # Enter: key of the frame it enters
        self.exits_of: Dict[str, List[int]] = {}
        self.sources: Dict[str, List[int]] = {}  # frame key -> nodes without inputs
        self.feeds: List[int] = []
        self.fetch: List[tuple] = []             # (node, port) per fetch
        self.frame_names: Dict[str, str] = {}    # frame key -> the loop's frame name
        self.root_key = ""
        # for the executor's fast paths: cheap synchronous kernels (NORMAL), all False,
        # the end of each node's inputs, the readers of each port of two-output nodes
        self.fast: List[bool] = []
        self.slow: List[bool] = []
        self.in_end: List[int] = []
        self.two_ports: List[Optional[tuple]] = []
        # a `_Send` that does not narrow, a `_Recv` that does not copy: its rendezvous
        # key less the ";frame:iter" (the executor runs them itself), else None
        self.xfer: List[Optional[str]] = []
        # Merge, Switch and NextIteration nodes without control edges or fetched outputs:
        # an untraced run forwards their values the moment they are ready (`send`)
        self.inline: List[bool] = []
        # the untraced form (islands.fuse_islands), None when nothing fuses; in it, an
        # island root's line numbers -> the member op a failure on that line names
        self.fused: Optional["TaggedProgram"] = None
        self.island_ops: Dict[int, tuple] = {}
        self.islands: Dict[int, List[int]] = {}  # root -> its members, root first
        # an island with several entries -> (its dead-aware function, the control
        # successors outside it of each member that has some)
        self.mixed: Dict[int, tuple] = {}
        # Const node -> its value, a tuple of them for several outputs (islands)
        self.const_values: Dict[int, object] = {}
        self.plain_identities: set = set()  # Identity nodes without control inputs
        self.in_loop: List[bool] = []  # in a loop frame (an Enter too, not an Exit)
        # the untraced form's value passing in loop frames written out (routes.py):
        # made once its runs have made ROUTES_AFTER loop iterations (`iterations`)
        self.make_routes = None
        self.iterations = 0
        self.no_routes: tuple = ()  # a None per node: the tables of a run without them

    @property
    def uses_pool(self) -> bool:
        """Whether a node may run on the thread pool."""
        return not all(self.cheap)


def compile_tagged(sg, binder, policy) -> TaggedProgram:
    """The program of a control-flow step for the tagged executor. `binder`
    (plan.KernelBinder) supplies each node's kernel and context, `policy` decides which
    kernels are cheap."""
    order, frame_of, root = _frames.analyze(sg.nodes)
    order, homes = _by_home_frame(order, frame_of, root)
    prog = TaggedProgram()
    index = {id(n): k for k, n in enumerate(order)}
    key_of_frame: Dict[int, str] = {}

    def fkey(f):
        k = key_of_frame.get(id(f))
        if k is None:
            k = key_of_frame[id(f)] = "%d:%s" % (len(key_of_frame), f.name)
            prog.frame_names[k] = f.name
        return k
    for k, n in enumerate(order):
        kind = _KINDS.get(n.type, NORMAL)
        prog.kind.append(kind)
        if kind in (NORMAL, TRIGGER, FORWARD, SWITCH, MERGE, SEND, RECV):
            fn, ctx, kd = binder.bind(n) if n.type != "_Feed" else (None, None, None)
            cheap = _policy.kernel_weight(kd, _policy.static_cost(n), policy,
                                          n.attrs) == _policy.CHEAP
            is_async = kd is not None and kd.is_async
        else:
            fn, ctx, cheap, is_async = None, None, True, False
        prog.fn.append(fn)
        prog.ctx.append(ctx)
        prog.cheap.append(cheap)
        prog.is_async.append(is_async)
        prog.op.append(n.op)
        home = fkey(homes[k])
        prog.home.append(home)
        prog.in_base.append(prog.frame_slots.get(home, 0))
        prog.frame_slots[home] = prog.in_base[k] + len(n.inputs)
        prog.frame_nodes[home] = k + 1
        prog.n_data.append(len(n.inputs))
        prog.out_edges.append([[] for _ in range(max(n.n_out, 1))])
        prog.ctrl_out.append([])
        prog.frame_name.append(n.attrs.get("frame_name", "") if kind == ENTER else "")
        prog.is_constant.append(bool(n.attrs.get("is_constant")) if kind == ENTER else False)
        prog.parallel_iterations.append(int(n.attrs.get("parallel_iterations", 10))
                                        if kind == ENTER else 0)
        prog.frame_key.append(fkey(frame_of[id(n)]) if kind == ENTER else None)
        prog.in_loop.append(frame_of[id(n)] is not root)
        if kind == FEED:
            prog.feeds.append(k)
        elif n.type == "Const":
            prog.const_values[k] = _frames.const_value(n) if n.n_out == 1 else \
                tuple(_frames.const_value(n, port) for port in range(n.n_out))
        elif n.type == "Identity" and not n.control_inputs:
            prog.plain_identities.add(k)
    pending0 = [0] * len(order)
    for k, n in enumerate(order):
        for j, (p, port) in enumerate(n.inputs):
            prog.out_edges[index[id(p)]][port].append((k, prog.in_base[k] + j))
        for c in n.control_inputs:
            prog.ctrl_out[index[id(c)]].append(k)
        pending0[k] = len(n.control_inputs) + (0 if prog.kind[k] == MERGE else len(n.inputs))
    prog.pending0 = pending0
    prog.fast = [prog.kind[k] == NORMAL and prog.cheap[k] and not prog.is_async[k]
                 for k in range(len(order))]
    prog.slow = [False] * len(order)
    prog.in_end = [prog.in_base[k] + prog.n_data[k] for k in range(len(order))]
    prog.two_ports = [tuple(e) if len(e) == 2 else None for e in prog.out_edges]
    for k, n in enumerate(order):
        op = n.op
        plain = (prog.kind[k] == SEND and getattr(op, "narrow", 0) is None) or \
            (prog.kind[k] == RECV and getattr(op, "copy", 0) is None)
        prog.xfer.append(op.rendezvous_key.rpartition(";")[0] if plain else None)

    def walk(f):
        key = fkey(f)
        prog.n_enters[key] = len(f.enters)
        prog.exits_of[key] = [index[id(x)] for x in f.exits]
        prog.sources[key] = [index[id(m)] for m in f.members
                             if not m.inputs and not m.control_inputs
                             and m.type not in ("_Feed",)]
        for c in f.children:
            walk(c)
    walk(root)
    prog.root_key = fkey(root)
    for n, i in sg.fetches:
        _frames.check_fetch_in_root(n, i, frame_of, root)
        prog.fetch.append((index[id(n)], i))
    feed_nodes = {}
    for k in prog.feeds:
        feed_nodes[order[k].feed_index] = k
    prog.feeds = [feed_nodes[i] for i in range(len(feed_nodes))]
    fetched = {k for k, _ in prog.fetch}
    plain_pending = {MERGE: 0, SWITCH: 2, NEXT: 1}
    prog.inline = [plain_pending.get(prog.kind[k]) == prog.pending0[k]
                   and not prog.ctrl_out[k] and k not in fetched
                   for k in range(len(order))]
    prog.no_routes = (None,) * len(order)
    prog.fused = _islands.fuse_islands(prog)
    return prog


def _by_home_frame(order: list, frame_of: dict, root) -> tuple:
    """(`order` regrouped by home frame, each node's home frame in that order).

    A node's home frame is the one whose iterations hold its input slots and pending
    count: its own frame, except for an Enter (the frame its value comes from) and an
    Exit (the loop it leaves). Inner frames come first, each frame's nodes in their
    order (topological within an iteration), so that an iteration's tables cover its
    frame's nodes and those of the frames before it: a loop's iterations do not grow
    with the rest of the step (a loop's cost per iteration doubled with 600 nodes
    beside it in the step before this)."""
    rank: Dict[int, int] = {}

    def walk(f):
        for c in f.children:
            walk(c)
        rank[id(f)] = len(rank)
    walk(root)
    homes = [frame_of[id(n.inputs[0][0])] if _KINDS.get(n.type) in (ENTER, EXIT)
             else frame_of[id(n)] for n in order]
    regrouped = sorted(range(len(order)), key=lambda i: (rank[id(homes[i])], i))
    return [order[i] for i in regrouped], [homes[i] for i in regrouped]


# Loop iterations of a program's untraced runs before its routes are written (routes.py):
# writing and compiling them costs about as much as the generic path spends on 100-200
# iterations (20 ms for a 270-node LSTM step), which a step that runs once, or a short
# loop, would not win back.
ROUTES_AFTER = 200


class _Iter:
    """One iteration of a frame instance (the root frame's only one included), made by
    `tagged_steps`'s `new_iter` once per iteration (no __init__: a call less):

    frame, number: its frame instance and iteration number;
    inputs, pending: the input slots (numbered within the frame) and the pending input
    counts of its frame's nodes (indexed by node: a prefix, see `_by_home_frame`);
    dead: node -> True, the node has a dead input;
    merge_live: merge -> the index of its live input (-1: all were dead);
    merge_dead: merge -> the number of its dead inputs (None until one arrives);
    outstanding: nodes scheduled or running; children, n_children: the child frame
    instances started in it (frame key -> state; None until one starts);
    xstate, xkey: the InFrameState its transfers get and what their keys end with
    (";frame:iter"), made on first use.
    """
    __slots__ = ("frame", "number", "inputs", "pending", "dead", "merge_live",
                 "merge_dead", "outstanding", "children", "n_children", "xstate", "xkey")


class _FrameState:
    __slots__ = ("key", "name", "parent_iter", "iters", "next_number", "live_iters", "pi",
                 "invariants", "enters_left", "deferred", "exits_live", "path", "tag_id",
                 "n_slots", "n_nodes", "sources", "template")

    def __init__(self, key: str, name: str, parent_iter: Optional[_Iter], pi: int,
                 n_enters: int, prog: "TaggedProgram"):
        self.key = key
        self.name = name
        # the sizes of an iteration's tables, the nodes each iteration starts with
        self.n_slots = prog.frame_slots.get(key, 0)
        self.n_nodes = prog.frame_nodes.get(key, 0)
        self.sources = prog.sources.get(key, ())
        # a new iteration's tables with the loop invariants delivered: None until every
        # Enter has arrived, then made by `new_iter` (False where it cannot be, and in
        # the root frame, which has one iteration)
        self.template = None if parent_iter is not None else False
        self.parent_iter = parent_iter
        self.iters: Dict[int, _Iter] = {}
        self.next_number = 0
        self.live_iters = 0
        self.pi = max(pi, 1)
        self.invariants: List[tuple] = []
        self.enters_left = n_enters
        self.deferred: List[tuple] = []
        self.exits_live: set = set()
        # the frame instance's identity, the same in every partition of a step: the
        # loop names and parent iteration numbers from the root (rendezvous keys)
        if parent_iter is None:
            self.path, self.tag_id = "", 0
        else:
            self.path = "%s/%d/%s" % (parent_iter.frame.path, parent_iter.number, name)
            self.tag_id = zlib.crc32(self.path.encode()) % 0x7FFFFFFF + 1


def _predicate_error(op, pred, it: _Iter) -> errors.OpError:
    """The error of a Switch run inline whose predicate is not a scalar (a fed one
    escapes the build-time check): the Switch kernel's."""
    exc = errors.InvalidArgumentError(None, op, "The second input must be a scalar, but "
                                      "it has shape %s" % list(getattr(pred, "shape", ())))
    return kernel_error(op, exc, loop_iterations(it))


def _recv_arrived(put, k: int, it: _Iter, value, is_dead: bool, error) -> None:
    """The rendezvous callback of a `_Recv` the tagged executor waits for: its value
    (DEAD for a dead one) or error, as an asynchronous kernel's completion."""
    put((k, it, DEAD if is_dead else value, error, 0.0, 0.0, None))


def loop_iterations(it: _Iter) -> tuple:
    """(frame name, iteration) of `it` and of each enclosing loop iteration, innermost
    first (an error's provenance, runtime/provenance.py); () in the root frame."""
    out = []
    while it.frame.parent_iter is not None:
        out.append((it.frame.name, it.number))
        it = it.frame.parent_iter
    return tuple(out)


def run_tagged(prog: TaggedProgram, feed_values, pool, trace: Optional[StepTrace] = None,
               state: Optional[StepState] = None) -> list:
    """Runs one step of `prog`; `trace` (if any) gets a record per kernel execution."""
    steps = tagged_steps(prog, feed_values, pool, trace, state, None)
    try:
        next(steps)
    except StopIteration as stop:
        return stop.value
    raise errors.InternalError(None, None, "The tagged executor yielded outside a "
                               "cooperative run")


def cooperative(prog: TaggedProgram) -> bool:
    """Whether `prog` can run interleaved with other partitions on one thread
    (`tagged_steps` with a done queue): every kernel is cheap and the only ones that
    wait are `_Send`/`_Recv`."""
    return not prog.uses_pool and all(
        prog.kind[k] in (SEND, RECV) for k, a in enumerate(prog.is_async) if a)


def tagged_steps(prog: TaggedProgram, feed_values, pool, trace: Optional[StepTrace],
                 state: Optional[StepState], done_q: Optional["queue.SimpleQueue"]):
    """A generator that runs one step of `prog` and returns its fetched values.

    With `done_q` None it never yields (run_tagged). Given a `done_q` (the queue its
    asynchronous kernels report to: the caller watches it), it yields instead of
    waiting when nothing is ready and `done_q` is empty, so that one thread can run
    several partitions in turn (partitioned_plan); resumed with `send(True)` it waits
    for the next completion, with `send(False)` it looks again."""
    if trace is None and prog.fused is not None:
        prog = prog.fused  # islands run as one node each (islands.py)
    kind, fns, ctxs, cheap, is_async, ops = (prog.kind, prog.fn, prog.ctx, prog.cheap,
                                             prog.is_async, prog.op)
    in_base, n_data, out_edges, ctrl_out = (prog.in_base, prog.n_data, prog.out_edges,
                                            prog.ctrl_out)
    in_end, two_ports = prog.in_end, prog.two_ports
    pending0 = prog.pending0
    # Merge, Switch and NextIteration forwarded as they become ready, untraced: each
    # is one of the orders the executor could pick, and saves a trip through `ready`
    inline = prog.inline if trace is None else prog.slow
    state = state or StepState()
    ready: deque = deque()
    interleaved = done_q is not None
    if done_q is None:
        done_q = queue.SimpleQueue()
    fetched: Dict[tuple, object] = {}
    fetch_set = set(prog.fetch)
    outstanding_remote = [0]
    error: List[Optional[errors.OpError]] = [None]

    def new_iter(fs: _FrameState) -> _Iter:
        it = _Iter()
        it.frame = fs
        it.number = fs.next_number
        template = fs.template
        if template is None and not fs.enters_left:
            template = fs.template = invariant_template(fs)
        if template:
            it.inputs = template[0][:]
            it.pending = template[1][:]
        else:
            it.inputs = [None] * fs.n_slots
            it.pending = pending0[:fs.n_nodes]
        it.dead = {}
        it.merge_live = {}
        it.merge_dead = it.children = None
        it.outstanding = it.n_children = 0
        it.xstate = it.xkey = None
        fs.iters[it.number] = it
        fs.next_number += 1
        fs.live_iters += 1
        for k in fs.sources:
            schedule(k, it)
        if template:
            for k in template[2]:
                schedule(k, it)
            return it
        for k, v in fs.invariants:
            deliver = invariant_fns[k]
            if deliver is None:
                send(out_edges[k][0], it, v)
            else:
                deliver(it, v)
        return it

    def invariant_template(fs: _FrameState):
        """(inputs, pending counts, nodes ready) of a new iteration of `fs` once its
        loop invariants are delivered, as `send` delivers them, for `new_iter` to copy
        (with many invariants, a loop's weights, their delivery was most of the cost
        of starting an iteration); False when a delivery does more than fill a slot,
        count down and make a node ready: a dead invariant, or one read by a Merge or
        by a node forwarded the moment it is ready."""
        inputs, pending, ready_nodes = [None] * fs.n_slots, pending0[:fs.n_nodes], []
        for k, v in fs.invariants:
            if v is DEAD:
                return False
            for dst, slot in out_edges[k][0]:
                if kind[dst] == MERGE:
                    return False
                inputs[slot] = v
                pending[dst] -= 1
                if pending[dst] == 0:
                    if inline[dst]:
                        return False
                    ready_nodes.append(dst)
        return inputs, pending, tuple(ready_nodes)

    def schedule(k, it):
        it.outstanding += 1
        ready.append((k, it))

    def arrive_merge(dst, it, slot, v):
        if dst in it.merge_live:
            return
        if v is DEAD:
            if it.merge_dead is None:
                it.merge_dead = {}
            c = it.merge_dead.get(dst, 0) + 1
            it.merge_dead[dst] = c
            if c == n_data[dst] and it.pending[dst] == 0:
                it.merge_live[dst] = -1
                schedule(dst, it)
            return
        it.inputs[slot] = v
        if inline[dst]:  # no control inputs: ready with its first live input
            i = it.merge_live[dst] = slot - in_base[dst]
            e0, e1 = two_ports[dst]
            if e0:
                send(e0, it, v)
            if e1:
                send(e1, it, merge_index(i))
            return
        it.merge_live.setdefault(-dst - 1, slot - in_base[dst])  # first live input
        if it.pending[dst] == 0:
            it.merge_live[dst] = it.merge_live.pop(-dst - 1)
            schedule(dst, it)

    def send(edges, it, v):
        for dst, slot in edges:
            kd = kind[dst]
            if kd == MERGE:
                arrive_merge(dst, it, slot, v)
                continue
            it.inputs[slot] = v
            p = it.pending[dst] - 1
            it.pending[dst] = p
            if v is DEAD:
                if kd == EXIT:
                    # a dead Exit of a running loop does nothing (propagate); not
                    # marked, so the iteration's live nodes keep the fast path
                    continue
                it.dead[dst] = True
            if p == 0:
                if inline[dst]:
                    if kd == NEXT:
                        if v is not DEAD:  # a dead one ends the loop: dropped
                            next_iteration(dst, it, v)
                        continue
                    if not it.dead.get(dst) and switch_now(dst, it):
                        continue
                it.outstanding += 1
                ready.append((dst, it))

    def switch_now(k, it) -> bool:
        """Forwards a live Switch's input (False: its predicate is not a scalar, the
        main loop raises that)."""
        base = in_base[k]
        try:
            taken = True if it.inputs[base + 1] else False
        except ValueError:
            return False
        e0, e1 = two_ports[k]
        v = it.inputs[base]
        if e0:
            send(e0, it, DEAD if taken else v)
        if e1:
            send(e1, it, v if taken else DEAD)
        return True

    def next_iteration(k, it, v):
        """A live NextIteration value of `it`: to the next iteration, created if the
        frame's parallel_iterations allow, else deferred until the oldest completes."""
        fs = it.frame
        nxt = fs.iters.get(it.number + 1)
        if nxt is None:
            if fs.live_iters < fs.pi and fs.next_number == it.number + 1:
                nxt = new_iter(fs)
            else:
                fs.deferred.append((k, v))
                return
        send(out_edges[k][0], nxt, v)

    def control(k, it, dead, dsts=None):
        for dst in ctrl_out[k] if dsts is None else dsts:
            if dead and kind[dst] not in (TRIGGER, MERGE):
                it.dead[dst] = True
            p = it.pending[dst] - 1
            it.pending[dst] = p
            if p == 0:
                if kind[dst] == MERGE:
                    if -dst - 1 in it.merge_live:
                        it.merge_live[dst] = it.merge_live.pop(-dst - 1)
                        schedule(dst, it)
                    elif it.merge_dead and it.merge_dead.get(dst, 0) == n_data[dst]:
                        it.merge_live[dst] = -1
                        schedule(dst, it)
                else:
                    schedule(dst, it)

    def child_frame(k, it) -> _FrameState:
        name = prog.frame_key[k]
        fs = it.children.get(name) if it.children else None
        if fs is None:
            fs = _FrameState(name, prog.frame_names[name], it, prog.parallel_iterations[k],
                             prog.n_enters[name], prog)
            if it.children is None:
                it.children = {}
            it.children[name] = fs
            it.n_children += 1
        return fs

    def propagate(k, it, outs, dead_node):
        kd = kind[k]
        fs = it.frame
        if kd == ENTER:
            child = child_frame(k, it)
            v = loop_value(outs[0])
            child.enters_left -= 1
            if prog.is_constant[k]:
                child.invariants.append((k, v))
                for cit in list(child.iters.values()):
                    send(out_edges[k][0], cit, v)
            else:
                cit = child.iters.get(0) or (new_iter(child) if child.next_number == 0
                                             else None)
                if cit is not None:
                    send(out_edges[k][0], cit, v)
            if child.enters_left == 0 and not child.iters and child.next_number == 0:
                new_iter(child)  # every Enter was an invariant: one iteration runs
            maybe_done(child, child.iters.get(0))
            return
        elif kd == EXIT:
            if outs[0] is not DEAD:
                pit = fs.parent_iter
                fs.exits_live.add(k)
                send(out_edges[k][0], pit, outs[0])
                if pit.frame.parent_iter is None and (k, 0) in fetch_set:
                    fetched[(k, 0)] = outs[0]
                if ctrl_out[k]:
                    control(k, pit, False)
            return  # a dead Exit of a running loop is no event for the parent
        elif kd == NEXT:
            if outs[0] is not DEAD:
                next_iteration(k, it, outs[0])
        else:
            for port, edges in enumerate(out_edges[k]):
                if edges:
                    send(edges, it, outs[port] if port < len(outs) else None)
            if fs.parent_iter is None and fetch_set:
                for port in range(len(outs)):
                    if (k, port) in fetch_set:
                        fetched[(k, port)] = outs[port]
        if ctrl_out[k]:
            control(k, it, dead_node)

    def maybe_done(fs: _FrameState, it: Optional[_Iter]):
        while it is not None:
            if it.outstanding or it.n_children:
                return
            if it.number == 0:
                if fs.enters_left:
                    return
            elif (it.number - 1) in fs.iters:
                return
            del fs.iters[it.number]
            fs.live_iters -= 1
            if fs.deferred and fs.next_number not in fs.iters:
                items, fs.deferred = fs.deferred, []
                nit = new_iter(fs)
                for k, v in items:
                    send(out_edges[k][0], nit, v)
            nxt = fs.iters.get(it.number + 1)
            if nxt is None and not fs.iters and not fs.deferred and fs.enters_left == 0:
                frame_done(fs)
                return
            it = nxt

    def frame_done(fs: _FrameState):
        pit = fs.parent_iter
        if pit is None:
            return
        iterations[0] += fs.next_number
        for x in prog.exits_of.get(fs.key, ()):
            if x not in fs.exits_live:
                send(out_edges[x][0], pit, DEAD)
                if ctrl_out[x]:
                    control(x, pit, True)
        del pit.children[fs.key]
        pit.n_children -= 1
        maybe_done(pit.frame, pit)

    def finish(k, it, outs, dead_node):
        propagate(k, it, outs, dead_node)
        it.outstanding -= 1
        if not it.outstanding and not it.n_children:
            maybe_done(it.frame, it)

    def finish_one(k, it, v):
        """finish() of a live single-output node of a kind without frame effects."""
        edges = out_edges[k][0]
        if edges:
            send(edges, it, v)
        if fetch_set and it.frame.parent_iter is None and (k, 0) in fetch_set:
            fetched[(k, 0)] = v
        if ctrl_out[k]:
            control(k, it, False)
        it.outstanding -= 1
        if not it.outstanding and not it.n_children:
            maybe_done(it.frame, it)

    clock = time.perf_counter
    get_ident = threading.get_ident
    caller = get_ident()
    timed = trace is not None  # times are taken for the trace only

    island_ops = prog.island_ops

    def op_of(k, exc):
        """The op a kernel failure at node `k` names (a member's, in an island)."""
        island = island_ops.get(k)
        return ops[k] if island is None else _islands.failed_op(island, ops[k], exc)

    def run_remote(k, it, args):
        t0 = clock()
        try:
            r = fns[k](ctxs[k], *args)
            done_q.put((k, it, r, None, t0, clock(), get_ident()))
        except BaseException as e:  # noqa: B036 - handed to the scheduling thread
            done_q.put((k, it, None, e, t0, clock(), get_ident()))

    def async_done(k, it, t0, box):
        # `box` is [in the call, result, exc]: a call back on this thread while the
        # kernel runs (a Send, a Recv whose value is there) completes inline
        def done(result=None, exc=None):
            if box[0] and get_ident() == caller:
                box[0] = False
                box[1], box[2] = result, exc
                box.append(clock() if timed else 0.0)
                return
            done_q.put((k, it, result, exc, t0, clock(), None))
        return done

    def completed(k, it, r, exc, t0, t1, tid):
        """An asynchronous kernel's completion (on this thread)."""
        if exc is not None:
            if error[0] is None:
                error[0] = kernel_error(ops[k], exc, loop_iterations(it))
            return
        if error[0] is None:
            if trace is not None:
                record(k, it, r, t0, t1, tid)
            if kind[k] == RECV and (r is DEAD or it.dead.get(k)):
                # a dead value received, or a Recv with a dead control input: dead,
                # also for what it orders
                finish(k, it, (DEAD,), True)
            elif routes[k] is not None:
                routes[k](it, r)
            elif len(out_edges[k]) == 1:
                finish_one(k, it, r)
            else:
                finish(k, it, outs_of(k, r), False)

    def record(k, it, r, t0, t1, tid=None):
        outs = () if r is None or not out_edges[k] else outs_of(k, r)
        trace.record(ops[k], ctxs[k].device, t0, t1, outs, it.frame.name, it.number, tid)

    def outs_of(k, r):
        n = len(out_edges[k])
        return (r,) if n == 1 else tuple(r) if r is not None else (None,) * n

    # cheap synchronous kernels, untraced: the common case, run first
    fast = prog.fast if trace is None else prog.slow
    rdv = getattr(state, "rendezvous", None)
    # plain transfers through an in-process rendezvous, untraced: run here (no kernel)
    xfer = prog.xfer if trace is None and type(rdv) is LocalRendezvous else prog.slow
    popleft = ready.popleft

    def xkey_of(it):
        fs = it.frame
        it.xkey = ";%d:%d" % (fs.tag_id, it.number) if fs.tag_id else ";0:0"
        return it.xkey

    def wait_remote(k, it, key):
        """A `_Recv` whose value is not there yet: delivered through done_q."""
        outstanding_remote[0] += 1
        rdv.recv_async(key, partial(_recv_arrived, done_q.put, k, it))

    # the generated value passing of loop frames (routes.py), untraced
    iterations = [0]  # of the loop frames that completed (ROUTES_AFTER)
    if trace is None and prog.make_routes is None and prog.iterations >= ROUTES_AFTER:
        prog.make_routes = _routes.generate(prog)  # (a concurrent run may also: the same)
    if prog.make_routes is not None and trace is None:
        runs, routes, invariant_fns = prog.make_routes(
            ready.append, send, arrive_merge, new_iter, maybe_done, control, finish,
            rdv if xfer is prog.xfer else None, xkey_of, wait_remote)
    else:
        runs = routes = invariant_fns = prog.no_routes

    root = _FrameState(prog.root_key, "", None, 1, 0, prog)
    rit = new_iter(root)
    # every feed is outstanding until it is delivered: the root iteration must not
    # complete after the first one when nothing else is ready yet (a step without
    # source nodes)
    rit.outstanding += len(prog.feeds)
    for k, v in zip(prog.feeds, feed_values):
        finish(k, rit, (v,), False)

    mixed = prog.mixed

    def run_mixed(k, it) -> bool:
        """An island with several entries whose inputs are not all live or all dead:
        its dead-aware form, each member's deadness sent on (False: it failed)."""
        fn, ctrl_groups = mixed[k]
        try:
            outs, dead = fn(ctxs[k], *it.inputs[in_base[k]:in_end[k]])
        except BaseException as e:  # noqa: B036
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            error[0] = kernel_error(op_of(k, e), e, loop_iterations(it))
            return False
        for port, edges in enumerate(out_edges[k]):
            if edges:
                send(edges, it, outs[port])
        if fetch_set and it.frame.parent_iter is None:
            for port, v in enumerate(outs):
                if (k, port) in fetch_set:
                    fetched[(k, port)] = v
        for dsts, member_dead in zip(ctrl_groups, dead):
            control(k, it, member_dead, dsts)
        it.outstanding -= 1
        if not it.outstanding and not it.n_children:
            maybe_done(it.frame, it)
        return True

    def finish_two(k, it, v0, v1):
        """finish() of a live Switch or Merge (no frame effects)."""
        e0, e1 = two_ports[k]
        if e0:
            send(e0, it, v0)
        if e1:
            send(e1, it, v1)
        if fetch_set and it.frame.parent_iter is None:
            if (k, 0) in fetch_set:
                fetched[(k, 0)] = v0
            if (k, 1) in fetch_set:
                fetched[(k, 1)] = v1
        if ctrl_out[k]:
            control(k, it, False)
        it.outstanding -= 1
        if not it.outstanding and not it.n_children:
            maybe_done(it.frame, it)
    while True:
        while ready and error[0] is None:
            k, it = popleft()
            run = runs[k]
            if run is not None and not it.dead:
                try:
                    run(it)  # the kernel or transfer, then its outputs (routes.py)
                except BaseException as e:  # noqa: B036
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    error[0] = kernel_error(op_of(k, e), e, loop_iterations(it))
                    break
                continue
            if fast[k] and not it.dead:
                try:
                    r = fns[k](ctxs[k], *it.inputs[in_base[k]:in_end[k]])
                except BaseException as e:  # noqa: B036
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    error[0] = kernel_error(op_of(k, e), e, loop_iterations(it))
                    break
                if len(out_edges[k]) == 1:
                    finish_one(k, it, r)
                else:
                    finish(k, it, outs_of(k, r), False)
                continue
            kd = kind[k]
            base = in_base[k]
            if kd == MERGE:
                i = it.merge_live[k]
                if i < 0:
                    finish(k, it, (DEAD, DEAD), True)
                else:
                    finish_two(k, it, it.inputs[base + i], merge_index(i))
                continue
            if kd == SWITCH and not it.dead:
                v = it.inputs[base]
                try:
                    taken = True if it.inputs[base + 1] else False
                except ValueError:  # a fed predicate of several values
                    error[0] = _predicate_error(ops[k], it.inputs[base + 1], it)
                    break
                if taken:
                    finish_two(k, it, DEAD, v)
                else:
                    finish_two(k, it, v, DEAD)
                continue
            if kd != TRIGGER and it.dead.get(k):
                if kd < SEND:
                    if k in mixed and not all(
                            v is DEAD for v in it.inputs[base:base + n_data[k]]):
                        if not run_mixed(k, it):
                            break
                        continue
                    finish(k, it, (DEAD,) * len(out_edges[k]), True)
                    continue
                # a transfer runs dead (EuroSys §4.4): a Send sends the dead value on,
                # a Recv receives (its output is dead), so no Recv is left waiting
                args = [DEAD] * n_data[k]
            else:
                args = it.inputs[base:base + n_data[k]]
            if kd == SWITCH:
                try:
                    taken = True if args[1] else False
                except ValueError:
                    error[0] = _predicate_error(ops[k], args[1], it)
                    break
                finish(k, it, (DEAD, args[0]) if taken else (args[0], DEAD), False)
            elif kd in (ENTER, EXIT, NEXT, FORWARD):
                finish(k, it, (args[0],), False)
            elif kd == TRIGGER:
                finish(k, it, (None,), False)
            elif xfer[k] and kd == SEND:
                # what the `_Send` kernel does, without its call back; keys carry the
                # frame instance and iteration
                v = args[0]
                try:
                    rdv.send(xfer[k] + (it.xkey or xkey_of(it)), v, v is DEAD)
                except BaseException as e:  # noqa: B036
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    error[0] = kernel_error(ops[k], e, loop_iterations(it))
                    break
                if routes[k] is not None:
                    routes[k](it, None)
                else:
                    finish_one(k, it, None)
            elif xfer[k]:
                # a `_Recv`: what its kernel does, its value taken here when it is there,
                # else delivered through done_q by the Send (no kernel, no frame state)
                key = xfer[k] + (it.xkey or xkey_of(it))
                entry = rdv.take(key)
                if entry is None:
                    wait_remote(k, it, key)
                elif entry[1] or it.dead.get(k):
                    finish(k, it, (DEAD,), True)
                elif routes[k] is not None:
                    routes[k](it, entry[0])
                else:
                    finish_one(k, it, entry[0])
            elif is_async[k]:
                t0 = clock() if timed else 0.0
                st = state
                if kd >= SEND and it.frame.tag_id:  # keys carry frame and iteration
                    st = it.xstate
                    if st is None:
                        st = it.xstate = _sr.InFrameState(state, it.frame.tag_id,
                                                          it.number)
                box = [True, None, None]
                try:
                    fns[k](ctxs[k], st, async_done(k, it, t0, box), *args)
                except BaseException as e:  # noqa: B036 - reported like a later failure
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    if box[0]:
                        box[0] = False
                        box[1], box[2] = None, e
                        box.append(clock())
                    else:  # it called back already: a failure after its completion
                        outstanding_remote[0] += 1
                        done_q.put((k, it, None, e, t0, clock(), None))
                if box[0]:
                    box[0] = False  # completes later (through done_q)
                    outstanding_remote[0] += 1
                else:
                    completed(k, it, box[1], box[2], t0, box[3], None)
            elif cheap[k]:
                if trace is not None:
                    t0 = clock()
                try:
                    r = fns[k](ctxs[k], *args)
                except BaseException as e:  # noqa: B036
                    if isinstance(e, (KeyboardInterrupt, SystemExit)):
                        raise
                    error[0] = kernel_error(op_of(k, e), e, loop_iterations(it))
                    break
                if trace is not None:
                    record(k, it, r, t0, clock())
                if len(out_edges[k]) == 1:
                    finish_one(k, it, r)
                else:
                    finish(k, it, outs_of(k, r), False)
            else:
                outstanding_remote[0] += 1
                pool.submit(run_remote, k, it, args)
        if error[0] is None and state.cancelled is not None:
            error[0] = state.cancelled
        elif error[0] is not None and state.cancelled is None:
            state.cancel(errors.CancelledError(None, None, "Step cancelled: %s"
                                               % error[0].message))
        if outstanding_remote[0] == 0:
            break
        if interleaved and done_q.empty():
            if not (yield):
                continue
        item = _next_done(done_q, state)
        if item is None:
            error[0] = error[0] or errors.DeadlineExceededError(
                None, None, "Timed out waiting for notification")
            state.cancel(error[0])
            continue
        outstanding_remote[0] -= 1
        completed(*item)
    if error[0] is not None:
        raise error[0]
    if rit.outstanding or rit.n_children:
        raise errors.InternalError(None, None, "The step ended with work still pending "
                                   "(a loop or cond that can never complete).")
    if trace is None:
        prog.iterations += iterations[0]
    return [fetched.get(f, DEAD) for f in prog.fetch]

