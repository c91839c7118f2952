"""Keras' graph-mode `fit`, `evaluate` and `predict` on Python generators, iterators and
`keras.utils.Sequence` objects, as TF 2.15's Keras runs them under
`tf.disable_v2_behavior()` (training_generator_v1.model_iteration).

A generator yields x, (x,), (x, y) or (x, y, sample_weight) batches (a list is x: the
inputs of a model of several inputs). Each batch is one step, run by the model's
`train_on_batch` (with `class_weight`), `test_on_batch` (both without resetting the
metrics) or `predict_on_batch`. Generators need `steps_per_epoch` (`steps`); a Sequence
runs `len(seq)` steps by default. The epochs read on where the last one stopped; a
generator that ends stops training with a warning.

As Keras, the value an epoch (and `evaluate`) returns for the loss is the mean of the
batch losses over the steps, the metrics their state after the last batch; the
History's loss is the BaseLogger's: the batch losses averaged weighted by batch size.
The progress bar counts steps. Validation data (a generator, a Sequence or a tuple of
arrays, batched like the last training batch) is read after each epoch.

Keras runs the data in worker threads (`workers`, `max_queue_size`,
`use_multiprocessing`); here batches are read in the calling thread, one at a time.
A Sequence is read as Keras' OrderedEnqueuer reads it when `workers` > 0: pass after
pass over its indices (shuffled in place with Python's `random` each pass when
`shuffle`), `on_epoch_end` called once the last batch of a pass is taken; with
`workers=0` it is iterated in order, without `on_epoch_end`, as Keras does.
"""
from __future__ import annotations

import collections.abc
import inspect
import logging
import random

import numpy as np

import tensorweave as tf
from tensorweave.keras import callbacks as callbacks_module
from tensorweave.keras.callbacks import PREDICT, TEST, TRAIN
from tensorweave.keras.engine import training_arrays, training_utils

_LOG = logging.getLogger("tensorweave")


def _sequence_class():
    from tensorweave.keras.utils import Sequence  # keras.utils imports the engine
    return Sequence


def is_sequence(x) -> bool:
    return isinstance(x, _sequence_class())


def is_generator_or_sequence(x) -> bool:
    """Whether `x` is a Keras generator input: a generator, an iterator or a Sequence
    (never an array, a tensor or a built-in container)."""
    if isinstance(x, (np.ndarray, str, bytes, list, tuple, dict, set, frozenset,
                      tf.Tensor)):
        return False
    return inspect.isgenerator(x) or is_sequence(x) or \
        isinstance(x, collections.abc.Iterator)


def check_arguments(x, y=None, sample_weight=None, batch_size=None,
                    validation_split=None) -> None:
    """Raises Keras' ValueErrors for the arguments it refuses with a generator or
    Sequence `x`: `batch_size` (Sequences and generators), `y`, `sample_weight` and
    `validation_split`."""
    if batch_size is not None and (is_sequence(x) or inspect.isgenerator(x)):
        raise ValueError("The `batch_size` argument must not be specified for the given "
                         "input type. Received input: {}, batch_size: {}"
                         .format(x, batch_size))
    if y is not None:
        raise ValueError("`y` argument is not supported when data isa generator or Sequence "
                         "instance. Instead pass targets as the second element of the "
                         "generator.")
    if sample_weight is not None:
        raise ValueError("`sample_weight` argument is not supported when data isa generator "
                         "or Sequence instance. Instead pass sample weights as the third "
                         "element of the generator.")
    if validation_split:
        raise ValueError("If your data is in the form of a Python generator, you cannot use "
                         "`validation_split`.")


class _GeneratorSource:
    """The batches of a generator or iterator, read on across epochs and calls."""

    def __init__(self, generator):
        self._generator = generator

    def next_output(self):
        """The next output, or None at the end."""
        try:
            return next(self._generator)
        except (StopIteration, tf.errors.OutOfRangeError):
            return None


