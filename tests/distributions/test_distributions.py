"""tf.distributions against independent references: closed forms written with Python's
math module, numeric integration of the densities (cdf, entropy, KL), and sample moments
of seeded draws. (The same parameters gave the same values under TF 2.21, checked by
hand.)"""
import math

import numpy as np
import pytest

import tensorweave as tf

d = tf.distributions
GRID = np.linspace(-60.0, 60.0, 400001)


def _pdf_on(dist_logpdf, lo, hi, n=400001):
    x = np.linspace(lo, hi, n)
    return x, np.exp(dist_logpdf(x))


def _entropy_numeric(logpdf, lo, hi):
    x = np.linspace(lo, hi, 400001)
    lp = logpdf(x)
    p = np.exp(lp)
    return -np.trapezoid(np.where(p > 0, p * lp, 0.0), x)


# reference log densities (math formulas, float64)
def normal_lp(loc, scale):
    return lambda x: -0.5 * ((x - loc) / scale) ** 2 - math.log(scale) - 0.5 * math.log(
        2 * math.pi)


def laplace_lp(loc, scale):
    return lambda x: -np.abs(x - loc) / scale - math.log(2 * scale)


def gamma_lp(a, b):
    return lambda x: (a - 1) * np.log(x) - b * x - math.lgamma(a) + a * math.log(b)


def beta_lp(a, b):
    lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return lambda x: (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - lbeta


def student_lp(df, loc, scale):
    c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi) \
        - math.log(scale)
    return lambda x: c - (df + 1) / 2 * np.log1p(((x - loc) / scale) ** 2 / df)


CASES = [
    # (distribution, reference log density, support for integration, points)
    (lambda: d.Normal(0.5, 1.5), normal_lp(0.5, 1.5), (-30, 30), [-1.5, 0.2, 2.0]),
    (lambda: d.Laplace(0.3, 2.0), laplace_lp(0.3, 2.0), (-80, 80), [-1.5, 0.2, 2.0]),
    (lambda: d.Gamma(2.5, 1.5), gamma_lp(2.5, 1.5), (1e-9, 60), [0.3, 1.0, 4.0]),
    (lambda: d.Exponential(0.7), gamma_lp(1.0, 0.7), (1e-12, 120), [0.3, 1.0, 4.0]),
    (lambda: d.Beta(2.0, 3.5), beta_lp(2.0, 3.5), (1e-9, 1 - 1e-9), [0.1, 0.5, 0.9]),
    (lambda: d.StudentT(4.0, 0.5, 2.0), student_lp(4.0, 0.5, 2.0), (-4000, 4000),
     [-1.5, 0.2, 2.0]),
]


@pytest.mark.parametrize("make,logpdf,support,points", CASES,
                         ids=["normal", "laplace", "gamma", "exponential", "beta", "studentt"])
