"""RandomShuffle and (Stateless)Multinomial give TF's values bit for bit: the kernels
against values recorded from TensorFlow 2.21 (tf_sampling_values.py), the permutation
and the search against sequential references, TF's split of rows over threads by hand."""
import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.random import philox, tf_sampling

import tf_sampling_values as recorded


def _session(threads: int = 1):
    return tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads))


# --- RandomShuffle ---------------------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(recorded.SHUFFLE, key=str), ids=str)
def test_shuffle_gives_tfs_values_run_after_run(case):
    graph_seed, dtype, shape = case
    n = int(np.prod(shape))
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        x = tf.random_shuffle(tf.reshape(tf.range(n, dtype=dtype), shape), seed=7)
        with _session() as sess:
            runs = [sess.run(x), sess.run(x)]
    for values, expected in zip(runs, recorded.SHUFFLE[case]):
        assert values.shape == shape and values.dtype == np.dtype(dtype)
        rows = values.reshape(shape[0], -1)
        assert rows[:, 0].tolist() == expected
        # whole rows move: each is its first element's row of the input
        width = rows.shape[1]
        assert np.array_equal(rows, rows[:, :1] + np.arange(width, dtype=dtype))


def test_shuffle_of_strings_moves_the_strings_as_tf():
    with tf.Graph().as_default():
        x = tf.random_shuffle(tf.constant([b"a", b"b", b"c", b"d", b"e"]), seed=7)
        with _session() as sess:
            first, second = sess.run(x), sess.run(x)
    order = [b"abcde"[i:i + 1] for i in recorded.SHUFFLE[(None, "int32", (5,))][0]]
    assert first.tolist() == order
    assert sorted(second.tolist()) == [b"a", b"b", b"c", b"d", b"e"]


@pytest.mark.parametrize("value", [np.int32(3), np.zeros([0], np.int32),
                                   np.zeros([4, 0], np.int32), np.arange(3).reshape(1, 3)])
def test_shuffle_returns_what_has_nothing_to_shuffle_and_draws_nothing(value):
    with tf.Graph().as_default():
        fed = tf.placeholder(tf.int32, shape=None)
        x = tf.random_shuffle(fed, seed=7)
        with _session() as sess:
            assert np.array_equal(sess.run(x, {fed: value}), value)
            # the stream did not move: the next shuffle is TF's first one
            assert sess.run(x, {fed: np.arange(5)}).tolist() == \
                recorded.SHUFFLE[(None, "int32", (5,))][0]


def _sequential_fisher_yates(targets, n):
    """The reference: the swaps one after another."""
    order = list(range(n))
    for i, j in enumerate(targets.tolist()):
        order[i], order[j] = order[j], order[i]
    return order


@pytest.mark.parametrize("n", [2, 3, 4, 7, 50, 1000])
def test_fisher_yates_equals_the_sequential_swaps(n):
    rng = np.random.RandomState(n)
    for _ in range(30):
        targets = np.arange(n - 1) + rng.randint(0, n - np.arange(n - 1))
        assert tf_sampling.fisher_yates(targets, n).tolist() == \
            _sequential_fisher_yates(targets, n)
    # the extremes: no step moves anything; every step swaps with the last position
    assert tf_sampling.fisher_yates(np.arange(n - 1), n).tolist() == list(range(n))
    last = np.full(n - 1, n - 1)
    assert tf_sampling.fisher_yates(last, n).tolist() == _sequential_fisher_yates(last, n)


def test_shuffle_targets_take_each_word_modulo_the_rows_left():
    words = np.array([7, 0xFFFFFFFF, 5, 9], dtype=np.uint32)
    # n = 5: step i draws among the 5 - i positions from i on
    assert tf_sampling.shuffle_targets(words, 5).tolist() == [0 + 7 % 5, 1 + 0xFFFFFFFF % 4,
                                                              2 + 5 % 3, 3 + 9 % 2]


