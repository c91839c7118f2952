"""`tf.compat`: `tf.compat.v1` is tensorweave itself; the text and type helpers TF1
programs use (`as_bytes`, `as_str`, ..., `integral_types`), `dimension_value` and
`dimension_at_index`, and the forward-compatibility check."""
import contextlib as _contextlib
import datetime as _datetime
import numbers as _numbers
import os as _os
import sys as _sys

import numpy as _np

from tensorweave.framework.shapes import dimension_value  # noqa: F401

bytes_or_text_types = (bytes, str)
integral_types = (_numbers.Integral, _np.integer)
real_types = (_numbers.Real, _np.integer, _np.floating)
complex_types = (_numbers.Complex, _np.number)

# Graphs written here use only op forms TensorFlow had by this date (TF's own horizon
# moves with each build; a program asks whether a newer form may be used).
_FORWARD_COMPATIBILITY_HORIZON = _datetime.date(2026, 1, 1)
_horizon = [_FORWARD_COMPATIBILITY_HORIZON]


def as_bytes(bytes_or_text, encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes (a str encoded with `encoding`).

    Raises:
      TypeError: neither bytes, bytearray nor str.
    """
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


def as_text(bytes_or_text, encoding: str = "utf-8") -> str:
    """`bytes_or_text` as str (bytes decoded with `encoding`).

    Raises:
      TypeError: neither bytes nor str.
    """
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError("Expected binary or unicode string, got %r" % (bytes_or_text,))


as_str = as_text


def as_str_any(value, encoding: str = "utf-8") -> str:
    """`value` as str: bytes decoded, anything else through str()."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """A path-like object as a str, a bytes path decoded (other values as they are)."""
    if isinstance(path, _os.PathLike):
        path = _os.fspath(path)
        return path.decode("utf-8") if isinstance(path, bytes) else path
    return path


def dimension_at_index(shape, index):
    """The Dimension of `shape` at `index` (an unknown Dimension when the rank is)."""
    from tensorweave.framework.shapes import Dimension, TensorShape
    shape = TensorShape(shape)
    if shape.ndims is None:
        return Dimension(None)
    return shape.dims[index]


def forward_compatible(year: int, month: int, day: int) -> bool:
    """Whether graphs may use op forms TensorFlow added after `year-month-day`: True once
    that date is before the forward-compatibility horizon."""
    return _horizon[-1] > _datetime.date(year, month, day)


@_contextlib.contextmanager
def forward_compatibility_horizon(year: int, month: int, day: int):
    """Within the block, `forward_compatible` compares against this horizon."""
    _horizon.append(_datetime.date(year, month, day))
    try:
        yield
    finally:
        _horizon.pop()


def __getattr__(name):
    if name == "v1":
        return _sys.modules["tensorweave"]
    raise AttributeError(name)
