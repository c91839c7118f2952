"""Run-time values that are not plain arrays: the dead token of control flow, and the
representation of string tensors.

Kernels of the control-flow primitives (ops/control_flow) produce and test the dead
token, and every executor passes it along, so it lives here, below both.

A string tensor's value is always a NumPy array of dtype object whose elements are
`bytes` -- a 0-d object array for a scalar -- never a bare `bytes` and never a
fixed-width `|S` array (which would strip trailing NULs). Kernels may rely on this:
they call `.reshape`, `.shape`, `.tolist()` on their string inputs, and hand the
elements to functions that read any buffer (bytes.join, base64, hashes), which must never
see an array where a `bytes` belongs. NumPy breaks the rule in three common ways:
indexing an object array down to one element returns the bare element (use `element`);
`np.array` of a list of 0-d object arrays -- or assigning one to an element -- stores
the arrays themselves as elements (use np.stack / np.concatenate, which unpack them);
and `np.array` / `np.asarray` of bytes without dtype=object makes an `|S` array.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import errors


class _Dead:
    """The dead token: the value of a tensor on the side of a Switch not taken
    (EuroSys 2018 §4.3)."""

    __slots__ = ()

    def __repr__(self):
        return "DEAD"

    def __bool__(self):
        raise TypeError("a dead value has no truth value")


DEAD = _Dead()

_MERGE_INDEX = tuple(np.int32(i) for i in range(8))


def merge_index(i: int):
    """The value_index output of a Merge that forwarded input `i` (an int32 scalar)."""
    return _MERGE_INDEX[i] if i < len(_MERGE_INDEX) else np.int32(i)


# the dtype kinds of NumPy scalars with operators of their own: bool, integers, floats,
# complex
_SCALAR_KINDS = frozenset("biufc")


def loop_value(value):
    """`value` as it enters a loop frame: a 0-d numeric array (a fed scalar, a scalar
    variable's value) as a NumPy scalar, anything else as it is. Kernels take both, and
    the ops on loop values (ops give NumPy scalars) run every iteration: `i < n` with
    `n` a 0-d array costs a ufunc call (380 ns) where two NumPy scalars compare in 13."""
    if type(value) is np.ndarray and not value.ndim and value.dtype.kind in _SCALAR_KINDS:
        return value[()]
    return value


def string_scalar(value: bytes) -> np.ndarray:
    """The value of a scalar string tensor holding `value`: a 0-d object array."""
    out = np.empty((), dtype=object)
    out[()] = value
    return out


def element(value):
    """`value`, what NumPy indexing (`x[i, j]`, `np.take`) gave for one element, as a
    run-time value: an element of a string array (bare `bytes`) becomes a 0-d object
    array; arrays, NumPy scalars (numeric elements) and handles pass as they are."""
    return string_scalar(value) if type(value) is bytes else value


_BYTES = {bytes}
_STR = {str}


def string_items(x: np.ndarray) -> list:
    """The elements of the string array `x`, flat, as a list of bytes.

    For the kernels that hand elements to functions reading any object with a buffer
    (bytes.join, base64, hashes, parsers): an object array has one too -- its raw
    pointers -- so an element that is not bytes (a kernel that broke the rule above)
    fails here rather than turning memory addresses into string data.
    """
    items = x.reshape(-1).tolist()
    if not set(map(type, items)) <= _BYTES:
        bad = next(v for v in items if type(v) is not bytes)
        raise errors.InternalError(None, None, "a string tensor holds a %s, not bytes: %.100r"
                                   % (type(bad).__name__, bad))
    return items


def _string_item(x) -> bytes:
    if type(x) is bytes:
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, bytes):
        return bytes(x)
    name = type(x).__qualname__ if type(x).__module__ == "builtins" else \
        "%s.%s" % (type(x).__module__, type(x).__qualname__)
    raise errors.InternalError(None, None, "Unsupported object type %s" % name)


def _fixed_width_strings(value: np.ndarray) -> Optional[np.ndarray]:
    """A NumPy bytes ('S') array, or a str ('U') array of ASCII text, as an object array
    of bytes in a few passes, where the per-element encode costs 70 ns an element (text
    fed as `np.array(words)`: 2048 words 150 -> 30 us); None for other text. Both kinds
    drop trailing NUL characters, so their elements are the ones `tolist` gives."""
    if value.dtype.kind == "S":
        return value.astype(object)
    width = value.dtype.itemsize // 4
    if not width or not value.dtype.isnative:
        return None
    codes = np.ascontiguousarray(value).reshape(-1).view(np.uint32)
    if codes.size and int(codes.max()) >= 128:
        return None  # beyond ASCII: UTF-8 takes more than a byte a character
    return codes.astype(np.uint8).view("S%d" % width).astype(object).reshape(value.shape)


def string_array(value) -> np.ndarray:
    """`value` (bytes or str, or an array or nested list of them) as a string tensor's
    value: an object array of bytes, str elements UTF-8 encoded. Any other element is
    TF's InternalError "Unsupported object type ...", as its conversion of Python
    values into a string tensor raises."""
    if type(value) is np.ndarray and value.dtype.kind in "SU":
        arr = _fixed_width_strings(value)
        if arr is not None:
            return arr
    arr = np.asarray(value, dtype=object)
    items = arr.reshape(-1).tolist()
    types = set(map(type, items))
    if types <= _BYTES:
        return arr
    if types == _STR:  # text fed as str (or a NumPy '<U' array): one encode per element
        items = [x.encode("utf-8") for x in items]
    else:
        items = [_string_item(x) for x in items]
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(arr.shape)
