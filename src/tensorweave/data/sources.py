"""tf.data.experimental's sources beyond Dataset's own: `from_list` (elements given one by
one, of shapes that may differ) and `RandomDataset` (an endless stream of random int64
values, also `Dataset.random`).

A rerandomizing RandomDataset is TF's graph: RandomDatasetV2 reading the handle of a
DummySeedGenerator, a stateful op, so that a one-shot iterator refuses it as TF's does
(its dataset is captured by value); the kernel makes the seeds of each pass itself.
"""
from __future__ import annotations

import typing
import warnings

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeListAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.pipeline import DatasetValue
from tensorweave.ops.random import philox

_kernels.dataset_op("ListDataset", ["tensors: Tinput_types"], {"Tinput_types": TypeListAttr()})
_kernels.dataset_op("RandomDataset", ["seed: int64", "seed2: int64"],
               {"rerandomize_each_iteration": False})
_kernels.dataset_op("RandomDatasetV2", ["seed: int64", "seed2: int64",
                                        "seed_generator: resource"],
                    {"rerandomize_each_iteration": False})
register_op("DummySeedGenerator", outputs=["handle: resource"],
            shape=lambda op: TensorShape([]), stateful=True)
not_differentiable("DummySeedGenerator")


class _List(DatasetValue):
    def __init__(self, components, width: int):
        self.components, self.width = components, width

    def elements(self, ctx):
        for i in range(0, len(self.components), self.width):
            yield list(self.components[i:i + self.width])


@kernel("ListDataset")
def _list_kernel(ctx, *tensors):
    return _List(list(tensors), len(ctx.attrs["output_types"]))


@tf_export("data.experimental.from_list")
def from_list(elements, name: typing.Optional[str] = None) -> Dataset:
    """A dataset of `elements`, a list of elements of one structure and dtypes whose
    shapes may differ (each component's shape is then the most specific one compatible
    with all of theirs).

    Raises:
      ValueError: `elements` is empty, or its elements differ in structure.
      TypeError: their components differ in dtype.
    """
    if not elements:
        raise ValueError("Invalid `elements`. `elements` should not be empty. If you want "
                         "an empty dataset, use `tf.data.Dataset.range(0)`.")
    converted = [_ds.structure_of(e) for e in elements]
    structure, first = converted[0]
    types = [t.dtype for t in first]
    shapes = [t.shape for t in first]
    for k, (other, flat) in enumerate(converted[1:], 1):
        nest.assert_same_structure(structure, other)
        if [t.dtype for t in flat] != types or \
                nest.flatten(other) != nest.flatten(structure):
            raise TypeError("The elements of from_list must have the same dtypes: element "
                            "%d has %s but element 0 has %s"
                            % (k, [t.dtype.name for t in flat], [t.name for t in types]))
        shapes = [s.most_specific_compatible_shape(t.shape) for s, t in zip(shapes, flat)]
    op = apply_op("ListDataset", [[t for _, flat in converted for t in flat]],
                  dict(_ds.spec_attrs(types, shapes), Tinput_types=types * len(converted)),
                  name=name or "ListDataset")
    return Dataset(op.outputs[0], structure, types, shapes)


_BLOCKS = 256   # Philox blocks drawn at a time: 1024 values


class _Random(DatasetValue):
    """TF's values: the words of Philox(seed, seed2), as int64 (TF's SingleSampleAdapter);
    with `rerandomize`, pass k draws from the k-th seeds of TF's RandomSeedGenerator.
    `seeds` None: a sequence that derives from the pass's seed (so a restored iterator
    goes on with it, iterator_checkpoint.py); `key` names it in the pass."""

    def __init__(self, seeds: typing.Optional[typing.Tuple[int, int]], rerandomize: bool,
                 key: str = "RandomDataset"):
        self.seeds, self.rerandomize, self.key = seeds, rerandomize, key

    def elements(self, ctx):
        ctx = _pipe.pass_context(ctx)
        call = ctx.calls(self.key) if self.rerandomize else 0
        if self.seeds is None:
            seeds = ctx.seed_for(self.key), call
        elif self.rerandomize:
            seeds = philox.seed_generator_seeds(*self.seeds, call)
        else:
            seeds = self.seeds
        key, counter = philox.key_counter_of_seeds(*seeds)
        while True:
            for v in philox.words(key, counter, _BLOCKS).astype(np.int64):
                yield [v]
            counter = philox.skip(counter, _BLOCKS)


@kernel("RandomDataset")
def _random_kernel(ctx, seed, seed2):
    seeds = int(np.asarray(seed)), int(np.asarray(seed2))
    # no seed: one of the pass (drawn from the OS when an iterator starts)
    return _Random(None if seeds == (0, 0) else seeds, ctx.attrs["rerandomize_each_iteration"],
                   ctx.op.name)


@kernel("RandomDatasetV2")
def _random_v2_kernel(ctx, seed, seed2, seed_generator):
    # the generator is an input only for its place in the graph (what a one-shot iterator
    # refuses): the seeds of each pass are the dataset's own (_Random)
    return _random_kernel(ctx, seed, seed2)


class _DummySeedGenerator:
    """The value of TF's DummySeedGenerator handle: a generator that hands out nothing."""


kernel("DummySeedGenerator")(lambda ctx: _DummySeedGenerator())


@tf_export("data.experimental.RandomDataset")
class RandomDataset(Dataset):
    """An endless dataset of random int64 values, uniform over [0, 2**32): TF's values
    for the same (graph seed, op seed).

    Args:
      seed: the op seed (with the graph seed, as `tf.set_random_seed` sets it): the same
        seeds give the same sequence; None and no graph seed: a new one each time the
        dataset is created.
      rerandomize_each_iteration: a new sequence on each pass of a `repeat`, else the
        same one (an iterator initialized again starts again from the first; a
        one-shot iterator refuses it, as TF's).
      name: the op's name.
    """

    def __init__(self, seed: typing.Optional[int] = None,
                 rerandomize_each_iteration: typing.Optional[bool] = None,
                 name: typing.Optional[str] = None):
        from tensorweave.ops.random.random_ops import get_seed
        s1, s2 = get_seed(seed)
        s1, s2 = (0, 0) if s1 is None else (s1, s2)
        seeds = [convert_to_tensor(s1, _dt.int64), convert_to_tensor(s2, _dt.int64)]
        attrs = _ds.spec_attrs([_dt.int64], [TensorShape([])])
        if rerandomize_each_iteration:
            # TF's warning under TF1 behaviour (disable_v2_behavior), tensorweave's only one
            warnings.warn("In TF 1, the `rerandomize_each_iteration=True` option is only "
                          "supported for repeat-based epochs.")
            generator = apply_op("DummySeedGenerator", [], {}, name="DummySeedGenerator")
            op = apply_op("RandomDatasetV2", seeds + [generator.outputs[0]],
                          dict(attrs, rerandomize_each_iteration=True),
                          name=name or "RandomDatasetV2")
        else:
            op = apply_op("RandomDataset", seeds,
                          dict(attrs, rerandomize_each_iteration=False),
                          name=name or "RandomDataset")
        super().__init__(op.outputs[0], 0, [_dt.int64], [TensorShape([])])

