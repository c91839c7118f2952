"""The canned estimators (tensorweave/estimator/canned/): Linear*, DNN*, DNNLinearCombined*,
Baseline*, their heads (loss, metrics, predictions, export signatures) and the parse-spec
helpers.

References: NumPy computations of models restored from checkpoints written with chosen
weights (as TF's dnn_testing_utils do), and values TF 2.15.1 + tensorflow-estimator 2.15
(`tf.compat.v1.estimator`, graph mode) gave for the same programs, marked "TF 2.15".
"""
import itertools
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.canned import head as head_lib

fc = tf.feature_column
E = tf.estimator
Reduction = tf.losses.Reduction
X_COL = fc.numeric_column("x", shape=(2,))

# the 2-layer binary DNN of most DNN tests: x [3, 2] -> 2 -> 2 -> 1
X3 = np.array([[1., 2.], [3., -1.], [-2., .5]], np.float32)
Y3 = np.array([[1], [0], [1]], np.int64)
DNN_WEIGHTS = {
    "dnn/hiddenlayer_0/kernel": [[.6, .5], [-.6, -.5]],
    "dnn/hiddenlayer_0/bias": [.1, -.1],
    "dnn/hiddenlayer_1/kernel": [[1., .8], [-.8, -1.]],
    "dnn/hiddenlayer_1/bias": [.2, -.2],
    "dnn/logits/kernel": [[-1.], [1.]],
    "dnn/logits/bias": [.3],
}
# the 4-example data of the training tests
X4 = np.array([[1., 2.], [3., -1.], [-2., .5], [.5, .5]], np.float32)
Y4 = np.array([[1], [0], [1], [1]], np.int64)
W4 = np.array([[1.], [2.], [.5], [0.]], np.float32)


# --- helpers ------------------------------------------------------------------------------
def write_checkpoint(model_dir, values, global_step=10):
    """A checkpoint in `model_dir` holding `values` (name -> array) and the global step."""
    os.makedirs(str(model_dir), exist_ok=True)
    with tf.Graph().as_default():
        for name, value in values.items():
            tf.Variable(np.asarray(value, np.float32), name=name)
        tf.Variable(global_step, name=tf.GraphKeys.GLOBAL_STEP, dtype=tf.int64)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, os.path.join(str(model_dir), "model.ckpt"))
    return str(model_dir)


def input_fn(labels, **features):
    return lambda: ({k: tf.constant(v) for k, v in features.items()}, tf.constant(labels))


def evaluate(est, fn):
    return {k: float(v) for k, v in est.evaluate(fn, steps=1).items()}


def predict(est, n, **features):
    """The first n predictions (constant features never run out, so the predict loop is
    cut off)."""
    fn = lambda: {k: tf.constant(v) for k, v in features.items()}  # noqa: E731
    return list(itertools.islice(est.predict(fn), n))


