"""glibc's float32 `log1pf` and `expm1f`, vectorized, for TF's sampled expected counts.

A candidate sampler's expected count of a class of probability p, when some draws were
dropped as repeats, is TF's float32 `-expm1f(num_tries * log1pf(-p))` computed by the C
library. glibc's float versions of these two are not correctly rounded (about 4% and
25% of their results differ from NumPy's float32 functions, or from double results
rounded), so word2vec's nce_loss called them through ctypes value by value: about
100 us of a 470 us training step for 192 values.

These are the algorithms of glibc's `s_log1pf.c` and `s_expm1f.c` (float versions of
fdlibm's, by Sun Microsystems: see THIRD_PARTY_NOTICES.md), every float operation in
float32 in the C source's order. The branch that a sampler's arguments take (no
argument reduction) is evaluated on its values alone; the other values, when more than a
few, go through every branch at once with the results selected, else through the C
library itself. Whether they give this process's C library's bits is checked once,
on a sample of every branch (`agree_with_c_library`); the callers keep the C library
where they do not (another libm, or a newer glibc whose versions differ).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.ops.random import libm_float32


def _f32(bits: int) -> np.float32:
    return np.uint32(bits).view(np.float32)


_ONE, _HALF, _TWO = np.float32(1), np.float32(0.5), np.float32(2)
_LN2_HI, _LN2_LO = _f32(0x3F317180), _f32(0x3717F7D1)
# log1pf: the polynomial in s = f / (2 + f), and 2/3 of the |f| < 2**-20 branch
_LP = [_f32(b) for b in (0x3F2AAAAB, 0x3ECCCCCD, 0x3E924925, 0x3E638E29, 0x3E3A3325,
                         0x3E1CD04F, 0x3E178897)]
_TWO_THIRDS = np.float32(0.66666666666666666)
# expm1f: the scaled coefficients, 1 / ln2, the overflow threshold, huge and tiny
_Q = [_f32(b) for b in (0xBD088889, 0x3AD00D01, 0xB8A670CD, 0x36867E54, 0xB457EDBB)]
_INV_LN2, _O_THRESHOLD = _f32(0x3FB8AA3B), _f32(0x42B17180)
_HUGE, _TINY = np.float32(1e30), np.float32(1e-30)


def _as_float(words: np.ndarray) -> np.ndarray:
    return words.astype(np.int32).view(np.float32)


def log1pf(x: np.ndarray) -> np.ndarray:
    """glibc's `log1pf` of each float32 value of `x` (any value)."""
    x = np.asarray(x, np.float32)
    shape, x = x.shape, x.ravel()
    hx = x.view(np.int32)
    # -0.2929 < x < 0.41422 and |x| >= 2**-29 (a sampler's -p but for tiny p): f is x
    near = ((hx > 0x30FFFFFF) & (hx < 0x3ED413D7)) | \
        ((hx <= -0x416A09E1) & (hx > -0x4F000001))
    return _by_branch(x, near, _log1pf_near, _log1pf_any, "log1pf").reshape(shape)


# at most this many values outside the common branch go to the C library one by one
# (0.2 us each) rather than through every branch at once (about 55 us whatever the size)
_FEW = 256


def _by_branch(x: np.ndarray, common: np.ndarray, common_fn, any_fn, c_name: str):
    """`common_fn` of the values of the flat `x` where `common`, the function of the
    others by `any_fn` (every branch at once) or, when they are few, by the C library."""
    if common.all():
        return common_fn(x)
    out = np.empty_like(x)
    rest = ~common
    others = x[rest]
    c_fn = libm_float32.c_function(c_name, "c_float", 1) if others.size <= _FEW else None
    out[rest] = any_fn(others) if c_fn is None else \
        np.fromiter(map(c_fn, others.tolist()), np.float32, count=others.size)
    if common.any():
        out[common] = common_fn(x[common])
    return out


def _log1pf_terms(f: np.ndarray):
    """(f^2 / 2, s, R) of the reduced argument f: s = f / (2 + f), R the polynomial in
    s^2 (log1p(f) = f - (f^2/2 - s (f^2/2 + R)))."""
    hfsq = _HALF * f * f
    s = f / (_TWO + f)
    z = s * s
    r = _LP[6] * z
    for p in _LP[5::-1]:
        r = z * (p + r)
    return hfsq, s, r


def _log1pf_near(f: np.ndarray) -> np.ndarray:
    """`log1pf` where no reduction is needed (k = 0)."""
    hfsq, s, r = _log1pf_terms(f)
    return f - (hfsq - s * (hfsq + r))