class _SequenceSource:
    """The batches of a Sequence, pass after pass (see the module docstring).

    Invariant: `_position` is the index in `_order` of the next batch of the pass;
    `_order` is None before the first pass.
    """

    def __init__(self, sequence, shuffle: bool):
        self._sequence = sequence
        self._shuffle = bool(shuffle)
        self._order = None
        self._position = 0

    def next_output(self):
        if self._order is None:
            self._order = list(range(len(self._sequence)))
            self._start_pass()
        if not self._order:
            return None
        output = self._sequence[self._order[self._position]]
        self._position += 1
        if self._position == len(self._order):
            self._sequence.on_epoch_end()
            self._start_pass()
        return output

    def _start_pass(self) -> None:
        self._position = 0
        if self._shuffle:
            random.shuffle(self._order)  # in place, pass after pass, as the enqueuer


class _SequenceIterSource(_GeneratorSource):
    """A Sequence iterated over and over in order (`workers=0`), as Keras'
    iter_sequence_infinite: no shuffling, no `on_epoch_end`."""

    def __init__(self, sequence):
        def forever():
            while True:
                empty = True
                for item in sequence:
                    empty = False
                    yield item
                if empty:
                    return
        super().__init__(forever())


class _ArraySource(_GeneratorSource):
    """Batches of `batch_size` samples, in order, of a tuple of array structures
    (validation data given as arrays)."""

    def __init__(self, data: tuple, batch_size: int):
        flat = [np.asarray(v) for v in tf.nest.flatten(data)]
        self.num_samples = int(flat[0].shape[0])
        batches = training_utils.make_batches(self.num_samples, batch_size)
        super().__init__(iter([
            tf.nest.pack_sequence_as(data, [v[start:end] for v in flat])
            for start, end in batches]))
        self.steps = len(batches)


def _split_output(output) -> tuple:
    """The generator's output as (x,), (x, y) or (x, y, sample_weight).

    Raises:
      ValueError: a tuple of another length.
    """
    if not isinstance(output, tuple):
        output = (output,)
    if len(output) not in (1, 2, 3):
        raise ValueError("Output of generator should be a tuple of 1 or 2 or 3 elements: "
                         "(input,) or (input, target) or (input, target, sample_weights). "
                         "Received {}".format(output))
    return output


def _make_execution_function(model, mode: str, class_weight=None):
    """One step on a batch: Keras' *_on_batch methods, the metrics kept across steps."""
    if mode == TRAIN:
        def function(x, y=None, sample_weight=None):
            return model.train_on_batch(x, y, sample_weight=sample_weight,
                                        class_weight=class_weight, reset_metrics=False)
    elif mode == TEST:
        def function(x, y=None, sample_weight=None):
            return model.test_on_batch(x, y, sample_weight=sample_weight,
                                       reset_metrics=False)
    else:
        def function(x, y=None, sample_weight=None):
            return model.predict_on_batch(x)
    return function


def _set_callback_params(callback_list, model, do_validation, batch_size, epochs, steps,
                         samples, verbose) -> None:
    """Sets the callbacks' params and stateful metrics again once a model that was built
    on its first batch knows its metrics (as Keras' set_callback_parameters)."""
    names = model.metrics_names
    for callback in callback_list:
        if isinstance(callback, (callbacks_module.BaseLogger, callbacks_module.ProgbarLogger)):
            callback.stateful_metrics = set(names[1:])
    metrics = list(names) + (["val_" + n for n in names] if do_validation else [])
    callback_list.set_params({"batch_size": batch_size, "epochs": epochs, "steps": steps,
                              "samples": samples, "verbose": verbose,
                              "do_validation": do_validation, "metrics": metrics})


