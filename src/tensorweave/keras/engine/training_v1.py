"""The training API of `tf.keras.Model` in graph mode, as TF 2.15's Keras has it under
`tf.disable_v2_behavior()` (training_v1): `compile`, `fit`, `evaluate`, `predict`, the
`*_on_batch` methods, `metrics`, `metrics_names` and `reset_metrics`.

`compile` makes the training endpoints, the metrics and the total loss (compile_utils);
a model without inputs yet (a Sequential without an input shape, a subclassed model) is
built on the first data it gets, then compiled. The train, test and predict functions
are Keras backend functions run in the Keras session: the train function feeds the
learning phase True (dropout and batch normalization train) and runs the optimizer's
update and the model's updates (batch norm moving averages) after the loss. With sample
weights the loss and the weighted metrics are built on sample-weight placeholders, once
per choice of weighted or not.
"""
from __future__ import annotations

import warnings

import numpy as np

import tensorweave as tf
from tensorweave.keras import backend, optimizers, saving_weights
from tensorweave.keras import metrics as metrics_module
from tensorweave.keras.callbacks import PREDICT, TEST, TRAIN
from tensorweave.keras.engine import compile_utils, training_arrays, training_datasets
from tensorweave.keras.engine import training_generator, training_utils

_SESSION_KWARGS = ("feed_dict", "fetches", "options", "run_metadata")


class _CompiledGraph:
    """The loss and metric tensors of one choice of sample weights, and the functions
    running them (made on first use).

    Fields:
      sample_weights: per endpoint, the sample-weight placeholder or None.
      total_loss: the total loss.
      metric_tensors: the output-loss means, then the compile metrics' results.
      functions: mode -> the backend function.
    """

    def __init__(self, sample_weights, total_loss, metric_tensors):
        self.sample_weights = sample_weights
        self.total_loss = total_loss
        self.metric_tensors = metric_tensors
        self.functions = {}


def _sample_weight_placeholder(endpoint, mode: str):
    if mode == "temporal":
        default, shape = [[1.0]], [None, None]
    else:
        default, shape = [1.0], [None]
    return tf.placeholder_with_default(tf.constant(default, dtype=backend.floatx()),
                                       shape=shape, name=endpoint.output_name +
                                       "_sample_weights")


