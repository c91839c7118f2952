"""String decoding ops: DecodeCSV (tf.io.decode_csv) and DecodeRaw (tf.io.decode_raw).

Strings are NumPy object arrays of bytes. Kernels parse whole columns with NumPy where
the input allows it (no quotes, no underscores, plain decimal numbers) and fall back to
a strict per-element parser only to handle the rest and to name the first bad entry.
The number parsers (shared with StringToNumber) live in number_parsing.py.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, TypeListAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.string.number_parsing import parse_numbers, parse_plain_numbers, \
    to_float
from tensorweave.runtime.values import string_items

# --- DecodeCSV ----------------------------------------------------------------------------
_CSV_TYPES = (_dt.float32, _dt.float64, _dt.int32, _dt.int64, _dt.string)


def _decode_csv_shape(op):
    records = op.inputs[0]
    for t in op.inputs[1:]:
        s = t.shape.with_rank_at_most(1)
        if s.ndims == 1 and s[0].value is not None and s[0].value > 1:
            raise ValueError("Shape of a default must be a length-0 or length-1 vector, or a "
                             "scalar.")
    return [records.shape] * (len(op.inputs) - 1)


register_op("DecodeCSV", inputs=["records: string", "record_defaults: OUT_TYPE"],
            outputs=["output: OUT_TYPE"],
            attrs={"OUT_TYPE": TypeListAttr(), "field_delim": ",", "use_quote_delim": True,
                   "na_value": "", "select_cols": []},
            shape=_decode_csv_shape)
not_differentiable("DecodeCSV")

_QUOTE = ord('"')


def _split_quoted(ctx, rec: bytes, delim: bytes, last: Optional[int] = None) -> List[bytes]:
    """Splits one record with RFC 4180 quoting, raising TF's errors for bad quotes; with
    `last` (the last selected column) it stops after that field, as TF does, so the
    fields after it are not checked."""
    fields: List[bytes] = []
    i, n = 0, len(rec)
    while last is None or len(fields) <= last:
        if i < n and rec[i] == _QUOTE:
            parts, j = [], i + 1
            while True:
                k = rec.find(b'"', j)
                if k < 0:
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "Quoted field has to end with quote followed by delim "
                        "or end")
                parts.append(rec[j:k])
                if k + 1 < n and rec[k + 1] == _QUOTE:  # "" is an escaped quote
                    parts.append(b'"')
                    j = k + 2
                    continue
                if k + 1 < n and rec[k + 1:k + 2] != delim:
                    raise errors.InvalidArgumentError(
                        None, ctx.op, "Quote inside a string has to be escaped by another "
                        "quote")
                fields.append(b"".join(parts))
                i = k + 1
                break
        else:
            k = rec.find(delim, i)
            field = rec[i:] if k < 0 else rec[i:k]
            if b'"' in field or b"\n" in field or b"\r" in field:
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Unquoted fields cannot have quotes/CRLFs inside")
            fields.append(field)
            i = n if k < 0 else k
        if i >= n:
            return fields
        i += 1  # skip the delimiter
        if i == n:
            fields.append(b"")  # a trailing delimiter ends with an empty field
            return fields
    return fields


def _columns_by_dtype(defaults) -> dict:
    """Column indices grouped by their default's dtype (each group parsed at once)."""
    groups: dict = {}
    for c, d in enumerate(defaults):
        groups.setdefault(d.dtype, []).append(c)
    return groups


def _object_column(items: list, shape) -> np.ndarray:
    """A string column of the output: an object array of `items`, shaped like records."""
    values = np.empty(len(items), dtype=object)
    values[:] = items
    return values.reshape(shape)


