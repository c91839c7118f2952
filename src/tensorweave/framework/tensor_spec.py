"""tf.TensorSpec and tf.SparseTensorSpec: the type of a Tensor (static shape, dtype and an
optional name) and of a SparseTensor (static dense shape, dtype), as TF's compat.v1
gives them: what `Dataset.element_spec` holds and what TF1 programs write signatures
with. tf.TypeSpec is their base (and tf.RaggedTensorSpec's, a dataset's spec's).

Both compare, hash and join on their shape and dtype (and a TensorSpec's name): two
specs are compatible when their dtypes are equal and their shapes compatible; the
common supertype of specs keeps the dimensions they agree on (TF's
`most_specific_common_supertype`).
"""
from __future__ import annotations

import abc
from typing import Iterable, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue


def shape_repr(shape: TensorShape) -> str:
    """TF 2.x's repr of a TensorShape ("TensorShape([2, None])", "TensorShape(None)")."""
    return "TensorShape(%s)" % (shape.as_list() if shape.rank is not None else None)


def shape_text(shape: TensorShape) -> str:
    """TF 2.x's str of a TensorShape, as a TensorSpec's repr writes it: "(2, None)",
    "(3,)", "()" or "<unknown>"."""
    return "<unknown>" if shape.rank is None else str(tuple(shape.as_list()))


def is_subshape(shape: TensorShape, of: TensorShape) -> bool:
    """Whether every tensor of `shape` has shape `of` (TF's TensorShape.is_subtype_of):
    `of` has an unknown rank, or the same rank with each dimension unknown or equal."""
    if of.rank is None:
        return True
    if shape.rank != of.rank:
        return False
    return all(b is None or a == b for a, b in zip(shape.as_list(), of.as_list()))


@tf_export("TypeSpec")
class TypeSpec(abc.ABC):
    """The base of the classes that describe a kind of value (TF `tf.TypeSpec`):
    tf.TensorSpec, tf.SparseTensorSpec, tf.RaggedTensorSpec, a dataset's spec. Programs
    test `isinstance(x, tf.TypeSpec)`; it is abstract."""

    __slots__ = ()

    @property
    @abc.abstractmethod
    def value_type(self) -> type:
        """The class of the values this spec describes."""


