"""TensorFlow's values of its rejection-sampled distributions: gamma, Poisson, binomial
and the parameterized truncated normal.

TF's gamma, Poisson and binomial CPU kernels give each output value its own Philox
stream: output i (in the kernel's order) starts at block `counter + 256 * i` (binomial
inversion: `42 * i`) and reads whole blocks in order, each block turned into two float64
normals (Box-Muller on words 0-3) or two float64 uniforms (words 0-1 and 2-3), handed
out last first. A value uses as many blocks as its rejection loop needs, so the values
do not depend on TF's sharding. Here all outputs run their loops together, vectorized:
each step draws the next block of the outputs that need one.

The parameterized truncated normal instead gives each shard of TF's split of the
outputs over its threads one stream, read in order by the shard's outputs one after
another (in the op's type, four float32/half or two float64 values a block): it runs
as a scalar loop per shard.

The functions whose last bit can decide a sample (log, log1p, pow, lgamma, exp, expf)
are glibc's, through `math`, ctypes or `libm_float32` (NumPy's SIMD versions, and
CPython's lgamma, may differ by an ulp).
"""
from __future__ import annotations

import math

from typing import Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.ops.random import libm_float32, philox

# blocks reserved per output value (TF's kReservedSamplesPerOutput)
_RESERVED = philox.SKIP_PER_OUTPUT


def libm(fn, x: np.ndarray, fallback) -> np.ndarray:
    """`fn` (a `math` function of one float) applied to each value of float64 `x`;
    `fallback` (NumPy's) where `math` raises (log(0), log of a negative, overflow)."""
    try:
        return np.fromiter(map(fn, x.tolist()), dtype=np.float64, count=x.size)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            out = fallback(x)
        fine = np.isfinite(out) & (out != 0)
        out[fine] = np.fromiter(map(fn, x[fine].tolist()), dtype=np.float64)
        return out


class _PairReader:
    """Per-output float64 pairs drawn from whole blocks, handed out last first (TF's
    `if (remaining == 0) { refill } remaining--; x = result[remaining]`).

    Every reader of a kernel shares the outputs' block cursors (`next_block`), as TF's
    normal and uniform distributions share one generator per output."""

    def __init__(self, transform, n: int):
        self._transform = transform          # blocks [m, 4] -> pairs [m, 2]
        self._pairs = np.zeros((n, 2))
        self._remaining = np.zeros(n, np.int8)

    def take(self, idx: np.ndarray, stream: "_OutputStreams") -> np.ndarray:
        """The next value of each output in `idx` (int array of output indices)."""
        empty = idx[self._remaining[idx] == 0]
        if empty.size:
            self._pairs[empty] = self._transform(stream.next_blocks(empty))
            self._remaining[empty] = 2
        self._remaining[idx] -= 1
        return self._pairs[idx, self._remaining[idx]]


class _OutputStreams:
    """The Philox streams of outputs `0..n-1`: output i's block j is at
    `counter + first_block[i] + j` (`first_block` 256 * i unless given)."""

    def __init__(self, key: philox.Key, counter: philox.Counter, n: int,
                 first_block: Optional[np.ndarray] = None):
        self._key, self._counter = key, counter
        if first_block is None:
            first_block = np.arange(n, dtype=np.uint64) * np.uint64(_RESERVED)
        self._base = first_block.astype(np.uint64)
        self._used = np.zeros(n, np.uint64)

    def next_blocks(self, idx: np.ndarray) -> np.ndarray:
        """The next block `[len(idx), 4]` of each output in `idx`."""
        out = philox.blocks(self._key, self._counter, self._base[idx] + self._used[idx])
        self._used[idx] += np.uint64(1)
        return out


def from_float64(x: np.ndarray, np_dtype) -> np.ndarray:
    """TF's `static_cast<T>(double)` of the samples: to half through float (as Eigen's
    half converts), to integers by truncation."""
    if np_dtype == np.float16:
        x = x.astype(np.float32)
    return x.astype(np_dtype, copy=False)


def _normal_pairs(block: np.ndarray) -> np.ndarray:
    return philox._box_muller_float64(*block.T)