def _decode_complete_rows(rows, defaults, na: bytes, shape):
    """The common case in one NumPy parse per dtype instead of one per column: every
    field present, every number plain (the caller has ruled out quotes and "_"). None
    when anything needs the exact per-column path below (missing fields, defaults,
    malformed numbers and their messages)."""
    if not rows:
        return None
    raw = np.array(rows, dtype="S")  # [records, fields]; the caller ruled out NULs
    if raw.ndim != 2 or (raw == b"").any() or (na and (raw == na).any()):
        return None
    outs = [None] * len(defaults)
    for np_dtype, cols in _columns_by_dtype(defaults).items():
        if np_dtype == object:
            for c in cols:
                outs[c] = _object_column([r[c] for r in rows], shape)
            continue
        block = raw[:, cols]
        try:
            if np_dtype.kind in "iu":
                wide = block.astype(np.int64)
                info = np.iinfo(np_dtype)
                if wide.size and (wide.min() < info.min or wide.max() > info.max):
                    return None
                parsed = wide.astype(np_dtype)
            else:
                parsed = to_float(block.astype(np.float64), np_dtype, block.flat.__getitem__)
        except (ValueError, OverflowError):
            return None
        for j, c in enumerate(cols):
            outs[c] = np.ascontiguousarray(parsed[:, j]).reshape(shape)
    return outs


def _decode_plain_records(flat: List[bytes], defaults, delim: bytes, na: bytes, shape):
    """DecodeCSV without splitting records in Python: the fields are located in the
    joined records with NumPy and numeric columns parsed by `parse_plain_numbers`.
    None when anything needs the general path (wrong field counts, missing or NA
    fields, numbers in other notations, bad values and their messages)."""
    ncols, nrec = len(defaults), len(flat)
    text = delim.join(flat)
    buf = np.frombuffer(text, dtype=np.uint8)
    cuts = np.flatnonzero(buf == delim[0])
    if len(cuts) != nrec * ncols - 1:
        return None
    joins = np.cumsum(np.fromiter(map(len, flat), np.intp, nrec) + 1)[:-1] - 1
    if not np.array_equal(cuts[ncols - 1::ncols], joins):
        return None  # some record has another number of fields
    starts = np.concatenate(([0], cuts + 1)).reshape(nrec, ncols)
    lengths = np.concatenate((cuts, [len(buf)])).reshape(nrec, ncols) - starts
    if lengths.min() == 0:
        return None
    if na:
        maybe = np.flatnonzero(lengths.ravel() == len(na))
        if any(text[s:s + len(na)] == na for s in starts.ravel()[maybe].tolist()):
            return None
    outs = [None] * ncols
    for np_dtype, cols in _columns_by_dtype(defaults).items():
        if np_dtype == object:
            for c in cols:
                outs[c] = _object_column([text[s:s + n] for s, n in zip(
                    starts[:, c].tolist(), lengths[:, c].tolist())], shape)
            continue
        # a run of adjacent columns is a slice (no gather)
        pick = slice(cols[0], cols[-1] + 1) if cols[-1] - cols[0] + 1 == len(cols) else cols
        parsed = parse_plain_numbers(buf, starts[:, pick].ravel(), lengths[:, pick].ravel(),
                                      np_dtype)
        if parsed is None:
            return None
        # one transposing copy: each column is then a contiguous row of `by_column`,
        # and the rows, shaped like the records, are cut in one call (list of an array)
        by_column = np.ascontiguousarray(parsed.reshape(nrec, len(cols)).T)
        columns = list(by_column.reshape((len(cols),) + shape)) if shape else \
            [row.reshape(shape) for row in by_column]   # 0-d arrays, not NumPy scalars
        for c, column in zip(cols, columns):
            outs[c] = column
    return outs


