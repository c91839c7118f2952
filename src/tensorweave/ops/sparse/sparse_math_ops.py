"""Arithmetic on SparseTensors: SparseAdd (and SparseAddGrad), SparseTensorDenseAdd,
SparseReduceSum/Max (dense and sparse results), SparseSparseMaximum/Minimum,
SparseSoftmax and SparseTensorDenseMatMul, with the TF1 builders around them."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, gradient, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.ops.group_fold import entry_order_product, fold_in_groups
from tensorweave.ops.sparse import sparse_util as _su

_SPARSE_IN = ["a_indices: int64", "a_values: T", "a_shape: int64"]


def _triple(sp: SparseTensor):
    return [sp.indices, sp.values, sp.dense_shape]


def _nnz_shapes(op, rank_from: int = 0):
    ind = op.inputs[rank_from].shape.with_rank(2)
    return TensorShape([None, ind[1]]), TensorShape([None])


# --- SparseAdd, SparseAddGrad -------------------------------------------------------------
register_op("SparseAdd", inputs=_SPARSE_IN + ["b_indices: int64", "b_values: T",
                                              "b_shape: int64", "thresh: Treal"],
            outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
            attrs={"T": TypeAttr(_dt.NUMBERS), "Treal": TypeAttr(_dt.REAL_NUMBERS)},
            shape=lambda op: list(_nnz_shapes(op)) + [op.inputs[2].shape])


def _merge_sorted(a_idx, a_val, b_idx, b_val):
    """The union of two index sets: (indices, order of the concatenated entries, whether
    each output entry is a pair a+b); an index in both is one entry."""
    idx = np.concatenate([a_idx, b_idx]).reshape(-1, a_idx.shape[1])
    keys = _su.row_keys(idx)
    # stable: an `a` entry precedes an equal `b` entry
    order = _su.lexsort_rows(idx) if keys is None else np.argsort(keys, kind="stable")
    srt = idx[order]
    same_as_next = np.zeros(len(order), bool)
    if len(order) > 1:
        if keys is None:
            same_as_next[:-1] = (srt[1:] == srt[:-1]).all(axis=1)
        else:
            ordered = keys[order]
            same_as_next[:-1] = ordered[1:] == ordered[:-1]
    return srt, order, same_as_next


@kernel("SparseAdd")
def _sparse_add_kernel(ctx, a_idx, a_val, a_shape, b_idx, b_val, b_shape, thresh):
    _su.check_sparse(ctx, a_idx, a_val, a_shape)
    _su.check_sparse(ctx, b_idx, b_val, b_shape)
    if np.ndim(thresh) != 0:
        raise _su.invalid(ctx, "The magnitude threshold must be a scalar: got %s"
                          % _su.shape_str(np.shape(thresh)))
    if not np.array_equal(a_shape, b_shape):
        raise _su.invalid(ctx, "Operands' shapes do not match: got %s and %s"
                          % (_su.shape_str(a_shape), _su.shape_str(b_shape)))
    srt, order, pair = _merge_sorted(a_idx, a_val, b_idx, b_val)
    vals = np.concatenate([a_val, b_val])[order]
    second = np.zeros(len(order), bool)
    second[1:] = pair[:-1]
    keep = ~second
    summed = vals.copy()
    summed[pair] = vals[pair] + vals[np.flatnonzero(pair) + 1]
    keep &= ~pair | (np.abs(summed) >= thresh)  # the threshold applies to sums only
    return srt[keep], summed[keep].astype(a_val.dtype), np.array(a_shape, copy=True)


register_op("SparseAddGrad",
            inputs=["backprop_val_grad: T", "a_indices: int64", "b_indices: int64",
                    "sum_indices: int64"],
            outputs=["a_val_grad: T", "b_val_grad: T"], attrs={"T": TypeAttr(_dt.NUMBERS)},
            shape=lambda op: [TensorShape([op.inputs[1].shape.with_rank(2)[0]]),
                              TensorShape([op.inputs[2].shape.with_rank(2)[0]])])
not_differentiable("SparseAddGrad")


@kernel("SparseAddGrad")
def _sparse_add_grad_kernel(ctx, grad, a_idx, b_idx, sum_idx):
    if grad.shape[0] != sum_idx.shape[0]:
        raise _su.invalid(ctx, "Input backprop_val_grad has %d values but sum_indices has "
                          "%d rows" % (grad.shape[0], sum_idx.shape[0]))
    out = []
    for idx in (a_idx, b_idx):
        pos = _su.lookup_rows(sum_idx, idx)
        g = np.zeros(idx.shape[0], dtype=grad.dtype)
        hit = pos >= 0
        g[hit] = grad[pos[hit]]  # an entry dropped by the threshold gets no gradient
        out.append(g)
    return tuple(out)


@gradient("SparseAdd")
def _sparse_add_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    a_idx, b_idx = op.inputs[0], op.inputs[3]
    grads = apply_op("SparseAddGrad", [values_grad, a_idx, b_idx, op.outputs[0]]).outputs
    return [None, grads[0], None, None, grads[1], None, None]


# --- SparseTensorDenseAdd -----------------------------------------------------------------
register_op("SparseTensorDenseAdd",
            inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
            outputs=["output: T"],
            attrs={"T": TypeAttr(_dt.NUMBERS),
                   "Tindices": TypeAttr((_dt.int32, _dt.int64), default=_dt.int64)},
            shape=lambda op: op.inputs[3].shape)


@kernel("SparseTensorDenseAdd")
def _sparse_dense_add_kernel(ctx, a_idx, a_val, a_shape, b):
    _su.check_sparse(ctx, a_idx, a_val, a_shape)
    if tuple(int(d) for d in a_shape) != b.shape:
        raise _su.invalid(ctx, "Dimension mismatch: a_shape %s vs. b.shape %s"
                          % (_su.shape_str(a_shape), _su.shape_str(b.shape)))
    bad = ((a_idx < 0) | (a_idx >= np.asarray(a_shape))).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _su.invalid(ctx, "Index %d is out of bounds" % i)
    out = b.copy()
    ctx.xp.add.at(out, tuple(a_idx.T), a_val)
    return out


@gradient("SparseTensorDenseAdd")
def _sparse_dense_add_grad(op, grad):
    from tensorweave.ops.indexing.indexing_gather import gather_nd
    return [None, gather_nd(grad, op.inputs[0]), None, grad]


# --- SparseDenseCwiseMul / SparseDenseCwiseDiv ---------------------------------------------
def _truncating_divide(a, b):
    """a / b, rounded toward zero for integers (C's division, as TF's integer Div)."""
    if not np.issubdtype(a.dtype, np.integer):
        return a / b
    q = a // b
    return q + ((q < 0) & (q * b != a))


# op type -> how its values combine with the dense entries they sit on
_SPARSE_DENSE_CWISE = {"SparseDenseCwiseMul": np.multiply,
                       "SparseDenseCwiseDiv": _truncating_divide}


def _make_cwise_kernel(combine):
    def run(ctx, sp_idx, sp_val, sp_shape, dense):
        _su.check_sparse(ctx, sp_idx, sp_val, sp_shape)
        lead = len(sp_shape) - dense.ndim
        if lead < 0 or any(d not in (1, int(n)) for d, n in zip(dense.shape,
                                                                sp_shape[lead:])):
            raise _su.invalid(ctx, "SparseDenseBinaryOpShared broadcasts dense to sparse "
                              "only; got incompatible shapes: %s vs. %s"
                              % (_su.shape_str(sp_shape), _su.shape_str(dense.shape)))
        # the dense entry under each sparse one: its index on the dense tensor's dims, 0
        # along a broadcast dim
        at = tuple(sp_idx[:, lead + k] if d != 1 else np.zeros(len(sp_idx), np.int64)
                   for k, d in enumerate(dense.shape))
        return np.asarray(combine(sp_val, dense[at])).astype(sp_val.dtype, copy=False)
    return run


def _dense_grad(op, values_grad):
    """The gradient of the dense input from that of each sparse entry: scattered to the
    sparse tensor's dense shape, then summed over the dims the dense input was broadcast
    along."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing.indexing_gather import scatter_nd
    from tensorweave.ops.math.math_grad_util import broadcast_gradient_args
    from tensorweave.ops.math.reduction_ops import reduce_sum
    sp_idx, _, sp_shape, dense = op.inputs
    full = scatter_nd(sp_idx, values_grad, sp_shape)
    dense_shape = array_ops.shape(dense, out_type=_dt.int64)
    _, axes = broadcast_gradient_args(sp_shape, dense_shape)
    return array_ops.reshape(reduce_sum(full, axes), dense_shape)


