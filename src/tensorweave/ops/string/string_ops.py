"""String ops: string_split, substr, string_to_number, as_string, string_join,
strings.length, strings.reduce_join, strings.format, read_file, write_file,
matching_files. decode_csv and decode_raw live in string_decode_ops.py.

Strings are NumPy object arrays of bytes; kernels work on flat Python lists of bytes
(one pass, no per-element NumPy calls) and reshape at the end.
"""
from __future__ import annotations

import math
import os
from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_builder import apply_op, convert_op_input, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, kernel, not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, broadcast_shapes, unknown_shape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.string.number_parsing import parse_numbers
from tensorweave.platform import file_io
from tensorweave.runtime.values import string_items, string_scalar

_INT_TYPES = (_dt.int32, _dt.int64)


def _obj_array(items, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


# --- StringSplit / StringSplitV2 ----------------------------------------------------------
def _split_shape(op):
    op.inputs[0].shape.with_rank(1)
    op.inputs[1].shape.with_rank(0)
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


register_op("StringSplit", inputs=["input: string", "delimiter: string"],
            outputs=["indices: int64", "values: string", "shape: int64"],
            attrs={"skip_empty": True}, shape=_split_shape)
register_op("StringSplitV2", inputs=["input: string", "sep: string"],
            outputs=["indices: int64", "values: string", "shape: int64"],
            attrs={"maxsplit": -1}, shape=_split_shape)
not_differentiable("StringSplit")
not_differentiable("StringSplitV2")


def _tokens_to_sparse(tokens: List[List[bytes]]):
    """indices [n, 2], values [n], dense shape [rows, longest] of per-row token lists."""
    counts = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    total = int(counts.sum())
    rows = np.repeat(np.arange(len(tokens), dtype=np.int64), counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    indices = np.stack([rows, np.arange(total, dtype=np.int64) - starts], axis=1) \
        if total else np.zeros((0, 2), np.int64)
    values = _obj_array([s for t in tokens for s in t], (total,))
    shape = np.array([len(tokens), int(counts.max()) if len(tokens) else 0], np.int64)
    return indices, values, shape


def _check_vector(ctx, x, what="input"):
    if x.ndim != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "%s must be a vector, got shape: [%s]"
                                          % (what, ",".join(map(str, x.shape))))


@kernel("StringSplit")
def _string_split_kernel(ctx, source, delimiter):
    _check_vector(ctx, source)
    delim = bytes(delimiter.reshape(()).item()) if isinstance(delimiter, np.ndarray) \
        else bytes(delimiter)
    flat = source.tolist()
    if not delim:
        tokens = [[s[i:i + 1] for i in range(len(s))] for s in flat]
    else:
        if len(delim) > 1:  # every byte of `delimiter` splits: map them all to the first
            table = bytes.maketrans(delim[1:], delim[:1] * (len(delim) - 1))
            flat = [s.translate(table) for s in flat]
        sep = delim[:1]
        tokens = [s.split(sep) if s else [] for s in flat]
        if ctx.attrs["skip_empty"]:
            tokens = [[t for t in row if t] for row in tokens]
    return _tokens_to_sparse(tokens)


@kernel("StringSplitV2")
def _string_split_v2_kernel(ctx, source, sep):
    _check_vector(ctx, source)
    sep = bytes(sep.reshape(()).item()) if isinstance(sep, np.ndarray) else bytes(sep)
    maxsplit = ctx.attrs["maxsplit"]
    flat = source.tolist()
    if maxsplit == 0:  # TF: each string whole, not stripped even with sep=None
        tokens = [[s] for s in flat]
    elif sep:
        tokens = [s.split(sep, maxsplit) for s in flat]
    elif maxsplit < 0:
        tokens = [s.split() for s in flat]
    else:
        tokens = [_split_whitespace(s, maxsplit) for s in flat]
    return _tokens_to_sparse(tokens)


def _split_whitespace(s: bytes, maxsplit: int) -> List[bytes]:
    """TF's SplitV2 at runs of whitespace: Python's `split(None, maxsplit)`, except that
    once `maxsplit` tokens are taken the rest of the string is one more token even when
    it is empty ("a ".split(None, 1) is [b"a"], TF gives [b"a", b""])."""
    tokens = s.split(None, maxsplit)
    if maxsplit > 0 and len(tokens) == maxsplit:
        tokens.append(b"")
    return tokens


@tf_export("string_split")
def string_split(source, sep=None, skip_empty: bool = True, delimiter=None,
                 result_type: str = "SparseTensor", name: Optional[str] = None):
    """Splits each string of a vector into tokens (TF1 `tf.string_split`).

    Args:
      source: 1-D string tensor.
      sep: the delimiter characters; each byte of it is a separate delimiter, and ""
        splits into single bytes. Defaults to " ".
      skip_empty: drop empty tokens.
      delimiter: deprecated alias of `sep`.
      result_type: "SparseTensor" or "RaggedTensor".
      name: name scope.

    Returns:
      A SparseTensor of shape [len(source), max tokens]: indices [n, 2] (row, position),
      the tokens as values; or a RaggedTensor of one row of tokens per string.

    Raises:
      ValueError: `source` is not a vector, or an unknown `result_type`.
    """
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    delimiter = sep if sep is not None else delimiter
    if delimiter is None:
        delimiter = " "
    _check_result_type(result_type)
    with name_scope(name, "StringSplit", [source]):
        op = apply_op("StringSplit", [convert_to_tensor(source, dtype=_dt.string),
                                      convert_to_tensor(delimiter, dtype=_dt.string)],
                      {"skip_empty": bool(skip_empty)}, name="StringSplit")
        if result_type == "RaggedTensor":
            return _tokens_as_ragged(op.outputs)
        return SparseTensor(*op.outputs)


def _check_result_type(result_type):
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def _tokens_as_ragged(outputs, strings_shape=None, strings_rank: int = 1):
    """The (indices, values, dense_shape) of a split as a RaggedTensor of rows."""
    from tensorweave.ops.ragged.ragged_conversion_ops import from_split_tokens
    indices, values, shape = outputs
    return from_split_tokens(indices, values, shape[0], strings_shape, strings_rank)


@tf_export("strings.split")
def strings_split(input=None, sep=None, maxsplit: int = -1,  # noqa: A002
                  result_type: str = "SparseTensor", source=None, name: Optional[str] = None):
    """Splits each string of a vector at `sep` (TF1 `tf.strings.split`).

    Unlike `string_split`, `sep` is one multi-byte separator (Python `bytes.split`
    semantics: empty tokens kept); with `sep=None` runs of whitespace separate tokens.

    Returns:
      A SparseTensor of tokens, shape [len(input), max tokens]; a scalar is split as a
      vector of one string, and for input of rank R > 1 the tokens of each string are
      the last of R + 1 dimensions. With result_type="RaggedTensor", the same tokens as
      a RaggedTensor of rank R + 1 (one row per string).
    """
    if input is not None and source is not None:
        raise ValueError("Cannot specify both 'input' and 'source'")
    input = source if input is None else input  # noqa: A001
    _check_result_type(result_type)
    with name_scope(name, "StringSplit", [input]):
        strings = convert_to_tensor(input, dtype=_dt.string)
        rank = strings.shape.ndims
        from tensorweave.ops.array import array_ops
        flat = array_ops.reshape(strings, [-1]) if rank != 1 else strings
        op = apply_op("StringSplitV2", [flat, convert_to_tensor(sep or "", dtype=_dt.string)],
                      {"maxsplit": int(maxsplit)}, name="StringSplitV2")
        indices, values, shape = op.outputs
        if result_type == "RaggedTensor":
            if rank is None:
                raise ValueError("tf.strings.split with result_type='RaggedTensor' needs "
                                 "input of known rank")
            return _tokens_as_ragged(op.outputs, array_ops.shape(strings, out_type=_dt.int64),
                                     max(rank, 1))
        if rank is None or rank <= 1:
            return SparseTensor(indices, values, shape)
        # the row of each token back to its string's coordinates
        from tensorweave.ops.array import array_join_ops, array_sort_ops
        dims = array_ops.shape(strings, out_type=_dt.int64)
        coords = array_sort_ops.unravel_index(indices[:, 0], dims)
        indices = array_join_ops.concat([array_ops.transpose(coords), indices[:, 1:]], 1)
        return SparseTensor(indices, values, array_join_ops.concat([dims, shape[1:]], 0))


# --- Substr -------------------------------------------------------------------------------
def _substr_shape(op):
    inp, pos, length = op.inputs
    if not pos.shape.is_compatible_with(length.shape):
        raise ValueError("pos and len shapes must match: %s vs. %s" % (
            _shape_str(pos.shape), _shape_str(length.shape)))
    return broadcast_shapes(inp.shape, pos.shape.merge_with(length.shape))


def _shape_str(s: TensorShape) -> str:
    return "?" if s.ndims is None else "[%s]" % ",".join(
        "?" if d is None else str(d) for d in s.as_list())


register_op("Substr", inputs=["input: string", "pos: T", "len: T"], outputs=["output: string"],
            attrs={"T": TypeAttr(_INT_TYPES), "unit": "BYTE"}, shape=_substr_shape)
not_differentiable("Substr")


@kernel("Substr")
def _substr_kernel(ctx, inp, pos, length):
    utf8 = ctx.attrs["unit"] == "UTF8_CHAR"
    if pos.shape != length.shape:
        raise errors.InvalidArgumentError(None, ctx.op, "pos and len should have the same "
                                          "shape, got: [%s] vs. [%s]"
                                          % (",".join(map(str, pos.shape)),
                                             ",".join(map(str, length.shape))))
    try:
        inp_b, pos_b, len_b = np.broadcast_arrays(inp, pos, length)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Incompatible shapes for input and pos: [%s] vs. [%s]"
            % (",".join(map(str, inp.shape)), ",".join(map(str, pos.shape)))) from None
    strings = inp_b.reshape(-1).tolist()
    out = []
    for i, (s, p, n) in enumerate(zip(strings, pos_b.reshape(-1).tolist(),
                                      len_b.reshape(-1).tolist())):
        # a UTF-8 character starts at every byte that is not a continuation byte (TF's
        # rule, which also counts the pieces of a truncated sequence)
        starts = [j for j, b in enumerate(s) if b & 0xC0 != 0x80] if utf8 else None
        size = len(starts) if utf8 else len(s)
        if p > size or p < -size:
            raise errors.InvalidArgumentError(
                None, ctx.op, "pos %d out of range for string%s at index %d"
                % (p, "" if utf8 else " b'%s'" % s.decode("utf-8", "backslashreplace"), i))
        if p < 0:
            p += size
        stop = size if n < 0 else min(p + n, size)
        if utf8:
            p, stop = (starts + [len(s)])[p], (starts + [len(s)])[stop]
        out.append(s[p:stop])
    return _obj_array(out, inp_b.shape)


