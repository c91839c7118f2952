"""Gradients of reductions over rank-0 inputs, and integer division over empty tensors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


_REDUCTIONS = [tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min, tf.reduce_prod]


# shape None: the rank is known only at run time
@pytest.mark.parametrize("reduce_fn,shape", [(f, s) for f in _REDUCTIONS for s in ([], None)])
def test_gradient_of_reducing_a_scalar(graph, sess, reduce_fn, shape):
    x = tf.placeholder(tf.float32, shape)
    y = reduce_fn(x)
    (g,) = tf.gradients(y, x)
    assert y.shape.as_list() == []  # TF1 knows a full reduction is a scalar
    out = sess.run([y, g], {x: 3.0})
    assert out[0] == 3.0 and out[1] == 1.0
    assert out[1].dtype == np.float32 and out[1].shape == ()


def test_gradient_of_reduce_sum_scalar_numeric(graph):
    x = tf.placeholder(tf.float64, [])
    y = tf.reduce_sum(x * x, axis=None)
    with tf.Session():
        err = compute_gradient_error(x, [], y, [], x_init_value=np.array(1.5))
    assert err < 1e-6


def test_integer_division_by_zero_over_an_empty_tensor(graph, sess):
    # as TF: an empty result computes no division, so a zero divisor is no error
    a = tf.placeholder(tf.int32, [None])
    empty = np.zeros([0], np.int32)
    for op in (tf.floormod, tf.floordiv, tf.truncatemod, tf.truncatediv, tf.div):
        out = sess.run(op(a, 0), {a: empty})
        assert out.shape == (0,) and out.dtype == np.int32
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        sess.run(tf.floormod(a, 0), {a: np.array([1, 2], np.int32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        sess.run(tf.floordiv(3, a), {a: np.array([1, 0], np.int32)})


@pytest.mark.parametrize("axis", [None, 1, [0, 2], -1])
def test_reduce_prod_gradient_with_rank_known_at_run_time(graph, axis):
    x0 = np.random.RandomState(0).uniform(0.5, 1.5, [2, 3, 2])
    x0[0, 1, 1] = 0.0  # a zero: the gradient is the product of the others, still exact
    x = tf.placeholder(tf.float64)  # unknown rank: the dynamic path
    known = tf.placeholder(tf.float64, x0.shape)
    y = tf.reduce_prod(x, axis=axis)
    (g,) = tf.gradients(y, x)
    (g_static,) = tf.gradients(tf.reduce_prod(known, axis=axis), known)
    with tf.Session() as sess:
        got, want = sess.run([g, g_static], {x: x0, known: x0})
    np.testing.assert_allclose(got, want, rtol=1e-12)
    axes = tf.placeholder(tf.int32, [None])  # axes computed at run time
    (g_axes,) = tf.gradients(tf.reduce_prod(known, axis=axes), known)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g_axes, {known: x0, axes: [0, 2]}),
                                   sess.run(tf.gradients(tf.reduce_prod(known, [0, 2]),
                                                         known)[0], {known: x0}),
                                   rtol=1e-12)
        with_zero = sess.run(g, {x: x0})
        assert with_zero[0, 1, 1] != 0.0  # the product of the other entries
