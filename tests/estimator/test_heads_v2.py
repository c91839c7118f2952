"""tf.estimator's v2 heads (BinaryClassHead, MultiClassHead, MultiLabelHead,
RegressionHead, LogisticRegressionHead, PoissonRegressionHead, Head). Losses and means are checked
against NumPy; AUCs, keys, names and error messages are what TensorFlow 2.15
(tensorflow-estimator 2.15, tf.compat.v1 graph mode) gave for the same calls."""
import numpy as np
import pytest

import tensorweave as tf

M = tf.estimator.ModeKeys
LOGITS = np.array([[0.5], [-1.0], [2.0], [0.0]], np.float32)
LABELS = np.array([[1], [0], [0], [1]], np.int64)
WEIGHTS = np.array([[1.0], [2.0], [0.5], [1.0]], np.float32)
LOGITS3 = np.array([[0.5, 1.0, -1.0], [2.0, 0.0, 0.1], [0.0, 0.0, 3.0], [1.0, -2.0, 0.5]],
                   np.float32)
LABELS3 = np.array([[1], [0], [2], [2]], np.int64)
TARGETS = np.array([[1.0], [-0.5], [2.5], [0.3]], np.float32)


def sigmoid_ce(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def softmax_ce(labels, logits):
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_p, labels, -1)


def run_spec(head, mode, logits, labels=None, features=None, regularization=None):
    """(spec, evaluated predictions, loss, metric values) of head's spec for `mode`."""
    with tf.Graph().as_default():
        tf.train.create_global_step()
        features = {k: tf.constant(v) for k, v in (features or {}).items()}
        spec = head.create_estimator_spec(
            features, mode, tf.constant(logits),
            None if labels is None else tf.constant(labels),
            train_op_fn=lambda loss: tf.assign_add(tf.train.get_global_step(), 1),
            regularization_losses=None if regularization is None
            else [tf.constant(r) for r in regularization])
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(),
                      tf.tables_initializer()])
            predictions = sess.run(spec.predictions)
            loss = None if spec.loss is None else sess.run(spec.loss)
            sess.run([op for _, op in spec.eval_metric_ops.values()])
            metrics = sess.run({k: v for k, (v, _) in spec.eval_metric_ops.items()})
            summaries = sorted(s.op.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES))
        return spec, predictions, loss, metrics, summaries


def test_binary_class_head_predict_mode():
    spec, preds, loss, _, _ = run_spec(tf.estimator.BinaryClassHead(), M.PREDICT, LOGITS)
    assert loss is None
    assert sorted(spec.export_outputs) == ["classification", "predict", "regression",
                                           "serving_default"]
    logistic = 1 / (1 + np.exp(-LOGITS))
    np.testing.assert_allclose(preds["logistic"], logistic, rtol=1e-6)
    np.testing.assert_allclose(preds["probabilities"],
                               np.concatenate([1 - logistic, logistic], 1), rtol=1e-6)
    np.testing.assert_array_equal(preds["class_ids"], [[1], [0], [1], [0]])
    assert preds["class_ids"].dtype == np.int64
    assert preds["classes"].tolist() == [[b"1"], [b"0"], [b"1"], [b"0"]]
    np.testing.assert_array_equal(preds["all_class_ids"], [[0, 1]] * 4)
    assert preds["all_classes"].tolist() == [[b"0", b"1"]] * 4


