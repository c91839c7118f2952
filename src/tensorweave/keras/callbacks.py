"""`tf.keras.callbacks`: the hooks of the training loop as TF 2.15's Keras calls them in
graph mode (the v1 loop of training_arrays).

`fit` runs, in order: on_train_begin; per epoch on_epoch_begin, per batch
on_train_batch_begin/end (which call on_batch_begin/end), then the validation run
(on_test_begin, on_test_batch_begin/end, on_test_end on the same callbacks), then
on_epoch_end with the epoch's logs ('loss', the metric names, 'val_' + each); finally
on_train_end. `fit` puts BaseLogger first and History and (when verbose) ProgbarLogger
last. A batch's logs hold 'batch', 'size' and the batch's values; the loss of an epoch is
the mean over its samples, the metrics are their state at the end of the epoch.
"""
from __future__ import annotations

import collections
import csv
import logging
import os

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, progbar

_LOG = logging.getLogger("tensorweave")

TRAIN, TEST, PREDICT = "train", "test", "predict"


def _default(method):
    """Marks a hook of the base class, so that lists skip batch hooks nobody wrote."""
    method._is_default = True
    return method


def _is_default(method) -> bool:
    return getattr(method, "_is_default", False)


def _python_value(value):
    """A 0-d NumPy value as a Python number (how Keras hands values to callbacks)."""
    if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0:
        return value.item()
    return value


def make_logs(model, logs: dict, outputs, mode: str, prefix: str = "") -> dict:
    """`logs` with the values `outputs` under the model's metric names (training and
    evaluation) or under 'outputs' (prediction)."""
    names = model.metrics_names
    if mode in (TRAIN, TEST) and names:
        for name, value in zip(names, outputs):
            logs[prefix + name] = _python_value(value)
    else:
        logs["outputs"] = outputs
    return logs


def configure_callbacks(callbacks, model, do_validation: bool = False, batch_size=None,
                        epochs=None, steps_per_epoch=None, samples=None, verbose=1,
                        count_mode: str = "steps", mode: str = TRAIN):
    """The CallbackList a loop calls: for training, BaseLogger, the user's callbacks,
    a new History (also `model.history`) and, when verbose, a ProgbarLogger."""
    if isinstance(callbacks, CallbackList):
        return callbacks
    callbacks = list(callbacks or [])
    if mode == TRAIN:
        model.history = History()
        callbacks = [BaseLogger()] + callbacks + [model.history]
        if verbose:
            callbacks.append(ProgbarLogger(count_mode))
    callback_list = CallbackList(callbacks)
    callback_list.set_model(model)
    names = model.metrics_names
    for callback in callback_list:
        if isinstance(callback, (BaseLogger, ProgbarLogger)):
            callback.stateful_metrics = set(names[1:])
    metrics = []
    if mode != PREDICT:
        metrics = list(names) + (["val_" + n for n in names] if do_validation else [])
    callback_list.set_params({"batch_size": batch_size, "epochs": epochs,
                              "steps": steps_per_epoch, "samples": samples,
                              "verbose": verbose, "do_validation": do_validation,
                              "metrics": metrics})
    model.stop_training = False
    return callback_list


