"""`tf.train.ClusterSpec` and TF_CONFIG, as TF1 reads them.

A cluster is a set of jobs ("ps", "worker", "chief"...), each a set of tasks numbered
from 0, each task a network address ("host:port"). TF_CONFIG is the JSON environment
variable by which schedulers (Kubernetes TFJob operators, Ray Train's TensorFlow
backend, SLURM scripts) tell each process the cluster and which task it is:
`{"cluster": {"worker": ["h1:2222", ...], "ps": [...]}, "task": {"type": "worker",
"index": 0}, "rpc_layer": "grpc"}`.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Mapping, Optional

from tensorweave.framework.api_export import tf_export


def _is_cluster_def(obj) -> bool:
    desc = getattr(obj, "DESCRIPTOR", None)
    return getattr(desc, "full_name", None) in ("tensorflow.ClusterDef",
                                                 "tensorboard.ClusterDef")


@tf_export("train.ClusterSpec")
class ClusterSpec:
    """Represents a cluster as a set of jobs, each a set of tasks with addresses.

    Args:
      cluster: a dict mapping job names to a list of addresses (task i is the i-th)
        or to a dict {task index: address}; or a ClusterSpec; or a ClusterDef proto.

    Raises:
      TypeError: `cluster` is none of those, or a job's tasks are neither a list nor a
        dict, or an address is not a string.
    """

    def __init__(self, cluster):
        self._spec: Dict[str, Dict[int, str]] = {}
        if isinstance(cluster, ClusterSpec):
            self._spec = {job: dict(tasks) for job, tasks in cluster._spec.items()}
        elif isinstance(cluster, Mapping):
            for job, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    tasks = dict(enumerate(tasks))
                elif not isinstance(tasks, Mapping):
                    raise TypeError("The tasks for job %r must be a list or a dictionary "
                                    "from integers to strings." % job)
                self._spec[str(job)] = {int(i): _address(job, a) for i, a in tasks.items()}
        elif _is_cluster_def(cluster):
            for job in cluster.job:
                self._spec[job.name] = {int(i): str(a) for i, a in job.tasks.items()}
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names "
                            "to lists of network addresses, or a `ClusterDef` protocol "
                            "buffer")

    def __bool__(self) -> bool:
        return bool(self._spec)

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self._spec == other._spec

    def __ne__(self, other) -> bool:
        return not self == other

    def __repr__(self) -> str:
        spec = self.as_dict()  # jobs sorted by name, as TF prints them
        return "ClusterSpec({%s})" % ", ".join("%r: %r" % (job, spec[job])
                                               for job in sorted(spec))

    __str__ = __repr__

    @property
    def jobs(self) -> List[str]:
        """The job names, in the order given."""
        return list(self._spec)

    def _tasks(self, job_name: str) -> Dict[int, str]:
        try:
            return self._spec[job_name]
        except KeyError:
            raise ValueError("No such job in cluster: %r" % job_name) from None

    def num_tasks(self, job_name: str) -> int:
        """The number of tasks of `job_name` (ValueError for an unknown job)."""
        return len(self._tasks(job_name))

    def task_indices(self, job_name: str) -> List[int]:
        """The task indices of `job_name`, sorted."""
        return sorted(self._tasks(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        """The address of task `task_index` of `job_name`.

        Raises:
          ValueError: no such job, or no such task in it.
        """
        tasks = self._tasks(job_name)
        try:
            return tasks[task_index]
        except KeyError:
            raise ValueError("No task with index %r in job %r" % (task_index, job_name)) \
                from None

    def job_tasks(self, job_name: str) -> List[Optional[str]]:
        """The addresses of `job_name`'s tasks by index, None where an index has none."""
        tasks = self._tasks(job_name)
        out: List[Optional[str]] = [None] * (max(tasks) + 1 if tasks else 0)
        for i, address in tasks.items():
            out[i] = address
        return out

    def as_dict(self) -> Dict[str, object]:
        """{job: [addresses]} where a job's indices are 0..n-1, else {job: {index:
        address}}, as TF1 returns it."""
        out: Dict[str, object] = {}
        for job, tasks in self._spec.items():
            if sorted(tasks) == list(range(len(tasks))):
                out[job] = [tasks[i] for i in range(len(tasks))]
            else:
                out[job] = dict(tasks)
        return out

    def as_cluster_def(self):
        """The cluster as a `ClusterDef` protocol buffer (jobs sorted by name)."""
        from tensorboard.compat.proto import cluster_pb2
        proto = cluster_pb2.ClusterDef()
        for job in sorted(self._spec):
            jd = proto.job.add(name=job)
            for i, address in self._spec[job].items():
                jd.tasks[i] = address
        return proto


def _address(job, address) -> str:
    if not isinstance(address, str):
        raise TypeError("The address of a task of job %r must be a string, got %r"
                        % (job, address))
    return address


def read_tf_config(environ: Optional[Mapping[str, str]] = None) -> dict:
    """The TF_CONFIG of `environ` (default os.environ) as a dict ({} when unset).

    Raises:
      json.JSONDecodeError: TF_CONFIG is not JSON (TF's error).
      ValueError: TF_CONFIG is not a JSON object.
    """
    raw = (os.environ if environ is None else environ).get("TF_CONFIG")
    if not raw:
        return {}
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as e:  # TF's class, with what it is about
        raise json.JSONDecodeError("TF_CONFIG is not valid JSON: %s" % e.msg, e.doc,
                                   e.pos) from None
    if not isinstance(config, dict):
        raise ValueError("TF_CONFIG must be a JSON object, got %r" % raw)
    return config
