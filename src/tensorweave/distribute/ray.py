"""A TF1 cluster as Ray actors: one actor per task, each serving a `tf.train.Server`.

    import ray
    import tensorweave as tf
    from tensorweave.distribute.ray import RayCluster

    ray.init()
    with RayCluster(num_ps=1, num_workers=2) as cluster:
        with tf.Session(cluster.target("worker", 0)) as sess:
            ...                                 # variables on /job:ps/task:0 etc.
        # between-graph replication: `train` runs inside each worker actor, with
        # TF_CONFIG naming the cluster and that worker (rpc_layer "grpc"), so
        # TFConfigClusterResolver().master() is the target of its own server
        results = cluster.run_on_workers(train, num_steps)

Install Ray with the `ray` extra (`pip install tensorweave[ray]`); it is imported only
when a RayCluster is made.

How a cluster starts. The tasks are gang-scheduled as one Ray placement group (one
bundle of `num_cpus_per_task` CPUs per task, bundles placed by `strategy`). Once the
group is placed, one small Ray task per node picks free TCP ports on that node's IP
(`host` overrides the IP, e.g. "127.0.0.1" on a one-machine Ray), which fixes every
task's address and so the ClusterSpec. Then each task's actor is created in its bundle
with the cluster, its job and index, and the config as constructor arguments; the
constructor starts the task's `tf.train.Server` on its address. `RayCluster` returns
once every server serves.

What a restarted task does. An actor that dies (its process crashes or is killed) is
restarted by Ray up to `max_restarts` times. Ray re-runs the constructor with the same
arguments in the same bundle, so the restarted task serves again on the SAME address,
and clients (new Sessions, other tasks' channels) reach it without any change to the
cluster spec. Its state is not restored: the variables and queues it held are gone
(a client must re-initialize or restore them, as after a task restart in TF1), and
steps that were running through it fail with UnavailableError or AbortedError. A
restart fails (the actor then stays dead) if another program has taken the port
meanwhile, or if Ray had to move the bundle to another node (the node died) while
`host` pins the old address.

Data sent to the actors is plain (JSON-able dicts and strings; the config travels as a
dict of its fields). `run_on_workers` sends the user's function and its arguments and
results through Ray's own serialization, as any Ray program does.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["RayCluster"]

# Seconds the constructor waits for the placement group and for the servers.
_START_TIMEOUT_S = 120.0


def _config_fields(message) -> Dict[str, Any]:
    """A config message (ConfigProto and its nested messages) as a dict of the fields
    that differ from their defaults; `type(message)(**fields)` rebuilds it."""
    out: Dict[str, Any] = {}
    for name, default in type(message)._fields.items():
        value = getattr(message, name)
        if hasattr(type(value), "_fields"):
            nested = _config_fields(value)
            if nested:
                out[name] = nested
        elif value != default:
            out[name] = value
    return out


def _config_json(config) -> Optional[str]:
    if config is None:
        return None
    if not hasattr(type(config), "_fields"):
        raise TypeError("config must be a tf.ConfigProto, got %r" % (config,))
    try:
        return json.dumps(_config_fields(config))
    except TypeError as e:
        raise TypeError("config has a field RayCluster cannot send to the tasks: %s"
                        % e) from None


def _pick_addresses(host: Optional[str], count: int) -> Tuple[str, List[int]]:
    """(host, `count` distinct free ports on it), run on the node of a bundle: `host`
    defaults to the IP Ray reports for the node. The sockets are held until all are
    picked, so the ports differ."""
    import ray
    from tensorweave.distribute.launch import free_ports
    host = host or ray.util.get_node_ip_address()
    return host, free_ports(count, host)


class _TaskActor:
    """The body of one task's Ray actor: serves the task's `tf.train.Server` from its
    constructor (so a restart by Ray serves the same address again).

    Args:
      cluster: the cluster as `tf.train.ClusterSpec.as_dict()` gives it.
      job: this task's job.
      index: this task's index in the job.
      config_json: the task's ConfigProto fields as JSON (None: the default config).
    """

    def __init__(self, cluster: Dict[str, Any], job: str, index: int,
                 config_json: Optional[str]):
        import tensorweave as tf
        config = None if config_json is None else tf.ConfigProto(**json.loads(config_json))
        self._tf_config = json.dumps({"cluster": cluster,
                                      "task": {"type": job, "index": index},
                                      "rpc_layer": "grpc"})
        self._server = tf.train.Server(cluster, job_name=job, task_index=index,
                                       config=config)

    def target(self) -> str:
        """The server's target, "grpc://host:port"."""
        return self._server.target

    def pid(self) -> int:
        """The actor's process id (a restart gives a new one)."""
        return os.getpid()

    def run(self, fn: Callable[..., Any], args: Tuple[Any, ...],
            kwargs: Dict[str, Any]) -> Any:
        """`fn(*args, **kwargs)` with TF_CONFIG naming the cluster and this task (set
        for the call, restored after)."""
        previous = os.environ.get("TF_CONFIG")
        os.environ["TF_CONFIG"] = self._tf_config
        try:
            return fn(*args, **kwargs)
        finally:
            if previous is None:
                os.environ.pop("TF_CONFIG", None)
            else:
                os.environ["TF_CONFIG"] = previous


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("%s must be a non-negative integer, got %r" % (name, value))