@tf_export("substr", "strings.substr")
def substr(input, pos, len, name: Optional[str] = None, unit: str = "BYTE"):  # noqa: A002
    """Substrings `input[pos:pos + len]` (TF1 `tf.strings.substr`).

    Args:
      input: string tensor.
      pos: int32/int64 start positions (negative counts from the end), broadcast
        against `input`; same shape as `len`.
      len: int32/int64 lengths (past the end: up to the end).
      unit: "BYTE" or "UTF8_CHAR": what positions and lengths count.
      name: op name.

    Returns:
      A string tensor of the broadcast shape.

    Raises:
      ValueError: `pos` and `len` shapes differ.
      InvalidArgumentError (at run time): a position outside a string.
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError("unit must be 'BYTE' or 'UTF8_CHAR', got %r" % (unit,))
    return apply_op("Substr", [input, pos, len],
                    {"unit": unit}, name=name or "Substr").outputs[0]


# --- StringToNumber -----------------------------------------------------------------------
register_op("StringToNumber", inputs=["string_tensor: string"], outputs=["output: out_type"],
            attrs={"out_type": TypeAttr((_dt.float32, _dt.float64, _dt.int32, _dt.int64,
                                         _dt.uint32, _dt.uint64), default=_dt.float32)},
            shape=lambda op: op.inputs[0].shape)
not_differentiable("StringToNumber")


@kernel("StringToNumber")
def _string_to_number_kernel(ctx, strings):
    flat = string_items(strings)
    values, bad = parse_numbers(flat, ctx.attrs["out_type"].as_numpy_dtype)
    if bad is not None:
        raise errors.InvalidArgumentError(
            None, ctx.op, "StringToNumberOp could not correctly convert string: %s"
            % flat[bad].decode("utf-8", "replace"))
    return values.reshape(strings.shape)


@tf_export("string_to_number", "strings.to_number")
def string_to_number(string_tensor=None, out_type=_dt.float32, name: Optional[str] = None,
                     input=None):  # noqa: A002
    """Parses each string as a number (TF1 `tf.strings.to_number`).

    Args:
      string_tensor: string tensor.
      out_type: float32 (default), float64, int32, int64, uint32 or uint64.
      name: op name.
      input: alias of `string_tensor`.

    Returns:
      A tensor of `out_type` with the shape of the input.

    Raises:
      InvalidArgumentError (at run time): a string is not a number of that type.
    """
    if string_tensor is not None and input is not None:
        raise ValueError("Cannot specify both 'string_tensor' and 'input'")
    string_tensor = input if string_tensor is None else string_tensor
    return apply_op("StringToNumber", [string_tensor],
                    {"out_type": out_type}, name=name or "StringToNumber").outputs[0]


# --- AsString -----------------------------------------------------------------------------
_AS_STRING_TYPES = (_dt.int8, _dt.int16, _dt.int32, _dt.int64, _dt.uint8, _dt.uint16,
                    _dt.uint32, _dt.uint64, _dt.complex64, _dt.complex128, _dt.float16,
                    _dt.bfloat16, _dt.float32, _dt.float64, _dt.bool, _dt.string)
register_op("AsString", inputs=["input: T"], outputs=["output: string"],
            attrs={"T": TypeAttr(_AS_STRING_TYPES), "precision": -1, "scientific": False,
                   "shortest": False, "width": -1, "fill": ""},
            shape=lambda op: op.inputs[0].shape)
not_differentiable("AsString")


def _as_string_format(ctx, dtype: _dt.DType) -> str:
    a = ctx.attrs
    fill = a["fill"]
    if len(fill) > 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Fill string must be one or fewer "
                                          "characters")
    if a["scientific"] and a["shortest"]:
        raise errors.InvalidArgumentError(None, ctx.op, "Cannot select both scientific and "
                                          "shortest notation")
    if fill and fill not in " +-0#":
        raise errors.InvalidArgumentError(None, ctx.op, 'Fill argument not supported: "%s"'
                                          % fill)
    floating = dtype.is_floating or dtype.is_complex
    if not floating:
        if a["scientific"] or a["shortest"]:
            raise errors.InvalidArgumentError(None, ctx.op, "scientific and shortest format "
                                              "not supported for datatype %s" % dtype.name)
        if a["precision"] > -1:
            raise errors.InvalidArgumentError(None, ctx.op, "precision not supported for "
                                              "datatype %s" % dtype.name)
    fmt = "%" + fill
    if a["width"] > -1:
        fmt += str(a["width"])
    if a["precision"] > -1:
        fmt += "." + str(a["precision"])
    if dtype is _dt.string:
        return fmt + "s"
    if not floating:
        return fmt + "d"
    return fmt + ("e" if a["scientific"] else "g" if a["shortest"] else "f")


@kernel("AsString")
def _as_string_kernel(ctx, x):
    dtype = ctx.attrs["T"]
    fmt = _as_string_format(ctx, dtype)
    flat = x.reshape(-1)
    if dtype is _dt.bool:
        out = [b"true" if v else b"false" for v in flat.tolist()]
    elif dtype is _dt.string:
        out = [(fmt % v.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
               for v in flat.tolist()]
    elif dtype.is_integer:
        # an integer's printf output is ASCII: formatting straight to bytes saves a
        # decode of the format and an encode per item
        byte_fmt = fmt.encode()
        out = [byte_fmt % v for v in flat.tolist()]
    elif dtype.is_complex:
        out = [("(%s,%s)" % (_printf(fmt, v.real), _printf(fmt, v.imag))).encode()
               for v in flat.tolist()]
    else:
        if dtype in (_dt.float16, _dt.bfloat16):
            flat = flat.astype(np.float32)
        out = [_printf(fmt, v).encode() for v in flat.tolist()]
    return _obj_array(out, x.shape)


def _printf(fmt: str, v) -> str:
    """`fmt % v` as C's printf: the "0" flag does not pad inf or nan with zeros."""
    if isinstance(v, float) and not math.isfinite(v) and fmt.startswith("%0"):
        fmt = "%" + fmt[2:]
    return fmt % v