def sigmoid(z):
    return 1. / (1. + np.exp(-z))


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def sigmoid_ce(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def relu(z):
    return np.maximum(z, 0)


def dnn_forward(x, weights, n_hidden):
    """The activations of each hidden layer and the logits."""
    w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    acts = [x.astype(np.float64)]
    for i in range(n_hidden):
        acts.append(relu(acts[-1] @ w["dnn/hiddenlayer_%d/kernel" % i]
                         + w["dnn/hiddenlayer_%d/bias" % i]))
    return acts, acts[-1] @ w["dnn/logits/kernel"] + w["dnn/logits/bias"]


def weighted_auc(labels, scores, weights):
    """Exact weighted ROC AUC (the Mann-Whitney statistic)."""
    pos, neg = labels.ravel() == 1, labels.ravel() == 0
    s, w = scores.ravel(), weights.ravel()
    num = sum(w[i] * w[j] * ((s[i] > s[j]) + .5 * (s[i] == s[j]))
              for i in np.flatnonzero(pos) for j in np.flatnonzero(neg))
    return num / (w[pos].sum() * w[neg].sum())


BINARY_METRIC_KEYS = {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                      "average_loss", "global_step", "label/mean", "loss", "precision",
                      "prediction/mean", "recall"}


# --- DNN from checkpoints -----------------------------------------------------------------
def test_dnn_classifier_evaluates_and_predicts_the_checkpointed_network(tmp_path):
    model_dir = write_checkpoint(tmp_path, DNN_WEIGHTS)
    est = E.DNNClassifier([2, 2], [X_COL], model_dir=model_dir, dropout=.5)  # not in eval
    _, logits = dnn_forward(X3, DNN_WEIGHTS, 2)
    np.testing.assert_allclose(logits.ravel(), [.1, -.88, .1], atol=1e-6)
    ce = sigmoid_ce(Y3, logits)
    metrics = evaluate(est, input_fn(Y3, x=X3))
    assert set(metrics) == BINARY_METRIC_KEYS
    expected = {"loss": ce.sum(), "average_loss": ce.mean(), "accuracy": 1., "precision": 1.,
                "recall": 1., "label/mean": 2 / 3, "accuracy_baseline": 2 / 3,
                "prediction/mean": sigmoid(logits).mean(), "auc": 1., "global_step": 10.,
                "auc_precision_recall": 1.}                        # TF 2.15 for AUC-PR
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key

    preds = predict(est, 3, x=X3)
    assert set(preds[0]) == {"logits", "logistic", "probabilities", "class_ids", "classes",
                             "all_class_ids", "all_classes"}
    for p, z in zip(preds, logits.ravel()):
        np.testing.assert_allclose(p["logits"], [z], rtol=1e-6)
        np.testing.assert_allclose(p["logistic"], [sigmoid(z)], rtol=1e-6)
        np.testing.assert_allclose(p["probabilities"], [1 - sigmoid(z), sigmoid(z)],
                                   rtol=1e-6)
        assert p["class_ids"].tolist() == [int(z > 0)]
        assert p["classes"].tolist() == [str(int(z > 0)).encode()]
        assert p["all_class_ids"].tolist() == [0, 1]
        assert p["all_classes"].tolist() == [b"0", b"1"]


def test_dnn_classifier_sgd_step_is_the_hand_computed_gradient_step(tmp_path):
    model_dir = write_checkpoint(tmp_path, DNN_WEIGHTS)
    # a callable optimizer: called inside the model_fn
    est = E.DNNClassifier([2, 2], [X_COL], model_dir=model_dir,
                          optimizer=lambda: tf.train.GradientDescentOptimizer(0.1))
    est.train(input_fn(Y3, x=X3), steps=1)

    # backprop of the SUM-reduced sigmoid cross entropy
    acts, logits = dnn_forward(X3, DNN_WEIGHTS, 2)
    w = {k: np.asarray(v, np.float64) for k, v in DNN_WEIGHTS.items()}
    grad = sigmoid(logits) - Y3
    expected = {"dnn/logits/kernel": w["dnn/logits/kernel"] - .1 * acts[2].T @ grad,
                "dnn/logits/bias": w["dnn/logits/bias"] - .1 * grad.sum(0)}
    grad = (grad @ w["dnn/logits/kernel"].T) * (acts[2] > 0)
    for i in (1, 0):
        kernel = w["dnn/hiddenlayer_%d/kernel" % i]
        expected["dnn/hiddenlayer_%d/kernel" % i] = kernel - .1 * acts[i].T @ grad
        expected["dnn/hiddenlayer_%d/bias" % i] = (w["dnn/hiddenlayer_%d/bias" % i]
                                                   - .1 * grad.sum(0))
        grad = (grad @ kernel.T) * (acts[i] > 0)
    for name, value in expected.items():
        np.testing.assert_allclose(est.get_variable_value(name), value, rtol=1e-5,
                                   atol=1e-7, err_msg=name)
    # TF 2.15's numbers for two of them
    np.testing.assert_allclose(est.get_variable_value("dnn/hiddenlayer_0/kernel").ravel(),
                               [.687953, .429637, -.629318, -.476546], atol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("dnn/logits/bias"), [.365686],
                               atol=1e-6)
    assert est.get_variable_value("global_step") == 11
    assert sorted(est.get_variable_names()) == sorted(list(DNN_WEIGHTS) + ["global_step"])


def test_dnn_multi_class_weighted_sum_over_batch_size(tmp_path):
    weights = dict(DNN_WEIGHTS)
    weights["dnn/logits/kernel"] = [[-1., 1., .5], [1., -.5, .2]]
    weights["dnn/logits/bias"] = [.3, -.1, 0.]
    est = E.DNNClassifier([2, 2], [X_COL], model_dir=write_checkpoint(tmp_path, weights),
                          n_classes=3, weight_column="w",
                          loss_reduction=Reduction.SUM_OVER_BATCH_SIZE)
    labels = np.array([[2], [0], [1]], np.int64)
    example_weights = np.array([[1.], [2.], [.5]], np.float32)
    _, logits = dnn_forward(X3, weights, 2)
    probs = softmax(logits)
    ce = -np.log(probs[np.arange(3), labels.ravel()])
    w = example_weights.ravel()
    metrics = evaluate(est, input_fn(labels, x=X3, w=example_weights))
    assert set(metrics) == {"accuracy", "average_loss", "global_step", "loss"}
    assert metrics["loss"] == pytest.approx((w * ce).sum() / 3, rel=1e-5)
    assert metrics["loss"] == pytest.approx(2.23038, rel=1e-5)         # TF 2.15
    assert metrics["average_loss"] == pytest.approx((w * ce).sum() / w.sum(), rel=1e-5)
    correct = probs.argmax(1) == labels.ravel()
    assert metrics["accuracy"] == pytest.approx((w * correct).sum() / w.sum())

    preds = predict(est, 3, x=X3)
    assert set(preds[1]) == {"logits", "probabilities", "class_ids", "classes",
                             "all_class_ids", "all_classes"}
    for p, z, pr in zip(preds, logits, probs):
        np.testing.assert_allclose(p["logits"], z, rtol=1e-6)
        np.testing.assert_allclose(p["probabilities"], pr, rtol=1e-5)
        assert p["class_ids"].tolist() == [pr.argmax()]
        assert p["classes"].tolist() == [str(pr.argmax()).encode()]
        assert p["all_class_ids"].tolist() == [0, 1, 2]
        assert p["all_classes"].tolist() == [b"0", b"1", b"2"]


def test_dnn_regressor_with_three_label_dimensions(tmp_path):
    weights = dict(DNN_WEIGHTS)
    weights["dnn/logits/kernel"] = [[-1., 1., .5], [1., -.5, .2]]
    weights["dnn/logits/bias"] = [.3, -.1, 0.]
    est = E.DNNRegressor([2, 2], [X_COL], model_dir=write_checkpoint(tmp_path, weights),
                         label_dimension=3)
    labels = np.array([[1., 0., 2.], [0., 1., 1.], [-1., 2., 0.]], np.float32)
    _, logits = dnn_forward(X3, weights, 2)
    metrics = evaluate(est, input_fn(labels, x=X3))
    assert set(metrics) == {"average_loss", "global_step", "label/mean", "loss",
                            "prediction/mean"}
    squared = (logits - labels) ** 2
    assert metrics["loss"] == pytest.approx(squared.sum(), rel=1e-5)     # SUM
    assert metrics["loss"] == pytest.approx(10.2089, rel=1e-5)          # TF 2.15
    assert metrics["average_loss"] == pytest.approx(squared.mean(), rel=1e-5)
    assert metrics["label/mean"] == pytest.approx(labels.mean(), rel=1e-6)
    assert metrics["prediction/mean"] == pytest.approx(logits.mean(), rel=1e-5)
    preds = predict(est, 3, x=X3)
    assert set(preds[0]) == {"predictions"}
    np.testing.assert_allclose([p["predictions"] for p in preds], logits, rtol=1e-5)


def test_dnn_batch_norm_eval_uses_moving_statistics_and_train_updates_them(tmp_path):
    weights = {"dnn/hiddenlayer_0/kernel": [[.6, .5], [-.6, -.5]],
               "dnn/hiddenlayer_0/bias": [.1, -.1],
               "dnn/hiddenlayer_0/batchnorm_0/gamma": [1.5, .5],
               "dnn/hiddenlayer_0/batchnorm_0/beta": [.1, -.2],
               "dnn/hiddenlayer_0/batchnorm_0/moving_mean": [.3, .2],
               "dnn/hiddenlayer_0/batchnorm_0/moving_variance": [4., 2.],
               "dnn/logits/kernel": [[-1.], [1.]],
               "dnn/logits/bias": [.3]}
    w = {k: np.asarray(v) for k, v in weights.items()}
    bn = "dnn/hiddenlayer_0/batchnorm_0/"
    hidden = relu(X3 @ w["dnn/hiddenlayer_0/kernel"] + w["dnn/hiddenlayer_0/bias"])
    normed = (w[bn + "gamma"] * (hidden - w[bn + "moving_mean"])
              / np.sqrt(w[bn + "moving_variance"] + 1e-3) + w[bn + "beta"])
    logits = normed @ w["dnn/logits/kernel"] + w["dnn/logits/bias"]
    est = E.DNNClassifier([2], [X_COL], model_dir=write_checkpoint(tmp_path / "a", weights),
                          batch_norm=True)
    np.testing.assert_allclose([p["logits"] for p in predict(est, 3, x=X3)], logits,
                               rtol=1e-5)
    np.testing.assert_allclose(logits.ravel(), [.154279, -1.048903, .154279], atol=1e-6)

    est = E.DNNClassifier([2], [X_COL], model_dir=write_checkpoint(tmp_path / "b", weights),
                          batch_norm=True, optimizer=tf.train.GradientDescentOptimizer(.1))
    est.train(input_fn(Y3.ravel(), x=X3), steps=1)     # rank-1 labels are accepted
    # momentum 0.999 toward the batch mean and (biased) batch variance
    np.testing.assert_allclose(est.get_variable_value(bn + "moving_mean"),
                               .999 * w[bn + "moving_mean"] + .001 * hidden.mean(0),
                               rtol=1e-6)
    np.testing.assert_allclose(est.get_variable_value(bn + "moving_variance"),
                               .999 * w[bn + "moving_variance"] + .001 * hidden.var(0),
                               rtol=1e-6)
    # TF 2.15 after the same step
    np.testing.assert_allclose(est.get_variable_value(bn + "gamma"), [1.574346, .425673],
                               atol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("dnn/logits/kernel").ravel(),
                               [-1.10687, .953538], atol=1e-6)


# --- wide & deep --------------------------------------------------------------------------
CAT = fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"])
WIDE_DEEP_WEIGHTS = {
    "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights":
        [[1., 0.], [0., 1.], [.5, -.5]],
    "dnn/hiddenlayer_0/kernel": [[.6, .5, .1], [-.6, -.5, .2], [.3, .1, -.4], [.2, -.3, .5]],
    "dnn/hiddenlayer_0/bias": [.1, -.1, .05],
    "dnn/logits/kernel": [[-1.], [1.], [.5]],
    "dnn/logits/bias": [.3],
    "linear/linear_model/x/weights": [[.2], [-.1]],
    "linear/linear_model/c/weights": [[.4], [-.2], [.1]],
    "linear/linear_model/bias_weights": [.05],
}
# the ids of c per example: [a], [b, c], [c]
C_IDS = [[0], [1, 2], [2]]


def wide_deep_features():
    return {"x": tf.constant(X3),
            "c": tf.SparseTensor([[0, 0], [1, 0], [1, 1], [2, 0]], ["a", "b", "c", "c"],
                                 [3, 2])}


def linear_logits(weights, combine=np.sum):
    w = {k: np.asarray(v) for k, v in weights.items()}
    cat = np.array([combine(w["linear/linear_model/c/weights"][ids, 0]) for ids in C_IDS])
    return (X3 @ w["linear/linear_model/x/weights"] + cat[:, None]
            + w["linear/linear_model/bias_weights"])


def test_dnn_linear_combined_logits_are_the_sum_of_both_parts(tmp_path):
    model_dir = write_checkpoint(tmp_path, WIDE_DEEP_WEIGHTS)
    est = E.DNNLinearCombinedClassifier(
        model_dir, linear_feature_columns=[X_COL, CAT],
        dnn_feature_columns=[X_COL, fc.embedding_column(CAT, dimension=2)],
        dnn_hidden_units=[3])
    w = {k: np.asarray(v) for k, v in WIDE_DEEP_WEIGHTS.items()}
    table = w["dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights"]
    embedded = np.stack([table[ids].mean(0) for ids in C_IDS])     # combiner "mean"
    # input_layer orders the columns by name: c_embedding, then x
    _, dnn_logits = dnn_forward(np.concatenate([embedded, X3], 1), WIDE_DEEP_WEIGHTS, 1)
    logits = dnn_logits + linear_logits(WIDE_DEEP_WEIGHTS)
    np.testing.assert_allclose(logits.ravel(), [-.275, .65, .375], atol=1e-6)  # TF 2.15
    preds = list(itertools.islice(est.predict(wide_deep_features), 3))
    np.testing.assert_allclose([p["logits"] for p in preds], logits, rtol=1e-5)
    metrics = evaluate(est, lambda: (wide_deep_features(), tf.constant(Y3)))
    assert metrics["loss"] == pytest.approx(sigmoid_ce(Y3, logits).sum(), rel=1e-5)

    # one step, each part with its own optimizer (an instance and a callable)
    est = E.DNNLinearCombinedClassifier(
        write_checkpoint(tmp_path / "train", WIDE_DEEP_WEIGHTS),
        linear_feature_columns=[X_COL, CAT],
        linear_optimizer=tf.train.GradientDescentOptimizer(.1),
        dnn_feature_columns=[X_COL, fc.embedding_column(CAT, dimension=2)],
        dnn_optimizer=lambda: tf.train.GradientDescentOptimizer(.2), dnn_hidden_units=[3])
    est.train(lambda: (wide_deep_features(), tf.constant(Y3)), steps=1)
    grad = sigmoid(logits) - Y3     # d loss / d logits; the linear part's SGD by hand
    x_weights = w["linear/linear_model/x/weights"] - .1 * X3.T @ grad
    c_grad = np.zeros(3)
    for ids, g in zip(C_IDS, grad.ravel()):
        c_grad[ids] += g
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights"),
                               x_weights, rtol=1e-5)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/c/weights"),
                               w["linear/linear_model/c/weights"] - .1 * c_grad[:, None],
                               rtol=1e-5)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"),
                               w["linear/linear_model/bias_weights"] - .1 * grad.sum(),
                               rtol=1e-5)
    tf215 = {  # TF 2.15 after the same step
        "dnn/hiddenlayer_0/bias": [.036271, -.149935, .147565],
        "dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights":
            [.937485, .079565, .00657, .99343, .502497, -.490277],
        "dnn/logits/kernel": [-.929699, .938372, .670788],
        "dnn/logits/bias": [.363729]}
    for name, value in tf215.items():
        np.testing.assert_allclose(est.get_variable_value(name).ravel(), value, atol=1e-6,
                                   err_msg=name)
    assert est.get_variable_value("global_step") == 11


