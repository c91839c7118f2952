"""tf.metrics confusion counts, precision/recall, thresholds, AUC and
sensitivity/specificity: streaming over three updates against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(7)
BATCHES = 3
N = 8
LABELS = [RNG.randint(0, 2, N) for _ in range(BATCHES)]
PREDS = [RNG.rand(N).astype(np.float32) for _ in range(BATCHES)]
WEIGHTS = [RNG.rand(N).astype(np.float32) for _ in range(BATCHES)]
ALL_L = np.concatenate(LABELS).astype(bool)
ALL_P = np.concatenate(PREDS).astype(np.float64)
ALL_W = np.concatenate(WEIGHTS).astype(np.float64)


@pytest.fixture
def ph():
    return (tf.placeholder(tf.int64, [N]), tf.placeholder(tf.float32, [N]),
            tf.placeholder(tf.float32, [N]))


def run_stream(sess, metrics, ph):
    """Runs every update op on each batch; returns (updates per batch, final values)."""
    lab, pred, w = ph
    sess.run(tf.local_variables_initializer())
    updates = [sess.run({k: m[1] for k, m in metrics.items()},
                        {lab: LABELS[b], pred: PREDS[b], w: WEIGHTS[b]})
               for b in range(BATCHES)]
    return updates, sess.run({k: m[0] for k, m in metrics.items()})


def counts(labels, preds, weights, thresholds):
    """NumPy tp, fn, tn, fp at each threshold (positive: strictly above)."""
    pos = preds[None, :] > np.asarray(thresholds)[:, None]
    lab = labels[None, :]
    w = weights[None, :]
    return {"tp": ((lab & pos) * w).sum(1), "fn": ((lab & ~pos) * w).sum(1),
            "tn": ((~lab & ~pos) * w).sum(1), "fp": ((~lab & pos) * w).sum(1)}


def prefix(b):
    n = (b + 1) * N
    return ALL_L[:n], ALL_P[:n], ALL_W[:n]


def test_counts_precision_recall(graph, sess, ph):
    lab, pred, w = ph
    is_pos = pred > 0.5
    metrics = {"tp": tf.metrics.true_positives(lab, is_pos, w),
               "fp": tf.metrics.false_positives(lab, is_pos),
               "tn": tf.metrics.true_negatives(lab, is_pos, w),
               "fn": tf.metrics.false_negatives(lab, is_pos, 2.0),
               "precision": tf.metrics.precision(lab, is_pos, w),
               "recall": tf.metrics.recall(lab, is_pos, w)}
    updates, values = run_stream(sess, metrics, ph)
    for b in range(BATCHES):
        lb, pb, wb = prefix(b)
        c = counts(lb, pb, wb, [0.5])
        c1 = counts(lb, pb, np.ones_like(wb), [0.5])
        expected = {"tp": c["tp"][0], "fp": c1["fp"][0], "tn": c["tn"][0],
                    "fn": 2 * c1["fn"][0],
                    "precision": c["tp"][0] / (c["tp"][0] + c["fp"][0]),
                    "recall": c["tp"][0] / (c["tp"][0] + c["fn"][0])}
        for k, v in expected.items():
            np.testing.assert_allclose(updates[b][k], v, rtol=1e-5, err_msg=k)
            if b == BATCHES - 1:
                np.testing.assert_allclose(values[k], v, rtol=1e-5, err_msg=k)
    assert metrics["tp"][0].name == "true_positives/Identity:0"
    assert metrics["precision"][1].name == "precision/update_op:0"
    assert sorted(v.name for v in tf.local_variables())[:4] == [
        "false_negatives/count:0", "false_positives/count:0",
        "precision/false_positives/count:0", "precision/true_positives/count:0"]


def test_precision_is_zero_without_positives(graph, sess):
    value, update = tf.metrics.precision([1, 0], [False, False])
    sess.run(tf.local_variables_initializer())
    assert sess.run(update) == 0.0 and sess.run(value) == 0.0


THRESHOLDS = [0.2, 0.5, 0.9]


def test_at_thresholds(graph, sess, ph):
    lab, pred, w = ph
    metrics = {"tp": tf.metrics.true_positives_at_thresholds(lab, pred, THRESHOLDS, w),
               "fp": tf.metrics.false_positives_at_thresholds(lab, pred, THRESHOLDS, w),
               "tn": tf.metrics.true_negatives_at_thresholds(lab, pred, THRESHOLDS),
               "fn": tf.metrics.false_negatives_at_thresholds(lab, pred, THRESHOLDS, w),
               "p": tf.metrics.precision_at_thresholds(lab, pred, THRESHOLDS, w),
               "r": tf.metrics.recall_at_thresholds(lab, pred, THRESHOLDS)}
    updates, values = run_stream(sess, metrics, ph)
    for b in range(BATCHES):
        lb, pb, wb = prefix(b)
        c = counts(lb, pb, wb, THRESHOLDS)
        c1 = counts(lb, pb, np.ones_like(wb), THRESHOLDS)
        expected = {"tp": c["tp"], "fp": c["fp"], "tn": c1["tn"], "fn": c["fn"],
                    "p": c["tp"] / (1e-7 + c["tp"] + c["fp"]),
                    "r": c1["tp"] / (1e-7 + c1["tp"] + c1["fn"])}
        for k, v in expected.items():
            assert updates[b][k].shape == (3,) and updates[b][k].dtype == np.float32
            np.testing.assert_allclose(updates[b][k], v, rtol=1e-5, err_msg=k)
    np.testing.assert_allclose(values["p"], updates[-1]["p"])
    assert metrics["p"][0].name == "precision_at_thresholds/precision_value:0"
    assert metrics["r"][1].name == "recall_at_thresholds/recall_update_op:0"


def np_auc(labels, preds, weights, num_thresholds=200, curve="ROC",
           method="trapezoidal", thresholds=None):
    """NumPy AUC with TF1's thresholds and epsilons."""
    if thresholds is None:
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    else:
        inner = sorted(thresholds)
    th = np.array([-1e-7] + inner + [1 + 1e-7], np.float32)
    c = counts(labels, preds.astype(np.float32), weights.astype(np.float32), th)
    tp, fn, tn, fp = (c[k].astype(np.float32).astype(np.float64)
                      for k in ("tp", "fn", "tn", "fp"))
    if curve == "PR" and method == "careful_interpolation":
        total = 0.0
        for i in range(len(th) - 1):
            dtp = tp[i] - tp[i + 1]
            p0, p1 = tp[i] + fp[i], tp[i + 1] + fp[i + 1]
            slope = dtp / (p0 - p1) if p0 - p1 > 0 else 0.0
            intercept = tp[i + 1] - slope * p1
            ratio = p0 / p1 if p0 > 0 and p1 > 0 else 1.0
            denom = tp[i + 1] + fn[i + 1]
            if denom > 0:
                total += slope * (dtp + intercept * np.log(ratio)) / denom
        return total
    eps = 1e-6
    rec = (tp + eps) / (tp + fn + eps)
    if curve == "ROC":
        x, y = fp / (fp + tn + eps), rec
    else:
        x, y = rec, (tp + eps) / (tp + fp + eps)
    height = {"trapezoidal": (y[:-1] + y[1:]) / 2, "careful_interpolation": (y[:-1] + y[1:]) / 2,
              "minoring": np.minimum(y[:-1], y[1:]),
              "majoring": np.maximum(y[:-1], y[1:])}[method]
    return float(((x[:-1] - x[1:]) * height).sum())