def _log1pf_any(x: np.ndarray) -> np.ndarray:
    """`log1pf` of the flat float32 `x`, every branch evaluated for every value."""
    hx = x.view(np.int32)
    ax = hx & 0x7FFFFFFF
    with np.errstate(all="ignore"):
        # 1 + x = 2**k * u, u normalized into [sqrt(2)/2, sqrt(2)), with the rounding
        # error c of 1 + x over it; from 2**53 on, u is x itself
        beyond = hx >= 0x5A000000
        u = np.where(beyond, x, _ONE + x)
        hu = u.view(np.int32)
        k = (hu >> 23) - 127
        c = np.where(k > 0, _ONE - (u - x), x - (u - _ONE))
        c /= u
        c[beyond] = 0
        hu = hu & 0x007FFFFF
        low = hu < 0x3504F7
        u = _as_float(np.where(low, hu | 0x3F800000, hu | 0x3F000000))
        k += ~low
        hu = np.where(low, hu, (0x00800000 - hu) >> 2)
        f = u - _ONE
        # -0.2929 < x < 0.41422 is not reduced (k = 0): f is x
        near = (hx < 0x3ED413D7) & ((hx > 0) | (hx <= -0x416A09E1))
        f[near] = x[near]
        k[near] = 0
        hu[near] = 1
        kf = k.astype(np.float32)
        hfsq, s, r = _log1pf_terms(f)
        out = np.where(k == 0, f - (hfsq - s * (hfsq + r)),
                       kf * _LN2_HI - ((hfsq - (s * (hfsq + r) + (kf * _LN2_LO + c))) - f))
        flat = hu == 0                        # |f| < 2**-20
        if flat.any():
            r2 = hfsq * (_ONE - _TWO_THIRDS * f)
            at_zero = np.where(k == 0, np.float32(0), kf * _LN2_HI + (c + kf * _LN2_LO))
            near_zero = np.where(k == 0, f - r2, kf * _LN2_HI - ((r2 - (kf * _LN2_LO + c)) - f))
            out = np.where(flat, np.where(f == 0, at_zero, near_zero), out)
        # the special arguments, as the C source tests them
        below = hx < 0x3ED413D7
        at_most_minus_one = below & (ax >= 0x3F800000)
        tiny = below & (ax < 0x31000000) & ~at_most_minus_one
        out = np.where(tiny, np.where(ax < 0x24800000, x, x - x * x * _HALF), out)
        out = np.where(at_most_minus_one,
                       np.where(x == -_ONE, np.float32(-np.inf), (x - x) / (x - x)), out)
        out = np.where(hx >= 0x7F800000, x + x, out)   # +inf and NaN of the plus sign
    return out.astype(np.float32, copy=False)


def expm1f(x: np.ndarray) -> np.ndarray:
    """glibc's `expm1f` of each float32 value of `x` (any value)."""
    x = np.asarray(x, np.float32)
    shape, x = x.shape, x.ravel()
    # 2**-25 <= |x| <= ln2 / 2 (a sampler's expected counts but for frequent classes):
    # not reduced (k = 0)
    magnitude = x.view(np.uint32) & np.uint32(0x7FFFFFFF)
    primary = (magnitude >= 0x33000000) & (magnitude <= 0x3EB17218)
    return _by_branch(x, primary, _expm1f_primary, _expm1f_any, "expm1f").reshape(shape)


def _expm1f_terms(r: np.ndarray):
    """(r^2 / 2, e) of the reduced argument r: expm1(r) = r - (r e - r^2 / 2)."""
    hfx = _HALF * r
    hxs = r * hfx
    r1 = _Q[4] * hxs
    for q in _Q[3::-1]:
        r1 = hxs * (q + r1)
    r1 = _ONE + r1
    t = np.float32(3) - r1 * hfx
    return hxs, hxs * ((r1 - t) / (np.float32(6) - r * t))


def _expm1f_primary(x: np.ndarray) -> np.ndarray:
    """`expm1f` of arguments that need no reduction (k = 0)."""
    hxs, e = _expm1f_terms(x)
    return x - (x * e - hxs)