def _cwise_mul_grad(op, grad):
    # conjugated for complex values, as the gradient of Mul (TF's omits the conj)
    from tensorweave.ops.math.math_unary import conj
    sp_idx, sp_val, sp_shape, dense = op.inputs
    values_grad = apply_op("SparseDenseCwiseMul", [sp_idx, grad, sp_shape,
                                                   conj(dense)]).outputs[0]
    return [None, values_grad, None, _dense_grad(op, grad * conj(sp_val))]


def _cwise_div_grad(op, grad):
    from tensorweave.ops.math.math_unary import conj
    sp_idx, sp_val, sp_shape, dense = op.inputs
    values_grad = apply_op("SparseDenseCwiseDiv", [sp_idx, grad, sp_shape,
                                                   conj(dense)]).outputs[0]
    # d(v / d)/dd = -v / d^2 = -out / d, with out = v / d this op's output
    minus_out = -conj(op.outputs[0]) * grad
    dense_part = apply_op("SparseDenseCwiseDiv", [sp_idx, minus_out, sp_shape,
                                                  conj(dense)]).outputs[0]
    return [None, values_grad, None, _dense_grad(op, dense_part)]


for _op_type, _grad_fn in (("SparseDenseCwiseMul", _cwise_mul_grad),
                           ("SparseDenseCwiseDiv", _cwise_div_grad)):
    register_op(_op_type, inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64",
                                  "dense: T"],
                outputs=["output: T"], attrs={"T": TypeAttr(_dt.NUMBERS)},
                shape=lambda op: TensorShape([op.inputs[0].shape.with_rank(2)[0]]))
    kernel(_op_type)(_make_cwise_kernel(_SPARSE_DENSE_CWISE[_op_type]))
    gradient(_op_type)(_grad_fn)


