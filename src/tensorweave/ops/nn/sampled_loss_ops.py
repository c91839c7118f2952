"""Sampled losses (nce_loss, sampled_softmax_loss) and sparse embedding lookups.

Plain builders over embedding_lookup, the candidate samplers, matmul and the cross
entropies (no kernels, no gradients of their own). Both losses score the true classes
and a sample of other classes: `_compute_sampled_logits` builds `[batch, num_true +
num_sampled]` logits and their labels, as TF1 does, so the gradient reaches the weights
only through the looked-up rows (IndexedSlices for variables).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
from tensorweave.ops.control_flow.structure import stop_gradient
from tensorweave.ops.indexing import indexing_gather, indexing_ops
from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops
from tensorweave.ops.nn.embedding_ops import embedding_lookup


def _as_shard_list(weights) -> list:
    """A weight table given as one tensor/variable, a list of shards or an iterable of
    shards (a partitioned variable), as a list."""
    if isinstance(weights, (list, tuple)):
        return list(weights)
    if hasattr(weights, "_get_variable_list"):
        return list(weights._get_variable_list())
    return [weights]


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled: int,
                            num_classes: int, num_true: int, sampled_values,
                            subtract_log_q: bool, remove_accidental_hits: bool,
                            partition_strategy: str, name: Optional[str], seed=None):
    """Logits `[batch, num_true + num_sampled]` of the true and sampled classes, and
    labels (`1 / num_true` for the true ones, 0 for the sampled ones)."""
    from tensorweave.ops.math.matmul_ops import matmul
    from tensorweave.ops.random import candidate_sampling_ops as sampling
    from tensorweave.ops.sparse.sparse_ops import sparse_to_dense
    weights = _as_shard_list(weights)
    if hasattr(biases, "_get_variable_list"):       # a partitioned variable
        biases = list(biases._get_variable_list())
    with _graph.name_scope(name, "compute_sampled_logits",
                           weights + _as_shard_list(biases) + [inputs, labels]):
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype != _dt.int64:
            labels = math_ops.cast(labels, _dt.int64)
        inputs = convert_to_tensor(inputs, name="inputs")
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = sampling.log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected, sampled_expected = (stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, _dt.int64)
        n_true = array_ops.shape(labels_flat)[0]
        all_ids = array_join_ops.concat([labels_flat, sampled], 0)

        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype != inputs.dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        true_w = indexing_ops.slice(all_w, [0, 0], array_join_ops.stack([n_true, -1]))
        sampled_w = indexing_ops.slice(all_w, array_join_ops.stack([n_true, 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)

        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = indexing_ops.slice(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = indexing_ops.slice(all_b, array_ops.shape(labels_flat), [-1])

        # true logits: the dot product of each input row with its num_true weight rows
        dim = array_ops.shape(true_w)[1:2]
        true_w = array_ops.reshape(true_w, array_join_ops.concat([[-1, num_true], dim], 0))
        dots = math_binary.multiply(array_ops.expand_dims(inputs, 1), true_w)
        true_logits = reduction_ops.reduce_sum(dots, -1)
        true_logits = array_ops.reshape(true_logits, [-1, num_true])
        true_logits += array_ops.reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b

        if remove_accidental_hits:
            hits = sampling.compute_accidental_hits(labels, sampled, num_true=num_true)
            rows = array_ops.reshape(hits.indices, [-1, 1])
            cols = array_ops.reshape(math_ops.cast(hits.ids, _dt.int32), [-1, 1])
            indices = array_join_ops.concat([rows, cols], 1, name="sparse_indices")
            logits_shape = array_join_ops.concat(
                [array_ops.shape(labels)[:1], array_ops.expand_dims(num_sampled, 0)], 0)
            hit_weights = hits.weights
            if sampled_logits.dtype != hit_weights.dtype:
                hit_weights = math_ops.cast(hit_weights, sampled_logits.dtype)
            sampled_logits += sparse_to_dense(indices, logits_shape, hit_weights,
                                              default_value=0.0, validate_indices=False)
        if subtract_log_q:
            true_logits -= math_unary.log(math_ops.cast(true_expected, true_logits.dtype))
            sampled_logits -= math_unary.log(math_ops.cast(sampled_expected,
                                                           sampled_logits.dtype))
        out_logits = array_join_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_join_ops.concat(
            [array_fill_ops.ones_like(true_logits) / num_true,
             array_fill_ops.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


_LOSS_ARGS = """
    Args:
      weights: a Tensor or Variable `[num_classes, dim]`, or a list of shards of it (or a
        partitioned variable), split along dimension 0 by `partition_strategy`.
      biases: a Tensor or Variable `[num_classes]`: the class biases (or a list of
        shards of it, or a partitioned variable, split as `weights`).
      labels: an int64 Tensor `[batch_size, num_true]`: the target classes.
      inputs: a float Tensor `[batch_size, dim]`: the forward activations.
      num_sampled: int, the number of classes sampled per batch.
      num_classes: int, the number of possible classes.
      num_true: int, the number of target classes per example.
      sampled_values: a `(sampled_candidates, true_expected_count,
        sampled_expected_count)` tuple from a candidate sampler; if None,
        `log_uniform_candidate_sampler` with `unique=True` is used.
      remove_accidental_hits: whether to mask sampled classes that equal a target class.
      partition_strategy: "mod" or "div" (see `tf.nn.embedding_lookup`).
      name: name scope of the ops.
