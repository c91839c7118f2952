"""tf.keras.metrics' confusion-matrix metrics (keras/metrics_confusion.py) against NumPy
references computed here: confusion counts over several weighted batches, Precision and
Recall with top_k and class_id, ROC and PR AUCs (trapezoids over the same thresholds, the
interpolated PR formula and a numeric integral of it, multi-label, label weights), the
metrics at a fixed rate, the IoU metrics; reset, configs, get/deserialize, constructor errors,
and AUC in compile/fit/evaluate."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
M = tf.keras.metrics
EPS = 1e-7


def _data(n=40, labels=3, seed=0):
    rs = np.random.RandomState(seed)
    y_true = (rs.rand(n, labels) > 0.5).astype(np.float32)
    y_pred = rs.rand(n, labels).astype(np.float32)
    return y_true, y_pred, rs.rand(n).astype(np.float32)


def _np_counts(y_true, y_pred, thresholds, weights=None, per_label=False):
    """'tp', 'fp', 'tn', 'fn' -> counts per threshold ([T], or [T, labels] with
    per_label): a prediction is positive when strictly above the threshold."""
    if weights is None:
        weights = np.ones(len(y_pred), np.float32)
    weights = np.broadcast_to(np.reshape(weights, (len(y_pred),) + (1,) * (y_pred.ndim - 1)),
                              y_pred.shape)
    t = np.asarray(thresholds, np.float32).reshape((-1,) + (1,) * y_pred.ndim)
    pred = y_pred[None] > t
    label = (y_true != 0)[None]
    axes = 1 if per_label else tuple(range(1, y_pred.ndim + 1))
    return {key: ((a & b) * weights[None]).sum(axis=axes) for key, (a, b) in {
        "tp": (label, pred), "fp": (~label, pred), "tn": (~label, ~pred),
        "fn": (label, ~pred)}.items()}


def _add(a, b):
    return {key: a[key] + b[key] for key in a}


def _div(a, b):
    return np.where(b > 0, a / np.where(b > 0, b, 1), 0.0)


def _auc_thresholds(n):
    return [-EPS] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + EPS]


def _np_area(c, curve="ROC", method="interpolation"):
    """The Riemann sum Keras' AUC takes (axis 0: thresholds)."""
    recall = _div(c["tp"], c["tp"] + c["fn"])
    if curve == "ROC":
        x, y = _div(c["fp"], c["fp"] + c["tn"]), recall
    else:
        x, y = recall, _div(c["tp"], c["tp"] + c["fp"])
    heights = {"interpolation": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
               "majoring": np.maximum(y[:-1], y[1:])}[method]
    return ((x[:-1] - x[1:]) * heights).sum(axis=0)


def _np_interpolated_pr(c):
    """Davis & Goadrich's interpolated PR AUC, as the closed form Keras sums."""
    tp, fp, fn = c["tp"], c["fp"], c["fn"]
    dtp, p = tp[:-1] - tp[1:], tp + fp
    dp = p[:-1] - p[1:]
    slope = _div(dtp, np.maximum(dp, 0))
    intercept = tp[1:] - slope * p[1:]
    ratio = np.where((p[:-1] > 0) & (p[1:] > 0), _div(p[:-1], np.maximum(p[1:], 0)), 1.0)
    return _div(slope * (dtp + intercept * np.log(ratio)),
                np.maximum(tp[1:] + fn[1:], 0)).sum(axis=0)


def _numeric_interpolated_pr(c, steps=4000):
    """The same area by quadrature: between two thresholds tp grows linearly with the
    predicted positives p, and precision tp / p is integrated over recall tp / P."""
    tp, p, positives = c["tp"], c["tp"] + c["fp"], c["tp"][0] + c["fn"][0]
    area = 0.0
    for i in range(len(tp) - 1):
        if p[i] <= p[i + 1] or tp[i] == tp[i + 1]:
            continue  # no recall gained, or the slope Keras takes as 0
        grid = np.linspace(max(p[i + 1], 1e-9), p[i], steps + 1)  # from p = 0: tp = 0 too
        slope = (tp[i] - tp[i + 1]) / (p[i] - p[i + 1])
        precision = (tp[i + 1] + slope * (grid - p[i + 1])) / grid
        trapezoid = ((precision[1:] + precision[:-1]) / 2 * np.diff(grid)).sum()
        area += trapezoid * slope / positives
    return area


