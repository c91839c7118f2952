"""Set operations over the last dimension (TF1 `tf.sets`): SetSize,
DenseToDenseSetOperation, DenseToSparseSetOperation, SparseToSparseSetOperation.

A rank-n input holds one set per index of its first n - 1 dimensions (the "group"): for
a dense tensor every element of the last dimension is a member, for a SparseTensor the
values present. Intersection, union and difference ("a-b" or "b-a") are taken group by
group and returned as a SparseTensor whose rows list each result in increasing order,
with dense shape the group shape plus the largest result size. Members are integers of
up to 64 bits (no uint32/uint64, as in TF) or strings. None of the ops is differentiable.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, with_rank, with_rank_at_least
from tensorweave.ops.array.array_util import merge_shapes
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.sparse.sparse_util import check_sorted_in_bounds, make_sparse, \
    shape_str, to_sparse

_VALID = (_dt.int8, _dt.int16, _dt.int32, _dt.int64, _dt.uint8, _dt.uint16, _dt.string)
_OPERATIONS = ("a-b", "b-a", "intersection", "union")


# --- the kernels' common part ---------------------------------------------------------------
def _dense_groups(ctx, x: np.ndarray) -> Tuple[Tuple[int, ...], List[list]]:
    """(group shape, members of each group in row-major order) of a dense set tensor."""
    x = np.asarray(x)
    if x.ndim < 2:  # a fed tensor of unknown static rank
        raise errors.InvalidArgumentError(None, ctx.op, "Shape %s has rank %d < 2"
                                          % (shape_str(x.shape), x.ndim))
    flat = x.reshape(-1, x.shape[-1]) if x.size else np.zeros((int(np.prod(x.shape[:-1])),
                                                              0), x.dtype)
    return tuple(x.shape[:-1]), [row.tolist() for row in flat]


def _sparse_groups(ctx, indices, values, shape, validate: bool):
    """(group shape, members of each group) of a sparse set tensor."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1, np.size(shape))
    shape = np.asarray(shape, dtype=np.int64).reshape(-1)
    if shape.size < 2:
        raise errors.InvalidArgumentError(None, ctx.op, "Invalid rank %d." % shape.size)
    if validate:
        check_sorted_in_bounds(ctx, idx, shape)
    group_shape = tuple(int(d) for d in shape[:-1])
    groups: List[list] = [[] for _ in range(int(np.prod(group_shape)))]
    if idx.shape[0]:
        ids = np.ravel_multi_index(tuple(idx[:, :-1].T), group_shape)
        for g, v in zip(ids.tolist(), np.asarray(values).reshape(-1).tolist()):
            groups[g].append(v)
    return group_shape, groups


def _combine(ctx, operation: str, a, b, dtype):
    """The SparseTensor parts of `operation` over the groups `a` and `b` (each a (group
    shape, members) pair)."""
    (shape_a, groups_a), (shape_b, groups_b) = a, b
    if shape_a != shape_b:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Mismatched shapes %s vs %s" % (shape_str(shape_a),
                                                          shape_str(shape_b)))
    results = []
    for ma, mb in zip(groups_a, groups_b):
        sa, sb = set(ma), set(mb)
        if operation == "intersection":
            r = sa & sb
        elif operation == "union":
            r = sa | sb
        elif operation == "a-b":
            r = sa - sb
        else:
            r = sb - sa
        results.append(sorted(r))
    return _to_sparse(shape_a, results, dtype)


def _to_sparse(group_shape, results: List[list], dtype):
    width = max((len(r) for r in results), default=0)
    rank = len(group_shape) + 1
    rows, vals = [], []
    for g, members in enumerate(results):
        if members:
            prefix = np.unravel_index(g, group_shape) if group_shape else ()
            for j, v in enumerate(members):
                rows.append(tuple(int(p) for p in prefix) + (j,))
                vals.append(v)
    indices = np.array(rows, dtype=np.int64).reshape(-1, rank)
    values = np.array(vals, dtype=object if dtype == _dt.string else dtype.as_numpy_dtype)
    return [indices, values.reshape(-1), np.array(list(group_shape) + [width], np.int64)]


# --- the ops ----------------------------------------------------------------------------
_ATTRS = {"set_operation": "", "validate_indices": True, "T": TypeAttr(_VALID)}


def _result_shape(op, rank: Optional[int]):
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