@tf_export("as_string", "strings.as_string", "dtypes.as_string")
def as_string(input, precision: int = -1, scientific: bool = False,  # noqa: A002
              shortest: bool = False, width: int = -1, fill: str = "",
              name: Optional[str] = None):
    """Formats each element as a string, as C's printf would (TF1 `tf.as_string`).

    Args:
      input: numeric, bool or string tensor.
      precision: digits after the point for floats (-1: printf default).
      scientific: use exponent notation (%e) for floats.
      shortest: use the shortest of %e/%f (%g) for floats.
      width: minimum width (-1: none).
      fill: a printf flag character used for padding: " ", "+", "-", "0" or "#".
      name: op name.

    Returns:
      A string tensor with the shape of `input`.

    Raises:
      InvalidArgumentError (at run time): an option the type does not support.
    """
    return apply_op("AsString", [input], {"precision": int(precision),
                                          "scientific": bool(scientific),
                                          "shortest": bool(shortest), "width": int(width),
                                          "fill": fill},
                    name=name or "AsString").outputs[0]


# --- StringJoin, StringLength, ReduceJoin, StringFormat -----------------------------------
def _string_join_shape(op):
    out = TensorShape([])
    for t in op.inputs:
        if t.shape.ndims == 0:
            continue
        if out.ndims == 0:
            out = t.shape
            continue
        if out.ndims is not None and t.shape.ndims is not None and out.ndims == t.shape.ndims:
            for a, b in zip(out.as_list(), t.shape.as_list()):
                if a is not None and b is not None and a != b:
                    raise ValueError("Dimension 0 in both shapes must be equal, but are %d and "
                                     "%d. Shapes are %s and %s." % (a, b, _shape_str(out),
                                                                    _shape_str(t.shape)))
        out = out.merge_with(t.shape)
    return out


