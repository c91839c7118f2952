"""Islands: runs of cheap synchronous nodes that the tagged executor schedules as one.

The tagged executor (tagged.py) pays its bookkeeping per node: the ready queue, the
pending counts of the successors, the iteration's outstanding count. Much of a loop
body is nodes that could run the moment their producer ran: a pivot's constants, a
chain of elementwise ops, LoopCond after the predicate. An island is a cheap
synchronous node (its root) together with every later node of that kind whose inputs,
data and control, all come from the island: it runs when its root would have run, as
one generated straight-line function, and the executor sees one node whose output
ports are the members' outputs that leave the island (or are fetched).

The outcome is that of the unfused program: a member was ready exactly when the last of
its producers inside the island ran, so running it right then is one of the orders the
executor could have chosen, and no member waits for anything outside the island (no
wait can be added, none can deadlock). A dead root makes every member dead, as the
executor's dead propagation would (each member depends on the root). Traced runs use
the unfused program, so step stats keep one record per kernel.

Islands of one loop body also merge where a node reads two of them (a loop variable's
add reading a constant of the pivot's island): the merged island has several entries,
each fed only by Switch outputs of the same predicate and branch, so its inputs arrive
together at the start of an iteration and are live or dead together. It waits for all
of them, which can delay no member past the moment it would have run only if a member
fed one of those Switches in the same iteration: such islands do not merge (the
ancestors of the Switches are followed back, every `_Send` counted as feeding every
`_Recv`). Should the entries' liveness still differ (a hand-built graph), the island
runs its dead-aware form, which sends each member's own deadness on.
"""
from __future__ import annotations

import copy
import itertools
from typing import Dict, FrozenSet, List, Optional, Set

from tensorweave.runtime import frames as _frames
from tensorweave.runtime.values import DEAD

_island_ids = itertools.count()


def fuse_islands(prog):
    """The form of `prog` (tagged.TaggedProgram) with its islands fused, or None when no
    island has a member besides its root."""
    from tensorweave.runtime.tagged import FORWARD
    n = len(prog.kind)
    producers: List[List[int]] = [[] for _ in range(n)]
    # (node, input slot) -> (producer, port); slots are numbered within each frame
    source_of: Dict[tuple, tuple] = {}
    for k in range(n):
        for port, port_edges in enumerate(prog.out_edges[k]):
            for dst, slot in port_edges:
                producers[dst].append(k)
                source_of[(dst, slot)] = (k, port)
        for dst in prog.ctrl_out[k]:
            producers[dst].append(k)
    merger = _Merger(prog, producers, source_of)
    island_of: List[Optional[int]] = [None] * n
    members: Dict[int, List[int]] = {}
    entries: Dict[int, List[int]] = {}  # island -> its entry nodes, the island's root first
    # program order is topological within an iteration (back edges enter Merges only)
    for k in range(n):
        joinable = prog.fast[k] or prog.kind[k] == FORWARD
        roots = {island_of[p] for p in producers[k]}
        if joinable and producers[k] and None not in roots and (
                len(roots) == 1 or merger.can_merge(roots, k, members, entries)):
            root = min(roots)
            for other in sorted(roots - {root}):
                for m in members.pop(other):
                    island_of[m] = root
                    members[root].append(m)
                entries[root].extend(entries.pop(other))
            members[root].sort()
            island_of[k] = root
            members[root].append(k)
        elif prog.fast[k]:
            island_of[k] = k
            members[k] = [k]
            entries[k] = [k]
    islands = {r: m for r, m in members.items() if len(m) > 1}
    if not islands:
        return None
    fused = copy.copy(prog)
    for name in ("fn", "out_edges", "ctrl_out", "in_base", "n_data", "in_end", "pending0"):
        setattr(fused, name, list(getattr(prog, name)))
    fused.frame_slots = dict(prog.frame_slots)
    fused.island_ops = {}
    fused.islands = islands
    # an island of several entries -> its members' control successors outside it (a
    # list per member that has some), sent on by its dead-aware form
    ctrl_of_mixed: Dict[int, List[List[int]]] = {}
    fetch_port: Dict[tuple, tuple] = {}
    # every island's function in one generated module: one compile() for the program
    lines: List[str] = []
    line_ops: Dict[int, object] = {}
    args: Dict[str, object] = {"DEAD": DEAD}
    for root, mem in islands.items():
        inside = set(mem)
        ports, edges, ctrl, ctrl_groups = [], [], [], []
        for m in mem:
            for port, port_edges in enumerate(prog.out_edges[m]):
                out = [e for e in port_edges if e[0] not in inside]
                fetched = (m, port) in prog.fetch
                if out or fetched:
                    if fetched:
                        fetch_port[(m, port)] = (root, len(ports))
                    ports.append((m, port))
                    edges.append(out)
            leaving = [d for d in prog.ctrl_out[m] if d not in inside]
            if leaving:
                ctrl.extend(leaving)
                ctrl_groups.append((m, leaving))
        entry_args = _entry_args(fused, root, entries[root], source_of)
        _generate(prog, mem, entry_args, ports, producers, lines, line_ops, args)
        if len(entries[root]) > 1:
            _generate(prog, mem, entry_args, ports, producers, lines, line_ops, args,
                      dead_aware=[m for m, _ in ctrl_groups])
            ctrl_of_mixed[root] = [dsts for _, dsts in ctrl_groups]
        fused.out_edges[root] = edges
        fused.ctrl_out[root] = ctrl
    filename = "<tensorweave islands %s #%d>" % (
        getattr(prog.op[next(iter(islands))], "name", ""), next(_island_ids))
    source = "\n".join(lines) + "\n"
    _frames.register_source(prog, filename, source)
    ns: Dict[str, object] = dict(args)
    exec(compile(source, filename, "exec"), ns)
    for root in islands:
        fused.fn[root] = ns["island%d" % root]
        fused.island_ops[root] = (filename, line_ops)
    fused.mixed = {root: (ns["island%d_mixed" % root], groups)
                   for root, groups in ctrl_of_mixed.items()}
    fused.fetch = [fetch_port.get(f, f) for f in prog.fetch]
    fused.two_ports = [tuple(e) if len(e) == 2 else None for e in fused.out_edges]
    fused.fused = None
    return fused


