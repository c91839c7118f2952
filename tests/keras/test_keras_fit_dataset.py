"""Model.fit / evaluate / predict on tf.data datasets and TF1 iterators (graph mode), against
NumPy gradient descent and against the same calls on arrays: batches read in the dataset's
order, epochs that restart it or (with steps_per_epoch) read on, step-wise losses and
callback logs, validation datasets, dict and tuple elements, sample weights from the
elements, models built from the element spec, and Keras' errors."""
import logging

import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers

W0 = np.array([[0.5], [-0.2], [0.1]], np.float32)
B0 = np.array([0.3], np.float32)

pytestmark = pytest.mark.usefixtures("keras_graph")


def _data(n=24, seed=0):
    rs = np.random.RandomState(seed)
    x = rs.randn(n, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3 + 0.1 * rs.randn(n, 1)).astype(np.float32)
    return x, y


def _linear(lr=0.1, metrics=("mae",)):
    model = K.Sequential([L.Dense(1, input_shape=(3,))])
    model.set_weights([W0, B0])
    model.compile(K.optimizers.SGD(lr), "mse", metrics=list(metrics))
    return model


def _dataset(*arrays, batch_size=8):
    return tf.data.Dataset.from_tensor_slices(arrays if len(arrays) > 1 else arrays[0]) \
        .batch(batch_size)


def _np_gd(w, b, batches, lr):
    """Gradient descent on the MSE over `batches` (x, y) in order: (w, b, the loss of
    each batch before its step)."""
    losses = []
    for xb, yb in batches:
        error = xb @ w + b - yb
        losses.append(float(np.mean(error ** 2)))
        w = w - lr * 2 * xb.T @ error / len(xb)
        b = b - lr * 2 * error.mean(axis=0)
    return w, b, losses


def _batches(x, y, size):
    return [(x[i:i + size], y[i:i + size]) for i in range(0, len(x), size)]


class _Recorder(K.callbacks.Callback):
    """Records the train batch hooks (batch, size) and the weights at each epoch end."""

    def __init__(self):
        super().__init__()
        self.events, self.weights = [], []

    def on_train_batch_begin(self, batch, logs=None):
        self.events.append(("begin", batch))

    def on_train_batch_end(self, batch, logs=None):
        self.events.append(("end", batch, logs["size"]))

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append(self.model.get_weights())


def test_fit_on_a_dataset_equals_gradient_descent_and_fitting_the_arrays():
    x, y = _data(24)
    model, recorder = _linear(), _Recorder()
    history = model.fit(_dataset(x, y), epochs=3, verbose=0, callbacks=[recorder])
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    for epoch in range(3):  # each epoch reads the whole dataset again, in order
        w, b, losses = _np_gd(w, b, _batches(x, y, 8), 0.1)
        np.testing.assert_allclose(recorder.weights[epoch][0], w, rtol=1e-5)
        np.testing.assert_allclose(recorder.weights[epoch][1], b, rtol=1e-5)
        np.testing.assert_allclose(history.history["loss"][epoch], np.mean(losses),
                                   rtol=1e-5)
    assert history.params["steps"] == 3 and history.params["batch_size"] is None
    assert recorder.events[:6] == [("begin", 0), ("end", 0, 1), ("begin", 1), ("end", 1, 1),
                                   ("begin", 2), ("end", 2, 1)]
    assert K.backend.get_value(model.optimizer.iterations) == 9
    arrays = _linear()
    reference = arrays.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    for got, want in zip(model.get_weights(), arrays.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    for key in ("loss", "mean_absolute_error"):  # equal batches: same epoch means
        np.testing.assert_allclose(history.history[key], reference.history[key], rtol=1e-5)


def test_an_uneven_last_batch_counts_as_one_step():
    x, y = _data(20)
    model = _linear(metrics=())
    history = model.fit(_dataset(x, y), epochs=1, verbose=0, shuffle=True)
    w, b, losses = _np_gd(W0.astype(np.float64), B0.astype(np.float64), _batches(x, y, 8),
                          0.1)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    np.testing.assert_allclose(history.history["loss"], [np.mean(losses)], rtol=1e-5)


def test_a_dataset_of_unknown_size_runs_until_it_ends_then_restarts():
    x, y = _data(24)
    model, recorder = _linear(), _Recorder()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).filter(lambda a, b: True).batch(8)
    history = model.fit(dataset, epochs=2, verbose=0, callbacks=[recorder])
    # as Keras: the read that finds the end of the first epoch has a begin hook; the
    # second epoch knows its 3 steps
    assert recorder.events == [("begin", 0), ("end", 0, 1), ("begin", 1), ("end", 1, 1),
                               ("begin", 2), ("end", 2, 1), ("begin", 3)] + \
        [("begin", 0), ("end", 0, 1), ("begin", 1), ("end", 1, 1), ("begin", 2), ("end", 2, 1)]
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    for epoch in range(2):
        w, b, losses = _np_gd(w, b, _batches(x, y, 8), 0.1)
        np.testing.assert_allclose(history.history["loss"][epoch], np.mean(losses),
                                   rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)


