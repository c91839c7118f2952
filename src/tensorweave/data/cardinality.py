"""tf.data.experimental.cardinality, assert_cardinality and pad_to_cardinality.

`cardinality` is the number of elements of a dataset as TF computes it when the op runs,
INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2) where it cannot be known without
reading (a filter, a map in TF1's graph mode, a file).

The rules are a table over the run-time values of the transformations (TF 2.21's
answers, checked side by side); a value without a rule is unknown.
"""
from __future__ import annotations

from typing import Callable, Dict

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import pipeline as _pipe
from tensorweave.data import pipeline_batching as _batching
from tensorweave.data import pipeline_transforms as _transforms
from tensorweave.data import sources as _src
from tensorweave.data import transforms as _tr
from tensorweave.data.file_cache import FileCache
from tensorweave.data.prefetch import Prefetch
from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.pipeline import DatasetValue

INFINITE, UNKNOWN = -1, -2


def cardinality_of(value: DatasetValue) -> int:
    """The number of elements `value` yields, INFINITE or UNKNOWN."""
    rule = _RULES.get(type(value))
    return UNKNOWN if rule is None else rule(value)


def _take(v) -> int:
    n = cardinality_of(v.source)
    if n == UNKNOWN or v.count < 0:
        return n
    return v.count if n == INFINITE else min(n, v.count)


def _skip(v) -> int:
    n = cardinality_of(v.source)
    if n < 0:
        return n
    return 0 if v.count < 0 else max(0, n - v.count)


def _repeat(v) -> int:
    n = cardinality_of(v.source)
    if n == 0:
        return 0
    if v.count < 0:
        return INFINITE
    return n if n < 0 else n * v.count


def _batches(v) -> int:
    n = cardinality_of(v.source)
    if n < 0:
        return n
    return n // v.size if v.drop else -(-n // v.size)


def _zip(v) -> int:
    counts = [cardinality_of(x) for x in v.inputs]
    if UNKNOWN in counts:
        return UNKNOWN
    finite = [n for n in counts if n != INFINITE]
    return min(finite) if finite else INFINITE


def _concatenate(v) -> int:
    counts = [cardinality_of(v.first), cardinality_of(v.second)]
    if UNKNOWN in counts:
        return UNKNOWN
    return INFINITE if INFINITE in counts else sum(counts)


