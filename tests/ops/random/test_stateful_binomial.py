"""tf.random.Generator.binomial (StatefulRandomBinomial) gives TF's values and moves the
state as TF does. The literals were recorded from TF 2.21 (compat.v1 graph mode, CPU)
by the same program as `_draws` below, with `tf.random.Generator` of
`tensorflow.compat.v1` after `tf.disable_v2_behavior()`. In that program each
generator first runs `g.skip(0)`: TF's binomial kernel loses its state update when the
variable's buffer is shared, as it is after the initializer, so without it TF's first
draw would leave the state unchanged (and its second draw repeat the first)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors

G = tf.random.Generator

# (values, state of g, state of g2) after each draw, recorded from TF 2.21
TF_DRAWS = [
    ([[3, 17, 109], [4, 16, 95]], [192005, 0, 0], [12345678901234, 0, 0]),
    ([[3, 18, 94], [4, 15, 106]], [384005, 0, 0], [12345678901234, 0, 0]),
    ([1, 0, 2, 2, 0], [486405, 0, 0], [12345678901234, 0, 0]),
    ([[8.0, 45.0], [0.0, 6.0], [84.0, 896.0]], [793605, 0, 0], [12345678901234, 0, 0]),
    ([[4.0, 45.0], [0.0, 7.0], [93.0, 883.0]], [1100805, 0, 0], [12345678901234, 0, 0]),
    ([[1.0, 11.0], [0.0, 12.0], [0.0, 12.0], [3.0, 12.0]], [1280005, 0, 0],
     [12345678901234, 0, 0]),
    (np.zeros([0, 2]), [1356805, 0, 0], [12345678901234, 0, 0]),
    ([21.0, 21.0, 28.0], [1433605, 0, 0], [12345678901234, 0, 0]),
    ([38, 32, 35, 38, 37, 40], [1433605, 0, 0], [12345679016434, 0, 0]),
    ([40, 32, 32, 46, 40, 28], [1433605, 0, 0], [12345679131634, 0, 0]),
]


def _draws(sess):
    g = G.from_seed(5)
    a = g.binomial([2, 3], counts=[10., 20., 200.], probs=[0.3, 0.8, 0.5])
    b = g.binomial([5], counts=4.0, probs=0.25, dtype=tf.int64)
    c = g.binomial([3, 2], counts=[[50.], [7.], [1000.]], probs=[0.1, 0.9],
                   dtype=tf.float32)
    d = g.binomial([4, 2], counts=tf.constant([30., 12.], tf.float64),
                   probs=tf.constant([0.05, 0.97], tf.float64), dtype=tf.float64)
    e = g.binomial([0, 2], counts=[3., 4.], probs=0.5)
    h = g.binomial([3], counts=tf.constant(40., tf.float16),
                   probs=tf.constant(0.5, tf.float16), dtype=tf.float16)
    g2 = G.from_seed(12345678901234)
    f = g2.binomial([6], counts=100., probs=0.37)
    skips = [g.skip(0), g2.skip(0)]
    sess.run(tf.global_variables_initializer())
    sess.run(skips)
    return [(sess.run(t), sess.run(g.state), sess.run(g2.state))
            for t in [a, a, b, c, c, d, e, h, f, f]]


def test_values_and_state_match_tf(graph, sess):
    got = _draws(sess)
    dtypes = ["int32", "int32", "int64", "float32", "float32", "float64", "int32",
              "float16", "int32", "int32"]
    for (values, state, state2), want, dtype in zip(got, TF_DRAWS, dtypes):
        assert values.dtype == dtype
        np.testing.assert_array_equal(values, np.asarray(want[0]).reshape(values.shape))
        assert values.shape == np.asarray(want[0]).shape
        assert state.tolist() == want[1] and state2.tolist() == want[2]


def test_state_moves_by_tf_reservation(graph, sess):
    # 256 blocks per value of num_batches * 200 * (samples_per_batch + 3) / 4
    # the low counter word overflows into the high one
    g = G(state=[2 ** 64 - 7, 5, 9], alg="philox")
    draw = g.binomial([7, 2, 3], counts=[5., 6., 7.], probs=0.5)
    sess.run(tf.global_variables_initializer())
    sess.run(draw)
    reserve = 256 * (3 * 200 * (14 + 3) // 4)
    counter = 2 ** 64 - 7 + (5 << 64) + reserve
    want = [counter & (2 ** 64 - 1), (counter >> 64) & (2 ** 64 - 1), 9]
    assert sess.run(g.state).astype(np.uint64).tolist() == want


def test_distribution(graph, sess):
    g = G.from_seed(11)
    b = g.binomial([20000, 2], counts=[10., 300.], probs=[0.3, 0.9])
    sess.run(tf.global_variables_initializer())
    v = sess.run(b)
    np.testing.assert_allclose(v.mean(0), [3., 270.], rtol=0.01)
    np.testing.assert_allclose(v.var(0), [2.1, 27.], rtol=0.05)


def test_errors(graph, sess):
    threefry = G.from_seed(1, alg="threefry")
    g = G.from_seed(1)
    bad_shape = g.binomial([3], counts=[1., 2.], probs=0.5)
    sess.run(tf.global_variables_initializer())
    with pytest.raises(errors.InvalidArgumentError, match="Unsupported algorithm id: 2"):
        sess.run(threefry.binomial([2], counts=3., probs=0.5))
    with pytest.raises(errors.InvalidArgumentError, match="must end with broadcasted shape"):
        sess.run(bad_shape)
    with pytest.raises(errors.InvalidArgumentError,
                       match="compatible batch dimensions"):
        sess.run(g.binomial([2, 3], counts=[1., 2.], probs=[0.5, 0.5, 0.5]))
