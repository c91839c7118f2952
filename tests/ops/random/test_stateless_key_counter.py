"""StatelessRandomGetKeyCounter / GetKeyCounterAlg / GetAlg: TF 2's tf.random.stateless_*
turn the seed into a (key, counter, alg) triple for the StatelessRandom*V2 ops; TF 2
SavedModels hold these ops. Shapes, dtypes and errors are TF 2.21's; the key and counter
values are ours (TF scrambles the seed, and no random op here is TF's bit for bit)."""
import numpy as np
import pytest

import tensorweave as tf


def _uniform(key, counter, alg):
    return tf.raw_ops.StatelessRandomUniformV2(shape=[1000], key=key, counter=counter, alg=alg)


def test_shapes_dtypes_and_philox(sess):
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=tf.constant([1, 2], tf.int64))
    k2, c2, alg = tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=[1, 2])
    assert key.shape.as_list() == [1] and counter.shape.as_list() == [2]
    assert key.dtype == tf.uint64 and counter.dtype == tf.uint64 and alg.dtype == tf.int32
    assert alg.shape.as_list() == []
    got = sess.run([key, counter, k2, c2, alg, tf.raw_ops.StatelessRandomGetAlg()])
    np.testing.assert_array_equal(got[0], got[2])  # the same triple from both ops
    np.testing.assert_array_equal(got[1], got[3])
    assert got[4] == got[5] == 1  # Philox, as TF picks on CPU


def test_draws_are_a_function_of_the_seed(sess):
    def draw(seed):
        return _uniform(*tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=seed))
    a, again, other = sess.run([draw([7, -3]), draw([7, -3]), draw([7, -2])])
    np.testing.assert_array_equal(a, again)
    assert not np.array_equal(a, other)
    assert 0.0 <= a.min() and a.max() < 1.0 and abs(a.mean() - 0.5) < 0.05


@pytest.mark.parametrize("seed, message", [
    ([1, 2, 3], "Dimension must be 2 but is 3"),
    ([[1, 2]], "Shape must be rank 1 but is rank 2"),
])
def test_bad_seed_shape_at_build_time(graph, seed, message):
    with pytest.raises(ValueError, match=message):
        tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)


def test_bad_seed_shape_at_run_time(sess):
    seed = tf.placeholder(tf.int32)
    key, _ = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"seed must have shape \[2\]"):
        sess.run(key, {seed: [1, 2, 3]})
