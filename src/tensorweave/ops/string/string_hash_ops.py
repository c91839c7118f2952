"""String hashing: StringToHashBucketFast, StringToHashBucketStrong, the legacy
StringToHashBucket, and Fingerprint.

TF's hashes, bit for bit: FarmHash's Fingerprint64 (the `cityhash` package's binding of
Google's FarmHash) for the fast buckets and for Fingerprint, SipHash-2-4 keyed by two
64-bit words (the `siphash24` package) for the strong buckets. Both libraries are loaded
on a kernel's first run. The legacy buckets use TF's own Hash64, which is MurmurHash64A
with TF's seed; no maintained package offers it, so its dozen lines are here.
"""
from __future__ import annotations

import struct
from typing import Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op, convert_op_input, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape
from tensorweave.runtime.values import string_items


def _fingerprint64():
    from farmhash import Fingerprint64
    return Fingerprint64


def _same_shape(op):
    return op.inputs[0].shape


def _buckets(values: Sequence[int], n: int, shape) -> np.ndarray:
    """The unsigned 64-bit hashes `values` modulo `n`, as int64 of `shape` (the remainder
    taken by NumPy over the whole array rather than per item)."""
    hashes = np.array(values, dtype=np.uint64)
    return (hashes % np.uint64(n)).astype(np.int64).reshape(shape)


def _strings(x: np.ndarray) -> list:
    return string_items(x)  # bytes only: a hash reads any buffer, an array's pointers too


# --- StringToHashBucketFast, StringToHashBucketStrong ------------------------------------
for _op_type, _attrs in (("StringToHashBucket", {"num_buckets": REQUIRED}),
                         ("StringToHashBucketFast", {"num_buckets": REQUIRED}),
                         ("StringToHashBucketStrong", {"num_buckets": REQUIRED,
                                                       "key": REQUIRED})):
    register_op(_op_type, inputs=["input: string"], outputs=["output: int64"],
                attrs=_attrs, shape=_same_shape)
    not_differentiable(_op_type)


_MUL = 0xC6A4A7935BD1E995
_MASK = (1 << 64) - 1
_HASH64_SEED = 0xDECAFCAFFE


def hash64(data: bytes, seed: int = _HASH64_SEED) -> int:
    """TF's Hash64 (core/lib/hash): MurmurHash64A over little-endian 8-byte words."""
    n = len(data)
    h = (seed ^ (n * _MUL)) & _MASK
    full = n - n % 8
    for (k,) in struct.iter_unpack("<Q", data[:full]):
        k = (k * _MUL) & _MASK
        k ^= k >> 47
        h ^= (k * _MUL) & _MASK
        h = (h * _MUL) & _MASK
    if full < n:
        for i, b in enumerate(data[full:]):
            h ^= b << (8 * i)
        h = (h * _MUL) & _MASK
    h ^= h >> 47
    h = (h * _MUL) & _MASK
    return h ^ (h >> 47)


@kernel("StringToHashBucket")
def _hash_bucket_kernel(ctx, x):
    if ctx.attrs["num_buckets"] == 1:
        return _one_bucket(x)
    return _buckets([hash64(s) for s in _strings(x)], ctx.attrs["num_buckets"], x.shape)


@kernel("StringToHashBucketFast")
def _hash_bucket_fast_kernel(ctx, x):
    if ctx.attrs["num_buckets"] == 1:
        return _one_bucket(x)
    fp = _fingerprint64()
    return _buckets(list(map(fp, _strings(x))), ctx.attrs["num_buckets"], x.shape)


def _one_bucket(x: np.ndarray) -> np.ndarray:
    """Every string's bucket when there is one: no hash needed (a vocabulary table with
    TF1's usual num_oov_buckets=1 hashes every key it looks up: 2048 keys, 117 us)."""
    return np.zeros(x.shape, np.int64)


@kernel("StringToHashBucketStrong")
def _hash_bucket_strong_kernel(ctx, x):
    from siphash24 import siphash24
    if len(ctx.attrs["key"]) != 2:  # TF checks when the kernel is made, at run time
        raise errors.InvalidArgumentError(None, ctx.op, "Key must have 2 elements")
    key = struct.pack("<QQ", *(k & 0xFFFFFFFFFFFFFFFF for k in ctx.attrs["key"]))
    # the digest as an unsigned 64-bit word (intdigest() is signed)
    return _buckets([int.from_bytes(siphash24(s, key=key).digest(), "little")
                     for s in _strings(x)],
                    ctx.attrs["num_buckets"], x.shape)


def _check_buckets(num_buckets, op_type: str) -> int:
    num_buckets = int(num_buckets)
    if num_buckets < 1:
        raise ValueError("Attr 'num_buckets' of '%s' Op passed %d less than minimum 1."
                         % (op_type, num_buckets))
    return num_buckets


@tf_export("strings.to_hash_bucket_fast", "string_to_hash_bucket_fast")
def string_to_hash_bucket_fast(input, num_buckets: int, name=None) -> Tensor:  # noqa: A002
    """Hashes each string to one of `num_buckets` buckets: FarmHash's Fingerprint64 of
    its bytes modulo `num_buckets` (TF's StringToHashBucketFast; stable across processes
    and machines, not for adversarial input).

    Args:
      input: a string Tensor.
      num_buckets: the number of buckets, at least 1.
      name: the op's name.

    Returns:
      An int64 Tensor of `input`'s shape.

    Raises:
      ValueError: `num_buckets` below 1.
    """
    x = convert_op_input(input, _dt.string, "StringToHashBucketFast", "input", name="input")
    return apply_op("StringToHashBucketFast", [x], {"num_buckets": _check_buckets(
        num_buckets, "StringToHashBucketFast")}, name=name or "StringToHashBucketFast").outputs[0]


