"""tf.nn.ctc_loss and tf.nn.ctc_greedy_decoder (ops/nn/ctc_ops.py).

The loss is checked against a brute-force reference: the probability of the labels is
the sum, over every alignment (one class per time step) that collapses to them, of the
product of the per-step softmax probabilities."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.test import compute_gradient_error


def _sparse(label_lists):
    idx = [[b, i] for b, lab in enumerate(label_lists) for i in range(len(lab))]
    val = [v for lab in label_lists for v in lab]
    width = max(len(lab) for lab in label_lists)
    return tf.SparseTensor(np.array(idx, np.int64).reshape(-1, 2),
                           np.array(val, np.int32), [len(label_lists), width])


def _collapse(path, blank, merge_repeated):
    out, prev = [], None
    for c in path:
        if c != blank and not (merge_repeated and c == prev):
            out.append(c)
        prev = c
    return out


def _brute_force_loss(logits, labels, seq_len, merge_repeated=True):
    """-log p(labels) by enumerating every path; logits [time, batch, classes]."""
    time, batch, classes = logits.shape
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    losses = []
    for b in range(batch):
        t_b = seq_len[b]
        total = 0.0
        for path in itertools.product(range(classes), repeat=t_b):
            if _collapse(path, classes - 1, merge_repeated) == list(labels[b]):
                total += np.prod([probs[t, b, c] for t, c in enumerate(path)])
        losses.append(-np.log(total) if total > 0 else np.inf)
    return np.array(losses)


LOGITS = np.random.RandomState(0).randn(5, 3, 4)  # time 5, batch 3, classes 4 (blank 3)
LABELS = [[0, 1, 1], [2], [1, 0]]
SEQ_LEN = np.array([5, 3, 4], np.int32)


@pytest.mark.parametrize("merge_repeated", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loss_against_every_alignment(sess, merge_repeated, dtype):
    loss = tf.nn.ctc_loss(_sparse(LABELS), LOGITS.astype(dtype), SEQ_LEN,
                          ctc_merge_repeated=merge_repeated)
    assert loss.op.type == "CTCLoss" and loss.shape.as_list() == [3]
    out = sess.run(loss)
    assert out.dtype == dtype
    np.testing.assert_allclose(
        out, _brute_force_loss(LOGITS, LABELS, SEQ_LEN, merge_repeated),
        rtol=1e-5 if dtype == np.float32 else 1e-10)


def test_preprocess_collapse_repeated_and_batch_major(sess):
    collapsed = [[0, 1], [2], [1, 0]]
    loss = tf.nn.ctc_loss(_sparse(LABELS), LOGITS, SEQ_LEN, preprocess_collapse_repeated=True)
    np.testing.assert_allclose(sess.run(loss), _brute_force_loss(LOGITS, collapsed, SEQ_LEN),
                               rtol=1e-10)
    batch_major = tf.nn.ctc_loss(_sparse(LABELS), logits=LOGITS.transpose(1, 0, 2),
                                 sequence_length=SEQ_LEN, time_major=False)
    np.testing.assert_allclose(sess.run(batch_major),
                               _brute_force_loss(LOGITS, LABELS, SEQ_LEN), rtol=1e-10)


def test_impossible_labels_have_infinite_loss(sess):
    # [1, 1] needs a blank between the repeats: 3 steps, only 2 given
    loss = sess.run(tf.nn.ctc_loss(_sparse([[1, 1]]), LOGITS[:2, :1], [2]))
    assert np.isinf(loss[0])
    loss = sess.run(tf.nn.ctc_loss(_sparse([[1, 1]]), LOGITS[:2, :1], [2],
                                   ctc_merge_repeated=False))
    np.testing.assert_allclose(loss, _brute_force_loss(LOGITS[:2, :1], [[1, 1]], [2], False))


def test_ignore_longer_outputs_than_inputs(sess):
    labels = _sparse([[0, 1, 2, 0, 1, 2], [1]])
    x = tf.constant(LOGITS[:, :2])
    loss = tf.nn.ctc_loss(labels, x, [5, 5], ignore_longer_outputs_than_inputs=True)
    out, grad = sess.run([loss, tf.gradients(loss, x)[0]])
    assert out[0] == 0.0
    np.testing.assert_allclose(out[1], _brute_force_loss(LOGITS[:, 1:2], [[1]], [5])[0])
    assert not grad[:, 0].any() and grad[:, 1].any()
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Not enough time for target transition sequence \(required: 6, "
                             r"available: 5\)"):
        sess.run(tf.nn.ctc_loss(labels, x, [5, 5]))


def test_run_time_errors(sess):
    x = tf.constant(LOGITS[:, :1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"sequence_length\(0\) <= 5"):
        sess.run(tf.nn.ctc_loss(_sparse([[1]]), x, [6]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels length is zero in batch 0"):
        empty = tf.SparseTensor(np.array([[1, 0]], np.int64), np.array([2], np.int32), [2, 1])
        sess.run(tf.nn.ctc_loss(empty, LOGITS[:, :2], [5, 5]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="label SparseTensor is not valid"):
        sess.run(tf.nn.ctc_loss(_sparse([[1], [2]]), x, [3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="all null labels"):
        sess.run(tf.nn.ctc_loss(_sparse([[3]]), x, [3]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Saw a non-null label \(index >= num_classes - 1\) following a "
                             r"null label, batch: 0 num_classes: 4 labels: 1,3,2 labels seen "
                             r"so far: 1"):
        sess.run(tf.nn.ctc_loss(_sparse([[1, 3, 2]]), x, [5]))


def test_labels_padded_with_null_labels_end_the_sequence(sess):
    # TF: a label >= num_classes - 1 (the blank, or beyond) is a null label that ends
    # the row's labels: padding a batch's labels with it gives the unpadded losses
    x = tf.constant(LOGITS[:, :2])
    padded = _sparse([[1, 3, 3], [2, 1, 9]])
    plain = _sparse([[1], [2, 1]])
    got, want = sess.run([tf.nn.ctc_loss(padded, x, [5, 5]), tf.nn.ctc_loss(plain, x, [5, 5])])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(want[0], _brute_force_loss(LOGITS[:, 0:1], [[1]], [5])[0],
                               rtol=1e-5)


def test_build_time_errors_and_shapes(graph):
    with pytest.raises(TypeError, match="Expected argument `labels` to be a SparseTensor"):
        tf.nn.ctc_loss(tf.constant([[1]]), LOGITS, SEQ_LEN)
    with pytest.raises(ValueError):
        tf.nn.ctc_loss(_sparse(LABELS), tf.zeros([5, 3]), SEQ_LEN)
    x = tf.placeholder(tf.float32, [None, None, 4])
    assert tf.nn.ctc_loss(_sparse(LABELS), x, SEQ_LEN).shape.as_list() == [3]
    s = tf.placeholder(tf.int32, [None])
    assert tf.nn.ctc_loss(_sparse(LABELS), x, s).shape.as_list() == [None]


@pytest.mark.parametrize("merge_repeated", [True, False])
def test_gradient(graph, merge_repeated):
    x = tf.placeholder(tf.float64, LOGITS.shape)
    loss = tf.nn.ctc_loss(_sparse(LABELS), x, SEQ_LEN, ctc_merge_repeated=merge_repeated)
    with tf.Session():
        err = compute_gradient_error(x, list(LOGITS.shape), loss, [3], x_init_value=LOGITS)
    assert err < 1e-6


def test_no_second_derivative(graph):
    x = tf.constant(LOGITS)
    (g,) = tf.gradients(tf.reduce_sum(tf.nn.ctc_loss(_sparse(LABELS), x, SEQ_LEN)), x)
    with pytest.raises(LookupError, match="second derivative of ctc_loss"):
        tf.gradients(g, x)


def _greedy_reference(logits, seq_len, merge_repeated, blank):
    best = logits.argmax(-1)
    decoded = []
    for b in range(logits.shape[1]):
        path = best[:seq_len[b], b]
        out, prev = [], None
        for c in path:
            if c != blank and not (merge_repeated and c == prev):
                out.append(c)
            prev = c
        decoded.append(out)
    log_prob = np.array([[-logits[:seq_len[b], b].max(-1).sum()]
                         for b in range(logits.shape[1])])
    return decoded, log_prob


@pytest.mark.parametrize("merge_repeated", [True, False])
@pytest.mark.parametrize("blank_index", [None, 0])
def test_greedy_decoder(sess, merge_repeated, blank_index):
    logits = np.random.RandomState(1).randn(8, 3, 3).astype(np.float32)
    logits[2:4, 0] = [5.0, 0.0, 0.0]  # a repeat in batch 0
    seq = np.array([8, 5, 0], np.int32)
    decoded, log_prob = tf.nn.ctc_greedy_decoder(logits, seq, merge_repeated=merge_repeated,
                                                 blank_index=blank_index)
    assert isinstance(decoded, list) and len(decoded) == 1
    assert isinstance(decoded[0], tf.SparseTensor)
    assert log_prob.shape.as_list() == [3, 1] and log_prob.dtype == tf.float32
    value, lp = sess.run([decoded[0], log_prob])
    want, want_lp = _greedy_reference(logits, seq, merge_repeated,
                                      2 if blank_index is None else blank_index)
    got = [[] for _ in range(3)]
    for (b, i), v in zip(value.indices, value.values):
        assert i == len(got[b])
        got[b].append(v)
    assert got == [list(w) for w in want]
    assert value.values.dtype == np.int64
    np.testing.assert_array_equal(value.dense_shape, [3, max(len(w) for w in want)])
    np.testing.assert_allclose(lp, want_lp, rtol=1e-6)


def test_collapse_repeated(sess):
    """TF 2.21's result for the first case (checked by hand), then random cases against
    itertools.groupby."""
    import itertools
    labels = np.array([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0], [5, 6, 6, 5, 7], [2, 2, 2, 2, 2]],
                      np.int32)
    out, lengths = tf.nn.collapse_repeated(labels, np.array([5, 2, 4, 0], np.int64))
    assert out.shape.as_list() == [4, 3] and lengths.dtype == tf.int64  # TF 2.21's
    got, n = sess.run([out, lengths])
    assert got.tolist() == [[1, 2, 3], [4, 0, 0], [5, 6, 5], [0, 0, 0]]
    assert n.tolist() == [3, 1, 3, 0]
    rs = np.random.RandomState(0)
    lab = tf.placeholder(tf.int32, [None, None])
    seq = tf.placeholder(tf.int32, [None])
    collapsed = tf.nn.collapse_repeated(lab, seq)
    for _ in range(5):
        values = rs.randint(0, 3, (3, 7))
        length = rs.randint(0, 8, 3)
        got, n = sess.run(collapsed, {lab: values, seq: length})
        want = [[k for k, _ in itertools.groupby(row[:m])] for row, m in zip(values, length)]
        assert n.tolist() == [len(w) for w in want]
        assert got.shape == (3, max(n.max(), 0))
        for row, w in zip(got, want):
            assert row[:len(w)].tolist() == w and not row[len(w):].any()


def test_ctc_unique_labels(sess):
    """TF's documented example and TF 2.21's result for these rows (checked by hand),
    then random rows against a NumPy reference."""
    labels = np.array([[3, 4, 4, 3], [1, 1, 1, 0], [5, 6, 7, 8]], np.int32)
    unique, index = tf.nn.ctc_unique_labels(labels)
    assert unique.dtype == tf.int64 and index.dtype == tf.int32
    assert index.shape.as_list() == [3, 4]
    u, i = sess.run([unique, index])
    assert u.tolist() == [[3, 4, 0, 0], [1, 0, 0, 0], [5, 6, 7, 8]]
    assert i.tolist() == [[0, 1, 1, 0], [0, 0, 0, 1], [0, 1, 2, 3]]
    rows = np.random.RandomState(0).randint(0, 4, (5, 6))
    u, i = sess.run(tf.nn.ctc_unique_labels(rows))
    for row, got_u, got_i in zip(rows, u, i):
        first = list(dict.fromkeys(row.tolist()))
        assert got_u.tolist() == first + [0] * (len(row) - len(first))
        assert got_i.tolist() == [first.index(v) for v in row]


def test_decoders_check_lengths_as_tf_and_negative_labels_are_named(sess):
    with pytest.raises(tf.errors.FailedPreconditionError, match=r"sequence_length\(0\) <= 2"):
        sess.run(tf.nn.ctc_greedy_decoder(tf.zeros([2, 1, 3]), [3])[1])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="All labels must be nonnegative integers, batch: 0 labels: -1"):
        sess.run(tf.nn.ctc_loss(tf.SparseTensor([[0, 0]], [-1], [1, 1]), tf.zeros([2, 1, 3]),
                                [2]))
