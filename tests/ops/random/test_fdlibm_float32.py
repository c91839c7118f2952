"""ops/random/fdlibm_float32.py: glibc's log1pf and expm1f vectorized, against the C
library itself (ctypes), and the candidate samplers' expected counts through it."""
import numpy as np
import pytest

from tensorweave.ops.random import fdlibm_float32, libm_float32, range_samplers


def _c(name):
    fn = libm_float32.c_function(name, "c_float", 1)
    if fn is None:
        pytest.skip("no C math library")
    return lambda x: np.fromiter(map(fn, x.tolist()), np.float32, count=x.size)


def _needs_glibcs_algorithms():
    if not fdlibm_float32.agree_with_c_library():
        pytest.skip("this C library's log1pf/expm1f are not glibc's fdlibm ones")


def _mismatches(ours, theirs, args):
    bad = np.flatnonzero(ours.view(np.uint32) != theirs.view(np.uint32))
    return [(float(a), float(o), float(t)) for a, o, t in
            zip(args[bad[:5]], ours[bad[:5]], theirs[bad[:5]])]


def _random_floats(n, seed):
    """Random bit patterns: every sign, binade, NaN and infinity."""
    words = np.random.RandomState(seed).randint(0, 1 << 32, n, dtype=np.uint64)
    return words.astype(np.uint32).view(np.float32)


def test_log1pf_is_the_c_librarys():
    _needs_glibcs_algorithms()
    c_log1pf = _c("log1pf")
    x = np.concatenate([_random_floats(200_000, 0),
                        -(np.random.RandomState(1).rand(100_000) ** 3).astype(np.float32),
                        np.array([0.0, -0.0, -1.0, -1.5, 1e-30, -1e-9, -0.2929, 0.41422,
                                  -0.5, 1.0, 3.0, 1e38, np.inf, -np.inf, np.nan],
                                 np.float32)])
    with np.errstate(all="ignore"):
        assert _mismatches(fdlibm_float32.log1pf(x), c_log1pf(x), x) == []


def test_expm1f_is_the_c_librarys():
    _needs_glibcs_algorithms()
    c_expm1f = _c("expm1f")
    rs = np.random.RandomState(2)
    tries = rs.randint(64, 4000, 100_000).astype(np.float32)
    with np.errstate(all="ignore"):
        sampler_args = tries * fdlibm_float32.log1pf(
            -(rs.rand(100_000) ** 3).astype(np.float32))
    x = np.concatenate([_random_floats(200_000, 3), sampler_args,
                        np.array([0.0, -0.0, 1e-8, -1e-8, 0.34657, -0.34657, 1.0397, -1.0397,
                                  -18.71, -18.72, 88.72, 88.73, np.inf, -np.inf, np.nan],
                                 np.float32)])
    with np.errstate(all="ignore"):
        assert _mismatches(fdlibm_float32.expm1f(x), c_expm1f(x), x) == []


def test_common_branch_with_a_few_others():
    """A sampler's arguments: all in each function's unreduced branch but for a few,
    which go to the C library one by one (or every branch at once when many)."""
    _needs_glibcs_algorithms()
    c_log1pf, c_expm1f = _c("log1pf"), _c("expm1f")
    rs = np.random.RandomState(5)
    for few in (0, 3, fdlibm_float32._FEW + 5):
        x = -(rs.rand(150 + few) * 0.2).astype(np.float32)
        x[:few] = -(rs.rand(few) * 0.9 + 0.05).astype(np.float32)   # some reduced ones
        x[few:few + 2] = [-1e-30, -0.0]
        y = np.float32(40) * x
        y[-3:] = [np.inf, 1.5, 20.0]   # outside both vectorized branches of expm1f
        with np.errstate(all="ignore"):
            assert _mismatches(fdlibm_float32.log1pf(x), c_log1pf(x), x) == []
            assert _mismatches(fdlibm_float32.expm1f(y), c_expm1f(y), y) == []


def test_shapes_and_dtypes():
    x = -np.linspace(0, 0.9, 12, dtype=np.float32).reshape(3, 4)
    for fn in (fdlibm_float32.log1pf, fdlibm_float32.expm1f):
        out = fn(x)
        assert out.shape == (3, 4) and out.dtype == np.float32
    np.testing.assert_allclose(fdlibm_float32.log1pf(x), np.log1p(x.astype(np.float64)),
                               rtol=1e-6)
    np.testing.assert_allclose(fdlibm_float32.expm1f(x), np.expm1(x.astype(np.float64)),
                               rtol=1e-6)


@pytest.mark.parametrize("n", [7, range_samplers._VECTORIZED_FROM + 13])
def test_expected_counts_are_the_same_through_ctypes(n, monkeypatch):
    """Below the size from which the functions are vectorized, and above it, the counts
    are TF's float32 formula of the C library's functions."""
    p = (np.random.RandomState(n).rand(n) ** 3).astype(np.float32)
    got = range_samplers.expected_counts(p, 64, 150)
    monkeypatch.setattr(fdlibm_float32, "agree_with_c_library", lambda: False)
    through_c = range_samplers.expected_counts(p, 64, 150)
    assert got.tobytes() == through_c.tobytes()
    c_log1pf, c_expm1f = _c("log1pf"), _c("expm1f")
    want = -c_expm1f(np.float32(150) * c_log1pf(-p))
    assert got.tobytes() == want.tobytes()
    assert range_samplers.expected_counts(p, 64, 64).tobytes() == \
        (p * np.float32(64)).tobytes()   # no draw dropped
