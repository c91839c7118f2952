"""Dataset.random, sample_from_datasets and choose_from_datasets give TF's values and
orders: against TF 2.21 (`tensorflow.compat.v1`, graph mode, an initializable iterator
drained; the graph seed TF's default), recorded once and written here as literals."""
import pytest

import tensorweave as tf

X = tf.data.experimental


def _three():
    return [tf.data.Dataset.range(0, 10), tf.data.Dataset.range(100, 110),
            tf.data.Dataset.range(200, 205)]


def _pair(second_end=110):
    return [tf.data.Dataset.range(0, 10), tf.data.Dataset.range(100, second_end)]


CASES = {
    "random": (lambda: tf.data.Dataset.random(seed=5).take(6),
               [3568415791, 2798973839, 2476249224, 2816106479, 2507884952, 3643392934]),
    "random_rerandomized": (
        lambda: tf.data.Dataset.random(seed=5, rerandomize_each_iteration=True).take(3)
        .repeat(2),
        [1388993965, 1469601551, 1131953315, 1720460324, 3622488375, 2748373011]),
    "sample_weighted": (
        lambda: X.sample_from_datasets(_three(), [0.5, 0.3, 0.2], seed=4),
        [0, 200, 1, 2, 100, 101, 102, 3, 103, 201, 4, 5, 6, 202, 7, 104, 105, 106, 107, 108,
         203, 8, 9, 109, 204]),
    "sample_uniform": (
        lambda: tf.data.Dataset.sample_from_datasets(_pair(), seed=9),
        [0, 100, 101, 102, 103, 1, 2, 104, 3, 4, 5, 6, 105, 106, 7, 8, 9, 107, 108, 109]),
    "sample_stop_on_empty": (
        lambda: tf.data.Dataset.sample_from_datasets(_pair(103), [0.2, 0.8], seed=9,
                                                     stop_on_empty_dataset=True),
        [0, 100, 101, 102]),
    "sample_weight_dataset": (
        lambda: X.sample_from_datasets(_pair(), tf.data.Dataset.from_tensor_slices(
            [[0.9, 0.1], [0.1, 0.9]]).repeat(), seed=2),
        [0, 100, 1, 101, 2, 102, 3, 103, 4, 104, 5, 105, 6, 106, 7, 107, 108, 109, 8, 9]),
    "choose": (
        lambda: X.choose_from_datasets(_pair(105)[:1] + [tf.data.Dataset.range(100, 105)],
                                       tf.data.Dataset.from_tensor_slices(
                                           tf.constant([1, 0, 1, 1, 0], tf.int64))),
        [100, 0, 101, 102, 1]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_orders_are_tfs(case):
    make, expected = CASES[case]
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(make())
        nxt = it.get_next()
        got = []
        with tf.Session() as sess:
            sess.run(it.initializer)
            for _ in range(40):
                try:
                    got.append(int(sess.run(nxt)))
                except tf.errors.OutOfRangeError:
                    break
    assert got == expected


def test_zero_weights_drop_their_datasets_as_tfs():
    # TF drops a dataset of Python weight 0 before drawing: one left is returned as is
    with tf.Graph().as_default():
        only = X.sample_from_datasets(_pair(), [0.0, 1.0], seed=3)
        assert only.element_spec == tf.data.Dataset.range(1).element_spec
        it = tf.data.make_one_shot_iterator(only.take(3))
        with tf.Session() as sess:
            nxt = it.get_next()
            assert [int(sess.run(nxt)) for _ in range(3)] == [100, 101, 102]
    with pytest.raises(TypeError, match="`weights` type must be either"):
        X.sample_from_datasets(_pair(), tf.constant([1, 2]))
