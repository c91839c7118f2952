"""Keras recurrent layers as `tf.compat.v1.keras.layers` has them in TF 2.15: RNN (any
cell or list of cells), SimpleRNN, LSTM and GRU (the v1 classes).

They run their cell with `tf.keras.backend.rnn` (backend_ops.py): a `tf.while_loop` over
TensorArrays (any number of time steps, known only at run time), or, with `unroll=True`,
one copy of the step per time step. A mask keeps the previous state at masked steps, and
the previous output (or zeros, `zero_output_for_mask`) as their output.

An RNN layer takes `initial_state` (and `constants`, for cells that take them) as call
arguments; given as Keras tensors, they become inputs of the layer's node (the call's
inputs are then `[inputs, *initial_state, *constants]`), as in TF's Keras. A stateful
layer keeps its last states in variables (one batch size, from `batch_input_shape`);
the assignments are in `layer.updates`.
"""
from __future__ import annotations

import collections.abc

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_ops, regularizers
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers import recurrent_cells as cells_lib
from tensorweave.keras.layers.recurrent_cells import (GRUCell, LSTMCell, SimpleRNNCell,
                                                      StackedRNNCells, has_arg,
                                                      is_multiple_state)
from tensorweave.layers.base import to_snake_case


# --- the RNN layer -------------------------------------------------------------------------
def standardize_args(inputs, initial_state, constants, num_constants: int):
    """(inputs, initial_state, constants) from a call that may carry the states and
    constants at the end of a list of inputs (as a functional model calls the layer
    again); states and constants as lists or None."""
    if isinstance(inputs, list):
        if initial_state is not None or constants is not None:
            raise ValueError("initial_state and constants cannot be given both in a list "
                             "of inputs and as arguments")
        if num_constants:
            constants = inputs[-num_constants:]
            inputs = inputs[:-num_constants]
        if len(inputs) > 1:
            initial_state = inputs[1:]
            inputs = inputs[:1]
        inputs = tuple(inputs) if len(inputs) > 1 else inputs[0]

    def to_list_or_none(x):
        if x is None or isinstance(x, list):
            return x
        if isinstance(x, tuple):
            return list(x)
        return [x]

    return inputs, to_list_or_none(initial_state), to_list_or_none(constants)


