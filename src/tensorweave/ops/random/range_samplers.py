"""TF's range samplers (core/kernels/range_sampler.cc) on Philox words, value for value.

A candidate sampler's kernel call reads the words of its reserved stretch of the op's
Philox stream in order (TF's SimplePhilox over the generator GuardedPhiloxRandom hands
it) and draws classes one after the other, as TF's `RangeSampler`s do:

  * uniform: `Uniform64(range)`, two words (low first) per try, TF's exact modulo
    (tries that would bias `% range` are rejected and drawn again);
  * log-uniform: `int64(exp(RandDouble() * log1p(range))) - 1` (mod range), two words;
  * learned unigram: `Uniform(total weight)` (one word per try, exact modulo), then the
    class whose running weight covers it (TF's WeightedPicker);
  * fixed unigram: Walker's alias table of TF's DistributionSampler: `RandFloat()` (one
    word), then the bucket `Uniform(range)`; the bucket's class if the float is below
    its probability, else its alias.

With `unique`, draws repeating a class are dropped until `num_sampled` classes are
found; `num_tries` counts every draw. The expected counts are TF's float32 arithmetic:
`p * num_sampled` when no draw was dropped, else `-expm1f(num_tries * log1pf(-p))`,
with the C library's float functions (NumPy's float32 ones differ from glibc's in the
last bit for about one value in ten): glibc's algorithms vectorized
(fdlibm_float32.py) where they give this C library's bits, else called through ctypes.

The draws are vectorized: a batch of draws is read at once, and a batch is cut at the
first rejected try (about one in 2**32 / range), whose draw is then made again.
"""
from __future__ import annotations

import functools
import math
from typing import Optional, Tuple

import numpy as np

from tensorweave.ops.random import fdlibm_float32, libm_float32, philox
# philox's word-to-[0, 1) transforms (TF's Uint32ToFloat and Uint64ToDouble)
from tensorweave.ops.random.philox import _unit_float32, _unit_float64

# blocks TF's candidate sampler kernel reserves per sampled class (ReserveSamples32 of
# 2048 words per class: "approximately conservatively" what rejections may need)
BLOCKS_PER_SAMPLE = 512
_MAX_INT32 = 2 ** 31 - 1


