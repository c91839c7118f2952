"""tf.nn.ctc_beam_search_decoder (ops/nn/ctc_beam_search.py).

Two references:

* Brute force. The probability of a labelling is the sum, over every alignment (one
  class per step) that collapses to it, of the product of the per-step softmax
  probabilities. A beam wide enough to hold every prefix never prunes, so its top paths
  are then exactly the most probable labellings.
* TF 2.21's outputs, recorded below for inputs made by `_logits`. A narrow beam prunes,
  and what survives depends on how TF walks and prunes its beam. These cases were chosen
  because they change when the kernel leaves out one of TF's quirks: the order of equal
  scores, an entry dropped earlier in the step losing its own expansion, an entry held
  twice, a parent that passes nothing on once its total is -inf, and the float32
  log-sum-exp correction (it decides between equal scores).
"""
import itertools

import numpy as np
import pytest

import tensorweave as tf


def _logits(seed, shape, kind):
    rs = np.random.RandomState(seed)
    if kind == "normal":
        return rs.randn(*shape)
    if kind == "quantized":  # a few distinct values: many equal scores
        return rs.randint(0, 3, shape).astype(np.float64)
    probs = rs.rand(*shape) * (rs.rand(*shape) > 0.3)  # "log_zero": impossible classes
    probs[..., 0] += probs.sum(-1) == 0
    with np.errstate(divide="ignore"):
        return np.log(probs / probs.sum(-1, keepdims=True))


def _paths(sparse_value, batch):
    """The rows of a decoded SparseTensorValue, checking its layout: batch-major rows,
    positions 0, 1, ... in each row, dense shape [batch, longest row]."""
    rows = [[] for _ in range(batch)]
    for (b, i), v in zip(sparse_value.indices.tolist(), sparse_value.values.tolist()):
        assert i == len(rows[b])
        rows[b].append(v)
    assert sparse_value.indices[:, 0].tolist() == sorted(sparse_value.indices[:, 0].tolist())
    assert sparse_value.values.dtype == np.int64
    assert sparse_value.dense_shape.tolist() == [batch, max(len(r) for r in rows)]
    return rows


def _decode(sess, logits, seq_len, **kwargs):
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(logits, seq_len, **kwargs)
    decoded_values, log_probs = sess.run([decoded, log_probs])
    batch = logits.shape[1]
    by_path = [_paths(v, batch) for v in decoded_values]
    return [[p[b] for p in by_path] for b in range(batch)], log_probs


def _collapse(path, blank):
    return tuple(c for i, c in enumerate(path)
                 if c != blank and (i == 0 or c != path[i - 1]))


def _labelling_log_probs(logits):
    """log p(labelling) of every labelling, by enumerating alignments; [time, classes]."""
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    total = {}
    time, classes = logits.shape
    for path in itertools.product(range(classes), repeat=time):
        key = _collapse(path, classes - 1)
        total[key] = total.get(key, 0.0) + np.prod(probs[np.arange(time), path])
    return {k: np.log(v) for k, v in total.items()}


def _merge_repeats(labels):
    return [c for i, c in enumerate(labels) if i == 0 or c != labels[i - 1]]


