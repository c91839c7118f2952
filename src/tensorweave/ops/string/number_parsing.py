"""Number parsing shared by StringToNumber (tf.strings.to_number) and DecodeCSV.

Two paths, both as C's strtol/strtod (and so TensorFlow) read numbers:
  parse_plain_numbers  NumPy word arithmetic over the bytes of many fields at once, for
                       plain decimals only (`[+-]digits[.digits]`, few digits): exact by
                       construction (one correctly rounded division).
  parse_numbers        a whole list of strings: the word parser when every string is
                       plain, else NumPy's string parse, else a strict per-element parser
                       that also finds the first bad entry.
Floats are parsed to float64 first; float32 results are then rounded as if from the
decimal itself (`to_float`), as TensorFlow's strtof does.
"""
from __future__ import annotations

import re
from typing import Callable, List, Optional, Tuple

import numpy as np

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


def to_float(values: np.ndarray, np_dtype: np.dtype, text_at: Callable[[int], bytes],
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


_SLACK = 24   # bytes after the last string: the 3 words parse_plain_numbers reads at most


def parse_numbers(items: List[bytes], np_dtype) -> Tuple[np.ndarray, Optional[int]]:
    """Parses `items` as numbers of `np_dtype`, as strtod/strtol would: the whole string,
    surrounding whitespace allowed.

    Args:
      items: the strings, as bytes.
      np_dtype: float32, float64 or an integer NumPy dtype.

    Returns:
      (values, first_bad): first_bad is the index of the first unparsable entry, or None.
    """
    np_dtype = np.dtype(np_dtype)
    if not items:
        return np.zeros(0, np_dtype), None
    # the strings laid end to end, NUL between them: the NULs locate every string (one
    # vectorised search) unless a string holds a NUL itself, which TF never parses
    text = b"\0".join(items)
    # the slack lets the word parser read its last words in place, without a copy
    buf = np.frombuffer(text + bytes(_SLACK), np.uint8)
    cuts = np.flatnonzero(buf[:len(text)] == 0)
    has_nul = len(cuts) != len(items) - 1
    values = None if has_nul else _parse_plain_fields(buf, cuts, np_dtype)
    # NumPy would accept "1_0", and an |S array drops trailing NULs ("1\0" -> "1"); TF
    # accepts neither
    if values is None and not has_nul and b"_" not in text:
        values = _parse_with_numpy(items, np_dtype)
    if values is not None:
        return values, None
    return _parse_strictly(items, np_dtype)


def _parse_plain_fields(buf: np.ndarray, cuts: np.ndarray,
                        np_dtype: np.dtype) -> Optional[np.ndarray]:
    """`parse_plain_numbers` over the fields of `buf` between the separators at `cuts`,
    or None when some field is empty or not a plain decimal."""
    ends = np.append(cuts, len(buf) - _SLACK)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = cuts + 1
    lengths = ends - starts
    if lengths.min() == 0:
        return None
    return parse_plain_numbers(buf, starts, lengths, np_dtype)


def _parse_with_numpy(items: List[bytes], np_dtype: np.dtype) -> Optional[np.ndarray]:
    """NumPy's string parse (whitespace, exponents, inf/nan, long decimals), or None
    when it refuses an entry or an integer is out of range."""
    try:
        raw = np.array(items, dtype="S")
        if np_dtype.kind == "f":
            return to_float(raw.astype(np.float64), np_dtype, items.__getitem__)
        wide = raw.astype(np.int64)
    except (ValueError, OverflowError):
        return None
    if np_dtype == np.int64:
        return wide
    info = np.iinfo(np_dtype)
    if wide.min() >= max(info.min, -2 ** 63) and wide.max() <= min(info.max, 2 ** 63 - 1):
        return wide.astype(np_dtype)
    return None


def _parse_strictly(items: List[bytes], np_dtype: np.dtype) -> Tuple[np.ndarray,
                                                                      Optional[int]]:
    """One string at a time: the values and the index of the first bad string."""
    is_float = np_dtype.kind == "f"
    out = np.zeros(len(items), np.float64 if is_float else np_dtype)
    for i, s in enumerate(items):
        v = _parse_one(s, np_dtype)
        if v is None:
            with np.errstate(over="ignore"):
                return out.astype(np_dtype), i
        out[i] = v
    return (to_float(out, np_dtype, items.__getitem__) if is_float else out), None


_POW10_FLOAT = np.array([10.0 ** k for k in range(16)])  # exact powers of ten
_POW10_INT = np.array([10 ** k for k in range(9)], np.uint64)
_U64 = np.dtype("<u8")   # byte k of a word is the k-th character (on any host)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)


def _field_words(buf: np.ndarray, starts: np.ndarray, count: int) -> List[np.ndarray]:
    """Word w (w < count) of every field: its bytes 8w..8w+7 as a little-endian uint64
    (the bytes past a field's end are whatever follows it: the caller masks them); one
    gather of unaligned words per w. `buf` is copied into a zero-padded buffer only when
    the last word of some field would run past its end."""
    padded = buf
    if int(starts.max()) + 8 * count > len(buf):
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


_ZERO_DIGITS = np.uint64(0x3030303030303030)   # "00000000"
_PAST_NINE = np.uint64(0x4646464646464646)     # added to a digit byte: below 0x80
_TOP_BITS = np.uint64(0x8080808080808080)


def _signed_values(mantissa: np.ndarray, negative: Optional[np.ndarray], divisor,
                   np_dtype: np.dtype, text_at: Callable[[int], bytes]
                   ) -> Optional[np.ndarray]:
    """The fields' values of `np_dtype` from the integers their digits spell
    (`mantissa`), their signs (`negative`: True where "-"; None: no sign) and, for
    floats, the powers of ten to divide by (`divisor`; None: 1); None for an integer
    out of the dtype's range. `text_at(i)`: field i's text (`to_float`)."""
    if np_dtype.kind != "f":
        values = mantissa.astype(np.int64)
        if negative is not None:
            np.negative(values, out=values, where=negative)
        info = np.iinfo(np_dtype)
        if values.min() < info.min or values.max() > info.max:
            return None
        return values.astype(np_dtype)
    # exact integers below 2**53 over an exact power of ten: one correct rounding
    values = mantissa.astype(np.float64) if divisor is None else mantissa / divisor
    if negative is not None:
        values.view(_U64)[...] |= negative.astype(_U64) << np.uint64(63)   # the sign bit
    # at most 15 digits: a value that is not 0 is at least 1e-15, far from subnormal
    return to_float(values, np_dtype, text_at, tiny=False)


def _bytes_word(byte: int, positions) -> int:
    """A word holding `byte` at each of `positions` (byte k: bits 8k..8k+7)."""
    return sum(byte << (8 * k) for k in positions)


def _parse_one_layout(buf: np.ndarray, starts: np.ndarray, width: int,
                      np_dtype: np.dtype) -> Optional[np.ndarray]:
    """`parse_plain_numbers` for fields that share one layout: all `width` (<= 8) bytes
    long, with a sign in the first byte of every field or of none, and (floats) the dot
    in the same byte of every field or of none, as a program's fixed-precision output
    ("%.5f" of values of one magnitude) has. Each field is one word: the layout is
    checked for all fields by a few whole-word operations (the digits' bytes all in
    '0'-'9' at once), the dot squeezed out by one fixed shift and the digits read by
    lane arithmetic, so the cost per field is about half the general path's.
    None when some field does not follow the first one's layout."""
    first = bytes(buf[int(starts[0]):int(starts[0]) + width])
    signed = first[:1] in (b"+", b"-")
    dot = first.find(b".")
    if dot >= 0 and np_dtype.kind != "f":
        return None
    ndigits = width - signed - (dot >= 0)
    if ndigits < 1:
        return None
    word = _field_words(buf, starts, 1)[0]
    special = ([0] if signed else []) + ([dot] if dot >= 0 else [])
    # the digits' bytes, with '0' in the sign's and the dot's places and past the end
    keep = np.uint64(_bytes_word(0xFF, [k for k in range(width) if k not in special]))
    digits = (word & keep) | np.uint64(_bytes_word(0x30, list(special) + list(range(width, 8))))
    # every byte in '0'-'9': adding 0x46 sets no byte's top bit, nor does taking 0x30
    # away (a byte outside the range sets its own top bit; see `parse_plain_numbers`)
    bad = (digits + _PAST_NINE) | (digits - _ZERO_DIGITS)
    bad &= _TOP_BITS
    if bad.any():
        return None
    if dot >= 0 and ((word >> np.uint64(8 * dot)) & np.uint64(0xFF) != 46).any():
        return None
    negative = None
    if signed:
        sign = (word & np.uint64(0xFF)).astype(np.uint8)
        negative = sign == 45
        if not (negative | (sign == 43)).all():
            return None
    value = digits - _ZERO_DIGITS   # the digit values, 0 elsewhere
    if dot >= 0:  # the bytes after the dot move down by one
        below = np.uint64((1 << (8 * dot)) - 1)
        value = (value & below) | ((value >> np.uint64(8)) & ~below)
    if signed:
        value >>= np.uint64(8)
    mantissa = _eight_digits(value << np.uint64(8 * (8 - ndigits)))
    fraction = width - dot - 1 if dot >= 0 else 0
    return _signed_values(mantissa, negative, _POW10_FLOAT[fraction] if fraction else None,
                          np_dtype, lambda i: buf[starts[i]:starts[i] + width].tobytes())


def parse_plain_numbers(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
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
    if width <= 8 and int(lengths.min()) == width:
        values = _parse_one_layout(buf, starts, width, np_dtype)
        if values is not None:
            return values
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
    return _signed_values(mantissa, negative, _POW10_FLOAT[fraction] if is_float else None,
                          np_dtype, lambda i: buf[starts[i]:starts[i] + lengths[i]].tobytes())
