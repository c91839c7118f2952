"""`tf.profiler.profile`: FLOPs, parameters, and (with a RunMetadata) time and bytes of
a graph's ops, as TF1's tfprof reports them in its "scope" and "op" views.

The scope view is the tree of op names ("a/b/c" under "a/b"; a prefix that names no op
is a scope node of its own), under a root named "_TFProfRoot". Each node has its own
statistics (float_ops, parameters, exec_micros, requested_bytes) and totals over what
is shown beneath it. What is shown follows tfprof's options:

* an op is *accounted* when one of its types matches `account_type_regexes` (its op
  type; a trainable variable also has the type "_trainable_variables"); scope nodes
  always are; an op that is not accounted counts nothing and is not shown;
* a node is shown when its own statistics reach the `min_*` options, its name matches
  `show_name_regexes` and no `hide_name_regexes`, and it is within `max_depth`; a scope
  node only when something beneath it is shown; the shown descendants of a hidden node
  go to its nearest shown ancestor;
* with `account_displayed_op_only` (the builders' default) totals add the shown nodes
  only;
* children are ordered by `order_by` (largest first; names alphabetically).

FLOPs follow TF1's registered statistics (profiler/flops.py) over static shapes (with
a run_meta, unknown shapes are taken from its recorded outputs); parameters are the
element counts of variables.
"""
from __future__ import annotations

import re
import sys
from typing import Dict, List, Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.profiler import flops as _flops
from tensorweave.runtime.config import _Message

ROOT = "_TFProfRoot"
TRAINABLE_VARIABLES = "_trainable_variables"
_VARIABLE_TYPES = ("Variable", "VariableV2", "VarHandleOp", "TemporaryVariable")
_DEFAULT_PROFILE_OPTIONS = 0  # TF's sentinel: the trainable-parameters profile
_SELECT_FIELD = {"float_ops": "float_ops", "params": "parameters", "micros": "exec_micros",
                 "bytes": "requested_bytes", "occurrence": "run_count"}


@tf_export("profiler.GraphNodeProto")
class GraphNodeProto(_Message):
    """One node of the scope view (TF's tfprof GraphNodeProto fields)."""

    _fields = {"name": "", "tensor_value": None, "run_count": 0, "exec_micros": 0,
               "accelerator_exec_micros": 0, "cpu_exec_micros": 0, "requested_bytes": 0,
               "peak_bytes": 0, "residual_bytes": 0, "output_bytes": 0, "parameters": 0,
               "float_ops": 0, "devices": [], "total_definition_count": 0,
               "total_run_count": 0, "total_exec_micros": 0,
               "total_accelerator_exec_micros": 0, "total_cpu_exec_micros": 0,
               "total_requested_bytes": 0, "total_peak_bytes": 0,
               "total_residual_bytes": 0, "total_output_bytes": 0, "total_parameters": 0,
               "total_float_ops": 0, "shapes": [], "input_shapes": {}, "children": []}


@tf_export("profiler.MultiGraphNodeProto")
class MultiGraphNodeProto(_Message):
    """One node of the op view: the ops of one type (`graph_nodes`), aggregated."""

    _fields = {"name": "", "exec_micros": 0, "accelerator_exec_micros": 0,
               "cpu_exec_micros": 0, "requested_bytes": 0, "peak_bytes": 0,
               "residual_bytes": 0, "output_bytes": 0, "parameters": 0, "float_ops": 0,
               "total_exec_micros": 0, "total_accelerator_exec_micros": 0,
               "total_cpu_exec_micros": 0, "total_requested_bytes": 0,
               "total_peak_bytes": 0, "total_residual_bytes": 0, "total_output_bytes": 0,
               "total_parameters": 0, "total_float_ops": 0, "graph_nodes": [],
               "children": []}


_STATS = ("run_count", "exec_micros", "requested_bytes", "output_bytes", "parameters",
          "float_ops")


class _Node:
    """A scope-tree node while the view is computed."""

    def __init__(self, name: str, op=None):
        self.name, self.op = name, op
        self.children: List["_Node"] = []
        self.types: List[str] = []
        self.stats = dict.fromkeys(_STATS, 0)
        self.shapes: list = []


def _shape(t) -> Optional[tuple]:
    s = t.shape
    return None if s.ndims is None else tuple(s.as_list())


