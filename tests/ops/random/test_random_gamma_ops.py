"""random_gamma / random_poisson: moments, broadcasting, static shapes, seeds, and the
implicit reparameterization gradient of the gamma sample w.r.t. alpha."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_builder import apply_op
from tensorweave.test import compute_gradient, compute_gradient_error


def _close(actual, expected, tol):
    """|actual - expected| <= tol elementwise (tol a number or an array)."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    assert np.all(np.abs(actual - expected) <= tol), (actual, expected, tol)


def test_random_gamma_moments_with_alpha_beta_broadcasting(sess):
    alpha = np.array([0.5, 2.0, 7.0])
    beta = np.array([[1.0], [4.0]])
    g = tf.random_gamma([20000], alpha, beta=beta, dtype=tf.float64, seed=3)
    assert g.shape.as_list() == [20000, 2, 3]
    assert g.dtype == tf.float64
    v = sess.run(g)
    _close(v.mean(0), alpha / beta, 0.05 * alpha / beta + 0.01)
    _close(v.var(0), alpha / beta ** 2, 0.1 * alpha / beta ** 2 + 0.01)
    assert v.min() > 0


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_gamma_dtypes(sess, dtype):
    g = tf.random.gamma([1000], [1.0, 3.0], dtype=dtype, seed=1)
    v = sess.run(g)
    assert v.dtype == dtype.as_numpy_dtype and v.shape == (1000, 2)
    _close(v.astype(np.float64).mean(0), [1.0, 3.0], 0.2)


def test_random_gamma_static_shape_with_placeholders(graph):
    a = tf.placeholder(tf.float32, [None, 2])
    assert tf.random_gamma([3, 4], a).shape.as_list() == [3, 4, None, 2]
    n = tf.placeholder(tf.int32, [])
    assert tf.random_gamma(tf.stack([n]), [1.0]).shape.as_list() == [None, 1]


def test_random_gamma_seeded_determinism(graph):
    g = tf.random_gamma([5], [2.0], seed=7)
    runs = []
    for _ in range(2):
        with tf.Session(graph=graph) as s:
            runs.append([s.run(g) for _ in range(2)])
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0][0], runs[0][1])


def test_random_gamma_grad_is_the_derivative_of_the_inverse_cdf(sess):
    """RandomGammaGrad(alpha, x) = d/dalpha F^-1(u; alpha) at u = F(x; alpha): checked
    against central differences of the inverse CDF, built as Newton steps on igamma
    (whose own gradient compute_gradient_error checks on the way)."""
    a0 = np.array([0.3, 1.0, 2.5, 9.0, 9.0])
    x0 = np.array([0.2, 0.7, 3.0, 6.0, 13.0])
    u = sess.run(tf.math.igamma(a0, x0))
    alpha = tf.placeholder(tf.float64, [5])
    x = tf.constant(x0)
    for _ in range(6):
        density = tf.exp((alpha - 1.0) * tf.log(x) - x - tf.lgamma(alpha))
        x = x - (tf.math.igamma(alpha, x) - u) / density
    assert compute_gradient_error(alpha, [5], x, [5], x_init_value=a0, delta=1e-6) < 1e-6
    _, numeric = compute_gradient(alpha, [5], x, [5], x_init_value=a0, delta=1e-6)
    grad = sess.run(apply_op("RandomGammaGrad", [tf.constant(a0), tf.constant(x0)]).outputs[0])
    np.testing.assert_allclose(grad, np.diag(numeric), rtol=1e-6)
    assert np.all(grad > 0)


