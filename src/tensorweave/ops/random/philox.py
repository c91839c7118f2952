"""TensorFlow's random numbers: the Philox4x32-10 generator and TF's sample transforms.

TF's CPU random kernels draw 128-bit blocks (four uint32 words) from Philox4x32-10, keyed
by a 64-bit key (two words) with a 128-bit counter (four words, low first), and turn the
words into samples by fixed recipes. This module reproduces both bit for bit, vectorized
in NumPy: block i of a stream is Philox(key, counter + i), so many blocks come from one
call.

The output layout is TF's `FillPhiloxRandom`: the output is cut into groups of
`kResultElementCount` samples; group g of a fixed-cost distribution (uniform, integers,
normal) is made from block g, and group g of the truncated normal, which rejects samples,
from words read in order starting at block `g * 256 * group / 4`. The values therefore do
not depend on how TF shards the work over threads.

The normal distributions use TF's Box-Muller on glibc's libm (TF calls `logf`/`sincosf`,
`log`/`sincos`): the float32 functions are evaluated by glibc's algorithms (those of ARM's
optimized-routines, glibc >= 2.28, FMA build) in `libm_float32.py`; the float64 ones are
the platform's libm through `math.log` and NumPy's `sin`/`cos`.
"""
from __future__ import annotations

import functools
import math
from typing import Sequence, Tuple

import numpy as np

from tensorweave.ops.random import libm_float32

Key = Tuple[int, int]
Counter = Tuple[int, int, int, int]

_WORD = 0xFFFFFFFF
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)   # round multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85                           # key increments (Weyl)
_LOW = np.uint64(_WORD)
_SHIFT = np.uint64(32)
_ROUNDS = 10
# blocks reserved per output value by the stateful kernels and per truncated-normal
# output (TF's multiplier: "do not change it just here")
SKIP_PER_OUTPUT = 256


# --- the generator -------------------------------------------------------------------------
def key_counter_of_seeds(seed: int, seed2: int) -> Tuple[Key, Counter]:
    """TF's `PhiloxRandom(seed, seed2)`: the key is `seed`, the high half of the counter
    `seed2` (both 64-bit, two's complement)."""
    seed &= (1 << 64) - 1
    seed2 &= (1 << 64) - 1
    return (seed & _WORD, seed >> 32), (0, 0, seed2 & _WORD, seed2 >> 32)


def skip(counter: Counter, count: int) -> Counter:
    """TF's `PhiloxRandom::Skip(count)`: the counter moved on by `count` blocks (its
    carry from word 1 into words 2-3 included)."""
    c0, c1, c2, c3 = counter
    count_lo, count_hi = count & _WORD, (count >> 32) & _WORD
    c0 = (c0 + count_lo) & _WORD
    if c0 < count_lo:
        count_hi = (count_hi + 1) & _WORD
    c1 = (c1 + count_hi) & _WORD
    if c1 < count_hi:
        c2 = (c2 + 1) & _WORD
        if c2 == 0:
            c3 = (c3 + 1) & _WORD
    return c0, c1, c2, c3


# blocks per pass of the generator: its arrays stay in the L2 cache (3x faster than one
# pass); the normal transforms, with more temporaries of float64, take fewer at a time
# (their arrays below 128 KiB, which malloc would map and unmap at each allocation)
_CHUNK = 16384
_NORMAL_CHUNK = 8192


# up to this many blocks are computed with Python integers one block at a time, up to
# `_LANES_MOST` as lanes of Python integers (`_lane_blocks`), more in NumPy passes: a pass
# of NumPy calls costs about 42 us whatever its size up to a few hundred blocks, one
# block in Python about 4 us, the lanes 8 us for 4 blocks, 19 for 64, 33 for 128 (a scalar
# draw inside a tf.map_fn body makes a pass per iteration, a sampler one per step)
_FEW_BLOCKS = 2
_LANES_MOST = 128


