"""embedding_lookup (TF1 `tf.nn.embedding_lookup`) for unsharded parameters.

For a Variable the rows are read with ResourceGather, whose gradient is an IndexedSlices
w.r.t. the variable's handle, so optimizers update only the looked-up rows (see the
copy-on-write / sole-owner rule in resource_variable_ops).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array import array_ops
from tensorweave.ops.indexing import indexing_gather, indexing_select
from tensorweave.ops.math import math_binary, math_unary, reduction_ops


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


@tf_export("nn.embedding_lookup")
def embedding_lookup(params, ids, partition_strategy: str = "mod", name: Optional[str] = None,
                     validate_indices: bool = True, max_norm=None):
    """Looks up the rows `ids` of the embedding table `params` (TF1).

    Args:
      params: a Variable or Tensor of shape [vocab, ...], or a list holding exactly one
        (sharded tables are not supported).
      ids: int32/int64 Tensor of row indices, any shape.
      partition_strategy: "mod" or "div"; only matters for sharded tables.
      name: name scope of the ops.
      validate_indices: accepted (indices are always checked on CPU).
      max_norm: if set, each embedding is scaled down to L2 norm at most this.

    Returns:
      A Tensor of shape `ids.shape + params.shape[1:]`.

    Raises:
      ValueError: no params, a bad partition strategy, or more than one shard.
      InvalidArgumentError (at run time): an id is out of range.
    """
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.state.variables import Variable
    if partition_strategy not in ("mod", "div"):
        raise ValueError("Unrecognized partition strategy: " + partition_strategy)
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Need at least one param")
        if len(params) > 1:
            raise ValueError("embedding_lookup over %d sharded params is not supported by "
                             "tensorweave yet; pass a single Variable or Tensor."
                             % len(params))
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
