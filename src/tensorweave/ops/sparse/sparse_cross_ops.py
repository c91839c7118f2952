"""Feature crosses of sparse and dense columns: SparseCross (strings or hashes) and
SparseCrossV2 (strings with a chosen separator), behind tf.sparse.cross and
tf.sparse.cross_hashed.

Row r of the result holds every combination of one feature of row r of each input, the
last input varying fastest; a row where any input has no feature gets none. The op
takes its sparse inputs before its dense ones, whatever order the caller gave them in
(TF's op signature), so that order is the order of the cross.

Hashed crosses are TF's bit for bit: each string feature's FarmHash Fingerprint64 (an
integer feature is its own 64-bit word), folded from `hash_key` with TF's
FingerprintCat64 mix (the multiply-shift of MurmurHash2's finalizer), modulo
`num_buckets` (or the int64 maximum when it is 0).
"""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeListAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops.sparse import sparse_util as _su

DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's SPARSE_FEATURE_CROSS_DEFAULT_HASH_KEY
_MASK = (1 << 64) - 1
_MUL = 0xC6A4A7935BD1E995
_INT64_MAX = (1 << 63) - 1

_INPUTS = ["indices: N * int64", "values: sparse_types", "shapes: N * int64",
           "dense_inputs: dense_types"]
_OUTPUTS = ["output_indices: int64", "output_values: out_type", "output_shape: int64"]
_LIST_ATTRS = {"N": 0, "sparse_types": TypeListAttr(), "dense_types": TypeListAttr()}


def _cross_shape(op):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


register_op("SparseCross", inputs=_INPUTS, outputs=_OUTPUTS,
            attrs=dict(_LIST_ATTRS, hashed_output=False, num_buckets=0, hash_key=0,
                       out_type=_dt.string, internal_type=_dt.string),
            shape=_cross_shape)
register_op("SparseCrossV2", inputs=_INPUTS + ["sep: string"],
            outputs=_OUTPUTS[:1] + ["output_values: string"] + _OUTPUTS[2:],
            attrs=dict(_LIST_ATTRS), shape=_cross_shape)
not_differentiable("SparseCross")
not_differentiable("SparseCrossV2")


def fold_fingerprints(words: np.ndarray, key: int) -> np.ndarray:
    """TF's FingerprintCat64 folded from `key` over each row of the uint64 matrix
    `words` (h = cat(h, word) per column), all rows at once; uint64 arithmetic wraps
    modulo 2**64 as the C++ does."""
    mul = np.uint64(_MUL)
    s47 = np.uint64(47)
    h = np.full(words.shape[0], key, np.uint64)
    with np.errstate(over="ignore"):
        for c in range(words.shape[1]):
            t = words[:, c] * mul
            t = (t ^ (t >> s47)) * mul
            r = (h ^ mul) ^ t
            r = r * mul
            r = (r ^ (r >> s47)) * mul
            h = r ^ (r >> s47)
    return h


class _Column:
    """One input of a cross: each row's feature count and the features, flat in row
    order (a sparse input's in index order within a row)."""

    __slots__ = ("counts", "values")

    def __init__(self, counts: np.ndarray, values: np.ndarray):
        self.counts, self.values = counts, values


