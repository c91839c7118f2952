"""Scatters into a copy of a tensor: TensorScatterUpdate, TensorScatterAdd,
TensorScatterSub, TensorScatterMax, TensorScatterMin (TF1 `tf.tensor_scatter_nd_*`)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, gradient, kernel, register_op
from tensorweave.framework.shapes import with_rank_at_least
from tensorweave.ops.indexing.indexing_gather import _check_nd_indices, _flat_rows, \
    check_scatter_shapes, gather_nd, scatter_nd
from tensorweave.ops.indexing.indexing_ops import invalid, shape_str, shape_tensor


def _tensor_scatter_shape(op):
    tensor, indices, updates = op.inputs
    i = with_rank_at_least(indices.shape, 1)
    t, u = tensor.shape, updates.shape
    if i.ndims is None or u.ndims is None or t.ndims is None or i[-1].value is None:
        return t
    k = i[-1].value
    if k > t.ndims:
        raise ValueError("Index innermost dimension length must be <= tensor rank; saw: "
                         "%d vs. %d" % (k, t.ndims))
    check_scatter_shapes(i, u, t)
    return t


# op type -> (the NumPy ufunc whose .at applies the updates, or None to assign; dtypes)
_OPS = {
    "TensorScatterUpdate": (None, None),
    "TensorScatterAdd": (np.add, _dt.NUMBERS),
    "TensorScatterSub": (np.subtract, _dt.NUMBERS),
    "TensorScatterMax": (np.maximum, _dt.REAL_NUMBERS),
    "TensorScatterMin": (np.minimum, _dt.REAL_NUMBERS),
}


def _make_kernel(ufunc):
    def body(ctx, tensor, indices, updates):
        xp = ctx.xp
        if indices.ndim < 1:
            raise invalid(ctx, "Indices shape must have rank at least one. Found:%s"
                          % shape_str(indices.shape))
        k, outer = indices.shape[-1], indices.ndim - 1
        shape = tensor.shape
        if k > len(shape):
            raise invalid(ctx, "Index innermost dimension length must be <= tensor rank; "
                          "saw: %d vs. %d" % (k, len(shape)))
        if updates.shape[:outer] != indices.shape[:outer] or \
                updates.shape[outer:] != shape[k:]:
            raise invalid(ctx, "Dimensions [0,%d) of indices[shape=%s] must match dimensions "
                          "[0,%d) of updates[shape=%s], and the rest of updates must match "
                          "dimensions [%d,%d) of tensor[shape=%s]"
                          % (outer, shape_str(indices.shape), outer,
                             shape_str(updates.shape), k, len(shape), shape_str(shape)))
        idx = indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), k)
        _check_nd_indices(ctx, idx, indices.shape[:-1], shape[:k], "shape", shape)
        inner = shape[k:]
        out = tensor.copy()
        rows = _flat_rows(idx, shape[:k])
        flat_out = out.reshape((-1,) + inner)
        flat_updates = updates.reshape((-1,) + inner)
        if ufunc is None:
            flat_out[rows] = flat_updates
        else:
            getattr(xp, ufunc.__name__).at(flat_out, rows, flat_updates)
        return out
    return body


for _op_type, (_ufunc, _types) in _OPS.items():
    register_op(_op_type, inputs=["tensor: T", "indices: Tindices", "updates: T"],
                outputs=["output: T"],
                attrs={"T": TypeAttr(_types),
                       "Tindices": TypeAttr((_dt.int16, _dt.int32, _dt.int64))},
                shape=_tensor_scatter_shape)
    kernel(_op_type)(_make_kernel(_ufunc))


@gradient("TensorScatterUpdate")
def _update_grad(op, grad):
    from tensorweave.ops.array.array_fill_ops import zeros_like
    indices, updates = op.inputs[1], op.inputs[2]
    return [tensor_scatter_nd_update(grad, indices, zeros_like(updates)), None,
            gather_nd(grad, indices)]


@gradient("TensorScatterAdd")
def _add_grad(op, grad):
    return [grad, None, gather_nd(grad, op.inputs[1])]


@gradient("TensorScatterSub")
def _sub_grad(op, grad):
    return [grad, None, -gather_nd(grad, op.inputs[1])]


def _min_max_grad(op, grad):
    from tensorweave.ops.math import math_ops
    from tensorweave.ops.math.math_binary import equal
    x, indices, y = op.inputs
    out = op.outputs[0]
    # the gradient goes to every input equal to the result, shared equally among ties
    x_hits = math_ops.cast(equal(x, out), grad.dtype)
    y_hits = math_ops.cast(equal(y, gather_nd(out, indices)), grad.dtype)
    hits = x_hits + scatter_nd(indices, y_hits, shape_tensor(x, indices.dtype))
    return [grad * x_hits / hits, None, gather_nd(grad / hits, indices) * y_hits]


gradient("TensorScatterMax")(_min_max_grad)
gradient("TensorScatterMin")(_min_max_grad)


def _builder(op_type: str, what: str, py_name: str):
    def build(tensor, indices, updates, name: Optional[str] = None) -> Tensor:
        return apply_op(op_type, [tensor, indices, updates], name=name or op_type).outputs[0]
    build.__doc__ = """A copy of `tensor` with `updates` %s at `indices` (TF1).

    Args:
      tensor: the Tensor to copy.
      indices: int16/int32/int64 Tensor [..., K] of index tuples into `tensor`.
      updates: Tensor indices.shape[:-1] + tensor.shape[K:] of the dtype of `tensor`.
      name: op name.

    Returns:
      A Tensor of the shape and dtype of `tensor`.

    Raises:
      ValueError: static shapes that do not fit together.
      InvalidArgumentError (at run time): an index tuple out of range.
    """ % what
    build.__name__ = build.__qualname__ = py_name
    return build


tensor_scatter_nd_update = tf_export("tensor_scatter_nd_update", "tensor_scatter_update")(
    _builder("TensorScatterUpdate", "written (duplicates: one of them wins)",
             "tensor_scatter_nd_update"))
tensor_scatter_nd_add = tf_export("tensor_scatter_nd_add", "tensor_scatter_add")(
    _builder("TensorScatterAdd", "added (duplicates add up)",
             "tensor_scatter_nd_add"))
tensor_scatter_nd_sub = tf_export("tensor_scatter_nd_sub", "tensor_scatter_sub")(
    _builder("TensorScatterSub", "subtracted (duplicates add up)",
             "tensor_scatter_nd_sub"))
tensor_scatter_nd_max = tf_export("tensor_scatter_nd_max")(
    _builder("TensorScatterMax", "combined by maximum",
             "tensor_scatter_nd_max"))
tensor_scatter_nd_min = tf_export("tensor_scatter_nd_min")(
    _builder("TensorScatterMin", "combined by minimum",
             "tensor_scatter_nd_min"))