def test_steps_per_epoch_reads_on_across_epochs_and_stops_when_the_data_end(caplog):
    x, y = _data(20)
    batches = _batches(x, y, 4)  # 5 batches
    model = _linear()
    history = model.fit(_dataset(x, y, batch_size=4), steps_per_epoch=2, epochs=2,
                        verbose=0)
    w, b, losses = _np_gd(W0.astype(np.float64), B0.astype(np.float64), batches[:4], 0.1)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    np.testing.assert_allclose(history.history["loss"],
                               [np.mean(losses[:2]), np.mean(losses[2:])], rtol=1e-5)
    model = _linear()
    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        history = model.fit(_dataset(x, y, batch_size=4).repeat(2), steps_per_epoch=3,
                            epochs=5, verbose=0)
    assert "Your dataset ran out of data" in caplog.text
    assert "(in this case, 15 batches)" in caplog.text
    assert history.epoch == [0, 1, 2, 3]  # 10 batches: the 4th epoch has one
    w, b, losses = _np_gd(W0.astype(np.float64), B0.astype(np.float64), batches * 2, 0.1)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    np.testing.assert_allclose(history.history["loss"][3], losses[9], rtol=1e-5)
    endless = _linear()
    endless.fit(_dataset(x, y, batch_size=4).repeat(), steps_per_epoch=7, epochs=1, verbose=0)
    w, b, _ = _np_gd(W0.astype(np.float64), B0.astype(np.float64), (batches * 2)[:7], 0.1)
    np.testing.assert_allclose(endless.get_weights()[0], w, rtol=1e-5)
    model = _linear()  # the data end at an epoch's start: as Keras, no error, and the
    # epoch's loss is the last epoch's once more divided by the steps
    history = model.fit(_dataset(x[:16], y[:16], batch_size=4), steps_per_epoch=2, epochs=4,
                        verbose=0)
    _, _, losses = _np_gd(W0.astype(np.float64), B0.astype(np.float64), batches[:4], 0.1)
    np.testing.assert_allclose(history.history["loss"],
                               [np.mean(losses[:2]), np.mean(losses[2:]),
                                np.mean(losses[2:]) / 2], rtol=1e-5)