class _ShapedSpec(TypeSpec):
    """What TensorSpec and SparseTensorSpec share: a static shape and a dtype (and a
    TensorSpec's name, None for a SparseTensorSpec) that they compare and join on."""

    _name = None

    def __init__(self, shape, dtype):
        self._shape = as_shape(shape)
        self._dtype = _dt.as_dtype(dtype)

    shape = property(lambda self: self._shape, doc="The static shape (a TensorShape).")
    dtype = property(lambda self: self._dtype, doc="The dtype of the elements.")

    @abc.abstractmethod
    def _with_shape(self, shape: TensorShape) -> "_ShapedSpec":
        """This spec with `shape` instead of its own."""

    def _as_spec(self, value):
        """`value` as a spec of this kind when it is a value of this kind, else as is."""
        return value

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether `spec_or_value` (a spec, or a value of this kind) has this spec's dtype
        and a shape compatible with its shape.

        Args:
          spec_or_value: a spec of the same kind or a value of the kind it describes.

        Returns:
          A Python bool (False for anything of another kind).
        """
        other = self._as_spec(spec_or_value)
        return type(other) is type(self) and \
            self._dtype.is_compatible_with(other._dtype) and \
            self._shape.is_compatible_with(other._shape)

    def is_subtype_of(self, other) -> bool:
        """Whether every value of this spec is one of `other`: same kind and dtype, each
        dimension of `other` unknown or equal (and, for a named TensorSpec, the same
        name).

        Returns:
          A Python bool.
        """
        return type(other) is type(self) and self._dtype == other._dtype and \
            (not self._name or self._name == other._name) and \
            is_subshape(self._shape, other._shape)

    def most_specific_common_supertype(self, others: Iterable) -> Optional["_ShapedSpec"]:
        """The most specific spec of which this spec and each of `others` are subtypes:
        the dimensions they all agree on (an unknown rank when their ranks differ).

        Args:
          others: a sequence of specs.

        Returns:
          That spec, or None when one of `others` is of another kind, dtype or name.
        """
        shape = self._shape
        for other in others:
            if type(other) is not type(self) or other._dtype != self._dtype or \
                    other._name != self._name:
                return None
            shape = shape.most_specific_compatible_shape(other._shape)
        return self._with_shape(shape)

    def _batch(self, batch_size: Optional[int]) -> "_ShapedSpec":
        """The spec of `batch_size` such values stacked (tf.type_spec_from_value of a
        list of them): a new first dimension, no name."""
        return type(self)(TensorShape([batch_size]).concatenate(self._shape), self._dtype)

    def most_specific_compatible_type(self, other) -> "_ShapedSpec":
        """The most specific spec compatible with both this spec and `other` (TF's older
        name for `most_specific_common_supertype` of one spec).

        Raises:
          ValueError: no spec is compatible with both (another kind, dtype or name).
        """
        common = self.most_specific_common_supertype([other])
        if common is None:
            raise ValueError("No TypeSpec is compatible with both %r and %r"
                             % (self, other))
        return common

    def _key(self) -> tuple:
        dims = tuple(self._shape.as_list()) if self._shape.rank is not None else None
        return dims, self._dtype, self._name

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        # as TF's: the name is not hashed (specs differing only by name are unequal)
        return hash((type(self).__name__,) + self._key()[:2])


@tf_export("TensorSpec")
class TensorSpec(_ShapedSpec):
    """The type of a Tensor (TF `tf.TensorSpec`): its static shape, dtype and an
    optional name.

    Args:
      shape: the static shape (anything `tf.TensorShape` takes; None: unknown rank).
      dtype: the dtype (anything `tf.as_dtype` takes).
      name: an optional name (kept as given).

    Raises:
      TypeError: `dtype` names no dtype, or `shape` is not a shape.
      ValueError: a negative dimension.
    """

    def __init__(self, shape, dtype=_dt.float32, name: Optional[str] = None):
        super().__init__(shape, dtype)
        self._name = name

    name = property(lambda self: self._name, doc="The name, or None.")
    value_type = property(lambda self: Tensor, doc="tf.Tensor.")

    @classmethod
    def from_tensor(cls, tensor, name: Optional[str] = None) -> "TensorSpec":
        """The spec of a graph tensor, named `name` or else the tensor's op's name.

        Raises:
          ValueError: `tensor` is not a tf.Tensor.
        """
        if not isinstance(tensor, Tensor):
            raise ValueError("`tensor` should be a tf.Tensor, but got type %s."
                             % type(tensor))
        return TensorSpec(tensor.shape, tensor.dtype, name or tensor.op.name)

    @classmethod
    def from_spec(cls, spec, name: Optional[str] = None) -> "TensorSpec":
        """A TensorSpec of `spec`'s shape and dtype, named `name` or else `spec.name`."""
        return cls(spec.shape, spec.dtype, name or spec.name)

    def _with_shape(self, shape: TensorShape) -> "TensorSpec":
        return TensorSpec(shape, self._dtype, self._name)

    def _as_spec(self, value):
        return TensorSpec(value.shape, value.dtype) if isinstance(value, Tensor) else value

    def __repr__(self) -> str:
        return "TensorSpec(shape=%s, dtype=%r, name=%r)" % (
            shape_text(self._shape), self._dtype, self._name)


@tf_export("SparseTensorSpec")
class SparseTensorSpec(_ShapedSpec):
    """The type of a SparseTensor (TF `tf.SparseTensorSpec`): the static shape of the
    dense tensor it stands for and the dtype of its values.

    Args:
      shape: the static dense shape (None: unknown rank).
      dtype: the dtype of the values.

    Raises:
      TypeError: `dtype` names no dtype, or `shape` is not a shape.
      ValueError: a negative dimension.
    """

    def __init__(self, shape=None, dtype=_dt.float32):
        super().__init__(shape, dtype)

    value_type = property(lambda self: SparseTensor, doc="tf.SparseTensor.")

    @classmethod
    def from_value(cls, value) -> "SparseTensorSpec":
        """The spec of a SparseTensor (its static dense shape) or of a SparseTensorValue
        (its dense shape; the dtype its values convert to).

        Raises:
          TypeError: `value` is neither.
        """
        if isinstance(value, SparseTensor):
            return cls(value.get_shape(), value.dtype)
        if isinstance(value, SparseTensorValue):
            return cls([int(d) for d in value.dense_shape],
                       _dt.dtype_of_value(value.values))
        raise TypeError("Expected SparseTensor or SparseTensorValue. Received: %s of type "
                        "%s." % (value, type(value).__name__))

    def _with_shape(self, shape: TensorShape) -> "SparseTensorSpec":
        return SparseTensorSpec(shape, self._dtype)

    def _as_spec(self, value):
        if isinstance(value, (SparseTensor, SparseTensorValue)):
            return self.from_value(value)
        return value

    def __repr__(self) -> str:
        return "SparseTensorSpec(%s, %r)" % (shape_repr(self._shape), self._dtype)