def _sparse_rank(shape_tensor) -> Optional[int]:
    """The rank a SparseTensor's dense-shape input states statically (None: unknown)."""
    shape = with_rank(shape_tensor.shape, 1)
    return shape.as_list()[0]


def _rank_with_value(rank: Optional[int], expected: int) -> None:
    """InferenceContext::WithValue on a sparse operand's rank."""
    if rank is not None and rank != expected:
        raise ValueError("Dimension must be %d but is %d" % (expected, rank))


def _dense_dense_shape(op):
    """TF's: both ranks >= 2 and equal, the group dimensions compatible."""
    a, b = (t.shape for t in op.inputs)
    a = with_rank_at_least(a, 2)
    if a.ndims is None:
        return _result_shape(op, with_rank_at_least(b, 2).ndims)
    b = with_rank(b, a.ndims)
    merge_shapes(a.as_list()[:-1], b.as_list()[:-1])
    return _result_shape(op, a.ndims)


def _dense_sparse_shape(op):
    """TF's: the dense rank >= 2, and the sparse operand's rank equal to it."""
    dense = with_rank_at_least(op.inputs[0].shape, 2)
    sparse_rank = _sparse_rank(op.inputs[3])
    if dense.ndims is None:
        return _result_shape(op, sparse_rank)
    _rank_with_value(sparse_rank, dense.ndims)
    return _result_shape(op, dense.ndims)


def _sparse_sparse_shape(op):
    """TF's: the first known rank of the two is >= 2, and the other equal to it."""
    ranks = (_sparse_rank(op.inputs[2]), _sparse_rank(op.inputs[5]))
    for i, rank in enumerate(ranks):
        if rank is None:
            continue
        if rank < 2:
            raise ValueError("Input %d, expected rank >= 2, got %d." % (i, rank))
        _rank_with_value(ranks[1], rank)
        return _result_shape(op, rank)
    return _result_shape(op, None)


register_op("SetSize", inputs=["set_indices: int64", "set_values: T", "set_shape: int64"],
            outputs=["size: int32"], attrs={"validate_indices": True, "T": TypeAttr(_VALID)},
            shape=lambda op: TensorShape(None))
register_op("DenseToDenseSetOperation", inputs=["set1: T", "set2: T"],
            outputs=["result_indices: int64", "result_values: T", "result_shape: int64"],
            attrs=dict(_ATTRS), shape=_dense_dense_shape)
