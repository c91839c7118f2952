"""The loop of `fit`, `evaluate` and `predict` over NumPy arrays or tf.data batches, as
TF 2.15's Keras runs it in graph mode (training_arrays_v1.model_iteration).

Per epoch: the metrics are reset, the samples are taken in order or shuffled (`shuffle`
True, or 'batch' for shuffling whole batches), and each batch is one run of the
model's train (or test, or predict) function. The epoch's loss is the mean of the batch
losses weighted by batch size; a metric's value is its state after the last batch (the
mean over all the samples seen). With `steps`, every step runs on all the data and the
loss is the mean over steps. A dataset's batches are steps (training_datasets.py).
Validation (in `fit`) runs after each epoch's batches, on the same callbacks, before
`on_epoch_end`.
"""
from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave.keras import callbacks as callbacks_module
from tensorweave.keras.callbacks import PREDICT, TEST, TRAIN
from tensorweave.keras.engine import training_datasets, training_utils


def _num_samples(ins, batch_size, steps, steps_name: str):
    """The number of samples of `ins` (None when stepping).

    Raises:
      ValueError: both steps and batch_size.
    """
    if steps is not None and batch_size is not None:
        raise ValueError("If " + steps_name + " is set, the `batch_size` must be None.")
    if steps is not None:
        return None
    for value in ins:
        if hasattr(value, "shape"):
            return int(value.shape[0])
    return None


class _LossAndMetrics:
    """The loss (weighted by batch size, or by step) and the last metric values.

    As Keras, one aggregator serves all the epochs of a call and starts over at each
    epoch's first batch: an epoch without batches (a dataset that ran out) finalizes
    the previous epoch's results again.
    """

    def __init__(self, use_steps: bool):
        self.use_steps = use_steps
        self.results = []

    def add(self, index: int, batch_outs, batch_size: int) -> None:
        if index == 0:
            self.results = [np.float64(0.0)] * len(batch_outs)
        weight = 1 if self.use_steps else batch_size
        # as Keras: the loss sums in float64, the metrics are the last batch's values as
        # the session returned them (float32 scalars; an array for a metric of several
        # thresholds, Precision(thresholds=[...]))
        self.results[0] += np.float64(batch_outs[0]) * weight
        self.results[1:] = [np.asarray(v)[()] for v in batch_outs[1:]]

    def finalize(self, total) -> list:
        """The results, the loss divided by `total` (samples, or steps)."""
        if not self.results:
            raise ValueError("Empty training data.")
        self.results[0] /= total
        return self.results


class _Outputs:
    """The predictions of all batches, concatenated per output."""

    def __init__(self):
        self.results = None

    def add(self, index: int, batch_outs, batch_size: int) -> None:
        if index == 0:
            self.results = [[] for _ in batch_outs]
        for parts, value in zip(self.results, batch_outs):
            parts.append(np.asarray(value))

    def finalize(self, total) -> list:
        if self.results is None:
            raise ValueError("Empty prediction data.")
        return [np.concatenate(parts, axis=0) for parts in self.results]