def _rank_auc(y_true, y_pred, weights):
    """The exact weighted ROC AUC: the weighted fraction of (positive, negative) pairs
    ranked right, ties counting half."""
    pos, neg = y_true != 0, y_true == 0
    above = (y_pred[pos][:, None] > y_pred[neg][None]) + 0.5 * (
        y_pred[pos][:, None] == y_pred[neg][None])
    pair_weights = weights[pos][:, None] * weights[neg][None]
    return (above * pair_weights).sum() / pair_weights.sum()


def _run(*tensors):
    return K.backend.get_session().run(list(tensors))


# --- counts -------------------------------------------------------------------------------
COUNTERS = {"tp": M.TruePositives, "fp": M.FalsePositives, "tn": M.TrueNegatives,
            "fn": M.FalseNegatives}


@pytest.mark.parametrize("thresholds", [None, 0.3, [0.8, 0.3, 0.5], [0.0, 0.5, 1.0]])
def test_counts_accumulate_weighted_batches(sess, thresholds):
    y_true, y_pred, weights = _data()
    y_pred[0] = [0.0, 0.5, 1.0]  # on the thresholds: not above them
    y_true2, y_pred2, _ = _data(n=7, seed=1)
    metrics = {key: cls(thresholds=thresholds) for key, cls in COUNTERS.items()}
    updates = [m.update_state(y_true, y_pred, sample_weight=weights)
               for m in metrics.values()]
    calls = [m(y_true2[:, :2], y_pred2[:, :2]) for m in metrics.values()]
    _run(*updates)
    _run(*calls)
    listed = [0.5] if thresholds is None else np.atleast_1d(thresholds)
    expected = _add(_np_counts(y_true, y_pred, listed, weights),
                    _np_counts(y_true2[:, :2], y_pred2[:, :2], listed))
    # named as TF 2.15 names them: no metric scope, uniquified by the graph
    assert [m.variables[0].name for m in metrics.values()] == [
        "accumulator:0", "accumulator_1:0", "accumulator_2:0", "accumulator_3:0"]
    for key, metric in metrics.items():
        assert metric.variables[0].shape.as_list() == [len(listed)]
        result = metric.result()
        assert result.shape.as_list() == ([] if len(listed) == 1 else [len(listed)])
        # even thresholds count tn and fn by subtraction, as Keras: float32 rounding
        np.testing.assert_allclose(_run(result)[0], np.squeeze(expected[key]), rtol=1e-5,
                                   atol=1e-5)
        assert metric.get_config() == {"name": metric.name, "dtype": "float32",
                                       "thresholds": thresholds}
    assert [m.name for m in metrics.values()] == [
        "true_positives", "false_positives", "true_negatives", "false_negatives"]


def test_counts_of_rank_one_and_broadcast_weights(sess):
    tp = M.TruePositives([0.2, 0.6])
    fn = M.FalseNegatives([0.2, 0.6])
    y_true = np.array([1, 0, 1, 1], np.int64)
    y_pred = np.array([[0.9], [0.7], [0.4], [0.1]], np.float32)  # squeezed to y_true
    ops = [tp(y_true, y_pred, sample_weight=[[1.0], [1.0], [2.0], [3.0]]),
           fn(y_true, y_pred, sample_weight=2.0)]
    np.testing.assert_allclose(_run(*ops), [[3.0, 1.0], [2.0, 4.0]])


def test_predictions_outside_zero_one_are_not_checked(sess):
    """As Keras 2.15: no assertion on the range of the predictions."""
    precision = M.Precision()
    update = precision.update_state([[0.0, 1.0, 1.0]], [[1.5, 2.0, -0.3]])
    _run(update)
    np.testing.assert_allclose(_run(precision.result())[0], 0.5)


# --- precision and recall -----------------------------------------------------------------
def _np_top_k(y_pred, k):
    kept = np.zeros(y_pred.shape, bool)
    np.put_along_axis(kept, np.argsort(-y_pred, axis=-1)[..., :k], True, axis=-1)
    return np.where(kept, y_pred, -1e10)


