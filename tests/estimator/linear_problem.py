"""The linear-regression problem the tf.estimator tests share: four examples of two
features, full-batch SGD on the mean squared error from zero weights, the NumPy reference
of that SGD, the tf.data input functions and a linear model_fn factory.

A plain module (not a conftest): test files import it as `from linear_problem import ...`
(pytest puts tests/estimator on sys.path), so its name must stay unique under tests/."""
import numpy as np

import tensorweave as tf

X = np.array([[1., 2.], [3., -1.], [0.5, 0.5], [-2., 1.]], np.float32)
Y = np.array([[1.], [2.], [0.], [-1.]], np.float32)
LR = 0.1


def sgd(steps, lr=LR):
    """(w, b) after `steps` full-batch gradient steps on mean((Xw + b - Y)^2) from 0."""
    w, b = np.zeros((2, 1)), np.zeros(1)
    for _ in range(steps):
        err = X @ w + b - Y
        w, b = w - lr * 2 * X.T @ err / len(X), b - lr * 2 * err.mean(0)
    return w, b


def train_input_fn():
    """({"x": X}, Y) as one batch of all four examples, repeated forever."""
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(4)


def eval_input_fn():
    """({"x": X}, Y) once, in two batches of two."""
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(2)


def predict_input_fn(batch=3):
    """An input_fn giving {"x": X} once, in batches of `batch` (no labels)."""
    return lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(batch)


def linear(features, init=0.0, w_name="w"):
    """features["x"] @ w + b, with variables `w_name` [2, 1] and "b" [1] set to `init`."""
    w = tf.get_variable(w_name, [2, 1], initializer=tf.constant_initializer(init))
    b = tf.get_variable("b", [1], initializer=tf.constant_initializer(init))
    return tf.matmul(features["x"], w) + b


def linear_model_fn(lr=None, double=False, mean_pred=False, with_predictions=False):
    """A model_fn of linear regression by SGD on the mean squared error, with an "mae"
    eval metric; PREDICT gives {"y": prediction}.

    lr: the learning rate; None reads params["lr"] (the model_fn then takes `params`).
    double: PREDICT also gives "double" (2 * prediction).
    mean_pred: also the "mean_pred" metric (the mean prediction).
    with_predictions: TRAIN and EVAL specs carry the predictions too (what add_metrics'
    metric_fn reads)."""

    def spec(features, labels, mode, learning_rate):
        pred = linear(features)
        predictions = {"y": pred}
        if double:
            predictions["double"] = 2 * pred
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(tf.square(pred - labels))
        train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(
            loss, global_step=tf.train.get_global_step())
        metrics = {"mae": tf.metrics.mean_absolute_error(labels, pred)}
        if mean_pred:
            metrics["mean_pred"] = tf.metrics.mean(pred)
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops=metrics,
            predictions=predictions if with_predictions else None)

    if lr is None:
        def model_fn(features, labels, mode, params):
            return spec(features, labels, mode, params["lr"])
    else:
        def model_fn(features, labels, mode):
            return spec(features, labels, mode, lr)
    return model_fn
