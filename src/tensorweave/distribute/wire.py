"""What travels between tasks: tensors as raw buffers with a small header, and messages
as a JSON header followed by tensors. Nothing is pickled.

A tensor: flags (byte: 1 = dead), the NumPy dtype string (byte length, then ASCII:
"<f4", "|b1", "bfloat16", or "O" for strings), rank (byte), each dimension (int64), then
the data: the array's bytes in C order, or for strings each element as a uint32 length
and its bytes.

A message: uint32 length of a UTF-8 JSON object, the object, uint32 count of tensors,
then each tensor as uint64 length and its bytes. An OpError travels inside a message as
{"error": {"class": "InvalidArgumentError", "message": "..."}} (`error_meta`,
`raise_error`), so the class survives the trip.
"""
from __future__ import annotations

import json
import struct
from typing import List, Optional, Tuple

import numpy as np

from tensorweave.framework import errors

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def dtype_code(dtype: np.dtype) -> str:
    """The wire name of a NumPy dtype ("<f4", "bfloat16", "O" for strings)."""
    if dtype.kind in "OSU":
        return "O"
    if dtype.name == "bfloat16":
        return "bfloat16"  # ml_dtypes' type: named, not coded
    return dtype.str


def code_dtype(code: str) -> np.dtype:
    """The NumPy dtype a wire name (`dtype_code`) stands for."""
    if code == "O":
        return np.dtype(object)
    if code == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(code)


def encode_tensor(value, is_dead: bool = False) -> bytes:
    """The wire form of one value (a NumPy array or scalar, bytes or str).

    Raises:
      InvalidArgumentError: the value is not an array (e.g. a resource handle, which
        never leaves the task holding its resource).
    """
    return b"".join(tensor_parts(value, is_dead))


def tensor_parts(value, is_dead: bool = False) -> List:
    """The wire form of one value as buffers to concatenate: an array's data is not
    copied here (`pack` copies it once, into the message)."""
    if is_dead:
        return [b"\x01\x00\x00"]
    if isinstance(value, (bytes, str)):
        value = np.array(value, dtype=object)
    elif not isinstance(value, np.ndarray):
        if isinstance(value, (np.generic, int, float, bool, complex)):
            value = np.asarray(value)
        elif hasattr(value, "__cuda_array_interface__"):
            value = value.get()  # a CuPy array leaves its GPU through host memory
        else:
            raise errors.InvalidArgumentError(
                None, None, "Cannot send a value of type %s to another task: only tensors "
                "travel between tasks" % type(value).__name__)
    code = dtype_code(value.dtype).encode("ascii")
    head = bytes([0, len(code)]) + code + bytes([value.ndim]) + \
        struct.pack("<%dq" % value.ndim, *value.shape)
    if value.dtype.kind in "OSU":
        parts = [head]
        for s in value.reshape(-1):
            b = s.encode() if isinstance(s, str) else bytes(s)
            parts.append(_U32.pack(len(b)))
            parts.append(b)
        return parts
    data = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
    return [head, data]


def decode_tensor(buf) -> Tuple[object, bool]:
    """(value, is_dead) of a tensor's wire form; arrays are read-only views of `buf`."""
    mv = memoryview(buf)
    if mv[0] == 1:
        return None, True
    n = mv[1]
    dtype = code_dtype(bytes(mv[2:2 + n]).decode("ascii"))
    pos = 2 + n
    rank = mv[pos]
    pos += 1
    shape = struct.unpack_from("<%dq" % rank, mv, pos)
    pos += 8 * rank
    if dtype.kind == "O":
        count = int(np.prod(shape, dtype=np.int64)) if rank else 1
        out = np.empty(count, dtype=object)
        for i in range(count):
            (length,) = _U32.unpack_from(mv, pos)
            pos += 4
            out[i] = bytes(mv[pos:pos + length])
            pos += length
        return out.reshape(shape), False
    arr = np.frombuffer(mv, dtype=dtype, offset=pos,
                        count=int(np.prod(shape, dtype=np.int64)) if rank else 1)
    return arr.reshape(shape), False


def pack(meta: dict, tensors: Optional[List] = None) -> bytes:
    """A message: the JSON object `meta` and the tensors, each the bytes of
    `encode_tensor` or the buffers of `tensor_parts`."""
    head = json.dumps(meta, separators=(",", ":")).encode()
    parts = [_U32.pack(len(head)), head, _U32.pack(len(tensors or ()))]
    for t in tensors or ():
        if isinstance(t, list):
            parts.append(_U64.pack(sum(memoryview(p).nbytes for p in t)))
            parts.extend(t)
        else:
            parts.append(_U64.pack(len(t)))
            parts.append(t)
    return b"".join(parts)


def unpack(buf) -> Tuple[dict, List[memoryview]]:
    """(meta, tensor buffers) of a message made by `pack`."""
    mv = memoryview(buf)
    (n,) = _U32.unpack_from(mv, 0)
    meta = json.loads(bytes(mv[4:4 + n]))
    pos = 4 + n
    (count,) = _U32.unpack_from(mv, pos)
    pos += 4
    tensors = []
    for _ in range(count):
        (length,) = _U64.unpack_from(mv, pos)
        pos += 8
        tensors.append(mv[pos:pos + length])
        pos += length
    return meta, tensors


def error_meta(exc: BaseException) -> dict:
    """The in-message form of an error (OpErrors keep their class; anything else
    travels as an InternalError)."""
    if isinstance(exc, errors.OpError):
        return {"error": {"class": type(exc).__name__, "message": exc.message}}
    return {"error": {"class": "InternalError",
                      "message": "%s: %s" % (type(exc).__name__, exc)}}


def error_class(err: dict) -> type:
    """The OpError class an in-message error (`error_meta`'s "error") names;
    InternalError for any other name."""
    cls = getattr(errors, err.get("class", ""), None)
    if not (isinstance(cls, type) and issubclass(cls, errors.OpError)):
        cls = errors.InternalError
    return cls


def raise_error(meta: dict, where: str = "") -> None:
    """Raises the error a message carries, if any (`where` names the task)."""
    err = meta.get("error")
    if not err:
        return
    cls = error_class(err)
    message = err.get("message", "")
    if where and where not in message:
        message = "%s\n\t [[task %s]]" % (message, where)
    raise cls(None, None, message)
