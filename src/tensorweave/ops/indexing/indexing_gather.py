"""Gathers and scatters: GatherV2, GatherNd, ScatterNd, OneHot (part of the indexing
family)."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.runtime.values import element
from tensorweave.ops.indexing.indexing_ops import (debug_index, invalid, merge_shapes, outside,
                                          partial_shape_str, shape_str, shape_tensor,
                                          with_rank, with_rank_at_least)

_GATHER_INDEX_TYPES = (_dt.int16, _dt.int32, _dt.int64)
_INDEX_TYPES = (_dt.int32, _dt.int64)


def _first_bad(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad.reshape(-1))[0])


# --- GatherV2 ----------------------------------------------------------------------------
def _gather_shape(op):
    params, indices, axis = op.inputs
    with_rank(axis.shape, 0)
    p, i = params.shape, indices.shape
    a = tensor_util.constant_value(axis)
    if op._get_attr("batch_dims") != 0:
        return _batch_gather_shape(p, i, a, op._get_attr("batch_dims"))
    if a is None:
        with_rank_at_least(p, 1)
        if p.ndims is None or i.ndims is None:
            return unknown_shape()
        return unknown_shape(p.ndims + i.ndims - 1)
    a = int(a)
    with_rank_at_least(p, a + 1 if a >= 0 else -a)
    if p.ndims is None or i.ndims is None:
        return unknown_shape()
    a = a % p.ndims
    return TensorShape(p.as_list()[:a] + i.as_list() + p.as_list()[a + 1:])


def _batch_gather_shape(p, i, a, batch_dims):
    if p.ndims is None or i.ndims is None:
        return unknown_shape()
    b = _normalized_batch_dims(batch_dims, i.ndims)
    if a is None:  # the rank is known all the same
        return unknown_shape(p.ndims + i.ndims - 1 - b)
    a = _normalized_axis(int(a), p.ndims, b)
    return TensorShape(p.as_list()[:a] + i.as_list()[b:] + p.as_list()[a + 1:])


def _normalized_batch_dims(batch_dims: int, indices_rank: int) -> int:
    b = batch_dims + indices_rank if batch_dims < 0 else batch_dims
    if not 0 <= b <= indices_rank:
        raise ValueError("batch_dims (%d) must be in [-%d, %d] (the rank of indices)"
                         % (batch_dims, indices_rank, indices_rank))
    return b


def _normalized_axis(a: int, params_rank: int, b: int) -> int:
    if not -params_rank <= a < params_rank:
        raise ValueError("axis (%d) must be in [-%d, %d) (the rank of params)"
                         % (a, params_rank, params_rank))
    a %= params_rank
    if a < b:
        raise ValueError("batch_dims (%d) must be less than or equal to axis (%d)" % (b, a))
    return a


def _batch_gather(ctx, params, indices, a: int, b: int):
    """params[B..., M..., indices[B..., I...], R...] -> shape B + M + I + R, where B are the
    first b dimensions (shared), M the dimensions between them and the axis."""
    xp = ctx.xp
    batch = params.shape[:b]
    k = int(np.prod(batch, dtype=np.int64))
    mid, rest = params.shape[b:a], params.shape[a + 1:]
    idx_shape = indices.shape[b:]
    p = params.reshape((k,) + params.shape[b:])
    p = xp.moveaxis(p, 1 + len(mid), 1)  # [K, N, M..., R...]
    idx = indices.reshape((k,) + idx_shape)
    rows = xp.arange(k).reshape((k,) + (1,) * len(idx_shape))
    out = p[rows, idx]  # [K, I..., M..., R...]
    n_i, n_m = len(idx_shape), len(mid)
    perm = [0] + list(range(1 + n_i, 1 + n_i + n_m)) + list(range(1, 1 + n_i)) + \
        list(range(1 + n_i + n_m, out.ndim))
    return out.transpose(perm).reshape(batch + mid + idx_shape + rest)


def _checked_batch_dims(ctx, batch_dims: int, a: int, params_rank: int,
                        indices_rank: int) -> int:
    """batch_dims counted from the front, checked at run time with TF's messages."""
    if not -indices_rank <= batch_dims <= indices_rank:
        raise invalid(ctx, "Expected batch_dims in the range [%d, %d], but got %d"
                      % (-indices_rank, indices_rank, batch_dims))
    b = batch_dims + indices_rank if batch_dims < 0 else batch_dims
    if b >= params_rank:
        raise invalid(ctx, "batch_dims (%d) must be less than rank(params) (%d)."
                      % (b, params_rank))
    if a < b:
        raise invalid(ctx, "batch_dims (%d) must be less than or equal to axis (%d)."
                      % (b, a))
    return b


