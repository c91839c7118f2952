"""Per-op summaries of traced steps: which ops took the time and produced the bytes.

`OpProfile(run_metadatas)` reads the step stats of one or more RunMetadata of runs with
RunOptions(trace_level=FULL_TRACE) (one per step) and gives, per step and over all
steps, each node's executions, total µs and output bytes:

  prof = tensorweave.profiler.OpProfile([md1, md2])
  print(prof.table(by="micros", top=10))         # all steps; step=k for one
  prof.write_folded_stacks("ops.folded")         # for flamegraph.pl or speedscope

A folded-stacks line is "outer;inner;OpType name micros": the node's name scopes as the
stack, then a frame naming the op type and the node's own name, then its total µs. A
node inside a while loop counts every iteration it ran. No graph is needed: op types
come from the step stats' timeline labels.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from tensorweave.client.timeline import parse_label

_ORDER = {"micros": "micros", "bytes": "bytes", "count": "count"}


class OpStats:
    """The executions of one node: `count` kernel runs, `micros` µs in total, `bytes`
    of outputs in total, and the devices it ran on."""

    __slots__ = ("name", "op_type", "count", "micros", "bytes", "devices")

    def __init__(self, name: str, op_type: str):
        self.name, self.op_type = name, op_type
        self.count = self.micros = self.bytes = 0
        self.devices: List[str] = []

    @property
    def scopes(self) -> List[str]:
        """The node's name scopes, outermost first."""
        return self.name.split("/")[:-1]

    def add(self, other: "OpStats") -> None:
        self.count += other.count
        self.micros += other.micros
        self.bytes += other.bytes
        for d in other.devices:
            if d not in self.devices:
                self.devices.append(d)

    def __repr__(self):
        return "OpStats(%s %s: count=%d, micros=%d, bytes=%d)" % (
            self.op_type, self.name, self.count, self.micros, self.bytes)


def step_op_stats(run_metadata) -> Dict[str, OpStats]:
    """Node name -> OpStats of one traced step (a RunMetadata or its StepStats)."""
    step_stats = getattr(run_metadata, "step_stats", run_metadata)
    out: Dict[str, OpStats] = {}
    for dev in step_stats.dev_stats:
        for ns in dev.node_stats:
            st = out.get(ns.node_name)
            if st is None:
                st = out[ns.node_name] = OpStats(ns.node_name,
                                                 parse_label(ns.timeline_label)[1])
            st.count += 1
            st.micros += int(ns.all_end_rel_micros)
            st.bytes += sum(o.tensor_description.allocation_description.allocated_bytes
                            for o in ns.output)
            if dev.device not in st.devices:
                st.devices.append(dev.device)
    return out


class OpProfile:
    """Per-op totals of traced steps (see the module docstring).

    Args:
      run_metadatas: RunMetadata objects (or one), each of one traced step.
    """

    def __init__(self, run_metadatas):
        if not isinstance(run_metadatas, (list, tuple)):
            run_metadatas = [run_metadatas]
        self.steps: List[Dict[str, OpStats]] = [step_op_stats(md) for md in run_metadatas]
        self.total: Dict[str, OpStats] = {}
        for step in self.steps:
            for name, st in step.items():
                agg = self.total.get(name)
                if agg is None:
                    agg = self.total[name] = OpStats(name, st.op_type)
                agg.add(st)

    def _stats(self, step: Optional[int]) -> Dict[str, OpStats]:
        return self.total if step is None else self.steps[step]

    def top(self, by: str = "micros", top: Optional[int] = None,
            step: Optional[int] = None) -> List[OpStats]:
        """The nodes with the largest `by` ("micros", "bytes" or "count"), of one step
        or (step=None) of all steps; ties by name."""
        if by not in _ORDER:
            raise ValueError("by must be one of %s, got %r" % (sorted(_ORDER), by))
        ranked = sorted(self._stats(step).values(), key=lambda s: (-getattr(s, by),
                                                                    s.name))
        return ranked if top is None else ranked[:top]

    def by_type(self, step: Optional[int] = None) -> Dict[str, OpStats]:
        """Op type -> OpStats summed over the nodes of that type."""
        out: Dict[str, OpStats] = {}
        for st in self._stats(step).values():
            agg = out.get(st.op_type)
            if agg is None:
                agg = out[st.op_type] = OpStats(st.op_type, st.op_type)
            agg.add(st)
        return out

    def table(self, by: str = "micros", top: Optional[int] = 20,
              step: Optional[int] = None) -> str:
        """A text table of the `top` nodes by `by`, with each one's share of the
        step's (or all steps') total time and bytes."""
        rows = self.top(by, top, step)
        stats = self._stats(step).values()
        all_micros = sum(s.micros for s in stats) or 1
        all_bytes = sum(s.bytes for s in stats) or 1
        head = "%-40s %-16s %6s %12s %7s %14s %7s" % (
            "node", "op", "count", "micros", "%time", "bytes", "%bytes")
        lines = [head, "-" * len(head)]
        for s in rows:
            lines.append("%-40s %-16s %6d %12d %6.1f%% %14d %6.1f%%" % (
                s.name, s.op_type, s.count, s.micros, 100.0 * s.micros / all_micros,
                s.bytes, 100.0 * s.bytes / all_bytes))
        where = "all %d steps" % len(self.steps) if step is None else "step %d" % step
        lines.append("-" * len(head))
        lines.append("%s: %d nodes, %d micros, %d bytes" % (
            where, len(self._stats(step)), sum(s.micros for s in stats),
            sum(s.bytes for s in stats)))
        return "\n".join(lines)

    def folded_stacks(self, step: Optional[int] = None, value: str = "micros") -> str:
        """The folded-stacks text ("outer;inner;OpType name micros" per node), for
        flame graphs; `value` "bytes" weighs frames by output bytes instead."""
        if value not in ("micros", "bytes", "count"):
            raise ValueError("value must be 'micros', 'bytes' or 'count', got %r" % value)
        lines = []
        for s in sorted(self._stats(step).values(), key=lambda s: s.name):
            frames = s.scopes + ["%s %s" % (s.op_type, s.name.rsplit("/", 1)[-1])]
            lines.append("%s %d" % (";".join(f.replace(";", "_") for f in frames),
                                    getattr(s, value)))
        return "\n".join(lines) + ("\n" if lines else "")

    def write_folded_stacks(self, path: str, step: Optional[int] = None,
                            value: str = "micros") -> None:
        """Writes `folded_stacks` to `path` (any fsspec path gfile takes)."""
        from tensorweave.platform import gfile
        with gfile.GFile(path, "w") as f:
            f.write(self.folded_stacks(step, value))
