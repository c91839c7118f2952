"""glibc's float32 `logf` and `sincosf`, vectorized, for TF's Box-Muller transform.

TF's normal samples are `sqrt(-2 logf(u)) * sincosf(v)` computed by the C library, and
glibc's float functions are not correctly rounded: about 1% of their results are the
other float neighbour of the exact value, so NumPy's float32 functions, or double ones
rounded, differ from TF's in the last bit. These are glibc's algorithms (>= 2.28, taken
from Arm's optimized-routines, MIT licence: the tables and polynomial coefficients below
are theirs, see THIRD_PARTY_NOTICES.md), evaluated in double like glibc's x86-64 FMA
build, whose fused multiply-adds matter where they cancel (`z / c - 1`, `x - n pi/2`):
those are computed exactly here by splitting one factor into two halves whose products
are exact.

Only the arguments TF produces are handled: `logf` of positive normal floats (no zeros,
subnormals, infinities or NaNs), `sincosf` of floats in [0, 120). Both equal the C
library's over the 2**23 arguments TF's Box-Muller can pass them
(tests/ops/random/test_philox.py: a sample, and every argument under `-m slow`).
"""
from __future__ import annotations

import functools
from typing import Callable, Optional, Tuple

import numpy as np

# logf: log(x) = log1p(z / c - 1) + log(c) + k ln2 with x = 2**k z, c the centre of the
# subinterval of z; (1 / c, log c) for the 16 subintervals of [0x3f330000, 2 * that)
_LOGF_INVC = np.array([float.fromhex(h) for h in (
    "0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0",
    "0x1.3c995b0b80385p+0", "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0",
    "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0", "0x1.0953f419900a7p+0", "0x1p+0",
    "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1", "0x1.b2036576afce6p-1",
    "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1")])
_LOGF_LOGC = np.array([float.fromhex(h) for h in (
    "-0x1.57bf7808caadep-2", "-0x1.2bef0a7c06ddbp-2", "-0x1.01eae7f513a67p-2",
    "-0x1.b31d8a68224e9p-3", "-0x1.6574f0ac07758p-3", "-0x1.1aa2bc79c81p-3",
    "-0x1.a4e76ce8c0e5ep-4", "-0x1.1973c5a611cccp-4", "-0x1.252f438e10c1ep-5", "0x0p+0",
    "0x1.aa5aa5df25984p-5", "0x1.c5e53aa362eb4p-4", "0x1.526e57720db08p-3",
    "0x1.bc2860d22477p-3", "0x1.1058bc8a07ee1p-2", "0x1.4043057b6ee09p-2")])
_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_POLY = [float.fromhex(h) for h in (
    "-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2")]
_LOGF_OFF = np.uint32(0x3F330000)

# sincosf: round(x * 2 / pi) quadrants, then polynomials in the reduced argument
_INV_HALF_PI_2_24 = float.fromhex("0x1.45F306DC9C883p+23")    # 2**24 * 2 / pi
_HALF_PI = float.fromhex("0x1.921FB54442D18p0")
_COS_POLY = [float.fromhex(h) for h in (
    "0x1p0", "-0x1.ffffffd0c621cp-2", "0x1.55553e1068f19p-5", "-0x1.6c087e89a359dp-10",
    "0x1.99343027bf8c3p-16")]
_SIN_POLY = [float.fromhex(h) for h in (
    "-0x1.555545995a603p-3", "0x1.1107605230bc4p-7", "-0x1.994eb3774cf24p-13")]