register_op("DenseToSparseSetOperation",
            inputs=["set1: T", "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
            outputs=["result_indices: int64", "result_values: T", "result_shape: int64"],
            attrs=dict(_ATTRS), shape=_dense_sparse_shape)
register_op("SparseToSparseSetOperation",
            inputs=["set1_indices: int64", "set1_values: T", "set1_shape: int64",
                    "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
            outputs=["result_indices: int64", "result_values: T", "result_shape: int64"],
            attrs=dict(_ATTRS), shape=_sparse_sparse_shape)


def _operation(ctx) -> str:
    op = ctx.attrs["set_operation"]
    if op not in _OPERATIONS:
        raise errors.InvalidArgumentError(None, ctx.op, "Invalid set_operation %s." % op)
    return op


@kernel("SetSize")
def _set_size_kernel(ctx, indices, values, shape):
    group_shape, groups = _sparse_groups(ctx, indices, values, shape,
                                         ctx.attrs["validate_indices"])
    return np.array([len(set(g)) for g in groups], np.int32).reshape(group_shape)


@kernel("DenseToDenseSetOperation")
def _dense_dense_kernel(ctx, set1, set2):
    return _combine(ctx, _operation(ctx), _dense_groups(ctx, set1), _dense_groups(ctx, set2),
                    ctx.attrs["T"])


@kernel("DenseToSparseSetOperation")
def _dense_sparse_kernel(ctx, set1, indices, values, shape):
    return _combine(ctx, _operation(ctx), _dense_groups(ctx, set1),
                    _sparse_groups(ctx, indices, values, shape,
                                   ctx.attrs["validate_indices"]), ctx.attrs["T"])


@kernel("SparseToSparseSetOperation")
def _sparse_sparse_kernel(ctx, i1, v1, s1, i2, v2, s2):
    validate = ctx.attrs["validate_indices"]
    return _combine(ctx, _operation(ctx), _sparse_groups(ctx, i1, v1, s1, validate),
                    _sparse_groups(ctx, i2, v2, s2, validate), ctx.attrs["T"])


for _op in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation",
            "SparseToSparseSetOperation"):
    not_differentiable(_op)


# --- builders ---------------------------------------------------------------------------
def _as_set(x, what: str):
    if isinstance(x, SparseTensor):
        return x
    try:
        return to_sparse(x)
    except TypeError:
        return convert_to_tensor(x, name=what)


def _check_dtypes(a, b) -> None:
    for name, x in (("a", a), ("b", b)):
        if x.dtype.base_dtype not in _VALID:
            raise TypeError("'%s' has invalid dtype `%s` not in supported dtypes: `%s`."
                            % (name, x.dtype, ", ".join(d.name for d in _VALID)))
    if a.dtype.base_dtype != b.dtype.base_dtype:
        raise TypeError("Types don't match, %s vs %s." % (a.dtype, b.dtype))


def _set_operation(a, b, operation: str, validate_indices: bool) -> SparseTensor:
    attrs = {"set_operation": operation, "validate_indices": validate_indices}
    if isinstance(a, SparseTensor):
        if not isinstance(b, SparseTensor):
            raise ValueError("Sparse,Dense is not supported, but Dense,Sparse is. Please "
                             "flip the order of your inputs.")
        op = apply_op("SparseToSparseSetOperation", [a.indices, a.values, a.dense_shape,
                                                     b.indices, b.values, b.dense_shape],
                      attrs)
    elif isinstance(b, SparseTensor):
        op = apply_op("DenseToSparseSetOperation", [a, b.indices, b.values, b.dense_shape],
                      attrs)
    else:
        op = apply_op("DenseToDenseSetOperation", [a, b], attrs)
    return make_sparse(*op.outputs)


def _operands(a, b):
    """(a, b, flipped): a sparse `a` with a dense `b` is flipped (the ops take a dense
    first operand)."""
    a, b = _as_set(a, "a"), _as_set(b, "b")
    _check_dtypes(a, b)
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


@tf_export("sets.size", "sets.set_size")
def set_size(a, validate_indices: bool = True) -> Tensor:
    """The number of distinct values in each group of the last dimension of `a`.

    Args:
      a: a SparseTensor of integers or strings.
      validate_indices: check that `a`'s indices are in order and in bounds.

    Returns:
      An int32 Tensor of `a`'s shape less its last dimension.

    Raises:
      TypeError: `a` is not a SparseTensor, or of another dtype.
    """
    if not isinstance(a, SparseTensor):
        try:
            a = to_sparse(a)
        except TypeError:
            raise TypeError("Expected `SparseTensor`, got %s." % (a,)) from None
    if a.dtype.base_dtype not in _VALID:
        raise TypeError("Invalid dtype `%s` not in supported dtypes: `%s`."
                        % (a.dtype, ", ".join(d.name for d in _VALID)))
    return apply_op("SetSize", [a.indices, a.values, a.dense_shape],
                    {"validate_indices": validate_indices}).outputs[0]


@tf_export("sets.intersection", "sets.set_intersection")
def set_intersection(a, b, validate_indices: bool = True) -> SparseTensor:
    """The members common to `a` and `b`, group by group (see the module docstring).

    Args:
      a, b: Tensors or SparseTensors of one dtype (integers or strings), rank >= 2.
      validate_indices: check that sparse indices are in order and in bounds.

    Returns:
      A SparseTensor, each row sorted.

    Raises:
      TypeError: a dtype that is not supported, or two dtypes.
      ValueError: a rank below 2, or group shapes that differ.
    """
    a, b, _ = _operands(a, b)
    return _set_operation(a, b, "intersection", validate_indices)


@tf_export("sets.union", "sets.set_union")
def set_union(a, b, validate_indices: bool = True) -> SparseTensor:
    """The members of `a` or `b`, group by group (arguments as `set_intersection`)."""
    a, b, _ = _operands(a, b)
    return _set_operation(a, b, "union", validate_indices)


@tf_export("sets.difference", "sets.set_difference")
def set_difference(a, b, aminusb: bool = True, validate_indices: bool = True
                   ) -> SparseTensor:
    """The members of `a` not in `b` (with `aminusb=False`, of `b` not in `a`), group by
    group (other arguments as `set_intersection`)."""
    a, b, flipped = _operands(a, b)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)