@pytest.mark.parametrize("make, combine", [
    (lambda d: E.DNNLinearCombinedRegressor(d, linear_feature_columns=[X_COL, CAT],
                                            linear_sparse_combiner="mean"), np.mean),
    (lambda d: E.LinearRegressor([X_COL, CAT], model_dir=d, sparse_combiner="sqrtn"),
     lambda v: v.sum() / np.sqrt(len(v))),
    (lambda d: E.LinearRegressor([X_COL, CAT], model_dir=d), np.sum),
])
def test_linear_sparse_combiners(tmp_path, make, combine):
    est = make(write_checkpoint(tmp_path, WIDE_DEEP_WEIGHTS))
    labels = np.array([[1.], [2.], [3.]], np.float32)
    logits = linear_logits(WIDE_DEEP_WEIGHTS, combine)
    metrics = evaluate(est, lambda: (wide_deep_features(), tf.constant(labels)))
    assert metrics["average_loss"] == pytest.approx(((logits - labels) ** 2).mean(),
                                                    rel=1e-5)
    assert metrics["prediction/mean"] == pytest.approx(logits.mean(), rel=1e-5)


def test_partitioned_linear_weights_train_and_save_as_one_variable(tmp_path):
    column = fc.categorical_column_with_identity("c", 4)
    ids = np.array([[0], [1], [3], [2]], np.int64)
    est = E.LinearClassifier([column], model_dir=str(tmp_path), optimizer="SGD",
                             partitioner=tf.fixed_size_partitioner(2))
    est.train(input_fn(Y4, c=ids), steps=2)
    weights, bias = np.zeros(4), 0.
    for _ in range(2):                  # SGD, rate 0.2, on the SUM loss
        grad = sigmoid(weights[ids.ravel()] + bias) - Y4.ravel()
        np.subtract.at(weights, ids.ravel(), .2 * grad)
        bias -= .2 * grad.sum()
    value = est.get_variable_value("linear/linear_model/c/weights")
    assert value.shape == (4, 1)        # both shards, saved as the full variable
    np.testing.assert_allclose(value.ravel(), weights, rtol=1e-5)
    np.testing.assert_allclose(value.ravel(), [.1851115, -.20499584, .1851115, .1851115],
                               rtol=1e-6)                               # TF 2.15
    assert sorted(est.get_variable_names()) == [
        "global_step", "linear/linear_model/bias_weights", "linear/linear_model/c/weights"]


# --- optimizers ---------------------------------------------------------------------------
# TF 2.15: LinearClassifier on (X4, Y4), 2 steps, from zeros: (bias, x weights)
_FTRL_OR_ADAGRAD = (.3154410123825073, [-.3024289906024933, .31945300102233887])
_SGD = (.36280301213264465, [-.4705199897289276, .6511080265045166])


