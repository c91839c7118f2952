"""Watching tensors while a session runs: `watch` wraps a Session (the idea of tfdbg's
DumpingDebugWrapperSession, kept simple).

A watched run is a traced run (RunOptions.trace_level) whose trace is a `_WatchTrace`:
every executor already calls `StepTrace.record` once per kernel execution with the
output values and the frame name and iteration (per iteration inside loops), so the
watch copies the values of the tensors it watches there. Nothing of this exists for
runs of an unwrapped session: the executors' untraced paths are unchanged.

What a watch does not see: values of ops the session's optimizer folded into constants
or merged (CSE) - the plan runs neither -, feeds (not op outputs), and values computed
on the remote tasks of a cluster. Inside nested loops a value's frame and iteration are
those of the innermost loop; `dump_index` orders values of one run.
"""
from __future__ import annotations

import os
import re
import tempfile
from typing import Callable, Dict, List, Optional, Union

import numpy as np

from tensorweave.debug import dump as _dump
from tensorweave.framework import errors
from tensorweave.runtime import executor as _ex
from tensorweave.runtime import provenance as _provenance
from tensorweave.runtime.config import RunMetadata, RunOptions
from tensorweave.runtime.values import DEAD

_WHEN = ("always", "on_error")


def has_inf_or_nan(datum, tensor) -> bool:
    """True when `tensor` (a dumped value) is floating point or complex and holds an
    Inf or a NaN (tfdbg's filter of the same name; `datum` is unused).

    Pass it as `watch(..., when=has_inf_or_nan)` to stop at the first op that produces
    a non-finite value, or to `DebugDumpDir.find`."""
    del datum
    if tensor is None or not isinstance(tensor, np.ndarray):
        return False
    if tensor.dtype.kind not in "fc":
        return False
    return not bool(np.isfinite(tensor).all())


class FilterMatchedError(errors.InvalidArgumentError):
    """The filter of a watch matched a value of the step (an InvalidArgumentError, like
    tf.check_numerics' failure). `datum` is the first matching DebugTensorDatum, `dump`
    the run's DebugDumpDir."""

    def __init__(self, node_def=None, op=None, message="", datum=None, dump=None):
        super().__init__(node_def, op, message)
        self.datum = datum
        self.dump = dump


class _WatchTrace(_ex.StepTrace):
    """A StepTrace that also keeps copies of the watched output values."""

    __slots__ = ("watched", "values")

    def __init__(self, watched: Callable[[str], bool]):
        super().__init__()
        self.watched = watched
        # (tensor name, op, slot, frame name, iteration, device name, array or None)
        self.values: List[tuple] = []

    def record(self, op, device, t0, t1, outputs=(), frame_name="", iteration=0,
               *args, **kwargs):
        super().record(op, device, t0, t1, outputs, frame_name, iteration, *args, **kwargs)
        if op is None or not hasattr(op, "outputs"):
            return
        for slot, v in enumerate(outputs):
            if v is DEAD:
                continue
            name = "%s:%d" % (op.name, slot)
            if self.watched(name):
                self.values.append((name, op, slot, frame_name, iteration,
                                    getattr(device, "name", ""), _dump.to_host_array(v)))


class _WatchMetadata(RunMetadata):
    """The RunMetadata of a watched run: the session makes its trace with
    `_tw_step_trace` (runtime/session.py)."""

    def __init__(self, trace: _WatchTrace):
        super().__init__()
        object.__setattr__(self, "_trace", trace)

    def _tw_step_trace(self) -> _WatchTrace:
        return self._trace


