"""The master of a session on a cluster (`Session("grpc://host:port")`, OSDI 2016 §3.3).

It runs in the client's process. On creation it asks the target task for the cluster
and every task for its devices (waiting for tasks that are not up yet, within the
session's operation timeout or 60 s). For each step signature it prunes the step and
places it over the devices of the whole cluster (runtime/placer.py: job/task/device
constraints, colocation, TF1's default rule, where unconstrained ops go to the target
task), registers the graph with each participating task (again when the graph has
grown) and the signature with the placement; the tasks derive the same partitions
(distribute/worker.py). A step is then one RunGraph call per participating task,
carrying that task's feeds and returning its fetches (and, for a traced run, the task's
step stats, which the session merges into RunMetadata: runtime/step_stats.py); the first
failure aborts the step on every other task (AbortStep), so a step never hangs on a
lost peer.
"""
from __future__ import annotations

import os
import queue
import re
import threading
import time
import uuid
from typing import Dict, List, Optional

from tensorweave.distribute import wire
from tensorweave.distribute.cluster import ClusterSpec
from tensorweave.distribute.server import Channels, parse_task
from tensorweave.distribute.worker import ClusterDevices, task_of
from tensorweave.framework import errors
from tensorweave.runtime import placer as _placer
from tensorweave.runtime import plan as _plan

CONNECT_TIMEOUT_S = 60.0
# a step that has not ended after this long checks that its tasks answer, as often
HEALTH_CHECK_S = 5.0


def _address_of(target: str) -> str:
    if not target.startswith("grpc://"):
        raise errors.InvalidArgumentError(None, None, "Not a gRPC target: %r" % target)
    return target[len("grpc://"):]


def _status(channels: Channels, task: str, deadline: float) -> dict:
    """GetStatus of `task`, waiting for it to come up until `deadline`."""
    import grpc
    while True:
        left = deadline - time.monotonic()
        try:
            fut = channels._stub(task, "GetStatus").future(
                wire.pack({}), timeout=max(0.1, min(left, 5.0)), wait_for_ready=True,
                metadata=channels._metadata)
            meta, _ = wire.unpack(fut.result())
            wire.raise_error(meta, task)
            return meta
        except grpc.RpcError as e:
            if e.code() in (grpc.StatusCode.UNAUTHENTICATED,
                            grpc.StatusCode.PERMISSION_DENIED):
                from tensorweave.distribute.server import rpc_error
                raise rpc_error(task, e) from None
            if time.monotonic() >= deadline:
                raise errors.UnavailableError(
                    None, None, "Task %s did not answer within the session's connect "
                    "timeout: %s" % (task, e.details() if hasattr(e, "details") else e)) \
                    from None


