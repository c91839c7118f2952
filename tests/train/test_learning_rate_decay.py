"""Learning-rate schedules against their formulas, over a range of global steps."""
import math

import numpy as np
import pytest

import tensorweave as tf

STEPS = range(0, 12)


def _values(sess, step, lr):
    out = []
    for i in STEPS:
        sess.run(step.assign(i))
        out.append(sess.run(lr))
    return np.array(out)


@pytest.fixture
def step(graph):
    return tf.Variable(0, dtype=tf.int64, trainable=False, name="step")


def _expect(fn):
    return np.array([fn(float(i)) for i in STEPS], np.float64)


CASES = {
    "exponential": (lambda s: tf.train.exponential_decay(0.1, s, 3, 0.5),
                    lambda t: 0.1 * 0.5 ** (t / 3)),
    "exponential_staircase": (lambda s: tf.train.exponential_decay(0.1, s, 3, 0.5, True),
                              lambda t: 0.1 * 0.5 ** math.floor(t / 3)),
    "polynomial": (lambda s: tf.train.polynomial_decay(0.1, s, 5, 0.01, power=2.0),
                   lambda t: (0.1 - 0.01) * (1 - min(t, 5) / 5) ** 2 + 0.01),
    "polynomial_cycle": (lambda s: tf.train.polynomial_decay(0.1, s, 4, cycle=True),
                         lambda t: (0.1 - 1e-4) * (1 - t / (4 * max(1, math.ceil(t / 4))))
                         + 1e-4),
    "inverse_time": (lambda s: tf.train.inverse_time_decay(0.1, s, 2, 0.5),
                     lambda t: 0.1 / (1 + 0.5 * t / 2)),
    "inverse_time_staircase": (lambda s: tf.train.inverse_time_decay(0.1, s, 2, 0.5, True),
                               lambda t: 0.1 / (1 + 0.5 * math.floor(t / 2))),
    "natural_exp": (lambda s: tf.train.natural_exp_decay(0.1, s, 2, 0.5),
                    lambda t: 0.1 * math.exp(-0.5 * t / 2)),
    "natural_exp_staircase": (lambda s: tf.train.natural_exp_decay(0.1, s, 2, 0.5, True),
                              lambda t: 0.1 * math.exp(-0.5 * math.floor(t / 2))),
    "cosine": (lambda s: tf.train.cosine_decay(0.1, s, 8, alpha=0.1),
               lambda t: 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(t, 8) / 8)) + 0.1)),
    "linear_cosine": (lambda s: tf.train.linear_cosine_decay(0.1, s, 8),
                      lambda t: 0.1 * (((8 - min(t, 8)) / 8) * 0.5 * (
                          1 + math.cos(math.pi * min(t, 8) / 8)) + 0.001)),
}


def _sgdr(t, first=2.0, t_mul=2.0, m_mul=0.5, alpha=0.0):
    """Cosine decay with restarts by walking the periods."""
    start, length, i = 0.0, first, 0
    while t >= start + length:
        start += length
        length *= t_mul
        i += 1
    frac = (t - start) / length
    return 0.1 * ((1 - alpha) * m_mul ** i * 0.5 * (1 + math.cos(math.pi * frac)) + alpha)


CASES["cosine_restarts"] = (
    lambda s: tf.train.cosine_decay_restarts(0.1, s, 2, t_mul=2.0, m_mul=0.5),
    lambda t: _sgdr(t))
CASES["cosine_restarts_equal_periods"] = (
    lambda s: tf.train.cosine_decay_restarts(0.1, s, 3, t_mul=1.0, alpha=0.2),
    lambda t: _sgdr(t, first=3.0, t_mul=1.0, m_mul=1.0, alpha=0.2))


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_matches_formula(graph, sess, step, name):
    build, formula = CASES[name]
    lr = build(step)
    assert lr.dtype == tf.float32 and lr.shape.ndims == 0
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(_values(sess, step, lr), _expect(formula), rtol=1e-5,
                               atol=1e-7)


def test_float64_learning_rate_keeps_dtype(graph, sess, step):
    lr = tf.train.exponential_decay(tf.constant(0.1, tf.float64), step, 3, 0.5)
    assert lr.dtype == tf.float64
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(_values(sess, step, lr), _expect(lambda t: 0.1 * 0.5 ** (t / 3)),
                               rtol=1e-12)


def test_piecewise_constant(graph, sess, step):
    lr = tf.train.piecewise_constant(step, [3, 7], [1.0, 0.5, 0.1])
    sess.run(tf.global_variables_initializer())
    expect = [1.0 if t <= 3 else 0.5 if t <= 7 else 0.1 for t in STEPS]
    np.testing.assert_allclose(_values(sess, step, lr), expect)
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
    with pytest.raises(ValueError, match="1 less than the length of values"):
        tf.train.piecewise_constant(step, [3, 7], [1.0, 0.5])
    with pytest.raises(ValueError, match="same dtype"):
        tf.train.piecewise_constant(step, [3], [1.0, tf.constant(1, tf.int32)])
    # TF casts int32 boundaries to an int64 step and nothing else: a float boundary
    # would be truncated
    int64_step = tf.train.get_or_create_global_step()
    assert tf.train.piecewise_constant(int64_step, [3], [1.0, 2.0]).dtype == tf.float32
    with pytest.raises(ValueError, match=r"Boundaries \(<dtype: 'float32'>\) must have "
                                         r"the same dtype as x \(<dtype: 'int64'>\)"):
        tf.train.piecewise_constant(int64_step, [5.5], [1.0, 2.0])
    with pytest.raises(ValueError, match="must have the same dtype as x"):
        tf.train.piecewise_constant(tf.constant(0), [np.int64(5)], [1.0, 2.0])


def test_names(graph, step):
    assert tf.train.exponential_decay(0.1, step, 3, 0.5).name == "ExponentialDecay:0"
    assert tf.train.polynomial_decay(0.1, step, 3, name="poly").name == "poly:0"
    assert tf.train.inverse_time_decay(0.1, step, 3, 0.5).name == "InverseTimeDecay:0"


def test_noisy_linear_cosine_decay_is_noisy_around_linear_cosine(graph, sess, step):
    lr = tf.train.noisy_linear_cosine_decay(0.1, step, 8, initial_variance=0.01)
    sess.run(tf.global_variables_initializer())
    values = [sess.run(lr) for _ in range(50)]
    clean = 0.1 * (1.0 * 1.0 + 0.001)  # step 0: linear part 1, cosine 1
    assert np.std(values) > 0 and abs(np.mean(values) - clean) < 0.01


@pytest.mark.parametrize("fn", [tf.train.exponential_decay, tf.train.natural_exp_decay,
                                tf.train.inverse_time_decay])
def test_global_step_required(graph, fn):
    with pytest.raises(ValueError, match="global_step is required for %s" % fn.__name__):
        fn(0.1, None, 3, 0.5)


def test_polynomial_and_cosine_require_global_step(graph):
    with pytest.raises(ValueError, match="global_step is required for polynomial_decay"):
        tf.train.polynomial_decay(0.1, None, 3)
    with pytest.raises(ValueError, match="global_step is required for cosine_decay"):
        tf.train.cosine_decay(0.1, None, 3)


def test_schedule_drives_an_optimizer(graph, sess):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0)
    lr = tf.train.exponential_decay(1.0, step, 1, 0.5)
    train = tf.train.GradientDescentOptimizer(lr).minimize(w, global_step=step)
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train)
    np.testing.assert_allclose(sess.run(w), -(1.0 + 0.5 + 0.25))
    assert sess.run(step) == 3