def sparse_dense_cwise(op_type: str, sp_input, dense, name: Optional[str] = None
                       ) -> SparseTensor:
    """`sp_input` with each value combined with the entry of `dense` (broadcast to the
    sparse tensor's shape) at its index: the SparseTensor operators `*` and `/`.

    Args:
      op_type: "SparseDenseCwiseMul" or "SparseDenseCwiseDiv".
      sp_input: a SparseTensor.
      dense: a Tensor (or convertible value) broadcastable to `sp_input`'s shape.
      name: op name.

    Returns:
      A SparseTensor with `sp_input`'s indices and dense shape.
    """
    sp = _su.to_sparse(sp_input)
    with name_scope(name, op_type, [sp.indices, sp.values, dense]):
        dense = convert_to_tensor(dense, dtype=sp.dtype, name="y")
        values = apply_op(op_type, _triple(sp) + [dense], name=op_type).outputs[0]
        return _su.make_sparse(sp.indices, values, sp.dense_shape, sp.shape)


@tf_export("sparse.add", "sparse_add")
def sparse_add(a, b, threshold=None, thresh=None):
    """Adds two tensors, at least one of them a SparseTensor (TF1 `tf.sparse.add`).

    Sparse + sparse is a SparseTensor (both must have sorted indices, as
    `tf.sparse.reorder` leaves them); an entry present in both whose sum has magnitude
    below `threshold` is dropped. Sparse + dense is a dense Tensor.

    Args:
      a: a SparseTensor or a dense Tensor.
      b: a SparseTensor or a dense Tensor.
      threshold: a real scalar (0 by default) for the sparse + sparse case.
      thresh: deprecated alias of `threshold`.

    Returns:
      A SparseTensor (both sparse) or a dense Tensor.

    Raises:
      TypeError: neither input is sparse.
      ValueError: both `threshold` and `thresh` are given.
    """
    if threshold is not None and thresh is not None:
        raise ValueError("Cannot specify both 'threshold' and 'thresh'.")
    threshold = thresh if threshold is None else threshold
    sparse_classes = (SparseTensor, SparseTensorValue)
    if not any(isinstance(x, sparse_classes) for x in (a, b)):
        raise TypeError("At least one input should be SparseTensor; do you mean to use "
                        "tf.add()?")
    if all(isinstance(x, sparse_classes) for x in (a, b)):
        a, b = _su.to_sparse(a), _su.to_sparse(b)
        a.shape.assert_is_compatible_with(b.shape)  # what is known fails at build time
        with name_scope(None, "SparseAdd", [a.indices, a.values, b.indices, b.values]):
            real = {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}.get(a.dtype,
                                                                                a.dtype)
            t = convert_to_tensor(0 if threshold is None else threshold, name="threshold")
            if t.dtype != real:
                from tensorweave.ops.math.math_ops import cast
                t = cast(t, real)
            op = apply_op("SparseAdd", _triple(a) + [b.indices, b.values, b.dense_shape, t])
            return _su.make_sparse(op.outputs[0], op.outputs[1], op.outputs[2], a.shape)
    if isinstance(b, sparse_classes):
        a, b = b, a
    a = _su.to_sparse(a)
    return apply_op("SparseTensorDenseAdd", _triple(a) + [b],
                    name="SparseTensorDenseAdd").outputs[0]


