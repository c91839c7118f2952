"""tf.RaggedTensorSpec: the description of a RaggedTensor's type (dtype, shape, ragged
rank, row_splits dtype) that TF1 programs pass to tf.map_fn as `dtype` or
`fn_output_signature` when `fn` returns ragged rows.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.serialized_spec import SerializedSpec
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.framework.tensor_spec import TensorSpec
from tensorweave.framework.type_spec_from_value import register_converter
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
from tensorweave.ops.ragged.ragged_tensor_value import RaggedTensorValue


@tf_export("RaggedTensorSpec")
class RaggedTensorSpec(SerializedSpec):
    """The type of a RaggedTensor (TF `tf.RaggedTensorSpec`).

    Args:
      shape: the static shape (of one row, for map_fn's signature); None: unknown.
      dtype: the dtype of the values.
      ragged_rank: the number of ragged dimensions (default: rank - 1).
      row_splits_dtype: int64 (default) or int32.
      flat_values_spec: the type of flat_values, if known (its dtype must be `dtype`).

    Raises:
      ValueError: no dtype, a dtype other than flat_values_spec's, no ragged_rank with
        an unknown rank, or ragged_rank >= rank.
      TypeError: ragged_rank is not an int.
    """

    def __init__(self, shape=None, dtype=_dt.float32, ragged_rank: Optional[int] = None,
                 row_splits_dtype=_dt.int64, flat_values_spec=None):
        self._shape = as_shape(shape)
        self._row_splits_dtype = _dt.as_dtype(row_splits_dtype)
        if flat_values_spec is not None:
            if dtype is None:
                dtype = flat_values_spec.dtype
            elif _dt.as_dtype(dtype) != flat_values_spec.dtype:
                raise ValueError("dtype must be the same as flat_values_spec.dtype")
        elif dtype is None:
            raise ValueError("At least one of dtype or flat_values_spec must be provided")
        self._dtype = _dt.as_dtype(dtype)
        self._flat_values_spec = flat_values_spec
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if not isinstance(ragged_rank, int):
            raise TypeError("Argument `ragged_rank` must be an int. Received %s."
                            % (ragged_rank,))
        if rank is not None and ragged_rank >= rank:
            raise ValueError("Argument `ragged_rank` (%d) must be less than rank (%d)."
                             % (ragged_rank, rank))
        self._ragged_rank = ragged_rank

    dtype = property(lambda self: self._dtype, doc="The dtype of the values.")
    shape = property(lambda self: self._shape, doc="The static shape.")
    ragged_rank = property(lambda self: self._ragged_rank,
                           doc="The number of ragged dimensions.")
    row_splits_dtype = property(lambda self: self._row_splits_dtype,
                                doc="The dtype of the row_splits.")
    flat_values_spec = property(lambda self: self._flat_values_spec,
                                doc="The type of flat_values, or None.")
    value_type = property(lambda self: RaggedTensor, doc="RaggedTensor.")

    @classmethod
    def from_value(cls, value) -> "RaggedTensorSpec":
        """The spec of a RaggedTensor or tf.ragged.RaggedTensorValue."""
        return cls(value.shape, _dt.as_dtype(value.values.dtype), value.ragged_rank,
                   _dt.as_dtype(value.row_splits.dtype))

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether `spec_or_value` (a spec, or a value tf.type_spec_from_value takes) is
        a RaggedTensorSpec of this dtype, ragged rank and row_splits dtype and a shape
        compatible with this shape; with ragged_rank 0, a tf.TensorSpec or Tensor of
        such a shape and dtype is too (TF's).

        Returns:
          A Python bool.
        """
        if self._ragged_rank == 0 and self._flat_values_spec is None and \
                isinstance(spec_or_value, (Tensor, TensorSpec)):
            return TensorSpec(self._shape, self._dtype).is_compatible_with(spec_or_value)
        return super().is_compatible_with(spec_or_value)

    def _serialize(self) -> tuple:
        head = (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype)
        return head if self._flat_values_spec is None else head + (self._flat_values_spec,)

    def _batch(self, batch_size) -> "RaggedTensorSpec":
        """The spec of `batch_size` such values stacked: one more ragged dimension.

        Raises:
          ValueError: the spec has a flat_values_spec (TF's).
        """
        if self._flat_values_spec is not None:
            raise ValueError("Customized value_type is not supported.")
        return RaggedTensorSpec(TensorShape([batch_size]).concatenate(self._shape),
                                self._dtype, self._ragged_rank + 1,
                                self._row_splits_dtype)


register_converter(RaggedTensor, RaggedTensorSpec.from_value)
register_converter(RaggedTensorValue, RaggedTensorSpec.from_value)
