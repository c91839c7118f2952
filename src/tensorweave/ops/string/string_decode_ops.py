"""String decoding ops: DecodeCSV (tf.io.decode_csv), DecodeRaw (tf.io.decode_raw), and
the number parser shared with StringToNumber.

Strings are NumPy object arrays of bytes. Kernels parse whole columns with NumPy where
the input allows it (no quotes, no underscores, plain decimal numbers) and fall back to
a strict per-element parser only to handle the rest and to name the first bad entry.
Every path parses floats to float64 first; float32 results are then rounded as if from
the decimal itself (`_to_float`), as TensorFlow's strtof does.
"""
from __future__ import annotations

import re
from typing import Callable, List, Optional, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.registry import TypeAttr, TypeListAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.runtime.values import string_items

# --- number parsing (shared with StringToNumber) ------------------------------------------
_INT_RE = re.compile(rb"\s*[+-]?\d+\s*\Z")
_HEX_FLOAT_RE = re.compile(rb"\s*[+-]?0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*([pP][+-]?\d+)?\s*\Z")


def _parse_one(s: bytes, np_dtype: np.dtype):
    """One number as C's strtol/strtod would accept it (whole string, surrounding
    whitespace allowed), or None."""
    if b"_" in s:
        return None
    if np_dtype.kind in "iu":
        if not _INT_RE.match(s):
            return None
        v = int(s)
        info = np.iinfo(np_dtype)
        return v if info.min <= v <= info.max else None
    try:
        return float(s)
    except ValueError:
        if _HEX_FLOAT_RE.match(s):
            try:
                return float.fromhex(s.decode("ascii").strip())
            except ValueError:
                return None
        return None


_LOW29 = np.uint64((1 << 29) - 1)   # the float64 significand bits float32 drops
_HALF29 = np.uint64(1 << 28)        # ... when they are exactly half a float32 ulp


def _nearest_float32(text: bytes, guess: np.float32) -> np.float32:
    """The float32 nearest the decimal `text` (ties to even), `guess` being at most an
    ulp away; `guess` itself for text Fraction does not read (hex floats) and for an
    overflow (inf, as before)."""
    from fractions import Fraction  # lazy: needed only for the rare halfway values
    if not np.isfinite(guess):
        return guess
    try:
        exact = Fraction(text.decode("ascii").strip())
    except (ValueError, UnicodeDecodeError, ZeroDivisionError):
        return guess
    best = None
    for c in (np.nextafter(guess, np.float32(-np.inf)), guess,
              np.nextafter(guess, np.float32(np.inf))):
        if np.isfinite(c):
            key = (abs(Fraction(float(c)) - exact), int(np.float32(c).view(np.uint32)) & 1)
            if best is None or key < best[0]:
                best = (key, c)
    return guess if best is None else best[1]


def _to_float(values: np.ndarray, np_dtype: np.dtype, text_at: Callable[[int], bytes],
              tiny: bool = True) -> np.ndarray:
    """`values` (float64: the double nearest each decimal) as `np_dtype`. For float32
    that rounds twice, decimal -> float64 -> float32, which differs from rounding the
    decimal once (strtof, as TensorFlow does) only where the double lies exactly
    halfway between two float32 values (or in float32's subnormal range, unless `tiny`
    is False: the caller knows no value lies there): those few are rounded again from
    their exact decimal, `text_at(flat index)`."""
    with np.errstate(over="ignore"):
        out = values.astype(np_dtype, order="C")
    if np_dtype != np.float32 or not out.size:
        return out
    v = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)  # flat: C order
    halfway = (v.view(np.uint64) & _LOW29) == _HALF29
    if tiny:
        mag = np.abs(v)
        halfway |= (mag < 2.0 ** -126) & (mag > 0)
    suspect = np.flatnonzero(halfway)
    flat = out.reshape(-1)  # a view: `out` is C-contiguous
    for i in suspect.tolist():
        flat[i] = _nearest_float32(text_at(i), flat[i])
    return out


