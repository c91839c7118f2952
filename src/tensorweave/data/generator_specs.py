"""Dataset.from_generator's elements declared by an `output_signature` that holds
composite specs (tf.SparseTensorSpec, tf.RaggedTensorSpec, alone or nested with
tf.TensorSpecs).

TF takes such elements by another path than dense ones (generators.py): each yielded
component is converted as its spec says, without casts (a dense one with
convert_to_tensor's checks to the spec's dtype, a SparseTensorValue to a SparseTensor,
a RaggedTensorValue to a RaggedTensor, anything else to a dense tensor of its own
dtype), then the spec of the converted element must be compatible with the signature:
the same kinds, dtypes, ragged ranks and row_splits dtypes, compatible shapes. The
messages are TF's. A composite component travels as one variant component (a
SparseComponent or RaggedComponent), as through the rest of tf.data.
"""
from __future__ import annotations

from typing import List, NamedTuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensorValue
from tensorweave.framework.tensor_spec import SparseTensorSpec, TensorSpec, TypeSpec
from tensorweave.ops.array.constant_op import constant_array
from tensorweave.ops.ragged.ragged_tensor_spec import RaggedTensorSpec
from tensorweave.ops.ragged.ragged_tensor_value import RaggedTensorValue
from tensorweave.data.dataset_ops import SparseSpec
from tensorweave.data.pipeline import SparseComponent
from tensorweave.data.ragged_elements import RaggedComponent, RaggedSpec

COMPOSITE_TYPE_SPECS = (SparseTensorSpec, RaggedTensorSpec)


class InvalidSplits(Exception):
    """A yielded RaggedTensorValue whose row splits are no rows (TF fails to encode it:
    an UnknownError wrapping the InvalidArgumentError of RaggedTensorToVariant)."""


class _Converted(NamedTuple):
    """One yielded component converted: its run-time `component` and the `spec` TF
    gives its value (what the signature's spec must be compatible with)."""
    component: object
    spec: TypeSpec


def flatten_like(structure, element) -> list:
    """The leaves of `element` as `structure` nests them (a leaf may be any value; a
    list where a tuple is expected nests differently, as TF's flatten_up_to).

    Raises:
      TypeError: `element` nests differently.
    """
    if isinstance(structure, dict):
        if not isinstance(element, dict) or set(element) != set(structure):
            raise TypeError("expected a dict with keys %s" % sorted(structure))
        return [v for k in sorted(structure) for v in flatten_like(structure[k],
                                                                   element[k])]
    if nest.is_sequence(structure):
        if not isinstance(element, type(structure)) or len(element) != len(structure):
            raise TypeError("expected a %s of %d" % (type(structure).__name__,
                                                     len(structure)))
        return [v for sub, e in zip(structure, element) for v in flatten_like(sub, e)]
    return [element]


class SpecSignature:
    """What a generator's elements are declared to be by an `output_signature` holding
    composite specs: the element `structure` (a SparseSpec or RaggedSpec leaf per
    composite, 0 per dense component) and each component's dtype, static shape and spec
    name, as datasets carry them."""

    def __init__(self, output_signature):
        self.signature = output_signature
        self.specs = nest.flatten(output_signature)
        self.structure = nest.pack_sequence_as(output_signature,
                                               [_leaf(s) for s in self.specs])
        composite = [isinstance(s, COMPOSITE_TYPE_SPECS) for s in self.specs]
        self.types = [_dt.variant if c else s.dtype for s, c in zip(self.specs, composite)]
        self.shapes = [TensorShape([]) if c else s.shape
                       for s, c in zip(self.specs, composite)]
        self.names = [None if c else s.name for s, c in zip(self.specs, composite)]

    def converted(self, element) -> list:
        """The run-time components of a yielded `element`.

        Raises:
          TypeError: with TF's messages, `element` does not convert to the signature's
            structure, or its spec is not compatible with the signature.
          InvalidSplits: a RaggedTensorValue's row splits are no rows.
        """
        try:
            values = [_converted(v, s) for v, s in
                      zip(flatten_like(self.signature, element), self.specs)]
        except (TypeError, ValueError, OverflowError):
            raise TypeError("`generator` yielded an element that did not match the "
                            "expected structure. The expected structure was %s, but the "
                            "yielded element was %s." % (self.signature, element)) from None
        if not all(s.is_compatible_with(v.spec) for v, s in zip(values, self.specs)):
            element_spec = nest.pack_sequence_as(self.signature, [v.spec for v in values])
            raise TypeError("`generator` yielded an element of %s where an element of %s "
                            "was expected." % (element_spec, self.signature))
        for v in values:
            if isinstance(v.component, RaggedComponent):
                _check_splits(v.component)
        return [v.component for v in values]


