"""Partitioning a placed step graph into one step graph per device (OSDI §3.3).

`partition(sg)` is a pure pass over the pruned, placed and optimized StepGraph of a step
(the user's graph and `sg` are not changed). For each device that
holds nodes it builds a StepGraph of copies of that device's nodes, and replaces every
edge between devices by a pair of transfer nodes sharing a rendezvous key
(runtime/rendezvous.py):

  * a data edge p:i -> n (p on device A, n on device B) becomes `_Send` on A reading p:i
    and `_Recv` on B feeding n; there is ONE Recv per (tensor, destination device),
    however many nodes of B read the tensor (white paper §3.2);
  * a control edge c -> n across devices is carried by an empty value: a dummy Const on
    c's device with a control input from c, sent to n's device; n gets a control input
    from the Recv. When B already receives a tensor of c, that Recv orders n instead.

Control flow spanning devices (EuroSys 2018 §4.4): a Send inside a loop frame sends the
value of its own frame instance and iteration (the executor tags the key, runtime/
tagged.py), and a dead value travels as dead. Each loop frame whose nodes (or nested
frames, or Exits) sit on several devices gets, on each of those devices, a replica of
its control structure: Enter -> Merge -> Switch -> Identity -> NextIteration, Exit
(Figure 6), switching on the loop's LoopCond value, which the LoopCond's device sends to
the others every iteration. Its Enter reads the value one of the loop's own Enters
reads, so each replica starts when the loop does, and not at all in an untaken branch
or the final (dead) iteration of an enclosing loop. Every Recv inside a frame gets a
control input from its device's replica Merge, which places it in that frame and runs
it once per iteration (the last one receives a dead value). The frame name and
parallel_iterations are those of the loop; no device coordinates the others.

Feeds stay with the partition of their feed node (where the fed tensor was placed) and
are renumbered per partition; each fetch and target belongs to the partition of its
node. `Partitions` records the mapping back to the step's feed and fetch indices.

With lossy transfer compression on (`partition(sg, compression)`, a 16-bit DType), each
pair carrying a float32 tensor gets the attr `_transfer_dtype` (visible in partition
graphs): its Send narrows the value and its Recv widens it back (send_recv_ops.py).

Transfer nodes have no Operation of the user's graph; a `TransferOp` stands in for it
(name, type, device and rendezvous key), so errors, traces and partition graphs name
them like any op.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.runtime import optimizer as _opt
from tensorweave.runtime import send_recv_ops as _sr
from tensorweave.runtime.policy import CONTROL_FLOW_OPS as _CONTROL_FLOW_OPS
from tensorweave.runtime.rendezvous import create_key


class _InputName:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class TransferOp:
    """What a node that partitioning added has instead of an Operation: its name, type
    and device (a device name), the rendezvous key of a `_Send`/`_Recv` ("" for the
    dummy Const of a control edge), and `inputs` naming what it reads."""

    __slots__ = ("name", "type", "device", "rendezvous_key", "inputs", "copy", "narrow")

    traceback_location = None  # not created by a user line
    _op_def = None             # single-output kernels: the executor calls them as they are
    node_def = None

    def __init__(self, name: str, op_type: str, device: str, rendezvous_key: str = "",
                 inputs: Tuple[str, ...] = ()):
        self.name, self.type, self.device = name, op_type, device
        self.rendezvous_key = rendezvous_key
        self.inputs = tuple(_InputName(i) for i in inputs)
        self.copy = None  # a Recv's copy between memory spaces (None: pass the reference)
        self.narrow = None  # a compressing Send's narrowing of the value (None: none)

    def __repr__(self):
        return "<TransferOp %s %s on %s>" % (self.type, self.name, self.device)


class Partition:
    """The step graph of one device.

    `graph.nodes` are in a topological order; `feed_indices[j]` is the step's feed index
    of the partition's feed j (its `_Feed` node has feed_index j); `fetch_indices[j]` the
    step's fetch index of `graph.fetches[j]`.
    """

    def __init__(self, device, graph: _opt.StepGraph, feed_indices: Tuple[int, ...],
                 fetch_indices: Tuple[int, ...]):
        self.device = device
        self.graph = graph
        self.feed_indices = feed_indices
        self.fetch_indices = fetch_indices

    @property
    def sends(self) -> List[_opt.Node]:
        return [n for n in self.graph.nodes if n.type == "_Send"]

    @property
    def recvs(self) -> List[_opt.Node]:
        return [n for n in self.graph.nodes if n.type == "_Recv"]


class Partitions:
    """The partitions of one step, in order of the devices' first nodes, and
    `fetch_map[i]` = (partition index, index among that partition's fetches) of the
    step's fetch i."""

    def __init__(self, parts: List[Partition], fetch_map: Tuple[Tuple[int, int], ...]):
        self.parts = parts
        self.fetch_map = fetch_map

    @property
    def devices(self) -> list:
        return [p.device for p in self.parts]


def devices_of(sg: _opt.StepGraph) -> list:
    """The distinct devices of `sg`'s nodes, in order of first appearance."""
    seen: Dict[int, object] = {}
    for n in sg.nodes:
        if id(n.device) not in seen:
            seen[id(n.device)] = n.device
    return list(seen.values())


def dataflow_order(nodes: List[_opt.Node]) -> List[_opt.Node]:
    """`nodes` in a dataflow order, stable with respect to their order, ignoring the
    NextIteration -> Merge back edges of while loops."""
    index = {id(n): i for i, n in enumerate(nodes)}
    order = _opt.stable_topological_indices(
        [{index[id(p)] for p, _ in n.inputs if id(p) in index and not (
            n.type in ("Merge", "RefMerge") and
            p.type in ("NextIteration", "RefNextIteration"))}
         | {index[id(c)] for c in n.control_inputs if id(c) in index} for n in nodes])
    if order is None:
        raise ValueError("The step graph has a cycle that is not a while loop")
    return [nodes[i] for i in order]


def _copy(n: _opt.Node) -> _opt.Node:
    c = _opt.Node(n.op, n.type, n.attrs, n.n_out, n.name, n.stateful, n.device)
    c.value, c.feed_index, c.keep = n.value, n.feed_index, n.keep
    return c


def tensor_name(p: _opt.Node, i: int) -> str:
    """The name of output i of step-graph node p (a feed node is named by its tensor)."""
    return p.name if p.type == "_Feed" else "%s:%d" % (p.name, i)


def _dtype_of(p: _opt.Node, i: int) -> _dt.DType:
    op = p.op
    if op is None or isinstance(op, TransferOp):
        return _dt.as_dtype(p.value[i].dtype)
    if p.type == "_Feed":
        for t in op.outputs:
            if t.name == p.name:
                return t.dtype
    return op.outputs[i].dtype


def _copy_between(src, dst):
    """How a value on `src` reaches `dst`: None between host-memory (CPU) devices, which
    share memory (the reference is passed); otherwise a copy to the host and from
    there into `dst`'s memory (each an identity on a CPU device), e.g. the explicit
    copies of the simulated accelerator (runtime/devices.py)."""
    if src.device_type == "CPU" and dst.device_type == "CPU":
        return None
    to_host, from_host = src.copy_to_host, dst.copy_from_host
    return lambda value: from_host(to_host(value))


def _short(device) -> str:
    return "%s_%d" % (device.device_type, device.index)


class _Builder:
    """The state of one `partition` call."""

    def __init__(self, compression: Optional[_dt.DType] = None):
        self.compression = compression
        self.copies: Dict[int, _opt.Node] = {}
        self.nodes: Dict[int, List[_opt.Node]] = {}
        self.recvs: Dict[Tuple[int, int, int], _opt.Node] = {}  # (src, output, dst)
        self.ctrl_recvs: Dict[Tuple[int, int], _opt.Node] = {}  # (src, dst)
        self.data_recv_of_src: Dict[Tuple[int, int], _opt.Node] = {}
        self.recv_source: Dict[int, _opt.Node] = {}  # id(Recv) -> the node it carries
        self.pivot_edges: list = []  # (copy of n, frame, n's device, x): see pivot_control
        self.pivots: Dict[Tuple[int, int], _opt.Node] = {}  # (frame, device) -> Identity
        self.cond_merges: Dict[int, set] = {}  # id(frame) -> see _merges_the_predicate_reads
        self.feeding_state: set = set()  # see _feeding_stateful_ops (steps with loops)

    def add(self, n: _opt.Node) -> None:
        self.nodes.setdefault(id(n.device), []).append(n)

    def transfer(self, src: _opt.Node, i: int, dtype: _dt.DType, dst, name: str,
                 is_control: bool) -> _opt.Node:
        """A Send of output i of `src` (a copy, on its device) and its Recv on `dst`;
        returns the Recv."""
        dev = src.device
        key = create_key(dev.name, getattr(dev, "incarnation", 0), dst.name, name)
        attrs = {"tensor_name": name, "send_device": dev.name,
                 "send_device_incarnation": getattr(dev, "incarnation", 0),
                 "recv_device": dst.name, "client_terminated": False}
        compress = (self.compression is not None and not is_control
                    and dtype.base_dtype == _dt.float32)
        if compress:
            attrs["_transfer_dtype"] = self.compression
        base = name.replace(":", "_")
        send_name = "%s/_send_to_%s" % (base, _short(dst))
        recv_name = "%s/_recv_from_%s" % (base, _short(dev))
        send = _opt.Node(TransferOp(send_name, "_Send", dev.name, key, (name,)), "_Send",
                         dict(attrs, T=dtype), 0, send_name, False, dev)
        send.inputs = [(src, i)]
        self.add(send)
        recv_op = TransferOp(recv_name, "_Recv", dst.name, key)
        recv_op.copy = _copy_between(dev, dst)
        if compress:
            send.op.narrow = _sr.narrowing(self.compression)
            recv_op.copy = _sr.widening(recv_op.copy)
        recv = _opt.Node(recv_op, "_Recv", dict(attrs, tensor_type=dtype), 1, recv_name,
                         False, dst)
        self.add(recv)
        if not is_control:
            self.data_recv_of_src.setdefault((id(src), id(dst)), recv)
        return recv

    def data_recv(self, p: _opt.Node, i: int, dst) -> _opt.Node:
        key = (id(p), i, id(dst))
        r = self.recvs.get(key)
        if r is None:
            r = self.recvs[key] = self.transfer(self.copies[id(p)], i, _dtype_of(p, i), dst,
                                                tensor_name(p, i), False)
            self.recv_source[id(r)] = p
        return r

    def control_recv(self, c: _opt.Node, dst) -> _opt.Node:
        r = self.data_recv_of_src.get((id(self.copies[id(c)]), id(dst)))
        if r is not None:
            return r
        key = (id(c), id(dst))
        r = self.ctrl_recvs.get(key)
        if r is None:
            src = self.copies[id(c)]
            name = "%s/_control_to_%s" % (c.name.replace(":", "_"), _short(dst))
            dummy = _opt.Node(TransferOp(name, "Const", src.device.name), "Const",
                              {"dtype": _dt.float32, "value": _sr.CONTROL_VALUE}, 1, name,
                              False, src.device)
            dummy.value = [_sr.CONTROL_VALUE]
            dummy.control_inputs = [src]
            self.add(dummy)
            r = self.ctrl_recvs[key] = self.transfer(dummy, 0, _dt.float32, dst,
                                                     name + ":0", True)
            self.recv_source[id(r)] = c
        return r

    def pivot_control(self, x: _opt.Node, n: _opt.Node, frame_of) -> bool:
        """Whether the control edge x -> n (x on another device) can be taken from n's
        device's control-loop replica instead of a transfer: x is a pivot of n's loop
        frame (the Identity of the true side of a Switch on the frame's LoopCond), live
        exactly when the replica's Identity is; and either of a loop variable the
        predicate reads, so that it also runs no later than the replica's Identity, or
        no stateful op depends on n, so that running n earlier changes nothing. (A
        gradient's forward counter, which the predicate does not read, orders the stack
        pushes of successive iterations through such an edge: taken from the replica,
        it let the next iteration's pushes run first.) Such edges are recorded in
        `pivot_edges` and connected by _add_control_loops."""
        f = frame_of[id(x)]
        if f is None or f is not frame_of[id(n)] or f.parent is None or \
                x.type != "Identity" or len(x.inputs) != 1:
            return False
        sw, port = x.inputs[0]
        if sw.type != "Switch" or port != 1 or sw.inputs[1][0].type != "LoopCond" or \
                frame_of[id(sw.inputs[1][0])] is not f:
            return False
        if id(n) in self.feeding_state:
            merges = self.cond_merges.get(id(f))
            if merges is None:
                merges = self.cond_merges[id(f)] = _merges_the_predicate_reads(
                    sw.inputs[1][0], frame_of)
            if id(sw.inputs[0][0]) not in merges:
                return False
        self.pivot_edges.append((self.copies[id(n)], f, n.device, x))
        return True

    def added(self, name: str, op_type: str, device, attrs: dict, n_out: int,
              inputs=(), control_inputs=()) -> _opt.Node:
        """A node that partitioning adds on `device` (a TransferOp stands for its op)."""
        n = _opt.Node(TransferOp(name, op_type, device.name), op_type, attrs, n_out, name,
                      False, device)
        n.inputs = list(inputs)
        n.control_inputs = list(control_inputs)
        self.add(n)
        return n

    def control_loop(self, frame, device, pred, gate, dtype) -> _opt.Node:
        """The control-loop state machine of `frame` on `device` (EuroSys 2018 Figure 6):
        Enter (of `gate`, on `device`: the value one of the loop's own Enters reads, so
        the replica starts exactly when the loop does, and stays idle, dead, in an
        untaken branch or the last iteration of an enclosing loop) -> Merge -> Switch on
        `pred` (the LoopCond value, or its Recv) -> Identity -> NextIteration -> Merge,
        and Exit of the Switch's false side. Its Merge, live in every iteration of the
        frame on `device`, is returned: the Recvs of the frame there depend on it."""
        base = "%s/_cloop_%s/" % (frame.name, _short(device))
        t = {"T": dtype}
        enter = self.added(base + "Enter", "Enter", device,
                           {"T": dtype, "frame_name": frame.name, "is_constant": False,
                            "parallel_iterations": frame.parallel_iterations}, 1, [gate])
        merge = self.added(base + "Merge", "Merge", device, {"T": dtype, "N": 2}, 2)
        switch = self.added(base + "Switch", "Switch", device, t, 2, [(merge, 0), pred])
        ident = self.added(base + "Identity", "Identity", device, t, 1, [(switch, 1)])
        nxt = self.added(base + "NextIteration", "NextIteration", device, t, 1,
                         [(ident, 0)])
        self.added(base + "Exit", "Exit", device, t, 1, [(switch, 0)])
        merge.inputs = [(enter, 0), (nxt, 0)]
        self.pivots[(id(frame), id(device))] = ident
        return merge


def frame_devices(sg: _opt.StepGraph, frame_of) -> Dict[int, list]:
    """{id(frame): the devices holding its nodes, its Exits or its nested frames' nodes},
    each list in the order of `devices_of(sg)`."""
    order = {id(d): k for k, d in enumerate(devices_of(sg))}
    sets: Dict[int, dict] = {}

    def add(f, d):
        while f is not None:
            sets.setdefault(id(f), {})[id(d)] = d
            f = f.parent
    for n in sg.nodes:
        add(frame_of[id(n)], n.device)
        if n.type in ("Exit", "RefExit"):
            for p, _ in n.inputs:
                add(frame_of[id(p)], n.device)
    return {k: sorted(v.values(), key=lambda d: order[id(d)]) for k, v in sets.items()}


def _merges_the_predicate_reads(loop_cond: _opt.Node, frame_of) -> set:
    """The ids of the Merges of `loop_cond`'s frame that its predicate reads within an
    iteration (through data or control edges, not through a Merge's own inputs)."""
    frame = frame_of[id(loop_cond)]
    seen, merges, stack = set(), set(), [loop_cond]
    while stack:
        n = stack.pop()
        if n.type in ("Merge", "RefMerge"):
            merges.add(id(n))
            continue
        for p in [p for p, _ in n.inputs] + list(n.control_inputs):
            if id(p) not in seen and frame_of.get(id(p)) is frame:
                seen.add(id(p))
                stack.append(p)
    return merges


def _feeding_stateful_ops(nodes) -> set:
    """The ids of the nodes that a stateful node depends on (itself included), through
    data and control edges, loop back edges too."""
    out, stack = set(), [n for n in nodes if n.stateful]
    while stack:
        n = stack.pop()
        if id(n) not in out:
            out.add(id(n))
            stack.extend(p for p, _ in n.inputs)
            stack.extend(n.control_inputs)
    return out


def loop_cond_of(frame):
    """The LoopCond node of loop `frame` (a frames.Frame), or None."""
    for n in frame.members:
        if n.type == "LoopCond":
            return n
    return None


def _loop_merge_on(frame, device):
    """A Merge of loop `frame`'s own loop variables on `device` (reading a non-constant
    Enter of the frame on `device` and a NextIteration), or None. Like a control-loop
    replica's Merge it is live in every iteration of the frame that runs (dead in an
    untaken branch), so on the LoopCond's device the frame's Recvs depend on it and no
    replica is needed there."""
    enters = {id(e) for e in frame.enters if not e.attrs.get("is_constant")}
    for m in frame.members:
        if m.type == "Merge" and m.device is device and len(m.inputs) == 2 and \
                id(m.inputs[0][0]) in enters and m.inputs[0][0].device is device and \
                m.inputs[1][0].type == "NextIteration":
            return m
    return None


def _add_control_loops(sg: _opt.StepGraph, b: _Builder, analyzed=None) -> None:
    """Gives every loop frame split across devices its control-loop state machine on
    each of its devices (EuroSys 2018 §4.4, Figure 6): the LoopCond's device sends the
    predicate of each iteration to the others (one Recv per device, shared with any
    other reader there), each device's replica switches on it (the LoopCond's device needs
    none when one of the loop's own Merges is there: `_loop_merge_on`), and every Recv
    inside a frame depends on its device's replica Merge, so it runs once in each iteration of
    its frame instance (and receives a dead value in the last one)."""
    from tensorweave.runtime import frames as _frames
    _, frame_of, root = analyzed or _frames.analyze(sg.nodes)
    devices = frame_devices(sg, frame_of)
    merges: Dict[Tuple[int, int], _opt.Node] = {}

    def walk(f):
        devs = devices.get(id(f), [])
        if f is not root and len(devs) > 1:
            cond = loop_cond_of(f)
            entry = next((e for e in f.enters if not e.attrs.get("is_constant")),
                         f.enters[0])
            src, i = entry.inputs[0]
            for d in devs:
                own = _loop_merge_on(f, d) if cond.device is d else None
                if own is not None:  # the loop's own Merge there is live in each iteration
                    merges[(id(f), id(d))] = b.copies[id(own)]
                    continue
                pred = (b.copies[id(cond)], 0) if cond.device is d else \
                    (b.data_recv(cond, 0, d), 0)
                gate = (b.copies[id(src)], i) if src.device is d else \
                    (b.data_recv(src, i, d), 0)
                merges[(id(f), id(d))] = b.control_loop(f, d, pred, gate,
                                                        _dtype_of(src, i))
        for c in f.children:
            walk(c)
    walk(root)
    for c, f, d, x in b.pivot_edges:  # control edges from a loop's pivot
        ident = b.pivots.get((id(f), id(d)))
        r = ident if ident is not None else b.control_recv(x, d)
        if r not in c.control_inputs:
            c.control_inputs.append(r)
    if not merges:
        return
    for dev_nodes in b.nodes.values():
        for r in dev_nodes:
            src = b.recv_source.get(id(r))
            if src is None:
                continue
            f = frame_of[id(src)]
            if f is not root:
                r.control_inputs.append(merges[(id(f), id(r.device))])


def partition(sg: _opt.StepGraph, compression: Optional[_dt.DType] = None) -> Partitions:
    """The per-device step graphs of `sg` (see the module docstring). `sg` must be
    placed (every node's `device` a Device); a loop split across devices must have a
    LoopCond (partitioned_plan.check_control_flow checks it); `compression` is the
    16-bit DType float32 transfers travel as, or None."""
    b = _Builder(compression)
    order = dataflow_order(sg.nodes)
    analyzed = None
    if any(n.type in _CONTROL_FLOW_OPS for n in sg.nodes):
        from tensorweave.runtime import frames as _frames
        analyzed = _frames.analyze(sg.nodes)
        b.feeding_state = _feeding_stateful_ops(sg.nodes)
    for n in order:
        c = b.copies[id(n)] = _copy(n)
        b.add(c)
    for n in order:
        c = b.copies[id(n)]
        dev = n.device
        c.inputs = [(b.copies[id(p)], i) if p.device is dev else (b.data_recv(p, i, dev), 0)
                    for p, i in n.inputs]
        ctrl: List[_opt.Node] = []
        for x in n.control_inputs:
            if x.device is dev:
                r = b.copies[id(x)]
            elif analyzed is not None and b.pivot_control(x, n, analyzed[1]):
                continue  # taken from the replica's pivot (_add_control_loops)
            else:
                r = b.control_recv(x, dev)
            if r not in ctrl:
                ctrl.append(r)
        c.control_inputs = ctrl
    if analyzed is not None:
        _add_control_loops(sg, b, analyzed)
    devices = devices_of(sg)
    index = {id(d): k for k, d in enumerate(devices)}
    fetches: List[list] = [[] for _ in devices]
    fetch_idx: List[list] = [[] for _ in devices]
    fetch_map = []
    for g, (p, i) in enumerate(sg.fetches):
        k = index[id(p.device)]
        fetch_map.append((k, len(fetches[k])))
        fetches[k].append((b.copies[id(p)], i))
        fetch_idx[k].append(g)
    targets: List[list] = [[] for _ in devices]
    for t in sg.targets:
        targets[index[id(t.device)]].append(b.copies[id(t)])
    parts = []
    for k, d in enumerate(devices):
        nodes = dataflow_order(b.nodes[id(d)])
        feeds = sorted((n for n in nodes if n.type == "_Feed"), key=lambda n: n.feed_index)
        feed_indices = tuple(n.feed_index for n in feeds)
        for j, n in enumerate(feeds):
            n.feed_index = j
        parts.append(Partition(d, _opt.StepGraph(nodes, fetches[k], targets[k]),
                               feed_indices, tuple(fetch_idx[k])))
    return Partitions(parts, tuple(fetch_map))


# --- partition graphs (RunOptions.output_partition_graphs) ------------------------------
def _node_name(n: _opt.Node) -> str:
    if n.type == "_Feed":  # TF's call frame: feeds are _Arg nodes
        return "_arg_%s_%d" % (n.name.replace(":", "_"), n.feed_index)
    return n.name


def graph_def_of(sg: _opt.StepGraph):
    """The `tensorflow.GraphDef` message of a (partition's) step graph: op types
    (including `_Send`/`_Recv`), inputs, devices and attrs; feeds appear as `_Arg` and
    fetches as `_Retval` nodes, as in TF1's partition graphs."""
    import numpy as np

    from tensorweave.framework import graph_def_proto as _gdp
    from tensorweave.framework import serialize as _ser

    def ref(p, i):
        return _node_name(p) if i == 0 else "%s:%d" % (_node_name(p), i)

    out = []
    for n in sg.nodes:
        dev = n.device.name if hasattr(n.device, "name") else str(n.device or "")
        if n.type == "_Feed":
            attrs = {"T": _dtype_of(n, 0), "index": n.feed_index}
            out.append(_ser.NodeDef(_node_name(n), "_Arg", [], dev, attrs))
            continue
        attrs = dict(n.attrs)
        if n.type == "Const" and n.value is not None:
            value = np.asarray(n.value[0])
            attrs = {"dtype": _dt.as_dtype(value.dtype), "value": value}
        inputs = [ref(p, i) for p, i in n.inputs] + ["^" + _node_name(c)
                                                     for c in n.control_inputs]
        out.append(_ser.NodeDef(n.name, n.type, inputs, dev, attrs))
    for j, (p, i) in enumerate(sg.fetches):
        dev = p.device.name if hasattr(p.device, "name") else ""
        out.append(_ser.NodeDef("_retval_%s_%d_%d" % (p.name.replace(":", "_"), i, j),
                                "_Retval", [ref(p, i)], dev,
                                {"T": _dtype_of(p, i), "index": j}))
    # what runs: the private ops' fused kernels are not lowered to standard ops
    proto = _gdp.graph_def_to_proto(_ser.GraphDef(out), lower=False)
    return proto
