"""igamma, igammac, betainc (ops/math/incomplete_special_ops) against closed forms."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error


def _p_ref(a, x):
    """P(a, x) in closed form: integer a, or a = 1/2."""
    if a == 0.5:
        return math.erf(math.sqrt(x))
    return 1 - math.exp(-x) * sum(x ** k / math.factorial(k) for k in range(int(a)))


def test_igamma_and_igammac_closed_forms(sess):
    a0 = np.array([1.0, 1.0, 3.0, 3.0, 0.5, 0.5, 10.0, 50.0, 0.5])
    x0 = np.array([0.3, 5.0, 2.0, 10.0, 0.2, 30.0, 3.0, 60.0, 0.0])
    p, q = sess.run([tf.math.igamma(a0, x0), tf.math.igammac(a0, x0)])
    ref = np.array([_p_ref(a, x) for a, x in zip(a0, x0)])
    np.testing.assert_allclose(p, ref, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(q, 1 - ref, rtol=1e-12, atol=1e-15)
    # the upper tail keeps its relative precision: Q(1, x) = exp(-x)
    np.testing.assert_allclose(sess.run(tf.math.igammac(np.float64(1.0), [30.0, 300.0])),
                               np.exp([-30.0, -300.0]), rtol=1e-13)


def test_igamma_domain_and_types(sess):
    y = tf.math.igamma(tf.constant([0.0, -1.0, 2.0, 2.0]), tf.constant([1.0, 1.0, -1.0, np.inf]))
    assert y.op.type == "Igamma" and y.dtype == tf.float32
    got = sess.run(y)
    assert np.isnan(got[:3]).all() and got[3] == 1.0
    assert tf.igamma is tf.math.igamma and tf.igammac is tf.math.igammac
    assert tf.math.igamma(tf.placeholder(tf.float64, [3, 1]),
                          tf.placeholder(tf.float64, [4])).shape.as_list() == [3, 4]
    with pytest.raises(TypeError):
        tf.math.igamma(tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16))


def test_igamma_gradients_with_respect_to_a_and_x(graph):
    a = tf.placeholder(tf.float64, [4])
    x = tf.placeholder(tf.float64, [4])
    values = [np.array([0.7, 2.5, 6.0, 3.0]), np.array([0.4, 3.0, 5.0, 9.0])]
    for fn in (tf.math.igamma, tf.math.igammac):
        assert compute_gradient_error([a, x], [[4], [4]], fn(a, x), [4], x_init_value=values,
                                      delta=1e-6) < 1e-6


def test_igamma_grad_a_at_large_arguments(sess):
    a = tf.constant([50.0, 1000.0], tf.float64)
    x = tf.constant([60.0, 1000.0], tf.float64)
    da = sess.run(tf.gradients(tf.math.igamma(a, x), a)[0])
    # central differences of P in a
    h = 1e-3
    p = sess.run([tf.math.igamma(tf.constant([50.0 + h, 1000.0 + h], tf.float64),
                                 tf.constant([60.0, 1000.0], tf.float64)),
                  tf.math.igamma(tf.constant([50.0 - h, 1000.0 - h], tf.float64),
                                 tf.constant([60.0, 1000.0], tf.float64))])
    np.testing.assert_allclose(da, (p[0] - p[1]) / (2 * h), rtol=1e-4)


def _betainc_ref(a, b, x):
    if a == 0.5 and b == 0.5:
        return 2 / math.pi * math.asin(math.sqrt(x))
    n = int(a + b - 1)  # integer a, b: a binomial tail
    return sum(math.comb(n, j) * x ** j * (1 - x) ** (n - j) for j in range(int(a), n + 1))


def test_betainc(sess):
    a0 = np.array([2.0, 1.0, 3.0, 0.5, 5.0, 2.0, 30.0])
    b0 = np.array([3.0, 4.0, 1.0, 0.5, 7.0, 3.0, 20.0])
    x0 = np.array([0.3, 0.6, 0.7, 0.25, 0.9, 1.0, 0.55])
    y = tf.math.betainc(a0, b0, x0)
    assert y.op.type == "Betainc" and y.shape.as_list() == [7]
    ref = [_betainc_ref(*t) for t in zip(a0, b0, x0)]
    np.testing.assert_allclose(sess.run(y), ref, rtol=1e-12)
    assert tf.betainc is tf.math.betainc


def test_betainc_scalars_domain_and_shapes(sess):
    got = sess.run(tf.math.betainc(2.0, 3.0, tf.constant([0.0, 0.3, 1.0, 1.5])))
    np.testing.assert_allclose(got[:3], [0.0, _betainc_ref(2, 3, 0.3), 1.0], rtol=1e-6)
    assert np.isnan(got[3])
    assert np.isnan(sess.run(tf.math.betainc(-1.0, 2.0, 0.5)))
    with pytest.raises(ValueError, match="inconsistent"):
        tf.math.betainc(tf.ones([2]), tf.ones([3]), tf.ones([2]))
    p = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="inconsistent"):
        sess.run(tf.math.betainc(p, tf.ones([2]), 0.5), {p: np.ones(3)})


def test_betainc_gradient_flows_to_x_only(graph):
    x = tf.placeholder(tf.float64, [3])
    a = tf.constant([1.5, 2.0, 4.0], tf.float64)
    y = tf.math.betainc(a, 2.5, x)
    assert compute_gradient_error(x, [3], y, [3], x_init_value=np.array([0.2, 0.5, 0.8]),
                                  delta=1e-6) < 1e-6
    assert tf.gradients(y, a) == [None]
    s = tf.placeholder(tf.float64, [])
    assert compute_gradient_error(s, [], tf.math.betainc(a, 2.5, s), [3],
                                  x_init_value=np.array(0.4), delta=1e-6) < 1e-6