@kernel("DecodeCSV")
def _decode_csv_kernel(ctx, records, *defaults):
    attrs = ctx.attrs
    delim = attrs["field_delim"].encode() if isinstance(attrs["field_delim"], str) \
        else attrs["field_delim"]
    if len(delim) != 1:
        raise errors.InvalidArgumentError(None, ctx.op, "field_delim should be only 1 char")
    na = attrs["na_value"].encode() if isinstance(attrs["na_value"], str) \
        else attrs["na_value"]
    select = list(attrs["select_cols"])
    for c, d in enumerate(defaults):
        if d.size > 1:
            raise errors.InvalidArgumentError(
                None, ctx.op, "There should only be 1 default per field but field %d has %d"
                % (c, d.size))
    flat = string_items(records)
    text = b"".join(flat)
    quoted = attrs["use_quote_delim"] and any(ch in text for ch in (b'"', b"\n", b"\r"))
    if flat and not quoted and not select:
        fast = _decode_plain_records(flat, defaults, delim, na, records.shape)
        if fast is not None:
            return fast[0] if len(fast) == 1 else fast
    last = select[-1] if select else None
    rows = [(_split_quoted(ctx, r, delim, last) if quoted else r.split(delim)) if r else []
            for r in flat]
    if select:
        last = select[-1]
        rows = [[r[c] for c in select if c < len(r)] if len(r) <= last else
                [r[c] for c in select] for r in rows]
    ncols = len(defaults)
    bad_row = next((i for i, r in enumerate(rows) if len(r) != ncols), None)
    if bad_row is not None:
        raise errors.InvalidArgumentError(None, ctx.op, "Expect %d fields but have %d in "
                                          "record %d" % (ncols, len(rows[bad_row]), bad_row))
    if not quoted and b"_" not in text and b"\0" not in text:  # as in parse_numbers
        fast = _decode_complete_rows(rows, defaults, na, records.shape)
        if fast is not None:
            return fast
    columns = list(zip(*rows)) if rows else [()] * ncols
    outs, first_error = [], None  # (record, field, message) of the earliest failure
    for c, (col, d) in enumerate(zip(columns, defaults)):
        col = list(col)
        out_np = d.dtype
        missing = [i for i, v in enumerate(col) if v == b"" or v == na]
        if missing:
            if d.size == 0:
                err = (missing[0], c, "Field %d is required but missing in record %d!"
                       % (c, missing[0]))
                first_error = min(first_error or err, err)
                outs.append(None)
                continue
            fill = d.reshape(-1)[0]
            if out_np != object:
                fill_text = b"0"
                for i in missing:
                    col[i] = fill_text
        if out_np == object:
            values = np.empty(len(col), dtype=object)
            values[:] = col
            if missing:
                values[missing] = fill
        else:
            values, bad = parse_numbers(col, out_np)
            if bad is not None:
                name = _dt.type_string(_dt.as_dtype(out_np))
                err = (bad, c, "Field %d in record %d is not a valid %s: %s"
                       % (c, bad, name, col[bad].decode("utf-8", "replace")))
                first_error = min(first_error or err, err)
            if missing:
                values[missing] = fill
        outs.append(values.reshape(records.shape))
    if first_error is not None:
        raise errors.InvalidArgumentError(None, ctx.op, first_error[2])
    return outs[0] if len(outs) == 1 else outs  # the executor takes one output bare