def test_binary_class_head_weighted_eval_metrics():
    """The loss is the weighted mean over the batch (sum_over_batch_size), average_loss
    the mean per unit of weight; threshold metrics get TF's keys."""
    head = tf.estimator.BinaryClassHead(weight_column="w", thresholds=[0.3, 0.7])
    spec, _, loss, metrics, _ = run_spec(head, M.EVAL, LOGITS, LABELS,
                                         features={"w": WEIGHTS})
    weighted = WEIGHTS * sigmoid_ce(LABELS, LOGITS)
    np.testing.assert_allclose(loss, weighted.sum() / 4, rtol=1e-5)
    expected = {
        "average_loss": weighted.sum() / WEIGHTS.sum(),
        "label/mean": (WEIGHTS * LABELS).sum() / WEIGHTS.sum(),
        "prediction/mean": (WEIGHTS / (1 + np.exp(-LOGITS))).sum() / WEIGHTS.sum(),
        # TF 2.15's values
        "accuracy": 0.6667, "accuracy/positive_threshold_0.3": 0.8889,
        "accuracy/positive_threshold_0.7": 0.4444, "accuracy_baseline": 0.5556,
        "auc": 0.8, "auc_precision_recall": 0.5976, "precision": 0.6667,
        "precision/positive_threshold_0.3": 0.8, "precision/positive_threshold_0.7": 0.0,
        "recall": 0.5, "recall/positive_threshold_0.3": 1.0,
        "recall/positive_threshold_0.7": 0.0}
    assert sorted(metrics) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(metrics[key], value, atol=1e-4, err_msg=key)


def test_binary_class_head_vocabulary_and_name():
    head = tf.estimator.BinaryClassHead(label_vocabulary=["no", "yes"], name="h")
    labels = np.array([[b"yes"], [b"no"], [b"no"], [b"yes"]])
    _, preds, loss, metrics, _ = run_spec(head, M.EVAL, LOGITS, labels)
    assert preds["classes"].tolist() == [[b"yes"], [b"no"], [b"yes"], [b"no"]]
    np.testing.assert_allclose(loss, sigmoid_ce(LABELS, LOGITS).mean(), rtol=1e-5)
    assert sorted(metrics) == sorted(k + "/h" for k in [
        "accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss",
        "label/mean", "precision", "prediction/mean", "recall"])
    np.testing.assert_allclose(metrics["auc_precision_recall/h"], 0.4507, atol=1e-4)


def test_train_mode_summaries_and_regularization():
    head = tf.estimator.RegressionHead(name="r")
    spec, _, loss, _, summaries = run_spec(head, M.TRAIN, LOGITS, TARGETS,
                                           regularization=[0.25])
    np.testing.assert_allclose(loss, ((LOGITS - TARGETS) ** 2).mean() + 0.25, rtol=1e-5)
    assert summaries == ["loss/r", "regularization_loss/r"]
    _, _, loss, metrics, _ = run_spec(head, M.EVAL, LOGITS, TARGETS,
                                      regularization=[0.25, 0.5])
    np.testing.assert_allclose(loss, 0.21 + 0.75, rtol=1e-5)
    np.testing.assert_allclose(metrics["regularization_loss/r"], 0.75)
    np.testing.assert_allclose(metrics["average_loss/r"], 0.21, rtol=1e-5)


def test_multi_class_head():
    head = tf.estimator.MultiClassHead(3, weight_column="w")
    spec, preds, loss, metrics, _ = run_spec(head, M.EVAL, LOGITS3, LABELS3,
                                             features={"w": WEIGHTS})
    weighted = WEIGHTS * softmax_ce(LABELS3, LOGITS3)
    np.testing.assert_allclose(loss, weighted.sum() / 4, rtol=1e-5)
    np.testing.assert_allclose(metrics["average_loss"], weighted.sum() / WEIGHTS.sum(),
                               rtol=1e-5)
    correct = (LOGITS3.argmax(-1)[:, None] == LABELS3)
    np.testing.assert_allclose(metrics["accuracy"],
                               (WEIGHTS * correct).sum() / WEIGHTS.sum(), rtol=1e-6)
    assert sorted(preds) == ["all_class_ids", "all_classes", "class_ids", "classes",
                             "logits", "probabilities"]
    spec, _, _, _, _ = run_spec(head, M.PREDICT, LOGITS3)
    assert sorted(spec.export_outputs) == ["classification", "predict", "serving_default"]


def test_multi_class_head_label_checks():
    with pytest.raises(ValueError, match=r"^Labels dtype should be integer. Instead got "):
        run_spec(tf.estimator.MultiClassHead(3), M.EVAL, LOGITS3,
                 LABELS3.astype(np.float32))
    with pytest.raises(ValueError, match="^Labels dtype should be string if there is a "
                                         "vocabulary. Instead got <dtype: 'int64'>$"):
        run_spec(tf.estimator.MultiClassHead(3, label_vocabulary=["a", "b", "c"]),
                 M.EVAL, LOGITS3, LABELS3)