@pytest.mark.parametrize("kwargs", [
    {}, {"thresholds": [0.2, 0.6, 0.9]}, {"top_k": 2}, {"class_id": 1},
    {"top_k": 1, "class_id": 2}, {"thresholds": [0.0, 0.25, 0.5, 0.75, 1.0]},
    {"top_k": 2, "thresholds": 0.4}])
def test_precision_and_recall(sess, kwargs):
    y_true, y_pred, weights = _data(seed=2)
    y_true2, y_pred2, _ = _data(n=9, seed=3)
    precision, recall = M.Precision(**kwargs), M.Recall(**kwargs)
    assert [v.name for v in precision.variables] == [
        "true_positives:0", "false_positives:0"]
    assert [v.name for v in recall.variables] == [
        "true_positives_1:0", "false_negatives:0"]
    _run(precision.update_state(y_true, y_pred, weights),
         recall.update_state(y_true, y_pred, weights))
    _run(precision.update_state(y_true2, y_pred2), recall.update_state(y_true2, y_pred2))
    thresholds = kwargs.get("thresholds", 0.5 if "top_k" not in kwargs else -1e10)
    counts = []
    for t, p, w in ((y_true, y_pred, weights), (y_true2, y_pred2, None)):
        if "top_k" in kwargs:
            p = _np_top_k(p, kwargs["top_k"])
        if "class_id" in kwargs:
            t, p = t[:, kwargs["class_id"]], p[:, kwargs["class_id"]]
        counts.append(_np_counts(t, p, np.atleast_1d(thresholds), w))
    c = _add(*counts)
    got_precision, got_recall = _run(precision.result(), recall.result())
    np.testing.assert_allclose(got_precision, np.squeeze(_div(c["tp"], c["tp"] + c["fp"])),
                               rtol=1e-5)
    np.testing.assert_allclose(got_recall, np.squeeze(_div(c["tp"], c["tp"] + c["fn"])),
                               rtol=1e-5)
    assert np.ndim(got_precision) == (0 if np.ndim(thresholds) == 0 else 1)
    expected_config = {"name": "precision", "dtype": "float32",
                       "thresholds": kwargs.get("thresholds"),
                       "top_k": kwargs.get("top_k"), "class_id": kwargs.get("class_id")}
    assert precision.get_config() == expected_config


# --- AUC ----------------------------------------------------------------------------------
@pytest.mark.parametrize("curve,method,num_thresholds", [
    ("ROC", "interpolation", 200), ("ROC", "minoring", 200), ("ROC", "majoring", 7),
    ("PR", "minoring", 11), ("PR", "majoring", 200)])
def test_auc_riemann_sums(sess, curve, method, num_thresholds):
    y_true, y_pred, weights = _data(seed=4)
    y_pred[:2, 0] = [0.0, 1.0]  # above the end thresholds (-epsilon, 1 + epsilon) or not
    y_true2, y_pred2, _ = _data(n=15, seed=5)
    auc = M.AUC(num_thresholds=num_thresholds, curve=curve, summation_method=method)
    assert [(v.name, v.shape.as_list()) for v in auc.variables] == [
        ("%s:0" % name, [num_thresholds]) for name in
        ("true_positives", "true_negatives", "false_positives", "false_negatives")]
    np.testing.assert_allclose(auc.thresholds, _auc_thresholds(num_thresholds))
    _run(auc.update_state(y_true, y_pred, sample_weight=weights))
    value = _run(auc(y_true2, y_pred2))[0]
    thresholds = _auc_thresholds(num_thresholds)
    counts = _add(_np_counts(y_true, y_pred, thresholds, weights),
                  _np_counts(y_true2, y_pred2, thresholds))
    np.testing.assert_allclose(value, _np_area(counts, curve, method), rtol=1e-5)
    if (curve, num_thresholds) == ("ROC", 200):  # close to the exact rank AUC
        exact = _rank_auc(np.concatenate([y_true, y_true2]).ravel(),
                          np.concatenate([y_pred, y_pred2]).ravel(),
                          np.repeat(np.concatenate([weights, np.ones(15)]), 3))
        assert abs(value - exact) < 0.01


