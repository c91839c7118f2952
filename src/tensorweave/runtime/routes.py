"""Routes: the tagged executor's value passing, written out per program for loop bodies.

The tagged executor (tagged.py) passes each value through `send`, a loop over the
producer's out edges that looks at each consumer's kind, pending count and liveness.
Inside a loop frame the same nodes pass values every iteration, so this module writes,
once per program, the straight-line form of that passing for each node of a loop frame:

* `run_<k>(it)`: a cheap synchronous node's kernel called on its input slots, then its
  outputs passed on (what the executor's main loop and `finish_one` do);
* `transfer_<k>(it)`: a plain `_Send` or `_Recv` through an in-process rendezvous;
* `route_<k>(it, v)`: the live outputs of a node that finished elsewhere (the thread
  pool, an asynchronous kernel) passed on (`finish_one`/`finish`);
* `switch_<k>(it)`, `next_<k>(it, v)`, `merge_<k>(it, v, slot, i)`: a Switch, a
  NextIteration and a Merge without control inputs, forwarded the moment they are
  ready (their control successors told after);
* `invariant_<k>(it, v)`: a loop invariant's Enter value delivered to a new iteration.

Each consumer's kind is known when the code is written: a consumer with one input is
ready at once (no pending count), a forwarded Merge takes the value unless one came
first, a forwarded Switch's or Merge's own consumers are written out in place (one
level down; calls below that), a dead value to an Exit of a running loop is only
recorded. Whatever is done is what the generic path does, in one of the orders it could
take: the same outcome, deadness and errors.

The functions close over one run's ready queue and bookkeeping: `make(...)` of the
generated module is called at the start of each untraced run that has loop frames
(traced runs take the generic path, which records every kernel). A program's routes
are written once its runs have made tagged.ROUTES_AFTER loop iterations: compiling them
costs about 80 us per node, which a step run once would not win back.
"""
from __future__ import annotations

import itertools
from typing import Callable, Dict, List, Optional

from tensorweave.runtime import frames as _frames
from tensorweave.runtime.values import DEAD, merge_index

_route_ids = itertools.count()


def generate(prog) -> Optional[Callable]:
    """The `make(ready_append, send, arrive_merge, new_iter, maybe_done, control,
    finish, rdv, xkey_of, wait_remote)` of `prog` (an untraced tagged.TaggedProgram:
    the first seven are the run's closures of those names (`ready_append`: its ready
    queue's append), `rdv` its in-process
    rendezvous or None, `wait_remote(k, it, key)` waits for a `_Recv`'s value),
    returning the three tables (runs, routes, invariants) indexed by node (None where
    the generic path runs); None when `prog` has no loop frame."""
    if not any(prog.in_loop):
        return None
    return _Writer(prog).compile()