register_op("GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
            outputs=["output: Tparams"],
            attrs={"Tparams": TypeAttr(), "Tindices": TypeAttr(_GATHER_INDEX_TYPES),
                   "Taxis": TypeAttr(_INDEX_TYPES), "batch_dims": 0},
            shape=_gather_shape)


@kernel("GatherV2")
def _gather_kernel(ctx, params, indices, axis):
    a, r = int(axis), params.ndim
    if not -r <= a < r:
        raise invalid(ctx, "Shape must be at least rank %d but is rank %d"
                      % (a + 1 if a >= 0 else -a, r))
    a %= r
    batch_dims = ctx.attrs["batch_dims"]
    if batch_dims != 0:
        b = _checked_batch_dims(ctx, batch_dims, a, r, indices.ndim)
        for d in range(b):
            if params.shape[d] != indices.shape[d]:
                raise invalid(ctx, "params.shape[%d]: %d should be equal to indices.shape[%d]: "
                              "%d" % (d, params.shape[d], d, indices.shape[d]))
    limit = params.shape[a]
    if outside(indices, limit):
        bad = (indices < 0) | (indices >= limit)
        k = _first_bad(bad)
        raise invalid(ctx, "indices%s = %d is not in [0, %d)" % (
            debug_index(indices.shape, k), indices.reshape(-1)[k], limit))
    if batch_dims != 0:
        return _batch_gather(ctx, params, indices, a, b)
    # a scalar index into a vector: one element, which NumPy gives bare for a string
    # array (the method, not np.take's Python-level wrapper)
    return element(params.take(indices, axis=a))


@gradient("GatherV2")
def _gather_grad(op, grad):
    params, indices, axis = op.inputs
    if tensor_util.constant_value(axis) == 0:  # a literal 0, as in TF: whole rows
        return [_rows_gradient(params, indices, grad), None, None]
    b = op._get_attr("batch_dims")
    if b < 0:
        if indices.shape.ndims is None:
            raise ValueError(
                "Currently, it is unsupported to take the gradient of tf.gather when "
                "batch_dims < 0 and the rank of the indices is unknown. Please pass a "
                "positive batch_dims or use tf.ensure_shape to update the shape of indices "
                "when calling tf.gather. Got batch_dims=%d and indices=%s" % (b, indices))
        b += indices.shape.ndims
    return [_dense_gather_grad(params, indices, axis, grad, b), None, None]


def _rows_gradient(params: Tensor, indices: Tensor, grad) -> IndexedSlices:
    """The gradient of a gather along axis 0: the output gradient's rows, sent back to
    the params rows they came from (sparse)."""
    params_shape = shape_tensor(params)
    if isinstance(grad, IndexedSlices):  # a gather of this gather's rows
        if indices.shape.ndims == 1:
            return IndexedSlices(grad.values, gather(indices, grad.indices), params_shape)
        grad = convert_to_tensor(grad)
    if indices.shape.ndims == 1:
        return IndexedSlices(grad, indices, params_shape)
    from tensorweave.ops.array import array_ops
    return IndexedSlices(array_ops.reshape(grad, _merged_shape(params, 0, params_shape)),
                         array_ops.reshape(indices, [-1]), params_shape)


