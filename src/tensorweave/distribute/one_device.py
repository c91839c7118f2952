"""`tf.distribute.OneDeviceStrategy`: everything (variables, replica computation,
input) on one device, with the Strategy API, so code written for strategies runs
unchanged on a single device."""
from __future__ import annotations

from tensorweave.distribute import distribute_lib as _lib
from tensorweave.distribute import values as _values
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export


class OneDeviceExtended(_lib.StrategyExtended):
    """The StrategyExtended of OneDeviceStrategy."""

    def __init__(self, container_strategy, device: str):
        super().__init__(container_strategy)
        self._device = _lib.canonical_devices([device])[0]
        self._default_device = self._device

    def _worker_devices(self) -> tuple:
        return (self._device,)

    def _create_variable(self, next_creator, **kwargs):
        # variables go to the device (or where colocate_vars_with says), and are
        # resource variables as under every TF strategy
        kwargs["use_resource"] = True
        g = _graph.get_default_graph()
        if self._colocate_devices is not None:
            with g.device(self._colocate_devices[0]):
                return next_creator(**kwargs)
        with g.device(self._device):
            return next_creator(**kwargs)

    def _reduce_to(self, reduce_op, value, destinations):
        # one replica: SUM and MEAN are the value itself
        return value.values[0]

    def _update(self, var, fn, args, kwargs, group):
        g = _graph.get_default_graph()
        args = _values.select_replica(0, args)
        kwargs = _values.select_replica(0, kwargs)
        with g.colocate_with(var), _lib.update_context(0):
            result = fn(var, *args, **kwargs)
        return result if group else (result,)

    def _update_non_slot(self, colocate_with, fn, args, kwargs, group):
        g = _graph.get_default_graph()
        with g.device(self._device), _lib.update_context(0):
            result = fn(*_values.select_replica(0, args),
                        **_values.select_replica(0, kwargs))
        return result if group else (result,)

    def _call_for_each_replica(self, fn, args, kwargs):
        g = _graph.get_default_graph()
        args = _values.select_replica(0, args)
        kwargs = _values.select_replica(0, kwargs)
        with g.device(self._device), _lib.ReplicaContext(self._container_strategy(), 0):
            return fn(*args, **kwargs)


@tf_export("distribute.OneDeviceStrategy")
class OneDeviceStrategy(_lib.Strategy):
    """A strategy that places variables and computation on one device.

    Args:
      device: the device string, e.g. "/cpu:0" or "/gpu:0".
    """

    def __init__(self, device: str):
        super().__init__(OneDeviceExtended(self, device))