def blocks(key: Key, counter: Counter, offsets: np.ndarray) -> np.ndarray:
    """The Philox4x32-10 blocks at `counter + offsets` (128-bit sums), as uint32 `[n, 4]`."""
    offsets = np.asarray(offsets, dtype=np.uint64).ravel()
    if offsets.size <= _LANES_MOST and _scalar_key(key):
        if offsets.size <= _FEW_BLOCKS:
            return _few_blocks(key, counter, offsets.tolist())
        return _lane_blocks(key, counter, offsets)
    out = np.empty((offsets.size, 4), dtype=np.uint32)
    # one set of word arrays for every chunk: fresh arrays of a chunk's size would be
    # mapped and faulted in by malloc at each chunk, which costs as much as the rounds
    scratch = np.empty((3, 2, min(offsets.size, _CHUNK)), np.uint64)
    for start in range(0, offsets.size, _CHUNK):
        chunk = offsets[start:start + _CHUNK]
        _fill_blocks(key, counter, chunk, out[start:start + _CHUNK],
                     scratch[:, :, :chunk.size])
    return out


_INT_TYPES = (int, np.integer)


def _scalar_key(key: Key) -> bool:
    return isinstance(key[0], _INT_TYPES) and isinstance(key[1], _INT_TYPES)


def _few_blocks(key: Key, counter: Counter, offsets) -> np.ndarray:
    """The blocks at `counter + offset` for each of the Python ints `offsets`, computed
    with Python integers (`_fill_blocks`' rounds), as uint32 `[n, 4]`."""
    keys = _python_round_keys(int(key[0]), int(key[1]))
    base = counter[0] | counter[1] << 32 | counter[2] << 64 | counter[3] << 96
    m0, m1, word = _M0_INT, _M1_INT, _WORD
    out = []
    for offset in offsets:
        c = (base + offset) & _COUNTER_MASK
        c0, c1, c2, c3 = c & word, (c >> 32) & word, (c >> 64) & word, c >> 96
        for k0, k1 in keys:
            p0, p1 = m0 * c0, m1 * c2
            c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & word, (p0 >> 32) ^ c3 ^ k1, p0 & word
        out += (c0, c1, c2, c3)
    return np.array(out, dtype=np.uint32).reshape(-1, 4)


_M0_INT, _M1_INT = int(_M0), int(_M1)
_COUNTER_MASK = (1 << 128) - 1
# a 1 at the bottom of each 64-bit lane, and the low 32 bits of each lane set
_LANE_ONES = sum(1 << (64 * i) for i in range(_LANES_MOST))
_LANE_LOWS = _LANE_ONES * _WORD


def _lane_blocks(key: Key, counter: Counter, offsets: np.ndarray) -> np.ndarray:
    """`blocks` for a scalar key, the n blocks' words each held in a 64-bit lane of one
    Python integer per word: a 32-bit word times a 32-bit multiplier fills its lane
    without carrying into the next, so a round is a dozen integer operations on all
    blocks at once (shifts move a lane's high half down, masks cut lanes apart)."""
    n = offsets.size
    low = offsets + np.uint64(counter[0] | counter[1] << 32)
    high = (low < offsets).astype(np.uint64)   # the carry out of the low half
    high += np.uint64(counter[2] | counter[3] << 32)
    unused = 64 * (_LANES_MOST - n)
    ones, lows = _LANE_ONES >> unused, _LANE_LOWS >> unused
    low_words = int.from_bytes(low.astype("<u8", copy=False).tobytes(), "little")
    high_words = int.from_bytes(high.astype("<u8", copy=False).tobytes(), "little")
    c0, c1 = low_words & lows, (low_words >> 32) & lows
    c2, c3 = high_words & lows, (high_words >> 32) & lows
    m0, m1 = _M0_INT, _M1_INT
    for k0, k1 in _python_round_keys(int(key[0]), int(key[1])):
        p0, p1 = m0 * c0, m1 * c2
        c0, c1, c2, c3 = (((p1 >> 32) ^ c1 ^ k0 * ones) & lows, p1 & lows,
                          ((p0 >> 32) ^ c3 ^ k1 * ones) & lows, p0 & lows)
    # a lane of (c0 | c1 << 32) is the words c0, c1 in little-endian order
    out = np.empty((n, 4), np.uint32)
    out[:, :2] = np.frombuffer((c0 | c1 << 32).to_bytes(8 * n, "little"),
                               "<u4").reshape(n, 2)
    out[:, 2:] = np.frombuffer((c2 | c3 << 32).to_bytes(8 * n, "little"),
                               "<u4").reshape(n, 2)
    return out


