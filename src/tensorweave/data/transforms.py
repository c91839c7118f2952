"""Dataset.shard (every num_shards-th element from `index`) and Dataset.reduce (a fold of
the whole dataset into tensors, run by one op).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import nest
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework import dtypes as _dt
from tensorweave.framework.registry import TypeListAttr, kernel, not_differentiable, \
    register_op
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import Dataset, DatasetFunction
from tensorweave.data.pipeline import DatasetValue

_kernels.dataset_op("ShardDataset", ["input_dataset: variant", "num_shards: int64",
                                "index: int64"])
register_op("ReduceDataset", inputs=["input_dataset: variant", "initial_state: Tstate",
                                     "captured: Tcaptured"],
            outputs=["components: output_types"],
            attrs={"f": "", "Tstate": TypeListAttr(), "output_types": TypeListAttr(),
                   "output_shapes": [], "Tcaptured": TypeListAttr()},
            shape=lambda op: list(op._get_attr("output_shapes")), stateful=True)
not_differentiable("ReduceDataset")


def shard(ds: Dataset, num_shards, index) -> Dataset:
    """See Dataset.shard."""
    return ds._derive("ShardDataset", [convert_to_tensor(num_shards, _dt.int64,
                                                         name="num_shards"),
                                       convert_to_tensor(index, _dt.int64, name="index")])


def reduce(ds: Dataset, initial_state, reduce_func: Callable):
    """See Dataset.reduce."""
    structure, state = _ds.structure_of(initial_state)
    types, shapes = [t.dtype for t in state], [t.shape for t in state]
    fn = _ds.trace_with_state(
        lambda shapes: _reduce_function(ds, reduce_func, structure, types, shapes), shapes)
    shapes = [t.shape for t in fn.inputs[:len(types)]]
    attrs = {"f": _kernels.register_function(fn), "Tstate": types, "output_types": types,
             "output_shapes": shapes}
    op = apply_op("ReduceDataset", [ds._variant, state, _kernels.captured_inputs(attrs)], attrs,
                  name="ReduceDataset")
    return _ds.pack_element(structure, list(op.outputs))


def _reduce_function(ds: Dataset, reduce_func: Callable, structure, types, shapes
                     ) -> DatasetFunction:
    """`reduce_func` traced for a state of these dtypes and shapes.

    Raises:
      TypeError: it gives a new state of other dtypes or structure.
    """
    fn = DatasetFunction(reduce_func, (structure, ds._structure), types + list(ds._types),
                         list(shapes) + list(ds._shapes), "reduce_func", unpack=True)
    if [t.dtype for t in fn.outputs] != types or \
            nest.flatten(fn.structure) != nest.flatten(structure):
        raise TypeError("The element types for the new state must match the initial "
                        "state. Expected %s; got %s." % (types, [t.dtype for t in fn.outputs]))
    return fn


class _Shard(DatasetValue):
    def __init__(self, source, n: int, index: int):
        self.source, self.n, self.index = source, n, index

    def elements(self, ctx):
        for k, e in enumerate(self.source.elements(ctx)):
            if k % self.n == self.index:
                yield e

    def elements_with_errors(self, ctx):
        # every failed element is handed on and takes no place in the count (TF's)
        k = 0
        for e in self.source.elements_with_errors(ctx):
            if isinstance(e, _pipe.ElementError):
                yield e
                continue
            if k % self.n == self.index:
                yield e
            k += 1

    def elements_after(self, ctx, n: int):
        # after n of its elements, the input is past element (n - 1) * N + index
        start = n * self.n
        for k, e in enumerate(self.source.elements_after(ctx, start), start):
            if k % self.n == self.index:
                yield e


@kernel("ShardDataset")
def _shard_kernel(ctx, d, num_shards, index):
    n, i = int(np.asarray(num_shards)), int(np.asarray(index))
    if n <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Number of shards must be greater "
                                          "than zero (currently num_shards = %d)." % n)
    if not 0 <= i < n:
        raise errors.InvalidArgumentError(None, ctx.op, "Index must be between 0 and %d "
                                          "(currently index = %d)." % (n - 1, i))
    return _Shard(d, n, i)


@kernel("ReduceDataset")
def _reduce_kernel(ctx, d, *rest):
    fn = _kernels.function_of(ctx, ctx.attrs["f"])
    n = len(ctx.attrs["Tstate"])
    state, captured = list(rest[:n]), rest[n:]
    feed = {**(d.feed or {}), **_kernels.captured_feed(ctx, captured)}
    ctx = _pipe.PipelineContext(ctx)
    for e in d.elements(ctx):
        state = fn.run(ctx, state + list(e), feed)
    return state
