"""tf.keras.metrics in graph mode: the metric functions against NumPy, the stateful
Metrics (weighted means over several updates, reset), the mean-wrapper classes, and
get/serialize/deserialize."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
M = tf.keras.metrics


def test_accuracy_functions_match_numpy(sess):
    rs = np.random.RandomState(0)
    probs = rs.rand(12, 4).astype(np.float32)
    labels = rs.randint(0, 4, 12)
    one_hot = np.eye(4, dtype=np.float32)[labels]
    top2 = np.argsort(-probs, axis=1)[:, :2]
    expected_top2 = np.array([label in row for label, row in zip(labels, top2)], np.float32)
    got = sess.run([
        M.categorical_accuracy(one_hot, probs),
        M.sparse_categorical_accuracy(labels.astype(np.float32), probs),
        M.sparse_categorical_accuracy(labels.reshape(-1, 1).astype(np.float32), probs),
        M.top_k_categorical_accuracy(one_hot, probs, k=2),
        M.sparse_top_k_categorical_accuracy(labels, probs, k=2),
        M.binary_accuracy(one_hot, probs, threshold=0.7),
        M.accuracy(labels, probs.argmax(axis=1)),
    ])
    hits = (probs.argmax(axis=1) == labels).astype(np.float32)
    for value in got[:3]:
        np.testing.assert_array_equal(value, hits)
    np.testing.assert_array_equal(got[3], expected_top2)
    np.testing.assert_array_equal(got[4], expected_top2)
    np.testing.assert_allclose(got[5], ((probs > 0.7) == one_hot).mean(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(got[6], hits)
    a, b = rs.randn(5, 3), rs.randn(5, 3)
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(sess.run(M.cosine_similarity(a, b)), cosine, rtol=1e-6)
    assert M.mse is K.losses.mean_squared_error and M.binary_crossentropy is \
        K.losses.binary_crossentropy


def test_mean_weighs_values_across_updates(sess):
    mean = M.Mean()
    # TF 2.15 (Keras 2, graph mode) names the state without the metric's scope
    assert [v.name for v in mean.variables] == ["total:0", "count:0"]
    assert [v.name for v in M.Mean(name="m2").variables] == ["total_1:0", "count_1:0"]
    with tf.name_scope("outer"):
        assert [v.name for v in M.Sum().variables] == ["outer/total:0"]
    assert mean.variables[0] not in tf.global_variables()
    first = mean([1.0, 2.0, 3.0], sample_weight=[1.0, 0.0, 2.0])
    second = mean.update_state([[4.0], [6.0]], sample_weight=[[0.5], [1.5]])
    result = mean.result()
    assert K.backend.get_session() is sess  # the default session; it initializes the state
    np.testing.assert_allclose(sess.run(first), 7.0 / 3.0, rtol=1e-6)
    sess.run(second)
    np.testing.assert_allclose(sess.run(result), (7.0 + 2.0 + 9.0) / 5.0, rtol=1e-6)
    mean.reset_state()
    assert sess.run(result) == 0.0  # 0 / 0 gives 0
    total = M.Sum()
    sess.run(tf.variables_initializer(total.variables))
    np.testing.assert_allclose(sess.run(total([[1.0, 2.0], [3.0, 4.0]],
                                              sample_weight=[1.0, 2.0])), 17.0)



def test_updates_keeps_one_op_per_update_state_call(sess):
    """TF Keras records the op of each update_state call (also through __call__) in
    `updates` once, even where a subclass's update_state calls its base's."""
    mse = M.MeanSquaredError()
    assert mse.updates == []
    first = mse.update_state([[1.0]], [[3.0]])
    mse([[0.0]], [[1.0]])
    assert len(mse.updates) == 2 and mse.updates[0] is first
    assert M.Mean().updates == []


def test_mean_wrappers_and_rmse(sess):
    y_true = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]], np.float32)
    y_pred = np.array([[0.2, 0.6], [0.9, 0.4], [0.7, 0.1]], np.float32)
    weights = np.array([1.0, 2.0, 0.5], np.float32)
    accuracy = M.BinaryAccuracy(threshold=0.5)
    mse = M.MeanSquaredError()
    rmse = M.RootMeanSquaredError()
    ops = [accuracy(y_true, y_pred, sample_weight=weights), mse(y_true, y_pred),
           rmse(y_true, y_pred, sample_weight=weights)]
    sess.run(tf.variables_initializer(accuracy.variables + mse.variables + rmse.variables))
    acc, mse_value, rmse_value = sess.run(ops)
    per_example = ((y_pred > 0.5) == y_true).mean(axis=1)
    np.testing.assert_allclose(acc, (per_example * weights).sum() / weights.sum(), rtol=1e-6)
    np.testing.assert_allclose(mse_value, ((y_true - y_pred) ** 2).mean(), rtol=1e-6)
    squares = (y_true - y_pred) ** 2
    np.testing.assert_allclose(
        rmse_value, np.sqrt((squares * weights[:, None]).sum() / (weights.sum() * 2)),
        rtol=1e-6)
    assert accuracy.name == "binary_accuracy" and accuracy.get_config() == {
        "threshold": 0.5, "name": "binary_accuracy", "dtype": "float32"}
    with pytest.raises(TypeError, match="unexpected keyword argument 'k'"):
        M.BinaryAccuracy(k=3)


def test_get_serialize_deserialize():
    assert M.get("mse") is K.losses.mean_squared_error
    assert M.get("categorical_accuracy") is M.categorical_accuracy
    assert isinstance(M.get("MeanSquaredError"), M.MeanSquaredError)
    top3 = M.get({"class_name": "TopKCategoricalAccuracy", "config": {"k": 3, "name": "t3"}})
    assert top3.name == "t3" and top3.get_config()["k"] == 3
    assert M.serialize(M.binary_accuracy) == "binary_accuracy"
    again = M.deserialize(M.serialize(M.CategoricalAccuracy(name="acc2")))
    assert isinstance(again, M.CategoricalAccuracy) and again.name == "acc2"
    assert M.get(np.mean) is np.mean
    with pytest.raises(ValueError, match="Unknown metric function"):
        M.get("nosuch")
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        M.get(3)


def test_metric_objects_in_compile():
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(2, activation="softmax", input_shape=(3,))])
        model.compile("sgd", "categorical_crossentropy",
                      metrics=[M.CategoricalAccuracy(name="hits"),
                               M.TopKCategoricalAccuracy(k=1)])
        assert model.metrics_names == ["loss", "hits", "top_k_categorical_accuracy"]
        rs = np.random.RandomState(3)
        x = rs.randn(10, 3).astype(np.float32)
        y = np.eye(2, dtype=np.float32)[rs.randint(0, 2, 10)]
        _, hits, top1 = model.evaluate(x, y, batch_size=3, verbose=0)
        expected = np.mean(model.predict(x).argmax(1) == y.argmax(1))
        np.testing.assert_allclose([hits, top1], [expected, expected], rtol=1e-6)
        K.backend.set_session(None)


def test_mean_tensor_means_each_element(sess):
    # values from TF 2.15 (Keras 2) in graph mode; by hand: total / count per element
    mean = M.MeanTensor()
    first = mean.update_state([0.0, 1.0, 2.0, 3.0])
    second = mean.update_state([4.0, 5.0, 6.0, 7.0])
    weighted = mean.update_state([12.0, 10.0, 8.0, 6.0], sample_weight=[0, 0.2, 0.5, 1])
    assert [v.name for v in mean.variables] == ["total:0", "count:0"]
    sess.run(first)
    sess.run(second)
    np.testing.assert_allclose(sess.run(mean.result()), [2.0, 3.0, 4.0, 5.0])
    sess.run(weighted)
    np.testing.assert_allclose(sess.run(mean.result()),
                               [4 / 2, 8 / 2.2, 12 / 2.5, 16 / 3], rtol=1e-6)
    with pytest.raises(ValueError, match=r"MeanTensor input values must always have the "
                                         r"same shape\. Expected shape \(set during the "
                                         r"first call\): \(4,\)\. Got: \(2,\)\."):
        mean.update_state([1.0, 2.0])
    with pytest.raises(ValueError, match="MeanTensor does not have any value yet"):
        M.MeanTensor().result()
    fixed = M.MeanTensor(dtype="float64", shape=(1, 2))
    rows = fixed.update_state(np.array([[1.0, 2.0]]), sample_weight=[[3.0]])
    sess.run(rows)
    np.testing.assert_allclose(sess.run(fixed.result()), [[1.0, 2.0]])
    assert fixed.result().dtype == tf.float64 and fixed.get_config() == {
        "name": "mean_tensor", "dtype": "float64"}


def test_accuracy_checks_shapes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
            M.Accuracy().update_state([1, 2, 3], [1, 2])
