"""tf.keras.callbacks in Model.fit (graph mode): the order of the hooks as TF 2.15's
Keras calls them, History and the params, EarlyStopping on constructed loss sequences
(patience, min_delta, mode, baseline, restoring the best weights),
LearningRateScheduler and ReduceLROnPlateau against NumPy gradient descent, CSVLogger's
file, TerminateOnNaN and LambdaCallback."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers
C = tf.keras.callbacks


pytestmark = pytest.mark.usefixtures("keras_graph")


def _model(lr=0.1):
    model = K.Sequential([L.Dense(1, input_shape=(2,))])
    model.set_weights([np.array([[0.5], [-0.5]], np.float32), np.zeros(1, np.float32)])
    model.compile(K.optimizers.SGD(lr), "mse")
    return model


X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0], [0.0, 0.5], [1.5, 1.5]],
             np.float32)
Y = np.array([[1.0], [0.0], [2.0], [-1.0], [0.5], [1.0]], np.float32)


class Recorder(C.Callback):
    """Records every hook called, with the keys of its logs."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def _record(self, name, args, kwargs):
        args = list(args) + ([kwargs["logs"]] if "logs" in kwargs else [])
        self.calls.append((name,) + tuple(args[:-1]) + (sorted(args[-1] or {}),))

    def __getattribute__(self, name):
        if name.startswith("on_"):
            return lambda *args, **kwargs: self._record(name, args, kwargs)
        return super().__getattribute__(name)


def test_hook_order_and_logs():
    recorder = Recorder()
    model = _model()
    model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0, validation_split=1 / 3,
              callbacks=[recorder])
    names = [c[0] for c in recorder.calls]
    epoch = ["on_epoch_begin", "on_train_batch_begin", "on_train_batch_end",
             "on_test_begin", "on_test_batch_begin", "on_test_batch_end", "on_test_end",
             "on_epoch_end"]
    assert names == ["on_train_begin"] + epoch + epoch + ["on_train_end"]
    assert recorder.calls[2] == ("on_train_batch_begin", 0, ["batch", "size"])
    assert recorder.calls[3] == ("on_train_batch_end", 0, ["batch", "loss", "size"])
    assert recorder.calls[8] == ("on_epoch_end", 0, ["loss", "val_loss"])
    assert recorder.params == {"batch_size": 4, "epochs": 2, "steps": None, "samples": 4,
                               "verbose": 0, "do_validation": True,
                               "metrics": ["loss", "val_loss"]}
    assert recorder.model is model
    recorder.calls = []
    model.evaluate(X, Y, batch_size=4, verbose=0, callbacks=[recorder])
    assert [c[0] for c in recorder.calls] == [
        "on_test_begin", "on_test_batch_begin", "on_test_batch_end", "on_test_batch_begin",
        "on_test_batch_end", "on_test_end"]
    recorder.calls = []
    model.predict(X, batch_size=6, callbacks=[recorder])
    assert [c[0] for c in recorder.calls] == [
        "on_predict_begin", "on_predict_batch_begin", "on_predict_batch_end", "on_predict_end"]
    assert recorder.calls[2][-1] == ["batch", "outputs", "size"]


def test_batch_hooks_are_called_only_when_written():
    assert not C.Callback()._implements_train_batch_hooks()

    class OnBatch(C.Callback):
        def on_batch_end(self, batch, logs=None):
            pass

    assert OnBatch()._implements_train_batch_hooks()
    assert not OnBatch()._implements_test_batch_hooks()
    assert C.LambdaCallback(on_batch_begin=print)._implements_train_batch_hooks()
    assert not C.LambdaCallback(on_epoch_end=print)._implements_train_batch_hooks()


def _constructed(monitor, values):
    """A callback that writes `values[epoch]` as `monitor` into the epoch logs (it runs
    before the others, as the list is called in order)."""
    def set_value(epoch, logs):
        logs[monitor] = values[epoch]
    return C.LambdaCallback(on_epoch_end=set_value)


@pytest.mark.parametrize("values, kwargs, stopped", [
    ([5.0, 4.0, 4.5, 4.2, 3.0, 2.0], dict(patience=2), 3),
    ([5.0, 4.0, 4.5, 3.9, 3.8, 3.7, 1.0], dict(patience=2, min_delta=0.5), 3),
    ([5.0, 4.0, 4.5, 3.9, 3.8, 3.7, 1.0], dict(patience=2), None),
    ([0.5, 0.6, 0.55, 0.58, 0.9], dict(monitor="val_acc", patience=1), 2),
    ([1.0, 2.0, 3.0, 4.0], dict(patience=1, mode="max"), None),
    ([3.0, 2.5, 2.6, 2.7, 1.0], dict(patience=2, baseline=2.0), 2),
    ([3.0, 2.5, 2.6, 2.7, 1.0], dict(patience=2), 3),
    ([5.0, 6.0, 7.0], dict(patience=0), 1),
])
def test_early_stopping_stops_at_the_right_epoch(values, kwargs, stopped):
    monitor = kwargs.get("monitor", "val_loss")
    stopper = C.EarlyStopping(**kwargs)
    history = _model().fit(X, Y, batch_size=6, epochs=len(values), verbose=0,
                           callbacks=[_constructed(monitor, values), stopper])
    if stopped is None:
        assert history.epoch == list(range(len(values))) and stopper.stopped_epoch == 0
    else:
        assert history.epoch == list(range(stopped + 1)) and stopper.stopped_epoch == stopped
    assert history.history[monitor] == values[:len(history.epoch)]


