"""Candidate samplers: documented distributions (chi-square bounds), expected-count
formulas, unique sampling, seeds, shapes, errors; compute_accidental_hits."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.random.candidate_sampling_ops import CandidateSamplerResult

TRUE = np.array([[0, 1], [2, 3]], np.int64)


def _log_uniform_p(k, range_max):
    return (np.log(k + 2.0) - np.log(k + 1.0)) / np.log(range_max + 1.0)


def _chi_square(counts, probs):
    n = counts.sum()
    expected = n * probs
    keep = expected > 0
    assert np.all(counts[~keep] == 0)
    return float((((counts - expected) ** 2)[keep] / expected[keep]).sum()), int(keep.sum())


def _assert_frequencies(samples, probs):
    """Chi-square statistic below df + 6 sqrt(2 df) (far in the tail of chi2(df))."""
    counts = np.bincount(samples.ravel(), minlength=probs.size).astype(np.float64)
    stat, cells = _chi_square(counts, probs)
    df = cells - 1
    assert stat < df + 6 * np.sqrt(2 * df), (stat, df)


def _draw(sess, op, runs):
    return np.concatenate([sess.run(op.sampled_candidates) for _ in range(runs)])


def _expected(p, n, tries):
    return p * n if tries == n else -np.expm1(tries * np.log1p(-p))


# --- distributions ---------------------------------------------------------------------
def test_log_uniform_frequencies_match_the_documented_probabilities(sess):
    r = tf.random.log_uniform_candidate_sampler(TRUE, 2, 500, False, 20, seed=1)
    samples = _draw(sess, r, 40)
    _assert_frequencies(samples, _log_uniform_p(np.arange(20), 20))


def test_uniform_frequencies(sess):
    r = tf.nn.uniform_candidate_sampler(TRUE, 2, 400, False, 7, seed=2)
    _assert_frequencies(_draw(sess, r, 30), np.full(7, 1 / 7))


def test_fixed_unigram_frequencies_with_distortion_and_reserved_ids(sess):
    unigrams = [1.0, 4.0, 9.0, 16.0, 25.0]
    r = tf.random.fixed_unigram_candidate_sampler(
        TRUE, 2, 400, False, 7, unigrams=unigrams, distortion=0.5, num_reserved_ids=2, seed=3)
    w = np.array([0, 0, 1, 2, 3, 4, 5], np.float64)
    _assert_frequencies(_draw(sess, r, 30), w / w.sum())


def test_fixed_unigram_expected_counts_and_shards(sess):
    # as TF: reserved ids 0, 1 -> shard 1 keeps id 1 (weight 0); the unigrams then take
    # ids 1, 2, ... of which shard 1 keeps the odd ones: unigrams[0], [2], [4]
    r = tf.nn.fixed_unigram_candidate_sampler(
        TRUE, 2, 3, False, 4, unigrams=[1., 2., 3., 4., 5., 6.], num_reserved_ids=2,
        num_shards=2, shard=1, seed=3)
    sampled, true_exp, sampled_exp = sess.run(r)
    p = np.array([0, 1, 3, 5]) / 9.0
    np.testing.assert_allclose(true_exp, 3 * p[TRUE], rtol=1e-6)
    np.testing.assert_allclose(sampled_exp, 3 * p[sampled], rtol=1e-6)
    assert np.all(sampled != 0)


def test_fixed_unigram_from_vocab_file(sess, tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("the,10\ncat,0\ndog,30\n")
    r = tf.random.fixed_unigram_candidate_sampler(TRUE[:, :1], 1, 200, False, 3,
                                                  vocab_file=str(path), seed=4)
    samples = _draw(sess, r, 20)
    _assert_frequencies(samples, np.array([0.25, 0.0, 0.75]))
    _, true_exp, _ = sess.run(r)
    np.testing.assert_allclose(true_exp, [[0.25 * 200], [0.75 * 200]], rtol=1e-6)


def test_fixed_unigram_errors(sess):
    bad = tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, 9, unigrams=[1., 2.])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="range is 9 must be equal to weights size  2"):
        sess.run(bad)
    none = tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 2, False, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="vocab_file or unigrams"):
        sess.run(none)


def test_learned_unigram_learns_from_true_classes(sess):
    r = tf.random.learned_unigram_candidate_sampler(TRUE, 2, 3, False, 10, seed=1)
    _, true_exp, sampled_exp = sess.run(r)
    np.testing.assert_allclose(true_exp, np.full((2, 2), 0.3), rtol=1e-6)  # uniform start
    np.testing.assert_allclose(sampled_exp, np.full(3, 0.3), rtol=1e-6)
    sampled, true_exp, sampled_exp = sess.run(r)
    weights = np.array([2, 2, 2, 2, 1, 1, 1, 1, 1, 1], np.float64)  # +1 per true class seen
    np.testing.assert_allclose(true_exp, 3 * weights[TRUE] / 14, rtol=1e-6)
    np.testing.assert_allclose(sampled_exp, 3 * weights[sampled] / 14, rtol=1e-6)
    with tf.Session(graph=sess.graph) as fresh:  # counts are per session
        np.testing.assert_allclose(fresh.run(r.true_expected_count), np.full((2, 2), 0.3),
                                   rtol=1e-6)


def test_all_candidate_sampler(sess):
    r = tf.random.all_candidate_sampler(TRUE, 2, 5, True)
    assert isinstance(r, CandidateSamplerResult)
    assert r.sampled_candidates.op.type == "AllCandidateSampler"
    sampled, true_exp, sampled_exp = sess.run(r)
    np.testing.assert_array_equal(sampled, np.arange(5))
    np.testing.assert_array_equal(true_exp, np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(sampled_exp, np.ones(5, np.float32))


# --- unique sampling and expected counts -----------------------------------------------
@pytest.mark.parametrize("sampler", ["log_uniform", "uniform"])
def test_unique_expected_counts_follow_the_formula(sess, sampler):
    fn = getattr(tf.random, sampler + "_candidate_sampler")
    r = fn(TRUE, 2, 6, True, 10, seed=11)
    p_of = (lambda k: _log_uniform_p(k, 10)) if sampler == "log_uniform" \
        else (lambda k: np.full(np.shape(k), 0.1))
    for _ in range(5):
        sampled, true_exp, sampled_exp = sess.run(r)
        assert len(set(sampled.tolist())) == 6
        # recover num_tries from one sampled expected count; all must agree with it
        p = p_of(sampled)
        if np.allclose(sampled_exp, 6 * p, rtol=1e-6):
            n_tries = 6  # no draw was rejected
        else:
            n_tries = int(round(float(np.log1p(-float(sampled_exp[0])) / np.log1p(-p[0]))))
        assert n_tries >= 6
        np.testing.assert_allclose(sampled_exp, _expected(p, 6, n_tries), rtol=1e-5)
        np.testing.assert_allclose(true_exp, _expected(p_of(TRUE), 6, n_tries), rtol=1e-5)


def test_non_unique_expected_counts(sess):
    r = tf.random.log_uniform_candidate_sampler(TRUE, 2, 8, False, 30, seed=5)
    sampled, true_exp, sampled_exp = sess.run(r)
    np.testing.assert_allclose(sampled_exp, 8 * _log_uniform_p(sampled, 30), rtol=1e-6)
    np.testing.assert_allclose(true_exp, 8 * _log_uniform_p(TRUE, 30), rtol=1e-6)
    assert sampled.dtype == np.int64 and true_exp.dtype == np.float32


def test_unique_sampling_without_replacement_frequencies(sess):
    """Drawing all but one class without replacement: the class left out is the least
    likely one far more often than the others."""
    r = tf.random.log_uniform_candidate_sampler(TRUE, 2, 4, True, 5, seed=6)
    missing = [(set(range(5)) - set(sess.run(r.sampled_candidates).tolist())).pop()
               for _ in range(300)]
    counts = np.bincount(missing, minlength=5)
    assert counts[4] > counts[0] and counts[0] < 30


def test_unique_range_too_small(sess):
    r = tf.random.uniform_candidate_sampler(TRUE, 2, 6, True, 5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
        sess.run(r)


# --- seeds, shapes, errors -------------------------------------------------------------
def test_seeded_samplers_repeat_across_sessions(graph):
    r = tf.random.log_uniform_candidate_sampler(TRUE, 2, 5, True, 100, seed=9)
    runs = []
    for _ in range(2):
        with tf.Session(graph=graph) as s:
            runs.append([s.run(r.sampled_candidates) for _ in range(3)])
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0][0], runs[0][1])


def test_static_shapes_and_types(graph):
    t = tf.placeholder(tf.int64, [None, 3])
    r = tf.nn.log_uniform_candidate_sampler(t, 3, 4, True, 50)
    assert r.sampled_candidates.shape.as_list() == [4]
    assert r.true_expected_count.shape.as_list() == [None, 3]
    assert r.sampled_expected_count.shape.as_list() == [4]
    assert (r.sampled_candidates.dtype, r.true_expected_count.dtype) == (tf.int64, tf.float32)
    with pytest.raises(ValueError, match="rank"):
        tf.nn.uniform_candidate_sampler(tf.constant([1, 2], tf.int64), 1, 2, True, 5)


def test_true_classes_with_wrong_num_true(sess):
    r = tf.nn.uniform_candidate_sampler(TRUE, 3, 2, True, 5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_true|batch_size, 3"):
        sess.run(r)


# --- compute_accidental_hits -----------------------------------------------------------
def test_compute_accidental_hits(sess):
    hits = tf.nn.compute_accidental_hits(TRUE, tf.constant([3, 1, 7, 0, 3], tf.int64), 2)
    assert [h.dtype for h in hits] == [tf.int32, tf.int64, tf.float32]
    assert all(h.shape.as_list() == [None] for h in hits)
    indices, ids, weights = sess.run(hits)
    # as TF: per row, per true class; a class sampled twice matches its last position
    np.testing.assert_array_equal(indices, [0, 0, 1])
    np.testing.assert_array_equal(ids, [3, 1, 4])
    np.testing.assert_array_equal(weights, np.full(3, -np.finfo(np.float32).max, np.float32))


def test_compute_accidental_hits_none(sess):
    hits = tf.nn.compute_accidental_hits(TRUE, tf.constant([8, 9], tf.int64), 2)
    indices, ids, weights = sess.run(hits)
    assert indices.shape == ids.shape == weights.shape == (0,)