def _uniform_pairs(block: np.ndarray) -> np.ndarray:
    return np.stack([philox._unit_float64(block[:, 0], block[:, 1]),
                     philox._unit_float64(block[:, 2], block[:, 3])], axis=-1)


# --- gamma ---------------------------------------------------------------------------------
def gamma(key: philox.Key, counter: philox.Counter, alpha: np.ndarray,
          num_samples: int) -> np.ndarray:
    """TF's RandomGamma values: `[num_samples, alpha.size]` float64 Gamma(alpha, 1)
    samples, sample s of alpha a being output `a * num_samples + s` of the stream.

    alpha == 1 draws an exponential `-log1p(-u)` from one uniform; other alphas use
    Marsaglia and Tsang's transformation-rejection with d = alpha - 1/3, and for
    alpha < 1 the boost: d = alpha + 2/3 and the sample times `b ** (1 / alpha)`."""
    alpha = np.asarray(alpha, np.float64).ravel()
    per_output = np.repeat(alpha, num_samples)
    n = per_output.size
    stream = _OutputStreams(key, counter, n)
    uniform = _PairReader(_uniform_pairs, n)
    out = np.empty(n)
    is_exp = per_output == 1.0
    exp_idx = np.flatnonzero(is_exp)
    out[exp_idx] = -libm(math.log1p, -uniform.take(exp_idx, stream), np.log1p)
    rest = np.flatnonzero(~is_exp)
    out[rest] = _marsaglia_tsang(per_output, rest, stream, uniform)
    return out.reshape(alpha.size, num_samples).T