@pytest.mark.parametrize("optimizer, expected", [
    ("Adagrad", _FTRL_OR_ADAGRAD),
    ("Adam", (.398158997297287, [-.39267799258232117, .3970769941806793])),
    ("Ftrl", _FTRL_OR_ADAGRAD),
    ("RMSProp", (.3672119975090027, [-.4495530128479004, .578715980052948])),
    ("SGD", _SGD),
    (None, _FTRL_OR_ADAGRAD),     # FTRL, learning rate min(0.2, 1/sqrt(1 column))
    ("default", _FTRL_OR_ADAGRAD),  # the argument left out: 'Ftrl'
    (tf.train.GradientDescentOptimizer(.2), _SGD),
    (lambda: tf.train.GradientDescentOptimizer(.2), _SGD),
])
def test_linear_classifier_optimizers(tmp_path, optimizer, expected):
    kwargs = {} if optimizer == "default" else {"optimizer": optimizer}
    est = E.LinearClassifier([X_COL], model_dir=str(tmp_path), **kwargs)
    est.train(input_fn(Y4, x=X4), steps=2)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"),
                               [expected[0]], rtol=1e-5)
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/x/weights").ravel(), expected[1],
        rtol=1e-5)


def test_sgd_by_name_uses_the_linear_learning_rate(tmp_path):
    est = E.LinearClassifier([X_COL], model_dir=str(tmp_path), optimizer="SGD")
    est.train(input_fn(Y4, x=X4), steps=2)
    weights, bias = np.zeros((2, 1)), 0.
    for _ in range(2):      # plain gradient descent, rate 0.2, on the SUM loss
        grad = sigmoid(X4 @ weights + bias) - Y4
        weights, bias = weights - .2 * X4.T @ grad, bias - .2 * grad.sum()
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights"),
                               weights, rtol=1e-5)
    assert est.get_variable_value("linear/linear_model/bias_weights")[0] == pytest.approx(
        bias, rel=1e-5)


def test_default_learning_rates(tmp_path):
    """TF's defaults: DNN Adagrad 0.05; wide & deep Adagrad 0.001 and FTRL
    min(0.005, 1/sqrt(#linear columns)); optimizer=None on a linear model: FTRL
    min(0.2, 1/sqrt(#columns)). Same seed, so the DNN initial weights agree."""
    config = E.RunConfig(tf_random_seed=7)

    def trained(make, name, fn=input_fn(Y4, x=X4)):
        est = make(str(tmp_path / name))
        est.train(fn, steps=2)
        return {n: est.get_variable_value(n) for n in est.get_variable_names()
                if "Adagrad" not in n and "Ftrl" not in n}

    def assert_same(a, b, same=True):
        assert sorted(a) == sorted(b)
        close = all(np.allclose(a[n], b[n], rtol=1e-6, atol=1e-7) for n in a)
        assert close == same

    default = trained(lambda d: E.DNNClassifier([3], [X_COL], model_dir=d, config=config),
                      "dnn")
    assert_same(default, trained(lambda d: E.DNNClassifier(
        [3], [X_COL], model_dir=d, config=config,
        optimizer=tf.train.AdagradOptimizer(.05)), "dnn_05"))
    assert_same(default, trained(lambda d: E.DNNClassifier(
        [3], [X_COL], model_dir=d, config=config,
        optimizer=tf.train.AdagradOptimizer(.1)), "dnn_1"), same=False)

    default = trained(lambda d: E.DNNLinearCombinedRegressor(
        d, linear_feature_columns=[X_COL], dnn_feature_columns=[X_COL],
        dnn_hidden_units=[3], config=config), "wd")
    assert_same(default, trained(lambda d: E.DNNLinearCombinedRegressor(
        d, linear_feature_columns=[X_COL], dnn_feature_columns=[X_COL],
        dnn_hidden_units=[3], config=config, dnn_optimizer=tf.train.AdagradOptimizer(.001),
        linear_optimizer=tf.train.FtrlOptimizer(.005)), "wd_explicit"))
    assert_same(default, trained(lambda d: E.DNNLinearCombinedRegressor(
        d, linear_feature_columns=[X_COL], dnn_feature_columns=[X_COL],
        dnn_hidden_units=[3], config=config, dnn_optimizer=tf.train.AdagradOptimizer(.002),
        linear_optimizer=tf.train.FtrlOptimizer(.005)), "wd_other"), same=False)

    # 30 columns: FTRL at 1/sqrt(30) < 0.2
    columns = [fc.numeric_column("x%d" % i) for i in range(30)]
    features = {"x%d" % i: X4[:, i % 2:i % 2 + 1] * (1 + i / 10) for i in range(30)}
    fn = input_fn(Y4, **features)
    default = trained(lambda d: E.LinearClassifier(columns, model_dir=d, optimizer=None),
                      "linear", fn)
    assert_same(default, trained(lambda d: E.LinearClassifier(
        columns, model_dir=d, optimizer=tf.train.FtrlOptimizer(1 / np.sqrt(30))),
        "linear_explicit", fn))
    assert_same(default, trained(lambda d: E.LinearClassifier(columns, model_dir=d),
                                 "linear_ftrl_name", fn), same=False)    # 'Ftrl': 0.2


def test_training_summaries(tmp_path):
    """The head's "loss" and, for SUM, "average_loss" (per unit of weight); each DNN
    layer's fraction of zeros; the linear model's bias and fraction of zero weights.
    Tags as TF 2.15 writes them."""
    HISTOGRAM = -1.     # noqa: N806 (stands for a histogram's value)
    def summaries(model_dir):
        out = {}
        for path in sorted(tmp_path.glob(model_dir + "/events*")):
            for event in tf.train.summary_iterator(str(path)):
                for value in event.summary.value:
                    out[value.tag] = (value.simple_value if value.HasField("simple_value")
                                      else HISTOGRAM)
        return out

    for name, reduction in (("sum", Reduction.SUM),
                            ("sobs", Reduction.SUM_OVER_BATCH_SIZE)):
        est = E.DNNClassifier([2, 2], [X_COL], loss_reduction=reduction,
                              model_dir=write_checkpoint(tmp_path / name, DNN_WEIGHTS),
                              optimizer=tf.train.GradientDescentOptimizer(.1))
        est.train(input_fn(Y3, x=X3), steps=1)
        acts, logits = dnn_forward(X3, DNN_WEIGHTS, 2)
        ce = sigmoid_ce(Y3, logits)
        expected = {"dnn/dnn/hiddenlayer_0/fraction_of_zero_values": (acts[1] == 0).mean(),
                    "dnn/dnn/hiddenlayer_0/activation": HISTOGRAM,
                    "dnn/dnn/hiddenlayer_1/fraction_of_zero_values": (acts[2] == 0).mean(),
                    "dnn/dnn/hiddenlayer_1/activation": HISTOGRAM,
                    "dnn/dnn/logits/fraction_of_zero_values": 0.,
                    "dnn/dnn/logits/activation": HISTOGRAM}
        if reduction == Reduction.SUM:
            expected.update({"loss": ce.sum(), "average_loss": ce.mean()})
        else:
            expected["loss"] = ce.mean()
        assert summaries(name) == pytest.approx(expected, rel=1e-5)

    est = E.LinearClassifier([X_COL], model_dir=str(tmp_path / "linear"), weight_column="w")
    est.train(input_fn(Y4, x=X4, w=W4), steps=1)
    assert summaries("linear") == pytest.approx({
        "linear/bias": 0., "linear/fraction_of_zero_weights": 1.,
        "loss": W4.sum() * np.log(2), "average_loss": np.log(2)}, rel=1e-5)


