"""DynamicRaggedShape: what tf.shape returns for a RaggedTensor (TF 2.x, also through
tensorflow.compat.v1 in graph mode).

The shape of a RaggedTensor is its row partitions plus the dense shape of its
flat_values. TF1 programs mostly read a uniform dimension from it (`tf.shape(rt)[0]`,
the batch size); indexing a ragged dimension is a ValueError, as in TF. Like TF's, the
object is not a Tensor: Session.run and convert_to_tensor refuse it.
"""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor, \
    register_tensor_conversion_function
from tensorweave.framework.shapes import dimension_value
from tensorweave.ops.array import array_ops
from tensorweave.ops.math.math_ops import cast
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor, \
    nested_uniform_row_lengths


class DynamicRaggedShape:
    """The shape of a RaggedTensor: its row_splits (cast to `dtype`) and the shape of
    its flat_values (TF `tf.experimental.DynamicRaggedShape`, the parts TF1 programs
    use)."""

    def __init__(self, rt: RaggedTensor, dtype=_dt.int32):
        self._dtype = _dt.as_dtype(dtype)
        self._static = rt.shape
        self._ragged_rank = rt.ragged_rank
        self._row_splits = tuple(cast(s, self._dtype) for s in rt.nested_row_splits)
        # per row partition: its uniform_row_length, None where the rows differ
        self._uniform_lengths = nested_uniform_row_lengths(rt)
        self._inner_shape = array_ops.shape(rt.flat_values, out_type=self._dtype)

    dtype = property(lambda self: self._dtype, doc="The dtype of the dimensions.")
    rank = property(lambda self: self._static.rank, doc="The number of dimensions.")
    num_row_partitions = property(lambda self: self._ragged_rank,
                                  doc="The number of ragged row partitions.")
    inner_shape = property(lambda self: self._inner_shape,
                           doc="The shape of flat_values, a 1-D Tensor.")

    def static_lengths(self) -> List[Optional[int]]:
        """The statically known size of each dimension, None where unknown or ragged."""
        return self._static.as_list()

    def __getitem__(self, index: int) -> Tensor:
        """The size of uniform dimension `index`, a scalar Tensor.

        Raises:
          ValueError: the dimension is ragged (its size differs from row to row).
          IndexError: index out of range.
        """
        if not isinstance(index, int):
            raise TypeError("DynamicRaggedShape indices must be Python ints; got %r"
                            % (index,))
        rank = self.rank
        if index >= rank:
            raise IndexError("Index is too big: %d>=%d" % (index, rank))
        if index < -rank:
            raise IndexError("Index is too small: %d<%d" % (index, -rank))
        index = index + rank if index < 0 else index
        static = dimension_value(self._static[index])
        if static is not None:
            return convert_to_tensor(static, dtype=self._dtype)
        if 1 <= index <= self._ragged_rank:
            length = self._uniform_lengths[index - 1]
            if length is None:
                raise ValueError("Index %d is not uniform" % index)
            return cast(length, self._dtype)
        if index == 0:
            return array_ops.size(self._row_splits[0], out_type=self._dtype) - 1
        return self._inner_shape[index - self._ragged_rank]

    def __len__(self):
        raise TypeError("object of type 'DynamicRaggedShape' has no len()")

    def __repr__(self) -> str:
        return "<DynamicRaggedShape lengths=%s num_row_partitions=%d>" % (
            self.static_lengths(), self._ragged_rank)


def ragged_shape(input, name: Optional[str] = None,  # noqa: A002
                 out_type=None) -> DynamicRaggedShape:
    """tf.shape of a RaggedTensor (out_type int32 by default, as TF1's tf.shape)."""
    with name_scope(name, "RaggedShape", [input]):
        return DynamicRaggedShape(input, _dt.int32 if out_type is None else out_type)


def _refuse_conversion(value, dtype=None, name=None, as_ref=False):
    raise TypeError("Failed to convert elements of %r to Tensor. Consider casting "
                    "elements to a supported type." % (value,))


register_tensor_conversion_function(DynamicRaggedShape, _refuse_conversion)