LOGITS_ML = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5], [-2.0, 1.5, 0.3], [0.2, 0.2, -3.0]],
                     np.float32)
MULTI_HOT = np.array([[1, 0, 1], [0, 0, 1], [0, 1, 1], [1, 1, 0]], np.int64)


def test_multi_label_head_weighted_eval_with_class_metrics():
    head = tf.estimator.MultiLabelHead(3, weight_column="w", thresholds=[0.4],
                                       classes_for_class_based_metrics=[0, 2], name="m")
    _, preds, loss, metrics, _ = run_spec(head, M.EVAL, LOGITS_ML, MULTI_HOT,
                                          features={"w": WEIGHTS})
    probabilities = 1 / (1 + np.exp(-LOGITS_ML))
    np.testing.assert_allclose(preds["probabilities"], probabilities, rtol=1e-6)
    assert preds["classes"].tolist() == [[b"0", b"1", b"2"]] * 4
    per_example = sigmoid_ce(MULTI_HOT, LOGITS_ML).mean(-1, keepdims=True)
    np.testing.assert_allclose(loss, (WEIGHTS * per_example).sum() / 4, rtol=1e-5)
    expected = {  # TF 2.15's values, and NumPy's for the means
        "average_loss/m": (WEIGHTS * per_example).sum() / WEIGHTS.sum(),
        "probability_mean/class0/m": (WEIGHTS[:, 0] * probabilities[:, 0]).sum() / 4.5,
        "probability_mean/class2/m": (WEIGHTS[:, 0] * probabilities[:, 2]).sum() / 4.5,
        "auc/m": 0.6703, "auc_precision_recall/m": 0.6873, "auc/class0/m": 0.2,
        "auc_precision_recall/class0/m": 0.3069, "auc/class2/m": 1.0,
        "auc_precision_recall/class2/m": 1.0,
        "accuracy/positive_threshold_0.4/m": 0.5556,
        "precision/positive_threshold_0.4/m": 0.5556,
        "recall/positive_threshold_0.4/m": 0.7143}
    assert sorted(metrics) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(metrics[key], value, atol=1e-4, err_msg=key)


def test_multi_label_head_sparse_labels():
    """Class ids (or names) in a SparseTensor become the multi-hot labels."""
    indices = [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [3, 0]]
    multi_hot = np.array([[1, 0, 1], [0, 0, 1], [0, 1, 1], [1, 0, 0]])
    expected_loss = sigmoid_ce(multi_hot, LOGITS_ML).mean()
    for head, values in [
            (tf.estimator.MultiLabelHead(3), np.array([0, 2, 2, 1, 2, 0], np.int64)),
            (tf.estimator.MultiLabelHead(3, label_vocabulary=["a", "b", "c"]),
             np.array([b"a", b"c", b"c", b"b", b"c", b"a"]))]:
        with tf.Graph().as_default():
            labels = tf.SparseTensor(indices, tf.constant(values), [4, 2])
            spec = head.create_estimator_spec({}, M.EVAL, tf.constant(LOGITS_ML), labels)
            with tf.Session() as sess:
                sess.run([tf.local_variables_initializer(), tf.tables_initializer()])
                sess.run([op for _, op in spec.eval_metric_ops.values()])
                np.testing.assert_allclose(sess.run(spec.loss), expected_loss, rtol=1e-5)
                np.testing.assert_allclose(sess.run(spec.eval_metric_ops["auc"][0]), 0.8194,
                                           atol=1e-4)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"labels must be an integer SparseTensor with values in \[0, 3\)"):
        with tf.Graph().as_default():
            labels = tf.SparseTensor(indices, tf.constant([0, 5, 2, 1, 2, 0], tf.int64),
                                     [4, 2])
            loss = tf.estimator.MultiLabelHead(3).loss(labels, tf.constant(LOGITS_ML))
            tf.Session().run(loss)
    with pytest.raises(tf.errors.InvalidArgumentError, match="labels must be an integer "
                                                             "indicator Tensor"):
        run_spec(tf.estimator.MultiLabelHead(3), M.EVAL, LOGITS_ML, MULTI_HOT * 2)


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_classes=1), "n_classes must be > 1 for multi-label classification. Given: 1"),
    (dict(n_classes=3, thresholds=[0.0]), "thresholds must be in (0, 1) range. Given: 0.0"),
    (dict(n_classes=3, label_vocabulary="abc"),
     "label_vocabulary must be a list or tuple. Given type: <class 'str'>"),
    (dict(n_classes=3, label_vocabulary=["a"]),
     "Length of label_vocabulary must be n_classes (3). Given: 1"),
    (dict(n_classes=3, classes_for_class_based_metrics=["a"]),
     "label_vocabulary must be provided when classes_for_class_based_metrics are strings."),
    (dict(n_classes=3, classes_for_class_based_metrics=[3]),
     "All classes_for_class_based_metrics must be in range [0, 2]. Given: 3"),
])
def test_multi_label_head_constructor_errors(kwargs, message):
    with pytest.raises(ValueError) as e:
        tf.estimator.MultiLabelHead(**kwargs)
    assert str(e.value) == message