def test_auc_interpolated_pr(sess):
    y_true, y_pred, weights = _data(n=60, seed=6)
    auc = M.AUC(curve="PR", num_thresholds=50)
    value = _run(auc(y_true, y_pred, sample_weight=weights))[0]
    counts = _np_counts(y_true, y_pred, _auc_thresholds(50), weights)
    np.testing.assert_allclose(value, _np_interpolated_pr(counts), rtol=1e-5)
    np.testing.assert_allclose(value, _numeric_interpolated_pr(counts), rtol=1e-4)
    assert abs(value - _np_area(counts, "PR")) > 1e-4  # not the plain trapezoid


def test_auc_given_thresholds_logits_and_label_weights(sess):
    y_true, y_pred, weights = _data(seed=7)
    logits = np.log(y_pred / (1 - y_pred))
    given = M.AUC(thresholds=[0.7, 0.1, 0.3, 0.5])
    even = M.AUC(thresholds=[0.25, 0.5, 0.75])
    from_logits = M.AUC(num_thresholds=30, from_logits=True)
    label_weighted = M.AUC(label_weights=[1.0, 2.0, 0.5], num_thresholds=50)
    ops = [given(y_true, y_pred, sample_weight=weights), even(y_true, y_pred),
           from_logits(y_true, logits), label_weighted(y_true, y_pred)]
    values = _run(*ops)
    thresholds = [-EPS, 0.1, 0.3, 0.5, 0.7, 1 + EPS]
    np.testing.assert_allclose(given.thresholds, thresholds)
    assert given.num_thresholds == 6 and given.get_config()["thresholds"] == [
        0.1, 0.3, 0.5, 0.7]
    np.testing.assert_allclose(values[0], _np_area(_np_counts(y_true, y_pred, thresholds,
                                                              weights)), rtol=1e-5)
    np.testing.assert_allclose(values[1], _np_area(_np_counts(
        y_true, y_pred, [-EPS, 0.25, 0.5, 0.75, 1 + EPS])), rtol=1e-5)
    np.testing.assert_allclose(values[2], _np_area(_np_counts(
        y_true, y_pred, _auc_thresholds(30))), rtol=1e-4)
    column_weights = np.broadcast_to([1.0, 2.0, 0.5], y_pred.shape)
    counts = {key: 0.0 for key in ("tp", "fp", "tn", "fn")}
    for j in range(3):  # each column counted with its label's weight
        counts = _add(counts, _np_counts(y_true[:, j], y_pred[:, j], _auc_thresholds(50),
                                         column_weights[:, j]))
    np.testing.assert_allclose(values[3], _np_area(counts), rtol=1e-5)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
@pytest.mark.parametrize("label_weights", [None, [1.0, 2.0, 0.5]])
def test_auc_multi_label(sess, curve, label_weights):
    y_true, y_pred, weights = _data(seed=8)
    auc = M.AUC(multi_label=True, curve=curve, label_weights=label_weights,
                num_thresholds=40)
    assert auc.variables == []  # made at the first update, from the predictions' shape
    update = auc.update_state(y_true, y_pred, sample_weight=weights)
    assert [v.shape.as_list() for v in auc.variables] == [[40, 3]] * 4
    _run(update)
    counts = _np_counts(y_true, y_pred, _auc_thresholds(40), weights, per_label=True)
    per_label = _np_area(counts) if curve == "ROC" else _np_interpolated_pr(counts)
    assert per_label.shape == (3,)
    expected = np.average(per_label, weights=label_weights)
    np.testing.assert_allclose(_run(auc.result())[0], expected, rtol=1e-5)
    fixed = M.AUC(multi_label=True, num_labels=3, thresholds=[0.2, 0.45, 0.8])
    assert [v.shape.as_list() for v in fixed.variables] == [[5, 3]] * 4
    value = _run(fixed(y_true, y_pred))[0]
    counts = _np_counts(y_true, y_pred, [-EPS, 0.2, 0.45, 0.8, 1 + EPS], per_label=True)
    np.testing.assert_allclose(value, _np_area(counts).mean(), rtol=1e-5)


