"""`tf.train.replica_device_setter`: placing a replicated training graph on ps and workers.

Between-graph replication builds one graph per worker in which the parameters
(variables and other stateful "parameter" ops) live on the tasks of the `ps` job and
everything else on the worker itself. `replica_device_setter` returns the device
function that does this, for `with tf.device(fn):`:

- an op whose type is in `ps_ops` goes to `ps_device`, with `/task:k` chosen by
  `ps_strategy` (round robin over the ps tasks by default, or
  `GreedyLoadBalancingStrategy` here, TF1's `tf.contrib.training` one);
- every other op goes to `worker_device`;
- with `merge_devices` (the default) the fields the op's device already has (from inner
  `tf.device` scopes) win over the ones chosen here; without it an op that has a device
  keeps it unchanged.

A strategy is called once for every ps op that reaches the device function, including
ops whose inner device scope names the task itself (TF1 does the same: the round robin
counter advances for them too).
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Union

from tensorweave.framework import device_spec as _dev
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.dtypes import as_dtype
from tensorweave.framework.shapes import as_shape
from tensorweave.platform import tf_logging as logging

# op types placed on ps tasks by default: TF1's list (training/device_setter.py)
STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable",
                   "MutableHashTable", "MutableHashTableV2",
                   "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
                   "MutableDenseHashTable", "MutableDenseHashTableV2",
                   "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp",
                   "ResourceConditionalAccumulator",
                   "DecisionTreeResource")


class _RoundRobinStrategy:
    """The ps task of each ps op in turn: 0, 1, ..., num_tasks - 1, 0, ...

    Internal: `replica_device_setter` builds one when no `ps_strategy` is given.

    Args:
      num_tasks: the number of ps tasks to cycle over.
    """

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op) -> int:
        """The next ps task index (the op is not looked at)."""
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Places each ps op on the ps task with the least load so far (TF1's
    `tf.contrib.training.GreedyLoadBalancingStrategy`).

    The load of an op is what `load_fn(op)` returns, in any unit the function keeps
    consistent; `byte_size_load_fn` (the bytes of a variable) is the usual one. The
    op goes to the least-loaded task (the lowest index among equally loaded ones) and
    its load is then added to that task, so the result depends on the order in which
    the ps ops are created.

    For use as the `ps_strategy` of `tf.train.replica_device_setter`:

    ```python
    strategy = GreedyLoadBalancingStrategy(2, byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        ...
    ```

    Args:
      num_tasks: the number of ps tasks to balance over.
      load_fn: a callable taking an `Operation` and returning its numeric load.
    """

    def __init__(self, num_tasks: int, load_fn: Callable):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads: List[float] = [0.0] * num_tasks

    def __call__(self, op) -> int:
        """The ps task index for `op`: the least-loaded task so far.

        Args:
          op: the `Operation` to place on a ps task.

        Returns:
          The index of the least-loaded task (lowest index on ties); `op`'s load is
          then added to it.

        Raises:
          ValueError: if there are no tasks.
        """
        if not self._ps_loads:
            raise ValueError("attempt to get argmin of an empty sequence")
        loads = self._ps_loads
        task = min(range(len(loads)), key=loads.__getitem__)
        loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op) -> int:
    """The byte size of the single output of `op` (TF1's
    `tf.contrib.training.byte_size_load_fn`).

    Meant for variable ops, whose one output holds the variable; any op with one output
    whose size is known works. The size is the number of elements of the output's
    static shape times its dtype's size. When the output's static shape is not fully
    defined, the op's "shape" attr is used instead (a legacy "Variable" op may leave
    its output shape unset).

    A "VarHandleOp" counts as the variable it holds: its "shape" attr times its "dtype"
    attr's size. tensorweave builds every variable as a VarHandleOp, also those a TF1
    program builds as reference variables ("VariableV2", whose output is the variable
    itself), so this keeps such a program's placement by bytes; the handle's own
    output (a scalar resource) would weigh every variable the same.

    Args:
      op: an `Operation` with a single output, typically a variable op.

    Returns:
      The number of bytes of the output `Tensor` (of the variable, for a VarHandleOp).

    Raises:
      ValueError: if `op` does not have exactly one output, or the size is not known:
        the shape is not fully defined and `op` has no fully defined "shape" attr.
    """
    if len(op.outputs) != 1:
        raise ValueError("Op %s must have a single output" % op)
    if _op_type(op) == "VarHandleOp":
        shape = as_shape(op.get_attr("shape"))
        shape.assert_is_fully_defined()
        return shape.num_elements() * as_dtype(op.get_attr("dtype")).size
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined():
        shape = as_shape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * output.dtype.size


def _op_type(op) -> str:
    """The op type of an `Operation` or of a NodeDef (whose field is `op`)."""
    op_type = getattr(op, "type", None)
    return op_type if isinstance(op_type, str) else op.op