def test_regression_heads_with_link_functions():
    counts = np.array([[1.0], [0.0], [3.0], [2.0]], np.float32)
    head = tf.estimator.PoissonRegressionHead(compute_full_loss=False)
    _, preds, loss, metrics, _ = run_spec(head, M.EVAL, LOGITS, counts)
    np.testing.assert_allclose(preds["predictions"], np.exp(LOGITS), rtol=1e-6)
    np.testing.assert_allclose(loss, (np.exp(LOGITS) - counts * LOGITS).mean(), rtol=1e-5)
    np.testing.assert_allclose(metrics["prediction/mean"], np.exp(LOGITS).mean(), rtol=1e-5)
    _, _, loss, _, _ = run_spec(tf.estimator.PoissonRegressionHead(), M.EVAL, LOGITS, counts)
    np.testing.assert_allclose(loss, 1.5804, atol=1e-4)  # with the Stirling term (TF)
    targets = np.array([[1.0], [0.0], [0.3], [1.0]], np.float32)
    _, preds, loss, _, _ = run_spec(tf.estimator.LogisticRegressionHead(), M.EVAL, LOGITS,
                                    targets)
    assert sorted(preds) == ["logits", "predictions"]
    np.testing.assert_allclose(loss, sigmoid_ce(targets, LOGITS).mean(), rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be in range"):
        run_spec(tf.estimator.LogisticRegressionHead(), M.EVAL, LOGITS, targets * 2)


def test_regression_head_per_value_weights():
    head = tf.estimator.RegressionHead(label_dimension=2, weight_column="w")
    logits = np.concatenate([LOGITS, LOGITS * 2], 1)
    targets = np.concatenate([TARGETS, TARGETS + 1], 1)
    weights = np.concatenate([WEIGHTS, WEIGHTS * 0.5], 1)
    _, _, loss, metrics, _ = run_spec(head, M.EVAL, logits, targets, features={"w": weights})
    weighted = weights * (logits - targets) ** 2
    np.testing.assert_allclose(loss, weighted.sum() / 8, rtol=1e-5)
    np.testing.assert_allclose(metrics["average_loss"], weighted.sum() / weights.sum(),
                               rtol=1e-5)


def test_loss_reduction_sum_and_loss_method():
    head = tf.estimator.BinaryClassHead(weight_column="w", loss_reduction="sum")
    assert head.loss_reduction == "sum" and head.logits_dimension == 1
    with tf.Graph().as_default(), tf.Session() as sess:
        loss = head.loss(tf.constant(LABELS), tf.constant(LOGITS),
                         features={"w": tf.constant(WEIGHTS)},
                         regularization_losses=[tf.constant(0.5)])
        np.testing.assert_allclose(sess.run(loss),
                                   (WEIGHTS * sigmoid_ce(LABELS, LOGITS)).sum() + 0.5,
                                   rtol=1e-5)


def test_keras_optimizer_or_train_op_fn():
    with tf.Graph().as_default():
        tf.train.create_global_step()
        v = tf.Variable([[0.5]])
        logits = tf.matmul(tf.constant([[1.0], [2.0], [3.0], [4.0]]), v)
        head = tf.estimator.BinaryClassHead()
        spec = head.create_estimator_spec({}, M.TRAIN, logits, tf.constant(LABELS),
                                          optimizer=tf.keras.optimizers.SGD(0.1),
                                          trainable_variables=[v])
        assert spec.train_op.name == "training/SGD/SGD/AssignAddVariableOp"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(spec.loss), 0.9039, atol=1e-4)
            sess.run(spec.train_op)
            np.testing.assert_allclose(sess.run(v), [[0.4235]], atol=1e-4)
        errors = [
            (dict(optimizer=tf.train.GradientDescentOptimizer(0.1)),
             "The given optimizer is not a tf.keras.optimizers.Optimizer instance. Received "
             "optimizer of type <class 'tensorweave.train.optimizers."
             "GradientDescentOptimizer'>"),
            (dict(optimizer=tf.keras.optimizers.SGD(0.1)),
             "trainable_variables cannot be None. Given None"),
            (dict(optimizer=tf.keras.optimizers.SGD(0.1), train_op_fn=tf.no_op),
             "train_op_fn and optimizer cannot both be set."),
            ({}, "train_op_fn and optimizer cannot both be None."),
            (dict(train_op_fn=lambda loss: tf.no_op(), update_ops=tf.no_op()),
             "update_ops should be a list or a tuple. Given type: <class "
             "'tensorweave.framework.graph.Operation'>.")]
        for kwargs, message in errors:
            with pytest.raises(ValueError) as e:
                head.create_estimator_spec({}, M.TRAIN, logits, tf.constant(LABELS),
                                           **kwargs)
            assert str(e.value) == message