# --- heads --------------------------------------------------------------------------------
X6 = np.array([[1., 2.], [3., -1.], [-2., .2], [.5, .5], [2., 1.5], [-1., -1.]], np.float32)
Y6 = np.array([[0], [1], [1], [0], [1], [0]], np.int64)
W6 = np.array([[1.], [2.], [.5], [0.], [1.5], [2.]], np.float32)
LINEAR_WEIGHTS = {"linear/linear_model/x/weights": [[.5], [-1.]],
                  "linear/linear_model/bias_weights": [.1]}


@pytest.mark.parametrize("reduction, reduce", [
    (Reduction.SUM, lambda loss, w: loss.sum()),
    (Reduction.SUM_OVER_BATCH_SIZE, lambda loss, w: loss.sum() / loss.size),
    (Reduction.MEAN, lambda loss, w: loss.sum() / w.sum()),
    (Reduction.SUM_BY_NONZERO_WEIGHTS, lambda loss, w: loss.sum() / (w != 0).sum()),
])
def test_binary_head_weighted_metrics_and_loss_reductions(tmp_path, reduction, reduce):
    est = E.LinearClassifier([X_COL], model_dir=write_checkpoint(tmp_path, LINEAR_WEIGHTS),
                             weight_column="w", loss_reduction=reduction)
    metrics = evaluate(est, input_fn(Y6, x=X6, w=W6))
    logits = X6 @ np.array([[.5], [-1.]]) + .1
    prob, w, y = sigmoid(logits), W6, Y6
    pred = (logits > 0).astype(float)
    weighted_loss = w * sigmoid_ce(y, logits)
    label_mean = (w * y).sum() / w.sum()
    expected = {
        "loss": reduce(weighted_loss, w),
        "average_loss": weighted_loss.sum() / w.sum(),
        "accuracy": (w * (pred == y)).sum() / w.sum(),
        "precision": (w * pred * y).sum() / (w * pred).sum(),
        "recall": (w * pred * y).sum() / (w * y).sum(),
        "label/mean": label_mean,
        "accuracy_baseline": max(label_mean, 1 - label_mean),
        "prediction/mean": (w * prob).sum() / w.sum(),
        "auc": weighted_auc(y, prob, w),       # 200 thresholds: exact for these scores
        "auc_precision_recall": .7945073843002319,                     # TF 2.15
        "global_step": 10.,
    }
    assert set(metrics) == set(expected)
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, rel=1e-5), key


def test_binary_head_with_label_vocabulary(tmp_path):
    vocab = ["yes", "no"]       # "no" is class 1
    est = E.LinearClassifier([X_COL], model_dir=write_checkpoint(tmp_path, LINEAR_WEIGHTS),
                             label_vocabulary=vocab, weight_column="w")
    ids = 1 - Y6
    metrics = evaluate(est, input_fn(np.array([[vocab[i]] for i in ids.ravel()]),
                                     x=X6, w=W6))
    logits = X6 @ np.array([[.5], [-1.]]) + .1
    label_mean = (W6 * ids).sum() / W6.sum()
    assert label_mean < .5
    assert metrics["label/mean"] == pytest.approx(label_mean, rel=1e-6)
    assert metrics["accuracy_baseline"] == pytest.approx(1 - label_mean, rel=1e-6)
    assert metrics["loss"] == pytest.approx((W6 * sigmoid_ce(ids, logits)).sum(), rel=1e-5)
    assert metrics["auc"] == pytest.approx(weighted_auc(ids, sigmoid(logits), W6), rel=1e-5)
    preds = predict(est, 6, x=X6)
    assert [p["classes"].tolist() for p in preds] == [
        [b"no"] if z > 0 else [b"yes"] for z in logits.ravel()]
    assert preds[0]["all_classes"].tolist() == [b"yes", b"no"]
    assert preds[0]["all_class_ids"].tolist() == [0, 1]


def test_multi_class_head_with_label_vocabulary(tmp_path):
    weights = {"linear/linear_model/x/weights": [[.2, -.3, .1], [-.1, .4, -.2]],
               "linear/linear_model/bias_weights": [.1, 0., -.1]}
    vocab = ["cat", "dog", "emu"]
    est = E.LinearClassifier([X_COL], model_dir=write_checkpoint(tmp_path, weights),
                             n_classes=3, label_vocabulary=vocab)
    ids = np.array([2, 0, 1, 1])
    metrics = evaluate(est, input_fn(np.array([[vocab[i]] for i in ids]), x=X4))
    logits = X4 @ np.array(weights["linear/linear_model/x/weights"]) + [.1, 0., -.1]
    probs = softmax(logits)
    ce = -np.log(probs[np.arange(4), ids])
    assert metrics["loss"] == pytest.approx(ce.sum(), rel=1e-5)
    assert metrics["average_loss"] == pytest.approx(ce.mean(), rel=1e-5)
    assert metrics["accuracy"] == pytest.approx((probs.argmax(1) == ids).mean())
    preds = predict(est, 4, x=X4)
    np.testing.assert_allclose([p["probabilities"] for p in preds], probs, rtol=1e-5)
    assert [p["classes"].tolist() for p in preds] == [[vocab[i].encode()]
                                                      for i in probs.argmax(1)]
    assert preds[0]["all_classes"].tolist() == [b"cat", b"dog", b"emu"]


def test_regression_head_per_logit_weights(tmp_path):
    weights = {"linear/linear_model/x/weights": [[.5, -1.], [1., .2]],
               "linear/linear_model/bias_weights": [.1, -.2]}
    est = E.LinearRegressor([X_COL], model_dir=write_checkpoint(tmp_path, weights),
                            label_dimension=2, weight_column=fc.numeric_column("w", (2,)))
    labels = np.array([[1., 0.], [0., 1.], [-1., 2.], [3., 3.]], np.float32)
    w = np.array([[1., .5], [2., 1.], [.5, 0.], [0., 3.]], np.float32)
    logits = X4 @ np.array(weights["linear/linear_model/x/weights"]) + [.1, -.2]
    metrics = evaluate(est, input_fn(labels, x=X4, w=w))
    weighted = w * (logits - labels) ** 2
    assert metrics["loss"] == pytest.approx(weighted.sum(), rel=1e-5)
    assert metrics["average_loss"] == pytest.approx(weighted.sum() / w.sum(), rel=1e-5)
    assert metrics["label/mean"] == pytest.approx((w * labels).sum() / w.sum(), rel=1e-5)
    assert metrics["prediction/mean"] == pytest.approx((w * logits).sum() / w.sum(),
                                                       rel=1e-5)


def test_linear_estimator_trained_with_weights_and_vocabularies_matches_tf(tmp_path):
    # TF 2.15 on the same programs (default FTRL, 3 steps)
    est = E.LinearClassifier([X_COL], model_dir=str(tmp_path / "a"),
                             label_vocabulary=["a", "b"],
                             weight_column=fc.numeric_column("w"))
    labels = np.array([["b"], ["a"], ["b"], ["b"]])
    est.train(input_fn(labels, x=X4, w=W4), steps=3)
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/x/weights").ravel(),
        [-.36125901341438293, .4103100001811981], rtol=1e-5)
    metrics = evaluate(est, input_fn(labels, x=X4, w=W4))
    assert metrics["loss"] == pytest.approx(1.06074, rel=1e-4)
    assert metrics["average_loss"] == pytest.approx(.30307, rel=1e-4)

    est = E.LinearRegressor([X_COL], model_dir=str(tmp_path / "b"), label_dimension=2,
                            weight_column="w", optimizer="SGD")
    labels = np.array([[1., 0.], [0., 1.], [-1., 2.], [3., 3.]], np.float32)
    est.train(input_fn(labels, x=X4, w=W4), steps=2)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"),
                               [-1.87, -3.0600008964538574], rtol=1e-5)
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/x/weights").ravel(),
        [-4.34, -14.2, 1.105, 3.03], rtol=1e-5)