def test_auc_shape_errors(sess):
    with pytest.raises(ValueError, match="must have rank 2 when `multi_label=True`"):
        M.AUC(multi_label=True).update_state(np.zeros([4]), np.zeros([4]))
    with pytest.raises(ValueError, match="Number of labels is not consistent"):
        M.AUC(label_weights=[1.0, 2.0]).update_state(np.zeros([4, 3]), np.zeros([4, 3]))
    with pytest.raises(ValueError):
        M.TruePositives().update_state(np.zeros([4, 3]), np.zeros([4, 2]))


# --- metrics at a fixed rate --------------------------------------------------------------
def _rate(c, name):
    numerator, other = {"sensitivity": ("tp", "fn"), "recall": ("tp", "fn"),
                        "specificity": ("tn", "fp"), "precision": ("tp", "fp")}[name]
    return _div(c[numerator], c[numerator] + c[other])


@pytest.mark.parametrize("cls,constrained,dependent,value,kwargs", [
    (M.SensitivityAtSpecificity, "specificity", "sensitivity", 0.6, {}),
    (M.SpecificityAtSensitivity, "sensitivity", "specificity", 0.7, {"num_thresholds": 20}),
    (M.PrecisionAtRecall, "recall", "precision", 0.5, {"class_id": 0}),
    (M.RecallAtPrecision, "precision", "recall", 0.6, {}),
    (M.RecallAtPrecision, "precision", "recall", 0.3, {"num_thresholds": 1}),
    (M.RecallAtPrecision, "precision", "recall", 1.0, {"num_thresholds": 5}),
    (M.PrecisionAtRecall, "recall", "precision", 1.0, {"num_thresholds": 3})])
def test_metrics_at_a_fixed_rate(sess, cls, constrained, dependent, value, kwargs):
    y_true, y_pred, weights = _data(seed=9)
    y_true2, y_pred2, _ = _data(n=11, seed=10)
    metric = cls(value, **kwargs)
    _run(metric.update_state(y_true, y_pred, weights))
    _run(metric.update_state(y_true2, y_pred2))
    n = kwargs.get("num_thresholds", 200)
    thresholds = [0.5] if n == 1 else [0.0] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1]
    pairs = [(y_true, y_pred, weights), (y_true2, y_pred2, None)]
    if "class_id" in kwargs:
        pairs = [(t[:, 0], p[:, 0], w) for t, p, w in pairs]
    c = _add(*[_np_counts(t, p, thresholds, w) for t, p, w in pairs])
    feasible = _rate(c, constrained) >= value
    expected = _rate(c, dependent)[feasible].max() if feasible.any() else 0.0
    np.testing.assert_allclose(_run(metric.result())[0], expected, rtol=1e-5)
    assert [v.shape.as_list() for v in metric.variables] == [[n]] * 4
    config = metric.get_config()
    assert config[constrained] == value and config["num_thresholds"] == n
    assert type(metric).from_config(config).get_config() == config


# --- MeanIoU ------------------------------------------------------------------------------
def _np_mean_iou(y_true, y_pred, num_classes, weights=None):
    matrix = np.zeros((num_classes, num_classes))
    np.add.at(matrix, (y_true.ravel(), y_pred.ravel()),
              1.0 if weights is None else weights.ravel())
    tp = np.diag(matrix)
    union = matrix.sum(0) + matrix.sum(1) - tp
    return (tp[union > 0] / union[union > 0]).mean()


def test_mean_iou(sess):
    rs = np.random.RandomState(11)
    y_true, y_pred = rs.randint(0, 4, (6, 5)), rs.randint(0, 4, (6, 5))
    y_pred[y_pred == 3] = 2  # class 3 is never predicted
    weights = rs.rand(6, 5).astype(np.float32)
    scores = rs.rand(6, 5, 4).astype(np.float32)
    plain, ignoring, dense, five = (M.MeanIoU(4), M.MeanIoU(4, ignore_class=0),
                                    M.MeanIoU(4, sparse_y_pred=False), M.MeanIoU(5))
    assert [v.name for v in plain.variables] == ["total_confusion_matrix:0"]
    assert [m.name for m in (ignoring, dense, five)] == [
        "mean_io_u_1", "mean_io_u_2", "mean_io_u_3"]
    _run(plain.update_state(y_true[:3], y_pred[:3], weights[:3]),
         ignoring.update_state(y_true, y_pred, weights), dense.update_state(y_true, scores),
         five.update_state(y_true, y_pred))
    _run(plain.update_state(y_true[3:], y_pred[3:], weights[3:]))
    keep = y_true != 0
    expected = [_np_mean_iou(y_true, y_pred, 4, weights),
                _np_mean_iou(y_true[keep], y_pred[keep], 4, weights[keep]),
                _np_mean_iou(y_true, scores.argmax(-1), 4), _np_mean_iou(y_true, y_pred, 5)]
    got = _run(*[m.result() for m in (plain, ignoring, dense, five)])
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    config = ignoring.get_config()
    assert config == {"num_classes": 4, "name": "mean_io_u_1", "dtype": "float32",
                      "ignore_class": 0, "sparse_y_true": True, "sparse_y_pred": True,
                      "axis": -1}
    assert M.MeanIoU.from_config(config).get_config() == config


