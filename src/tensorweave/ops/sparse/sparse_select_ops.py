"""Choosing and filling entries of SparseTensors: SparseFillEmptyRows (and its gradient op),
and the builders sparse.retain, sparse.mask, sparse.merge, sparse.to_indicator, sparse.eye."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import name_scope
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.indexing.indexing_ops import outside
from tensorweave.ops.sparse import sparse_util as _su


# --- SparseFillEmptyRows --------------------------------------------------------------------
def _fill_empty_rows_shape(op):
    indices, values, shape, default = op.inputs
    rank = indices.shape.with_rank(2)[1]
    values.shape.with_rank(1)
    shape.shape.with_rank(1)
    default.shape.with_rank(0)
    # as TF: one indicator per row of the dense shape, when its value is known
    dense = tensor_util.constant_value_as_shape(shape)
    rows = dense.dims[0].value if dense.ndims else None
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rows]),
            TensorShape([indices.shape[0]])]


register_op("SparseFillEmptyRows",
            inputs=["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
            outputs=["output_indices: int64", "output_values: T",
                     "empty_row_indicator: bool", "reverse_index_map: int64"],
            attrs={"T": TypeAttr()}, shape=_fill_empty_rows_shape)


@kernel("SparseFillEmptyRows")
def _fill_empty_rows_kernel(ctx, indices, values, shape, default):
    _su.check_sparse(ctx, indices, values, shape)
    if np.ndim(default) != 0:
        raise _su.invalid(ctx, "default_value must be a scalar, got shape %s"
                          % _su.shape_str(np.shape(default)))
    if shape.size == 0:
        raise _su.invalid(ctx, "Dense shape cannot be empty.")
    n_rows = int(shape[0])
    rows = indices[:, 0]
    if outside(rows, n_rows):  # (one test for the usual rows, all in range)
        i = int(np.flatnonzero((rows < 0) | (rows >= n_rows))[0])
        raise _su.invalid(ctx, "indices(%d, 0) is invalid: %d >= %d" % (i, int(rows[i]),
                                                                     n_rows))
    counts = np.bincount(rows, minlength=n_rows)
    empty = counts == 0
    new_rows = np.flatnonzero(empty)
    if not new_rows.size and indices.dtype == np.int64 and (rows[1:] >= rows[:-1]).all():
        # every row has entries, already in row order (a batch of ids): nothing to insert
        # or reorder, and the stable sort below would return them as they are
        return indices, values, empty, np.arange(indices.shape[0], dtype=np.int64)
    filled = np.zeros((new_rows.size, indices.shape[1]), np.int64)
    filled[:, 0] = new_rows
    all_idx = np.concatenate([indices, filled]).astype(np.int64)
    all_val = np.concatenate([values, np.full(new_rows.size, default, dtype=values.dtype)])
    # by row; entries of one row keep their order
    order = np.argsort(all_idx[:, 0], kind="stable")
    where = np.empty_like(order)
    where[order] = np.arange(order.size)
    return all_idx[order], all_val[order], empty, where[:indices.shape[0]].astype(np.int64)


register_op("SparseFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
            outputs=["d_values: T", "d_default_value: T"], attrs={"T": TypeAttr()},
            shape=lambda op: [TensorShape([op.inputs[0].shape.with_rank(1)[0]]),
                              TensorShape([])])
not_differentiable("SparseFillEmptyRowsGrad")


@kernel("SparseFillEmptyRowsGrad")
def _fill_empty_rows_grad_kernel(ctx, reverse_map, grad):
    if ((reverse_map < 0) | (reverse_map >= grad.shape[0])).any():
        raise _su.invalid(ctx, "Elements in reverse index must be in [0, %d)" % grad.shape[0])
    d_values = grad[reverse_map]
    taken = np.zeros(grad.shape[0], bool)
    taken[reverse_map] = True
    return d_values, grad[~taken].sum(dtype=grad.dtype).astype(grad.dtype)


@gradient("SparseFillEmptyRows")
def _fill_empty_rows_grad(op, unused_indices_grad, values_grad, unused_1, unused_2):
    d_values, d_default = apply_op("SparseFillEmptyRowsGrad",
                                   [op.outputs[3], values_grad]).outputs
    return [None, d_values, None, d_default]


@tf_export("sparse.fill_empty_rows", "sparse_fill_empty_rows")
def sparse_fill_empty_rows(sp_input, default_value, name: Optional[str] = None):
    """Gives every empty row of a SparseTensor one entry, `default_value` at column 0
    (TF1).

    Args:
      sp_input: a SparseTensor of rank >= 1.
      default_value: a scalar of the values' dtype.
      name: op name scope.

    Returns:
      `(sp_ordered_output, empty_row_indicator)`: a SparseTensor ordered by row (entries
      of one row keep their order) and a bool vector, True for the rows that were empty.
    """
    sp = _su.to_sparse(sp_input)
    with name_scope(name, "SparseFillEmptyRows", [sp]) as scope:
        # TF's wrapper converts to the values' dtype first: another dtype is ValueError
        default = convert_to_tensor(default_value, dtype=sp.dtype, name="default_value")
        op = apply_op("SparseFillEmptyRows", [sp.indices, sp.values, sp.dense_shape,
                                              default], name=scope)
        out = _su.make_sparse(op.outputs[0], op.outputs[1], sp.dense_shape, sp.shape)
        return out, op.outputs[2]


# --- builders ---------------------------------------------------------------------------
@tf_export("sparse.retain", "sparse_retain")
def sparse_retain(sp_input, to_retain) -> SparseTensor:
    """The entries of a SparseTensor where `to_retain` is True (TF1).

    Args:
      sp_input: a SparseTensor with N entries.
      to_retain: a bool (or numeric: nonzero is True) vector of length N.

    Returns:
      A SparseTensor of the same dense shape with the chosen entries, in order.

    Raises:
      ValueError: `to_retain` is not a vector, or statically not of length N.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing.indexing_gather import gather
    from tensorweave.ops.indexing.indexing_select import where
    sp = _su.to_sparse(sp_input)
    # as TF: any type where() takes; nonzero entries are kept
    to_retain = convert_to_tensor(to_retain, name="to_retain")
    shape = to_retain.shape
    shape.assert_has_rank(1)
    n = sp.values.shape[0].value
    if n is not None and shape[0].value is not None and n != shape[0].value:
        raise ValueError("Dimensions must be equal, but are %d and %d" % (n, shape[0].value))
    where_true = array_ops.reshape(where(to_retain), [-1])
    return _su.make_sparse(gather(sp.indices, where_true), gather(sp.values, where_true),
                           sp.dense_shape, sp.shape)


