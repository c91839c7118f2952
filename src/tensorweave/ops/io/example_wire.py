"""A batch of serialized tf.train.Examples read straight from the protobuf wire format,
with NumPy operations over the whole batch instead of Python steps per feature.

ParseExample's exact path (parsing_ops._parse_batch) builds a protobuf message per
example and reads every feature through the message API: about 2.5 us per feature and
example. Here the whole batch is one byte buffer, and what costs is the number of NumPy
calls (about 1 us each), not their size. So the work is arranged to make few calls:

1. Map entries are found by one pass per entry position over every example at once,
   and that pass decodes only the entry's length (the one sequential dependency).
2. Every entry's key, Feature and list headers are then decoded in one go, and every
   key is identified at once: its bytes packed into 64-bit words, hashed, looked up
   among the requested keys' hashes (`searchsorted`) and compared word for word.
3. One stable sort orders the entries by (requested feature, example); each kind of
   list (floats, varints, bytes) is then decoded once for all features of that kind,
   unrequested ones included (a parser rejects an example with a malformed feature),
   and each feature's values are a slice of its kind's values.
What depends only on the requested features (their keys' words and hashes, their kinds)
is computed once per feature spec (`_plan`).

Only the layout every protobuf serializer writes is accepted: Example = features (field
1); Features = map entries (field 1), each key (field 1) then value (field 2); Feature =
one list, packed for floats and ints. Anything else (an empty example, unknown fields,
entries of another field order, unpacked or split lists, duplicate keys, a feature of
the wrong kind or size, a missing required feature, malformed bytes, padded varint
lengths) makes `gather` return None, and the caller parses the batch on the exact path,
which accepts every valid encoding and raises TF's errors.
"""
from __future__ import annotations

import functools
from typing import List, NamedTuple, Sequence, Tuple

import numpy as np

_MAX_VARINT = 10
_MAX_LENGTH_VARINT = 5  # a length of 5 bytes is < 2**35; a longer one is padded: unusual
_KINDS = ("bytes_list", "float_list", "int64_list")  # Feature's fields 1, 2, 3
_BYTES, _FLOATS, _INT64S = range(3)
_KIND_OF_TAG = np.full(256, -1, np.int64)  # a Feature's first byte -> its kind, or -1
_KIND_OF_TAG[[0x0A, 0x12, 0x1A]] = range(3)
# odd multipliers mixing a key's 64-bit words and length into one hash (a collision is
# caught by comparing the words themselves)
_GOLDEN = 0x9E3779B97F4A7C15
_LENGTH_MIX = np.uint64(0xFF51AFD7ED558CCD)
_KEEP_BYTES = np.array([(1 << 8 * n) - 1 for n in range(9)], np.uint64)  # the first n
_HIGH_BITS = np.uint64(0x8080808080808080)
_all = np.logical_and.reduce


class _Unusual(Exception):
    """The batch leaves the layout this reader handles: use the exact path."""


def _require(ok: np.ndarray) -> None:
    if not _all(ok, axis=None):
        raise _Unusual()