def _columns(ctx, args, n: int) -> List[_Column]:
    """The inputs as _Columns, sparse ones first; checks their batch sizes."""
    indices, values, shapes, dense = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:]
    batch = None
    columns = []

    def check(size: int, what: str, k: int) -> None:
        nonlocal batch
        if batch is None:
            batch = size
        elif size != batch:
            raise errors.InvalidArgumentError(None, ctx.op, "Expected batch size %d got %d "
                                              "at %s tensor %d" % (batch, size, what, k))
    for k in range(n):
        if shapes[k].shape != (2,) or indices[k].ndim != 2 or indices[k].shape[1] != 2:
            raise errors.InvalidArgumentError(None, ctx.op, "Sparse inputs should be 2-D "
                                              "SparseTensors: dense shape %s at position %d"
                                              % (shapes[k].tolist(), k))
        check(int(shapes[k][0]), "sparse", k)
        order = _su.lexsort_rows(indices[k])  # features in index order within a row
        rows = indices[k][order, 0]
        if rows.size and (rows[0] < 0 or rows[-1] >= batch):
            bad = int(rows[0] if rows[0] < 0 else rows[-1])
            raise errors.InvalidArgumentError(None, ctx.op, "Sparse input %d has row index "
                                              "%d outside the batch of %d" % (k, bad, batch))
        columns.append(_Column(np.bincount(rows, minlength=batch).astype(np.int64),
                               np.asarray(values[k])[order]))
    for k, d in enumerate(dense):
        if d.ndim != 2:
            raise errors.InvalidArgumentError(None, ctx.op, "Dense inputs should be a "
                                              "matrix but received shape %s at position %d"
                                              % (list(d.shape), k))
        check(d.shape[0], "dense", k)
        columns.append(_Column(np.full(d.shape[0], d.shape[1], np.int64), d.reshape(-1)))
    return columns