class _ReplicaDeviceChooser:
    """Holds the choices of one `replica_device_setter` call; `device_function` is the
    device function it returns.

    Args:
      ps_tasks: the number of ps tasks (> 0).
      ps_device: the device spec string of the ps job ("" for none).
      worker_device: the device spec string of the worker ("" for none).
      merge_devices: whether an op's own device fields are merged (True) or an op that
        has a device keeps it unchanged (False).
      ps_ops: the op types placed on ps.
      ps_strategy: `op -> ps task index`, called for every ps op.
    """

    def __init__(self, ps_tasks: int, ps_device: str, worker_device: str,
                 merge_devices: bool, ps_ops: Iterable[str], ps_strategy: Callable):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op) -> str:
        """The device of `op`: a canonical device spec string.

        Args:
          op: an `Operation` (or a NodeDef), whose `device` is what the scopes inside
            this device function gave it.

        Returns:
          The device string for `op`.
        """
        if not self._merge_devices and op.device:
            return op.device
        current = _dev.DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and _op_type(op) in self._ps_ops:
            ps = _dev.DeviceSpec.from_string(self._ps_device)
            # the task is only chosen when the op's own job (if any) is the ps job:
            # under another job the ps task numbers mean nothing
            if ps.job and (not current.job or current.job == ps.job):
                ps = ps.replace(task=self._ps_strategy(op))
            return ps.make_merged_spec(current).to_string()
        worker = _dev.DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


def _num_ps_tasks_in(cluster, ps_device: str) -> int:
    """The number of tasks of the ps job (`ps_device`'s job) in `cluster`; 0 if the
    cluster has no such job."""
    from tensorweave.distribute.cluster import ClusterSpec
    if not isinstance(cluster, ClusterSpec):
        cluster = ClusterSpec(cluster)
    jobs = cluster.as_dict()
    ps_job = _dev.DeviceSpec.from_string(ps_device).job
    if ps_job not in jobs or jobs[ps_job] is None:
        return 0
    return len(jobs[ps_job])


def _spec_arg(spec: Union[str, _dev.DeviceSpec, None]) -> str:
    return spec.to_string() if isinstance(spec, _dev.DeviceSpec) else (spec or "")


@tf_export("train.replica_device_setter")
def replica_device_setter(ps_tasks: int = 0,
                          ps_device: Union[str, _dev.DeviceSpec] = "/job:ps",
                          worker_device: Union[str, _dev.DeviceSpec] = "/job:worker",
                          merge_devices: bool = True,
                          cluster=None,
                          ps_ops: Optional[Iterable[str]] = None,
                          ps_strategy: Optional[Callable] = None) -> Optional[Callable]:
    """Returns a device function that places variables on ps tasks and the rest of a
    replica's graph on its worker.

    Use it as `with tf.device(tf.train.replica_device_setter(...)):` while building
    a worker's graph:

    ```python
    cluster = {"ps": ["ps0:2222", "ps1:2222"],
               "worker": ["worker0:2222", "worker1:2222", "worker2:2222"]}
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        v1 = tf.Variable(...)  # on /job:ps/task:0
        v2 = tf.Variable(...)  # on /job:ps/task:1
        v3 = tf.Variable(...)  # on /job:ps/task:0
    ```

    Device scopes inside the one holding this function are applied first: the fields
    they set win over the ones chosen here (with `merge_devices`).

    Args:
      ps_tasks: the number of tasks of the ps job; ignored when `cluster` is given.
      ps_device: the device of the ps job ("" places no op on ps).
      worker_device: the device of the worker ("" sets no worker device).
      merge_devices: if True, an op's own device fields are kept and the missing ones
        filled in; if False, an op that already has a device keeps it unchanged
        (deprecated in TF1, which logs a warning).
      cluster: a `tf.train.ClusterSpec`, a dict `{job: [addresses]}` or a ClusterDef;
        the ps task count is the number of tasks of `ps_device`'s job in it.
      ps_ops: the op types placed on ps; by default `STANDARD_PS_OPS` (the variable,
        resource-variable handle, mutable hash table and similar op types).
      ps_strategy: a callable `op -> ps task index`, called for every ps op; by
        default round robin over the ps tasks.

    Returns:
      A device function for `tf.device()`, or None if there are no ps tasks (the
      cluster has no ps job, or `ps_tasks` is 0 and no cluster is given).

    Raises:
      TypeError: if `cluster` is not a ClusterSpec, dict or ClusterDef, or
        `ps_strategy` is given and not callable.
    """
    ps_device = _spec_arg(ps_device)
    worker_device = _spec_arg(worker_device)
    if cluster is not None:
        ps_tasks = _num_ps_tasks_in(cluster, ps_device)
    if ps_tasks == 0:
        return None
    ps_ops = list(STANDARD_PS_OPS) if ps_ops is None else ps_ops
    if not merge_devices:
        logging.warning("DEPRECATION: It is recommended to set merge_devices=true in "
                        "replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    ps_ops, ps_strategy)
    return chooser.device_function