# --- SparseReduceSum / SparseReduceMax ----------------------------------------------------
def _reduce_axes(ctx, axes, rank: int):
    out = []
    for a in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise _su.invalid(ctx, "Invalid reduction dimension %d, for input with %d "
                              "dimensions." % (a, rank))
        out.append(a % rank)
    return sorted(set(out))


def _reduce_groups(ctx, indices, values, shape, axes):
    """(group of each entry, the sorted distinct kept-index rows, kept dims, axes)."""
    _su.check_sparse(ctx, indices, values, shape)
    rank = indices.shape[1]
    axes = _reduce_axes(ctx, axes, rank)
    kept = [d for d in range(rank) if d not in axes]
    kidx = indices[:, kept]
    keys = _su.row_keys(kidx) if kidx.shape[0] and kept else None
    if keys is not None:  # a 1-D unique of the rows' keys: the same groups, in order
        first, group = np.unique(keys, return_index=True, return_inverse=True)[1:]
        uniq = kidx[first]
    elif kidx.shape[0] and kept:
        uniq, group = np.unique(kidx, axis=0, return_inverse=True)
    else:
        uniq = np.zeros((min(1, kidx.shape[0]), len(kept)), np.int64)
        group = np.zeros(kidx.shape[0], np.int64)
    return group.reshape(-1), uniq, kept, axes


def _reduce_values(ufunc, values, group, n):
    """The sum or maximum of the values of each of the n groups (each has one or more)."""
    if ufunc is np.add:
        if values.dtype in (np.float32, np.float64):  # no ufunc.at loop over entries
            return np.bincount(group, weights=values, minlength=n).astype(values.dtype)
        out = np.zeros(n, dtype=values.dtype)
    else:
        kind = np.dtype(values.dtype).kind
        lowest = -np.inf if kind in "fc" else np.iinfo(values.dtype).min
        out = np.full(n, lowest, dtype=values.dtype)
    ufunc.at(out, group, values)
    return out


def _reduce_out_shape(shape, kept, axes, keep_dims):
    return [1 if d in axes else int(shape[d]) for d in range(len(shape))] if keep_dims \
        else [int(shape[d]) for d in kept]


def _make_reduce_kernel(ufunc, sparse_out: bool):
    def body(ctx, indices, values, shape, axes):
        keep_dims = ctx.attrs["keep_dims"]
        group, uniq, kept, axes = _reduce_groups(ctx, indices, values, shape, axes)
        sums = _reduce_values(ufunc, values, group, uniq.shape[0])
        out_shape = _reduce_out_shape(shape, kept, axes, keep_dims)
        if keep_dims:
            full = np.zeros((uniq.shape[0], len(shape)), np.int64)
            full[:, kept] = uniq
            uniq = full
        if sparse_out:
            return uniq.astype(np.int64), sums, np.asarray(out_shape, np.int64)
        dense = np.zeros(out_shape, dtype=values.dtype)
        if uniq.shape[0]:
            flat = np.ravel_multi_index(tuple(uniq.T), out_shape) if uniq.shape[1] else \
                np.zeros(uniq.shape[0], np.intp)
            dense.reshape(-1)[flat] = sums
        return ctx.xp.asarray(dense)
    return body


def _reduce_static_shape(op):
    shape = tensor_util.constant_value_as_shape(op.inputs[2])
    axes = tensor_util.constant_value(op.inputs[3])
    if shape.ndims is None or axes is None:
        return None
    rank = shape.ndims
    axes = sorted({int(a) % rank for a in np.asarray(axes).reshape(-1).tolist()}) \
        if rank else []
    dims = shape.as_list()
    if op._get_attr("keep_dims"):
        return TensorShape([1 if d in axes else dims[d] for d in range(rank)])
    return TensorShape([dims[d] for d in range(rank) if d not in axes])


def _dense_reduce_shape(op):
    out = _reduce_static_shape(op)
    return unknown_shape() if out is None else out


def _sparse_reduce_shape(op):
    out = _reduce_static_shape(op)
    rank = None if out is None else out.ndims
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


_REDUCE_IN = ["input_indices: int64", "input_values: T", "input_shape: int64",
              "reduction_axes: int32"]
