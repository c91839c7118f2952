"""tf.data.experimental.dense_to_ragged_batch and Dataset.ragged_batch: batches whose
dense components of varying shape become RaggedTensors.

As TF: a dense component whose shape is known in rank but not whole becomes a ragged
component of ragged rank the last unknown dimension's index (a vector of varying length:
ragged rank 0), so that its batch is a RaggedTensor of one more ragged dimension; a
component of fully known (or unknown) shape, and a ragged or sparse one, batch as
`Dataset.batch` batches them.
"""
from __future__ import annotations

from typing import Callable, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import ragged_elements
from tensorweave.data.ragged_elements import RaggedSpec


def _ragged_leaf(leaf, dtype, shape: TensorShape, row_splits_dtype) -> Optional[RaggedSpec]:
    """The RaggedSpec a dense component of `shape` becomes, or None if it stays."""
    if leaf != 0 or dtype == _dt.variant or shape.ndims is None or \
            shape.is_fully_defined():
        return None
    ragged_rank = max(k for k, d in enumerate(shape.as_list()) if d is None)
    return RaggedSpec(dtype, shape, ragged_rank, row_splits_dtype)


def _as_ragged(value, spec: Optional[RaggedSpec]):
    """The variant component of dense `value` as `spec`'s ragged component (or `value`
    where `spec` is None)."""
    if spec is None:
        return value
    if spec.ragged_rank:
        from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
        value = RaggedTensor.from_tensor(value, ragged_rank=spec.ragged_rank)
        value = value.with_row_splits_dtype(spec.row_splits_dtype)
    return ragged_elements.encode(value, spec)


def ragged_batch(ds: "_ds.Dataset", batch_size, drop_remainder: bool = False,
                 row_splits_dtype=_dt.int64) -> "_ds.Dataset":
    """`ds` batched, its dense components of varying shape as RaggedTensors (see the
    module docstring).

    Raises:
      ValueError: row_splits_dtype is neither int32 nor int64.
    """
    row_splits_dtype = _dt.as_dtype(row_splits_dtype)
    if row_splits_dtype not in (_dt.int32, _dt.int64):
        raise ValueError("dtype must be int32 or int64")
    leaves = nest.flatten(ds._structure)
    specs = [_ragged_leaf(m, t, s, row_splits_dtype)
             for m, t, s in zip(leaves, ds._types, ds._shapes)]
    if any(specs):
        structure = ds._structure

        def to_ragged(*args):
            element = args if type(structure) is tuple else args[0]
            return nest.pack_sequence_as(structure, [
                _as_ragged(x, m) for x, m in zip(nest.flatten(element), specs)])
        mapped = ds.map(to_ragged)
        respec = nest.pack_sequence_as(structure, [
            m or leaf for m, leaf in zip(specs, nest.flatten(mapped._structure))])
        ds = _ds.Dataset(mapped._variant, respec, mapped._types, mapped._shapes, [mapped])
    return ds.batch(batch_size, drop_remainder)


@tf_export("data.experimental.dense_to_ragged_batch")
def dense_to_ragged_batch(batch_size, drop_remainder: bool = False,
                          row_splits_dtype=_dt.int64) -> Callable:
    """A transformation for `Dataset.apply`: `ds.ragged_batch(...)` (batches whose dense
    components of varying shape are RaggedTensors of one more ragged dimension).

    Args:
      batch_size: the number of elements of a batch.
      drop_remainder: drop a last, shorter batch.
      row_splits_dtype: int64 or int32, the row splits' dtype of the ragged batches.
    """
    return lambda ds: ragged_batch(ds, batch_size, drop_remainder, row_splits_dtype)
