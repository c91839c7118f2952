"""keras.preprocessing.sequence's skipgrams, make_sampling_table and TimeseriesGenerator
against values recorded from TF 2.15's Keras (tensorflow.compat.v1.keras)."""
import random

import numpy as np
import pytest

import tensorweave as tf

S = tf.keras.preprocessing.sequence


# --- skipgrams, make_sampling_table, TimeseriesGenerator: TF 2.15's Keras, recorded with
# the calls below (Python's `random` seeded first where the function draws from it)
SAMPLING_TABLE_12 = [0.0031522479, 0.0031522479, 0.0054759727, 0.0074155641, 0.0091281675,
                     0.010684345, 0.0121238063, 0.0134716244, 0.0147448688, 0.0159558021,
                     0.0171135962, 0.0182253319]
SAMPLING_TABLE_6_1E3 = [0.0315224788, 0.0315224788, 0.0547597269, 0.074155641, 0.0912816746,
                        0.1068434504]
SKIPGRAMS = {  # name: (random.seed, args, kwargs, (couples, labels))
    "a": (3, ([1, 2, 0, 3, 4, 5], 8), dict(window_size=2, seed=7),
          ([[2, 4], [3, 2], [3, 4], [5, 5], [4, 5], [4, 3], [3, 7], [3, 2], [5, 2], [1, 2],
            [5, 4], [3, 5], [4, 6], [5, 3], [1, 5], [2, 3], [2, 1], [4, 3], [3, 4], [2, 7]],
           [0, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0])),
    "b": (5, ([4, 1, 2, 3], 10), dict(window_size=1, negative_samples=2.0,
                                      categorical=True, seed=11),
          ([[3, 2], [2, 3], [1, 8], [1, 4], [1, 8], [2, 6], [4, 1], [1, 2], [4, 4], [3, 9],
            [1, 2], [2, 1], [3, 3], [4, 4], [2, 1], [1, 2], [2, 4], [2, 7]],
           [[0, 1], [0, 1], [1, 0], [0, 1], [1, 0], [1, 0], [0, 1], [1, 0], [1, 0], [1, 0],
            [0, 1], [0, 1], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [1, 0]])),
    "d": (2, ([1, 2, 3], 5), dict(negative_samples=0.0),
          ([[3, 1], [2, 1], [1, 3], [2, 3], [3, 2], [1, 2]],
           [1, 1, 1, 1, 1, 1])),
}


def test_make_sampling_table_is_keras():
    np.testing.assert_allclose(S.make_sampling_table(12), SAMPLING_TABLE_12, atol=1e-10)
    np.testing.assert_allclose(S.make_sampling_table(6, 1e-3), SAMPLING_TABLE_6_1E3,
                               atol=1e-10)  # recorded to 10 decimals


@pytest.mark.parametrize("name", sorted(SKIPGRAMS))
def test_skipgrams_are_kerass_for_a_seeded_random(name):
    state = random.getstate()
    try:
        seed, args, kwargs, (couples, labels) = SKIPGRAMS[name]
        random.seed(seed)
        got = S.skipgrams(*args, **kwargs)
    finally:
        random.setstate(state)
    assert got == (couples, labels)


def test_skipgrams_positive_pairs_and_the_sampling_table():
    # without shuffling or negatives: every (word, neighbour) pair in order, 0 skipped;
    # a table of zeros keeps no word, of ones every word
    couples, labels = S.skipgrams([1, 0, 2, 3], 4, window_size=1, negative_samples=0,
                                  shuffle=False)
    assert couples == [[2, 3], [3, 2]] and labels == [1, 1]
    assert S.skipgrams([1, 2], 3, negative_samples=0, shuffle=False,
                       sampling_table=np.zeros(3)) == ([], [])
    assert S.skipgrams([1, 2], 3, negative_samples=0, shuffle=False,
                       sampling_table=np.ones(3))[0] == [[1, 2], [2, 1]]


def test_timeseries_generator_is_kerass():
    data, targets = np.arange(20).reshape(10, 2), np.arange(10) * 10
    g = S.TimeseriesGenerator(data, targets, length=3, sampling_rate=2, stride=2,
                              batch_size=2, start_index=1, end_index=8)
    assert isinstance(g, tf.keras.utils.Sequence) and len(g) == 2
    batches = [(x.tolist(), y.tolist()) for x, y in (g[0], g[1])]
    assert batches == [([[[2, 3], [6, 7]], [[6, 7], [10, 11]]], [40, 60]),
                       ([[[10, 11], [14, 15]]], [80])]
    rev = S.TimeseriesGenerator(data, targets, length=2, reverse=True, batch_size=3)
    assert len(rev) == 3 and rev[2][1].tolist() == [80, 90]
    assert rev[0][0].tolist() == [[[2, 3], [0, 1]], [[4, 5], [2, 3]], [[6, 7], [4, 5]]]
    small = S.TimeseriesGenerator(np.arange(6).reshape(3, 2), np.arange(3), length=1,
                                  batch_size=2)
    assert small.to_json() == (
        '{"class_name": "TimeseriesGenerator", "config": {"data": "[[0, 1], [2, 3], '
        '[4, 5]]", "targets": "[0, 1, 2]", "length": 1, "sampling_rate": 1, "stride": 1, '
        '"start_index": 1, "end_index": 2, "shuffle": false, "reverse": false, '
        '"batch_size": 2}}')
    with pytest.raises(ValueError, match="Data and targets have to be of same length. "
                       "Data length is 10 while target length is 5"):
        S.TimeseriesGenerator(data, targets[:5], length=2)
    with pytest.raises(ValueError, match=r"`start_index\+length=12 > end_index=9` is "
                       "disallowed"):
        S.TimeseriesGenerator(data, targets, length=12)
    # a fit over it trains (Sequence input)
    model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(3, 2)),
                                 tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    gen = S.TimeseriesGenerator(data.astype(np.float32) / 20, targets.astype(np.float32) / 90,
                                length=3, batch_size=4)
    history = model.fit(gen, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