def model_iteration(model, data, steps_per_epoch=None, epochs: int = 1, verbose=1,
                    callbacks=None, validation_data=None, validation_steps=None,
                    validation_freq=1, class_weight=None, max_queue_size: int = 10,
                    workers: int = 1, use_multiprocessing: bool = False, shuffle=False,
                    initial_epoch: int = 0, mode: str = TRAIN, batch_size=None,
                    steps_name: str = "steps"):
    """Runs the loop of `mode` ('train', 'test', 'predict') on a generator, iterator or
    Sequence `data` (or, for validation, a tuple of arrays batched by `batch_size`).

    Returns:
      The History (train), the loss or [loss, metrics...] (test), the predictions
      (predict: an array, or a list per output).

    Raises:
      ValueError: a generator without `steps_per_epoch`/`steps`, validation by a
        generator without `validation_steps`, generator outputs of the wrong form.
    """
    del max_queue_size  # batches are read one at a time in this thread
    num_samples = None
    if isinstance(data, (tuple, list)) and not is_generator_or_sequence(data):
        data = tuple(v for v in data
                     if not all(e is None for e in tf.nest.flatten(v)))
        source = _ArraySource(data, batch_size)
        num_samples = source.num_samples
        if steps_per_epoch is None:
            steps_per_epoch = source.steps
    elif is_sequence(data):
        if steps_per_epoch is None:
            steps_per_epoch = len(data)
        source = _SequenceSource(data, shuffle) if workers > 0 else _SequenceIterSource(data)
    else:
        source = _GeneratorSource(data)
    _validate_arguments(data, use_multiprocessing, workers, steps_per_epoch, validation_data,
                        validation_steps, mode)
    batch_function = _make_execution_function(model, mode, class_weight)
    use_steps = num_samples is None
    num_samples_or_steps = steps_per_epoch if use_steps else num_samples
    do_validation = validation_data is not None
    callbacks = callbacks_module.configure_callbacks(
        callbacks, model, do_validation=do_validation, epochs=epochs,
        steps_per_epoch=steps_per_epoch, batch_size=batch_size,
        samples=num_samples_or_steps, count_mode="steps" if use_steps else "samples",
        verbose=verbose, mode=mode)
    aggregator = training_arrays._Outputs() if mode == PREDICT else \
        training_arrays._LossAndMetrics(use_steps=True)
    model.stop_training = False
    callbacks._call_begin_hook(mode)
    results = None
    for epoch in range(initial_epoch, epochs):
        if model.stop_training:
            break
        model.reset_metrics()
        epoch_logs = {}
        if mode == TRAIN:
            callbacks.on_epoch_begin(epoch, epoch_logs)
        step = 0
        while step < steps_per_epoch:
            output = source.next_output()
            if output is None:
                model.stop_training = True
                _LOG.warning("Your dataset iterator ran out of data; interrupting training. "
                             "Make sure that your iterator can generate at least `%s * "
                             "epochs` batches (in this case, %d batches). You may need to"
                             "use the repeat() function when building your dataset.",
                             steps_name, steps_per_epoch * epochs)
                break
            batch_data = _split_output(output)
            batch_size = int(np.shape(tf.nest.flatten(batch_data)[0])[0])
            batch_logs = {"batch": step, "size": batch_size}
            callbacks._call_batch_hook(mode, "begin", step, batch_logs)
            is_deferred = not model._is_compiled
            batch_outs = batch_function(*batch_data)
            if not isinstance(batch_outs, list):
                batch_outs = [batch_outs]
            if step == 0 and is_deferred and mode != PREDICT:
                _set_callback_params(callbacks, model, do_validation, batch_size, epochs,
                                     steps_per_epoch, num_samples_or_steps, verbose)
            aggregator.add(step, batch_outs, batch_size)
            batch_logs = callbacks_module.make_logs(model, batch_logs, batch_outs, mode)
            callbacks._call_batch_hook(mode, "end", step, batch_logs)
            step += 1
            if model.stop_training:
                break
        results = aggregator.finalize(steps_per_epoch)
        epoch_logs = callbacks_module.make_logs(model, epoch_logs, results, mode)
        if len(results) == 1:
            results = results[0]
        if do_validation and training_utils.should_run_validation(validation_freq, epoch) \
                and not model.stop_training:
            val_results = model_iteration(
                model, validation_data, steps_per_epoch=validation_steps,
                batch_size=batch_size, class_weight=class_weight, workers=workers,
                use_multiprocessing=use_multiprocessing, callbacks=callbacks,
                verbose=verbose, mode=TEST, steps_name="validation_steps")
            if not isinstance(val_results, list):
                val_results = [val_results]
            epoch_logs = callbacks_module.make_logs(model, epoch_logs, val_results, mode,
                                                    prefix="val_")
        if mode == TRAIN:
            callbacks.on_epoch_end(epoch, epoch_logs)
    callbacks._call_end_hook(mode)
    if mode == TRAIN:
        return model.history
    return results