def _windows(v) -> int:
    n = cardinality_of(v.source)
    if n < 0:
        return n
    if not v.drop:
        return -(-n // v.shift)
    span = (v.size - 1) * v.stride + 1
    return 0 if n < span else (n - span) // v.shift + 1


def _shard(v) -> int:
    n = cardinality_of(v.source)
    if n < 0:
        return n
    return n // v.n + (1 if v.index < n % v.n else 0)


def _same(v) -> int:
    return cardinality_of(v.source)


class _Asserted(DatasetValue):
    """The input, checked to yield exactly `count` elements."""

    def __init__(self, source, count: int, op):
        self.source, self.count, self.op = source, count, op

    def elements(self, ctx):
        n = 0
        for e in self.source.elements(ctx):
            n += 1
            if n > self.count:
                raise errors.FailedPreconditionError(
                    None, self.op, "Input dataset was expected to contain %d elements but "
                    "contained at least %d elements." % (self.count, n))
            yield e
        if n < self.count:
            raise errors.FailedPreconditionError(
                None, self.op, "Input dataset was expected to contain %d elements but "
                "contained only %d elements." % (self.count, n))


class _PaddedToCardinality(DatasetValue):
    """The input's elements with their mask component True, then `count` minus their
    number of zero elements with it False."""

    def __init__(self, source, count: int, mask: int, padding: list, op):
        self.source, self.count, self.mask = source, count, mask
        self.padding, self.op = padding, op

    def elements(self, ctx):
        n = 0
        for e in self.source.elements(ctx):
            n += 1
            if n > self.count:
                raise errors.InvalidArgumentError(
                    None, self.op, "Cannot pad a dataset to cardinality %d: it has more "
                    "elements" % self.count)
            yield e[:self.mask] + [np.True_] + e[self.mask:]
        padding = self.padding[:self.mask] + [np.False_] + self.padding[self.mask:]
        for _ in range(n, self.count):
            yield list(padding)


_RULES: Dict[type, Callable[[DatasetValue], int]] = {
    _pipe.Slices: lambda v: _pipe.component_rows(v.components[0]),
    _pipe.Once: lambda v: 1,
    _pipe.Range: lambda v: len(range(*v.args)),
    _transforms.Take: _take, _transforms.Skip: _skip, _transforms.Repeat: _repeat,
    _batching.Batch: _batches, _batching.PaddedBatch: _batches,
    _transforms.Zip: _zip, _transforms.Concatenate: _concatenate,
    _transforms.Shuffle: _same, _transforms.Cache: _same, FileCache: _same, Prefetch: _same,
    _batching.Windows: _windows, _tr._Shard: _shard,
    _Asserted: lambda v: v.count, _PaddedToCardinality: lambda v: v.count,
    _src._List: lambda v: len(v.components) // v.width, _src._Random: lambda v: INFINITE,
}

register_op("DatasetCardinality", inputs=["input_dataset: variant"],
            outputs=["cardinality: int64"], shape=lambda op: TensorShape([]))
not_differentiable("DatasetCardinality")
_kernels.dataset_op("AssertCardinalityDataset", ["input_dataset: variant", "cardinality: int64"])
_kernels.dataset_op("PadToCardinalityDataset", ["input_dataset: variant", "cardinality: int64"],
               {"mask_index": 0})


@kernel("DatasetCardinality")
def _cardinality_kernel(ctx, d):
    return np.int64(cardinality_of(d))


@kernel("AssertCardinalityDataset")
def _assert_cardinality_kernel(ctx, d, count):
    return _Asserted(d, int(np.asarray(count)), ctx.op)


@kernel("PadToCardinalityDataset")
def _pad_to_cardinality_kernel(ctx, d, count):
    mask = ctx.attrs["mask_index"]
    specs = [(t, s) for k, (t, s) in enumerate(zip(ctx.attrs["output_types"],
                                                    ctx.attrs["output_shapes"])) if k != mask]
    padding = [np.full(s, b"", dtype=object) if t == _dt.string else
               np.zeros(s, t.as_numpy_dtype) for t, s in specs]
    return _PaddedToCardinality(d, int(np.asarray(count)), mask, padding, ctx.op)


@tf_export("data.experimental.cardinality")
def cardinality(dataset: Dataset) -> Tensor:
    """The number of elements of `dataset` (an int64 scalar evaluated when run):
    INFINITE_CARDINALITY (-1) for an endless dataset, UNKNOWN_CARDINALITY (-2) when it
    cannot be known without reading it (after a filter or a map, for a file...)."""
    return apply_op("DatasetCardinality", [dataset._variant],
                    name="DatasetCardinality").outputs[0]


@tf_export("data.experimental.assert_cardinality")
def assert_cardinality(expected_cardinality) -> Callable:
    """A transformation declaring the dataset's number of elements (so `cardinality`
    knows it); reading more or fewer raises FailedPreconditionError."""
    def apply(ds: Dataset) -> Dataset:
        return ds._derive("AssertCardinalityDataset", [convert_to_tensor(
            expected_cardinality, _dt.int64, name="cardinality")])
    return apply


@tf_export("data.experimental.pad_to_cardinality")
def pad_to_cardinality(cardinality, mask_key: str = "valid") -> Callable:
    """A transformation that pads a dataset of dicts to `cardinality` elements with
    elements of zeros (empty strings), and adds to every element the bool `mask_key`:
    True for the dataset's own elements, False for the padding.

    Unlike TF, the dataset's cardinality need not be known in advance: reading more than
    `cardinality` elements from it raises InvalidArgumentError.

    Raises:
      ValueError: the elements are not dicts, `mask_key` is one of their keys, or a
        component is sparse or of a shape not fully known (its padding would have no
        shape).
    """
    def apply(ds: Dataset) -> Dataset:
        if not isinstance(ds._structure, dict):
            raise ValueError("`pad_to_cardinality` requires its input dataset to be a "
                             "dictionary.")
        if mask_key in ds._structure:
            raise ValueError("`mask_key` %r is already a key of the dataset's elements"
                             % (mask_key,))
        for key in sorted(ds._structure):
            leaf = ds._structure[key]
            if leaf != 0:
                raise ValueError("pad_to_cardinality pads tensors only; %r is %r"
                                 % (key, leaf))
        for key, shape in zip(sorted(ds._structure), ds._shapes):
            if not shape.is_fully_defined():
                raise ValueError("pad_to_cardinality needs components of fully defined "
                                 "shapes to pad with; %r has shape %s" % (key, shape))
        structure = dict(ds._structure, **{mask_key: 0})
        mask = sorted(structure).index(mask_key)
        types = ds._types[:mask] + [_dt.bool] + ds._types[mask:]
        shapes = ds._shapes[:mask] + [TensorShape([])] + ds._shapes[mask:]
        return ds._derive("PadToCardinalityDataset", [convert_to_tensor(
            cardinality, _dt.int64, name="cardinality")], {"mask_index": mask},
            structure=structure, types=types, shapes=shapes)
    return apply
