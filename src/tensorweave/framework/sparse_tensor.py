"""SparseTensor and SparseTensorValue.

A `SparseTensor` is three dense tensors standing for one sparse one (DESIGN.md: sparse
values are tuples of dense tensors): `indices` (int64 [N, rank]) name the non-default
entries, `values` ([N]) hold them and `dense_shape` (int64 [rank]) is the shape of the
dense tensor. `Session.run` fetches it as a `SparseTensorValue` and accepts one (or an
`(indices, values, dense_shape)` or `(indices, values)` tuple) as the feed of a
SparseTensor, through the
`_fetch_components` / `_feed_components` protocol of runtime/session.py.
"""
from __future__ import annotations

import collections
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import convert_to_tensor, \
    register_tensor_conversion_function
from tensorweave.framework.shapes import TensorShape, as_shape

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = "The value of a SparseTensor fetched by `Session.run` (TF1)."
tf_export("SparseTensorValue")(SparseTensorValue)


@tf_export("SparseTensor", "sparse.SparseTensor")
class SparseTensor:
    """A sparse tensor as three dense tensors (TF1 `tf.SparseTensor`).

    Args:
      indices: int64 (or convertible) tensor of shape [N, rank]: the coordinates of the
        N specified entries.
      values: tensor of shape [N]: their values.
      dense_shape: int64 tensor of shape [rank]: the shape of the dense tensor.

    Raises:
      ValueError: the three shapes are not consistent (N and rank must agree).
    """

    def __init__(self, indices, values, dense_shape):
        with name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            indices = convert_to_tensor(indices, name="indices", dtype=_dt.int64)
            values = convert_to_tensor(values, name="values")
            dense_shape = convert_to_tensor(dense_shape, name="dense_shape",
                                            dtype=_dt.int64)
        indices_shape = indices.shape.with_rank(2)
        values_shape = values.shape.with_rank(1)
        dense_shape_shape = dense_shape.shape.with_rank(1)
        indices_shape[0].merge_with(values_shape[0])
        indices_shape[1].merge_with(dense_shape_shape[0])
        self._indices = indices
        self._values = values
        self._dense_shape = dense_shape
        self._dense_shape_default: Optional[TensorShape] = None

    @classmethod
    def from_value(cls, sparse_tensor_value) -> "SparseTensor":
        """A SparseTensor from a SparseTensor (returned as is) or a SparseTensorValue."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        if not is_sparse(sparse_tensor_value):
            raise TypeError("Neither a SparseTensor nor SparseTensorValue: %s."
                            % (sparse_tensor_value,))
        return cls(indices=sparse_tensor_value.indices, values=sparse_tensor_value.values,
                   dense_shape=sparse_tensor_value.dense_shape)

    indices = property(lambda self: self._indices,
                       doc="int64 tensor [N, rank]: coordinates of the entries.")
    values = property(lambda self: self._values, doc="tensor [N]: the entries.")
    dense_shape = property(lambda self: self._dense_shape,
                           doc="int64 tensor [rank]: shape of the dense tensor.")
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._indices.graph)

    @property
    def shape(self) -> TensorShape:
        """The static shape of the dense tensor, from `dense_shape` where known."""
        from tensorweave.framework import tensor_util
        shape = tensor_util.constant_value_as_shape(self._dense_shape)
        if self._dense_shape_default is not None:
            shape = shape.merge_with(self._dense_shape_default)
        return shape

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape) -> None:
        """Refines the static dense shape (used by sparse_placeholder)."""
        self._dense_shape_default = self.shape.merge_with(as_shape(shape))

    def consumers(self):
        seen, out = set(), []
        for t in (self._indices, self._values, self._dense_shape):
            for op in t.consumers():
                if op not in seen:
                    seen.add(op)
                    out.append(op)
        return out

    def _identity_for(self, name=None) -> "SparseTensor":
        """tf.identity of a SparseTensor: each component through an Identity (TF's
        composite rule, which drops `name`)."""
        from tensorweave.ops.control_flow.structure import identity
        return SparseTensor(identity(self._indices), identity(self._values),
                            identity(self._dense_shape))

    def eval(self, feed_dict=None, session=None) -> SparseTensorValue:
        """Runs the graph to compute this sparse tensor (a SparseTensorValue)."""
        from tensorweave.runtime.session import _run_using_default_session
        return _run_using_default_session(self, feed_dict, self.graph, session)

    # --- Session.run protocol (runtime/session.py) -----------------------------------
    def _fetch_components(self):
        return [self._indices, self._values, self._dense_shape]

    @staticmethod
    def _fetch_rebuild(vals) -> SparseTensorValue:
        return SparseTensorValue(*vals)

    def _feed_components(self):
        return [self._indices, self._values, self._dense_shape]

    def _split_feed(self, value):
        # as TF, the parts are paired with (indices, values, dense_shape) in order: an
        # (indices, values) pair leaves dense_shape unfed (the static shape of a
        # sparse_placeholder), and a part left unfed that must be fed fails at run time
        if isinstance(value, (SparseTensorValue, tuple, list)):
            return list(value)
        raise TypeError("The value of a feed for a SparseTensor must be a "
                        "tf.compat.v1.SparseTensorValue or an (indices, values, dense_shape) "
                        "tuple, got %r" % (value,))

    # --- operators: TF1 defines only sparse (op) dense, as SparseDenseCwise ops --------
    def __mul__(self, other) -> "SparseTensor":
        from tensorweave.ops.sparse.sparse_math_ops import sparse_dense_cwise
        return sparse_dense_cwise("SparseDenseCwiseMul", self, other, name="mul")

    def __div__(self, other) -> "SparseTensor":
        """Python 2 division: integer values divide rounding toward zero."""
        from tensorweave.ops.sparse.sparse_math_ops import sparse_dense_cwise
        return sparse_dense_cwise("SparseDenseCwiseDiv", self, other, name="div")

    def __truediv__(self, other) -> "SparseTensor":
        """True division: integer values are cast to a float type first (as tf.truediv)."""
        from tensorweave.ops.math.math_binary import _TRUEDIV_FLOAT
        from tensorweave.ops.math.math_ops import cast
        from tensorweave.ops.sparse.sparse_math_ops import sparse_dense_cwise
        with name_scope(None, "truediv", [self.values, other]):
            sp = self
            to = _TRUEDIV_FLOAT.get(self.dtype.base_dtype)
            if to is not None:
                other = cast(convert_to_tensor(other, dtype=self.dtype, name="y"), to)
                sp = SparseTensor(self._indices, cast(self._values, to), self._dense_shape)
                sp._dense_shape_default = self._dense_shape_default
            return sparse_dense_cwise("SparseDenseCwiseDiv", sp, other)

    def __str__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (
            self._indices, self._values, self._dense_shape)

    __repr__ = __str__


def is_sparse(x) -> bool:
    """True for a SparseTensor or a SparseTensorValue."""
    return isinstance(x, (SparseTensor, SparseTensorValue))


@tf_export("convert_to_tensor_or_sparse_tensor")
def convert_to_tensor_or_sparse_tensor(value, dtype=None, name: Optional[str] = None):
    """A SparseTensor for a SparseTensor(Value), else `convert_to_tensor(value)` (TF1).

    Raises:
      RuntimeError: a SparseTensor whose dtype differs from `dtype`.
    """
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise RuntimeError("Sparse dtype: requested = %s, actual = %s"
                               % (dtype.name, value.dtype.name))
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def _refuse_conversion(value, dtype=None, name=None, as_ref=False) -> Tensor:
    raise TypeError("Failed to convert elements of %s to Tensor. Consider casting elements "
                    "to a supported type. A SparseTensor cannot be used where a dense "
                    "Tensor is expected: use tf.sparse.to_dense first." % (value,))


register_tensor_conversion_function(SparseTensor, _refuse_conversion)
register_tensor_conversion_function(SparseTensorValue, _refuse_conversion)
