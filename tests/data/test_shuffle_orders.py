"""Dataset.shuffle gives TF's orders: TF's ring buffer, its word use and the seeds of
each pass (TF 2.21's ShuffleDataset and RandomSeedGenerator), against orders recorded
from TF 2.21 (`tensorflow.compat.v1`, graph mode) and written here as literals.

Recorded with, for each case (n, buffer_size, seed, reshuffle_each_iteration, mode,
graph seed or None):

    tf.set_random_seed(graph_seed)                  # if not None
    ds = tf.data.Dataset.range(n).shuffle(buffer_size, seed=seed,
                                          reshuffle_each_iteration=reshuffle)
    # mode "repeat": the 2n elements of a one-shot iterator of ds.repeat(2), in halves;
    # mode "initializer": an initializable iterator of ds, drained after each of two
    # initializations
"""
import pytest

import tensorweave as tf

# case: (first pass, second pass)
TF_ORDERS = {(10, 4, 1, None, 'repeat', None): ([0, 4, 5, 1, 2, 7, 9, 8, 6, 3],
                                    [2, 1, 3, 4, 6, 8, 7, 9, 5, 0]),
 (10, 4, 1, False, 'repeat', None): ([3, 4, 0, 5, 2, 7, 8, 9, 1, 6],
                                     [3, 4, 0, 5, 2, 7, 8, 9, 1, 6]),
 (10, 4, 1, None, 'initializer', None): ([0, 4, 5, 1, 2, 7, 9, 8, 6, 3],
                                         [0, 4, 5, 1, 2, 7, 9, 8, 6, 3]),
 (10, 4, 5, True, 'repeat', 3): ([0, 3, 1, 6, 5, 8, 7, 9, 4, 2],
                                 [1, 3, 0, 4, 6, 2, 8, 5, 9, 7]),
 (10, 50, 2, None, 'repeat', None): ([0, 9, 4, 1, 6, 2, 7, 5, 3, 8],
                                     [7, 5, 0, 2, 9, 3, 4, 1, 8, 6]),
 (12, 1, 2, None, 'repeat', None): ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
                                    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
 (30, 7, -9, None, 'repeat', 1099511627776): ([5, 6, 8, 3, 4, 9, 0, 1, 11, 12, 13, 10, 14,
                                               7, 20, 18, 17, 21, 15, 2, 25, 23, 26, 16, 27,
                                               24, 28, 22, 19, 29],
                                              [5, 6, 0, 7, 8, 3, 11, 9, 4, 10, 13, 12, 14,
                                               19, 15, 1, 18, 23, 22, 2, 26, 17, 27, 20, 24,
                                               25, 16, 29, 21, 28]),
 (100, 100, 7, None, 'repeat', None): ([72, 98, 38, 63, 9, 58, 18, 35, 40, 52, 22, 80, 31,
                                        54, 12, 13, 60, 68, 61, 21, 26, 99, 5, 3, 14, 17, 7,
                                        79, 71, 69, 87, 0, 11, 74, 43, 90, 65, 59, 27, 1,
                                        64, 28, 2, 6, 20, 84, 70, 56, 62, 42, 29, 91, 89,
                                        39, 66, 86, 30, 25, 92, 48, 8, 36, 32, 15, 16, 57,
                                        45, 10, 51, 85, 49, 96, 41, 81, 4, 97, 76, 83, 46,
                                        93, 34, 95, 67, 75, 23, 78, 37, 33, 82, 88, 77, 24,
                                        44, 94, 53, 47, 73, 50, 19, 55],
                                       [49, 55, 61, 41, 42, 91, 87, 29, 47, 35, 57, 95, 12,
                                        65, 94, 17, 3, 69, 50, 6, 4, 18, 34, 10, 72, 39, 52,
                                        27, 43, 84, 64, 93, 25, 82, 51, 89, 37, 5, 24, 7,
                                        56, 83, 33, 79, 15, 16, 23, 96, 68, 76, 99, 44, 32,
                                        67, 13, 46, 14, 59, 85, 19, 48, 8, 20, 71, 0, 70,
                                        66, 88, 75, 81, 54, 97, 31, 90, 74, 80, 78, 58, 73,
                                        62, 21, 26, 86, 77, 63, 38, 60, 30, 11, 28, 9, 1,
                                        36, 40, 45, 22, 92, 98, 53, 2])}


def _passes(n, buffer_size, seed, reshuffle, mode, graph_seed):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        ds = tf.data.Dataset.range(n).shuffle(buffer_size, seed=seed,
                                              reshuffle_each_iteration=reshuffle)
        if mode == "repeat":
            nxt = tf.data.make_one_shot_iterator(ds.repeat(2)).get_next()
            with tf.Session() as sess:
                got = [int(sess.run(nxt)) for _ in range(2 * n)]
            return got[:n], got[n:]
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        passes = []
        with tf.Session() as sess:
            for _ in range(2):
                sess.run(it.initializer)
                passes.append([int(sess.run(nxt)) for _ in range(n)])
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)
        return tuple(passes)


@pytest.mark.parametrize("case", sorted(TF_ORDERS, key=str), ids=str)
def test_shuffle_orders_are_tfs(case):
    assert _passes(*case) == TF_ORDERS[case]


# TF 2.21's shuffle_and_repeat(buffer_size, count, seed) on range(n), an initializable
# iterator drained (at most 25 elements): (n, buffer_size, count, seed) -> elements
TF_SHUFFLE_AND_REPEAT = {
    (10, 4, 2, 1): [0, 4, 5, 1, 2, 7, 9, 8, 6, 3, 2, 1, 3, 4, 6, 8, 7, 9, 5, 0],
    (5, 20, 3, 2): [0, 2, 4, 1, 3, 2, 4, 0, 1, 3, 2, 4, 1, 0, 3],
    (7, 3, -1, 3): [0, 1, 2, 3, 5, 4, 6, 0, 3, 4, 5, 2, 1, 6, 2, 1, 3, 0, 5, 4, 6, 2, 3, 4,
                    0],
}


@pytest.mark.parametrize("case", sorted(TF_SHUFFLE_AND_REPEAT), ids=str)
def test_shuffle_and_repeat_orders_are_tfs(case):
    n, buffer_size, count, seed = case
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(n).apply(
            tf.data.experimental.shuffle_and_repeat(buffer_size, count, seed=seed))
        it = tf.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        got = []
        with tf.Session() as sess:
            sess.run(it.initializer)
            while len(got) < 25:
                try:
                    got.append(int(sess.run(nxt)))
                except tf.errors.OutOfRangeError:
                    break
    assert got == TF_SHUFFLE_AND_REPEAT[case]
