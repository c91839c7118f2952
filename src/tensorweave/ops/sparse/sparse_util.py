"""Helpers shared by the SparseTensor op modules: argument conversion, the checks TF's
sparse kernels make, and index-row lookups."""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue


def to_sparse(sp_input, what: str = "Input") -> SparseTensor:
    """`sp_input` as a SparseTensor (a SparseTensorValue is converted); TypeError else."""
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("%s must be a SparseTensor." % what)
    return sp_input


def make_sparse(indices, values, dense_shape, static_shape=None) -> SparseTensor:
    """A SparseTensor of three tensors, with `static_shape` (a TensorShape) merged into its
    static dense shape."""
    out = SparseTensor(indices, values, dense_shape)
    if static_shape is not None and static_shape.ndims is not None:
        out._dense_shape_default = static_shape
    return out


def invalid(ctx, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, ctx.op, message)


def shape_str(dims) -> str:
    return "[%s]" % ",".join(str(int(d)) for d in dims)


def check_sparse(ctx, indices, values, shape, prefix: str = "") -> None:
    """TF's checks of one (indices, values, shape) triple."""
    if indices.ndim != 2:
        raise invalid(ctx, "%sInput indices should be a matrix but received shape %s"
                      % (prefix, shape_str(indices.shape)))
    if values.ndim != 1:
        raise invalid(ctx, "%sInput values should be a vector but received shape %s"
                      % (prefix, shape_str(values.shape)))
    if np.ndim(shape) != 1:
        raise invalid(ctx, "%sInput shape should be a vector but received shape %s"
                      % (prefix, shape_str(np.shape(shape))))
    if indices.shape[0] != values.shape[0]:
        raise invalid(ctx, "%sExpected %d non-empty input values, got %d"
                      % (prefix, indices.shape[0], values.shape[0]))
    if indices.shape[1] != np.size(shape):
        raise invalid(ctx, "%sInput indices and shape have different ranks: %d and %d"
                      % (prefix, indices.shape[1], np.size(shape)))


def check_sorted_in_bounds(ctx, idx: np.ndarray, shape: np.ndarray) -> None:
    """Raises TF's error for the first index row that is out of bounds, repeated or
    out of lexicographic order (rows are checked in order, bounds first)."""
    n = idx.shape[0]
    if n > 1 and idx.shape[1] and float(np.prod(np.asarray(shape, np.float64))) < 2.0 ** 63:
        # the common case, valid indices, in two vectorised passes: in bounds, and each
        # row's row-major position greater than the previous one's
        dims = [int(d) for d in shape]
        if not ((idx < 0) | (idx >= np.asarray(dims))).any():
            keys = idx[:, 0].astype(np.int64)
            for j in range(1, idx.shape[1]):
                keys *= dims[j]
                keys += idx[:, j]
            if (keys[1:] > keys[:-1]).all():
                return
    if n > 1 and idx.shape[1] == 0:  # rank 0: every row is the same (empty) index
        raise errors.InvalidArgumentError(None, ctx.op, "indices[1] = [] is repeated")
    bad_bounds = np.flatnonzero(((idx < 0) | (idx >= shape)).any(axis=1))
    first_bad = int(bad_bounds[0]) if bad_bounds.size else n
    if n > 1 and first_bad > 1:
        rows = idx[:first_bad]
        # compare consecutive rows lexicographically: first differing column decides
        diff = rows[1:] - rows[:-1]
        nz = diff != 0
        has = nz.any(axis=1)
        first_col = np.argmax(nz, axis=1)
        sign = np.where(has, np.sign(diff[np.arange(diff.shape[0]), first_col]), 0)
        bad_order = np.flatnonzero(sign <= 0)
        if bad_order.size:
            i = int(bad_order[0]) + 1
            if sign[i - 1] == 0:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "indices[%d] = %s is repeated" % (i, shape_str(idx[i])))
            raise errors.InvalidArgumentError(
                None, ctx.op, "indices[%d] = %s is out of order. Many sparse ops require "
                "sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered "
                "copy.\n\n" % (i, shape_str(idx[i])))
    if first_bad < n:
        raise errors.InvalidArgumentError(
            None, ctx.op, "indices[%d] = %s is out of bounds: need 0 <= index < %s"
            % (first_bad, shape_str(idx[first_bad]), shape_str(shape)))


def row_keys(rows: np.ndarray):
    """One int64 per index row, increasing with the rows' lexicographic order (the
    row-major position in a box holding every row), or None when a row has a negative
    index or the box has 2^63 positions or more. Sorting or grouping these keys is a
    1-D sort, many times faster than sorting the rows (lexsort, unique(axis=0))."""
    n, rank = rows.shape
    if n == 0 or rank == 0:
        return np.zeros(n, np.int64)
    if rows.min() < 0:
        return None
    dims = [int(d) + 1 for d in rows.max(axis=0)]
    if float(np.prod(np.asarray(dims, np.float64))) >= 2.0 ** 63:
        return None
    keys = rows[:, 0].astype(np.int64)  # a copy: the row-major position, column by column
    for j in range(1, rank):
        keys *= dims[j]
        keys += rows[:, j]
    return keys


def row_ids(*blocks: np.ndarray):
    """One id per distinct index row across `blocks` (each [n_i, rank]): equal rows get
    equal ids. Returns one id array per block."""
    rank = blocks[0].shape[1]
    rows = np.concatenate([np.asarray(b, dtype=np.int64).reshape(-1, rank) for b in blocks])
    if rows.shape[0] == 0:
        return [np.zeros(0, np.int64) for _ in blocks]
    keys = row_keys(rows)
    if keys is not None:
        _, inverse = np.unique(keys, return_inverse=True)
    else:
        _, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    out, start = [], 0
    for b in blocks:
        out.append(inverse[start:start + b.shape[0]])
        start += b.shape[0]
    return out


def lookup_rows(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each row of `queries`, its position in `keys` (rows assumed distinct), or -1."""
    key_ids, query_ids = row_ids(keys, queries)
    table = np.full(int(max(key_ids.max(initial=-1), query_ids.max(initial=-1))) + 1, -1,
                    dtype=np.int64)
    table[key_ids] = np.arange(keys.shape[0])
    return table[query_ids]


def lexsort_rows(indices: np.ndarray) -> np.ndarray:
    """The stable order that sorts index rows lexicographically (row-major)."""
    if indices.shape[0] < 2 or indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    keys = row_keys(indices)
    if keys is not None:
        return np.argsort(keys, kind="stable")
    return np.lexsort(indices.T[::-1])
