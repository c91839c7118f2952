"""Chrome trace (Trace Event Format) of a traced step: `Timeline(step_stats)`.

TF1's `tensorflow.python.client.timeline.Timeline`, written for tensorweave's step stats
(RunMetadata.step_stats of a run with RunOptions(trace_level=FULL_TRACE)); TF's own
StepStats protos (tensorboard's copy) work too. The JSON opens in Perfetto
(ui.perfetto.dev) and chrome://tracing:

* one process lane per device (per task on a cluster: devices carry their task's name),
  one thread lane per thread that ran kernels there, named after the thread;
* one complete ("X") event per kernel execution, named by its op type, with args name,
  op and input0, input1, ... (and the while-loop frame and iteration inside loops);
* with show_dataflow, TF's flow arrows ("s" when the producer ends, "t" when the
  consumer starts): one per input produced on another thread or device (TF leaves out
  inputs from the same thread, whose arrows would only clutter the lane), and one per
  `_Send`/`_Recv` pair (matched by tensor name, devices, frame and iteration: what the
  rendezvous key holds), which stands for the input the Recv brought;
* with show_memory, a counter ("C") per device of its allocator's bytes in use, sampled
  when each kernel ends.
"""
from __future__ import annotations

import json
import re
from typing import Dict, List, Tuple

# "name = Type(arg, arg)" as executors label nodes; a transfer: "(tensor @device)"
_LABEL = re.compile(r"^(?P<name>[^=]*?) = (?P<op>[^(]*)\((?P<args>.*)\)$")


def parse_label(label: str) -> Tuple[str, str, List[str]]:
    """(node name, op type, inputs) of a timeline label "name = Type(a, b)"."""
    m = _LABEL.match(label or "")
    if m is None:
        return label, "unknown", []
    args = m.group("args").strip()
    return m.group("name"), m.group("op"), [a.strip() for a in args.split(",")] if args \
        else []


def _input_name(tensor: str) -> str:
    """A tensor's name as a NodeDef input (and TF's timeline labels) name it: "x" for
    "x:0"."""
    return tensor[:-2] if tensor.endswith(":0") else tensor


def _transfer_key(dev: str, op: str, inputs: List[str], frame: str, iteration: int):
    """(tensor name, send device, recv device, frame, iteration) of a Send or Recv."""
    if len(inputs) != 1 or " @" not in inputs[0]:
        return None
    tensor, other = inputs[0].rsplit(" @", 1)
    tensor = _input_name(tensor)
    send, recv = (dev, other) if op == "_Send" else (other, dev)
    return tensor, send, recv, frame, iteration


class Timeline:
    """The Chrome trace of one step's step stats.

    Args:
      step_stats: a StepStats (RunMetadata.step_stats).
      graph: optional; the Graph of the step (accepted as in TF; the op types come from
        the step stats' timeline labels).
    """

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False,
                                     op_time: str = "schedule") -> str:
        """The trace as a JSON string (`{"traceEvents": [...]}`).

        Args:
          show_dataflow: whether to draw arrows for tensors moving between devices.
          show_memory: whether to add each device's allocator bytes in use as counters.
          op_time: "schedule", "gpu" or "all" as in TF; tensorweave's kernels have one
            time (their start to end on the thread that ran them), used for all three.

        Returns:
          The Chrome trace JSON.

        Raises:
          ValueError: an unknown op_time.
        """
        if op_time not in ("schedule", "gpu", "all"):
            raise ValueError("op_time must be 'schedule', 'gpu' or 'all', got %r" % op_time)
        return json.dumps(self.trace_events(show_dataflow, show_memory),
                          separators=(",", ":"), allow_nan=False)

    def trace_events(self, show_dataflow: bool = True, show_memory: bool = False) -> dict:
        """The trace as a dict (what generate_chrome_trace_format serializes)."""
        events: List[dict] = []
        ops: List[tuple] = []  # (pid, tid, start, end, node name, op, inputs, frame, it)
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append(_meta("process_name", pid, 0, name=dev.device))
            events.append(_meta("process_sort_index", pid, 0, sort_index=pid))
            thread_names = dict(getattr(dev, "thread_names", {}) or {})
            tids: Dict[int, int] = {}
            counters = []
            for ns in dev.node_stats:
                tid = tids.get(ns.thread_id)
                if tid is None:
                    tid = tids[ns.thread_id] = len(tids)
                    name = thread_names.get(ns.thread_id, "thread %d" % ns.thread_id)
                    events.append(_meta("thread_name", pid, tid, name=name))
                node, op, inputs = parse_label(ns.timeline_label)
                node = ns.node_name or node
                start = int(ns.all_start_micros)
                dur = max(int(ns.all_end_rel_micros), 0)
                args = {"name": node, "op": op}
                for i, a in enumerate(inputs):
                    args["input%d" % i] = a
                frame = getattr(ns, "frame_name", "")
                iteration = int(getattr(ns, "iteration", 0))
                if frame:
                    args["frame"], args["iteration"] = frame, iteration
                out_bytes = sum(o.tensor_description.allocation_description.allocated_bytes
                                for o in ns.output)
                if out_bytes:
                    args["output_bytes"] = out_bytes
                events.append({"ph": "X", "cat": "Op", "name": op, "pid": pid, "tid": tid,
                               "ts": start, "dur": dur, "args": args})
                ops.append((pid, tid, start, start + dur, node, op, inputs, frame,
                            iteration, dev.device))
                if show_memory and ns.memory:
                    counters.append((start + dur, ns.memory[0]))
            for ts, mem in sorted(counters, key=lambda c: c[0]):
                events.append({"ph": "C", "cat": "Memory",
                               "name": "Memory %s" % (mem.allocator_name or "allocator"),
                               "pid": pid, "tid": 0, "ts": ts,
                               "args": {"bytes_in_use": int(mem.allocator_bytes_in_use)}})
        if show_dataflow:
            events.extend(_flows(ops))
        return {"traceEvents": events}