@tf_export("keras.layers.RNN")
class RNN(Layer):
    """Runs a cell over the time axis of its inputs ([batch, time, ...]).

    Args:
      cell: a cell (an object with `call(inputs, states)` and `state_size`, optionally
        `output_size` and `get_initial_state`), or a list of cells (StackedRNNCells).
      return_sequences: return the output of every step ([batch, time, units]), not only
        the last one.
      return_state: return the final states after the output (a list).
      go_backwards: process the sequence backwards (the outputs come reversed).
      stateful: the final states of a batch are the initial states of the next one.
      unroll: build one step per time step instead of a while_loop.
      time_major: inputs and outputs are [time, batch, ...].
      zero_output_for_mask: zeros as the output of masked steps (else the previous one).
      **kwargs: the base Layer's; input_dim and input_length give input_shape.

    Call arguments: inputs, mask ([batch, time] booleans), training, initial_state,
    constants.

    Raises:
      ValueError: a cell without `call` or `state_size`.
    """

    def __init__(self, cell, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 time_major: bool = False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError("Argument `cell` should have a `call` method. The RNN was "
                             "passed: cell=%s" % (cell,))
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (tuple of "
                             "integers, one integer per RNN state). Received: cell=%s"
                             % (cell,))
        self.zero_output_for_mask = kwargs.pop("zero_output_for_mask", False)
        if "input_shape" not in kwargs and ("input_dim" in kwargs or
                                            "input_length" in kwargs):
            kwargs["input_shape"] = (kwargs.pop("input_length", None),
                                     kwargs.pop("input_dim", None))
        kwargs.pop("input_length", None)
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.stateful = stateful
        self.unroll = unroll
        self.time_major = time_major
        self.supports_masking = True
        self.input_spec = None
        self.state_spec = None
        self._states = None
        self.constants_spec = None
        self._num_constants = 0

    # --- states ----------------------------------------------------------------------------
    @property
    def states(self):
        """The state variables of a stateful layer (None entries before its build)."""
        if self._states is None:
            state = tf.nest.map_structure(lambda _: None, self.cell.state_size)
            return state if tf.nest.is_nested(self.cell.state_size) else [state]
        return self._states

    @states.setter
    def states(self, states) -> None:
        self._states = states

    def _state_sizes(self) -> list:
        size = self.cell.state_size
        return list(size) if is_multiple_state(size) else [size]

    def get_initial_state(self, inputs):
        """The cell's initial states for `inputs` (zeros unless the cell says otherwise),
        as a list."""
        first = tf.nest.flatten(inputs)[0]
        batch_size = tf.shape(first)[1 if self.time_major else 0]
        get_initial_state = getattr(self.cell, "get_initial_state", None)
        if get_initial_state is not None:
            state = get_initial_state(inputs=None, batch_size=batch_size, dtype=first.dtype)
        else:
            state = cells_lib.zero_state(batch_size, self.cell.state_size, first.dtype)
        return list(state) if tf.nest.is_nested(state) else [state]

    def reset_states(self, states=None) -> None:
        """Sets the states of a stateful layer to zeros, or to the NumPy `states`; the
        first call (at build) creates the state variables.

        Raises:
          AttributeError: the layer is not stateful.
          ValueError: the batch size is unknown; values of the wrong count or shape.
        """
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        shapes = self._stateful_state_shapes()
        if tf.nest.flatten(self.states)[0] is None:
            dtype = self.dtype or backend.floatx()
            variables = [backend.variable(np.zeros(shape), dtype) for shape in shapes]
            packed = tf.nest.pack_sequence_as(self.cell.state_size, variables)
            self.states = packed if tf.nest.is_nested(packed) else [packed]
        elif states is None:
            for variable, shape in zip(tf.nest.flatten(self.states), shapes):
                backend.set_value(variable, np.zeros(shape))
        else:
            flat_states = tf.nest.flatten(self.states)
            values = tf.nest.flatten(states)
            if len(values) != len(flat_states):
                raise ValueError("Layer %s expects %d states, but it received %d state "
                                 "values. States received: %s"
                                 % (self.name, len(flat_states), len(values), states))
            pairs = []
            for i, (value, variable) in enumerate(zip(values, flat_states)):
                value = np.asarray(value)
                if tuple(value.shape) != tuple(variable.shape.as_list()):
                    raise ValueError("State %d is incompatible with layer %s: expected "
                                     "shape=%s but found shape=%s"
                                     % (i, self.name, tuple(variable.shape.as_list()),
                                        value.shape))
                pairs.append((variable, value))
            backend.batch_set_value(pairs)

    def _stateful_state_shapes(self) -> list:
        """The shape of each state variable of a stateful layer (flat, in the order of
        `cell.state_size`): [batch_size] + the state's size.

        Raises:
          ValueError: the batch size is unknown.
        """
        spec_shape = None
        if self.input_spec is not None:
            spec_shape = tf.nest.flatten(self.input_spec[0])[0].shape
        batch_size = None
        if spec_shape is not None:
            batch_size = spec_shape[1] if self.time_major else spec_shape[0]
        if not batch_size:
            raise ValueError(
                "If a RNN is stateful, it needs to know its batch size. Specify the batch "
                "size of your input tensors: \n- If using a Sequential model, specify the "
                "batch size by passing a `batch_input_shape` argument to your first layer.\n"
                "- If using the functional API, specify the batch size by passing a "
                "`batch_shape` argument to your Input layer.")
        return [[batch_size] + tf.TensorShape(size).as_list()
                for size in tf.nest.flatten(self.cell.state_size)]

    # --- shapes ----------------------------------------------------------------------------
    def compute_output_shape(self, input_shape):
        while _is_nested_shape(input_shape):  # [inputs, *states]: the inputs' shape
            input_shape = input_shape[0]
        input_shape = tf.TensorShape(input_shape)
        batch, time_step = input_shape[0], input_shape[1]
        if self.time_major:
            batch, time_step = time_step, batch

        def output_shape_for(size):
            dims = tf.TensorShape(size).as_list()
            if not self.return_sequences:
                return tf.TensorShape([batch] + dims)
            if self.time_major:
                return tf.TensorShape([time_step, batch] + dims)
            return tf.TensorShape([batch, time_step] + dims)

        output_shape = tf.nest.flatten(tf.nest.map_structure(
            output_shape_for, cells_lib.cell_output_size(self.cell)))
        output_shape = output_shape[0] if len(output_shape) == 1 else output_shape
        if not self.return_state:
            return output_shape
        state_shapes = tf.nest.map_structure(
            lambda size: tf.TensorShape([batch] + tf.TensorShape(size).as_list()),
            self._state_sizes())
        output_list = output_shape if isinstance(output_shape, list) else [output_shape]
        return output_list + tf.nest.flatten(state_shapes)

    def compute_mask(self, inputs, mask=None):
        mask = tf.nest.flatten(mask)[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None for _ in self.states]
        return output_mask

    def build(self, input_shape):
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        batch_index, time_index = (1, 0) if self.time_major else (0, 1)

        def input_spec_for(shape):
            dims = tf.TensorShape(shape).as_list()
            if not self.stateful:
                dims[batch_index] = None
            dims[time_index] = None
            return InputSpec(shape=tuple(dims))

        def step_shape_for(shape):
            dims = tuple(tf.TensorShape(shape).as_list())
            return dims[1:] if self.time_major else (dims[0],) + dims[2:]

        if not _is_nested_shape(input_shape):
            spec = input_spec_for(input_shape)
            step_input_shape = step_shape_for(input_shape)
        else:
            spec = tf.nest.map_structure(input_spec_for, input_shape)
            step_input_shape = tf.nest.map_structure(step_shape_for, input_shape)
        if self.input_spec is not None:
            self.input_spec[0] = spec
        else:
            self.input_spec = [spec] if not isinstance(spec, list) else spec
        if isinstance(self.cell, Layer) and not self.cell.built:
            with tf.name_scope(self.cell.name):
                self.cell.build(step_input_shape)
                self.cell.built = True
        state_sizes = self._state_sizes()
        if self.state_spec is None:
            self.state_spec = [InputSpec(shape=[None] + tf.TensorShape(size).as_list())
                               for size in tf.nest.flatten(state_sizes)]
        self._validate_state_spec(state_sizes, self.state_spec)
        if self.stateful:
            self.reset_states()
        self.built = True

    @staticmethod
    def _validate_state_spec(cell_state_sizes, init_state_specs) -> None:
        error = ValueError("An `initial_state` was passed that is not compatible with "
                           "`cell.state_size`. Received `state_spec`=%s; however "
                           "`cell.state_size` is %s" % (init_state_specs, cell_state_sizes))
        sizes = tf.nest.flatten(cell_state_sizes)
        specs = tf.nest.flatten(init_state_specs)
        if len(sizes) != len(specs):
            raise error
        for spec, size in zip(specs, sizes):
            spec_shape = tf.TensorShape(spec.shape)
            if spec_shape.ndims is None:
                continue
            if not tf.TensorShape(spec_shape.as_list()[1:]).is_compatible_with(
                    tf.TensorShape(size)):
                raise error

    # --- calling ---------------------------------------------------------------------------
    def __call__(self, inputs, initial_state=None, constants=None, **kwargs):
        inputs, initial_state, constants = standardize_args(inputs, initial_state, constants,
                                                            self._num_constants)
        if initial_state is None and constants is None:
            return super().__call__(inputs, **kwargs)
        additional_inputs, additional_specs = [], []
        if initial_state is not None:
            additional_inputs += initial_state
            self.state_spec = tf.nest.map_structure(
                lambda s: InputSpec(shape=backend.int_shape(s)), initial_state)
            additional_specs += self.state_spec
        if constants is not None:
            additional_inputs += constants
            self.constants_spec = [InputSpec(shape=backend.int_shape(c)) for c in constants]
            self._num_constants = len(constants)
            additional_specs += self.constants_spec
        flat_additional = tf.nest.flatten(additional_inputs)
        is_keras = backend.is_keras_tensor(flat_additional[0]) if flat_additional else True
        for tensor in flat_additional:
            if backend.is_keras_tensor(tensor) != is_keras:
                raise ValueError(
                    "The initial state or constants of an RNN layer cannot be specified via "
                    "a mix of Keras tensors and non-Keras tensors (a \"Keras tensor\" is a "
                    "tensor that was returned by a Keras layer  or by `Input` during "
                    "Functional model construction). Received: initial_state=%s, "
                    "constants=%s" % (initial_state, constants))
        if not is_keras:
            if initial_state is not None:
                kwargs["initial_state"] = initial_state
            if constants is not None:
                kwargs["constants"] = constants
            return super().__call__(inputs, **kwargs)
        full_input = [inputs] + additional_inputs
        if self.built:
            full_spec = list(self.input_spec) + additional_specs
        else:
            full_spec = [None for _ in tf.nest.flatten(inputs)] + additional_specs
        self.input_spec = full_spec
        try:
            output = super().__call__(full_input, **kwargs)
        finally:
            self.input_spec = self.input_spec[:-len(additional_specs)] \
                if additional_specs else self.input_spec
        return output

    def _process_inputs(self, inputs, initial_state, constants):
        if isinstance(inputs, collections.abc.Sequence) and not isinstance(inputs, tuple):
            if not self._num_constants:
                initial_state = inputs[1:]
            else:
                initial_state = inputs[1:-self._num_constants]
                constants = inputs[-self._num_constants:]
            if len(initial_state) == 0:
                initial_state = None
            inputs = inputs[0]
        if self.stateful:
            if initial_state is not None:
                # the recorded states unless they are still zeros (as TF's Keras)
                nonzero = tf.add_n([tf.math.count_nonzero(s)
                                    for s in tf.nest.flatten(self.states)])
                recorded = [tf.identity(s) for s in tf.nest.flatten(self.states)]
                given = list(tf.nest.flatten(initial_state))
                chosen = tf.cond(nonzero > 0, lambda: recorded, lambda: given, strict=True)
                initial_state = tf.nest.pack_sequence_as(initial_state, chosen)
            else:
                initial_state = self.states
            dtype = self.dtype or backend.floatx()
            initial_state = tf.nest.map_structure(lambda v: tf.cast(v, dtype), initial_state)
        elif initial_state is None:
            initial_state = self.get_initial_state(inputs)
        if len(initial_state) != len(self.states):
            raise ValueError("Layer has %d states but was passed %d initial states. "
                             "Received: initial_state=%s"
                             % (len(self.states), len(initial_state), initial_state))
        return inputs, initial_state, constants

    def _reset_dropout_masks(self) -> None:
        for cell in [self.cell] + list(getattr(self.cell, "cells", [])):
            if isinstance(cell, cells_lib.DropoutRNNCellMixin):
                cell.reset_dropout_mask()
                cell.reset_recurrent_dropout_mask()

    def call(self, inputs, mask=None, training=None, initial_state=None, constants=None):
        inputs, initial_state, constants = self._process_inputs(inputs, initial_state,
                                                                constants)
        self._reset_dropout_masks()
        if mask is not None:
            mask = tf.nest.flatten(mask)[0]
        input_shape = backend.int_shape(tf.nest.flatten(inputs)[0])
        timesteps = input_shape[0] if self.time_major else input_shape[1]
        if self.unroll and timesteps is None:
            raise ValueError(
                "Cannot unroll a RNN if the time dimension is undefined. \n- If using a "
                "Sequential model, specify the time dimension by passing an `input_shape` "
                "or `batch_input_shape` argument to your first layer. If your first layer "
                "is an Embedding, you can also use the `input_length` argument.\n- If using "
                "the functional API, specify the time dimension by passing a `shape` or "
                "`batch_shape` argument to your Input layer.")
        cell_kwargs = {"training": training} if has_arg(self.cell.call, "training") else {}
        cell_call = self.cell.__call__ if callable(self.cell) else self.cell.call
        if constants:
            if not has_arg(self.cell.call, "constants"):
                raise ValueError("RNN cell %s does not support constants. Received: "
                                 "constants=%s" % (self.cell, constants))
            num_constants = self._num_constants

            def step(step_inputs, states):
                step_constants = list(states[-num_constants:])
                output, new_states = cell_call(step_inputs, list(states[:-num_constants]),
                                               constants=step_constants, **cell_kwargs)
                return output, new_states if tf.nest.is_nested(new_states) else [new_states]
        else:
            def step(step_inputs, states):
                output, new_states = cell_call(step_inputs, list(states), **cell_kwargs)
                return output, new_states if tf.nest.is_nested(new_states) else [new_states]

        last_output, outputs, states = backend_ops.rnn(
            step, inputs, initial_state, constants=constants, go_backwards=self.go_backwards,
            mask=mask, unroll=self.unroll, input_length=timesteps, time_major=self.time_major,
            zero_output_for_mask=self.zero_output_for_mask,
            return_all_outputs=self.return_sequences)
        if self.stateful:
            self.add_update([tf.assign(variable, tf.cast(state, variable.dtype))
                             for variable, state in zip(tf.nest.flatten(self.states),
                                                        tf.nest.flatten(states))])
        output = outputs if self.return_sequences else last_output
        if self.return_state:
            return (list(output) if isinstance(output, (list, tuple)) else [output]) + \
                list(states)
        return output

    # --- configs ---------------------------------------------------------------------------
    def get_config(self) -> dict:
        config = super().get_config()
        config.update(return_sequences=self.return_sequences, return_state=self.return_state,
                      go_backwards=self.go_backwards, stateful=self.stateful,
                      unroll=self.unroll, time_major=self.time_major)
        if self._num_constants:
            config["num_constants"] = self._num_constants
        if self.zero_output_for_mask:
            config["zero_output_for_mask"] = self.zero_output_for_mask
        config["cell"] = cells_lib.serialize_layer(self.cell)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cell = cells_lib.deserialize_layer(config.pop("cell"), custom_objects)
        num_constants = config.pop("num_constants", 0)
        layer = cls(cell, **config)
        layer._num_constants = num_constants
        return layer


def _is_shape_tuple(shape) -> bool:
    return isinstance(shape, (tuple, list)) and all(
        isinstance(d, (int, type(None))) or hasattr(d, "value") for d in shape)


def _is_nested_shape(shape) -> bool:
    if isinstance(shape, tf.TensorShape) or shape is None:
        return False
    return not _is_shape_tuple(shape)


# --- SimpleRNN, LSTM, GRU ------------------------------------------------------------------
class _CellLayer(RNN):
    """An RNN over one cell made from the layer's arguments (SimpleRNN, LSTM, GRU): the
    cell's arguments are read through the layer, and the config is the cell's with the
    layer's."""

    _CELL_CLASS = None  # the cell's class; its _FIELDS are the layer's (named as Keras')

    def __init__(self, units, activity_regularizer=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 cell_kwargs=None, **kwargs):
        kwargs.pop("enable_caching_device", None)
        cell = self._CELL_CLASS(units, dtype=kwargs.get("dtype"),
                                trainable=kwargs.get("trainable", True),
                                name=to_snake_case(self._CELL_CLASS.__name__), **cell_kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         **kwargs)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.input_spec = [InputSpec(ndim=3)]

    def call(self, inputs, mask=None, training=None, initial_state=None):
        return super().call(inputs, mask=mask, training=training, initial_state=initial_state)

    def __getattr__(self, name):
        # the cell's arguments (units, activation, kernel_initializer, ...) as attributes
        if name in type(self)._CELL_CLASS._FIELDS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def get_config(self) -> dict:
        config = super().get_config()
        del config["cell"]
        config.update(cells_lib.fields_config(self.cell, {}, self._CELL_CLASS._FIELDS))
        # activity_regularizer sits after the bias regularizer, as in TF's config
        ordered = {}
        for key, value in config.items():
            ordered[key] = value
            if key == "bias_regularizer":
                ordered["activity_regularizer"] = regularizers.serialize(
                    self.activity_regularizer)
        return ordered

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


_CELL_ARGS = ("kernel_initializer", "recurrent_initializer", "bias_initializer",
              "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
              "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
              "recurrent_dropout")
_LAYER_ARGS = ("activity_regularizer", "return_sequences", "return_state", "go_backwards",
               "stateful", "unroll")


def _cell_layer_arguments(arguments: dict, cell_names: tuple) -> dict:
    """What a layer's __init__ passes on to _CellLayer's, from its `arguments` (its
    `locals()`): the RNN layer's own, `cell_kwargs` (those named `cell_names` and
    _CELL_ARGS) and its **kwargs."""
    return dict({name: arguments[name] for name in _LAYER_ARGS},
                cell_kwargs={name: arguments[name] for name in cell_names + _CELL_ARGS},
                **arguments["kwargs"])


@tf_export("keras.layers.SimpleRNN")
class SimpleRNN(_CellLayer):
    """A fully connected RNN whose output is fed back: RNN(SimpleRNNCell(...)).

    Args: units, activation ('tanh'), use_bias, kernel_initializer ('glorot_uniform'),
    recurrent_initializer ('orthogonal'), bias_initializer ('zeros'), the regularizers
    and constraints of kernel, recurrent_kernel and bias, activity_regularizer, dropout,
    recurrent_dropout (as SimpleRNNCell), then RNN's return_sequences, return_state,
    go_backwards, stateful, unroll (and time_major, zero_output_for_mask in **kwargs).
    Weights: 'simple_rnn/simple_rnn_cell/{kernel, recurrent_kernel, bias}'.
    """

    _CELL_CLASS = SimpleRNNCell

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, **kwargs):
        kwargs.pop("implementation", None)
        super().__init__(units, **_cell_layer_arguments(locals(), ("activation", "use_bias")))


