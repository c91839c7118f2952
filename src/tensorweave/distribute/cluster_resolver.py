"""`tf.distribute.cluster_resolver`: where a program learns its cluster and its task.

A resolver answers four questions for a process: the cluster (`cluster_spec()`), the
session target (`master()`), which task this process is (`task_type`, `task_id`) and
its accelerators (`num_accelerators()`). TF_CONFIG (set by the schedulers users already
have) is the usual answer; a SimpleClusterResolver states it in code, a UnionResolver
merges several.
"""
from __future__ import annotations

from typing import Dict, Optional

from tensorweave.distribute.cluster import ClusterSpec, read_tf_config
from tensorweave.framework.api_export import tf_export


def format_master_url(master: str, rpc_layer: Optional[str] = None) -> str:
    """`rpc_layer://master`, or `master` alone without an RPC layer."""
    return "%s://%s" % (rpc_layer, master) if rpc_layer else master


@tf_export("distribute.cluster_resolver.ClusterResolver")
class ClusterResolver:
    """The base of the resolvers: subclasses answer `cluster_spec()` and `master()`;
    the task is what was set on the resolver (None until then)."""

    def cluster_spec(self) -> ClusterSpec:
        """The cluster as it is now (a subclass's answer)."""
        raise NotImplementedError("%s does not resolve a cluster" % type(self).__name__)

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The session target of a task (a subclass's answer)."""
        raise NotImplementedError("%s does not resolve a master" % type(self).__name__)

    def num_accelerators(self, task_type: Optional[str] = None,
                         task_id: Optional[int] = None,
                         config_proto=None) -> Dict[str, int]:
        """Device type -> count of the accelerators (non-CPU devices) of the session
        target `master(task_type, task_id)` (this process when that is "")."""
        from tensorweave.framework.graph import Graph
        from tensorweave.runtime.session import Session
        target = self.master(task_type, task_id)
        with Graph().as_default(), Session(target, config=config_proto) as sess:
            devices = sess.list_devices()
        counts: Dict[str, int] = {}
        for device in devices:
            if device.device_type != "CPU":
                counts[device.device_type] = counts.get(device.device_type, 0) + 1
        return counts

    @property
    def environment(self) -> str:
        """"google" on Google's internal infrastructure, else ""."""
        return ""

    @property
    def task_type(self) -> Optional[str]:
        return getattr(self, "_task_type", None)

    @task_type.setter
    def task_type(self, task_type: str) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        return getattr(self, "_task_id", None)

    @task_id.setter
    def task_id(self, task_id: int) -> None:
        self._task_id = task_id


@tf_export("distribute.cluster_resolver.SimpleClusterResolver")
class SimpleClusterResolver(ClusterResolver):
    """A resolver that returns what it was given.

    Args:
      cluster_spec: the tf.train.ClusterSpec.
      master: the session target when no task is named.
      task_type, task_id: this process's task.
      environment: see ClusterResolver.environment.
      num_accelerators: device type -> count, returned by num_accelerators().
      rpc_layer: prefix of the master's address ("grpc").

    Raises:
      TypeError: `cluster_spec` is not a ClusterSpec, or `master` not a string.
    """

    def __init__(self, cluster_spec: ClusterSpec, master: str = "",
                 task_type: Optional[str] = None, task_id: Optional[int] = None,
                 environment: str = "", num_accelerators: Optional[Dict[str, int]] = None,
                 rpc_layer: Optional[str] = None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._cluster_spec, self._master = cluster_spec, master
        self._task_type, self._task_id = task_type, task_id
        self._environment, self._rpc_layer = environment, rpc_layer
        self._num_accelerators = num_accelerators

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The given master, or the address of the task named by both `task_type` and
        `task_id`, with the RPC layer prefix."""
        if task_type is not None and task_id is not None:
            master = self._cluster_spec.task_address(task_type, task_id)
        else:
            master = self._master
        return format_master_url(master, rpc_layer or self._rpc_layer)

    @property
    def environment(self) -> str:
        return self._environment

    def num_accelerators(self, task_type: Optional[str] = None,
                         task_id: Optional[int] = None,
                         config_proto=None) -> Dict[str, int]:
        return dict(self._num_accelerators or {})

    @property
    def rpc_layer(self) -> Optional[str]:
        return self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: str) -> None:
        self._rpc_layer = rpc_layer


@tf_export("distribute.cluster_resolver.UnionResolver")
class UnionClusterResolver(ClusterResolver):
    """The union of several resolvers' clusters; the master, task, environment and
    accelerators are the first resolver's unless set here.

    Args:
      *args: the ClusterResolvers.
      task_type, task_id, rpc_layer: keyword arguments overriding the first resolver's.

    Raises:
      ValueError: no resolver, or an unknown keyword argument.
      TypeError: an argument that is not a ClusterResolver.
    """

    def __init__(self, *args: ClusterResolver, task_type: Optional[str] = None,
                 task_id: Optional[int] = None, rpc_layer: Optional[str] = None,
                 **kwargs):
        if kwargs:
            raise ValueError("Unexpected kwargs provided {!r}".format(kwargs))
        if not args:
            raise ValueError("At least one ClusterResolver is required.")
        for resolver in args:
            if not isinstance(resolver, ClusterResolver):
                raise TypeError("All arguments must be a sub-class of `ClusterResolver.`")
        self._resolvers = args
        self._task_type, self._task_id, self._rpc_layer = task_type, task_id, rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """The jobs of all the resolvers. A job several resolvers name is the
        concatenation of their task lists when all are lists, else the union of their
        {index: address} dicts.

        Raises:
          KeyError: two resolvers give the same index of one job (as dicts).
        """
        specs = [r.cluster_spec().as_dict() for r in self._resolvers]
        merged: Dict[str, object] = {}
        for job in dict.fromkeys(job for spec in specs for job in spec):
            parts = [spec[job] for spec in specs if job in spec]
            if all(isinstance(p, list) for p in parts):
                merged[job] = [address for p in parts for address in p]
                continue
            tasks: Dict[int, str] = {}
            for part in parts:
                part = dict(enumerate(part)) if isinstance(part, list) else part
                clash = set(part) & set(tasks)
                if clash:
                    raise KeyError("Duplicate keys detected when merging two "
                                   "ClusterSpecs: %r" % (clash,))
                tasks.update(part)
            merged[job] = tasks
        return ClusterSpec(merged)

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        if task_type is not None and task_id is not None:
            address = self.cluster_spec().task_address(task_type, task_id)
            return format_master_url(address, rpc_layer or self._rpc_layer)
        return self._resolvers[0].master(rpc_layer=rpc_layer)

    @property
    def task_type(self) -> Optional[str]:
        return self._task_type or self._resolvers[0].task_type

    @task_type.setter
    def task_type(self, task_type: str) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        return self._task_id if self._task_id is not None else self._resolvers[0].task_id

    @task_id.setter
    def task_id(self, task_id: int) -> None:
        self._task_id = task_id

    @property
    def environment(self) -> str:
        return self._resolvers[0].environment

    def num_accelerators(self, task_type: Optional[str] = None,
                         task_id: Optional[int] = None,
                         config_proto=None) -> Dict[str, int]:
        return self._resolvers[0].num_accelerators(task_type, task_id, config_proto)

    @property
    def rpc_layer(self) -> Optional[str]:
        return self._rpc_layer or getattr(self._resolvers[0], "rpc_layer", None)

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: str) -> None:
        self._rpc_layer = rpc_layer


@tf_export("distribute.cluster_resolver.TFConfigClusterResolver")
class TFConfigClusterResolver(ClusterResolver):
    """The cluster, task and RPC layer of this process from the TF_CONFIG environment
    variable (read on every call, as TF's resolver does).

    Args:
      task_type, task_id, rpc_layer: override what TF_CONFIG says.
      environment: TF_CONFIG's "environment" field unless given.
    """

    def __init__(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                 rpc_layer: Optional[str] = None, environment: Optional[str] = None):
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment

    @staticmethod
    def _config() -> dict:
        return read_tf_config()

    def cluster_spec(self) -> ClusterSpec:
        """The "cluster" of TF_CONFIG (an empty ClusterSpec without it)."""
        return ClusterSpec(self._config().get("cluster") or {})

    @property
    def task_type(self) -> Optional[str]:
        if self._task_type is not None:
            return self._task_type
        t = self._config().get("task", {}).get("type")
        return str(t) if t is not None else None

    @task_type.setter
    def task_type(self, value: str) -> None:
        self._task_type = value

    @property
    def task_id(self) -> Optional[int]:
        if self._task_id is not None:
            return self._task_id
        i = self._config().get("task", {}).get("index")
        return int(i) if i is not None else None

    @task_id.setter
    def task_id(self, value: int) -> None:
        self._task_id = value

    @property
    def rpc_layer(self) -> Optional[str]:
        return self._rpc_layer if self._rpc_layer is not None else \
            self._config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, value: str) -> None:
        self._rpc_layer = value

    @property
    def environment(self) -> str:
        return self._environment if self._environment is not None else \
            self._config().get("environment", "")

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The address of a task (this one by default) with the RPC layer prefix
        ("grpc://host:port"); "" when TF_CONFIG names no such task."""
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None:
            return ""
        spec = self.cluster_spec()
        if task_type not in spec.jobs:
            return ""
        address = spec.task_address(task_type, task_id)
        layer = rpc_layer if rpc_layer is not None else self.rpc_layer
        return "%s://%s" % (layer, address) if layer else address