# --- the words of one kernel call ---------------------------------------------------------
class WordReader:
    """The words of one kernel call's stream in order, from (key, counter): `peek` shows
    the next ones, `skip` consumes them. Words are drawn a batch of blocks at a time."""

    FIRST_BLOCKS = 64  # the blocks drawn first, and at least at each refill

    def __init__(self, key: philox.Key, counter: philox.Counter,
                 first: Optional[np.ndarray] = None):
        self._key, self._counter = key, counter
        # the words drawn so far, from the first (`first`: those of the first blocks,
        # drawn by the caller)
        self._words = np.empty(0, np.uint32) if first is None else first
        self._next = 0                          # the first word not consumed

    def peek(self, n: int) -> np.ndarray:
        """The next `n` words (uint32), not consumed."""
        missing = self._next + n - self._words.size
        if missing > 0:
            self._draw(max(-(-missing // 4), self.FIRST_BLOCKS, self._words.size // 4))
        return self._words[self._next:self._next + n]

    def skip(self, n: int) -> None:
        """Consumes the next `n` words (already peeked)."""
        self._next += n

    def take(self, n: int) -> np.ndarray:
        """The next `n` words, consumed."""
        out = self.peek(n)
        self.skip(n)
        return out

    def _draw(self, n_blocks: int) -> None:
        start = philox.skip(self._counter, self._words.size // 4)
        drawn = philox.words(self._key, start, n_blocks)
        self._words = np.concatenate([self._words, drawn])


def exact_uniform(words: WordReader, n: int, count: int, width: int,
                  lead: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """`count` draws of TF's ExactUniformInt(n) over `width` words (1: Rand32, 2: Rand64,
    low word first), each try preceded by `lead` words its caller uses.

    A try below `(2**bits - 1) % n + 1` is rejected (it would bias `% n`; none when n is
    a power of two) and the draw made again from the next words, the lead words kept.

    Returns:
      `([count, lead] uint32 lead words, [count] uint64 values in [0, n))`.
    """
    reject_below = 0 if n & (n - 1) == 0 else ((1 << (32 * width)) - 1) % n + 1
    step = lead + width
    leads, values = [], []
    while count:
        block = words.peek(count * step).reshape(count, step)
        bits = block[:, lead].astype(np.uint64)
        if width == 2:
            bits |= block[:, lead + 1].astype(np.uint64) << np.uint64(32)
        rejected = np.flatnonzero(bits < reject_below) if reject_below else ()
        good = int(rejected[0]) if len(rejected) else count
        leads.append(block[:good, :lead])
        values.append(bits[:good] % np.uint64(n))
        words.skip(good * step)
        count -= good
        if count:   # draw `good` was rejected: its lead words stand, its value is redrawn
            leads.append(block[good:good + 1, :lead])
            words.skip(step)
            values.append(exact_uniform(words, n, 1, width)[1])
            count -= 1
    return np.concatenate(leads), np.concatenate(values)


# --- the C library's float functions ----------------------------------------------------
def _libm_float32(name: str, *args: np.ndarray) -> np.ndarray:
    """The float32 function `name` of the C library applied elementwise."""
    function = libm_float32.c_function(name, "c_float", len(args))
    columns = [np.asarray(a, np.float32).ravel().tolist() for a in args]
    out = np.fromiter(map(function, *columns), np.float32, count=len(columns[0]))
    return out.reshape(np.shape(args[0]))


def _map_float64(function, x: np.ndarray) -> np.ndarray:
    """A `math` function (the C library's double one) applied elementwise."""
    return np.fromiter(map(function, x.ravel().tolist()), np.float64,
                       count=x.size).reshape(x.shape)


# from this many values glibc's float functions vectorized (about 25 us for the values
# of a sampler, which take one branch of each function but for a few) beat the C
# library's called once per value (0.2 us each): word2vec's 192 values 33 against 82 us,
# 512 values 43 against 214 us
_VECTORIZED_FROM = 48


def _c_library_function(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's float32 `name` (log1pf or expm1f) of each value of x: glibc's
    algorithm vectorized where it gives the C library's bits, else through ctypes."""
    if x.size >= _VECTORIZED_FROM and fdlibm_float32.agree_with_c_library():
        return getattr(fdlibm_float32, name)(x)
    return _libm_float32(name, x)


def expected_counts(p: np.ndarray, num_sampled: int, num_tries: int,
                    log1p_neg: Optional[np.ndarray] = None) -> np.ndarray:
    """TF's ExpectedCountHelper of float32 probabilities `p`: `p * num_sampled` when
    every try was kept, else `1 - (1 - p) ** num_tries` as `-expm1f(tries * log1pf(-p))`,
    all in float32. `log1p_neg`: `log1pf(-p)` where the caller has it."""
    p = np.asarray(p, np.float32)
    if num_tries == num_sampled:
        return p * np.float32(num_sampled)
    if log1p_neg is None:
        log1p_neg = _c_library_function("log1pf", -p)
    return -_c_library_function("expm1f", np.float32(num_tries) * log1p_neg)


# --- the samplers ------------------------------------------------------------------------
class UniformSampler:
    """Every class of [0, range) with probability `float(1 / range)`."""

    def __init__(self, range_max: int):
        self.range = range_max

    def sample(self, words: WordReader, count: int) -> np.ndarray:
        return exact_uniform(words, self.range, count, 2)[1].astype(np.int64)

    def probability(self, classes: np.ndarray) -> np.ndarray:
        return np.full(classes.shape, 1.0 / self.range, np.float32)

    def log1p_neg(self, classes: np.ndarray) -> Optional[np.ndarray]:
        """log1pf(-p) of each class (one value for all)."""
        p = np.float32(1.0 / self.range)
        return np.full(classes.shape, _libm_float32("log1pf", -p), np.float32)


class LogUniformSampler:
    """Class k of [0, range) with probability `log((k + 2) / (k + 1)) / log(range + 1)`."""

    def __init__(self, range_max: int):
        self.range = range_max
        self._log_range = math.log1p(range_max)

    def sample(self, words: WordReader, count: int) -> np.ndarray:
        w = words.take(2 * count)
        scaled = _unit_float64(w[0::2], w[1::2]) * self._log_range
        # the C library's exp (NumPy's may differ in the last bit, moving an integer)
        value = _map_float64(math.exp, scaled).astype(np.int64) - 1
        return value % self.range

    def probability(self, classes: np.ndarray) -> np.ndarray:
        if self.range <= _TABLE_MOST:
            return _log_uniform_probabilities(self.range)[classes]
        return _log_uniform_probability(classes.astype(np.float64), self.range)

    def log1p_neg(self, classes: np.ndarray) -> Optional[np.ndarray]:
        """log1pf(-p) of each class, looked up (None above _TABLE_MOST classes)."""
        if self.range <= _TABLE_MOST:
            return _log_uniform_log1p_neg(self.range)[classes]
        return None


def _log_uniform_probability(k: np.ndarray, range_max: int) -> np.ndarray:
    """float32 `log((k + 2) / (k + 1)) / log(range_max + 1)` of the float64 classes `k`,
    with the C library's log (NumPy's may differ in the last bit)."""
    return (_map_float64(math.log, (k + 2.0) / (k + 1.0)) / math.log1p(range_max)).astype(
        np.float32)


# ranges up to which every class's probability is computed once and looked up (a step of
# word2vec's sampler asks for 192 of them: 10 us a call, against 4 ms once for 50,000)
_TABLE_MOST = 1 << 20


@functools.lru_cache(maxsize=4)
def _log_uniform_probabilities(range_max: int) -> np.ndarray:
    table = _log_uniform_probability(np.arange(range_max, dtype=np.float64), range_max)
    table.setflags(write=False)
    return table


# and `log1pf(-p)` of each, the expected counts' per-class part (word2vec's 192 values:
# 17 us a call)
@functools.lru_cache(maxsize=4)
def _log_uniform_log1p_neg(range_max: int) -> np.ndarray:
    table = _c_library_function("log1pf", -_log_uniform_probabilities(range_max))
    table.setflags(write=False)
    return table


class UnigramSampler:
    """Classes by integer weights (TF's WeightedPicker; the learned unigram sampler's
    weights start at 1 and gain 1 per true class seen)."""

    def __init__(self, weights: np.ndarray):
        self.range = weights.size
        self._weights = weights
        self._running = np.cumsum(weights)
        self._total = int(self._running[-1])

    def sample(self, words: WordReader, count: int) -> np.ndarray:
        picks = exact_uniform(words, self._total, count, 1)[1].astype(np.int64)
        return np.searchsorted(self._running, picks, side="right").astype(np.int64)

    def probability(self, classes: np.ndarray) -> np.ndarray:
        # float(weight) / total, the total converted to float as TF's int32
        return self._weights[classes].astype(np.float32) / np.float32(self._total)


def learned_update(weights: np.ndarray, true_classes: np.ndarray) -> None:
    """Adds 1 to the weight of each true class in order, as TF's Update: only as many as
    keep the total weight within int32."""
    room = max(_MAX_INT32 - int(weights.sum()), 0)
    np.add.at(weights, true_classes.ravel()[:room], 1)


class FixedUnigramSampler:
    """Classes by float32 weights through TF's alias table (DistributionSampler)."""

    def __init__(self, weights: np.ndarray):
        self.range = weights.size
        self._weights = weights
        self._total = np.cumsum(weights, dtype=np.float32)[-1]   # float, summed in order
        self._prob, self._alias = _alias_table(weights)
        self.positive = int(np.count_nonzero(weights > 0))

    def sample(self, words: WordReader, count: int) -> np.ndarray:
        lead, bucket = exact_uniform(words, self.range, count, 1, lead=1)
        bucket = bucket.astype(np.intp)
        below = _unit_float32(lead[:, 0]) < self._prob[bucket]
        return np.where(below, bucket, self._alias[bucket]).astype(np.int64)

    def probability(self, classes: np.ndarray) -> np.ndarray:
        inside = (classes >= 0) & (classes < self.range)
        weight = self._weights[np.where(inside, classes, 0)]
        return np.where(inside, weight / self._total, np.float32(0))


def _alias_table(weights: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """TF's DistributionSampler table of float32 `weights`: (float32 probability of each
    bucket's own class, its alias). Buckets of probability below 1 (the stack `low`) take
    the rest from the last bucket above 1 (`high`), in TF's stack order; buckets left on
    either stack at the end keep themselves with probability 1."""
    n = weights.size
    total = float(np.cumsum(weights, dtype=np.float64)[-1])
    # weight * n is a float product, then divided in double
    share = ((weights * np.float32(n)).astype(np.float64) / total).tolist()
    alias = [-1] * n
    low = [i for i, p in enumerate(share) if p < 1.0]
    high = [i for i, p in enumerate(share) if not p < 1.0]
    while high and low:
        small, large = low.pop(), high.pop()
        alias[small] = large
        share[large] -= 1.0 - share[small]
        (low if share[large] < 1.0 else high).append(large)
    prob = np.array(share).astype(np.float32)
    for idx in high + low:
        prob[idx], alias[idx] = 1.0, idx
    return prob, np.array(alias, np.intp)


def fixed_unigram_weights(counts: np.ndarray, distortion: float, num_reserved_ids: int,
                          num_shards: int, shard: int) -> np.ndarray:
    """TF's FixedUnigramSampler weights (float32): a 0 for each reserved id of this shard,
    then `powf(count, distortion)` of the counts whose id is in the shard. As TF does,
    the counts' ids start at the number of reserved ids the shard kept."""
    n_reserved = int(np.count_nonzero(np.arange(num_reserved_ids) % num_shards == shard))
    ids = n_reserved + np.arange(len(counts))
    kept = np.asarray(counts, np.float32)[ids % num_shards == shard]
    powered = _libm_float32("powf", kept, np.full(kept.shape, distortion, np.float32))
    return np.concatenate([np.zeros(n_reserved, np.float32), powered])


# --- one batch ---------------------------------------------------------------------------
def sample_batch(sampler, words: WordReader, num_sampled: int, unique: bool,
                 true_classes: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TF's SampleBatchGetExpectedCount: the sampled classes, the expected counts of the
    true classes and of the sampled ones."""
    if unique:
        sampled, tries = _unique_draws(sampler, words, num_sampled)
    else:
        sampled, tries = sampler.sample(words, num_sampled), num_sampled
    # both sets of counts in one pass: each call of the float functions has a fixed cost
    n_true = true_classes.size
    classes = np.concatenate([true_classes, sampled])
    # samplers of fixed probabilities look up log1pf(-p) (`log1p_neg`); the learned and
    # fixed unigram ones have none, the counts compute it
    lookup = getattr(sampler, "log1p_neg", None)
    counts = expected_counts(sampler.probability(classes), num_sampled, tries,
                             lookup(classes) if lookup and tries != num_sampled else None)
    return sampled, counts[:n_true], counts[n_true:]


def _unique_draws(sampler, words: WordReader, num_sampled: int) -> Tuple[np.ndarray, int]:
    """The first `num_sampled` distinct classes of the draws and the number of draws it
    took. Draws are made in growing batches; those past the last one kept are unused
    (TF's next call starts at its reserved offset whatever this one read)."""
    if num_sampled == 0:
        return np.zeros(0, np.int64), 0
    draws = sampler.sample(words, max(2 * num_sampled, 64))
    while True:
        _, first = np.unique(draws, return_index=True)
        if first.size >= num_sampled:
            first = np.sort(first)[:num_sampled]
            return draws[first], int(first[-1]) + 1
        draws = np.concatenate([draws, sampler.sample(words, draws.size)])