def test_heads_given_to_the_generic_estimators(tmp_path):
    weights = np.array([[1.], [2.], [.5], [0.]], np.float32)
    per_logit = np.array([[1., .5], [2., 1.], [.5, 0.], [0., 3.]], np.float32)
    features = {"x": X4, "w": weights, "wr": per_logit}
    # thresholds and a head name (the metric keys' suffix); TF 2.15's values
    head = head_lib.binary_logistic_head(weight_column="w", thresholds=[.3, .7], name="bh")
    est = E.LinearEstimator(head, [X_COL], model_dir=str(tmp_path / "a"), optimizer="SGD")
    est.train(input_fn(Y4, **features), steps=2)
    metrics = evaluate(est, input_fn(Y4, **features))
    tf215 = {"accuracy/bh": 1., "accuracy/positive_threshold_0.3/bh": 1.,
             "accuracy/positive_threshold_0.7/bh": .71429, "accuracy_baseline/bh": .57143,
             "auc/bh": 1., "auc_precision_recall/bh": 1., "average_loss/bh": .18329,
             "global_step": 2., "label/mean/bh": .42857, "loss": .64153,
             "precision/bh": 1., "precision/positive_threshold_0.3/bh": 1.,
             "precision/positive_threshold_0.7/bh": 1., "prediction/mean/bh": .34791,
             "recall/bh": 1., "recall/positive_threshold_0.3/bh": 1.,
             "recall/positive_threshold_0.7/bh": .33333}
    assert set(metrics) == set(tf215)
    for key, value in tf215.items():
        assert metrics[key] == pytest.approx(value, abs=1e-5), key

    # a loss_fn reading the features, MEAN reduction; TF 2.15's values
    def loss_fn(labels, logits, features):
        return tf.abs(labels - tf.sigmoid(logits)) * features["x"][:, :1]
    head = head_lib.binary_logistic_head(loss_fn=loss_fn, loss_reduction=Reduction.MEAN)
    est = E.LinearEstimator(head, [X_COL], model_dir=str(tmp_path / "b"), optimizer="SGD")
    est.train(input_fn(Y4, **features), steps=2)
    metrics = evaluate(est, input_fn(Y4, **features))
    assert metrics["loss"] == pytest.approx(.24532, abs=1e-5)
    assert metrics["prediction/mean"] == pytest.approx(.47758, abs=1e-5)

    # inverse_link_fn: predictions are exp(logits), the logits are kept
    head = head_lib.regression_head(weight_column="wr", label_dimension=2,
                                    inverse_link_fn=tf.exp, name="r")
    est = E.DNNEstimator(head, [3], [X_COL], model_dir=str(tmp_path / "c"),
                         optimizer="SGD")
    labels = np.array([[1., 0.], [0., 1.], [-1., 2.], [3., 3.]], np.float32)
    est.train(input_fn(labels, **features), steps=1)
    assert set(evaluate(est, input_fn(labels, **features))) == {
        "average_loss/r", "global_step", "label/mean/r", "loss", "prediction/mean/r"}
    for p in predict(est, 2, x=X4):
        assert set(p) == {"logits", "predictions"}
        np.testing.assert_allclose(p["predictions"], np.exp(p["logits"]), rtol=1e-5)

    # multi-class, SUM_BY_NONZERO_WEIGHTS, on the baseline; TF 2.15's values
    head = head_lib.multi_class_head(3, loss_reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
                                     weight_column="w", name="m")
    est = E.BaselineEstimator(head, model_dir=str(tmp_path / "d"), optimizer="SGD")
    labels = np.array([[2], [0], [1], [2]], np.int64)
    est.train(input_fn(labels, **features), steps=3)
    np.testing.assert_allclose(est.get_variable_value("baseline/bias"),
                               [.221256, -.177777, -.043479], atol=1e-6)
    metrics = evaluate(est, input_fn(labels, **features))
    assert metrics == pytest.approx({"accuracy/m": .57143, "average_loss/m": 1.02398,
                                     "global_step": 3., "loss": 1.19464}, abs=1e-5)


# --- baselines ----------------------------------------------------------------------------
def test_baseline_classifier_and_regressor_match_tf(tmp_path):
    labels = np.array([[2], [0], [1], [2]], np.int64)
    est = E.BaselineClassifier(model_dir=str(tmp_path / "a"), n_classes=3,
                               weight_column="w")
    est.train(input_fn(labels, x=X4, w=W4), steps=3)
    bias = est.get_variable_value("baseline/bias")
    np.testing.assert_allclose(bias, [.484805, -.50534, -.151062], atol=1e-6)  # TF 2.15
    metrics = evaluate(est, input_fn(labels, x=X4, w=W4))
    assert metrics == pytest.approx({"accuracy": .57143, "average_loss": .96551,
                                     "global_step": 3., "loss": 3.37927}, abs=1e-5)
    p = predict(est, 1, x=X4)[0]      # the same bias for every example
    np.testing.assert_allclose(p["logits"], bias, rtol=1e-6)
    np.testing.assert_allclose(p["probabilities"], softmax(bias), rtol=1e-5)

    labels = np.array([[1., 0.], [0., 1.], [-1., 2.], [3., 3.]], np.float32)
    est = E.BaselineRegressor(model_dir=str(tmp_path / "b"), label_dimension=2,
                              weight_column="w", optimizer="Adagrad")
    est.train(input_fn(labels, x=X4, w=W4), steps=3)
    np.testing.assert_allclose(est.get_variable_value("baseline/bias"),
                               [.167399, .570813], atol=1e-6)                  # TF 2.15
    metrics = evaluate(est, input_fn(labels, x=X4, w=W4))
    assert metrics == pytest.approx({"average_loss": .44946, "global_step": 3.,
                                     "label/mean": .5, "loss": 3.1462,
                                     "prediction/mean": .36911}, abs=1e-4)


def test_baseline_regressor_sgd_step(tmp_path):
    labels = np.array([[1., 0.], [0., 1.], [-1., 2.], [3., 3.]], np.float32)
    est = E.BaselineRegressor(model_dir=str(tmp_path), label_dimension=2,
                              weight_column="w", optimizer="SGD")
    est.train(input_fn(labels, x=X4, w=W4), steps=1)
    # from 0, d(SUM of w * (b - y)^2)/db = -2 sum(w y); rate 0.3
    np.testing.assert_allclose(est.get_variable_value("baseline/bias"),
                               .3 * 2 * (W4 * labels).sum(0), rtol=1e-6)


# --- export -------------------------------------------------------------------------------
def _example(x):
    feature = tf.train.Feature(float_list=tf.train.FloatList(value=x))
    return tf.train.Example(
        features=tf.train.Features(feature={"x": feature})).SerializeToString()


