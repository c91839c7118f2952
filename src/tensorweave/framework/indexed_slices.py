"""IndexedSlices: a sparse set of rows of a dense tensor, as gradients of gathers are.

`IndexedSlices(values, indices, dense_shape)` stands for the dense tensor whose rows
`indices` hold `values` (rows named twice add up). Gradient aggregation keeps them sparse
so that optimizers can update only the rows a step touched; anything that needs a dense
tensor converts them through the registered conversion function.
"""
from __future__ import annotations

import collections
import warnings
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import register_tensor_conversion_function

# TF1 warns when densifying more than this many elements (or an unknown number).
_LARGE_SPARSE_NUM_ELEMENTS = 100000000


class IndexedSlices:
    """A sparse representation of a set of tensor slices at given indices (TF1).

    Args:
      values: a Tensor of shape [N] + dense_shape[1:].
      indices: a 1-D integer Tensor of N row indices.
      dense_shape: optional 1-D integer Tensor, the shape of the dense tensor.
    """

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Optional[Tensor] = None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    name = property(lambda self: self._values.name)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)
    device = property(lambda self: self._values.device)

    @property
    def shape(self):
        from tensorweave.framework import tensor_util
        from tensorweave.framework.shapes import TensorShape
        if self._dense_shape is None:
            return TensorShape(None)
        return tensor_util.constant_value_as_shape(self._dense_shape)

    def _fetch_components(self):
        parts = [self._values, self._indices]
        return parts + ([self._dense_shape] if self._dense_shape is not None else [])

    @staticmethod
    def _fetch_rebuild(vals):
        return IndexedSlicesValue(vals[0], vals[1], vals[2] if len(vals) > 2 else None)

    def _feed_components(self):
        return [self._values, self._indices] + (
            [self._dense_shape] if self._dense_shape is not None else [])

    def _split_feed(self, value):
        # as TF: the parts are paired with (values, indices[, dense_shape]) in order
        if isinstance(value, IndexedSlicesValue):
            value = (value.values, value.indices, value.dense_shape)
        if isinstance(value, (tuple, list)):
            return list(value)
        raise TypeError("The value of a feed for an IndexedSlices must be a "
                        "tf.IndexedSlicesValue or a (values, indices, dense_shape) tuple, "
                        "got %r" % (value,))

    def _identity_for(self, name=None) -> "IndexedSlices":
        """tf.identity of IndexedSlices: each component through an Identity (TF's
        composite rule, which drops `name`)."""
        from tensorweave.ops.control_flow.structure import identity
        return IndexedSlices(identity(self._values), identity(self._indices),
                             None if self._dense_shape is None else
                             identity(self._dense_shape))

    def __neg__(self):
        from tensorweave.ops.math import math_unary
        return IndexedSlices(math_unary.negative(self._values), self._indices,
                             self._dense_shape)

    def __repr__(self):
        return "IndexedSlices(indices=%s, values=%s%s)" % (
            self._indices, self._values,
            "" if self._dense_shape is None else ", dense_shape=%s" % self._dense_shape)


class IndexedSlicesValue(collections.namedtuple("IndexedSlicesValue",
                                                 ["values", "indices", "dense_shape"])):
    """The value of an IndexedSlices fetched by `Session.run`: a namedtuple, as TF's
    (`values, indices, dense_shape = sess.run(grad)`)."""

    __slots__ = ()

    def __new__(cls, values: np.ndarray, indices: np.ndarray, dense_shape=None):
        return super().__new__(cls, values, indices, dense_shape)

    def to_dense(self) -> np.ndarray:
        """The dense array these slices stand for (duplicate rows summed)."""
        out = np.zeros(self.dense_shape, dtype=self.values.dtype)
        np.add.at(out, self.indices, self.values)
        return out


def as_indexed_slices(x, optimize: bool = True) -> IndexedSlices:
    """`x` as IndexedSlices: itself, or a dense Tensor as all its rows (indices
    0..n-1, dense_shape its shape; TF's `math_ops._as_indexed_slices`). With `optimize`
    False the shape is computed at run time, so inside control flow the slices are dead
    exactly when `x` is.

    Raises:
      TypeError: `x` is neither a Tensor nor IndexedSlices.
    """
    if isinstance(x, IndexedSlices):
        return x
    if not isinstance(x, Tensor):
        raise TypeError("Not a Tensor or IndexedSlices: %s." % type(x).__name__)
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops
    shape = array_ops._shape_internal(x, optimize=optimize)
    return IndexedSlices(x, math_ops.range(0, shape[0]), shape)


def as_indexed_slices_list(inputs, optimize: bool = True) -> list:
    """Every element of `inputs` (Tensors or IndexedSlices) as IndexedSlices, their
    indices all int32 or, where any is int64, all int64 (TF's
    `math_ops._as_indexed_slices_list`)."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Expected a list or tuple, not %s." % type(inputs).__name__)
    out = [as_indexed_slices(x, optimize=optimize) for x in inputs]
    narrow = [s for s in out if s.indices.dtype.base_dtype is _dt.int32]
    if not narrow or len(narrow) == len(out):
        return out
    from tensorweave.ops.math import math_ops
    return [IndexedSlices(s.values, math_ops.cast(s.indices, _dt.int64), s.dense_shape)
            if s.indices.dtype.base_dtype is _dt.int32 else s for s in out]


def _indexed_slices_to_tensor(value: IndexedSlices, dtype=None, name=None, as_ref=False):
    from tensorweave.framework import tensor_util
    from tensorweave.ops.math import segment_ops
    if dtype is not None and not _dt.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError("Tensor conversion requested dtype %s for IndexedSlices with dtype %s"
                         % (_dt.as_dtype(dtype).name, value.dtype.name))
    if value.dense_shape is None:
        raise ValueError("Tensor conversion requested for IndexedSlices without dense_shape: %s"
                         % value.name)
    static = tensor_util.constant_value(value.dense_shape)
    if static is None:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.", stacklevel=3)
    elif int(np.prod(static)) > _LARGE_SPARSE_NUM_ELEMENTS:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor with %d elements. "
                      "This may consume a large amount of memory." % int(np.prod(static)),
                      stacklevel=3)
    return segment_ops.unsorted_segment_sum(value.values, value.indices,
                                            value.dense_shape[0], name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


def static_dense_shape(g):
    """The dense shape of IndexedSlices `g` if known at build time (else None)."""
    from tensorweave.framework.tensor_util import constant_value
    return constant_value(g.dense_shape) if isinstance(g, IndexedSlices) and \
        g.dense_shape is not None else None