def _recorded(run_meta) -> Dict[str, dict]:
    """Per node name: run count, µs, output bytes and output shapes of a RunMetadata,
    or the averages over a list of them (the steps of a Profiler)."""
    out: Dict[str, dict] = {}
    if run_meta is None:
        return out
    metas = run_meta if isinstance(run_meta, (list, tuple)) else [run_meta]
    for md in metas:
        for dev in md.step_stats.dev_stats:
            for ns in dev.node_stats:
                r = out.setdefault(ns.node_name, {"run_count": 0, "exec_micros": 0,
                                                  "bytes": 0, "shapes": {}})
                r["run_count"] += 1
                r["exec_micros"] += int(ns.all_end_rel_micros)
                for o in ns.output:
                    td = o.tensor_description
                    r["bytes"] += td.allocation_description.allocated_bytes
                    if not td.shape.unknown_rank:
                        r["shapes"][o.slot] = tuple(d.size for d in td.shape.dim)
    if len(metas) > 1:
        for r in out.values():
            for k in ("run_count", "exec_micros", "bytes"):
                r[k] //= len(metas)
    return out


def _op_stats(node: _Node, op, trainable: set, recorded: dict) -> None:
    rec = recorded.get(op.name)
    outs = [_shape(t) for t in op.outputs]
    if rec is not None:  # static shapes, completed by what the run produced
        for slot, shape in rec["shapes"].items():
            if slot < len(outs) and (outs[slot] is None or None in outs[slot]):
                outs[slot] = shape
    ins = []
    for t in op.inputs:
        shape = _shape(t)
        prod = recorded.get(t.op.name)
        if prod is not None and (shape is None or None in shape):
            shape = prod["shapes"].get(t.value_index, shape)
        ins.append(shape)
    node.shapes = outs
    node.types = [op.type]
    if op.type in _VARIABLE_TYPES:
        shape = _variable_shape(op, outs)
        if shape is not None and None not in shape:
            n = 1
            for d in shape:
                n *= d
            node.stats["parameters"] = n
        if op.name in trainable:
            node.types.append(TRAINABLE_VARIABLES)
    node.stats["float_ops"] = _flops.float_ops(op.type, ins, outs, op.attrs) or 0
    if rec is not None:
        node.stats["run_count"] = rec["run_count"]
        node.stats["exec_micros"] = rec["exec_micros"]
        node.stats["requested_bytes"] = node.stats["output_bytes"] = rec["bytes"]


def _variable_shape(op, outs) -> Optional[tuple]:
    if op.type == "VarHandleOp":
        shape = op._get_attr("shape")
        return None if shape.ndims is None else tuple(shape.as_list())
    return outs[0] if outs else None


def op_nodes(graph, run_meta) -> Dict[str, "_Node"]:
    """{op name: its node}: the op's types and statistics (float_ops, parameters, and
    from `run_meta` run counts, times and bytes), in the graph's op order."""
    from tensorweave.framework.graph import GraphKeys
    trainable = {v.op.name for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)}
    recorded = _recorded(run_meta)
    nodes: Dict[str, _Node] = {}
    for op in graph.get_operations():
        node = nodes[op.name] = _Node(op.name, op)
        _op_stats(node, op, trainable, recorded)
    return nodes


def _build_tree(graph, run_meta) -> _Node:
    nodes = op_nodes(graph, run_meta)
    root = _Node(ROOT)
    for name in sorted(nodes):  # parents (prefixes) sort before their children
        node = nodes[name]
        while True:
            cut = node.name.rfind("/")
            if cut < 0:
                root.children.append(node)
                break
            parent = nodes.get(node.name[:cut])
            if parent is not None:
                parent.children.append(node)
                break
            parent = nodes[node.name[:cut]] = _Node(node.name[:cut])  # a scope node
            parent.children.append(node)
            node = parent
    return root


def _matches(regexes, text: str) -> bool:
    return any(re.fullmatch(r, text) for r in regexes)


