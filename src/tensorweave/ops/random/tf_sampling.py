"""TF's samplers built on Philox words: RandomShuffle's permutation and the Multinomial
kernels' categorical draws, bit for bit.

RandomShuffle is TF's Fisher-Yates: step i (0 <= i < n - 1) swaps position i with
position `i + w_i % (n - i)`, `w_i` the i-th word of the stream. The steps are
sequential; `fisher_yates` finds where each value ends without a Python loop (below).

Multinomial draws each sample from two words (TF's SimplePhilox `RandDouble`) and
searches the row's running, unnormalized sum of `exp(logit - max)` in float64 for
`u * total`. TF's kernel splits the rows over its intra-op threads (`Shard`), and each
shard starts its words afresh at block `first_row * (num_samples + 3) / 4`, so the
values depend on that split: `shards` computes it as TF (Eigen's `parallelFor`) does.
The exponential is NumPy's, TF's Eigen's: where the two differ in the last bit, a draw
differs only if it falls within that bit of a class boundary (about 2**-52 a draw).
"""
from __future__ import annotations

import math
import os
from typing import List, Tuple

import numpy as np

from tensorweave.ops.random import philox


# --- RandomShuffle ---------------------------------------------------------------------------
def shuffle_targets(words: np.ndarray, n: int) -> np.ndarray:
    """The positions `i + w_i % (n - i)` that TF's Fisher-Yates swaps with positions
    0..n-2, from its n - 1 words (the modulo taken in uint32, as TF's; n < 2**32)."""
    remaining = np.arange(n, 1, -1, dtype=np.uint32)
    return (words[:n - 1] % remaining).astype(np.intp) + np.arange(n - 1)


def fisher_yates(targets: np.ndarray, n: int) -> np.ndarray:
    """The permutation left by swapping position i with `targets[i]` (>= i) for
    i = 0..n-2 in order, from the identity: `out[i]` is the index that ends at i.

    Step i fixes position i to the value then at `targets[i]`. That position last
    received, at the latest earlier step k with the same target, the value then at
    position k; if no step wrote it, it still holds `targets[i]`. "The value at position
    k before step k" follows the same rule (the latest step m < k with target k), so it
    is the end of a chain k -> m -> ...; the chains are followed for every k at once by
    pointer doubling."""
    steps = n - 1
    index = np.arange(steps)
    earlier_same = _earlier_same_target(targets, n)
    writer = np.full(n, -1, dtype=np.intp)   # the latest step writing each position
    np.maximum.at(writer, targets, index)
    in_place = targets == index              # a step's own position: its earlier writer
    writer[:steps][in_place] = earlier_same[in_place]
    origin = np.where(writer < 0, np.arange(n), writer)
    while True:
        further = origin[origin]
        if np.array_equal(further, origin):
            break
        origin = further
    out = np.empty(n, dtype=np.intp)
    out[:steps] = np.where(earlier_same >= 0, origin[earlier_same], targets)
    out[steps] = origin[steps]
    return out


def _earlier_same_target(targets: np.ndarray, n: int) -> np.ndarray:
    """For each step, the latest earlier step with the same target (-1: none). Found by
    peeling: each round takes the latest step of each target among those left, whose
    answer is the latest of the next round (a sort would cost 3x more)."""
    earlier = np.full(targets.size, -1, dtype=np.intp)
    latest = np.full(n, -1, dtype=np.intp)
    left, peeled = np.arange(targets.size), np.arange(0)
    while left.size or peeled.size:
        left_targets = targets[left]
        np.maximum.at(latest, left_targets, left)
        earlier[peeled] = latest[targets[peeled]]
        is_latest = latest[left_targets] == left
        latest[left_targets] = -1
        peeled, left = left[is_latest], left[~is_latest]
    return earlier