def test_evaluate_and_predict_equal_their_array_counterparts():
    x, y = _data(24)
    model = _linear(metrics=("mae", "mse"))
    np.testing.assert_allclose(model.evaluate(_dataset(x, y), verbose=0),
                               model.evaluate(x, y, batch_size=8, verbose=0), rtol=1e-6)
    x20, y20 = x[:20], y[:20]  # an uneven last batch: the loss is the mean over steps
    loss, mae, mse = model.evaluate(_dataset(x20, y20), verbose=0)
    error = x20 @ W0 + B0 - y20
    step_losses = [np.mean(error[i:i + 8] ** 2) for i in (0, 8, 16)]
    np.testing.assert_allclose([loss, mae, mse],
                               [np.mean(step_losses), np.mean(np.abs(error)),
                                np.mean(error ** 2)], rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(_dataset(x, y), steps=2, verbose=0)[0],
                               np.mean((x[:16] @ W0 + B0 - y[:16]) ** 2), rtol=1e-5)
    want = model.predict(x, batch_size=8)
    np.testing.assert_allclose(want, x @ W0 + B0, rtol=1e-5)
    np.testing.assert_allclose(model.predict(_dataset(x)), want, rtol=1e-6)
    np.testing.assert_allclose(model.predict(_dataset(x, y)), want, rtol=1e-6)  # y unused
    np.testing.assert_allclose(model.predict(_dataset(x), steps=2), want[:16], rtol=1e-6)
    np.testing.assert_allclose(model.predict(_dataset(x).repeat(), steps=4),
                               np.concatenate([want, want[:8]]), rtol=1e-6)
    column = K.Sequential([L.Dense(1, input_shape=(1,), kernel_initializer="ones")])
    np.testing.assert_allclose(column.predict(_dataset(x[:, 0])), x[:, :1], rtol=1e-6)


def test_validation_dataset_gives_the_loss_evaluate_gives():
    x, y = _data(24)
    val_x, val_y = _data(12, seed=1)
    val = _dataset(val_x, val_y, batch_size=4)
    model = _linear()
    evaluated = []
    check = K.callbacks.LambdaCallback(  # after validation, before the next epoch trains
        on_epoch_end=lambda epoch, logs: evaluated.append(model.evaluate(val, verbose=0)))
    history = model.fit(_dataset(x, y), validation_data=val, epochs=3, verbose=0,
                        callbacks=[check])
    np.testing.assert_allclose(history.history["val_loss"], [e[0] for e in evaluated],
                               rtol=1e-6)
    np.testing.assert_allclose(history.history["val_mean_absolute_error"],
                               [e[1] for e in evaluated], rtol=1e-6)
    model = _linear(lr=0.0)  # validation_steps: the same first batch at every epoch
    history = model.fit(_dataset(x, y), validation_data=val.repeat(), validation_steps=1,
                        epochs=2, verbose=0)
    first = np.mean((val_x[:4] @ W0 + B0 - val_y[:4]) ** 2)
    np.testing.assert_allclose(history.history["val_loss"], [first, first], rtol=1e-5)
    arrays = _linear()  # arrays for training, a dataset for validation, and inversely
    history = arrays.fit(x, y, batch_size=8, shuffle=False, validation_data=val, verbose=0)
    np.testing.assert_allclose(history.history["val_loss"], arrays.evaluate(val, verbose=0)[0],
                               rtol=1e-6)
    model = _linear()
    history = model.fit(_dataset(x, y), validation_data=(val_x, val_y), verbose=0)
    np.testing.assert_allclose(history.history["val_loss"],
                               model.evaluate(val_x, val_y, verbose=0)[0], rtol=1e-6)


def _two_in_two_out():
    a, b = K.Input((2,), name="a"), K.Input((3,), name="b")
    hidden = L.concatenate([a, b])
    out1 = L.Dense(1, name="o1", kernel_initializer=K.initializers.Constant(0.1))(hidden)
    out2 = L.Dense(2, name="o2", kernel_initializer=K.initializers.Constant(-0.2))(hidden)
    model = K.Model([a, b], [out1, out2])
    model.compile(K.optimizers.SGD(0.05), "mse", metrics=["mae"])
    return model