class TrainingMixin:
    """The Keras training API of Model (see the module docstring)."""

    _compile_was_called = False
    _is_compiled = False
    _from_serialized = False  # compiled by load_model (its metrics' names are final)
    _predict_function = None
    _function_kwargs: dict = {}  # replaced (never mutated) by compile

    # --- compile -------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                sample_weight_mode=None, weighted_metrics=None, target_tensors=None,
                distribute=None, **kwargs):
        """Configures the model for training.

        Args:
          optimizer: a name ('sgd', 'adam', 'rmsprop', ...), a tf.keras optimizer, or a
            tf.train optimizer.
          loss: a name, function or Loss, or a list/dict of them per output (an output
            without a loss is not trained and gets no target).
          metrics: names ('accuracy', 'mse', ...), functions or Metrics, or a list of
            lists / dict per output.
          loss_weights: the factors of the output losses (list or dict).
          sample_weight_mode: None (per sample) or 'temporal' (per timestep), or a list
            or dict per output.
          weighted_metrics: metrics weighted by the sample weights.
          target_tensors: tensors to use as targets instead of fed placeholders.
          distribute: not supported.
          **kwargs: feed_dict, fetches, options, run_metadata (for the session runs).

        Raises:
          TypeError: unknown keyword arguments.
          ValueError: run_eagerly=True, or arguments that do not fit the outputs.
          NotImplementedError: `distribute`.
        """
        if kwargs.pop("run_eagerly", None):
            raise ValueError("You can only set `run_eagerly=True` if eager execution is "
                             "enabled.")
        kwargs.pop("experimental_run_tf_function", None)
        self._from_serialized = kwargs.pop("from_serialized", False)  # load_model's
        if distribute is not None:
            raise NotImplementedError("Model.compile(distribute=...) is not supported by "
                                      "tensorweave (no distribution strategies)")
        unknown = set(kwargs) - set(_SESSION_KWARGS)
        if unknown:
            raise TypeError("Invalid keyword argument(s) in `compile`: %s" % unknown)
        self._function_kwargs = kwargs
        if isinstance(optimizer, (list, tuple)):
            self.optimizer = [optimizers.get(opt) for opt in optimizer]
        else:
            self.optimizer = optimizers.get(optimizer)
        self.loss = loss or {}
        self.loss_weights = loss_weights
        self.sample_weight_mode = sample_weight_mode
        self._compile_metrics = metrics or []
        self._compile_weighted_metrics = weighted_metrics
        self._compile_target_tensors = target_tensors
        self._compile_was_called = True
        self._is_compiled = False
        self._endpoints = []
        self._compile_metric_functions = []
        self._compiled_graphs = {}
        self._predict_function = None
        if not self.built or not self.inputs or not self.outputs:
            return  # compiled when built, on the first data
        self._is_compiled = True
        with self._graph_of_model().as_default():
            self._compile_endpoints(loss_weights, metrics, weighted_metrics,
                                    sample_weight_mode, target_tensors)

    def _compile_endpoints(self, loss_weights, metrics, weighted_metrics, sample_weight_mode,
                           target_tensors) -> None:
        loss_functions = compile_utils.prepare_loss_functions(self.loss, self.output_names)
        targets = compile_utils.process_target_tensors(target_tensors, self.output_names)
        for output, name, loss_fn, target in zip(self.outputs, self.output_names,
                                                 loss_functions, targets):
            endpoint = compile_utils.Endpoint(output, name, loss_fn)
            endpoint.create_target(target)
            self._endpoints.append(endpoint)
        compile_utils.prepare_loss_weights(self._endpoints, loss_weights)
        self._set_metrics(metrics, weighted_metrics)
        compile_utils.prepare_sample_weight_modes(self._endpoints, sample_weight_mode)
        self._collected_trainable_weights = self.trainable_weights
        self._unweighted_results = compile_utils.metric_results(self._endpoints)
        compiled = self._compiled_graph(tuple(e.sample_weight_mode for e in self._endpoints))
        self.total_loss = compiled.total_loss

    def _set_metrics(self, metrics, weighted_metrics) -> None:
        shapes = [None if o.shape.ndims is None else o.shape.as_list() for o in self.outputs]
        loss_fns = [e.loss_fn for e in self._endpoints]
        per_output = compile_utils.collect_per_output_metric_info(
            metrics, self.output_names, shapes, loss_fns,
            from_serialized=self._from_serialized)
        per_output_weighted = compile_utils.collect_per_output_metric_info(
            weighted_metrics, self.output_names, shapes, loss_fns, is_weighted=True,
            from_serialized=self._from_serialized)
        for i, endpoint in enumerate(self._endpoints):
            if endpoint.skip:
                continue
            endpoint.metrics = self._unique_metrics(per_output[i], i)
            endpoint.weighted_metrics = self._unique_metrics(per_output_weighted[i], i)
        if len(self._endpoints) > 1:
            for endpoint in self._endpoints:
                if not endpoint.skip:
                    endpoint.output_loss_metric = metrics_module.Mean(name=endpoint.loss_name())

    def _unique_metrics(self, named, output_index: int):
        renamed = type(named)()
        for name, metric in named.items():
            if len(self.output_names) > 1 and not getattr(metric, "_from_serialized", False):
                name = "%s_%s" % (self.output_names[output_index], name)
            base, j = name, 1
            while name in self.metrics_names:
                name = "%s_%d" % (base, j)
                j += 1
            metric._name = name
            renamed[name] = metric
            self._compile_metric_functions.append(metric)
        return renamed

    def _compiled_graph(self, modes: tuple) -> _CompiledGraph:
        """The loss and metrics for the sample-weight modes `modes` (one per endpoint;
        None: no sample weights), built once."""
        compiled = self._compiled_graphs.get(modes)
        if compiled is not None:
            return compiled
        with self._graph_of_model().as_default():
            sample_weights = [
                None if mode is None or e.skip or not e.feedable
                else _sample_weight_placeholder(e, mode)
                for e, mode in zip(self._endpoints, modes)]
            weighted = compile_utils.metric_results(self._endpoints, sample_weights,
                                                    weighted=True)
            total, loss_metrics = compile_utils.total_loss(self, self._endpoints,
                                                           sample_weights)
        results = dict(self._unweighted_results)
        results.update(weighted)
        tensors = loss_metrics + [results[id(m)] for m in self._compile_metric_functions] + \
            [m._call_result for m in self._added_metrics()]
        compiled = self._compiled_graphs[modes] = _CompiledGraph(sample_weights, total,
                                                                 tensors)
        return compiled

    def _graph_of_model(self):
        return self.outputs[0].graph

    # --- metrics -------------------------------------------------------------------------
    @property
    def metrics(self) -> list:
        """The compile metrics then those of `add_metric` (Metric objects), in the order
        of `metrics_names`."""
        compiled = list(self._compile_metric_functions) if self._is_compiled else []
        return compiled + self._added_metrics()

    def _added_metrics(self) -> list:
        """The metrics `add_metric` gave the model and its layers (each once)."""
        found, seen = [], set()
        for layer in self._flatten_layers():
            for metric in layer.__dict__.get("_metrics", []):
                if id(metric) not in seen:
                    seen.add(id(metric))
                    found.append(metric)
        return found

    @property
    def metrics_names(self) -> list:
        """'loss', then (with several outputs) '<output>_loss' per output with a loss,
        then the metrics' names: the keys of the logs and History."""
        names = ["loss"]
        if self._is_compiled and len(self._endpoints) > 1:
            names += [e.loss_name() for e in self._endpoints if not e.skip]
        return names + [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        """Zeroes the state of the compile metrics and of the output-loss means."""
        for metric in self._training_eval_metrics():
            metric.reset_state()

    def _training_eval_metrics(self) -> list:
        if not self._is_compiled:
            return []
        loss_means = [e.output_loss_metric for e in self._endpoints
                      if e.output_loss_metric is not None]
        return loss_means + self.metrics

    # --- functions -----------------------------------------------------------------------
    def _feeds_learning_phase(self) -> bool:
        with self._graph_of_model().as_default():
            return not isinstance(backend.learning_phase(), int)

    def _feedable_endpoints(self) -> list:
        return [e for e in self._endpoints if not e.skip and e.feedable]

    def _modes(self, weighted: bool) -> tuple:
        if not weighted:
            return tuple(None for _ in self._endpoints)
        return tuple(None if e.skip or not e.feedable else e.sample_weight_mode or "samplewise"
                     for e in self._endpoints)

    def _execution_function(self, mode: str, weighted: bool = False):
        """The backend function of `mode` ('train', 'test', 'predict') for data with or
        without sample weights.

        Raises:
          ValueError: training with a list of optimizers.
        """
        if mode == PREDICT:
            if self._predict_function is None:
                with self._graph_of_model().as_default(), tf.name_scope("predict"):
                    self._predict_function = backend.function(
                        self.inputs, list(self.outputs), updates=self.state_updates,
                        name="predict_function", **self._function_kwargs)
            return self._predict_function
        compiled = self._compiled_graph(self._modes(weighted))
        function = compiled.functions.get(mode)
        if function is not None:
            return function
        inputs = list(self.inputs) + [e.target for e in self._feedable_endpoints()] + \
            [w for w in compiled.sample_weights if w is not None]
        outputs = [compiled.total_loss] + compiled.metric_tensors
        with self._graph_of_model().as_default():
            updates = list(self.state_updates)  # stateful layers step in every mode
            if mode == TRAIN:
                if isinstance(self.optimizer, list):
                    raise ValueError("The `optimizer` in `compile` should be a single "
                                     "optimizer.")
                if self._feeds_learning_phase():
                    inputs.append(backend.learning_phase())
                with tf.name_scope("training"):
                    updates = self.optimizer.get_updates(
                        params=self._collected_trainable_weights, loss=compiled.total_loss)
                    updates += [u for u in self.get_updates_for(None) +
                                self.get_updates_for(self.inputs) if u not in updates]
                saving_weights.restore_pending(self)
            with tf.name_scope("training" if mode == TRAIN else "evaluation"):
                function = backend.function(inputs, outputs, updates=updates,
                                            name=mode + "_function", **self._function_kwargs)
        compiled.functions[mode] = function
        return function

    # --- data ----------------------------------------------------------------------------
    def _assert_compile_was_called(self) -> None:
        if not self._compile_was_called:
            raise RuntimeError("You must compile your model before training/testing. Use "
                               "`model.compile(optimizer, loss)`.")

    def _build_with_data(self, x) -> None:
        """Builds a model without inputs by calling it on placeholders shaped like `x`
        ('input_1', ...: the batch dimension unknown, floats as floatx()), as Keras.
        `x` holds arrays, or DataSpecs (a dataset's element spec).

        Raises:
          ValueError: a DataSpec of unknown rank.
        """
        if isinstance(x, dict):
            names = sorted(x)
            values = [x[k] for k in names]
        else:
            values = list(x) if isinstance(x, (list, tuple)) else [x]
            names = ["input_%d" % (i + 1) for i in range(len(values))]
        placeholders = []
        for name, value in zip(names, values):
            if not isinstance(value, training_utils.DataSpec):
                value = np.asarray(value)
            if value.shape is None:
                raise ValueError("Cannot build the model from dataset input %s of unknown "
                                 "rank: give the model an input shape" % name)
            shape = tuple(value.shape)
            if len(shape) == 1:
                shape += (1,)
            shape = (None,) + shape[1:]
            dtype = tf.as_dtype(value.dtype)
            if dtype.is_floating:
                dtype = tf.as_dtype(backend.floatx())
            placeholders.append(backend.placeholder(shape=shape, name=name, dtype=dtype))
        if type(self).__name__ == "Sequential" and not self.built:
            self._build_input_shape = placeholders[0].shape
        if isinstance(x, dict):
            inputs = dict(zip(names, placeholders))
        elif isinstance(x, (list, tuple)):
            inputs = placeholders
        else:
            inputs = placeholders[0]
        kwargs = {}
        if self._expects_training_arg:
            kwargs["training"] = backend.learning_phase()
        outputs = self(inputs, **kwargs)
        self.inputs = placeholders
        self.input_names = names
        self.outputs = tf.nest.flatten(outputs)
        self.output_names = ["output_%d" % (i + 1) for i in range(len(self.outputs))]
        self.built = True

    def _feed_input_shapes(self):
        if not getattr(self, "_is_graph_network", False):
            return None
        return [backend.int_shape(x) for x in self.inputs]

    def _build_and_compile_with(self, x) -> None:
        """Builds a model that has no inputs yet on data like `x` (arrays or DataSpecs),
        and compiles it if `compile` was waiting for that."""
        if not self.inputs:
            self._build_with_data(x)
        if not self._is_compiled and getattr(self, "optimizer", None) is not None:
            self.compile(optimizer=self.optimizer, loss=self.loss,
                         metrics=self._compile_metrics,
                         weighted_metrics=self._compile_weighted_metrics,
                         loss_weights=self.loss_weights,
                         sample_weight_mode=self.sample_weight_mode,
                         target_tensors=self._compile_target_tensors,
                         from_serialized=self._from_serialized, **self._function_kwargs)

    def _standardize_user_data(self, x, y=None, sample_weight=None, class_weight=None):
        """(input arrays, target arrays, sample weights or None) in the order of the
        model's feeds; builds and compiles a model that has no inputs yet."""
        training_utils.check_numpy_data(x, "x")
        training_utils.check_numpy_data(y, "y")
        self._build_and_compile_with(x)
        x = training_utils.standardize_input_data(
            x, self.input_names, self._feed_input_shapes(), check_batch_axis=False,
            exception_prefix="input")
        if y is None or not self._is_compiled:
            return x, [], None
        endpoints = self._feedable_endpoints()
        names = [e.output_name for e in endpoints]
        modes = [e.sample_weight_mode for e in endpoints]
        y = training_utils.standardize_input_data(y, names, None, check_batch_axis=False,
                                                  exception_prefix="target")
        weights = training_utils.standardize_sample_or_class_weights(
            sample_weight, names, "sample_weight")
        class_weights = training_utils.standardize_sample_or_class_weights(
            class_weight, names, "class_weight")
        weights = [training_utils.standardize_weights(ref, sw, cw, mode)
                   for ref, sw, cw, mode in zip(y, weights, class_weights, modes)]
        training_utils.check_array_lengths(x, y, weights)
        if getattr(self, "_is_graph_network", False):
            _check_loss_and_target_compatibility(y, endpoints)
        return x, y, training_utils.fill_partial_sample_weights(y, weights, modes)

    def _infer_batch_size(self, batch_size, steps):
        """`batch_size`, or the model's static batch size, or 32 (None when stepping).

        Raises:
          ValueError: a batch size other than the model's static one.
        """
        static = None
        if getattr(self, "_is_graph_network", False) and self.inputs:
            shape = backend.int_shape(self.inputs[0])
            static = shape[0] if shape else None
        if static is not None:
            if batch_size is not None and batch_size != static:
                raise ValueError("The `batch_size` argument value %d is incompatible with the "
                                 "specified batch size of your Input Layer: %d"
                                 % (batch_size, static))
            if steps is None:
                batch_size = static
        if batch_size is None and steps is None:
            batch_size = 32
        return batch_size

    # --- fit / evaluate / predict --------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs: int = 1, verbose=1, callbacks=None,
            validation_split: float = 0.0, validation_data=None, shuffle=True,
            class_weight=None, sample_weight=None, initial_epoch: int = 0,
            steps_per_epoch=None, validation_steps=None, validation_freq=1,
            max_queue_size: int = 10, workers: int = 1, use_multiprocessing: bool = False,
            **kwargs):
        """Trains the model for `epochs` epochs on NumPy data or a tf.data dataset.

        Args:
          x: the inputs (an array, a list or dict of arrays), or a tf.data Dataset of
            (inputs, targets) or (inputs, targets, sample_weights) batches (inputs and
            targets may be tuples or dicts), or a TF1 iterator over such batches
            (accepted as TF 1.x's Keras did; TF 2.15's refuses iterators), or a Python
            generator or keras.utils.Sequence of such batches (training_generator.py).
          y: the targets (arrays, lists or dicts of arrays); None with a dataset.
          batch_size: samples per step (default 32, or the model's static batch size);
            None with a dataset, which batches itself.
          epochs: the index of the last epoch (training starts at `initial_epoch`).
          verbose: 0 silent, 1 progress bar, 2 one line per epoch.
          callbacks: tf.keras.callbacks.Callback objects.
          validation_split: the fraction of the samples, taken from the end, to
            validate on after each epoch (not with a dataset).
          validation_data: (x_val, y_val) or (x_val, y_val, val_sample_weights), or a
            dataset or iterator like `x` (restarted at each validation).
          shuffle: shuffle the samples each epoch (True), or whole batches ('batch');
            ignored for a dataset (a warning says when it has no shuffle of its own).
          class_weight: class index -> weight of its samples in the loss (ignored for
            a dataset, as by Keras).
          sample_weight: weights of the samples (per timestep for 'temporal'); with a
            dataset, the third part of its elements instead.
          initial_epoch: the epoch to start from.
          steps_per_epoch: with arrays, run this many steps on all the data per epoch
            (batch_size must then be None). With a dataset, the batches per epoch,
            read on across epochs; None: each epoch reads the whole dataset (its
            cardinality, or until it ends) and restarts it. Required for an endless
            dataset and for an iterator.
          validation_steps: steps of validation (with steps_per_epoch, or with a
            validation dataset, where None reads all of it).
          validation_freq: validate every this many epochs, or at the epochs listed.
          max_queue_size, workers, use_multiprocessing: for generators and Sequences
            (read in the calling thread here; workers=0 reads a Sequence as Keras does
            then: in order, without on_epoch_end).

        Returns:
          The History: `history.history` maps 'loss', the metric names and their 'val_'
          forms to their value per epoch. With a dataset, the loss is the mean of the
          batch losses over the steps (every step counts as size 1, as Keras logs it).

        Raises:
          RuntimeError: the model is not compiled.
          TypeError: unknown keyword arguments.
          ValueError: data that do not fit the model; with a dataset: `batch_size`,
            `y`, `sample_weight` or `validation_split` given, an endless dataset
            without `steps_per_epoch` (`validation_steps` for validation data), an
            iterator without them, elements other than x, (x, y) or (x, y, weights).
          NotImplementedError: symbolic tensors as data.
        """
        if "nb_epoch" in kwargs:
            epochs = kwargs.pop("nb_epoch")
        if kwargs:
            raise TypeError("Unrecognized keyword arguments: " + str(kwargs))
        self._assert_compile_was_called()
        if training_generator.is_generator_or_sequence(x):
            return training_generator.fit(
                self, x, y, batch_size=batch_size, epochs=epochs, verbose=verbose,
                callbacks=callbacks, validation_split=validation_split,
                validation_data=validation_data, shuffle=shuffle, class_weight=class_weight,
                sample_weight=sample_weight, initial_epoch=initial_epoch,
                steps_per_epoch=steps_per_epoch, validation_steps=validation_steps,
                validation_freq=validation_freq, max_queue_size=max_queue_size,
                workers=workers, use_multiprocessing=use_multiprocessing)
        validation_batch_size = None
        if training_datasets.is_data_source(x):
            training_datasets.check_arguments(x, y, sample_weight, validation_split,
                                              batch_size)
            training_datasets.warn_if_not_shuffled(x, shuffle)
            x = training_datasets.DatasetFeed(self, x, steps_per_epoch, "steps_per_epoch",
                                              TRAIN, role=TRAIN)
            y = sample_weights = None
            validation_batch_size = self._infer_batch_size(None, validation_steps)
        else:
            batch_size = self._infer_batch_size(batch_size, steps_per_epoch)
            x, y, sample_weights = self._standardize_user_data(x, y, sample_weight,
                                                               class_weight)
        if training_datasets.is_data_source(validation_data):
            val_x = training_datasets.DatasetFeed(self, validation_data, validation_steps,
                                                  "validation_steps", TEST, role="validation")
            val_y = val_weights = None
        elif validation_data:
            val_x, val_y, val_sample_weight = training_utils.unpack_validation_data(
                validation_data)
            val_x, val_y, val_weights = self._standardize_user_data(val_x, val_y,
                                                                    val_sample_weight)
        elif validation_split and 0.0 < validation_split < 1.0:
            x, y, sample_weights, val_x, val_y, val_weights = \
                training_utils.split_training_and_validation_data(
                    x, y, sample_weights, validation_split)
        else:
            if validation_steps:
                raise ValueError("`validation_steps` should not be specified if "
                                 "`validation_data` is None.")
            val_x = val_y = val_weights = None
        return training_arrays.model_iteration(
            self, x, targets=y, sample_weights=sample_weights, batch_size=batch_size,
            epochs=epochs, verbose=verbose, callbacks=callbacks, val_inputs=val_x,
            val_targets=val_y, val_sample_weights=val_weights, shuffle=shuffle,
            initial_epoch=initial_epoch, steps_per_epoch=steps_per_epoch,
            validation_steps=validation_steps, validation_freq=validation_freq, mode=TRAIN,
            steps_name="steps_per_epoch", validation_batch_size=validation_batch_size)

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None,
                 steps=None, callbacks=None, max_queue_size: int = 10, workers: int = 1,
                 use_multiprocessing: bool = False):
        """The loss (and metrics) of the model on NumPy data or a tf.data dataset (or
        TF1 iterator) of (x, y[, sample_weights]) batches, in inference mode.

        With a dataset, `steps` None reads all of it (an endless one needs `steps`).

        Returns:
          The loss, or [loss, metrics...] in the order of `metrics_names`: the loss
          averaged over the samples (over the steps for a dataset), the metrics over
          all the data.

        Raises:
          RuntimeError: the model is not compiled.
          ValueError: data that do not fit the model; with a dataset, the arguments
            `fit` refuses with one.
        """
        self._assert_compile_was_called()
        if training_generator.is_generator_or_sequence(x):
            return training_generator.evaluate(
                self, x, y, batch_size=batch_size, verbose=verbose,
                sample_weight=sample_weight, steps=steps, callbacks=callbacks,
                max_queue_size=max_queue_size, workers=workers,
                use_multiprocessing=use_multiprocessing)
        if training_datasets.is_data_source(x):
            training_datasets.check_arguments(x, y, sample_weight, batch_size=batch_size)
            feed = training_datasets.DatasetFeed(self, x, steps, "steps", TEST, role=TEST)
            return training_arrays.model_iteration(self, feed, verbose=verbose,
                                                   callbacks=callbacks, mode=TEST,
                                                   shuffle=False)
        batch_size = self._infer_batch_size(batch_size, steps)
        x, y, sample_weights = self._standardize_user_data(x, y, sample_weight)
        return training_arrays.model_iteration(
            self, x, targets=y, sample_weights=sample_weights, batch_size=batch_size,
            verbose=verbose, steps_per_epoch=steps, callbacks=callbacks, mode=TEST,
            shuffle=False)

    def predict(self, x, batch_size=None, verbose=0, steps=None, callbacks=None,
                max_queue_size: int = 10, workers: int = 1, use_multiprocessing: bool = False):
        """The model's outputs for NumPy inputs, or for the inputs of a tf.data dataset
        (or TF1 iterator) whose elements are x or (x, y[, sample_weights]), in
        inference mode, by batches. With a dataset, `steps` None reads all of it.

        Returns:
          An array, or a list of arrays for several outputs.

        Raises:
          ValueError: inputs that do not fit the model; `batch_size` with a dataset;
            an endless dataset, or an iterator, without `steps`.
        """
        if training_generator.is_generator_or_sequence(x):
            return training_generator.predict(
                self, x, batch_size=batch_size, verbose=verbose, steps=steps,
                callbacks=callbacks, max_queue_size=max_queue_size, workers=workers,
                use_multiprocessing=use_multiprocessing)
        if training_datasets.is_data_source(x):
            training_datasets.check_arguments(x, batch_size=batch_size)
            feed = training_datasets.DatasetFeed(self, x, steps, "steps", PREDICT,
                                                 role=PREDICT)
            return training_arrays.model_iteration(self, feed, verbose=verbose,
                                                   callbacks=callbacks, mode=PREDICT,
                                                   shuffle=False)
        batch_size = self._infer_batch_size(batch_size, steps)
        x, _, _ = self._standardize_user_data(x)
        return training_arrays.model_iteration(
            self, x, batch_size=batch_size, verbose=verbose, steps_per_epoch=steps,
            callbacks=callbacks, mode=PREDICT, shuffle=False)

    def fit_generator(self, generator, steps_per_epoch=None, epochs: int = 1, verbose=1,
                      callbacks=None, validation_data=None, validation_steps=None,
                      validation_freq=1, class_weight=None, max_queue_size: int = 10,
                      workers: int = 1, use_multiprocessing: bool = False, shuffle=True,
                      initial_epoch: int = 0):
        """Deprecated (as in Keras 2.15): `fit` on a generator or Sequence, with a
        warning."""
        warnings.warn("`model.fit_generator` is deprecated and will be removed in a future "
                      "version. Please use `Model.fit`, which supports generators.",
                      stacklevel=2)
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs,
                        verbose=verbose, callbacks=callbacks,
                        validation_data=validation_data, validation_steps=validation_steps,
                        validation_freq=validation_freq, class_weight=class_weight,
                        max_queue_size=max_queue_size, workers=workers,
                        use_multiprocessing=use_multiprocessing, shuffle=shuffle,
                        initial_epoch=initial_epoch)

    def evaluate_generator(self, generator, steps=None, callbacks=None,
                           max_queue_size: int = 10, workers: int = 1,
                           use_multiprocessing: bool = False, verbose=0):
        """Deprecated (as in Keras 2.15): `evaluate` on a generator or Sequence."""
        warnings.warn("`Model.evaluate_generator` is deprecated and will be removed in a "
                      "future version. Please use `Model.evaluate`, which supports "
                      "generators.", stacklevel=2)
        return self.evaluate(generator, steps=steps, max_queue_size=max_queue_size,
                             workers=workers, use_multiprocessing=use_multiprocessing,
                             verbose=verbose, callbacks=callbacks)

    def predict_generator(self, generator, steps=None, callbacks=None,
                          max_queue_size: int = 10, workers: int = 1,
                          use_multiprocessing: bool = False, verbose=0):
        """Deprecated (as in Keras 2.15): `predict` on a generator or Sequence."""
        warnings.warn("`Model.predict_generator` is deprecated and will be removed in a "
                      "future version. Please use `Model.predict`, which supports "
                      "generators.", stacklevel=2)
        return self.predict(generator, steps=steps, max_queue_size=max_queue_size,
                            workers=workers, use_multiprocessing=use_multiprocessing,
                            verbose=verbose, callbacks=callbacks)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       reset_metrics: bool = True):
        """One training step on one batch.

        Returns:
          The loss, or [loss, metrics...] (the metrics since the last reset).
        """
        self._assert_compile_was_called()
        x, y, sample_weights = self._standardize_user_data(x, y, sample_weight, class_weight)
        ins = x + list(y or []) + list(sample_weights or [])
        if self._feeds_learning_phase():
            ins.append(True)
        outputs = self._execution_function(TRAIN, sample_weights is not None)(ins)
        return self._batch_result(outputs, reset_metrics)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics: bool = True):
        """The loss (and metrics) of one batch, in inference mode.

        Returns:
          The loss, or [loss, metrics...].
        """
        self._assert_compile_was_called()
        x, y, sample_weights = self._standardize_user_data(x, y, sample_weight)
        ins = x + list(y or []) + list(sample_weights or [])
        outputs = self._execution_function(TEST, sample_weights is not None)(ins)
        return self._batch_result(outputs, reset_metrics)

    def _batch_result(self, outputs, reset_metrics: bool):
        if reset_metrics:
            self.reset_metrics()
        return outputs[0] if len(outputs) == 1 else outputs

    def predict_on_batch(self, x):
        """The model's outputs for one batch of inputs (an array, or a list)."""
        x, _, _ = self._standardize_user_data(x)
        outputs = self._execution_function(PREDICT)(x)
        return outputs[0] if len(outputs) == 1 else outputs