def shuffle_blocks(n: int) -> int:
    """Blocks RandomShuffle reserves for `n` rows: one word per step (ReserveSamples32)."""
    return -(-(n - 1) // 4)


def shuffle_permutation(key: philox.Key, counter: philox.Counter, n: int) -> np.ndarray:
    """TF's RandomShuffle permutation of `n` >= 2 rows from the stream (key, counter)."""
    words = philox.words(key, counter, shuffle_blocks(n))
    return fisher_yates(shuffle_targets(words, n), n)


# --- Multinomial -----------------------------------------------------------------------------
def multinomial_outputs(batch: int, num_samples: int) -> int:
    """Outputs (of 256 blocks each) the stateful Multinomial reserves: two words per
    sample, the samples of a row rounded up to 4."""
    return batch * (-(-num_samples // 4) * 4) * 2


def categorical(key: philox.Key, counter: philox.Counter, logits: np.ndarray,
                num_samples: int, num_threads: int, out_dtype) -> np.ndarray:
    """TF's Multinomial samples `[batch, num_samples]` of the rows of `logits` from the
    stream (key, counter) when its kernel runs on `num_threads` intra-op threads.

    A non-finite logit has probability 0; a row with none finite draws num_classes."""
    batch, classes = logits.shape
    cdf = _running_sums(logits)
    draws = np.empty((batch, num_samples), dtype=np.float64)
    for start, limit in shards(batch, _multinomial_cost(num_samples, classes), num_threads):
        # a shard's doubles are TF's float64 uniforms of its stream (two words each)
        shard_counter = philox.skip(counter, start * (num_samples + 3) // 4)
        draws[start:limit] = philox.uniform(key, shard_counter, (limit - start) * num_samples,
                                            np.float64).reshape(limit - start, num_samples)
    draws *= cdf[:, -1:]
    return _upper_bound(cdf, draws).astype(out_dtype, copy=False)


def categorical_of_seeds(logits: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """For each seed pair of `seeds` [n, 2], the class TF's StatelessMultinomial of the
    one row `logits` [classes] draws (one sample): [n] int64."""
    sums = _running_sums(logits[None, :])[0]
    draws = philox.stateless_first_doubles(seeds) * sums[-1]
    return np.searchsorted(sums, draws, side="right").astype(np.int64)


def _running_sums(logits: np.ndarray) -> np.ndarray:
    """[batch, classes] float64: each row's running sum of `exp(logit - max)` over its
    finite logits (the max taken among them in the logits' type), summed in order."""
    values = logits.astype(np.float64)   # exact: the max is the same in either type
    finite = np.isfinite(values)
    if finite.all():   # the usual case needs no masking
        probs = np.exp(values - values.max(axis=1, keepdims=True))
    else:
        top = np.max(np.where(finite, values, -np.inf), axis=1, keepdims=True)
        top[np.isinf(top)] = 0.0   # no finite logit: every probability is 0 anyway
        with np.errstate(invalid="ignore", over="ignore"):
            probs = np.exp(values - top)
        probs[~finite] = 0.0
    return np.cumsum(probs, axis=1, out=probs)   # sequential, as TF's running total


def _upper_bound(cdf: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """For each draw of row r, how many of `cdf[r]` (ascending) are <= it (what
    `std::upper_bound` finds): a binary search run for all draws at once, over rows
    padded with +inf to a power of two wide (so no probe leaves its row)."""
    batch, classes = cdf.shape
    width = 1 << classes.bit_length()   # > classes: the answer `classes` is reachable
    padded = np.full((batch, width), np.inf)
    padded[:, :classes] = cdf
    flat = padded.ravel()
    row_start = (np.arange(batch) * width - 1)[:, None]   # -1: probe at found + step - 1
    found = np.zeros(draws.shape, dtype=np.intp)
    step = width >> 1
    while step:
        probe = flat[found + (row_start + step)]
        found += (probe <= draws) * step
        step >>= 1
    return found


def _multinomial_cost(num_samples: int, classes: int) -> int:
    """TF's estimate of a row's cycles, which decides the split over threads."""
    return int(50 * (num_samples * math.log(classes) / math.log(2) + classes))


# --- TF's Shard over the intra-op threads (Eigen's parallelFor) ------------------------------
_STARTUP_CYCLES = 100000
_PER_THREAD_CYCLES = 100000
_TASK_CYCLES = 40000
_MAX_OVERSHARDING = 4


def shards(total: int, cost_per_unit: int, num_threads: int) -> List[Tuple[int, int]]:
    """The [start, limit) ranges TF's `Shard` splits `total` units into on `num_threads`
    intra-op threads (Eigen's ThreadPoolDevice::parallelFor and its cost model)."""
    if total <= 0:
        return []
    cost = float(total) * cost_per_unit
    wanted = int(min((cost - _STARTUP_CYCLES) / _PER_THREAD_CYCLES + 0.9, 2 ** 31 - 1))
    if num_threads <= 1 or total == 1 or min(num_threads, max(1, wanted)) == 1:
        return [(0, total)]
    size = _block_size(total, cost_per_unit, num_threads)
    return [(start, min(total, start + size)) for start in range(0, total, size)]


def _block_size(n: int, cost_per_unit: int, threads: int) -> int:
    """Eigen's parallelFor block size: about `40000 / cost` units, at least a quarter of
    a thread's share, then grown (up to twice) while the blocks fill the threads no
    worse."""
    size = min(n, max(-(-n // (_MAX_OVERSHARDING * threads)),
                      int(_TASK_CYCLES / cost_per_unit) if cost_per_unit else n))
    largest = min(n, 2 * size)
    count = -(-n // size)
    best = count / (-(-count // threads) * threads)
    previous = count
    while best < 1.0 and previous > 1:
        coarser = -(-n // (previous - 1))
        if coarser > largest:
            break
        coarser_count = -(-n // coarser)
        previous = coarser_count
        efficiency = coarser_count / (-(-coarser_count // threads) * threads)
        if efficiency + 0.01 >= best:
            size = coarser
            best = max(best, efficiency)
    return size


def intra_op_threads(session) -> int:
    """TF's intra-op thread count of a session: its ConfigProto's, else the environment's
    TF_NUM_INTRAOP_THREADS, else the CPU cores this process may run on."""
    config = getattr(session, "_config", None)
    threads = int(getattr(config, "intra_op_parallelism_threads", 0) or 0)
    if threads <= 0:
        threads = int(os.environ.get("TF_NUM_INTRAOP_THREADS", "0") or 0)
    if threads <= 0:
        try:
            threads = len(os.sched_getaffinity(0))
        except AttributeError:   # no affinity on this platform
            threads = os.cpu_count() or 1
    return max(threads, 1)
