"""A batch of serialized tf.train.Examples read straight from the protobuf wire format,
with NumPy operations over the whole batch instead of Python steps per feature.

ParseExample's exact path (parsing_ops._parse_batch) builds a protobuf message per
example and reads every feature through the message API: about 2.5 us per feature and
example, most of it creating wrapper objects, and each float or int becoming a Python
object before it becomes an array element. Here the whole batch is one byte buffer; one
pass per map entry position walks every example at once (tags, varint lengths, keys
compared as byte arrays), and each feature's values are gathered by index: packed floats
are viewed as float32, packed varints decoded with bitwise reductions.

Only the layout every protobuf serializer writes is accepted: Example = features (field
1); Features = map entries (field 1), each key (field 1) then value (field 2); Feature =
one list, packed for floats and ints. Anything else (an empty example, unknown fields,
entries of another field order, unpacked or split lists, duplicate keys, a feature of
the wrong kind or size, a missing required feature, malformed bytes) makes `gather`
return None, and the caller parses the batch on the exact path, which accepts every
valid encoding and raises TF's errors.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

_MAX_VARINT = 10
# Feature's fields: bytes_list = 1, float_list = 2, int64_list = 3 (tags 0x0a, 0x12, 0x1a)
_TAG_OF_KIND = {"bytes_list": 0x0A, "float_list": 0x12, "int64_list": 0x1A}


class _Unusual(Exception):
    """The batch leaves the layout this reader handles: use the exact path."""


def _varints(buf: np.ndarray, pos: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(value, position after it) of the varint at each of `pos` (int64 values; at most
    10 bytes, else _Unusual)."""
    first = buf[pos]
    if (first < 0x80).all():  # the common case: every one a single byte
        return first.astype(np.int64), pos + 1
    value = np.zeros(pos.shape, np.uint64)
    end = pos.copy()
    going = np.ones(pos.shape, bool)
    for k in range(_MAX_VARINT):
        at = end[going]
        b = buf[at]
        value[going] |= (b & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        end[going] = at + 1
        more = b >= 0x80
        if not more.any():
            return value.view(np.int64), end
        going[np.flatnonzero(going)[~more]] = False
    raise _Unusual()


def _expect(ok) -> None:
    if not (ok.all() if isinstance(ok, np.ndarray) else ok):
        raise _Unusual()


def _field(buf: np.ndarray, pos: np.ndarray, tag: int,
           limit: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(start, end) of the length-delimited field with `tag` at each of `pos`, which
    must lie within its container (ending at `limit`)."""
    _expect((buf[pos] == tag) & (pos < limit))
    length, start = _varints(buf, pos + 1)
    end = start + length
    _expect((end <= limit) & (end >= start))  # (a negative length ends before its start)
    return start, end


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The buffer indices of the spans [start, start + length), one after the other."""
    if lengths.size and (lengths == lengths[0]).all():  # (a dense feature's) one length
        return (starts[:, None] + np.arange(lengths[0], dtype=np.int64)).reshape(-1)
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - offsets, lengths)


class _Entries:
    """The map entries of a batch: per entry its example, key span and Feature span."""

    def __init__(self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray):
        feats_start, feats_end = _field(buf, starts, 0x0A, ends)  # Example.features
        _expect(feats_end == ends)
        none = np.zeros(0, np.int64)  # (so that a batch without entries concatenates)
        example, key_start, key_end, value_start, value_end = ([none] for _ in range(5))
        rows = np.flatnonzero(feats_start < feats_end)  # the examples with entries
        pos, feats_end = feats_start[rows], feats_end[rows]
        while rows.size:
            entry_start, entry_end = _field(buf, pos, 0x0A, feats_end)  # Features.feature
            k0, k1 = _field(buf, entry_start, 0x0A, entry_end)  # the entry's key
            v0, v1 = _field(buf, k1, 0x12, entry_end)  # the entry's value, a Feature
            _expect(v1 == entry_end)
            example.append(rows)
            key_start.append(k0)
            key_end.append(k1)
            value_start.append(v0)
            value_end.append(v1)
            going = entry_end < feats_end
            rows, pos, feats_end = rows[going], entry_end[going], feats_end[going]
        self.example = np.concatenate(example)
        self.key_start = np.concatenate(key_start)
        self.key_len = np.concatenate(key_end) - self.key_start
        self.value_start = np.concatenate(value_start)
        self.value_end = np.concatenate(value_end)
        self._check_keys_are_utf8(buf)

    def _check_keys_are_utf8(self, buf: np.ndarray) -> None:
        """Keys are proto3 strings: a parser rejects one that is not UTF-8 (ASCII keys,
        the common case, are checked at once)."""
        if self.example.size and (buf[_spans(self.key_start, self.key_len)] >= 0x80).any():
            for start, n in zip(self.key_start.tolist(), self.key_len.tolist()):
                try:
                    buf[start:start + n].tobytes().decode("utf-8")
                except UnicodeDecodeError:
                    raise _Unusual() from None

    def of_key(self, buf: np.ndarray, key: bytes, batch: int) -> np.ndarray:
        """The indices of the entries whose key is `key`, in example order (at most one
        per example)."""
        cand = np.flatnonzero(self.key_len == len(key))
        if cand.size and key:
            wanted = np.frombuffer(key, np.uint8)
            chars = buf[self.key_start[cand, None] + np.arange(len(key))]
            cand = cand[(chars == wanted).all(axis=1)]
        cand = cand[np.argsort(self.example[cand], kind="stable")]
        _expect(np.bincount(self.example[cand], minlength=batch) <= 1)
        return cand


def _list_payload(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, kind: str):
    """(start, end) of each Feature's packed list (empty where the list is), checking that
    the Feature holds a list of `kind` and nothing else."""
    l0, l1 = _field(buf, starts, _TAG_OF_KIND[kind], ends)
    _expect(l1 == ends)
    empty = l0 == l1
    p0, p1 = l0.copy(), l1.copy()
    if (~empty).any():
        q0, q1 = _field(buf, l0[~empty], 0x0A, l1[~empty])  # the packed `value` field
        _expect(q1 == l1[~empty])
        p0[~empty], p1[~empty] = q0, q1
    return p0, p1


def _floats(buf: np.ndarray, p0: np.ndarray, p1: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    lengths = p1 - p0
    _expect(lengths % 4 == 0)
    return buf[_spans(p0, lengths)].view("<f4").astype(np.float32), lengths // 4


def _int64s(buf: np.ndarray, p0: np.ndarray, p1: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    lengths = p1 - p0
    raw = buf[_spans(p0, lengths)]
    last = raw < 0x80  # the last byte of each varint
    ends = np.cumsum(lengths)
    if raw.size:
        _expect(last[ends[lengths > 0] - 1])  # no varint runs past its list
    ends_at = np.flatnonzero(last)
    firsts = np.concatenate([[0], ends_at[:-1] + 1]) if ends_at.size else ends_at
    nbytes = ends_at - firsts + 1
    _expect(nbytes <= _MAX_VARINT)
    shift = (np.arange(raw.size, dtype=np.int64) - np.repeat(firsts, nbytes)) * 7
    parts = (raw & 0x7F).astype(np.uint64) << shift.astype(np.uint64)
    values = (np.bitwise_or.reduceat(parts, firsts) if ends_at.size
              else np.zeros(0, np.uint64))
    # values per list: the varints ending in it
    ended = np.concatenate([[0], np.cumsum(last, dtype=np.int64)])
    return values.view(np.int64), ended[ends] - ended[ends - lengths]


def _bytes(buf: np.ndarray, data: bytes, p0: np.ndarray, l1: np.ndarray,
           values: bool = True):
    """The values of BytesLists whose contents span [p0, l1): a list of bytes objects
    (each list's `value` fields, one after the other; none without `values`) and the
    count per list."""
    counts = np.zeros(p0.size, np.int64)
    value_start, value_end, owner = [], [], []
    rows = np.flatnonzero(p0 < l1)
    pos = p0[rows]
    while rows.size:
        v0, v1 = _field(buf, pos, 0x0A, l1[rows])
        value_start.append(v0)
        value_end.append(v1)
        owner.append(rows)
        counts[rows] += 1
        going = v1 < l1[rows]
        _expect(v1[~going] == l1[rows][~going])
        rows, pos = rows[going], v1[going]
    if not owner or not values:
        return [], counts
    order = np.argsort(np.concatenate(owner), kind="stable")
    v0 = np.concatenate(value_start)[order].tolist()
    v1 = np.concatenate(value_end)[order].tolist()
    return [data[a:b] for a, b in zip(v0, v1)], counts


def _values(buf, data, entries: _Entries, rows: np.ndarray, kind: str,
            strings: bool = True):
    """(flat values, count per entry) of the lists of `kind` held by entries `rows`
    (without `strings`, no values of a bytes_list: only its layout is checked)."""
    starts, ends = entries.value_start[rows], entries.value_end[rows]
    if kind == "bytes_list":
        l0, l1 = _field(buf, starts, _TAG_OF_KIND[kind], ends)
        _expect(l1 == ends)
        return _bytes(buf, data, l0, l1, strings)
    p0, p1 = _list_payload(buf, starts, ends, kind)
    return (_floats if kind == "float_list" else _int64s)(buf, p0, p1)


def _check_other_features(buf, data, entries: _Entries, rows: np.ndarray) -> None:
    """The features no one asked for must be well formed too: a parser rejects the whole
    example otherwise (checked in the common layout, else _Unusual)."""
    if not rows.size:
        return
    _expect(entries.value_start[rows] < entries.value_end[rows])  # (a Feature of no kind)
    tags = buf[entries.value_start[rows]]
    checked = 0
    for kind, tag in _TAG_OF_KIND.items():
        of_kind = rows[tags == tag]
        if of_kind.size:
            _values(buf, data, entries, of_kind, kind, strings=False)
            checked += of_kind.size
    _expect(checked == rows.size)


def gather(serialized: Sequence[bytes], sparse: List[tuple], dense: List[tuple],
           dense_sizes: List[int], dense_defaults: List[np.ndarray]):
    """The features of a batch of serialized Examples, or None where the exact path
    must parse it (see the module's docstring).

    Args:
      serialized: the examples.
      sparse: (key, kind) per VarLenFeature; kind is 'float_list', 'int64_list' or
        'bytes_list'.
      dense: (key, kind) per FixedLenFeature.
      dense_sizes: the number of values of each dense feature.
      dense_defaults: each dense feature's default values (empty: required).

    Returns:
      (sparse values, sparse counts per example, dense values (batch * size each)),
      lists per feature of arrays (lists of bytes for strings), or None.
    """
    batch = len(serialized)
    lengths = np.fromiter(map(len, serialized), np.int64, batch)
    if batch == 0 or not lengths.all():
        return None
    data = b"".join(serialized)
    buf = np.frombuffer(data + bytes(2 * _MAX_VARINT), np.uint8)  # reads never overrun
    ends = np.cumsum(lengths)
    try:
        entries = _Entries(buf, ends - lengths, ends)
        unread = np.ones(entries.example.size, bool)
        sparse_values, sparse_counts = [], []
        for key, kind in sparse:
            rows = entries.of_key(buf, key.encode(), batch)
            unread[rows] = False
            values, counts = _values(buf, data, entries, rows, kind)
            per_example = np.zeros(batch, np.int64)
            per_example[entries.example[rows]] = counts
            sparse_values.append(values)
            sparse_counts.append(per_example)
        dense_values = []
        for (key, kind), size, default in zip(dense, dense_sizes, dense_defaults):
            rows = entries.of_key(buf, key.encode(), batch)
            unread[rows] = False
            values, counts = _values(buf, data, entries, rows, kind)
            _expect(counts == size)
            _expect(size > 0 and (rows.size == batch or default.size == size))
            dense_values.append(_dense(values, entries.example[rows], batch, size, default,
                                       kind))
        _check_other_features(buf, data, entries, np.flatnonzero(unread))
    except _Unusual:
        return None
    return sparse_values, sparse_counts, dense_values


def _dense(values, rows: np.ndarray, batch: int, size: int, default: np.ndarray, kind: str):
    """[batch * size] values: each example's own, or `default` where it has none."""
    if rows.size == batch:
        return values
    if kind == "bytes_list":
        out = np.empty((batch, size), dtype=object)
        out[:] = default.reshape(1, size)
        out[rows] = np.array(values, dtype=object).reshape(-1, size) if values else out[rows]
        return out.reshape(-1).tolist()
    out = np.empty((batch, size), dtype=values.dtype)
    out[:] = default.reshape(1, size).astype(values.dtype)
    out[rows] = values.reshape(-1, size)
    return out.reshape(-1)