@functools.lru_cache(maxsize=64)
def _python_round_keys(k0: int, k1: int) -> tuple:
    return _key_schedule(k0, k1)


def _key_schedule(k0: int, k1: int) -> tuple:
    """The ten rounds' (k0, k1): the key bumped by the Weyl constants each round."""
    out = []
    for _ in range(_ROUNDS):
        out.append((k0, k1))
        k0, k1 = (k0 + _W0) & _WORD, (k1 + _W1) & _WORD
    return tuple(out)


def _round_keys(key: Key):
    """The keys of the ten rounds as `_fill_blocks` XORs them, each round's (k0, k1) in
    the row order of that round's output (see there): columns [2, 1] for a key of two
    integers (cached), rows [2, n] for a key of per-block words (arrays)."""
    k0, k1 = key
    if np.ndim(k0) == 0 and np.ndim(k1) == 0:
        return _scalar_round_keys(int(k0), int(k1))
    k0, k1 = np.asarray(k0, np.uint64), np.asarray(k1, np.uint64)
    out = []
    for r in range(_ROUNDS):
        out.append(np.stack((k1, k0) if r % 2 == 0 else (k0, k1)))
        k0, k1 = (k0 + np.uint64(_W0)) & _LOW, (k1 + np.uint64(_W1)) & _LOW
    return out


@functools.lru_cache(maxsize=64)
def _scalar_round_keys(k0: int, k1: int) -> np.ndarray:
    out = np.empty((_ROUNDS, 2, 1), np.uint64)
    for r, (a, b) in enumerate(_key_schedule(k0, k1)):
        out[r, :, 0] = (b, a) if r % 2 == 0 else (a, b)
    return out


# the round multipliers as columns against the pair of words they multiply, in the two
# row orders the pairs take in turn
_MULTIPLIERS = (np.array([[_M0], [_M1]], np.uint64), np.array([[_M1], [_M0]], np.uint64))


def _fill_blocks(key: Key, counter: Counter, offsets: np.ndarray, out: np.ndarray,
                 scratch: np.ndarray) -> None:
    """Writes the blocks at `counter + offsets` into `out`, working in `scratch` (three
    pairs of uint64 rows of the chunk's size). The words are held in uint64 so that each
    32x32-bit product is exact; its high and low halves are the round's outputs.

    A round's two products are one operation: the pair (c0, c2) times (M0, M1). Their
    high halves are the next (c2, c0) before the XORs and their low halves the next
    (c3, c1), so the pairs' row order flips each round, and the multipliers and keys
    follow it; only the XOR with the old (c1, c3) reads a reversed view. A pass over
    few blocks costs its NumPy calls: 64 blocks 53 -> 42 us."""
    even, odd, prod = scratch                # rows (c0, c2), (c1, c3) in the round's order
    low, high = prod                         # the counter's low and high 64 bits first
    np.add(offsets, np.uint64(counter[0] | counter[1] << 32), out=low)
    np.copyto(high, low < offsets)           # the carry out of the low half
    high += np.uint64(counter[2] | counter[3] << 32)
    np.bitwise_and(prod, _LOW, out=even)
    np.right_shift(prod, _SHIFT, out=odd)
    for r, round_key in enumerate(_round_keys(key)):
        np.multiply(even, _MULTIPLIERS[r % 2], prod)
        np.right_shift(prod, _SHIFT, even)
        even ^= odd[::-1]
        even ^= round_key
        np.bitwise_and(prod, _LOW, odd)
    # after an even number of rounds the rows are in their first order again
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = even[0], odd[0], even[1], odd[1]