def _np_iou(y_true, y_pred, num_classes, target_ids, weights=None):
    matrix = np.zeros((num_classes, num_classes))
    np.add.at(matrix, (y_true.ravel(), y_pred.ravel()),
              1.0 if weights is None else weights.ravel())
    tp = np.diag(matrix)
    union = (matrix.sum(0) + matrix.sum(1) - tp)[target_ids]
    tp = tp[target_ids]
    return (tp[union > 0] / union[union > 0]).sum() / max((union > 0).sum(), 1)


YT_CLS = np.array([0, 1, 2, 2, 1, 0], np.int32)
YP_CLS = np.array([0, 2, 2, 1, 1, 1], np.int32)
W_CLS = np.array([1.0, 0.5, 2.0, 1.0, 0.0, 3.0], np.float32)
SCORES = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.0, 0.1, 0.9], [0.2, 0.5, 0.3],
                   [0.3, 0.4, 0.3], [0.2, 0.7, 0.1]], np.float32)


def test_iou_family_match_numpy_and_tf(sess):
    yt_b = np.array([0, 1, 1, 0, 1], np.float32)
    yp_b = np.array([0.2, 0.6, 0.4, 0.7, 0.9], np.float32)
    w_b = np.array([1, 2, 1, 1, 0.5], np.float32)
    one_hot = np.eye(3, dtype=np.float32)[YT_CLS]
    metrics = [M.IoU(3, [0, 2]), M.IoU(3, [1], ignore_class=0), M.BinaryIoU(),
               M.BinaryIoU([1], threshold=0.3), M.OneHotIoU(3, [0, 1]), M.OneHotMeanIoU(3),
               M.OneHotMeanIoU(3, sparse_y_pred=True)]
    _run(metrics[0].update_state(YT_CLS, YP_CLS),
         metrics[0].update_state(YT_CLS[::-1], YP_CLS, W_CLS),
         metrics[1].update_state(YT_CLS, YP_CLS), metrics[2].update_state(yt_b, yp_b),
         metrics[3].update_state(yt_b, yp_b, w_b), metrics[4].update_state(one_hot, SCORES),
         metrics[5].update_state(one_hot, SCORES, W_CLS),
         metrics[6].update_state(one_hot, YP_CLS))
    got = _run(*[m.result() for m in metrics])
    keep = YT_CLS != 0
    both_true = np.concatenate([YT_CLS, YT_CLS[::-1]])
    expected = [
        _np_iou(both_true, np.tile(YP_CLS, 2), 3, [0, 2], np.concatenate([np.ones(6), W_CLS])),
        _np_iou(YT_CLS[keep], YP_CLS[keep], 3, [1]),
        _np_iou(yt_b.astype(int), (yp_b > 0.5).astype(int), 2, [0, 1]),
        _np_iou(yt_b.astype(int), (yp_b > 0.3).astype(int), 2, [1], w_b),
        _np_iou(YT_CLS, SCORES.argmax(-1), 3, [0, 1]),
        _np_iou(YT_CLS, SCORES.argmax(-1), 3, [0, 1, 2], W_CLS),
        _np_iou(YT_CLS, YP_CLS, 3, [0, 1, 2])]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    # TF 2.15 (compat.v1 graph mode), the same updates
    np.testing.assert_allclose(got, [0.39743590354919434, 0.3333333432674408,
                                     0.4166666865348816, 0.7777777910232544, 0.375,
                                     0.2738095223903656, 0.3611111342906952], rtol=1e-6)