def test_early_stopping_restores_the_best_weights():
    model = _model()
    weights = []
    record = C.LambdaCallback(on_epoch_end=lambda epoch, logs: weights.append(
        model.get_weights()))
    stopper = C.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True,
                              verbose=1)
    model.fit(X, Y, batch_size=6, epochs=6, verbose=0,
              callbacks=[_constructed("val_loss", [3.0, 1.0, 2.0, 2.5, 0.1, 0.1]), record,
                         stopper])
    assert stopper.stopped_epoch == 3 and stopper.best_epoch == 1
    for got, best in zip(model.get_weights(), weights[1]):
        np.testing.assert_array_equal(got, best)


def test_learning_rate_scheduler_sets_the_rate_each_epoch():
    model = _model(lr=0.1)
    schedule = C.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))
    history = model.fit(X, Y, batch_size=6, epochs=3, verbose=0, callbacks=[schedule])
    np.testing.assert_allclose(history.history["lr"], [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    w, b = np.array([[0.5], [-0.5]]), np.zeros(1)
    for epoch in range(3):  # full-batch gradient descent with the scheduled rate
        error = X @ w + b - Y
        w = w - 0.1 / (epoch + 1) * 2 * X.T @ error / 6
        b = b - 0.1 / (epoch + 1) * 2 * error.mean(axis=0)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    old_api = C.LearningRateScheduler(lambda epoch: 0.5)
    model.fit(X, Y, epochs=1, verbose=0, callbacks=[old_api])
    assert K.backend.get_value(model.optimizer.lr) == 0.5
    with pytest.raises(ValueError, match="should be float"):
        model.fit(X, Y, epochs=1, verbose=0,
                  callbacks=[C.LearningRateScheduler(lambda epoch, lr: "fast")])


def test_reduce_lr_on_plateau():
    model = _model(lr=0.4)
    reduce = C.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1, min_lr=0.15)
    history = model.fit(X, Y, batch_size=6, epochs=5, verbose=0, callbacks=[
        _constructed("val_loss", [1.0, 1.0, 1.0, 0.5, 0.5]), reduce])
    # the rate in the logs of an epoch is the one it trained with (reduced afterwards):
    # halved after epochs 1 and 2 (no improvement), not below min_lr
    np.testing.assert_allclose(history.history["lr"], [0.4, 0.4, 0.2, 0.15, 0.15], rtol=1e-6)
    assert K.backend.get_value(model.optimizer.lr) == np.float32(0.15)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        C.ReduceLROnPlateau(factor=2.0)


def test_reduce_lr_on_plateau_message(capsys):
    model = _model(lr=0.3)
    reduce = C.ReduceLROnPlateau(monitor="val_loss", factor=0.2, patience=1, verbose=1)
    model.fit(X, Y, batch_size=6, epochs=2, verbose=0, callbacks=[
        _constructed("val_loss", [1.0, 1.0]), reduce])
    # TF 2.15 prints the new rate in float64: 0.3 read as float32, times 0.2
    assert capsys.readouterr().out == \
        "\nEpoch 2: ReduceLROnPlateau reducing learning rate to 0.06000000238418579.\n"


def test_csv_logger(tmp_path):
    path = tmp_path / "log.csv"
    model = _model()
    model.compile(K.optimizers.SGD(0.0), "mse", metrics=["mae"])
    history = model.fit(X, Y, batch_size=6, epochs=2, verbose=0,
                        callbacks=[C.CSVLogger(str(path))])
    lines = path.read_text().splitlines()
    assert lines[0] == "epoch,loss,mean_absolute_error,val_loss,val_mean_absolute_error"
    epoch, loss, mae, val_loss, val_mae = lines[1].split(",")
    assert epoch == "0" and val_loss == "NA" and val_mae == "NA"
    np.testing.assert_allclose(float(loss), history.history["loss"][0], rtol=1e-6)
    model.fit(X, Y, batch_size=6, epochs=1, verbose=0, validation_split=0.5,
              callbacks=[C.CSVLogger(str(path), separator=";", append=True)])
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and lines[3].startswith("0;") and "NA" not in lines[3]


def test_terminate_on_nan_stops_after_the_batch(capsys):
    model = _model()
    batches = []
    x = X.copy()
    x[2, 0] = np.inf
    history = model.fit(x, Y, batch_size=2, epochs=3, shuffle=False, verbose=0, callbacks=[
        C.TerminateOnNaN(), C.LambdaCallback(on_batch_end=lambda b, logs: batches.append(b))])
    assert batches == [0, 1] and history.epoch == [0]
    assert "Batch 1: Invalid loss, terminating training" in capsys.readouterr().out


def test_lambda_callback_and_history():
    seen = []
    callback = C.LambdaCallback(on_train_begin=lambda logs: seen.append("begin"),
                                on_train_end=lambda logs: seen.append("end"), extra=3)
    assert callback.extra == 3
    model = _model()
    history = model.fit(X, Y, batch_size=3, epochs=2, verbose=0, callbacks=[callback],
                        initial_epoch=1)
    assert seen == ["begin", "end"] and history.epoch == [1]
    assert isinstance(history, C.History) and model.history is history
    assert C.CallbackList([callback], add_history=True, add_progbar=True).callbacks[1:] and \
        isinstance(C.CallbackList([], add_history=True).callbacks[0], C.History)
    with pytest.raises(AttributeError, match="RemoteMonitor is not supported"):
        C.RemoteMonitor  # noqa: B018
