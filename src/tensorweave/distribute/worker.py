"""The worker service of one task (OSDI 2016 §3.3): it holds the task's devices and their
resources (variables on a PS task live here, shared by every client and session), the
graphs clients register, and runs its partitions of each step.

A client's master (distribute/master.py) registers its graph (a GraphDef, again when
the graph grows) and each step signature: fetches, targets, feeds, and the device the
master's placer chose for every node of the pruned step. Every task then derives the
same partitions from those (pruning, the given placement, the deterministic graph
optimizations and partitioning are pure functions of them, runtime/plan.py and
runtime/partition.py), so Send/Recv pairs agree on their rendezvous keys without the
master shipping per-task graphs; each task lowers and runs only its own devices'
partitions. A step costs one RunGraph call per participating task.

Calls: RunGraph requests travel on one open gRPC stream per pair of tasks (RunGraphs:
a request carries an id its answer repeats; a round trip on an open stream costs about
half a unary call), values on another (PushTensors, unanswered), the rest are unary.

Transfers: a `_Send` whose receiver is on another task pushes its value there at once
(TF's RecvTensor instead waits for the receiver to ask: a request and an answer where
one message will do); the receiving task leaves it in its rendezvous of the step, where
the `_Recv` finds it. A tensor over CHUNK_BYTES is pushed as its header, and the
receiver reads its data as a stream of chunks (ReadChunks). The step's rendezvous of a
task lives from the first touch (RunGraph or a pushed value) until the master reports
the step done (with a later RunGraph, or CleanupSteps) or aborts it (AbortStep).
"""
from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from typing import Dict, List, Optional

import numpy as np

from tensorweave.distribute import wire
from tensorweave.framework import errors
from tensorweave.framework.graph import Graph
from tensorweave.runtime import executor as _ex
from tensorweave.runtime import plan as _plan
from tensorweave.runtime import policy as _policy
from tensorweave.runtime.config import optimizations_enabled
from tensorweave.runtime.devices import Device, DeviceManager
from tensorweave.runtime.rendezvous import LocalRendezvous, Rendezvous

logger = logging.getLogger("tensorflow")

STEP_TTL_S = 600.0  # a step's rendezvous no master reported done is dropped after this
KEEP_VERSIONS = 4  # versions of a client's graph a task keeps
CHUNK_BYTES = 4 << 20  # tensors above this travel as a stream of chunks this big


def task_of(device_name: str) -> str:
    """"/job:ps/replica:0/task:1" of "/job:ps/replica:0/task:1/device:CPU:0"."""
    return device_name.rsplit("/device:", 1)[0]


class RemoteRendezvous(Rendezvous):
    """The rendezvous of one step on one task. A value sent to a device of another task
    is pushed there at once (PushTensors) into that task's rendezvous of the step, so
    every receive waits on its own task's LocalRendezvous and a transfer costs one
    message, not a request and an answer (TF's RecvTensor pulls; a loop spanning tasks
    pays that round trip every iteration)."""

    def __init__(self, local: LocalRendezvous, step_id: int, task: str, channels,
                 push_message):
        self.local, self.step_id, self.task = local, step_id, task
        self.channels, self._push_message = channels, push_message

    def send(self, key: str, value, is_dead: bool = False) -> None:
        dst_task = task_of(key.split(";", 3)[2])
        if dst_task == self.task:
            self.local.send(key, value, is_dead)
            return
        meta, tensors = self._push_message(key, self.step_id, value, is_dead)
        if not self.channels.notify(dst_task, "PushTensors", meta, tensors):
            self.abort(errors.UnavailableError(
                None, None, "Task %s cannot be reached to send %s" % (dst_task, key)))

    def recv_async(self, key: str, done_callback) -> None:
        self.local.recv_async(key, done_callback)

    def abort(self, error) -> None:
        self.local.abort(error)


class _TaskSession:
    """What the kernel binder needs of a session, on a task: per-op state and config."""

    def __init__(self, graph: Graph, config):
        self._graph = graph
        self._config = config
        self._op_state: Dict = {}
        self._session_tensors = None

    @property
    def session_tensors(self):
        if self._session_tensors is None:
            from tensorweave.ops.data_flow.session_ops import SessionTensorStore
            self._session_tensors = SessionTensorStore()
        return self._session_tensors


class _RegisteredGraph:
    def __init__(self, graph: Graph, version: int, devices: "ClusterDevices", binder, opts):
        self.graph, self.version, self.devices = graph, version, devices
        self.binder, self.opts = binder, opts
        self.steps: Dict[str, object] = {}  # step signature id -> _TaskStep


