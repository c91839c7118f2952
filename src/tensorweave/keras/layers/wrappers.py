"""Keras layer wrappers as TF 2.15's Keras has them: Wrapper (the base), Bidirectional
(a recurrent layer run forward and backward, outputs merged) and TimeDistributed (a layer
applied to every time step).

Bidirectional rebuilds the wrapped layer from its config twice, 'forward_<name>' and
'backward_<name>' (go_backwards flipped), so the weights are
'bidirectional/forward_lstm/lstm_cell/kernel:0', ..., forward weights first.

TimeDistributed folds the time axis into the batch axis for tensorweave's own layers
(weights 'time_distributed/kernel:0'); other layers run once per time step in a loop
when the batch size is known, as TF's Keras does.
"""
from __future__ import annotations

import copy

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_ops
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers import recurrent
from tensorweave.keras.layers.recurrent_cells import (deserialize_layer, has_arg,
                                                      serialize_layer)


@tf_export("keras.layers.Wrapper")
class Wrapper(Layer):
    """A layer that wraps another layer (held as `layer`, built with the wrapper).

    Args:
      layer: the Keras layer to wrap.
      **kwargs: the base Layer's.

    Raises:
      ValueError: `layer` is not a Keras layer.
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Layer %s supplied to wrapper is not a supported layer type. "
                             "Please ensure wrapped layer is a valid Keras layer." % (layer,))
        self.layer = layer
        super().__init__(**kwargs)

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    @property
    def activity_regularizer(self):
        """The wrapped layer's activity regularizer."""
        return getattr(self.layer, "activity_regularizer", None)

    def get_config(self) -> dict:
        config = super().get_config()
        config["layer"] = serialize_layer(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = copy.deepcopy(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        return cls(layer, **config)


def _is_builtin_layer(layer) -> bool:
    return type(layer).__module__.startswith("tensorweave.")


def _shape_with_dynamic(init: tuple, tensor, start: int) -> tuple:
    """`init` followed by the dimensions of `tensor` from `start`, the unknown ones read
    from `tf.shape(tensor)`."""
    static = backend.int_shape(tensor)[start:]
    if None not in static:
        return init + tuple(static)
    dynamic = tf.shape(tensor)
    return init + tuple(dynamic[start + i] if d is None else d for i, d in enumerate(static))


def _reshape(tensor, shape: tuple):
    if all(isinstance(d, int) for d in shape):
        return tf.reshape(tensor, shape)
    return tf.reshape(tensor, tf.stack([tf.cast(d, tf.int32) for d in shape]))


def _shapes(inputs):
    return tf.nest.map_structure(lambda x: tf.TensorShape(backend.int_shape(x)), inputs)


def _first_dims(shape):
    """The first shape of a (possibly nested) structure of shapes, as a list."""
    while not isinstance(shape, tf.TensorShape) and isinstance(shape, (list, tuple)) and \
            shape and not all(isinstance(d, (int, type(None))) for d in shape):
        shape = shape[0]
    return tf.TensorShape(shape).as_list()


@tf_export("keras.layers.TimeDistributed")
class TimeDistributed(Wrapper):
    """Applies `layer` to every time step of [batch, time, ...] inputs.

    Args:
      layer: the Keras layer applied to each [batch, ...] slice.
      **kwargs: the base Layer's.

    Raises:
      ValueError: `layer` is not a Keras layer; at build, inputs of rank below 3.
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             "`tf.keras.layers.Layer` instance. Received: %s" % (layer,))
        super().__init__(layer, **kwargs)
        self.supports_masking = True
        self._always_use_reshape = _is_builtin_layer(layer) and \
            not getattr(layer, "stateful", False)

    @staticmethod
    def _remove_timesteps(shape) -> tf.TensorShape:
        dims = tf.TensorShape(shape).as_list()
        return tf.TensorShape([dims[0]] + dims[2:])

    def build(self, input_shape):
        shapes = tf.nest.flatten(_as_shape_structure(input_shape))
        if any(s.ndims is None or s.ndims < 3 for s in shapes):
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape ` with "
                             "at least 3 dimensions, received: %s" % (input_shape,))
        structure = _as_shape_structure(input_shape)
        self.input_spec = tf.nest.map_structure(
            lambda s: InputSpec(shape=[None, None] + s.as_list()[2:]), structure)
        child_shape = tf.nest.map_structure(self._remove_timesteps, structure)
        super().build(child_shape)
        self.built = True

    def compute_output_shape(self, input_shape):
        structure = _as_shape_structure(input_shape)
        child_shape = tf.nest.map_structure(self._remove_timesteps, structure)
        child_output = _as_shape_structure(self.layer.compute_output_shape(child_shape))
        timesteps = tf.nest.flatten(structure)[0].as_list()[1]

        def insert_timesteps(shape):
            dims = shape.as_list()
            return tf.TensorShape([dims[0], timesteps] + dims[1:])

        return tf.nest.map_structure(insert_timesteps, child_output)

    def call(self, inputs, training=None, mask=None):
        kwargs = {"training": training} if has_arg(self.layer.call, "training") else {}
        first_dims = _first_dims(_shapes(inputs))
        batch_size, input_length = first_dims[0], first_dims[1]
        if batch_size and not self._always_use_reshape:
            def step(x, _):
                return self.layer(x, **kwargs), []

            _, outputs, _ = backend_ops.rnn(step, inputs, initial_states=[],
                                           input_length=input_length, mask=mask,
                                           unroll=False)
            return outputs
        if not input_length:
            input_length = tf.shape(tf.nest.flatten(inputs)[0])[1]
        flat = tf.nest.flatten(inputs)
        inner = [_reshape(x, _shape_with_dynamic((-1,), x, 2)) for x in flat]
        if has_arg(self.layer.call, "mask") and mask is not None:
            kwargs["mask"] = _reshape(mask, _shape_with_dynamic((-1,), mask, 2))
        y = self.layer(tf.nest.pack_sequence_as(inputs, inner), **kwargs)
        reshape_batch = batch_size if batch_size else -1
        return tf.nest.map_structure(
            lambda t: _reshape(t, _shape_with_dynamic((reshape_batch, input_length), t, 1)),
            y)

    def compute_mask(self, inputs, mask=None):
        first_dims = _first_dims(_shapes(inputs))
        batch_size = first_dims[0]
        if batch_size and not self._always_use_reshape:
            return mask
        inner_mask = mask
        if inner_mask is not None:
            inner_mask = _reshape(mask, _shape_with_dynamic((-1,), mask, 2))
        flat = tf.nest.flatten(inputs)
        inner = tf.nest.pack_sequence_as(
            inputs, [_reshape(x, _shape_with_dynamic((-1,), x, 2)) for x in flat])
        output_mask = self.layer.compute_mask(inner, inner_mask)
        if output_mask is None:
            if mask is None:
                return None
            output_mask = mask
            for _ in range(2, len(backend.int_shape(mask))):
                output_mask = tf.reduce_any(output_mask, axis=-1)
            return output_mask
        input_length = first_dims[1] or tf.shape(flat[0])[1]
        shape = _shape_with_dynamic((batch_size or -1, input_length), output_mask, 1)
        return _reshape(output_mask, shape)


def _as_shape_structure(shape):
    """A shape argument as TensorShapes: a tuple/list of ints is one shape, a list of
    shapes a list."""
    if isinstance(shape, tf.TensorShape):
        return shape
    if isinstance(shape, (list, tuple)) and all(
            isinstance(d, (int, type(None))) or hasattr(d, "value") for d in shape):
        return tf.TensorShape(shape)
    if isinstance(shape, (list, tuple)):
        return type(shape)(_as_shape_structure(s) for s in shape)
    if isinstance(shape, dict):
        return {k: _as_shape_structure(v) for k, v in shape.items()}
    return tf.TensorShape(shape)


_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


@tf_export("keras.layers.Bidirectional")
class Bidirectional(Wrapper):
    """Runs a recurrent layer forward and a copy of it backward over the inputs and
    merges their outputs (the backward outputs re-reversed in time).

    Args:
      layer: the RNN layer (LSTM, GRU, SimpleRNN, RNN); copies of it from its config
        become `forward_layer` and `backward_layer`.
      merge_mode: 'concat' (default), 'sum', 'mul', 'ave', or None (a list of both).
      weights: accepted; TF 2.15's Keras in graph mode does not apply them either.
      backward_layer: the backward layer to use instead of a copy (its go_backwards
        must differ from `layer`'s; the other settings must agree).
      **kwargs: the base Layer's.

    Call arguments: inputs, training, mask, initial_state (the forward states then the
    backward ones), constants.

    Raises:
      ValueError: a layer that is not a Keras layer, an unknown merge_mode, or forward
        and backward layers that do not match.
    """

    # the wrapped layer is only a template: its copies hold the weights
    _NON_CHILD_ATTRS = Wrapper._NON_CHILD_ATTRS | {"layer"}

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `Bidirectional` layer with a "
                             "`tf.keras.layers.Layer` instance. Received: %s" % (layer,))
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError("`backward_layer` need to be a `tf.keras.layers.Layer` "
                             "instance. Received: %s" % (backward_layer,))
        if merge_mode not in _MERGE_MODES:
            raise ValueError("Invalid merge mode. Received: %s. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}' % (merge_mode,))
        super().__init__(layer, **kwargs)
        self.forward_layer = self._recreate_layer_from_config(layer)
        if backward_layer is None:
            self.backward_layer = self._recreate_layer_from_config(layer, go_backwards=True)
        else:
            self.backward_layer = backward_layer
            self._backward_layer_config = serialize_layer(backward_layer)
        self.forward_layer._name = "forward_" + self.forward_layer.name
        self.backward_layer._name = "backward_" + self.backward_layer.name
        self._verify_layer_config()
        for sublayer in (self.forward_layer, self.backward_layer):
            if getattr(sublayer, "zero_output_for_mask", None) is not None:
                sublayer.zero_output_for_mask = sublayer.return_sequences
        self.merge_mode = merge_mode
        if weights:
            half = len(weights) // 2
            self.forward_layer.initial_weights = weights[:half]
            self.backward_layer.initial_weights = weights[half:]
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True
        self._trainable = kwargs.get("trainable", layer.trainable)
        self._num_constants = 0
        self.input_spec = layer.input_spec

    def _verify_layer_config(self) -> None:
        if self.forward_layer.go_backwards == self.backward_layer.go_backwards:
            raise ValueError("Forward layer and backward layer should have different "
                             "`go_backwards` value.forward_layer.go_backwards = %s,"
                             "backward_layer.go_backwards = %s"
                             % (self.forward_layer.go_backwards,
                                self.backward_layer.go_backwards))
        for attribute in ("stateful", "return_sequences", "return_state"):
            forward_value = getattr(self.forward_layer, attribute)
            backward_value = getattr(self.backward_layer, attribute)
            if forward_value != backward_value:
                raise ValueError('Forward layer and backward layer are expected to have the '
                                 'same value for attribute "%s", got "%s" for forward layer '
                                 'and "%s" for backward layer'
                                 % (attribute, forward_value, backward_value))

    @staticmethod
    def _recreate_layer_from_config(layer, go_backwards: bool = False):
        config = layer.get_config()
        if go_backwards:
            config["go_backwards"] = not config["go_backwards"]
        if not has_arg(type(layer).from_config, "custom_objects"):
            return type(layer).from_config(config)
        custom_objects = {}
        cell = getattr(layer, "cell", None)
        if cell is not None:
            custom_objects[type(cell).__name__] = type(cell)
            for stacked in getattr(cell, "cells", []):
                custom_objects[type(stacked).__name__] = type(stacked)
        return type(layer).from_config(config, custom_objects=custom_objects)

    def compute_output_shape(self, input_shape):
        output_shape = self.forward_layer.compute_output_shape(input_shape)
        if self.return_state:
            state_shape = [tf.TensorShape(s) for s in output_shape[1:]]
            output_shape = tf.TensorShape(output_shape[0])
        else:
            output_shape = tf.TensorShape(output_shape)
        if self.merge_mode == "concat":
            dims = output_shape.as_list()
            if dims[-1] is not None:
                dims[-1] *= 2
            output_shape = tf.TensorShape(dims)
        elif self.merge_mode is None:
            output_shape = [output_shape, copy.copy(output_shape)]
        if not self.return_state:
            return output_shape
        if self.merge_mode is None:
            return output_shape + state_shape + copy.copy(state_shape)
        return [output_shape] + state_shape + copy.copy(state_shape)

    def __call__(self, inputs, initial_state=None, constants=None, **kwargs):
        inputs, initial_state, constants = recurrent.standardize_args(
            inputs, initial_state, constants, self._num_constants)
        if isinstance(inputs, list):
            if len(inputs) > 1:
                initial_state = inputs[1:]
            inputs = inputs[0]
        if initial_state is None and constants is None:
            return super().__call__(inputs, **kwargs)
        additional_inputs, additional_specs = [], []
        if initial_state is not None:
            num_states = len(initial_state)
            if num_states % 2 > 0:
                raise ValueError("When passing `initial_state` to a Bidirectional RNN, the "
                                 "state should be a list containing the states of the "
                                 "underlying RNNs. Received: %s" % (initial_state,))
            kwargs["initial_state"] = initial_state
            additional_inputs += initial_state
            state_specs = [InputSpec(shape=backend.int_shape(s)) for s in initial_state]
            self.forward_layer.state_spec = state_specs[:num_states // 2]
            self.backward_layer.state_spec = state_specs[num_states // 2:]
            additional_specs += state_specs
        if constants is not None:
            kwargs["constants"] = constants
            additional_inputs += constants
            constants_spec = [InputSpec(shape=backend.int_shape(c)) for c in constants]
            self.forward_layer.constants_spec = constants_spec
            self.backward_layer.constants_spec = constants_spec
            additional_specs += constants_spec
            self._num_constants = len(constants)
            self.forward_layer._num_constants = self._num_constants
            self.backward_layer._num_constants = self._num_constants
        flat_additional = tf.nest.flatten(additional_inputs)
        is_keras = backend.is_keras_tensor(flat_additional[0])
        for tensor in flat_additional:
            if backend.is_keras_tensor(tensor) != is_keras:
                raise ValueError("The initial state of a Bidirectional layer cannot be "
                                 "specified with a mix of Keras tensors and non-Keras tensors "
                                 "(a \"Keras tensor\" is a tensor that was returned by a Keras "
                                 "layer, or by `Input`)")
        if not is_keras:
            return super().__call__(inputs, **kwargs)
        full_input = [inputs] + additional_inputs
        full_spec = [None for _ in tf.nest.flatten(inputs)] + additional_specs
        kwargs.pop("initial_state", None)
        kwargs.pop("constants", None)
        original_spec = self.input_spec
        self.input_spec = full_spec
        try:
            return super().__call__(full_input, **kwargs)
        finally:
            self.input_spec = original_spec

    def call(self, inputs, training=None, mask=None, initial_state=None, constants=None):
        kwargs = {}
        if has_arg(self.layer.call, "training"):
            kwargs["training"] = training
        if has_arg(self.layer.call, "mask"):
            kwargs["mask"] = mask
        if has_arg(self.layer.call, "constants"):
            kwargs["constants"] = constants
        if has_arg(self.layer.call, "initial_state"):
            forward_inputs, backward_inputs = inputs, inputs
            forward_state, backward_state = None, None
            if isinstance(inputs, list) and len(inputs) > 1:
                # [inputs, *forward states, *backward states, *constants]
                forward_inputs, backward_inputs = [inputs[0]], [inputs[0]]
                pivot = (len(inputs) - self._num_constants) // 2 + 1
                forward_inputs += inputs[1:pivot]
                if not self._num_constants:
                    backward_inputs += inputs[pivot:]
                else:
                    backward_inputs += inputs[pivot:-self._num_constants]
                    forward_inputs += inputs[-self._num_constants:]
                    backward_inputs += inputs[-self._num_constants:]
                if "constants" in kwargs:
                    kwargs["constants"] = None
            elif initial_state is not None:
                half = len(initial_state) // 2
                forward_state, backward_state = initial_state[:half], initial_state[half:]
            y = self.forward_layer(forward_inputs, initial_state=forward_state, **kwargs)
            y_rev = self.backward_layer(backward_inputs, initial_state=backward_state,
                                        **kwargs)
        else:
            y = self.forward_layer(inputs, **kwargs)
            y_rev = self.backward_layer(inputs, **kwargs)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            time_axis = 0 if getattr(self.forward_layer, "time_major", False) else 1
            y_rev = tf.reverse(y_rev, [time_axis])
        if self.merge_mode == "concat":
            output = tf.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if not self.return_state:
            return output
        if self.merge_mode is None:
            return output + states
        return [output] + states

    def reset_states(self, states=None) -> None:
        """Resets both directions' states (`states`: the forward ones then the backward
        ones).

        Raises:
          AttributeError: the layer is not stateful.
          ValueError: `states` is not a list or tuple.
        """
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        if states is None:
            self.forward_layer.reset_states()
            self.backward_layer.reset_states()
            return
        if not isinstance(states, (list, tuple)):
            raise ValueError("Unrecognized value for `states`. Expected `states` to be list "
                             "or tuple. Received: %s" % (states,))
        half = len(states) // 2
        self.forward_layer.reset_states(states[:half])
        self.backward_layer.reset_states(states[half:])

    def build(self, input_shape):
        with tf.name_scope(self.forward_layer.name):
            self.forward_layer.build(input_shape)
        with tf.name_scope(self.backward_layer.name):
            self.backward_layer.build(input_shape)
        self.built = True

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        if self.return_sequences:
            output_mask = [mask, mask] if not self.merge_mode else mask
        else:
            output_mask = [None, None] if not self.merge_mode else None
        if not self.return_state:
            return output_mask
        state_mask = [None for _ in self.forward_layer.states]
        if isinstance(output_mask, list):
            return output_mask + state_mask * 2
        return [output_mask] + state_mask * 2

    def get_config(self) -> dict:
        config = super().get_config()
        config["merge_mode"] = self.merge_mode
        if self._num_constants:
            config["num_constants"] = self._num_constants
        if hasattr(self, "_backward_layer_config"):
            config["backward_layer"] = self._backward_layer_config
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = copy.deepcopy(config)
        num_constants = config.pop("num_constants", 0)
        config["layer"] = deserialize_layer(config["layer"], custom_objects)
        backward_config = config.pop("backward_layer", None)
        if backward_config is not None:
            config["backward_layer"] = deserialize_layer(backward_config, custom_objects)
        layer = cls(**config)
        layer._num_constants = num_constants
        return layer
