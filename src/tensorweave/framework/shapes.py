"""Static shapes: `Dimension` and `TensorShape` with TF1 (v1 behaviour) semantics.

A shape may have unknown rank (``TensorShape(None)``) or unknown dimensions
(``Dimension(None)``). Indexing a TensorShape returns a Dimension, as in TF1 graph mode.
"""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework.api_export import tf_export


class Dimension:
    """One dimension of a shape; its `value` is an int or None (unknown)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, int):  # an int (True included) is kept as it is, as in TF
            if value < 0:
                raise ValueError("Dimension %d must be >= 0" % value)
            self._value = value
        elif value is None:
            self._value = None
        elif isinstance(value, Dimension):
            self._value = value._value
        else:
            try:
                v = int(value.__index__())
            except AttributeError:
                raise TypeError("Dimension value must be integer or None or have an "
                                "__index__ method, got value '%r' with type '%r'"
                                % (value, type(value)))
            if v < 0:
                raise ValueError("Dimension %d must be >= 0" % v)
            self._value = v

    @property
    def value(self) -> Optional[int]:
        return self._value

    def __repr__(self):
        return "Dimension(%r)" % self._value

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __int__(self):
        if self._value is None:
            raise TypeError("unknown Dimension cannot be converted to int")
        return self._value

    __index__ = __int__

    def __bool__(self):
        """`bool(self.value)`, as TF: an unknown or zero dimension is falsy."""
        return bool(self._value)

    def __hash__(self):
        return hash(self._value)

    def __eq__(self, other):
        other = _as_dim(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return self._value == other._value

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is None or r is NotImplemented else not r

    def _cmp(self, other, fn):
        other = _as_dim(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return fn(self._value, other._value)

    def __lt__(self, other):
        return self._cmp(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._cmp(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._cmp(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._cmp(other, lambda a, b: a >= b)

    def _arith(self, other, fn):
        other = _as_dim(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other._value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other._value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._arith(other, lambda a, b: b - a)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return self._arith(other, lambda a, b: b // a)

    def __truediv__(self, other):
        # as TF: a Dimension divides only with //, and says so
        raise TypeError("unsupported operand type(s) for /: 'Dimension' and '%s', please "
                        "use // instead" % type(other).__name__)

    def __rtruediv__(self, other):
        raise TypeError("unsupported operand type(s) for /: '%s' and 'Dimension', please "
                        "use // instead" % type(other).__name__)

    def __mod__(self, other):
        return self._arith(other, lambda a, b: a % b)

    def __rmod__(self, other):
        return self._arith(other, lambda a, b: b % a)

    def is_compatible_with(self, other) -> bool:
        other = as_dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError("Dimensions %s and %s are not compatible" % (self, other))

    def merge_with(self, other) -> "Dimension":
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other._value)

    def __reduce__(self):
        return Dimension, (self._value,)


def _as_dim(x):
    if isinstance(x, Dimension):
        return x
    try:
        return Dimension(x)
    except (TypeError, ValueError):
        return NotImplemented


def as_dimension(value) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim):
    """The int (or None) of a Dimension or int, as `tf.compat.dimension_value`."""
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """The static shape of a tensor.

    Args:
      dims: None for unknown rank, or an iterable of ints / None / Dimensions.
    """

    __slots__ = ("_dims",)

    def __init__(self, dims=None):
        if dims is None:
            self._dims = None
        elif type(dims) is list or type(dims) is tuple:  # the common case, checked first
            self._dims = tuple(map(as_dimension, dims))
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (int, Dimension)) and not isinstance(dims, bool):
            self._dims = (as_dimension(dims),)
        elif hasattr(dims, "unknown_rank") and hasattr(dims, "dim"):  # a TensorShapeProto
            self._dims = None if dims.unknown_rank else tuple(
                as_dimension(None if d.size == -1 else d.size) for d in dims.dim)
        else:
            self._dims = tuple(as_dimension(d) for d in dims)

    # --- accessors ----------------------------------------------------------------
    @property
    def dims(self) -> Optional[List[Dimension]]:
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> Optional[int]:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return _slice_of_unknown(key)
            return Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def as_list(self) -> List[Optional[int]]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d._value for d in self._dims]

    def as_tuple(self):
        return None if self._dims is None else tuple(d._value for d in self._dims)

    def as_proto(self):
        """The shape as TF's `TensorShapeProto` (TensorBoard's copy): unknown dimensions
        -1, an unknown rank `unknown_rank`."""
        from tensorboard.compat.proto import tensor_shape_pb2
        from tensorweave.framework.graph_def_proto import shape_to_proto
        proto = tensor_shape_pb2.TensorShapeProto()
        shape_to_proto(self, proto)
        return proto

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d._value is not None for d in self._dims)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError("Shape %s is not fully defined" % self)

    def num_elements(self) -> Optional[int]:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d._value
        return n

    # --- algebra ------------------------------------------------------------------
    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are incompatible" % (self, other))

    def merge_with(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None or other is self:
            return self
        if len(self._dims) != len(other._dims):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        merged, gained = [], False
        for a, b in zip(self._dims, other._dims):  # one pass; self when nothing is gained
            if a._value is None:
                gained = gained or b._value is not None
                merged.append(b)
            elif b._value is not None and a._value != b._value:
                raise ValueError("Shapes %s and %s are not compatible" % (self, other))
            else:
                merged.append(a)
        return TensorShape(merged) if gained else self

    def concatenate(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank: int) -> "TensorShape":
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError("Shape %s must have rank %d" % (self, rank))
        return self

    def with_rank_at_least(self, rank: int) -> "TensorShape":
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError("Shape %s must have rank at least %d" % (self, rank))
        return self

    def with_rank_at_most(self, rank: int) -> "TensorShape":
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError("Shape %s must have rank at most %d" % (self, rank))
        return self

    def assert_has_rank(self, rank: int):
        self.with_rank(rank)

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self._dims is not None and other._dims is not None \
                and len(self._dims) != len(other._dims):
            raise ValueError("Shapes %s and %s must have the same rank" % (self, other))

    def most_specific_compatible_shape(self, other) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape([a if a == b else None
                            for a, b in zip(self.as_list(), other.as_list())])

    # --- protocol -----------------------------------------------------------------
    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self.as_tuple() == other.as_tuple() if (
            self._dims is not None and other._dims is not None) else \
            (self._dims is None and other._dims is None)

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        return hash(self.as_tuple())

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape(%r)" % [Dimension(d._value) for d in self._dims]

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return "(%s,)" % self._dims[0]
        return "(%s)" % ", ".join(str(d) for d in self._dims)

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def __reduce__(self):
        # copy, deepcopy and pickle (of user objects) work, as in TF
        return TensorShape, (self.dims,)


def _slice_of_unknown(key: slice) -> TensorShape:
    """`TensorShape(None)[key]` as TF: `[1:3]` has rank 2, an open or negative bound
    gives an unknown rank, a step is a ValueError."""
    if key.step is not None:
        raise ValueError("Steps are not yet handled")
    start = 0 if key.start is None else key.start
    if key.stop is None or start < 0 or key.stop < 0:
        return unknown_shape()
    return unknown_shape(rank=key.stop - start)


@tf_export("enable_v2_tensorshape")
def enable_v2_tensorshape() -> None:
    """Accepted with a warning: TensorShape keeps its v1 behaviour here (indexing and
    iterating give Dimensions). The library's own code reads `shape[i].value`, so the
    switch is not offered; a Dimension compares, indexes and does arithmetic like the
    int v2 would give, and `tf.compat.dimension_value(shape[i])` reads either form."""
    from tensorweave.platform import tf_logging
    tf_logging.warning("tensorweave keeps TF1's TensorShape: shape[i] is a Dimension "
                       "(use tf.compat.dimension_value(shape[i]) for its int or None); "
                       "enable_v2_tensorshape() changes nothing.")


@tf_export("disable_v2_tensorshape")
def disable_v2_tensorshape() -> None:
    """Accepted: TensorShape always has its v1 behaviour here."""


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: Optional[int] = None, **kwargs) -> TensorShape:
    rank = kwargs.pop("ndims", rank)
    if rank is None:
        return TensorShape(None)
    return TensorShape([None] * rank)


def scalar() -> TensorShape:
    return TensorShape(())


def vector(length) -> TensorShape:
    return TensorShape([length])


def matrix(rows, cols) -> TensorShape:
    return TensorShape([rows, cols])


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """Static shape of NumPy-style broadcasting; raises ValueError when incompatible."""
    if a._dims is None or b._dims is None:
        return unknown_shape()
    la, lb = a.as_list(), b.as_list()
    n = max(len(la), len(lb))
    la = [1] * (n - len(la)) + la
    lb = [1] * (n - len(lb)) + lb
    out: List[Optional[int]] = []
    for x, y in zip(la, lb):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None:
            out.append(x)
        elif x == y:
            out.append(x)
        else:
            raise ValueError("Dimensions must be equal, but are %d and %d for shapes %s and %s"
                             % (x, y, a, b))
    return TensorShape(out)


# --- checks with the messages of TF's C++ shape inference (InferenceContext) -------------
def with_rank(shape: TensorShape, rank: int) -> TensorShape:
    """`shape` checked to have `rank`; an unknown rank becomes `rank` unknown dims.

    Raises:
      ValueError: "Shape must be rank 2 but is rank 3" (TF's shape-function wording).
    """
    if shape.ndims is None:
        return unknown_shape(rank)
    if shape.ndims != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, shape.ndims))
    return shape


def with_rank_at_least(shape: TensorShape, rank: int) -> TensorShape:
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d" % (rank, shape.ndims))
    return shape


def with_rank_at_most(shape: TensorShape, rank: int) -> TensorShape:
    if shape.ndims is not None and shape.ndims > rank:
        raise ValueError("Shape must be at most rank %d but is rank %d" % (rank, shape.ndims))
    return shape


def merge_dim(a: Optional[int], b: Optional[int]) -> Optional[int]:
    """Two dimension sizes (None: unknown) merged as TF's shape inference does."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise ValueError("Dimensions must be equal, but are %d and %d" % (a, b))