def _dense_gather_grad(params: Tensor, indices: Tensor, axis: Tensor, grad,
                       b: int) -> Tensor:
    """Dense gradient of a gather along any axis with `b` (>= 0) batch dimensions; the
    axis and the ranks may be known only at run time.

    The output gradient B + M + I + R (B the batch dims, M those up to the axis, I the
    other index dims, R the rest) is reshaped to B + M + [m] + R, its gathered axis moved
    next to B, and its rows summed into the params rows they came from (the params
    flattened to [K * n, M..., R...], K batch entries of n rows each).
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import reduction_ops
    from tensorweave.ops.math.segment_ops import unsorted_segment_sum
    params_shape = shape_tensor(params)
    rank, a = _rank_and_axis(params, axis)
    values = array_ops.reshape(convert_to_tensor(grad), array_ops.concat(
        [params_shape[:a], [-1], params_shape[a + 1:]], 0))
    # params dimension order with the gathered axis right after the batch dims
    moved = _joined([list(range(b)), [a], _dim_range(b, a), _dim_range(a + 1, rank)])
    values = array_ops.transpose(values, moved)
    values = array_ops.reshape(values, array_ops.concat(
        [[-1], shape_tensor(values)[b + 1:]], 0))
    k = reduction_ops.reduce_prod(params_shape[:b]) if b else 1
    n = params_shape[a]
    rows = array_ops.reshape(_batch_rows(indices, k, n), [-1])
    summed = unsorted_segment_sum(values, rows, k * n)
    dense = array_ops.reshape(summed, gather(params_shape, moved))
    out = array_ops.transpose(dense, array_ops.invert_permutation(moved))
    out.set_shape(params.shape)
    return out


def _rank_and_axis(params: Tensor, axis: Tensor):
    """The rank of params and the gather axis counted from the front: ints when known
    at build time, else int32 tensors."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    rank = params.shape.ndims
    a = tensor_util.constant_value(axis)
    if rank is not None and a is not None:
        return rank, int(a) % rank
    if rank is None:
        rank = array_ops.rank(params)
    a = int(a) if a is not None else math_ops.cast(axis, _dt.int32)
    return rank, math_binary.floormod(a, rank)


def _dim_range(start, limit):
    """Dimension numbers [start, limit): a list when both ends are ints, else a tensor."""
    if isinstance(start, int) and isinstance(limit, int):
        return list(range(start, limit))
    from tensorweave.ops.math import math_ops
    return math_ops.range(start, limit)


def _joined(parts) -> Tensor:
    """One int32 vector of dimension numbers from parts that are 1-D tensors or lists
    (of ints, or holding a scalar tensor); a constant when all are known."""
    def known(part):
        return isinstance(part, list) and not any(isinstance(v, Tensor) for v in part)

    if all(known(p) for p in parts):
        return convert_to_tensor(np.asarray(sum(parts, []), dtype=np.int32))
    from tensorweave.ops.array import array_ops
    vectors = [np.asarray(p, dtype=np.int32) if known(p) else
               p if isinstance(p, Tensor) else array_ops.stack(p) for p in parts]
    return array_ops.concat(vectors, 0)