# --- Multinomial -----------------------------------------------------------------------------
def _logits(batch, classes, dtype):
    x = 3.0 * np.sin(np.arange(batch * classes, dtype=np.float64) * 0.7 + 0.3)
    x = x.reshape(batch, classes)
    if dtype == "masked":
        x = x.astype(np.float32)
        x[0, 1], x[0, 3], x[1, :], x[2, 0] = -np.inf, np.nan, -np.inf, np.inf
        return x
    return x.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def _categorical_runs(case, threads):
    batch, classes, num_samples, dtype = case
    with tf.Graph().as_default():
        logits = tf.constant(_logits(batch, classes, dtype))
        x = tf.random.categorical(logits, num_samples, seed=3)
        y = tf.random.stateless_categorical(logits, num_samples, seed=[4, 5])
        with _session(threads) as sess:
            runs = sess.run(x), sess.run(x), sess.run(y)
    for r in runs:
        assert r.dtype == np.int64 and r.shape == (batch, num_samples)
    return tuple(r.tolist() for r in runs)


def _as_recorded(runs, recorded_runs):
    """The runs in the form they were recorded: lists, or strings of one digit a draw."""
    if isinstance(recorded_runs[0], str):
        return tuple("".join(str(v) for row in r for v in row) for r in runs)
    return runs


@pytest.mark.parametrize("case", sorted(recorded.CATEGORICAL, key=str), ids=str)
def test_categorical_gives_tfs_values(case):
    assert _categorical_runs(case, 1) == recorded.CATEGORICAL[case]


@pytest.mark.parametrize("threads,case", [(t, c) for t in sorted(recorded.CATEGORICAL_SHARDED)
                                          for c in recorded.CATEGORICAL_SHARDED[t]], ids=str)
def test_categorical_gives_tfs_values_when_tf_splits_the_rows(threads, case):
    expected = recorded.CATEGORICAL_SHARDED[threads][case]
    assert _as_recorded(_categorical_runs(case, threads), expected) == expected


def test_the_split_over_threads_changes_tfs_values():
    one, three = (recorded.CATEGORICAL_SHARDED[t][(700, 3, 2, "float32")] for t in (1, 3))
    # the first part starts where the whole does; the later ones start afresh
    assert one[0][:2 * 129] == three[0][:2 * 129] and one[0] != three[0]


def test_multinomial_and_categorical_share_the_kernel():
    logits = _logits(4, 5, "float32")
    with tf.Graph().as_default():
        x = tf.multinomial(logits, 7, seed=3, output_dtype=tf.int32)
        with _session() as sess:
            value = sess.run(x)
    assert value.dtype == np.int32
    assert value.tolist() == recorded.CATEGORICAL[(4, 5, 7, "float32")][0]


def test_categorical_draws_by_hand():
    # one row, classes of weights e^0, e^-1, e^-2 (max 0): a draw u picks the first
    # class whose running sum exceeds u * total
    key, counter = philox.key_counter_of_seeds(11, 13)
    logits = np.array([[0.0, -1.0, -2.0]])
    got = tf_sampling.categorical(key, counter, logits, 6, 1, np.int64)
    sums = np.cumsum(np.exp([0.0, -1.0, -2.0]))
    u = philox.uniform(key, counter, 6, np.float64) * sums[-1]
    assert got[0].tolist() == [int(np.sum(sums <= v)) for v in u]


