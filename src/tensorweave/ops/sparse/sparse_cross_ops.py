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


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's FingerprintCat64: two 64-bit fingerprints combined into one."""
    r = fp1 ^ _MUL
    r ^= (_shift_mix((fp2 * _MUL) & _MASK) * _MUL) & _MASK
    r = (r * _MUL) & _MASK
    r = (_shift_mix(r) * _MUL) & _MASK
    return _shift_mix(r)


def _columns(ctx, args, n: int) -> List[List[list]]:
    """Per input (sparse first), per row, its features in order; checks batch sizes."""
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
        rows: List[list] = [[] for _ in range(batch)]
        order = _su.lexsort_rows(indices[k])  # features in index order within a row
        for (r, _), v in zip(indices[k][order].tolist(), values[k][order].tolist()):
            if not 0 <= r < batch:
                raise errors.InvalidArgumentError(None, ctx.op, "Sparse input %d has row "
                                                  "index %d outside the batch of %d"
                                                  % (k, r, batch))
            rows[r].append(v)
        columns.append(rows)
    for k, d in enumerate(dense):
        if d.ndim != 2:
            raise errors.InvalidArgumentError(None, ctx.op, "Dense inputs should be a "
                                              "matrix but received shape %s at position %d"
                                              % (list(d.shape), k))
        check(d.shape[0], "dense", k)
        columns.append(d.tolist())
    return columns if batch is not None else []


def _cross(columns: List[List[list]], combine):
    """(indices, values, dense_shape) of the crosses, `combine` making one value."""
    if not columns:
        return np.zeros((0, 2), np.int64), [], np.array([0, 0], np.int64)
    batch = len(columns[0])
    indices, values, width = [], [], 0
    for r in range(batch):
        combos: List[tuple] = [()]
        for col in columns:
            combos = [c + (f,) for c in combos for f in col[r]]
        for j, combo in enumerate(combos):
            indices.append((r, j))
            values.append(combine(combo))
        width = max(width, len(combos))
    return (np.array(indices, np.int64).reshape(-1, 2), values,
            np.array([batch, width], np.int64))


def _as_text(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


def _string_cross(ctx, args, n: int, sep: bytes):
    ind, vals, shape = _cross(_columns(ctx, args, n), lambda c: sep.join(map(_as_text, c)))
    out = np.empty(len(vals), dtype=object)
    out[:] = vals
    return ind, out, shape


@kernel("SparseCross")
def _sparse_cross_kernel(ctx, *args):
    n = ctx.attrs["N"]
    if not ctx.attrs["hashed_output"]:
        return _string_cross(ctx, args, n, b"_X_")
    from farmhash import Fingerprint64
    key, buckets = ctx.attrs["hash_key"] & _MASK, ctx.attrs["num_buckets"]
    modulus = buckets if buckets > 0 else _INT64_MAX

    def hashed(combo) -> int:
        h = key
        for f in combo:
            h = fingerprint_cat64(h, Fingerprint64(f) if isinstance(f, bytes) else f & _MASK)
        return h % modulus
    ind, vals, shape = _cross(_columns(ctx, args, n), hashed)
    return ind, np.array(vals, np.int64), shape


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
