"""clip_by_norm, clip_by_global_norm, global_norm, clip_by_average_norm (TF1).

Gradient clipping (OSDI §4.1) as compositions of ordinary ops, so gradients flow
through them. IndexedSlices are clipped through their values and stay sparse.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.array import array_ops, constant_op
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.math import math_binary, math_ops, math_unary, reduction_ops
from tensorweave.ops.nn import nn_losses
from tensorweave.ops.control_flow import structure


def _values_of(t, name: str):
    """The dense values of a Tensor or IndexedSlices (None stays None)."""
    if t is None:
        return None
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def _check_sequence(t_list) -> list:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError("`t_list` should be a sequence of tensors. Received %s."
                        % type(t_list))
    return list(t_list)


@tf_export("clip_by_norm")
def clip_by_norm(t, clip_norm, axes=None, name: Optional[str] = None):
    """Scales `t` so that its L2 norm (over `axes`, default all) is at most
    `clip_norm`: `t * clip_norm / max(l2norm(t), clip_norm)`.

    Args:
      t: a Tensor or IndexedSlices (its values are clipped; the result stays sparse).
      clip_norm: a positive scalar.
      axes: dimensions to compute the norm over (default: all).
      name: name of the result.

    Returns:
      A clipped Tensor or IndexedSlices.

    Raises:
      ValueError: the norm does not broadcast back to `t`'s shape.
    """
    with _graph.name_scope(name or "clip_by_norm") as scope:
        values = _values_of(t, "t")
        l2sum = reduction_ops.reduce_sum(values * values, axes, keepdims=True)
        positive = math_binary.greater(l2sum, 0.0)
        # The double select keeps the gradient finite where the norm is 0.
        safe = indexing_select.where(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = indexing_select.where(positive, math_unary.sqrt(safe), l2sum)
        clip_norm = convert_to_tensor(clip_norm, dtype=values.dtype, name="clip_norm")
        scaled = values * clip_norm
        values.shape.merge_with(scaled.shape)
        clipped = structure.identity(scaled / math_binary.maximum(l2norm, clip_norm), name=scope)
        if isinstance(t, IndexedSlices):
            return IndexedSlices(clipped, t.indices, t.dense_shape)
        return clipped


@tf_export("global_norm")
def global_norm(t_list, name: Optional[str] = None):
    """`sqrt(sum(l2norm(t)**2 for t in t_list))`; None entries are ignored and
    IndexedSlices count through their values.

    Raises:
      TypeError: `t_list` is not a sequence.
    """
    t_list = _check_sequence(t_list)
    with _graph.name_scope(name or "global_norm") as scope:
        values = [_values_of(t, "t_%d" % i) for i, t in enumerate(t_list)]
        half_squared = []
        for v in values:
            if v is not None:
                with _graph.colocate_with(v.op):
                    half_squared.append(nn_losses.l2_loss(v))
        total = reduction_ops.reduce_sum(array_ops.stack(half_squared))
        del scope
        return math_unary.sqrt(total * constant_op.constant(2.0, dtype=total.dtype),
                           name="global_norm")


@tf_export("clip_by_global_norm")
def clip_by_global_norm(t_list, clip_norm, use_norm=None, name: Optional[str] = None):
    """Scales every tensor of `t_list` by `clip_norm / max(global_norm, clip_norm)`
    (Pascanu et al., 2012). If the global norm is inf or NaN, every entry becomes NaN.

    Args:
      t_list: a sequence of Tensors, IndexedSlices or None (None stays None).
      clip_norm: a positive scalar.
      use_norm: the global norm to use, if already computed.
      name: name scope.

    Returns:
      (list of clipped tensors, the global norm).

    Raises:
      TypeError: `t_list` is not a sequence.
    """
    t_list = _check_sequence(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with _graph.name_scope(name or "clip_by_global_norm") as scope:
        one = constant_op.constant(1.0, dtype=use_norm.dtype)
        scale_for_finite = clip_norm * math_binary.minimum(1.0 / use_norm, one / clip_norm)
        scale = scale_for_finite + (use_norm - use_norm)  # NaN when the norm is not finite
        out = []
        for i, t in enumerate(t_list):
            v = _values_of(t, "t_%d" % i)
            if v is None:
                out.append(None)
                continue
            with _graph.colocate_with(v.op):
                clipped = structure.identity(v * math_ops.cast(scale, v.dtype),
                                          name="%s_%d" % (scope, i))
            out.append(IndexedSlices(clipped, t.indices, t.dense_shape)
                       if isinstance(t, IndexedSlices) else clipped)
        return out, use_norm


@tf_export("clip_by_average_norm")
def clip_by_average_norm(t, clip_norm, name: Optional[str] = None):
    """Scales `t` so that its L2 norm divided by its number of elements is at most
    `clip_norm`: `t * clip_norm * min(n / l2norm(t), 1 / clip_norm)`.
    """
    with _graph.name_scope(name or "clip_by_average_norm") as scope:
        t = convert_to_tensor(t, name="t")
        n = math_ops.cast(array_ops.size(t), _dt.float32)
        all_axes = math_ops.range(array_ops.rank(t))
        inv_norm = math_unary.rsqrt(reduction_ops.reduce_sum(t * t, all_axes))
        return structure.identity(t * clip_norm * math_binary.minimum(
            inv_norm * n, constant_op.constant(1.0) / clip_norm), name=scope)
