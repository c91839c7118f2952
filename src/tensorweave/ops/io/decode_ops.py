"""Decoding string tensors: DecodeCompressed (`tf.io.decode_compressed`: ZLIB or GZIP
through the standard `zlib` module) and DecodeJSONExample (`tf.io.decode_json_example`:
tf.train.Example protos in JSON, as protobuf's JSON mapping writes them, to their binary
serialization, byte for byte as TF writes it).
"""
from __future__ import annotations

import json
import re
import struct
import zlib
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.ops.io.sstable import put_varint

register_op("DecodeCompressed", inputs=["bytes: string"], outputs=["output: string"],
            attrs={"compression_type": ""}, shape=lambda op: op.inputs[0].shape)
not_differentiable("DecodeCompressed")

# zlib's wbits: a zlib header, or a gzip header
_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}
_GZIP_MAGIC = b"\x1f\x8b"
# Python's "Error -3 while decompressing data: why" -> zlib's (TF's) "-3: why"
_ZLIB_ERROR = re.compile(r"^Error (-?\d+) while [a-z ]+:")


def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


def _inflate(ctx, data: bytes, wbits: int) -> bytes:
    """Every compressed member of `data` decompressed, as TF's ZlibInputStream reads it:
    a truncated stream gives what it holds, gzip members that follow are read too, and
    anything else after the end is left alone."""
    out = []
    while data:
        stream = zlib.decompressobj(wbits)
        try:
            out.append(stream.decompress(data))
            out.append(stream.flush())
        except zlib.error as e:
            raise errors.DataLossError(None, ctx.op, "inflate() failed with error %s"
                                       % _ZLIB_ERROR.sub(r"\1:", str(e))) from None
        data = stream.unused_data
        if not (stream.eof and data.startswith(_GZIP_MAGIC) and wbits == _WBITS["GZIP"]):
            break
    return b"".join(out)


@kernel("DecodeCompressed")
def _decode_compressed_kernel(ctx, data):
    kind = ctx.attrs["compression_type"]
    if kind == "":
        return data.copy()
    if kind not in _WBITS:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Only ZLIB, ZSTD, GZIP or NONE are supported compressions")
    out = np.empty(data.shape, dtype=object)
    flat_in, flat_out = data.reshape(-1), out.reshape(-1)
    for i, item in enumerate(flat_in):
        flat_out[i] = _inflate(ctx, _as_bytes(item), _WBITS[kind])
    return out


@tf_export("io.decode_compressed", "decode_compressed")
def decode_compressed(bytes, compression_type: str = "",  # noqa: A002 - TF's name
                      name: Optional[str] = None) -> Tensor:
    """Decompresses each string of `bytes`.

    Args:
      bytes: a string Tensor of compressed strings.
      compression_type: "" (no compression: the strings are returned as they are),
        "ZLIB" or "GZIP" (ZSTD, which TF 2.x also reads, is not supported). A truncated
        string gives what it holds, as in TF.
      name: op name.

    Returns:
      A string Tensor of the shape of `bytes`.

    Raises:
      DataLossError: at run time, a string is not valid compressed data.
      InvalidArgumentError: at run time, an unsupported `compression_type`.
    """
    return apply_op("DecodeCompressed", [bytes], {"compression_type": compression_type},
                    name=name or "DecodeCompressed").outputs[0]


register_op("DecodeJSONExample", inputs=["json_examples: string"],
            outputs=["binary_examples: string"], shape=lambda op: op.inputs[0].shape)
not_differentiable("DecodeJSONExample")

# protobuf's JSON names of Feature's fields (lowerCamelCase) -> the proto field names
_FEATURE_KINDS = {"bytesList": "bytes_list", "floatList": "float_list",
                  "int64List": "int64_list"}
_KIND_NUMBERS = {"bytes_list": 1, "float_list": 2, "int64_list": 3}  # Feature's fields
_MASK64 = (1 << 64) - 1


def _proto_field_names(example):
    """The parsed JSON of an Example with Feature's camelCase keys as field names (only
    there: the keys of the feature map are the user's names and stay as they are)."""
    if not isinstance(example, dict):
        return example
    features = example.get("features")
    if isinstance(features, dict) and isinstance(features.get("feature"), dict):
        features["feature"] = {
            key: ({_FEATURE_KINDS.get(k, k): v for k, v in feat.items()}
                  if isinstance(feat, dict) else feat)
            for key, feat in features["feature"].items()}
    return example


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return put_varint(number << 3 | 2) + put_varint(len(payload)) + payload


def _list_bytes(kind: str, values) -> bytes:
    """A BytesList, FloatList or Int64List with its numbers unpacked (one tag each), as
    TF's JSON-to-binary converter writes them."""
    if kind == "int64_list":
        return b"".join(b"\x08" + put_varint(v & _MASK64) for v in values)
    if kind == "float_list":
        return b"".join(b"\x0d" + struct.pack("<f", v) for v in values)
    return b"".join(_field(1, v) for v in values)


def _example_bytes(parsed, message) -> bytes:
    """`message` (the Example `parsed`, the JSON's dicts, holds) serialized as TF's
    converter does: features in the order of the JSON text, lists unpacked, an empty list
    kept. The values come from `message`, which protobuf's JSON parser checked."""
    features = parsed.get("features") if isinstance(parsed, dict) else None
    if features is None:
        return b""
    entries = []
    for key in features.get("feature") or {}:
        feature = message.features.feature[key]
        kind = feature.WhichOneof("kind")
        body = b"" if kind is None else _field(
            _KIND_NUMBERS[kind], _list_bytes(kind, getattr(feature, kind).value))
        entries.append(_field(1, _field(1, key.encode("utf-8")) + _field(2, body)))
    return _field(1, b"".join(entries))


@kernel("DecodeJSONExample")
def _decode_json_example_kernel(ctx, data):
    from google.protobuf import json_format
    from tensorweave.ops.io import example_proto
    out = np.empty(data.shape, dtype=object)
    flat_in, flat_out = data.reshape(-1), out.reshape(-1)
    for i, item in enumerate(flat_in):
        try:
            parsed = json.loads(_as_bytes(item).decode("utf-8"))
            message = json_format.ParseDict(_proto_field_names(parsed),
                                            example_proto.Example())
        except (ValueError, json_format.ParseError) as e:
            raise errors.InvalidArgumentError(
                None, ctx.op, "Error while parsing JSON: %s" % e) from None
        flat_out[i] = _example_bytes(parsed, message)
    return out


@tf_export("io.decode_json_example", "decode_json_example")
def decode_json_example(json_examples, name: Optional[str] = None) -> Tensor:
    """Converts tf.train.Example protos written in JSON to their binary form.

    Args:
      json_examples: a string Tensor of JSON-encoded Examples (protobuf's JSON mapping,
        e.g. {"features": {"feature": {"a": {"int64List": {"value": ["1"]}}}}}).
      name: op name.

    Returns:
      A string Tensor of serialized Examples, of the shape of `json_examples`.

    Raises:
      InvalidArgumentError: at run time, a string is not a JSON Example.
    """
    return apply_op("DecodeJSONExample", [json_examples],
                    name=name or "DecodeJSONExample").outputs[0]