def parse_numbers(items: List[bytes], np_dtype) -> Tuple[np.ndarray, Optional[int]]:
    """Parses `items` as numbers of `np_dtype`.

    Returns:
      (values, first_bad): first_bad is the index of the first unparsable entry, or None.
    """
    np_dtype = np.dtype(np_dtype)
    n = len(items)
    if not n:
        return np.zeros(0, np_dtype), None
    joined = b"".join(items)
    # NumPy would accept "1_0", and an |S array drops trailing NULs ("1\0" -> "1"); TF
    # accepts neither
    if b"_" not in joined and b"\0" not in joined:
        try:
            raw = np.array(items, dtype="S")
            if np_dtype.kind in "iu":
                wide = raw.astype(np.int64)
                info = np.iinfo(np_dtype)
                if np_dtype.kind == "u" or np_dtype.itemsize < 8:
                    if wide.min() >= max(info.min, -2 ** 63) and wide.max() <= min(info.max,
                                                                                  2 ** 63 - 1):
                        return wide.astype(np_dtype), None
                else:
                    return wide, None
            else:
                return _to_float(raw.astype(np.float64), np_dtype, items.__getitem__), None
        except (ValueError, OverflowError):
            pass
    is_float = np_dtype.kind == "f"
    out = np.zeros(n, np.float64 if is_float else np_dtype)
    for i, s in enumerate(items):
        v = _parse_one(s, np_dtype)
        if v is None:
            with np.errstate(over="ignore"):
                return out.astype(np_dtype), i
        out[i] = v
    return (_to_float(out, np_dtype, items.__getitem__) if is_float else out), None


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
                parsed = _to_float(block.astype(np.float64), np_dtype, block.flat.__getitem__)
        except (ValueError, OverflowError):
            return None
        for j, c in enumerate(cols):
            outs[c] = np.ascontiguousarray(parsed[:, j]).reshape(shape)
    return outs


_POW10_FLOAT = np.array([10.0 ** k for k in range(16)])  # exact powers of ten
_POW10_INT = np.array([10 ** k for k in range(9)], np.uint64)
_U64 = np.dtype("<u8")   # byte k of a word is the k-th character (on any host)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)


def _field_words(buf: np.ndarray, starts: np.ndarray, count: int) -> List[np.ndarray]:
    """Word w (w < count) of every field: its bytes 8w..8w+7 as a little-endian uint64,
    zero past the end of the text; one gather of unaligned words per w."""
    padded = np.zeros(len(buf) + 8 * count, np.uint8)
    padded[:len(buf)] = buf
    words = np.ndarray((len(padded) - 7,), _U64, padded, 0, (1,))  # a word at every byte
    return [words[starts + 8 * w] for w in range(count)]


def _as_word(flags: np.ndarray) -> np.ndarray:
    """An [n, 8] bool matrix as n words with byte k 0x01 where flags[:, k]."""
    return flags.view(np.uint8).reshape(-1).view(_U64)


def _eight_digits(v: np.ndarray) -> np.ndarray:
    """The integer spelled by the digit values in the bytes of `v` (byte 0 the most
    significant), in three multiplications of pairs of lanes."""
    v = ((v & _NIBBLES) * np.uint64(10 * 256 + 1)) >> np.uint64(8)
    v = ((v & np.uint64(0x00FF00FF00FF00FF)) * np.uint64(100 * 65536 + 1)) >> np.uint64(16)
    return ((v & np.uint64(0x0000FFFF0000FFFF)) * np.uint64(10000 * 2 ** 32 + 1)) >> \
        np.uint64(32)


