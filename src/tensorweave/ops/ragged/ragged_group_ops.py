"""tf.ragged ops that regroup values: stack_dynamic_partitions, cross, cross_hashed.

Both are compositions: a stable sort by partition id, and the SparseTensor feature
crosses of tf.sparse read back as rows.
"""
from __future__ import annotations

from typing import Optional, Sequence

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.array.array_join_ops import concat
from tensorweave.ops.array.array_ops import reshape, shape as shape_op
from tensorweave.ops.array.array_sort_ops import argsort
from tensorweave.ops.array.array_fill_ops import ones_like
from tensorweave.ops.control_flow.structure import identity
from tensorweave.ops.debug import check_ops
from tensorweave.ops.math.segment_ops import unsorted_segment_sum
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.ragged_array_ops import aligned, gather_rows
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor, \
    convert_to_tensor_or_ragged_tensor


@tf_export("ragged.stack_dynamic_partitions")
def stack_dynamic_partitions(data, partitions, num_partitions: int,
                             name: Optional[str] = None) -> RaggedTensor:
    """Row p holds the items of `data` whose partition is p, in their order (TF1
    `tf.ragged.stack_dynamic_partitions`).

    Args:
      data: a Tensor or RaggedTensor.
      partitions: int32/int64 partition ids shaped as a prefix of data's shape (a
        RaggedTensor with data's row partition for a ragged prefix).
      num_partitions: how many rows the result has.

    Raises:
      ValueError: partitions' shape is not a prefix of data's.
      InvalidArgumentError (run time): a partition id outside [0, num_partitions).
    """
    with name_scope(name, "SegmentStack", [data, partitions]):
        data = convert_to_tensor_or_ragged_tensor(data, name="data")
        partitions = convert_to_tensor_or_ragged_tensor(partitions, name="partitions")
        if isinstance(partitions, RaggedTensor):
            if not isinstance(data, RaggedTensor):
                raise ValueError("partitions is a RaggedTensor but data is not")
            data, partitions = _ragged_prefix(data, partitions)
        else:
            data, partitions = _dense_prefix(data, partitions)
        count = convert_to_tensor(num_partitions, dtype=partitions.dtype,
                                  name="num_partitions")
        checks = [check_ops.assert_non_negative(partitions,
                                                message="partitions must be non-negative."),
                  check_ops.assert_less(partitions, count,
                                        message="partitions must be less than "
                                                "num_partitions")]
        with control_dependencies(checks):
            partitions = identity(partitions)
        order = argsort(partitions, stable=True)
        sizes = unsorted_segment_sum(ones_like(partitions, dtype=_dt.int64), partitions,
                                     count)
        grouped = gather_rows(data, order)
        return RaggedTensor(grouped, rp.lengths_to_splits(sizes, None, "", False),
                            internal=True)


def _ragged_prefix(data: RaggedTensor, partitions: RaggedTensor):
    """The items partitions names, flattened, when partitions is ragged like data."""
    depth = partitions.ragged_rank
    if partitions.flat_values.shape.rank != 1 or data.ragged_rank < depth:
        raise ValueError("partitions must have the ragged structure of a prefix of data")
    outer = RaggedTensor.from_nested_row_splits(
        partitions.flat_values * 0, data.nested_row_splits[:depth], validate=False)
    checked, _ = aligned([outer, partitions])
    items = data
    for _ in range(depth):
        items = items.values
    with control_dependencies([checked.flat_values]):
        return items, identity(partitions.flat_values)


def _dense_prefix(data, partitions: Tensor):
    """data's items and partitions, both flattened over the partitions' dims."""
    rank = partitions.shape.rank
    if rank is None:
        raise ValueError("partitions must have a known rank")
    if rank == 1 or isinstance(data, RaggedTensor):
        if rank != 1:
            raise ValueError("partitions of a RaggedTensor must be a vector or a "
                             "RaggedTensor")
        data.shape[:1].assert_is_compatible_with(partitions.shape)
        return data, partitions
    data.shape[:rank].assert_is_compatible_with(partitions.shape)
    items = reshape(data, concat([[-1], shape_op(data)[rank:]], 0))
    return items, reshape(partitions, [-1])


def _as_sparse_input(value, what: str):
    """A rank-2 cross input as a SparseTensor: all inputs sparse keep their order in
    the crosses (tf.sparse.cross would put dense inputs last)."""
    if isinstance(value, SparseTensor):
        return value
    value = convert_to_tensor_or_ragged_tensor(value)
    if value.shape.rank is not None and value.shape.rank != 2:
        raise ValueError("%s only supports inputs with rank=2" % what)
    if isinstance(value, RaggedTensor):
        if value.ragged_rank != 1:
            raise ValueError("%s only supports inputs with rank=2" % what)
        return value.to_sparse()
    return RaggedTensor.from_tensor(value).to_sparse()


def _cross(inputs: Sequence, what: str, build, name, scope) -> RaggedTensor:
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    with name_scope(name, scope, []):
        crossed = build([_as_sparse_input(x, what) for x in inputs])
        rowids = crossed.indices[:, 0]
        return RaggedTensor.from_value_rowids(crossed.values, rowids,
                                              nrows=crossed.dense_shape[0], validate=False)


@tf_export("ragged.cross")
def cross(inputs: Sequence, name: Optional[str] = None) -> RaggedTensor:
    """String feature crosses of rank-2 Tensors, SparseTensors and RaggedTensors, row by
    row, as a RaggedTensor (TF1 `tf.ragged.cross`; see tf.sparse.cross).

    Raises:
      ValueError: an input not of rank 2.
    """
    from tensorweave.ops.sparse.sparse_cross_ops import sparse_cross
    return _cross(inputs, "tf.ragged.cross", lambda xs: sparse_cross(xs), name,
                  "RaggedCross")


@tf_export("ragged.cross_hashed")
def cross_hashed(inputs: Sequence, num_buckets: int = 0, hash_key=None,
                 name: Optional[str] = None) -> RaggedTensor:
    """Hashed feature crosses (int64, modulo num_buckets when > 0) as a RaggedTensor
    (TF1 `tf.ragged.cross_hashed`; see tf.sparse.cross_hashed)."""
    from tensorweave.ops.sparse.sparse_cross_ops import sparse_cross_hashed
    return _cross(inputs, "tf.ragged.cross",
                  lambda xs: sparse_cross_hashed(xs, num_buckets=num_buckets,
                                                 hash_key=hash_key),
                  name, "RaggedCross")
