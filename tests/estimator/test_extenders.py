"""tf.estimator.add_metrics: the extended Estimator evaluates the model of the original
(same model_dir) with metric_fn's metrics added. Metric values are checked against
NumPy on the SGD-trained linear model; TensorFlow 2.15 (tensorflow-estimator 2.15) gave
the same values, files and messages for the same programs."""
import numpy as np
import pytest

import tensorweave as tf

from linear_problem import X, Y, eval_input_fn, linear_model_fn, sgd, train_input_fn

CONFIG = dict(log_step_count_steps=None, save_summary_steps=None)
model_fn = linear_model_fn(with_predictions=True)  # params["lr"]


@pytest.fixture
def estimator(tmp_path):
    return tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.05},
                                  config=tf.estimator.RunConfig(**CONFIG))


def test_metrics_added_and_overriding(estimator):
    calls = []

    def metric_fn(labels, predictions, features, config):
        calls.append((sorted(predictions), type(config)))
        return {"mean_label": tf.metrics.mean(labels),
                "mae": tf.metrics.mean(features["x"]),  # replaces the model_fn's "mae"
                "rmse": tf.metrics.root_mean_squared_error(labels, predictions["y"])}

    extended = tf.estimator.add_metrics(estimator, metric_fn)
    assert type(extended) is tf.estimator.Estimator
    assert extended.model_dir == estimator.model_dir
    extended.train(train_input_fn, steps=3)
    assert calls == []  # metric_fn is called in EVAL mode only
    results = extended.evaluate(eval_input_fn)
    assert calls == [(["y"], tf.estimator.RunConfig)]
    w, b = sgd(3, 0.05)
    err = X @ w + b - Y
    assert sorted(results) == ["global_step", "loss", "mae", "mean_label", "rmse"]
    assert results["global_step"] == 3
    np.testing.assert_allclose(results["loss"], np.mean(err ** 2), rtol=1e-5)  # 0.160461
    np.testing.assert_allclose(results["rmse"], np.sqrt(np.mean(err ** 2)), rtol=1e-5)
    np.testing.assert_allclose(results["mean_label"], Y.mean())
    np.testing.assert_allclose(results["mae"], X.mean())  # 0.625
    # the original evaluates the same checkpoint with its own metrics only
    original = estimator.evaluate(eval_input_fn)
    assert sorted(original) == ["global_step", "loss", "mae"]
    np.testing.assert_allclose(original["mae"], np.abs(err).mean(), rtol=1e-5)  # 0.373631


def test_metric_fn_takes_any_subset_and_callables(estimator):
    estimator.train(train_input_fn, steps=3)

    class LabelMean:
        def __call__(self, labels, config):
            return {"ml": tf.metrics.mean(labels)}

    for metric_fn in (lambda labels: {"ml": tf.metrics.mean(labels)}, LabelMean()):
        results = tf.estimator.add_metrics(estimator, metric_fn).evaluate(
            eval_input_fn, steps=1)
        np.testing.assert_allclose(results["ml"], Y[:2].mean())  # first batch: 1.5
        assert sorted(results) == ["global_step", "loss", "mae", "ml"]


def test_model_fn_without_metrics(tmp_path):
    def no_metrics_model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
        pred = tf.matmul(features["x"], w)
        return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_mean(pred - labels),
                                          train_op=tf.no_op(), predictions=pred)

    estimator = tf.estimator.Estimator(no_metrics_model_fn, model_dir=str(tmp_path),
                                       config=tf.estimator.RunConfig(**CONFIG))
    extended = tf.estimator.add_metrics(
        estimator, lambda predictions: {"mp": tf.metrics.mean(predictions)})
    results = extended.evaluate(eval_input_fn)
    assert results["global_step"] == 0
    np.testing.assert_allclose(results["mp"], X.sum(1).mean())  # 1.25
    np.testing.assert_allclose(results["loss"], (X.sum(1, keepdims=True) - Y).mean())


def test_unexpected_metric_fn_argument(estimator):
    def metric_fn(labels, mode):
        return {}
    with pytest.raises(ValueError, match=r"\) has following not expected args: \['mode'\]$"):
        tf.estimator.add_metrics(estimator, metric_fn)


def test_metric_named_loss_is_refused(estimator):
    extended = tf.estimator.add_metrics(estimator,
                                        lambda labels: {"loss": tf.metrics.mean(labels)})
    with pytest.raises(ValueError, match='^Metric with name "loss" is not allowed, because '
                                         'Estimator already defines a default metric'):
        extended.evaluate(eval_input_fn)