register_op("StringJoin", inputs=["inputs: N * string"], outputs=["output: string"],
            attrs={"separator": ""}, shape=_string_join_shape)
not_differentiable("StringJoin")


@kernel("StringJoin")
def _string_join_kernel(ctx, *inputs):
    shape = None
    for x in inputs:
        if x.ndim:
            if shape is not None and x.shape != shape:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Input shapes do not match: [%s] vs. [%s]"
                    % (",".join(map(str, shape)), ",".join(map(str, x.shape))))
            shape = x.shape
    sep = ctx.attrs["separator"]
    sep = sep.encode() if isinstance(sep, str) else sep
    # an object scalar: NumPy would make bare bytes an |S array, which drops trailing NULs
    sep = string_scalar(sep) if sep else None
    if not inputs:  # N = 0: one empty string, as TF
        return string_scalar(b"")
    out = np.asarray(inputs[0], dtype=object)
    for x in inputs[1:]:
        out = (out + sep) + np.asarray(x, dtype=object) if sep is not None else out + x
    if not isinstance(out, np.ndarray):
        out = np.array(out, dtype=object)
    return out


@tf_export("string_join", "strings.join")
def string_join(inputs, separator: str = "", name: Optional[str] = None):
    """Joins the strings of several tensors elementwise (TF1 `tf.strings.join`).

    Args:
      inputs: a list of string tensors of one shape (scalars are broadcast).
      separator: put between the joined strings.
      name: op name.

    Returns:
      A string tensor.
    """
    return apply_op("StringJoin", [list(inputs)], {"separator": separator},
                    name=name or "StringJoin").outputs[0]