class Master:
    """The master of one client session on the cluster of `target`."""

    def __init__(self, target: str, config=None):
        self.config = config
        timeout_ms = int(config.operation_timeout_in_ms) if config else 0
        deadline = time.monotonic() + (timeout_ms / 1000.0 if timeout_ms
                                       else CONNECT_TIMEOUT_S)
        address = _address_of(target)
        boot = Channels(ClusterSpec({"target": [address]}))
        try:
            status = _status(boot, "/job:target/replica:0/task:0", deadline)
        finally:
            boot.close()
        self.cluster = ClusterSpec(status["cluster"])
        self.target_task = status["task"]
        self.channels = Channels(self.cluster)
        tasks = [self.target_task] + sorted(
            (t for t in self._all_tasks() if t != self.target_task), key=parse_task)
        tasks = [t for t in tasks if t == self.target_task or self._wanted(t)]
        listed: List[dict] = []
        for t in tasks:
            listed.extend(_status(self.channels, t, deadline)["devices"])
        self.tasks = tasks
        self.device_list = listed
        self.devices = ClusterDevices(listed)
        self.epoch = 0  # bumped when a task came back as a new incarnation
        experimental = getattr(config, "experimental", None)
        self._compression = str(getattr(experimental, "transfer_compression", "") or "")
        self._refreshing: Optional[threading.Thread] = None
        self.handle = uuid.uuid4().hex
        self._graph_version = None   # (graph._version, graph._mutations) registered
        self._version = 0            # the number the tasks know that graph by
        self._registered: Dict[str, int] = {}  # task -> version registered there
        self._done: Dict[str, List[int]] = {}  # task -> finished step ids to report
        self._lock = threading.Lock()
        self._closed = False

    def refresh(self, timeout_s: float = 2.0) -> bool:
        """Re-reads every task's devices; when one came back as a new incarnation (a
        restarted task), forgets every registration, so that plans register again with
        the new incarnations (RemotePlan.run rebuilds itself). False when a task does not
        answer within `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        try:
            listed = [d for t in self.tasks
                      for d in _status(self.channels, t, deadline)["devices"]]
        except (errors.OpError, ValueError):  # ValueError: the session closed meanwhile
            return False
        if listed != self.device_list:
            with self._lock:
                self.device_list = listed
                self.devices.update(listed)  # the session lists these devices too
                self._graph_version = None
                self._registered.clear()
                self.epoch += 1
        return True

    def refresh_async(self) -> None:
        """`refresh` on a thread (a failed step raises at once); the next step waits
        for it."""
        with self._lock:
            if self._refreshing is None:
                self._refreshing = threading.Thread(target=self._refresh_once,
                                                    name="tw-master-refresh", daemon=True)
                self._refreshing.start()

    def _refresh_once(self) -> None:
        try:
            self.refresh()
        finally:
            with self._lock:
                self._refreshing = None

    def wait_refresh(self) -> None:
        t = self._refreshing
        if t is not None:
            t.join()

    def _all_tasks(self) -> List[str]:
        return ["/job:%s/replica:0/task:%d" % (job, i) for job in self.cluster.jobs
                for i in self.cluster.task_indices(job)]

    def _wanted(self, task: str) -> bool:
        filters = list(getattr(self.config, "device_filters", None) or []) \
            if self.config is not None else []
        if not filters:
            return True
        from tensorweave.framework.device_spec import DeviceSpec
        job, index = parse_task(task)
        for f in filters:
            spec = DeviceSpec.from_string(f)
            if spec.job in (None, job) and spec.task in (None, index):
                return True
        return False

    # --- plans --------------------------------------------------------------------------
    def build_plan(self, graph, fetches, targets, feeds, allow_soft_placement: bool):
        """The RemotePlan of one step signature."""
        sg = _plan.prune(fetches, targets, feeds)
        _placer.place(sg, self.devices, allow_soft_placement,
                      *_placer.placement_options(self.config))
        assignment = {n.name: n.device.name for n in sg.nodes}
        tasks = sorted({task_of(d) for d in assignment.values()}, key=parse_task)
        version = self._register(graph, tasks)
        sig = uuid.uuid4().hex
        fetch_task: Dict[int, tuple] = {}
        meta = {"handle": self.handle, "version": version, "step": sig,
                "fetches": [t.name for t in fetches], "targets": [o.name for o in targets],
                "feeds": [t.name for t in feeds], "assignment": assignment}
        for t in tasks:
            out, _ = self.channels.call(t, "RegisterStep", meta)
            for j, g in enumerate(out["fetches"]):
                fetch_task[g] = (t, j)
        feed_task: Dict[str, List[int]] = {t: [] for t in tasks}
        for n in sg.nodes:
            if n.type == "_Feed":
                feed_task[task_of(n.device.name)].append(n.feed_index)
        plan = RemotePlan(self, sig, version, tasks, feed_task,
                          [fetch_task[i] for i in range(len(fetches))])
        plan.n_nodes_before_opt = len(sg.nodes)
        plan.signature = (graph, fetches, targets, feeds, allow_soft_placement)
        plan.epoch = self.epoch
        return plan

    def _register(self, graph, tasks: List[str]) -> int:
        """The version number of `graph` on the tasks, registering it where needed."""
        from tensorweave.framework import graph_def_proto
        with self._lock:
            key = (graph._version, graph._mutations)
            if key != self._graph_version:
                self._graph_version = key
                self._version += 1
                # tensorweave workers run it: the private ops keep their fused kernels
                self._graph_bytes = graph_def_proto.graph_to_proto(
                    graph, lower=False).SerializeToString()
            version = self._version
            todo = [t for t in tasks if self._registered.get(t) != version]
            data = self._graph_bytes
        for t in todo:
            self.channels.call(t, "RegisterGraph", {
                "handle": self.handle, "version": version, "devices": self.device_list,
                "optimize": True, "transfer_compression": self._compression}, [data])
            with self._lock:
                self._registered[t] = version
        return version

    def take_done(self, task: str) -> List[int]:
        with self._lock:
            return self._done.pop(task, [])

    def add_done(self, tasks, step_id: int) -> None:
        with self._lock:
            for t in tasks:
                self._done.setdefault(t, []).append(step_id)

    def close(self) -> None:
        """Forgets this session's graph on every task it registered it with."""
        if self._closed:
            return
        self._closed = True
        self.wait_refresh()
        for t in list(self._registered):
            try:
                self.channels.call(t, "CloseGraph", {"handle": self.handle}, timeout=5.0)
                done = self.take_done(t)
                if done:
                    self.channels.call(t, "CleanupSteps", {"step_ids": done}, timeout=5.0)
            except errors.OpError:
                pass  # a lost task holds nothing for us any more
        self.channels.close()

    @staticmethod
    def reset(target: str, containers=None, config=None) -> None:
        """Clears resource containers on every task of the cluster of `target`."""
        master = Master(target, config)
        try:
            for t in master._all_tasks():
                master.channels.call(t, "Reset", {"containers": list(containers or [])},
                                     timeout=10.0)
        finally:
            master.close()