AUC_CASES = {
    "roc": dict(),
    "roc_w7": dict(weighted=True, num_thresholds=7),
    "roc_min": dict(method="minoring", thresholds=[0.6, 0.1, 0.3]),
    "roc_maj": dict(method="majoring", num_thresholds=5, weighted=True),
    "roc_careful": dict(method="careful_interpolation", num_thresholds=9),
    "pr": dict(curve="PR", num_thresholds=11),
    "pr_careful": dict(curve="PR", method="careful_interpolation", num_thresholds=9,
                       weighted=True),
    "pr_min": dict(curve="PR", method="minoring", num_thresholds=6),
}


def test_auc(graph, sess, ph):
    lab, pred, w = ph
    metrics = {}
    for key, case in AUC_CASES.items():
        metrics[key] = tf.metrics.auc(
            lab, pred, w if case.get("weighted") else None,
            num_thresholds=case.get("num_thresholds", 200), curve=case.get("curve", "ROC"),
            summation_method=case.get("method", "trapezoidal"),
            thresholds=case.get("thresholds"))
    updates, values = run_stream(sess, metrics, ph)
    for b in range(BATCHES):
        lb, pb, wb = prefix(b)
        for key, case in AUC_CASES.items():
            expected = np_auc(lb, pb, wb if case.get("weighted") else np.ones_like(wb),
                              case.get("num_thresholds", 200), case.get("curve", "ROC"),
                              case.get("method", "trapezoidal"), case.get("thresholds"))
            np.testing.assert_allclose(updates[b][key], expected, rtol=1e-4, atol=1e-6,
                                       err_msg=key)
    for key in AUC_CASES:
        np.testing.assert_allclose(values[key], updates[-1][key], rtol=1e-6)
    assert metrics["roc"][0].name == "auc/value:0"
    assert metrics["roc"][1].name == "auc/update_op:0"
    assert [v.name for v in tf.local_variables()[:4]] == [
        "auc/true_positives:0", "auc/false_negatives:0", "auc/true_negatives:0",
        "auc/false_positives:0"]


def test_auc_of_perfect_and_reversed_predictions(graph, sess):
    labels = np.array([0, 0, 1, 1])
    good = tf.metrics.auc(labels, [0.1, 0.2, 0.8, 0.9])
    bad = tf.metrics.auc(labels, [0.9, 0.8, 0.2, 0.1])
    sess.run(tf.local_variables_initializer())
    np.testing.assert_allclose(sess.run([good[1], bad[1]]), [1.0, 0.0], atol=1e-5)