def _expm1f_any(x: np.ndarray) -> np.ndarray:
    """`expm1f` of the flat float32 `x`, every branch evaluated for every value."""
    word = x.view(np.uint32)
    negative = word >= 0x80000000
    hx = word & 0x7FFFFFFF
    with np.errstate(all="ignore"):
        # x = k ln2 + r, |r| <= 0.5 ln2, r held as hi - lo with the error c
        close = hx < 0x3F851592               # |x| < 1.5 ln2: k is -1 or 1
        k = (_INV_LN2 * x + np.where(negative, -_HALF, _HALF)).astype(np.int32)
        k = np.where(close, np.where(negative, -1, 1), k)
        t = k.astype(np.float32)
        hi = np.where(close, np.where(negative, x + _LN2_HI, x - _LN2_HI), x - t * _LN2_HI)
        lo = np.where(close, np.where(negative, -_LN2_LO, _LN2_LO), t * _LN2_LO)
        r = hi - lo
        c = (hi - r) - lo
        reduced = hx > 0x3EB17218               # |x| > 0.5 ln2
        r = np.where(reduced, r, x)
        c = np.where(reduced, c, np.float32(0))
        k = np.where(reduced, k, 0)
        hxs, e = _expm1f_terms(r)
        out = r - (r * e - hxs)                 # k == 0
        e = r * (e - c) - c
        e -= hxs
        out = np.where(k == -1, _HALF * (r - e) - _HALF, out)
        out = np.where(k == 1, np.where(r < np.float32(-0.25),
                                        -_TWO * (e - (r + _HALF)), _ONE + _TWO * (r - e)),
                       out)
        exponent = k << 23
        # k <= -2 or k > 56: 1 - (e - r) scaled by 2**k, minus 1
        far = _as_float((_ONE - (e - r)).view(np.int32) + exponent) - _ONE
        # 2 <= k < 23: (1 - 2**-k) - (e - r), scaled
        shift = np.clip(k, 0, 31)
        one_less = _as_float(0x3F800000 - (0x1000000 >> shift))
        middle = _as_float((one_less - (e - r)).view(np.int32) + exponent)
        # 23 <= k <= 56: r - (e + 2**-k) + 1, scaled
        power = _as_float((0x7F - np.clip(k, 0, 0x7F)) << 23)
        high = _as_float(((r - (e + power)) + _ONE).view(np.int32) + exponent)
        scaled = np.where((k <= -2) | (k > 56), far, np.where(k < 23, middle, high))
        out = np.where((k != 0) & (k != 1) & (k != -1), scaled, out)
        # the special arguments, as the C source tests them
        small = ~reduced & (hx < 0x33000000)     # |x| < 2**-25: x itself
        t = _HUGE + x
        out = np.where(small, x - (t - (_HUGE + x)), out)
        huge = hx >= 0x4195B844                 # |x| >= 27 ln2
        out = np.where(huge & negative, _TINY - _ONE, out)
        out = np.where((hx >= 0x42B17218) & ~negative & (x > _O_THRESHOLD), _HUGE * _HUGE,
                       out)
        out = np.where(hx == 0x7F800000, np.where(negative, -_ONE, x), out)
        out = np.where(hx > 0x7F800000, x + x, out)
    return out.astype(np.float32, copy=False)


_AGREE: Optional[bool] = None


def agree_with_c_library() -> bool:
    """Whether `log1pf` and `expm1f` give this process's C library's bits on a sample
    of every branch (checked once): special values, every binade's edges, and random
    values of both signs over the whole float range."""
    global _AGREE
    if _AGREE is None:
        _AGREE = _check()
    return _AGREE


def _check() -> bool:
    c_log1p = libm_float32.c_function("log1pf", "c_float", 1)
    c_expm1 = libm_float32.c_function("expm1f", "c_float", 1)
    if c_log1p is None or c_expm1 is None:
        return False
    rs = np.random.RandomState(1729)
    words = [rs.randint(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32)]
    # every binade from 2**-30 to 2**7, its first, last and a few inner values
    binades = np.arange(97, 135, dtype=np.uint32) << np.uint32(23)
    for offset in (0, 1, 0x3504F6, 0x3504F7, 0x400000, 0x7FFFFF):
        words.append(binades + np.uint32(offset))
    x = np.concatenate(words).view(np.float32)
    x = np.concatenate([x, -x, np.array([0.0, -1.0, 1.0, np.inf, -np.inf, np.nan, 0.25,
                                         -0.2929, 0.41422, 88.72, 88.73, -18.72],
                                        np.float32)])
    # expm1f mostly of the arguments the samplers pass: products of log1pf values
    with np.errstate(all="ignore"):
        y = np.concatenate([x, (log1pf(-np.abs(x) % np.float32(1)) *
                                np.float32(37)).astype(np.float32)])
    for fn, c_fn, arg in ((log1pf, c_log1p, x), (expm1f, c_expm1, y)):
        want = np.fromiter(map(c_fn, arg.tolist()), np.float32, count=arg.size)
        if fn(arg).tobytes() != want.tobytes():
            return False
    return True