register_op("StringLength", inputs=["input: string"], outputs=["output: int32"],
            attrs={"unit": "BYTE"}, shape=lambda op: op.inputs[0].shape)
not_differentiable("StringLength")


@kernel("StringLength")
def _string_length_kernel(ctx, x):
    flat = x.reshape(-1).tolist()
    if ctx.attrs["unit"] == "UTF8_CHAR":  # count the bytes that start a character
        lengths = [len(s) - sum(1 for b in s if 0x80 <= b < 0xC0) for s in flat]
    else:
        lengths = [len(s) for s in flat]
    return np.array(lengths, dtype=np.int32).reshape(x.shape)


@tf_export("strings.length")
def string_length(input, name: Optional[str] = None, unit: str = "BYTE"):  # noqa: A002
    """The length of each string in bytes or UTF-8 characters (TF1 `tf.strings.length`).

    Returns:
      An int32 tensor with the shape of `input`.
    """
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError("unit must be 'BYTE' or 'UTF8_CHAR', got %r" % (unit,))
    return apply_op("StringLength", [input],
                    {"unit": unit}, name=name or "StringLength").outputs[0]


def _reduce_join_shape(op):
    shape = op.inputs[0].shape
    axes = tensor_util.constant_value(op.inputs[1])
    if shape.ndims is None or axes is None:
        return unknown_shape()
    nd = shape.ndims
    for a in np.reshape(axes, -1):
        if not -nd <= int(a) < max(nd, 1):
            raise ValueError("Invalid reduction dimension %d for input with %d dimensions."
                             % (int(a), nd))
    axes = {int(a) % nd for a in np.reshape(axes, -1)} if nd else set()
    keep = op._get_attr("keep_dims")
    return TensorShape([1 if (i in axes and keep) else d for i, d in
                        enumerate(shape.as_list()) if keep or i not in axes])


