"""The candidate samplers give TF's values bit for bit, expected counts included, run
after run (against values recorded from TensorFlow 2.21, tf_candidate_values.py), and
the sampled losses over them TF's losses within float rounding; the pieces of
range_samplers.py against sequential references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.random import philox, range_samplers

import tf_candidate_values as recorded

UNIGRAMS = [5.0, 1.0, 0.5, 7.25, 3.0, 0.1, 2.0, 9.0, 4.0, 1.5, 0.75, 6.0, 2.5, 8.0, 0.3,
            1.1]
VOCAB = "a,3\nb,1.5\nc,0\nd,8\ne,2\n"


def _samplers(vocab_file: str) -> dict:
    """The samplers of the recording, with their arguments and op seeds."""
    tc = tf.constant([[3, 7], [0, 12], [5, 5]], tf.int64)
    t1 = tf.constant([[1], [40], [2999]], tf.int64)
    nn = tf.nn
    return {
        "uniform_rep": nn.uniform_candidate_sampler(tc, 2, 8, False, 100, seed=11),
        "uniform_unique": nn.uniform_candidate_sampler(tc, 2, 10, True, 20, seed=12),
        "uniform_pow2": nn.uniform_candidate_sampler(tc, 2, 6, True, 64, seed=13),
        "loguniform_unique": nn.log_uniform_candidate_sampler(t1, 1, 64, True, 50000,
                                                              seed=14),
        "loguniform_rep": nn.log_uniform_candidate_sampler(tc, 2, 12, False, 30, seed=15),
        "learned_unique": nn.learned_unigram_candidate_sampler(tc, 2, 6, True, 15,
                                                               seed=16),
        "learned_rep": nn.learned_unigram_candidate_sampler(tc, 2, 9, False, 13, seed=17),
        "fixed_unique": nn.fixed_unigram_candidate_sampler(
            tf.constant([[1, 4], [6, 2]], tf.int64), 2, 5, True, 9, distortion=0.75,
            num_reserved_ids=2, num_shards=2, shard=1, unigrams=UNIGRAMS, seed=18),
        "fixed_rep": nn.fixed_unigram_candidate_sampler(tc, 2, 10, False, 16,
                                                        unigrams=UNIGRAMS, seed=19),
        "fixed_shard0": nn.fixed_unigram_candidate_sampler(
            tf.constant([[1, 4, 6]], tf.int64), 3, 7, True, 10, distortion=0.5,
            num_reserved_ids=3, num_shards=2, shard=0, unigrams=UNIGRAMS, seed=20),
        "fixed_vocab": nn.fixed_unigram_candidate_sampler(
            tf.constant([[2], [4]], tf.int64), 1, 4, True, 5, vocab_file=vocab_file,
            distortion=0.75, seed=22),
        "learned_big": nn.learned_unigram_candidate_sampler(
            tf.constant([[3, 900, 77], [3, 3, 1000]], tf.int64), 3, 40, True, 1001,
            seed=23),
        "all": tf.random.all_candidate_sampler(tc[:, :1], 1, 8, True, seed=21),
    }


def _losses() -> dict:
    rng = np.random.RandomState(0)
    w = tf.constant(rng.randn(200, 6).astype(np.float32))
    b = tf.constant(rng.randn(200).astype(np.float32) * 0.1)
    x = tf.constant(rng.randn(4, 6).astype(np.float32))
    y = tf.constant([[3, 50], [0, 199], [17, 17], [120, 4]], tf.int64)
    y1 = y[:, :1]
    out = {
        "sampled_softmax": tf.nn.sampled_softmax_loss(w, b, y, x, 10, 200, num_true=2,
                                                      seed=31),
        "sampled_softmax_1": tf.nn.sampled_softmax_loss(w, b, y1, x, 16, 200, seed=32)}
    tf.set_random_seed(5)   # nce_loss has no seed argument: its sampler's come from here
    out["nce"] = tf.nn.nce_loss(w, b, y, x, 12, 200, num_true=2)
    out["nce_hits"] = tf.nn.nce_loss(w, b, y1, x, 20, 200, remove_accidental_hits=True)
    return out


def _two_runs(build):
    with tf.Graph().as_default():
        ops = build()
        with tf.Session() as sess:
            return sess.run(ops), sess.run(ops)


@pytest.fixture(scope="module")
def sampler_runs(tmp_path_factory):
    vocab = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    vocab.write_text(VOCAB)
    return _two_runs(lambda: _samplers(str(vocab)))


@pytest.mark.parametrize("name", sorted(recorded.CANDIDATES))
def test_samplers_give_tfs_values_run_after_run(sampler_runs, name):
    for run, (sampled, true_expected, sampled_expected) in zip(sampler_runs,
                                                               recorded.CANDIDATES[name]):
        got = run[name]
        assert got.sampled_candidates.dtype == np.int64
        assert got.sampled_candidates.tolist() == sampled
        np.testing.assert_array_equal(got.true_expected_count.ravel(),
                                      np.array(true_expected, np.float32))
        np.testing.assert_array_equal(got.sampled_expected_count,
                                      np.array(sampled_expected, np.float32))


def test_sampled_losses_equal_tfs_within_float_rounding():
    runs = _two_runs(_losses)
    for name, expected in recorded.LOSSES.items():
        for run, values in zip(runs, expected):
            np.testing.assert_allclose(run[name], values, rtol=2e-6, err_msg=name)


@pytest.mark.parametrize("sample, sampler, n, unique", [
    (tf.nn.log_uniform_candidate_sampler, range_samplers.LogUniformSampler(50000), 64, True),
    (tf.nn.uniform_candidate_sampler, range_samplers.UniformSampler(1000), 5, False),
    # 60 distinct classes of 64 take about 170 draws: words past the first blocks
    (tf.nn.uniform_candidate_sampler, range_samplers.UniformSampler(64), 60, True)])
def test_sampler_words_computed_ahead_are_the_call_by_call_ones(sample, sampler, n, unique):
    # 130 runs: the words computed ahead are refilled with 8, 16, 32 and 64 calls; each
    # run's values are those of a reader of its own reservation (512 blocks a class)
    true_classes = np.array([[3], [40], [63]], np.int64)
    key, counter = philox.key_counter_of_seeds(1, 7)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        out = sample(tf.constant(true_classes), 1, n, unique, sampler.range, seed=7)
        with tf.Session() as sess:
            for _ in range(130):
                got = sess.run(out)
                want = range_samplers.sample_batch(
                    sampler, range_samplers.WordReader(key, counter), n, unique,
                    true_classes.ravel())
                assert got.sampled_candidates.tolist() == want[0].tolist()
                np.testing.assert_array_equal(got.true_expected_count.ravel(), want[1])
                np.testing.assert_array_equal(got.sampled_expected_count, want[2])
                counter = philox.skip(counter, range_samplers.BLOCKS_PER_SAMPLE * n)


# --- the pieces against sequential references ------------------------------------------
KEY, COUNTER = philox.key_counter_of_seeds(87654321, 4)


def _sequential_uniform(words: list, n: int, width: int, lead: int, count: int):
    """ExactUniformInt one try at a time, as TF's loop."""
    it = iter(words)
    reject_below = 0 if n & (n - 1) == 0 else ((1 << (32 * width)) - 1) % n + 1
    out = []
    for _ in range(count):
        leads = [next(it) for _ in range(lead)]
        while True:
            parts = [next(it) for _ in range(width)]
            bits = sum(p << (32 * i) for i, p in enumerate(parts))
            if bits >= reject_below:
                break
        out.append((leads, bits % n))
    return out


