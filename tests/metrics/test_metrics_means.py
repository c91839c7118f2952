"""tf.metrics means and error metrics: streaming over three update runs against NumPy
over all the batches, weights, collections, local variables, names and errors."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(5)
BATCHES = 3
VALUES = [RNG.rand(4, 3).astype(np.float32) for _ in range(BATCHES)]
LABELS = [RNG.rand(4, 3).astype(np.float32) for _ in range(BATCHES)]
W_COL = [RNG.rand(4, 1).astype(np.float32) for _ in range(BATCHES)]
W_FULL = [(RNG.rand(4, 3) * (RNG.rand(4, 3) > 0.3)).astype(np.float32)
          for _ in range(BATCHES)]


def stream(sess, metric, feeds):
    """Runs the update op once per feed; returns the update results and the value."""
    value, update = metric
    sess.run(tf.local_variables_initializer())
    updates = [sess.run(update, feed) for feed in feeds]
    return updates, sess.run(value)


def wmean(xs, ws):
    """NumPy weighted mean over the first i batches, for each i."""
    out = []
    for i in range(1, len(xs) + 1):
        x = np.concatenate([np.ravel(a) for a in xs[:i]]).astype(np.float64)
        w = np.concatenate([np.ravel(np.broadcast_to(b, a.shape))
                            for a, b in zip(xs[:i], ws[:i])]).astype(np.float64)
        out.append((x * w).sum() / w.sum() if w.sum() else 0.0)
    return out


@pytest.fixture
def ph():
    return (tf.placeholder(tf.float32, [4, 3]), tf.placeholder(tf.float32, [4, 3]),
            tf.placeholder(tf.float32, None))


def test_mean_streams_over_updates(graph, sess, ph):
    x, _, w = ph
    metric = tf.metrics.mean(x)
    updates, value = stream(sess, metric, [{x: v} for v in VALUES])
    expected = wmean(VALUES, [1.0] * BATCHES)
    np.testing.assert_allclose(updates, expected, rtol=1e-6)
    np.testing.assert_allclose(value, expected[-1], rtol=1e-6)
    assert metric[0].dtype == tf.float32 and metric[0].shape.as_list() == []
    assert (metric[0].name, metric[1].name) == ("mean/value:0", "mean/update_op:0")


@pytest.mark.parametrize("weights", [W_COL, W_FULL, [np.float32(2.0)] * BATCHES,
                                     [w[:, 0] for w in W_COL]],
                         ids=["col", "full", "scalar", "squeezed_rank"])
def test_mean_weighted(graph, sess, ph, weights):
    x, _, w = ph
    updates, value = stream(sess, tf.metrics.mean(x, w),
                            [{x: v, w: ww} for v, ww in zip(VALUES, weights)])
    expected = wmean(VALUES, [np.reshape(ww, (4, -1)) if np.ndim(ww) == 1 else ww
                              for ww in weights])
    np.testing.assert_allclose(updates, expected, rtol=1e-5)
    np.testing.assert_allclose(value, expected[-1], rtol=1e-5)


def test_local_variables_and_initialization(graph, sess, ph):
    x = ph[0]
    value, update = tf.metrics.mean(x, name="m")
    variables = tf.local_variables()
    assert [v.name for v in variables] == ["m/total:0", "m/count:0"]
    assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == variables
    assert tf.global_variables() == [] and tf.trainable_variables() == []
    with pytest.raises(tf.errors.FailedPreconditionError):
        sess.run(value)
    sess.run(tf.local_variables_initializer())
    assert sess.run(value) == 0.0
    sess.run(update, {x: VALUES[0]})
    assert sess.run(value) == pytest.approx(VALUES[0].mean(), rel=1e-6)
    sess.run(tf.local_variables_initializer())          # resets the stream
    assert sess.run(value) == 0.0


def test_collections(graph, ph):
    x = ph[0]
    value, update = tf.metrics.mean(x, metrics_collections=["mc"],
                                    updates_collections=["uc", "uc2"])
    rmse = tf.metrics.root_mean_squared_error(x, x, metrics_collections=["mc"],
                                              updates_collections=["uc"])
    assert tf.get_collection("mc") == [value, rmse[0]]
    assert tf.get_collection("uc") == [update, rmse[1]]
    assert tf.get_collection("uc2") == [update]


def test_mean_tensor(graph, sess, ph):
    x, _, w = ph
    updates, value = stream(sess, tf.metrics.mean_tensor(x, w),
                            [{x: v, w: ww} for v, ww in zip(VALUES, W_FULL)])
    num = np.cumsum([v * ww for v, ww in zip(VALUES, W_FULL)], axis=0, dtype=np.float64)
    den = np.cumsum(W_FULL, axis=0, dtype=np.float64)
    expected = np.where(den > 0, num / np.where(den > 0, den, 1), 0)
    np.testing.assert_allclose(updates, expected, rtol=1e-5)
    np.testing.assert_allclose(value, expected[-1], rtol=1e-5)
    with pytest.raises(ValueError, match="fully defined"):
        tf.metrics.mean_tensor(w)


def test_error_metrics(graph, sess, ph):
    p, lab, w = ph
    norm = tf.placeholder(tf.float32, [4, 3])
    metrics = {
        "mae": tf.metrics.mean_absolute_error(lab, p, w),
        "mse": tf.metrics.mean_squared_error(lab, p, w),
        "rmse": tf.metrics.root_mean_squared_error(lab, p, w),
        "mre": tf.metrics.mean_relative_error(lab, p, norm, w),
        "below": tf.metrics.percentage_below(p, 0.4, w),
        "cos": tf.metrics.mean_cosine_distance(lab, p, 1, w),
    }
    sess.run(tf.local_variables_initializer())
    norms = [np.where(RNG.rand(4, 3) > 0.3, RNG.rand(4, 3) + 0.5, 0).astype(np.float32)
             for _ in range(BATCHES)]
    got = {k: [] for k in metrics}
    for b in range(BATCHES):
        feed = {p: VALUES[b], lab: LABELS[b], w: W_COL[b], norm: norms[b]}
        for k, v in sess.run({k: m[1] for k, m in metrics.items()}, feed).items():
            got[k].append(v)
    d = [v.astype(np.float64) - l for v, l in zip(VALUES, LABELS)]
    rel = [np.where(n == 0, 0, np.abs(dd) / np.where(n == 0, 1, n)) for dd, n in zip(d, norms)]
    expected = {
        "mae": wmean([np.abs(dd) for dd in d], W_COL),
        "mse": wmean([dd ** 2 for dd in d], W_COL),
        "rmse": np.sqrt(wmean([dd ** 2 for dd in d], W_COL)),
        "mre": wmean(rel, W_COL),
        "below": wmean([(v < 0.4).astype(np.float64) for v in VALUES], W_COL),
        "cos": 1 - np.array(wmean([(v * l).sum(1, keepdims=True)
                                   for v, l in zip(VALUES, LABELS)], W_COL)),
    }
    for k in metrics:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, err_msg=k)
    values = sess.run({k: m[0] for k, m in metrics.items()})
    for k in metrics:
        np.testing.assert_allclose(values[k], expected[k][-1], rtol=1e-5, err_msg=k)
    assert metrics["rmse"][0].name == "Sqrt:0"
    assert metrics["below"][1].name == "percentage_below_threshold/update_op:0"


def test_accuracy(graph, sess):
    labels = tf.placeholder(tf.int32, [None])
    preds = tf.placeholder(tf.int64, [None, 1])
    w = tf.placeholder(tf.float32, [None])
    metric = tf.metrics.accuracy(labels, preds, w)
    labs = [RNG.randint(0, 3, 5) for _ in range(BATCHES)]
    prs = [RNG.randint(0, 3, (5, 1)) for _ in range(BATCHES)]
    ws = [RNG.rand(5).astype(np.float32) for _ in range(BATCHES)]
    updates, value = stream(sess, metric, [{labels: a, preds: b, w: c}
                                           for a, b, c in zip(labs, prs, ws)])
    expected = wmean([(a == b[:, 0]).astype(np.float64) for a, b in zip(labs, prs)], ws)
    np.testing.assert_allclose(updates, expected, rtol=1e-6)
    np.testing.assert_allclose(value, expected[-1], rtol=1e-6)
    assert metric[1].name == "accuracy/update_op:0"
    with pytest.raises(ValueError):
        tf.metrics.accuracy(tf.zeros([3]), tf.zeros([4]))


def test_weights_errors(graph, sess, ph):
    x, _, w = ph
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.metrics.mean(x, np.ones((4, 2), np.float32))
    _, update = tf.metrics.mean(x, w)
    sess.run(tf.local_variables_initializer())
    with pytest.raises(tf.errors.InvalidArgumentError, match="weights can not be broadcast"):
        sess.run(update, {x: VALUES[0], w: np.ones((2, 3), np.float32)})


def np_confusion(labels, preds, n, weights=None):
    cm = np.zeros((n, n))
    np.add.at(cm, (labels, preds), 1.0 if weights is None else weights)
    return cm


def test_mean_iou(graph, sess):
    labels = tf.placeholder(tf.int32, [2, 3])
    preds = tf.placeholder(tf.int64, [2, 3])
    w = tf.placeholder(tf.float32, [2, 3])
    value, update = tf.metrics.mean_iou(labels, preds, 4, w)
    labs = [RNG.randint(0, 3, (2, 3)) for _ in range(BATCHES)]
    prs = [RNG.randint(0, 3, (2, 3)) for _ in range(BATCHES)]
    ws = [RNG.randint(0, 3, (2, 3)).astype(np.float32) for _ in range(BATCHES)]
    updates, got = stream(sess, (value, update), [{labels: a, preds: b, w: c}
                                                  for a, b, c in zip(labs, prs, ws)])
    cm = sum(np_confusion(a.ravel(), b.ravel(), 4, c.ravel())
             for a, b, c in zip(labs, prs, ws))
    np.testing.assert_allclose(updates[-1], cm)
    assert updates[-1].dtype == np.float64
    inter = np.diag(cm)
    union = cm.sum(0) + cm.sum(1) - inter
    expected = (inter[union > 0] / union[union > 0]).mean()
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert [v.name for v in tf.local_variables()] == ["mean_iou/total_confusion_matrix:0"]
    sess.run(tf.local_variables_initializer())
    assert sess.run(value) == 0.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bound"):
        sess.run(update, {labels: [[0, 1, 4], [0, 0, 0]], preds: labs[0], w: ws[0]})


def test_mean_per_class_accuracy(graph, sess):
    labels = tf.placeholder(tf.int64, [6])
    preds = tf.placeholder(tf.int32, [6])
    w = tf.placeholder(tf.float32, [6])
    value, update = tf.metrics.mean_per_class_accuracy(labels, preds, 3, w)
    labs = [RNG.randint(0, 2, 6) for _ in range(BATCHES)]     # class 2 never occurs
    prs = [RNG.randint(0, 3, 6) for _ in range(BATCHES)]
    ws = [RNG.rand(6).astype(np.float32) for _ in range(BATCHES)]
    updates, got = stream(sess, (value, update), [{labels: a, preds: b, w: c}
                                                  for a, b, c in zip(labs, prs, ws)])
    total = np.zeros(3)
    correct = np.zeros(3)
    for a, b, c in zip(labs, prs, ws):
        np.add.at(total, a, c)
        np.add.at(correct, a, c * (a == b))
    per_class = np.where(total > 0, correct / np.where(total > 0, total, 1), 0)
    np.testing.assert_allclose(updates[-1], per_class, rtol=1e-5)
    np.testing.assert_allclose(got, per_class.mean(), rtol=1e-5)
    assert value.name == "mean_accuracy/mean_accuracy:0"
    with pytest.raises(ValueError, match="num_classes"):
        tf.metrics.mean_per_class_accuracy(labels, preds, 0)


def test_num_classes_may_be_a_constant_tensor(graph, sess):
    labels, preds = tf.constant([0, 1, 2]), tf.constant([0, 1, 1])
    iou, iou_update = tf.metrics.mean_iou(labels, preds, num_classes=tf.constant(3))
    acc, acc_update = tf.metrics.mean_per_class_accuracy(labels, preds, tf.constant(3))
    sess.run(tf.local_variables_initializer())
    cm, per_class = sess.run([iou_update, acc_update])
    assert cm.tolist() == [[1, 0, 0], [0, 1, 0], [0, 1, 0]]
    assert per_class.tolist() == [1.0, 1.0, 0.0]
    # IoU of classes 0, 1 and 2: 1, 1/2 and 0
    np.testing.assert_allclose(sess.run([iou, acc]), [0.5, 2 / 3], rtol=1e-6)
    with pytest.raises(ValueError, match="constant integer"):
        tf.metrics.mean_iou(labels, preds, tf.placeholder(tf.int32, []))
