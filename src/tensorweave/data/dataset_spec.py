"""tf.data.DatasetSpec: the type of a dataset (its element spec and the shape of the
tensor of datasets, a scalar for one dataset), with TF 2.x's rules over those two
(serialized_spec.py).

It is also the structure leaf of an element component that is itself a dataset (a
window's, or what a map function returns): that component is one variant tensor, and
the leaf keeps the inner dataset's element structure, component dtypes, shapes and spec
names (`parts`), from which a Dataset is made again in functions and get_next.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.serialized_spec import SerializedSpec
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.framework.tensor_spec import SparseTensorSpec, TensorSpec
from tensorweave.ops.ragged.ragged_tensor_spec import RaggedTensorSpec


@tf_export("data.DatasetSpec", "data.experimental.DatasetStructure")
class DatasetSpec(SerializedSpec):
    """The type of a tf.data.Dataset (TF `tf.data.DatasetSpec`).

    Args:
      element_spec: the type of the dataset's elements: a nested structure of specs.
      dataset_shape: the shape of a tensor of such datasets (default a scalar: one).
    """

    __slots__ = ("_element_spec", "_dataset_shape", "_parts")

    def __init__(self, element_spec, dataset_shape=()):
        self._element_spec = element_spec
        self._dataset_shape = as_shape(dataset_shape)
        self._parts = None  # (structure, types, shapes, names), made when first read

    @classmethod
    def with_parts(cls, element_spec, structure, types, shapes, names=None
                   ) -> "DatasetSpec":
        """The spec of one dataset whose element structure, component dtypes, shapes
        and spec names are known (a dataset's own)."""
        spec = cls(element_spec)
        spec._parts = (structure, list(types), [TensorShape(s) for s in shapes],
                       list(names) if names is not None else [None] * len(types))
        return spec

    @staticmethod
    def from_value(value) -> "DatasetSpec":
        """The spec of a tf.data.Dataset (of one dataset: a scalar dataset_shape)."""
        return DatasetSpec.with_parts(value.element_spec, value._structure,
                                      value._types, value._shapes, value._names)

    element_spec = property(lambda self: self._element_spec,
                            doc="The type of the dataset's elements.")

    @property
    def value_type(self) -> type:
        """tf.data.Dataset."""
        from tensorweave.data.dataset_ops import Dataset
        return Dataset

    def _serialize(self) -> tuple:
        return (self._element_spec, self._dataset_shape)

    def _batch(self, batch_size: Optional[int]) -> "DatasetSpec":
        return DatasetSpec(self._element_spec,
                           TensorShape([batch_size]).concatenate(self._dataset_shape))

    # -- the structure leaf's view: how the inner dataset's components travel --
    def _get_parts(self) -> tuple:
        if self._parts is None:
            self._parts = spec_parts(self._element_spec)
        return self._parts

    structure = property(lambda self: self._get_parts()[0],
                         doc="The inner dataset's element structure (leaves: 0 or a "
                             "composite's leaf).")
    types = property(lambda self: self._get_parts()[1], doc="Its component dtypes.")
    shapes = property(lambda self: self._get_parts()[2], doc="Its component shapes.")
    names = property(lambda self: self._get_parts()[3], doc="Its components' spec names.")


def spec_parts(element_spec) -> tuple:
    """(structure, component dtypes, shapes, spec names) of an element spec: a dense
    component per tf.TensorSpec, one variant component per SparseTensorSpec,
    RaggedTensorSpec or DatasetSpec.

    Raises:
      TypeError: a leaf is another kind of spec, or no spec.
    """
    from tensorweave.data.dataset_ops import SparseSpec
    from tensorweave.data.ragged_elements import as_ragged_spec
    leaves, types, shapes, names = [], [], [], []
    for spec in nest.flatten(element_spec):
        if isinstance(spec, TensorSpec):
            leaf = 0
        elif isinstance(spec, SparseTensorSpec):
            leaf = SparseSpec(spec.dtype, spec.shape)
        elif isinstance(spec, RaggedTensorSpec):
            leaf = as_ragged_spec(spec, spec.dtype, spec.shape)
        elif isinstance(spec, DatasetSpec) and spec._dataset_shape.rank == 0:
            leaf = spec
        else:
            raise TypeError("A dataset's element spec must nest tf.TensorSpec, "
                            "tf.SparseTensorSpec, tf.RaggedTensorSpec or (scalar) "
                            "tf.data.DatasetSpec values, got %r" % (spec,))
        leaves.append(leaf)
        dense = isinstance(spec, TensorSpec)
        types.append(spec.dtype if dense else _dt.variant)
        shapes.append(spec.shape if dense else TensorShape([]))
        names.append(spec.name if dense else None)
    return nest.pack_sequence_as(element_spec, leaves), types, shapes, names