def test_dict_and_tuple_elements_feed_several_inputs_and_outputs():
    rs = np.random.RandomState(1)
    a, b = rs.randn(12, 2).astype(np.float32), rs.randn(12, 3).astype(np.float32)
    t1, t2 = rs.randn(12, 1).astype(np.float32), rs.randn(12, 2).astype(np.float32)
    reference = _two_in_two_out()
    want = reference.fit({"a": a, "b": b}, {"o1": t1, "o2": t2}, batch_size=4, epochs=2,
                         shuffle=False, verbose=0).history
    for element in [({"a": a, "b": b}, {"o1": t1, "o2": t2}), ((a, b), (t1, t2))]:
        model = _two_in_two_out()
        dataset = tf.data.Dataset.from_tensor_slices(element).batch(4)
        got = model.fit(dataset, epochs=2, verbose=0).history
        assert sorted(got) == sorted(want)
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5)
        for mine, theirs in zip(model.get_weights(), reference.get_weights()):
            np.testing.assert_allclose(mine, theirs, rtol=1e-5)
        np.testing.assert_allclose(model.evaluate(dataset, verbose=0),
                                   reference.evaluate([a, b], [t1, t2], batch_size=4,
                                                      verbose=0), rtol=1e-5)
        for mine, theirs in zip(model.predict(dataset), reference.predict([a, b])):
            np.testing.assert_allclose(mine, theirs, rtol=1e-5)


def test_sample_weights_come_from_the_third_part_of_the_elements():
    x, y = _data(24)
    weights = np.linspace(0.5, 2.0, 24).astype(np.float32)
    model = _linear()
    history = model.fit(_dataset(x, y, weights), epochs=2, verbose=0)
    reference = _linear()
    want = reference.fit(x, y, sample_weight=weights, batch_size=8, shuffle=False, epochs=2,
                         verbose=0)
    for mine, theirs in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5)
    np.testing.assert_allclose(history.history["loss"], want.history["loss"], rtol=1e-5)
    error = x[:8] @ W0 + B0 - y[:8]
    np.testing.assert_allclose(
        _linear().evaluate(_dataset(x[:8], y[:8], weights[:8]), verbose=0)[0],
        np.sum(weights[:8, None] * error ** 2) / 8, rtol=1e-5)


def test_learning_phase_and_batch_norm_updates_match_the_arrays():
    x, y = _data(24)

    def net():
        model = K.Sequential([L.Dense(4, input_shape=(3,), kernel_initializer="ones"),
                              L.BatchNormalization(), L.Dense(1, kernel_initializer="ones")])
        model.compile(K.optimizers.SGD(0.01), "mse")
        return model

    model, reference = net(), net()
    model.fit(_dataset(x, y), epochs=2, verbose=0)
    reference.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    for mine, theirs in zip(model.get_weights(), reference.get_weights()):  # moving stats too
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_a_subclassed_model_is_built_from_the_element_spec():
    x, y = _data(12)

    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(1)

        def call(self, inputs, training=None):
            return self.dense(inputs)

    net = Net()
    net.compile(K.optimizers.SGD(0.1), "mse")
    dataset = _dataset(x.astype(np.float64), y, batch_size=4)
    net.fit(dataset, epochs=1, verbose=0)
    assert net.inputs[0].shape.as_list() == [None, 3] and net.inputs[0].dtype == tf.float32
    net.set_weights([W0, B0])
    np.testing.assert_allclose(net.evaluate(dataset, verbose=0),
                               np.mean((x @ W0 + B0 - y) ** 2), rtol=1e-5)


def test_tf1_iterators_need_steps_and_are_never_restarted():
    x, y = _data(24)
    batches = _batches(x, y, 8)
    iterator = tf.data.make_initializable_iterator(_dataset(x, y))
    K.backend.get_session().run(iterator.initializer)
    model = _linear()
    with pytest.raises(ValueError, match="you should specify the `steps_per_epoch`"):
        model.fit(iterator, verbose=0)
    model.fit(iterator, steps_per_epoch=1, epochs=2, verbose=0)
    w, b, _ = _np_gd(W0.astype(np.float64), B0.astype(np.float64), batches[:2], 0.1)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(iterator, steps=1, verbose=0)[0],
                               np.mean((x[16:] @ w + b - y[16:]) ** 2), rtol=1e-5)
    one_shot = tf.data.make_one_shot_iterator(_dataset(x))
    np.testing.assert_allclose(model.predict(one_shot, steps=2), model.predict(x[:16]),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="you should specify the `steps`"):
        model.predict(one_shot)