def _batch_rows(indices: Tensor, k, n) -> Tensor:
    """indices + (batch entry) * n: int32 row numbers in the params flattened to
    [k * n, ...] (k batch entries of n rows each)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    idx = math_ops.cast(indices, _dt.int32)
    flat = array_ops.reshape(idx, array_ops.stack([k, -1]))
    offsets = array_ops.reshape(math_ops.range(0, k) * n, [-1, 1])
    return array_ops.reshape(flat + offsets, shape_tensor(idx))


def _merged_shape(params: Tensor, a: int, params_shape: Tensor):
    """params.shape with dimension `a` replaced by -1, as a constant when known."""
    p = params.shape
    if p.ndims is not None:
        dims = p.as_list()
        rest = dims[:a] + dims[a + 1:]
        if all(d is not None for d in rest):
            return np.asarray(dims[:a] + [-1] + dims[a + 1:], dtype=np.int32)
    from tensorweave.ops.array import array_ops
    return array_ops.concat([params_shape[:a], [-1], params_shape[a + 1:]], 0)


@tf_export("gather")
def gather(params, indices, validate_indices=None, name: Optional[str] = None, axis=None,
           batch_dims: int = 0) -> Tensor:
    """Gathers slices of `params` along `axis` at `indices` (TF1 `tf.gather`).

    The output has shape params.shape[:axis] + indices.shape + params.shape[axis + 1:].

    Args:
      params: the Tensor to gather from (rank >= axis + 1).
      indices: int32/int64 Tensor of indices in [0, params.shape[axis]).
      validate_indices: deprecated, ignored (indices are always validated).
      name: op name.
      axis: the axis to gather along (default 0); may be negative.
      batch_dims: the number of leading dimensions params and indices share (negative:
        counted from the rank of indices); each batch entry gathers from its own slice.
        The output then has shape params.shape[:axis] + indices.shape[batch_dims:] +
        params.shape[axis + 1:]; `axis` defaults to `batch_dims`.

    Returns:
      A Tensor of the type of `params`.

    Raises:
      ValueError: the axis is out of range of params' rank, or batch_dims out of range
        of indices' rank or above a non-zero axis (with a constant axis 0, batch_dims is
        ignored, as in TF1).
      InvalidArgumentError (at run time): an index out of range, or batch dimensions that
        differ.
    """
    del validate_indices
    if axis is None:
        axis = batch_dims
    if tensor_util.constant_value(axis) == 0:
        # TF1 drops batch_dims when the axis is a constant 0 (its plain-gather path):
        # programs that pass both get an ordinary gather, not an error
        batch_dims = 0
        if hasattr(params, "sparse_read"):
            return params.sparse_read(indices, name=name)
    return apply_op("GatherV2", [params, indices, axis], {"batch_dims": int(batch_dims)},
                    name=name or "GatherV2").outputs[0]


# --- GatherNd ----------------------------------------------------------------------------
def _gather_nd_shape(op):
    params, indices = op.inputs
    p, i = params.shape, with_rank_at_least(indices.shape, 1)
    if p.ndims is None or i.ndims is None or i[-1].value is None:
        return unknown_shape()
    k = i[-1].value
    if k > p.ndims:
        raise ValueError("indices.shape[-1] must be <= params.rank, but saw indices shape: %s "
                         "and params shape: %s" % (partial_shape_str(i), partial_shape_str(p)))
    return TensorShape(i.as_list()[:-1] + p.as_list()[k:])


register_op("GatherNd", inputs=["params: Tparams", "indices: Tindices"],
            outputs=["output: Tparams"],
            attrs={"Tparams": TypeAttr(), "Tindices": TypeAttr(_GATHER_INDEX_TYPES)},
            shape=_gather_nd_shape)


def _check_nd_indices(ctx, idx: np.ndarray, batch_shape, limits, what: str, shape) -> None:
    """Raises TF's error for the first row of `idx` outside `limits`."""
    if not idx.size:
        return
    bad = (idx < 0) | (idx >= np.array(limits, dtype=np.int64))
    # (one reduction over all entries by the ufunc itself: ndarray.any's wrapper and a
    # per-row reduction cost more than the test, and indices are almost always valid)
    if np.logical_or.reduce(bad, axis=None):
        k = int(np.flatnonzero(bad.any(axis=1))[0])
        raise invalid(ctx, "indices%s = [%s] does not index into %s %s" % (
            debug_index(batch_shape, k), ", ".join(str(int(v)) for v in idx[k]), what,
            shape_str(shape)) + (", node name: %s" % ctx.op.name if what == "param shape"
                                 and ctx.op is not None else ""))


