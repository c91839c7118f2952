"""Fixes from a probe comparing nn programs with TensorFlow 1.x: integer dilation with
SAME padding (ops/nn/morphology_ops.py), the candidate samplers' checks and
compute_accidental_hits (ops/random/candidate_sampling_ops.py), the order of CTC label
indices and tf.nn.ctc_loss_v2 (ops/nn/ctc_ops.py).

The references are NumPy formulas, brute-force enumerations, or values TF 2.21 produced
(pasted as literals, each marked so)."""
import itertools
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


# --- dilation2d / erosion2d ---------------------------------------------------------------
def _dilation_reference(x, k, stride, rate):
    """SAME dilation of a [1, h, w, 1] input by a [kh, kw, 1] kernel: the maximum over the
    taps inside the input only, added in the input's type (wrapping as TF's kernel); the
    dtype's lowest value for a window with no tap inside."""
    _, h, w, _ = x.shape
    kh, kw, _ = k.shape
    out_h, out_w = -(-h // stride), -(-w // stride)
    pad_h = max((out_h - 1) * stride + (kh - 1) * rate + 1 - h, 0) // 2
    pad_w = max((out_w - 1) * stride + (kw - 1) * rate + 1 - w, 0) // 2
    info = np.iinfo if x.dtype.kind in "iu" else np.finfo
    out = np.full((1, out_h, out_w, 1), info(x.dtype).min, x.dtype)
    for oy, ox, i, j in itertools.product(range(out_h), range(out_w), range(kh), range(kw)):
        y, xx = oy * stride + i * rate - pad_h, ox * stride + j * rate - pad_w
        if 0 <= y < h and 0 <= xx < w:
            with np.errstate(over="ignore"):
                cand = np.array([x[0, y, xx, 0]]) + np.array([k[i, j, 0]])  # wraps like TF
            out[0, oy, ox, 0] = max(out[0, oy, ox, 0], cand[0])
    return out


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float32])
@pytest.mark.parametrize("stride,rate", [(1, 1), (2, 1), (1, 2)])
def test_dilation_same_padding_skips_taps_outside(sess, dtype, stride, rate):
    rs = np.random.RandomState(7)
    # unsigned: small values, so that a kernel value added to a padding 0 would win
    lo, hi = (0, 10) if dtype == np.uint8 else (-120, 120)
    x = rs.randint(lo, hi, size=(1, 5, 4, 1)).astype(dtype)
    k = rs.randint(0 if dtype == np.uint8 else -20, 20, size=(2, 3, 1)).astype(dtype)
    out = sess.run(tf.nn.dilation2d(x, k, [1, stride, stride, 1], [1, rate, rate, 1],
                                    "SAME"))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, _dilation_reference(x, k, stride, rate))


def test_integer_dilation_and_erosion_match_tensorflow(sess):
    x = np.arange(9, dtype=np.int32).reshape(1, 3, 3, 1)
    k = np.array([[[1], [-1]], [[0], [2]]], np.int32)
    x8 = np.array([[120, -128, 3], [4, -100, 127], [7, 8, -9]], np.int8).reshape(1, 3, 3, 1)
    k8 = np.array([[[10], [-5]], [[0], [1]]], np.int8)
    ones = [1, 1, 1, 1]
    got = sess.run([tf.nn.dilation2d(x, k, ones, ones, "SAME"),
                    tf.nn.erosion2d(x, k, ones, ones, "SAME"),
                    tf.nn.dilation2d(x.astype(np.uint8), np.array([[[1], [0]], [[0], [2]]],
                                                                   np.uint8),
                                     ones, ones, "SAME"),
                    tf.nn.dilation2d(x8, k8, ones, ones, "SAME"),
                    tf.nn.dilation2d(np.array([[[[5], [6]]]], np.int32),
                                     np.array([[[1], [2], [3]]], np.int32), ones,
                                     [1, 1, 3, 1], "SAME"),
                    tf.nn.dilation2d(np.array([[[[5]]]], np.int32),
                                     np.array([[[1], [2]]], np.int32), ones, [1, 1, 5, 1],
                                     "SAME")])
    # values TF 2.21 gives (in-bounds sums wrap in the input's type: 120 + 10 in int8)
    expected = [[[6, 7, 5], [9, 10, 8], [7, 8, 9]],
                [[-2, -1, 0], [1, 2, 3], [4, 5, 6]],
                [[6, 7, 5], [9, 10, 8], [7, 8, 9]],
                [[123, -2, 127], [14, 122, -9], [17, 18, 1]],
                [[7, 8]],
                [[-2147483648]]]  # no tap inside the input: the lowest int32
    for out, want in zip(got, expected):
        np.testing.assert_array_equal(out[0, :, :, 0], want)