class RemotePlan(_plan.Plan):
    """One step signature on a cluster: the tasks that run it, which feeds go to which
    task, and which task returns each fetch."""

    executor = "remote"

    def __init__(self, master: Master, sig: str, version: int, tasks: List[str],
                 feed_task: Dict[str, List[int]], fetch_task: List[tuple]):
        _plan.Plan.__init__(self)
        self.master, self.sig, self.version = master, sig, version
        self.tasks = tasks
        self.feed_task = feed_task
        self.fetch_task = fetch_task
        self.signature: tuple = ()  # what Master.build_plan made it of
        self.epoch = 0
        # the tasks' partition graphs (the same for every run of this plan), fetched
        # with the first run that asks for them (RunOptions.output_partition_graphs)
        self._graphs: list = []

    def run(self, feed_values, env, options=None, trace=None) -> list:
        m = self.master
        m.wait_refresh()
        if self.epoch != m.epoch:  # a task restarted since: register this step again
            fresh = m.build_plan(*self.signature)
            self.sig, self.version, self.tasks = fresh.sig, fresh.version, fresh.tasks
            self.feed_task, self.fetch_task, self.epoch = (fresh.feed_task,
                                                           fresh.fetch_task, fresh.epoch)
            self._graphs = []
        step_id = int.from_bytes(os.urandom(8), "little") >> 1
        timeout_ms = (options.timeout_in_ms if options is not None else 0) or \
            (int(m.config.operation_timeout_in_ms) if m.config else 0)
        # the tasks end a step at its deadline themselves (naming the op); a second
        # later the master stops waiting whatever they do
        deadline = time.monotonic() + timeout_ms / 1000.0 + 1.0 if timeout_ms else None
        done: "queue.SimpleQueue" = queue.SimpleQueue()
        want_graphs = (options is not None and options.output_partition_graphs
                       and not self._graphs)
        graphs: Dict[str, list] = {}
        for t in self.tasks:
            idx = self.feed_task[t]
            meta = {"handle": m.handle, "version": self.version, "step": self.sig,
                    "step_id": step_id, "feed_indices": idx, "timeout_ms": timeout_ms,
                    "done_steps": m.take_done(t)}
            if trace is not None:  # each task returns its step stats (with its times)
                meta["trace"] = True
            if want_graphs:
                meta["partition_graphs"] = True
            m.channels.request(t, "RunGraphs", meta,
                               lambda meta, tensors, error, t=t: done.put(
                                   (t, meta, tensors, error)),
                               [wire.tensor_parts(feed_values[i]) for i in idx])
        outputs: Dict[str, list] = {}
        failures = []
        waiting = set(self.tasks)
        while waiting:
            wait = HEALTH_CHECK_S if deadline is None else \
                max(0.0, min(HEALTH_CHECK_S, deadline - time.monotonic()))
            try:
                t, meta, tensors, error = done.get(timeout=wait)
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    e = errors.DeadlineExceededError(
                        None, None, "Timed out waiting for tasks %s to finish the step"
                        % ", ".join(sorted(waiting)))
                    if not failures:
                        self._abort(step_id, e)
                    failures.append(e)
                    break
                # a task may be alive but frozen (its connections open, nothing
                # answered): the tasks still running must answer a health check
                lost = self._unhealthy(waiting)
                if lost is None:
                    continue
                e = errors.UnavailableError(None, None, "Task %s did not answer a health "
                                            "check within %g s during the step"
                                            % (lost, HEALTH_CHECK_S))
                if not failures:
                    self._abort(step_id, e)
                failures.append(e)
                waiting.discard(lost)  # its RunGraph is abandoned
                continue
            waiting.discard(t)
            try:
                if error is not None:
                    raise error
                wire.raise_error(meta, t)
                n_graphs = meta.get("n_graphs", 0)
                n_out = len(tensors) - n_graphs
                outputs[t] = [wire.decode_tensor(b)[0] for b in tensors[:n_out]]
                if n_graphs:
                    graphs[t] = [bytes(b) for b in tensors[n_out:]]
                if trace is not None:
                    trace.remote.extend(meta.get("step_stats", ()))
            except errors.OpError as e:
                if not failures:
                    self._abort(step_id, e)
                failures.append(e)
        m.add_done(self.tasks, step_id)
        if failures:
            if any(isinstance(e, (errors.AbortedError, errors.UnavailableError))
                   for e in failures):
                m.refresh_async()  # a task may have restarted: the next step re-registers
            raise _with_client_lines(_first_cause(failures), self.signature[0])
        if want_graphs:
            from tensorboard.compat.proto import graph_pb2
            self._graphs = [graph_pb2.GraphDef.FromString(b)
                            for t in self.tasks for b in graphs.get(t, ())]
        return [outputs[t][j] for t, j in self.fetch_task]

    def partition_graphs(self) -> list:
        """The partition graphs of the step's tasks, in order of the tasks (filled by
        the first run with RunOptions.output_partition_graphs)."""
        return list(self._graphs)

    def _unhealthy(self, tasks) -> Optional[str]:
        """The first of `tasks` that does not answer GetStatus within HEALTH_CHECK_S."""
        calls = {t: self.master.channels.call_async(t, "GetStatus", wire.pack({}),
                                                    HEALTH_CHECK_S) for t in tasks}
        for t, call in calls.items():
            try:
                self.master.channels.result(t, call)
            except errors.OpError:
                return t
        return None

    def _abort(self, step_id: int, error: errors.OpError) -> None:
        """Tells every task that the step failed, so that none waits for a value from
        the failed one."""
        for t in self.tasks:  # the failed one too: it may hold receives of the step
            try:
                self.master.channels.send_async(t, "AbortStep", wire.pack(
                    {"step_id": step_id, "class": "AbortedError",
                     "message": "Step aborted: %s" % error.message}), 5.0)
            except Exception:  # noqa: BLE001 -- best effort: the task may be gone
                pass


def _first_cause(failures: List[errors.OpError]) -> errors.OpError:
    """The failure that caused the others (not an abort or cancellation it caused)."""
    for e in failures:
        if not isinstance(e, (errors.AbortedError, errors.CancelledError)):
            return e
    return failures[0]


_NODE_LINE = re.compile(r"\[\[node (\S+) \(defined at [^)]*\) \]\]")


def _with_client_lines(error: errors.OpError, graph) -> errors.OpError:
    """`error` from a task naming the lines that created its ops in the client's graph
    (a task only has the GraphDef, whose ops it created itself) and carrying the first
    such op, as TF1's client interpolates its own tracebacks into remote errors."""
    first = []

    def line(match):
        op = graph._ops_by_name.get(match.group(1))
        if op is None:
            return match.group(0)
        first.append(op)
        return "[[node %s (defined at %s) ]]" % (op.name, errors.op_location(op))
    message = _NODE_LINE.sub(line, error.message)
    if not first:
        return error
    return type(error)(None, first[0], message)