class WatchSession:
    """A Session whose runs dump watched tensors (made by `watch`). It runs like the
    session it wraps; `run` adds the watch, other attributes are the wrapped session's
    (so `make_callable`, `partial_run` and `as_default` runs are not watched).

    Attributes:
      session: the wrapped Session.
      dump_root: where runs are dumped (run_<step> directories).
      step: the number of runs made through this wrapper so far.
      last_dump_dir: the directory of the latest dumped run, or None.
    """

    def __init__(self, sess, watched: Callable[[str], bool], dump_root: str, when):
        self.session = sess
        self.dump_root = dump_root
        self._watched = watched
        self._when = when
        self.step = _next_step(dump_root)
        self.last_dump_dir: Optional[str] = None

    # the wrapped session's API
    def __getattr__(self, name):
        if name == "session":  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.session, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.session.close()
        return False

    def close(self) -> None:
        self.session.close()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """`Session.run` with the watch: the values of the watched tensors are dumped
        (always, on an error, or when the filter matches; see `watch`).

        Raises:
          FilterMatchedError: the watch's filter matched a value of this step (the
            step ran to its end or its first error; the run is dumped).
          OpError subclasses: an op failed (the run is dumped, in every mode).
        """
        step = self.step
        self.step += 1
        trace = _WatchTrace(self._watched)
        opts = RunOptions()
        if options is not None:
            opts.CopyFrom(options)
        if not opts.trace_level:
            opts.trace_level = RunOptions.FULL_TRACE
        md = _WatchMetadata(trace)
        try:
            out = self.session.run(fetches, feed_dict, opts, md)
        except errors.OpError as e:
            run_dir = self._write(step, "error", str(e), trace)
            match = self._filter_match(trace, run_dir) if callable(self._when) else None
            if match is not None:
                raise match from e
            raise
        finally:
            if run_metadata is not None:
                run_metadata.step_stats = md.step_stats
                run_metadata.partition_graphs = md.partition_graphs
        if callable(self._when):
            match = self._filter_match(trace, None)
            if match is not None:
                run_dir = self._write(step, "filter", match.message, trace)
                match.dump = _dump.DebugDumpDir(run_dir)
                raise match
        elif self._when == "always":
            self._write(step, "ok", None, trace)
        return out

    def _write(self, step: int, status: str, error: Optional[str], trace) -> str:
        run_dir = os.path.join(self.dump_root, "run_%d" % step)
        _dump.write_run(run_dir, step, status, error, trace.values)
        self.last_dump_dir = run_dir
        return run_dir

    def _filter_match(self, trace: _WatchTrace, run_dir: Optional[str]):
        """The FilterMatchedError for the first value the filter matches, or None."""
        pred = self._when
        for i, (name, op, slot, frame, it, device, value) in enumerate(trace.values):
            datum = _LiveDatum(name, op, slot, frame, it, device, i, value)
            if not pred(datum, value):
                continue
            what = "has a non-finite value" if pred is has_inf_or_nan else \
                "matches the filter %s" % getattr(pred, "__name__", repr(pred))
            lines = ["The tensor '%s' (output %d of op '%s' of type %s) %s: %s" % (
                name, slot, op.name, op.type, what, _describe(value))]
            lines.append("\t [[node %s (defined at %s) ]]" % (op.name,
                                                              errors.op_location(op)))
            lines.extend("\t " + ln for ln in _provenance.context_lines(
                op, ((frame, it),) if frame else ()))
            for j, t in enumerate(op.inputs):
                v = _input_value(trace.values, t, frame, it, i)
                lines.append("\t input %d '%s': %s" % (
                    j, t.name, "not watched" if v is None else _describe(v)))
            err = FilterMatchedError(None, op, "\n".join(lines), datum=datum)
            if run_dir is not None:
                err.dump = _dump.DebugDumpDir(run_dir)
            return err
        return None


class _LiveDatum:
    """What a filter receives during a run (the fields of DebugTensorDatum that exist
    before the run is written)."""

    debug_op = "DebugIdentity"

    def __init__(self, name, op, slot, frame, iteration, device, index, value):
        self.tensor_name, self.node_name, self.output_slot = name, op.name, slot
        self.op_type, self.frame_name, self.iteration = op.type, frame, iteration
        self.device_name, self.dump_index = device, index
        self.dtype = None if value is None else value.dtype.name
        self.shape = None if value is None else value.shape

    @property
    def watch_key(self) -> str:
        return "%s:%d:%s" % (self.node_name, self.output_slot, self.debug_op)


def _describe(v) -> str:
    """dtype, shape and range of a dumped value: "float32[4]: min -1 max 2", with the
    count of NaN, Inf and -Inf values ("float32[4]: 1 -Inf, finite min 0.5 max 2")."""
    if v is None:
        return "not an array"
    head = "%s%s" % (v.dtype.name if v.dtype.kind != "S" else "string", list(v.shape))
    if v.size == 0 or v.dtype.kind not in "biuf":
        return head
    parts = []
    finite = v
    if v.dtype.kind == "f":
        n_nan, n_inf = int(np.isnan(v).sum()), int(np.isposinf(v).sum())
        n_ninf = int(np.isneginf(v).sum())
        parts += ["%d NaN" % n_nan] if n_nan else []
        parts += ["%d Inf" % n_inf] if n_inf else []
        parts += ["%d -Inf" % n_ninf] if n_ninf else []
        finite = v[np.isfinite(v)]
    if finite.size:
        parts.append("%smin %s max %s" % ("finite " if parts else "", _num(finite.min()),
                                          _num(finite.max())))
    return "%s: %s" % (head, ", ".join(parts))


def _num(x) -> str:
    return np.format_float_positional(x, precision=6, trim="-") \
        if isinstance(x, np.floating) else str(x)


