"""`tf.profiler.advise`: tfprof's advisor, checkers that look for common performance
problems in a graph and the RunMetadata of a traced run, each answering with report
strings in an AdviceProto (tfprof_output.proto), also printed to stdout as TF does.

  AcceleratorUtilizationChecker  per accelerator (a device whose name has "gpu"), the
      time its ops ran over the span from the first start to the last end of the step:
      "device: D utilization: U" (U >= 0.5) or "device: D low utilization: U".
  OperationChecker  BatchNorm (an op named "...BatchNorm...") without FusedBatchNorm
      ops, and ops with data_format NHWC placed on a GPU.
  ExpensiveOperationChecker  needs a RunMetadata: the 3 op types that took the most
      time (op view), the 3 top graph nodes of the name-scope view hiding nodes under
      100us, and the code lines that created the most expensive ops (code view, from
      the op log's code locations; gradient ops count for the line of their forward op).
  JobChecker  is internal to Google's TF: it reports nothing (no entry), as in OSS TF.

An op's time is what the RunMetadata records for it (all_end_rel_micros); it counts as
accelerator time when the op ran on an accelerator, else as CPU time.
"""
from __future__ import annotations

import functools
import re
import sys
from typing import Dict, List, Optional

from tensorweave.framework.api_export import export, tf_export
from tensorweave.profiler import model_analyzer as _analyzer
from tensorweave.profiler import tfprof_logger as _logger

ALL_ADVICE = {"ExpensiveOperationChecker": {}, "AcceleratorUtilizationChecker": {},
              "JobChecker": {}, "OperationChecker": {}}
# the checkers in the order tfprof runs them (JobChecker is internal: no result)
_CHECKERS = ("AcceleratorUtilizationChecker", "OperationChecker",
             "ExpensiveOperationChecker")
_DEFAULT_ADVISE_OPTIONS = 0  # TF's sentinel: every checker
_GRADIENT_SUFFIX = " (gradient)"


@functools.lru_cache(maxsize=None)
def _advice_class() -> type:
    """tensorflow/core/profiler/tfprof_output.proto's AdviceProto, from its schema (the
    `tensorboard` package does not ship it): map<string, Checker> checkers = 1, with
    Checker { repeated string reports = 2; }."""
    from google.protobuf import descriptor_pb2
    from tensorweave.framework.proto_classes import add_field, message_classes
    fields = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/profiler/tfprof_output.proto", package="tensorflow.tfprof",
        syntax="proto3")
    advice = f.message_type.add(name="AdviceProto")
    checker = advice.nested_type.add(name="Checker")
    add_field(checker, "reports", 2, fields.TYPE_STRING, repeated=True)
    entry = advice.nested_type.add(name="CheckersEntry")
    entry.options.map_entry = True
    add_field(entry, "key", 1, fields.TYPE_STRING)
    add_field(entry, "value", 2, fields.TYPE_MESSAGE,
              ".tensorflow.tfprof.AdviceProto.Checker")
    add_field(advice, "checkers", 1, fields.TYPE_MESSAGE,
              ".tensorflow.tfprof.AdviceProto.CheckersEntry", repeated=True)
    name = "tensorflow.tfprof.AdviceProto"
    return message_classes([f], [name])[name]


AdviceProto = export(_advice_class(), "profiler.AdviceProto")


def format_time(micros: int) -> str:
    """tfprof's time format: "52us", "37.11ms", "1.50sec"."""
    if micros < 1000:
        return "%dus" % micros
    if micros < 1000000:
        return "%.2fms" % (micros / 1000.0)
    return "%.2fsec" % (micros / 1000000.0)


def _is_accelerator(device: str) -> bool:
    return "gpu" in device.lower()