class _Merger:
    """Decides whether islands read by one node may merge into one (module docstring)."""

    def __init__(self, prog, producers: List[List[int]], source_of: Dict[tuple, tuple]):
        self.prog = prog
        self.producers = producers
        self.source_of = source_of
        self.ancestors: Dict[FrozenSet[int], Set[int]] = {}

    def can_merge(self, roots, k: int, members, entries) -> bool:
        from tensorweave.runtime.tagged import SWITCH
        prog, source_of = self.prog, self.source_of
        switches, branch = set(), None
        for r in roots:
            for e in entries[r]:
                if prog.n_data[e] == 0 or prog.pending0[e] != prog.n_data[e]:
                    return False  # no data input, or control inputs
                for slot in range(prog.in_base[e], prog.in_end[e]):
                    s, port = source_of[(e, slot)]
                    if prog.kind[s] != SWITCH:
                        return False
                    key = (source_of.get((s, prog.in_base[s] + 1)), port)
                    if branch is None:
                        branch = key
                    elif key != branch:
                        return False
                    switches.add(s)
        before = self._ancestors(frozenset(switches))
        return k not in before and not any(m in before for r in roots for m in members[r])

    def _ancestors(self, switches: FrozenSet[int]) -> Set[int]:
        """The nodes that feed `switches` within an iteration: NextIteration's value is
        the next iteration's; a `_Recv` is fed by every `_Send` (another partition may
        connect them)."""
        from tensorweave.runtime.tagged import NEXT, RECV, SEND
        found = self.ancestors.get(switches)
        if found is not None:
            return found
        prog = self.prog
        seen: Set[int] = set()
        stack = list(switches)
        sends_added = False
        while stack:
            x = stack.pop()
            preds = self.producers[x]
            if prog.kind[x] == RECV and not sends_added:
                sends_added = True
                preds = preds + [k for k, kd in enumerate(prog.kind) if kd == SEND]
            for p in preds:
                if p not in seen and prog.kind[p] != NEXT:
                    seen.add(p)
                    stack.append(p)
        self.ancestors[switches] = seen
        return seen


def _entry_args(fused, root: int, entries: List[int], source_of) -> Dict[int, List[str]]:
    """The argument names of each entry's inputs in the island's function. Several
    entries get one range of input slots, at the end of their frame's slots: the edges
    that fed them now feed the island's root there."""
    if len(entries) == 1:
        return {root: ["a%d" % j for j in range(fused.n_data[root])]}
    home = fused.home[root]
    base, names, copied = fused.frame_slots[home], {}, set()
    j = 0
    for e in entries:
        names[e] = []
        for slot in range(fused.in_base[e], fused.in_end[e]):
            p, port = source_of[(e, slot)]
            if p not in copied:
                copied.add(p)
                fused.out_edges[p] = [list(pe) for pe in fused.out_edges[p]]
            fused.out_edges[p][port] = [(root, base + j) if edge == (e, slot) else edge
                                        for edge in fused.out_edges[p][port]]
            names[e].append("a%d" % j)
            j += 1
    fused.in_base[root], fused.n_data[root] = base, j
    fused.in_end[root], fused.pending0[root] = base + j, j
    fused.frame_slots[home] = base + j
    return names


