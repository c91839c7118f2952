"""Tails of the normal, Laplace and exponential distribution functions (log_cdf, survival
and log survival functions) and their gradients, against references independent of the
implementation: the normal's lower tail from a continued fraction of the Mills ratio (the
code uses an asymptotic series there), elsewhere Python's math.erfc; the Laplace and
exponential ones in closed form."""
import math

import numpy as np
import pytest

import tensorweave as tf

d = tf.distributions


def mills_ratio(t: float, terms: int = 400) -> float:
    """Q(t) / phi(t) for t > 0 (Q the upper tail, phi the density), by the continued
    fraction 1 / (t + 1 / (t + 2 / (t + 3 / ...)))."""
    f = t
    for k in range(terms, 0, -1):
        f = t + k / f
    return 1.0 / f


def log_ndtr_ref(x: float) -> float:
    """log P[Z <= x], Z ~ N(0, 1), in float64 arithmetic without underflow."""
    if x < -5.0:
        return -0.5 * x * x - 0.5 * math.log(2 * math.pi) + math.log(mills_ratio(-x))
    return math.log1p(-0.5 * math.erfc(x / math.sqrt(2.0)))


def dlog_ndtr_ref(x: float) -> float:
    """d/dx log P[Z <= x] = phi(x) / P[Z <= x]."""
    if x < -5.0:
        return 1.0 / mills_ratio(-x)
    phi = math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return phi / (0.5 * math.erfc(-x / math.sqrt(2.0)))


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# points on every segment of log_ndtr (the thresholds are -10 / 5 in float32, -20 / 8 in
# float64), the far tails included
POINTS = {np.float32: [-60.0, -40.0, -12.0, -10.5, -9.5, -3.0, -0.5, 0.0, 2.0, 6.0, 10.0],
          np.float64: [-60.0, -40.0, -25.0, -20.5, -19.5, -8.0, -0.5, 0.0, 2.0, 9.0, 12.0]}
RTOL = {np.float32: 2e-6, np.float64: 1e-9}


def assert_close_conditioned(got, want, x, dtype, rtol, atol=None):
    """`got` == `want` up to `rtol`, plus what rounding x (and x / sqrt 2) to `dtype`
    costs: log ndtr(x) near 0 moves by ~x^2 times that relative error, and near log(1)
    only an absolute error of ~eps is possible (log_ndtr takes log(ndtr(x)) there, as
    TF). `atol` replaces that eps where values are probabilities, not logs."""
    eps = float(np.finfo(dtype).eps)
    atol = eps if atol is None else atol
    tol = rtol + 4.0 * eps * np.square(np.asarray(x, np.float64))
    err = np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64))
    bad = err > tol * np.abs(want) + atol
    assert not bad.any(), (np.asarray(x)[bad], np.asarray(got)[bad], np.asarray(want)[bad])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_normal_log_cdf_and_survival_in_the_tails(graph, dtype):
    x = np.array(POINTS[dtype], dtype)
    normal = d.Normal(dtype(0.5), dtype(2.0))  # x is standardized through loc and scale
    value = 0.5 + 2.0 * x
    log_cdf, log_sf, sf, cdf = _run([normal.log_cdf(value),
                                     normal.log_survival_function(value),
                                     normal.survival_function(value), normal.cdf(value)])
    want_log_cdf = [log_ndtr_ref(float(v)) for v in x]
    want_log_sf = [log_ndtr_ref(-float(v)) for v in x]
    assert log_cdf.dtype == dtype and log_sf.dtype == dtype
    assert_close_conditioned(log_cdf, want_log_cdf, x, dtype, RTOL[dtype])
    assert_close_conditioned(log_sf, want_log_sf, x, dtype, RTOL[dtype])
    # the survival function by symmetry, not 1 - cdf (which is 0 for x >= 6 in float32)
    tiny = np.finfo(dtype).tiny
    want_sf = [0.5 * math.erfc(float(v) / math.sqrt(2.0)) for v in x]
    want_cdf = [0.5 * math.erfc(-float(v) / math.sqrt(2.0)) for v in x]
    assert_close_conditioned(sf, want_sf, x, dtype, RTOL[dtype], atol=tiny)
    assert_close_conditioned(cdf, want_cdf, x, dtype, RTOL[dtype], atol=tiny)