def _run_signatures(export_dir):
    """signature key -> (method name, input keys, outputs run on two examples)."""
    out = {}
    with tf.Graph().as_default(), tf.Session() as sess:
        meta_graph = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        for key, sig in meta_graph.signature_def.items():
            (input_key,) = sig.inputs
            fetches = {k: v.name for k, v in sig.outputs.items()}
            values = sess.run(fetches, {sig.inputs[input_key].name:
                                        [_example([1., 2.]), _example([3., -1.])]})
            out[key] = (sig.method_name, input_key, values)
    return out


CLASSIFY, REGRESS, PREDICT = ("tensorflow/serving/classify", "tensorflow/serving/regress",
                              "tensorflow/serving/predict")


def test_export_signatures_of_the_heads(tmp_path):
    serving = E.export.build_parsing_serving_input_receiver_fn(
        fc.make_parse_example_spec([X_COL]))
    x = np.array([[1., 2.], [3., -1.]])

    est = E.LinearClassifier([X_COL], model_dir=write_checkpoint(tmp_path / "a",
                                                                 LINEAR_WEIGHTS))
    sigs = _run_signatures(est.export_saved_model(str(tmp_path / "ea"), serving))
    logits = x @ np.array([[.5], [-1.]]) + .1
    probs = np.concatenate([1 - sigmoid(logits), sigmoid(logits)], 1)
    assert {k: v[:2] for k, v in sigs.items()} == {
        "serving_default": (CLASSIFY, "inputs"), "classification": (CLASSIFY, "inputs"),
        "regression": (REGRESS, "inputs"), "predict": (PREDICT, "examples")}
    assert sorted(sigs["classification"][2]) == ["classes", "scores"]
    np.testing.assert_allclose(sigs["serving_default"][2]["scores"], probs, rtol=1e-5)
    assert sigs["classification"][2]["classes"].tolist() == [[b"0", b"1"]] * 2
    np.testing.assert_allclose(sigs["regression"][2]["outputs"], sigmoid(logits), rtol=1e-5)
    predictions = sigs["predict"][2]
    assert sorted(predictions) == ["all_class_ids", "all_classes", "class_ids", "classes",
                                   "logistic", "logits", "probabilities"]
    np.testing.assert_allclose(predictions["logits"], logits, rtol=1e-5)
    assert predictions["classes"].tolist() == [[b"0"], [b"1"]]

    weights = {"linear/linear_model/x/weights": [[.2, -.3, .1], [-.1, .4, -.2]],
               "linear/linear_model/bias_weights": [.1, 0., -.1]}
    est = E.LinearClassifier([X_COL], model_dir=write_checkpoint(tmp_path / "b", weights),
                             n_classes=3, label_vocabulary=["a", "b", "c"])
    sigs = _run_signatures(est.export_saved_model(str(tmp_path / "eb"), serving))
    assert {k: v[:2] for k, v in sigs.items()} == {
        "serving_default": (CLASSIFY, "inputs"), "classification": (CLASSIFY, "inputs"),
        "predict": (PREDICT, "examples")}
    probs = softmax(x @ np.array(weights["linear/linear_model/x/weights"]) + [.1, 0., -.1])
    np.testing.assert_allclose(sigs["classification"][2]["scores"], probs, rtol=1e-5)
    assert sigs["classification"][2]["classes"].tolist() == [[b"a", b"b", b"c"]] * 2
    assert sorted(sigs["predict"][2]) == ["all_class_ids", "all_classes", "class_ids",
                                          "classes", "logits", "probabilities"]

    weights = {"linear/linear_model/x/weights": [[.5, -1.], [1., .2]],
               "linear/linear_model/bias_weights": [.1, -.2]}
    est = E.LinearRegressor([X_COL], model_dir=write_checkpoint(tmp_path / "c", weights),
                            label_dimension=2)
    sigs = _run_signatures(est.export_saved_model(str(tmp_path / "ec"), serving))
    assert {k: v[:2] for k, v in sigs.items()} == {
        "serving_default": (REGRESS, "inputs"), "regression": (REGRESS, "inputs"),
        "predict": (PREDICT, "examples")}
    values = x @ np.array(weights["linear/linear_model/x/weights"]) + [.1, -.2]
    np.testing.assert_allclose(sigs["regression"][2]["outputs"], values, rtol=1e-5)
    assert sorted(sigs["predict"][2]) == ["predictions"]
    np.testing.assert_allclose(sigs["predict"][2]["predictions"], values, rtol=1e-5)


# --- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("make, error, message", [
    (lambda: E.LinearClassifier([X_COL], n_classes=1), ValueError,
     r"^n_classes must be > 2: 1\.$"),
    (lambda: E.DNNClassifier([2], [X_COL], n_classes=None), ValueError,
     r"^n_classes cannot be None$"),
    (lambda: E.LinearClassifier([X_COL], label_vocabulary="ab"), TypeError,
     r"^label_vocabulary should be a list or tuple\. Given type: <class 'str'>$"),
    (lambda: E.BaselineClassifier(n_classes=3, label_vocabulary="abc"), ValueError,
     r"^label_vocabulary should be a list or a tuple\. Given type: <class 'str'>$"),
    (lambda: E.LinearClassifier([X_COL], loss_reduction=Reduction.NONE), ValueError,
     r"^Invalid loss_reduction: none$"),
    (lambda: E.DNNRegressor([2], [X_COL], loss_reduction="bogus"), ValueError,
     r"^Invalid loss_reduction: bogus$"),
    (lambda: E.LinearRegressor([X_COL], label_dimension=0), ValueError,
     r"^Invalid label_dimension 0\.$"),
    (lambda: head_lib.binary_logistic_head(thresholds=[.5, 1.]), ValueError,
     r"^thresholds not in \(0, 1\)"),
    (lambda: head_lib.regression_head(loss_fn=lambda labels, preds: labels), ValueError,
     r"^loss_fn must contain argument: logits"),
    (lambda: E.DNNLinearCombinedClassifier(), ValueError,
     r"^Either linear_feature_columns or dnn_feature_columns must be defined\.$"),
    (lambda: E.experimental.dnn_logit_fn_builder("2", [2], [X_COL], tf.nn.relu, None,
                                                 None, False), ValueError,
     r"^units must be an int\.  Given type: <class 'str'>$"),
])
def test_constructor_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


_LABELS_2 = np.array([[1], [0]], np.int64)