@pytest.mark.parametrize("make, message", [
    (lambda: tf.estimator.BinaryClassHead(label_vocabulary="ab"),
     "label_vocabulary should be a list or a tuple. Given type: <class 'str'>"),
    (lambda: tf.estimator.BinaryClassHead(thresholds=[1.5]),
     "thresholds not in (0, 1): ((1.5,),)."),
    (lambda: tf.estimator.BinaryClassHead(loss_reduction="none"),
     "Invalid loss_reduction: none. See `tf.losses.Reduction` for valid options."),
    (lambda: tf.estimator.BinaryClassHead(loss_reduction="weighted_sum"),
     "Invalid loss_reduction: weighted_sum. See `tf.losses.Reduction` for valid options."),
    (lambda: tf.estimator.MultiClassHead(2), "n_classes must be > 2: 2."),
    (lambda: tf.estimator.MultiClassHead(None), "n_classes cannot be None"),
    (lambda: tf.estimator.RegressionHead(label_dimension=0), "Invalid label_dimension 0."),
    (lambda: tf.estimator.RegressionHead(loss_fn=lambda labels, logits, foo: labels),
     "loss_fn has unexpected args: ['foo']"),
])
def test_constructor_errors(make, message):
    with pytest.raises(ValueError) as e:
        make()
    assert str(e.value) == message


def test_shape_errors_and_abstract_head():
    with tf.Graph().as_default():
        head = tf.estimator.BinaryClassHead()
        with pytest.raises(ValueError) as e:
            head.create_estimator_spec({}, M.EVAL, tf.constant(LOGITS3), tf.constant(LABELS))
        assert str(e.value) == ("logits shape must be [D0, D1, ... DN, logits_dimension], "
                                "got (4, 3).")
        with pytest.raises(ValueError, match="^Mismatched label shape. Expected labels "
                                             r"dimension=1.  Received 3. Suggested Fix: If"):
            tf.estimator.MultiClassHead(3).create_estimator_spec(
                {}, M.EVAL, tf.constant(LOGITS3), tf.constant(LOGITS3))
        with pytest.raises(ValueError, match="^You must provide a labels Tensor. Given: "
                                             "None. Suggested troubleshooting steps: Check "
                                             "that your data contains"):
            head.create_estimator_spec({}, M.EVAL, tf.constant(LOGITS), None)
        with pytest.raises(ValueError, match=r"^Prediction key must be in PredictionKeys, "
                                             r"given: nope.Valid prediction keys include"):
            head.predictions(tf.constant(LOGITS), keys=["nope"])
    with pytest.raises(TypeError, match="^Can't instantiate abstract class Head"):
        tf.estimator.Head()


