"""Ops on SparseTensors: SparseToDense, SparseReorder, and the TF1 builders around
them (sparse_tensor_to_dense, sparse_to_dense, sparse.reorder, sparse_placeholder,
sparse.from_dense)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops.sparse.sparse_util import check_sorted_in_bounds
from tensorweave.ops.sparse.sparse_util import shape_str as _shape_str

_INDEX_TYPES = (_dt.int32, _dt.int64)


# --- SparseToDense ----------------------------------------------------------------------
def _sparse_to_dense_shape(op):
    indices, output_shape, values, default = op.inputs
    indices.shape.with_rank_at_most(2)
    output_shape.shape.with_rank_at_most(1)
    values.shape.with_rank_at_most(1)
    default.shape.with_rank(0)
    return tensor_util.constant_value_as_shape(output_shape)


register_op("SparseToDense",
            inputs=["sparse_indices: Tindices", "output_shape: Tindices",
                    "sparse_values: T", "default_value: T"],
            outputs=["dense: T"],
            attrs={"T": TypeAttr(), "Tindices": TypeAttr(_INDEX_TYPES),
                   "validate_indices": True},
            shape=_sparse_to_dense_shape)


@kernel("SparseToDense")
def _sparse_to_dense_kernel(ctx, indices, output_shape, values, default):
    xp = ctx.xp
    shape = np.asarray(output_shape, dtype=np.int64).reshape(-1)
    if np.ndim(output_shape) > 1:
        raise errors.InvalidArgumentError(None, ctx.op, "output_shape must be rank 0 or 1, "
                                          "got shape %s" % _shape_str(np.shape(output_shape)))
    idx = np.asarray(indices, dtype=np.int64)
    if idx.ndim > 2:
        raise errors.InvalidArgumentError(None, ctx.op, "sparse_indices should be a scalar, "
                                          "vector, or matrix, got shape %s"
                                          % _shape_str(idx.shape))
    idx = idx.reshape(1, -1) if idx.ndim == 0 else (idx.reshape(-1, 1) if idx.ndim == 1 else idx)
    n, rank = idx.shape
    if values.ndim > 1 or (values.ndim == 1 and values.shape[0] != n):
        raise errors.InvalidArgumentError(
            None, ctx.op, "sparse_values has incorrect shape %s, should be [] or [%d]"
            % (_shape_str(values.shape), n))
    if np.ndim(default) != 0:
        raise errors.InvalidArgumentError(None, ctx.op, "default_value should be a scalar.")
    if rank != shape.shape[0] and n:
        raise errors.InvalidArgumentError(
            None, ctx.op, "sparse_indices[0].size() must equal output_shape.size(), got "
            "%d vs %d" % (rank, shape.shape[0]))
    if (shape < 0).any():
        raise errors.InvalidArgumentError(None, ctx.op, "Dimension %d must be non-negative"
                                          % int(np.flatnonzero(shape < 0)[0]))
    if ctx.attrs["validate_indices"]:
        check_sorted_in_bounds(ctx, idx, shape)
    elif n and ((idx < 0) | (idx >= shape)).any():
        raise errors.InvalidArgumentError(None, ctx.op, "Indices are not valid (out of "
                                          "bounds).  Shape: %s" % _shape_str(shape))
    out = xp.full(tuple(shape.tolist()), default, dtype=values.dtype)
    if n:
        out[tuple(idx.T)] = values  # later duplicates win, as in TF without validation
    return out


@gradient("SparseToDense")
def _sparse_to_dense_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary
    from tensorweave.ops.indexing.indexing_gather import gather_nd
    from tensorweave.ops.math.reduction_ops import reduce_sum
    indices, output_shape, values, _ = op.inputs
    # 0-D, 1-D and 2-D index forms all become [N, rank] rows
    rank = array_ops.size(output_shape)
    rows = array_ops.reshape(indices, array_ops.stack([-1, rank]))
    values_grad = gather_nd(grad, rows)
    if values.shape.ndims == 0:
        values_grad = reduce_sum(values_grad)
    default_grad = math_binary.subtract(reduce_sum(grad), reduce_sum(values_grad))
    return [None, None, values_grad, default_grad]


@tf_export("sparse_to_dense")
def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices: bool = True, name: Optional[str] = None):
    """A dense tensor with `sparse_values` at `sparse_indices` (TF1 `tf.sparse_to_dense`).

    Args:
      sparse_indices: 0-D, 1-D or 2-D int32/int64 tensor; row i is the index of entry i.
      output_shape: 1-D tensor, the shape of the result.
      sparse_values: 0-D (used for every index) or 1-D tensor of N values.
      default_value: scalar for every other entry.
      validate_indices: check that indices are sorted, unique and in bounds.
      name: op name.

    Returns:
      A dense Tensor of shape `output_shape` and the dtype of `sparse_values`.

    Raises:
      InvalidArgumentError (at run time): bad indices or value shapes.
    """
    values = convert_to_tensor(sparse_values, name="sparse_values")
    return apply_op("SparseToDense", [sparse_indices, output_shape, values, default_value],
                    {"validate_indices": bool(validate_indices)},
                    name=name or "SparseToDense").outputs[0]


@tf_export("sparse_tensor_to_dense", "sparse.to_dense")
def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices: bool = True,
                           name: Optional[str] = None):
    """The dense tensor a SparseTensor stands for (TF1 `tf.sparse.to_dense`).

    Args:
      sp_input: a SparseTensor.
      default_value: scalar for unspecified entries (zero, or b"" for strings).
      validate_indices: check that the indices are sorted lexicographically, unique and
        in bounds.
      name: op name.

    Returns:
      A dense Tensor with the shape `sp_input.dense_shape`.

    Raises:
      TypeError: `sp_input` is not a SparseTensor.
    """
    sp_input = _convert_to_sparse_tensor(sp_input)
    if default_value is None:
        default_value = b"" if sp_input.dtype is _dt.string else \
            np.zeros((), dtype=sp_input.dtype.as_numpy_dtype)
    default = default_value if isinstance(default_value, Tensor) else \
        convert_to_tensor(default_value, dtype=sp_input.dtype, name="default_value") \
        if not isinstance(default_value, np.ndarray) else \
        convert_to_tensor(default_value.astype(sp_input.dtype.as_numpy_dtype),
                          name="default_value")
    return apply_op("SparseToDense", [sp_input.indices, sp_input.dense_shape,
                                      sp_input.values, default],
                    {"validate_indices": bool(validate_indices)},
                    name=name or "SparseToDense").outputs[0]


def _convert_to_sparse_tensor(sp_input) -> SparseTensor:
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    return sp_input


# --- SparseReorder ----------------------------------------------------------------------
def _sparse_reorder_shape(op):
    indices, values, shape = op.inputs
    ishape = indices.shape.with_rank(2)
    vshape = values.shape.with_rank(1)
    shape.shape.with_rank(1)
    n = ishape[0].merge_with(vshape[0])
    return [TensorShape([n, ishape[1]]), TensorShape([n])]


register_op("SparseReorder",
            inputs=["input_indices: int64", "input_values: T", "input_shape: int64"],
            outputs=["output_indices: int64", "output_values: T"],
            attrs={"T": TypeAttr()}, shape=_sparse_reorder_shape)


@kernel("SparseReorder")
def _sparse_reorder_kernel(ctx, indices, values, shape):
    if indices.ndim != 2 or values.ndim != 1 or indices.shape[0] != values.shape[0]:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Input indices should be a matrix and values a vector of the same "
            "length but received shapes: %s and %s" % (_shape_str(indices.shape),
                                                       _shape_str(values.shape)))
    if indices.shape[1] != np.size(shape):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Input shape should be a vector of length %d but received shape %s"
            % (indices.shape[1], _shape_str(np.shape(shape))))
    if indices.shape[0] < 2:
        return indices, values
    order = np.lexsort(indices.T[::-1])  # stable: equal rows keep their order
    return indices[order], values[order]


@gradient("SparseReorder")
def _sparse_reorder_grad(op, unused_indices_grad, values_grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    from tensorweave.ops.indexing.indexing_gather import gather
    indices, _, shape = op.inputs
    # reorder the positions 0..N-1 the same way to learn where each entry went
    positions = math_ops.range(array_ops.shape(indices, out_type=_dt.int64)[0])
    moved = apply_op("SparseReorder", [indices, positions, shape]).outputs[1]
    return [None, gather(values_grad, array_ops.invert_permutation(moved)), None]


@tf_export("sparse_reorder", "sparse.reorder")
def sparse_reorder(sp_input, name: Optional[str] = None) -> SparseTensor:
    """The same SparseTensor with indices in row-major (lexicographic) order (TF1).

    Args:
      sp_input: a SparseTensor.
      name: op name.

    Returns:
      A SparseTensor with the same dense shape and sorted indices.
    """
    sp_input = _convert_to_sparse_tensor(sp_input)
    op = apply_op("SparseReorder", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                  name=name or "SparseReorder")
    out = SparseTensor(op.outputs[0], op.outputs[1], sp_input.dense_shape)
    out._dense_shape_default = sp_input._dense_shape_default
    return out


# --- builders over other families -------------------------------------------------------
@tf_export("sparse_placeholder", "sparse.placeholder")
def sparse_placeholder(dtype, shape=None, name: Optional[str] = None) -> SparseTensor:
    """A SparseTensor that must be fed (TF1 `tf.sparse_placeholder`).

    Feed it a SparseTensorValue or an `(indices, values, dense_shape)` tuple.

    Args:
      dtype: type of the values.
      shape: the dense shape (None entries: any size), or None for any shape.
      name: prefix of the placeholders' names.

    Returns:
      A SparseTensor of placeholders "<name>/indices", "<name>/values", "<name>/shape".
    """
    from tensorweave.ops.array.constant_op import placeholder, placeholder_with_default
    sub = (lambda s: name + "/" + s) if name is not None else (lambda s: None)
    if shape is None:
        rank = None
        dense_shape = placeholder(_dt.int64, shape=[rank], name=sub("shape"))
        static = unknown_shape()
    else:
        if hasattr(shape, "op") and hasattr(shape, "dtype"):
            rank = shape.shape[0].value if shape.shape.ndims else None
            static = tensor_util.constant_value_as_shape(shape)
            default = shape
        else:
            dims = list(shape.as_list() if isinstance(shape, TensorShape) else shape)
            rank = len(dims)
            static = TensorShape([None if d is None or d == -1 else int(d) for d in dims])
            default = convert_to_tensor([-1 if d is None else int(d) for d in dims],
                                        dtype=_dt.int64, name=sub("shape_default"))
        dense_shape = placeholder_with_default(default, shape=default.shape,
                                               name=sub("shape"))
    out = SparseTensor(
        values=placeholder(dtype, shape=[None], name=sub("values")),
        indices=placeholder(_dt.int64, shape=[None, rank], name=sub("indices")),
        dense_shape=dense_shape)
    out._dense_shape_default = static
    return out


@tf_export("sparse.from_dense")
def from_dense(tensor, name: Optional[str] = None) -> SparseTensor:
    """The SparseTensor of the non-zero (non-empty for strings) entries of `tensor`."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary
    from tensorweave.ops.indexing.indexing_gather import gather_nd
    from tensorweave.ops.indexing.indexing_select import where
    with name_scope(name, "dense_to_sparse", [tensor]):
        tensor = convert_to_tensor(tensor)
        zero = b"" if tensor.dtype is _dt.string else \
            np.zeros((), dtype=tensor.dtype.as_numpy_dtype)
        indices = where(math_binary.not_equal(tensor, convert_to_tensor(zero,
                                                                        dtype=tensor.dtype)))
        values = gather_nd(tensor, indices)
        shape = array_ops.shape(tensor, out_type=_dt.int64)
        return SparseTensor(indices, values, shape)