class _TaskStep:
    """This task's part of one step signature: its partitions' plan and how the step's
    feeds and fetches map onto it."""

    def __init__(self, plan, n_feeds: int, local_fetches: tuple, feeds_to_device: tuple):
        self.plan, self.n_feeds, self.local_fetches = plan, n_feeds, local_fetches
        self.feeds_to_device = feeds_to_device  # feeds of ops on this task's GPUs


class ClusterDevices(DeviceManager):
    """Every device of a cluster as one DeviceManager: this task's own devices (when
    `local` is given) and stand-ins for the others (named, typed, with the incarnation
    their task reported; never run here). The placer and the partitioner see the
    cluster through it; `default` is the first device listed."""

    def __init__(self, listed: List[dict], local: Optional[DeviceManager] = None):
        self.stateful_placements: Dict[str, str] = {}
        self.update(listed, local)

    def update(self, listed: List[dict], local: Optional[DeviceManager] = None) -> None:
        """Lists the devices of `listed` (e.g. again, with the incarnations of restarted
        tasks), in place: holders of this object see the change."""
        own = {d.name: d for d in local.devices} if local is not None else {}
        self.devices = []
        for entry in listed:
            d = own.get(entry["name"])
            if d is None:
                spec_task = task_of(entry["name"])
                d = Device(entry["type"], int(entry["name"].rsplit(":", 1)[1]), spec_task)
                d.incarnation = int(entry["incarnation"])
            self.devices.append(d)
        self.by_name = {d.name: d for d in self.devices}
        self.default = self.devices[0]