def _flat_rows(idx: np.ndarray, limits) -> np.ndarray:
    """Row numbers of the index tuples `idx` [n, k] in an array whose first k dims are
    `limits`."""
    if idx.shape[1] == 0:
        return np.zeros(idx.shape[0], dtype=np.intp)
    return np.ravel_multi_index(tuple(idx.T), tuple(limits))


@kernel("GatherNd")
def _gather_nd_kernel(ctx, params, indices):
    if indices.ndim < 1:
        raise invalid(ctx, "indices must be at least a vector")
    k = indices.shape[-1]
    if k > params.ndim:
        raise invalid(ctx, "index innermost dimension length must be <= params rank; saw: %d "
                      "vs. %d" % (k, params.ndim))
    batch_shape = indices.shape[:-1]
    idx = indices.reshape(math.prod(batch_shape), k)  # (np.prod: a Python-level call)
    limits = params.shape[:k]
    _check_nd_indices(ctx, idx, batch_shape, limits, "param shape", params.shape)
    inner = params.shape[k:]
    rows = _flat_rows(idx, limits)
    out = params.reshape((-1,) + inner)[rows]
    return out.reshape(batch_shape + inner)


@gradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    params_shape = shape_tensor(params, indices.dtype)
    if indices.shape.ndims == 2 and indices.shape[-1].value == 1:
        # whole rows of params, as TF1 gives them: sparse, so optimizers update only those
        from tensorweave.ops.array import array_ops
        return [IndexedSlices(grad, array_ops.squeeze(indices, axis=[-1]), params_shape), None]
    return [scatter_nd(indices, grad, params_shape), None]


@tf_export("gather_nd", "manip.gather_nd")
def gather_nd(params, indices, name: Optional[str] = None, batch_dims: int = 0) -> Tensor:
    """Gathers slices of `params` named by the index tuples in `indices` (TF1
    `tf.gather_nd`).

    `indices` has shape [..., K]; each K-tuple indexes the first K dimensions of params.
    The output has shape indices.shape[:-1] + params.shape[K:].

    Args:
      params: the Tensor to gather from.
      indices: int32/int64 Tensor of index tuples.
      name: op name.
      batch_dims: the number of leading dimensions params and indices share: each
        batch position gathers from its own params slice with its own index tuples.

    Returns:
      A Tensor of the type of `params`.

    Raises:
      ValueError: indices.shape[-1] > rank(params), or a negative `batch_dims`, or one
        not less than the rank of `indices`.
      InvalidArgumentError (at run time): an index tuple out of range.
    """
    if not batch_dims:
        return apply_op("GatherNd", [params, indices], name=name or "GatherNd").outputs[0]
    batch_dims = int(batch_dims)
    if batch_dims < 0:
        raise ValueError("tf.gather_nd does not allow negative batch_dims.")
    with _graph.name_scope(name, "GatherNd", [params, indices]):
        params = convert_to_tensor(params, name="params")
        indices = convert_to_tensor(indices, name="indices")
        if indices.shape.ndims is not None and batch_dims >= indices.shape.ndims:
            raise ValueError("Argument `batch_dims` = %d must be less than rank(`indices`) "
                             "= %d" % (batch_dims, indices.shape.ndims))
        return _batch_gather_nd(params, indices, batch_dims)


