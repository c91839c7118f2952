"""TF's RandomIndexShuffle permutation, bit for bit: a Simon block cipher walked until it
lands in range (cycle walking).

For `max_index` m > 0 TF picks an even block size B = max(ceil(log2 m) rounded up to
even, 16) bits (64 when ceil(log2 m) is 64), words of W = B / 2 bits, and encrypts the
index with a Simon cipher of W-bit words keyed by the seed's three 32-bit words (each
cut to W bits) and `rounds` round keys; while the result is above m it encrypts again.
The cipher permutes [0, 2**B), so an index in [0, m] walks its own cycle and stops at
the next value in [0, m]: a permutation of [0, m]. Its input is the index's low B bits
(TF keeps only those), which is why `2**B` shuffles like 0 when m is 2**B.

Above 16 bits, 2**B < 4 (m + 1), so a walk takes a few steps; at 16 bits a small m
makes walks of up to 2**16 steps, so there the cipher is tabulated once per key and
bound and the walks are followed by pointer doubling.
"""
from __future__ import annotations

import math
from typing import List

import numpy as np

_MIN_BLOCK_BITS = 16
_TABLE_WORD_BITS = _MIN_BLOCK_BITS // 2
_ROUND_CONSTANT = 0xFFFFFFFC
_Z_SEQUENCE = 0x7369F885192C0EF5


def word_bits(max_index: int) -> int:
    """W, the cipher's word size in bits, for the bound `max_index` > 0 (TF computes
    ceil(log2) on the bound converted to a double)."""
    block = math.ceil(math.log2(float(max_index)))
    return max(block + block % 2, _MIN_BLOCK_BITS) // 2


def _rotl(x: np.ndarray, r: int, w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return ((x << np.uint64(r)) | (x >> (w - np.uint64(r)))) & mask


def _rotr(x: np.ndarray, r: int, w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return ((x >> np.uint64(r)) | (x << (w - np.uint64(r)))) & mask


def _simon_f(x: np.ndarray, w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return (_rotl(x, 1, w, mask) & _rotl(x, 8, w, mask)) ^ _rotl(x, 2, w, mask)


def round_keys(keys: np.ndarray, w: np.ndarray, rounds: int) -> List[np.ndarray]:
    """TF's Simon key schedule: `rounds` round keys (each [n] uint64) of the seeds
    `keys` [n, 3] (uint32 words) for word sizes `w` [n]."""
    mask = (np.uint64(1) << w) - np.uint64(1)
    constant = np.uint64(_ROUND_CONSTANT) & mask
    z = np.uint64(_Z_SEQUENCE) & mask
    schedule = [keys[:, i].astype(np.uint64) & mask for i in range(3)]
    for i in range(3, rounds):
        schedule.append(constant ^ (z & np.uint64(1)) ^ schedule[i - 3]
                        ^ _rotr(schedule[i - 1], 3, w, mask)
                        ^ _rotr(schedule[i - 1], 4, w, mask))
        z = z >> np.uint64(1)
    return schedule


def encrypt(values: np.ndarray, schedule: List[np.ndarray], w: np.ndarray) -> np.ndarray:
    """The Simon encryption of `values` (uint64; their low 2 W bits) with the round
    keys `schedule`, two rounds per pair of keys, as TF's."""
    mask = (np.uint64(1) << w) - np.uint64(1)
    left, right = (values >> w) & mask, values & mask
    for k1, k2 in zip(schedule[0::2], schedule[1::2]):
        left = left ^ _simon_f(right, w, mask) ^ k1
        right = right ^ _simon_f(left, w, mask) ^ k2
    return (left << w) | right


def index_shuffle(index: np.ndarray, keys: np.ndarray, max_index: np.ndarray,
                  rounds: int) -> np.ndarray:
    """TF's shuffled positions of `index` [n] in permutations of [0, max_index[i]]
    keyed by `keys` [n, 3] (uint32 words), all uint64 with index <= max_index; rounds
    is even and at least 4."""
    out = np.zeros(index.shape, np.uint64)
    positive = np.flatnonzero(max_index)        # a bound of 0 leaves only 0
    bounds, which = np.unique(max_index[positive], return_inverse=True)
    w = np.array([word_bits(int(m)) for m in bounds], np.uint64)[which.ravel()]
    table = w == _TABLE_WORD_BITS
    walked, tabled = positive[~table], positive[table]
    out[walked] = _walk(index[walked], keys[walked], max_index[walked], w[~table], rounds)
    out[tabled] = _tabled_walk(index[tabled], keys[tabled], max_index[tabled], rounds)
    return out


def _walk(index, keys, max_index, w, rounds) -> np.ndarray:
    """Cycle walking, one encryption per step for the values still out of range."""
    schedule = round_keys(keys, w, rounds)
    values = encrypt(index, schedule, w)
    pending = np.flatnonzero(values > max_index)
    while pending.size:
        step = encrypt(values[pending], [k[pending] for k in schedule], w[pending])
        values[pending] = step
        pending = pending[step > max_index[pending]]
    return values


def _tabled_walk(index, keys, max_index, rounds) -> np.ndarray:
    """Cycle walking in 16-bit blocks: per distinct (key words, bound), the cipher's
    table over all 2**16 blocks and the walk's end from every block."""
    out = np.empty(index.shape, np.uint64)
    word_mask = np.uint64((1 << _TABLE_WORD_BITS) - 1)
    groups = np.column_stack([keys.astype(np.uint64) & word_mask, max_index])
    unique, which = np.unique(groups, axis=0, return_inverse=True)
    blocks = np.arange(1 << _MIN_BLOCK_BITS, dtype=np.uint64)
    w = np.full(blocks.shape, _TABLE_WORD_BITS, np.uint64)
    for g, (k0, k1, k2, bound) in enumerate(unique):
        key_rows = np.broadcast_to(np.array([k0, k1, k2], np.uint64), (blocks.size, 3))
        cipher = encrypt(blocks, round_keys(key_rows, w, rounds), w).astype(np.intp)
        # stop[b]: the first block in range reached from b (b itself if in range)
        stop = np.where(blocks <= bound, np.arange(blocks.size), cipher)
        for _ in range(_MIN_BLOCK_BITS + 1):
            stop = stop[stop]
        members = np.flatnonzero(which.ravel() == g)
        start = (index[members] & np.uint64((1 << _MIN_BLOCK_BITS) - 1)).astype(np.intp)
        out[members] = stop[cipher[start]]
    return out
