"""Assigning to a slice of a variable: `v[1:3].assign(x)`, `v[0, 2].assign(5.0)` (TF1's
StridedSliceAssign; ResourceStridedSliceAssign for its resource form).

`v[spec]` is the StridedSlice of the variable's value, as for any tensor; this module
remembers which variable such a slice came from, so that the slice has `assign`, as
TF1's `_SliceHelperVar` gives it one. The assign writes `x` into the slice in place
(under the variable's lock, as the scatter updates do) and returns the variable's new
value; `x` broadcasts against the slice.
"""
from __future__ import annotations

import functools
import weakref
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.ops.indexing import indexing_ops
from tensorweave.ops.state import resource_variable_ops as rv
from tensorweave.ops.state.variables import Variable

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")

register_op("ResourceStridedSliceAssign",
            inputs=["ref: resource", "begin: Index", "end: Index", "strides: Index",
                    "value: T"],
            attrs=dict({"T": TypeAttr(), "Index": TypeAttr(indexing_ops._INDEX_TYPES)},
                       **{m: 0 for m in _MASKS}),
            shape=lambda op: [], stateful=True)
not_differentiable("ResourceStridedSliceAssign")


@kernel("ResourceStridedSliceAssign")
def _strided_slice_assign_kernel(ctx, handle, begin, end, strides, value):
    index = None  # the NumPy index of the slice, from the variable's current shape

    def check(current):
        nonlocal index
        index = indexing_ops._numpy_index(ctx, current.shape, begin, end, strides)
        target = np.shape(current[index])
        try:
            np.broadcast_to(value, target)
        except ValueError:
            raise errors.InvalidArgumentError(
                None, ctx.op, "sliced l-value shape [%s] does not match r-value shape [%s]"
                % (",".join(map(str, target)), ",".join(map(str, np.shape(value))))) \
                from None

    def write(arr):
        arr[index] = value
    rv._apply_sparse(ctx, handle, write, check)
    return None


# the slices of variables made by Variable.__getitem__, and the variable of each
_SLICED: "weakref.WeakKeyDictionary[Tensor, Variable]" = weakref.WeakKeyDictionary()


def _assign_slice(var: Variable, sliced: Tensor, value, name: Optional[str] = None):
    """Writes `value` into the slice `sliced` of `var`; returns var's new value."""
    op = sliced.op
    _, begin, end, strides = op.inputs
    attrs = {m: op._get_attr(m) for m in _MASKS}

    def build(v, n):
        return apply_op("ResourceStridedSliceAssign", [var.handle, begin, end, strides, v],
                        attrs, name=n)
    return var._updated(build, "StridedSliceAssign", name, True, value)


def _slice_assign_attr(self):
    var = _SLICED.get(self)
    if var is None:
        raise AttributeError("'Tensor' object has no attribute 'assign'")
    return functools.partial(_assign_slice, var, self)


def _variable_getitem(self, slice_spec):
    sliced = Tensor.__getitem__(self.value(), slice_spec)
    if isinstance(sliced, Tensor) and sliced.op.type == "StridedSlice":
        _SLICED[sliced] = self
    return sliced


# a slice of a variable has `assign`; any other tensor has none (hasattr is False)
Tensor.assign = property(_slice_assign_attr)
Variable.__getitem__ = _variable_getitem
