"""fit / evaluate / predict on Python generators and keras.utils.Sequence objects (and
the deprecated *_generator methods), against NumPy gradient descent and the array loop:
weights, the epoch logs (History: batch losses weighted by batch size; evaluate: the
mean over steps, as Keras' generator loop), predictions, class and sample weights,
Sequence passes (shuffle, on_epoch_end), validation data, and Keras' errors."""
import random
import warnings

import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers

W0 = np.array([[0.5], [-0.2], [0.1]], np.float32)
B0 = np.array([0.3], np.float32)
BOUNDS = [(0, 5), (5, 10), (10, 13)]  # batches of unequal sizes

pytestmark = pytest.mark.usefixtures("keras_graph")


def _data(n=13, seed=0):
    rs = np.random.RandomState(seed)
    x = rs.randn(n, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
    w = rs.rand(n).astype(np.float32)
    return x, y, w


def _linear(loss="mse", lr=0.1, **compile_kwargs):
    model = K.Sequential([L.Dense(1, input_shape=(3,))])
    model.set_weights([W0, B0])
    model.compile(K.optimizers.SGD(lr), loss, **compile_kwargs)
    return model


class Batches(K.utils.Sequence):
    def __init__(self, x, y=None, w=None, bounds=BOUNDS):
        self.x, self.y, self.w, self.bounds = x, y, w, bounds
        self.epoch_ends = 0
        self.read = []

    def __len__(self):
        return len(self.bounds)

    def __getitem__(self, i):
        self.read.append(i)
        a, b = self.bounds[i]
        if self.y is None:
            return self.x[a:b]
        if self.w is None:
            return self.x[a:b], self.y[a:b]
        return self.x[a:b], self.y[a:b], self.w[a:b]

    def on_epoch_end(self):
        self.epoch_ends += 1


def _gen(x, y=None, w=None, bounds=BOUNDS, loops=1000):
    for _ in range(loops):
        for a, b in bounds:
            if y is None:
                yield x[a:b]
            elif w is None:
                yield x[a:b], y[a:b]
            else:
                yield x[a:b], y[a:b], w[a:b]


def _np_steps(x, y, order, epochs, lr=0.1, w=None):
    """Gradient descent on the (weighted) MSE, one step per batch of BOUNDS in `order`
    per epoch: (weights, bias, per epoch: [loss weighted by batch size, mean loss over
    steps])."""
    wt, b = W0.astype(np.float64), B0.astype(np.float64)
    logs = []
    for epoch in range(epochs):
        losses, sizes = [], []
        for i in order[epoch]:
            s, e = BOUNDS[i]
            xb, yb = x[s:e].astype(np.float64), y[s:e].astype(np.float64)
            sw = np.ones(e - s) if w is None else w[s:e].astype(np.float64)
            err = (xb @ wt + b - yb)[:, 0]
            losses.append(np.sum(sw * err ** 2) / (e - s))
            sizes.append(e - s)
            g = 2 * sw * err / (e - s)
            wt = wt - lr * (xb.T @ g)[:, None]
            b = b - lr * np.sum(g)
        logs.append([np.average(losses, weights=sizes), np.mean(losses)])
    return wt, b, logs


def test_fit_on_a_sequence_and_a_generator_matches_numpy_steps():
    x, y, _ = _data()
    wt, b, logs = _np_steps(x, y, [[0, 1, 2]] * 3, 3)
    seq = Batches(x, y)
    model = _linear()
    history = model.fit(seq, epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(model.get_weights()[0], wt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.get_weights()[1], b, rtol=1e-5, atol=1e-6)
    # the History's loss: the BaseLogger's mean of the batch losses by batch size
    np.testing.assert_allclose(history.history["loss"], [l[0] for l in logs], rtol=1e-5)
    assert seq.read == [0, 1, 2] * 3 and seq.epoch_ends == 3
    assert history.params["steps"] == 3 and history.epoch == [0, 1, 2]

    model = _linear()
    history = model.fit(_gen(x, y), steps_per_epoch=3, epochs=3, verbose=0)
    np.testing.assert_allclose(model.get_weights()[0], wt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(history.history["loss"], [l[0] for l in logs], rtol=1e-5)


def test_generator_fit_equals_array_fit_batch_by_batch():
    x, y, _ = _data(n=12)
    bounds = [(0, 4), (4, 8), (8, 12)]
    ref = _linear(metrics=["mae"])
    ref_hist = ref.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    model = _linear(metrics=["mae"])
    with pytest.warns(UserWarning, match="fit_generator` is deprecated"):
        hist = model.fit_generator(_gen(x, y, bounds=bounds), steps_per_epoch=3, epochs=2,
                                   verbose=0)
    for a, b in zip(ref.get_weights(), model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for key in ("loss", "mean_absolute_error"):
        np.testing.assert_allclose(hist.history[key], ref_hist.history[key], rtol=1e-6)


def test_sample_and_class_weights_from_the_generator():
    x, y, w = _data()
    wt, b, _ = _np_steps(x, y, [[0, 1, 2]] * 2, 2, w=w)
    model = _linear()
    model.fit(_gen(x, y, w), steps_per_epoch=3, epochs=2, verbose=0)
    np.testing.assert_allclose(model.get_weights()[0], wt, rtol=1e-5, atol=1e-6)

    labels = (y > 0).astype(np.float32)
    class_weight = {0: 1.0, 1: 3.0}
    ref = _linear(loss="binary_crossentropy")
    for a, e in BOUNDS * 2:
        ref.train_on_batch(x[a:e], labels[a:e], class_weight=class_weight)
    model = _linear(loss="binary_crossentropy")
    model.fit(Batches(x, labels), epochs=2, shuffle=False, class_weight=class_weight,
              verbose=0)
    for a, e in zip(ref.get_weights(), model.get_weights()):
        np.testing.assert_allclose(a, e, rtol=1e-6)


def test_evaluate_averages_the_loss_over_steps_and_predict_concatenates():
    x, y, w = _data()
    model = _linear(metrics=["mae"])
    losses = [float(np.mean((x[a:b] @ W0 + B0 - y[a:b]) ** 2)) for a, b in BOUNDS]
    mae = float(np.mean(np.abs(x @ W0 + B0 - y)))
    loss, metric = model.evaluate(Batches(x, y), verbose=0)
    np.testing.assert_allclose(loss, np.mean(losses), rtol=1e-5)  # not by batch size
    np.testing.assert_allclose(metric, mae, rtol=1e-5)  # stateful: over all samples
    loss, metric = model.evaluate(_gen(x, y), steps=3, verbose=0)
    np.testing.assert_allclose(loss, np.mean(losses), rtol=1e-5)
    with pytest.warns(UserWarning, match="evaluate_generator` is deprecated"):
        again = model.evaluate_generator(_gen(x, y), steps=3)
    np.testing.assert_allclose(again, [loss, metric], rtol=1e-6)
    # an evaluate with sample weights from the generator
    sw_losses = [float(np.sum(w[a:b] * ((x[a:b] @ W0 + B0 - y[a:b])[:, 0]) ** 2) / (b - a))
                 for a, b in BOUNDS]
    np.testing.assert_allclose(model.evaluate(Batches(x, y, w), verbose=0)[0],
                               np.mean(sw_losses), rtol=1e-5)

    expected = x @ W0 + B0
    np.testing.assert_allclose(model.predict(Batches(x)), expected, rtol=1e-5)
    np.testing.assert_allclose(model.predict(_gen(x), steps=3), expected, rtol=1e-5)
    np.testing.assert_allclose(model.predict(_gen(x, y), steps=2), expected[:10], rtol=1e-5)
    with pytest.warns(UserWarning, match="predict_generator` is deprecated"):
        out = model.predict_generator((x[a:b] for a, b in BOUNDS), steps=3)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_sequence_shuffle_and_on_epoch_end():
    x, y, _ = _data()
    random.seed(3)
    orders, order = [], [0, 1, 2]
    for _ in range(2):
        random.shuffle(order)  # the enqueuer shuffles one list in place, pass by pass
        orders.append(list(order))
    wt, b, _ = _np_steps(x, y, orders, 2)
    random.seed(3)
    seq = Batches(x, y)
    model = _linear()
    model.fit(seq, epochs=2, verbose=0)  # shuffle=True by default
    assert seq.read == orders[0] + orders[1] and seq.epoch_ends == 2
    np.testing.assert_allclose(model.get_weights()[0], wt, rtol=1e-5, atol=1e-6)

    # workers=0: Keras iterates the Sequence in order, without on_epoch_end
    seq = Batches(x, y)
    _linear().fit(seq, epochs=2, workers=0, verbose=0)
    assert seq.read == [0, 1, 2, 0, 1, 2] and seq.epoch_ends == 0

    # steps_per_epoch below len: the epochs read on, on_epoch_end after each pass
    seq = Batches(x, y)
    _linear().fit(seq, steps_per_epoch=2, epochs=3, shuffle=False, verbose=0)
    assert seq.read == [0, 1, 2, 0, 1, 2] and seq.epoch_ends == 2


def test_validation_callbacks_and_initial_epoch():
    x, y, _ = _data()
    seen = []

    class Log(K.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(("train", batch, logs["size"]))

        def on_test_batch_end(self, batch, logs=None):
            seen.append(("test", batch, logs["size"]))

        def on_epoch_end(self, epoch, logs=None):
            seen.append(("epoch", epoch, sorted(logs)))

    model = _linear()
    history = model.fit(Batches(x, y), epochs=3, initial_epoch=1, shuffle=False, verbose=0,
                        callbacks=[Log()], validation_data=_gen(x, y), validation_steps=2)
    assert history.epoch == [1, 2]
    assert seen[:6] == [("train", 0, 5), ("train", 1, 5), ("train", 2, 3), ("test", 0, 5),
                        ("test", 1, 5), ("epoch", 1, ["loss", "val_loss"])]
    wt, b, _ = _np_steps(x, y, [[0, 1, 2]], 1)
    val_loss = np.mean([np.mean((x[a:e] @ wt + b - y[a:e]) ** 2) for a, e in BOUNDS[:2]])
    np.testing.assert_allclose(history.history["val_loss"][0], val_loss, rtol=1e-5)

    # validation arrays are batched like the last training batch (3 samples here)
    seen.clear()
    model = _linear()
    model.fit(Batches(x, y), epochs=1, shuffle=False, verbose=0, callbacks=[Log()],
              validation_data=(x[:7], y[:7]))
    assert [s for s in seen if s[0] == "test"] == [("test", 0, 3), ("test", 1, 3),
                                                  ("test", 2, 1)]


def test_verbose_output_counts_steps(capsys):
    x, y, _ = _data()
    _linear().fit(Batches(x, y), epochs=2, shuffle=False, verbose=2)
    out = capsys.readouterr().out
    assert "Epoch 2/2" in out and "3/3 - " in out and "loss: " in out
    assert "Train on" not in out  # the generator loop prints no header


def test_a_generator_that_ends_stops_training():
    x, y, _ = _data()
    model = _linear()
    history = model.fit(_gen(x, y, loops=1), steps_per_epoch=2, epochs=3, verbose=0)
    assert len(history.history["loss"]) == 2  # the second epoch ran out after 1 step
    with pytest.raises(ValueError, match="Empty training data"):
        _linear().fit(iter([]), steps_per_epoch=1, verbose=0)


def test_deferred_build_on_the_first_batch():
    x, y, _ = _data()
    model = K.Sequential([L.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    history = model.fit(_gen(x, y), steps_per_epoch=3, epochs=1, verbose=0)
    assert sorted(history.history) == ["loss", "mean_absolute_error"]
    assert model.predict(Batches(x)).shape == (13, 1)


def test_errors_as_keras():
    x, y, w = _data()
    model = _linear()
    with pytest.raises(ValueError, match="specify the number of steps via the "
                                         "`steps_per_epoch` argument"):
        model.fit(_gen(x, y), verbose=0)
    with pytest.raises(ValueError, match="via the `steps` argument"):
        model.evaluate(_gen(x, y), verbose=0)
    with pytest.raises(ValueError, match="via the `steps` argument"):
        model.predict(_gen(x))
    with pytest.raises(ValueError, match="Please specify the `validation_steps` argument"):
        model.fit(_gen(x, y), steps_per_epoch=1, validation_data=_gen(x, y), verbose=0)
    with pytest.raises(ValueError, match="`batch_size` argument must not be specified"):
        model.fit(Batches(x, y), batch_size=4, verbose=0)
    with pytest.raises(ValueError, match="`y` argument is not supported"):
        model.fit(Batches(x, y), y, verbose=0)
    with pytest.raises(ValueError, match="`sample_weight` argument is not supported"):
        model.evaluate(Batches(x, y), sample_weight=w, verbose=0)
    with pytest.raises(ValueError, match="cannot use `validation_split`"):
        model.fit(Batches(x, y), validation_split=0.2, verbose=0)
    with pytest.raises(ValueError, match="tuple of 1 or 2 or 3 elements"):
        model.fit(iter([(x, y, w, w)]), steps_per_epoch=1, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="fit_generator` is deprecated"):
            model.fit_generator(_gen(x, y), steps_per_epoch=1)
    with pytest.raises(NotImplementedError):
        K.utils.Sequence()[0]
    with pytest.raises(RuntimeError, match="must compile"):
        K.Sequential([L.Dense(1)]).fit(Batches(x, y))