for _name, _ufunc, _types in (("Sum", np.add, _dt.NUMBERS),
                              ("Max", np.maximum, _dt.REAL_NUMBERS)):
    register_op("SparseReduce" + _name, inputs=_REDUCE_IN, outputs=["output: T"],
                attrs={"T": TypeAttr(_types), "keep_dims": False}, shape=_dense_reduce_shape)
    register_op("SparseReduce%sSparse" % _name, inputs=_REDUCE_IN,
                outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
                attrs={"T": TypeAttr(_types), "keep_dims": False}, shape=_sparse_reduce_shape)
    kernel("SparseReduce" + _name)(_make_reduce_kernel(_ufunc, False))
    kernel("SparseReduce%sSparse" % _name)(_make_reduce_kernel(_ufunc, True))


def _no_gradient(op, *unused_grads):
    # TF registers no gradient for these, so tf.gradients through them raises LookupError;
    # registered here so that the registry knows the op's gradient status
    raise LookupError("No gradient defined for operation '%s' (op type: %s)"
                      % (op.name, op.type))


for _op_type in ("SparseReduceMax", "SparseReduceMaxSparse", "SparseReduceSumSparse"):
    gradient(_op_type)(_no_gradient)


@gradient("SparseReduceSum")
def _sparse_reduce_sum_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_fill_ops import ones_like
    from tensorweave.ops.indexing.indexing_gather import gather_nd
    from tensorweave.ops.indexing.indexing_select import where
    from tensorweave.ops.math import math_binary, math_ops, reduction_ops
    from tensorweave.ops.math.math_unary import logical_not
    indices, _, shape, axes = op.inputs
    rank = array_ops.size(shape, out_type=_dt.int32)
    axes = math_binary.floormod(array_ops.reshape(axes, [-1, 1]), rank)
    reduced = reduction_ops.reduce_any(math_binary.equal(axes, math_ops.range(rank)), axis=0)
    grad_kept = array_ops.reshape(grad, where(reduced, ones_like(shape), shape))
    # each entry reads the kept-dims gradient at its index with reduced coordinates at 0
    rows = indices * math_ops.cast(logical_not(reduced), _dt.int64)
    return [None, gather_nd(grad_kept, rows), None, None]


def _reduce_builder(op_type: str, sparse_out: bool, sp_input, axis, keepdims, reduction_axes,
                    keep_dims):
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'.")
    if axis is not None and reduction_axes is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_axes'.")
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    axis = reduction_axes if axis is None else axis
    sp = _su.to_sparse(sp_input)
    if axis is None:
        rank = sp.shape.ndims
        if rank is not None:
            axes = convert_to_tensor(np.arange(rank, dtype=np.int32))
        else:
            from tensorweave.ops.array import array_ops
            from tensorweave.ops.math import math_ops
            axes = math_ops.range(array_ops.size(sp.dense_shape, out_type=_dt.int32))
    else:
        axes = axis  # int32, as TF's op: another type is the op's TypeError
    op = apply_op(op_type, _triple(sp) + [axes], {"keep_dims": keepdims}, name=op_type)
    if not sparse_out:
        return op.outputs[0]
    return _su.make_sparse(op.outputs[0], op.outputs[1], op.outputs[2])


_REDUCE_DOC = """{what} of a SparseTensor over `axis` (TF1 `tf.sparse.{name}`).

    Only the entries present take part; {empty}.

    Args:
      sp_input: a SparseTensor.
      axis: the axes to reduce (None: all); negative axes count from the end.
      keepdims: keep the reduced axes with size 1.
      reduction_axes: deprecated alias of `axis`.
      keep_dims: deprecated alias of `keepdims`.

    Returns:
      {result}

    Raises:
      InvalidArgumentError (at run time): an axis out of range.
    """


