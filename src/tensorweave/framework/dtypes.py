"""Element types of tensors (TF1 `tf.DType`).

A DType is a small immutable object; the module holds one instance per type so that
identity comparison works (`x.dtype is tf.float32`) as well as equality with names,
NumPy dtypes and other DTypes.
"""
from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

# TF's DataType enum values, kept so serialized graphs name types the way TF does.
_ENUMS = {
    "float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
    "string": 7, "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14,
    "uint16": 17, "complex128": 18, "float16": 19, "resource": 20, "variant": 21,
    "uint32": 22, "uint64": 23,
}


class DType:
    """The type of the elements of a tensor.

    Attributes:
      name: the TF name, e.g. ``"float32"``.
      as_numpy_dtype: the NumPy scalar type (``object`` for strings and resources).
    """

    __slots__ = ("name", "_np", "_enum")

    def __init__(self, name: str, np_type: Any):
        self.name = name
        self._np = np_type
        self._enum = _ENUMS[name]

    # --- identity -----------------------------------------------------------------
    @property
    def as_numpy_dtype(self):
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
    def is_numpy_compatible(self) -> bool:
        return self.name not in ("resource", "variant")

    @property
    def size(self) -> int:
        if self.name in ("string", "resource", "variant"):
            return 1
        return np.dtype(self._np).itemsize

    @property
    def min(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).min) if self.name == "bfloat16" \
                else float(np.finfo(self._np).min)
        if self.is_integer:
            return int(np.iinfo(self._np).min)
        if self.is_bool:
            return False
        raise TypeError("Cannot find minimum value of %s." % self.name)

    @property
    def max(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).max) if self.name == "bfloat16" \
                else float(np.finfo(self._np).max)
        if self.is_integer:
            return int(np.iinfo(self._np).max)
        if self.is_bool:
            return True
        raise TypeError("Cannot find maximum value of %s." % self.name)

    def is_compatible_with(self, other) -> bool:
        return self == as_dtype(other)

    # --- protocol -------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        if other is self:
            return True
        if other is None:
            return False
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __repr__(self) -> str:
        return "tf." + self.name

    def __str__(self) -> str:
        return "<dtype: %r>" % self.name

    def __reduce__(self):
        raise TypeError("DType objects are not pickled; serialize their name instead")


float16 = DType("float16", np.float16)
half = float16
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
double = float64
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool = DType("bool", np.bool_)  # noqa: A001 - TF's public name
string = DType("string", object)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
resource = DType("resource", object)
variant = DType("variant", object)

ALL = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16,
       uint32, uint64, bool, string, complex64, complex128, resource, variant)
FLOATS = (float16, bfloat16, float32, float64)
INTEGERS = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
COMPLEX = (complex64, complex128)
REAL_NUMBERS = FLOATS + INTEGERS
NUMBERS = REAL_NUMBERS + COMPLEX

# TF's DataTypeString (its C++ spelling, in error messages) where it differs from the name
_TYPE_STRINGS = {"float32": "float", "float64": "double", "float16": "half"}


def type_string(dtype: DType) -> str:
    """TF's DataTypeString of `dtype`: "float", "double", "half", else its name."""
    return _TYPE_STRINGS.get(dtype.name, dtype.name)


_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"half": float16, "double": float64, "float": float32, "int": int32,
                 "long": int64, "str": string, "bytes": string})
_BY_ENUM = {d.as_datatype_enum: d for d in ALL}
_BY_NP = {np.dtype(d.as_numpy_dtype): d for d in ALL
          if d.as_numpy_dtype is not object}
_BY_PY = {float: float32, int: int32, complex: complex128, str: string, bytes: string,
          builtins.bool: bool}


def as_dtype(type_value) -> DType:
    """Converts `type_value` to a DType.

    Args:
      type_value: a DType, a TF type name (``"float32"``), a NumPy dtype or scalar type,
        a Python type (``float``, ``int``, ``bool``, ``str``) or a DataType enum value.

    Returns:
      The DType.

    Raises:
      TypeError: if `type_value` names no DType.
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        d = _BY_NAME.get(type_value)
        if d is not None:
            return d
    elif type(type_value) is int and type_value in _BY_ENUM:
        return _BY_ENUM[type_value]
    else:
        d = _BY_PY.get(type_value)
        if d is not None:
            return d
    try:
        npd = np.dtype(type_value)
    except TypeError:
        npd = None
    if npd is not None:
        d = _BY_NP.get(npd)
        if d is not None:
            return d
        if npd.kind in ("U", "S", "O"):
            return string
    raise TypeError("Cannot convert value %r to a TensorFlow DType." % (type_value,))


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