@tf_export("sparse.mask", "sparse_mask")
def sparse_mask(a, mask_indices, name: Optional[str] = None) -> IndexedSlices:
    """The slices of an IndexedSlices whose indices are not in `mask_indices` (TF1).

    Args:
      a: an IndexedSlices.
      mask_indices: 1-D Tensor of indices to drop.
      name: op name scope.

    Returns:
      An IndexedSlices with the other slices, in order.
    """
    from tensorweave.ops.array.array_sort_ops import setdiff1d
    from tensorweave.ops.indexing.indexing_gather import gather
    with name_scope(name, "sparse_mask", [a.values, a.indices, mask_indices]):
        out_indices, to_gather = setdiff1d(a.indices, mask_indices)
        return IndexedSlices(gather(a.values, to_gather), out_indices, a.dense_shape)


@tf_export("sparse.merge", "sparse_merge")
def sparse_merge(sp_ids, sp_values, vocab_size, name: Optional[str] = None,
                 already_sorted: bool = False) -> SparseTensor:
    """A SparseTensor whose innermost index is the id in `sp_ids` and whose value is the
    matching entry of `sp_values` (TF1 `tf.sparse.merge`).

    With a list of id SparseTensors (all with `sp_values`' indices) and a list of vocab
    sizes, the last index dimension is replaced by one dimension per list entry.

    Args:
      sp_ids: a SparseTensor of int32/int64 ids, each in [0, vocab_size), or a list of
        them.
      sp_values: a SparseTensor with the same indices.
      vocab_size: a scalar, the size of the new innermost dimension; a list of them (one
        per id SparseTensor) when `sp_ids` is a list.
      name: op name scope.
      already_sorted: the ids are sorted within each row (skips the reorder).

    Returns:
      A SparseTensor of dense shape sp_ids.dense_shape[:-1] + vocab_size(s).

    Raises:
      TypeError: ids that are not integers, inputs that are not SparseTensors, or a
        vocab_size that does not match the form of `sp_ids`.
      ValueError: lists of `sp_ids` and `vocab_size` of different lengths.
    """
    from tensorweave.framework.graph import Tensor
    from tensorweave.ops.array.array_join_ops import concat, stack
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math.math_ops import cast
    from tensorweave.ops.sparse.sparse_ops import sparse_reorder
    sizes_ok = lambda v: isinstance(v, (int, np.integer, Tensor))  # noqa: E731
    if isinstance(sp_ids, (list, tuple)):
        if not isinstance(vocab_size, (list, tuple)):
            raise TypeError("vocab_size has to be a list of Tensors or Python ints. Found %s"
                            % type(vocab_size))
        for v in vocab_size:
            if not sizes_ok(v):
                raise TypeError("vocab_size has to be a list of Tensors or Python ints. "
                                "Found %s" % type(v))
        if len(sp_ids) != len(vocab_size):
            raise ValueError("sp_ids and vocab_size have to have equal lengths.")
        ids_list, sizes = list(sp_ids), list(vocab_size)
    else:
        if not sizes_ok(vocab_size):
            raise TypeError("vocab_size has to be a Tensor or Python int. Found %s"
                            % type(vocab_size))
        ids_list, sizes = [sp_ids], [vocab_size]
    ids_list = [_su.to_sparse(ids, "sp_ids") for ids in ids_list]
    vals_sp = _su.to_sparse(sp_values, "sp_values")
    for ids in ids_list:
        if ids.dtype not in (_dt.int32, _dt.int64):
            raise TypeError("sp_ids.values.dtype=%s is not an integer type" % ids.dtype.name)
    with name_scope(name, "SparseMerge", ids_list + [vals_sp]):
        columns = [array_ops.reshape(cast(ids.values, _dt.int64), [-1, 1])
                   for ids in ids_list]
        indices = concat([ids_list[0].indices[:, :-1]] + columns, axis=1)
        if all(isinstance(v, (int, np.integer)) for v in sizes):
            # one constant, so that the static dense shape knows the sizes
            size = convert_to_tensor([int(v) for v in sizes], dtype=_dt.int64,
                                     name="vocab_size")
        else:
            # a Pack, whose known entries the static dense shape still sees
            size = stack([cast(convert_to_tensor(v), _dt.int64) for v in sizes])
        shape = concat([ids_list[0].dense_shape[:-1], size], axis=0)
        out = SparseTensor(indices, vals_sp.values, shape)
        return out if already_sorted else sparse_reorder(out)


