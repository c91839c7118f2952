"""Model.compile / fit / evaluate / predict and the *_on_batch methods in graph mode,
against NumPy: gradient-descent iterates, losses averaged over samples, sample and class
weights, accuracies, the validation split, batch order, several outputs, the learning
phase and batch norm updates, the model's own losses, and the errors."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers

W0 = np.array([[0.5], [-0.2], [0.1]], np.float32)
B0 = np.array([0.3], np.float32)


pytestmark = pytest.mark.usefixtures("keras_graph")


def _data(n=20, seed=0):
    rs = np.random.RandomState(seed)
    x = rs.randn(n, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3 + 0.1 * rs.randn(n, 1)).astype(np.float32)
    return x, y


def _linear(optimizer, loss="mse", **compile_kwargs):
    model = K.Sequential([L.Dense(1, input_shape=(3,))])
    model.set_weights([W0, B0])
    model.compile(optimizer, loss, **compile_kwargs)
    return model


def _np_mse(w, b, x, y):
    return float(np.mean((x @ w + b - y) ** 2))


def _np_gd_epoch(w, b, x, y, lr, batch_size):
    """One epoch of minibatch gradient descent on the MSE: (w, b, mean of the batch
    losses weighted by batch size)."""
    total = 0.0
    for start in range(0, len(x), batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        error = xb @ w + b - yb
        total += float(np.mean(error ** 2)) * len(xb)
        w = w - lr * 2 * xb.T @ error / len(xb)
        b = b - lr * 2 * error.mean(axis=0)
    return w, b, total / len(x)


def test_fit_sgd_matches_numpy_gradient_descent():
    x, y = _data()
    model = _linear(K.optimizers.SGD(0.1), metrics=["mae"])
    seen = []
    record = K.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: seen.append(model.get_weights()))
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                        callbacks=[record])
    assert history is model.history and history.epoch == [0, 1, 2]
    assert sorted(history.history) == ["loss", "mean_absolute_error"]
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    for epoch in range(3):
        w, b, loss = _np_gd_epoch(w, b, x, y, 0.1, 8)
        np.testing.assert_allclose(seen[epoch][0], w, rtol=1e-5)
        np.testing.assert_allclose(seen[epoch][1], b, rtol=1e-5)
        np.testing.assert_allclose(history.history["loss"][epoch], loss, rtol=1e-5)
    assert K.backend.get_value(model.optimizer.iterations) == 9  # 3 batches x 3 epochs


def test_evaluate_averages_over_samples_and_metrics_over_all_data():
    x, y = _data(23)
    model = _linear("sgd", metrics=["mae", "mse"])
    assert model.metrics_names == ["loss", "mean_absolute_error", "mean_squared_error"]
    loss, mae, mse = model.evaluate(x, y, batch_size=7, verbose=0)
    error = x @ W0 + B0 - y
    np.testing.assert_allclose([loss, mae, mse], [np.mean(error ** 2), np.mean(np.abs(error)),
                                                  np.mean(error ** 2)], rtol=1e-5)
    # as Keras: the loss sums in float64, the metrics are the session's float32 values
    assert [type(v) for v in (loss, mae, mse)] == [np.float64, np.float32, np.float32]
    only_loss = _linear("sgd")
    np.testing.assert_allclose(only_loss.evaluate(x, y, batch_size=5, verbose=0),
                               np.mean(error ** 2), rtol=1e-5)
    np.testing.assert_allclose(only_loss.predict(x, batch_size=4), x @ W0 + B0, rtol=1e-5)


@pytest.mark.parametrize("kind", ["binary", "categorical", "sparse"])
def test_accuracy_is_resolved_from_the_loss_and_output(kind):
    rs = np.random.RandomState(1)
    x = rs.randn(30, 4).astype(np.float32)
    units, activation, loss = {"binary": (1, "sigmoid", "binary_crossentropy"),
                               "categorical": (3, "softmax", "categorical_crossentropy"),
                               "sparse": (3, "softmax", "sparse_categorical_crossentropy")}[kind]
    model = K.Sequential([L.Dense(units, activation=activation, input_shape=(4,))])
    model.compile("adam", loss, metrics=["accuracy", "crossentropy"])
    assert model.metrics_names == ["loss", "acc", "ce"]
    p = model.predict(x)
    if kind == "binary":
        y = (rs.rand(30, 1) > 0.5).astype(np.float32)
        acc = np.mean((p > 0.5) == y)
        ce = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    else:
        labels = rs.randint(0, 3, 30)
        y = labels if kind == "sparse" else np.eye(3, dtype=np.float32)[labels]
        acc = np.mean(p.argmax(axis=1) == labels)
        ce = -np.mean(np.log(p[np.arange(30), labels]))
    loss_value, acc_value, ce_value = model.evaluate(x, y, batch_size=8, verbose=0)
    np.testing.assert_allclose([loss_value, acc_value, ce_value], [ce, acc, ce], rtol=1e-5)


def test_validation_split_takes_the_last_fraction():
    x, y = _data(20)
    model = _linear(K.optimizers.SGD(0.0))
    history = model.fit(x, y, batch_size=4, epochs=1, validation_split=0.25, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [_np_mse(W0, B0, x[:15], y[:15])],
                               rtol=1e-5)
    np.testing.assert_allclose(history.history["val_loss"], [_np_mse(W0, B0, x[15:], y[15:])],
                               rtol=1e-5)
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0,
                        validation_data=(x[:6], y[:6]), validation_freq=2)
    assert len(history.history["val_loss"]) == 1 and len(history.history["loss"]) == 2


def _batch_losses(model, x, y, **fit_kwargs):
    losses = []
    record = K.callbacks.LambdaCallback(
        on_batch_end=lambda batch, logs: losses.append((batch, logs["size"], logs["loss"])))
    model.fit(x, y, batch_size=6, epochs=1, verbose=0, callbacks=[record], **fit_kwargs)
    return losses


def test_batch_order_with_and_without_shuffling():
    x, y = _data(16)
    model = _linear(K.optimizers.SGD(0.0))
    losses = _batch_losses(model, x, y, shuffle=False)
    expected = [(i, len(x[s:s + 6]), _np_mse(W0, B0, x[s:s + 6], y[s:s + 6]))
                for i, s in enumerate(range(0, 16, 6))]
    assert [(b, n) for b, n, _ in losses] == [(b, n) for b, n, _ in expected]
    np.testing.assert_allclose([v for _, _, v in losses], [v for _, _, v in expected],
                               rtol=1e-5)
    np.random.seed(5)
    shuffled = _batch_losses(model, x, y, shuffle=True)
    np.random.seed(5)
    order = np.arange(16)
    np.random.shuffle(order)
    np.testing.assert_allclose(
        [v for _, _, v in shuffled],
        [_np_mse(W0, B0, x[order[s:s + 6]], y[order[s:s + 6]]) for s in range(0, 16, 6)],
        rtol=1e-5)


def test_sample_weights_and_class_weights_weigh_the_loss():
    x, y = _data(10)
    model = _linear(K.optimizers.SGD(0.0), weighted_metrics=["mse"], metrics=["mse"])
    weights = np.linspace(0.5, 2.0, 10)
    loss, mse, weighted_mse = model.evaluate(x, y, sample_weight=weights, batch_size=4,
                                             verbose=0)
    per_sample = ((x @ W0 + B0 - y) ** 2).ravel()
    # the loss divides the weighted sum by the number of samples of each batch
    batches = [slice(0, 4), slice(4, 8), slice(8, 10)]
    expected_loss = sum(np.sum(per_sample[s] * weights[s]) for s in batches) / 10
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-5)
    np.testing.assert_allclose(mse, per_sample.mean(), rtol=1e-5)
    # a weighted metric divides by the sum of the weights
    np.testing.assert_allclose(weighted_mse, np.sum(per_sample * weights) / weights.sum(),
                               rtol=1e-5)
    assert model.metrics_names == ["loss", "mean_squared_error", "weighted_mean_squared_error"]
    labels = np.array([0, 1, 1, 0, 1, 1, 1, 0, 1, 1])
    history = model.fit(x, labels.reshape(-1, 1).astype(np.float32), batch_size=10,
                        class_weight={0: 3.0, 1: 0.5}, verbose=0)
    class_weights = np.where(labels == 0, 3.0, 0.5)
    errors = ((x @ W0 + B0).ravel() - labels) ** 2
    np.testing.assert_allclose(history.history["loss"], [np.mean(errors * class_weights)],
                               rtol=1e-5)
    with pytest.raises(ValueError, match="`class_weight` must contain all classes"):
        model.fit(x, labels.reshape(-1, 1), class_weight={0: 1.0}, verbose=0)


def test_several_outputs_with_loss_weights_and_named_metrics():
    inp = K.Input((3,), name="features")
    reg = L.Dense(1, name="reg")(inp)
    cls = L.Dense(2, activation="softmax", name="cls")(inp)
    model = K.Model(inp, [reg, cls])
    rs = np.random.RandomState(2)
    model.set_weights([rs.randn(3, 1).astype(np.float32), np.zeros(1, np.float32),
                       rs.randn(3, 2).astype(np.float32), np.zeros(2, np.float32)])
    def loss(y_true, y_pred):  # a metric named as the loss: 'reg_loss_1'
        return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)

    model.compile(K.optimizers.SGD(0.0),
                  loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
                  loss_weights=[0.5, 2.0], metrics={"cls": "acc", "reg": ["mae", "mae", loss]})
    assert model.metrics_names == ["loss", "reg_loss", "cls_loss", "reg_mean_absolute_error",
                                   "reg_loss_1", "cls_acc"]
    x = rs.randn(12, 3).astype(np.float32)
    y_reg = rs.randn(12, 1).astype(np.float32)
    y_cls = rs.randint(0, 2, 12)
    results = model.evaluate(x, {"reg": y_reg, "cls": y_cls}, batch_size=12, verbose=0)
    p_reg, p_cls = model.predict(x)
    mse = np.mean((p_reg - y_reg) ** 2)
    ce = -np.mean(np.log(p_cls[np.arange(12), y_cls]))
    acc = np.mean(p_cls.argmax(1) == y_cls)
    mae = np.mean(np.abs(p_reg - y_reg))
    np.testing.assert_allclose(results, [0.5 * mse + 2 * ce, mse, ce, mae, mae, acc],
                               rtol=1e-5)
    # the per-output losses are means over batches, the total over samples
    results = model.evaluate(x, [y_reg, y_cls], batch_size=8, verbose=0)
    batch_mse = [np.mean((p_reg[s] - y_reg[s]) ** 2) for s in (slice(0, 8), slice(8, 12))]
    np.testing.assert_allclose(results[1], np.mean(batch_mse), rtol=1e-5)
    np.testing.assert_allclose(results[0], 0.5 * mse + 2 * ce, rtol=1e-5)
    with pytest.raises(ValueError, match="Unknown entries in loss dictionary"):
        model.compile("sgd", loss={"nope": "mse"})


def test_output_without_loss_takes_no_target():
    inp = K.Input((3,))
    a = L.Dense(1, name="a")(inp)
    b = L.Dense(2, name="b", trainable=False)(inp)
    model = K.Model(inp, [a, b])
    model.compile(K.optimizers.SGD(0.1), loss=["mse", None], metrics=["mae"])
    assert model.metrics_names == ["loss", "a_loss", "a_mean_absolute_error"]
    x, y = _data(8)
    model.fit(x, y, batch_size=4, verbose=0)  # one target: the other output has no loss


def test_train_test_predict_on_batch():
    x, y = _data(6)
    model = _linear(K.optimizers.SGD(0.1), metrics=["mae"])
    loss, mae = model.train_on_batch(x, y)
    error = x @ W0 + B0 - y
    np.testing.assert_allclose([loss, mae], [np.mean(error ** 2), np.mean(np.abs(error))],
                               rtol=1e-5)
    w, b, _ = _np_gd_epoch(W0, B0, x, y, 0.1, 6)
    np.testing.assert_allclose(model.predict_on_batch(x), x @ w + b, rtol=1e-5)
    error = x @ w + b - y
    np.testing.assert_allclose(model.test_on_batch(x, y), [np.mean(error ** 2),
                                                           np.mean(np.abs(error))], rtol=1e-5)
    # without reset, the metric accumulates over calls
    model.test_on_batch(x[:3], y[:3], reset_metrics=False)
    _, mae_all = model.test_on_batch(x[3:], y[3:], reset_metrics=False)
    np.testing.assert_allclose(mae_all, np.mean(np.abs(error)), rtol=1e-5)
    model.reset_metrics()
    assert K.backend.get_value(model.metrics[0].count) == 0


def test_steps_per_epoch_runs_each_step_on_all_the_data():
    x, y = _data(10)
    model = _linear(K.optimizers.SGD(0.05))
    history = model.fit(x, y, steps_per_epoch=3, epochs=1, verbose=0)
    w, b, losses = W0.astype(np.float64), B0.astype(np.float64), []
    for _ in range(3):
        w, b, loss = _np_gd_epoch(w, b, x, y, 0.05, 10)
        losses.append(loss)
    np.testing.assert_allclose(history.history["loss"], [np.mean(losses)], rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    with pytest.raises(ValueError, match="If steps_per_epoch is set, the `batch_size` must"):
        model.fit(x, y, steps_per_epoch=2, batch_size=4, verbose=0)


def test_learning_phase_dropout_and_batch_norm_updates():
    ones = np.ones((8, 50), np.float32)
    dropout = K.Sequential([L.Dropout(0.5, input_shape=(50,))])
    dropout.compile("sgd", "mse")
    assert dropout.evaluate(ones, ones, verbose=0) == 0.0
    np.testing.assert_array_equal(dropout.predict(ones), ones)
    # in training, each unit is dropped (error 1) or doubled (error 1): the mse is 1
    np.testing.assert_allclose(dropout.train_on_batch(ones, ones), 1.0, rtol=1e-6)
    bn = K.Sequential([L.BatchNormalization(input_shape=(2,), momentum=0.9)])
    bn.compile(K.optimizers.SGD(0.0), "mse")
    x = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    bn.fit(x, x, batch_size=2, epochs=2, verbose=0)
    mean = x.mean(axis=0) * (1 - 0.9 ** 2)  # two updates from 0 toward the batch mean
    np.testing.assert_allclose(K.backend.get_value(bn.layers[0].moving_mean), mean, rtol=1e-5)
    bn.evaluate(x, x, verbose=0)  # inference: no update
    np.testing.assert_allclose(K.backend.get_value(bn.layers[0].moving_mean), mean, rtol=1e-5)


def test_regularizers_and_added_losses_are_in_the_total_loss():
    inp = K.Input((3,))
    dense = L.Dense(1, kernel_regularizer=K.regularizers.l2(0.1))
    out = dense(inp)
    model = K.Model(inp, out)
    model.add_loss(tf.reduce_sum(out) * 0.0 + 0.25)
    model.set_weights([W0, B0])
    model.compile(K.optimizers.SGD(0.0), "mse")
    x, y = _data(9)
    expected = _np_mse(W0, B0, x, y) + 0.1 * np.sum(W0 ** 2) + 0.25
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=9, verbose=0), expected,
                               rtol=1e-5)


def test_models_without_inputs_are_built_on_the_data():
    x, y = _data(12)
    sequential = K.Sequential([L.Dense(4, activation="relu"), L.Dense(1)])
    sequential.compile("adam", "mse", metrics=["mae"])
    history = sequential.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert sequential.built and len(history.history["loss"]) == 2
    assert sequential.predict(x).shape == (12, 1)

    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(1)

        def call(self, inputs, training=None):
            return self.dense(inputs)

    net = Net()
    net.compile(K.optimizers.SGD(0.1), "mse")
    net.train_on_batch(x[:4], y[:4])
    assert net.input_names == ["input_1"] and net.output_names == ["output_1"]
    net.set_weights([W0, B0])
    np.testing.assert_allclose(net.evaluate(x, y, verbose=0), _np_mse(W0, B0, x, y),
                               rtol=1e-5)


def test_target_tensors_replace_the_fed_targets():
    inp = K.Input((3,))
    out = L.Dense(1)(inp)
    model = K.Model(inp, out)
    model.set_weights([W0, B0])
    model.compile(K.optimizers.SGD(0.0), "mse", target_tensors=[tf.zeros_like(out)])
    x, _ = _data(7)
    np.testing.assert_allclose(model.evaluate(x, None, batch_size=7, verbose=0),
                               np.mean((x @ W0 + B0) ** 2), rtol=1e-5)


def test_verbose_output(capsys):
    x, y = _data(10)
    model = _linear(K.optimizers.SGD(0.1), metrics=["mae"])
    model.fit(x, y, batch_size=5, epochs=2, validation_split=0.2, verbose=2)
    out = capsys.readouterr().out
    assert "Train on 8 samples, validate on 2 samples" in out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out
    assert "8/8 - " in out and " - loss: " in out and " - val_mean_absolute_error: " in out
    model.fit(x, y, batch_size=5, epochs=1, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 1/1" not in out and "10/10 [==============================]" in out
    model.fit(x, y, batch_size=5, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""


def test_errors():
    x, y = _data(6)
    model = K.Sequential([L.Dense(1, input_shape=(3,))])
    with pytest.raises(RuntimeError, match="You must compile your model before training"):
        model.fit(x, y)
    with pytest.raises(TypeError, match="Invalid keyword argument"):
        model.compile("sgd", "mse", unknown=1)
    with pytest.raises(ValueError, match="run_eagerly=True"):
        model.compile("sgd", "mse", run_eagerly=True)
    with pytest.raises(NotImplementedError, match="distribute"):
        model.compile("sgd", "mse", distribute=object())
    with pytest.raises(ValueError, match="Received uninstantiated Loss class"):
        model.compile("sgd", K.losses.MeanSquaredError)
    model.compile("sgd", "mse")
    # TF 2.15 shows the shapes it compared: without the batch axis
    with pytest.raises(ValueError, match=r"^Error when checking input: expected dense_input "
                                         r"to have shape \(3,\) but got array with shape "
                                         r"\(4,\)$"):
        model.fit(np.zeros((6, 4)), y, verbose=0)
    with pytest.raises(ValueError, match="Input arrays should have the same number of samples"):
        model.fit(x, y[:5], verbose=0)
    with pytest.raises(TypeError, match="Unrecognized keyword arguments"):
        model.fit(x, y, verbose=0, bogus=1)
    with pytest.raises(NotImplementedError, match="takes NumPy data"):
        model.fit(tf.constant(x), y, verbose=0)
    with pytest.raises(ValueError, match="`validation_steps` should not be specified"):
        model.fit(x, y, validation_steps=2, verbose=0)
    with pytest.raises(ValueError, match="sample_weight cannot be broadcast"):
        model.fit(x, y, sample_weight=np.ones(5), verbose=0)
    model.compile("sgd", "categorical_crossentropy")
    with pytest.raises(ValueError, match="while using as loss `categorical_crossentropy`"):
        model.fit(x, y, verbose=0)
    fixed = K.Sequential([L.Dense(1, batch_input_shape=(3, 3))])
    fixed.compile("sgd", "mse")
    with pytest.raises(ValueError, match="incompatible with the specified batch size"):
        fixed.fit(x, y, batch_size=2, verbose=0)
    with pytest.raises(ValueError, match="no loss to optimize"):
        K.Sequential([L.Dense(1, input_shape=(3,))]).compile("sgd", loss=None)


def test_fit_refuses_objects_it_cannot_read_as_arrays():
    # an object with only __len__/__getitem__ (a keras.utils.Sequence look-alike) was
    # indexed by np.asarray until memory ran out; now TF's "no data adapter" ValueError
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile("sgd", "mse")

    class Batches:
        def __len__(self):
            return 4

        def __getitem__(self, i):  # never raises IndexError
            return np.ones((2, 3)), np.ones((2, 1))

    with pytest.raises(ValueError, match="Failed to find data adapter"):
        model.fit(Batches(), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="Failed to find data adapter"):
        model.predict(Batches())


# --- add_metric (TF 2.15, Keras 2, graph mode) ----------------------------------------------
class _ActivationMean(L.Layer):
    def call(self, x):
        self.add_metric(tf.reduce_mean(x), name="act_mean", aggregation="mean")
        return x


class _ActivationMax(L.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.peak = K.metrics.Mean(name="peak")

    def call(self, x):
        self.add_metric(self.peak(tf.reduce_max(x)))
        return x


def test_add_metric_reports_the_mean_over_batches():
    x = np.arange(30, dtype=np.float32).reshape(10, 3) / 10.0
    y = np.arange(10, dtype=np.float32).reshape(10, 1)
    with tf.Graph().as_default():
        inp = K.Input((3,))
        out = L.Dense(1, kernel_initializer="ones")(inp)
        hidden = _ActivationMax()(_ActivationMean()(inp))  # metric-only layers
        model = K.Model(inp, L.Add()([out, tf.reduce_sum(hidden, 1, keepdims=True) * 0.0]))
        model.add_metric(tf.reduce_sum(model.output), name="out_sum", aggregation="mean")
        assert model.metrics_names == ["loss", "act_mean", "peak", "out_sum"]
        model.compile(K.optimizers.SGD(0.0), "mse", metrics=["mae"])
        assert model.metrics_names == ["loss", "mean_absolute_error", "act_mean", "peak",
                                       "out_sum"]
        history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
        batches = [x[:4], x[4:8], x[8:]]
        # the mean metric of per-batch values: an unweighted mean over the batches
        expected = {"act_mean": np.mean([b.mean() for b in batches]),
                    "peak": np.mean([b.max() for b in batches]),
                    "out_sum": np.mean([b.sum() for b in batches])}
        for name, value in expected.items():
            np.testing.assert_allclose(history.history[name], [value] * 2, rtol=1e-6)
        results = model.evaluate(x, y, batch_size=5, verbose=0)
        np.testing.assert_allclose(results[2:], [np.mean([x[:5].mean(), x[5:].mean()]),
                                                 np.mean([x[:5].max(), x[5:].max()]),
                                                 np.mean([x[:5].sum(), x[5:].sum()])],
                                   rtol=1e-6)
        K.backend.set_session(None)


def test_add_metric_errors():
    with tf.Graph().as_default():
        inp = K.Input((3,))
        model = K.Model(inp, L.Dense(1)(inp))
        with pytest.raises(ValueError, match="^Please provide a name for your metric"):
            model.add_metric(tf.reduce_sum(inp))
        with pytest.raises(ValueError, match=r"^We currently support only `mean` sample-wise "
                                             r"metric aggregation\. You provided "
                                             r"aggregation=`sum`$"):
            model.add_metric(tf.reduce_sum(inp), name="a", aggregation="sum")
        with pytest.raises(ValueError, match="^We do not support adding an aggregated metric"):
            model.add_metric(tf.reduce_sum(inp), name="a")
        with pytest.raises(ValueError, match="^Using the result of calling a `Metric` object"):
            model.add_metric(K.metrics.Mean(name="m")(inp))
        with pytest.raises(ValueError, match="^Expected a symbolic Tensor for the metric "
                                             "value, received: 3.0$"):
            model.add_metric(3.0, name="c", aggregation="mean")


def test_steps_per_epoch_on_arrays_counts_steps_as_samples(capsys):
    x, y = _data(6)
    model = K.Sequential([L.Dense(1, input_shape=(3,))])
    model.compile("sgd", "mse")
    history = model.fit(x, y, epochs=1, steps_per_epoch=2, verbose=2)
    # TF 2.15: params' samples is the step count; the line says samples (not a dataset)
    assert history.params["samples"] == 2 and history.params["steps"] == 2
    assert capsys.readouterr().out.startswith("Train on 2 samples\n")