# --- what the checkers read ---------------------------------------------------------------
class _Stats:
    """A graph with the RunMetadata of its traced steps: per op, its node (types and
    statistics, averaged over the steps) and the device it ran on; per accelerator, the
    [first start, last end, busy µs] of the last step."""

    def __init__(self, graph, run_meta):
        self.graph = graph
        self.run_metas = [m for m in (run_meta if isinstance(run_meta, (list, tuple))
                                      else [run_meta]) if m is not None]
        self.nodes = _analyzer.op_nodes(graph, self.run_metas or None)
        self.ran_on: Dict[str, str] = {}
        self.spans: Dict[str, list] = {}
        for k, meta in enumerate(self.run_metas):
            for dev in meta.step_stats.dev_stats:
                for ns in dev.node_stats:
                    self.ran_on[ns.node_name] = dev.device
                    if k == len(self.run_metas) - 1 and _is_accelerator(dev.device):
                        self._add_span(dev.device, ns)

    def _add_span(self, device: str, ns) -> None:
        start, end = ns.all_start_micros, ns.all_start_micros + ns.all_end_rel_micros
        span = self.spans.setdefault(device, [start, end, 0])
        span[0], span[1] = min(span[0], start), max(span[1], end)
        span[2] += ns.all_end_rel_micros

    def device_of(self, op) -> str:
        return self.ran_on.get(op.name, op.device)

    def times(self, name: str) -> tuple:
        """(cpu, accelerator, total) µs of op `name`."""
        total = self.nodes[name].stats["exec_micros"]
        if _is_accelerator(self.ran_on.get(name, "")):
            return 0, total, total
        return total, 0, total


def _line(name: str, cpu: int, accelerator: int, total: int) -> str:
    return "%s, cpu: %s, accelerator: %s, total: %s" % (
        name, format_time(cpu), format_time(accelerator), format_time(total))


# --- the checkers ---------------------------------------------------------------------------
def _accelerator_utilization(stats: _Stats) -> List[str]:
    reports = []
    for device in sorted(stats.spans):
        start, end, busy = stats.spans[device]
        if end - start <= 0:
            continue
        utilization = busy / (end - start)
        kind = "utilization" if utilization >= 0.5 else "low utilization"
        reports.append("device: %s %s: %.2f" % (device, kind, utilization))
    return reports


def _operations(stats: _Stats) -> List[str]:
    ops = stats.graph.get_operations()
    batch_norm = any("BatchNorm" in op.name for op in ops)
    fused = any(op.type == "FusedBatchNorm" for op in ops)
    nhwc_on_gpu = any(_data_format(op) == "NHWC" and _is_accelerator(stats.device_of(op))
                      for op in ops)
    reports = []
    if batch_norm and not fused:
        reports.append("Maybe use faster FusedBatchNorm instead of BatchNorm")
    if nhwc_on_gpu:
        reports.append("Found operation using NHWC data_format on GPU. Maybe NCHW is "
                       "faster.")
    return reports


def _data_format(op) -> Optional[str]:
    value = op.attrs.get("data_format")
    return value.decode() if isinstance(value, bytes) else value


def _expensive_operations(stats: _Stats) -> List[str]:
    name = "ExpensiveOperationChecker"
    if not stats.run_metas:
        sys.stderr.write("Missing RunMetadata info. Skip %s\n" % name)
        sys.stderr.write("Missing run_meta for %s\n" % name)
        return []
    reports = [r for r in (_op_view_report(stats), _scope_view_report(stats))
               if r is not None]
    code = _code_view_report(stats)
    if code is _NO_TRACES:
        sys.stderr.write("Missing op_log (code traces) for %s\n" % name)
    elif code is not None:
        reports.append(code)
    return reports


def _op_view_report(stats: _Stats) -> Optional[str]:
    """The 3 op types that took the most time (at least 1us)."""
    by_type: Dict[str, list] = {}
    for name, node in stats.nodes.items():
        for op_type in node.types:
            times = by_type.setdefault(op_type, [0, 0, 0])
            for k, t in enumerate(stats.times(name)):
                times[k] += t
    everything = sum(stats.times(name)[2] for name in stats.nodes)
    top = sorted((t for t in by_type.items() if t[1][2] >= 1),
                 key=lambda t: (-t[1][2], t[0]))[:3]
    if not top:
        return None
    return "\n".join("top %d operation type: %s (%.2f%%)" % (
        k + 1, _line(op_type, *times), 100.0 * times[2] / (everything + 1e-10))
        for k, (op_type, times) in enumerate(top))


def _scope_view_report(stats: _Stats) -> Optional[str]:
    """The 3 top nodes of the name-scope view that hides nodes under 100us."""
    opts = {"max_depth": 100, "min_micros": 100, "order_by": "micros",
            "account_displayed_op_only": False}
    root = _analyzer.scope_view(stats.graph, stats.run_metas, opts)
    if not root.children:
        return None
    return "\n".join("top %d graph node: %s" % (k + 1, _line(node.name,
                                                              *stats.times(node.name)))
                     for k, node in enumerate(root.children[:3]))


# --- the code view ----------------------------------------------------------------------------
_NO_TRACES = object()