class _View:
    def __init__(self, opts: dict):
        self.opts = opts
        self.account_all = list(opts.get("account_type_regexes", [".*"])) == [".*"]

    def accounted(self, node: _Node) -> bool:
        if node.op is None or self.account_all:
            return True
        return any(_matches(self.opts["account_type_regexes"], t) for t in node.types)

    def passes(self, node: _Node, depth: int) -> bool:
        o = self.opts
        s = node.stats
        if depth > o.get("max_depth", 10000):
            return False
        if (s["requested_bytes"] < o.get("min_bytes", 0) or s["exec_micros"] <
                o.get("min_micros", 0) or s["parameters"] < o.get("min_params", 0) or
                s["float_ops"] < o.get("min_float_ops", 0) or s["run_count"] <
                o.get("min_occurrence", 0)):
            return False
        if not _matches(o.get("show_name_regexes", [".*"]), node.name):
            return False
        return not _matches(o.get("hide_name_regexes", []), node.name)

    def show(self, nodes: List[_Node], depth: int, started: bool = False
             ) -> List[GraphNodeProto]:
        """The shown nodes among `nodes` and their subtrees, as GraphNodeProtos
        (`started`: an ancestor matched start_name_regexes; nothing above is shown)."""
        out = []
        for node in nodes:
            own = self.accounted(node)
            if not own:
                node.stats = dict.fromkeys(_STATS, 0)
            here = started or _matches(self.opts.get("start_name_regexes", [".*"]),
                                       node.name)
            below: List[GraphNodeProto] = []
            if not _matches(self.opts.get("trim_name_regexes", []), node.name):
                below = self.show(node.children, depth + 1, here)
            shown = (here and own and self.passes(node, depth)
                     and (node.op is not None or below))
            if shown:
                out.append(self.proto(node, below))
            else:
                out.extend(below)
        return out

    def proto(self, node: _Node, children: List[GraphNodeProto]) -> GraphNodeProto:
        s = node.stats
        p = GraphNodeProto(name=node.name, run_count=s["run_count"],
                           exec_micros=s["exec_micros"], cpu_exec_micros=s["exec_micros"],
                           requested_bytes=s["requested_bytes"],
                           output_bytes=s["output_bytes"], parameters=s["parameters"],
                           float_ops=s["float_ops"], total_definition_count=1)
        if node.op is not None:
            p.devices = [node.op.device] if node.op.device else []
        # totals over the shown nodes beneath, or (account_displayed_op_only False)
        # over every accounted op beneath
        t = s if self.opts.get("account_displayed_op_only", True) else node.totals
        p.total_run_count = t["run_count"]
        p.total_exec_micros = p.total_cpu_exec_micros = t["exec_micros"]
        p.total_requested_bytes = t["requested_bytes"]
        p.total_output_bytes = t["output_bytes"]
        p.total_parameters = t["parameters"]
        p.total_float_ops = t["float_ops"]
        if self.opts.get("account_displayed_op_only", True):
            for c in children:
                _add_totals(p, c)
        p.children = _sorted(children, self.opts.get("order_by", "name"))
        return p


def _add_totals(p, c) -> None:
    for f in ("total_definition_count", "total_run_count", "total_exec_micros",
              "total_cpu_exec_micros", "total_requested_bytes", "total_output_bytes",
              "total_parameters", "total_float_ops"):
        setattr(p, f, getattr(p, f) + getattr(c, f))


def _sorted(nodes: list, order_by: str) -> list:
    if order_by == "name" or order_by not in _SELECT_FIELD:
        return sorted(nodes, key=lambda n: n.name)
    field = "total_" + _SELECT_FIELD[order_by]
    return sorted(nodes, key=lambda n: (-getattr(n, field), n.name))


def scope_view(graph, run_meta, opts: dict) -> GraphNodeProto:
    root = _build_tree(graph, run_meta)
    view = _View(opts)
    _total_everything(root, view)
    return view.proto(root, view.show(root.children, 1))


def _total_everything(node: _Node, view: _View) -> None:
    node.totals = dict(node.stats) if view.accounted(node) else dict.fromkeys(_STATS, 0)
    for c in node.children:
        _total_everything(c, view)
        for k in _STATS:
            node.totals[k] += c.totals[k]


