"""tf.metrics top-k metrics against per-row Python set references, streamed over three
updates: dense and SparseTensor labels, class_id, weights, names and errors."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(11)
BATCHES = 3
ROWS, CLASSES, NUM_LABELS = 6, 5, 2
SCORES = [RNG.permutation(ROWS * CLASSES).reshape(ROWS, CLASSES).astype(np.float32)
          for _ in range(BATCHES)]                       # distinct scores: no top-k ties
LABELS = [RNG.randint(0, CLASSES, (ROWS, NUM_LABELS)) for _ in range(BATCHES)]
LABELS[0][0, 1] = -1                       # never predicted: a false negative
LABELS[1][2, 1] = LABELS[1][2, 0]          # a duplicate counts once
LABELS[2][1, 0] = 9                        # out of range
WEIGHTS = [RNG.rand(ROWS).astype(np.float32) for _ in range(BATCHES)]


def top_k(scores, k):
    return np.argsort(-scores, axis=1)[:, :k]


def np_counts(labels_rows, top, class_id=None):
    """Per row (tp, fp, fn) with set semantics."""
    out = []
    for lab, pred in zip(labels_rows, top):
        lab, pred = set(lab), set(pred)
        if class_id is not None:
            lab &= {class_id}
            pred &= {class_id}
        out.append((len(pred & lab), len(pred - lab), len(lab - pred)))
    return np.array(out, np.float64)


def np_ratio(k, kind, class_id=None, weighted=False, label_rows=None):
    """The streamed precision ('fp') or recall ('fn') after each batch."""
    tp = other = 0.0
    result = []
    for b in range(BATCHES):
        rows = label_rows[b] if label_rows is not None else LABELS[b]
        c = np_counts(rows, top_k(SCORES[b], k), class_id)
        w = WEIGHTS[b] if weighted else np.ones(ROWS)
        tp += (c[:, 0] * w).sum()
        other += (c[:, 1 if kind == "fp" else 2] * w).sum()
        result.append(tp / (tp + other) if tp + other else np.nan)
    return result


@pytest.fixture
def ph():
    return (tf.placeholder(tf.int64, [ROWS, NUM_LABELS]),
            tf.placeholder(tf.float32, [ROWS, CLASSES]), tf.placeholder(tf.float32, [ROWS]))


def run_stream(sess, metrics, ph, extra=None):
    lab, scores, w = ph
    sess.run(tf.local_variables_initializer())
    updates = []
    for b in range(BATCHES):
        feed = {lab: LABELS[b], scores: SCORES[b], w: WEIGHTS[b]}
        feed.update(extra(b) if extra else {})
        updates.append(sess.run({k: m[1] for k, m in metrics.items()}, feed))
    return updates, sess.run({k: m[0] for k, m in metrics.items()})


def test_precision_and_recall_at_k(graph, sess, ph):
    lab, scores, w = ph
    metrics = {
        "p2": tf.metrics.precision_at_k(lab, scores, 2),
        "p3w": tf.metrics.precision_at_k(lab, scores, 3, weights=w),
        "p2c1": tf.metrics.precision_at_k(lab, scores, 2, class_id=1),
        "sp2": tf.metrics.sparse_precision_at_k(lab, scores, 2),
        "r2": tf.metrics.recall_at_k(lab, scores, 2),
        "r1w": tf.metrics.recall_at_k(lab, scores, 1, weights=w),
        "r3c2": tf.metrics.recall_at_k(lab, scores, 3, class_id=2, weights=w),
        "ptk": tf.metrics.precision_at_top_k(lab, tf.nn.top_k(scores, 2)[1], k=2),
        "rtk": tf.metrics.recall_at_top_k(lab, tf.nn.top_k(scores, 4)[1]),
    }
    expected = {
        "p2": np_ratio(2, "fp"), "p3w": np_ratio(3, "fp", weighted=True),
        "p2c1": np_ratio(2, "fp", class_id=1), "sp2": np_ratio(2, "fp"),
        "r2": np_ratio(2, "fn"), "r1w": np_ratio(1, "fn", weighted=True),
        "r3c2": np_ratio(3, "fn", class_id=2, weighted=True),
        "ptk": np_ratio(2, "fp"), "rtk": np_ratio(4, "fn"),
    }
    updates, values = run_stream(sess, metrics, ph)
    for key, exp in expected.items():
        got = [u[key] for u in updates]
        assert all(np.asarray(g).dtype == np.float64 for g in got)
        np.testing.assert_allclose(got, exp, rtol=1e-6, err_msg=key)
        np.testing.assert_allclose(values[key], exp[-1], rtol=1e-6, err_msg=key)
    assert (metrics["p2"][0].name, metrics["p2"][1].name) == (
        "precision_at_2:0", "precision_at_2/update:0")
    assert metrics["r3c2"][0].name == "recall_at_3_class2:0"
    assert metrics["ptk"][0].name == "precision_at_2_2:0"
    # without k, TF's scopes and accumulators say "at_k"
    assert metrics["rtk"][0].name == "recall_at_k:0"
    assert "recall_at_k/true_positive_at_k:0" in [v.name for v in tf.local_variables()]
    names = [v.name for v in tf.local_variables()]
    assert names[:2] == ["precision_at_2/true_positive_at_2:0",
                         "precision_at_2/false_positive_at_2:0"]
    assert "recall_at_3_class2/false_negative_at_3_class2:0" in names
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()


def test_one_label_per_row_is_expanded(graph, sess, ph):
    _, scores, _ = ph
    lab1 = tf.placeholder(tf.int64, [ROWS])
    metric = tf.metrics.recall_at_k(lab1, scores, 2)
    rows = [[[x] for x in LABELS[b][:, 0]] for b in range(BATCHES)]
    updates, value = run_stream(sess, {"r": metric}, ph,
                                extra=lambda b: {lab1: LABELS[b][:, 0]})
    np.testing.assert_allclose([u["r"] for u in updates],
                               np_ratio(2, "fn", label_rows=rows), rtol=1e-6)


def sparse_rows(dense):
    """Keeps the non-negative, in-range entries of each row as a SparseTensorValue."""
    idx, vals = [], []
    for r, row in enumerate(dense):
        col = 0
        for v in row:
            if 0 <= v < CLASSES:
                idx.append([r, col]); vals.append(v); col += 1
    return tf.SparseTensorValue(np.array(idx, np.int64), np.array(vals, np.int64),
                                np.array(dense.shape, np.int64))


def test_sparse_labels(graph, sess, ph):
    _, scores, w = ph
    sp = tf.sparse_placeholder(tf.int64)
    metrics = {"p": tf.metrics.precision_at_k(sp, scores, 2, weights=w),
               "r": tf.metrics.recall_at_k(sp, scores, 2),
               "ap": tf.metrics.average_precision_at_k(sp, scores, 3)}
    rows = [[[v for v in row if 0 <= v < CLASSES] for row in LABELS[b]]
            for b in range(BATCHES)]
    updates, values = run_stream(sess, metrics, ph,
                                 extra=lambda b: {sp: sparse_rows(LABELS[b])})
    np.testing.assert_allclose([u["p"] for u in updates],
                               np_ratio(2, "fp", weighted=True, label_rows=rows), rtol=1e-6)
    np.testing.assert_allclose([u["r"] for u in updates],
                               np_ratio(2, "fn", label_rows=rows), rtol=1e-6)
    np.testing.assert_allclose([u["ap"] for u in updates],
                               np_map(3, rows, sparse=True), rtol=1e-6)


def np_average_precision(labels, top, k, sparse):
    """One row's average precision at k (TF1's definition)."""
    relevant = [1.0 if p in set(labels) else 0.0 for p in top]
    precision_sum = sum(r * sum(relevant[:i + 1]) / (i + 1) for i, r in enumerate(relevant))
    n = len(set(labels)) if sparse else sum(1 for x in labels if x >= 0)
    return precision_sum / min(n, k)


def np_map(k, label_rows, sparse=False, weighted=False):
    total = count = 0.0
    result = []
    for b in range(BATCHES):
        top = top_k(SCORES[b], k)
        aps = np.array([np_average_precision([x if x < CLASSES else -1 for x in row],
                                             t, k, sparse)
                        for row, t in zip(label_rows[b], top)])
        w = WEIGHTS[b] if weighted else np.ones(ROWS)
        total += (aps * w).sum()
        count += w.sum()
        result.append(total / count)
    return result


def test_average_precision_at_k(graph, sess, ph):
    lab, scores, w = ph
    metrics = {"ap3": tf.metrics.average_precision_at_k(lab, scores, 3),
               "ap1": tf.metrics.average_precision_at_k(lab, scores, 1),
               "ap2w": tf.metrics.sparse_average_precision_at_k(lab, scores, 2, weights=w)}
    rows = [list(map(list, LABELS[b])) for b in range(BATCHES)]
    updates, values = run_stream(sess, metrics, ph)
    for key, exp in {"ap3": np_map(3, rows), "ap1": np_map(1, rows),
                     "ap2w": np_map(2, rows, weighted=True)}.items():
        np.testing.assert_allclose([u[key] for u in updates], exp, rtol=1e-6, err_msg=key)
        np.testing.assert_allclose(values[key], exp[-1], rtol=1e-6, err_msg=key)
    assert (metrics["ap3"][0].name, metrics["ap3"][1].name) == (
        "average_precision_at_3/mean:0", "average_precision_at_3:0")
    # TF's accumulator is "max_1": its scope also holds a `Max` op (names ignore case)
    assert [v.name for v in tf.local_variables()[:2]] == [
        "average_precision_at_3/max_1:0", "average_precision_at_3/total:0"]
    sess.run(tf.local_variables_initializer())
    assert sess.run(metrics["ap3"][0]) == 0.0


def test_collections_and_errors(graph, sess, ph):
    lab, scores, w = ph
    value, update = tf.metrics.precision_at_k(lab, scores, 2, metrics_collections=["m"],
                                              updates_collections=["u"])
    assert tf.get_collection("m") == [value] and tf.get_collection("u") == [update]
    with pytest.raises(ValueError, match="`k` should be >= 1"):
        tf.metrics.average_precision_at_k(lab, scores, 0)
    with pytest.raises(ValueError, match="Unexpected labels shape"):
        tf.metrics.recall_at_k(tf.zeros([ROWS, 1, 1], tf.int64), scores, 2)
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.metrics.precision_at_k(lab, scores, 2, weights=np.ones((ROWS, 2)))
    with pytest.raises(TypeError, match="class_id"):
        tf.metrics.recall_at_k(lab, scores, 2, class_id=1.5)


@pytest.mark.parametrize("make_labels", [
    lambda: tf.constant([[0], [1]], tf.int32),
    lambda: [[0], [1]],                                  # a Python list is int32
    lambda: tf.constant([[0.0], [1.0]]),
    lambda: tf.SparseTensorValue([[0, 0], [1, 0]], np.array([0, 1], np.int32), [2, 1]),
])
@pytest.mark.parametrize("metric", [
    lambda labels, scores: tf.metrics.precision_at_k(labels, scores, 1),
    lambda labels, scores: tf.metrics.recall_at_k(labels, scores, 1, class_id=1),
    lambda labels, scores: tf.metrics.precision_at_top_k(labels, tf.nn.top_k(scores, 1)[1]),
    lambda labels, scores: tf.metrics.average_precision_at_k(labels, scores, 1),
])
def test_labels_must_be_int64(graph, make_labels, metric):
    """TF compares labels with the int64 top-k ids without a cast: a TypeError at build."""
    with pytest.raises(TypeError, match="int64"):
        metric(make_labels(), tf.constant([[0.9, 0.1], [0.2, 0.8]]))


def test_numpy_integer_class_id(graph, sess, ph):
    lab, scores, _ = ph
    metrics = {"np": tf.metrics.recall_at_k(lab, scores, 3, class_id=np.int64(2)),
               "py": tf.metrics.recall_at_k(lab, scores, 3, class_id=2)}
    updates, _ = run_stream(sess, metrics, ph)
    expected = np_ratio(3, "fn", class_id=2)
    for key in metrics:
        np.testing.assert_allclose([u[key] for u in updates], expected, rtol=1e-6)
    assert metrics["np"][0].name == "recall_at_3_class2:0"
