"""RunMetadata.step_stats from the records of a traced run (executor.StepTrace).

`device_step_stats` turns the records into one DeviceStepStats per device that ran a
kernel, each NodeExecStats with TF's fields (config.NodeExecStats): wall-clock start in
µs since the epoch, relative op start/end, TF's timeline label, one NodeOutput per live
output (dtype enum, shape, bytes) and the allocator's bytes in use when the kernel
ended. The tasks of a cluster send their device stats to the master in `to_wire` form
(JSON-safe lists, on RunGraph's answer); `merge` appends them to the session's own.
Times are taken on each task's wall clock, so the records of a cluster's tasks on one
machine line up on one time axis.
"""
from __future__ import annotations

import threading
from typing import Dict, List

from tensorweave.runtime.config import (
    AllocationDescription, AllocatorMemoryUsed, DeviceStepStats, NodeExecStats, NodeOutput,
    TensorDescription, TensorShapeProto)

_DT_STRING = 7  # TF's DataType enum of strings (NumPy object arrays hold them here)


def allocator_name(device) -> str:
    """TF's allocator names: "cpu" for host memory, "<TYPE>_<i>_bfc" otherwise."""
    if device.device_type == "CPU":
        return "cpu"
    return "%s_%d_bfc" % (device.device_type, device.index)


def timeline_label(op) -> str:
    """TF's timeline label of a node: "name = Type(input, ...)", its data inputs named
    as a NodeDef names them ("x" for output 0, "x:1"); a `_Send` or `_Recv`
    names its tensor and the device at the other end, as TF's executor does:
    "name = _Send(tensor_name @recv_device)", "name = _Recv(tensor_name @send_device)"."""
    if op is None:
        return "<const> = Const()"
    key = getattr(op, "rendezvous_key", "")
    if key and op.type in ("_Send", "_Recv"):
        src, _, dst, tensor_name, _ = key.split(";", 4)
        return "%s = %s(%s @%s)" % (op.name, op.type, tensor_name,
                                    dst if op.type == "_Send" else src)
    return "%s = %s(%s)" % (op.name, op.type, ", ".join(
        t.name if t.value_index else t.op.name for t in op.inputs))


def _dtype_enum(dtype) -> int:
    """TF's DataType enum of a NumPy dtype (0, DT_INVALID, for none)."""
    if dtype is None:
        return 0
    from tensorweave.framework import dtypes as _dt
    if dtype.kind in "OSU":
        return _DT_STRING
    try:
        return _dt.as_dtype(dtype).as_datatype_enum
    except TypeError:
        return 0


def _node_output(slot: int, dtype_enum: int, shape, nbytes: int, alloc: str) -> NodeOutput:
    desc = TensorDescription(dtype=dtype_enum, allocation_description=AllocationDescription(
        requested_bytes=nbytes, allocated_bytes=nbytes, allocator_name=alloc))
    if shape is None:
        desc.shape.unknown_rank = True
    else:
        desc.shape.dim = [TensorShapeProto.Dim(size=int(d)) for d in shape]
    return NodeOutput(slot=slot, tensor_description=desc)


def _node_stats(name, start_us, dur_us, label, tid, frame, iteration, outputs, in_use,
                alloc) -> NodeExecStats:
    """`outputs`: (slot, dtype enum, shape, bytes) of each live output."""
    nbytes = sum(o[3] for o in outputs)
    return NodeExecStats(
        node_name=name, all_start_micros=start_us, op_start_rel_micros=0,
        op_end_rel_micros=dur_us, all_end_rel_micros=dur_us, timeline_label=label,
        output=[_node_output(s, dt, shape, nb, alloc) for s, dt, shape, nb in outputs],
        memory=[AllocatorMemoryUsed(allocator_name=alloc, total_bytes=nbytes,
                                    peak_bytes=nbytes, live_bytes=nbytes,
                                    allocator_bytes_in_use=in_use)],
        output_bytes=nbytes, thread_id=tid, frame_name=frame, iteration=iteration)


