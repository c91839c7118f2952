"""RandomGamma, RandomPoissonV2 and the stateless gamma and Poisson ops give TF's values
bit for bit: the ops against values recorded from TensorFlow 2.21
(tf_distribution_values.py), and the vectorized rejection loops of tf_distributions
against a scalar, one-output-at-a-time transcription of TF's loops."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.random import philox, tf_distributions

import tf_distribution_values as recorded


def _assert_same(values, expected, dtype):
    assert values.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(values.ravel(), np.array(expected, dtype))


# --- the ops against TF ----------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(recorded.GAMMA, key=str), ids=str)
def test_random_gamma_gives_tfs_values_run_after_run(case):
    dtype, shape, alphas, seed = case
    with tf.Graph().as_default():
        x = tf.random_gamma(list(shape), list(alphas), dtype=dtype, seed=seed)
        with tf.Session() as sess:
            runs = [sess.run(x), sess.run(x)]
    for values, expected in zip(runs, recorded.GAMMA[case]):
        assert values.shape == shape + (len(alphas),)
        _assert_same(values, expected, dtype)


@pytest.mark.parametrize("case", sorted(recorded.POISSON, key=str), ids=str)
def test_random_poisson_gives_tfs_values_run_after_run(case):
    rate_dtype, dtype, shape, rates, seed = case
    with tf.Graph().as_default():
        x = tf.random_poisson(tf.constant(rates, rate_dtype), list(shape), dtype=dtype,
                              seed=seed)
        with tf.Session() as sess:
            runs = [sess.run(x), sess.run(x)]
    for values, expected in zip(runs, recorded.POISSON[case]):
        assert values.shape == shape + (len(rates),)
        _assert_same(values, expected, dtype)


@pytest.mark.parametrize("case", sorted(recorded.STATELESS_GAMMA, key=str), ids=str)
def test_stateless_gamma_gives_tfs_values(case, sess):
    dtype, shape, seed, alpha = case
    values = sess.run(tf.random.stateless_gamma(list(shape), seed=list(seed), alpha=alpha,
                                                dtype=dtype))
    assert values.shape == shape
    _assert_same(values, recorded.STATELESS_GAMMA[case], dtype)


@pytest.mark.parametrize("case", sorted(recorded.STATELESS_POISSON, key=str), ids=str)
def test_stateless_poisson_gives_tfs_values(case, sess):
    dtype, shape, seed, lam = case
    values = sess.run(tf.random.stateless_poisson(list(shape), seed=list(seed), lam=lam,
                                                  dtype=dtype))
    assert values.shape == shape
    _assert_same(values, recorded.STATELESS_POISSON[case], dtype)


@pytest.mark.parametrize("case", sorted(recorded.STATELESS_BINOMIAL, key=str), ids=str)
def test_stateless_binomial_gives_tfs_values(case, sess):
    shape, seed, counts, probs, param_dtype, dtype = case
    x = tf.random.stateless_binomial(list(shape), list(seed), tf.constant(counts, param_dtype),
                                     tf.constant(probs, param_dtype), output_dtype=dtype)
    values = sess.run(x)
    assert values.shape == shape
    _assert_same(values, recorded.STATELESS_BINOMIAL[case], dtype)


def test_binomial_counts_must_be_finite_where_tf_would_loop_forever(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="counts must be finite"):
        sess.run(tf.random.stateless_binomial([2], [1, 2], counts=np.nan, probs=0.3))
    zero = tf.random.stateless_binomial([2], [1, 2], counts=np.inf, probs=0.0)
    np.testing.assert_array_equal(sess.run(zero), [0, 0])


def _truncated_normal(case, threads):
    shape, seed, means, stddevs, minvals, maxvals, dtype = case
    with tf.Graph().as_default():
        params = [tf.constant(p, dtype) for p in (means, stddevs, minvals, maxvals)]
        x = tf.random.stateless_parameterized_truncated_normal(list(shape), list(seed),
                                                               *params)
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Session(config=config) as sess:
            return sess.run(x)


@pytest.mark.parametrize("case", sorted(recorded.PARAMETERIZED_TRUNCATED_NORMAL, key=str),
                         ids=str)
def test_stateless_parameterized_truncated_normal_gives_tfs_values(case):
    """The three samplers (normal rejection: case 0; uniform: narrow intervals;
    exponential: one-sided tails), the bounds flipped, float16/32/64."""
    values = _truncated_normal(case, threads=1)
    assert values.shape == case[0]
    _assert_same(values, recorded.PARAMETERIZED_TRUNCATED_NORMAL[case], case[-1])


@pytest.mark.parametrize("case", sorted(recorded.PARAMETERIZED_TRUNCATED_NORMAL_4_THREADS,
                                        key=str), ids=str)
def test_truncated_normal_splits_its_outputs_over_threads_as_tf(case):
    values = _truncated_normal(case, threads=4)
    expected = recorded.PARAMETERIZED_TRUNCATED_NORMAL_4_THREADS[case]
    _assert_same(values.ravel()[::50], expected, case[-1])
    # one thread draws other values: each shard starts its own part of the stream
    assert not np.array_equal(_truncated_normal(case, threads=1).ravel()[::50],
                              np.array(expected, case[-1]))


def test_truncated_normal_rejects_invalid_parameters_of_drawn_batches(sess):
    for stddev, lo, hi in [(0.0, -1.0, 1.0), (1.0, 1.0, 1.0), (1.0, -np.inf, np.inf)]:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid parameters"):
            sess.run(tf.random.stateless_parameterized_truncated_normal(
                [3], [1, 2], 0.0, stddev, lo, hi))
    empty = tf.random.stateless_parameterized_truncated_normal([0], [1, 2], 0.0, -1.0)
    assert sess.run(empty).shape == (0,)


def test_stateless_parameters_must_end_the_shape_unless_the_output_is_empty(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="must end with broadcasted"):
        sess.run(tf.random.stateless_gamma([4, 2], seed=[3, 4], alpha=[2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must end with broadcasted"):
        sess.run(tf.random.stateless_poisson([4, 2], seed=[3, 4], lam=[2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must end with broadcasted"):
        sess.run(tf.random.stateless_binomial([3, 2], [4, 4], [[0.0], [3.0]], [0.5, 1.0]))
    empty = sess.run(tf.random.stateless_gamma([0, 2], seed=[3, 4], alpha=[]))
    assert empty.shape == (0, 2)


def test_a_nan_rate_is_an_error_not_tfs_endless_loop(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="RandomPoissonV2.*NaN"):
        sess.run(tf.random_poisson([np.nan, 3.0], [2], seed=1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="StatelessRandomPoisson.*NaN"):
        sess.run(tf.random.stateless_poisson([2], seed=[1, 2], lam=np.nan))


# --- the vectorized loops against TF's loops, one output at a time ---------------------------
class _Output:
    """Output i's generator: its blocks read in order from `counter + reserved * i`,
    each made into two normals or two uniforms, handed out last first."""

    def __init__(self, key, counter, i, reserved=256):
        self.key, self.counter = key, philox.skip(counter, reserved * i)
        self.pending = {"normal": [], "uniform": []}

    def _block(self):
        block = philox.blocks(self.key, self.counter, np.zeros(1, np.uint64))
        self.counter = philox.skip(self.counter, 1)
        return block

    def next(self, kind):
        if not self.pending[kind]:
            block = self._block()
            if kind == "normal":
                pair = philox._box_muller_float64(*block.T)[0]
            else:
                pair = [philox._unit_float64(block[:, 0], block[:, 1])[0],
                        philox._unit_float64(block[:, 2], block[:, 3])[0]]
            self.pending[kind] = [float(pair[0]), float(pair[1])]
        return self.pending[kind].pop()


def _scalar_gamma(alpha, gen):
    if alpha == 1.0:
        return -math.log1p(-gen.next("uniform"))
    d = alpha + (2.0 / 3 if alpha < 1 else -1.0 / 3)
    c = 1.0 / 3 / math.sqrt(d)
    while True:
        x = gen.next("normal")
        v = 1 + c * x
        if v <= 0:
            continue
        v = v * v * v
        u = gen.next("uniform")
        if u < 1 - 0.0331 * (x * x) * (x * x) or \
                math.log(u) < 0.5 * x * x + d * (1 - v + math.log(v)):
            res = d * v
            return res * math.pow(gen.next("uniform"), 1 / alpha) if alpha < 1 else res


def _scalar_poisson(rate, gen):
    if rate < 10:
        prod, x = 1.0, 0
        while True:
            prod *= gen.next("uniform")
            if prod <= math.exp(-rate):
                return x
            x += 1
    b = 0.931 + 2.53 * math.sqrt(rate)
    a = -0.059 + 0.02483 * b
    inv_alpha, v_r = 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2)
    while True:
        u = gen.next("uniform") - 0.5
        v = gen.next("uniform")
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        s = math.log(v * inv_alpha / (a / (us * us) + b))
        if s <= -rate + k * math.log(rate) - tf_distributions._lgamma()(k + 1):
            return k


def _stirling_tail(k):
    table = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
             0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
             0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
             0.00833056343336287]
    if k <= 9:
        return table[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _scalar_binomial_btrs(n, p, gen):
    stddev = math.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * stddev
    a, c = -0.0873 + 0.0248 * b + 0.01 * p, n * p + 0.5
    v_r, r = 0.92 - 4.2 / b, p / (1 - p)
    alpha, m = (2.83 + 5.1 / b) * stddev, math.floor((n + 1) * p)
    while True:
        u = gen.next("uniform") - 0.5
        v = gen.next("uniform")
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or k > n:
            continue
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        if math.log(v * alpha / (a / (us * us) + b)) <= bound:
            return k


def _scalar_binomial_inversion(n, p, gen):
    total, count = 0.0, 0
    while True:
        total += math.ceil(math.log(gen.next("uniform")) / math.log1p(-p))
        if total > n:
            return count
        count += 1


def test_binomial_loops_equal_tfs_loops_per_output():
    """BTRS (n p >= 10, 256 blocks an output) and the inversion (42 blocks an output),
    the draws of prob > 0.5 mirrored."""
    key, counter = philox.key_counter_of_seeds(99, 5)
    counts = np.array([30.0, 200.0, 9.0, 60.0, 500.0])
    probs = np.array([0.5, 0.08, 0.7, 0.9, 0.001])
    n = 200
    values = tf_distributions.binomial(key, counter, counts, probs, n)
    expected = []
    for s in range(n):
        row = []
        for j, (count, prob) in enumerate(zip(counts, probs)):
            i = j * n + s
            p = min(prob, 1 - prob)
            if count * p >= 10:
                draw = _scalar_binomial_btrs(count, p, _Output(key, counter, i))
            else:
                gen = _Output(key, counter, i, reserved=42)
                draw = _scalar_binomial_inversion(count, p, gen)
            row.append(count - draw if prob > 0.5 else draw)
        expected.append(row)
    np.testing.assert_array_equal(values, expected)


@pytest.mark.parametrize("sampler, scalar, params", [
    (tf_distributions.gamma, _scalar_gamma, [0.01, 0.4, 1.0, 1.2, 3.0, 40.0]),
    (tf_distributions.poisson, _scalar_poisson, [0.3, 5.0, 9.5, 10.0, 11.0, 300.0]),
], ids=["gamma", "poisson"])
def test_vectorized_loops_equal_tfs_loop_per_output(sampler, scalar, params):
    key, counter = philox.key_counter_of_seeds(12345, -6)
    n = 300   # enough outputs to take every branch of the loops
    values = sampler(key, counter, np.array(params), n)
    assert values.shape == (n, len(params))
    expected = [[scalar(p, _Output(key, counter, j * n + s)) for j, p in enumerate(params)]
                for s in range(n)]
    np.testing.assert_array_equal(values, expected)


def test_gamma_means_follow_alpha():
    """A distribution check independent of TF's words: the sample means of Gamma(alpha)
    are alpha within 4 standard errors."""
    key, counter = philox.key_counter_of_seeds(3, 4)
    alphas = np.array([0.2, 1.0, 2.5, 30.0])
    values = tf_distributions.gamma(key, counter, alphas, 20000)
    assert np.all(np.abs(values.mean(0) - alphas) < 4 * np.sqrt(alphas / 20000))