register_op("ReduceJoin", inputs=["inputs: string", "reduction_indices: int32"],
            outputs=["output: string"], attrs={"keep_dims": False, "separator": ""},
            shape=_reduce_join_shape)
not_differentiable("ReduceJoin")


@kernel("ReduceJoin")
def _reduce_join_kernel(ctx, x, axes):
    nd = x.ndim
    axes_l = [int(a) for a in np.reshape(axes, -1)]
    for a in axes_l:
        if not -nd <= a < max(nd, 1):
            raise errors.InvalidArgumentError(None, ctx.op, "Invalid reduction dimension %d "
                                              "for input with %d dimensions." % (a, nd))
    axes_s = [a % nd for a in axes_l] if nd else []
    for i, a in enumerate(axes_s):
        if a in axes_s[:i]:
            raise errors.InvalidArgumentError(None, ctx.op, "Duplicate reduction dimension %d"
                                              % a)
    rest = [i for i in range(nd) if i not in axes_s]
    # TF reduces the axes in the order given: the first varies fastest in the join
    moved = np.transpose(x, rest + axes_s[::-1])
    out_shape = tuple(x.shape[i] for i in rest)
    k = int(np.prod([x.shape[i] for i in axes_s])) if axes_s else 1
    sep = ctx.attrs["separator"]
    sep = sep.encode() if isinstance(sep, str) else sep
    if moved.size:
        flat = string_items(moved)  # bytes.join would read an array element's buffer
        joined = [sep.join(flat[i:i + k]) for i in range(0, len(flat), k)]
    else:
        joined = [b""] * int(np.prod(out_shape))
    out = _obj_array(joined, out_shape)
    if ctx.attrs["keep_dims"]:
        out = out.reshape(tuple(1 if i in axes_s else d for i, d in enumerate(x.shape)))
    return out