class WorkerService:
    """The handlers of one task's worker service (server.py serves them over gRPC)."""

    def __init__(self, task: str, cluster_spec, config, channels):
        self.task = task
        self.cluster_spec = cluster_spec
        self.config = config
        self.channels = channels
        self.devices = DeviceManager.from_config(config, task)
        self.policy = _policy.ExecutionPolicy.from_config(config)
        self.env = _ex.RunEnv(int(config.operation_timeout_in_ms) if config else 0)
        self._graphs: Dict[tuple, _RegisteredGraph] = {}  # (handle, version) ->
        self._steps: Dict[int, tuple] = {}  # step id -> (LocalRendezvous, created)
        self._outgoing: Dict[str, tuple] = {}  # token -> (large tensor, since) to stream
        self._step_threads = concurrent.futures.ThreadPoolExecutor(
            max_workers=32, thread_name_prefix="tw-step")
        self._lock = threading.Lock()

    # --- status -------------------------------------------------------------------------
    def get_status(self, meta: dict, tensors) -> bytes:
        return wire.pack({"task": self.task, "cluster": self.cluster_spec.as_dict(),
                          "devices": [{"name": d.name, "type": d.device_type,
                                       "incarnation": d.incarnation,
                                       "memory_limit": d.memory_limit_bytes}
                                      for d in self.devices.devices]})

    # --- graphs -------------------------------------------------------------------------
    def register_graph(self, meta: dict, tensors) -> bytes:
        """Imports a client's GraphDef under its handle (replacing an older version)."""
        from tensorweave.framework import serialize
        handle, version = meta["handle"], int(meta["version"])
        graph = Graph()
        with graph.as_default():
            serialize.import_graph_def(bytes(tensors[0]), name="")
        cluster = ClusterDevices(meta["devices"], self.devices)
        # the client's choice of lossy transfers holds for every task of its steps
        from tensorweave.runtime.config import ConfigProto
        session = _TaskSession(graph, ConfigProto(experimental={
            "transfer_compression": meta.get("transfer_compression", "")}))
        binder = _plan.KernelBinder(session, cluster)
        opts = optimizations_enabled(self.config) if meta.get("optimize", True) else {}
        with self._lock:
            self._graphs[(handle, version)] = _RegisteredGraph(graph, version, cluster,
                                                               binder, opts)
            # plans of older versions stay valid (ops were only added): keep a few
            old = sorted(v for h, v in self._graphs if h == handle)[:-KEEP_VERSIONS]
            for v in old:
                del self._graphs[(handle, v)]
        return wire.pack({"ok": True})

    def register_step(self, meta: dict, tensors) -> bytes:
        """Builds this task's partitions of a step signature."""
        reg = self._graph(meta["handle"], meta["version"])
        g = reg.graph
        fetches = [g.as_graph_element(n, allow_tensor=True, allow_operation=False)
                   for n in meta["fetches"]]
        targets = [g.get_operation_by_name(n) for n in meta["targets"]]
        feeds = [g.as_graph_element(n, allow_tensor=True, allow_operation=False)
                 for n in meta["feeds"]]
        sg = _plan.prune(fetches, targets, feeds)
        assignment = meta["assignment"]
        for n in sg.nodes:
            try:
                n.device = reg.devices.by_name[assignment[n.name]]
            except KeyError:
                raise errors.InternalError(None, n.op, "The master placed no device for %s"
                                           % n.name) from None
        sg = _plan.optimize(sg, reg.binder, reg.opts)
        from tensorweave.runtime import partitioned_plan as _pp
        mine = {id(d) for d in self.devices.devices}
        plan = _pp.build_partitioned_plan(sg, reg.binder, self.policy,
                                          local=lambda d: id(d) in mine)
        if plan.needs_pool and self.env.pool is None:
            self.env.pool = _ex.ThreadPool(self.policy.inter_op_threads)
        with self._lock:
            reg.steps[meta["step"]] = _TaskStep(plan, len(feeds), plan.local_fetches,
                                                _plan.feeds_to_device(sg))
        return wire.pack({"fetches": list(plan.local_fetches)})

    def _graph(self, handle: str, version) -> _RegisteredGraph:
        reg = self._graphs.get((handle, int(version)))
        if reg is None:
            raise errors.AbortedError(None, None, "Graph %s (version %s) is not registered "
                                      "on task %s (it may have restarted)"
                                      % (handle, version, self.task))
        return reg

    # --- steps --------------------------------------------------------------------------
    def _step_rendezvous(self, step_id: int) -> LocalRendezvous:
        with self._lock:
            entry = self._steps.get(step_id)
            if entry is None:
                entry = self._steps[step_id] = (LocalRendezvous(), time.monotonic())
            return entry[0]

    def _drop_steps(self, step_ids) -> None:
        now = time.monotonic()
        with self._lock:
            for s in step_ids:
                self._steps.pop(int(s), None)
            stale = [s for s, (_, t) in self._steps.items() if now - t > STEP_TTL_S]
            for s in stale:
                del self._steps[s]

    def run_graph(self, meta: dict, tensors) -> bytes:
        """Runs this task's partitions of one step; returns its local fetches."""
        self._drop_steps(meta.get("done_steps", ()))
        reg = self._graph(meta["handle"], meta["version"])
        step = reg.steps.get(meta["step"])
        if step is None:
            raise errors.AbortedError(None, None, "Step %s is not registered on task %s"
                                      % (meta["step"], self.task))
        feeds: list = [None] * step.n_feeds
        for i, buf in zip(meta["feed_indices"], tensors):
            feeds[i] = wire.decode_tensor(buf)[0]
        for i, copy in step.feeds_to_device:
            if feeds[i] is not None:
                feeds[i] = copy(feeds[i])
        step_id = int(meta["step_id"])
        timeout_ms = int(meta.get("timeout_ms") or 0)
        rendezvous = RemoteRendezvous(self._step_rendezvous(step_id), step_id, self.task,
                                      self.channels, self._push_message)
        options = None
        if timeout_ms:
            from tensorweave.runtime.config import RunOptions
            options = RunOptions(timeout_in_ms=timeout_ms)
        trace = None
        if meta.get("trace"):  # the master's run is traced: return this task's stats
            trace = _ex.StepTrace()
            for d in self.devices.devices:
                d.allocator.reset_peak()
        with np.errstate(all="ignore"):
            out = step.plan.run(feeds, self.env, options, trace, rendezvous)
        head = {"id": meta["id"]} if "id" in meta else {}
        answer = dict(head, fetches=list(step.local_fetches))
        parts = [wire.tensor_parts(v) for v in out]
        if trace is not None:
            from tensorweave.runtime import step_stats
            answer["step_stats"] = step_stats.to_wire(step_stats.device_step_stats(trace))
        if meta.get("partition_graphs"):  # serialized GraphDefs after the fetches
            graphs = [g.SerializeToString() for g in step.plan.partition_graphs()]
            answer["n_graphs"] = len(graphs)
            parts.extend(graphs)
        return wire.pack(answer, parts)

    def run_graphs(self, meta: dict, tensors, reply) -> None:
        """RunGraph on a stream of requests: each step runs on the task's step threads
        and is answered (`reply`) when it ends."""
        def run():
            try:
                answer = self.run_graph(meta, tensors)
            except Exception as e:  # noqa: BLE001 -- answered in the stream
                answer = wire.pack(dict(wire.error_meta(e), id=meta.get("id")))
            reply(answer)
        self._step_threads.submit(run)

    def push_tensors(self, meta: dict, tensors, reply) -> None:
        """A value another task sent to a device of this one (PushTensors, unanswered):
        it goes into this task's rendezvous of the step, which the first touch makes
        (the value may come before the step's RunGraph). A large one was announced
        with its header: its chunks are read off the stream's thread (ReadChunks)."""
        rdv = self._step_rendezvous(int(meta["step_id"]))
        if "chunked" in meta:
            self.channels._calls().submit(self._receive_chunked, rdv, meta)
            return
        value, dead = wire.decode_tensor(tensors[0])
        rdv.send(meta["key"], value, dead)

    def _receive_chunked(self, rdv: LocalRendezvous, meta: dict) -> None:
        src_task = task_of(meta["key"].split(";", 1)[0])
        out = np.empty(meta["shape"], dtype=np.dtype(meta["dtype"]))
        flat = memoryview(out.reshape(-1).view(np.uint8))
        pos = 0
        try:
            for chunk in self.channels.stream(src_task, "ReadChunks",
                                              wire.pack({"token": meta["chunked"]})):
                flat[pos:pos + len(chunk)] = chunk
                pos += len(chunk)
            if pos != len(flat):
                raise errors.DataLossError(None, None, "Tensor %s from task %s ended after "
                                           "%d of %d bytes" % (meta["chunked"], src_task,
                                                                pos, len(flat)))
        except errors.OpError as e:
            rdv.abort(e)
            return
        rdv.send(meta["key"], out, False)

    def _push_message(self, key: str, step_id: int, value, is_dead: bool):
        """(meta, tensors) that push `value` under `key`: the tensor, or for a large one
        its header, its data kept here to be streamed in chunks (ReadChunks)."""
        meta = {"step_id": step_id, "key": key}
        if not is_dead and isinstance(value, np.ndarray) and value.dtype.kind not in "OSU" \
                and value.nbytes > CHUNK_BYTES:
            token = "%s/%d" % (key, step_id)
            with self._lock:
                self._outgoing[token] = (np.ascontiguousarray(value), time.monotonic())
            meta.update(chunked=token, dtype=value.dtype.str, shape=list(value.shape))
            return meta, None
        return meta, [wire.tensor_parts(value, is_dead)]

    def read_chunks(self, meta: dict, tensors):
        """The data of a large tensor RecvTensor announced, in chunks of CHUNK_BYTES."""
        with self._lock:
            entry = self._outgoing.pop(meta["token"], None)
            stale = [k for k, (_, t) in self._outgoing.items()
                     if time.monotonic() - t > STEP_TTL_S]
            for k in stale:
                del self._outgoing[k]
        if entry is None:
            raise errors.AbortedError(None, None, "No tensor %s waits on task %s"
                                      % (meta["token"], self.task))
        data = memoryview(entry[0].reshape(-1).view(np.uint8))
        for start in range(0, len(data), CHUNK_BYTES):
            yield bytes(data[start:start + CHUNK_BYTES])

    def abort_step(self, meta: dict, tensors) -> bytes:
        """Aborts a step on this task: its pending receives fail with the error."""
        step_id = int(meta["step_id"])
        cls = getattr(errors, meta.get("class", ""), None)
        if not (isinstance(cls, type) and issubclass(cls, errors.OpError)):
            cls = errors.AbortedError
        error = cls(None, None, meta.get("message", "Step aborted"))
        # every receive of the step here waits on this rendezvous, those of values
        # from other tasks too (a lost peer never pushes them)
        self._step_rendezvous(step_id).abort(error)
        return wire.pack({"ok": True})

    def cleanup_steps(self, meta: dict, tensors) -> bytes:
        self._drop_steps(meta.get("step_ids", ()))
        return wire.pack({"ok": True})

    def close_graph(self, meta: dict, tensors) -> bytes:
        with self._lock:
            for key in [k for k in self._graphs if k[0] == meta["handle"]]:
                del self._graphs[key]
        return wire.pack({"ok": True})

    def reset(self, meta: dict, tensors) -> bytes:
        """Clears the resource containers named (all, when none are) on every device."""
        containers = meta.get("containers") or None
        for d in self.devices.devices:
            d.resources.clear(containers)
        return wire.pack({"ok": True})

    STREAM_HANDLERS = {"ReadChunks": read_chunks}
    BIDI_HANDLERS = {"PushTensors": push_tensors, "RunGraphs": run_graphs}
    HANDLERS = {"GetStatus": get_status, "RegisterGraph": register_graph,
                "RegisterStep": register_step, "AbortStep": abort_step,
                "CleanupSteps": cleanup_steps, "CloseGraph": close_graph, "Reset": reset}