"""


@tf_export("nn.nce_loss")
def nce_loss(weights, biases, labels, inputs, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values=None, remove_accidental_hits: bool = False,
             partition_strategy: str = "mod", name: str = "nce_loss") -> Tensor:
    """Noise-contrastive estimation loss: the sum over the true and sampled classes of the
    sigmoid cross entropy of logits corrected by `log(expected_count)`.
    """
    from tensorweave.ops.nn.nn_losses import sigmoid_cross_entropy_with_logits
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
        sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                               name="sampled_losses")
    return reduction_ops.reduce_sum(losses, 1)


@tf_export("nn.sampled_softmax_loss")
def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled: int, num_classes: int,
                         num_true: int = 1, sampled_values=None,
                         remove_accidental_hits: bool = True, partition_strategy: str = "mod",
                         name: str = "sampled_softmax_loss",
                         seed: Optional[int] = None) -> Tensor:
    """Softmax cross entropy over the true and sampled classes only, with logits corrected
    by `log(expected_count)`: a fast estimate of the full softmax loss for training.
    """
    from tensorweave.ops.nn.nn_losses import softmax_cross_entropy_with_logits_v2
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
        sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


nce_loss.__doc__ += _LOSS_ARGS + """
    Returns:
      A `[batch_size]` Tensor of per-example NCE losses.
"""
sampled_softmax_loss.__doc__ += _LOSS_ARGS + """      seed: op-level seed of the default sampler.

    Returns:
      A `[batch_size]` Tensor of per-example sampled softmax losses.