def test_iou_family_configs_and_errors(sess):
    iou, binary, one_hot, one_hot_mean = (M.IoU(3, [0, 2]), M.BinaryIoU(),
                                          M.OneHotIoU(3, [1]), M.OneHotMeanIoU(4))
    assert [m.name for m in (iou, binary, one_hot, one_hot_mean)] == [
        "io_u", "binary_io_u", "one_hot_io_u", "one_hot_mean_io_u"]
    # TF 2.15's configs
    assert iou.get_config() == {
        "name": "io_u", "dtype": "float32", "num_classes": 3, "target_class_ids": [0, 2],
        "ignore_class": None, "sparse_y_true": True, "sparse_y_pred": True, "axis": -1}
    assert binary.get_config() == {"target_class_ids": [0, 1], "threshold": 0.5,
                                   "name": "binary_io_u", "dtype": "float32"}
    assert one_hot.get_config() == {
        "num_classes": 3, "target_class_ids": [1], "name": "one_hot_io_u",
        "dtype": "float32", "ignore_class": None, "sparse_y_pred": False, "axis": -1}
    assert one_hot_mean.get_config() == {
        "num_classes": 4, "name": "one_hot_mean_io_u", "dtype": "float32",
        "ignore_class": None, "sparse_y_pred": False, "axis": -1}
    for metric in (iou, binary, one_hot, one_hot_mean):
        restored = M.deserialize(M.serialize(metric))
        assert type(restored) is type(metric)
        assert restored.get_config() == metric.get_config()
    with pytest.raises(ValueError, match=r"Target class id 3 is out of range, which is "
                       r"\[0, 3\)."):
        M.IoU(3, [3])


# --- state, configs, errors ---------------------------------------------------------------
def test_reset_state_and_config_round_trip(sess):
    y_true, y_pred, _ = _data(seed=12)
    metrics = [M.TruePositives([0.3, 0.6]), M.Precision(top_k=2), M.Recall(class_id=1),
               M.AUC(curve="pr", summation_method="Majoring", thresholds=[0.4, 0.2]),
               M.AUC(multi_label=True), M.SpecificityAtSensitivity(0.4, num_thresholds=9),
               M.MeanIoU(3, sparse_y_true=False, sparse_y_pred=False),
               M.AUC(label_weights=[1.0, 3.0, 2.0])]
    results = [m(y_true, y_pred) for m in metrics]
    before = _run(*results)
    assert all(np.any(np.asarray(r) != 0) for r in before)
    for m in metrics:
        m.reset_state()
    assert all(np.all(v == 0) for m in metrics for v in m.get_weights())
    np.testing.assert_allclose(_run(*results)[-1], before[-1], rtol=1e-6)  # state again
    for m in metrics:
        config = m.get_config()
        assert type(m).from_config(config).get_config().keys() == config.keys()
        copy = M.deserialize(M.serialize(m))
        assert type(copy) is type(m)
        for key, value in copy.get_config().items():
            np.testing.assert_array_equal(value, config[key])
    assert metrics[3].get_config()["curve"] == "PR"
    assert metrics[3].get_config()["summation_method"] == "majoring"
    assert metrics[-1].get_config()["label_weights"].tolist() == [1.0, 3.0, 2.0]
    assert type(M.get("AUC")) is M.AUC and type(M.get("Precision")) is M.Precision
    assert M.get({"class_name": "Recall", "config": {"top_k": 3}}).top_k == 3


def test_default_names_are_unique_per_graph(graph):
    assert [M.AUC().name, M.AUC().name, M.AUC(name="x").name, M.Precision().name] == [
        "auc", "auc_1", "x", "precision"]
    with tf.Graph().as_default():
        assert M.AUC().name == "auc"


