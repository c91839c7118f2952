"""sufficient_statistics, normalize_moments, weighted_moments, swish/silu, log_poisson_loss,
compute_average_loss, scale_regularization_loss, batch_norm_with_global_normalization."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error

RNG = np.random.RandomState(1)
X = RNG.randn(4, 3)


def test_sufficient_statistics_and_normalize_moments(sess):
    count, m_ss, v_ss, shift = tf.nn.sufficient_statistics(X, [0])
    assert shift is None and count.dtype == tf.float64 and m_ss.shape.as_list() == [3]
    c, m, v = sess.run([count, m_ss, v_ss])
    assert c == 4.0
    np.testing.assert_allclose(m, X.sum(0), rtol=1e-12)
    np.testing.assert_allclose(v, (X ** 2).sum(0), rtol=1e-12)
    mean, var = tf.nn.normalize_moments(count, m_ss, v_ss, None)
    np.testing.assert_allclose(sess.run(mean), X.mean(0))
    np.testing.assert_allclose(sess.run(var), X.var(0))


def test_sufficient_statistics_with_shift_keepdims_and_unknown_dims(sess):
    ph = tf.placeholder(tf.float64, [None, 3])
    count, m_ss, v_ss, shift = tf.nn.sufficient_statistics(ph, [0, 1], shift=0.5,
                                                           keepdims=True)
    assert m_ss.shape.as_list() == [1, 1] and count.shape.as_list() == []
    c, m, v = sess.run([count, m_ss, v_ss], {ph: X})
    assert c == 12.0
    np.testing.assert_allclose(m, [[(X - 0.5).sum()]])
    np.testing.assert_allclose(v, [[((X - 0.5) ** 2).sum()]])
    mean, var = tf.nn.normalize_moments(count, m_ss, v_ss, shift)
    np.testing.assert_allclose(sess.run(mean, {ph: X}), [[X.mean()]])
    np.testing.assert_allclose(sess.run(var, {ph: X}), [[X.var()]])


def test_weighted_moments(sess):
    w = np.array([[1.0], [2.0], [0.5], [3.0]])
    mean, var = tf.nn.weighted_moments(X, [0], w)
    assert mean.shape.as_list() == [3]
    ref_mean = (w * X).sum(0) / w.sum()
    np.testing.assert_allclose(sess.run(mean), ref_mean)
    np.testing.assert_allclose(sess.run(var), (w * (X - ref_mean) ** 2).sum(0) / w.sum())
    half = tf.nn.weighted_moments(X.astype(np.float16), [1], w.astype(np.float16),
                                  keep_dims=True)
    assert half[0].dtype == tf.float16 and half[0].shape.as_list() == [4, 1]
    np.testing.assert_allclose(sess.run(half[0])[:, 0], X.mean(1), atol=2e-3)


def test_weighted_moments_gradient(sess):
    x = tf.placeholder(tf.float64, [4, 3])
    mean, var = tf.nn.weighted_moments(x, [1], tf.constant([1.0, 2.0, 3.0], tf.float64))
    for y in (mean, var):
        assert compute_gradient_error(x, [4, 3], y, [4], x_init_value=X, delta=1e-6) < 1e-6


@pytest.mark.parametrize("fn", [tf.nn.swish, tf.nn.silu])
def test_swish(sess, fn):
    y = fn(X, beta=1.5)
    np.testing.assert_allclose(sess.run(y), X / (1 + np.exp(-1.5 * X)))
    assert sess.run(fn(X.astype(np.float32))).dtype == np.float32
    x = tf.placeholder(tf.float64, [4, 3])
    assert compute_gradient_error(x, [4, 3], fn(x), [4, 3], x_init_value=X,
                                  delta=1e-6) < 1e-6


def test_log_poisson_loss(sess):
    targets = np.array([0.0, 0.5, 1.0, 2.0, 7.0])
    log_input = np.array([0.1, -0.2, 0.3, 1.5, -1.0])
    loss = tf.nn.log_poisson_loss(targets, log_input)
    full = tf.nn.log_poisson_loss(targets, log_input, compute_full_loss=True)
    base = np.exp(log_input) - log_input * targets
    np.testing.assert_allclose(sess.run(loss), base)
    with np.errstate(divide="ignore", invalid="ignore"):
        stirling = targets * np.log(targets) - targets + 0.5 * np.log(2 * np.pi * targets)
    stirling[targets <= 1] = 0.0
    np.testing.assert_allclose(sess.run(full), base + stirling)
    with pytest.raises(ValueError, match="must have the same shape"):
        tf.nn.log_poisson_loss([1.0, 2.0], [1.0, 2.0, 3.0])
    li = tf.placeholder(tf.float64, [5])
    assert compute_gradient_error(li, [5], tf.nn.log_poisson_loss(targets, li, True), [5],
                                  x_init_value=log_input, delta=1e-6) < 1e-6


def test_compute_average_loss(sess):
    losses = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    avg = tf.nn.compute_average_loss(losses)
    assert avg.dtype == tf.float32 and avg.shape.as_list() == []
    assert sess.run(avg) == pytest.approx(5.0)
    weighted = tf.nn.compute_average_loss(losses, sample_weight=[[2.0], [1.0]])
    assert sess.run(weighted) == pytest.approx(6.5)
    assert sess.run(tf.nn.compute_average_loss(losses, global_batch_size=8)) == \
        pytest.approx(1.25)
    empty = tf.placeholder(tf.float32, [None])
    assert sess.run(tf.nn.compute_average_loss(empty), {empty: []}) == 0.0
    with pytest.raises(ValueError, match="at least rank 1"):
        tf.nn.compute_average_loss(1.0)
    with pytest.raises(TypeError, match="must be an integer"):
        tf.nn.compute_average_loss(losses, global_batch_size=2.5)


def test_scale_regularization_loss(sess):
    y = tf.nn.scale_regularization_loss(tf.constant([1.0, 2.0]))
    assert y.shape.as_list() == [] and sess.run(y) == 3.0


def test_batch_norm_with_global_normalization(sess):
    m, v = X.mean(0), X.var(0)
    beta, gamma = np.array([0.1, 0.2, 0.3]), np.array([2.0, 3.0, 4.0])
    scaled = tf.nn.batch_norm_with_global_normalization(X, m, v, beta, gamma, 1e-3, True)
    unscaled = tf.nn.batch_norm_with_global_normalization(
        input=X, mean=m, variance=v, beta=beta, gamma=gamma, variance_epsilon=1e-3,
        scale_after_normalization=False)
    norm = (X - m) / np.sqrt(v + 1e-3)
    np.testing.assert_allclose(sess.run(scaled), norm * gamma + beta)
    np.testing.assert_allclose(sess.run(unscaled), norm + beta)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.nn.batch_norm_with_global_normalization(t=X, input=X, m=m, v=v, beta=beta,
                                                   gamma=gamma, variance_epsilon=1e-3,
                                                   scale_after_normalization=True)


def test_weighted_moments_of_a_zero_weight_slice_are_zero(sess):
    # TF divides with div_no_nan: the third row has weight 0 everywhere
    x = tf.constant(np.arange(24.0).reshape(2, 3, 4), tf.float32)
    mean, var = tf.nn.weighted_moments(x, [0, 2], tf.constant([[[1.0], [2.0], [0.0]]]),
                                       keep_dims=True)
    m, v = sess.run([mean, var])
    assert m.shape == (1, 3, 1) and m[0, 2, 0] == 0.0 and v[0, 2, 0] == 0.0
    rows = np.arange(24.0).reshape(2, 3, 4)[:, :2, :].transpose(1, 0, 2).reshape(2, -1)
    np.testing.assert_allclose(m[0, :2, 0], rows.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(v[0, :2, 0], rows.var(axis=1), rtol=1e-5)