def _meta(kind: str, pid: int, tid: int, **args) -> dict:
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": args}


def _flows(ops: List[tuple]) -> List[dict]:
    """Flow arrows: each Send to its Recv, and each input read from another thread or
    device without a transfer (the consumer's label names the original tensor, so an
    input a Recv brought is drawn once, from the Send)."""
    out: List[dict] = []
    sends: Dict[tuple, tuple] = {}
    received = set()  # (tensor, device, frame, iteration) a Recv brought to a device
    producers: Dict[tuple, tuple] = {}  # (node, frame, iteration) -> its record
    for r in ops:
        pid, tid, start, end, node, op, inputs, frame, it, dev = r
        if op == "_Send":
            key = _transfer_key(dev, op, inputs, frame, it)
            if key is not None:
                sends[key] = r
        elif op == "_Recv":
            key = _transfer_key(dev, op, inputs, frame, it)
            if key is not None:
                received.add((key[0], dev, frame, it))
        producers[(node, frame, it)] = r
        producers.setdefault((node, None, None), r)
    flow_id = 0

    def arrow(src, dst, name):  # from the producer's end to the consumer's start
        nonlocal flow_id
        flow_id += 1
        out.append({"ph": "s", "cat": "DataFlow", "name": name, "id": flow_id,
                    "pid": src[0], "tid": src[1], "ts": src[3]})
        out.append({"ph": "t", "cat": "DataFlow", "name": name, "id": flow_id,
                    "pid": dst[0], "tid": dst[1], "ts": dst[2]})

    for r in ops:
        pid, tid, start, end, node, op, inputs, frame, it, dev = r
        if op == "_Recv":
            key = _transfer_key(dev, op, inputs, frame, it)
            src = sends.get(key) if key is not None else None
            if src is not None:
                arrow(src, r, key[0])
            continue
        if op == "_Send":
            continue
        for a in inputs:
            a = _input_name(a)
            if a.startswith("^") or (a, dev, frame, it) in received:
                continue  # a control input, or the Recv's arrow stands for it
            producer = a.rsplit(":", 1)[0] if ":" in a else a
            src = producers.get((producer, frame, it)) or producers.get((producer, None,
                                                                         None))
            if src is not None and (src[0], src[1]) != (pid, tid):
                arrow(src, r, a)
    return out


def chrome_trace_of(run_metadata, show_dataflow: bool = True,
                    show_memory: bool = False) -> str:
    """The Chrome trace JSON of a RunMetadata's step stats (a shorthand)."""
    return Timeline(run_metadata.step_stats).generate_chrome_trace_format(
        show_dataflow=show_dataflow, show_memory=show_memory)