def _op_view(graph, run_meta, opts: dict) -> MultiGraphNodeProto:
    """The op-type view: one node per op type of the accounted ops that pass the
    options, each holding the next as its only child, as tfprof nests them."""
    root = _build_tree(graph, run_meta)
    view = _View(opts)
    by_type: Dict[str, MultiGraphNodeProto] = {}

    def walk(node, depth):
        for c in node.children:
            walk(c, depth + 1)
            if c.op is None or not view.accounted(c) or not view.passes(c, 0):
                continue
            m = by_type.setdefault(c.op.type, MultiGraphNodeProto(name=c.op.type))
            m.graph_nodes.append(view.proto(c, []))
            for f in ("exec_micros", "requested_bytes", "output_bytes", "parameters",
                      "float_ops"):
                setattr(m, f, getattr(m, f) + c.stats[f])
    walk(root, 0)
    types = _sorted_multi(list(by_type.values()), opts.get("order_by", "name"))
    top = MultiGraphNodeProto(name=ROOT)
    below = None
    for m in reversed(types):  # each type holds the rest: totals run down the chain
        for f in ("exec_micros", "requested_bytes", "output_bytes", "parameters",
                  "float_ops"):
            setattr(m, "total_" + f, getattr(m, f) + (getattr(below, "total_" + f)
                                                     if below is not None else 0))
        m.children = [below] if below is not None else []
        below = m
    if below is not None:
        top.children = [below]
        for f in ("exec_micros", "requested_bytes", "output_bytes", "parameters",
                  "float_ops"):
            setattr(top, "total_" + f, getattr(below, "total_" + f))
    return top


def _sorted_multi(nodes: list, order_by: str) -> list:
    if order_by == "name" or order_by not in _SELECT_FIELD:
        return sorted(nodes, key=lambda n: n.name)
    field = _SELECT_FIELD[order_by]
    field = "exec_micros" if field == "run_count" else field
    return sorted(nodes, key=lambda n: (-getattr(n, field), n.name))


def _number(v: float, unit: str = "") -> str:
    for div, suffix in ((1e9, "b"), (1e6, "m"), (1e3, "k")):
        if v >= div:
            return "%.2f%s%s" % (v / div, suffix, unit)
    return "%d%s" % (v, unit)


def format_scope(node: GraphNodeProto, select=("float_ops",), indent: int = 0) -> str:
    """The text report of a scope view (tfprof's layout: self/total per node)."""
    lines = []
    fields = {"float_ops": ("float_ops", " flops"), "params": ("parameters", " params"),
              "micros": ("exec_micros", "us"), "bytes": ("requested_bytes", "B"),
              "occurrence": ("run_count", "")}
    parts = []
    for s in select:
        if s not in fields:
            continue
        f, unit = fields[s]
        own = "--" if node.name == ROOT else _number(getattr(node, f))
        parts.append("%s/%s%s" % (own, _number(getattr(node, "total_" + f)), unit))
    lines.append("%s%s (%s)" % ("  " * indent, node.name, ", ".join(parts)))
    for c in node.children:
        lines.append(format_scope(c, select, indent + 1))
    return "\n".join(lines)


@tf_export("profiler.profile")
def profile(graph=None, run_meta=None, op_log=None, cmd: str = "scope",
            options=_DEFAULT_PROFILE_OPTIONS):
    """Profiles `graph` (TF1's `tf.profiler.profile`).

    Args:
      graph: the Graph (default: the default graph).
      run_meta: optional RunMetadata of a traced run: fills run counts, execution
        times and bytes, and completes unknown static shapes.
      op_log: accepted for TF's signature; extra op types are not supported (must be
        None).
      cmd: "scope" (the name-scope tree) or "op" (per op type).
      options: a dict from ProfileOptionBuilder (default, as TF:
        ProfileOptionBuilder.trainable_variables_parameter()).

    Returns:
      A GraphNodeProto ("scope") or MultiGraphNodeProto ("op") rooted at "_TFProfRoot".

    Raises:
      ValueError: an unsupported `cmd`, or an op_log.
    """
    from tensorweave.framework.graph import get_default_graph
    from tensorweave.profiler.option_builder import ProfileOptionBuilder
    if op_log is not None:
        raise ValueError("tf.profiler.profile: op_log (extra op types) is not supported "
                         "by tensorweave; pass op_log=None")
    graph = graph if graph is not None else get_default_graph()
    if options is None or (isinstance(options, int) and options == _DEFAULT_PROFILE_OPTIONS):
        options = ProfileOptionBuilder.trainable_variables_parameter()
    opts = dict(options)
    if cmd == "scope":
        result = scope_view(graph, run_meta, opts)
    elif cmd == "op":
        result = _op_view(graph, run_meta, opts)
    else:
        raise ValueError("tf.profiler.profile: cmd %r is not supported by tensorweave "
                         "(supported: 'scope', 'op')" % (cmd,))
    _emit(result, cmd, opts)
    return result


