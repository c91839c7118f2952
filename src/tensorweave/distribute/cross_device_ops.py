"""How a strategy combines per-replica values across local devices
(`tf.distribute.CrossDeviceOps` and its three TF implementations).

Every implementation here computes the same sum, in replica order, so the copies of a
mirrored variable stay bitwise equal; they differ only in where the adding happens:
ReductionToOneDevice adds on one device and copies the result to the others;
HierarchicalCopyAllReduce and NcclAllReduce add on every destination device (the
all-reduce's result, without NCCL or a GPU tree: on local devices the partitioner's
Send/Recv pairs are the copies).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.distribute import distribute_lib as _lib
from tensorweave.distribute import values as _values
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.indexed_slices import IndexedSlices


def _destination_devices(destinations) -> tuple:
    """The devices `destinations` names: a device string, a distributed value or
    variable (its components' devices), or a plain Tensor/Variable (its device)."""
    if isinstance(destinations, str):
        return (destinations,)
    if isinstance(destinations, _values.DistributedValues):
        return tuple(v.device for v in destinations.values)
    if isinstance(destinations, (list, tuple)):
        return tuple(destinations)
    return (getattr(destinations, "device", ""),)


def _densify(v):
    """IndexedSlices gradients are summed as dense Tensors (TF sums them as slices;
    the values are the same)."""
    if isinstance(v, IndexedSlices):
        from tensorweave.framework.op_builder import convert_to_tensor
        return convert_to_tensor(v)
    return v


def _sum_on(device: str, comps: list, reduce_op, accumulation_fn=None):
    from tensorweave.ops.math import math_binary, math_ops
    g = _graph.get_default_graph()
    with g.device(device):
        comps = [_densify(c) for c in comps]
        if len(comps) == 1:
            from tensorweave.ops.control_flow import structure
            total = structure.identity(comps[0])
        elif accumulation_fn is not None:
            total = accumulation_fn(comps)
        else:
            total = math_ops.add_n(comps)
        if reduce_op == _lib.ReduceOp.MEAN and len(comps) > 1:
            total = math_binary.truediv(total, math_ops.cast(len(comps), total.dtype))
        return total


@tf_export("distribute.CrossDeviceOps")
class CrossDeviceOps:
    """Base class: reduces PerReplica values to destinations and broadcasts tensors."""

    def reduce(self, reduce_op, per_replica_value, destinations,
               experimental_hints=None):
        """`per_replica_value` combined by `reduce_op`, placed on `destinations`.

        Returns:
          A Tensor for one destination device, else a Mirrored value.
        """
        reduce_op = _lib.as_reduce_op(reduce_op)
        if not isinstance(per_replica_value, _values.DistributedValues):
            per_replica_value = _values.PerReplica([per_replica_value])
        return self.reduce_implementation(reduce_op, per_replica_value, destinations)

    def batch_reduce(self, reduce_op, value_destination_pairs,
                     experimental_hints=None) -> list:
        """`reduce` of each (value, destinations) pair."""
        return [self.reduce(reduce_op, v, d) for v, d in value_destination_pairs]

    def broadcast(self, tensor, destinations):
        """`tensor` copied to each destination device."""
        from tensorweave.ops.control_flow import structure
        devices = _destination_devices(destinations)
        g = _graph.get_default_graph()
        copies = []
        for d in devices:
            with g.device(d):
                copies.append(structure.identity(tensor))
        return copies[0] if len(copies) == 1 else _values.Mirrored(copies)

    def reduce_implementation(self, reduce_op, per_replica_value, destinations):
        raise NotImplementedError("must be implemented in descendants")


@tf_export("distribute.ReductionToOneDevice")
class ReductionToOneDevice(CrossDeviceOps):
    """Adds the values on one device, then copies the result to each destination.

    Args:
      reduce_to_device: the device that adds (default: the first destination).
      accumulation_fn: fn(list of Tensors) -> Tensor (default: `tf.math.add_n`).
    """

    def __init__(self, reduce_to_device: Optional[str] = None, accumulation_fn=None):
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn

    def reduce_implementation(self, reduce_op, per_replica_value, destinations):
        devices = _destination_devices(destinations)
        where = self.reduce_to_device or devices[0]
        total = _sum_on(where, list(per_replica_value.values), reduce_op,
                        self.accumulation_fn)
        if len(devices) == 1 and devices[0] == where:
            return total
        return self.broadcast(total, devices)


class _AllReduce(CrossDeviceOps):
    """Adds the values on every destination device (an all-reduce)."""

    def __init__(self, num_packs: int = 1):
        if num_packs < 0:
            raise ValueError("NCCL all-reduce requires num_packs >= 0, but {} is "
                             "specified".format(num_packs))
        self._num_packs = num_packs

    def reduce_implementation(self, reduce_op, per_replica_value, destinations):
        devices = _destination_devices(destinations)
        comps = list(per_replica_value.values)
        results = [_sum_on(d, comps, reduce_op) for d in devices]
        return results[0] if len(results) == 1 else _values.Mirrored(results)


@tf_export("distribute.HierarchicalCopyAllReduce")
class HierarchicalCopyAllReduce(_AllReduce):
    """All-reduce by hierarchical copies (on local devices: a sum on each device).

    Args:
      num_packs: how many packs gradients are grouped into (accepted; each tensor is
        reduced on its own here).
    """


@tf_export("distribute.NcclAllReduce")
class NcclAllReduce(_AllReduce):
    """All-reduce with NCCL on GPUs; on local devices here, a sum on each device.

    Args:
      num_packs: how many packs gradients are grouped into (accepted; each tensor is
        reduced on its own here).
    """
