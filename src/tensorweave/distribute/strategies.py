"""Strategies for placing parameter-server ops on ps tasks (TF1's
`tf.contrib.training` ones), for `tf.train.replica_device_setter(ps_strategy=...)`.
They are defined in `tensorweave.train.device_setter`; tf.compat.v1 exports no such
names, so neither does tensorweave."""
from tensorweave.train.device_setter import (  # noqa: F401
    GreedyLoadBalancingStrategy, byte_size_load_fn)

__all__ = ["GreedyLoadBalancingStrategy", "byte_size_load_fn"]