def seed_generator_seeds(seed: int, seed2: int, k: int) -> Tuple[int, int]:
    """The k-th (seed, seed2) pair that TF's tf.data RandomSeedGenerator seeded (seed,
    seed2) hands out (one per pass of a reshuffling or rerandomizing dataset): words
    2k and 2k + 1 of Philox(seed, seed2)."""
    pair = words(*key_counter_of_seeds(seed, seed2), k // 2 + 1)[2 * k:2 * k + 2]
    return int(pair[0]), int(pair[1])


def words(key: Key, counter: Counter, n_blocks: int) -> np.ndarray:
    """The first `n_blocks` blocks of the stream, flat: `4 * n_blocks` uint32 words."""
    if n_blocks <= _FEW_BLOCKS and _scalar_key(key):
        return _few_blocks(key, counter, range(n_blocks)).ravel()
    return blocks(key, counter, np.arange(n_blocks, dtype=np.uint64)).ravel()


def call_words(key: Key, counter: Counter, step: int, calls: int, n_blocks: int) -> np.ndarray:
    """The words of `calls` kernel calls reading `n_blocks` blocks each, call k's blocks
    starting at `counter + k * step`: uint32 `[calls, 4 * n_blocks]`."""
    if calls == 1:
        return words(key, counter, n_blocks).reshape(1, -1)
    offsets = (np.arange(calls, dtype=np.uint64)[:, None] * np.uint64(step)
               + np.arange(n_blocks, dtype=np.uint64)).ravel()
    return blocks(key, counter, offsets).reshape(calls, 4 * n_blocks)


class WordStream:
    """The words of a stream one at a time, in order (TF's SingleSampleAdapter over a
    PhiloxRandom), drawn a chunk of blocks at a time.

    A pass of the generator costs about 60 NumPy calls whatever its size, so a stream
    read for long (a shuffle queue draws one word per element) draws larger chunks: each
    refill doubles the chunk, from 64 blocks up to 1024. The words are the same (block i
    is Philox(key, counter + i) whatever the chunks). A chunk stays a uint32 array:
    `take` hands out views of it, with no conversion per word."""

    _CHUNK_BLOCKS = 64
    _MAX_CHUNK_BLOCKS = 1024

    def __init__(self, key: Key, counter: Counter):
        self._key, self._counter = key, counter
        self._words = np.empty(0, np.uint32)
        self._next = 0
        self._chunk = self._CHUNK_BLOCKS

    def __call__(self) -> int:
        if self._next == len(self._words):
            self._refill()
        self._next += 1
        return int(self._words[self._next - 1])

    def take(self, n: int) -> np.ndarray:
        """The next `n` words (uint32; the missing ones drawn in one pass)."""
        start, chunk = self._next, self._words
        if start + n <= len(chunk):
            self._next = start + n
            return chunk[start:start + n]
        left = chunk[start:]
        missing = n - len(left)
        self._refill(max(-(-missing // 4), self._chunk))
        self._next = missing
        return np.concatenate([left, self._words[:missing]])

    def _refill(self, n_blocks: int = 0) -> None:
        n_blocks = n_blocks or self._chunk
        self._words = words(self._key, self._counter, n_blocks)
        self._words.flags.writeable = False  # `take` hands out views of it
        self._counter = skip(self._counter, n_blocks)
        self._next = 0
        self._chunk = min(2 * self._chunk, self._MAX_CHUNK_BLOCKS)


# --- uniform -------------------------------------------------------------------------------
def _unit_float32(w: np.ndarray) -> np.ndarray:
    """[0, 1) from the low 23 bits: the float 1.mantissa minus 1 (TF's Uint32ToFloat)."""
    return ((w & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)


def _unit_float64(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """[0, 1) from 20 bits of `hi` and all of `lo` (TF's Uint64ToDouble)."""
    mantissa = (hi.astype(np.uint64) & np.uint64(0xFFFFF)) << _SHIFT | lo.astype(np.uint64)
    return (mantissa | np.uint64(0x3FF0000000000000)).view(np.float64) - 1.0


def _unit_16bit(w: np.ndarray, np_dtype, mantissa_bits: int, one_bits: int) -> np.ndarray:
    """[0, 1) of a 16-bit float from the low mantissa bits of each word."""
    bits = (w & np.uint32((1 << mantissa_bits) - 1)).astype(np.uint16) | np.uint16(one_bits)
    return bits.view(np_dtype) - np_dtype.type(1)


def value_blocks(n: int, dtype) -> int:
    """Blocks `uniform` and `normal` read for `n` values of `dtype`: four values a block,
    two in float64."""
    return -(-n // 2) if np.dtype(dtype) == np.float64 else -(-n // 4)


def uniform(key: Key, counter: Counter, n: int, dtype) -> np.ndarray:
    """`n` uniform values in [0, 1) of `dtype` (float16/bfloat16/float32/float64).

    Every type takes one word per value but float64, which takes two."""
    return uniform_of_words(words(key, counter, value_blocks(n, dtype)), n, dtype)


def uniform_of_words(w: np.ndarray, n: int, dtype) -> np.ndarray:
    """The `n` uniform values of each row of words `[..., 4 * value_blocks(n)]`."""
    np_dtype = np.dtype(dtype)
    if np_dtype == np.float64:
        return _unit_float64(w[..., 0::2], w[..., 1::2])[..., :n]
    w = w[..., :n]
    if np_dtype == np.float32:
        return _unit_float32(w)
    if np_dtype == np.float16:
        return _unit_16bit(w, np_dtype, 10, 0x3C00)
    return _unit_16bit(w, np_dtype, 7, 0x3F80)   # bfloat16


# --- integers ------------------------------------------------------------------------------
def _words_64(key: Key, counter: Counter, n: int) -> np.ndarray:
    """`n` uint64 values, each two words (low word first)."""
    return _pairs_64(words(key, counter, -(-n // 2)))[:n]


def _pairs_64(w: np.ndarray) -> np.ndarray:
    """uint64 values of the word pairs along the last axis (low word first)."""
    w = w.astype(np.uint64)
    return w[..., 0::2] | w[..., 1::2] << _SHIFT


def uniform_int_blocks(n: int, dtype) -> int:
    """Blocks `uniform_int` reads for `n` values: a word per 32-bit value, two per 64-bit."""
    return -(-n // 4) if np.dtype(dtype).itemsize == 4 else -(-n // 2)


def uniform_int(key: Key, counter: Counter, n: int, lo: int, hi: int, dtype) -> np.ndarray:
    """`n` integers in [lo, hi) of int32/int64 (also uint32/uint64): `lo + bits % range`,
    bits one word for 32-bit types, two for 64-bit ones (TF's biased modulo)."""
    return uniform_int_of_words(words(key, counter, uniform_int_blocks(n, dtype)),
                                n, lo, hi, dtype)


def uniform_int_of_words(w: np.ndarray, n: int, lo: int, hi: int, dtype) -> np.ndarray:
    """The `n` integers of each row of words `[..., 4 * uniform_int_blocks(n)]`."""
    np_dtype = np.dtype(dtype)
    if np_dtype.itemsize == 4:
        bits = w[..., :n]
        span = np.uint32((hi - lo) & _WORD)
        unsigned = np.uint32
    else:
        bits = _pairs_64(w)[..., :n]
        span = np.uint64((hi - lo) & ((1 << 64) - 1))
        unsigned = np.uint64
    # the sum wraps in the unsigned type, then is read as the signed one (TF's SignedAdd)
    mask = (1 << (8 * np_dtype.itemsize)) - 1
    return ((bits % span) + unsigned(lo & mask)).view(np_dtype)


def full_int(key: Key, counter: Counter, n: int, dtype) -> np.ndarray:
    """`n` integers over the whole range of int32/uint32 (one word each) or int64/uint64
    (two words each)."""
    np_dtype = np.dtype(dtype)
    if np_dtype.itemsize == 4:
        return words(key, counter, -(-n // 4))[:n].view(np_dtype)
    return _words_64(key, counter, n).view(np_dtype)


# --- normal --------------------------------------------------------------------------------
_EPSILON_32 = np.float32(1.0e-7)   # TF's floor on the Box-Muller radius draw
_EPSILON_64 = 1.0e-7
_TWO_PI = 2.0 * math.pi


def _box_muller_float32(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """TF's BoxMullerFloat of word pairs: `[n, 2]` float32 (sin, cos) values."""
    u1 = np.maximum(_unit_float32(x0), _EPSILON_32)
    # float(2 * M_PI * u) with M_PI a double: the product is taken in double
    v1 = (_TWO_PI * _unit_float32(x1).astype(np.float64)).astype(np.float32)
    radius = np.sqrt(np.float32(-2) * libm_float32.logf(u1))
    sin, cos = libm_float32.sincosf(v1)
    return np.stack([sin * radius, cos * radius], axis=-1)


def _box_muller_float64(x0, x1, x2, x3) -> np.ndarray:
    """TF's BoxMullerDouble of word quadruples: `[n, 2]` float64 (sin, cos) values."""
    u1 = np.maximum(_unit_float64(x0, x1), _EPSILON_64)
    v1 = _TWO_PI * _unit_float64(x2, x3)
    # glibc's log through `math` (NumPy's SIMD log differs in the last bit)
    log = np.fromiter(map(math.log, u1.tolist()), dtype=np.float64, count=u1.size)
    radius = np.sqrt(-2.0 * log)
    return np.stack([np.sin(v1) * radius, np.cos(v1) * radius], axis=-1)


def _normal_pairs(block: np.ndarray, np_dtype) -> np.ndarray:
    """The normal values of blocks `[n, 4]`: `[n, 4]` in float32 working precision (two
    pairs of words per block) or `[n, 2]` in float64 (one quadruple)."""
    if np_dtype == np.float64:
        return _box_muller_float64(*block.T)
    return _box_muller_float32(block[:, 0::2], block[:, 1::2]).reshape(len(block), 4)


def normal_of_words(w: np.ndarray, n: int, dtype) -> np.ndarray:
    """The `n` normal values of each row of words `[calls, 4 * value_blocks(n)]`."""
    np_dtype = np.dtype(dtype)
    values = _normal_pairs(w.reshape(-1, 4), np_dtype).reshape(len(w), -1)[:, :n]
    return values.astype(np_dtype, copy=False)


def normal(key: Key, counter: Counter, n: int, dtype) -> np.ndarray:
    """`n` standard normal values of `dtype` (16-bit floats are computed in float32 and
    rounded, as TF does)."""
    np_dtype = np.dtype(dtype)
    per_block = 2 if np_dtype == np.float64 else 4
    n_blocks = -(-n // per_block)
    out = np.empty((n_blocks, per_block), dtype=np_dtype)
    for start in range(0, n_blocks, _NORMAL_CHUNK):
        offsets = np.arange(start, min(start + _NORMAL_CHUNK, n_blocks), dtype=np.uint64)
        out[start:start + offsets.size] = _normal_pairs(blocks(key, counter, offsets),
                                                        np_dtype)
    return out.ravel()[:n]


def truncated_normal(key: Key, counter: Counter, n: int, dtype) -> np.ndarray:
    """`n` standard normal values of `dtype` within (-2, 2), by TF's rejection.

    Group g (4 values; 2 for float64) reads its words in order from block
    `g * 256 * group / 4` on, one Box-Muller pair (quadruple for float64) at a time, and
    keeps the values of magnitude below 2 until the group is full."""
    np_dtype = np.dtype(dtype)
    group = 2 if np_dtype == np.float64 else 4
    n_groups = -(-n // group)
    out = np.empty((n_groups, group), dtype=np.float64 if group == 2 else np.float32)
    for start in range(0, n_groups, _NORMAL_CHUNK):
        stop = min(start + _NORMAL_CHUNK, n_groups)
        out[start:stop] = _truncated_groups(key, counter, start, stop, np_dtype)
    return out.ravel()[:n].astype(np_dtype, copy=False)


def _truncated_groups(key: Key, counter: Counter, start: int, stop: int,
                      np_dtype) -> np.ndarray:
    """Groups [start, stop) of the truncated normal. A block holds as many normals as a
    group: all groups draw their first block at once, and its kept values, moved to the
    front by a table of the keep patterns, are the group when all are kept (five times
    in six). The others draw their next blocks until full."""
    group = 2 if np_dtype == np.float64 else 4
    first_block = np.arange(start, stop, dtype=np.uint64) * np.uint64(
        SKIP_PER_OUTPUT * group // 4)
    values = _normal_pairs(blocks(key, counter, first_block), np_dtype)
    pattern = np.packbits(np.abs(values) < 2, axis=1, bitorder="little")[:, 0]
    kept_first, kept_count = _KEEP_PATTERNS[group]
    out = np.take_along_axis(values, kept_first[pattern], axis=1)
    filled = kept_count[pattern]
    active = np.flatnonzero(filled < group)
    step = 1
    while active.size:
        values = _normal_pairs(blocks(key, counter, first_block[active] + np.uint64(step)),
                               np_dtype)
        kept = np.abs(values) < 2
        slot = np.cumsum(kept, axis=1)
        slot += filled[active, None] - 1
        rows, cols = np.nonzero(kept & (slot < group))
        out[active[rows], slot[rows, cols]] = values[rows, cols]
        filled[active] = np.minimum(slot[:, -1] + 1, group)
        active = active[filled[active] < group]
        step += 1
    return out


def _keep_pattern_tables(width: int):
    """For each pattern of kept values in a block of `width` (bit i: value i kept): the
    order that puts the kept values first (in order), and their number."""
    patterns = range(1 << width)
    first = [[i for i in range(width) if p >> i & 1] + [i for i in range(width)
                                                         if not p >> i & 1]
             for p in patterns]
    return np.array(first, dtype=np.intp), np.array([bin(p).count("1") for p in patterns])


_KEEP_PATTERNS = {width: _keep_pattern_tables(width) for width in (2, 4)}


# --- seeds of the stateless ops ------------------------------------------------------------
_STATELESS_KEY = (0x3EC8F720, 0x02461E29)


def key_counter_of_stateless_seed(seed: Sequence[int]) -> Tuple[Key, Counter]:
    """The (key, counter) TF derives from a stateless op's seed `[s0, s1]` (int32 values
    are sign-extended to 64 bits): one Philox block of the counter (s0, s1) under a fixed
    key gives the new key (words 0-1) and the counter's high half (words 2-3)."""
    s0, s1 = (int(s) & ((1 << 64) - 1) for s in seed)
    mix = blocks(_STATELESS_KEY, (s0 & _WORD, s0 >> 32, s1 & _WORD, s1 >> 32),
                 np.zeros(1, np.uint64))[0]
    return (int(mix[0]), int(mix[1])), (0, 0, int(mix[2]), int(mix[3]))


def stateless_first_doubles(seeds: np.ndarray) -> np.ndarray:
    """For each stateless seed `[s0, s1]` of `seeds` [n, 2] (integers, sign-extended),
    the first float64 uniform of TF's stream of that seed (words 0-1 of its first
    block): what a stateless op drawing one double draws, for n seeds at once. `blocks`
    runs elementwise on uint64 arrays of keys and counters, one chunk at a time."""
    seeds = np.asarray(seeds).astype(np.int64).view(np.uint64).reshape(-1, 2)
    out = np.empty(len(seeds))
    for start in range(0, len(seeds), _CHUNK):
        s0, s1 = seeds[start:start + _CHUNK].T
        zeros = np.zeros(s0.size, np.uint64)
        mix = blocks(_STATELESS_KEY, (s0 & _LOW, s0 >> _SHIFT, s1 & _LOW, s1 >> _SHIFT),
                     zeros).astype(np.uint64)
        first = blocks((mix[:, 0], mix[:, 1]), (zeros, zeros, mix[:, 2], mix[:, 3]), zeros)
        out[start:start + s0.size] = _unit_float64(first[:, 0], first[:, 1])
    return out


def key_counter_of_words(key: int, counter: Sequence[int]) -> Tuple[Key, Counter]:
    """(key, counter) of the 64-bit key and the two 64-bit counter words (low first) of
    the StatelessRandom*V2 ops."""
    key &= (1 << 64) - 1
    lo, hi = (int(c) & ((1 << 64) - 1) for c in counter)
    return (key & _WORD, key >> 32), (lo & _WORD, lo >> 32, hi & _WORD, hi >> 32)