def test_estimator_with_a_head_trains_evaluates_and_exports(tmp_path):
    """Values as TF 2.15 gave for the same program."""
    fc = tf.feature_column
    x = np.array([[1.], [2.], [3.], [4.]], np.float32)
    labels = np.array([["y"], ["n"], ["y"], ["y"]])
    head = tf.estimator.BinaryClassHead(label_vocabulary=["n", "y"])

    def model_fn(features, labels, mode):
        net = tf.feature_column.input_layer(features, [fc.numeric_column("x")])
        logits = tf.layers.dense(net, 1, kernel_initializer=tf.constant_initializer(0.3))
        return head.create_estimator_spec(
            features, mode, logits, labels,
            train_op_fn=lambda loss: tf.train.GradientDescentOptimizer(0.5).minimize(
                loss, tf.train.get_global_step()))

    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, labels, batch_size=4,
                                                 shuffle=False, num_epochs=None), steps=2)
    results = est.evaluate(tf.estimator.inputs.numpy_input_fn(
        {"x": x}, labels, batch_size=3, shuffle=False, num_epochs=1))
    expected = {"accuracy": 0.75, "accuracy_baseline": 0.75, "auc": 0.6667,
                "auc_precision_recall": 0.9041, "average_loss": 0.5294, "label/mean": 0.75,
                "loss": 0.4025,  # the mean of the two batches' losses
                "global_step": 2}
    for key, value in expected.items():
        np.testing.assert_allclose(results[key], value, atol=1e-4, err_msg=key)
    export_dir = est.export_saved_model(
        str(tmp_path / "export"), tf.estimator.export.build_parsing_serving_input_receiver_fn(
            fc.make_parse_example_spec([fc.numeric_column("x")])))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sorted(meta.signature_def) == ["classification", "predict", "regression",
                                              "serving_default"]


# --- MultiHead ----------------------------------------------------------------------------
LOGITS_MULTI = np.array([[0.5, 1.0, -1.0, 0.3], [2.0, 0.0, 0.1, -1.0],
                         [0.0, 0.0, 3.0, 0.5], [1.0, -2.0, 0.5, 2.0]], np.float32)
MULTI_LABELS = {"cls": LABELS3, "reg": np.array([[0.5], [-1.0], [0.4], [2.5]], np.float32)}


def multi_head():
    return tf.estimator.MultiHead([tf.estimator.MultiClassHead(3, name="cls"),
                                   tf.estimator.RegressionHead(name="reg")],
                                  head_weights=[1.0, 0.5])


def run_multi(mode, logits, labels=None, regularization=None):
    """(spec, loss, metric values, summaries) of the multi head's spec for `mode`."""
    with tf.Graph().as_default():
        tf.train.create_global_step()
        spec = multi_head().create_estimator_spec(
            {}, mode, logits() if callable(logits) else tf.constant(logits),
            None if labels is None else {k: tf.constant(v) for k, v in labels.items()},
            train_op_fn=lambda loss: tf.assign_add(tf.train.get_global_step(), 1),
            regularization_losses=regularization and [tf.constant(r) for r in regularization])
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            loss = None if spec.loss is None else sess.run(spec.loss)
            sess.run([op for _, op in spec.eval_metric_ops.values()])
            metrics = sess.run({k: v for k, (v, _) in spec.eval_metric_ops.items()})
            summaries = sorted(s.op.name for s in tf.get_collection(tf.GraphKeys.SUMMARIES))
            sess.run(spec.train_op if spec.train_op is not None else tf.no_op())
        return spec, loss, metrics, summaries


