"""LinearClassifier / LinearRegressor trained by `tf.estimator.experimental.LinearSDCA`
(estimator/canned/linear.py) against TF 2.15.1 + tensorflow-estimator on the same data:
after enough steps both reach the same optimum (one SDCA step depends on the random order
of the examples, in TF as here), so weights, metrics and predictions agree."""
import itertools

import numpy as np
import pytest

import tensorweave as tf

N = 16
_rng = np.random.RandomState(1)
X = _rng.randn(N, 2).astype(np.float32)
C = _rng.randint(0, 4, size=N).astype(np.int64)
W = np.linspace(0.5, 2.0, N).astype(np.float32)
Y_CLASS = ((X[:, 0] - X[:, 1] + (C == 2)) > 0).astype(np.int64)
Y_REG = (1.5 * X[:, 0] - 0.5 * X[:, 1] + 0.3 * C + 0.7).astype(np.float32)
IDS = np.array([b"id%d" % i for i in range(N)])


def _input_fn(labels):
    def input_fn():
        features = {"x": tf.constant(X), "c": tf.constant(C.reshape(-1, 1)),
                    "w": tf.constant(W), "example_id": tf.constant(IDS)}
        return features, tf.constant(labels.reshape(-1, 1))
    return input_fn


def _columns():
    return [tf.feature_column.numeric_column("x", shape=[2]),
            tf.feature_column.categorical_column_with_identity("c", num_buckets=4)]


def _logits(values):
    return (X @ values["linear/linear_model/x/weights"][:, 0]
            + values["linear/linear_model/c/weights"][C, 0]
            + values["linear/linear_model/bias_weights"][0])


def _values(est):
    return {n: est.get_variable_value(n) for n in est.get_variable_names()
            if "HashTable" not in n}


# TF 2.15.1 after 60 steps (weights; TF names)
CLASSIFIER_TF = {
    "linear/linear_model/bias_weights": [0.29421913623809814],
    "linear/linear_model/c/weights": [[-0.6069821715354919], [0.31617027521133423],
                                      [0.609393835067749], [-0.02436261996626854]],
    "linear/linear_model/x/weights": [[1.7957226037979126], [-1.7997621297836304]],
}
REGRESSOR_L1_TF = {
    "linear/linear_model/bias_weights": [0.9194737672805786],
    "linear/linear_model/c/weights": [[-0.16706223785877228], [0.09572762250900269],
                                      [0.33058011531829834], [0.6102281212806702]],
    "linear/linear_model/x/weights": [[1.3890706300735474], [-0.5172975659370422]],
    # the slots hold the weights before the l1 shrinkage (0.05 / 1.0)
    "linear/linear/linear_model/bias_weights/part_0_unshrunk": [0.9694737792015076],
    "linear/linear/linear_model/x/weights/part_0_unshrunk": [[1.4390705823898315],
                                                             [-0.5672975778579712]],
}


def test_classifier_reaches_tf_optimum(tmp_path):
    sdca = tf.estimator.experimental.LinearSDCA(example_id_column="example_id",
                                                symmetric_l2_regularization=0.5)
    est = tf.estimator.LinearClassifier(_columns(), model_dir=str(tmp_path),
                                        weight_column="w", optimizer=sdca)
    est.train(_input_fn(Y_CLASS), steps=60)
    values = _values(est)
    assert sorted(values) == [
        "global_step",
        "linear/linear/linear_model/bias_weights/part_0_unshrunk",
        "linear/linear/linear_model/c/weights/part_0_unshrunk",
        "linear/linear/linear_model/x/weights/part_0_unshrunk",
        "linear/linear_model/bias_weights", "linear/linear_model/c/weights",
        "linear/linear_model/x/weights"]
    assert values["global_step"] == 60
    for name, expected in CLASSIFIER_TF.items():
        np.testing.assert_allclose(values[name], expected, atol=2e-5, err_msg=name)
    metrics = est.evaluate(_input_fn(Y_CLASS), steps=1)
    # the v1 head's loss: weighted sigmoid cross-entropy summed over the batch
    logits = _logits(values)
    np.testing.assert_allclose(metrics["loss"], np.sum(W * (
        np.maximum(logits, 0) - logits * Y_CLASS + np.log1p(np.exp(-np.abs(logits))))),
        rtol=1e-5)
    np.testing.assert_allclose(metrics["loss"], 3.768576145172119, rtol=1e-5)
    np.testing.assert_allclose(metrics["prediction/mean"], 0.652645, atol=1e-5)
    assert metrics["accuracy"] == 1.0
    preds = list(itertools.islice(est.predict(_input_fn(Y_CLASS)), 3))
    np.testing.assert_allclose([p["probabilities"] for p in preds],
                               [[0.00967700406908989, 0.9903229475021362],
                                [0.16895835101604462, 0.8310416340827942],
                                [0.0025576355401426554, 0.997442364692688]], atol=2e-5)