def test_auc_errors(graph, sess, ph):
    lab, pred, _ = ph
    with pytest.raises(ValueError, match="Curve must be either ROC or PR"):
        tf.metrics.auc(lab, pred, curve="XY")
    with pytest.raises(ValueError, match="Invalid summation_method: bad"):
        tf.metrics.auc(lab, pred, summation_method="bad")
    _, update = tf.metrics.auc(lab, pred)
    sess.run(tf.local_variables_initializer())
    bad = PREDS[0].copy()
    bad[2] = 1.5
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
        sess.run(update, {lab: LABELS[0], pred: bad})
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.metrics.auc(lab, pred, np.ones((4,), np.float32))


def np_rates(lb, pb, wb, num_thresholds, top=1 + 1e-7):
    th = np.array([-1e-7] + [(i + 1) / (num_thresholds - 1)
                             for i in range(num_thresholds - 2)] + [top], np.float32)
    c = counts(lb, pb.astype(np.float32), wb.astype(np.float32), th)
    return {k: v.astype(np.float32) for k, v in c.items()}


def test_sensitivity_and_specificity(graph, sess, ph):
    lab, pred, w = ph
    metrics = {"sens": tf.metrics.sensitivity_at_specificity(lab, pred, 0.4,
                                                             num_thresholds=11),
               "spec": tf.metrics.specificity_at_sensitivity(lab, pred, 0.6, w,
                                                             num_thresholds=11)}
    updates, values = run_stream(sess, metrics, ph)
    k = np.float32(1e-7)
    for b in range(BATCHES):
        lb, pb, wb = prefix(b)
        c = np_rates(lb, pb, np.ones_like(wb), 11)
        specs = c["tn"] / (c["tn"] + c["fp"] + k)
        i = int(np.argmin(np.abs(specs - np.float32(0.4))))       # first closest
        sens = c["tp"][i] / (c["tp"][i] + c["fn"][i] + k)
        cw = np_rates(lb, pb, wb, 11, top=1 - 1e-7)  # TF's top threshold for this one
        senss = cw["tp"] / (cw["tp"] + cw["fn"] + k)
        gap = np.abs(senss - np.float32(0.6))
        j = int(np.nonzero(gap == gap.min())[0][-1])             # last closest
        spec = cw["tn"][j] / (cw["tn"][j] + cw["fp"][j] + k)
        np.testing.assert_allclose(updates[b]["sens"], sens, rtol=1e-5)
        np.testing.assert_allclose(updates[b]["spec"], spec, rtol=1e-5)
    np.testing.assert_allclose(values["sens"], updates[-1]["sens"])
    assert metrics["sens"][0].name == "sensitivity_at_specificity/value:0"
    with pytest.raises(ValueError, match=r"`specificity` must be in the range \[0, 1\]\. "
                                         r"Currently, `specificity` got 1\.5\."):
        tf.metrics.sensitivity_at_specificity(lab, pred, 1.5)
    with pytest.raises(ValueError, match=r"`sensitivity` must be in the range \[0, 1\]\. "
                                         r"Currently, `sensitivity` is -0\.1\."):
        tf.metrics.specificity_at_sensitivity(lab, pred, -0.1)


def test_specificity_at_sensitivity_counts_a_prediction_of_one_as_positive(graph, sess):
    """Its top threshold is 1 - 1e-7 (TF's), so sensitivity 1 is reached there: the one
    negative, at 0.999, is below it."""
    _, update = tf.metrics.specificity_at_sensitivity(
        tf.constant([True, False]), tf.constant([1.0, 0.999]), sensitivity=1.0)
    sess.run(tf.local_variables_initializer())
    np.testing.assert_allclose(sess.run(update), 1 / (1 + 1e-7), rtol=1e-6)


def test_count_weights_rank_is_checked(graph, sess, ph):
    lab, pred, _ = ph
    w = tf.placeholder(tf.float32, None)
    _, update = tf.metrics.true_positives(lab, pred > 0.5, w)
    sess.run(tf.local_variables_initializer())
    feed = {lab: LABELS[0], pred: PREDS[0]}
    assert sess.run(update, {w: 2.0, **feed}) == pytest.approx(
        2 * np.sum(LABELS[0].astype(bool) & (PREDS[0] > 0.5)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(update, {w: np.ones((2, 4)), **feed})


@pytest.mark.parametrize("metric", [tf.metrics.precision_at_thresholds,
                                    tf.metrics.recall_at_thresholds,
                                    tf.metrics.false_positives_at_thresholds])
def test_no_thresholds_gives_empty_metrics(graph, sess, ph, metric):
    lab, pred, _ = ph
    value, update = metric(lab, pred, [])
    assert value.shape.as_list() == [0] and update.shape.as_list() == [0]
    sess.run(tf.local_variables_initializer())
    got = sess.run(update, {lab: LABELS[0], pred: PREDS[0]})
    assert got.shape == (0,) and got.dtype == np.float32
