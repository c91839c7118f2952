"""Unicode text: UnicodeTranscode, UnicodeDecode, UnicodeDecodeWithOffsets, UnicodeEncode
and the builders `tf.strings.unicode_*` over them.

`unicode_decode` and `unicode_split` (and their `_with_offsets` forms) return a dense
vector for a scalar string and, as TF, a RaggedTensor of one row per string for ranked
input. `unicode_encode` encodes the innermost dimension of a dense or ragged code point
tensor, as TF does.
`unicode_script` needs the Unicode script property, which Python does not ship, and is
not provided.
"""
from __future__ import annotations

import codecs
import functools
import threading
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors as _errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_builder import apply_op, convert_op_input
from tensorweave.framework.registry import REQUIRED, TypeAttr, kernel, not_differentiable, \
    register_op
from tensorweave.framework.shapes import TensorShape

_OUTPUT_ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
_ERRORS = ("strict", "replace", "ignore")
_SPLITS = TypeAttr((_dt.int32, _dt.int64), default=_dt.int64)


def _invalid(ctx, message):
    return _errors.InvalidArgumentError(None, ctx.op, message)


def _check_args(errors: str, output_encoding: Optional[str] = None) -> None:
    if errors not in _ERRORS:
        raise ValueError("Attr 'errors' has value '%s' not in: \"strict\", \"replace\", "
                         "\"ignore\"." % errors)
    if output_encoding is not None and output_encoding not in _OUTPUT_ENCODINGS:
        raise ValueError("Attr 'output_encoding' passed string '%s' not in: \"UTF-8\", "
                         "\"UTF-16-BE\", \"UTF-32-BE\"." % output_encoding)


_MARK = "\ud800"  # a lone surrogate: never the result of a valid decode
_SPANS = threading.local()


def _mark_invalid(exc: UnicodeDecodeError):
    """Codec error handler: one marker per invalid byte sequence, its length recorded."""
    _SPANS.lengths.append(exc.end - exc.start)
    return _MARK, exc.end


@functools.lru_cache(maxsize=1)
def _register_handler() -> str:
    codecs.register_error("tensorweave_mark_invalid", _mark_invalid)
    return "tensorweave_mark_invalid"


def _decode(ctx, data: bytes, encoding: str):
    """(code points, byte offset of each) of `data` with the op's error policy."""
    a = ctx.attrs
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise _invalid(ctx, "Could not create converter for input encoding: %s"
                       % encoding) from None
    _SPANS.lengths = []
    text = data.decode(encoding, _register_handler())
    spans = iter(_SPANS.lengths)
    points, starts = [], []
    pos = 0
    for ch in text:
        if ch == _MARK:
            if a["errors"] == "strict":
                raise _invalid(ctx, "Invalid formatting on input string")
            if a["errors"] == "replace":
                points.append(a["replacement_char"])
                starts.append(pos)
            pos += next(spans)
            continue
        cp = ord(ch)
        if a["replace_control_characters"] and cp < 0x20:
            cp = a["replacement_char"]
        points.append(cp)
        starts.append(pos)
        pos += len(ch.encode(encoding, "surrogatepass"))
    return points, starts


def _encode(ctx, points, encoding: str) -> bytes:
    a = ctx.attrs
    out = []
    for cp in points:
        if 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
            out.append(chr(cp))
        elif a["errors"] == "strict":
            raise _invalid(ctx, "Invalid code point %d" % cp)
        elif a["errors"] == "replace":
            out.append(chr(a["replacement_char"]))
    return "".join(out).encode(encoding.lower())


# --- UnicodeTranscode -------------------------------------------------------------------------
register_op("UnicodeTranscode", inputs=["input: string"], outputs=["output: string"],
            attrs={"input_encoding": REQUIRED, "output_encoding": REQUIRED,
                   "errors": "replace", "replacement_char": 65533,
                   "replace_control_characters": False},
            shape=lambda op: op.inputs[0].shape)
not_differentiable("UnicodeTranscode")