def _check_loss_and_target_compatibility(targets, endpoints) -> None:
    """Raises ValueError for targets that cannot fit the loss: a single column for the
    categorical crossentropy, or another shape than the output's for MSE and the
    binary and categorical crossentropies."""
    key_functions = compile_utils._KEY_LOSS_FUNCTIONS
    key_classes = compile_utils._KEY_LOSS_CLASSES
    for y, endpoint in zip(targets, endpoints):
        loss, shape = endpoint.loss_fn, endpoint.feed_output_shape
        if y is None or loss is None:
            continue
        if compile_utils._is_loss_fn(loss, key_functions[2], key_classes[2]) and \
                y.shape[-1] == 1:
            raise ValueError("You are passing a target array of shape %s while using as loss "
                             "`categorical_crossentropy`. `categorical_crossentropy` expects "
                             "targets to be binary matrices (1s and 0s) of shape (samples, "
                             "classes). If your targets are integer classes, you can convert "
                             "them to the expected format via:\n```\nfrom keras.utils import "
                             "to_categorical\ny_binary = to_categorical(y_int)\n```\n\n"
                             "Alternatively, you can use the loss function "
                             "`sparse_categorical_crossentropy` instead, which does expect "
                             "integer targets." % (y.shape,))
        wrapped = getattr(loss, "fn", None) in key_functions
        if shape is not None and (isinstance(loss, key_classes) or wrapped):
            for target_dim, out_dim in zip(y.shape[1:], shape[1:]):
                if out_dim is not None and target_dim != out_dim:
                    raise ValueError("A target array with shape %s was passed for an output of "
                                     "shape %s while using as loss `%s`. This loss expects "
                                     "targets to have the same shape as the output."
                                     % (y.shape, shape, loss.name))