@tf_export("keras.callbacks.CallbackList")
class CallbackList:
    """Calls each hook on a list of callbacks, in order.

    Args:
      callbacks: the callbacks.
      add_history: append a History when the list has none.
      add_progbar: append a ProgbarLogger when the list has none.
      model: set on every callback.
      **params: set on every callback.
    """

    def __init__(self, callbacks=None, add_history: bool = False, add_progbar: bool = False,
                 model=None, **params):
        self.callbacks = list(tf.nest.flatten(callbacks)) if callbacks else []
        if add_history and not any(isinstance(c, History) for c in self.callbacks):
            self.callbacks.append(History())
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.callbacks.append(ProgbarLogger(count_mode="steps"))
        self.model = None
        self.params = {}
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback) -> None:
        self.callbacks.append(callback)

    def set_params(self, params: dict) -> None:
        self.params = params
        for callback in self.callbacks:
            callback.set_params(params)

    def set_model(self, model) -> None:
        self.model = model
        history = [c for c in self.callbacks if isinstance(c, History)]
        if history:
            model.history = history[0]
        for callback in self.callbacks:
            callback.set_model(model)

    def __iter__(self):
        return iter(self.callbacks)

    def _implemented(self, mode: str) -> bool:
        return any(getattr(c, "_implements_%s_batch_hooks" % mode)() for c in self.callbacks)

    def _call_batch_hook(self, mode: str, hook: str, batch: int, logs=None) -> None:
        """Calls on_<mode>_batch_<hook> ('begin' or 'end') on every callback.

        Raises:
          ValueError: another hook.
        """
        if hook not in ("begin", "end"):
            raise ValueError('Unrecognized hook: %s. Expected values are ["begin", "end"]'
                             % hook)
        if not self._implemented(mode):
            return
        logs = logs or {}
        for callback in self.callbacks:
            getattr(callback, "on_%s_batch_%s" % (mode, hook))(batch, logs)

    def _call_begin_hook(self, mode: str) -> None:
        {TRAIN: self.on_train_begin, TEST: self.on_test_begin,
         PREDICT: self.on_predict_begin}[mode]()

    def _call_end_hook(self, mode: str) -> None:
        {TRAIN: self.on_train_end, TEST: self.on_test_end, PREDICT: self.on_predict_end}[mode]()

    def _call_all(self, hook: str, *args) -> None:
        for callback in self.callbacks:
            getattr(callback, hook)(*args)

    def on_batch_begin(self, batch, logs=None):
        self._call_batch_hook(TRAIN, "begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._call_batch_hook(TRAIN, "end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call_batch_hook(TRAIN, "begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call_batch_hook(TRAIN, "end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call_batch_hook(TEST, "begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call_batch_hook(TEST, "end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call_batch_hook(PREDICT, "begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call_batch_hook(PREDICT, "end", batch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call_all("on_epoch_begin", epoch, {} if logs is None else logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call_all("on_epoch_end", epoch, {} if logs is None else logs)

    def on_train_begin(self, logs=None):
        self._call_all("on_train_begin", {} if logs is None else logs)

    def on_train_end(self, logs=None):
        self._call_all("on_train_end", {} if logs is None else logs)

    def on_test_begin(self, logs=None):
        self._call_all("on_test_begin", {} if logs is None else logs)

    def on_test_end(self, logs=None):
        self._call_all("on_test_end", {} if logs is None else logs)

    def on_predict_begin(self, logs=None):
        self._call_all("on_predict_begin", {} if logs is None else logs)

    def on_predict_end(self, logs=None):
        self._call_all("on_predict_end", {} if logs is None else logs)


@tf_export("keras.callbacks.Callback")
class Callback:
    """Base class of callbacks: override the hooks needed; `self.model` and
    `self.params` are set by the loop."""

    def __init__(self):
        self.validation_data = None
        self.model = None
        self.params = {}

    def set_params(self, params: dict) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self.model = model

    @_default
    def on_batch_begin(self, batch, logs=None):
        """A training batch begins (logs: 'batch', 'size')."""

    @_default
    def on_batch_end(self, batch, logs=None):
        """A training batch ended (logs: its loss and metrics)."""

    def on_epoch_begin(self, epoch, logs=None):
        """An epoch begins."""

    def on_epoch_end(self, epoch, logs=None):
        """An epoch ended (logs: its loss and metrics, and their 'val_' values)."""

    @_default
    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    @_default
    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    @_default
    def on_test_batch_begin(self, batch, logs=None):
        """An evaluation batch begins."""

    @_default
    def on_test_batch_end(self, batch, logs=None):
        """An evaluation batch ended."""

    @_default
    def on_predict_batch_begin(self, batch, logs=None):
        """A prediction batch begins."""

    @_default
    def on_predict_batch_end(self, batch, logs=None):
        """A prediction batch ended (logs: 'outputs')."""

    def on_train_begin(self, logs=None):
        """Training begins."""

    def on_train_end(self, logs=None):
        """Training ended."""

    def on_test_begin(self, logs=None):
        """Evaluation (or validation) begins."""

    def on_test_end(self, logs=None):
        """Evaluation (or validation) ended."""

    def on_predict_begin(self, logs=None):
        """Prediction begins."""

    def on_predict_end(self, logs=None):
        """Prediction ended."""

    def _implements_train_batch_hooks(self) -> bool:
        return not all(_is_default(getattr(self, n)) for n in (
            "on_batch_begin", "on_batch_end", "on_train_batch_begin", "on_train_batch_end"))

    def _implements_test_batch_hooks(self) -> bool:
        return not (_is_default(self.on_test_batch_begin) and
                    _is_default(self.on_test_batch_end))

    def _implements_predict_batch_hooks(self) -> bool:
        return not (_is_default(self.on_predict_batch_begin) and
                    _is_default(self.on_predict_batch_end))


@tf_export("keras.callbacks.BaseLogger")
class BaseLogger(Callback):
    """Averages the batch values of an epoch over its samples into the epoch's logs
    (metrics listed in `stateful_metrics` keep their last value).

    Args:
      stateful_metrics: names of the values not to average.
    """

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])

    def on_epoch_begin(self, epoch, logs=None):
        self.seen = 0
        self.totals = {}

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        batch_size = logs.get("size", 0)
        self.seen += batch_size * logs.get("num_steps", 1)
        for key, value in logs.items():
            if key in self.stateful_metrics:
                self.totals[key] = value
            else:
                self.totals[key] = self.totals.get(key, 0) + value * batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        for key in self.params["metrics"]:
            if key in self.totals:
                logs[key] = self.totals[key] if key in self.stateful_metrics else \
                    self.totals[key] / self.seen


@tf_export("keras.callbacks.TerminateOnNaN")
class TerminateOnNaN(Callback):
    """Stops training after a batch whose loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            print("Batch %d: Invalid loss, terminating training" % batch)
            self.model.stop_training = True


@tf_export("keras.callbacks.ProgbarLogger")
class ProgbarLogger(Callback):
    """Prints 'Epoch i/N' (when N > 1) and a progress line per epoch.

    Args:
      count_mode: 'samples' or 'steps' (what the line counts).
      stateful_metrics: names of the values shown as they are (not averaged).

    Raises:
      ValueError: another count_mode.
    """

    def __init__(self, count_mode: str = "samples", stateful_metrics=None):
        super().__init__()
        if count_mode not in ("samples", "steps"):
            raise ValueError('Unknown `count_mode`: %s. Expected values are ["samples", '
                             '"steps"]' % count_mode)
        self.use_steps = count_mode == "steps"
        self.stateful_metrics = set(stateful_metrics or [])
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1

    def set_params(self, params: dict) -> None:
        super().set_params(params)
        self.verbose = params["verbose"]
        self.epochs = params["epochs"]
        self.target = params["steps"] if self.use_steps else params["samples"]

    def on_epoch_begin(self, epoch, logs=None):
        self.seen = 0
        self.progbar = progbar.Progbar(self.target, self.verbose, self.stateful_metrics,
                                "step" if self.use_steps else "sample")
        if self.verbose and self.epochs > 1:
            print("Epoch %d/%d" % (epoch + 1, self.epochs))

    def on_train_batch_end(self, batch, logs=None):
        logs = dict(logs or {})
        if self.use_steps:
            self.seen = batch + 1
        else:
            self.seen += logs.pop("size", 0) * logs.pop("num_steps", 1)
        logs.pop("batch", None)
        logs.pop("size", None)
        if self.verbose == 1:
            self.progbar.update(self.seen, list(logs.items()), finalize=False)

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        if self.target is None:
            self.target = self.progbar.target = self.seen
        values = [(k, v) for k, v in logs.items() if k not in ("batch", "size")]
        self.progbar.update(self.target, values, finalize=True)

    def _implements_train_batch_hooks(self) -> bool:
        return self.verbose == 1


@tf_export("keras.callbacks.History")
class History(Callback):
    """Records the logs of every epoch: `history[name]` is the list of its values and
    `epoch` the list of epoch indices. `fit` returns it."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        self.model.history = self


@tf_export("keras.callbacks.EarlyStopping")
class EarlyStopping(Callback):
    """Stops training when a monitored value has stopped improving.

    Args:
      monitor: the value of the epoch logs to watch (default 'val_loss').
      min_delta: the smallest change counted as an improvement.
      patience: the number of epochs without improvement after which training stops.
      verbose: print when stopping and restoring.
      mode: 'min', 'max', or 'auto' (max for names ending in acc/accuracy/auc, else min).
      baseline: a value the monitored one must improve on for the wait to reset.
      restore_best_weights: set the weights of the best epoch back when stopping.
      start_from_epoch: the number of epochs to wait before watching.
    """

    def __init__(self, monitor: str = "val_loss", min_delta=0, patience: int = 0,
                 verbose: int = 0, mode: str = "auto", baseline=None,
                 restore_best_weights: bool = False, start_from_epoch: int = 0):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = restore_best_weights
        self.best_weights = None
        self.start_from_epoch = start_from_epoch
        if mode not in ("auto", "min", "max"):
            _LOG.warning("EarlyStopping mode %s is unknown, fallback to auto mode.", mode)
            mode = "auto"
        if mode == "max" or mode == "auto" and monitor.endswith(("acc", "accuracy", "auc")):
            self.monitor_op = np.greater
        else:
            self.monitor_op = np.less
            self.min_delta *= -1

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self.monitor_op is np.less else -np.inf
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print("Restoring model weights from the end of the best epoch: %d."
                          % (self.best_epoch + 1))
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print("Epoch %d: early stopping" % (self.stopped_epoch + 1))

    def get_monitor_value(self, logs):
        value = (logs or {}).get(self.monitor)
        if value is None:
            _LOG.warning("Early stopping conditioned on metric `%s` which is not available. "
                         "Available metrics are: %s", self.monitor,
                         ",".join(list((logs or {}).keys())))
        return value

    def _is_improvement(self, value, reference) -> bool:
        return bool(self.monitor_op(value - self.min_delta, reference))


def _learning_rate(model):
    optimizer = model.optimizer
    if not hasattr(optimizer, "lr"):
        raise ValueError('Optimizer must have a "lr" attribute.')
    return optimizer.lr


@tf_export("keras.callbacks.LearningRateScheduler")
class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch to `schedule(epoch, lr)` (or
    `schedule(epoch)`), and records it as 'lr' in the epoch logs.

    Args:
      schedule: the function giving the learning rate (a float).
      verbose: print the new rate.

    Raises:
      ValueError: an optimizer without `lr`, or a schedule that gives no float.
    """

    def __init__(self, schedule, verbose: int = 0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        variable = _learning_rate(self.model)
        try:
            lr = self.schedule(epoch, float(backend.get_value(variable)))
        except TypeError:  # the schedule takes the epoch only
            lr = self.schedule(epoch)
        if not isinstance(lr, (tf.Tensor, float, np.float32, np.float64)):
            raise ValueError('The output of the "schedule" function should be float. Got: %s'
                             % (lr,))
        if isinstance(lr, tf.Tensor) and not lr.dtype.is_floating:
            raise ValueError("The dtype of `lr` Tensor should be float. Got: %s" % lr.dtype)
        backend.set_value(variable, backend.get_value(lr))
        if self.verbose > 0:
            print("\nEpoch %d: LearningRateScheduler setting learning rate to %s."
                  % (epoch + 1, lr))

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = backend.get_value(_learning_rate(self.model))


@tf_export("keras.callbacks.ReduceLROnPlateau")
class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when a monitored value has not improved
    for `patience` epochs (then waits `cooldown` epochs), not below `min_lr`.

    Args:
      monitor: the value to watch (default 'val_loss').
      factor: the reduction factor, below 1.
      patience: epochs without improvement before reducing.
      verbose: print the reductions.
      mode: 'min', 'max' or 'auto' (max for names containing 'acc').
      min_delta: the smallest change counted as an improvement.
      cooldown: epochs to wait after a reduction.
      min_lr: the lower bound of the learning rate.

    Raises:
      ValueError: a factor >= 1.
    """

    def __init__(self, monitor: str = "val_loss", factor: float = 0.1, patience: int = 10,
                 verbose: int = 0, mode: str = "auto", min_delta: float = 1e-4,
                 cooldown: int = 0, min_lr: float = 0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0. Got %s"
                             % factor)
        self.monitor = monitor
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = kwargs.pop("epsilon", min_delta)
        if kwargs:
            raise TypeError("Unexpected keyword arguments: %s" % sorted(kwargs))
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.mode = mode if mode in ("auto", "min", "max") else "auto"
        self._reset()

    def _reset(self) -> None:
        if self.mode == "min" or self.mode == "auto" and "acc" not in self.monitor:
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        variable = _learning_rate(self.model)
        logs["lr"] = backend.get_value(variable)
        current = logs.get(self.monitor)
        if current is None:
            _LOG.warning("Learning rate reduction is conditioned on metric `%s` which is not "
                         "available. Available metrics are: %s", self.monitor,
                         ",".join(logs.keys()))
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = backend.get_value(variable)
                if old_lr > np.float32(self.min_lr):
                    # in float64, as Keras under NumPy 1 (the message shows it)
                    new_lr = max(float(old_lr) * self.factor, self.min_lr)
                    backend.set_value(variable, new_lr)
                    if self.verbose > 0:
                        print("\nEpoch %d: ReduceLROnPlateau reducing learning rate to %s."
                              % (epoch + 1, new_lr))
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


@tf_export("keras.callbacks.ModelCheckpoint")
class ModelCheckpoint(Callback):
    """Saves the model (or its weights) during training, as TF 2.15's Keras does.

    Args:
      filepath: where to save; formatted with `epoch` (1-based) and the logs, e.g.
        'weights.{epoch:02d}-{val_loss:.2f}.h5' (batch saves also see the batch's logs,
        whose 'batch' is the 0-based index).
      monitor: the value of the logs save_best_only watches (default 'val_loss').
      verbose: print a line at each save (or each non-improvement).
      save_best_only: save only when the monitored value improves on the best so far.
      save_weights_only: `model.save_weights(filepath)` instead of `model.save(filepath)`.
      mode: 'min', 'max' or 'auto' (max for names containing 'acc' or starting with
        'fmeasure', else min).
      save_freq: 'epoch', or an integer: save every that many batches.
      options: passed on to save_weights/save.
      initial_value_threshold: the best value to start from.
      period: deprecated; save every that many epochs (with save_freq='epoch').

    Raises:
      ValueError: a save_freq that is neither 'epoch' nor an integer.
      KeyError: a filepath whose placeholders the logs do not fill.
    """

    def __init__(self, filepath, monitor: str = "val_loss", verbose: int = 0,
                 save_best_only: bool = False, save_weights_only: bool = False,
                 mode: str = "auto", save_freq="epoch", options=None,
                 initial_value_threshold=None, **kwargs):
        super().__init__()
        self.monitor = monitor
        self.verbose = verbose
        self.filepath = os.fspath(filepath) if isinstance(filepath, os.PathLike) \
            else filepath
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self.epochs_since_last_save = 0
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = -1
        self._current_epoch = 0
        self.best = initial_value_threshold
        self._options = options
        if "load_weights_on_restart" in kwargs:
            self.load_weights_on_restart = kwargs["load_weights_on_restart"]
            _LOG.warning("`load_weights_on_restart` argument is deprecated. Please use "
                         "`model.load_weights()` for loading weights before the start of "
                         "`model.fit()`.")
        else:
            self.load_weights_on_restart = False
        if "period" in kwargs:
            self.period = kwargs["period"]
            _LOG.warning("`period` argument is deprecated. Please use `save_freq` to "
                         "specify the frequency in number of batches seen.")
        else:
            self.period = 1
        if mode not in ("auto", "min", "max"):
            _LOG.warning("ModelCheckpoint mode %s is unknown, fallback to auto mode.", mode)
            mode = "auto"
        if mode == "max" or mode == "auto" and (
                "acc" in self.monitor or self.monitor.startswith("fmeasure")):
            self.monitor_op = np.greater
            if self.best is None:
                self.best = -np.inf
        else:
            self.monitor_op = np.less
            if self.best is None:
                self.best = np.inf
        if self.save_freq != "epoch" and not isinstance(self.save_freq, int):
            raise ValueError('Unrecognized save_freq: %s. Expected save_freq are "epoch" '
                             "or integer" % (self.save_freq,))

    def on_train_begin(self, logs=None):
        if self.load_weights_on_restart:
            path = self.filepath
            if "{" not in path and self._checkpoint_exists(path):
                try:
                    self.model.load_weights(path)
                except (IOError, ValueError) as e:
                    raise ValueError("Error loading file from %s. Reason: %s" % (path, e))

    def _implements_train_batch_hooks(self) -> bool:
        return self.save_freq != "epoch"

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(epoch=self._current_epoch, batch=batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_since_last_save += 1
        if self.save_freq == "epoch":
            self._save_model(epoch=epoch, batch=None, logs=logs)

    def _should_save_on_batch(self, batch) -> bool:
        """Counts the batches since the last save (a batch index that does not grow
        starts a new epoch); True when save_freq of them have passed."""
        if self.save_freq == "epoch":
            return False
        new_epoch = batch <= self._last_batch_seen
        self._batches_seen_since_last_saving += batch + 1 if new_epoch \
            else batch - self._last_batch_seen
        self._last_batch_seen = batch
        due = self._batches_seen_since_last_saving >= self.save_freq
        if due:
            self._batches_seen_since_last_saving = 0
        return due

    def _save_model(self, epoch, batch, logs) -> None:
        if not isinstance(self.save_freq, int) and self.epochs_since_last_save < self.period:
            return  # `period` epochs have not passed yet
        logs = {k: _python_value(v) for k, v in (logs or {}).items()}
        self.epochs_since_last_save = 0
        filepath = self._get_file_path(epoch, batch, logs)
        directory = os.path.dirname(filepath)
        if directory and not tf.io.gfile.exists(directory):
            tf.io.gfile.makedirs(directory)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                _LOG.warning("Can save best model only with %s available, skipping.",
                             self.monitor)
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print("\nEpoch %d: %s did not improve from %.5f"
                          % (epoch + 1, self.monitor, self.best))
                return
            if self.verbose > 0:
                print("\nEpoch %d: %s improved from %.5f to %.5f, saving model to %s"
                      % (epoch + 1, self.monitor, self.best, current, filepath))
            self.best = current
        elif self.verbose > 0:
            print("\nEpoch %d: saving model to %s" % (epoch + 1, filepath))
        try:
            self._save_handler(filepath)
        except IsADirectoryError:
            raise IOError("Please specify a non-directory filepath for ModelCheckpoint. "
                          "Filepath used is an existing directory: %s" % filepath) from None

    def _save_handler(self, filepath) -> None:
        if self.save_weights_only:
            if filepath.endswith(".weights.h5"):
                self.model.save_weights(filepath, overwrite=True)
            else:
                self.model.save_weights(filepath, overwrite=True, options=self._options)
        elif filepath.endswith(".keras"):
            self.model.save(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True, options=self._options)

    def _get_file_path(self, epoch, batch, logs) -> str:
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError('Failed to format this callback filepath: "%s". Reason: %s'
                           % (self.filepath, e))

    @staticmethod
    def _checkpoint_exists(filepath) -> bool:
        if filepath.endswith(".h5"):
            return tf.io.gfile.exists(filepath)
        return tf.io.gfile.exists(filepath) or tf.io.gfile.exists(filepath + ".index")


@tf_export("keras.callbacks.CSVLogger")
class CSVLogger(Callback):
    """Writes the logs of each epoch as a CSV row ('epoch' then the sorted names; when
    there is no validation, 'val_' columns are still written, as 'NA').

    Args:
      filename: the file.
      separator: the field separator.
      append: append to an existing file (its header kept) instead of overwriting.
    """

    def __init__(self, filename, separator: str = ",", append: bool = False):
        super().__init__()
        self.sep = separator
        self.filename = str(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        mode = "w"
        if self.append:
            if tf.io.gfile.exists(self.filename):
                with tf.io.gfile.GFile(self.filename, "r") as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        self.csv_file = tf.io.gfile.GFile(self.filename, mode)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}

        def handle_value(value):
            if isinstance(value, str):
                return value
            if isinstance(value, collections.abc.Iterable) and \
                    not (isinstance(value, np.ndarray) and value.ndim == 0):
                return '"[%s]"' % ", ".join(map(str, value))
            return value

        if self.keys is None:
            self.keys = sorted(logs.keys())
            if not any(k.startswith("val_") for k in self.keys):
                self.keys.extend(["val_" + k for k in self.keys])
        if self.writer is None:
            dialect = type("CustomDialect", (csv.excel,), {"delimiter": self.sep})
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys,
                                         dialect=dialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict({"epoch": epoch})
        row.update((k, handle_value(logs.get(k, "NA"))) for k in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        self.csv_file.close()
        self.writer = None


@tf_export("keras.callbacks.LambdaCallback")
class LambdaCallback(Callback):
    """A callback made of functions: on_epoch_begin/on_epoch_end(epoch, logs),
    on_batch_begin/on_batch_end(batch, logs), on_train_begin/on_train_end(logs); other
    keyword arguments become attributes."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_batch_begin": on_batch_begin, "on_batch_end": on_batch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end}
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)


@tf_export("keras.callbacks.TensorBoard")
class TensorBoard(Callback):
    """Writes event files for TensorBoard under `log_dir`, as TF 2.15's v1 Keras does in
    graph mode (keras/callbacks_v1.py, what tf.keras.callbacks.TensorBoard is there).

    One FileWriter on `log_dir` (made by set_model; it writes the model's graph at step
    0 when `write_graph`). At each epoch's end the logs' values are written as scalars
    tagged 'epoch_' + name ('epoch_loss', 'epoch_val_loss', ...), at step `epoch`, or
    at the number of samples seen when `update_freq` is not 'epoch'. With `update_freq`
    'batch' (1) or an int N, a training batch's values are written tagged 'batch_' +
    name at the count of batches seen, whenever N samples passed since the last write.
    With `histogram_freq` N > 0, every N epochs the validation run also evaluates
    histograms of every layer's weights (tags: the weight's name with ':' as '_') and
    outputs ('<layer>_out'), written at the count of validation batches seen; this
    needs validation data. `write_images` adds images of the weights. `profile_batch`
    is accepted (no profile is written); `embeddings_freq` must be 0.
    """

    def __init__(self, log_dir="./logs", histogram_freq=0, batch_size=32, write_graph=True,
                 write_grads=False, write_images=False, embeddings_freq=0,
                 embeddings_layer_names=None, embeddings_metadata=None,
                 embeddings_data=None, update_freq="epoch", profile_batch=2):
        super().__init__()
        if embeddings_freq:
            raise NotImplementedError(
                "tf.keras.callbacks.TensorBoard: embeddings_freq=%r is not supported by "
                "tensorweave (embeddings are not written); use embeddings_freq=0"
                % (embeddings_freq,))
        if write_grads and histogram_freq:
            raise NotImplementedError(
                "tf.keras.callbacks.TensorBoard: write_grads is not supported by tensorweave")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_grads = write_grads
        self.write_images = write_images
        self.batch_size = batch_size
        self.embeddings_freq = embeddings_freq
        self.embeddings_layer_names = embeddings_layer_names
        self.embeddings_metadata = embeddings_metadata
        self.embeddings_data = embeddings_data
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._profile_batch = profile_batch
        self.merged = None
        self.writer = None
        self._samples_seen = 0
        self._samples_seen_at_last_write = 0
        self._total_batches_seen = 0
        self._total_val_batches_seen = 0
        self._histograms_this_epoch = False
        self._hooked = []

    def set_model(self, model) -> None:
        self.model = model
        graph = tf.get_default_graph()
        graph_of_model = getattr(model, "_graph_of_model", None)
        if graph_of_model is not None:
            graph = graph_of_model()
        self.writer = tf.summary.FileWriter(self.log_dir,
                                            graph if self.write_graph else None)
        if self.histogram_freq and self.merged is None:
            with graph.as_default():
                self._make_histogram_ops(model)
                self.merged = tf.summary.merge_all()

    def _make_histogram_ops(self, model) -> None:
        for layer in model.layers:
            for weight in layer.weights:
                name = weight.name.replace(":", "_")
                tf.summary.histogram(name, weight)
                if self.write_images:
                    image = self._weight_image(weight)
                    if image is not None:
                        tf.summary.image(name, image)
            try:
                output = layer.output
            except (AttributeError, ValueError, RuntimeError):
                continue
            if isinstance(output, list):
                for i, tensor in enumerate(output):
                    tf.summary.histogram("%s_out_%d" % (layer.name, i), tensor)
            else:
                tf.summary.histogram("%s_out" % layer.name, output)

    @staticmethod
    def _weight_image(weight):
        """`weight` as a batch of one-channel images (TF's layouts), or None."""
        image = tf.squeeze(weight)
        shape = tuple(image.shape.as_list())
        if len(shape) == 2:  # a dense kernel: the longer side across
            if shape[0] > shape[1]:
                image = tf.transpose(image)
                shape = shape[::-1]
            return tf.reshape(image, [1, shape[0], shape[1], 1])
        if len(shape) == 3:  # a convolution's kernel
            if backend.image_data_format() == "channels_last":
                image = tf.transpose(image, perm=[2, 0, 1])
                shape = (shape[2], shape[0], shape[1])
            return tf.reshape(image, [shape[0], shape[1], shape[2], 1])
        if len(shape) == 1:  # a bias
            return tf.reshape(image, [1, shape[0], 1, 1])
        return None

    def _write_scalars(self, step: int, logs: dict) -> None:
        for name, value in logs.items():
            if isinstance(value, np.ndarray):
                value = value.item()
            summary = tf.summary.Summary()
            entry = summary.value.add()
            entry.tag = name
            entry.simple_value = value
            self.writer.add_summary(summary, step)
        self.writer.flush()

    def _fetch_callback(self, summary) -> None:
        self.writer.add_summary(summary, self._total_val_batches_seen)
        self._total_val_batches_seen += 1

    def on_train_batch_begin(self, batch, logs=None):
        pass

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        self._samples_seen += logs.get("size", 1)
        if self.update_freq != "epoch" and \
                self._samples_seen - self._samples_seen_at_last_write >= self.update_freq:
            self._write_scalars(self._total_batches_seen, {
                "batch_" + k: v for k, v in logs.items()
                if k not in ("batch", "size", "num_steps")})
            self._samples_seen_at_last_write = self._samples_seen
        self._total_batches_seen += 1

    def on_epoch_begin(self, epoch, logs=None):
        self._histograms_this_epoch = bool(
            self.histogram_freq and self.merged is not None
            and epoch % self.histogram_freq == 0)

    def on_test_begin(self, logs=None):
        # the validation run of an epoch with histograms: its test functions (built
        # before this hook) also fetch the merged summary
        if not self._histograms_this_epoch:
            return
        for compiled in getattr(self.model, "_compiled_graphs", {}).values():
            function = compiled.functions.get(TEST)
            if function is not None and self.merged not in function.fetches:
                function.fetches.append(self.merged)
                function.fetch_callbacks[self.merged] = self._fetch_callback
                self._hooked.append(function)

    def on_test_end(self, logs=None):
        self._unhook()

    def _unhook(self) -> None:
        for function in self._hooked:
            if self.merged in function.fetches:
                function.fetches.remove(self.merged)
            function.fetch_callbacks.pop(self.merged, None)
        self._hooked = []

    def on_epoch_end(self, epoch, logs=None):
        logs = {"epoch_" + k: v for k, v in (logs or {}).items()
                if k not in ("batch", "size", "num_steps")}
        step = epoch if self.update_freq == "epoch" else self._samples_seen
        self._write_scalars(step, logs)
        self._histograms_this_epoch = False
        self._unhook()

    def on_train_end(self, logs=None):
        self._unhook()
        self.writer.close()


def __getattr__(name: str):
    # the callbacks of tf.keras.callbacks that tensorweave does not have
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError("tf.keras.callbacks.%s is not supported by tensorweave (no "
                         "remote callbacks); write a "
                         "tf.keras.callbacks.Callback subclass instead" % name)
