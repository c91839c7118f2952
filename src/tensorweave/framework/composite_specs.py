"""tf.IndexedSlicesSpec, tf.NoneTensorSpec and tf.OptionalSpec: the types of an
IndexedSlices, of None (a component that is absent) and of a tf.data Optional, as TF
2.x's compat.v1 gives them. Their rules (equality, compatibility, common supertype,
repr) are TF's defaults over their constructor's arguments (serialized_spec.py).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.serialized_spec import SerializedSpec
from tensorweave.framework.shapes import TensorShape, as_shape


@tf_export("IndexedSlicesSpec")
class IndexedSlicesSpec(SerializedSpec):
    """The type of a tf.IndexedSlices (TF `tf.IndexedSlicesSpec`).

    Args:
      shape: the dense shape (None: any).
      dtype: the dtype of the values.
      indices_dtype: the dtype of the indices (int32 or int64).
      dense_shape_dtype: the dtype of the dense_shape tensor, or None when the
        IndexedSlices has none.
      indices_shape: the shape of the indices (how many slices); rank 1.

    Raises:
      TypeError: a dtype that names no dtype.
      ValueError: `indices_shape` is not of rank 1.
    """

    __slots__ = ("_shape", "_values_dtype", "_indices_dtype", "_dense_shape_dtype",
                 "_indices_shape")

    def __init__(self, shape=None, dtype=_dt.float32, indices_dtype=_dt.int64,
                 dense_shape_dtype=None, indices_shape=None):
        self._shape = as_shape(shape)
        self._values_dtype = _dt.as_dtype(dtype)
        self._indices_dtype = _dt.as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else \
            _dt.as_dtype(dense_shape_dtype)
        self._indices_shape = as_shape(indices_shape).with_rank(1)

    value_type = property(lambda self: IndexedSlices, doc="tf.IndexedSlices.")

    @classmethod
    def from_value(cls, value: IndexedSlices) -> "IndexedSlicesSpec":
        """The spec of an IndexedSlices: its dense shape as far as the values' shape and
        a constant dense_shape tell it, and the number of slices as far as known.

        Raises:
          ValueError: the values' and indices' (or dense_shape's) shapes disagree.
        """
        from tensorweave.framework import tensor_util
        indices_shape = value.indices.shape.merge_with(value.values.shape[:1])
        shape = TensorShape([None]).concatenate(value.values.shape[1:])
        dense_shape_dtype = None
        if value.dense_shape is not None:
            dense_shape_dtype = value.dense_shape.dtype
            shape = shape.merge_with(tensor_util.constant_value_as_shape(value.dense_shape))
        return cls(shape, value.dtype, value.indices.dtype, dense_shape_dtype,
                   indices_shape)

    def _serialize(self) -> tuple:
        return (self._shape, self._values_dtype, self._indices_dtype,
                self._dense_shape_dtype, self._indices_shape)


@tf_export("NoneTensorSpec")
class NoneTensorSpec(SerializedSpec):
    """The type of None where a value could be (TF `tf.NoneTensorSpec`): what
    tf.type_spec_from_value(None) gives. It takes no argument; all are equal."""

    __slots__ = ()

    @property
    def value_type(self) -> type:
        """TF's NoneTensor: here the type of None."""
        return type(None)

    @staticmethod
    def from_value(value) -> "NoneTensorSpec":
        """A NoneTensorSpec (whatever `value` is, as TF's)."""
        return NoneTensorSpec()

    def _serialize(self) -> tuple:
        return ()

    def _batch(self, batch_size: Optional[int]) -> "NoneTensorSpec":
        return NoneTensorSpec()

    def most_specific_compatible_shape(self, other) -> "NoneTensorSpec":
        """This spec, when `other` is a NoneTensorSpec too (TF's).

        Raises:
          ValueError: `other` is of another kind.
        """
        if type(other) is not type(self):
            raise ValueError("No `TypeSpec` is compatible with both {} and {}".format(
                self, other))
        return self


@tf_export("OptionalSpec")
class OptionalSpec(SerializedSpec):
    """The type of a tf.data.experimental.Optional (TF `tf.OptionalSpec`).

    Args:
      element_spec: the type of the optional's value: a nested structure of specs.
    """

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def value_type(self) -> type:
        """tf.data.experimental.Optional."""
        from tensorweave.data.optional_ops import Optional as OptionalClass
        return OptionalClass

    @staticmethod
    def from_value(value) -> "OptionalSpec":
        """The spec of an Optional (of its element_spec)."""
        return OptionalSpec(value.element_spec)

    def _serialize(self) -> tuple:
        return (self._element_spec,)