def device_step_stats(trace) -> List[DeviceStepStats]:
    """One DeviceStepStats per device with records in `trace` (in order of each
    device's first record), then those the trace's remote tasks returned."""
    per_dev: Dict[str, DeviceStepStats] = {}
    labels: Dict[int, str] = {}
    tids: Dict[str, set] = {}
    wall0, perf0 = trace.wall0_us, trace.perf0
    for op, dev, t0, t1, outs, tid, frame, iteration, in_use in trace.records:
        ds = per_dev.get(dev.name)
        if ds is None:
            ds = per_dev[dev.name] = DeviceStepStats(
                device=dev.name, peak_bytes=dev.allocator.peak_bytes)
            tids[dev.name] = set()
        label = labels.get(id(op))
        if label is None:
            label = labels[id(op)] = timeline_label(op)
        start = wall0 + int((t0 - perf0) * 1e6)
        outputs = tuple((s, _dtype_enum(dt), shape, nb) for s, dt, shape, nb in outs)
        ds.node_stats.append(_node_stats(
            op.name if op is not None else "<const>", start, int((t1 - t0) * 1e6), label,
            tid, frame, iteration, outputs, in_use, allocator_name(dev)))
        tids[dev.name].add(tid)
    names = {t.ident: t.name for t in threading.enumerate()}
    for dev_name, ds in per_dev.items():
        ds.thread_names = {t: names[t] for t in sorted(tids[dev_name]) if t in names}
        ds.total_bytes = sum(n.output_bytes for n in ds.node_stats)
    return list(per_dev.values()) + from_wire(trace.remote)


def to_wire(dev_stats: List[DeviceStepStats]) -> List[dict]:
    """`dev_stats` as JSON-safe dicts (what a task returns to the master)."""
    out = []
    for ds in dev_stats:
        nodes = []
        for n in ds.node_stats:
            alloc = n.memory[0].allocator_name if n.memory else ""
            in_use = n.memory[0].allocator_bytes_in_use if n.memory else 0
            outs = []
            for o in n.output:
                td = o.tensor_description
                shape = None if td.shape.unknown_rank else [d.size for d in td.shape.dim]
                outs.append([o.slot, td.dtype, shape,
                             td.allocation_description.allocated_bytes])
            nodes.append([n.node_name, n.all_start_micros, n.all_end_rel_micros,
                          n.timeline_label, n.thread_id, n.frame_name, n.iteration, outs,
                          in_use, alloc])
        out.append({"device": ds.device, "peak_bytes": ds.peak_bytes,
                    "total_bytes": ds.total_bytes, "nodes": nodes,
                    "thread_names": [[t, name] for t, name in ds.thread_names.items()]})
    return out


def from_wire(dicts: List[dict]) -> List[DeviceStepStats]:
    """The DeviceStepStats of `to_wire` dicts."""
    out = []
    for d in dicts:
        ds = DeviceStepStats(device=d["device"], peak_bytes=d["peak_bytes"],
                             total_bytes=d["total_bytes"],
                             thread_names={int(t): name for t, name in d["thread_names"]})
        for (name, start, dur, label, tid, frame, iteration, outs, in_use,
             alloc) in d["nodes"]:
            ds.node_stats.append(_node_stats(
                name, start, dur, label, tid, frame, iteration,
                [(s, dt, shape, nb) for s, dt, shape, nb in outs], in_use, alloc))
        out.append(ds)
    return out


def fill_proto(proto, step_stats) -> None:
    """Copies our StepStats into `proto`, a `tensorflow.StepStats` message (what
    TensorBoard reads from a tagged RunMetadata: timings, outputs and memory)."""
    for ds in step_stats.dev_stats:
        dev = proto.dev_stats.add(device=ds.device)
        for tid, name in ds.thread_names.items():
            dev.thread_names[tid & 0xFFFFFFFF] = name
        for n in ds.node_stats:
            out = dev.node_stats.add(
                node_name=n.node_name, all_start_micros=n.all_start_micros,
                op_start_rel_micros=n.op_start_rel_micros,
                op_end_rel_micros=n.op_end_rel_micros,
                all_end_rel_micros=n.all_end_rel_micros, timeline_label=n.timeline_label,
                thread_id=n.thread_id & 0xFFFFFFFF)
            for o in n.output:
                td = o.tensor_description
                po = out.output.add(slot=o.slot)
                po.tensor_description.dtype = td.dtype
                if td.shape.unknown_rank:
                    po.tensor_description.shape.unknown_rank = True
                for d in td.shape.dim:
                    po.tensor_description.shape.dim.add(size=d.size)
                ad = td.allocation_description
                po.tensor_description.allocation_description.requested_bytes = \
                    ad.requested_bytes
                po.tensor_description.allocation_description.allocated_bytes = \
                    ad.allocated_bytes
                po.tensor_description.allocation_description.allocator_name = \
                    ad.allocator_name
            for m in n.memory:
                out.memory.add(allocator_name=m.allocator_name, total_bytes=m.total_bytes,
                               peak_bytes=m.peak_bytes, live_bytes=m.live_bytes,
                               allocator_bytes_in_use=m.allocator_bytes_in_use)