def test_multi_head_splits_logits_and_weighs_losses():
    cls_loss = softmax_ce(LABELS3, LOGITS_MULTI[:, :3]).mean()
    reg_loss = ((LOGITS_MULTI[:, 3:] - MULTI_LABELS["reg"]) ** 2).mean()
    spec, loss, metrics, _ = run_multi(M.EVAL, LOGITS_MULTI, MULTI_LABELS, [0.5])
    np.testing.assert_allclose(loss, cls_loss + 0.5 * reg_loss + 0.5, rtol=1e-5)
    expected = {"loss/cls": cls_loss, "loss/reg": reg_loss, "average_loss/cls": cls_loss,
                "average_loss/reg": reg_loss, "accuracy/cls": 0.75,
                "label/mean/reg": MULTI_LABELS["reg"].mean(),
                "prediction/mean/reg": LOGITS_MULTI[:, 3].mean(),
                "regularization_loss/cls_reg": 0.5}
    assert sorted(metrics) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(metrics[key], value, rtol=1e-5, err_msg=key)
    assert sorted(spec.predictions) == [
        ("cls", "all_class_ids"), ("cls", "all_classes"), ("cls", "class_ids"),
        ("cls", "classes"), ("cls", "logits"), ("cls", "probabilities"),
        ("reg", "predictions")]
    # logits may also come per head
    _, dict_loss, _, _ = run_multi(M.EVAL, lambda: {"cls": tf.constant(LOGITS_MULTI[:, :3]),
                                                    "reg": tf.constant(LOGITS_MULTI[:, 3:])},
                                   MULTI_LABELS)
    np.testing.assert_allclose(dict_loss, cls_loss + 0.5 * reg_loss, rtol=1e-5)


def test_multi_head_train_and_predict_modes():
    _, loss, _, summaries = run_multi(M.TRAIN, LOGITS_MULTI, MULTI_LABELS)
    assert summaries == ["loss", "loss/cls", "loss/reg"]  # the heads' summaries too
    spec, _, _, _ = run_multi(M.PREDICT, LOGITS_MULTI)
    assert sorted(spec.export_outputs) == ["cls", "cls/classification", "cls/predict",
                                           "predict", "reg", "reg/predict", "reg/regression",
                                           "serving_default"]
    assert spec.export_outputs["serving_default"] is spec.export_outputs["cls"]
    assert sorted(spec.export_outputs["predict"].outputs) == [
        "cls/all_class_ids", "cls/all_classes", "cls/class_ids", "cls/classes", "cls/logits",
        "cls/probabilities", "reg/predictions"]
    head = multi_head()
    assert (head.name, head.logits_dimension, head.loss_reduction) == (
        "cls_reg", 4, "sum_over_batch_size")


@pytest.mark.parametrize("build, message", [
    (lambda: tf.estimator.MultiHead([]), "Must specify heads. Given: []"),
    (lambda: tf.estimator.MultiHead([tf.estimator.RegressionHead(name="a")],
                                    head_weights=[1.0, 2.0]),
     "heads and head_weights must have the same size. Given len(heads): 1. Given "
     "len(head_weights): 2."),
    (lambda: tf.estimator.MultiHead([tf.estimator.RegressionHead(name="a"),
                                     tf.estimator.RegressionHead(name="b",
                                                                 loss_reduction="sum")]
                                    ).loss_reduction,
     "The loss_reduction must be the same for different heads. Given: "
     "['sum_over_batch_size', 'sum']"),
    (lambda: run_multi(M.EVAL, LOGITS_MULTI[:, :3], MULTI_LABELS),
     "Could not split logits of shape [4, 3] among the heads with individual logits "
     "dimensions: [3, 1]. The last dimension of the logits tensor should equal 3 but is 4."),
    (lambda: run_multi(M.EVAL, LOGITS_MULTI, {"cls": LABELS3}),
     "labels has missing values for head(s): ['reg']"),
])
def test_multi_head_errors(build, message):
    with pytest.raises(ValueError) as e:
        build()
    assert str(e.value) == message
    with pytest.raises(ValueError, match="^All given heads must have name specified"):
        tf.estimator.MultiHead([tf.estimator.RegressionHead()])
