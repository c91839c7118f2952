"""embedding_lookup (TF1 `tf.nn.embedding_lookup`) over one table or a list of shards.

For a Variable the rows are read with ResourceGather, whose gradient is an IndexedSlices
w.r.t. the variable's handle, so optimizers update only the looked-up rows (see the
copy-on-write / sole-owner rule in resource_variable_ops).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array import array_join_ops, array_ops
from tensorweave.ops.indexing import indexing_gather, indexing_select
from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops


def _clip_rows(x, ids, max_norm):
    """Scales each embedding of `x` (the trailing dims after ids' rank) down to L2 norm
    at most `max_norm` (TF's `_clip`, via clip_by_norm)."""
    ids_rank, x_rank = ids.shape.ndims, x.shape.ndims
    if ids_rank is None or x_rank is None:
        raise ValueError("embedding_lookup with max_norm needs ids and params of known rank")
    axes = list(range(ids_rank, x_rank))
    if not axes:
        return x
    l2sum = reduction_ops.reduce_sum(x * x, axes, keepdims=True)
    positive = l2sum > 0
    # sqrt only where the sum is positive: its gradient at 0 would be inf
    safe = indexing_select.where(positive, l2sum, array_ops.ones_like(l2sum))
    l2norm = indexing_select.where(positive, math_unary.sqrt(safe), l2sum)
    max_norm = convert_to_tensor(max_norm, dtype=x.dtype)
    return x * max_norm / math_binary.maximum(l2norm, max_norm)


def _gather_rows(params, ids):
    from tensorweave.ops.state.variables import Variable
    with _graph.colocate_with(params.op):
        if isinstance(params, Variable):
            return params.sparse_read(ids, name="Gather")
        return indexing_gather.gather(convert_to_tensor(params, name="params"), ids,
                                      name="Gather")


def _shard_ids(params, flat_ids, partition_strategy: str):
    """(shard of each id, row of each id inside its shard), as TF1 assigns them."""
    n = len(params)
    if partition_strategy == "mod":
        return math_binary.floormod(flat_ids, n), math_binary.floordiv(flat_ids, n)
    sizes = [p.shape[0].value if p.shape.ndims else None for p in params]
    if all(s is not None for s in sizes):
        total = convert_to_tensor(sum(sizes), dtype=flat_ids.dtype)
    else:
        total = reduction_ops.reduce_sum(math_ops.cast(array_join_ops.stack(
            [array_ops.shape(p)[0] for p in params]), flat_ids.dtype))
    per_shard = math_binary.floordiv(total, n)
    extras = math_binary.floormod(total, n)
    shard = math_binary.maximum(math_binary.floordiv(flat_ids, per_shard + 1),
                                math_binary.floordiv(flat_ids - extras, per_shard))
    in_extras = math_binary.less(shard, extras)
    row = indexing_select.where(in_extras, math_binary.floormod(flat_ids, per_shard + 1),
                                math_binary.floormod(flat_ids - extras, per_shard))
    return shard, row


def _sharded_lookup(params, ids, partition_strategy: str, max_norm):
    """Looks `ids` up in a table split into the shards `params` (TF1's sharded path:
    dynamic_partition the ids by shard, gather in each shard, dynamic_stitch back)."""
    from tensorweave.ops.math import segment_ops
    from tensorweave.ops.state.variables import Variable
    params = [p if isinstance(p, Variable) else convert_to_tensor(p, name="params")
              for p in params]
    flat_ids = array_ops.reshape(ids, [-1])
    positions = math_ops.range(array_ops.size(flat_ids))
    shard, row = _shard_ids(params, flat_ids, partition_strategy)
    shard = math_ops.cast(shard, _dt.int32)
    rows = segment_ops.dynamic_partition(row, shard, len(params))
    where = segment_ops.dynamic_partition(positions, shard, len(params))
    parts = [_gather_rows(p, r) for p, r in zip(params, rows)]
    if max_norm is not None:
        parts = [_clip_rows(x, r, max_norm) for x, r in zip(parts, rows)]
    merged = segment_ops.dynamic_stitch(where, parts)
    element = params[0].shape[1:] if params[0].shape.ndims is not None else None
    if element is not None and element.is_fully_defined():
        tail = convert_to_tensor(element.as_list(), dtype=_dt.int32)
    else:
        tail = array_ops.shape(params[0])[1:]
    result = array_ops.reshape(merged, array_join_ops.concat([array_ops.shape(ids), tail], 0))
    if element is not None:
        result.set_shape(ids.shape.concatenate(element))
    return result


@tf_export("nn.embedding_lookup")
def embedding_lookup(params, ids, partition_strategy: str = "mod", name: Optional[str] = None,
                     validate_indices: bool = True, max_norm=None):
    """Looks up the rows `ids` of the embedding table `params` (TF1).

    Args:
      params: a Variable or Tensor of shape [vocab, ...], or a list of them: the shards
        of one table split along dimension 0 by `partition_strategy` (a
        PartitionedVariable counts as the list of its shards). Each shard's rows are
        gathered on the shard's device (colocated with it).
      ids: int32/int64 Tensor of row indices, any shape.
      partition_strategy: for sharded tables: "mod" puts id `i` in shard `i % n` (row
        `i // n`); "div" gives each shard a contiguous range of ids, the first
        `vocab % n` shards one id more than the others.
      name: name scope of the ops.
      validate_indices: accepted (indices are always checked on CPU).
      max_norm: if set, each embedding is scaled down to L2 norm at most this.

    Returns:
      A Tensor of shape `ids.shape + params.shape[1:]`.

    Raises:
      ValueError: no params or a bad partition strategy.
      InvalidArgumentError (at run time): an id is out of range.
    """
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.state.partitioned_variables import PartitionedVariable
    from tensorweave.ops.state.variables import Variable
    if partition_strategy not in ("mod", "div"):
        raise ValueError("Unrecognized partition strategy: " + partition_strategy)
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, PartitionedVariable):
        params = list(params)         # its shards, each read where it lives
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Need at least one param")
        if len(params) > 1:
            with _graph.name_scope(name, "embedding_lookup", list(params) + [ids]):
                return _sharded_lookup(list(params), convert_to_tensor(ids, name="ids"),
                                       partition_strategy, max_norm)
        params = params[0]
    with _graph.name_scope(name, "embedding_lookup", [params, ids]):
        ids = convert_to_tensor(ids, name="ids")
        if isinstance(params, Variable):
            with _graph.colocate_with(params.op):
                result = params.sparse_read(ids, name="Gather")
        else:
            params = convert_to_tensor(params, name="params")
            with _graph.colocate_with(params.op):
                result = indexing_gather.gather(params, ids, name="Gather")
        if max_norm is not None:
            result = _clip_rows(result, ids, max_norm)
        return structure.identity(result)