def _generate(prog, mem: List[int], entry_args: Dict[int, List[str]], ports: List[tuple],
              producers, lines: List[str], line_ops: Dict[int, object],
              args: Dict[str, object], dead_aware: Optional[List[int]] = None):
    """Appends to `lines` the island's function `island<root>(_ctx, a0, a1, ...)` (the
    entries' inputs, named by `entry_args`): its members in order, returning the values
    of `ports` ((member, port) pairs; one value when there is one port, a tuple
    otherwise). `line_ops` gets the op of each line that calls a kernel, `args` the
    module globals the function reads (kernels, contexts, constants, all named by node
    index). A value no later member reads is dropped where its last reader ran, so a
    device's memory holds what it would hold with the members run one by one.

    With `dead_aware` (members), the island's dead-aware form `island<root>_mixed`
    instead: a member with a dead input, data or control, is dead and runs no kernel,
    as in the executor; it returns (the ports' values, whether each member of
    `dead_aware` is dead)."""
    from tensorweave.runtime.tagged import NORMAL
    root = mem[0]
    local = {}  # (member, port) -> the expression of its value
    stmts = []  # (member, its variable, the expression, variables it reads, dead if, outs)
    for m in mem:
        if m in entry_args:
            call_args = entry_args[m]
            dead_if = ["%s is DEAD" % a for a in call_args]
        else:
            call_args = [None] * prog.n_data[m]
            for p in producers[m]:
                for port, port_edges in enumerate(prog.out_edges[p]):
                    for dst, slot in port_edges:
                        if dst == m:
                            call_args[slot - prog.in_base[m]] = local[(p, port)]
            dead_if = sorted({"d%d" % p for p in producers[m]})
        reads = {a.split("[")[0] for a in call_args}
        if m not in entry_args and m in prog.const_values:  # its value, no kernel call
            expr = "k%d" % m
            args[expr] = prog.const_values[m]
        elif prog.kind[m] == NORMAL and m not in prog.plain_identities:
            expr = "f%d(c%d%s)" % (m, m, "".join(", " + a for a in call_args))
            args["f%d" % m], args["c%d" % m] = prog.fn[m], prog.ctx[m]
        else:  # LoopCond, an Identity (as the structured compiler's): the input
            expr = call_args[0]
        n_out = len(prog.out_edges[m])
        stmts.append((m, "v%d" % m, expr, reads, dead_if, n_out))
        for port in range(n_out):
            local[(m, port)] = "v%d" % m if n_out == 1 else "v%d[%d]" % (m, port)
    returned = {local[p].split("[")[0] for p in ports}
    last_read = {}
    for j, (_, var, _, reads, _, _) in enumerate(stmts):
        last_read[var] = j
        for r in reads:
            last_read[r] = j
    n_args = sum(len(a) for a in entry_args.values())
    params = ", ".join(["_ctx"] + ["a%d" % j for j in range(n_args)])
    suffix = "" if dead_aware is None else "_mixed"
    lines.append("def island%d%s(%s):" % (root, suffix, params))
    for j, (m, var, expr, reads, dead_if, n_out) in enumerate(stmts):
        if dead_aware is None:
            lines.append("    %s = %s" % (var, expr))
        else:
            lines.append("    d%d = %s" % (m, " or ".join(dead_if) or "False"))
            dead = "DEAD" if n_out == 1 else "(%s)" % ("DEAD, " * n_out)
            lines.append("    %s = %s if d%d else %s" % (var, dead, m, expr))
        if expr.startswith("f"):
            line_ops[len(lines)] = prog.op[m]
        if dead_aware is not None:
            continue
        done = sorted(v for v in reads | {var} if last_read.get(v) == j and
                      v not in returned and v.startswith("v"))
        if done:
            lines.append("    del " + ", ".join(done))
    values = "".join(local[p] + ", " for p in ports)
    if dead_aware is not None:
        lines.append("    return (%s), (%s)" % (values, "".join(
            "d%d, " % m for m in dead_aware)))
    elif len(ports) == 1:
        lines.append("    return " + local[ports[0]])
    else:
        lines.append("    return (%s)" % values)


def failed_op(island, default_op, exc: BaseException):
    """The member op whose kernel raised `exc` inside an island's function
    (`island`: its (file name, line ops)), else `default_op`."""
    filename, line_ops = island
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            return line_ops.get(tb.tb_lineno, default_op)
        tb = tb.tb_next
    return default_op