def _marsaglia_tsang(alpha: np.ndarray, idx: np.ndarray, stream: _OutputStreams,
                     uniform: _PairReader) -> np.ndarray:
    """The samples of outputs `idx` (alpha != 1), in the order of `idx`."""
    normal = _PairReader(_normal_pairs, alpha.size)
    a = alpha[idx]
    boosted = a < 1
    d = a + np.where(boosted, 2.0 / 3, -1.0 / 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = 1.0 / 3 / np.sqrt(d)
    result = np.full(idx.size, np.nan)
    active = np.arange(idx.size)
    while active.size:
        x = normal.take(idx[active], stream)
        v = 1 + c[active] * x
        positive = ~(v <= 0)   # the others try again (a NaN v goes on, as in TF)
        tried, x, v = active[positive], x[positive], v[positive]
        v = v * v * v
        u = uniform.take(idx[tried], stream)
        accepted = _accepts(u, x, v, d[tried])
        done, v = tried[accepted], v[accepted]
        result[done] = d[done] * v
        boost = done[boosted[done]]
        if boost.size:
            b = uniform.take(idx[boost], stream)
            with np.errstate(divide="ignore"):
                result[boost] *= _pow(b, 1 / a[boost])
        active = np.setdiff1d(active, done, assume_unique=True)
    return result


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """glibc's pow of each pair (NumPy's where `math` raises: 0 to a negative power)."""
    try:
        return np.fromiter(map(math.pow, x.tolist(), y.tolist()), np.float64, count=x.size)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return np.power(x, y)


def _accepts(u: np.ndarray, x: np.ndarray, v: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Marsaglia and Tsang's test: the squeeze, else the log inequality (its logs
    taken only where the squeeze fails, as TF's short circuit)."""
    x2 = x * x
    accepted = u < 1 - 0.0331 * x2 * x2
    rest = np.flatnonzero(~accepted)
    if rest.size:
        with np.errstate(invalid="ignore", divide="ignore"):
            vr = v[rest]
            log_v = libm(math.log, vr, np.log)
            accepted[rest] = libm(math.log, u[rest], np.log) < \
                0.5 * x[rest] * x[rest] + d[rest] * (1 - vr + log_v)
    return accepted


# --- Poisson -------------------------------------------------------------------------------
def _lgamma():
    """glibc's lgamma (CPython's `math.lgamma` is its own, which differs in last bits)."""
    return libm_float32.c_function("lgamma", "c_double", 1) or math.lgamma


def poisson(key: philox.Key, counter: philox.Counter, rate: np.ndarray,
            num_samples: int) -> np.ndarray:
    """TF's RandomPoissonV2 values: `[num_samples, rate.size]` float64 counts, sample s
    of rate r being output `r * num_samples + s` of the stream.

    A rate below 10 (a negative or zero one included: it gives 0) counts uniforms
    until their product falls to exp(-rate) (Knuth); +inf gives inf; other rates use
    Hormann's transformed rejection from pairs of uniforms."""
    rate = np.asarray(rate, np.float64).ravel()
    per_output = np.repeat(rate, num_samples)
    stream = _OutputStreams(key, counter, per_output.size)
    uniform = _PairReader(_uniform_pairs, per_output.size)
    out = np.empty(per_output.size)
    small = np.flatnonzero(per_output < 10)
    out[small] = _knuth(per_output[small], small, stream, uniform)
    infinite = np.isposinf(per_output)
    out[infinite] = np.inf
    large = np.flatnonzero(~(per_output < 10) & ~infinite)
    out[large] = _hormann(per_output[large], large, stream, uniform)
    return out.reshape(rate.size, num_samples).T


def _knuth(rate: np.ndarray, idx: np.ndarray, stream: _OutputStreams,
           uniform: _PairReader) -> np.ndarray:
    """The number of uniforms multiplied before their product is <= exp(-rate), less 1."""
    exp_neg_rate = libm(math.exp, -rate, np.exp)
    prod = np.ones(idx.size)
    count = np.zeros(idx.size)
    active = np.arange(idx.size)
    while active.size:
        prod[active] *= uniform.take(idx[active], stream)
        below = prod[active] <= exp_neg_rate[active]
        active = active[~below]
        count[active] += 1
    return count


def _hormann(rate: np.ndarray, idx: np.ndarray, stream: _OutputStreams,
             uniform: _PairReader) -> np.ndarray:
    """Hormann's transformed rejection (PTRS) for rates >= 10 (and NaN)."""
    log_rate = libm(math.log, rate, np.log)
    b = 0.931 + 2.53 * np.sqrt(rate)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    result = np.full(idx.size, np.nan)
    active = np.arange(idx.size)
    while active.size:
        u = uniform.take(idx[active], stream) - 0.5
        v = uniform.take(idx[active], stream)
        ai, bi = a[active], b[active]
        u_shifted = 0.5 - np.abs(u)
        k = np.floor((2 * ai / u_shifted + bi) * u + rate[active] + 0.43)
        accepted = (u_shifted >= 0.07) & (v <= v_r[active])
        tested = ~accepted & ~((k < 0) | ((u_shifted < 0.013) & (v > u_shifted)))
        if tested.any():
            accepted[tested] = _hormann_test(
                v[tested], u_shifted[tested], k[tested], ai[tested], bi[tested],
                inv_alpha[active[tested]], rate[active[tested]], log_rate[active[tested]])
        result[active[accepted]] = k[accepted]
        active = active[~accepted]
    return result


def _hormann_test(v, u_shifted, k, a, b, inv_alpha, rate, log_rate) -> np.ndarray:
    """Step 2 of the transformed rejection: log(v * alpha^-1 / G'(u)) <= log f(k)."""
    with np.errstate(all="ignore"):
        s = libm(math.log, v * inv_alpha / (a / (u_shifted * u_shifted) + b), np.log)
        lgamma = np.fromiter(map(_lgamma(), (k + 1).tolist()), np.float64, count=k.size)
        t = -rate + k * log_rate - lgamma
    return s <= t


# --- binomial ------------------------------------------------------------------------------
# log(k!) less its Stirling approximation, for k = 0..9 (TF's table)
_STIRLING_TAIL = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                           0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                           0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                           0.00833056343336287])
_INVERSION_BLOCKS = 42   # TF's reservation per binomial-inversion output


