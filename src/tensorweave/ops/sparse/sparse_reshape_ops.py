"""Reshaping SparseTensors: SparseReshape, SparseSlice (and SparseSliceGrad), SparseSplit,
SparseConcat, and the builders sparse.transpose, sparse.expand_dims, sparse.reset_shape."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, gradient, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.sparse import sparse_util as _su


def _triple(sp: SparseTensor):
    return [sp.indices, sp.values, sp.dense_shape]


# --- SparseReshape --------------------------------------------------------------------------
def _sparse_reshape_shape(op):
    indices, _, new_shape = op.inputs
    n = indices.shape.with_rank(2)[0]
    rank = new_shape.shape.with_rank(1)[0]
    return [TensorShape([n, rank]), TensorShape([rank])]


register_op("SparseReshape",
            inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
            outputs=["output_indices: int64", "output_shape: int64"],
            shape=_sparse_reshape_shape)
not_differentiable("SparseReshape")


def _resolve_shape(ctx, shape, new_shape):
    # (multiply.reduce: np.prod without its Python wrapper; int64 products wrap as TF's)
    dense = int(np.multiply.reduce(shape, dtype=np.int64))
    new = [int(d) for d in new_shape.tolist()]
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1:
        raise _su.invalid(ctx, "only one output dimension may be -1, not both %d and %d"
                          % (unknown[0], unknown[1]))
    bad = [i for i, d in enumerate(new) if d < -1]
    if bad:
        raise _su.invalid(ctx, "size %d must be non-negative, not %d" % (bad[0], new[bad[0]]))
    known = int(np.multiply.reduce([d for d in new if d != -1], dtype=np.int64))
    if unknown:
        if known == 0 or dense % known:
            raise _su.invalid(ctx, "Input to reshape is a SparseTensor with %d dense values, "
                              "but the requested shape requires a multiple of %d"
                              % (dense, known))
        new[unknown[0]] = dense // known
    elif known != dense:
        raise _su.invalid(ctx, "Input to reshape is a tensor with %d dense values, but the "
                          "requested shape has %d" % (dense, known))
    return new


@kernel("SparseReshape")
def _sparse_reshape_kernel(ctx, indices, shape, new_shape):
    if indices.ndim != 2 or np.ndim(shape) != 1 or np.ndim(new_shape) != 1:
        raise _su.invalid(ctx, "Input indices should be a matrix, and the shapes vectors")
    if indices.shape[1] != shape.size:
        raise _su.invalid(ctx, "Input shape should be a vector of length %d" % indices.shape[1])
    new = _resolve_shape(ctx, shape, new_shape)
    new_shape_out = np.asarray(new, np.int64)
    if indices.shape[0] == 0:
        return np.zeros((0, len(new)), np.int64), new_shape_out
    if len(new) == shape.size and np.array_equal(shape, new_shape_out):
        return indices.astype(np.int64, copy=False), new_shape_out  # the same shape
    # row-major positions by strides, then the new coordinates by division: a few array
    # operations, where ravel/unravel_index cost several times more on small inputs
    flat = indices.astype(np.int64, copy=False) @ _strides(shape) if shape.size else \
        np.zeros(indices.shape[0], np.int64)
    if not new:
        return np.zeros((indices.shape[0], 0), np.int64), new_shape_out
    out = (flat[:, None] // _strides(new_shape_out)) % np.maximum(new_shape_out, 1)
    return out, new_shape_out


def _strides(dims) -> np.ndarray:
    """Row-major strides of a shape (int64)."""
    dims = np.asarray(dims, np.int64)
    strides = np.ones(dims.size, np.int64)
    if dims.size > 1:
        strides[:-1] = np.cumprod(dims[::-1][:-1])[::-1]
    return strides


@tf_export("sparse.reshape", "sparse_reshape")
def sparse_reshape(sp_input, shape, name: Optional[str] = None) -> SparseTensor:
    """The same entries in a SparseTensor of another dense shape (TF1).

    Args:
      sp_input: a SparseTensor.
      shape: 1-D int64 Tensor, the new dense shape; one entry may be -1 (inferred).
      name: op name scope.

    Returns:
      A SparseTensor with the values of `sp_input`, in row-major order as they were.

    Raises:
      ValueError: static sizes that cannot match.
      InvalidArgumentError (at run time): the sizes do not match.
    """
    sp = _su.to_sparse(sp_input)
    with name_scope(name, "SparseReshape", [sp]) as scope:
        shape = _int64_shape(shape, "shape")
        op = apply_op("SparseReshape", [sp.indices, sp.dense_shape, shape], name=scope)
        static = tensor_util.constant_value_as_shape(shape)
        old = sp.shape
        if static.ndims is not None and old.is_fully_defined():
            given = tensor_util.constant_value(shape)
            if given is not None and int((np.asarray(given) == -1).sum()) > 1:
                raise ValueError("At most one dimension can be inferred (-1). Found: %s"
                                 % np.asarray(given))
            dims = static.as_list()
            total = int(np.prod(old.as_list(), dtype=np.int64))
            if dims.count(None) == 1:
                known = int(np.prod([d for d in dims if d is not None], dtype=np.int64))
                if known == 0 or total % known:
                    raise ValueError("Cannot reshape a tensor with %d elements to shape %s"
                                     % (total, dims))
                dims[dims.index(None)] = total // known
            elif None not in dims and int(np.prod(dims, dtype=np.int64)) != total:
                raise ValueError("Cannot reshape a tensor with %d elements to shape %s (%d "
                                 "elements)" % (total, dims, int(np.prod(dims))))
            static = TensorShape(dims)
        return _su.make_sparse(op.outputs[0], sp.values, op.outputs[1], static)


def _int64_shape(value, name: str) -> Tensor:
    """A shape argument as int64, any integer type cast (as TF's wrappers cast it)."""
    from tensorweave.ops.math import math_ops
    t = convert_to_tensor(value, name=name)
    if not t.dtype.is_integer:
        raise TypeError("%s must be an integer tensor, got %s" % (name, t.dtype.name))
    return t if t.dtype == _dt.int64 else math_ops.cast(t, _dt.int64)


# --- SparseSlice, SparseSliceGrad ---------------------------------------------------------
register_op("SparseSlice",
            inputs=["indices: int64", "values: T", "shape: int64", "start: int64",
                    "size: int64"],
            outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
            attrs={"T": TypeAttr()},
            shape=lambda op: [TensorShape([None, op.inputs[0].shape.with_rank(2)[1]]),
                              TensorShape([None]), op.inputs[2].shape])


@kernel("SparseSlice")
def _sparse_slice_kernel(ctx, indices, values, shape, start, size):
    _su.check_sparse(ctx, indices, values, shape)
    if start.shape != shape.shape or size.shape != shape.shape:
        raise _su.invalid(ctx, "Expected start and size to be vectors of the rank of the "
                          "input (%d), got %s and %s" % (shape.size,
                                                         _su.shape_str(start.shape),
                                                         _su.shape_str(size.shape)))
    start = start.astype(np.int64)
    end = start + size.astype(np.int64)
    keep = ((indices >= start) & (indices < end)).all(axis=1)
    out_shape = np.maximum(np.minimum(start + size, shape) - start, 0)
    return (indices[keep] - start).astype(np.int64), values[keep], out_shape.astype(np.int64)


register_op("SparseSliceGrad",
            inputs=["backprop_val_grad: T", "input_indices: int64", "input_start: int64",
                    "output_indices: int64"],
            outputs=["val_grad: T"], attrs={"T": TypeAttr(_dt.NUMBERS)},
            shape=lambda op: TensorShape([op.inputs[1].shape.with_rank(2)[0]]))
not_differentiable("SparseSliceGrad")


@kernel("SparseSliceGrad")
def _sparse_slice_grad_kernel(ctx, grad, indices, start, out_indices):
    pos = _su.lookup_rows(out_indices, indices - start.astype(np.int64))
    out = np.zeros(indices.shape[0], dtype=grad.dtype)
    hit = pos >= 0
    out[hit] = grad[pos[hit]]
    return out


@gradient("SparseSlice")
def _sparse_slice_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    g = apply_op("SparseSliceGrad", [values_grad, op.inputs[0], op.inputs[3],
                                     op.outputs[0]]).outputs[0]
    return [None, g, None, None, None]


@tf_export("sparse.slice", "sparse_slice")
def sparse_slice(sp_input, start, size, name: Optional[str] = None) -> SparseTensor:
    """The entries of a SparseTensor inside the box `start` .. `start + size` (TF1).

    Args:
      sp_input: a SparseTensor.
      start: 1-D int64, the first index of the box.
      size: 1-D int64, the extent of the box (clipped at the dense shape).
      name: op name scope.

    Returns:
      A SparseTensor with indices relative to `start`.
    """
    sp = _su.to_sparse(sp_input)
    with name_scope(name, "SparseSlice", [sp]) as scope:
        op = apply_op("SparseSlice", _triple(sp) + [
            convert_to_tensor(start, dtype=_dt.int64, name="start"),
            convert_to_tensor(size, dtype=_dt.int64, name="size")], name=scope)
        return _su.make_sparse(*op.outputs)


# --- SparseSplit ----------------------------------------------------------------------------
def _sparse_split_shape(op):
    n = op._get_attr("num_split")
    rank = op.inputs[1].shape.with_rank(2)[1]
    return [TensorShape([None, rank])] * n + [TensorShape([None])] * n + \
        [TensorShape([rank])] * n


register_op("SparseSplit",
            inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
            outputs=["output_indices: num_split * int64", "output_values: num_split * T",
                     "output_shape: num_split * int64"],
            attrs={"T": TypeAttr(), "num_split": REQUIRED},
            shape=_sparse_split_shape)
not_differentiable("SparseSplit")


@kernel("SparseSplit")
def _sparse_split_kernel(ctx, split_dim, indices, values, shape):
    _su.check_sparse(ctx, indices, values, shape)
    n = ctx.attrs["num_split"]
    rank = shape.size
    dim = int(split_dim)
    if not -rank <= dim < rank:
        raise _su.invalid(ctx, "Input split_dim should be between %d and %d, got %d"
                          % (-rank, rank, dim))
    dim %= rank
    size = int(shape[dim])
    if n > size:
        raise _su.invalid(ctx, "num_split must be in the interval (0, %d]" % size)
    # the first (size % n) pieces are one longer
    lengths = [size // n + (1 if i < size % n else 0) for i in range(n)]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    piece = np.searchsorted(starts[1:], indices[:, dim], side="right")
    out_idx, out_val, out_shape = [], [], []
    for i in range(n):
        keep = piece == i
        idx = indices[keep].copy()
        idx[:, dim] -= starts[i]
        out_idx.append(idx)
        out_val.append(values[keep])
        s = np.array(shape, dtype=np.int64, copy=True)
        s[dim] = lengths[i]
        out_shape.append(s)
    return tuple(out_idx + out_val + out_shape)


@tf_export("sparse.split", "sparse_split")
def sparse_split(keyword_required=None, sp_input=None, num_split=None, axis=None,
                 name: Optional[str] = None, split_dim=None) -> List[SparseTensor]:
    """Splits a SparseTensor into `num_split` along `axis` (TF1 `tf.sparse.split`).

    The first `shape[axis] % num_split` pieces are one longer than the others.

    Args:
      keyword_required: must be left out (the other arguments are keywords).
      sp_input: a SparseTensor.
      num_split: a Python int.
      axis: a scalar int; `split_dim` is its deprecated alias.
      name: op name scope.
      split_dim: deprecated alias of `axis`.

    Returns:
      A list of `num_split` SparseTensors.

    Raises:
      ValueError: arguments given positionally, or missing.
    """
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    if axis is not None and split_dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'split_dim'.")
    axis = split_dim if axis is None else axis
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("sp_input, num_split and axis are required")
    sp = _su.to_sparse(sp_input)
    with name_scope(name, "SparseSplit", [sp]) as scope:
        op = apply_op("SparseSplit", [convert_to_tensor(axis, dtype=_dt.int64)] + _triple(sp),
                      {"num_split": int(num_split)}, name=scope)
        n = int(num_split)
        outs = op.outputs
        return [_su.make_sparse(outs[i], outs[n + i], outs[2 * n + i]) for i in range(n)]


# --- SparseConcat ---------------------------------------------------------------------------
def _sparse_concat_shape(op):
    n = op._get_attr("N")
    rank = None
    for t in op.inputs[:n]:
        r = t.shape.with_rank(2)[1].value
        rank = r if r is not None else rank
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


register_op("SparseConcat",
            inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
            outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
            attrs={"T": TypeAttr(), "concat_dim": 0}, shape=_sparse_concat_shape)


@kernel("SparseConcat")
def _sparse_concat_kernel(ctx, *args):
    n = len(args) // 3
    indices, values, shapes = args[:n], args[n:2 * n], args[2 * n:]
    for i in range(n):
        _su.check_sparse(ctx, indices[i], values[i], shapes[i], prefix="Input %d: " % i)
    rank = shapes[0].size
    dim = ctx.attrs["concat_dim"]
    if not -rank <= dim < rank:
        raise _su.invalid(ctx, "Concat dimension must be in range [%d, %d), got %d"
                          % (-rank, rank, dim))
    dim %= rank
    for i, s in enumerate(shapes[1:], 1):
        if s.size != rank or (np.delete(s, dim) != np.delete(shapes[0], dim)).any():
            raise _su.invalid(ctx, "Operand %d is not of the same shape as operand 0 outside "
                              "the concat dimension: %s vs %s"
                              % (i, _su.shape_str(s), _su.shape_str(shapes[0])))
    offsets = np.concatenate([[0], np.cumsum([int(s[dim]) for s in shapes])])
    moved = []
    for i, idx in enumerate(indices):
        idx = idx.astype(np.int64, copy=True)
        idx[:, dim] += offsets[i]
        moved.append(idx)
    all_idx = np.concatenate(moved).reshape(-1, rank)
    all_val = np.concatenate(values)
    order = _su.lexsort_rows(all_idx)
    out_shape = np.array(shapes[0], dtype=np.int64, copy=True)
    out_shape[dim] = offsets[-1]
    return all_idx[order], all_val[order], out_shape


@gradient("SparseConcat")
def _sparse_concat_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_join_ops import split
    from tensorweave.ops.indexing.indexing_gather import gather
    from tensorweave.ops.math import math_ops
    n = op._get_attr("N")
    indices, values, shapes = op.inputs[:n], op.inputs[n:2 * n], op.inputs[2 * n:]
    counts = [array_ops.shape(v, out_type=_dt.int64)[0] for v in values]
    from tensorweave.ops.array.array_join_ops import stack
    total = math_ops.add_n(counts) if n > 1 else counts[0]
    # concatenating the positions 0..total-1 the same way shows where each entry went
    positions = math_ops.range(total)
    pieces = split(positions, stack(counts), num=n)
    moved = apply_op("SparseConcat", [list(indices), list(pieces), list(shapes)],
                     {"concat_dim": op._get_attr("concat_dim")}).outputs[1]
    grads = gather(values_grad, array_ops.invert_permutation(moved))
    return [None] * n + list(split(grads, stack(counts), num=n)) + [None] * n


@tf_export("sparse.concat", "sparse_concat")
def sparse_concat(axis, sp_inputs, name: Optional[str] = None,
                  expand_nonconcat_dim: bool = False, concat_dim=None,
                  expand_nonconcat_dims=None) -> SparseTensor:
    """Concatenates SparseTensors along `axis` (TF1 `tf.sparse.concat`).

    Args:
      axis: a Python int, the dimension to concatenate along.
      sp_inputs: a list of SparseTensors of one rank.
      name: op name scope.
      expand_nonconcat_dim: allow other dimensions to differ; the result takes the
        largest of each.
      concat_dim: deprecated alias of `axis`.
      expand_nonconcat_dims: alias of `expand_nonconcat_dim`.

    Returns:
      A SparseTensor with indices in row-major order.

    Raises:
      InvalidArgumentError (at run time): shapes differ outside `axis` (unless expanded).
    """
    if concat_dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'concat_dim'.")
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    sps = [_su.to_sparse(s) for s in sp_inputs]
    if len(sps) == 1:
        return sps[0]
    with name_scope(name, "SparseConcat", [s.values for s in sps]) as scope:
        shapes = [s.dense_shape for s in sps]
        if expand_nonconcat_dim:
            from tensorweave.ops.array.array_join_ops import stack
            from tensorweave.ops.math.reduction_ops import reduce_max
            biggest = reduce_max(stack(shapes), axis=0)
            # keep each input's own size along `axis`, the largest size elsewhere
            rank = sps[0].shape.ndims
            if rank is None:
                raise ValueError("expand_nonconcat_dim needs inputs of known rank")
            axis_n = int(axis) % rank
            onehot = np.zeros(rank, np.int64)
            onehot[axis_n] = 1
            mask = convert_to_tensor(onehot)
            shapes = [s * mask + biggest * (1 - mask) for s in shapes]
        values = [s.values for s in sps]  # one dtype: another is the op's TypeError
        op = apply_op("SparseConcat", [[s.indices for s in sps], values, shapes],
                      {"concat_dim": int(axis)}, name=scope)
        static = None
        dims = [s.shape for s in sps]
        if all(d.ndims is not None for d in dims) and not expand_nonconcat_dim:
            rank = dims[0].ndims
            a = int(axis) % rank
            out = dims[0].as_list()
            sizes = [d.as_list()[a] for d in dims]
            out[a] = None if None in sizes else sum(sizes)
            for d in dims[1:]:
                dl = d.as_list()
                for j in range(rank):
                    if j != a and out[j] is None:
                        out[j] = dl[j]
            static = TensorShape(out)
        return _su.make_sparse(op.outputs[0], op.outputs[1], op.outputs[2], static)


# --- builders: transpose, expand_dims, reset_shape ----------------------------------------
@tf_export("sparse.transpose", "sparse_transpose")
def sparse_transpose(sp_input, perm=None, name: Optional[str] = None) -> SparseTensor:
    """Permutes the dimensions of a SparseTensor (TF1); the result is reordered.

    Args:
      sp_input: a SparseTensor.
      perm: a permutation of the dimensions (default: reversed).
      name: op name scope.

    Returns:
      A SparseTensor with permuted indices and dense shape, in row-major order.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing.indexing_gather import gather
    from tensorweave.ops.math import math_ops
    from tensorweave.ops.sparse.sparse_ops import sparse_reorder
    sp = _su.to_sparse(sp_input)
    with name_scope(name, "SparseTranspose", [sp]):
        if perm is None:
            rank = sp.shape.ndims
            if rank is not None:
                perm = np.arange(rank - 1, -1, -1, dtype=np.int32)
            else:
                r = array_ops.size(sp.dense_shape, out_type=_dt.int32)
                perm = math_ops.range(r - 1, -1, -1)
        # any index type gather takes (TF gathers with perm as given)
        perm_t = convert_to_tensor(perm, name="perm")
        indices = gather(sp.indices, perm_t, axis=1)
        shape = gather(sp.dense_shape, perm_t)
        static = None
        pv = tensor_util.constant_value(perm_t)
        if pv is not None and sp.shape.ndims is not None:
            dims = sp.shape.as_list()
            static = TensorShape([dims[int(p)] for p in np.asarray(pv).reshape(-1)])
        out = sparse_reorder(_su.make_sparse(indices, sp.values, shape, static))
        return out


@tf_export("sparse.expand_dims")
def sparse_expand_dims(sp_input, axis=None, name: Optional[str] = None) -> SparseTensor:
    """Inserts a dimension of size 1 into a SparseTensor (TF1 `tf.sparse.expand_dims`).

    Args:
      sp_input: a SparseTensor.
      axis: a Python int in [-rank - 1, rank] (default 0).
      name: op name scope.

    Returns:
      A SparseTensor of rank + 1.
    """
    from tensorweave.ops.array.array_fill_ops import zeros_like
    from tensorweave.ops.array.array_join_ops import concat
    sp = _su.to_sparse(sp_input)
    rank = sp.shape.ndims
    if rank is None:
        raise ValueError("sparse.expand_dims needs a SparseTensor of known rank")
    axis = 0 if axis is None else int(axis)
    if not -rank - 1 <= axis <= rank:
        raise ValueError("Axis %d is out of range for a SparseTensor of rank %d"
                         % (axis, rank))
    axis = axis % (rank + 1)
    with name_scope(name, "expand_dims", [sp]):
        col = zeros_like(sp.indices[:, :1])
        indices = concat([sp.indices[:, :axis], col, sp.indices[:, axis:]], axis=1)
        one = convert_to_tensor(np.ones(1, np.int64))
        shape = concat([sp.dense_shape[:axis], one, sp.dense_shape[axis:]], axis=0)
        dims = sp.shape.as_list()
        return _su.make_sparse(indices, sp.values, shape,
                               TensorShape(dims[:axis] + [1] + dims[axis:]))


@tf_export("sparse.reset_shape", "sparse_reset_shape")
def sparse_reset_shape(sp_input, new_shape=None) -> SparseTensor:
    """The same entries with a new dense shape (TF1 `tf.sparse.reset_shape`).

    Args:
      sp_input: a SparseTensor.
      new_shape: None (the tight shape: the largest index + 1 in each dimension) or a 1-D
        int64 shape of the same rank, at least the current shape everywhere.

    Returns:
      A SparseTensor with the indices and values of `sp_input`.

    Raises:
      ValueError: `new_shape` has another rank, or is statically too small.
      InvalidArgumentError (at run time): `new_shape` is smaller than the current shape.
    """
    from tensorweave.ops.control_flow.structure import identity
    from tensorweave.ops.debug.check_ops import assert_less_equal
    from tensorweave.ops.math.reduction_ops import reduce_max
    from tensorweave.framework.graph import control_dependencies
    sp = _su.to_sparse(sp_input)
    if new_shape is None:
        from tensorweave.ops.math.math_binary import maximum
        tight = reduce_max(sp.indices, axis=0) + np.int64(1)
        # no entries at all: every dimension is 0
        shape = maximum(tight, convert_to_tensor(np.int64(0)))
        return _su.make_sparse(identity(sp.indices), sp.values, shape)
    new_shape = _int64_shape(new_shape, "new_shape")
    new_shape.shape.assert_has_rank(1)
    old_rank, new_rank = sp.shape.ndims, new_shape.shape[0].value
    if old_rank is not None and new_rank is not None and old_rank != new_rank:
        raise ValueError("Shape must be rank %d but is rank %d (new_shape has a different "
                         "rank than the SparseTensor)" % (old_rank, new_rank))
    static = tensor_util.constant_value(new_shape)
    old = sp.shape
    if static is not None and old.is_fully_defined():
        if (np.asarray(old.as_list()) > np.asarray(static)).any():
            raise ValueError("new_shape %s is smaller than the shape %s of the SparseTensor"
                             % ([int(d) for d in static], old.as_list()))
    check = assert_less_equal(sp.dense_shape, new_shape,
                              message="new_shape must be at least the current shape")
    with control_dependencies([check]):
        shape = identity(new_shape)
    return _su.make_sparse(sp.indices, sp.values, shape,
                           tensor_util.constant_value_as_shape(new_shape))

