"""TF's default rules for a tf.TypeSpec described by the tuple its `_serialize()` gives
(its constructor's arguments): equality, hash, repr, `is_compatible_with`,
`is_subtype_of` and `most_specific_common_supertype` all follow from that tuple, as in
TF's `type_spec.TypeSpec`.

Within the tuple, a nested spec and a TensorShape are compared by their own rules
(shapes join on the dimensions they agree on); dtypes and every other value must be
equal; tuples, lists and dicts are walked. tf.IndexedSlicesSpec, tf.TensorArraySpec,
tf.OptionalSpec, tf.NoneTensorSpec, tf.RaggedTensorSpec and tf.data.DatasetSpec are
built on it.
"""
from __future__ import annotations

import abc
from typing import Iterable, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.tensor_spec import TypeSpec, is_subshape, shape_repr


class _NoCommonType(Exception):
    """Raised inside a walk when two serializations have no common supertype."""


def _same_kind(a, b) -> bool:
    """Whether `a` and `b` are containers (or leaves) of one type; namedtuples of one
    name and fields count as one (TF's rule)."""
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        return isinstance(b, tuple) and hasattr(b, "_fields") and \
            type(a).__name__ == type(b).__name__ and a._fields == b._fields
    return type(a) is type(b)


def _children(a, b) -> Optional[list]:
    """The pairs of parts of containers `a` and `b` (None when they are leaves).

    Raises:
      _NoCommonType: containers of other kinds, lengths or keys.
    """
    if not isinstance(a, (tuple, list, dict)):
        return None
    if not _same_kind(a, b) or len(a) != len(b):
        raise _NoCommonType()
    if isinstance(a, dict):
        if sorted(a) != sorted(b):
            raise _NoCommonType()
        return [(a[k], b[k]) for k in sorted(a)]
    return list(zip(a, b))


def _compatible(a, b) -> bool:
    """TF's compatibility of two serializations (or parts of them)."""
    if isinstance(a, TypeSpec):
        return a.is_compatible_with(b)
    try:
        pairs = _children(a, b)
    except _NoCommonType:
        return False
    if pairs is not None:
        return all(_compatible(x, y) for x, y in pairs)
    if not _same_kind(a, b):
        return False
    if isinstance(a, (TensorShape, _dt.DType)):
        return a.is_compatible_with(b)
    return a == b


def _subtype(a, b) -> bool:
    """Whether serialization `a` describes only values that `b` describes."""
    if isinstance(a, TypeSpec):
        return a.is_subtype_of(b)
    pairs = _children(a, b)
    if pairs is not None:
        return all(_subtype(x, y) for x, y in pairs)
    if isinstance(a, TensorShape):
        return isinstance(b, TensorShape) and is_subshape(a, b)
    return a == b


def _common_supertype(a, others: list):
    """The most specific value that `a` and each of `others` (serializations or parts)
    are subtypes of.

    Raises:
      _NoCommonType: there is none.
    """
    if isinstance(a, TypeSpec):
        common = a.most_specific_common_supertype(others)
        if common is None:
            raise _NoCommonType()
        return common
    if isinstance(a, (tuple, list, dict)):
        # pairs[j][k]: (k-th part of a, k-th part of others[j]), dict parts by sorted key
        pairs = [_children(a, b) for b in others]
        mine = [a[k] for k in sorted(a)] if isinstance(a, dict) else list(a)
        parts = [_common_supertype(x, [p[k][1] for p in pairs]) for k, x in enumerate(mine)]
        if isinstance(a, dict):  # in the first one's key order, as TF's nest packs it
            joined = dict(zip(sorted(a), parts))
            return type(a)((k, joined[k]) for k in a)
        return type(a)(*parts) if hasattr(a, "_fields") else type(a)(parts)
    if isinstance(a, TensorShape):
        shape = a
        for b in others:
            if not isinstance(b, TensorShape):
                raise _NoCommonType()
            shape = shape.most_specific_compatible_shape(b)
        return shape
    if not all(a == b for b in others):
        raise _NoCommonType()
    return a