def _batch_gather_nd(params, indices, batch_dims: int) -> Tensor:
    """gather_nd per batch position: the batch dimensions are flattened into one, and
    each index tuple gets its batch position in front."""
    from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
    from tensorweave.ops.array.array_pad_ops import broadcast_to
    from tensorweave.ops.math import math_ops, reduction_ops
    params_shape = array_ops.shape(params)
    indices_shape = array_ops.shape(indices)
    batch_shape = params_shape[:batch_dims]
    batch_size = reduction_ops.reduce_prod(batch_shape, keepdims=True)
    flat_params = array_ops.reshape(params, array_join_ops.concat(
        [batch_size, params_shape[batch_dims:]], 0))
    flat_indices = array_ops.reshape(indices, array_join_ops.concat(
        [batch_size, indices_shape[batch_dims:]], 0))
    # the batch position of every index tuple, as a leading index component
    tuples_shape = array_ops.shape(flat_indices)[:-1]
    position = math_ops.cast(math_ops.range(batch_size[0]), indices.dtype)
    position = array_ops.reshape(position, array_join_ops.concat(
        [batch_size, array_fill_ops.ones_like(tuples_shape[1:])], 0))
    position = array_ops.expand_dims(broadcast_to(position, tuples_shape), -1)
    gathered = apply_op("GatherNd", [flat_params, array_join_ops.concat(
        [position, flat_indices], -1)], name="GatherNd").outputs[0]
    out = array_ops.reshape(gathered, array_join_ops.concat(
        [batch_shape, array_ops.shape(gathered)[1:]], 0))
    # the static shape: batch dims, then what gather_nd gives for one batch position
    static = indices.shape[:-1].concatenate(
        params.shape[batch_dims + (indices.shape[-1].value or 0):]) \
        if indices.shape.ndims is not None and indices.shape[-1].value is not None and \
        params.shape.ndims is not None else None
    if static is not None:
        out.set_shape(static)
    return out


# --- ScatterNd ---------------------------------------------------------------------------
def _scatter_nd_shape(op):
    indices, updates, shape = op.inputs
    i = with_rank_at_least(indices.shape, 1)
    u = updates.shape
    with_rank(shape.shape, 1)
    out = tensor_util.constant_value_as_shape(shape)
    if i.ndims is None or u.ndims is None or out.ndims is None or i[-1].value is None:
        return out
    check_scatter_shapes(i, u, out)
    return out


def check_scatter_shapes(i: TensorShape, u: TensorShape, out: TensorShape) -> None:
    """Checks that updates `u` fit indices `i` [..., K] into a tensor of shape `out`
    (all three of known rank, K known), with TF's message naming the parts that differ.

    Raises:
      ValueError: the leading dimensions of `u` differ from those of `i`, or its trailing
        ones from out[K:].
    """
    outer = i.ndims - 1
    k = i[-1].value
    try:
        merge_shapes(i[:outer], u[:outer])
    except ValueError as e:
        raise ValueError("Dimensions [0,%d) of indices[shape=%s] = %s must match dimensions "
                         "[0,%d) of updates[shape=%s] = %s: %s" % (
                             outer, partial_shape_str(i), partial_shape_str(i[:outer]), outer,
                             partial_shape_str(u), partial_shape_str(u[:outer]), e)) from None
    try:
        merge_shapes(out[k:], u[outer:])
    except ValueError as e:
        raise ValueError("Dimensions [%d,%d) of input[shape=%s] = %s must match dimensions "
                         "[%d,%d) of updates[shape=%s] = %s: %s" % (
                             k, out.ndims, partial_shape_str(out), partial_shape_str(out[k:]),
                             outer, u.ndims, partial_shape_str(u), partial_shape_str(u[outer:]),
                             e)) from None


register_op("ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(), "Tindices": TypeAttr(_GATHER_INDEX_TYPES)},
            shape=_scatter_nd_shape)