@pytest.mark.parametrize("shape", [(4, 2, 3), (5, 2, 3), (3, 2, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_full_beam_finds_the_most_probable_labellings(sess, shape, dtype):
    logits = (2 * _logits(sum(shape), shape, "normal")).astype(dtype)
    seq_len = np.array([shape[0], shape[0] - 1], np.int32)
    top = 4
    got, log_probs = _decode(sess, logits, seq_len, beam_width=100, top_paths=top,
                             merge_repeated=False)
    assert log_probs.dtype == dtype and log_probs.shape == (2, top)
    rtol = 1e-5 if dtype == np.float32 else 1e-7  # the log-sum-exp correction is float32
    for b in range(2):
        exact = _labelling_log_probs(logits[:seq_len[b], b].astype(np.float64))
        best = sorted(exact.items(), key=lambda kv: -kv[1])[:top]
        assert got[b] == [list(k) for k, _ in best]
        np.testing.assert_allclose(log_probs[b], [v for _, v in best], rtol=rtol)

    # merge_repeated changes only what is returned: the same labellings, merged
    merged, merged_log_probs = _decode(sess, logits, seq_len, beam_width=100, top_paths=top)
    assert merged == [[_merge_repeats(p) for p in row] for row in got]
    np.testing.assert_array_equal(merged_log_probs, log_probs)


def test_merge_repeated_merges_labels_the_blank_kept_apart(sess):
    # "1 blank 1" is the most probable labelling [1, 1]; merged it comes out as [1]
    probs = np.array([[0.1, 0.8, 0.1], [0.05, 0.05, 0.9], [0.1, 0.8, 0.1]])
    logits = np.log(probs)[:, None, :]
    exact = _labelling_log_probs(np.log(probs))
    assert max(exact, key=exact.get) == (1, 1)
    for merge, want in [(False, [1, 1]), (True, [1])]:
        got, log_probs = _decode(sess, logits, [3], merge_repeated=merge)
        assert got == [[want]]
        np.testing.assert_allclose(log_probs, [[exact[(1, 1)]]], rtol=1e-6)
    decoded, log_probs = tf.nn.ctc_beam_search_decoder_v2(logits, [3])  # never merges
    assert _paths(sess.run(decoded[0]), 1) == [[1, 1]]


# seed, shape, kind, dtype, sequence_length, beam_width, top_paths, merge_repeated;
# TF 2.21's paths (per batch entry, best first) and log probabilities
TF_CASES = [
    ((142, (10, 2, 5), "quantized", np.float32, [10, 9], 17, 3, False),
     [[[3, 1, 3, 1, 0], [3, 1, 0, 1, 0], [3, 1, 3, 1]],
      [[3, 2, 3, 2, 3], [3, 2, 3, 2, 3, 1], [3, 2, 3, 2, 3, 0]]],
     [[-6.0668235, -6.2846484, -6.376873], [-5.2366405, -5.58677, -5.58677]]),
    ((323, (9, 2, 3), "log_zero", np.float32, [9, 8], 8, 1, True),
     [[[0, 1, 0]], [[1, 0, 1, 0, 1]]],
     [[-1.8463421], [-0.8157319]]),
    ((485, (9, 2, 4), "log_zero", np.float32, [9, 8], 17, 3, True),
     [[[0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1, 2, 1]],
      [[1, 0, 2, 0, 1], [1, 0, 1, 0, 1], [1, 0, 1]]],
     [[-3.587675, -3.587675, -4.037269], [-1.8297075, -1.8411866, -2.1324573]]),
    ((310, (8, 2, 4), "quantized", np.float32, [8, 7], 8, 3, False),
     [[[0, 2, 0, 2], [0, 1, 0, 2], [0, 2, 0, 2, 1]], [[0, 2, 1, 2], [0, 1, 2], [0, 2, 1]]],
     [[-3.648065, -3.648065, -4.089142], [-3.046035, -3.2461882, -3.6480465]]),
    ((51, (11, 2, 5), "normal", np.float32, [11, 10], 8, 3, True),
     [[[2, 3, 1, 3, 0, 3], [2, 3, 2, 0, 3], [2, 3, 1, 3, 0, 1, 3]],
      [[0, 2, 3, 0, 3], [0, 2, 0, 3], [0, 2, 3, 0, 1]]],
     [[-6.775866, -7.237, -7.4082756], [-5.0450644, -5.068517, -5.699334]]),
    ((292, (10, 2, 6), "quantized", np.float32, [10, 9], 20, 3, False),
     [[[1, 0, 1, 2, 0, 3, 1], [2, 0, 1, 2, 0, 3, 1], [1, 0, 1, 2, 0, 3, 0]],
      [[4, 1, 3, 0, 1, 4], [4, 1, 0, 1, 4], [1, 0, 1, 4]]],
     [[-7.6569533, -7.658111, -7.958563], [-6.650629, -6.663802, -6.7971835]]),
    ((163, (8, 2, 5), "quantized", np.float32, [8, 7], 2, 2, True),
     [[[1, 3, 2], [3, 2]], [[1, 2, 1], [1, 2, 1, 0]]],
     [[-5.9104233, -5.9104233], [-4.103129, -5.230057]]),
    ((7, (6, 3, 5), "normal", np.float64, [6, 2, 0], 3, 1, True),
     [[[0, 1, 2, 3, 2]], [[3]], [[]]],
     [[-3.6808678891114335], [-1.0342019599507375], [0.0]]),
    ((8, (7, 2, 4), "normal", np.float64, [7, 5], 5, 2, False),
     [[[1, 0, 2, 1], [1, 0, 1]], [[1, 0, 2], [1, 0, 2, 0]]],
     [[-2.4508984588488385, -3.372125810582335], [-2.627534227099536, -2.628720625672501]]),
    ((9, (8, 2, 6), "normal", np.float32, [8, 8], 1, 1, False),
     [[[0, 2, 0, 1, 3, 1]], [[1, 4, 3, 2]]],
     [[-8.98876], [-5.3324614]]),
    ((10, (5, 3, 4), "normal", np.float32, [5, 0, -1], 4, 1, True),
     [[[0, 1, 2]], [[]], [[]]],
     [[-2.7306633], [0.0], [0.0]]),
    ((125, (6, 2, 3), "log_zero", np.float32, [6, 5], 2, 1, True),
     [[[0]], [[1]]],
     [[-1.9002614], [-1.7177169]]),
    ((203, (8, 2, 5), "log_zero", np.float32, [8, 7], 5, 3, True),
     [[[2, 0, 1], [2, 1], [2, 0, 1, 3]], [[2, 3, 1, 2, 3], [2, 3, 1, 2, 1], [2, 3, 1, 2, 0]]],
     [[-3.8866835, -3.8894439, -3.9435008], [-4.494265, -4.633233, -4.6471634]]),
    ((157, (5, 2, 6), "quantized", np.float32, [5, 4], 17, 3, True),
     [[[1, 3, 1], [3, 1], [2, 3, 1]], [[4, 2, 3], [4, 3], [4, 0, 3]]],
     [[-3.692068, -4.2553673, -4.264761], [-2.7567842, -2.8217382, -3.5931034]]),
    ((964, (4, 2, 5), "quantized", np.float64, [4, 3], 2, 2, False),
     [[[1, 0], [1]], [[3], [2, 3]]],
     [[-2.3884307002067233, -3.6367379841744567], [-2.861799377549564, -2.8778029862531773]]),
    ((538, (9, 2, 6), "quantized", np.float32, [9, 8], 17, 2, False),
     [[[1, 3, 4, 1, 4], [1, 3, 1, 4]], [[0, 3, 4, 3], [0, 3, 4, 3, 2]]],
     [[-6.824173, -6.9548016], [-6.9385934, -7.475452]]),
]


@pytest.mark.parametrize("case, want_paths, want_log_probs", TF_CASES,
                         ids=["case%d" % i for i in range(len(TF_CASES))])
def test_matches_tensorflow(sess, case, want_paths, want_log_probs):
    seed, shape, kind, dtype, seq_len, beam_width, top_paths, merge = case
    logits = _logits(seed, shape, kind).astype(dtype)
    got, log_probs = _decode(sess, logits, np.array(seq_len, np.int32),
                             beam_width=beam_width, top_paths=top_paths,
                             merge_repeated=merge)
    assert got == want_paths
    assert log_probs.dtype == dtype
    # TF's exp/log/log1p come from the C library; ours are correctly rounded: the last bit
    # of a float32 may differ
    np.testing.assert_allclose(log_probs, want_log_probs, rtol=1e-6)


def test_sequence_length(sess):
    """Steps past a sequence's length are never read; a length of 0 (or below, which
    TF lets through) decodes to nothing with log probability 0."""
    logits = _logits(3, (6, 4, 4), "normal").astype(np.float32)
    seq_len = np.array([6, 3, 0, -2], np.int32)
    got, log_probs = _decode(sess, logits, seq_len, beam_width=5)
    noise = logits.copy()
    noise[3:, 1] = 50 * _logits(4, (3, 4), "normal")
    again, again_log_probs = _decode(sess, noise, seq_len, beam_width=5)
    assert again == got and got[2] == got[3] == [[]]
    np.testing.assert_array_equal(again_log_probs, log_probs)
    assert log_probs[2:].tolist() == [[0.0], [0.0]]
    alone, alone_log_probs = _decode(sess, logits[:3, 1:2], [3], beam_width=5)
    assert alone == [got[1]]
    np.testing.assert_array_equal(alone_log_probs, log_probs[1:2])


def test_outputs_and_static_shapes(graph):
    x = tf.placeholder(tf.float64, [None, 3, 5])
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(x, tf.placeholder(tf.int32, [None]),
                                                       beam_width=4, top_paths=2)
    assert isinstance(decoded, list) and len(decoded) == 2
    assert all(isinstance(d, tf.SparseTensor) for d in decoded)
    assert decoded[0].indices.op.type == "CTCBeamSearchDecoder"
    assert len(decoded[0].indices.op.outputs) == 7  # 2 x (indices, values, shape) + 1
    assert [d.indices.shape.as_list() for d in decoded] == [[None, 2]] * 2
    assert decoded[1].values.shape.as_list() == [None] and decoded[1].values.dtype == tf.int64
    assert decoded[1].dense_shape.shape.as_list() == [2]
    assert log_probs.shape.as_list() == [3, 2] and log_probs.dtype == tf.float64
    assert tf.gradients(log_probs, x) == [None]  # not differentiable, as in TF


def test_build_time_errors(graph):
    x = np.zeros((4, 2, 3), np.float32)
    with pytest.raises(ValueError, match="Attr 'top_paths' of 'CTCBeamSearchDecoder' Op "
                                         "passed 0 less than minimum 1."):
        tf.nn.ctc_beam_search_decoder(x, [4, 4], top_paths=0)
    with pytest.raises(ValueError, match="Attr 'beam_width' of 'CTCBeamSearchDecoder' Op "
                                         "passed 0 less than minimum 1."):
        tf.nn.ctc_beam_search_decoder(x, [4, 4], beam_width=0)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.nn.ctc_beam_search_decoder(x[0], [4, 4])
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.nn.ctc_beam_search_decoder(x, [[4, 4]])
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.nn.ctc_beam_search_decoder(x, [4, 4, 4])
    with pytest.raises(TypeError, match="float32, float64"):
        tf.nn.ctc_beam_search_decoder(tf.zeros([4, 2, 3], tf.float16), [4, 4])


def test_run_time_errors(sess):
    x = tf.placeholder(tf.float32)
    s = tf.placeholder(tf.int32)
    logits = _logits(0, (4, 2, 3), "normal").astype(np.float32)
    _, log_probs = tf.nn.ctc_beam_search_decoder(x, s, beam_width=3, top_paths=2)
    cases = [
        # TF checks top_paths <= beam_width only when it reads the paths
        ({x: logits, s: [4, 4]}, dict(beam_width=2, top_paths=3),
         tf.errors.InvalidArgumentError, "requested more paths than the beam width."),
        ({x: logits, s: [4, 0]}, {}, tf.errors.InvalidArgumentError,
         "Less leaves in the beam search than requested."),  # an empty sequence has one
        ({x: logits[:, :, :1], s: [4, 4]}, {}, tf.errors.InvalidArgumentError,
         "Less leaves in the beam search than requested."),  # only the blank
        ({x: logits, s: [5, 4]}, {}, tf.errors.FailedPreconditionError,
         r"sequence_length\(0\) <= 4"),
        ({x: logits, s: [4, 4, 4]}, {}, tf.errors.FailedPreconditionError,
         r"len\(sequence_length\) != batch_size.  len\(sequence_length\):  3 batch_size: 2"),
        ({x: logits[0], s: [4, 4]}, {}, tf.errors.InvalidArgumentError,
         "inputs is not a 3-Tensor"),
        ({x: logits[:0], s: [4, 4]}, {}, tf.errors.InvalidArgumentError,
         "inputs must not be empty"),
        ({x: logits, s: [[4, 4]]}, {}, tf.errors.InvalidArgumentError,
         "sequence_length is not a vector"),
    ]
    for feed, attrs, error, message in cases:
        fetch = log_probs if not attrs else tf.nn.ctc_beam_search_decoder(x, s, **attrs)[1]
        with pytest.raises(error, match=message):
            sess.run(fetch, feed)
