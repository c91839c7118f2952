"""Element types of tensors (TF1 `tf.DType`).

A DType is a small immutable object; the module holds one instance per type so that
identity comparison works (`x.dtype is tf.float32`) as well as equality with names,
NumPy dtypes and other DTypes.
"""
from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

from tensorweave.framework.api_export import export

# TF's DataType enum values (types.proto), kept so serialized graphs name types the way
# TF does and so that `tf.DType(1)` and `tf.as_dtype(1)` are tf.float32.
_ENUMS = {
    "float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
    "string": 7, "complex64": 8, "int64": 9, "bool": 10, "qint8": 11, "quint8": 12,
    "qint32": 13, "bfloat16": 14, "qint16": 15, "quint16": 16, "uint16": 17,
    "complex128": 18, "float16": 19, "resource": 20, "variant": 21, "uint32": 22,
    "uint64": 23,
}
_NAMES = {v: k for k, v in _ENUMS.items()}

# The NumPy type of each dtype, as TF's _TF_TO_NP: quantized types are one-field
# structured dtypes; resource and variant have none (their as_numpy_dtype is a
# KeyError, as in TF), so `_np` holds `object` for them for internal use.
_NP_TYPES = {
    "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
    "float64": np.float64, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
    "uint64": np.uint64, "bool": np.bool_, "string": object, "complex64": np.complex64,
    "complex128": np.complex128, "resource": object, "variant": object,
    "qint8": np.dtype([("qint8", np.int8)]), "quint8": np.dtype([("quint8", np.uint8)]),
    "qint16": np.dtype([("qint16", np.int16)]),
    "quint16": np.dtype([("quint16", np.uint16)]),
    "qint32": np.dtype([("qint32", np.int32)]),
}
_NO_NUMPY_TYPE = ("resource", "variant")
_QUANTIZED_NAMES = ("qint8", "quint8", "qint16", "quint16", "qint32")

# TF's `DType.limits` table (skimage's intensity ranges), keyed by NumPy type
_LIMITS = {
    np.bool_: (False, True), np.uint8: (0, 255), np.uint16: (0, 65535),
    np.int8: (-128, 127), np.int16: (-32768, 32767), np.int64: (-(2**63), 2**63 - 1),
    np.uint64: (0, 2**64 - 1), np.int32: (-(2**31), 2**31 - 1), np.uint32: (0, 2**32 - 1),
    np.float32: (-1, 1), np.float64: (-1, 1),
}