@tf_export("sparse.to_indicator", "sparse_to_indicator")
def sparse_to_indicator(sp_input, vocab_size, name: Optional[str] = None):
    """A dense bool Tensor, True at [..., id] for every id of the last dimension of
    `sp_input` (TF1 `tf.sparse.to_indicator`).

    Args:
      sp_input: a SparseTensor of int32/int64 ids.
      vocab_size: a scalar, the size of the new last dimension.
      name: op name scope.

    Returns:
      A bool Tensor of shape sp_input.dense_shape[:-1] + [vocab_size].
    """
    from tensorweave.ops.array.array_fill_ops import ones_like
    from tensorweave.ops.sparse.sparse_ops import sparse_tensor_to_dense
    sp = _su.to_sparse(sp_input)
    with name_scope(name, "SparseToIndicator", [sp]) as scope:
        flags = SparseTensor(sp.indices, ones_like(sp.values, dtype=_dt.bool), sp.dense_shape)
        merged = sparse_merge(sp, flags, vocab_size)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False,
                                      name=scope)


@tf_export("sparse.eye")
def sparse_eye(num_rows, num_columns=None, dtype=_dt.float32,
               name: Optional[str] = None) -> SparseTensor:
    """A SparseTensor with ones on the diagonal (TF1 `tf.sparse.eye`).

    Args:
      num_rows: a scalar, the number of rows.
      num_columns: a scalar, the number of columns (default: `num_rows`).
      dtype: the dtype of the values.
      name: op name scope.

    Returns:
      A SparseTensor [num_rows, num_columns] of min(num_rows, num_columns) ones.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_fill_ops import ones
    from tensorweave.ops.array.array_join_ops import stack
    from tensorweave.ops.math.math_binary import minimum
    from tensorweave.ops.math import math_ops
    with name_scope(name, "eye", [num_rows, num_columns]):
        rows = convert_to_tensor(num_rows, dtype=_dt.int64, name="num_rows")
        cols = rows if num_columns is None else \
            convert_to_tensor(num_columns, dtype=_dt.int64, name="num_columns")
        diag = math_ops.range(minimum(rows, cols))
        indices = stack([diag, diag], axis=1)
        values = ones(array_ops.reshape(minimum(rows, cols), [1]), dtype=dtype)
        out = SparseTensor(indices, values, stack([rows, cols]))
        return out