def test_regressor_with_l1_reaches_tf_optimum(tmp_path):
    sdca = tf.estimator.experimental.LinearSDCA(
        example_id_column="example_id", symmetric_l1_regularization=0.05,
        symmetric_l2_regularization=1.0)
    est = tf.estimator.LinearRegressor(_columns(), model_dir=str(tmp_path),
                                       weight_column="w", optimizer=sdca)
    est.train(_input_fn(Y_REG), steps=60)
    values = _values(est)
    for name, expected in REGRESSOR_L1_TF.items():
        np.testing.assert_allclose(values[name], expected, atol=2e-5, err_msg=name)
    metrics = est.evaluate(_input_fn(Y_REG), steps=1)
    np.testing.assert_allclose(metrics["loss"], np.sum(W * (Y_REG - _logits(values)) ** 2),
                               rtol=1e-5)
    # with l1 the 60 steps end nearer or farther from the optimum by the (random) order
    # the examples are visited in, here as in TF: the loss spreads by about 1e-4
    np.testing.assert_allclose(metrics["loss"], 0.22440530359745026, rtol=5e-4)
    preds = list(itertools.islice(est.predict(_input_fn(Y_REG)), 3))
    np.testing.assert_allclose([p["predictions"] for p in preds],
                               [[3.5879921913146973], [0.8365775346755981],
                                [3.922394275665283]], atol=2e-5)
    # training resumes from the checkpoint, the examples' dual state included: at the
    # optimum, more steps change nothing
    est.train(_input_fn(Y_REG), steps=5)
    again = _values(est)
    assert again["global_step"] == 65
    np.testing.assert_allclose(again["linear/linear_model/x/weights"],
                               values["linear/linear_model/x/weights"], atol=1e-5)


def test_one_step_from_zero_solves_each_example_in_turn(tmp_path):
    # one example, squared loss: w = 0, so the dual step is y / (1 + |x|^2 / l2) and the
    # weights become step * x / l2 (the bias feature is 1)
    def input_fn():
        return ({"x": tf.constant([[1.0, 2.0]]), "example_id": tf.constant([b"only"])},
                tf.constant([[3.0]]))
    est = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x", shape=[2])], model_dir=str(tmp_path),
        optimizer=tf.estimator.experimental.LinearSDCA("example_id",
                                                       symmetric_l2_regularization=2.0))
    est.train(input_fn, steps=1)
    dual = 3.0 / (1 + 6.0 / 2.0)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights"),
                               [[dual / 2.0], [2 * dual / 2.0]], rtol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"),
                               [dual / 2.0], rtol=1e-6)


@pytest.mark.parametrize("make,message", [
    (lambda sdca: tf.estimator.LinearClassifier(_columns(), n_classes=3, optimizer=sdca),
     "LinearSDCA cannot be used in a multi-class setting."),
    (lambda sdca: tf.estimator.LinearClassifier(_columns(), optimizer=sdca,
                                                sparse_combiner="mean"),
     'sparse_combiner must be "sum" when optimizer is a LinearSDCA object.'),
    (lambda sdca: tf.estimator.LinearRegressor(_columns(), label_dimension=2, optimizer=sdca),
     "LinearSDCA can only be used with one-dimensional label."),
])
def test_construction_errors_match_tf(make, message):
    with pytest.raises(ValueError) as info:
        make(tf.estimator.experimental.LinearSDCA("example_id"))
    assert str(info.value) == message


def test_bad_regularization(tmp_path):
    sdca = tf.estimator.experimental.LinearSDCA("example_id", symmetric_l2_regularization=0.0)
    est = tf.estimator.LinearRegressor(_columns(), model_dir=str(tmp_path), optimizer=sdca)
    with pytest.raises(ValueError, match="symmetric_l2_regularization should be positive."):
        est.train(_input_fn(Y_REG), steps=1)


def test_partitioned_variables_and_sharded_state_reach_the_same_optimum(tmp_path):
    sdca = tf.estimator.experimental.LinearSDCA(
        example_id_column="example_id", symmetric_l1_regularization=0.05,
        symmetric_l2_regularization=1.0, num_table_shards=3)
    est = tf.estimator.LinearRegressor(_columns(), model_dir=str(tmp_path),
                                       weight_column="w", optimizer=sdca,
                                       partitioner=tf.fixed_size_partitioner(2))
    est.train(_input_fn(Y_REG), steps=60)
    names = est.get_variable_names()
    # a partitioned variable is saved whole (with its slice specs); its slots, one plain
    # variable per partition, each on its own
    assert "linear/linear/linear_model/c/weights/part_1_unshrunk" in names
    assert sum("ShardedMutableHashTable-" in n for n in names) == 6
    for name in ("linear/linear_model/c/weights", "linear/linear_model/x/weights"):
        np.testing.assert_allclose(est.get_variable_value(name), REGRESSOR_L1_TF[name],
                                   atol=2e-5, err_msg=name)