@pytest.mark.parametrize("make,message", [
    (lambda: M.AUC(num_thresholds=1), "`num_thresholds` must be an integer > 1"),
    (lambda: M.AUC(curve="x"), 'Invalid AUC curve value: "x". Expected values are '
                               r'\["PR", "ROC"\]'),
    (lambda: M.AUC(summation_method="x"), "Invalid AUC summation method value"),
    (lambda: M.AUC(num_labels=3), "`num_labels` is needed only when `multi_label`"),
    (lambda: M.Precision(thresholds=[1.5]), r"Threshold values must be in \[0, 1\]. "
                                            r"Received: \[1.5\]"),
    (lambda: M.TruePositives(thresholds=[-0.1, 0.5]), r"Received: \[-0.1\]"),
    (lambda: M.PrecisionAtRecall(1.5), r"`recall` must be in the range \[0, 1\]"),
    (lambda: M.SensitivityAtSpecificity(-1), "`specificity` must be in the range"),
    (lambda: M.RecallAtPrecision(0.5, num_thresholds=0), "must be an integer > 0")])
def test_constructor_errors(graph, make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- training -----------------------------------------------------------------------------
def test_auc_in_compile_fit_evaluate(keras_graph):
    rs = np.random.RandomState(13)
    x = rs.randn(64, 4).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * rs.randn(64) > 0).astype(
        np.float32).reshape(-1, 1)
    model = K.Sequential([K.layers.Dense(1, activation="sigmoid", input_shape=(4,))])
    model.compile(K.optimizers.SGD(0.1), "binary_crossentropy",
                  metrics=[M.AUC(), M.Precision(), M.Recall(thresholds=[0.3, 0.6]),
                           M.AUC(curve="PR", name="pr")],
                  weighted_metrics=[M.AUC(name="wauc")])
    assert model.metrics_names == ["loss", "auc", "precision", "recall", "pr",
                                   "weighted_wauc"]
    weights = rs.rand(64).astype(np.float32)
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False,
                        sample_weight=weights, validation_data=(x[:20], y[:20]))
    assert sorted(history.history) == sorted(
        ["loss", "auc", "precision", "recall", "pr", "weighted_wauc", "val_loss",
         "val_auc", "val_precision", "val_recall", "val_pr", "val_weighted_wauc"])
    assert np.shape(history.history["recall"][-1]) == (2,)
    assert history.history["auc"][-1] > history.history["auc"][0]
    loss, auc, precision, recall, pr, weighted = model.evaluate(
        x, y, batch_size=10, verbose=0, sample_weight=weights)
    p = model.predict(x)
    thresholds = _auc_thresholds(200)
    np.testing.assert_allclose(auc, _np_area(_np_counts(y, p, thresholds)), rtol=1e-5)
    np.testing.assert_allclose(weighted, _np_area(_np_counts(y, p, thresholds, weights)),
                               rtol=1e-5)
    np.testing.assert_allclose(pr, _np_interpolated_pr(_np_counts(y, p, thresholds)),
                               rtol=1e-5)
    c = _np_counts(y, p, [0.5, 0.3, 0.6])
    np.testing.assert_allclose(precision, c["tp"][0] / (c["tp"][0] + c["fp"][0]), rtol=1e-5)
    np.testing.assert_allclose(recall, (c["tp"] / (c["tp"] + c["fn"]))[1:], rtol=1e-5)
    model.reset_metrics()
    assert all(np.all(v == 0) for m in model.metrics for v in m.get_weights())


def test_multi_label_auc_built_in_compile(keras_graph):
    rs = np.random.RandomState(14)
    x = rs.randn(48, 4).astype(np.float32)
    y = (x[:, :3] + 0.5 * rs.randn(48, 3) > 0).astype(np.float32)
    model = K.Sequential([K.layers.Dense(3, activation="sigmoid", input_shape=(4,))])
    auc = M.AUC(multi_label=True, name="mlauc")
    model.compile("sgd", "binary_crossentropy", metrics=[auc, M.Recall(top_k=2)])
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    _, value, recall = model.evaluate(x, y, verbose=0)
    p = model.predict(x)
    counts = _np_counts(y, p, _auc_thresholds(200), per_label=True)
    np.testing.assert_allclose(value, _np_area(counts).mean(), rtol=1e-5)
    c = _np_counts(y, _np_top_k(p, 2), [-1e10])
    np.testing.assert_allclose(recall, c["tp"][0] / (c["tp"][0] + c["fn"][0]), rtol=1e-5)