@kernel("ScatterNd")
def _scatter_nd_kernel(ctx, indices, updates, shape):
    shape = tuple(shape.tolist())  # (Python ints: the index types are integers)
    if indices.ndim < 1:
        raise invalid(ctx, "Indices shape must have rank at least one. Found:%s"
                      % shape_str(indices.shape))
    k = indices.shape[-1]
    outer = indices.ndim - 1
    if updates.shape[:outer] != indices.shape[:outer]:
        raise invalid(ctx, "Dimensions [0,%d) of indices[shape=%s] must match dimensions [0,%d) "
                      "of updates[shape=%s]" % (outer, shape_str(indices.shape), outer,
                                                shape_str(updates.shape)))
    if k > len(shape) or updates.shape[outer:] != shape[k:]:
        raise invalid(ctx, "Dimensions [%d,%d) of input[shape=%s] must match dimensions [%d,%d) "
                      "of updates[shape=%s]" % (k, len(shape), shape_str(shape), outer,
                                                updates.ndim, shape_str(updates.shape)))
    idx = indices.reshape(math.prod(indices.shape[:-1]), k)  # (np.prod: a Python-level call)
    _check_nd_indices(ctx, idx, indices.shape[:-1], shape[:k], "shape", shape)
    inner = shape[k:]
    xp = ctx.xp
    if updates.dtype == object:
        # strings: TF's zero is b"" and its "+" concatenates, in index order
        out = np.full(shape, b"", dtype=object)
    else:
        out = xp.zeros(shape, dtype=updates.dtype)
    rows = _flat_rows(idx, shape[:k])
    table, values = out.reshape((-1,) + inner), updates.reshape((-1,) + inner)
    if xp is np and updates.dtype.kind in "iufc" and inner and rows.size > 1:
        _scatter_add_rows(table, rows, values)
    else:
        # bool "+" is logical or, as in TF's kernel; strings concatenate in index order
        add = xp.logical_or if updates.dtype == bool else xp.add
        add.at(table, rows, values)
    return out


def _scatter_add_rows(table: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """table[rows[i]] += values[i] for whole rows, in index order: ufunc.at takes its
    rows one at a time (20,000 rows of 64 floats: 14 ms), so the first occurrence of
    each row is added by one fancy-indexed assignment and only the repeats go through
    ufunc.at (each row's values are still added in index order, so the sums are
    ufunc.at's bits)."""
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    repeat = np.concatenate(([False], ordered[1:] == ordered[:-1]))
    if not repeat.any():
        table[rows] += values
        return
    firsts, repeats = order[~repeat], order[repeat]
    table[rows[firsts]] += values[firsts]
    np.add.at(table, rows[repeats], values[repeats])


@gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    indices = op.inputs[0]
    return [None, gather_nd(grad, indices), None]


@tf_export("scatter_nd", "manip.scatter_nd")
def scatter_nd(indices, updates, shape, name: Optional[str] = None) -> Tensor:
    """Scatters `updates` into a zero tensor of `shape` at `indices` (TF1 `tf.scatter_nd`).

    Updates that land on the same position are added.

    Args:
      indices: int32/int64 Tensor of shape [..., K] of index tuples.
      updates: Tensor of shape indices.shape[:-1] + shape[K:].
      shape: 1-D Tensor (same type as indices), the output shape.
      name: op name.

    Returns:
      A Tensor of the type of `updates` and shape `shape`.

    Raises:
      ValueError: static shapes that do not fit together.
      InvalidArgumentError (at run time): an index tuple out of range.
    """
    if not isinstance(shape, Tensor):
        idx_dtype = indices.dtype if isinstance(indices, Tensor) else None
        shape = convert_to_tensor(shape, dtype=idx_dtype)
    return apply_op("ScatterNd", [indices, updates, shape], name=name or "ScatterNd").outputs[0]


# --- OneHot ------------------------------------------------------------------------------
def _one_hot_shape(op):
    indices, depth, on_value, off_value = op.inputs
    axis = op._get_attr("axis")
    if axis < -1:
        raise ValueError("axis must be >= -1")
    d = tensor_util.constant_value(depth)
    if d is not None and np.ndim(d) != 0:
        raise ValueError("Input must be scalar but has rank %d" % np.ndim(d))
    with_rank(depth.shape, 0)
    if d is not None and int(d) < 0:
        raise ValueError("Dimension size, given by scalar input 1, must be non-negative but "
                         "is %d" % int(d))
    i = indices.shape
    if i.ndims is None:
        return unknown_shape()
    if axis > i.ndims:
        raise ValueError("Expected axis to be -1 or between [0, %d).  But received: %d"
                         % (i.ndims + 1, axis))
    at = i.ndims if axis == -1 else axis
    dims = i.as_list()
    return TensorShape(dims[:at] + [None if d is None else int(d)] + dims[at:])


register_op("OneHot", inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(), "TI": TypeAttr((_dt.uint8, _dt.int8, _dt.int32, _dt.int64),
                                                   default=_dt.int64), "axis": -1},
            shape=_one_hot_shape)