_FORWARD = ("Identity", "RefIdentity", "Switch", "RefSwitch", "Snapshot")


def _input_value(values: List[tuple], t, frame: Optional[str], it: int, before: int,
                 depth=0):
    """The value input tensor `t` had for a kernel that ran at (`frame`, `it`) (frame
    None: the latest value, whatever its frame), from the dumped values before index
    `before`; looks through the loop and cond forwarding ops the executors do not
    record. None if it was not watched."""
    if depth > 32:
        return None
    name = t.name
    latest = None
    for k in range(before - 1, -1, -1):
        e = values[k]
        if e[0] == name:
            if frame is None or (e[3] == frame and e[4] == it):
                return e[6]
            if latest is None:
                latest = e[6]
    op = t.op
    typ = op.type
    if typ in _FORWARD:
        return _input_value(values, op.inputs[0], frame, it, before, depth + 1)
    if typ in ("Enter", "RefEnter"):
        return _input_value(values, op.inputs[0], None, 0, before, depth + 1)
    if typ in ("Merge", "RefMerge"):
        nxt = op.inputs[1].op if len(op.inputs) > 1 else None
        if nxt is not None and nxt.type in ("NextIteration", "RefNextIteration"):
            if it > 0:
                return _input_value(values, nxt.inputs[0], frame, it - 1, before, depth + 1)
            return _input_value(values, op.inputs[0], frame, it, before, depth + 1)
        for x in op.inputs:  # a cond's Merge: the branch that ran
            v = _input_value(values, x, frame, it, before, depth + 1)
            if v is not None:
                return v
    return latest


def _next_step(dump_root: str) -> int:
    """The step number after the runs already dumped under `dump_root`."""
    if not os.path.isdir(dump_root):
        return 0
    nums = [int(m.group(1)) for e in os.listdir(dump_root)
            if (m := _dump._RUN_DIR.match(e))]
    return max(nums) + 1 if nums else 0


def watch(sess, tensors=None, regex: Optional[str] = None, dump_root: Optional[str] = None,
          when: Union[str, Callable] = "always") -> WatchSession:
    """Wraps `sess` so that its runs dump the values of chosen tensors.

    Every value is dumped: one per run outside loops, one per iteration inside them
    (with the loop's frame name and iteration). Read the dumps back with
    `DebugDumpDir(dump_root)`.

    Args:
      sess: a Session.
      tensors: Tensors, tensor names ("layer/MatMul:0") or op names (all outputs) to
        watch. With neither `tensors` nor `regex`, every tensor is watched.
      regex: a regular expression; every tensor whose name it matches (re.search on
        "op/name:slot") is watched too.
      dump_root: the directory of the dumps (made if missing; a temporary directory
        when None). Runs are written to run_<step> directories; reusing a root goes on
        after the steps already there.
      when: "always" (dump every run), "on_error" (dump only runs where an op fails),
        or a filter `f(datum, value) -> bool` such as `has_inf_or_nan`: the first
        value of a run for which it is true, in execution order, stops the wrapper:
        the run is dumped and `run` raises FilterMatchedError naming that tensor's op,
        its line, its loop iteration and the range of each of its inputs. (The step
        itself ran to its end; ops after the match ran too. Use tf.check_numerics to
        stop a step at a given tensor.) Runs that fail are dumped in every mode.

    Returns:
      A WatchSession.

    Raises:
      ValueError: `when` is not one of the above, `regex` does not compile, or a
        tensor name is not in the session's graph.
    """
    if not (when in _WHEN or callable(when)):
        raise ValueError("when must be \"always\", \"on_error\" or a filter callable "
                         "(datum, value) -> bool, got %r" % (when,))
    names = set()
    graph = sess.graph
    for t in tensors or ():
        if isinstance(t, str):
            el = graph.as_graph_element(t, allow_tensor=True, allow_operation=True)
        else:
            el = t
        if hasattr(el, "value_index"):
            names.add(el.name)
        else:
            names.update(o.name for o in el.outputs)
    try:
        pattern = re.compile(regex) if regex is not None else None
    except re.error as e:
        raise ValueError("regex %r does not compile: %s" % (regex, e)) from None
    watch_all = not names and pattern is None
    cache: Dict[str, bool] = {}

    def watched(name: str) -> bool:
        w = cache.get(name)
        if w is None:
            w = cache[name] = watch_all or name in names or \
                (pattern is not None and pattern.search(name) is not None)
        return w

    if dump_root is None:
        dump_root = tempfile.mkdtemp(prefix="tw_debug_")
    os.makedirs(dump_root, exist_ok=True)
    return WatchSession(sess, watched, dump_root, when)