class DType:
    """The type of the elements of a tensor.

    `DType(type_enum)` makes a DType from a DataType enum value, as TF's constructor
    does: it equals (but is not) the interned constant; `as_dtype` returns the constant.

    Attributes:
      name: the TF name, e.g. ``"float32"``.
      as_numpy_dtype: the NumPy scalar type (``object`` for strings; a KeyError for
        resource and variant, as in TF).
    """

    __slots__ = ("name", "_np", "_enum")

    def __init__(self, type_enum):
        enum = int(type_enum)
        name = _NAMES.get(enum)
        if name is None:
            raise TypeError("%d does not correspond to a valid tensorflow::DataType" % enum)
        self.name = name
        self._np = _NP_TYPES[name]
        self._enum = enum

    # --- identity -----------------------------------------------------------------
    @property
    def as_numpy_dtype(self):
        if self.name in _NO_NUMPY_TYPE:
            raise KeyError(self._enum)
        return self._np

    @property
    def as_datatype_enum(self) -> int:
        return self._enum

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def real_dtype(self) -> "DType":
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    # --- classification ------------------------------------------------------------
    @property
    def is_floating(self) -> bool:
        return self.name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_integer(self) -> bool:
        return self.name in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                             "uint32", "uint64")

    @property
    def is_unsigned(self) -> bool:
        return self.name.startswith("uint")

    @property
    def is_complex(self) -> bool:
        return self.name.startswith("complex")

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def is_quantized(self) -> bool:
        return self.name in _QUANTIZED_NAMES

    @property
    def is_numpy_compatible(self) -> bool:
        return self.name not in _NO_NUMPY_TYPE

    @property
    def size(self) -> int:
        """Bytes per element; 0 for string, resource and variant (TF's DataTypeSize)."""
        if self.name in ("string", "resource", "variant"):
            return 0
        return np.dtype(self._np).itemsize

    @property
    def min(self):
        """The smallest value of the type: a NumPy scalar of the type for floats, a
        Python int for integers (as TF). TypeError for bool, string, complex and
        quantized types."""
        return self._limit("minimum", "min")

    @property
    def max(self):
        """The largest value of the type (see `min`)."""
        return self._limit("maximum", "max")

    def _limit(self, word: str, attr: str):
        if self.is_quantized or self.name in ("bool", "string", "complex64", "complex128"):
            raise TypeError("Cannot find %s value of %s with %s %s." % (
                word, self, "quantized type" if self.is_quantized else "type", self))
        try:
            return getattr(ml_dtypes.finfo(self.as_numpy_dtype), attr)
        except Exception:  # finfo raises several kinds of error on non-float types
            try:
                return getattr(ml_dtypes.iinfo(self.as_numpy_dtype), attr)
            except Exception:
                raise TypeError("Cannot find %s value of %s." % (word, self)) from None

    @property
    def limits(self):
        """TF's intensity limits `(0, max)` of the type (max 1 for float32/float64);
        ValueError for a type without limits."""
        np_type = self.as_numpy_dtype
        if np_type not in _LIMITS:
            raise ValueError(str(self) + " does not have defined limits.")
        return 0, _LIMITS[np_type][1]

    def is_compatible_with(self, other) -> bool:
        return self == as_dtype(other)

    # --- protocol -------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        if other is self:
            return True
        if other is None:
            return False
        if type(other) is not DType:
            try:
                other = as_dtype(other)
            except TypeError:
                return False
        return self._enum == other._enum

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __int__(self) -> int:
        return self._enum

    def __repr__(self) -> str:
        return "tf." + self.name

    def __str__(self) -> str:
        return "<dtype: %r>" % self.name

    def __reduce__(self):
        # copy, deepcopy and pickle give back the interned constant, as in TF
        return as_dtype, (self.name,)


float16 = DType(_ENUMS["float16"])
half = float16
bfloat16 = DType(_ENUMS["bfloat16"])
float32 = DType(_ENUMS["float32"])
float64 = DType(_ENUMS["float64"])
double = float64
int8 = DType(_ENUMS["int8"])
int16 = DType(_ENUMS["int16"])
int32 = DType(_ENUMS["int32"])
int64 = DType(_ENUMS["int64"])
uint8 = DType(_ENUMS["uint8"])
uint16 = DType(_ENUMS["uint16"])
uint32 = DType(_ENUMS["uint32"])
uint64 = DType(_ENUMS["uint64"])
bool = DType(_ENUMS["bool"])  # noqa: A001 - TF's public name
string = DType(_ENUMS["string"])
complex64 = DType(_ENUMS["complex64"])
complex128 = DType(_ENUMS["complex128"])
resource = DType(_ENUMS["resource"])
variant = DType(_ENUMS["variant"])
# quantized types: constants only (no op takes them)
qint8 = DType(_ENUMS["qint8"])
quint8 = DType(_ENUMS["quint8"])
qint16 = DType(_ENUMS["qint16"])
quint16 = DType(_ENUMS["quint16"])
qint32 = DType(_ENUMS["qint32"])

ALL = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16,
       uint32, uint64, bool, string, complex64, complex128, resource, variant)
FLOATS = (float16, bfloat16, float32, float64)
INTEGERS = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
COMPLEX = (complex64, complex128)
REAL_NUMBERS = FLOATS + INTEGERS
NUMBERS = REAL_NUMBERS + COMPLEX
QUANTIZED_DTYPES = frozenset([qint8, quint8, qint16, quint16, qint32])

# TF's DataTypeString (its C++ spelling, in error messages) where it differs from the name
_TYPE_STRINGS = {"float32": "float", "float64": "double", "float16": "half"}


def type_string(dtype: DType) -> str:
    """TF's DataTypeString of `dtype`: "float", "double", "half", else its name."""
    return _TYPE_STRINGS.get(dtype.name, dtype.name)