@pytest.mark.parametrize("n, width, lead", [(3 * 2 ** 30, 1, 0), (3 * 2 ** 30 + 7, 1, 1),
                                            (3 * 2 ** 62, 2, 0), (2 ** 20, 1, 1),
                                            (1000, 2, 0)])
def test_exact_uniform_rejects_as_tf(n, width, lead):
    # n = 3 * 2**30: a quarter of the 32-bit tries is rejected
    count = 300
    leads, values = range_samplers.exact_uniform(
        range_samplers.WordReader(KEY, COUNTER), n, count, width, lead)
    words = philox.words(KEY, COUNTER, 2 * count * (lead + width)).tolist()
    expected = _sequential_uniform(words, n, width, lead, count)
    assert values.tolist() == [v for _, v in expected]
    assert leads.tolist() == [ld for ld, _ in expected]


def test_word_reader_reads_the_stream_in_order_across_refills():
    reader = range_samplers.WordReader(KEY, COUNTER)
    parts = [reader.take(n) for n in (3, 250, 1, 700, 9)]
    expected = philox.words(KEY, COUNTER, 241)[:963]
    np.testing.assert_array_equal(np.concatenate(parts), expected)


def test_alias_table_gives_each_class_its_weight():
    weights = np.array([0, 3, 0.5, 7, 1, 1, 2.25, 0, 9], np.float32)
    sampler = range_samplers.FixedUnigramSampler(weights)
    prob, alias = range_samplers._alias_table(weights)
    n = weights.size
    mass = np.zeros(n)
    np.add.at(mass, np.arange(n), prob / n)
    np.add.at(mass, alias, (1 - prob.astype(np.float64)) / n)
    np.testing.assert_allclose(mass, weights / weights.sum(), atol=1e-7)
    draws = sampler.sample(range_samplers.WordReader(KEY, COUNTER), 20000)
    assert not np.isin(draws, [0, 7]).any()
    freq = np.bincount(draws, minlength=n) / draws.size
    np.testing.assert_allclose(freq, weights / weights.sum(), atol=0.012)


