"""`tf.distribute.MirroredStrategy` on local devices: one replica per device, every
variable mirrored (a copy per device, updated identically), gradients all-reduced."""
from __future__ import annotations

from typing import Optional, Sequence

from tensorweave.distribute import cross_device_ops as _cdo
from tensorweave.distribute import distribute_lib as _lib
from tensorweave.distribute import mirrored_run
from tensorweave.distribute import values as _values
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export


def _default_devices() -> tuple:
    """All local GPUs, else the CPU (as TF: extra logical CPUs are not used unless
    named)."""
    from tensorweave.runtime import context
    gpus = context.list_logical_devices("GPU")
    if gpus:
        return tuple("/device:GPU:%d" % i for i in range(len(gpus)))
    return ("/device:CPU:0",)


class MirroredExtended(_lib.StrategyExtended):
    """The StrategyExtended of MirroredStrategy."""

    def __init__(self, container_strategy, devices: Optional[Sequence[str]],
                 cross_device_ops: Optional[_cdo.CrossDeviceOps]):
        super().__init__(container_strategy)
        if devices is None:
            devices = _default_devices()
        self._devices = _lib.canonical_devices(devices)
        if cross_device_ops is not None and \
                not isinstance(cross_device_ops, _cdo.CrossDeviceOps):
            raise ValueError("cross_device_ops must be a tf.distribute.CrossDeviceOps, "
                             "got %r" % (cross_device_ops,))
        self._cross_device_ops = cross_device_ops or _cdo.ReductionToOneDevice()

    def _worker_devices(self) -> tuple:
        return self._devices

    def _create_variable(self, next_creator, **kwargs):
        if kwargs.get("variable_def") is not None:  # re-created from a MetaGraph
            return next_creator(**kwargs)
        devices = self._colocate_devices or self._devices
        return _values.make_mirrored_variable(self._container_strategy(), devices,
                                              next_creator, kwargs)

    def _reduce_to(self, reduce_op, value, destinations):
        return self._cross_device_ops.reduce(reduce_op, value, destinations)

    def _update(self, var, fn, args, kwargs, group):
        g = _graph.get_default_graph()
        if not isinstance(var, _values.MirroredVariable):
            # a variable made outside the scope has one copy: update it once
            with g.colocate_with(var), _lib.update_context(0):
                result = fn(var, *_values.select_replica(0, args),
                            **_values.select_replica(0, kwargs))
            return result if group else (result,)
        results = []
        for i, copy_ in enumerate(var.values):
            with g.colocate_with(copy_), _lib.update_context(i):
                results.append(fn(copy_, *_values.select_replica(i, args),
                                  **_values.select_replica(i, kwargs)))
        if group:
            return self._container_strategy().group(_values.Mirrored(results))
        return tuple(results)

    def _update_non_slot(self, colocate_with, fn, args, kwargs, group):
        g = _graph.get_default_graph()
        results = []
        for i, d in enumerate(self._devices):
            with g.device(d), _lib.update_context(i):
                results.append(fn(*_values.select_replica(i, args),
                                  **_values.select_replica(i, kwargs)))
        if group:
            return self._container_strategy().group(_values.Mirrored(results))
        return tuple(results)

    def _call_for_each_replica(self, fn, args, kwargs):
        return mirrored_run.call_for_each_replica(self._container_strategy(),
                                                  self._devices, fn, args, kwargs)


@tf_export("distribute.MirroredStrategy")
class MirroredStrategy(_lib.Strategy):
    """Synchronous training on the devices of one machine: one replica per device,
    variables mirrored on every device and updated with all-reduced gradients.

    Args:
      devices: device strings (default: all local GPUs, else the CPU).
      cross_device_ops: how values are reduced across devices (default:
        ReductionToOneDevice).

    Raises:
      ValueError: an empty or duplicated device list, or a bad `cross_device_ops`.
    """

    def __init__(self, devices: Optional[Sequence[str]] = None,
                 cross_device_ops: Optional[_cdo.CrossDeviceOps] = None):
        super().__init__(MirroredExtended(self, devices, cross_device_ops))
