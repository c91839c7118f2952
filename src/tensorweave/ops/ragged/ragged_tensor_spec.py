"""tf.RaggedTensorSpec: the description of a RaggedTensor's type (dtype, shape, ragged
rank, row_splits dtype) that TF1 programs pass to tf.map_fn as `dtype` or
`fn_output_signature` when `fn` returns ragged rows.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import as_shape
from tensorweave.framework.tensor_spec import TypeSpec, shape_repr
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor


@tf_export("RaggedTensorSpec")
class RaggedTensorSpec(TypeSpec):
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
    def from_value(cls, value: RaggedTensor) -> "RaggedTensorSpec":
        """The spec of a RaggedTensor."""
        return cls(value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype)

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether `spec_or_value` (a RaggedTensorSpec or a RaggedTensor) has this spec's
        dtype, ragged rank and row_splits dtype and a shape compatible with its shape.

        Returns:
          A Python bool (False for anything of another kind).
        """
        other = self.from_value(spec_or_value) if isinstance(spec_or_value, RaggedTensor) \
            else spec_or_value
        return type(other) is type(self) and self._dtype == other._dtype and \
            (self._ragged_rank, self._row_splits_dtype) == \
            (other._ragged_rank, other._row_splits_dtype) and \
            self._shape.is_compatible_with(other._shape)

    def _key(self):
        return (self._shape.as_list() if self._shape.rank is not None else None,
                self._dtype, self._ragged_rank, self._row_splits_dtype)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        return "RaggedTensorSpec(%s, %r, %d, %r)" % (
            shape_repr(self._shape), self._dtype, self._ragged_rank,
            self._row_splits_dtype)