@tf_export("decode_csv", "io.decode_csv")
def decode_csv(records, record_defaults, field_delim: str = ",", use_quote_delim: bool = True,
               name: Optional[str] = None, na_value: str = "", select_cols=None):
    """Converts CSV records to tensors, one per column (TF1 `tf.io.decode_csv`).

    Args:
      records: string tensor; each element is one CSV record.
      record_defaults: one default per column (a tensor or Python value of rank 0, or a
        length-0/1 vector) of type float32, float64, int32, int64 or string; it sets the
        column's type, and an empty default makes the column required.
      field_delim: one-character field delimiter.
      use_quote_delim: treat double quotes as RFC 4180 quoting.
      na_value: a field equal to this string is missing (takes the default).
      select_cols: increasing column indices to keep (one default per selected column).
      name: op name.

    Returns:
      A list of tensors, one per column, each with the shape of `records`.

    Raises:
      ValueError: bad `select_cols`.
      InvalidArgumentError (at run time): wrong field counts, unparsable or missing
        required fields, bad quoting.
    """
    if select_cols is not None and any(select_cols[i] >= select_cols[i + 1]
                                       for i in range(len(select_cols) - 1)):
        raise ValueError("select_cols is not strictly increasing.")
    if select_cols is not None and select_cols and select_cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    if select_cols is not None and len(select_cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    defaults = []
    for i, d in enumerate(record_defaults):
        t = convert_to_tensor(d, name="record_defaults_%d" % i)
        if t.dtype not in _CSV_TYPES:
            raise TypeError("Value passed to parameter 'record_defaults' has DataType %s not "
                            "in list of allowed values: %s"
                            % (t.dtype.name, ", ".join(x.name for x in _CSV_TYPES)))
        defaults.append(t)
    op = apply_op("DecodeCSV", [records, defaults],
                  {"field_delim": field_delim, "use_quote_delim": bool(use_quote_delim),
                   "na_value": na_value, "select_cols": list(select_cols or [])},
                  name=name or "DecodeCSV")
    return list(op.outputs)


# --- DecodeRaw ----------------------------------------------------------------------------
_RAW_TYPES = (_dt.float16, _dt.float32, _dt.float64, _dt.int32, _dt.uint16, _dt.uint8,
              _dt.int16, _dt.int8, _dt.int64, _dt.complex64, _dt.complex128, _dt.bool,
              _dt.bfloat16)


def _decode_raw_shape(op):
    s = op.inputs[0].shape
    return unknown_shape() if s.ndims is None else s.concatenate(TensorShape([None]))


register_op("DecodeRaw", inputs=["bytes: string"], outputs=["output: out_type"],
            attrs={"out_type": TypeAttr(_RAW_TYPES), "little_endian": True},
            shape=_decode_raw_shape)
not_differentiable("DecodeRaw")


@kernel("DecodeRaw")
def _decode_raw_kernel(ctx, data):
    dtype = ctx.attrs["out_type"]
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    flat = string_items(data)
    size = len(flat[0]) if flat else 0
    buf = b"".join(flat)
    if len(buf) != size * len(flat) or len(set(map(len, flat))) > 1:
        i = next(i for i, s in enumerate(flat) if len(s) != size)
        raise errors.InvalidArgumentError(
            None, ctx.op, "DecodeRaw requires input strings to all be the same size, but "
            "element %d has size %d != %d" % (i, size, len(flat[i])))
    if size % np_dtype.itemsize:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Input to DecodeRaw has length %d that is not a multiple of %d, the "
            "size of %s" % (size, np_dtype.itemsize, dtype.name))
    if dtype is _dt.bool:
        out = np.frombuffer(buf, dtype=np.uint8) != 0
    else:
        wire = np_dtype.newbyteorder("<" if ctx.attrs["little_endian"] else ">") \
            if np_dtype.itemsize > 1 and np_dtype.kind in "iufc" else np_dtype
        out = np.frombuffer(buf, dtype=wire).astype(np_dtype)  # native order, own copy
    return out.reshape(data.shape + (size // np_dtype.itemsize,))


@tf_export("decode_raw", "io.decode_raw")
def decode_raw(input_bytes=None, out_type=None, little_endian: bool = True,
               name: Optional[str] = None, bytes=None):  # noqa: A002
    """Reinterprets the bytes of each string as a vector of numbers (TF1
    `tf.io.decode_raw`).

    Args:
      input_bytes: string tensor; all elements must have the same length.
      out_type: the element type (numeric or bool).
      little_endian: byte order of the input (ignored for one-byte types).
      name: op name.
      bytes: deprecated alias of `input_bytes`.

    Returns:
      A tensor of shape `input_bytes.shape + [length / itemsize]`.

    Raises:
      InvalidArgumentError (at run time): lengths differ or are not a multiple of the
        element size.
    """
    if input_bytes is not None and bytes is not None:
        raise ValueError("Cannot specify both 'input_bytes' and 'bytes'")
    input_bytes = bytes if input_bytes is None else input_bytes
    if input_bytes is None:
        raise ValueError("decode_raw() missing required argument 'input_bytes'")
    if out_type is None:
        raise TypeError("decode_raw() missing required argument 'out_type'")
    return apply_op("DecodeRaw", [input_bytes], {"out_type": _dt.as_dtype(out_type),
                                                 "little_endian": bool(little_endian)},
                    name=name or "DecodeRaw").outputs[0]
