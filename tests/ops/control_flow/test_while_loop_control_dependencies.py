"""Loops built under an outer `tf.control_dependencies` (TF1's batch-norm training
pattern: `with tf.control_dependencies(update_ops): train_op = opt.minimize(loss)` over
a dynamic_rnn). As TF's WhileContext: the loop variables' Enters take the outer
dependencies, and each op inside the loop that still gets one (a constant) waits on an
Identity of the outer op's output entered into the loop. They used to fail at run time
with "inputs from different frames". Expected values are NumPy's or hand computed."""
import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor")


def test_map_fn_and_while_loop_run_after_the_outer_dependencies():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.0, 2.0])
        counter = tf.Variable(0.0)
        bump = tf.assign_add(counter, 1.0)
        with tf.control_dependencies([bump]):
            mapped = tf.map_fn(lambda v: v + 1.0, x)
            # the body reads the counter: it must see the bump of this run
            _, total = tf.while_loop(lambda i, s: i < 3,
                                     lambda i, s: (i + 1, s + counter.read_value()),
                                     [0, 0.0])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(mapped), [2.0, 3.0])
            assert sess.run(counter) == 1.0
            assert sess.run(total) == 3 * 2.0  # after the second bump
            assert sess.run(counter) == 2.0


def test_an_outer_dependency_without_outputs_is_kept():
    """TF drops a loop op's dependency on an op without outputs (a tf.group, a no_op);
    here it still runs first, through a constant built after it."""
    g = tf.Graph()
    with g.as_default():
        counter = tf.Variable(0.0)
        bump = tf.group(tf.assign_add(counter, 1.0))
        with tf.control_dependencies([bump]):
            _, total = tf.while_loop(lambda i, s: i < 2,
                                     lambda i, s: (i + 1, s + counter.read_value() * 10.0),
                                     [tf.constant(0), tf.constant(0.0)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(total) == 2 * 10.0
            assert sess.run(counter) == 1.0


def test_training_a_loop_under_update_ops_matches_numpy():
    rs = np.random.RandomState(0)
    xs = rs.rand(4, 5, 3).astype(np.float32)
    w0 = rs.rand(3, 2).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(xs)
        steps = tf.Variable(0.0)
        update = tf.assign_add(steps, 1.0)
        w = tf.Variable(w0)
        with tf.control_dependencies([update]):
            def body(i, h):
                return i + 1, tf.tanh(tf.matmul(x[:, i], w) + h)
            _, h = tf.while_loop(lambda i, h: i < 5, body, [0, tf.zeros([4, 2])])
            loss = tf.reduce_sum(h ** 2)
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
            got_w, got_steps = sess.run([w, steps])

    def loss_and_grad(wv):
        hs = [np.zeros((4, 2))]
        for i in range(5):
            hs.append(np.tanh(xs[:, i] @ wv + hs[-1]))
        dh, dw = 2 * hs[-1], np.zeros_like(wv)
        for i in reversed(range(5)):
            da = dh * (1 - hs[i + 1] ** 2)
            dw += xs[:, i].T @ da
            dh = da
        return dw
    want = w0.astype(np.float64)
    for _ in range(2):
        want = want - 0.1 * loss_and_grad(want)
    np.testing.assert_allclose(got_w, want, rtol=2e-5)
    assert got_steps == 2.0  # the update ran once per training step