def _validate_arguments(data, use_multiprocessing, workers, steps_per_epoch,
                        validation_data, validation_steps, mode: str) -> None:
    if not is_sequence(data) and use_multiprocessing and workers > 1:
        _LOG.warning("Using a generator with `use_multiprocessing=True` and multiple workers "
                     "may duplicate your data. Please consider using the "
                     "`keras.utils.Sequence` class.")
    if steps_per_epoch is None:
        raise ValueError("Please specify the number of steps via the `%s` argument."
                         % ("steps_per_epoch" if mode == TRAIN else "steps"))
    if is_generator_or_sequence(validation_data) and not is_sequence(validation_data) \
            and not validation_steps:
        raise ValueError("Please specify the `validation_steps` argument.")


def fit(model, x, y=None, batch_size=None, epochs: int = 1, verbose=1, callbacks=None,
        validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
        sample_weight=None, initial_epoch: int = 0, steps_per_epoch=None,
        validation_steps=None, validation_freq=1, max_queue_size: int = 10,
        workers: int = 1, use_multiprocessing: bool = False):
    """`Model.fit` on a generator or Sequence `x` (Keras' GeneratorOrSequenceTrainingLoop).
    `shuffle` shuffles a Sequence's batch order at each pass."""
    check_arguments(x, y, sample_weight, batch_size, validation_split)
    return model_iteration(
        model, x, steps_per_epoch=steps_per_epoch, epochs=epochs, verbose=verbose,
        callbacks=callbacks, validation_data=validation_data,
        validation_steps=validation_steps, validation_freq=validation_freq,
        class_weight=class_weight, max_queue_size=max_queue_size, workers=workers,
        use_multiprocessing=use_multiprocessing, shuffle=shuffle,
        initial_epoch=initial_epoch, mode=TRAIN, steps_name="steps_per_epoch")


def evaluate(model, x, y=None, batch_size=None, verbose=1, sample_weight=None, steps=None,
             callbacks=None, max_queue_size: int = 10, workers: int = 1,
             use_multiprocessing: bool = False):
    """`Model.evaluate` on a generator or Sequence: the loss averaged over the steps,
    the metrics over all the batches."""
    check_arguments(x, y, sample_weight, batch_size)
    return model_iteration(model, x, steps_per_epoch=steps, verbose=verbose,
                           callbacks=callbacks, max_queue_size=max_queue_size,
                           workers=workers, use_multiprocessing=use_multiprocessing,
                           shuffle=False, mode=TEST, steps_name="steps")


def predict(model, x, batch_size=None, verbose=0, steps=None, callbacks=None,
            max_queue_size: int = 10, workers: int = 1, use_multiprocessing: bool = False):
    """`Model.predict` on a generator or Sequence: the batch outputs concatenated."""
    check_arguments(x, batch_size=batch_size)
    return model_iteration(model, x, steps_per_epoch=steps, verbose=verbose,
                           callbacks=callbacks, max_queue_size=max_queue_size,
                           workers=workers, use_multiprocessing=use_multiprocessing,
                           shuffle=False, mode=PREDICT, steps_name="steps")
