"""Special functions (special_math_ops): erfc, lgamma, digamma, polygamma, zeta, erfinv,
ndtri, lbeta, log_sigmoid, against Python's math module and closed forms."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error

EULER = 0.5772156649015329


def _lgamma_ref(x):
    return np.array([math.inf if v <= 0 and v == int(v) else math.lgamma(v) for v in x])


def test_lgamma_matches_math_lgamma(sess):
    x0 = np.concatenate([np.linspace(-20.3, 30.0, 401), [1e-8, 1.0, 2.0, 100.5, 1e5]])
    got = sess.run(tf.math.lgamma(tf.constant(x0)))
    ref = _lgamma_ref(x0)
    assert np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))) < 1e-13


def test_lgamma_poles_and_dtypes(sess):
    y = tf.lgamma(tf.constant([0.0, -1.0, -2.0, 0.5], tf.float32))
    assert y.op.type == "Lgamma" and y.dtype == tf.float32
    got = sess.run(y)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got[:3], [np.inf] * 3)
    np.testing.assert_allclose(got[3], math.lgamma(0.5), rtol=1e-6)
    half = sess.run(tf.math.lgamma(tf.constant([3.0], tf.float16)))
    assert half.dtype == np.float16 and abs(float(half[0]) - math.log(2.0)) < 1e-3


def test_digamma_closed_forms_and_recurrence(sess):
    x0 = np.array([1.0, 0.5, -0.5, 10.5, 3.25, -2.75, 1e6])
    got = sess.run(tf.math.digamma(tf.constant(x0)))
    ref = [-EULER, -EULER - 2 * math.log(2), -EULER - 2 * math.log(2) + 2]
    np.testing.assert_allclose(got[:3], ref, rtol=1e-13, atol=1e-13)
    # psi(x + 1) = psi(x) + 1 / x; at large x, psi(x) ~ log(x) - 1 / (2x)
    shifted = sess.run(tf.math.digamma(tf.constant(x0[3:6] + 1.0)))
    np.testing.assert_allclose(shifted, got[3:6] + 1.0 / x0[3:6], rtol=1e-13)
    np.testing.assert_allclose(got[6], math.log(1e6) - 0.5e-6, rtol=1e-14)


def test_digamma_poles_are_nan(sess):
    assert np.isnan(sess.run(tf.math.digamma(tf.constant([0.0, -2.0])))).all()


def test_zeta_closed_forms_and_domain(sess):
    x = tf.constant([2.0, 4.0, 3.0, 0.5, 1.0, 2.0, 2.0, 3.0, 2.5])
    q = tf.constant([1.0, 1.0, 1.0, 1.0, 1.0, -2.0, 2.0, 0.5, -1.5])
    y = tf.math.zeta(tf.cast(x, tf.float64), tf.cast(q, tf.float64))
    assert y.op.type == "Zeta" and tf.zeta is tf.math.zeta
    got = sess.run(y)
    np.testing.assert_allclose(got[:3], [math.pi ** 2 / 6, math.pi ** 4 / 90,
                                         1.2020569031595942], rtol=1e-14)
    assert np.isnan(got[3]) and got[4] == np.inf and got[5] == np.inf
    np.testing.assert_allclose(got[6], math.pi ** 2 / 6 - 1, rtol=1e-14)
    np.testing.assert_allclose(got[7], 7 * 1.2020569031595942, rtol=1e-14)  # (2^3 - 1) z(3)
    assert np.isnan(got[8])  # non-integer x with q < 0


def test_zeta_against_direct_sum(sess):
    s, q = np.array([3.5, 6.0]), np.array([0.3, 7.25])
    ref = [np.sum((qq + np.arange(200000.0)) ** -ss) for ss, qq in zip(s, q)]
    np.testing.assert_allclose(sess.run(tf.math.zeta(s, q)), ref, rtol=1e-9)


def test_polygamma(sess):
    got = sess.run(tf.math.polygamma(tf.constant([0.0, 1.0, 2.0, 1.5, 1.0], tf.float64),
                                     tf.constant([1.0, 1.0, 1.0, 1.0, -1.0], tf.float64)))
    np.testing.assert_allclose(got[:3], [-EULER, math.pi ** 2 / 6, -2 * 1.2020569031595942],
                               rtol=1e-13)
    assert np.isnan(got[3])  # non-integer order
    # at the poles x = 0, -1, ... TF gives n! zeta(n + 1, x): +inf for odd n, NaN for even
    poles = sess.run(tf.math.polygamma(tf.constant([1.0, 1.0, 3.0, 2.0, 0.0], tf.float64),
                                       tf.constant([-1.0, 0.0, -2.0, -2.0, 0.0], tf.float64)))
    assert poles[:3].tolist() == [math.inf] * 3 and np.isnan(poles[3:]).all()


def test_zeta_and_incomplete_gamma_at_tfs_special_points(sess):
    """Eigen's (TF's) values: zeta at q = 0, -1, ... is +inf for even integer s and NaN
    otherwise, its limits at s or q = inf; P(a, 0) = 0 for every a, P(inf, x) = 0 and
    Q(inf, x) = 1 for finite x > 0."""
    inf, nan = math.inf, math.nan
    z = sess.run(tf.math.zeta([3.0, 2.0, 1.5, 2.0, inf, inf, inf],
                              [0.0, -2.0, 0.0, inf, 1.0, 2.0, 0.5]))
    np.testing.assert_array_equal(z, [nan, inf, nan, 0.0, 1.0, 0.0, inf])
    a = [0.0, -1.0, nan, inf, inf, inf]
    x = [0.0, 0.0, 0.0, inf, 1.0, 2.5]
    np.testing.assert_array_equal(sess.run(tf.math.igamma(a, x)), [0.0] * 6)
    np.testing.assert_array_equal(sess.run(tf.math.igammac(a[3:], x[3:])), [0.0, 1.0, 1.0])


def test_binary_special_ops_broadcast_and_types(graph):
    y = tf.math.polygamma(tf.placeholder(tf.float32, [3, 1]), tf.placeholder(tf.float32, [4]))
    assert y.shape.as_list() == [3, 4] and y.dtype == tf.float32
    with pytest.raises(TypeError):
        tf.math.zeta(tf.constant([2.0], tf.float16), tf.constant([1.0], tf.float16))
    with pytest.raises(ValueError):
        tf.math.zeta(tf.ones([2]), tf.ones([3]))


def test_erfc_full_relative_precision(sess):
    x0 = np.concatenate([np.linspace(-6, 6, 241), [10.0, 20.0, 26.0]])
    got = sess.run(tf.math.erfc(tf.constant(x0)))
    ref = np.array([math.erfc(v) for v in x0])
    assert np.max(np.abs(got - ref) / ref) < 1e-13
    assert tf.erfc is tf.math.erfc


def test_erfinv_round_trips_through_erf(sess):
    x0 = np.array([-0.999999, -0.7, -0.3, 0.0, 1e-10, 0.2, 0.5, 0.51, 0.9, 1 - 1e-15])
    y = tf.math.erfinv(tf.constant(x0))
    assert y.op.type == "Erfinv" and y.op.name == "erfinv/Erfinv"
    got = sess.run(y)
    np.testing.assert_allclose([math.erf(v) for v in got], x0, rtol=1e-14, atol=1e-16)
    edges = sess.run(tf.math.erfinv(tf.constant([1.0, -1.0, 1.5, np.nan])))
    np.testing.assert_array_equal(edges[:2], [np.inf, -np.inf])
    assert np.isnan(edges[2:]).all()


def test_ndtri_inverts_the_normal_cdf_into_the_tails(sess):
    p = np.array([1e-300, 1e-20, 1e-5, 0.02, 0.3, 0.5, 0.7, 0.999, 1 - 1e-12])
    y = tf.math.ndtri(tf.constant(p))
    assert y.op.name == "ndtri/Ndtri"
    got = sess.run(y)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in got])
    np.testing.assert_allclose(cdf, p, rtol=1e-12)
    edges = sess.run(tf.math.ndtri(tf.constant([0.0, 1.0, -0.1, 1.1])))
    np.testing.assert_array_equal(edges[:2], [-np.inf, np.inf])
    assert np.isnan(edges[2:]).all()


def test_float32_results_stay_float32(sess):
    x = tf.constant([0.25, 0.5], tf.float32)
    outs = sess.run([tf.math.erfc(x), tf.math.digamma(x), tf.math.erfinv(x),
                     tf.math.ndtri(x)])
    assert all(o.dtype == np.float32 for o in outs)


def test_lbeta(sess):
    x0 = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]])
    y = tf.math.lbeta(tf.constant(x0))
    assert y.shape.as_list() == [2] and y.op.name.startswith("lbeta/")
    ref = [sum(math.lgamma(v) for v in row) - math.lgamma(sum(row)) for row in x0]
    np.testing.assert_allclose(sess.run(y), ref, rtol=1e-13)
    assert sess.run(tf.lbeta(tf.zeros([2, 0], tf.float64))).tolist() == [-np.inf] * 2


def test_log_sigmoid_is_stable(sess):
    x0 = np.array([-800.0, -2.0, 0.0, 3.0, 800.0])
    y = tf.math.log_sigmoid(tf.constant(x0))
    assert y.op.name == "LogSigmoid" and tf.log_sigmoid is tf.math.log_sigmoid
    np.testing.assert_allclose(sess.run(y), -np.logaddexp(0, -x0), rtol=1e-14)


@pytest.mark.parametrize("fn,domain", [
    (tf.math.erfc, (-2.0, 2.0)), (tf.math.lgamma, (0.3, 5.0)), (tf.math.digamma, (0.3, 5.0)),
    (tf.math.erfinv, (-0.9, 0.9)), (tf.math.ndtri, (0.05, 0.95)),
    (lambda q: tf.math.zeta(tf.constant(3.0, tf.float64), q), (0.5, 3.0)),
    (lambda x: tf.math.polygamma(tf.constant(2.0, tf.float64), x), (0.5, 3.0)),
    (lambda x: tf.math.lbeta(x), (0.5, 3.0)),
    (tf.math.log_sigmoid, (-3.0, 3.0))])
def test_gradients_float64(graph, fn, domain):
    x0 = np.random.uniform(*domain, size=(2, 3))
    x = tf.placeholder(tf.float64, [2, 3])
    y = fn(x)
    assert compute_gradient_error(x, [2, 3], y, y.shape.as_list(), x_init_value=x0,
                                  delta=1e-6) < 1e-6


def test_no_gradient_for_zeta_x_or_polygamma_order(graph):
    a = tf.constant([1.0, 2.0], tf.float64)
    x = tf.constant([1.5, 2.5], tf.float64)
    assert tf.gradients(tf.math.zeta(a + 2, x), a) == [None]
    assert tf.gradients(tf.math.polygamma(a, x), a) == [None]


def test_bessel_scaled_functions(sess):
    x0 = np.array([0.0, 0.5, -3.0, 15.0, 19.99, 20.0, -40.0, 700.0])

    def series(order, x):  # exp(-|x|) I_order(x) by its power series, term by term in logs
        if x == 0:
            return 1.0 if order == 0 else 0.0
        total = sum(math.exp((2 * k + order) * math.log(abs(x) / 2) - math.lgamma(k + 1)
                             - math.lgamma(k + order + 1) - abs(x)) for k in range(300))
        return math.copysign(total, x) if order else total
    i0e, i1e = sess.run([tf.math.bessel_i0e(x0[:7]), tf.math.bessel_i1e(x0[:7])])
    np.testing.assert_allclose(i0e, [series(0, v) for v in x0[:7]], rtol=1e-14)
    np.testing.assert_allclose(i1e, [series(1, v) for v in x0[:7]], rtol=1e-14)
    big = sess.run(tf.math.bessel_i0e(tf.constant([700.0, 1e6])))
    np.testing.assert_allclose(big, 1 / np.sqrt(2 * np.pi * np.array([700.0, 1e6])) *
                               (1 + 1 / (8 * np.array([700.0, 1e6]))), rtol=1e-6)


def test_bessel_unscaled_and_dtypes(sess):
    y = tf.math.bessel_i0(tf.constant([0.0, 1.0, 20.0], tf.float32))
    assert y.op.name.startswith("bessel_i0/") and y.dtype == tf.float32
    np.testing.assert_allclose(sess.run(y), [1.0, 1.2660659, 4.3558283e7], rtol=1e-6)
    np.testing.assert_allclose(sess.run(tf.math.bessel_i1([1.0, -2.0])),
                               [0.5651591, -1.5906369], rtol=1e-6)
    assert tf.math.bessel_i1e(tf.constant([1.0])).op.type == "BesselI1e"
    # a scalar: i1e(-1) = -e^-1 * I1(1)
    np.testing.assert_allclose(sess.run(tf.math.bessel_i1e(-1.0)), -0.5651591 / np.e,
                               rtol=1e-6)


def test_erfcinv(sess):
    y = tf.math.erfcinv(tf.constant([1e-10, 0.5, 1.0, 1.5]))
    assert y.op.name.startswith("erfcinv/") and y.dtype == tf.float32
    got = sess.run(y).astype(np.float64)
    np.testing.assert_allclose([math.erfc(v) for v in got], [1e-10, 0.5, 1.0, 1.5],
                               rtol=2e-6)


@pytest.mark.parametrize("fn", [tf.math.bessel_i0e, tf.math.bessel_i1e, tf.math.bessel_i0,
                                tf.math.bessel_i1])
def test_bessel_gradients(graph, fn):
    x0 = np.array([[-25.0, -3.0, -0.5], [0.3, 0.7, 4.0]])
    x = tf.placeholder(tf.float64, [2, 3])
    y = fn(x)
    scale = np.max(np.abs(np.exp(np.abs(x0)))) if fn in (tf.math.bessel_i0,
                                                         tf.math.bessel_i1) else 1.0
    assert compute_gradient_error(x, [2, 3], y, [2, 3], x_init_value=x0,
                                  delta=1e-6) < 1e-6 * scale


def test_bessel_i1e_gradient_at_zero(sess):
    x = tf.constant([0.0], tf.float64)
    np.testing.assert_allclose(sess.run(tf.gradients(tf.math.bessel_i1e(x), x)[0]), [0.5])
