"""Strings built from pieces: EncodeBase64, DecodeBase64 (web-safe base64),
UnsortedSegmentJoin, StringNGrams (`tf.strings.ngrams`) and `tf.strings.bytes_split`."""
from __future__ import annotations

import base64
import binascii
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_op_input, convert_to_tensor
from tensorweave.framework.registry import REQUIRED, TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.array import array_util as _u
from tensorweave.runtime.values import string_items


def _invalid(ctx, message):
    return errors.InvalidArgumentError(None, ctx.op, message)


def _obj(items, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


# --- EncodeBase64, DecodeBase64 ----------------------------------------------------------
register_op("EncodeBase64", inputs=["input: string"], outputs=["output: string"],
            attrs={"pad": False}, shape=lambda op: op.inputs[0].shape)
register_op("DecodeBase64", inputs=["input: string"], outputs=["output: string"],
            shape=lambda op: op.inputs[0].shape)
not_differentiable("EncodeBase64")
not_differentiable("DecodeBase64")

_WEB_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@kernel("EncodeBase64")
def _encode_base64_kernel(ctx, x):
    pad = ctx.attrs["pad"]
    out = [base64.urlsafe_b64encode(s) for s in string_items(x)]
    if not pad:
        out = [s.rstrip(b"=") for s in out]
    return _obj(out, x.shape)


def _decode_one(ctx, s: bytes) -> bytes:
    body = s.rstrip(b"=") if len(s) % 4 == 0 else s
    if not _WEB_SAFE.issuperset(body):
        raise _invalid(ctx, "Invalid character found in base64.")
    if len(body) % 4 == 1:
        raise _invalid(ctx, "Base64 string length cannot be 1 modulo 4.")
    try:
        return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
    except binascii.Error:
        raise _invalid(ctx, "Invalid character found in base64.") from None


@kernel("DecodeBase64")
def _decode_base64_kernel(ctx, x):
    return _obj([_decode_one(ctx, s) for s in x.reshape(-1).tolist()], x.shape)


@tf_export("encode_base64", "io.encode_base64")
def encode_base64(input, pad: bool = False, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Encodes each string in web-safe base64 (`-` and `_` for `+` and `/`) (TF1).

    Args:
      input: a string Tensor.
      pad: end each encoding with `=` padding to a multiple of 4 characters.
      name: op name.

    Returns:
      A string Tensor of the shape of `input`.
    """
    return apply_op("EncodeBase64", [convert_to_tensor(input, dtype=_dt.string)],
                    {"pad": bool(pad)}, name=name or "EncodeBase64").outputs[0]


@tf_export("decode_base64", "io.decode_base64")
def decode_base64(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Decodes web-safe base64 strings, padded or not (TF1).

    Args:
      input: a string Tensor.
      name: op name.

    Returns:
      A string Tensor of the shape of `input`.

    Raises:
      InvalidArgumentError (at run time): a character outside the web-safe alphabet, or
        a length that is 1 modulo 4.
    """
    return apply_op("DecodeBase64", [convert_to_tensor(input, dtype=_dt.string)],
                    name=name or "DecodeBase64").outputs[0]


# --- UnsortedSegmentJoin ------------------------------------------------------------------
def _segment_join_shape(op):
    inputs, ids, num = op.inputs
    _u.with_rank(_u.dims_of(num.shape), 0)
    n = _u.const_int(num)
    i, s = _u.dims_of(inputs.shape), _u.dims_of(ids.shape)
    if i is None or s is None:
        return unknown_shape()
    if len(s) > len(i):
        raise ValueError("Shape must be at least rank %d but is rank %d" % (len(s), len(i)))
    _u.merge_shapes(i[:len(s)], s)
    return TensorShape([n] + i[len(s):])


register_op("UnsortedSegmentJoin",
            inputs=["inputs: string", "segment_ids: Tindices", "num_segments: Tnumsegments"],
            outputs=["output: string"],
            attrs={"separator": "", "Tindices": TypeAttr(_u.INDEX_TYPES),
                   "Tnumsegments": TypeAttr(_u.INDEX_TYPES, default=_dt.int32)},
            shape=_segment_join_shape)
not_differentiable("UnsortedSegmentJoin")


@kernel("UnsortedSegmentJoin")
def _segment_join_kernel(ctx, inputs, ids, num):
    sep = ctx.attrs["separator"]
    sep = sep.encode("utf-8") if isinstance(sep, str) else bytes(sep)
    if np.ndim(num) != 0:
        raise _invalid(ctx, "Number of segments cannot be empty.")
    n = int(num)
    if inputs.shape[:ids.ndim] != ids.shape:
        raise _invalid(ctx, "segment_ids.shape = %s does not prefix inputs.shape = %s"
                       % (_u.shape_str(ids.shape), _u.shape_str(inputs.shape)))
    flat_ids = np.asarray(ids).reshape(-1)
    if flat_ids.size and (flat_ids.min() < 0 or flat_ids.max() >= n):
        raise _invalid(ctx, "segment_ids are not allowed to exceed num_segments or to have "
                       "negative values.")
    inner = inputs.shape[ids.ndim:]
    width = int(np.prod(inner, dtype=np.int64))
    rows = inputs.reshape(flat_ids.size, width).tolist()
    pieces = [[[] for _ in range(width)] for _ in range(n)]
    for seg, row in zip(flat_ids.tolist(), rows):  # one pass over the rows, in order
        for j, s in enumerate(row):
            pieces[seg][j].append(s)
    return _obj([sep.join(p) for seg in pieces for p in seg], (n,) + tuple(inner))


@tf_export("strings.unsorted_segment_join")
def unsorted_segment_join(inputs, segment_ids, num_segments, separator: str = "",
                          name: Optional[str] = None) -> Tensor:
    """Joins the strings of each segment, in order, with `separator` (TF1).

    Args:
      inputs: a string Tensor.
      segment_ids: int32/int64 Tensor whose shape is a prefix of `inputs`' shape, values
        in [0, num_segments).
      num_segments: a scalar int32/int64.
      separator: the string between joined strings.
      name: op name.

    Returns:
      A string Tensor [num_segments] + inputs.shape[rank(segment_ids):]; empty segments
      are "".

    Raises:
      InvalidArgumentError (at run time): a segment id out of range.
    """
    return apply_op("UnsortedSegmentJoin", [inputs, segment_ids, num_segments],
                    {"separator": separator}, name=name or "UnsortedSegmentJoin").outputs[0]


# --- StringNGrams ---------------------------------------------------------------------------
register_op("StringNGrams", inputs=["data: string", "data_splits: Tsplits"],
            outputs=["ngrams: string", "ngrams_splits: Tsplits"],
            attrs={"separator": REQUIRED, "ngram_widths": REQUIRED, "left_pad": REQUIRED,
                   "right_pad": REQUIRED, "pad_width": REQUIRED,
                   "preserve_short_sequences": REQUIRED,
                   "Tsplits": TypeAttr(_u.INDEX_TYPES, default=_dt.int64)},
            shape=lambda op: [TensorShape([None]), op.inputs[1].shape])
not_differentiable("StringNGrams")


def _enc(v) -> bytes:
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


@kernel("StringNGrams")
def _string_ngrams_kernel(ctx, data, splits):
    a = ctx.attrs
    sep, left, right = _enc(a["separator"]), _enc(a["left_pad"]), _enc(a["right_pad"])
    widths, pad_attr = list(a["ngram_widths"]), a["pad_width"]
    if splits.ndim != 1 or splits.size < 1:
        raise _invalid(ctx, "Invalid data_splits: must be a non-empty vector")
    bounds = np.asarray(splits, dtype=np.int64)
    if bounds[0] != 0 or bounds[-1] != data.shape[0] or (np.diff(bounds) < 0).any():
        raise _invalid(ctx, "Invalid split values: data_splits must start at 0, end at the "
                       "number of strings (%d) and not decrease" % data.shape[0])
    flat = data.tolist()
    out, counts = [], []
    if not flat:  # TF: no strings at all give no n-grams, padded or not
        return _obj(out, (0,)), np.zeros_like(bounds).astype(splits.dtype)
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        row = flat[start:end]
        before = len(out)
        for w in widths:
            pad = min(pad_attr, w - 1) if pad_attr >= 0 else w - 1
            padded = [left] * pad + row + [right] * pad
            out.extend(sep.join(padded[i:i + w]) for i in range(len(padded) - w + 1))
        if len(out) == before and row and a["preserve_short_sequences"]:
            pad = max(pad_attr, 0)
            out.append(sep.join([left] * pad + row + [right] * pad))
        counts.append(len(out) - before)
    new_splits = np.concatenate([[0], np.cumsum(counts)]).astype(splits.dtype)
    return _obj(out, (len(out),)), new_splits


@tf_export("strings.ngrams")
def ngrams(data, ngram_width, separator: str = " ", pad_values=None, padding_width=None,
           preserve_short_sequences: bool = False, name: Optional[str] = None) -> Tensor:
    """The n-grams of the innermost dimension of a string Tensor or RaggedTensor (TF1).

    Args:
      data: a string Tensor or RaggedTensor of rank >= 1.
      ngram_width: an int or a list of ints; each width's n-grams follow the previous.
      separator: the string between the joined strings.
      pad_values: None (no padding), one string for both ends, or a (left, right) pair.
      padding_width: how many pads each end gets (default: width - 1).
      preserve_short_sequences: a sequence too short for any n-gram gives one n-gram of
        the whole sequence.
      name: op name scope.

    Returns:
      A string Tensor data.shape[:-1] + [number of n-grams per row]; a RaggedTensor
      for RaggedTensor data.

    Raises:
      ValueError: bad padding arguments, or `data` of rank 0.
    """
    if pad_values is None:
        left = right = ""
    elif isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2:
            raise ValueError("pad_values must be a string, tuple or list of length 2.")
        left, right = pad_values
    else:
        left = right = pad_values
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    if pad_values is None:
        padding_width = 0
    widths = [int(ngram_width)] if isinstance(ngram_width, (int, np.integer)) else \
        [int(w) for w in ngram_width]
    if any(w < 1 for w in widths):
        raise ValueError("All ngram_widths must be greater than 0. Got %s" % (ngram_width,))
    attrs = {"separator": separator, "ngram_widths": widths, "left_pad": left,
             "right_pad": right,
             "pad_width": -1 if padding_width is None else int(padding_width),
             "preserve_short_sequences": bool(preserve_short_sequences)}
    from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
    if isinstance(data, RaggedTensor):
        return _ragged_ngrams(data, attrs, name)
    return _dense_ngrams(data, attrs, name)


def _dense_ngrams(data, attrs: dict, name) -> Tensor:
    """ngrams of the innermost dimension of a dense Tensor."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.string.string_unicode_ops import uniform_rows
    with name_scope(name, "StringNGrams", [data]):
        data = convert_to_tensor(data, dtype=_dt.string, name="data")
        if data.shape.ndims == 0:
            raise ValueError("Data must have rank>0")
        flat, splits, shape = uniform_rows(data)
        op = apply_op("StringNGrams", [flat, splits], attrs)
        from tensorweave.ops.array.array_join_ops import concat
        out_shape = concat([shape[:-1], convert_to_tensor(np.array([-1], np.int64))], 0)
        out = array_ops.reshape(op.outputs[0], out_shape)
        if data.shape.ndims is not None:
            out.set_shape(data.shape[:-1].concatenate([None]))
        return out


def _ragged_ngrams(data, attrs: dict, name):
    """ngrams of a RaggedTensor: of its innermost rows (ragged or uniform)."""
    from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
    flat = data.flat_values
    if flat.shape.ndims != 1:  # the innermost dimension is uniform: dense n-grams of it
        return data.with_flat_values(_dense_ngrams(flat, attrs, name))
    with name_scope(name, "StringNGrams", [flat]):
        splits = data.nested_row_splits
        grams, new_splits = apply_op("StringNGrams", [flat, splits[-1]], attrs).outputs
        return RaggedTensor.from_nested_row_splits(grams, splits[:-1] + (new_splits,),
                                                   validate=False)


@tf_export("strings.bytes_split")
def bytes_split(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The bytes of each string (TF1 `tf.strings.bytes_split`).

    Args:
      input: a string Tensor of known rank.
      name: op name scope.

    Returns:
      A 1-D string Tensor, one byte per entry, for a scalar; for input of rank R a
      RaggedTensor of rank R + 1 (one row of bytes per string).

    Raises:
      ValueError: `input` of unknown rank.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.string.string_ops import string_split
    with name_scope(name, "BytesSplit", [input]):
        x = convert_op_input(input, _dt.string, "StringSplit", "input", name="input")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("input must have a statically-known rank.")
        if rank == 0:
            return string_split(array_ops.reshape(x, [1]), sep="").values
        from tensorweave.ops.ragged.ragged_conversion_ops import with_uniform_outer_dims
        rows = string_split(array_ops.reshape(x, [-1]), sep="", result_type="RaggedTensor")
        return with_uniform_outer_dims(rows, array_ops.shape(x, out_type=_dt.int64), rank)
