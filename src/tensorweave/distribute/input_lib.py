"""Input for strategies: a dataset batched by the global batch size is read once, on
the host, and each global batch is split into consecutive per-replica slices (replica 0
gets the first global/num_replicas examples, as TF's rebatching gives it), each slice
placed on its replica's device. An `input_fn` iterator instead gives each replica its
own element of the (per-replica batched) dataset, in replica order."""
from __future__ import annotations

from typing import Callable

from tensorweave.distribute.reduce_util import InputContext
from tensorweave.distribute import values as _values
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest


def _split_batch(t, num_replicas: int, devices: tuple) -> list:
    """The per-replica slices of global batch `t`: ceil(batch / num_replicas) rows each,
    the last ones shorter (or empty) when the batch does not divide."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary
    g = _graph.get_default_graph()
    static = t.shape[0] if t.shape.ndims else None
    static = getattr(static, "value", static)
    if static is not None:
        per = -(-static // num_replicas)
        bounds = [(min(i * per, static), min((i + 1) * per, static))
                  for i in range(num_replicas)]
    else:
        n = array_ops.shape(t)[0]
        per = (n + (num_replicas - 1)) // num_replicas
        bounds = [(math_binary.minimum(i * per, n), math_binary.minimum((i + 1) * per, n))
                  for i in range(num_replicas)]
    out = []
    for i, (begin, end) in enumerate(bounds):
        with g.device(devices[i]):
            out.append(t[begin:end])
    return out


class _SplittingIterator:
    """An iterator over a global-batch dataset whose `get_next()` is PerReplica."""

    def __init__(self, dataset, strategy, one_shot: bool = False):
        self._strategy = strategy
        self._iterator = dataset.make_one_shot_iterator() if one_shot else \
            dataset.make_initializable_iterator()

    @property
    def initializer(self):
        return self._iterator.initializer

    def initialize(self) -> list:
        """The ops that (re)start the iterator (TF1 returns a list)."""
        return [self._iterator.initializer]

    @property
    def output_types(self):
        return self._iterator.output_types

    @property
    def output_shapes(self):
        return self._iterator.output_shapes

    @property
    def element_spec(self):
        return self._iterator.element_spec

    def get_next(self, name=None):
        """Each replica's part of the next global batch: a PerReplica value (the
        element itself with one replica)."""
        element = self._iterator.get_next(name=name)
        devices = self._strategy.extended.worker_devices
        n = len(devices)
        if n == 1:
            return element
        flat = nest.flatten(element)
        parts = [_split_batch(t, n, devices) for t in flat]
        per_replica = [nest.pack_sequence_as(element, [p[i] for p in parts])
                       for i in range(n)]
        return _values.regroup(per_replica)


class DistributedDataset:
    """`strategy.experimental_distribute_dataset(dataset)` in graph mode (TF1's
    DistributedDatasetV1): make an initializable iterator, whose `get_next()` gives each
    replica its slice of the global batch."""

    def __init__(self, dataset, strategy):
        self._dataset = dataset
        self._strategy = strategy

    def make_initializable_iterator(self):
        return _SplittingIterator(self._dataset, self._strategy)

    def make_one_shot_iterator(self):
        """Only with one replica, as TF (a one-shot iterator cannot be re-split).

        Raises:
          ValueError: with several replicas.
        """
        if self._strategy.num_replicas_in_sync > 1:
            raise ValueError("Cannot create a one shot iterator. Please use "
                             "`make_initializable_iterator()` instead.")
        return _SplittingIterator(self._dataset, self._strategy, one_shot=True)

    def _make_initializable_iterator(self, shared_name=None):
        return self.make_initializable_iterator()

    def _make_one_shot_iterator(self):
        return self.make_one_shot_iterator()

    def __iter__(self):
        raise RuntimeError("__iter__() is only supported inside of tf.function or when "
                           "eager execution is enabled.")


class DatasetIterator(_SplittingIterator):
    """`strategy.make_dataset_iterator(dataset)`: a splitting initializable iterator."""


class InputFunctionIterator:
    """`strategy.make_input_fn_iterator(input_fn)`: the dataset `input_fn` builds for
    an InputContext, each replica taking the next element in replica order."""

    def __init__(self, input_fn: Callable, strategy):
        self._strategy = strategy
        ctx = InputContext(num_input_pipelines=1, input_pipeline_id=0,
                                num_replicas_in_sync=strategy.num_replicas_in_sync)
        dataset = input_fn(ctx)
        if not hasattr(dataset, "make_initializable_iterator"):
            raise ValueError("input_fn must return a tf.data.Dataset, got %r" % (dataset,))
        self._iterator = dataset.make_initializable_iterator()

    @property
    def initializer(self):
        return self._iterator.initializer

    def initialize(self) -> list:
        return [self._iterator.initializer]

    def get_next(self, name=None):
        """One element per replica: a PerReplica value (the element with one
        replica)."""
        from tensorweave.ops.control_flow import structure
        devices = self._strategy.extended.worker_devices
        g = _graph.get_default_graph()
        per_replica, previous = [], []
        for i, d in enumerate(devices):
            # ordered, so replica i gets the i-th element of each round
            with g.control_dependencies(previous):
                element = self._iterator.get_next()
            previous = [t for t in nest.flatten(element)]
            with g.device(d):
                per_replica.append(nest.map_structure(structure.identity, element))
        if len(devices) == 1:
            return per_replica[0]
        return _values.regroup(per_replica)