@kernel("UnicodeTranscode")
def _transcode_kernel(ctx, x):
    src, dst = ctx.attrs["input_encoding"], ctx.attrs["output_encoding"]
    flat = [_encode(ctx, _decode(ctx, s, src)[0], dst) for s in x.reshape(-1).tolist()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(x.shape)


@tf_export("strings.unicode_transcode")
def unicode_transcode(input, input_encoding: str, output_encoding: str,  # noqa: A002
                      errors: str = "replace", replacement_char: int = 65533,
                      replace_control_characters: bool = False,
                      name: Optional[str] = None) -> Tensor:
    """Re-encodes each string from `input_encoding` to `output_encoding` (TF1).

    Args:
      input: a string Tensor.
      input_encoding: a codec name ("UTF-8", "UTF-16-BE", "latin1", ...).
      output_encoding: "UTF-8", "UTF-16-BE" or "UTF-32-BE".
      errors: "replace" (invalid input becomes `replacement_char`), "ignore" or
        "strict" (an InvalidArgumentError).
      replacement_char: the code point that replaces invalid input.
      replace_control_characters: also replace C0 controls (U+0000-U+001F).
      name: op name.

    Returns:
      A string Tensor of the shape of `input`.
    """
    _check_args(errors, output_encoding)
    return apply_op("UnicodeTranscode", [input],
                    {"input_encoding": input_encoding, "output_encoding": output_encoding,
                     "errors": errors, "replacement_char": int(replacement_char),
                     "replace_control_characters": bool(replace_control_characters)},
                    name=name or "UnicodeTranscode").outputs[0]


# --- UnicodeDecode, UnicodeDecodeWithOffsets ----------------------------------------------
_DECODE_ATTRS = {"input_encoding": REQUIRED, "errors": "replace", "replacement_char": 65533,
                 "replace_control_characters": False, "Tsplits": _SPLITS}
register_op("UnicodeDecode", inputs=["input: string"],
            outputs=["row_splits: Tsplits", "char_values: int32"], attrs=dict(_DECODE_ATTRS),
            shape=lambda op: [TensorShape([None]), TensorShape([None])])
register_op("UnicodeDecodeWithOffsets", inputs=["input: string"],
            outputs=["row_splits: Tsplits", "char_values: int32",
                     "char_to_byte_starts: int64"], attrs=dict(_DECODE_ATTRS),
            shape=lambda op: [TensorShape([None])] * 3)
not_differentiable("UnicodeDecode")
not_differentiable("UnicodeDecodeWithOffsets")


def _decode_rows(ctx, x):
    points, starts, counts = [], [], []
    for s in x.reshape(-1).tolist():
        p, o = _decode(ctx, s, ctx.attrs["input_encoding"])
        points += p
        starts += o
        counts.append(len(p))
    splits = np.concatenate([[0], np.cumsum(counts)]).astype(
        ctx.attrs["Tsplits"].as_numpy_dtype)
    return splits, np.asarray(points, np.int32), np.asarray(starts, np.int64)


@kernel("UnicodeDecode")
def _decode_kernel(ctx, x):
    return _decode_rows(ctx, x)[:2]


@kernel("UnicodeDecodeWithOffsets")
def _decode_offsets_kernel(ctx, x):
    return _decode_rows(ctx, x)


def _decode_builder(op_type, what, input, input_encoding, errors, replacement_char,
                    replace_control_characters, name) -> list:
    """The decoded code points (and offsets): vectors for a scalar string, else
    RaggedTensors of one row per string, shaped as the input plus a ragged dimension."""
    _check_args(errors)
    with name_scope(name, what, [input]):
        x = convert_op_input(input, _dt.string, op_type, "input", name="input")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("Rank of `input` must be statically known.")
        from tensorweave.ops.array import array_ops
        outputs = apply_op(op_type, [array_ops.reshape(x, [-1])],
                           {"input_encoding": input_encoding, "errors": errors,
                            "replacement_char": int(replacement_char),
                            "replace_control_characters": bool(replace_control_characters)},
                           name=op_type).outputs
        splits, parts = outputs[0], outputs[1:]
        if rank == 0:
            return parts
        from tensorweave.ops.ragged.ragged_conversion_ops import with_uniform_outer_dims
        from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
        shape = array_ops.shape(x, out_type=_dt.int64)
        return [with_uniform_outer_dims(RaggedTensor.from_row_splits(p, splits,
                                                                     validate=False),
                                        shape, rank) for p in parts]


@tf_export("strings.unicode_decode")
def unicode_decode(input, input_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, replace_control_characters: bool = False,
                   name: Optional[str] = None) -> Tensor:
    """The code points of each string (TF1 `tf.strings.unicode_decode`).

    Args:
      input: a string Tensor of known rank.
      input_encoding: the codec of `input` ("UTF-8", "UTF-16-BE", ...).
      errors: "replace", "ignore" or "strict".
      replacement_char: the code point for invalid input.
      replace_control_characters: also replace C0 controls.
      name: op name scope.

    Returns:
      An int32 vector of code points for a scalar; for input of rank R a RaggedTensor
      of rank R + 1 (one row of code points per string).

    Raises:
      ValueError: input of unknown rank.
    """
    return _decode_builder("UnicodeDecode", "unicode_decode", input, input_encoding, errors,
                           replacement_char, replace_control_characters, name)[0]


@tf_export("strings.unicode_decode_with_offsets")
def unicode_decode_with_offsets(input, input_encoding: str,  # noqa: A002
                                errors: str = "replace", replacement_char: int = 65533,
                                replace_control_characters: bool = False,
                                name: Optional[str] = None):
    """`unicode_decode` and the byte offset where each character starts (TF1).

    Returns:
      `(codepoints, offsets)`: int32 and int64, vectors or RaggedTensors as in
      `unicode_decode`.

    Raises:
      ValueError: input of unknown rank.
    """
    outs = _decode_builder("UnicodeDecodeWithOffsets", "unicode_decode_with_offsets", input,
                           input_encoding, errors, replacement_char,
                           replace_control_characters, name)
    return outs[0], outs[1]


# --- UnicodeEncode ----------------------------------------------------------------------
register_op("UnicodeEncode", inputs=["input_values: int32", "input_splits: Tsplits"],
            outputs=["output: string"],
            attrs={"errors": "replace", "output_encoding": REQUIRED,
                   "replacement_char": 65533, "Tsplits": _SPLITS},
            shape=lambda op: TensorShape([None]))
not_differentiable("UnicodeEncode")


@kernel("UnicodeEncode")
def _encode_kernel(ctx, values, splits):
    if splits.ndim != 1 or splits.size < 1 or splits[0] != 0 or \
            splits[-1] != values.size or (np.diff(splits) < 0).any():
        raise _invalid(ctx, "Invalid input_splits: they must start at 0, end at the number "
                       "of code points (%d) and not decrease" % values.size)
    bounds = splits.tolist()
    points = values.tolist()
    enc = ctx.attrs["output_encoding"]
    out = np.empty(len(bounds) - 1, dtype=object)
    out[:] = [_encode(ctx, points[a:b], enc) for a, b in zip(bounds[:-1], bounds[1:])]
    return out


@tf_export("strings.unicode_encode")
def unicode_encode(input, output_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, name: Optional[str] = None) -> Tensor:
    """Encodes the innermost dimension of a dense code point tensor as strings (TF1).

    Args:
      input: an int32 Tensor or RaggedTensor of rank >= 1 of code points.
      output_encoding: "UTF-8", "UTF-16-BE" or "UTF-32-BE".
      errors: "replace", "ignore" or "strict" for invalid code points.
      replacement_char: the code point that replaces invalid ones.
      name: op name scope.

    Returns:
      A string Tensor of shape input.shape[:-1] (a RaggedTensor where ragged
      dimensions remain).

    Raises:
      ValueError: a bad encoding or `errors`, or a scalar input.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
    _check_args(errors, output_encoding)
    if isinstance(input, RaggedTensor):
        return _encode_ragged(input, output_encoding, errors, replacement_char, name)
    with name_scope(name, "UnicodeEncode", [input]):
        x = convert_op_input(input, _dt.int32, "UnicodeEncode", "input_values", name="input")
        if x.shape.ndims == 0:
            raise ValueError("Rank of input_tensor must be statically known and >= 1.")
        flat, splits, shape = uniform_rows(x)
        out = apply_op("UnicodeEncode", [flat, splits],
                       {"errors": errors, "output_encoding": output_encoding,
                        "replacement_char": int(replacement_char)},
                       name="UnicodeEncode").outputs[0]
        out = array_ops.reshape(out, shape[:-1])
        if x.shape.ndims is not None:
            out.set_shape(x.shape[:-1])
        return out


def _encode_ragged(rt, output_encoding: str, errors: str, replacement_char: int, name):
    """unicode_encode of a RaggedTensor: its innermost rows, each one string."""
    from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
    flat = rt.flat_values
    if flat.shape.ndims != 1:  # the innermost dimension is uniform: encode it densely
        return rt.with_flat_values(unicode_encode(flat, output_encoding, errors,
                                                  replacement_char, name))
    with name_scope(name, "UnicodeEncode", [flat]):
        splits = rt.nested_row_splits
        strings = apply_op("UnicodeEncode",
                           [convert_op_input(flat, _dt.int32, "UnicodeEncode",
                                             "input_values"), splits[-1]],
                           {"errors": errors, "output_encoding": output_encoding,
                            "replacement_char": int(replacement_char)},
                           name="UnicodeEncode").outputs[0]
        if len(splits) == 1:
            return strings
        return RaggedTensor.from_nested_row_splits(strings, splits[:-1], validate=False)


def uniform_rows(x: Tensor):
    """A Tensor [..., width] of rank >= 1 as rows of one length: (its values flattened,
    the int64 row splits [0, width, 2 * width, ...], its int64 shape)."""
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.math import math_ops, reduction_ops
    shape = array_ops.shape(x, out_type=_dt.int64)
    width = shape[-1]
    rows = reduction_ops.reduce_prod(shape[:-1])
    splits = math_ops.range(rows + 1) * width
    return array_ops.reshape(x, [-1]), splits, shape


# --- unicode_split --------------------------------------------------------------------------
def _split_chars(points, output_encoding: str):
    """Each code point encoded as a string (a RaggedTensor's flat values, row by row)."""
    from tensorweave.ops.array import array_ops
    if not isinstance(points, Tensor):
        return points.with_flat_values(_split_chars(points.flat_values, output_encoding))
    from tensorweave.ops.math import math_ops
    n = array_ops.size(points, out_type=_dt.int64)
    return apply_op("UnicodeEncode", [points, math_ops.range(n + 1)],
                    {"output_encoding": output_encoding}, name="UnicodeEncode").outputs[0]


def _utf_out(input_encoding: str) -> str:
    return input_encoding if input_encoding in _OUTPUT_ENCODINGS else "UTF-8"


@tf_export("strings.unicode_split")
def unicode_split(input, input_encoding: str, errors: str = "replace",  # noqa: A002
                  replacement_char: int = 65533, name: Optional[str] = None) -> Tensor:
    """The characters of a scalar string, each as a string (TF1 `tf.strings.unicode_split`).

    Args:
      input: a string Tensor of known rank.
      input_encoding: the codec of `input`.
      errors: "replace", "ignore" or "strict".
      replacement_char: the code point for invalid input.
      name: op name scope.

    Returns:
      A string vector, one character (in `input_encoding` when it is a UTF) per entry,
      for a scalar; a RaggedTensor of one row of characters per string otherwise.
    """
    points = unicode_decode(input, input_encoding, errors, replacement_char, name=name)
    return _split_chars(points, _utf_out(input_encoding))


@tf_export("strings.unicode_split_with_offsets")
def unicode_split_with_offsets(input, input_encoding: str,  # noqa: A002
                               errors: str = "replace", replacement_char: int = 65533,
                               name: Optional[str] = None):
    """`unicode_split` and the byte offset where each character starts (TF1).

    Returns:
      `(chars, offsets)`: string and int64, vectors or RaggedTensors as in
      `unicode_split`.
    """
    points, offsets = unicode_decode_with_offsets(input, input_encoding, errors,
                                                  replacement_char, name=name)
    return _split_chars(points, _utf_out(input_encoding)), offsets
