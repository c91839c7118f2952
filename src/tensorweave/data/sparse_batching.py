"""tf.data.experimental.dense_to_sparse_batch (Dataset.sparse_batch): batches of dense
elements of different shapes as one SparseTensor each.

A batch of `batch_size` elements is a SparseTensor of dense shape `[batch, *row_shape]`
holding every value of each element at its position; a dimension `row_shape` leaves
unknown (None) is the batch's largest there. As TF's, each element is checked when it
is read: one of another rank than `row_shape` (InvalidArgumentError) or larger than it
(DataLossError) fails that get_next, the elements read for its batch are dropped, and
the pass goes on with a new batch after it; so does an error from the input.
"""
from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.registry import kernel
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data.dataset_ops import Dataset, SparseSpec
from tensorweave.data.pipeline import DatasetValue, ElementError, SparseComponent, read

_kernels.dataset_op("DenseToSparseBatchDataset", ["input_dataset: variant",
                                                  "batch_size: int64", "row_shape: int64"])


@tf_export("data.experimental.dense_to_sparse_batch")
def dense_to_sparse_batch(batch_size, row_shape) -> Callable:
    """Batches of `batch_size` elements as one SparseTensor of dense shape
    `[batch, *row_shape]` (see the module docstring).

    Args:
      batch_size: the int64 number of elements in a batch.
      row_shape: a tf.TensorShape (or list) of the elements' dense shape; a None
        dimension is each batch's largest.

    Returns:
      A transformation for Dataset.apply.

    Raises:
      TypeError: a dataset of more than one component, or a `row_shape` that is no
        shape.
      ValueError: a `row_shape` of unknown rank or of a negative dimension.
    """
    def apply(ds: Dataset) -> Dataset:
        if len(ds._types) != 1 or isinstance(ds._structure, (tuple, list, dict)):
            raise TypeError("`dense_to_sparse_batch` requires an input dataset whose "
                            "elements have a single component, but the given dataset has "
                            "the following component types: (%s)."
                            % ", ".join(repr(t) for t in ds._types))
        row = as_shape(row_shape)
        if row.ndims is None:
            raise ValueError("Cannot convert a partially known TensorShape <unknown> to a "
                             "Tensor.")
        spec = SparseSpec(ds._types[0], TensorShape([None]).concatenate(row))
        dims = [-1 if d is None else d for d in row.as_list()]
        return ds._derive("DenseToSparseBatchDataset", [
            convert_to_tensor(batch_size, _dt.int64, name="batch_size"),
            convert_to_tensor(dims, _dt.int64, name="row_shape")],
            structure=spec, types=[_dt.variant], shapes=[TensorShape([])])
    return apply


class DenseToSparseBatch(DatasetValue):
    """The batches of `size` elements as SparseComponents of dense shape
    `[batch, *row]` (a -1 in `row`: the batch's largest)."""

    def __init__(self, source, size: int, row: List[int], op):
        self.source, self.size, self.row, self.op = source, size, row, op

    def _elements(self, ctx, with_errors: bool):
        batch = []
        for e in read(self.source, ctx, with_errors):
            failed = e if isinstance(e, ElementError) else None
            if failed is None:
                value = np.asarray(e[0])
                problem = self._problem(value)
                if problem is None:
                    batch.append(value)
                elif not with_errors:
                    raise problem
                else:
                    failed = ElementError(problem)
            if failed is not None:  # its get_next fails; a new batch starts after it
                batch = []
                yield failed
            elif len(batch) == self.size:
                yield [self._sparse(batch)]
                batch = []
        if batch:
            yield [self._sparse(batch)]

    def _problem(self, value: np.ndarray) -> Optional[errors.OpError]:
        """TF's error for an element that does not fit the row shape, or None."""
        if value.ndim != len(self.row):
            return errors.InvalidArgumentError(
                None, self.op, "Input element had shape (%s) that is incompatible with the "
                "row shape (%s)." % (_dims_text(value.shape), _dims_text(self.row)))
        if any(0 <= d < n for n, d in zip(value.shape, self.row)):
            return errors.DataLossError(
                None, self.op, "Input element had shape (%s) that is larger than the row "
                "shape (%s)." % (_dims_text(value.shape), _dims_text(self.row)))
        return None

    def _sparse(self, batch) -> SparseComponent:
        shape = [d if d >= 0 else max(a.shape[k] for a in batch)
                 for k, d in enumerate(self.row)]
        indices = [np.concatenate([np.full((a.size, 1), b, np.int64),
                                   np.argwhere(np.ones(a.shape, bool))], axis=1)
                   for b, a in enumerate(batch)]
        return SparseComponent(np.concatenate(indices).reshape(-1, len(shape) + 1),
                               np.concatenate([a.reshape(-1) for a in batch]),
                               [len(batch)] + shape)


def _dims_text(dims) -> str:
    """A shape as TF's messages write it: [2,3], ? for an unknown dimension."""
    return "[%s]" % ",".join("?" if d < 0 else str(d) for d in dims)


@kernel("DenseToSparseBatchDataset")
def _dense_to_sparse_batch_kernel(ctx, d, batch_size, row_shape):
    size = int(np.asarray(batch_size))
    if size <= 0:
        raise errors.InvalidArgumentError(None, ctx.op, "Batch size must be greater than "
                                          "zero.")
    return DenseToSparseBatch(d, size, [int(n) for n in np.asarray(row_shape).reshape(-1)],
                              ctx.op)