def _split(value: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(high, low) with high + low == value exactly, high of 26 significant bits, so
    that its product with a float32 (24 bits) or a small integer is exact in double."""
    high = (np.asarray(value, np.float64).view(np.uint64)
            & np.uint64(0xFFFFFFFFF8000000)).view(np.float64)
    return high, value - high


_LOGF_INVC_HIGH, _LOGF_INVC_LOW = _split(_LOGF_INVC)
_HALF_PI_HIGH, _HALF_PI_LOW = (float(v) for v in _split(np.float64(_HALF_PI)))


def logf(x: np.ndarray) -> np.ndarray:
    """glibc's `logf` of positive normal float32 values."""
    ix = x.view(np.uint32)
    tmp = ix - _LOGF_OFF
    index = tmp >> np.uint32(19)
    index &= np.uint32(15)
    index = index.astype(np.intp)   # np.take with native indices: 2x a uint32 gather
    k = tmp.view(np.int32) >> np.int32(23)
    tmp &= np.uint32(0xFF800000)
    z = (ix - tmp).view(np.float32).astype(np.float64)
    # the fused z * invc - 1: z * high is exact and within 2x of 1, so the subtraction is
    # too; one rounding remains, as in the fma
    r = z * np.take(_LOGF_INVC_HIGH, index)
    r -= 1.0
    z *= np.take(_LOGF_INVC_LOW, index)
    r += z
    y0 = k * _LN2
    y0 += np.take(_LOGF_LOGC, index)
    y0 += r
    r2 = r * r
    a0, a1, a2 = _LOGF_POLY
    y = r * a1
    y += a2
    y += a0 * r2
    y *= r2
    y += y0
    return y.astype(np.float32)


def sincosf(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """glibc's `sincosf` of float32 values in [0, 120): (sin, cos).

    glibc's special cases need no code here: below pi / 4 its unreduced argument equals
    the reduced one (n is 0), and below 2**-12, where it returns (x, 1), the polynomials
    round to (x, 1)."""
    xd = x.astype(np.float64)
    # quadrant n = round(x * 2 / pi), read from the scaled product as glibc does
    n = (xd * _INV_HALF_PI_2_24).astype(np.int32)
    n += np.int32(0x800000)
    n >>= np.int32(24)
    nd = n.astype(np.float64)
    # the fused x - n pi/2: x - n * high is exact (a multiple of 2**-25 below 1)
    reduced = xd - nd * _HALF_PI_HIGH
    nd *= _HALF_PI_LOW
    reduced -= nd
    sin_poly, cos_poly = _sincos_poly(reduced, reduced * reduced)
    # by quadrant n & 3, (sin, cos) is (S, C), (C, -S), (-S, -C), (-C, S): the odd
    # polynomial is odd, so glibc's negated arguments and coefficients only flip signs
    odd = (n & 1).astype(bool)
    sin = np.where(odd, cos_poly, sin_poly).astype(np.float32)
    cos = np.where(odd, sin_poly, cos_poly).astype(np.float32)
    sin.view(np.uint32)[...] ^= (n & 2).astype(np.uint32) << np.uint32(30)
    cos.view(np.uint32)[...] ^= ((n + 1) & 2).astype(np.uint32) << np.uint32(30)
    return sin, cos


def _sincos_poly(x: np.ndarray, x2: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The sine and cosine polynomials of the reduced argument, in glibc's order."""
    c0, c1, c2, c3, c4 = _COS_POLY
    s1, s2, s3 = _SIN_POLY
    x3 = x2 * x
    sin = x2 * s3
    sin += s2
    sin *= x2
    sin *= x3
    sin += x3 * s1
    sin += x
    x4 = x2 * x2
    cos = x2 * c4
    cos += c3
    cos *= x2
    cos *= x4
    cos += x4 * c2
    cos += x2 * c1
    cos += c0
    return sin, cos


@functools.lru_cache(maxsize=None)
def c_function(name: str, restype: str, arity: int) -> Optional[Callable]:
    """The C math library's function `name` of `arity` arguments, all and its result of
    the ctypes type `restype` ("c_float", "c_double"), for values that must be the C
    library's to the last bit; None where the library cannot be loaded. Loaded on first
    use (finding the library runs a subprocess: not at import)."""
    import ctypes
    import ctypes.util
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
    except (OSError, AttributeError):
        return None
    c_type = getattr(ctypes, restype)
    fn.restype, fn.argtypes = c_type, [c_type] * arity
    return fn