@tf_export("strings.to_hash_bucket", "string_to_hash_bucket")
def string_to_hash_bucket(string_tensor=None, num_buckets: Optional[int] = None,
                          name=None, input=None) -> Tensor:  # noqa: A002
    """Hashes each string to one of `num_buckets` buckets with TF's legacy Hash64 (TF's
    StringToHashBucket; to_hash_bucket_fast is quicker and hashes better).

    Args:
      string_tensor: a string Tensor (`input` is TF1's other name for it).
      num_buckets: the number of buckets, at least 1.
      name: the op's name.
      input: the deprecated spelling of `string_tensor`.

    Returns:
      An int64 Tensor of the input's shape.

    Raises:
      ValueError: both or neither of `string_tensor` and `input`, or `num_buckets`
        below 1.
      TypeError: no `num_buckets`.
    """
    if string_tensor is not None and input is not None:
        raise ValueError("Cannot specify both 'string_tensor' and 'input'.")
    if string_tensor is None and input is None:
        raise ValueError("Tried to convert 'string_tensor' to a tensor and failed. Error: "
                         "None values not supported.")
    if num_buckets is None:
        raise TypeError("Expected int for argument 'num_buckets' not None.")
    x = convert_op_input(string_tensor if input is None else input, _dt.string,
                         "StringToHashBucket", "string_tensor", name="string_tensor")
    return apply_op("StringToHashBucket", [x], {"num_buckets": _check_buckets(
        num_buckets, "StringToHashBucket")}, name=name or "StringToHashBucket").outputs[0]


@tf_export("strings.to_hash_bucket_strong", "string_to_hash_bucket_strong")
def string_to_hash_bucket_strong(input, num_buckets: int, key: Sequence[int],  # noqa: A002
                                 name=None) -> Tensor:
    """Hashes each string to one of `num_buckets` buckets with SipHash-2-4 keyed by
    `key` (TF's StringToHashBucketStrong: slower than the fast hash, hard to predict
    without the key).

    Args:
      input: a string Tensor.
      num_buckets: the number of buckets, at least 1.
      key: two integers (int64), the 128-bit SipHash key; another count fails when
        the op runs (InvalidArgumentError), as in TF.
      name: the op's name.

    Returns:
      An int64 Tensor of `input`'s shape.

    Raises:
      ValueError: `num_buckets` below 1, or a key outside int64.
    """
    key = [int(k) for k in key]
    for k in key:
        if not -2 ** 63 <= k < 2 ** 63:  # an int64 attr
            raise ValueError("Value out of range: %d" % k)
    x = convert_op_input(input, _dt.string, "StringToHashBucketStrong", "input",
                         name="input")
    return apply_op("StringToHashBucketStrong", [x], {
        "num_buckets": _check_buckets(num_buckets, "StringToHashBucketStrong"),
        "key": key},
        name=name or "StringToHashBucketStrong").outputs[0]


# --- Fingerprint ---------------------------------------------------------------------------
def _fingerprint_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return TensorShape([None, 8])
    if shape.ndims < 1:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return TensorShape([shape.dims[0], 8])


register_op("Fingerprint", inputs=["data: T", "method: string"], outputs=["fingerprint: uint8"],
            attrs={"T": REQUIRED}, shape=_fingerprint_shape)
not_differentiable("Fingerprint")


@kernel("Fingerprint")
def _fingerprint_kernel(ctx, data, method):
    method = method[()] if isinstance(method, np.ndarray) else method
    if method != b"farmhash64":
        raise errors.InvalidArgumentError(None, ctx.op, "Unsupported method: %s"
                                          % method.decode("utf-8", "replace"))
    if data.ndim < 1:
        raise errors.InvalidArgumentError(None, ctx.op, "`data` should have at least one "
                                          "dimension: %s" % list(data.shape))
    fp = _fingerprint64()
    rows = data.reshape(data.shape[0], -1) if data.shape[0] else data.reshape(0, 0)
    out = np.empty((data.shape[0], 8), np.uint8)
    if data.dtype.kind in "OSU":
        for i, row in enumerate(rows):
            parts = [fp(s) for s in _strings(row)]
            # one string: its fingerprint; several: the fingerprint of theirs, in order
            value = parts[0] if len(parts) == 1 else fp(struct.pack(
                "<%dQ" % len(parts), *parts))
            out[i] = np.frombuffer(struct.pack("<Q", value), np.uint8)
    else:
        little = np.ascontiguousarray(rows, rows.dtype.newbyteorder("<"))
        for i, row in enumerate(little):
            out[i] = np.frombuffer(struct.pack("<Q", fp(row.tobytes())), np.uint8)
    return out


@tf_export("fingerprint")
def fingerprint(data, method: str = "farmhash64", name=None) -> Tensor:
    """A 64-bit fingerprint of each row of `data` (its first dimension), as 8 uint8
    values little-endian (TF's Fingerprint with FarmHash's Fingerprint64): the row's
    bytes for numbers; for strings the fingerprint of the row's one string, or of the
    fingerprints of its strings.

    Args:
      data: a Tensor of rank 1 or more.
      method: "farmhash64", the only method.
      name: the op's name.

    Returns:
      A uint8 Tensor of shape [rows, 8].

    Raises:
      ValueError: `data` of rank 0, or a method other than "farmhash64".
    """
    if isinstance(method, (str, bytes)) and method not in ("farmhash64", b"farmhash64"):
        raise ValueError("Unsupported method: %s" % (
            method.decode() if isinstance(method, bytes) else method))
    x = convert_to_tensor(data, name="data")
    m = convert_to_tensor(method, _dt.string, name="method")
    return apply_op("Fingerprint", [x, m], {"T": x.dtype},
                    name=name or "Fingerprint").outputs[0]