def _lengths(buf: np.ndarray, pos: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(value, position after it) of the varint length at each of `pos`: at most 5 bytes
    (else _Unusual), so never negative. Reads are clipped to the buffer, so positions
    computed from bytes not yet checked are safe (the caller checks what it decoded)."""
    byte = buf.take(pos, mode="clip")
    value = byte.astype(np.int64)
    going = byte >= 0x80
    if not going.any():  # the common case: every one a single byte
        return value, pos + 1
    value &= 0x7F
    after = pos + 1
    for k in range(1, _MAX_LENGTH_VARINT):  # byte k of the varints still going
        byte = buf.take(after, mode="clip")
        value |= ((byte & 0x7F).astype(np.int64) << 7 * k) * going
        after += going
        going &= byte >= 0x80
        if not going.any():
            return value, after
    raise _Unusual()


def _spans(starts: np.ndarray, counts: np.ndarray, step: int = 1) -> np.ndarray:
    """The indices start, start + step, ... of `count` items at each start, one span after
    the other."""
    if counts.size and _all(counts == counts[0]):  # (a dense feature's) one length
        return (starts[:, None] + np.arange(0, step * int(counts[0]), step)).reshape(-1)
    ends = counts.cumsum()
    total = int(ends[-1]) if ends.size else 0
    return np.arange(0, step * total, step) + (starts + step * (counts - ends)).repeat(counts)


def _unaligned(buf: np.ndarray, dtype: str) -> np.ndarray:
    """A view of `buf` whose item i is the `dtype` value of bytes i, i + 1, ...: gathers
    many-byte values at any offset with one index each."""
    size = np.dtype(dtype).itemsize
    return np.ndarray((buf.size - size + 1,), dtype, buf, 0, (1,))


class _Plan(NamedTuple):
    """What depends only on the requested keys: per distinct key (a slot) its hash, its
    bytes as 64-bit words, its length and kind; slots sorted by hash."""
    hashes: np.ndarray  # sorted
    slot_of_hash: np.ndarray  # the slot of each sorted hash
    words: np.ndarray  # [slots, width // 8] uint64
    key_lengths: np.ndarray
    kinds: np.ndarray  # one more, -1, for the entries of no requested key
    slot_of_feature: Tuple[int, ...]  # sparse features, then dense ones
    width: int  # bytes of a key compared (a multiple of 8)
    usable: bool  # False where two requested keys' hashes collide, or one key is asked
    # for as two kinds (then every batch takes the exact path)


def _key_hashes(words: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    mix = np.array([(_GOLDEN * (2 * i + 1)) % (1 << 64) for i in range(words.shape[1])],
                   np.uint64)
    return (words * mix).sum(axis=1, dtype=np.uint64) + \
        lengths.astype(np.uint64) * _LENGTH_MIX


@functools.lru_cache(maxsize=64)
def _plan(features: Tuple[Tuple[str, str], ...]) -> _Plan:
    keys = list(dict.fromkeys(key.encode() for key, _ in features))
    kind_of_key = {}
    for key, kind in features:
        kind_of_key.setdefault(key.encode(), set()).add(_KINDS.index(kind))
    width = 8 * max(1, -(-max(map(len, keys), default=1) // 8))
    padded = np.zeros((len(keys), width), np.uint8)
    for i, key in enumerate(keys):
        padded[i, :len(key)] = np.frombuffer(key, np.uint8)
    words = padded.view("<u8")
    lengths = np.array([len(k) for k in keys], np.int64)
    hashes = _key_hashes(words, lengths)
    order = hashes.argsort(kind="stable")
    kinds = [min(kind_of_key[k]) for k in keys] + [-1]
    return _Plan(hashes[order], order, words, lengths, np.array(kinds, np.int64),
                 tuple(keys.index(key.encode()) for key, _ in features), width,
                 len(set(hashes.tolist())) == len(keys)
                 and all(len(kind_of_key[k]) == 1 for k in keys))


class _Entries:
    """The map entries of a batch, ordered by (slot of their key, example); the entries
    of no requested key come last (slot == number of slots)."""

    def __init__(self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 plan: _Plan):
        example, pos, start, end = self._walk(buf, starts, ends)
        key_len, k0 = _lengths(buf, start + 1)
        k1 = k0 + key_len
        value_len, v0 = _lengths(buf, k1 + 1)
        v1 = v0 + value_len
        _require((buf.take(pos, mode="clip") == 0x0A) & (buf.take(start, mode="clip") == 0x0A)
                 & (buf.take(k1, mode="clip") == 0x12) & (v1 == end) & (v0 < v1))
        slot = self._slots(buf, k0, key_len, plan)
        batch, slots = starts.size, plan.hashes.size
        code = slot * batch + example
        order = code.argsort(kind="stable")
        code = code[order]
        # a requested key twice in an example: the last wins, left to the exact path
        _require((code[1:] != code[:-1]) | (code[1:] >= slots * batch))
        self.bounds = code.searchsorted(np.arange(slots + 1) * batch)
        self.example = example[order]
        self.slot = slot[order]
        self.feature = v0[order], v1[order]

    @staticmethod
    def _walk(buf, starts, ends):
        """(example, position, content start, end) of every entry: one pass per entry
        position, decoding only each entry's length."""
        length, f0 = _lengths(buf, starts + 1)  # Example.features
        _require((buf.take(starts, mode="clip") == 0x0A) & (f0 + length == ends))
        rows = (f0 < ends).nonzero()[0]  # the examples with entries
        pos, limit = f0[rows], ends[rows]
        parts = []
        while rows.size:
            length, start = _lengths(buf, pos + 1)
            end = start + length  # (> pos: a pass always advances)
            parts.append((rows, pos, start, end))
            going = end < limit
            rows, pos, limit = rows[going], end[going], limit[going]
        if not parts:
            none = np.zeros(0, np.int64)
            return none, none, none, none
        example, pos, start, end = (np.concatenate(p) for p in zip(*parts))
        # entries tile each example's features exactly: the last ends where they do
        covered = np.bincount(example, weights=end - pos, minlength=starts.size)
        _require(covered == ends - f0)
        return example, pos, start, end

    @staticmethod
    def _slots(buf, k0, key_len, plan: _Plan) -> np.ndarray:
        """The slot of each entry's key (number of slots: none requested). Keys are
        proto3 strings: one that is not UTF-8 makes a parser reject the example."""
        word = np.arange(plan.width // 8, dtype=np.int64)
        # (indexing, not take: take is slow on this view; ends clipped to the buffer)
        words = _unaligned(buf, "<u8")[np.minimum(k0[:, None] + 8 * word, buf.size - 8)]
        words &= _KEEP_BYTES.take(key_len[:, None] - 8 * word, mode="clip")
        if not (words & _HIGH_BITS).any() and _all(key_len <= plan.width):
            pass  # (every key ASCII)
        elif (buf[_spans(k0, key_len)] >= 0x80).any():
            for start, n in zip(k0.tolist(), key_len.tolist()):
                try:
                    buf[start:start + n].tobytes().decode("utf-8")
                except UnicodeDecodeError:
                    raise _Unusual() from None
        slots = plan.hashes.size
        if not slots:
            return np.zeros(k0.size, np.int64)
        hashes = _key_hashes(words, key_len)
        at = plan.hashes.searchsorted(hashes).clip(0, slots - 1)
        slot = plan.slot_of_hash[at]
        match = ((plan.hashes[at] == hashes) & (plan.key_lengths[slot] == key_len)
                 & _all(plan.words[slot] == words, axis=1))
        return np.where(match, slot, slots)


class _Lists:
    """Each entry's list: kind, and (start, end) of its payload (for a bytes list, of its
    first value); checked to be the only thing in its Feature."""

    def __init__(self, buf: np.ndarray, entries: _Entries, plan: _Plan):
        v0, v1 = entries.feature
        self.kind = _KIND_OF_TAG[buf.take(v0, mode="clip")]
        length, l0 = _lengths(buf, v0 + 1)
        self.end = l0 + length
        self.nonempty = nonempty = l0 < self.end
        length, p0 = _lengths(buf, l0 + 1)
        p1 = p0 + length
        self.start = np.where(nonempty, p0, self.end)
        self.stop = np.where(nonempty, p1, self.end)
        requested = entries.slot < plan.hashes.size
        one_list = (p1 == self.end) | ((self.kind == _BYTES) & (p1 < self.end))
        _require((self.kind >= 0) & (self.end == v1)
                 & ((self.kind == plan.kinds[entries.slot]) | ~requested)
                 & (~nonempty | ((buf.take(l0, mode="clip") == 0x0A) & one_list))
                 & ((self.kind != _FLOATS) | ((self.stop - self.start) & 3 == 0)))


def _floats(buf, p0, p1, requested: int):
    counts = (p1 - p0) >> 2
    at = _spans(p0[:requested], counts[:requested], 4)
    return _unaligned(buf, "<f4").take(at).astype(np.float32, copy=False), counts


def _int64s(buf, p0, p1):
    lengths = p1 - p0
    raw = buf[_spans(p0, lengths)]
    last = raw < 0x80  # the last byte of each varint
    ends = lengths.cumsum()
    _require(last[ends[lengths > 0] - 1])  # no varint runs past its list
    ends_at = last.nonzero()[0]
    if ends_at.size == raw.size:  # every value a single byte
        return raw.astype(np.int64), lengths
    firsts = np.concatenate([[0], ends_at[:-1] + 1])  # (ends_at: not empty here)
    nbytes = ends_at - firsts + 1
    _require(nbytes <= _MAX_VARINT)
    shift = (np.arange(raw.size) - firsts.repeat(nbytes)) * 7
    parts = (raw & 0x7F).astype(np.uint64) << shift.astype(np.uint64)
    values = np.bitwise_or.reduceat(parts, firsts)
    ended = np.concatenate([[0], last.cumsum()])  # values per list: the varints ending in it
    return values.view(np.int64), ended[ends] - ended[ends - lengths]


def _bytes(buf, data: bytes, p0, p1, l1, nonempty, requested: int):
    """The values of BytesLists (the first value of a `nonempty` one spans [p0, p1), the
    list ends at l1): the values of the first `requested` lists as bytes objects, and
    the count per list."""
    counts = nonempty.astype(np.int64)
    spans = [(nonempty.nonzero()[0], p0, p1)]
    rows = (p1 < l1).nonzero()[0]
    pos, limit = p1[rows], l1[rows]
    while rows.size:
        length, v0 = _lengths(buf, pos + 1)
        v1 = v0 + length
        _require((buf.take(pos, mode="clip") == 0x0A) & (v1 <= limit))
        spans.append((rows, v0, v1))
        counts[rows] += 1
        going = v1 < limit
        rows, pos, limit = rows[going], v1[going], limit[going]
    owner = spans[0][0]
    v0, v1 = p0[owner], p1[owner]
    if len(spans) > 1:  # lists of several values: order the values by list
        owner = np.concatenate([s[0] for s in spans])
        order = owner.argsort(kind="stable")
        owner = owner[order]
        v0 = np.concatenate([v0] + [s[1] for s in spans[1:]])[order]
        v1 = np.concatenate([v1] + [s[2] for s in spans[1:]])[order]
    n = int(owner.searchsorted(requested))
    return [data[a:b] for a, b in zip(v0[:n].tolist(), v1[:n].tolist())], counts


def _decode(buf, data, entries: _Entries, lists: _Lists):
    """Per kind, (values of the requested lists, entry bounds of each slot within the
    kind, value bounds of each slot within the values)."""
    out = []
    for kind in (_BYTES, _FLOATS, _INT64S):
        rows = (lists.kind == kind).nonzero()[0]
        bounds = rows.searchsorted(entries.bounds)
        requested = int(bounds[-1])
        p0, p1 = lists.start[rows], lists.stop[rows]
        if kind == _BYTES:
            values, counts = _bytes(buf, data, p0, p1, lists.end[rows], lists.nonempty[rows],
                                    requested)
        elif kind == _FLOATS:
            values, counts = _floats(buf, p0, p1, requested)
        else:  # (all decoded: that checks the unrequested ones too)
            values, counts = _int64s(buf, p0, p1)
        value_at = np.concatenate([[0], counts.cumsum()])
        out.append((values, counts, bounds.tolist(), value_at[bounds].tolist()))
    return out


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
    plan = _plan(tuple(map(tuple, sparse)) + tuple(map(tuple, dense)))
    if batch == 0 or not lengths.all() or not plan.usable:
        return None
    data = b"".join([*serialized, bytes(2 * _MAX_VARINT)])  # (reads never overrun)
    buf = np.frombuffer(data, np.uint8)
    ends = lengths.cumsum()
    try:
        entries = _Entries(buf, ends - lengths, ends, plan)
        decoded = _decode(buf, data, entries, _Lists(buf, entries, plan))
        features = [_feature(entries, decoded, plan, slot)
                    for slot in plan.slot_of_feature]
        sparse_out = features[:len(sparse)]
        dense_out = [_dense(*f, batch, size, default)
                     for f, size, default in zip(features[len(sparse):], dense_sizes,
                                                 dense_defaults)]
    except _Unusual:
        return None
    return ([v for v, _, _ in sparse_out],
            [_per_example(rows, counts, batch) for _, rows, counts in sparse_out], dense_out)


def _feature(entries: _Entries, decoded, plan: _Plan, slot: int):
    """(values, examples holding the feature, count per such example) of one slot."""
    values, counts, bounds, value_at = decoded[int(plan.kinds[slot])]
    a, b = bounds[slot], bounds[slot + 1]
    rows = entries.example[entries.bounds[slot]:entries.bounds[slot + 1]]
    return values[value_at[slot]:value_at[slot + 1]], rows, counts[a:b]


def _per_example(rows: np.ndarray, counts: np.ndarray, batch: int) -> np.ndarray:
    out = np.zeros(batch, np.int64)
    out[rows] = counts
    return out


def _dense(values, rows: np.ndarray, counts: np.ndarray, batch: int, size: int,
           default: np.ndarray):
    """[batch * size] values: each example's own, or `default` where it has none."""
    _require(counts == size)
    if size == 0 or (rows.size < batch and default.size != size):
        raise _Unusual()  # (a missing required feature: the exact path's error)
    if rows.size == batch:
        return values
    if isinstance(values, list):  # strings
        out = np.empty((batch, size), dtype=object)
        out[:] = default.reshape(1, size)
        out[rows] = np.array(values, dtype=object).reshape(-1, size)
        return out.reshape(-1).tolist()
    out = np.empty((batch, size), dtype=values.dtype)
    out[:] = default.reshape(1, size).astype(values.dtype)
    out[rows] = values.reshape(-1, size)
    return out.reshape(-1)