@tf_export("reduce_join", "strings.reduce_join")
def reduce_join(inputs, axis=None, keep_dims=None, separator: str = "",
                name: Optional[str] = None, reduction_indices=None, keepdims=None):
    """Joins strings across dimensions (TF1 `tf.strings.reduce_join`).

    Args:
      inputs: string tensor.
      axis: dimensions to join along (None: all).
      keep_dims, keepdims: keep joined dimensions with size 1.
      separator: put between joined strings.
      reduction_indices: deprecated alias of `axis`.

    Returns:
      A string tensor.
    """
    if axis is None:
        axis = reduction_indices
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "ReduceJoin", [inputs]):
        inputs = convert_op_input(inputs, _dt.string, "ReduceJoin", "inputs")
        if axis is None:  # all of them, last first (TF's): the join is in row-major order
            rank = inputs.shape.ndims
            if rank is None:
                from tensorweave.ops.array import array_ops
                from tensorweave.ops.math import math_ops
                axis = math_ops.range(array_ops.rank(inputs) - 1, -1, -1)
            else:
                axis = list(range(rank - 1, -1, -1))
        return apply_op("ReduceJoin", [inputs, axis],
                        {"keep_dims": keep, "separator": separator},
                        name="ReduceJoin").outputs[0]


@tf_export("strings.format")
def string_format(template: str, inputs, placeholder: str = "{}", summarize: int = 3,
                  name: Optional[str] = None):
    """Formats tensors into a scalar string template (TF1 `tf.strings.format`).

    Args:
      template: text with one `placeholder` per input.
      inputs: a tensor or a list of tensors (or Python values).
      placeholder: the marker replaced by each formatted tensor.
      summarize: elements shown at the start and end of each dimension.

    Returns:
      A scalar string tensor.

    Raises:
      ValueError: the number of placeholders differs from the number of inputs.
    """
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    tensors = [convert_to_tensor(x) for x in inputs]
    if template.count(placeholder) != len(tensors):
        raise ValueError("%s placeholder(s) in template does not match %s tensor(s) provided "
                         "as input" % (template.count(placeholder), len(tensors)))
    return apply_op("StringFormat", [tensors], {"template": template,
                                                "placeholder": placeholder,
                                                "summarize": int(summarize)},
                    name=name or "StringFormat").outputs[0]


# --- files --------------------------------------------------------------------------------
def _scalar_shape(*inputs_idx):
    def fn(op):
        for i in inputs_idx:
            op.inputs[i].shape.with_rank(0)
        return TensorShape([]) if op.outputs else []
    return fn


def _os_error(ctx, e: OSError, path: str) -> errors.OpError:
    from tensorweave.platform.gfile import os_error_to_tf
    return os_error_to_tf(e, path, ctx.op)


def _check_scalar(ctx, value: np.ndarray, what: str) -> None:
    """TF's run-time check that a file kernel's input is a scalar."""
    if np.ndim(value) != 0:
        raise errors.InvalidArgumentError(
            None, ctx.op, "%s tensor must be scalar, but had shape: [%s]"
            % (what, ",".join(map(str, np.shape(value)))))