def _cross(columns: List[_Column]):
    """(indices, dense_shape, per column the index of its feature in each cross): row
    r's crosses are the product of its features, the last column varying fastest; a row
    with no feature in some column has none. All by array arithmetic."""
    if not columns:
        return np.zeros((0, 2), np.int64), np.array([0, 0], np.int64), []
    batch = columns[0].counts.size
    counts = np.stack([c.counts for c in columns])            # [columns, batch]
    per_row = np.prod(counts, axis=0)                          # crosses of each row
    total = int(per_row.sum())
    row_of = np.repeat(np.arange(batch, dtype=np.int64), per_row)
    j = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    # stride of column c: the product of the counts of the columns after it
    strides = np.ones_like(counts)
    if len(columns) > 1:
        strides[:-1] = np.cumprod(counts[::-1], axis=0)[::-1][1:]
    picks = []
    for c, col in enumerate(columns):
        starts = np.cumsum(col.counts) - col.counts
        n = np.maximum(col.counts[row_of], 1)
        picks.append(starts[row_of] + (j // strides[c][row_of]) % n)
    width = int(per_row.max()) if batch else 0
    return (np.stack([row_of, j], axis=1), np.array([batch, width], np.int64), picks)


def _as_text(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


def _string_cross(ctx, args, n: int, sep: bytes):
    columns = _columns(ctx, args, n)
    ind, shape, picks = _cross(columns)
    texts = [[_as_text(v) for v in col.values.tolist()] for col in columns]
    crossed = [sep.join(parts) for parts in zip(*[[t[i] for i in p.tolist()]
                                                  for t, p in zip(texts, picks)])] \
        if picks else []
    out = np.empty(len(crossed), dtype=object)
    out[:] = crossed
    return ind, out, shape


@kernel("SparseCross")
def _sparse_cross_kernel(ctx, *args):
    n = ctx.attrs["N"]
    if not ctx.attrs["hashed_output"]:
        return _string_cross(ctx, args, n, b"_X_")
    from farmhash import Fingerprint64
    key, buckets = ctx.attrs["hash_key"] & _MASK, ctx.attrs["num_buckets"]
    modulus = buckets if buckets > 0 else _INT64_MAX
    columns = _columns(ctx, args, n)
    ind, shape, picks = _cross(columns)
    # each feature's 64-bit word once, then the fold over all crosses at once
    words = []
    for col in columns:
        if col.values.dtype == object:
            seen = {}
            words.append(np.array([seen[v] if v in seen else seen.setdefault(
                v, Fingerprint64(_as_text(v))) for v in col.values.tolist()], np.uint64))
        else:
            words.append(col.values.astype(np.int64).view(np.uint64))
    matrix = np.stack([w[p] for w, p in zip(words, picks)], axis=1) if picks else \
        np.zeros((0, 0), np.uint64)
    folded = fold_fingerprints(matrix, key)
    return ind, (folded % np.uint64(modulus)).astype(np.int64), shape


@kernel("SparseCrossV2")
def _sparse_cross_v2_kernel(ctx, *args):
    sep = args[-1]
    sep = sep[()] if isinstance(sep, np.ndarray) else sep
    return _string_cross(ctx, args[:-1], ctx.attrs["N"], _as_text(sep))


def _split_inputs(inputs: Sequence, name_hint: str):
    """(sparse inputs, dense inputs) as tensors, non-string values cast to int64 as TF
    does."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    sparse, dense = [], []
    for x in inputs:
        if isinstance(x, (SparseTensor, SparseTensorValue)):
            sparse.append(_su.to_sparse(x))
        else:
            dense.append(convert_to_tensor(x, name="dense_input"))
    if not sparse and not dense:
        raise ValueError("%s requires at least one input" % name_hint)

    def int64_unless_string(t):
        if t.dtype in (_dt.string, _dt.int64):
            return t
        return apply_op("Cast", [t], {"DstT": _dt.int64}, name="Cast").outputs[0]
    values = [int64_unless_string(s.values) for s in sparse]
    dense = [int64_unless_string(d) for d in dense]
    return sparse, values, dense


def _apply_cross(op_type: str, inputs, attrs: dict, extra: list, name) -> SparseTensor:
    sparse, values, dense = _split_inputs(inputs, op_type)
    attrs = dict(attrs, N=len(sparse), sparse_types=[v.dtype for v in values],
                 dense_types=[d.dtype for d in dense])
    op = apply_op(op_type, [[s.indices for s in sparse], values,
                            [s.dense_shape for s in sparse], dense] + extra, attrs,
                  name=name or op_type)
    return SparseTensor(op.outputs[0], op.outputs[1], op.outputs[2])


@tf_export("sparse.cross")
def sparse_cross(inputs: Sequence, name: Optional[str] = None,
                 separator: Optional[str] = None) -> SparseTensor:
    """The crosses of the features of each row of `inputs` as strings: for each
    combination of one feature per input, their strings joined by `separator`.

    Args:
      inputs: SparseTensors and 2-D Tensors of strings or integers, one row per example
        (the sparse ones are crossed first, then the dense ones, as TF's op takes them).
      name: the op's name.
      separator: joins the features (default "_X_").

    Returns:
      A SparseTensor of strings of dense shape [batch, most crosses of a row].

    Raises:
      TypeError: `inputs` is not a list.
      InvalidArgumentError (at run time): inputs of different batch sizes, or a dense
        input that is not a matrix.
    """
    sep = convert_to_tensor("_X_" if separator is None else separator, _dt.string,
                            name="sep")
    return _apply_cross("SparseCrossV2", inputs, {}, [sep], name)


@tf_export("sparse.cross_hashed")
def sparse_cross_hashed(inputs: Sequence, num_buckets: int = 0,
                        hash_key: Optional[int] = None,
                        name: Optional[str] = None) -> SparseTensor:
    """The crosses of the features of each row of `inputs` as hashes (TF's FarmHash
    fingerprints folded with FingerprintCat64; see the module docstring).

    Args:
      inputs: SparseTensors and 2-D Tensors of strings or integers, as for `cross`.
      num_buckets: the hashes are taken modulo this; 0: modulo the int64 maximum.
      hash_key: the first value of the fold (default TF's 0xDECAFCAFFE).
      name: the op's name.

    Returns:
      A SparseTensor of int64 of dense shape [batch, most crosses of a row].

    Raises:
      TypeError: `inputs` is not a list.
      ValueError: `num_buckets` below 0.
    """
    if num_buckets < 0:
        raise ValueError("num_buckets must be >= 0, got %d" % num_buckets)
    attrs = {"hashed_output": True, "num_buckets": int(num_buckets),
             "hash_key": int(DEFAULT_HASH_KEY if hash_key is None else hash_key),
             "out_type": _dt.int64, "internal_type": _dt.int64}
    return _apply_cross("SparseCross", inputs, attrs, [], name)
