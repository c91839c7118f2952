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
"""
from __future__ import annotations

import copy
import itertools
from typing import Dict, List, Optional

from tensorweave.runtime import frames as _frames

_island_ids = itertools.count()


def fuse_islands(prog):
    """The form of `prog` (tagged.TaggedProgram) with its islands fused, or None when no
    island has a member besides its root."""
    from tensorweave.runtime.tagged import FORWARD, NORMAL
    n = len(prog.kind)
    producers: List[List[int]] = [[] for _ in range(n)]
    for k in range(n):
        for port_edges in prog.out_edges[k]:
            for dst, _ in port_edges:
                producers[dst].append(k)
        for dst in prog.ctrl_out[k]:
            producers[dst].append(k)
    island_of: List[Optional[int]] = [None] * n
    members: Dict[int, List[int]] = {}
    # program order is topological within an iteration (back edges enter Merges only)
    for k in range(n):
        joinable = prog.fast[k] or prog.kind[k] == FORWARD
        roots = {island_of[p] for p in producers[k]}
        if joinable and producers[k] and len(roots) == 1 and None not in roots:
            root = roots.pop()
            island_of[k] = root
            members[root].append(k)
        elif prog.fast[k]:
            island_of[k] = k
            members[k] = [k]
    islands = {r: m for r, m in members.items() if len(m) > 1}
    if not islands:
        return None
    fused = copy.copy(prog)
    fused.fn = list(prog.fn)
    fused.out_edges = list(prog.out_edges)
    fused.ctrl_out = list(prog.ctrl_out)
    fused.island_ops = {}
    fused.islands = islands
    fetch_port: Dict[tuple, tuple] = {}
    # every island's function in one generated module: one compile() for the program
    lines: List[str] = []
    line_ops: Dict[int, object] = {}
    args: Dict[str, object] = {}
    for root, mem in islands.items():
        inside = set(mem)
        ports, edges, ctrl = [], [], []
        for m in mem:
            for port, port_edges in enumerate(prog.out_edges[m]):
                out = [e for e in port_edges if e[0] not in inside]
                fetched = (m, port) in prog.fetch
                if out or fetched:
                    if fetched:
                        fetch_port[(m, port)] = (root, len(ports))
                    ports.append((m, port))
                    edges.append(out)
            ctrl.extend(d for d in prog.ctrl_out[m] if d not in inside)
        _generate(prog, mem, ports, producers, NORMAL, lines, line_ops, args)
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
    fused.fetch = [fetch_port.get(f, f) for f in prog.fetch]
    fused.two_ports = [tuple(e) if len(e) == 2 else None for e in fused.out_edges]
    fused.fused = None
    return fused


def _generate(prog, mem: List[int], ports: List[tuple], producers, normal: int,
              lines: List[str], line_ops: Dict[int, object], args: Dict[str, object]):
    """Appends to `lines` the island's function `island<root>(ctx, *root_inputs)`: its
    members in order, returning the values of `ports` ((member, port) pairs; one value
    when there is one port, a tuple otherwise). `line_ops` gets the op of each line that
    calls a kernel, `args` the module globals the function reads (kernels, contexts,
    constants, all named by node index). A value no later member reads is dropped where
    its last reader ran, so a device's memory holds what it would hold with the members
    run one by one."""
    root = mem[0]
    local = {}  # (member, port) -> the expression of its value
    stmts = []  # (member, its variable, the expression assigned, variables it reads)
    for m in mem:
        if m == root:
            call_args = ["a%d" % j for j in range(prog.n_data[m])]
        else:
            call_args = [None] * prog.n_data[m]
            for p in producers[m]:
                for port, port_edges in enumerate(prog.out_edges[p]):
                    for dst, slot in port_edges:
                        if dst == m:
                            call_args[slot - prog.in_base[m]] = local[(p, port)]
        reads = {a.split("[")[0] for a in call_args}
        if m != root and m in prog.const_values:  # its value, without a kernel call
            expr = "k%d" % m
            args[expr] = prog.const_values[m]
        elif prog.kind[m] == normal and m not in prog.plain_identities:
            expr = "f%d(c%d%s)" % (m, m, "".join(", " + a for a in call_args))
            args["f%d" % m], args["c%d" % m] = prog.fn[m], prog.ctx[m]
        else:  # LoopCond, an Identity (as the structured compiler's): the input
            expr = call_args[0]
        stmts.append((m, "v%d" % m, expr, reads))
        n_out = len(prog.out_edges[m])
        for port in range(n_out):
            local[(m, port)] = "v%d" % m if n_out == 1 else "v%d[%d]" % (m, port)
    returned = {local[p].split("[")[0] for p in ports}
    last_read = {}
    for j, (_, var, _, reads) in enumerate(stmts):
        last_read[var] = j
        for r in reads:
            last_read[r] = j
    lines.append("def island%d(%s):" % (root, ", ".join(
        ["_ctx"] + ["a%d" % j for j in range(prog.n_data[root])])))
    for j, (m, var, expr, reads) in enumerate(stmts):
        lines.append("    %s = %s" % (var, expr))
        if expr.startswith("f"):
            line_ops[len(lines)] = prog.op[m]
        done = sorted(v for v in reads | {var} if last_read.get(v) == j and
                      v not in returned and v.startswith("v"))
        if done:
            lines.append("    del " + ", ".join(done))
    if len(ports) == 1:
        lines.append("    return " + local[ports[0]])
    else:
        lines.append("    return (%s)" % "".join(local[p] + ", " for p in ports))


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