def test_float_dilation_gradient_with_same_padding():
    x = np.random.RandomState(3).randn(1, 4, 3, 2)
    k = np.random.RandomState(4).randn(2, 3, 2) * 0.1
    xt, kt = tf.constant(x), tf.constant(k)
    y = tf.nn.dilation2d(xt, kt, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    with tf.Session():
        err = compute_gradient_error([xt, kt], [x.shape, k.shape], y,
                                     y.shape.as_list(), x_init_value=[x, k])
    assert err < 1e-6


# --- candidate samplers --------------------------------------------------------------------
def _samplers(true_classes):
    return {
        "UniformCandidateSampler": tf.nn.uniform_candidate_sampler(
            true_classes, 2, 3, False, 10),
        "LogUniformCandidateSampler": tf.nn.log_uniform_candidate_sampler(
            true_classes, 2, 3, False, 10),
        "LearnedUnigramCandidateSampler": tf.nn.learned_unigram_candidate_sampler(
            true_classes, 2, 3, False, 10),
        "FixedUnigramCandidateSampler": tf.nn.fixed_unigram_candidate_sampler(
            true_classes, 2, 3, False, 10, unigrams=[1.0] * 10),
        "AllCandidateSampler": tf.nn.all_candidate_sampler(true_classes, 2, 10, False),
    }


@pytest.mark.parametrize("values,bad", [([[12, -1], [1, 3]], 12), ([[1, 2], [-3, 40]], -3),
                                        ([[0, 10]], 10)])
def test_samplers_reject_true_classes_out_of_range(sess, values, bad):
    ph = tf.placeholder(tf.int64, [None, 2])
    for op_type, result in _samplers(ph).items():
        assert result.sampled_candidates.op.type == op_type
        # TF 2.21's message; the first bad class in row-major order is named
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            sess.run(result.true_expected_count, {ph: values})
        assert e.value.message.split("\n")[0] == \
            "`true_candidate` out of range [0, 10), received %d" % bad
        assert sess.run(result.true_expected_count, {ph: [[0, 9]]}).shape == (1, 2)


def test_sampler_range_too_small_is_checked_first(sess):
    s = tf.nn.uniform_candidate_sampler(tf.constant([[12, 1]], tf.int64), 2, 30, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sampler's range is too small"):
        sess.run(s.sampled_candidates)


def test_samplers_and_accidental_hits_refuse_int32_tensors(graph):
    int32 = tf.constant([[1, 2]])
    for op_type, build in [
            ("UniformCandidateSampler",
             lambda: tf.nn.uniform_candidate_sampler(int32, 2, 5, True, 10)),
            ("LogUniformCandidateSampler",
             lambda: tf.nn.log_uniform_candidate_sampler(int32, 2, 5, True, 10)),
            ("LearnedUnigramCandidateSampler",
             lambda: tf.nn.learned_unigram_candidate_sampler(int32, 2, 5, True, 10)),
            ("FixedUnigramCandidateSampler",
             lambda: tf.nn.fixed_unigram_candidate_sampler(int32, 2, 5, True, 10,
                                                           unigrams=[1.0] * 10)),
            ("AllCandidateSampler", lambda: tf.nn.all_candidate_sampler(int32, 2, 5, True)),
            ("ComputeAccidentalHits",
             lambda: tf.nn.compute_accidental_hits(int32, tf.constant([1], tf.int64), 2))]:
        with pytest.raises(TypeError, match="^Input 'true_classes' of '%s' Op has type int32 "
                                            "that does not match expected type of int64"
                                            % op_type):
            build()
    with pytest.raises(TypeError, match="Input 'sampled_candidates' of "
                                        "'ComputeAccidentalHits' Op has type int32"):
        tf.nn.compute_accidental_hits(tf.constant([[1, 2]], tf.int64), tf.constant([1]), 2)
    # Python values are still converted to int64
    s = tf.nn.uniform_candidate_sampler([[1, 2]], 2, 2, True, 5)
    assert s.true_expected_count.shape.as_list() == [1, 2]
    assert tf.nn.compute_accidental_hits([[1, 2]], [1, 2], 2).ids.dtype == tf.int64


def test_sampler_expected_count_shape_has_num_true_columns(graph):
    s = tf.nn.uniform_candidate_sampler(tf.placeholder(tf.int64, [3, None]), 2, 4, True, 10)
    assert s.true_expected_count.shape.as_list() == [3, 2]
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.nn.uniform_candidate_sampler(tf.constant([1, 2], tf.int64), 1, 2, True, 5)


# --- compute_accidental_hits -----------------------------------------------------------------
def test_accidental_hits_names_and_static_checks(sess):
    tc = tf.constant([[1, 2]], tf.int64)
    sampled = tf.constant([1, 3], tf.int64)
    default = tf.nn.compute_accidental_hits(tc, sampled, num_true=2)
    named = tf.nn.compute_accidental_hits(tc, sampled, num_true=2, name="hits")
    # the names TF 2.21 gives
    assert [t.name for t in default] == ["ComputeAccidentalHits:%d" % i for i in range(3)]
    assert [t.name for t in named] == ["hits:0", "hits:1", "hits:2"]
    assert all(t.shape.as_list() == [None] for t in named)
    indices, ids, weights = sess.run(named)
    np.testing.assert_array_equal(indices, [0])
    np.testing.assert_array_equal(ids, [0])
    np.testing.assert_array_equal(weights, [-np.finfo(np.float32).max])
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.nn.compute_accidental_hits(tf.constant([1, 2], tf.int64), sampled, num_true=2)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.nn.compute_accidental_hits(tc, tf.constant([[1, 3]], tf.int64), num_true=2)
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.nn.compute_accidental_hits(tf.constant([[1, 2, 3]], tf.int64), sampled, 2)


# --- ctc_loss: label SparseTensor order ------------------------------------------------------
@pytest.mark.parametrize("indices,message", [
    ([[0, 1], [0, 0]], r"label SparseTensor is not valid: indices\[1\] = \[0,0\] is out of "
                       r"order\. Many sparse ops require sorted indices"),
    ([[0, 0], [0, 2], [0, 1]], r"label SparseTensor is not valid: indices\[2\] = \[0,1\] is "
                               r"out of order"),
    ([[0, 0], [0, 0]], r"label SparseTensor is not valid: indices\[1\] = \[0,0\] is "
                       r"repeated$"),
    ([[1, 0]], r"label SparseTensor is not valid: indices\[0\] = \[1,0\] is out of bounds: "
               r"need 0 <= index < \[1,1\]$")])
def test_ctc_loss_rejects_unordered_label_indices(sess, indices, message):
    x = np.random.RandomState(0).randn(3, 1, 5).astype(np.float32)
    labels = tf.SparseTensor(np.array(indices, np.int64), [1, 2, 3][:len(indices)], [1, 3])
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        sess.run(tf.nn.ctc_loss(labels, x, [3]))
    assert re.match(message, e.value.message.split("\n")[0])  # TF 2.21's wording


def test_ctc_loss_accepts_ordered_indices_with_gaps(sess):
    x = np.random.RandomState(0).randn(3, 1, 5).astype(np.float32)
    labels = tf.SparseTensor(np.array([[0, 0], [0, 2]], np.int64), [1, 2], [1, 3])
    # the value TF 2.21 gives (the labels [1, 2], the column positions do not matter)
    np.testing.assert_allclose(sess.run(tf.nn.ctc_loss(labels, x, [3])), [3.4287882],
                               rtol=1e-6)


# --- ctc_loss_v2 -----------------------------------------------------------------------------
LOGITS = np.random.RandomState(0).randn(4, 3, 4).astype(np.float32)  # time, batch, classes


def _brute_force_ctc(logits, labels, lengths, seq_len, blank):
    """-log p(labels) summing every alignment that collapses to them (merging repeats
    then dropping blanks); logits [time, batch, classes]."""
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = []
    for b in range(logits.shape[1]):
        want, total = list(labels[b][:lengths[b]]), 0.0
        for path in itertools.product(range(logits.shape[2]), repeat=seq_len[b]):
            merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
            if [c for c in merged if c != blank] == want:
                total += np.prod([probs[t, b, c] for t, c in enumerate(path)])
        out.append(-np.log(total))
    return np.array(out)


@pytest.mark.parametrize("blank_index,blank", [(None, 0), (0, 0), (-1, 3), (3, 3)])
def test_ctc_loss_v2_dense_against_every_alignment(sess, blank_index, blank):
    labels, lengths, seq_len = [[1, 2], [2, 2], [1, 0]], [2, 2, 1], [4, 4, 3]
    loss = tf.nn.ctc_loss_v2(labels, LOGITS, lengths, seq_len, blank_index=blank_index)
    assert loss.shape.as_list() == [3]
    np.testing.assert_allclose(sess.run(loss),
                               _brute_force_ctc(LOGITS, labels, lengths, seq_len, blank),
                               rtol=2e-6)
    batch_major = tf.nn.ctc_loss_v2(labels, LOGITS.transpose(1, 0, 2), lengths, seq_len,
                                    logits_time_major=False, blank_index=blank_index)
    np.testing.assert_allclose(sess.run(batch_major), sess.run(loss), rtol=1e-6)


def test_ctc_loss_v2_dense_matches_tensorflow(sess):
    # row 1 cannot be aligned ([3, 3] needs 3 steps, it has 2); row 2 has no labels
    labels, lengths, seq_len = [[1, 2], [3, 3], [2, 0]], [2, 2, 0], [4, 2, 3]
    # the values TF 2.21 gives
    expected = {None: [3.9904213, 707.60254, 8.068787], 2: [6.0788946, 709.35895, 3.864225],
                -1: [5.7134476, 709.35895, 3.6563354]}
    for blank_index, want in expected.items():
        loss = tf.nn.ctc_loss_v2(labels, LOGITS, lengths, seq_len, blank_index=blank_index)
        np.testing.assert_allclose(sess.run(loss), want, rtol=2e-6)
    x = tf.constant(LOGITS)
    (grad,) = tf.gradients(tf.nn.ctc_loss_v2(labels, x, lengths, seq_len), x)
    # the gradient TF 2.21 gives for the two rows it masks differently
    np.testing.assert_allclose(sess.run(grad)[:, 1:], [
        [[-0.2540243, 0.0365576, 0.2512014, -0.0337332],
         [-0.8850453, 0.1921652, 0.1472013, 0.5456788]],
        [[-0.2820079, 0.1153213, 0.1936299, -0.026945],
         [-0.983949, 0.3963819, 0.4894076, 0.0981596]],
        [[0.0, 0.0, 0.0, 0.0], [-0.8302765, 0.0568923, 0.2912099, 0.4821742]],
        [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]], atol=2e-6)


def test_ctc_loss_v2_sparse_moves_the_blank_last(sess):
    x = LOGITS[:, :2]
    for blank_index, values, want in [(3, [1, 2, 0], [5.713447, 0.7191603]),
                                      (-1, [1, 2, 0], [5.713447, 0.7191603]),
                                      (1, [0, 2, 3], [3.8141394, 4.0825567])]:
        labels = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], values, [2, 2])
        loss = tf.nn.ctc_loss_v2(labels, x, None, [4, 2], blank_index=blank_index)
        assert loss.op.type == "CTCLoss"
        np.testing.assert_allclose(sess.run(loss), want, rtol=2e-6)  # TF 2.21's values
    with pytest.raises(ValueError, match="`blank_index` must be provided"):
        tf.nn.ctc_loss_v2(labels, x, None, [4, 2])