def _emit(result, cmd: str, opts: dict) -> None:
    output = opts.get("output", "stdout")
    if output == "none":
        return
    if cmd == "scope":
        text = format_scope(result, tuple(opts.get("select", ["float_ops"])))
    else:
        lines, node = [], result.children[0] if result.children else None
        while node is not None:
            lines.append("%-24s %s float_ops, %s params" % (
                node.name, _number(node.float_ops), _number(node.parameters)))
            node = node.children[0] if node.children else None
        text = "\n".join(lines)
    if output == "stdout":
        sys.stdout.write(text + "\n")
        return
    kind, _, rest = output.partition(":")
    if kind == "file":
        path = dict(p.split("=", 1) for p in rest.split(",") if "=" in p).get("outfile")
        if not path:
            raise ValueError("output 'file' needs outfile=PATH, got %r" % output)
        from tensorweave.platform import gfile
        with gfile.GFile(path, "w") as f:
            f.write(text + "\n")
        return
    raise ValueError("profiler output %r is not supported by tensorweave (supported: "
                     "'stdout', 'none', 'file:outfile=PATH')" % output)


@tf_export("profiler.Profiler")
class Profiler:
    """Profiles a graph over the traced steps added to it (TF1's tf.profiler.Profiler).

    Args:
      graph: the Graph (default: the default graph).
      op_log: accepted for TF's signature; must be None (extra op types are not
        supported).

    Options' `step` picks one added step; -1 (the default) averages the run counts,
    times and bytes of all added steps.
    """

    def __init__(self, graph=None, op_log=None):
        from tensorweave.framework.graph import get_default_graph
        if op_log is not None:
            raise ValueError("tf.profiler.Profiler: op_log is not supported by "
                             "tensorweave; pass op_log=None")
        self._graph = graph if graph is not None else get_default_graph()
        self._steps: Dict[int, object] = {}

    def add_step(self, step: int, run_meta) -> None:
        """Adds the RunMetadata of a traced run as step `step`."""
        self._steps[int(step)] = run_meta

    def _run_meta(self, options: dict):
        step = options.get("step", -1)
        if step == -1:
            return [self._steps[k] for k in sorted(self._steps)] or None
        if step not in self._steps:
            raise ValueError("Step %d was not added (added: %s)" % (step,
                                                                  sorted(self._steps)))
        return self._steps[step]

    def profile_name_scope(self, options) -> GraphNodeProto:
        """The scope view (profile(cmd='scope')) over the added steps."""
        result = scope_view(self._graph, self._run_meta(options), dict(options))
        _emit(result, "scope", options)
        return result

    def profile_operations(self, options) -> MultiGraphNodeProto:
        """The op-type view (profile(cmd='op')) over the added steps."""
        result = _op_view(self._graph, self._run_meta(options), dict(options))
        _emit(result, "op", options)
        return result

    def profile_python(self, options):
        raise ValueError("tf.profiler.Profiler.profile_python (the 'code' view) is not "
                         "supported by tensorweave; use profile_name_scope or "
                         "profile_operations")

    def profile_graph(self, options):
        raise ValueError("tf.profiler.Profiler.profile_graph (the 'graph' view) is not "
                         "supported by tensorweave; use profile_name_scope or "
                         "profile_operations")

    def advise(self, options):
        """The advisor's checkers (tf.profiler.advise) over the added steps.

        Args:
          options: {checker name: its options}, as tf.profiler.advise's.

        Returns:
          An AdviceProto.
        """
        from tensorweave.profiler import advisor
        steps = [self._steps[k] for k in sorted(self._steps)]
        return advisor.run_checkers(self._graph, steps, options or {})

    def serialize_to_string(self):
        raise ValueError("tf.profiler.Profiler.serialize_to_string is not supported by "
                         "tensorweave")