# as_dtype's lookup tables, as TF's: enum values, names, three Python types, NumPy types
_INTERN = {d.as_datatype_enum: d for d in ALL + tuple(QUANTIZED_DTYPES)}
_BY_NAME = {d.name: d for d in _INTERN.values()}
_BY_NAME.update({"half": float16, "double": float64, "float": float32})
_BY_PY = {builtins.float: float32, builtins.bool: bool, builtins.object: string}
_BY_NP = {_NP_TYPES[d.name]: d for d in _INTERN.values() if d.name not in _NO_NUMPY_TYPE
          and d is not string}
_BY_NP.update({np.object_: string, np.bytes_: string, np.str_: string})
for _t in (np.intc, np.uintc, np.int_, np.uint, np.longlong, np.ulonglong):
    _BY_NP.setdefault(_t, _BY_NAME[np.dtype(_t).name])  # C type names, e.g. longlong
_ANY = {}
for _table in (_INTERN, _BY_NAME, _BY_PY, _BY_NP):
    _ANY.update(_table)


def as_dtype(type_value) -> DType:
    """Converts `type_value` to a DType, as TF's `tf.as_dtype`.

    Args:
      type_value: a DType, a TF type name (``"float32"``, ``"float"``, ``"double"``,
        ``"half"``), a NumPy dtype or scalar type, ``float``, ``bool`` or ``object``,
        a DataType enum value, or an object with a NumPy `dtype` (an array).

    Returns:
      The (interned) DType.

    Raises:
      TypeError: if `type_value` names no DType (None, ``int``, ``"int"`` included,
        as in TF).
    """
    if isinstance(type_value, DType):
        return _INTERN[type_value._enum]
    if isinstance(type_value, np.dtype):
        d = _BY_NP.get(type_value.type)
        if d is not None:
            return d
    try:
        return _ANY[type_value]
    except (KeyError, TypeError):  # TypeError: not hashable
        pass
    if hasattr(type_value, "dtype"):
        try:
            return _BY_NP[np.dtype(type_value.dtype).type]
        except (KeyError, TypeError):
            pass
    raise TypeError("Cannot convert the argument `type_value`: %r to a TensorFlow DType."
                    % (type_value,))


for _d in _INTERN.values():
    export(_d, "dtypes." + _d.name)
    if _d in QUANTIZED_DTYPES:
        export(_d, _d.name)
export(half, "dtypes.half")
export(double, "dtypes.double")
export(DType, "dtypes.DType")
export(as_dtype, "dtypes.as_dtype")
export(QUANTIZED_DTYPES, "QUANTIZED_DTYPES", "dtypes.QUANTIZED_DTYPES")


def dtype_of_value(value) -> DType:
    """The DType TF1 infers for a Python/NumPy value (ints -> int32, floats -> float32)."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        npd = value.dtype
        if npd == np.float64 and isinstance(value, np.generic):
            return float64
        return as_dtype(npd)
    return _infer_python(value)


def _infer_python(value) -> DType:
    if value is None:  # TF's class and words, also for a None inside a list
        raise ValueError("None values not supported.")
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, int):
        return int32 if -2**31 <= value < 2**31 else int64
    if isinstance(value, float):
        return float32
    if isinstance(value, complex):
        return complex128
    if isinstance(value, (str, bytes)):
        return string
    if isinstance(value, (list, tuple)):
        if not value:
            return float32
        best = None
        for v in value:
            d = _numpy_in_list(v) if isinstance(v, (np.ndarray, np.generic)) \
                else _infer_python(v)
            best = d if best is None else _wider(best, d)
        return best
    if hasattr(value, "dtype"):
        return as_dtype(value.dtype)
    raise TypeError("Cannot infer a TensorFlow dtype for %r" % (value,))


def _numpy_in_list(v) -> DType:
    """The dtype a NumPy value takes inside a Python list: TF builds the list's array with
    NumPy and then prefers float32 to float64 and int32 to an int64 whose values fit."""
    d = dtype_of_value(v)
    if d is float64:
        return float32
    if d is int64 and np.size(v) and -2**31 <= np.min(v) and np.max(v) < 2**31:
        return int32
    return d


_RANK = {bool: 0, int32: 1, int64: 2, float32: 3, float64: 4, complex128: 5, string: 6}


def _wider(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if string in (a, b):
        if a is not b:
            raise TypeError("Can't mix strings and numbers in one tensor")
    ra, rb = _RANK.get(a, 3), _RANK.get(b, 3)
    return a if ra >= rb else b
