"""tf.train.ExponentialMovingAverage and the moving-average helpers (train/moving_averages.py),
against the recurrences computed in NumPy; names as TF1 gives them."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import moving_averages


def test_averages_of_variables_follow_the_recurrence(sess):
    v = tf.Variable(1.0, name="v")
    w = tf.Variable([1.0, 2.0], name="w")
    ema = tf.train.ExponentialMovingAverage(0.9)
    update = ema.apply([v, w])
    assert isinstance(update, tf.Operation) and update.name == "ExponentialMovingAverage"
    assert ema.name == "ExponentialMovingAverage"
    avg_v, avg_w = ema.average(v), ema.average(w)
    assert isinstance(avg_v, tf.Variable) and avg_v.name == "v/ExponentialMovingAverage:0"
    assert avg_w.shape.as_list() == [2] and not avg_w.trainable
    assert ema.average_name(v) == "v/ExponentialMovingAverage"
    assert [x.name for x in tf.moving_average_variables()] == ["v:0", "w:0"]
    assert avg_v in tf.global_variables() and avg_v not in tf.trainable_variables()
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(avg_w), [1.0, 2.0])  # starts at the value
    expect_v, expect_w = 1.0, np.array([1.0, 2.0])
    for step in range(3):
        sess.run([v.assign(5.0 * step), w.assign([step, -step])])
        sess.run(update)
        expect_v = 0.9 * expect_v + 0.1 * 5.0 * step
        expect_w = 0.9 * expect_w + 0.1 * np.array([step, -step])
        np.testing.assert_allclose(sess.run(avg_v), expect_v, rtol=1e-6)
        np.testing.assert_allclose(sess.run(avg_w), expect_w, rtol=1e-6, atol=1e-7)


def test_num_updates_bounds_the_decay(sess):
    v = tf.Variable(0.0)
    steps = tf.placeholder(tf.int32, [])
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=steps, name="E")
    update = ema.apply([v])
    assert ema.average(v).op.name == "Variable/E"
    sess.run(tf.global_variables_initializer())
    sess.run(v.assign(10.0))
    sess.run(update, {steps: 0})  # decay min(0.99, 1 / 10) = 0.1
    np.testing.assert_allclose(sess.run(ema.average(v)), 9.0, rtol=1e-6)
    sess.run(update, {steps: 10000})  # decay 0.99
    np.testing.assert_allclose(sess.run(ema.average(v)), 9.0 * 0.99 + 0.1, rtol=1e-6)


@pytest.mark.parametrize("zero_debias", [False, True])
def test_averages_of_tensors(sess, zero_debias):
    x = tf.placeholder(tf.float32, [])
    t = x * 2.0
    ema = tf.train.ExponentialMovingAverage(0.5, zero_debias=zero_debias)
    update = ema.apply([t])
    avg = ema.average(t)
    assert avg.name == "mul/ExponentialMovingAverage:0"
    assert tf.moving_average_variables() == []  # only Variables go there
    names = sorted(v.op.name for v in tf.global_variables())
    extra = ["mul/ExponentialMovingAverage/biased",
             "mul/ExponentialMovingAverage/local_step"] if zero_debias else []
    assert names == sorted(["mul/ExponentialMovingAverage"] + extra)
    sess.run(tf.global_variables_initializer())
    biased = shadow = 0.0
    for step, value in enumerate([3.0, 1.0, 4.0], start=1):
        sess.run(update, {x: value})
        biased = 0.5 * biased + 0.5 * 2 * value
        shadow = biased / (1 - 0.5 ** step) if zero_debias else biased
        np.testing.assert_allclose(sess.run(avg), shadow, rtol=1e-6)


def test_apply_twice_and_errors(sess):
    v = tf.Variable(1.0, name="v")
    ema = tf.train.ExponentialMovingAverage(0.9)
    ema.apply([v])
    first = ema.average(v)
    ema.apply([v, v])  # as TF1: no new average, no error
    assert ema.average(v) is first
    assert len(tf.global_variables()) == 2
    with pytest.raises(TypeError, match="must be half, float, or double"):
        ema.apply([tf.Variable(1)])
    assert ema.average(tf.Variable(2.0)) is None


def test_default_var_list_and_variables_to_restore(graph):
    v = tf.Variable(1.0, name="v")
    frozen = tf.Variable(3.0, name="frozen", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.9)
    ema.apply()
    assert ema.average(v) is not None and ema.average(frozen) is None
    u = tf.Variable(2.0, name="u")  # not averaged: mapped under its average's name
    assert ema.average_name(u) == "u/ExponentialMovingAverage"
    restore = ema.variables_to_restore()
    assert restore == {"v/ExponentialMovingAverage": v, "u/ExponentialMovingAverage": u,
                       "frozen": frozen}
    assert ema.variables_to_restore([v]) == {"v/ExponentialMovingAverage": v,
                                             "frozen": frozen, "u": u}


def test_restoring_the_averages_into_the_variables(graph, tmp_path):
    v = tf.Variable(0.0, name="v")
    ema = tf.train.ExponentialMovingAverage(0.5)
    update = ema.apply([v])
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(v.assign(8.0))
        sess.run(update)  # average 4.0
        path = saver.save(sess, str(tmp_path / "model"))
    restorer = tf.train.Saver(ema.variables_to_restore())
    with tf.Session() as sess:
        restorer.restore(sess, path)
        assert sess.run(v) == 4.0


def test_assign_moving_average(sess):
    a = tf.Variable(0.0, name="a")
    debiased = moving_averages.assign_moving_average(a, 10.0, 0.5)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["a", "a/biased", "a/local_step"]
    plain = moving_averages.assign_moving_average(a, 10.0, 0.5, zero_debias=False)
    sess.run(tf.global_variables_initializer())
    assert sess.run(debiased) == 10.0  # debiased from the first step
    assert sess.run(debiased) == 10.0
    sess.run(a.assign(2.0))
    assert sess.run(plain) == 6.0
    b = tf.Variable([1.0, 1.0])
    decay = tf.placeholder(tf.float32, [])
    upd = moving_averages.assign_moving_average(b, [3.0, 5.0], decay, zero_debias=False)
    sess.run(b.initializer)
    np.testing.assert_allclose(sess.run(upd, {decay: 0.75}), [1.5, 2.0])


def test_weighted_moving_average(sess):
    x = tf.placeholder(tf.float32, [])
    wt = tf.placeholder(tf.float32, [])
    avg = moving_averages.weighted_moving_average(x, 0.5, wt)
    assert sorted(v.op.name for v in tf.global_variables()) == [
        "WeightedMovingAvg/value", "WeightedMovingAvg/weight"]
    sess.run(tf.global_variables_initializer())
    num = den = 0.0
    for value, weight in [(2.0, 1.0), (4.0, 3.0)]:
        num = 0.5 * num + 0.5 * value * weight
        den = 0.5 * den + 0.5 * weight
        np.testing.assert_allclose(sess.run(avg, {x: value, wt: weight}), num / den)
