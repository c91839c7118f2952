"""Decoding string tensors: DecodeCompressed (`tf.io.decode_compressed`: ZLIB or GZIP
through the standard `zlib` module) and DecodeJSONExample (`tf.io.decode_json_example`:
tf.train.Example protos in JSON, as protobuf's JSON mapping writes them, to their binary
serialization).
"""
from __future__ import annotations

import json
import zlib
from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op

register_op("DecodeCompressed", inputs=["bytes: string"], outputs=["output: string"],
            attrs={"compression_type": ""}, shape=lambda op: op.inputs[0].shape)
not_differentiable("DecodeCompressed")

# zlib's wbits: a zlib header, or a gzip header
_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}


def _as_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8")


@kernel("DecodeCompressed")
def _decode_compressed_kernel(ctx, data):
    kind = ctx.attrs["compression_type"]
    if kind == "":
        return data.copy()
    if kind not in _WBITS:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Unsupported compression_type %r: use \"\", \"ZLIB\" or \"GZIP\""
            % kind)
    out = np.empty(data.shape, dtype=object)
    flat_in, flat_out = data.reshape(-1), out.reshape(-1)
    for i, item in enumerate(flat_in):
        d = zlib.decompressobj(_WBITS[kind])
        try:
            flat_out[i] = d.decompress(_as_bytes(item)) + d.flush()
        except zlib.error as e:
            raise errors.DataLossError(None, ctx.op, "inflate() failed: %s" % e) from None
        if not d.eof:
            raise errors.DataLossError(None, ctx.op, "inflate() failed: truncated input")
    return out


@tf_export("io.decode_compressed", "decode_compressed")
def decode_compressed(bytes, compression_type: str = "",  # noqa: A002 - TF's name
                      name: Optional[str] = None) -> Tensor:
    """Decompresses each string of `bytes`.

    Args:
      bytes: a string Tensor of compressed strings.
      compression_type: "" (no compression: the strings are returned as they are),
        "ZLIB" or "GZIP".
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
        flat_out[i] = message.SerializeToString()
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