def _cmp_key(value):
    """A hashable key of a serialization (TF's: dicts by sorted keys, lists marked)."""
    if isinstance(value, dict):
        return tuple((k, _cmp_key(value[k])) for k in sorted(value))
    if isinstance(value, list):
        return (list, tuple(_cmp_key(v) for v in value))
    if isinstance(value, tuple):
        return tuple(_cmp_key(v) for v in value)
    if isinstance(value, TensorShape):  # shapes of equal dimensions are equal keys
        return (TensorShape, tuple(value.as_list()) if value.rank is not None else None)
    return value


def value_repr(value) -> str:
    """TF 2.x's repr of a serialization part (TensorShape as "TensorShape([2, None])")."""
    if isinstance(value, TensorShape):
        return shape_repr(value)
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%r: %s" % (k, value_repr(v)) for k, v in value.items())
    if isinstance(value, list):
        return "[%s]" % ", ".join(value_repr(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        parts = [value_repr(v) for v in value]
        return "(%s,)" % parts[0] if len(parts) == 1 else "(%s)" % ", ".join(parts)
    return repr(value)


class SerializedSpec(TypeSpec):
    """A tf.TypeSpec whose rules come from its `_serialize()` tuple (see the module
    docstring); `_deserialize` rebuilds one from such a tuple (its constructor)."""

    __slots__ = ()

    @abc.abstractmethod
    def _serialize(self) -> tuple:
        """The constructor's arguments that describe this spec."""

    @classmethod
    def _deserialize(cls, serialization: tuple) -> "SerializedSpec":
        return cls(*serialization)

    def _as_spec(self, value) -> TypeSpec:
        """`value` as a spec (tf.type_spec_from_value of a value)."""
        if isinstance(value, TypeSpec):
            return value
        from tensorweave.framework.type_spec_from_value import type_spec_from_value
        return type_spec_from_value(value)

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether `spec_or_value` (a spec, or a value tf.type_spec_from_value takes) is
        of this kind with compatible shapes, dtypes and equal other arguments.

        Returns:
          A Python bool.

        Raises:
          TypeError: a value no spec can be built for.
        """
        other = self._as_spec(spec_or_value)
        return type(other) is type(self) and _compatible(self._serialize(),
                                                         other._serialize())

    def is_subtype_of(self, other) -> bool:
        """Whether every value of this spec is one of `other` (same kind, each shape a
        subshape, other arguments equal).

        Returns:
          A Python bool.
        """
        if type(other) is not type(self):
            return False
        try:
            return _subtype(self._serialize(), other._serialize())
        except _NoCommonType:
            return False

    def most_specific_common_supertype(self, others: Iterable) -> Optional[TypeSpec]:
        """The most specific spec of which this spec and each of `others` are subtypes.

        Args:
          others: a sequence of specs.

        Returns:
          That spec, or None when there is none (another kind, dtype or argument).
        """
        others = list(others)
        if any(type(o) is not type(self) for o in others):
            return None
        try:
            return self._deserialize(_common_supertype(
                self._serialize(), [o._serialize() for o in others]))
        except _NoCommonType:
            return None

    def most_specific_compatible_type(self, other) -> TypeSpec:
        """TF's older name for `most_specific_common_supertype([other])`.

        Raises:
          ValueError: no spec is compatible with both.
        """
        common = self.most_specific_common_supertype([other])
        if common is None:
            raise ValueError("No TypeSpec is compatible with both %s and %s"
                             % (self, other))
        return common

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and \
            _cmp_key(self._serialize()) == _cmp_key(other._serialize())

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self), _cmp_key(self._serialize())))

    def __repr__(self) -> str:
        return type(self).__name__ + value_repr(tuple(self._serialize()))