"""


# --- sparse embedding lookups --------------------------------------------------------------
_COMBINERS = ("mean", "sqrtn", "sum")


@tf_export("nn.embedding_lookup_sparse")
def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy: str = "mod",
                            name: Optional[str] = None, combiner: Optional[str] = None,
                            max_norm=None, allow_fast_lookup: bool = False) -> Tensor:
    """Embeddings of sparse ids combined per row: row `i` of the result combines the
    embeddings of the ids in row `i` of `sp_ids`, weighted by `sp_weights`.

    Args:
      params: the embedding table (a Tensor, Variable or list of shards).
      sp_ids: a SparseTensor of int ids, `[batch, ...]`; its first index is the row.
      sp_weights: a SparseTensor of float weights with the indices of `sp_ids`, or None
        for weight 1.
      partition_strategy: "mod" or "div" (see `tf.nn.embedding_lookup`).
      name: name scope of the ops.
      combiner: "sum" (weighted sum), "mean" (weighted mean, the default) or "sqrtn"
        (weighted sum divided by the root of the sum of squared weights).
      max_norm: if set, embeddings are scaled down to L2 norm at most this first.
      allow_fast_lookup: accepted for compatibility; the result is the same.

    Returns:
      A Tensor `[max row id + 1] + params.shape[1:]` (rows without ids are 0).

    Raises:
      TypeError: `sp_ids` or `sp_weights` is not a SparseTensor.
      ValueError: an unknown combiner, or mismatched ids and weights.
    """
    from tensorweave.ops.math import segment_ops
    from tensorweave.ops.indexing.indexing_select import unique
    from tensorweave.ops.sparse import sparse_segment_ops as sseg
    del allow_fast_lookup
    if combiner is None:
        combiner = "mean"
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum', got %s" % combiner)
    params = _as_shard_list(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor, got %s" % type(sp_ids))
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError("sp_weights must be either None or SparseTensor, got %s"
                            % type(sp_weights))
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)
    with _graph.name_scope(name, "embedding_lookup_sparse", params + [sp_ids]) as scope:
        segment_ids = math_ops.cast(sp_ids.indices[:, 0], _dt.int32)
        ids, idx = unique(sp_ids.values)
        emb = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                               max_norm=max_norm)
        if sp_weights is None:
            fn = {"sum": sseg.sparse_segment_sum, "mean": sseg.sparse_segment_mean,
                  "sqrtn": sseg.sparse_segment_sqrt_n}[combiner]
            return fn(emb, idx, segment_ids, name=scope)
        emb = indexing_gather.gather(emb, idx)
        original_dtype = emb.dtype
        if emb.dtype in (_dt.float16, _dt.bfloat16):
            emb = math_ops.cast(emb, _dt.float32)
        weights = sp_weights.values
        if weights.dtype != emb.dtype:
            weights = math_ops.cast(weights, emb.dtype)
        # weights [n] -> [n, 1, ..., 1] to scale each embedding
        ones = array_fill_ops.ones(array_ops.expand_dims(array_ops.rank(emb) - 1, 0),
                                   dtype=_dt.int32)
        static = weights.shape
        weights = array_ops.reshape(weights, array_join_ops.concat(
            [array_ops.shape(weights), ones], 0))
        if emb.shape.ndims is not None:
            weights.set_shape(static.concatenate([1] * (emb.shape.ndims - 1)))
        emb = emb * weights
        if combiner == "sum":
            out = segment_ops.segment_sum(emb, segment_ids, name=scope)
        else:
            total = segment_ops.segment_sum(emb, segment_ids)
            norm = weights if combiner == "mean" else math_unary.square(weights)
            norm = segment_ops.segment_sum(norm, segment_ids)
            if combiner == "sqrtn":
                norm = math_unary.sqrt(norm)
            out = math_binary.div_no_nan(total, norm, name=scope)
        if out.dtype != original_dtype:
            out = math_ops.cast(out, original_dtype)
        return out


@tf_export("nn.safe_embedding_lookup_sparse")
def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner: str = "mean", default_id=None,
                                 name: Optional[str] = None, partition_strategy: str = "div",
                                 max_norm=None, allow_fast_lookup: bool = False) -> Tensor:
    """Like `embedding_lookup_sparse`, but robust to invalid and missing ids.

    `sparse_ids` may have any rank >= 2 (the last dimension holds the ids of one entry).
    Negative ids are dropped, and with a combiner other than "sum" so are ids whose
    weight is not positive. Rows left without ids get the embedding of `default_id`, or
    zeros when it is None.

    Args:
      embedding_weights: the embedding table (a Tensor, Variable or list of shards).
      sparse_ids: a SparseTensor of int64 ids `[d_0, ..., d_n-1, n]`.
      sparse_weights: a float SparseTensor with the indices of `sparse_ids`, or None.
      combiner: "sum", "mean" or "sqrtn".
      default_id: the id whose embedding fills empty rows, or None for zeros.
      name: name scope of the ops.
      partition_strategy: "div" or "mod" (see `tf.nn.embedding_lookup`).
      max_norm: if set, embeddings are scaled down to L2 norm at most this first.
      allow_fast_lookup: accepted for compatibility; the result is the same.

    Returns:
      A Tensor `[d_0, ..., d_n-1] + embedding_weights.shape[1:]`.

    Raises:
      ValueError: no embedding weights.
    """
    from tensorweave.ops.sparse.sparse_reshape_ops import sparse_reshape
    from tensorweave.ops.sparse.sparse_select_ops import sparse_fill_empty_rows, sparse_retain
    if embedding_weights is None:
        raise ValueError("Missing embedding_weights %s." % (embedding_weights,))
    params = _as_shard_list(embedding_weights)
    if not params:
        raise ValueError("Missing embedding_weights %s." % (embedding_weights,))
    with _graph.name_scope(name, "embedding_lookup", params + [sparse_ids]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape[0].value if original_shape.shape.ndims else None
        rank = array_ops.size(original_shape) if rank_dim is None else rank_dim
        outer_size = [rank - 1] if rank_dim is not None else array_ops.reshape(rank - 1, [1])
        outer = indexing_ops.slice(original_shape, [0], outer_size)
        sparse_ids = sparse_reshape(sparse_ids, array_join_ops.stack(
            [reduction_ops.reduce_prod(outer), indexing_gather.gather(original_shape,
                                                                      rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values,
                                          sparse_ids.dense_shape)
        valid = math_binary.greater_equal(sparse_ids.values, 0)
        if sparse_weights is not None and combiner != "sum":
            valid = math_binary.logical_and(
                valid, math_binary.greater(sparse_weights.values, 0))
        sparse_ids = sparse_retain(sparse_ids, valid)
        if sparse_weights is not None:
            sparse_weights = sparse_retain(sparse_weights, valid)
        sparse_ids, is_row_empty = sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(params, sparse_ids, sparse_weights,
                                         combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         max_norm=max_norm)
        if default_id is None:
            empty = array_ops.reshape(is_row_empty, [-1, 1])
            empty = array_join_ops.tile(empty, array_join_ops.stack(
                [1, array_ops.shape(result)[1]]))
            result = array_ops.where(empty, array_fill_ops.zeros_like(result), result)
        final = array_ops.reshape(result, array_join_ops.concat(
            [math_ops.cast(outer, _dt.int32), array_ops.shape(result)[1:]], 0), name=scope)
        lead = [None] * (rank_dim - 1) if rank_dim is not None else None
        final.set_shape(TensorShape(lead).concatenate(result.shape[1:]))
        return final