def test_random_gamma_gradient(sess):
    """The gradient of a sum of gamma samples w.r.t. alpha: d E[x]/d alpha = 1/beta, and
    the reparameterization of each sample is checked against RandomGammaGrad."""
    alpha = tf.constant([0.5, 2.0, 6.0], tf.float64)
    g = tf.random_gamma([4000], alpha, beta=2.0, dtype=tf.float64, seed=5)
    grad = tf.gradients(tf.reduce_sum(g), alpha)[0]
    assert grad.shape.as_list() == [3]
    sample, dalpha = sess.run([g, grad])  # one run: the same samples
    _close(dalpha / 4000, [0.5, 0.5, 0.5], 0.05)
    # x = X / beta with X ~ Gamma(alpha): dx/dalpha = RandomGammaGrad(alpha, X) / beta
    partial = apply_op("RandomGammaGrad", [tf.constant([[0.5, 2.0, 6.0]], tf.float64),
                                           tf.constant(sample * 2.0)]).outputs[0]
    np.testing.assert_allclose(dalpha, sess.run(partial).sum(0) / 2.0, rtol=1e-8)


def test_random_poisson_moments_and_types(sess):
    p = tf.random_poisson([3.0, 10.0], [8000], seed=1, dtype=tf.int32)
    assert p.shape.as_list() == [8000, 2] and p.dtype == tf.int32
    v = sess.run(p)
    assert v.dtype == np.int32
    _close(v.mean(0), [3.0, 10.0], 0.1)
    _close(v.var(0), [3.0, 10.0], 0.6)
    f = tf.random.poisson(tf.constant([[0.5], [20.0]], tf.float64), [3], seed=2)
    assert f.shape.as_list() == [3, 2, 1] and f.dtype == tf.float32
    assert sess.run(f).dtype == np.float32


def test_random_poisson_has_no_gradient(graph):
    # TF registers no gradient for RandomPoissonV2: tf.gradients, and so the numeric
    # gradient check, raise LookupError (random_gamma is differentiable, poisson is not)
    lam = tf.placeholder(tf.float32, [2])
    p = tf.random_poisson(lam, [3])
    message = r"No gradient defined for operation 'random_poisson/RandomPoissonV2' " \
              r"\(op type: RandomPoissonV2\)"
    with pytest.raises(LookupError, match=message):
        tf.gradients(p, lam)
    with pytest.raises(LookupError, match=message):
        compute_gradient_error(lam, [2], p, [3, 2], x_init_value=np.ones(2, np.float32))


def test_random_gamma_builder_names_and_dtypes(graph):
    g = tf.random_gamma([2], 1.0)
    assert g.name == "random_gamma/Maximum:0"
    tiny = graph.get_operation_by_name("random_gamma/Maximum/x")  # the constant, as in TF
    assert tiny.get_attr("value").item() == np.finfo(np.float32).tiny
    # TF fails on np.finfo(bfloat16) with a ValueError: not a gamma dtype
    with pytest.raises(ValueError, match="dtype bfloat16 is not float16, float32 or float64"):
        tf.random_gamma([2], 1.0, dtype=tf.bfloat16)


def test_degenerate_rates_and_shapes_draw_what_tf_draws(sess):
    """TF's kernels: a rate <= 0 draws 0 (float or integer output); alpha < 0 gives NaN
    and gamma samples are at least the dtype's smallest normal number (alpha = 0)."""
    assert sess.run(tf.random_poisson([-1.0, 0.0], [2], dtype=tf.int64)).tolist() == \
        [[0, 0], [0, 0]]
    assert sess.run(tf.random_poisson([-0.5], [3])).tolist() == [[0.0]] * 3
    g32 = sess.run(tf.random_gamma([4], [-1.0, 0.0, 1e-30]))
    assert np.isnan(g32[:, 0]).all()
    assert (g32[:, 1:] == np.finfo(np.float32).tiny).all()
    g64 = sess.run(tf.random_gamma([4], [0.0, 0.01], dtype=tf.float64))
    assert (g64 >= np.finfo(np.float64).tiny).all()


def test_multinomial_gives_non_finite_logits_no_probability(sess):
    """TF's kernel: non-finite logits draw nothing (the max is over the finite ones); a
    row without a finite logit draws class num_classes."""
    logits = [[-np.inf, -np.inf], [np.nan, 0.0], [0.0, np.inf], [1.0, -np.inf]]
    draws = sess.run(tf.multinomial(logits, 6, seed=3))
    assert draws.tolist() == [[2] * 6, [1] * 6, [0] * 6, [0] * 6]
