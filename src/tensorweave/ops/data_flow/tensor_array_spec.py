"""tf.TensorArraySpec: the type of a tf.TensorArray (element shape, dtype, whether it
grows, whether it infers element shapes), with TF 2.x's rules: compatibility ignores
`infer_shape`; the common supertype keeps this spec's element shape and `infer_shape`
only where all have it.
"""
from __future__ import annotations

from typing import Iterable

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.serialized_spec import SerializedSpec
from tensorweave.framework.shapes import as_shape
from tensorweave.framework.type_spec_from_value import register_converter
from tensorweave.ops.data_flow.tensor_array_class import TensorArray


@tf_export("TensorArraySpec")
class TensorArraySpec(SerializedSpec):
    """The type of a tf.TensorArray (TF `tf.TensorArraySpec`).

    Args:
      element_shape: the shape of each element (None: unknown).
      dtype: the dtype of the elements.
      dynamic_size: whether the array grows past its initial size (kept as given).
      infer_shape: whether writes infer the element shape (kept as given).

    Raises:
      TypeError: `dtype` names no dtype.
    """

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(self, element_shape=None, dtype=_dt.float32, dynamic_size=False,
                 infer_shape=True):
        self._element_shape = as_shape(element_shape)
        self._dtype = _dt.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    value_type = property(lambda self: TensorArray, doc="tf.TensorArray.")

    @staticmethod
    def from_value(value: TensorArray) -> "TensorArraySpec":
        """The spec of a TensorArray.

        Raises:
          TypeError: `value` is not a TensorArray.
        """
        if not isinstance(value, TensorArray):
            raise TypeError("Expected value to be a TensorArray, but got: `{}`".format(
                type(value)))
        return TensorArraySpec(value.element_shape, value.dtype, value.dynamic_size,
                               value._infer_shape)

    def _serialize(self) -> tuple:
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    def is_compatible_with(self, other) -> bool:
        """Whether `other` (a spec or a TensorArray) has this dtype and dynamic_size and
        a compatible element shape (infer_shape is not compared, as in TF).

        Returns:
          A Python bool.
        """
        other = self._as_spec(other)
        return isinstance(other, TensorArraySpec) and \
            self._dtype.is_compatible_with(other._dtype) and \
            self._element_shape.is_compatible_with(other._element_shape) and \
            self._dynamic_size == other._dynamic_size

    def is_subtype_of(self, other) -> bool:
        """TF's rule: the same dtype and dynamic_size (shapes are not compared)."""
        return isinstance(other, TensorArraySpec) and self._dtype == other._dtype and \
            self._dynamic_size == other._dynamic_size

    def most_specific_common_supertype(self, others: Iterable):
        """TF 2.x's common supertype: this spec's element shape (see below), dtype and
        dynamic_size, infer_shape where all have it.

        Args:
          others: a sequence of specs.

        Returns:
          That spec; None when a dtype or dynamic_size differs; False (TF's value)
          when one of `others` is not a TensorArraySpec.
        """
        others = list(others)
        if not all(isinstance(o, TensorArraySpec) for o in others):
            return False
        if any(o._dtype != self._dtype or o._dynamic_size != self._dynamic_size
               for o in others):
            return None
        # TF 2.x hands the other element shapes to TensorShape's supertype as a
        # generator that its first check uses up: the result keeps this spec's element
        # shape (unknown only where this one's rank is), and so do we
        shape = self._element_shape
        infer_shape = self._infer_shape and all(o._infer_shape for o in others)
        return TensorArraySpec(shape, self._dtype, self._dynamic_size, infer_shape)


register_converter(TensorArray, TensorArraySpec.from_value, allow_subclass=True)