class _CodeNode:
    """A code location; `times` adds the (cpu, accelerator, total) µs of the ops it
    created and of those created beneath it."""

    def __init__(self, name: str):
        self.name = name
        self.children: Dict[str, "_CodeNode"] = {}
        self.times = [0, 0, 0]

    def add(self, path: List[str], times: tuple) -> None:
        node = self
        for step in path:
            for k, t in enumerate(times):
                node.times[k] += t
            node = node.children.setdefault(step, _CodeNode(step))
        for k, t in enumerate(times):
            node.times[k] += t

    def shown_children(self) -> List["_CodeNode"]:
        """The children that took time (at least 1us), the most first."""
        return sorted((c for c in self.children.values() if c.times[2] >= 1),
                      key=lambda c: (-c.times[2], c.name))


def _trace_name(file: str, lineno: int, function: str) -> str:
    """tfprof's name of a code location: "file.py:12:fn" (long functions shortened)."""
    function = function if len(function) < 20 else function[:17] + "..."
    return "%s:%d:%s" % (file.rsplit("/", 1)[-1], lineno, function)


def _code_paths(stats: _Stats) -> Dict[str, List[str]]:
    """{op name: its code path}: its traces (from the op log), or for a gradient op
    ("gradients/<op>_grad/...") those of its forward op marked " (gradient)"."""
    op_log = _logger.merge_default_with_oplog(stats.graph, None, stats.run_metas or None)
    ids = dict(op_log.id_to_string)
    paths = {}
    for entry in op_log.log_entries:
        location = _logger.code_location(entry, ids)
        if location is not None:
            paths[entry.name] = [_trace_name(*t) for t in location]
    for name in list(paths):
        forward = re.search(r"gradients/(.+?)_grad/", name)
        if forward and forward.group(1) in paths:
            paths[name] = [p + _GRADIENT_SUFFIX for p in paths[forward.group(1)]]
    return paths


def _code_view_report(stats: _Stats):
    paths = _code_paths(stats)
    if not paths:
        return _NO_TRACES
    root = _CodeNode(_analyzer.ROOT)
    for name, path in paths.items():
        if name in stats.nodes:
            root.add(path, stats.times(name))
    node = root
    while len(node.shown_children()) == 1:  # library frames lead to the user's lines
        node = node.shown_children()[0]
    if not node.shown_children():
        return None
    lines: List[str] = []
    _code_lines(node, 0, lines)
    return "\n".join(lines)


def _code_lines(node: _CodeNode, depth: int, lines: List[str]) -> None:
    """Up to 3 children that took at least 1ms, each followed by its own (to depth 3)."""
    children = node.shown_children()
    if len(children) <= 1 or depth > 3:
        return
    for child in children[:3]:
        if child.times[2] < 1000:
            continue
        lines.append("  " * depth + _line(child.name, *child.times))
        _code_lines(child, depth + 1, lines)


# --- advise -----------------------------------------------------------------------------------
_RUN = {"AcceleratorUtilizationChecker": _accelerator_utilization,
        "OperationChecker": _operations, "ExpensiveOperationChecker": _expensive_operations}


def run_checkers(graph, run_meta, options) -> "AdviceProto":
    """The AdviceProto of the checkers named in `options` (printed to stdout too)."""
    stats = _Stats(graph, run_meta)
    advice = _advice_class()()
    for name in _CHECKERS:
        if name in options:
            advice.checkers[name].reports.extend(_RUN[name](stats))
    for name in _CHECKERS:
        if name in advice.checkers:
            sys.stdout.write("\n%s:\n" % name)
            for report in advice.checkers[name].reports:
                sys.stdout.write(report + "\n")
    sys.stdout.flush()
    return advice


@tf_export("profiler.advise")
def advise(graph=None, run_meta=None, options=_DEFAULT_ADVISE_OPTIONS):
    """Profiles `graph` and checks it for common performance problems.

    Args:
      graph: the Graph (None: the default graph).
      run_meta: the RunMetadata of a traced run (needed for time-based advice).
      options: {checker name: its options}; the default runs every checker
        (ALL_ADVICE).

    Returns:
      An AdviceProto: for each checker run, its report strings.
    """
    from tensorweave.framework.graph import get_default_graph
    graph = graph if graph is not None else get_default_graph()
    if isinstance(options, int) and options == _DEFAULT_ADVISE_OPTIONS:
        options = dict(ALL_ADVICE)
    return run_checkers(graph, run_meta, options or {})