def _export_reduce(op_type, name, what, empty, sparse_out, names):
    def build(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
        return _reduce_builder(op_type, sparse_out, sp_input, axis, keepdims,
                               reduction_axes, keep_dims)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = _REDUCE_DOC.format(
        what=what, name=name, empty=empty,
        result="A SparseTensor of the reduced entries (sorted)." if sparse_out
        else "A dense Tensor of the reduced shape.")
    return tf_export(*names)(build)


reduce_sum = _export_reduce("SparseReduceSum", "reduce_sum", "The sum",
                            "a sum over no entries is 0", False,
                            ("sparse.reduce_sum", "sparse_reduce_sum"))
reduce_sum_sparse = _export_reduce("SparseReduceSumSparse", "reduce_sum_sparse", "The sum",
                                   "outputs with no entries are left out", True,
                                   ("sparse.reduce_sum_sparse", "sparse_reduce_sum_sparse"))
reduce_max = _export_reduce("SparseReduceMax", "reduce_max", "The maximum",
                            "a maximum over no entries is 0", False,
                            ("sparse.reduce_max", "sparse_reduce_max"))
reduce_max_sparse = _export_reduce("SparseReduceMaxSparse", "reduce_max_sparse",
                                   "The maximum", "outputs with no entries are left out", True,
                                   ("sparse.reduce_max_sparse", "sparse_reduce_max_sparse"))


# --- SparseSparseMaximum / Minimum --------------------------------------------------------
for _op_type in ("SparseSparseMaximum", "SparseSparseMinimum"):
    register_op(_op_type, inputs=_SPARSE_IN + ["b_indices: int64", "b_values: T",
                                               "b_shape: int64"],
                outputs=["output_indices: int64", "output_values: T"],
                attrs={"T": TypeAttr(_dt.REAL_NUMBERS)},
                shape=lambda op: list(_nnz_shapes(op)))
    not_differentiable(_op_type)


def _sparse_min_max_kernel(ufunc):
    def body(ctx, a_idx, a_val, a_shape, b_idx, b_val, b_shape):
        _su.check_sparse(ctx, a_idx, a_val, a_shape)
        _su.check_sparse(ctx, b_idx, b_val, b_shape)
        if not np.array_equal(a_shape, b_shape):
            raise _su.invalid(ctx, "Operands do not have the same ranks; got shapes: %s and "
                              "%s" % (_su.shape_str(a_shape), _su.shape_str(b_shape)))
        srt, order, pair = _merge_sorted(a_idx, a_val, b_idx, b_val)
        vals = np.concatenate([a_val, b_val])[order]
        second = np.zeros(len(order), bool)
        second[1:] = pair[:-1]
        # an index in one operand only meets an implicit zero in the other
        zero = np.zeros((), vals.dtype)
        out = ufunc(vals, zero)
        out[pair] = ufunc(vals[pair], vals[np.flatnonzero(pair) + 1])
        return srt[~second], out[~second].astype(a_val.dtype)
    return body


kernel("SparseSparseMaximum")(_sparse_min_max_kernel(np.maximum))
kernel("SparseSparseMinimum")(_sparse_min_max_kernel(np.minimum))


def _min_max_builder(op_type, sp_a, sp_b, name):
    a, b = _su.to_sparse(sp_a), _su.to_sparse(sp_b)
    with name_scope(name, op_type, [a.indices, a.values, b.indices, b.values]) as scope:
        op = apply_op(op_type, _triple(a) + [b.indices, b.values, b.dense_shape],
                      name=scope)
        return _su.make_sparse(op.outputs[0], op.outputs[1], a.dense_shape, a.shape)


@tf_export("sparse.maximum", "sparse_maximum")
def sparse_maximum(sp_a, sp_b, name: Optional[str] = None) -> SparseTensor:
    """The elementwise maximum of two SparseTensors of one shape (TF1); a missing entry
    counts as 0. Both must have sorted indices.

    Args:
      sp_a: a SparseTensor.
      sp_b: a SparseTensor of the same dtype and dense shape.
      name: op name scope.

    Returns:
      A SparseTensor over the union of the indices.
    """
    return _min_max_builder("SparseSparseMaximum", sp_a, sp_b, name)


@tf_export("sparse.minimum", "sparse_minimum")
def sparse_minimum(sp_a, sp_b, name: Optional[str] = None) -> SparseTensor:
    """The elementwise minimum of two SparseTensors of one shape (TF1); a missing entry
    counts as 0. Both must have sorted indices.

    Args:
      sp_a: a SparseTensor.
      sp_b: a SparseTensor of the same dtype and dense shape.
      name: op name scope.

    Returns:
      A SparseTensor over the union of the indices.
    """
    return _min_max_builder("SparseSparseMinimum", sp_a, sp_b, name)


# --- SparseSoftmax ------------------------------------------------------------------------
register_op("SparseSoftmax", inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"],
            outputs=["output: T"],
            attrs={"T": TypeAttr((_dt.float16, _dt.float32, _dt.float64))},
            shape=lambda op: op.inputs[1].shape.with_rank(1))


@kernel("SparseSoftmax")
def _sparse_softmax_kernel(ctx, indices, values, shape):
    _su.check_sparse(ctx, indices, values, shape)
    if indices.shape[1] < 2:
        raise _su.invalid(ctx, "Input should have rank >= 2, but received shape: %s"
                          % _su.shape_str(shape))
    if not values.size:
        return values.copy()
    group, = _su.row_ids(indices[:, :-1])
    n = int(group.max()) + 1
    top = np.full(n, -np.inf, dtype=values.dtype)
    np.maximum.at(top, group, values)
    e = np.exp(values - top[group])
    total = np.zeros(n, dtype=values.dtype)
    np.add.at(total, group, e)
    return (e / total[group]).astype(values.dtype)


@gradient("SparseSoftmax")
def _sparse_softmax_grad(op, grad):
    indices, _, shape = op.inputs
    y = op.outputs[0]
    # dx = y * (g - sum over the row of y * g)
    row_sums = reduce_sum(SparseTensor(indices, y * grad, shape), axis=[-1], keepdims=True)
    from tensorweave.ops.array.array_fill_ops import zeros_like
    from tensorweave.ops.array.array_join_ops import concat
    from tensorweave.ops.indexing.indexing_gather import gather_nd
    rows = concat([indices[:, :-1], zeros_like(indices[:, -1:])], axis=1)
    return [None, y * (grad - gather_nd(row_sums, rows)), None]


@tf_export("sparse.softmax", "sparse_softmax")
def sparse_softmax(sp_input, name: Optional[str] = None) -> SparseTensor:
    """Softmax over the entries present in each innermost row of a SparseTensor (TF1);
    missing entries stay missing (they are not zeros with weight exp(0)).

    Args:
      sp_input: a SparseTensor of rank >= 2 with float values and sorted indices.
      name: op name scope.

    Returns:
      A SparseTensor with the indices and shape of `sp_input`.
    """
    sp = _su.to_sparse(sp_input)
    with name_scope(name, "SparseSoftmax", [sp.indices, sp.values]) as scope:
        out = apply_op("SparseSoftmax", _triple(sp), name=scope).outputs[0]
        return _su.make_sparse(sp.indices, out, sp.dense_shape, sp.shape)


# --- SparseTensorDenseMatMul ----------------------------------------------------------------
def _sparse_matmul_shape(op):
    _, _, a_shape, b = op.inputs
    b_shape = b.shape.with_rank(2)
    adj_a, adj_b = op._get_attr("adjoint_a"), op._get_attr("adjoint_b")
    a_static = tensor_util.constant_value_as_shape(a_shape)
    if a_static.ndims is not None and a_static.ndims != 2:
        raise ValueError("Shape must be rank 2 but is rank %d" % a_static.ndims)
    rows = a_static[1 if adj_a else 0].value if a_static.ndims == 2 else None
    inner_a = a_static[0 if adj_a else 1].value if a_static.ndims == 2 else None
    inner_b = b_shape[1 if adj_b else 0].value
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise ValueError("Dimensions must be equal, but are %d and %d" % (inner_a, inner_b))
    return TensorShape([rows, b_shape[0 if adj_b else 1]])


register_op("SparseTensorDenseMatMul",
            inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
            outputs=["product: T"],
            attrs={"T": TypeAttr(_dt.NUMBERS),
                   "Tindices": TypeAttr((_dt.int32, _dt.int64), default=_dt.int64),
                   "adjoint_a": False, "adjoint_b": False},
            shape=_sparse_matmul_shape)


@kernel("SparseTensorDenseMatMul", cheap=False)
def _sparse_matmul_kernel(ctx, a_idx, a_val, a_shape, b):
    xp = ctx.xp
    if a_idx.ndim != 2 or a_idx.shape[1] != 2 or np.size(a_shape) != 2:
        raise _su.invalid(ctx, "Tensor 'a_shape' is not a 2-vector nor 'a_indices' a matrix "
                          "with 2 columns")
    if b.ndim != 2:
        raise _su.invalid(ctx, "Tensor 'b' is not a matrix")
    adj_a, adj_b = ctx.attrs["adjoint_a"], ctx.attrs["adjoint_b"]
    m, k = (int(a_shape[1]), int(a_shape[0])) if adj_a else (int(a_shape[0]), int(a_shape[1]))
    b_eff = xp.conj(b.T) if adj_b else b
    if b_eff.shape[0] != k:
        raise _su.invalid(ctx, "Cannot multiply A and B because inner dimension does not "
                          "match: %d vs. %d.  Did you forget a transpose?  Dimensions of A: "
                          "[%d, %d).  Dimensions of B: %s" % (k, b_eff.shape[0], m, k,
                                                              _su.shape_str(b.shape)))
    rows, cols = (a_idx[:, 1], a_idx[:, 0]) if adj_a else (a_idx[:, 0], a_idx[:, 1])
    vals = xp.conj(a_val) if adj_a else a_val
    bad_k = np.flatnonzero((cols < 0) | (cols >= k))
    if bad_k.size:
        i = int(bad_k[0])
        raise _su.invalid(ctx, "k (%d) from index[%d,%d] out of bounds (>=%d)"
                          % (int(cols[i]), i, 0 if adj_a else 1, k))
    bad_m = np.flatnonzero((rows < 0) | (rows >= m))
    if bad_m.size:
        i = int(bad_m[0])
        raise _su.invalid(ctx, "m (%d) from index[%d,%d] out of bounds (>=%d)"
                          % (int(rows[i]), i, 1 if adj_a else 0, m))
    if xp is np and rows.size >= 2:
        # SciPy's CSR product: these sums in C (ops/group_fold.py): [1024, 50,000] x
        # [50,000, 64] of 20,000 entries 2.3 -> 0.33 ms, its adjoint 1.8 -> 1.6 ms
        out = entry_order_product(rows, cols, vals, m, k, b_eff)
        if out is not None:
            return out
    out = xp.zeros((m, b_eff.shape[1]), dtype=b.dtype)
    products = vals[:, None] * b_eff[cols]
    if xp is not np or rows.size < 2:
        xp.add.at(out, rows, products)
        return out
    # each output row is its products added one after another from zero, as TF's loop
    # over the entries does (np.add.reduceat's sums differed in the last bits), a round
    # per repeat depth (ops/group_fold.py): the gradient of a [1024, 50,000] product of
    # 20,000 entries, whose adjoint's rows are unsorted, 8.4 -> 2.2 ms
    index, sums = fold_in_groups(np.add, None, rows, products.astype(out.dtype, copy=False))
    out[index] = sums
    return out


@gradient("SparseTensorDenseMatMul")
def _sparse_matmul_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing.indexing_gather import gather
    from tensorweave.ops.math.math_unary import conj
    from tensorweave.ops.math.reduction_ops import reduce_sum as dense_sum
    a_idx, a_val, a_shape, b = op.inputs
    adj_a, adj_b = op._get_attr("adjoint_a"), op._get_attr("adjoint_b")
    is_complex = b.dtype in (_dt.complex64, _dt.complex128)

    def c(x):
        return conj(x) if is_complex else x
    # d/dB of A_eff B_eff is A_eff^H G (adjointed back when B was adjointed)
    b_grad = apply_op("SparseTensorDenseMatMul", [a_idx, a_val, a_shape, grad],
                      {"adjoint_a": not adj_a}).outputs[0]
    if adj_b:
        b_grad = c(array_ops.transpose(b_grad))
    b_eff = c(array_ops.transpose(b)) if adj_b else b
    rows, cols = a_idx[:, 0], a_idx[:, 1]
    if not adj_a:  # entry (r, c) of G B_eff^H
        a_grad = dense_sum(gather(grad, rows) * c(gather(b_eff, cols)), axis=1)
    else:  # entry (r, c) of B_eff G^H
        a_grad = dense_sum(gather(b_eff, rows) * c(gather(grad, cols)), axis=1)
    return [None, a_grad, None, b_grad]


@tf_export("sparse.sparse_dense_matmul", "sparse.matmul", "sparse_tensor_dense_matmul")
def sparse_tensor_dense_matmul(sp_a, b, adjoint_a: bool = False, adjoint_b: bool = False,
                               name: Optional[str] = None) -> Tensor:
    """The product of a rank-2 SparseTensor and a dense matrix (TF1).

    Args:
      sp_a: a SparseTensor of rank 2 (any index order; repeated indices add up).
      b: a dense matrix of the same dtype.
      adjoint_a: use the conjugate transpose of `sp_a`.
      adjoint_b: use the conjugate transpose of `b`.
      name: op name scope.

    Returns:
      A dense matrix [rows of op(sp_a), columns of op(b)].

    Raises:
      ValueError: static inner dimensions that differ.
      InvalidArgumentError (at run time): an index out of bounds.
    """
    sp = _su.to_sparse(sp_a)
    with name_scope(name, "SparseTensorDenseMatMul", [sp.indices, sp.values, b]) as scope:
        b = convert_to_tensor(b, name="b")  # as TF: another dtype is the op's TypeError
        return apply_op("SparseTensorDenseMatMul", _triple(sp) + [b],
                        {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
                        name=scope).outputs[0]