def test_log_uniform_probabilities_looked_up_are_the_computed_ones(monkeypatch):
    # ranges up to _TABLE_MOST look each class up in a table computed once: the same
    # float32 bits as computing them per call (the formula against float64 too)
    rs = np.random.RandomState(4)
    for range_max in (1, 30, 50000):
        classes = rs.randint(0, range_max, (7, 3))
        looked_up = range_samplers.LogUniformSampler(range_max).probability(classes)
        with monkeypatch.context() as m:
            m.setattr(range_samplers, "_TABLE_MOST", 0)
            computed = range_samplers.LogUniformSampler(range_max).probability(classes)
        assert looked_up.dtype == np.float32 and looked_up.shape == classes.shape
        assert looked_up.tobytes() == computed.tobytes()
        np.testing.assert_allclose(
            looked_up, np.log((classes + 2.0) / (classes + 1.0)) / np.log(range_max + 1.0),
            rtol=1e-6)


@pytest.mark.parametrize("sampler", [range_samplers.LogUniformSampler(50000),
                                     range_samplers.LogUniformSampler(30),
                                     range_samplers.UniformSampler(1000)])
def test_log1p_of_minus_p_looked_up_is_the_c_librarys(sampler):
    # the expected counts' log1pf(-p) per class, from a table (log-uniform) or one value
    # (uniform): the C library's float32 bits, through ctypes one value at a time
    classes = np.random.RandomState(5).randint(0, sampler.range, 200)
    got = sampler.log1p_neg(classes)
    p = sampler.probability(classes)
    want = range_samplers._libm_float32("log1pf", -p)
    assert got.dtype == np.float32 and got.shape == classes.shape
    assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, np.log1p(-p.astype(np.float64)), rtol=1e-6)


def test_expected_counts_formulas():
    p = np.array([0.5, 0.01, 1e-6, 0.0], np.float32)
    np.testing.assert_array_equal(range_samplers.expected_counts(p, 8, 8),
                                  p * np.float32(8))
    np.testing.assert_allclose(range_samplers.expected_counts(p, 8, 13),
                               1 - (1 - p.astype(np.float64)) ** 13, rtol=1e-6)


@pytest.mark.parametrize("build, message", [
    (lambda t: tf.nn.uniform_candidate_sampler(t, 2, 3, False, 0),
     "Attr 'range_max' of 'UniformCandidateSampler' Op passed 0 less than minimum 1."),
    (lambda t: tf.nn.log_uniform_candidate_sampler(t, 2, 0, True, 10),
     "Attr 'num_sampled' of 'LogUniformCandidateSampler' Op passed 0 less than minimum 1."),
    (lambda t: tf.nn.uniform_candidate_sampler(t, 0, 3, False, 5),
     "Attr 'num_true' of 'UniformCandidateSampler' Op passed 0 less than minimum 1."),
    (lambda t: tf.random.all_candidate_sampler(t, 2, 0, False),
     "Attr 'num_sampled' of 'AllCandidateSampler' Op passed 0 less than minimum 1."),
    (lambda t: tf.nn.fixed_unigram_candidate_sampler(t, 2, 3, False, 3, unigrams=[1, 2, 3],
                                                     num_shards=0),
     "Attr 'num_shards' of 'FixedUnigramCandidateSampler' Op passed 0 less than minimum 1."),
    (lambda t: tf.nn.fixed_unigram_candidate_sampler(t, 2, 3, False, 3, unigrams=[1, 2, 3],
                                                     shard=-1),
     "Attr 'shard' of 'FixedUnigramCandidateSampler' Op passed -1 less than minimum 0."),
])
def test_attrs_below_tfs_minimum_are_value_errors(build, message):
    # TF's messages, recorded from TF 2.21
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            build(tf.constant([[1, 2]], tf.int64))