@tf_export("keras.layers.LSTM")
class LSTM(_CellLayer):
    """Long Short-Term Memory (Hochreiter 1997) as TF1's Keras has it: RNN(LSTMCell(...)),
    states [h, c].

    Args: units, activation ('tanh'), recurrent_activation ('hard_sigmoid'), use_bias,
    kernel_initializer ('glorot_uniform'), recurrent_initializer ('orthogonal'),
    bias_initializer ('zeros'), unit_forget_bias (True), the regularizers and
    constraints, activity_regularizer, dropout, recurrent_dropout (as LSTMCell), then
    RNN's return_sequences, return_state, go_backwards, stateful, unroll (and
    implementation, time_major, zero_output_for_mask in **kwargs).
    Weights: 'lstm/lstm_cell/{kernel, recurrent_kernel, bias}', gates i, f, c, o.
    """

    _CELL_CLASS = LSTMCell

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, **kwargs):
        implementation = kwargs.pop("implementation", 1)
        super().__init__(units, **_cell_layer_arguments(locals(), (
            "activation", "recurrent_activation", "use_bias", "unit_forget_bias",
            "implementation")))


@tf_export("keras.layers.GRU")
class GRU(_CellLayer):
    """Gated Recurrent Unit (Cho et al. 2014) as TF1's Keras has it: RNN(GRUCell(...)).

    Args: units, activation ('tanh'), recurrent_activation ('hard_sigmoid'), use_bias,
    the initializers, regularizers and constraints, activity_regularizer, dropout,
    recurrent_dropout, reset_after (False; True is CuDNN's variant, bias [2, 3 * units]),
    then RNN's return_sequences, return_state, go_backwards, stateful, unroll (and
    implementation, time_major, zero_output_for_mask in **kwargs).
    Weights: 'gru/gru_cell/{kernel, recurrent_kernel, bias}', gates z, r, h.
    """

    _CELL_CLASS = GRUCell

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, reset_after=False, **kwargs):
        implementation = kwargs.pop("implementation", 1)
        super().__init__(units, **_cell_layer_arguments(locals(), (
            "activation", "recurrent_activation", "use_bias", "reset_after",
            "implementation")))