def _parse_plain_numbers(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                         np_dtype: np.dtype) -> Optional[np.ndarray]:
    """Parses the fields buf[starts[i]:starts[i] + lengths[i]] (lengths >= 1) with NumPy
    word arithmetic, or None unless every field is a plain decimal: `[+-]digits` for
    integers, `[+-]digits[.digits]` (either side may be empty) for floats, at most 15
    digits for floats (18 for integers). Those values are exact: the digits form an
    integer below 2**53 and 10**k is exact for k <= 22, so one IEEE division gives the
    correctly rounded double, as strtod would.

    Each field is cut into 8-byte words (at most 3). Bytes are classified as a [n, 8]
    matrix per word; then, within each word, the digit values are packed together (the
    sign and the dot squeezed out), aligned to the word's end and read as one integer
    by lane arithmetic; the words' integers are then joined."""
    width = int(lengths.max())
    if width > 24:
        return None
    n, is_float = len(starts), np_dtype.kind == "f"
    words = _field_words(buf, starts, -(-width // 8))
    sizes = lengths.astype(np.uint64)
    counts, digit_words, dot_words = [], [], []
    for w, word in enumerate(words):
        chars = word.view(np.uint8).reshape(n, 8)
        # 0xFF in the bytes of the field: a shift of 64 or more gives 0 in NumPy
        left = np.uint64(8 * (w + 1)) - np.minimum(sizes, np.uint64(8 * (w + 1)))
        valid = (_ALL >> (left * np.uint64(8))).astype(_U64).view(np.uint8).reshape(n, 8)
        valid = valid != 0
        is_digit = chars - np.uint8(48) < 10   # wraps for bytes below "0"
        is_digit &= valid
        allowed = is_digit | ~valid
        if w == 0:
            first = chars[:, 0]
            negative = first == 45
            allowed[:, 0] |= negative | (first == 43)
        if is_float:
            is_dot = chars == 46
            is_dot &= valid
            allowed |= is_dot
            dot_words.append(_as_word(is_dot))
        if not allowed.all():
            return None
        digit_words.append(_as_word(is_digit))
        counts.append(np.bitwise_count(digit_words[-1]))
    ndigits = counts[0] if len(counts) == 1 else sum(counts)
    if ndigits.min() == 0 or ndigits.max() > (15 if is_float else 18):
        return None
    if is_float and (sum(np.bitwise_count(d) for d in dot_words)).max() > 1:
        return None
    mantissa = fraction = seen = None
    sign_bits = (negative | (first == 43)).astype(np.uint64) * np.uint64(8)
    for w, word in enumerate(words):
        digits = digit_words[w]
        value = word & (digits * np.uint64(0xFF))   # the digits' bytes, others 0
        if is_float:  # squeeze out the dot: the bytes after it move down by one
            dot = dot_words[w]
            below = dot - np.uint64(1)   # bytes before the dot; all if there is none
            value = (value & below) | ((value >> np.uint64(8)) & ~below)
            after = np.bitwise_count(digits & ~below)   # this word's digits after it
            fraction = after if w == 0 else fraction + after + \
                np.where(seen, counts[w], np.uint8(0))
            seen = dot != 0 if w == 0 else seen | (dot != 0)
        if w == 0:
            value >>= sign_bits   # squeeze out the sign
        value <<= (np.uint64(8) - counts[w].astype(np.uint64)) * np.uint64(8)
        value = _eight_digits(value)
        mantissa = value if w == 0 else mantissa * _POW10_INT[counts[w]] + value
    if not is_float:
        values = mantissa.astype(np.int64)
        np.negative(values, out=values, where=negative)
        info = np.iinfo(np_dtype)
        if values.min() < info.min or values.max() > info.max:
            return None
        return values.astype(np_dtype)
    values = mantissa / _POW10_FLOAT[fraction]
    np.negative(values, out=values, where=negative)
    # at most 15 digits: a value that is not 0 is at least 1e-15, far from subnormal
    return _to_float(values, np_dtype,
                     lambda i: buf[starts[i]:starts[i] + lengths[i]].tobytes(), tiny=False)


def _decode_plain_records(flat: List[bytes], defaults, delim: bytes, na: bytes, shape):
    """DecodeCSV without splitting records in Python: the fields are located in the
    joined records with NumPy and numeric columns parsed by `_parse_plain_numbers`.
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
        parsed = _parse_plain_numbers(buf, starts[:, pick].ravel(), lengths[:, pick].ravel(),
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