def _leaf(spec: TypeSpec):
    """The element-structure leaf of one spec of the signature."""
    if isinstance(spec, SparseTensorSpec):
        return SparseSpec(spec.dtype, spec.shape)
    if isinstance(spec, RaggedTensorSpec):
        return RaggedSpec(spec.dtype, spec.shape, spec.ragged_rank, spec.row_splits_dtype)
    return 0


def _converted(value, spec: TypeSpec) -> _Converted:
    """`value` converted as TF's normalize_element converts a component of `spec`.

    Raises:
      TypeError, ValueError, OverflowError: it does not convert.
    """
    if isinstance(spec, SparseTensorSpec):
        return _sparse(value)
    if isinstance(spec, RaggedTensorSpec) and isinstance(value, RaggedTensorValue):
        return _ragged(value)
    dtype = None if isinstance(spec, RaggedTensorSpec) else spec.dtype
    array = _array(value, dtype)
    return _Converted(array, TensorSpec(array.shape, dtype or _dt.dtype_of_value(value)))


def _array(value, dtype) -> np.ndarray:
    """`value` as convert_to_tensor makes it (of `dtype`, or the dtype TF infers)."""
    return constant_array(value, dtype or _dt.dtype_of_value(value), allow_cast=False)


def _sparse(value) -> _Converted:
    if not isinstance(value, SparseTensorValue):
        raise TypeError("Argument sparse_tensor_value=%s is neither a SparseTensor nor "
                        "SparseTensorValue." % (value,))
    indices = _array(value.indices, _dt.int64)
    values = _array(value.values, None)
    dense_shape = _array(value.dense_shape, _dt.int64)
    if dense_shape.ndim != 1 or values.ndim != 1 or indices.ndim != 2 or \
            indices.shape[1] != dense_shape.size:
        raise ValueError("indices %s, values %s and dense_shape %s do not make a "
                         "SparseTensor" % (indices.shape, values.shape, dense_shape.shape))
    spec = SparseTensorSpec(dense_shape.tolist(), _dt.dtype_of_value(value.values))
    return _Converted(SparseComponent(indices, values, dense_shape), spec)


def _ragged(value: RaggedTensorValue) -> _Converted:
    flat = value.flat_values
    dtype = _dt.dtype_of_value(flat)
    splits = value.nested_row_splits
    shape = [len(splits[0]) - 1] + [None] * len(splits) + list(np.shape(flat)[1:])
    spec = RaggedTensorSpec(shape, dtype, len(splits), _dt.as_dtype(splits[0].dtype))
    return _Converted(RaggedComponent(_array(flat, dtype), splits, splits[0].dtype), spec)


def _check_splits(component: RaggedComponent) -> None:
    """Raises InvalidSplits (with TF's message) unless each level of row splits starts
    at 0, never decreases and ends at the length of the level below it."""
    levels: List[np.ndarray] = list(component.splits)
    sizes = [len(s) - 1 for s in levels[1:]] + [len(component.flat_values)]
    for splits, size in zip(levels, sizes):
        if not len(splits) or splits[0] != 0:
            raise InvalidSplits("Invalid ragged splits: first element of ragged splits "
                                "must be 0 but is %s" % (splits[0] if len(splits) else
                                                         "missing"))
        for i in range(1, len(splits)):
            if splits[i] < splits[i - 1]:
                raise InvalidSplits(
                    "Invalid ragged splits: ragged splits must be monotonically "
                    "increasing, but ragged_splits[%d]=%d is smaller than row_splits[%d]"
                    "=%d" % (i, splits[i], i - 1, splits[i - 1]))
        if splits[-1] != size:
            raise InvalidSplits("Invalid ragged splits: last element of ragged splits "
                                "must be the number of ragged values (%d) but is %d"
                                % (size, splits[-1]))