@kernel("OneHot")
def _one_hot_kernel(ctx, indices, depth, on_value, off_value):
    xp = ctx.xp
    depth = int(depth)
    if depth < 0:
        raise invalid(ctx, "depth must be non-negative, got: %d" % depth)
    axis = ctx.attrs["axis"]
    if not -1 <= axis <= indices.ndim:
        raise invalid(ctx, "Expected axis to be -1 or between [0, %d).  But received: %d"
                      % (indices.ndim + 1, axis))
    if on_value.ndim != 0:
        raise invalid(ctx, "on_value must be a scalar, but got: %s" % shape_str(on_value.shape))
    if off_value.ndim != 0:
        raise invalid(ctx, "off_value must be a scalar, but got: %s"
                      % shape_str(off_value.shape))
    hot = indices[..., None] == xp.arange(depth, dtype=indices.dtype)
    out = xp.where(hot, on_value, off_value)
    if axis != -1 and axis != indices.ndim:
        out = xp.moveaxis(out, -1, axis)
    return out


not_differentiable("OneHot")


@tf_export("one_hot")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None,
            name: Optional[str] = None) -> Tensor:
    """A one-hot tensor (TF1 `tf.one_hot`).

    Position `indices[...]` along the new axis of size `depth` holds `on_value`, every
    other position `off_value`; indices outside [0, depth) give an all-`off_value` row.

    Args:
      indices: uint8/int8/int32/int64 Tensor.
      depth: scalar int, the size of the new axis.
      on_value: scalar, default 1.
      off_value: scalar, default 0.
      axis: where the new axis goes (default -1, the end).
      dtype: the output type; default: the type of on_value/off_value, else float32.
      name: op name.

    Returns:
      A Tensor of rank rank(indices) + 1.

    Raises:
      TypeError: on_value, off_value and dtype disagree.
      ValueError: axis < -1.
    """
    with _graph.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        dtype = _dt.as_dtype(dtype) if dtype is not None else None
        on_exists, off_exists = on_value is not None, off_value is not None
        if on_exists:
            on_value = convert_to_tensor(on_value, dtype_hint=dtype)
        if off_exists:
            off_value = convert_to_tensor(off_value, dtype_hint=dtype)
        if on_exists or off_exists:
            if dtype is not None:
                for exists, value, what in ((on_exists, on_value, "on_value"),
                                            (off_exists, off_value, "off_value")):
                    if exists and value.dtype != dtype:
                        raise TypeError("dtype <dtype: '%s'> of %s does not match dtype "
                                        "parameter <dtype: '%s'>" % (value.dtype.name, what,
                                                                    dtype.name))
            else:
                dtype = on_value.dtype if on_exists else off_value.dtype
            if on_exists and off_exists and on_value.dtype != off_value.dtype:
                raise TypeError("dtype <dtype: '%s'> of on_value does not match dtype "
                                "<dtype: '%s'> of off_value" % (on_value.dtype.name,
                                                                off_value.dtype.name))
        elif dtype is None:
            dtype = _dt.float32
        if not on_exists:
            on_value = convert_to_tensor(1, dtype, name="on_value")
        if not off_exists:
            off_value = convert_to_tensor(0, dtype, name="off_value")
        attrs = {"axis": -1 if axis is None else int(axis)}
        return apply_op("OneHot", [indices, depth, on_value, off_value], attrs,
                        name=scope).outputs[0]
