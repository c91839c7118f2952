"""TF's random numbers bit for bit: Philox4x32-10, TF's transforms and the random ops'
values against values recorded from TensorFlow 2.21 (tf_philox_values.py)."""
import ctypes
import ctypes.util

import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.random import libm_float32, philox

import tf_philox_values as recorded

_NP_TYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
             "bfloat16": ml_dtypes.bfloat16, "int32": np.int32, "int64": np.int64,
             "uint32": np.uint32, "uint64": np.uint64}


def _as_recorded(values: np.ndarray) -> np.ndarray:
    """Values compared exactly with the recorded floats (bfloat16 as float64)."""
    return values.astype(np.float64) if values.dtype == ml_dtypes.bfloat16 else values


# --- the generator -------------------------------------------------------------------------
@pytest.mark.parametrize("key,counter,expected", [
    # the known answers of Random123 (kat_vectors, philox4x32 10 rounds)
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF,) * 4,
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox_known_answers(key, counter, expected):
    block = philox.blocks(key, counter, np.zeros(1, np.uint64))
    assert block.dtype == np.uint32 and block[0].tolist() == list(expected)


def test_blocks_are_the_blocks_of_successive_counters():
    key = (0x12345678, 0x9ABCDEF0)
    counter = (0xFFFFFFFE, 0xFFFFFFFF, 7, 0)   # block 2 carries into word 2
    many = philox.blocks(key, counter, np.arange(4, dtype=np.uint64))
    singles = [philox.blocks(key, c, np.zeros(1, np.uint64))[0] for c in (
        counter, (0xFFFFFFFF, 0xFFFFFFFF, 7, 0), (0, 0, 8, 0), (1, 0, 8, 0))]
    assert np.array_equal(many, np.array(singles))
    assert np.array_equal(philox.words(key, counter, 3), many[:3].ravel())


def test_blocks_of_per_block_keys_are_each_keys_block():
    """A key of arrays (one key per block, as per-seed stateless kernels pass) gives each
    block its own key's block; numpy scalars and 0-d arrays count as one key."""
    k0 = np.array([1, 0xFFFFFFFF, 0x12345678], np.uint64)
    k1 = np.array([2, 0xFFFFFFFF, 0x9ABCDEF0], np.uint64)
    counter = (5, 0, 0, 0)
    many = philox.blocks((k0, k1), counter, np.arange(3, dtype=np.uint64))
    singles = [philox.blocks((int(a), int(b)), counter, np.array([i], np.uint64))[0]
               for i, (a, b) in enumerate(zip(k0, k1))]
    assert np.array_equal(many, np.array(singles))
    scalar = philox.blocks((np.uint32(7), np.array(9, np.uint64)), counter, np.arange(2))
    assert np.array_equal(scalar, philox.blocks((7, 9), counter, np.arange(2)))


def test_blocks_in_python_are_the_numpy_passes_blocks(monkeypatch):
    """Up to _FEW_BLOCKS blocks are computed with Python integers one by one, up to
    _LANES_MOST as lanes of Python integers; they are the blocks of the vectorized
    rounds, carries across all four counter words included."""
    rs = np.random.RandomState(11)
    cases = []
    for t in range(300):
        key = (int(rs.randint(0, 2 ** 32, dtype=np.uint64)),
               np.uint32(rs.randint(0, 2 ** 32, dtype=np.uint64)))
        counter = (0xFFFFFFFF,) * 4 if t % 5 == 0 else \
            tuple(int(v) for v in rs.randint(0, 2 ** 32, 4, dtype=np.uint64))
        edges = (0, philox._FEW_BLOCKS, philox._FEW_BLOCKS + 1, philox._LANES_MOST)
        size = edges[t % 4] if t % 3 == 0 else rs.randint(0, philox._LANES_MOST + 1)
        offsets = rs.randint(0, 2 ** 40, size).astype(np.uint64)
        cases.append((key, counter, offsets))
    few = [(philox.blocks(k, c, o), philox.words(k, c, o.size)) for k, c, o in cases]
    assert {o.size for _, _, o in cases} >= {0, philox._FEW_BLOCKS, philox._LANES_MOST}
    monkeypatch.setattr(philox, "_FEW_BLOCKS", -1)
    monkeypatch.setattr(philox, "_LANES_MOST", -1)
    for (k, c, o), (b, w) in zip(cases, few):
        want = philox.blocks(k, c, o)
        assert b.dtype == want.dtype and b.shape == want.shape and np.array_equal(b, want)
        assert np.array_equal(w, philox.words(k, c, o.size))


def test_skip_follows_tf_carries():
    assert philox.skip((1, 2, 3, 4), 5) == (6, 2, 3, 4)
    assert philox.skip((0xFFFFFFFF, 0, 0, 0), 1) == (0, 1, 0, 0)
    assert philox.skip((0, 0xFFFFFFFF, 0xFFFFFFFF, 0), 1 << 32) == (0, 0, 0, 1)
    assert philox.skip((5, 6, 7, 8), (3 << 32) | 2) == (7, 9, 7, 8)


def test_key_counter_of_seeds():
    assert philox.key_counter_of_seeds(1, 7) == ((1, 0), (0, 0, 7, 0))
    assert philox.key_counter_of_seeds(-1, 2 ** 33) == ((0xFFFFFFFF, 0xFFFFFFFF), (0, 0, 0, 2))


# --- transforms, by hand ---------------------------------------------------------------------
def test_uniform_float32_uses_the_low_23_bits():
    key, counter = (3, 4), (5, 6, 7, 8)
    w = philox.words(key, counter, 2)
    expected = (w & 0x7FFFFF).astype(np.float64) / 2.0 ** 23
    assert np.array_equal(philox.uniform(key, counter, 7, np.float32), expected[:7])


def test_uniform_float64_takes_20_bits_of_one_word_and_all_of_the_next():
    key, counter = (3, 4), (5, 6, 7, 8)
    w = philox.words(key, counter, 2).astype(np.uint64)
    bits = (w[0::2] & 0xFFFFF) << np.uint64(32) | w[1::2]
    expected = bits.astype(np.float64) / 2.0 ** 52
    assert np.array_equal(philox.uniform(key, counter, 3, np.float64), expected[:3])


@pytest.mark.parametrize("np_type,bits", [(np.float16, 10), (ml_dtypes.bfloat16, 7)])
def test_uniform_16bit_floats(np_type, bits):
    key, counter = (9, 1), (0, 0, 0, 0)
    w = philox.words(key, counter, 2)
    expected = (w & ((1 << bits) - 1)).astype(np.float64) / 2.0 ** bits
    values = philox.uniform(key, counter, 8, np_type)
    assert values.dtype == np_type and np.array_equal(values.astype(np.float64), expected)


def test_uniform_int_is_lo_plus_bits_modulo_the_range():
    key, counter = (1, 2), (3, 4, 5, 6)
    w = philox.words(key, counter, 2).astype(np.int64)
    assert philox.uniform_int(key, counter, 6, -10, 7, np.int32).tolist() == \
        (-10 + w[:6] % 17).tolist()
    w64 = [int(a) | int(b) << 32 for a, b in zip(w[0::2], w[1::2])]
    lo, hi = -2 ** 63, 2 ** 63 - 1   # the widest range: the sum wraps
    expected = [((lo + b % (hi - lo)) + 2 ** 63) % 2 ** 64 - 2 ** 63 for b in w64[:3]]
    assert philox.uniform_int(key, counter, 3, lo, hi, np.int64).tolist() == expected


def test_full_int_is_the_words():
    key, counter = (1, 2), (3, 4, 5, 6)
    w = philox.words(key, counter, 2)
    assert np.array_equal(philox.full_int(key, counter, 5, np.uint32), w[:5])
    assert philox.full_int(key, counter, 3, np.uint64).tolist() == \
        [int(a) | int(b) << 32 for a, b in zip(w[0:6:2], w[1:6:2])]


def test_normal_is_box_muller_of_word_pairs():
    key, counter = (11, 12), (13, 14, 15, 16)
    w = philox.words(key, counter, 1).astype(np.float64)
    u = (w.astype(np.int64) & 0x7FFFFF) / 2.0 ** 23
    radius = np.sqrt(-2 * np.log(np.maximum(u[0::2], 1e-7)))
    angle = 2 * np.pi * u[1::2]
    expected = np.stack([radius * np.sin(angle), radius * np.cos(angle)], -1).ravel()
    np.testing.assert_allclose(philox.normal(key, counter, 4, np.float32), expected,
                               rtol=1e-5, atol=1e-6)


def test_truncated_normal_groups_start_256_blocks_apart():
    key, counter = (21, 22), (0, 0, 23, 0)
    values = philox.truncated_normal(key, counter, 12, np.float32)
    assert np.all(np.abs(values) < 2)
    for g in range(3):   # group g: the accepted normals of blocks 256 g, 256 g + 1, ...
        start = philox.skip(counter, 256 * g)
        draws = philox.normal(key, start, 16, np.float32)
        assert np.array_equal(values[4 * g:4 * g + 4], draws[np.abs(draws) < 2][:4])


# --- glibc's float functions ---------------------------------------------------------------
def _glibc():
    """The C library's logf/sinf/cosf through ctypes, or None if it is not glibc 2.28+
    (whose algorithms libm_float32 reproduces)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        version = libc.gnu_get_libc_version
    except (OSError, AttributeError, TypeError):
        return None
    version.restype = ctypes.c_char_p
    major, minor = (int(p) for p in version().decode().split(".")[:2])
    if (major, minor) < (2, 28):
        return None
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    for name in ("logf", "sinf", "cosf"):
        getattr(libm, name).restype = ctypes.c_float
        getattr(libm, name).argtypes = [ctypes.c_float]
    return libm


def _box_muller_arguments(step: int):
    """Every `step`-th of the 2**23 radius draws u (floored at 1e-7) and angles v of
    TF's float Box-Muller (the only arguments its logf and sincosf see)."""
    m = np.arange(0, 1 << 23, step, dtype=np.uint32)
    u = (m | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
    angle = (2 * np.pi * u.astype(np.float64)).astype(np.float32)
    return np.maximum(u, np.float32(1e-7)), angle


def _check_against_glibc(step: int):
    libm = _glibc()
    if libm is None:
        pytest.skip("needs glibc 2.28 or later")
    u, v = _box_muller_arguments(step)
    for ours, name, args in ((libm_float32.logf(u), "logf", u),
                             (libm_float32.sincosf(v)[0], "sinf", v),
                             (libm_float32.sincosf(v)[1], "cosf", v)):
        theirs = np.fromiter(map(getattr(libm, name), args.tolist()), np.float32, args.size)
        mismatch = np.flatnonzero(ours.view(np.uint32) != theirs.view(np.uint32))
        assert mismatch.size == 0, (name, args[mismatch[:5]], ours[mismatch[:5]])


def test_logf_and_sincosf_are_glibcs():
    _check_against_glibc(step=61)
    # draws where glibc's logf is not the double log rounded to float
    hard = np.array([0.004240751266479492, 0.4743196964263916, 0.9772149324417114],
                    np.float32)
    rounded = np.log(hard.astype(np.float64)).astype(np.float32)
    assert (libm_float32.logf(hard) != rounded).all()
    assert (np.abs(libm_float32.logf(hard).astype(np.float64) - rounded)
            <= np.abs(np.spacing(rounded))).all()   # the other float neighbour


@pytest.mark.slow
def test_logf_and_sincosf_are_glibcs_for_every_argument():
    _check_against_glibc(step=1)   # 2**23 arguments each, about 15 s


def test_tiny_and_quadrant_boundaries_of_sincosf():
    x = np.array([0.0, 1e-6, 2.0 ** -12, 0.78539816, 0.8, 1.5707964, 3.1415927, 4.712389,
                  6.2831855], np.float32)
    sin, cos = libm_float32.sincosf(x)
    np.testing.assert_allclose(sin, np.sin(x.astype(np.float64)), rtol=0, atol=1e-7)
    np.testing.assert_allclose(cos, np.cos(x.astype(np.float64)), rtol=0, atol=1e-7)
    assert sin[1] == x[1] and cos[1] == 1.0


# --- the ops against TF ---------------------------------------------------------------------
def _stateful_op(kind: str, dtype: str, n: int):
    if kind == "u":
        return tf.random_uniform([n], seed=7, dtype=dtype)
    if kind == "n":
        return tf.random_normal([n], seed=7, dtype=dtype)
    if kind == "t":
        return tf.truncated_normal([n], seed=7, dtype=dtype)
    if kind == "i":
        return tf.random_uniform([n], minval=-3, maxval=1000, seed=7, dtype=dtype)
    lo, hi = (-2 ** 31, 2 ** 31 - 1) if dtype == "int32" else (-2 ** 62, 2 ** 62)
    return tf.random_uniform([n], minval=lo, maxval=hi, seed=7, dtype=dtype)


@pytest.mark.parametrize("case", sorted(recorded.STATEFUL), ids=str)
def test_stateful_ops_give_tfs_values_run_after_run(case):
    kind, dtype, n = case
    indices, first, second = recorded.STATEFUL[case]
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = _stateful_op(kind, dtype, n)
        with tf.Session() as sess:
            runs = [sess.run(x), sess.run(x)]
    for values, expected in zip(runs, (first, second)):
        assert values.dtype == _NP_TYPES[dtype] and values.shape == (n,)
        assert _as_recorded(values[indices]).tolist() == expected


def _call_by_call(sample, n: int, calls: int, *args) -> list:
    """The values of `calls` runs of a stateful op seeded (1, 7) drawing `n` values: run
    k's stream starts 256 blocks per value after run k-1's (TF's reserve)."""
    key, counter = philox.key_counter_of_seeds(1, 7)
    out = []
    for _ in range(calls):
        out.append(sample(key, counter, n, *args).tolist())
        counter = philox.skip(counter, n * philox.SKIP_PER_OUTPUT)
    return out


@pytest.mark.parametrize("kind,dtype,n", [
    ("u", "float32", 1), ("u", "float64", 3), ("u", "float16", 5), ("u", "float32", 16),
    ("i", "int32", 3), ("i", "int64", 2), ("n", "float32", 1), ("n", "float64", 4),
    ("n", "float16", 7)])
def test_few_value_draws_computed_ahead_are_the_call_by_call_values(kind, dtype, n):
    # 300 runs: the calls computed ahead are refilled with 8, 16, ... 256 calls
    samples = {"u": (philox.uniform, dtype), "n": (philox.normal, dtype),
               "i": (philox.uniform_int, -3, 1000, dtype)}
    expected = _call_by_call(samples[kind][0], n, 300, *samples[kind][1:])
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = _stateful_op(kind, dtype, n)
        with tf.Session() as sess:
            got = [sess.run(x).tolist() for _ in range(300)]
    assert got == expected


def test_draws_ahead_give_back_their_counters_when_the_shape_changes(graph):
    tf.set_random_seed(1)
    shape = tf.placeholder(tf.int32, [1])
    x = tf.random_uniform(shape, seed=7)
    sizes = [1] * 12 + [3] * 20 + [1] * 3 + [5000] + [1] * 30 + [2, 1, 2, 1] + [4] * 9
    key, counter = philox.key_counter_of_seeds(1, 7)
    with tf.Session() as sess:
        for size in sizes:
            got = sess.run(x, {shape: [size]})
            assert got.tolist() == philox.uniform(key, counter, size, np.float32).tolist()
            counter = philox.skip(counter, size * philox.SKIP_PER_OUTPUT)


def test_random_uniform_5x3_is_tfs(graph):
    tf.set_random_seed(1)
    x = tf.random_uniform([5, 3], seed=7)
    with tf.Session() as sess:
        for expected in recorded.UNIFORM_5x3:
            assert sess.run(x).tolist() == expected


def test_equal_seeds_equal_values_across_graphs_and_sessions():
    def draw():
        with tf.Graph().as_default():
            x = tf.truncated_normal([3, 4], seed=5)   # graph seed: the default
            with tf.Session() as sess:
                return sess.run(x)
    a, b = draw(), draw()
    assert np.array_equal(a, b)
    key, counter = philox.key_counter_of_seeds(87654321, 5)
    assert np.array_equal(a.ravel(), philox.truncated_normal(key, counter, 12, np.float32))


def _stateless_op(kind, seed, dtype, n):
    if kind == "su":
        return tf.random.stateless_uniform([n], seed, dtype=dtype)
    if kind == "sn":
        return tf.random.stateless_normal([n], seed, dtype=dtype)
    if kind == "st":
        return tf.random.stateless_truncated_normal([n], seed, dtype=dtype)
    if kind == "si":
        return tf.random.stateless_uniform([n], seed, minval=-7, maxval=100, dtype=dtype)
    return tf.random.stateless_uniform([n], seed, minval=None, maxval=None, dtype=dtype)


def test_stateless_ops_give_tfs_values(sess):
    fetches, expected = [], []
    for (kind, seed, seed_dtype, dtype, n), (indices, values) in recorded.STATELESS.items():
        x = _stateless_op(kind, tf.constant(seed, dtype=seed_dtype), dtype, n)
        fetches.append((x, indices))
        expected.append(values)
    results = sess.run([x for x, _ in fetches])
    for (x, indices), got, want in zip(fetches, results, expected):
        assert _as_recorded(got[indices]).tolist() == want, x.name


def test_split_fold_in_and_key_counter_are_tfs(sess):
    for (seed, seed_dtype), expected in recorded.SPLIT.items():
        assert sess.run(tf.random.split(tf.constant(seed, seed_dtype), 3)).tolist() == expected
    for (seed, seed_dtype), expected in recorded.FOLD_IN_42.items():
        folded = tf.random.fold_in(tf.constant(seed, seed_dtype), 42)
        assert folded.dtype == tf.int32 and sess.run(folded).tolist() == expected
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(
        seed=tf.constant([1, 2], tf.int64))
    key_value, counter_value = sess.run([key, counter])
    assert (key_value.tolist(), counter_value.tolist()) == recorded.KEY_COUNTER_1_2


def test_v2_ops_of_tfs_key_and_counter_equal_the_v1_ops(sess):
    seed = tf.constant([-5, 123456789012], tf.int64)
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
    v2 = tf.raw_ops.StatelessRandomNormalV2(shape=[9], key=key, counter=counter, alg=1)
    v1 = tf.random.stateless_normal([9], seed)
    a, b = sess.run([v2, v1])
    assert np.array_equal(a, b)


def test_generator_draws_are_tfs_run_after_run(sess):
    g = tf.random.Generator.from_seed(5)
    draws = [g.uniform([5]), g.normal([3], dtype=tf.float64),
             g.uniform([4], maxval=100, dtype=tf.int32), g.truncated_normal([6]),
             g.uniform_full_int([3], dtype=tf.int64)]
    sess.run(tf.global_variables_initializer())
    assert [sess.run(x).tolist() for x in draws + draws] == recorded.GENERATOR_FROM_SEED_5