@pytest.mark.parametrize("blank_index", [None, 2])
def test_ctc_loss_v2_gradient(blank_index):
    x = tf.constant(LOGITS)
    loss = tf.nn.ctc_loss_v2([[1, 2], [2, 2], [1, 0]], x, [2, 2, 1], [4, 4, 3],
                             blank_index=blank_index)
    with tf.Session():
        err = compute_gradient_error(x, list(LOGITS.shape), loss, [3], x_init_value=LOGITS,
                                     delta=1e-2)
    assert err < 5e-4  # float32 only, as TF's dense path


# --- windows larger than a run-time input ------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda p: tf.nn.conv2d(p, tf.ones([3, 3, 1, 1]), [1, 1, 1, 1], "VALID"),
    lambda p: tf.nn.conv2d(p, tf.ones([3, 3, 1, 1]), [1, 1, 1, 1], [[0, 0]] * 4),
    lambda p: tf.nn.depthwise_conv2d(p, tf.ones([3, 3, 1, 1]), [1, 1, 1, 1], "VALID"),
    lambda p: tf.nn.max_pool(p, [1, 3, 3, 1], [1, 1, 1, 1], "VALID"),
    lambda p: tf.nn.avg_pool(p, [1, 3, 3, 1], [1, 1, 1, 1], "VALID"),
    lambda p: tf.nn.max_pool_with_argmax(p, [1, 3, 3, 1], [1, 1, 1, 1], "VALID")[0],
    lambda p: tf.nn.dilation2d(p, tf.ones([3, 3, 1]), [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
    lambda p: tf.squeeze(tf.nn.conv3d(tf.expand_dims(p, 1), tf.ones([1, 3, 3, 1, 1]),
                                      [1] * 5, "VALID"), 1),
])
def test_a_window_larger_than_the_input_is_tfs_error_or_empty(build):
    """TF's GetWindowedOutputSize (and TF 2.21 with oneDNN off): (size - window + stride)
    / stride in C++ division; negative is an error, 0 an empty output (was empty for
    any window larger than the input)."""
    p = tf.placeholder(tf.float32, [1, None, None, 1])
    y = build(p)
    with tf.Session() as sess:
        assert sess.run(y, {p: np.ones((1, 2, 2, 1))}).shape == (1, 0, 0, 1)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=re.escape("Computed output size would be negative: -1 "
                                           "[input_size: 1, effective_filter_size: 3, "
                                           "stride: 1]")):
            sess.run(y, {p: np.ones((1, 1, 2, 1))})