@pytest.mark.parametrize("make, labels, error, message", [
    # labels out of range are only seen at run time
    (lambda d: E.LinearClassifier([X_COL], model_dir=d), np.array([[2], [0]]),
     tf.errors.InvalidArgumentError, r"Labels must <= n_classes - 1"),
    (lambda d: E.LinearClassifier([X_COL], model_dir=d), np.array([[-1], [0]]),
     tf.errors.InvalidArgumentError, r"Labels must >= 0"),
    (lambda d: E.DNNClassifier([2], [X_COL], model_dir=d, n_classes=3), np.array([[3], [0]]),
     tf.errors.InvalidArgumentError, r"Labels must <= n_classes - 1"),
    (lambda d: E.LinearClassifier([X_COL], model_dir=d, n_classes=3,
                                  label_vocabulary=["a", "b", "c"]),
     np.array([["z"], ["a"]]), tf.errors.InvalidArgumentError, r"Labels must >= 0"),
    (lambda d: E.LinearClassifier([X_COL], model_dir=d, n_classes=3),
     np.array([["z"], ["a"]]), ValueError,
     r"^Labels dtype should be integer\. Instead got <dtype: 'string'>\.$"),
    (lambda d: E.LinearClassifier([X_COL], model_dir=d, n_classes=3,
                                  label_vocabulary=["a", "b", "c"]), _LABELS_2, ValueError,
     r"^Labels dtype should be string if there is a vocabulary\. Instead got <dtype: "
     r"'int64'>$"),
    (lambda d: E.LinearClassifier([X_COL], model_dir=d), np.array([[1, 0], [0, 1]]),
     ValueError, r"^Mismatched label shape\. Expected labels dimension=1\.  Received 2\."),
    (lambda d: E.LinearRegressor([X_COL], model_dir=d, label_dimension=3),
     np.array([[1., 0.], [0., 1.]], np.float32), ValueError,
     r"^Mismatched label shape\. Expected labels dimension=3\.  Received 2\."),
    (lambda d: E.LinearClassifier([X_COL], model_dir=d, optimizer="Foo"), _LABELS_2,
     ValueError, r"^Unsupported optimizer name: Foo\. Supported names are: \('Adagrad', "
                 r"'Adam', 'Ftrl', 'RMSProp', 'SGD'\)$"),
    (lambda d: E.DNNClassifier([2], [X_COL], model_dir=d, optimizer=lambda: 3), _LABELS_2,
     ValueError, r"^The given object is not an Optimizer instance\. Given: 3$"),
    (lambda d: E.DNNLinearCombinedClassifier(d, dnn_feature_columns=[X_COL]), _LABELS_2,
     ValueError, r"^dnn_hidden_units must be defined when dnn_feature_columns is "
                 r"specified\.$"),
    (lambda d: E.DNNClassifier([2], [X_COL], model_dir=d, weight_column=3), _LABELS_2,
     TypeError, r"^Weight column must be either a string or _DenseColumn\. Given type: "
                r"<class 'int'>\.$"),
    (lambda d: E.BaselineClassifier(model_dir=d, weight_column=3), _LABELS_2,
     TypeError, r"^Weight column must be either a string or _NumericColumn\."),
])
def test_training_errors(tmp_path, make, labels, error, message):
    est = make(str(tmp_path))
    with pytest.raises(error, match=message):
        est.train(input_fn(labels, x=X3[:2]), steps=1)


@pytest.mark.parametrize("make", [
    lambda d: E.LinearClassifier([X_COL], model_dir=d),
    lambda d: E.DNNRegressor([2], [X_COL], model_dir=d),
    lambda d: E.DNNLinearCombinedClassifier(d, linear_feature_columns=[X_COL]),
])
def test_features_must_be_a_dict_and_labels_given(tmp_path, make):
    est = make(str(tmp_path))
    with pytest.raises(ValueError, match=r"^features should be a dictionary of `Tensor`s\. "
                                         r"Given type: "):
        est.train(lambda: (tf.constant(X3), tf.constant(Y3)), steps=1)
    with pytest.raises(ValueError, match=r"^You must provide a labels Tensor\. Given: None"):
        est.train(lambda: {"x": tf.constant(X3)}, steps=1)


# --- parsing specs and logit builders -----------------------------------------------------
def test_parse_example_specs():
    spec = E.classifier_parse_example_spec([X_COL], "y", weight_column="w")
    assert spec == {"x": tf.io.FixedLenFeature((2,), tf.float32),
                    "y": tf.io.FixedLenFeature((1,), tf.int64),
                    "w": tf.io.FixedLenFeature((1,), tf.float32)}
    spec = E.classifier_parse_example_spec([CAT], "y", label_dtype=tf.string,
                                           label_default="a")
    assert spec == {"c": tf.io.VarLenFeature(tf.string),
                    "y": tf.io.FixedLenFeature((1,), tf.string, "a")}
    spec = E.regressor_parse_example_spec([X_COL], "y", label_dimension=3,
                                          weight_column=fc.numeric_column("w"))
    assert spec == {"x": tf.io.FixedLenFeature((2,), tf.float32),
                    "y": tf.io.FixedLenFeature((3,), tf.float32),
                    "w": tf.io.FixedLenFeature((1,), tf.float32)}
    with pytest.raises(ValueError, match=r"^label should not be used as feature\. "
                                         r"label_key: x"):
        E.classifier_parse_example_spec([X_COL], label_key="x")
    with pytest.raises(ValueError, match=r"^weight_column should be an instance of "
                                         r"tf\.feature_column\.numeric_column"):
        E.classifier_parse_example_spec([X_COL], "y", weight_column=3)
    with pytest.raises(ValueError, match=r"^weight_column should not be used as feature\. "
                                         r"weight_column: x"):
        E.regressor_parse_example_spec([X_COL], "y", weight_column="x")


def test_logit_fn_builders_in_a_custom_model_fn(sess):
    features = {"x": tf.constant(X3)}
    with tf.variable_scope("linear"):
        linear = E.experimental.linear_logit_fn_builder(2, [X_COL])(features)
    with tf.variable_scope("dnn"):
        dnn = E.experimental.dnn_logit_fn_builder(
            1, [3], [X_COL], tf.nn.relu, None, None, False)(features, E.ModeKeys.PREDICT)
    assert linear.shape.as_list() == [3, 2] and dnn.shape.as_list() == [3, 1]
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["dnn/hiddenlayer_0/bias", "dnn/hiddenlayer_0/kernel", "dnn/logits/bias",
                     "dnn/logits/kernel", "linear/linear_model/bias_weights",
                     "linear/linear_model/x/weights"]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(linear), np.zeros((3, 2)))   # zero-initialized
    values = sess.run({v.op.name: v for v in tf.global_variables()})
    _, logits = dnn_forward(X3, values, 1)
    np.testing.assert_allclose(sess.run(dnn), logits, rtol=1e-5, atol=1e-6)
    assert np.all(values["dnn/hiddenlayer_0/bias"] == 0)
    limit = np.sqrt(6 / (2 + 3))            # glorot uniform
    assert np.all(np.abs(values["dnn/hiddenlayer_0/kernel"]) <= limit)


# --- known gaps outside canned/ -----------------------------------------------------------
def test_warm_start_from_a_canned_estimator(tmp_path):
    first = E.LinearClassifier([X_COL], model_dir=str(tmp_path / "a"), optimizer="SGD")
    first.train(input_fn(Y4, x=X4), steps=2)
    second = E.LinearClassifier([X_COL], model_dir=str(tmp_path / "b"), optimizer="SGD",
                                warm_start_from=str(tmp_path / "a"))
    second.train(input_fn(Y4, x=X4), steps=1)
    first.train(input_fn(Y4, x=X4), steps=1)
    np.testing.assert_allclose(second.get_variable_value("linear/linear_model/x/weights"),
                               first.get_variable_value("linear/linear_model/x/weights"))


def test_optimizer_slots_are_saved_under_tf_names(tmp_path):
    est = E.DNNLinearCombinedClassifier(str(tmp_path), linear_feature_columns=[X_COL],
                                        dnn_feature_columns=[X_COL], dnn_hidden_units=[2])
    est.train(input_fn(Y4, x=X4), steps=1)
    names = est.get_variable_names()
    # TF 2.15's checkpoint keys
    assert "dnn/hiddenlayer_0/kernel/Adagrad" in names
    assert "linear/linear_model/x/weights/Ftrl" in names
