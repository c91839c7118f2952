"""Gradients of the reductions Sum, Mean, Max, Min and Prod (part of the reduction family).

All of them first bring the output gradient back to the input's rank by reshaping it to
the "kept dims" shape (reduced axes as 1). That shape is a Python list when the rank,
the axes and the kept dims are known at build time, an int32 tensor computed from a
static mask when only the rank and axes are, and a small int32 computation otherwise.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.registry import gradient


def _static_axes(x, axes_t) -> Optional[List[int]]:
    """Sorted normalised reduction axes, if the rank and axes are known at build time."""
    rank = x.shape.ndims
    axes = tensor_util.constant_value(axes_t)
    if rank is None or axes is None:
        return None
    if rank == 0:
        return []
    return sorted({int(a) % rank for a in np.asarray(axes).reshape(-1).tolist()})


def _kept_dims_shape(x, axes_t):
    """The shape of `x` with the reduced axes set to 1 (list of ints or int32 tensor)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    axes = _static_axes(x, axes_t)
    if axes is not None:
        dims = x.shape.as_list()
        kept = [1 if i in axes else d for i, d in enumerate(dims)]
        if None not in kept:
            return kept
        mask = np.array([1 if i in axes else 0 for i in range(len(dims))], dtype=np.int32)
        return math_binary.add(math_binary.multiply(array_ops.shape(x), 1 - mask), mask)
    shape = array_ops.shape(x)
    rank = array_ops.size(shape)
    axes_n = math_binary.floormod(
        array_ops.reshape(math_ops.cast(axes_t, _dt.int32), [1, -1]), rank)
    positions = array_ops.reshape(math_ops.range(0, rank), [-1, 1])
    from tensorweave.ops.math.reduction_ops import reduce_any
    mask = math_ops.cast(reduce_any(math_binary.equal(positions, axes_n), axis=1), _dt.int32)
    return math_binary.add(math_binary.multiply(shape, math_binary.subtract(1, mask)), mask)


def _shape_of(x):
    from tensorweave.ops.array import array_ops
    return x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)


def _grad_kept_dims(op, grad):
    """`grad` reshaped to the input's rank (reduced axes of length 1)."""
    from tensorweave.ops.array import array_ops
    if op._get_attr("keep_dims"):
        return grad
    return array_ops.reshape(grad, _kept_dims_shape(op.inputs[0], op.inputs[1]))


def _broadcast_grad(op, grad):
    """The output gradient broadcast back to the input's shape."""
    from tensorweave.ops.array import array_ops
    x = op.inputs[0]
    if op.outputs[0].shape.is_fully_defined() and x.shape.is_fully_defined() and \
            op.outputs[0].shape.as_list() == x.shape.as_list():
        return grad  # nothing was reduced
    return array_ops.broadcast_to(_grad_kept_dims(op, grad), _shape_of(x))


@gradient("Sum")
def _sum_grad(op, grad):
    return [_broadcast_grad(op, grad), None]


@gradient("Mean")
def _mean_grad(op, grad):
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_ops
    x, y = op.inputs[0], op.outputs[0]
    n_in, n_out = x.shape.num_elements(), y.shape.num_elements()
    if n_in is not None and n_out is not None:
        factor = np.asarray(n_in // max(n_out, 1), dtype=x.dtype.as_numpy_dtype)
    else:
        factor = math_ops.cast(
            math_binary.floordiv(array_ops.size(x), math_binary.maximum(array_ops.size(y), 1)),
            x.dtype)
    return [math_binary.divide(_broadcast_grad(op, grad), factor), None]


def _min_or_max_grad(op, grad):
    # the gradient is split equally among the entries equal to the extremum
    from tensorweave.ops.math import math_binary, math_ops
    from tensorweave.ops.math.reduction_ops import reduce_sum
    x = op.inputs[0]
    y = _grad_kept_dims(op, op.outputs[0])
    g = _grad_kept_dims(op, grad)
    indicators = math_ops.cast(math_binary.equal(y, x), grad.dtype)
    num_selected = reduce_sum(indicators, op.inputs[1], keepdims=True)
    share = math_binary.divide(indicators, num_selected)
    return [math_binary.multiply(share, g), None]


@gradient("Max")
def _max_grad(op, grad):
    return _min_or_max_grad(op, grad)


@gradient("Min")
def _min_grad(op, grad):
    return _min_or_max_grad(op, grad)


@gradient("Prod")
def _prod_grad(op, grad):
    """TF's rule: the gradient of x_i is the product of the other reduced entries,
    computed with exclusive cumulative products from both ends (exact with zeros)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_binary, math_unary
    from tensorweave.ops.math.scan_ops import cumprod
    x = op.inputs[0]
    axes = _static_axes(x, op.inputs[1])
    if axes is None:
        return [_prod_grad_dynamic(op, grad), None]
    rank = x.shape.ndims
    dims = x.shape.as_list()
    other = [i for i in range(rank) if i not in axes]
    perm = axes + other
    identity_perm = perm == list(range(rank))
    permuted = x if identity_perm else array_ops.transpose(x, perm)
    reduced_n = _product([dims[i] for i in axes])
    other_n = _product([dims[i] for i in other])
    if reduced_n is not None:
        flat_shape = [reduced_n, -1]
    elif other_n is not None:
        flat_shape = [-1, other_n]
    else:
        flat_shape = array_ops.stack([-1, array_ops.size(op.outputs[0])])
    flat = array_ops.reshape(permuted, flat_shape)
    left = cumprod(flat, axis=0, exclusive=True)
    right = cumprod(flat, axis=0, exclusive=True, reverse=True)
    if x.dtype.is_complex:
        left, right = math_unary.conj(left), math_unary.conj(right)
    others = array_ops.reshape(math_binary.multiply(left, right), _shape_of(permuted))
    if not identity_perm:
        others = array_ops.transpose(others, list(np.argsort(perm)))
    return [math_binary.multiply(_broadcast_grad(op, grad), others), None]


def _prod_grad_dynamic(op, grad):
    """_prod_grad when the rank or the axes are known only at run time: the permutation
    putting the reduced axes first is computed in the graph."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.array.array_sort_ops import setdiff1d
    from tensorweave.ops.indexing.indexing_gather import gather
    from tensorweave.ops.math import math_binary, math_ops, math_unary
    from tensorweave.ops.math.reduction_ops import reduce_prod
    from tensorweave.ops.math.scan_ops import cumprod
    x = op.inputs[0]
    shape = array_ops.shape(x)
    rank = array_ops.rank(x)
    reduced = math_binary.floormod(
        array_ops.reshape(math_ops.cast(op.inputs[1], _dt.int32), [-1]), rank)
    other, _ = setdiff1d(math_ops.range(0, rank), reduced)
    perm = array_ops.concat([reduced, other], 0)
    permuted = array_ops.transpose(x, perm)
    flat = array_ops.reshape(permuted, array_ops.stack([reduce_prod(gather(shape, reduced)),
                                                        reduce_prod(gather(shape, other))]))
    left = cumprod(flat, axis=0, exclusive=True)
    right = cumprod(flat, axis=0, exclusive=True, reverse=True)
    if x.dtype.is_complex:
        left, right = math_unary.conj(left), math_unary.conj(right)
    others = array_ops.reshape(math_binary.multiply(left, right), array_ops.shape(permuted))
    others = array_ops.transpose(others, array_ops.invert_permutation(perm))
    return math_binary.multiply(_broadcast_grad(op, grad), others)


def _product(dims) -> Optional[int]:
    n = 1
    for d in dims:
        if d is None:
            return None
        n *= d
    return n