class _Writer:
    """Writes the source of one program's `make` (the node kinds come from tagged.py,
    imported here: tagged imports this module)."""

    def __init__(self, prog):
        from tensorweave.runtime import tagged as t
        self.t = t
        self.prog = prog
        p = prog
        n = len(p.kind)
        # island members (not their roots) are never scheduled in the fused program
        loop = list(p.in_loop)
        for members in p.islands.values():
            for m in members[1:]:
                loop[m] = False
        # the generated forms (the generic path for everything else): `run` for the
        # nodes the main loop runs itself, `route` for completions that come back
        self.runs = [k for k in range(n) if loop[k] and p.fast[k]]
        self.routes = [k for k in range(n) if loop[k] and not p.fast[k] and p.kind[k] in (
            t.NORMAL, t.SEND, t.RECV)]
        # Merge, Switch and NextIteration without control inputs, forwarded the moment
        # they are ready (as tagged.py forwards those of `inline`, which have no
        # control outputs either: here their control successors are told after)
        plain = {t.MERGE: 0, t.SWITCH: 2, t.NEXT: 1}
        forwarded = [k for k in range(n) if loop[k] and plain.get(p.kind[k]) == p.pending0[k]]
        self.switches = {k for k in forwarded if p.kind[k] == t.SWITCH}
        self.nexts = {k for k in forwarded if p.kind[k] == t.NEXT}
        self.merges = {k for k in forwarded if p.kind[k] == t.MERGE}
        self.invariants = [k for k in range(n) if loop[k] and p.kind[k] == t.ENTER
                           and p.is_constant[k]]
        # plain transfers through an in-process rendezvous (tagged.py's `xfer`)
        self.transfers = [k for k in range(n) if loop[k] and p.xfer[k]]
        self.args: Dict[str, object] = {
            "DEAD": DEAD, "MI": [merge_index(i) for i in range(max(
                [p.n_data[k] for k in self.merges] + [0]))]}
        self.lines: List[str] = []

    def compile(self) -> Callable:
        p, out = self.prog, self.lines
        out.append("def make(ready_append, send, arrive_merge, new_iter, maybe_done, "
                   "control, finish, rdv, xkey_of, wait_remote):")
        for k in sorted(self.merges):
            self.merge(k)
        for k in sorted(self.switches):
            self.switch(k)
        for k in sorted(self.nexts):
            self.next_iteration(k)
        for k in self.routes:
            self.route(k, run=False)
        for k in self.runs:
            self.route(k, run=True)
        for k in self.invariants:
            self.invariant(k)
        for k in self.transfers:
            self.transfer(k)
        n = len(p.kind)
        out.append("    runs, routes, invariants = [None] * %d, [None] * %d, [None] * %d"
                   % (n, n, n))
        for table, name, ks in (("runs", "run", self.runs), ("routes", "route", self.routes),
                                ("invariants", "invariant", self.invariants)):
            for k in ks:
                out.append("    %s[%d] = %s_%d" % (table, k, name, k))
        if self.transfers:
            out.append("    if rdv is not None:")
            out.append("        rdv_send, rdv_take = rdv.send, rdv.take")
            for k in self.transfers:
                out.append("        runs[%d] = transfer_%d" % (k, k))
        out.append("    return runs, routes, invariants")
        filename = "<tensorweave routes %s #%d>" % (
            getattr(p.op[self.runs[0] if self.runs else 0], "name", ""), next(_route_ids))
        source = "\n".join(out) + "\n"
        _frames.register_source(p, filename, source)
        ns: Dict[str, object] = dict(self.args)
        exec(compile(source, filename, "exec"), ns)
        return ns["make"]

    # -- the functions ------------------------------------------------------------------

    def merge(self, k: int) -> None:
        """`merge_<k>(it, v, slot, i)`: a forwarded Merge's live input `v` at `slot`
        (its input `i`)."""
        self.lines.append("    def merge_%d(it, v, slot, i):" % k)
        self.lines.append("        inputs, pending = it.inputs, it.pending")
        self.merge_body(k, "v", "slot", "i", 2)

    def merge_body(self, k: int, v: str, slot: str, i: str, depth: int) -> None:
        """A forwarded Merge taking the live value `v` at `slot` (its input `i`) unless
        a value came first, its consumers written out below (calls under them)."""
        pad = "    " * depth
        self.lines.extend([pad + "if %d not in it.merge_live:" % k,
                           pad + "    inputs[%s] = %s" % (slot, v),
                           pad + "    it.merge_live[%d] = %s" % (k, i)])
        self.send_live(k, 0, v, depth + 1, inline=False)
        self.send_live(k, 1, "MI[%s]" % i, depth + 1, inline=False)
        self.control(k, depth + 1)
        self.lines.append(pad + "    pass")

    def switch(self, k: int) -> None:
        """A forwarded Switch whose inputs have arrived, live: False when its predicate
        is not a scalar (the main loop raises that)."""
        out = self.lines
        out.append("    def switch_%d(it):" % k)
        out.append("        inputs, pending = it.inputs, it.pending")
        self.switch_body(k, "        ", schedule=False)
        out.append("        return True")

    def switch_body(self, k: int, pad: str, schedule: bool) -> None:
        """A live Switch forwarding its input, its consumers written out one level
        down. A predicate that is not a scalar returns False, or with `schedule` (the
        code stands where the Switch became ready, inside another node's) sends the
        Switch through the ready queue, as a dead one: the main loop handles both. Its
        names carry the node's number, not to clash with the enclosing code's."""
        out, p = self.lines, self.prog
        base = p.in_base[k]
        taken, v = "taken%d" % k, "v%d" % k
        queued = [pad + "    it.outstanding += 1", pad + "    ready_append((%d, it))" % k]
        if schedule:
            out.append(pad + "if it.dead and it.dead.get(%d):" % k)
            out.extend(queued)
            out.append(pad + "else:")
            pad += "    "
            queued = ["    " + line for line in queued]
        out.append(pad + "try:")
        out.append(pad + "    %s = True if inputs[%d] else False" % (taken, base + 1))
        out.append(pad + "except ValueError:")
        out.append(pad + "    %s = None" % taken)
        out.append(pad + "if %s is None:" % taken)
        out.extend(queued if schedule else [pad + "    return False"])
        out.append(pad + "else:")
        out.append(pad + "    %s = inputs[%d]" % (v, base))
        out.append(pad + "    if %s:" % taken)
        depth = len(pad) // 4 + 2
        self.send_dead(k, 0, depth)
        self.send_live(k, 1, v, depth, inline=False)
        out.append(pad + "        pass")
        out.append(pad + "    else:")
        self.send_live(k, 0, v, depth, inline=False)
        self.send_dead(k, 1, depth)
        out.append(pad + "        pass")
        self.control(k, depth - 1)

    def next_iteration(self, k: int) -> None:
        """A forwarded NextIteration's live value: to the next iteration, created if the
        frame's parallel_iterations allow, else deferred (tagged.py's
        `next_iteration`)."""
        out = self.lines
        out.append("    def next_%d(it, v):" % k)
        out.append("        fs = it.frame")
        out.append("        nxt = fs.iters.get(it.number + 1)")
        out.append("        if nxt is None:")
        out.append("            if fs.live_iters < fs.pi and fs.next_number == it.number + 1:")
        out.append("                nxt = new_iter(fs)")
        out.append("            else:")
        out.append("                fs.deferred.append((%d, v))" % k)
        self.control(k, 4)
        out.append("                return")
        self.control(k, 2)
        out.append("        it = nxt")
        out.append("        inputs, pending = it.inputs, it.pending")
        self.send_live(k, 0, "v", 2)

    def route(self, k: int, run: bool) -> None:
        """`run_<k>(it)` (the kernel, then its outputs) or `route_<k>(it, v)`."""
        out, p = self.lines, self.prog
        n_out = len(p.out_edges[k])
        if run:
            self.args["fn%d" % k] = p.fn[k]
            self.args["ctx%d" % k] = p.ctx[k]
            out.append("    def run_%d(it):" % k)
            out.append("        inputs, pending = it.inputs, it.pending")
            call = "fn%d(ctx%d%s)" % (k, k, "".join(
                ", inputs[%d]" % s for s in range(p.in_base[k], p.in_end[k])))
            out.append("        v = " + call)
        else:
            out.append("    def route_%d(it, v):" % k)
            out.append("        inputs, pending = it.inputs, it.pending")
        if n_out == 1:
            self.send_live(k, 0, "v", 2)
        else:
            out.append("        if v is None:")
            out.append("            v = (None,) * %d" % n_out)
            out.append("        n = len(v)")
            for port in range(n_out):
                if p.out_edges[k][port]:
                    out.append("        v%d = v[%d] if n > %d else None" % (port, port, port))
                    self.send_live(k, port, "v%d" % port, 2)
        self.control(k, 2)
        self.finished(2)

    def invariant(self, k: int) -> None:
        """A loop invariant's value delivered to a new iteration."""
        out = self.lines
        self.args["E%d_0" % k] = self.prog.out_edges[k][0]
        out.append("    def invariant_%d(it, v):" % k)
        out.append("        if v is DEAD:")
        out.append("            return send(E%d_0, it, v)" % k)
        out.append("        inputs, pending = it.inputs, it.pending")
        self.send_live(k, 0, "v", 2, inline=False)

    def transfer(self, k: int) -> None:
        """A plain `_Send` or `_Recv` of a live iteration, as tagged.py's main loop runs
        it: its key carries the frame instance and iteration; a value not there yet is
        waited for through the rendezvous (`wait_remote`)."""
        t, p, out = self.t, self.prog, self.lines
        self.args["XK%d" % k] = p.xfer[k]
        out.append("    def transfer_%d(it):" % k)
        out.append("        key = XK%d + (it.xkey or xkey_of(it))" % k)
        if p.kind[k] == t.SEND:
            out.append("        rdv_send(key, it.inputs[%d], False)" % p.in_base[k])
        else:
            out.append("        entry = rdv_take(key)")
            out.append("        if entry is None:")
            out.append("            return wait_remote(%d, it, key)" % k)
            out.append("        if entry[1]:")
            out.append("            return finish(%d, it, (DEAD,), True)" % k)
            out.append("        inputs, pending = it.inputs, it.pending")
            out.append("        v = entry[0]")
            self.send_live(k, 0, "v", 2)
        self.control(k, 2)
        self.finished(2)

    def finished(self, depth: int) -> None:
        """The end of a node's run: its iteration may be complete."""
        pad = "    " * depth
        self.lines.extend([pad + "o = it.outstanding - 1", pad + "it.outstanding = o",
                           pad + "if not o and not it.n_children:",
                           pad + "    maybe_done(it.frame, it)"])

    def control(self, k: int, depth: int) -> None:
        """A live node's control successors told (tagged.py's `control`)."""
        if self.prog.ctrl_out[k]:
            self.lines.append("    " * depth + "control(%d, it, False)" % k)

    # -- one value to its consumers -----------------------------------------------------

    def send_dead(self, k: int, port: int, depth: int) -> None:
        """The code passing a dead value of (k, port) on (`send` for a dead value): an
        Exit ignores it while its loop runs, a NextIteration drops it, any other
        consumer is marked dead and, once ready, goes through the ready queue."""
        t, p, out = self.t, self.prog, self.lines
        pad = "    " * depth
        for dst, slot in p.out_edges[k][port]:
            kd = p.kind[dst]
            if kd == t.MERGE:
                out.append(pad + "arrive_merge(%d, it, %d, DEAD)" % (dst, slot))
                continue
            out.append(pad + "inputs[%d] = DEAD" % slot)
            if p.pending0[dst] != 1:
                out.extend([pad + "p = pending[%d] - 1" % dst, pad + "pending[%d] = p" % dst])
            if kd == t.EXIT:
                continue
            out.append(pad + "it.dead[%d] = True" % dst)
            if kd == t.NEXT and p.inline[dst]:
                continue  # the loop's end: nothing goes on
            inner = pad
            if p.pending0[dst] != 1:
                out.append(pad + "if p == 0:")
                inner = pad + "    "
            out.extend([inner + "it.outstanding += 1", inner + "ready_append((%d, it))" % dst])

    def send_live(self, k: int, port: int, v: str, depth: int, inline: bool = True) -> None:
        """The code passing the live value `v` of (k, port) to its consumers in the
        function's iteration `it` (its `inputs` and `pending` bound: tagged.py's `send`
        for a live value, consumer by consumer). With `inline`, a forwarded Merge or
        Switch consumer is written out in place (one level: calls below it)."""
        t, p, out = self.t, self.prog, self.lines
        pad = "    " * depth
        for dst, slot in p.out_edges[k][port]:
            kd = p.kind[dst]
            if kd == t.MERGE and dst in self.merges:
                i = slot - p.in_base[dst]
                if inline:
                    self.merge_body(dst, v, str(slot), str(i), depth)
                else:
                    out.append(pad + "merge_%d(it, %s, %d, %d)" % (dst, v, slot, i))
                continue
            if kd == t.MERGE:
                out.append(pad + "arrive_merge(%d, it, %d, %s)" % (dst, slot, v))
                continue
            out.append(pad + "inputs[%d] = %s" % (slot, v))
            inner = pad
            if p.pending0[dst] != 1:
                out.extend([pad + "p = pending[%d] - 1" % dst, pad + "pending[%d] = p" % dst,
                            pad + "if p == 0:"])
                inner = pad + "    "
            if dst in self.nexts:
                out.append(inner + "next_%d(it, %s)" % (dst, v))
            elif dst in self.switches and inline:
                self.switch_body(dst, inner, schedule=True)
            elif dst in self.switches:
                out.append(inner + "if (it.dead and it.dead.get(%d)) or not switch_%d(it):"
                           % (dst, dst))
                out.extend([inner + "    it.outstanding += 1",
                            inner + "    ready_append((%d, it))" % dst])
            else:
                out.extend([inner + "it.outstanding += 1",
                            inner + "ready_append((%d, it))" % dst])
