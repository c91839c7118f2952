"""Stateless random ops: determinism in (seed, shape), distributions, static shapes,
seed checks; split, fold_in and create_rng_state."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import registry

SEED = [3, 14]


def _builders():
    return {
        "uniform": lambda s: tf.random.stateless_uniform([500], s),
        "normal": lambda s: tf.random.stateless_normal([500], s),
        "truncated": lambda s: tf.random.stateless_truncated_normal([500], s),
        "int": lambda s: tf.random.stateless_uniform([500], s, minval=-3, maxval=9,
                                                     dtype=tf.int64),
        "full_int": lambda s: tf.random.stateless_uniform([5], s, minval=None, maxval=None,
                                                          dtype=tf.int32),
        "categorical": lambda s: tf.random.stateless_categorical([[0.0, 1.0, 2.0]], 50, s),
        "binomial": lambda s: tf.random.stateless_binomial([5], s, 10.0, 0.3),
        "gamma": lambda s: tf.random.stateless_gamma([5], s, 2.0),
        "poisson": lambda s: tf.random.stateless_poisson([5], s, 4.0),
        "ptn": lambda s: tf.random.stateless_parameterized_truncated_normal([5], s),
    }


@pytest.mark.parametrize("kind", sorted(_builders()))
def test_same_seed_same_values_across_runs_and_sessions(graph, kind):
    build = _builders()[kind]
    a = build(tf.constant(SEED, tf.int64))
    b = build(tf.constant([3, 15], tf.int64))
    same = build(SEED)  # int32 seed of the same values: the same stream
    with tf.Session(graph=graph) as s:
        first = s.run(a)
        np.testing.assert_array_equal(first, s.run(a))
        np.testing.assert_array_equal(first, s.run(same))
        assert not np.array_equal(first, s.run(b))
    with tf.Session(graph=graph) as s:
        np.testing.assert_array_equal(first, s.run(a))


def test_uniform_and_normal_distributions(sess):
    u, n, t = sess.run([tf.random.stateless_uniform([20000], SEED, minval=2.0, maxval=5.0),
                        tf.random.stateless_normal([20000], SEED, mean=1.0, stddev=2.0,
                                                   dtype=tf.float64),
                        tf.random.stateless_truncated_normal([20000], SEED, stddev=3.0)])
    assert u.dtype == np.float32 and n.dtype == np.float64 and t.dtype == np.float32
    assert 2.0 <= u.min() and u.max() < 5.0 and abs(u.mean() - 3.5) < 0.03
    assert abs(n.mean() - 1.0) < 0.06 and abs(n.std() - 2.0) < 0.06
    assert np.abs(t).max() <= 6.0 and abs(t.std() - 3.0 * 0.8796) < 0.06


def test_integer_uniform_range(sess):
    v = sess.run(tf.random.stateless_uniform([3000], SEED, minval=-3, maxval=9,
                                             dtype=tf.int32))
    assert v.dtype == np.int32 and v.min() == -3 and v.max() == 8
    counts = np.bincount(v + 3)
    assert counts.min() > 180  # 250 expected per value


def test_integer_uniform_needs_both_bounds(graph):
    with pytest.raises(ValueError, match="both"):
        tf.random.stateless_uniform([2], SEED, minval=None, maxval=3, dtype=tf.int32)


def test_categorical_frequencies(sess):
    logits = np.log([[0.2, 0.3, 0.5]])
    v = sess.run(tf.random.stateless_categorical(logits, 6000, SEED, dtype=tf.int32))
    assert v.shape == (1, 6000) and v.dtype == np.int32
    np.testing.assert_allclose(np.bincount(v[0]) / 6000, [0.2, 0.3, 0.5], atol=0.03)
    m = tf.random.stateless_multinomial(logits, 7, SEED)
    assert m.dtype == tf.int64 and m.shape.as_list() == [1, 7]


def test_binomial_gamma_poisson_moments(sess):
    b, g, p = sess.run([
        tf.random.stateless_binomial([8000, 2], SEED, counts=[10.0, 40.0], probs=[0.3, 0.9]),
        tf.random.stateless_gamma([8000, 2], SEED, alpha=[1.0, 5.0], beta=[2.0, 1.0],
                                  dtype=tf.float64),
        tf.random.stateless_poisson([8000], SEED, lam=6.0, dtype=tf.float32)])
    assert b.dtype == np.int32 and g.dtype == np.float64 and p.dtype == np.float32
    np.testing.assert_allclose(b.mean(0), [3.0, 36.0], atol=0.1)
    np.testing.assert_allclose(b.var(0), [2.1, 3.6], rtol=0.1)
    np.testing.assert_allclose(g.mean(0), [0.5, 5.0], rtol=0.05)
    np.testing.assert_allclose(g.var(0), [0.25, 5.0], rtol=0.1)
    assert abs(p.mean() - 6.0) < 0.15 and abs(p.var() - 6.0) < 0.5


def test_parameterized_truncated_normal(sess):
    v = sess.run(tf.random.stateless_parameterized_truncated_normal(
        [4000, 3], SEED, means=[0.0, 0.0, 1.0], stddevs=[1.0, 1.0, 2.0],
        minvals=[-1.0, 5.0, -100.0], maxvals=[1.0, 6.0, 100.0]))
    lo, hi = np.array([-1.0, 5.0, -100.0]), np.array([1.0, 6.0, 100.0])
    assert np.all((v >= lo) & (v <= hi))
    # [-1, 1]: variance 1 - 2 phi(1) / (Phi(1) - Phi(-1)) = 0.2911; far tail [5, 6]:
    # mean close to 5 + 1/5; wide bounds: the untruncated N(1, 2)
    assert abs(v[:, 0].var() - 0.2911) < 0.02
    assert abs(v[:, 1].mean() - 5.19) < 0.02
    assert abs(v[:, 2].mean() - 1.0) < 0.15 and abs(v[:, 2].std() - 2.0) < 0.1


def test_static_shapes_and_seed_checks(graph):
    n = tf.placeholder(tf.int32, [])
    assert tf.random.stateless_normal(tf.stack([n, 3]), SEED).shape.as_list() == [None, 3]
    assert tf.random.stateless_gamma([4, 2], SEED, [1.0, 2.0]).shape.as_list() == [4, 2]
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.random.stateless_uniform([2], [1, 2, 3])
    s = tf.placeholder(tf.int64, [None])
    op = tf.random.stateless_uniform([2], s)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="seed must have shape"):
            sess.run(op, {s: [1, 2, 3]})


@pytest.mark.parametrize("op_type", [
    "StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal",
    "StatelessRandomUniformInt", "StatelessRandomUniformFullInt", "StatelessMultinomial",
    "StatelessRandomBinomial", "StatelessRandomGammaV2", "StatelessRandomPoisson",
    "StatelessParameterizedTruncatedNormal"])
def test_stateless_ops_are_pure(op_type):
    op_def = registry.get_op_def(op_type)
    assert not op_def.stateful
    assert registry.has_kernel(op_type) and registry.has_gradient_entry(op_type)


def test_parameter_shape_mismatch(sess):
    g = tf.random.stateless_gamma([4], SEED, alpha=[1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="broadcast"):
        sess.run(g)


def test_split_and_fold_in(sess):
    seed = tf.constant(SEED, tf.int64)
    parts = tf.random.split(seed, 3)
    folded = [tf.random.fold_in(seed, d) for d in (0, 1)]
    assert parts.shape.as_list() == [3, 2] and parts.dtype == tf.int64
    assert folded[0].shape.as_list() == [2]
    p, f0, f1 = sess.run([parts, folded[0], folded[1]])
    assert len({tuple(r) for r in p}) == 3
    assert not np.array_equal(f0, f1)
    np.testing.assert_array_equal(p, sess.run(tf.random.split(seed, 3)))
    np.testing.assert_array_equal(f1, sess.run(tf.random.fold_in(seed, 1)))
    assert sess.run(tf.random.split(tf.constant(SEED, tf.int32), 2)).dtype == np.int32


def test_create_rng_state():
    np.testing.assert_array_equal(tf.random.create_rng_state(5, "philox"), [5, 0, 0])
    np.testing.assert_array_equal(tf.random.create_rng_state(2 ** 64 + 3, 2), [3, 1])
    assert tf.random.create_rng_state(1, 1).dtype == np.int64
    # TF 2.21's states: list seeds padded in front and cut to the state size, negative
    # ints sign-extended, AUTO_SELECT is Philox
    for seed, alg, want in [([1, 2], "philox", [0, 1, 2]), (-1, "philox", [-1, -1, -1]),
                            ([-1, 5], "philox", [0, -1, 5]), (-5, "threefry", [-5, -1]),
                            ([1, 2, 3, 4], "philox", [1, 2, 3]),
                            ([1, 2, 3], "threefry", [1, 2]), (3, 3, [3, 0, 0])]:
        np.testing.assert_array_equal(tf.random.create_rng_state(seed, alg), want)
    with pytest.raises(ValueError, match="algorithm"):
        tf.random.create_rng_state(1, "mt19937")


def test_seed_of_a_float_type_is_a_type_error(graph):
    # TF rejects it in the op's type check; it is never cast.
    with pytest.raises(TypeError, match="seed"):
        tf.random.stateless_uniform([2], seed=[1.0, 2.0])


@pytest.mark.parametrize("dtype", [tf.bool, tf.string, tf.int8])
def test_uniform_rejects_unsupported_dtypes_with_value_error(graph, dtype):
    with pytest.raises(ValueError, match="Accepted dtypes"):
        tf.random.stateless_uniform([2], seed=SEED, dtype=dtype)


@pytest.mark.parametrize("dtype", [tf.uint32, tf.uint64])
def test_unsigned_uniform_only_over_the_full_range(sess, dtype):
    with pytest.raises(ValueError, match="unsigned"):
        tf.random.stateless_uniform([2], seed=SEED, minval=0, maxval=5, dtype=dtype)
    full = tf.random.stateless_uniform([4], seed=SEED, minval=None, maxval=None, dtype=dtype)
    assert sess.run(full).dtype == dtype.as_numpy_dtype


def test_binomial_counts_follow_the_type_of_probs(sess):
    # Integer counts with float probs: counts take float32 from probs (TF converts probs
    # first), and the result has output_dtype.
    out = tf.random.stateless_binomial([2000, 2], seed=SEED, counts=[10, 20],
                                       probs=[0.5, 0.1], output_dtype=tf.int32)
    assert out.dtype == tf.int32
    assert out.shape.as_list() == [2000, 2]
    x = sess.run(out)
    assert x[:, 0].max() <= 10 and x[:, 1].max() <= 20 and x.min() >= 0
    # mean 5 and 2, standard errors about 0.035 and 0.03: 0.3 is about ten of them
    np.testing.assert_allclose(x.mean(axis=0), [5.0, 2.0], atol=0.3)


_ALG_BUILDERS = {
    "uniform": lambda alg: tf.random.stateless_uniform([4], SEED, alg=alg),
    "normal": lambda alg: tf.random.stateless_normal([4], SEED, alg=alg),
    "truncated": lambda alg: tf.random.stateless_truncated_normal([4], SEED, alg=alg),
    "split": lambda alg: tf.random.split(SEED, 3, alg=alg),
    "fold_in": lambda alg: tf.random.fold_in(SEED, 7, alg=alg),
}


@pytest.mark.parametrize("kind", sorted(_ALG_BUILDERS))
def test_alg_is_checked_as_tf_checks_it(sess, kind):
    # TF 2.21's messages (tf.random.stateless_uniform([3], seed=[1, 2], alg=...))
    build = _ALG_BUILDERS[kind]
    with pytest.raises(ValueError, match="got unsupported value bad. Supported values are "
                       "philox for the Philox algorithm"):
        build("bad")
    with pytest.raises(ValueError, match="got unsupported value 0. Supported values are 1 "
                       "for the Philox algorithm, 2 for the ThreeFry"):
        build(0)
    with pytest.raises(TypeError, match=r"Can't convert argument `alg` \(of value 1.5"):
        build(1.5)
    # Philox by any of its names (TF's CPU picks it for auto_select too); ThreeFry, which
    # TF's CPU kernels lack, draws the Philox values here (the module docstring)
    values = [sess.run(build(alg)) for alg in ("auto_select", "Philox", "AUTO-SELECT", 1, 3,
                                               tf.random.Algorithm.PHILOX, "threefry")]
    for v in values[1:]:
        np.testing.assert_array_equal(v, values[0])
