"""`tf.batch_gather` (TF1, deprecated): a gather per batch entry, written as a gather
with `batch_dims = rank(indices) - 1` (it needs no op of its own)."""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.indexing import indexing_gather


@tf_export("batch_gather")
def batch_gather(params, indices, name: Optional[str] = None) -> Tensor:
    """Gathers from each batch entry of `params` along its axis rank(indices) - 1:
    result[i0, ..., ik-1, j] = params[i0, ..., ik-1, indices[i0, ..., ik-1, j]].

    Args:
      params: a Tensor of rank >= rank(indices).
      indices: an int32/int64 Tensor of known rank, whose leading dimensions match
        those of `params`.
      name: name scope.

    Returns:
      A Tensor of the type of `params`.

    Raises:
      ValueError: `indices` has unknown rank.
    """
    with name_scope(name, "BatchGather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        if indices.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        batch_dims = indices.shape.ndims - 1
        out = indexing_gather.gather(params, indices, axis=batch_dims,
                                     batch_dims=batch_dims)
        # TF1's batch_gather also takes the batch dims it knows from `indices`
        if out.shape.ndims is not None:
            out.set_shape(indices.shape[:batch_dims].concatenate(
                [None] * (out.shape.ndims - batch_dims)))
        return out
