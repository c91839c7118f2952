"""tf.keras.metrics FBetaScore, F1Score, R2Score and MeanRelativeError
(keras/metrics_scores.py) against NumPy formulas and values recorded from TF 2.15 (Keras
2.15 eagerly: in compat.v1 graph mode its FBetaScore/R2Score update ops run only their
last assignment), configs, errors; the loss functions tf.keras.metrics also exports."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
M = tf.keras.metrics

FT = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 1], [1, 0, 1]], np.float32)
FP = np.array([[0.8, 0.1, 0.1], [0.3, 0.5, 0.2], [0.2, 0.2, 0.6], [0.1, 0.6, 0.3],
               [0.5, 0.1, 0.4]], np.float32)
FW = np.array([1.0, 2.0, 0.5, 1.0, 1.5], np.float32)
RT = np.array([[1.0, 2.0], [2.0, 3.5], [3.0, 1.0], [4.0, 5.0]], np.float32)
RP = np.array([[1.1, 1.8], [2.3, 3.0], [2.7, 1.5], [3.6, 5.2]], np.float32)
RW = np.array([1.0, 2.0, 0.5, 1.0], np.float32)


def _result(metric, *batches):
    updates = [metric.update_state(*batch) for batch in batches]
    result = metric.result()
    sess = K.backend.get_session()
    for update in updates:
        sess.run(update)
    return sess.run(result)


def np_fbeta(y_true, y_pred, beta=1.0, average=None, threshold=None, weights=None):
    if threshold is None:
        pred = (y_pred >= y_pred.max(-1, keepdims=True)) & (np.abs(y_pred) > 1e-9)
    else:
        pred = y_pred > threshold
    pred = pred.astype(np.float64)
    w = np.ones(len(y_true)) if weights is None else weights
    axis = None if average == "micro" else 0
    tp = ((pred * y_true) * w[:, None]).sum(axis)
    fp = ((pred * (1 - y_true)) * w[:, None]).sum(axis)
    fn = (((1 - pred) * y_true) * w[:, None]).sum(axis)
    precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1e-30), 0)
    recall = np.where(tp + fn > 0, tp / np.maximum(tp + fn, 1e-30), 0)
    denom = beta ** 2 * precision + recall
    score = (1 + beta ** 2) * np.where(denom > 0, precision * recall / np.maximum(denom, 1e-30),
                                       0)
    if average == "weighted":
        support = (y_true * w[:, None]).sum(0)
        return (score * support / support.sum()).sum()
    return score.mean() if average else score


F1_CASES = [  # kwargs, TF 2.15 result unweighted, with FW as sample_weight
    ({}, [1.0, 1.0, 0.5], [1.0, 1.0, 0.2857142984867096]),
    ({"average": "micro"}, 0.8333333730697632, 0.8275862336158752),
    ({"average": "macro", "threshold": 0.35}, 0.9333333373069763, 0.9333333373069763),
    ({"average": "weighted"}, 0.785714328289032, 0.7478991746902466),
]


@pytest.mark.parametrize("kwargs,tf_plain,tf_weighted", F1_CASES)
def test_f1_score(keras_graph, kwargs, tf_plain, tf_weighted):
    plain = _result(M.F1Score(**kwargs), (FT, FP))
    weighted = _result(M.F1Score(**kwargs), (FT, FP, FW))
    np.testing.assert_allclose(plain, tf_plain, rtol=1e-6)
    np.testing.assert_allclose(weighted, tf_weighted, rtol=1e-6)
    np.testing.assert_allclose(plain, np_fbeta(FT, FP, **kwargs), rtol=1e-6)
    np.testing.assert_allclose(weighted, np_fbeta(FT, FP, weights=FW, **kwargs), rtol=1e-6)


def test_fbeta_score_over_batches_and_state(keras_graph):
    metric = M.FBetaScore(beta=2.0)
    assert metric.variables == []
    got = _result(metric, (FT, FP), (FT[:2], FP[:2]))
    both_true, both_pred = np.concatenate([FT, FT[:2]]), np.concatenate([FP, FP[:2]])
    np.testing.assert_allclose(got, [1.0, 1.0, 0.38461539149284363], rtol=1e-6)  # TF 2.15
    np.testing.assert_allclose(got, np_fbeta(both_true, both_pred, beta=2.0), rtol=1e-6)
    assert [v.name.split(":")[0] for v in metric.variables] == [
        "true_positives", "false_positives", "false_negatives", "intermediate_weights"]
    macro = _result(M.FBetaScore(beta=0.5, average="macro", threshold=0.3), (FT, FP),
                    (FT[:2], FP[:2]))
    np.testing.assert_allclose(macro, 0.9696969985961914, rtol=1e-6)  # TF 2.15
    metric.reset_state()
    np.testing.assert_array_equal(K.backend.get_value(metric.true_positives), [0, 0, 0])


def test_fbeta_configs_and_errors():
    assert M.F1Score().get_config() == {"name": "f1_score", "dtype": "float32",  # TF 2.15
                                        "average": None, "threshold": None}
    config = M.FBetaScore(average="macro", beta=2.0, threshold=0.4).get_config()
    assert config == {"name": "fbeta_score", "dtype": "float32", "average": "macro",
                      "beta": 2.0, "threshold": 0.4}
    assert M.FBetaScore.from_config(config).get_config() == config
    assert type(M.deserialize(M.serialize(M.F1Score()))) is M.F1Score
    errors = [
        (lambda: M.F1Score(average="foo"), "Invalid `average` argument value. Expected one "
         "of: {None, 'micro', 'macro', 'weighted'}. Received: average=foo"),
        (lambda: M.FBetaScore(beta=1), "Invalid `beta` argument value. It should be a "
         "Python float. Received: beta=1 of type '<class 'int'>'"),
        (lambda: M.FBetaScore(beta=-1.0), "Invalid `beta` argument value. It should be > 0. "
         "Received: beta=-1.0"),
        (lambda: M.F1Score(threshold=1), "Invalid `threshold` argument value. It should be "
         "a Python float. Received: threshold=1 of type '<class 'int'>'"),
        (lambda: M.F1Score(threshold=1.5), "Invalid `threshold` argument value. It should "
         "verify 0 < threshold <= 1. Received: threshold=1.5"),
        (lambda: M.F1Score().update_state(FT[:, 0], FP[:, 0]), "FBetaScore expects 2D "
         "inputs with shape (batch_size, output_dim). Received input shapes: "
         "y_pred.shape=(5,) and y_true.shape=(5,)."),
    ]
    with tf.Graph().as_default():
        for make, message in errors:
            with pytest.raises(ValueError) as info:
                make()
            assert str(info.value) == message


def np_r2(y_true, y_pred, weights=None, aggregation="uniform_average", regressors=0):
    w = np.ones(len(y_true)) if weights is None else weights
    w = w[:, None] * np.ones_like(y_true)
    mean = (w * y_true).sum(0) / w.sum(0)
    total = (w * (y_true - mean) ** 2).sum(0)
    scores = 1 - (w * (y_true - y_pred) ** 2).sum(0) / total
    if aggregation == "uniform_average":
        score = scores.mean()
    elif aggregation == "variance_weighted_average":
        score = (total * scores).sum() / total.sum()
    else:
        score = scores
    if regressors:
        n = y_true.size
        score = 1 - (1 - score) * (n - 1) / (n - regressors - 1)
    return score


R2_CASES = [  # kwargs, TF 2.15 (eager) result unweighted, with RW as sample_weight
    ({}, 0.9334353804588318, 0.9120649099349976),
    ({"class_aggregation": None}, [0.9300000071525574, 0.9368707537651062],
     [0.9210000038146973, 0.9031297564506531]),
    ({"class_aggregation": "variance_weighted_average"}, 0.934449315071106,
     0.9104071855545044),
    ({"num_regressors": 1}, 0.9223412871360779, 0.8974090814590454),
]


@pytest.mark.parametrize("kwargs,tf_plain,tf_weighted", R2_CASES)
def test_r2_score(keras_graph, kwargs, tf_plain, tf_weighted):
    plain = _result(M.R2Score(**kwargs), (RT, RP))
    weighted = _result(M.R2Score(**kwargs), (RT[:2], RP[:2], RW[:2]), (RT[2:], RP[2:], RW[2:]))
    np.testing.assert_allclose(plain, tf_plain, rtol=2e-6)
    np.testing.assert_allclose(weighted, tf_weighted, rtol=2e-6)
    aggregation = kwargs.get("class_aggregation", "uniform_average")
    regressors = kwargs.get("num_regressors", 0)
    np.testing.assert_allclose(plain, np_r2(RT, RP, None, aggregation, regressors),
                               rtol=1e-5)
    np.testing.assert_allclose(weighted, np_r2(RT, RP, RW, aggregation, regressors),
                               rtol=1e-5)


def test_r2_score_adjusted_falls_back_and_config(keras_graph):
    # n = 2 values seen, p = 1 or 3 regressors: n - 1 <= p, so the plain score (Keras
    # warns and falls back to it)
    for regressors in (1, 3):
        fallback = _result(M.R2Score(num_regressors=regressors), (RT[:1, :1], RP[:1, :1]),
                           (RT[1:2, :1], RP[1:2, :1]))
        assert fallback == pytest.approx(np_r2(RT[:2, :1], RP[:2, :1]), rel=1e-5)
    metric = M.R2Score(class_aggregation=None, num_regressors=2)
    assert metric.get_config() == {"name": "r2_score", "dtype": "float32",
                                   "class_aggregation": None, "num_regressors": 2}
    assert M.R2Score.from_config(metric.get_config()).get_config() == metric.get_config()
    with pytest.raises(ValueError, match=r"Invalid value for argument `class_aggregation`. "
                       r"Expected one of \(None, 'uniform_average', "
                       r"'variance_weighted_average'\). Received: class_aggregation=x"):
        M.R2Score(class_aggregation="x")
    with pytest.raises(ValueError, match="Invalid value for argument `num_regressors`. "
                       "Expected a value >= 0. Received: num_regressors=-1"):
        M.R2Score(num_regressors=-1)
    with pytest.raises(ValueError, match=r"R2Score expects 2D inputs with shape "
                       r"\(batch_size, output_dim\). Received input shapes: "
                       r"y_pred.shape=\(4,\) and y_true.shape=\(4,\)."):
        M.R2Score().update_state(RT[:, 0], RP[:, 0])


def test_mean_relative_error(keras_graph):
    y_true, y_pred = np.array([1, 2, 3, 4.0]), np.array([2, 2, 1, 3.0])
    plain = M.MeanRelativeError(normalizer=[1.0, 2.0, 4.0, 0.0])
    weighted = M.MeanRelativeError(normalizer=np.array([1.0, 2.0, 4.0, 0.5]))
    got = [_result(plain, (y_true, y_pred)),
           _result(weighted, (y_true, y_pred, np.array([1, 0, 2, 1.0])))]
    np.testing.assert_allclose(got, [0.375, 1.0], rtol=1e-6)  # TF 2.15
    # NumPy: mean(|t - p| / n), 0 where n == 0; weighted: sum(w * e) / sum(w)
    np.testing.assert_allclose(got[0], np.mean([1.0, 0.0, 0.5, 0.0]))
    np.testing.assert_allclose(got[1], (1.0 + 2 * 0.5 + 2.0) / 4)
    assert plain.name == "mean_relative_error"
    config = plain.get_config()
    assert config["name"] == "mean_relative_error" and config["dtype"] == "float32"
    np.testing.assert_array_equal(config["normalizer"], [1.0, 2.0, 4.0, 0.0])
    assert M.MeanRelativeError(3.0, name="mre").get_config()["normalizer"] == 3.0


def test_loss_functions_in_metrics(keras_graph):
    a, b = np.array([[1.0, 2.0], [0.5, 0.5]]), np.array([[2.0, 1.0], [0.1, 0.9]])
    assert M.cosine is M.cosine_proximity is K.losses.cosine_similarity
    assert M.kl_divergence is K.losses.kl_divergence
    assert M.binary_focal_crossentropy is K.losses.binary_focal_crossentropy
    assert M.categorical_focal_crossentropy is K.losses.categorical_focal_crossentropy
    sess = K.backend.get_session()
    got = sess.run([M.cosine(a, b), M.cosine_proximity(a, b), M.kl_divergence(a, b)])
    # TF 2.15: tf.keras.metrics.cosine / cosine_proximity / kl_divergence(a, b)
    np.testing.assert_allclose(got[0], [-0.7999999999999999, -0.7808688094430303])
    np.testing.assert_allclose(got[1], got[0])
    np.testing.assert_allclose(got[2], [0.0, 0.5108256237659907], rtol=1e-6)
    # TF 2.15: get('cosine_proximity') is the (positive) similarity metric, 1 here
    assert sess.run(M.get("cosine_proximity")(a, a)).tolist() == pytest.approx([1.0, 1.0])
    for name in ("cosine", "kl_divergence", "binary_focal_crossentropy"):
        with pytest.raises(ValueError, match="Unknown metric function: '%s'" % name):
            M.get(name)  # as Keras 2.15: not found by name
