"""Scheduling Recvs as late as their consumers allow (white paper §5.2).

A `_Recv` has no inputs inside its partition, so every executor would start it with the
step: a large tensor received early is held in the destination device's memory from the
start of the step until its consumer runs, perhaps at the end of a long chain.
`schedule_recvs_late(parts)` delays each Recv until its first consumer (in the
partition's dataflow order) is otherwise ready: the Recv gets a control input from each
other producer of that consumer. Every executor then starts it late: the plan order
of the sequential and inline paths puts it right before the consumer, and the dataflow
scheduler makes it ready only when those producers have run.

A gate must never create a wait cycle. Partitions depend on each other through their
Send/Recv pairs, so a producer may depend on the Recv it would gate through another
device; such a producer is not used. Gates are checked together over the step's whole
graph of partitions (nodes, Send -> Recv edges); if they formed a cycle (two gated
Recvs each upstream of the other's gate), no gate is added.

Partitions holding control flow are left as they are (a gate inside a cond could be
dead, and deadness would then reach the Recv). This is a pure pass over the partitions
`partition.partition` returns, before they are lowered; the one-device path never sees
it.
"""
from __future__ import annotations

from typing import Dict, List

from tensorweave.runtime import optimizer as _opt
from tensorweave.runtime import partition as _part
from tensorweave.runtime.policy import CONTROL_FLOW_OPS


def _preds(n: _opt.Node, send_of: Dict[str, _opt.Node]) -> List[_opt.Node]:
    out = [p for p, _ in n.inputs if not (n.type in ("Merge", "RefMerge") and p.type in (
        "NextIteration", "RefNextIteration"))]  # a loop's back edge
    out.extend(n.control_inputs)
    if n.type == "_Recv":
        s = send_of.get(n.op.rendezvous_key)
        if s is not None:
            out.append(s)
    return out


def _global_order(nodes: List[_opt.Node], send_of: Dict[str, _opt.Node]):
    """`nodes` (every partition's) in a dataflow order over data, control and
    Send -> Recv edges, or None if they form a cycle."""
    index = {id(n): i for i, n in enumerate(nodes)}
    order = _opt.stable_topological_indices(
        [{index[id(p)] for p in _preds(n, send_of) if id(p) in index} for n in nodes])
    return None if order is None else [nodes[i] for i in order]


def schedule_recvs_late(parts) -> int:
    """Gives each `_Recv` of `parts` (a partition.Partitions, changed in place) control
    inputs from the other producers of its first consumer, so that it starts only when
    that consumer is otherwise ready (see the module docstring). Returns the number of
    control edges added."""
    nodes = [n for p in parts.parts for n in p.graph.nodes]
    recvs = [n for n in nodes if n.type == "_Recv"]
    if not recvs:
        return 0
    send_of = {n.op.rendezvous_key: n for n in nodes if n.type == "_Send"}
    order = _global_order(nodes, send_of)
    if order is None:
        return 0
    bit = {id(r): 1 << k for k, r in enumerate(recvs)}
    # upstream[n]: the Recvs n depends on, on any device (a bit set over `recvs`)
    upstream: Dict[int, int] = {}
    for n in order:
        a = 0
        for p in _preds(n, send_of):
            a |= upstream.get(id(p), 0) | bit.get(id(p), 0)
        upstream[id(n)] = a
    added = []  # (recv, its control inputs before)
    for part in parts.parts:
        if any(n.type in CONTROL_FLOW_OPS for n in part.graph.nodes):
            continue  # a gate that may be dead would make its Recv dead
        first: Dict[int, _opt.Node] = {}
        for n in part.graph.nodes:  # a dataflow order of the partition
            for p in [p for p, _ in n.inputs] + list(n.control_inputs):
                if p.type == "_Recv" and id(p) not in first:
                    first[id(p)] = n
        for r in part.graph.nodes:
            c = first.get(id(r)) if r.type == "_Recv" else None
            if c is None:
                continue
            gates = []
            for x in [p for p, _ in c.inputs] + list(c.control_inputs):
                if x is r or x.type in ("_Recv", "_Feed") or x in gates or \
                        x in r.control_inputs or x.device is not r.device or \
                        upstream[id(x)] & bit[id(r)]:
                    continue
                gates.append(x)
            if gates:
                added.append((r, r.control_inputs))
                r.control_inputs = list(r.control_inputs) + gates
    if not added:
        return 0
    if _global_order(nodes, send_of) is None:  # gates upstream of each other: none
        for r, before in added:
            r.control_inputs = before
        return 0
    for part in parts.parts:
        part.graph.nodes = _part.dataflow_order(part.graph.nodes)
    return sum(len(r.control_inputs) - len(before) for r, before in added)