def test_densities_cdfs_and_entropies(graph, make, logpdf, support, points):
    dist = make()
    x = np.array(points)
    grid = np.linspace(support[0], max(points), 400001)
    want_cdf = [np.trapezoid(np.exp(logpdf(grid[grid <= p])), grid[grid <= p])
                for p in points]
    with tf.Session() as sess:
        lp, cdf, ent = sess.run([dist.log_prob(x.astype(np.float32)),
                                 dist.cdf(x.astype(np.float32)), dist.entropy()])
        prob, sf = sess.run([dist.prob(x.astype(np.float32)),
                             dist.survival_function(x.astype(np.float32))])
    np.testing.assert_allclose(lp, logpdf(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(prob, np.exp(logpdf(x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cdf, want_cdf, atol=2e-4)
    np.testing.assert_allclose(sf, 1 - np.array(want_cdf), atol=2e-4)
    np.testing.assert_allclose(ent, _entropy_numeric(logpdf, *support), rtol=2e-3)


@pytest.mark.parametrize("make,mean,var", [
    (lambda: d.Normal([0.5, -1.0], 1.5), [0.5, -1.0], [2.25, 2.25]),
    (lambda: d.Laplace(0.3, 2.0), 0.3, 8.0),
    (lambda: d.Uniform(-1.0, 3.0), 1.0, 16.0 / 12),
    (lambda: d.Gamma(2.5, 1.5), 2.5 / 1.5, 2.5 / 1.5 ** 2),
    (lambda: d.Exponential(0.7), 1 / 0.7, 1 / 0.49),
    (lambda: d.Beta(2.0, 3.5), 2.0 / 5.5, 2.0 * 3.5 / (5.5 ** 2 * 6.5)),
    (lambda: d.StudentT(6.0, 0.5, 2.0), 0.5, 4.0 * 6 / 4),
], ids=["normal", "laplace", "uniform", "gamma", "exponential", "beta", "studentt"])
def test_moments_and_samples(graph, make, mean, var):
    dist = make()
    samples = dist.sample(40000, seed=7)
    with tf.Session() as sess:
        m, v, s = sess.run([dist.mean(), dist.variance(), samples])
    np.testing.assert_allclose(m, mean, rtol=1e-6)
    np.testing.assert_allclose(v, var, rtol=1e-5)
    assert s.shape == (40000,) + np.shape(mean)
    np.testing.assert_allclose(s.mean(0), mean, atol=4 * np.sqrt(np.max(var) / 40000))
    np.testing.assert_allclose(s.var(0), var, rtol=0.08)


def test_undefined_statistics_and_quantiles(graph):
    with tf.Session() as sess:
        modes = sess.run([d.Gamma([0.5, 1.0, 3.0], 2.0).mode(),
                          d.Beta([0.5, 2.0], [2.0, 3.0]).mode()])
        assert np.isnan(modes[0][:2]).all() and modes[0][2] == 1.0
        assert np.isnan(modes[1][0]) and modes[1][1] == pytest.approx(1.0 / 3.0)
        t = d.StudentT([0.5, 1.5, 3.0], 0.0, 1.0)
        mean, var = sess.run([t.mean(), t.variance()])
        assert np.isnan(mean[0]) and mean[1:].tolist() == [0.0, 0.0]
        assert np.isnan(var[0]) and np.isinf(var[1]) and var[2] == pytest.approx(3.0)
        q = sess.run(d.Normal(0.5, 2.0).quantile([0.1, 0.5, 0.975]))
        np.testing.assert_allclose(q, [0.5 - 2 * 1.2815515655, 0.5, 0.5 + 2 * 1.959963985],
                                   rtol=1e-6)
        strict = d.Gamma(0.5, 1.0, allow_nan_stats=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match="mode of a Gamma"):
            sess.run(strict.mode())
    with pytest.raises(NotImplementedError, match="mode is not implemented: Uniform"):
        d.Uniform().mode()


def test_kl_divergences_against_integration_and_sums(graph):
    x = np.linspace(-40, 40, 400001)
    kl_nn = np.trapezoid(np.exp(normal_lp(0.5, 1.5)(x)) *
                         (normal_lp(0.5, 1.5)(x) - normal_lp(-1.0, 2.0)(x)), x)
    xg = np.linspace(1e-9, 80, 800001)
    kl_gg = np.trapezoid(np.exp(gamma_lp(2.0, 1.5)(xg)) *
                         (gamma_lp(2.0, 1.5)(xg) - gamma_lp(3.0, 0.5)(xg)), xg)
    xb = np.linspace(1e-9, 1 - 1e-9, 800001)
    kl_bb = np.trapezoid(np.exp(beta_lp(2.0, 1.5)(xb)) *
                         (beta_lp(2.0, 1.5)(xb) - beta_lp(0.9, 3.0)(xb)), xb)
    pa, pb = 1 / (1 + np.exp(-0.3)), 0.9
    kl_ber = pa * math.log(pa / pb) + (1 - pa) * math.log((1 - pa) / (1 - pb))
    la = np.array([0.1, 1.0, -0.5])
    qa = np.exp(la) / np.exp(la).sum()
    qb = np.array([0.2, 0.3, 0.5])
    kl_cat = float(np.sum(qa * np.log(qa / qb)))
    kls = [d.kl_divergence(d.Normal(0.5, 1.5), d.Normal(-1.0, 2.0)),
           d.kl_divergence(d.Gamma(2.0, 1.5), d.Gamma(3.0, 0.5)),
           d.kl_divergence(d.Beta(2.0, 1.5), d.Beta(0.9, 3.0)),
           d.Bernoulli(logits=0.3).kl_divergence(d.Bernoulli(probs=0.9)),
           d.kl_divergence(d.Categorical(logits=la), d.Categorical(probs=qb)),
           # an Exponential is a Gamma: Gamma's KL applies
           d.kl_divergence(d.Exponential(2.0), d.Gamma(1.0, 2.0))]
    with tf.Session() as sess:
        got = sess.run(kls)
    np.testing.assert_allclose(got[:5], [kl_nn, kl_gg, kl_bb, kl_ber, kl_cat], rtol=1e-4,
                               atol=1e-6)
    assert abs(got[5]) < 1e-6
    with pytest.raises(NotImplementedError, match="No KL.*type Normal and distribution_b "
                       "type Laplace"):
        d.kl_divergence(d.Normal(0.0, 1.0), d.Laplace(0.0, 1.0))
    with pytest.raises(ValueError, match=r"KL\(Normal \|\| Normal\) has already been "
                       "registered"):
        d.RegisterKL(d.Normal, d.Normal)(lambda a, b, name=None: 0.0)


def test_bernoulli_and_categorical(graph):
    b = d.Bernoulli(logits=[0.3, -1.2])
    c = d.Categorical(logits=[[0.1, 1.0, -0.5], [2.0, 0.0, 0.3]])
    assert b.dtype == tf.int32 and b.reparameterization_type is d.NOT_REPARAMETERIZED
    assert c.batch_shape.as_list() == [2] and c.event_shape.as_list() == []
    p = 1 / (1 + np.exp(-np.array([0.3, -1.2])))
    logits = np.array([[0.1, 1.0, -0.5], [2.0, 0.0, 0.3]])
    q = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    with tf.Session() as sess:
        lp_b, ent_b, mode_b, lp_c, ent_c, mode_c, k = sess.run(
            [b.log_prob([1, 0]), b.entropy(), b.mode(), c.log_prob([2, 0]), c.entropy(),
             c.mode(), c.event_size])
        draws_b, draws_c = sess.run([b.sample(20000, seed=1), c.sample(20000, seed=2)])
    np.testing.assert_allclose(lp_b, [math.log(p[0]), math.log(1 - p[1])], rtol=1e-5)
    np.testing.assert_allclose(ent_b, -(p * np.log(p) + (1 - p) * np.log(1 - p)), rtol=1e-5)
    assert mode_b.tolist() == [1, 0] and mode_c.tolist() == [1, 0] and k == 3
    np.testing.assert_allclose(lp_c, [math.log(q[0, 2]), math.log(q[1, 0])], rtol=1e-5)
    np.testing.assert_allclose(ent_c, -(q * np.log(q)).sum(-1), rtol=1e-5)
    assert draws_b.shape == (20000, 2) and draws_c.shape == (20000, 2)
    np.testing.assert_allclose(draws_b.mean(0), p, atol=0.015)
    for row in range(2):
        freq = np.bincount(draws_c[:, row], minlength=3) / 20000
        np.testing.assert_allclose(freq, q[row], atol=0.015)
    with pytest.raises(ValueError, match="Must pass probs or logits, but not both"):
        d.Bernoulli(logits=0.1, probs=0.5)


def test_reparameterized_samples_carry_gradients(graph):
    loc, scale, conc = tf.Variable(0.5), tf.Variable(2.0), tf.Variable(3.0)
    normal = d.Normal(loc, scale).sample(1000, seed=3)
    eps = (normal - loc) / scale
    g_loc, g_scale = tf.gradients(tf.reduce_mean(normal), [loc, scale])
    gamma = d.Gamma(conc, 1.0).sample(4000, seed=4)
    (g_conc,) = tf.gradients(tf.reduce_mean(gamma), [conc])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gl, gs, e, gc = sess.run([g_loc, g_scale, eps, g_conc])
    assert gl == pytest.approx(1.0, rel=1e-5)
    assert gs == pytest.approx(float(np.mean(e)), abs=1e-5)  # d sample / d scale = eps
    assert gc == pytest.approx(1.0, abs=0.1)  # d E[x] / d concentration = 1 / rate


def test_shapes_names_and_copy(graph):
    n = d.Normal([0.0, 1.0], 2.0)
    assert n.batch_shape.as_list() == [2] and n.event_shape.as_list() == []
    assert n.sample([4, 5]).shape.as_list() == [4, 5, 2]
    assert n.log_prob(0.5).name.startswith(n.name + "log_prob/")
    assert d.Beta([1.0, 2.0], 3.0).sample(2).shape.as_list() == [2, 2]
    assert d.Gamma(2.0, [1.0, 2.0, 3.0]).sample(7).shape.as_list() == [7, 3]
    copy = n.copy(loc=3.0)
    assert type(copy) is d.Normal and copy.parameters["loc"] == 3.0
    assert repr(d.FULLY_REPARAMETERIZED) == "<Reparameterization Type: FULLY_REPARAMETERIZED>"


def _count_vectors(n, k):
    """Every vector of k non-negative integers summing to n."""
    if k == 1:
        return [[n]]
    return [[i] + rest for i in range(n + 1) for rest in _count_vectors(n - i, k - 1)]


def test_dirichlet_against_beta_and_samples(graph):
    conc = np.array([[1.5, 2.0, 0.5], [2.0, 3.0, 4.0]])
    dir3 = d.Dirichlet(conc.astype(np.float32))
    dir2 = d.Dirichlet([2.0, 3.5])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    xg = np.linspace(1e-9, 1 - 1e-9, 400001)
    kl_ref = np.trapezoid(np.exp(beta_lp(2.0, 3.5)(xg)) *
                          (beta_lp(2.0, 3.5)(xg) - beta_lp(1.0, 1.0)(xg)), xg)
    samples = dir3.sample(30000, seed=5)
    with tf.Session() as sess:
        lp, lp2, ent2, kl, mean, cov, s = sess.run([
            dir3.log_prob(x.astype(np.float32)), dir2.log_prob([0.3, 0.7]), dir2.entropy(),
            d.kl_divergence(dir2, d.Dirichlet([1.0, 1.0])), dir3.mean(), dir3.covariance(),
            samples])
    lbeta = [sum(math.lgamma(a) for a in row) - math.lgamma(sum(row)) for row in conc]
    want = [np.sum((row - 1) * np.log(xr)) - lb for row, xr, lb in zip(conc, x, lbeta)]
    np.testing.assert_allclose(lp, want, rtol=1e-5)
    assert lp2 == pytest.approx(beta_lp(2.0, 3.5)(np.array(0.3)), rel=1e-5)
    assert ent2 == pytest.approx(_entropy_numeric(beta_lp(2.0, 3.5), 1e-9, 1 - 1e-9),
                                 rel=2e-3)
    assert kl == pytest.approx(kl_ref, rel=1e-4)
    np.testing.assert_allclose(mean, conc / conc.sum(-1, keepdims=True), rtol=1e-6)
    assert s.shape == (30000, 2, 3) and np.allclose(s.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(s.mean(0), mean, atol=0.01)
    for b in range(2):
        np.testing.assert_allclose(np.cov(s[:, b].T), cov[b], atol=3e-3)


def test_multinomials_sum_to_one_and_sample_their_moments(graph):
    m = d.Multinomial(total_count=[4.0, 6.0], logits=[[0.1, 0.5, -0.2]])
    dm = d.DirichletMultinomial(total_count=4.0, concentration=[1.5, 2.0, 0.5])
    assert m.batch_shape.as_list() == [2] and m.event_shape.as_list() == [3]
    assert m.reparameterization_type is d.NOT_REPARAMETERIZED
    counts = np.array(_count_vectors(4, 3), np.float32)
    p = np.exp([0.1, 0.5, -0.2]) / np.exp([0.1, 0.5, -0.2]).sum()
    ms, dms = m.sample(20000, seed=8), dm.sample(20000, seed=9)
    with tf.Session() as sess:
        lp_m = sess.run(d.Multinomial(4.0, probs=p.astype(np.float32)).log_prob(counts))
        lp_dm = sess.run(dm.log_prob(counts))
        mean_m, cov_m, mean_dm, cov_dm, s_m, s_dm = sess.run(
            [m.mean(), m.covariance(), dm.mean(), dm.covariance(), ms, dms])
    assert np.exp(lp_m).sum() == pytest.approx(1.0, abs=1e-5)
    assert np.exp(lp_dm).sum() == pytest.approx(1.0, abs=1e-5)
    one = counts[5]
    want = math.lgamma(5) - sum(math.lgamma(c + 1) for c in one) + float(np.sum(one *
                                                                            np.log(p)))
    assert lp_m[5] == pytest.approx(want, rel=1e-5)
    np.testing.assert_allclose(mean_m, np.outer([4.0, 6.0], p), rtol=1e-5)
    assert s_m.shape == (20000, 2, 3) and (s_m.sum(-1) == [4.0, 6.0]).all()
    np.testing.assert_allclose(s_m.mean(0), mean_m, atol=0.05)
    np.testing.assert_allclose(np.cov(s_m[:, 1].T), cov_m[1], atol=0.06)
    np.testing.assert_allclose(mean_dm, 4.0 * np.array([1.5, 2.0, 0.5]) / 4.0, rtol=1e-5)
    assert (s_dm.sum(-1) == 4.0).all()
    np.testing.assert_allclose(s_dm.mean(0), mean_dm, atol=0.05)
    np.testing.assert_allclose(np.cov(s_dm.T), cov_dm, atol=0.08)