def test_normal_tail_values_of_the_issue(graph):
    normal = d.Normal(0.0, 1.0)
    sf, log_sf, log_cdf = _run([normal.survival_function([5.0, 10.0]),
                                normal.log_survival_function(10.0), normal.log_cdf(-40.0)])
    # 0.5 erfc(x / sqrt 2) by hand: 2.866516e-07 and 7.619853e-24
    np.testing.assert_allclose(sf, [2.8665157e-07, 7.6198530e-24], rtol=1e-6)
    assert log_sf == pytest.approx(-53.231285, rel=1e-6)
    assert log_cdf == pytest.approx(-804.60844, rel=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_normal_log_cdf_gradients_in_the_tails(graph, dtype):
    x = tf.constant(np.array(POINTS[dtype], dtype))
    normal = d.Normal(dtype(0.0), dtype(1.0))
    (g_cdf,) = tf.gradients(normal.log_cdf(x), [x])
    (g_sf,) = tf.gradients(normal.log_survival_function(x), [x])
    got_cdf, got_sf = _run([g_cdf, g_sf])
    want = [dlog_ndtr_ref(float(v)) for v in POINTS[dtype]]
    assert_close_conditioned(got_cdf, want, POINTS[dtype], dtype, 10 * RTOL[dtype])
    # d/dx log P[Z > x] = -(d/dz log P[Z <= z]) at z = -x
    want_sf = [-dlog_ndtr_ref(-float(v)) for v in POINTS[dtype]]
    assert_close_conditioned(got_sf, want_sf, POINTS[dtype], dtype, 10 * RTOL[dtype])


@pytest.mark.parametrize("points", [[-40.0, -25.0, -21.0], [-19.0, -3.0, 0.5],
                                    [4.5, 7.0, 9.0]], ids=["far", "middle", "upper"])
def test_normal_log_cdf_gradient_error(graph, points):
    x = tf.constant(np.array(points))
    y = d.Normal(np.float64(0.0), np.float64(1.0)).log_cdf(x)
    with tf.Session():
        theoretical, numeric = tf.test.compute_gradient(x, [3], y, [3],
                                                        x_init_value=np.array(points),
                                                        delta=1e-6)
    # (compute_gradient_error's maximum would skip NaNs: check them here)
    assert np.isfinite(theoretical).all() and np.isfinite(numeric).all()
    assert np.max(np.abs(theoretical - numeric)) < 1e-6


def test_normal_gradients_are_finite_at_the_segment_bounds(graph):
    # where() feeds its unused branch clamped arguments: no 0 * inf = NaN in the gradient
    for dtype, bounds in ((np.float32, [-10.0, 5.0]), (np.float64, [-20.0, 8.0])):
        x = tf.constant(np.array(bounds + [0.0, -100.0, 100.0], dtype))
        normal = d.Normal(dtype(0.0), dtype(1.0))
        grads = tf.gradients([normal.log_cdf(x), normal.log_survival_function(x)], [x])
        assert np.isfinite(_run(grads[0])).all()


def test_laplace_log_cdf_and_log_survival(graph):
    x = np.array([-100.0, -3.0, -0.5, 0.0, 0.5, 3.0, 100.0], np.float32)
    laplace = d.Laplace(np.float32(1.0), np.float32(2.0))
    value = 1.0 + 2.0 * x
    log_cdf, log_sf, cdf = _run([laplace.log_cdf(value),
                                 laplace.log_survival_function(value), laplace.cdf(value)])

    def log_l(z):  # log P[L <= z] for the standard Laplace, in float64
        return math.log(0.5) + z if z < 0 else math.log1p(-0.5 * math.exp(-z))
    np.testing.assert_allclose(log_cdf, [log_l(float(z)) for z in x], rtol=1e-6,
                               atol=1e-30)
    np.testing.assert_allclose(log_sf, [log_l(-float(z)) for z in x], rtol=1e-6,
                               atol=1e-30)
    assert log_sf[-1] == pytest.approx(-100.693146, rel=1e-6)  # log(1/2) - 100
    np.testing.assert_allclose(np.exp(log_cdf), cdf, rtol=1e-6, atol=1e-30)


def test_laplace_tail_gradients(graph):
    x = tf.constant(np.array([-100.0, -1.0, 1.0, 100.0]))
    laplace = d.Laplace(np.float64(0.0), np.float64(1.0))
    g_cdf, g_sf = _run([tf.gradients(laplace.log_cdf(x), [x])[0],
                        tf.gradients(laplace.log_survival_function(x), [x])[0]])
    # d/dz log L(z): 1 below 0, e^-z / (2 - e^-z) above
    upper = math.exp(-1.0) / (2.0 - math.exp(-1.0))
    np.testing.assert_allclose(g_cdf, [1.0, 1.0, upper, math.exp(-100.0) / 2.0], rtol=1e-9)
    np.testing.assert_allclose(g_sf, [-math.exp(-100.0) / 2.0, -upper, -1.0, -1.0],
                               rtol=1e-9)


def test_exponential_log_survival_function(graph):
    expo = d.Exponential(2.0)
    log_sf = _run(expo.log_survival_function([0.5, 100.0]))
    np.testing.assert_allclose(log_sf, [-1.0, -200.0], rtol=1e-6)  # -rate x


def test_special_math_functions(graph):
    from tensorweave.distributions import special_math
    x64 = np.array([-30.0, -1.0, 0.0, 1.0, 30.0])
    nd, lnd, lcl = _run([special_math.ndtr(x64), special_math.log_ndtr(x64),
                         special_math.log_cdf_laplace(x64)])
    # relative error ~x^2 eps at x = -30 from rounding x / sqrt(2)
    np.testing.assert_allclose(nd, [0.5 * math.erfc(-v / math.sqrt(2)) for v in x64],
                               rtol=1e-12)
    np.testing.assert_allclose(lnd, [log_ndtr_ref(v) for v in x64], rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(lcl[:2], x64[:2] - math.log(2.0), rtol=1e-14)
    with pytest.raises(TypeError, match="float16"):
        special_math.log_ndtr(tf.constant(1.0, tf.float16))
    with pytest.raises(ValueError, match="series_order"):
        special_math.log_ndtr(x64, series_order=31)
