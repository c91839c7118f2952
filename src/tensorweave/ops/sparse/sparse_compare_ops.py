"""Comparing and counting sparse features: EditDistance (`tf.edit_distance`),
DenseCountSparseOutput and SparseCountSparseOutput (`tf.sparse.bincount`). Feature crosses
are in sparse_cross_ops.py.

Each works one sequence or one row at a time (an edit-distance table), so the kernels
loop over rows; the work inside a row is small."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops.sparse import sparse_util as _su


# --- EditDistance -------------------------------------------------------------------------
def _edit_distance_shape(op):
    h_shape, t_shape = op.inputs[2], op.inputs[5]
    h = tensor_util.constant_value(h_shape)
    t = tensor_util.constant_value(t_shape)
    for name, value in (("Hypothesis", h), ("Truth", t)):
        if value is not None and np.size(value) < 2:
            raise ValueError("Input %s SparseTensors must have rank at least 2, but %s_shape "
                             "rank is: %d" % (name, name.lower(), np.size(value)))
    if h is not None and t is not None:
        if np.size(h) != np.size(t):
            raise ValueError("Hypothesis and truth SparseTensors must have the same rank")
        return TensorShape(np.maximum(np.asarray(h)[:-1], np.asarray(t)[:-1]).tolist())
    rank = op.inputs[0].shape.with_rank(2)[1].value
    return unknown_shape() if rank is None else unknown_shape(rank - 1)


register_op("EditDistance",
            inputs=["hypothesis_indices: int64", "hypothesis_values: T",
                    "hypothesis_shape: int64", "truth_indices: int64", "truth_values: T",
                    "truth_shape: int64"],
            outputs=["output: float"], attrs={"T": TypeAttr(), "normalize": True},
            shape=_edit_distance_shape)
not_differentiable("EditDistance")


def _levenshtein(a: list, b: list) -> int:
    if not a or not b:
        return len(a) + len(b)
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _sequences(indices, values):
    """{leading index tuple: the values of that sequence, in order of the last index}."""
    out = {}
    order = _su.lexsort_rows(indices)
    for row, v in zip(indices[order].tolist(), values[order].tolist()):
        out.setdefault(tuple(row[:-1]), []).append(v)
    return out


@kernel("EditDistance")
def _edit_distance_kernel(ctx, h_idx, h_val, h_shape, t_idx, t_val, t_shape):
    _su.check_sparse(ctx, h_idx, h_val, h_shape, "hypothesis: ")
    _su.check_sparse(ctx, t_idx, t_val, t_shape, "truth: ")
    if h_shape.size != t_shape.size:
        raise _su.invalid(ctx, "Hypothesis and truth should have the same rank, got %d and %d"
                          % (h_shape.size, t_shape.size))
    if h_shape.size < 2:
        raise _su.invalid(ctx, "Input SparseTensors must have rank at least 2")
    out_shape = tuple(np.maximum(h_shape[:-1], t_shape[:-1]).astype(np.int64).tolist())
    hyp, truth = _sequences(h_idx, h_val), _sequences(t_idx, t_val)
    out = np.zeros(out_shape, np.float32)
    normalize = ctx.attrs["normalize"]
    for key in set(hyp) | set(truth):
        h, t = hyp.get(key, []), truth.get(key, [])
        d = float(_levenshtein(h, t))
        if normalize:
            d = d / len(t) if t else (np.inf if h else 0.0)
        out[key] = d
    return ctx.xp.asarray(out)


@tf_export("edit_distance")
def edit_distance(hypothesis, truth, normalize: bool = True,
                  name: str = "edit_distance") -> Tensor:
    """The Levenshtein distance between the sequences of two SparseTensors (TF1).

    A sequence is the entries sharing all but the last index, in order of the last one.

    Args:
      hypothesis: a SparseTensor of rank R >= 2.
      truth: a SparseTensor of rank R and the same dtype.
      normalize: divide each distance by the length of the truth sequence (an empty
        truth gives inf, or 0 when the hypothesis is empty too).
      name: op name.

    Returns:
      A float32 Tensor of rank R - 1: the larger of the two leading dense shapes.

    Raises:
      TypeError: an input is not a SparseTensor, or the dtypes differ.
    """
    if not isinstance(hypothesis, (SparseTensor, SparseTensorValue)):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, (SparseTensor, SparseTensorValue)):
        raise TypeError("Truth must be a SparseTensor.")
    h, t = _su.to_sparse(hypothesis), _su.to_sparse(truth)
    if h.dtype != t.dtype:
        raise TypeError("Input 'truth_values' of 'EditDistance' Op has type %s that does not "
                        "match type %s of argument 'hypothesis_values'."
                        % (t.dtype.name, h.dtype.name))
    return apply_op("EditDistance", [h.indices, h.values, h.dense_shape, t.indices,
                                     t.values, t.dense_shape],
                    {"normalize": bool(normalize)}, name=name).outputs[0]


# --- DenseCountSparseOutput, SparseCountSparseOutput (sparse.bincount) ---------------------
_COUNT_ATTRS = {"T": TypeAttr((_dt.int32, _dt.int64)), "minlength": -1,
                "maxlength": -1, "binary_output": REQUIRED,
                "output_type": TypeAttr((_dt.int32, _dt.int64, _dt.float32, _dt.float64))}
register_op("DenseCountSparseOutput", inputs=["values: T", "weights: output_type"],
            outputs=["output_indices: int64", "output_values: output_type",
                     "output_dense_shape: int64"], attrs=dict(_COUNT_ATTRS),
            shape=lambda op: [TensorShape([None, op.inputs[0].shape.ndims]),
                              TensorShape([None]),
                              TensorShape([op.inputs[0].shape.ndims])])
register_op("SparseCountSparseOutput",
            inputs=["indices: int64", "values: T", "dense_shape: int64",
                    "weights: output_type"],
            outputs=["output_indices: int64", "output_values: output_type",
                     "output_dense_shape: int64"], attrs=dict(_COUNT_ATTRS),
            shape=lambda op: [TensorShape([None, op.inputs[0].shape.with_rank(2)[1]]),
                              TensorShape([None]),
                              TensorShape([op.inputs[0].shape.with_rank(2)[1]])])
not_differentiable("DenseCountSparseOutput")
not_differentiable("SparseCountSparseOutput")


def _count(ctx, batch, values, weights, rank: int):
    """Counts per (batch row, value); batch is None for rank-1 input."""
    a = ctx.attrs
    out_dt = a["output_type"].as_numpy_dtype
    if values.size and values.min() < 0:
        raise _su.invalid(ctx, "Input values must all be non-negative")
    keep = np.ones(values.size, bool)
    if a["maxlength"] >= 0:
        keep = values < a["maxlength"]
    size = int(values[keep].max()) + 1 if keep.any() else 0
    if a["minlength"] >= 0:
        size = max(size, a["minlength"])
    if a["maxlength"] >= 0:
        size = min(size, a["maxlength"])
    rows = np.zeros(values.size, np.int64) if batch is None else batch
    w = np.ones(values.size, out_dt) if weights.size == 0 else weights.astype(out_dt)
    rows, vals, w = rows[keep], values[keep].astype(np.int64), w[keep]
    key = np.stack([rows, vals], axis=1) if vals.size else np.zeros((0, 2), np.int64)
    uniq, group = (np.unique(key, axis=0, return_inverse=True) if key.shape[0]
                   else (key, np.zeros(0, np.int64)))
    group = np.asarray(group).reshape(-1)
    sums = np.zeros(uniq.shape[0], out_dt)
    if a["binary_output"]:
        sums[:] = 1
    else:
        np.add.at(sums, group, w)
    if rank == 1:
        return uniq[:, 1:].astype(np.int64), sums, np.array([size], np.int64)
    n_rows = int(batch.max()) + 1 if batch is not None and batch.size else 0
    return uniq.astype(np.int64), sums, np.array([n_rows, size], np.int64)


@kernel("DenseCountSparseOutput")
def _dense_count_kernel(ctx, values, weights):
    if values.ndim not in (1, 2):
        raise _su.invalid(ctx, "Input must be a 1 or 2-dimensional tensor. Got: %d"
                          % values.ndim)
    if weights.size and weights.shape != values.shape:
        raise _su.invalid(ctx, "Weights and values must have the same shape.")
    flat_w = weights.reshape(-1) if weights.size else weights
    if values.ndim == 1:
        return _count(ctx, None, values.reshape(-1), flat_w, 1)
    batch = np.repeat(np.arange(values.shape[0]), values.shape[1])
    idx, vals, shape = _count(ctx, batch, values.reshape(-1), flat_w, 2)
    shape[0] = values.shape[0]
    return idx, vals, shape


@kernel("SparseCountSparseOutput")
def _sparse_count_kernel(ctx, indices, values, dense_shape, weights):
    _su.check_sparse(ctx, indices, values, dense_shape)
    if weights.size and weights.shape != values.shape:
        raise _su.invalid(ctx, "Weights and values must have the same shape.")
    rank = dense_shape.size
    if rank == 1:
        return _count(ctx, None, values, weights, 1)
    idx, vals, shape = _count(ctx, indices[:, 0].astype(np.int64), values, weights, 2)
    shape[0] = int(dense_shape[0])
    return idx, vals, shape


@tf_export("sparse.bincount")
def sparse_bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
                    binary_output: bool = False, name: Optional[str] = None) -> SparseTensor:
    """Counts the integers of `values`, as a SparseTensor (TF1 `tf.sparse.bincount`).

    Args:
      values: a non-negative int32/int64 Tensor or SparseTensor (rank 1 or 2).
      weights: None, or a Tensor/SparseTensor like `values`: the amount each value adds.
      axis: 0 (count over everything) or -1 (count each row of a rank-2 input).
      minlength: the least size of the count dimension.
      maxlength: values >= maxlength are not counted, and the size is at most this.
      binary_output: 1 for every value present instead of counts.
      name: op name scope.

    Returns:
      A SparseTensor [size] (axis=0) or [rows, size] (axis=-1) of the counts, of the
      dtype of `weights` (int32 without).

    Raises:
      ValueError: another axis.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    if axis is None:
        axis = 0
    if axis not in (0, -1):
        raise ValueError("Unsupported value for argument axis=%s. Only 0 and -1 are "
                         "currently supported." % (axis,))
    with name_scope(name, "count", [values, weights]) as scope:
        attrs = {"minlength": -1 if minlength is None else int(minlength),
                 "maxlength": -1 if maxlength is None else int(maxlength),
                 "binary_output": bool(binary_output)}
        if isinstance(values, (SparseTensor, SparseTensorValue)):
            sp = _su.to_sparse(values)
            if weights is None:
                w = convert_to_tensor(np.zeros(0, sp.dtype.as_numpy_dtype))
            else:
                w = _su.to_sparse(weights).values if isinstance(
                    weights, (SparseTensor, SparseTensorValue)) else convert_to_tensor(weights)
            idx, vals, shp = sp.indices, sp.values, sp.dense_shape
            if axis == 0:  # every entry counts alike: as one vector of the values
                nnz = array_ops.size(vals, out_type=_dt.int64)
                idx = array_ops.reshape(math_ops.range(nnz), [-1, 1])
                shp = array_ops.reshape(nnz, [1])
            op = apply_op("SparseCountSparseOutput", [idx, vals, shp, w], attrs,
                          name=scope)
        else:
            v = convert_to_tensor(values)
            w = convert_to_tensor(np.zeros(0, v.dtype.as_numpy_dtype)) if weights is None \
                else convert_to_tensor(weights)
            if axis == 0:
                v = array_ops.reshape(v, [-1])
                if weights is not None:
                    w = array_ops.reshape(w, [-1])
            op = apply_op("DenseCountSparseOutput", [v, w], attrs, name=scope)
        return SparseTensor(*op.outputs)