def test_repeated_calls_reuse_the_iterator_ops():
    x, y = _data(16)
    dataset, model = _dataset(x, y), _linear()
    graph = tf.get_default_graph()

    def calls():
        model.fit(dataset, validation_data=dataset, verbose=0)
        model.evaluate(dataset, verbose=0)
        model.predict(dataset)

    calls()
    size = len(graph.get_operations())
    calls()
    assert len(graph.get_operations()) == size


def test_verbose_output(capsys):
    x, y = _data(24)
    model = _linear()
    model.fit(_dataset(x, y), validation_data=_dataset(x, y, batch_size=12), epochs=2,
              verbose=2)
    out = capsys.readouterr().out
    assert "Train on 3 steps, validate on 2 steps" in out
    assert "Epoch 2/2" in out and "3/3 - " in out and " - val_loss: " in out
    model.fit(_dataset(x, y), verbose=1)
    out = capsys.readouterr().out
    assert "3/3 [==============================]" in out and "size" not in out


def test_errors(caplog):
    x, y = _data(16)
    dataset, model = _dataset(x, y), _linear()
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.fit(dataset, batch_size=8, verbose=0)
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.evaluate(dataset, batch_size=8, verbose=0)
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.predict(dataset, batch_size=8)
    with pytest.raises(ValueError, match=r"should not specify a target \(`y`\)"):
        model.fit(dataset, y, verbose=0)
    with pytest.raises(ValueError, match=r"should not specify a target \(`y`\)"):
        model.evaluate(dataset, y, verbose=0)
    with pytest.raises(ValueError, match="`sample_weight` argument is not supported"):
        model.fit(dataset, sample_weight=np.ones(16), verbose=0)
    with pytest.raises(ValueError, match="`validation_split` argument is not supported"):
        model.fit(dataset, validation_split=0.2, verbose=0)
    with pytest.raises(ValueError, match="must specify the `steps_per_epoch` argument"):
        model.fit(dataset.repeat(), verbose=0)
    with pytest.raises(ValueError, match="must specify the `steps` argument"):
        model.evaluate(dataset.repeat(), verbose=0)
    with pytest.raises(ValueError, match="must specify the `steps` argument"):
        model.predict(dataset.repeat())
    with pytest.raises(ValueError, match="must specify the `validation_steps` argument"):
        model.fit(dataset, validation_data=dataset.repeat(), verbose=0)
    with pytest.raises(ValueError, match="list or tuple of 2 or 3 elements"):
        model.fit(_dataset(x, y, y, y), verbose=0)
    with pytest.raises(ValueError, match="hold no targets"):
        model.fit(_dataset(x), verbose=0)
    with pytest.raises(ValueError, match="Empty training data"):
        model.fit(dataset.take(0), verbose=0)
    with pytest.raises(ValueError, match="expected dense_input to have shape"):
        model.fit(_dataset(np.zeros((16, 4), np.float32), y), verbose=0)
    with pytest.raises(NotImplementedError, match="fit, evaluate and predict take tf.data"):
        model.train_on_batch(dataset)
    with caplog.at_level(logging.WARNING, logger="tensorweave"):
        model.fit(dataset, shuffle=True, verbose=0)
        assert "input dataset `x` is not shuffled" in caplog.text
        caplog.clear()
        model.fit(dataset.shuffle(4), verbose=0)
        model.fit(dataset, shuffle=False, verbose=0)
        assert "not shuffled" not in caplog.text