def _scalar_path(ctx, value: np.ndarray) -> str:
    """A kernel's scalar filename input as a path."""
    _check_scalar(ctx, value, "Input filename")
    return _path(value)


def _path(value) -> str:
    v = value.reshape(()).item() if isinstance(value, np.ndarray) else value
    return os.fsdecode(v)


register_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"],
            shape=_scalar_shape(0))
not_differentiable("ReadFile")


@kernel("ReadFile", cheap=False)
def _read_file_kernel(ctx, filename):
    path = _scalar_path(ctx, filename)
    try:
        data = file_io.read_bytes(path)   # a local path, or a URL via fsspec
    except OSError as e:
        raise _os_error(ctx, e, path) from None
    return _obj_array([data], ())


@tf_export("read_file", "io.read_file")
def read_file(filename, name: Optional[str] = None):
    """The entire contents of a file (TF1 `tf.io.read_file`).

    Returns:
      A scalar string tensor.

    Raises:
      NotFoundError (at run time): no such file.
    """
    return apply_op("ReadFile", [convert_to_tensor(filename, dtype=_dt.string)],
                    name=name or "ReadFile").outputs[0]


register_op("WriteFile", inputs=["filename: string", "contents: string"],
            shape=_scalar_shape(0, 1), stateful=True)
not_differentiable("WriteFile")


@kernel("WriteFile", cheap=False)
def _write_file_kernel(ctx, filename, contents):
    path = _scalar_path(ctx, filename)
    _check_scalar(ctx, contents, "Contents")
    data = string_items(contents.reshape(()))[0]  # f.write reads any buffer: bytes only
    _make_parent_dirs(ctx, path)
    try:
        with file_io.open_file(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise _os_error(ctx, e, path) from None
    return None


def _make_parent_dirs(ctx, path: str) -> None:
    """Creates the missing directories above `path`, with MakeDirs' errors (a file in
    the way is named) raised as this op's."""
    from tensorweave.platform import gfile
    parent = os.path.dirname(path)
    if not parent or file_io.exists(parent):
        return
    try:
        gfile.MakeDirs(parent)
    except errors.OpError as e:
        raise type(e)(None, ctx.op, e.message) from None


@tf_export("write_file", "io.write_file")
def write_file(filename, contents, name: Optional[str] = None):
    """An op writing `contents` to `filename`, creating directories (TF1
    `tf.io.write_file`).

    Returns:
      The WriteFile Operation.
    """
    return apply_op("WriteFile", [convert_to_tensor(filename, dtype=_dt.string),
                                  convert_to_tensor(contents, dtype=_dt.string)],
                    name=name or "WriteFile")


def _matching_files_shape(op):
    op.inputs[0].shape.with_rank_at_most(1)
    return TensorShape([None])


register_op("MatchingFiles", inputs=["pattern: string"], outputs=["filenames: string"],
            shape=_matching_files_shape)
not_differentiable("MatchingFiles")


@kernel("MatchingFiles", cheap=False)
def _matching_files_kernel(ctx, pattern):
    if pattern.ndim > 1:
        raise errors.InvalidArgumentError(None, ctx.op, "Input patterns tensor must be scalar "
                                          "or vector, but had shape: [%s]"
                                          % ",".join(map(str, pattern.shape)))
    found = []
    for p in pattern.reshape(-1).tolist():
        found.extend(file_io.glob(os.fsdecode(p)))
    return _obj_array(sorted(os.fsencode(f) for f in found), (len(found),))


@tf_export("matching_files", "io.matching_files")
def matching_files(pattern, name: Optional[str] = None):
    """The sorted file names matching a glob pattern or a vector of them (TF1
    `tf.io.matching_files`).

    Returns:
      A 1-D string tensor (empty when nothing matches).
    """
    return apply_op("MatchingFiles", [convert_to_tensor(pattern, dtype=_dt.string)],
                    name=name or "MatchingFiles").outputs[0]
