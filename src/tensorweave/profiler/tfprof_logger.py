"""`tf.profiler.write_op_log`: tfprof's OpLogProto (tfprof_log.proto), the extra model
information its offline tools read: per op, the float operations of TF1's flops
statistics (profiler/flops.py, static shapes completed from a RunMetadata), the code
location that created it, and the type "_trainable_variables" for trainable variables.

The message class is the `tensorboard` package's (the same fields and wire form as
TensorFlow's `tensorflow.tfprof.OpLogProto`). tensorweave records one code location per
op (the user's line that created it), so each entry's CodeDef holds one trace; its
function is the innermost `def` (or lambda, or "<module>") around that line of the file.
"""
from __future__ import annotations

import ast
import functools
import linecache
import os
from typing import Dict, List, Optional, Tuple

from tensorweave.framework.api_export import export, tf_export
from tensorweave.profiler import model_analyzer as _analyzer

_TRACE_UNKNOWN = 0  # id of "none": a trace field that is not known


def _op_log_class():
    from tensorboard.compat.proto import tfprof_log_pb2
    return tfprof_log_pb2.OpLogProto


def _entry_class():
    from tensorboard.compat.proto import tfprof_log_pb2
    return tfprof_log_pb2.OpLogEntry


OpLogProto = export(_op_log_class(), "profiler.OpLogProto")


# --- code locations -----------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def _scopes_of(filename: str) -> Tuple[tuple, ...]:
    """(first line, last line, name) of each function and lambda of a Python file
    (nothing when it cannot be read or parsed)."""
    try:
        with open(filename, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return ()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    return tuple((n.lineno, n.end_lineno, getattr(n, "name", "<lambda>"))
                 for n in ast.walk(tree) if isinstance(n, kinds))


def _function_at(filename: str, lineno: int) -> str:
    """The name Python gives the code running at `lineno` of `filename`: the innermost
    function around it, "<module>" outside any ("" when the file cannot be read)."""
    if not os.path.isfile(filename):
        return ""
    around = [s for s in _scopes_of(filename) if s[0] <= lineno <= s[1]]
    if not around:
        return "<module>"
    return max(around, key=lambda s: s[0])[2]


def op_frames(op) -> List[Tuple[str, int, str, str]]:
    """(file, line number, function, source line) of each frame of `op`'s traceback,
    outermost first."""
    return [(filename, lineno, _function_at(filename, lineno),
             linecache.getline(filename, lineno).strip())
            for filename, lineno in op.traceback]


# --- the op log -----------------------------------------------------------------------------
def _string_id(s: str, ids: Dict[str, int]) -> int:
    return ids.setdefault(s, len(ids))


def _add_traces(entry, op, ids: Dict[str, int]) -> None:
    for filename, lineno, function, line in op_frames(op):
        trace = entry.code_def.traces.add()
        trace.file_id = _string_id(filename, ids) if filename else _TRACE_UNKNOWN
        trace.lineno = lineno if lineno else -1
        trace.function_id = _string_id(function, ids) if function else _TRACE_UNKNOWN
        trace.line_id = _string_id(line, ids) if line else _TRACE_UNKNOWN
        trace.func_start_line = -1


def _logged_ops(graph, run_meta, add_trace: bool) -> Tuple[dict, Dict[str, int]]:
    """({op name: OpLogEntry}, {string: id}) of the ops with float operations or (with
    `add_trace`) a code location, then the trainable variables."""
    entry_class = _entry_class()
    ids = {"none": _TRACE_UNKNOWN}
    logged: dict = {}
    nodes = _analyzer.op_nodes(graph, run_meta)
    for op in graph.get_operations():
        node = nodes[op.name]
        entry = entry_class(name=op.name)
        if node.stats["float_ops"]:
            entry.float_ops = int(node.stats["float_ops"])
        if add_trace and op.traceback:
            _add_traces(entry, op, ids)
        if entry.float_ops or len(entry.code_def.traces):
            logged[op.name] = entry
    for op in graph.get_operations():
        if _analyzer.TRAINABLE_VARIABLES in nodes[op.name].types:
            entry = logged.setdefault(op.name, entry_class(name=op.name))
            entry.types.append(_analyzer.TRAINABLE_VARIABLES)
    return logged, ids


def _copy(entry):
    copy = _entry_class()()
    copy.CopyFrom(entry)
    return copy


def merge_default_with_oplog(graph, op_log=None, run_meta=None, add_trace: bool = True):
    """The OpLogProto of `graph` (see the module docstring) merged into `op_log`: an op
    already there keeps its entry, gains the types found, and takes the float
    operations and code location found where it has none.

    Args:
      graph: the Graph (default: the default graph).
      op_log: an OpLogProto to merge into (not modified), or None.
      run_meta: a RunMetadata whose recorded shapes complete unknown static shapes.
      add_trace: whether to record each op's code location.

    Returns:
      A new OpLogProto.
    """
    from tensorweave.framework.graph import get_default_graph
    graph = graph if graph is not None else get_default_graph()
    logged, ids = _logged_ops(graph, run_meta, add_trace)
    merged = {e.name: _copy(e) for e in op_log.log_entries} if op_log else {}
    for name, entry in logged.items():
        old = merged.get(name)
        if old is None:
            merged[name] = entry
            continue
        old.types.extend(entry.types)
        if entry.float_ops > 0 and old.float_ops == 0:
            old.float_ops = entry.float_ops
        if len(entry.code_def.traces) and not len(old.code_def.traces):
            old.code_def.MergeFrom(entry.code_def)
    result = _op_log_class()()
    result.log_entries.extend(merged.values())
    for s, i in ids.items():
        result.id_to_string[i] = s
    return result


@tf_export("profiler.write_op_log")
def write_op_log(graph, log_dir: str, op_log=None, run_meta=None,
                 add_trace: bool = True) -> None:
    """Writes `graph`'s OpLogProto, merged into `op_log`, to `<log_dir>/tfprof_log`.

    Args:
      graph: the Graph (None: the default graph).
      log_dir: the directory to write to (a local or fsspec path).
      op_log: an OpLogProto to merge the graph's information into, or None.
      run_meta: a RunMetadata of a traced run: completes unknown static shapes for the
        float operation counts.
      add_trace: whether to record each op's code location (tfprof's "code" view).
    """
    from tensorweave.platform import gfile
    merged = merge_default_with_oplog(graph, op_log, run_meta, add_trace)
    with gfile.GFile(os.path.join(log_dir, "tfprof_log"), "wb") as f:
        f.write(merged.SerializeToString())


def code_location(entry, id_to_string) -> Optional[List[Tuple[str, int, str]]]:
    """(file, line number, function) of each trace of an OpLogEntry, as tfprof reads
    them (None without traces)."""
    traces = entry.code_def.traces
    if not len(traces):
        return None
    return [(id_to_string.get(t.file_id, ""), t.lineno, id_to_string.get(t.function_id, ""))
            for t in traces]
