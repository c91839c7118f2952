"""Op seeds derived from the graph seed (tf.set_random_seed) around tf.data: a dataset
function counts its own (TF traces it into a graph of its own), and
make_one_shot_iterator takes one from the graph. The values were recorded from TF 2.21
(`tensorflow.compat.v1`, disable_v2_behavior) with the programs below, each in a new
graph after tf.set_random_seed(1), values rounded to 5 decimals."""
import numpy as np
import pytest

import tensorweave as tf

OUTER_FIRST = 0.8127   # tf.random_uniform([]) with op seed 0 (the graph's first)
OUTER_SECOND = 0.05554  # with op seed 1


def _draws(tensors, n=1, initializer=None):
    with tf.Session() as sess:
        if initializer is not None:
            sess.run(initializer)
        return [np.round(np.asarray(sess.run(tensors), float), 5).tolist()
                for _ in range(n)]


@pytest.fixture
def seeded():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        yield


def test_a_map_function_leaves_the_graphs_seeds_alone(seeded):
    ds = tf.data.Dataset.range(3).map(lambda i: tf.random_uniform([]))
    it = tf.data.make_initializable_iterator(ds)
    x = it.get_next()
    after = tf.random_uniform([])
    with tf.Session() as sess:
        sess.run(it.initializer)
        got = [round(float(sess.run(x)), 5) for _ in range(3)] + \
            [round(float(sess.run(after)), 5)]
    # the function's op counts from 0 on its own: the first op seed, as the outer op's
    assert got == [OUTER_FIRST, 0.52729, 0.84894, OUTER_FIRST]


def test_each_function_counts_from_zero(seeded):
    d1 = tf.data.Dataset.range(2).map(lambda i: tf.random_uniform([]))
    d2 = tf.data.Dataset.range(2).map(lambda i: tf.random_uniform([]) + tf.random_normal([]))
    i1, i2 = tf.data.make_initializable_iterator(d1), tf.data.make_initializable_iterator(d2)
    got = _draws([i1.get_next(), i2.get_next()], 2, [i1.initializer, i2.initializer])
    assert got == [[OUTER_FIRST, 1.09453], [0.52729, 0.23703]]


def test_a_nested_function_counts_on_its_own(seeded):
    ds = tf.data.Dataset.range(2).flat_map(
        lambda i: tf.data.Dataset.range(2).map(lambda j: tf.random_uniform([])))
    it = tf.data.make_initializable_iterator(ds)
    x = it.get_next()
    after = tf.random_uniform([])
    got = _draws(x, 4, it.initializer) + _draws(after)
    assert got == [OUTER_FIRST, 0.52729, 0.84894, 0.89286, OUTER_FIRST]


def test_a_one_shot_iterator_takes_an_op_seed(seeded):
    ds = tf.data.Dataset.from_tensor_slices(np.arange(4.0)).batch(2)
    x = tf.data.make_one_shot_iterator(ds).get_next()
    after = tf.random_uniform([])
    assert _draws(x) == [[0.0, 1.0]] and _draws(after) == [OUTER_SECOND]


def test_a_one_shot_iterator_of_a_random_map(seeded):
    ds = tf.data.Dataset.range(2).map(lambda i: tf.random_uniform([]))
    x = tf.data.make_one_shot_iterator(ds).get_next()
    after = tf.random_uniform([])
    with tf.Session() as sess:
        got = [round(float(sess.run(t)), 5) for t in (x, x, after)]
    assert got == [OUTER_FIRST, 0.52729, OUTER_SECOND]


def test_the_usual_augmentation_then_model_program(seeded):
    # random augmentation in map, then a default-initialized variable (TF 2.21's values)
    images = np.zeros([4, 2, 2, 1], np.float32)
    ds = tf.data.Dataset.from_tensor_slices(images).map(
        lambda im: tf.image.random_flip_left_right(im))
    it = tf.data.make_initializable_iterator(ds)
    it.get_next()
    w = tf.get_variable("w", [2, 3])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(w)
    np.testing.assert_allclose(got[0], [0.6851, -0.9233, 0.8581], atol=6e-5)