@pytest.mark.parametrize("batch,classes", [(3, 1), (5, 2), (4, 3), (9, 64), (4, 65), (3, 300)])
def test_upper_bound_equals_a_right_sided_search_per_row(batch, classes):
    rng = np.random.RandomState(classes)
    sums = np.cumsum(rng.exponential(size=(batch, classes)), axis=1)
    sums[0, :classes // 2] = 0.0   # leading zero weights
    draws = np.concatenate([rng.uniform(0, sums[:, -1:], (batch, 20)), sums,
                            np.nextafter(sums, 0), np.nextafter(sums, np.inf),
                            np.zeros((batch, 1))], axis=1)
    expected = [np.searchsorted(s, d, side="right") for s, d in zip(sums, draws)]
    assert np.array_equal(tf_sampling._upper_bound(sums, draws), expected)


# --- TF's split of rows over threads -----------------------------------------------------------
def test_shards_by_hand():
    # 30 rows of 7657 cycles: 230k cycles want 2 threads; blocks of max(ceil(30 / (4 * 3)),
    # 40000 // 7657) = 5 rows make 6 blocks, which fill 3 threads: kept
    assert tf_sampling.shards(30, 7657, 3) == [(i, i + 5) for i in range(0, 30, 5)]
    # below 210k cycles, or one thread: one part
    assert tf_sampling.shards(27, 7657, 3) == [(0, 27)]
    assert tf_sampling.shards(1000, 7657, 1) == [(0, 1000)]
    assert tf_sampling.shards(0, 7657, 3) == []
    # 10 rows of 100k cycles on 4 threads: blocks of 1 row (10 blocks fill 4 threads to
    # 10/12); 2 rows make 5 blocks (5/8: worse), so the blocks stay 1 row
    assert tf_sampling.shards(10, 100000, 4) == [(i, i + 1) for i in range(10)]
    # 9 rows on 4 threads: blocks of 1 (9/12), grown to 2 rows (5 blocks, 5/8 + 0.01 <
    # 9/12: refused)
    assert tf_sampling.shards(9, 100000, 4) == [(i, i + 1) for i in range(9)]


def test_shards_grow_blocks_that_fill_the_threads_no_worse():
    # 14 rows of 100k on 4 threads: 14 blocks fill 14/16; 7 blocks of 2 (7/8) are no
    # worse, so the blocks grow to 2 rows (the largest allowed)
    assert tf_sampling.shards(14, 100000, 4) == [(i, i + 2) for i in range(0, 14, 2)]


def test_word_stream_hands_out_the_streams_words_in_order():
    key, counter = (5, 6), (0xFFFFFFF0, 0xFFFFFFFF, 1, 0)   # its chunks carry into word 2
    stream = philox.WordStream(key, counter)
    got = [stream() for _ in range(4 * 150)]
    assert got == philox.words(key, counter, 150).tolist()
    # single words and runs of words, within a chunk and past it
    stream = philox.WordStream(key, counter)
    got = [stream() for _ in range(5)] + stream.take(3).tolist() + \
        stream.take(700).tolist() + [stream()] + stream.take(0).tolist() + \
        stream.take(2).tolist()
    assert got == philox.words(key, counter, 178).tolist()[:711]


def test_word_stream_read_for_long_draws_larger_chunks_of_the_same_words():
    key, counter = (7, 9), (0xFFFFFF00, 0xFFFFFFFF, 3, 0)
    stream = philox.WordStream(key, counter)
    got, chunks = [], []
    for _ in range(200):   # a shuffle queue's dequeue_many(100), 200 times
        got += stream.take(100).tolist()
        chunks.append(stream._chunk)
    assert got == philox.words(key, counter, 5000).tolist()
    assert chunks[-1] == philox.WordStream._MAX_CHUNK_BLOCKS   # grown from 64 blocks
    assert len(set(chunks)) > 2


def test_stateless_first_doubles_are_each_seeds_first_uniform():
    rng = np.random.RandomState(4)
    seeds = np.concatenate([rng.randint(-2 ** 62, 2 ** 62, (40, 2)), [[-1, 5], [0, 0]],
                            np.array([[-3, 2 ** 31 - 1]], np.int32)])
    expected = [philox.uniform(*philox.key_counter_of_stateless_seed(s), 1, np.float64)[0]
                for s in seeds.tolist()]
    assert philox.stateless_first_doubles(seeds).tolist() == expected


def test_categorical_of_seeds_is_the_stateless_kernel_per_seed():
    logits = np.log(np.array([0.5, 0.3, 0.2], np.float32))
    seeds = np.arange(24, dtype=np.int64).reshape(12, 2) * 977 - 5000
    with tf.Graph().as_default():
        seed = tf.placeholder(tf.int64, [2])
        draw = tf.random.stateless_categorical(logits[None, :], 1, seed)
        with _session() as sess:
            expected = [int(sess.run(draw, {seed: s})[0, 0]) for s in seeds]
    assert tf_sampling.categorical_of_seeds(logits, seeds).tolist() == expected