def model_iteration(model, inputs, targets=None, sample_weights=None, batch_size=None,
                    epochs: int = 1, verbose=1, callbacks=None, val_inputs=None,
                    val_targets=None, val_sample_weights=None, shuffle=True,
                    initial_epoch: int = 0, steps_per_epoch=None, validation_steps=None,
                    validation_freq=1, mode: str = TRAIN, steps_name: str = "steps",
                    validation_batch_size=None):
    """Runs the loop of `mode` ('train', 'test', 'predict') on standardized data: lists
    of arrays, or a DatasetFeed as `inputs` (and as `val_inputs`), whose steps then
    replace `steps_per_epoch` (`validation_steps`).

    Returns:
      The History (train), the loss or [loss, metrics...] (test), the predictions
      (predict: an array, or a list per output).
    """
    feed = inputs if isinstance(inputs, training_datasets.DatasetFeed) else None
    if feed is not None:
        steps_per_epoch, num_samples, weighted, ins = feed.steps, feed.steps, feed.weighted, None
    else:
        weighted = sample_weights is not None
        ins = list(inputs) + list(targets or []) + list(sample_weights or [])
        num_samples = _num_samples(ins, batch_size, steps_per_epoch, steps_name)
    use_steps = feed is not None or steps_per_epoch is not None
    feed_phase = mode == TRAIN and model._feeds_learning_phase()
    function = model._execution_function(mode, weighted)
    do_validation = val_inputs is not None
    # Keras counts steps as the samples when stepping (the callbacks' params too), and
    # names them steps only for a dataset
    samples_or_steps = steps_per_epoch if use_steps else num_samples
    if mode == TRAIN and verbose:
        _print_train_info(samples_or_steps, "steps" if feed is not None else "samples",
                          val_inputs)
    callbacks = callbacks_module.configure_callbacks(
        callbacks, model, do_validation=do_validation, batch_size=batch_size, epochs=epochs,
        steps_per_epoch=steps_per_epoch, samples=samples_or_steps, verbose=verbose,
        count_mode="steps" if use_steps else "samples", mode=mode)
    model.stop_training = False
    callbacks._call_begin_hook(mode)
    aggregator = _Outputs() if mode == PREDICT else _LossAndMetrics(use_steps)

    def run_batch(index: int, batch_ins: list, size: int, batch_logs: dict) -> None:
        """Runs one batch and adds it to `aggregator`."""
        batch_outs = function(batch_ins + [True] if feed_phase else batch_ins)
        if not isinstance(batch_outs, list):
            batch_outs = [batch_outs]
        aggregator.add(index, batch_outs, size)
        batch_logs = callbacks_module.make_logs(model, batch_logs, batch_outs, mode)
        callbacks._call_batch_hook(mode, "end", index, batch_logs)

    results = None
    for epoch in range(initial_epoch, epochs):
        if model.stop_training:
            break
        epoch_logs = {}
        if mode != PREDICT:
            model.reset_metrics()
        if mode == TRAIN:
            callbacks.on_epoch_begin(epoch, epoch_logs)
        if feed is not None:
            feed.start_epoch(first=epoch == initial_epoch)
            _dataset_epoch(model, feed, callbacks, mode, run_batch, epochs)
            total = feed.steps
        else:
            for index, batch_ins, size in _batches(ins, num_samples, batch_size,
                                                   steps_per_epoch, shuffle):
                batch_logs = {"batch": index, "size": size}
                callbacks._call_batch_hook(mode, "begin", index, batch_logs)
                run_batch(index, batch_ins, size, batch_logs)
                if model.stop_training:
                    break
            total = steps_per_epoch if use_steps else num_samples
        results = aggregator.finalize(total)
        epoch_logs = callbacks_module.make_logs(model, epoch_logs, results, mode)
        if len(results) == 1:
            results = results[0]
        if do_validation and training_utils.should_run_validation(validation_freq, epoch) \
                and not model.stop_training:
            val_results = model_iteration(
                model, val_inputs, targets=val_targets, sample_weights=val_sample_weights,
                batch_size=batch_size if validation_batch_size is None
                else validation_batch_size, steps_per_epoch=validation_steps,
                callbacks=callbacks, verbose=0, mode=TEST, shuffle=False,
                steps_name="validation_steps")
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


def _print_train_info(count, unit: str, val_inputs) -> None:
    """'Train on N samples|steps[, validate on M ...]', the validation counted in the
    training's unit as Keras does (its steps for a dataset, else its samples)."""
    message = "Train on %s %s" % (count, unit)
    if isinstance(val_inputs, training_datasets.DatasetFeed):
        val_count = val_inputs.steps
    else:
        val_count = val_inputs[0].shape[0] if val_inputs else None
    if val_count:
        message += ", validate on %s %s" % (val_count, unit)
    print(message)


def _dataset_epoch(model, feed, callbacks, mode: str, run_batch, epochs: int) -> None:
    """One epoch of `feed`: `feed.steps` steps, or (steps unknown) until the data end.
    As Keras, a step's begin hook runs before its batch is read (so it also runs for
    the read that finds the end), and every step has size 1."""
    step = 0
    while feed.steps is None or step < feed.steps:
        batch_logs = {"batch": step, "size": 1}
        callbacks._call_batch_hook(mode, "begin", step, batch_logs)
        try:
            batch_ins = feed.next_batch()
        except tf.errors.OutOfRangeError:
            feed.ran_out(step, epochs)
            break
        run_batch(step, batch_ins, 1, batch_logs)
        step += 1
        if model.stop_training:
            break


def _batches(ins, num_samples, batch_size, steps, shuffle):
    """(batch index, the batch's values, its size) of one epoch: all of `ins` per step
    when stepping, else batches of `batch_size` samples in the (shuffled) order."""
    if steps is not None:
        for step in range(steps):
            yield step, list(ins), 1
        return
    index_array = np.arange(num_samples)
    if shuffle == "batch":
        index_array = training_utils.batch_shuffle(index_array, batch_size)
    elif shuffle:
        np.random.shuffle(index_array)
    batches = training_utils.make_batches(num_samples, batch_size)
    for index, (start, end) in enumerate(batches):
        if len(batches) == 1:
            batch_ins = list(ins)
        else:
            batch_ins = training_utils.slice_arrays(ins, index_array[start:end])
        yield index, batch_ins, end - start