class RayCluster:
    """A cluster of "ps" and "worker" tasks, each a Ray actor serving a
    `tf.train.Server`; see the module doc for how it starts and restarts.

    Ray must be installed; it is initialized with `ray.init()`'s defaults if it is not
    yet.

    Args:
      num_ps: the number of "ps" tasks.
      num_workers: the number of "worker" tasks (worker:0 is the chief).
      config: a `tf.ConfigProto` for every task's server (device_count, ...).
      max_restarts: how many times Ray restarts a task's actor that died (-1: without
        limit, 0: never).
      num_cpus_per_task: the CPUs each task reserves from Ray (a fraction is allowed;
        must be > 0, as Ray's placement groups require).
      strategy: how Ray places the tasks on nodes: "PACK", "SPREAD", "STRICT_PACK" or
        "STRICT_SPREAD" (Ray's placement group strategies).
      host: the IP every task binds and is known by (None: its node's IP as Ray
        reports it). Only for a Ray on one machine, e.g. "127.0.0.1".
      start_timeout: seconds to wait for Ray to place the tasks and for their servers.

    Raises:
      ValueError: a negative count, no task at all, or a bad `num_cpus_per_task`.
      TypeError: `config` is not a ConfigProto.
      TimeoutError: Ray could not place the tasks within `start_timeout` (not enough
        CPUs, for one); nothing is left running.
      ray.exceptions.RayActorError: a task's server could not start (its port was
        taken between being picked and bound); nothing is left running.
      ImportError: Ray is not installed.
    """

    def __init__(self, num_ps: int, num_workers: int, config=None, max_restarts: int = 1,
                 num_cpus_per_task: float = 1.0, strategy: str = "PACK",
                 host: Optional[str] = None, start_timeout: float = _START_TIMEOUT_S):
        _check_count("num_ps", num_ps)
        _check_count("num_workers", num_workers)
        if num_ps + num_workers == 0:
            raise ValueError("a cluster needs at least one task")
        if not num_cpus_per_task > 0:
            raise ValueError("num_cpus_per_task must be > 0, got %r" % (num_cpus_per_task,))
        config_json = _config_json(config)
        try:
            import ray
        except ImportError:
            raise ImportError("RayCluster needs Ray: pip install 'tensorweave[ray]'") \
                from None
        from ray.util.placement_group import (placement_group, placement_group_table,
                                              remove_placement_group)
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
        from tensorweave.distribute.cluster import ClusterSpec

        if not ray.is_initialized():
            ray.init()
        self._ray = ray
        self._tasks: List[Tuple[str, int]] = (
            [("worker", i) for i in range(num_workers)] + [("ps", i) for i in range(num_ps)])
        self._actors: Dict[Tuple[str, int], Any] = {}
        self._cluster_spec = ClusterSpec({})
        self._remove_pg = remove_placement_group
        self._pg = placement_group([{"CPU": float(num_cpus_per_task)}] * len(self._tasks),
                                   strategy=strategy)
        try:
            ready, _ = ray.wait([self._pg.ready()], timeout=start_timeout)
            if not ready:
                raise TimeoutError(
                    "Ray could not place %d tasks of %g CPUs each (%s) within %g s"
                    % (len(self._tasks), num_cpus_per_task, strategy, start_timeout))

            def in_bundle(i: int) -> PlacementGroupSchedulingStrategy:
                return PlacementGroupSchedulingStrategy(
                    self._pg, placement_group_bundle_index=i)

            # One port-picking task per node, in the first bundle placed on it.
            bundles_of_node: Dict[str, List[int]] = {}
            for i, node in sorted(placement_group_table(self._pg)["bundles_to_node_id"]
                                  .items()):
                bundles_of_node.setdefault(node, []).append(i)
            pick = ray.remote(_pick_addresses)
            picks = {node: pick.options(num_cpus=0, scheduling_strategy=in_bundle(b[0]))
                     .remote(host, len(b)) for node, b in bundles_of_node.items()}
            addresses: Dict[int, str] = {}
            for node, bundles in bundles_of_node.items():
                node_host, ports = ray.get(picks[node], timeout=start_timeout)
                for i, port in zip(bundles, ports):
                    addresses[i] = "%s:%d" % (node_host, port)
            spec: Dict[str, List[str]] = {}
            for i, (job, _) in enumerate(self._tasks):
                spec.setdefault(job, []).append(addresses[i])
            self._cluster_spec = ClusterSpec(spec)

            actor_class = ray.remote(_TaskActor)
            for i, (job, index) in enumerate(self._tasks):
                self._actors[(job, index)] = actor_class.options(
                    num_cpus=0, max_restarts=max_restarts, max_task_retries=0,
                    scheduling_strategy=in_bundle(i)).remote(spec, job, index, config_json)
            targets = ray.get([a.target.remote() for a in self._actors.values()],
                              timeout=start_timeout)
            for (job, index), target in zip(self._actors, targets):
                if target != self.target(job, index):
                    raise RuntimeError("task %s:%d serves %s, not %s"
                                       % (job, index, target, self.target(job, index)))
        except BaseException:
            self.shutdown()
            raise

    @property
    def cluster_spec(self):
        """The cluster, a `tf.train.ClusterSpec` ({"worker": [...], "ps": [...]})."""
        return self._cluster_spec

    def target(self, job: str = "worker", index: int = 0) -> str:
        """The target a `tf.Session` connects to for a task: "grpc://host:port".

        Raises:
          ValueError: no such job or task.
        """
        return "grpc://" + self._cluster_spec.task_address(job, index)

    def actor(self, job: str, index: int):
        """The Ray actor handle of a task (for `ray.kill`, or to watch it).

        Raises:
          ValueError: no such job or task.
        """
        try:
            return self._actors[(job, index)]
        except KeyError:
            raise ValueError("No task %s:%d in this cluster" % (job, index)) from None

    def run_on_workers(self, fn: Callable[..., Any], *args, **kwargs) -> List[Any]:
        """Runs `fn(*args, **kwargs)` inside every worker task's actor at once, each
        with TF_CONFIG set to the cluster, that task and rpc_layer "grpc" (so
        `tf.distribute.cluster_resolver.TFConfigClusterResolver().master()` is the
        task's own server): between-graph replicated training on Ray. `fn` should build
        its graph in a `tf.Graph()` of its own: a task's actor outlives the call. Ray
        sends `fn` by reference to its module (which the actors must be able to import)
        or, for a function of the driver's `__main__`, by value.

        Returns:
          The results of the workers in task order (worker:0 first).

        Raises:
          Whatever `fn` raised in the first worker that failed (as Ray wraps it, a
          `ray.exceptions.RayTaskError` that is also an instance of the error's class);
          `ray.exceptions.RayActorError` if a worker's actor died during the call.
        """
        workers = [a for (job, _), a in self._actors.items() if job == "worker"]
        return self._ray.get([a.run.remote(fn, args, kwargs) for a in workers])

    def shutdown(self) -> None:
        """Kills every task's actor (no restart) and frees the CPUs they reserved. A
        second call does nothing."""
        actors, self._actors = list(self._actors.values()), {}
        for actor in actors:
            self._ray.kill(actor, no_restart=True)
        pg, self._pg = self._pg, None
        if pg is not None:
            self._remove_pg(pg)

    def __enter__(self) -> "RayCluster":
        return self

    def __exit__(self, *exc_info) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return "RayCluster(%r)" % (self._cluster_spec.as_dict(),)
