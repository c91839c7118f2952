"""Rows combined into their index's row one after another, as TF's CPU kernels loop.

TF's ScatterSub and UnsortedSegmentSum walk their indices in order: a row repeated k
times sees k rounded operations in that order. NumPy's `ufunc.at` does the same but one
element at a time (about 1 ns each plus a call per row), and `np.bincount` sums in
float64. `fold_in_groups` sorts the indices once (stably, so each index's rows keep their
order) and then applies the j-th row of every index that has one in one vectorized
operation, j = 0, 1, ..., while at least FEW_GROUPS indices still have rows left; each
of the few long groups that remain is folded by one `reduce` along its rows (a left
fold for subtract, and for rows of several elements, which it adds elementwise row after
row), or row by row for an add of single values (whose `reduce` sums pairwise) and for
half floats (whose `reduce` accumulates in float32).
Each element sees the same operations in the same order as with `ufunc.at`, so the bits
are its bits (tests compare them over random and Zipf-distributed ids).

Sums from zero have a faster way where SciPy is installed (the `special` or `test`
extra): `entry_order_product`, SciPy's CSR product, whose C loop adds each output row's
products one after another from zero, in the entries' order. With weights of one (1 * x
is x) it sums rows as the fold does, bit for bit: 6400 rows of 128 into 2000 segments
473 -> 185 us; SparseTensorDenseMatMul is that product itself.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

# while this many indices still have rows left, their next rows are applied at once
FEW_GROUPS = 16


def fold_in_groups(ufunc, start_of, ids: np.ndarray, rows: np.ndarray, order=None):
    """For each distinct id, in increasing order: `ufunc` applied to `start_of(ids)`'s
    row of it and each of its rows in turn (rows in their original order).

    Args:
      ufunc: a binary NumPy ufunc (np.add, np.subtract).
      start_of: maps the sorted distinct ids to the starting rows, [n_ids, ...]; None
        for rows of zeros (with np.add: sums from zero).
      ids: 1-D integer ids, one per row.
      rows: [len(ids), ...] rows of the result's dtype.
      order: `stable_order(ids)` where the caller has it.

    Returns:
      (distinct ids, their folded rows).
    """
    if order is None:
        order = stable_order(ids)
    ordered = ids[order]
    first = np.empty(ordered.size, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    index = ordered[starts]
    counts = np.diff(np.append(starts, ordered.size))
    if start_of is None:
        # folds from zero (np.add): 0 + row is the row but for -0.0, which becomes +0.0;
        # adding zero to the gathered rows in place spares a zeroed array
        out = rows[order[starts]]
        ufunc(out, out.dtype.type(0), out=out)
    else:
        out = start_of(index)
        ufunc(out, rows[order[starts]], out=out)
    j = 1
    while True:
        more = np.flatnonzero(counts > j)
        if more.size < FEW_GROUPS:
            break
        out[more] = ufunc(out[more], rows[order[starts[more] + j]])
        j += 1
    for k in more.tolist():
        s, e = starts[k] + j, starts[k] + counts[k]
        if out.dtype.kind in "iu" or (out.dtype in _REDUCE_IN_DTYPE and (
                ufunc is np.subtract or out[k].size > 1)):
            # one reduce along the rows: a left fold (subtract is never summed pairwise,
            # and rows of several elements are added elementwise, row after row)
            out[k] = ufunc.reduce(np.concatenate([out[k:k + 1], rows[order[s:e]]]), axis=0)
        else:
            # single values (add's reduce along them would sum pairwise), and half
            # floats (whose reduce accumulates in float32): row by row
            acc = out[k:k + 1]
            for i in order[s:e].tolist():
                ufunc(acc, rows[i:i + 1], out=acc)
    return index, out


# the float types whose reduce loops round every step in the type itself
_REDUCE_IN_DTYPE = (np.dtype(np.float32), np.dtype(np.float64))


def stable_order(ids: np.ndarray) -> np.ndarray:
    """`np.argsort(ids, kind="stable")` of integer ids: where an id's offset and its
    position fit together in 62 bits, one sort of those keys (NumPy's vectorized
    quicksort; 6400 ids: 150 -> 25 us)."""
    n = ids.size
    if n and ids.dtype.kind in "iu":
        lo, hi = int(ids.min()), int(ids.max())
        shift = max(1, (n - 1).bit_length())
        if hi < 1 << 63 and (hi - lo).bit_length() + shift <= 62:
            key = ids.astype(np.int64)
            key -= lo
            key <<= shift
            key |= np.arange(n, dtype=np.int64)
            key.sort()
            key &= (1 << shift) - 1
            return key
    return np.argsort(ids, kind="stable")


_SCIPY_SPARSE = None   # scipy.sparse once imported; False where SciPy is missing
# the dtypes of SciPy's CSR products (others: None)
_CSR_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                               np.complex128))


def entry_order_product(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, m: int,
                        k: int, b: np.ndarray) -> Optional[np.ndarray]:
    """The [m, k] matrix of entries `vals` at (rows, cols) times the [k, n] matrix b,
    each output row `0 + v0 * b[c0] + v1 * b[c1] + ...` over its entries in their order
    (repeated positions included), through SciPy; None where SciPy is missing or does
    not take the dtype (vals and b of one dtype)."""
    global _SCIPY_SPARSE
    if b.dtype not in _CSR_DTYPES or vals.dtype != b.dtype:
        return None
    if _SCIPY_SPARSE is None:
        try:
            from scipy import sparse as _SCIPY_SPARSE
        except ImportError:
            _SCIPY_SPARSE = False
    sparse = _SCIPY_SPARSE
    if sparse is False:
        return None
    order = stable_order(rows)   # the entries by row, in their order within a row
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    a = sparse.csr_matrix((vals[order], cols[order], indptr), shape=(m, k))
    return np.asarray(a @ b)


def sums_in_order(ids: np.ndarray, rows: np.ndarray, num: int) -> Optional[np.ndarray]:
    """[num, ...] sums from zero of `rows` by `ids` in [0, num), each id's rows added
    in their order (`fold_in_groups(np.add, None, ...)`'s bits, empty ids 0), through
    `entry_order_product`; None where that is not taken."""
    n = ids.size
    flat = rows.reshape(n, -1)
    out = entry_order_product(ids, np.arange(n), np.ones(n, rows.dtype), num, n, flat)
    return None if out is None else out.reshape((num,) + rows.shape[1:])