def binomial(key: philox.Key, counter: philox.Counter, counts: np.ndarray,
             probs: np.ndarray, samples_per_batch: int) -> np.ndarray:
    """TF's StatelessRandomBinomial values: `[samples_per_batch, counts.size]` float64
    draws of Binomial(counts, probs), sample s of parameter b being output
    `b * samples_per_batch + s`.

    `counts` and `probs` (same shape) are of the op's parameter type, in which TF
    chooses the method: with p the smaller of prob and 1 - prob (the draw then
    mirrored), count * p >= 10 uses Hormann's BTRS, else the inversion by geometric
    waiting times. count <= 0 or prob <= 0 gives 0, prob >= 1 gives count, NaN NaN."""
    counts, probs = counts.ravel(), probs.ravel()
    one = probs.dtype.type(1)
    with np.errstate(all="ignore"):
        mirrored = probs > probs.dtype.type(0.5)
        p_small = np.where(mirrored, one - probs, probs)
        use_btrs = counts * p_small >= probs.dtype.type(10)
    count = np.repeat(counts.astype(np.float64), samples_per_batch)
    p = np.repeat(p_small.astype(np.float64), samples_per_batch)
    output = np.arange(count.size, dtype=np.uint64)
    btrs = np.repeat(use_btrs, samples_per_batch)
    first_block = np.where(btrs, output * np.uint64(_RESERVED),
                           output * np.uint64(_INVERSION_BLOCKS))
    stream = _OutputStreams(key, counter, count.size, first_block)
    uniform = _PairReader(_uniform_pairs, count.size)
    prob = np.repeat(probs.astype(np.float64), samples_per_batch)
    out = np.full(count.size, np.nan)
    out[(count <= 0) | (prob <= 0)] = 0
    certain = (prob >= 1) & ~(count <= 0)
    out[certain] = count[certain]
    drawn = ~(count <= 0) & (prob > 0) & (prob < 1)
    for method, chosen in ((_btrs, drawn & btrs), (_inversion, drawn & ~btrs)):
        idx = np.flatnonzero(chosen)
        out[idx] = method(count[idx], p[idx], idx, stream, uniform)
    mirror = drawn & np.repeat(mirrored, samples_per_batch)
    out[mirror] = count[mirror] - out[mirror]
    return out.reshape(counts.size, samples_per_batch).T


def _inversion(count, p, idx, stream: _OutputStreams, uniform: _PairReader) -> np.ndarray:
    """The number of geometric(p) waiting times whose sum stays within count."""
    log_q = libm(math.log1p, -p, np.log1p)
    total = np.zeros(idx.size)
    result = np.zeros(idx.size)
    active = np.arange(idx.size)
    while active.size:
        u = uniform.take(idx[active], stream)
        with np.errstate(divide="ignore"):
            total[active] += np.ceil(libm(math.log, u, np.log) / log_q[active])
        over = total[active] > count[active]
        active = active[~over]
        result[active] += 1
    return result


