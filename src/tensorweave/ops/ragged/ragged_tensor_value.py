"""RaggedTensorValue: the value of a RaggedTensor as `Session.run` returns it.

Like SparseTensorValue it holds NumPy arrays: `values` (an array or a nested
RaggedTensorValue) and `row_splits`. It is also what a ragged placeholder is fed with.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.api_export import tf_export


class NestedRows:
    """What a ragged value (a RaggedTensor, or its fetched RaggedTensorValue) derives
    from its nesting: `_values` is another of its kind or the dense innermost values,
    `_row_splits` the rows' boundaries."""

    @property
    def flat_values(self):
        """The innermost values (a dense Tensor, or an array for a value)."""
        values = self._values
        while isinstance(values, NestedRows):
            values = values._values
        return values

    @property
    def nested_row_splits(self) -> tuple:
        """The row_splits of each ragged dimension, outermost first."""
        out, rt = [], self
        while isinstance(rt, NestedRows):
            out.append(rt._row_splits)
            rt = rt._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions."""
        return len(self.nested_row_splits)


@tf_export("ragged.RaggedTensorValue")
class RaggedTensorValue(NestedRows):
    """A RaggedTensor's value: NumPy `values` split into rows by `row_splits` (TF1).

    Args:
      values: a NumPy array or a RaggedTensorValue: the concatenated rows.
      row_splits: a 1-D int32/int64 NumPy array; row i is values[splits[i]:splits[i+1]].

    Raises:
      TypeError: row_splits is not an integer NumPy vector, or values is neither a
        NumPy array nor a RaggedTensorValue.
    """

    def __init__(self, values, row_splits):
        if not (isinstance(row_splits, (np.ndarray, np.generic))
                and row_splits.dtype in (np.int64, np.int32) and row_splits.ndim == 1):
            raise TypeError("row_splits must be a 1D int32 or int64 numpy array")
        if not isinstance(values, (np.ndarray, np.generic, RaggedTensorValue)):
            raise TypeError("values must be a numpy array or a RaggedTensorValue")
        if isinstance(values, RaggedTensorValue) and \
                row_splits.dtype != values.row_splits.dtype:
            raise ValueError("row_splits and values.row_splits must have the same dtype")
        self._values = values
        self._row_splits = row_splits

    values = property(lambda self: self._values, doc="The concatenated rows.")
    row_splits = property(lambda self: self._row_splits, doc="The row boundaries.")
    row_splits_dtype = property(lambda self: self._row_splits.dtype)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the values."""
        return self._values.dtype

    @property
    def shape(self) -> tuple:
        """(nrows, None, ...inner dims): None for each ragged dimension."""
        return (self._row_splits.shape[0] - 1,) + (None,) + self._values.shape[1:]

    def to_list(self) -> list:
        """The rows as nested Python lists of Python scalars."""
        values = self._values.to_list() if isinstance(self._values, RaggedTensorValue) \
            else self._values.tolist()
        splits = self._row_splits.tolist()
        return [values[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]

    def __str__(self):
        return "<tf.RaggedTensorValue %s>" % self.to_list()

    def __repr__(self):
        return "tf.RaggedTensorValue(values=%r, row_splits=%r)" % (self._values,
                                                                  self._row_splits)