def _btrs(count, p, idx, stream: _OutputStreams, uniform: _PairReader) -> np.ndarray:
    """Hormann's transformed rejection with squeeze (BTRS), TF's variant of its test."""
    stddev = np.sqrt(count * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = count * p + 0.5
    v_r = 0.92 - 4.2 / b
    result = np.full(idx.size, np.nan)
    active = np.arange(idx.size)
    while active.size:
        u = uniform.take(idx[active], stream)
        v = uniform.take(idx[active], stream)
        u = u - 0.5
        us = 0.5 - np.abs(u)
        k = np.floor((2 * a[active] / us + b[active]) * u + c[active])
        accepted = (us >= 0.07) & (v <= v_r[active])
        tested = ~accepted & ~((k < 0) | (k > count[active]))
        if tested.any():
            t = active[tested]
            accepted[tested] = _btrs_test(v[tested], us[tested], k[tested], count[t],
                                          p[t], a[t], b[t], stddev[t])
        result[active[accepted]] = k[accepted]
        active = active[~accepted]
    return result


def _btrs_test(v, us, k, count, p, a, b, stddev) -> np.ndarray:
    """log(v * alpha / G'(u)) against the bound of log f(k) / f(m) (Stirling's tails)."""
    r = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * stddev
    m = np.floor((count + 1) * p)
    with np.errstate(all="ignore"):
        lhs = libm(math.log, v * alpha / (a / (us * us) + b), np.log)
        bound = ((m + 0.5) * libm(math.log, (m + 1) / (r * (count - m + 1)), np.log)
                 + (count + 1) * libm(math.log, (count - m + 1) / (count - k + 1), np.log)
                 + (k + 0.5) * libm(math.log, r * (count - k + 1) / (k + 1), np.log)
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
    return lhs <= bound


def _stirling_tail(k: np.ndarray) -> np.ndarray:
    """TF's stirling_approx_tail: the table up to 9, the series beyond."""
    small = k <= 9
    kp1sq = (k + 1) * (k + 1)
    out = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    out[small] = _STIRLING_TAIL[k[small].astype(np.intp)]
    return out


# --- parameterized truncated normal --------------------------------------------------------
# TF's limit on consecutive rejections, which also sizes each shard's share of the stream
_MAX_ITERATIONS = 1000
# the normal-rejection sampler is used when a bound lies this many stddevs beyond the mean
_RANDN_STDDEVS = 1.3


class _TypedMath:
    """TF's scalar arithmetic in the op's type T (NumPy scalars of T, whose float16
    operations round a float32 result as Eigen's half does): exp and log are glibc's
    (expf/logf for float32 and half, as TF's Eigen calls them), and the samples come
    from whole blocks: four float32 or half values a block, two float64 ones."""

    def __init__(self, np_dtype):
        self.t = np.dtype(np_dtype).type
        self.is_double = self.t is np.float64
        self.per_block = 2 if self.is_double else 4

    def exp(self, x):
        if self.is_double:
            try:
                return math.exp(x)
            except OverflowError:
                return math.inf
        return self.t(_expf(float(x)))

    def log(self, x):
        if not x > 0:
            return self.t(-np.inf) if x == 0 else self.t(np.nan)
        if self.is_double:
            return math.log(x)
        return self.t(libm_float32.logf(np.array([x], np.float32))[0])

    def uniform(self, stream: philox.WordStream) -> list:
        words = stream.take(4)
        if self.is_double:
            return philox._unit_float64(words[0::2], words[1::2]).tolist()
        if self.t is np.float16:
            return list(philox._unit_16bit(words, np.dtype(np.float16), 10, 0x3C00))
        return list(philox._unit_float32(words))

    def normal(self, stream: philox.WordStream) -> list:
        block = stream.take(4)[None]
        if self.is_double:
            return philox._normal_pairs(block, np.dtype(np.float64))[0].tolist()
        return list(philox._normal_pairs(block, np.dtype(np.float32))[0].astype(self.t))


def _expf(x: float) -> float:
    """glibc's expf (TF's Eigen calls the C library's for a scalar float)."""
    fn = libm_float32.c_function("expf", "c_float", 1)
    return fn(x) if fn is not None else float(np.exp(np.float32(x)))


# TF's cost estimate of one output (cycles: a batch's set-up and two rounds of the uniform
# sampler, summed from Eigen's op costs), which decides the split over threads. The sums
# depend on Eigen's build; these are the values within the ranges that reproduce TF
# 2.21's splits (float32: 186-189, float64: 257-258, half: 212-216 at 4 threads).
_TRUNCATED_NORMAL_COST = {np.dtype(np.float16): 214, np.dtype(np.float32): 187,
                          np.dtype(np.float64): 258}


def truncated_normal_cost(np_dtype) -> int:
    """TF's cost estimate of one parameterized truncated normal output, in cycles."""
    return _TRUNCATED_NORMAL_COST[np.dtype(np_dtype)]


def parameterized_truncated_normal(key: philox.Key, counter: philox.Counter,
                                   params: np.ndarray, samples_per_batch: int, np_dtype,
                                   shards) -> np.ndarray:
    """TF's StatelessParameterizedTruncatedNormal values (float32 or float64):
    `[samples_per_batch, len(params)]` draws, `params[b]` the (mean, stddev, minval,
    maxval) of batch b, output `b * samples_per_batch + s` its sample s.

    TF splits the outputs into `shards` ([start, limit) ranges, TF's Shard); each shard
    reads one stream in order from block `ceil(start * 2000 / values per block)`, so the
    outputs of a shard are drawn one after another, here by a scalar loop.

    Raises:
      InvalidArgumentError: a batch has stddev <= 0, minval >= maxval or two infinite
        bounds.
      InternalError: a sampler rejected 1000 draws in a row."""
    typed = _TypedMath(np_dtype)
    num_batches = len(params)
    out = np.empty(num_batches * samples_per_batch, np_dtype)
    for start, limit in shards:
        first = (start * 2 * _MAX_ITERATIONS + typed.per_block - 1) // typed.per_block
        stream = philox.WordStream(key, philox.skip(counter, first))
        output = start
        while output < limit:
            batch = output // samples_per_batch
            sample = output % samples_per_batch
            count = min(samples_per_batch - sample, limit - output)
            values = _truncated_batch(typed, stream, params[batch], count)
            out[(sample + np.arange(count)) * num_batches + batch] = values
            output += count
    return out.reshape(samples_per_batch, num_batches)


def _truncated_batch(typed: _TypedMath, stream, param, count: int) -> list:
    """`count` draws of one batch's truncated normal from the shard's stream, by TF's
    choice of sampler: normal rejection when a bound is far (1.3 stddevs) beyond the
    mean, uniform rejection when the interval is narrow, else exponential rejection
    (the interval moved to the positive side, lower bound first)."""
    t = typed.t
    mean, stddev, minval, maxval = (t(p) for p in param)
    if not (stddev > 0 and minval < maxval and (np.isfinite(minval) or np.isfinite(maxval))):
        raise errors.InvalidArgumentError(None, None, "Invalid parameters")
    if (np.isinf(minval) and minval < 0) or maxval < mean:
        minval, maxval, stddev = maxval, minval, -stddev
    norm_min = (minval - mean) / stddev
    norm_max = (maxval - mean) / stddev
    sqrt_factor = np.sqrt(norm_min * norm_min + t(4))
    cutoff = t(2) * typed.exp(t(0.5) + (norm_min * (norm_min - sqrt_factor)) / t(4)) / \
        (norm_min + sqrt_factor)
    far = t(_RANDN_STDDEVS)
    if (norm_min < -far and norm_max >= 0) or (norm_max > far and norm_min <= 0):
        draws = _randn_rejection(typed, stream, norm_min, norm_max, count)
    elif norm_max - norm_min < cutoff:
        draws = _uniform_rejection(typed, stream, norm_min, norm_max, count)
    else:
        draws = _exponential_rejection(typed, stream, norm_min, norm_max, count)
    return [z * stddev + mean for z in draws]


def _rejection_limit(sampler: str):
    return errors.InternalError(None, None, "TruncatedNormal %s rejection sampler failed "
                                "to accept a sample." % sampler)


def _randn_rejection(typed, stream, norm_min, norm_max, count: int) -> list:
    draws, rejected = [], 0
    while len(draws) < count:
        for x in typed.normal(stream):
            if norm_min <= x <= norm_max:
                draws.append(x)
                if len(draws) == count:
                    break
                rejected = 0
            else:
                rejected += 1
                if rejected > _MAX_ITERATIONS:
                    raise _rejection_limit("randn")
    return draws


def _uniform_rejection(typed, stream, norm_min, norm_max, count: int) -> list:
    t = typed.t
    diff = norm_max - norm_min
    plus = t(0) if norm_min < 0 else norm_min * norm_min
    draws, rejected = [], 0
    while len(draws) < count:
        z = [r * diff + norm_min for r in typed.uniform(stream)]
        g = [(plus - zi * zi) / t(2) for zi in z]
        for zi, gi, u in zip(z, g, typed.uniform(stream)):
            if u <= typed.exp(gi):
                draws.append(zi)
                if len(draws) == count:
                    break
                rejected = 0
            elif rejected + 1 >= _MAX_ITERATIONS:
                raise _rejection_limit("uniform")
            else:
                rejected += 1
    return draws


def _exponential_rejection(typed, stream, norm_min, norm_max, count: int) -> list:
    t = typed.t
    alpha = (norm_min + np.sqrt(norm_min * norm_min + t(4))) / t(2)
    draws, rejected = [], 0
    while len(draws) < count:
        rand = typed.uniform(stream)
        for i in range(0, len(rand), 2):
            z = -typed.log(rand[i]) / alpha + norm_min
            x = alpha - z if norm_min < alpha else norm_min - alpha
            g = typed.exp(-x * x / t(2))
            if rand[i + 1] <= g and z < norm_max:
                draws.append(z)
                if len(draws) == count:
                    break
                rejected = 0
            elif rejected + 1 >= _MAX_ITERATIONS:
                raise _rejection_limit("exponential distribution")
            else:
                rejected += 1
    return draws
