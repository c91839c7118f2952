"""`tf.keras.Model`: a layer made of layers, either functional (`Model(inputs, outputs)`,
called again on new inputs by running its layer graph) or subclassed (layers set as
attributes, `call` overridden). Usable as a callable on tensors in graph mode; the Keras
training loop (`compile`, `fit`, `evaluate`, `predict`, ...) comes from training_v1.py.
Configs and JSON are in keras/saving.py, `save_weights`/`load_weights` in
keras/saving_weights.py, `save` (whole models, HDF5) in keras/saving_model_hdf5.py; the
generator loops (`fit_generator`, ...) in training_v1.py and training_generator.py.
"""
from __future__ import annotations

import inspect
from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.engine import base_layer, functional, summary
from tensorweave.keras.engine import base_layer_utils as utils
from tensorweave.keras.engine import input_spec as input_spec_lib
from tensorweave.keras.engine import masking
from tensorweave.keras.engine import node as node_module
from tensorweave.keras.engine.training_v1 import TrainingMixin


@tf_export("keras.Model", "keras.models.Model")
class Model(TrainingMixin, base_layer.Layer):
    """A model: `Model(inputs, outputs)` (functional API, with `tf.keras.Input`) or a
    subclass with layers as attributes and an overridden `call`.

    Args:
      inputs: the model's input tensor(s) (from `tf.keras.Input`), functional API.
      outputs: its output tensor(s), computed from the inputs by Keras layers (raw TF
        ops between them are wrapped as layers).
      name: the model's name ('model', 'model_1', ...; a subclass's snake-cased name).
      trainable: whether its weights are trainable.
      dtype: (subclasses) the dtype of their weights.

    Raises:
      TypeError: unknown keyword arguments.
      ValueError: functional inputs that do not come from `Input`, outputs not made by
        layers, or layers that cannot be reached from the inputs.
    """

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        # Like Keras, a subclass's constructor arguments are kept as its default config
        # when they are all plain values (object.__setattr__: no layer tracking yet).
        object.__setattr__(instance, "_auto_config", _plain_init_arguments(cls, args,
                                                                           kwargs))
        return instance

    def __init__(self, *args, **kwargs):
        if len(args) >= 2 or len(args) == 1 and "outputs" in kwargs or \
                "inputs" in kwargs and "outputs" in kwargs:
            self._init_functional(*args, **kwargs)
            return
        if args:
            raise TypeError("Model.__init__ takes `inputs` and `outputs` (functional API) or "
                            "only keyword arguments (subclassing); got %d positional "
                            "arguments" % len(args))
        for key in kwargs:
            if key not in {"trainable", "dtype", "dynamic", "name", "autocast", "inputs",
                           "outputs"}:
                raise TypeError("Keyword argument not understood:", key)
        if "inputs" in kwargs or "outputs" in kwargs:
            raise ValueError("A functional Model needs both `inputs` and `outputs`")
        kwargs.pop("autocast", None)
        super().__init__(**kwargs)
        self._is_graph_network = False
        self.inputs = None
        self.outputs = None
        self.input_names = None
        self.output_names = None

    def _init_functional(self, inputs=None, outputs=None, name: Optional[str] = None,
                         trainable: bool = True, **kwargs) -> None:
        for key in kwargs:
            raise TypeError("Keyword argument not understood:", key)
        base_layer.Layer.__init__(self, name=name, trainable=trainable)
        self._init_graph_network(inputs, outputs)

    # --- the functional graph ------------------------------------------------------------
    def _init_graph_network(self, inputs, outputs) -> None:
        if isinstance(inputs, list) and len(tf.nest.flatten(inputs)) == 1:
            inputs = inputs[0]
        if isinstance(outputs, list) and len(tf.nest.flatten(outputs)) == 1:
            outputs = outputs[0]
        self._nested_inputs = inputs
        self._nested_outputs = outputs
        self.inputs = tf.nest.flatten(inputs)
        self.outputs = tf.nest.flatten(outputs)
        if any(node_module.get_history(x) is None for x in self.outputs):
            node_module.create_keras_history(outputs)
        self._validate_graph_inputs_and_outputs()
        self._is_graph_network = True
        self._compute_output_and_mask_jointly = True  # masks from its layers' outputs
        self.built = True
        self._build_input_shape = tf.nest.map_structure(lambda x: x.shape, inputs)
        self._nodes_by_depth, self._network_layers = functional.map_graph_network(
            self.inputs, self.outputs)
        self._input_layers = [node_module.get_history(x).layer for x in self.inputs]
        self._output_layers = [node_module.get_history(x).layer for x in self.outputs]
        self.input_names = [layer.name for layer in self._input_layers]
        self.output_names = _unique_names([layer.name for layer in self._output_layers])

    @property
    def input_spec(self):
        """Set by hand, or for a functional model one InputSpec per input: its shape
        without the batch size (a trailing axis of 1 may be squeezed), as Keras', so a
        call on an input of another rank or size is a ValueError."""
        if self._input_spec is not None or not self._is_graph_network:
            return self._input_spec
        nested = self._nested_inputs
        if isinstance(nested, (dict, list, tuple)) and len(nested) != len(self.inputs):
            return None
        specs = []
        for x, layer in zip(self.inputs, self._input_layers):
            shape = x.shape
            specs.append(None if shape.ndims is None else input_spec_lib.InputSpec(
                shape=(None,) + tuple(shape.as_list()[1:]), allow_last_axis_squeeze=True,
                name=layer.name))
        if isinstance(nested, dict):
            return dict(zip(sorted(nested), specs))
        return specs

    @input_spec.setter
    def input_spec(self, value) -> None:
        base_layer.Layer.input_spec.fset(self, value)

    def _validate_graph_inputs_and_outputs(self) -> None:
        kind = "Functional" if type(self) in (Model,) else type(self).__name__
        if len(set(id(x) for x in self.inputs)) != len(self.inputs):
            raise ValueError("The list of inputs passed to the model contains the same input "
                             "multiple times. All inputs should only appear once. Received "
                             "inputs=%s" % self.inputs)
        for x in self.inputs:
            if node_module.get_history(x) is None:
                raise ValueError("Input tensors to a %s model must come from "
                                 "`tf.keras.Input`. Received inputs=%s (missing previous "
                                 "layer metadata)." % (kind, x))
        for x in self.outputs:
            if node_module.get_history(x) is None:
                raise ValueError("Output tensors of a %s model must be the output of a "
                                 "TensorFlow `Layer` (thus holding past layer metadata). "
                                 "Found: %s" % (kind, x))

    def _flatten_children(self) -> list:
        if self._is_graph_network:
            return list(self._network_layers)
        return super()._flatten_children()

    # --- weights: a model lists its layers' weights layer by layer, then its own --------
    def _assert_weights_created(self) -> None:
        if "build" in type(self).__dict__ and type(self) is not Model and not self.built:
            raise ValueError("Weights for model '%s' have not yet been created. Weights are "
                             "created when the model is first called on inputs or `build()` "
                             "is called with an `input_shape`." % self.name)

    @property
    def trainable_weights(self) -> list:
        self._assert_weights_created()
        if not self.trainable:
            return []
        nested = [w for c in self._flatten_children() for w in c.trainable_weights]
        return utils.dedup(nested + self._trainable_weights)

    @property
    def non_trainable_weights(self) -> list:
        self._assert_weights_created()
        children = self._flatten_children()
        nested = [w for c in children for w in c.non_trainable_weights]
        if self.trainable:
            return utils.dedup(nested + self._non_trainable_weights)
        trainable = [w for c in children for w in c.trainable_weights]
        return utils.dedup(trainable + self._trainable_weights + nested +
                                 self._non_trainable_weights)

    @property
    def weights(self) -> list:
        self._assert_weights_created()
        nested = [w for c in self._flatten_children() for w in c.weights]
        return utils.dedup(nested + self._trainable_weights + self._non_trainable_weights)

    # --- calling -------------------------------------------------------------------------
    def call(self, inputs, training=None, mask=None):
        """The outputs for `inputs`: the functional graph run on them (subclasses
        override `call`).

        Raises:
          NotImplementedError: a subclass without `call`.
        """
        if not self._is_graph_network:
            raise NotImplementedError("Unimplemented `tf.keras.Model.call()`: if you intend to "
                                      "create a `Model` with the Functional API, please provide "
                                      "`inputs` and `outputs` arguments. Otherwise, subclass "
                                      "`Model` with an overridden `call()` method.")
        masking.set_input_masks(functional.flatten_to_reference_inputs(self, inputs),
                                None if mask is None else
                                functional.flatten_to_reference_inputs(self, mask))
        return functional.run_internal_graph(self, inputs)

    def __call__(self, *args, **kwargs):
        outputs = super().__call__(*args, **kwargs)
        if not self._is_graph_network and not self.inputs:
            inputs = args[0] if args else next(iter(kwargs.values()))
            self.inputs = tf.nest.flatten(inputs)
            self.input_names = ["input_%d" % (i + 1) for i in range(len(self.inputs))]
            self.outputs = tf.nest.flatten(outputs)
            self.output_names = ["output_%d" % (i + 1) for i in range(len(self.outputs))]
        return outputs

    @base_layer._default
    def build(self, input_shape) -> None:
        """Builds a subclassed model by calling `call` on placeholders of `input_shape`
        (its layers' variables are then named without the model's scope, as TF's).

        Raises:
          ValueError: no or an invalid input shape, or `call` needs other arguments.
        """
        if self._is_graph_network:
            base_layer.Layer.build(self, input_shape)
            return
        if input_shape is None:
            raise ValueError("Input shape must be defined when calling `build()` on a "
                             "`Model` subclass.")
        if not isinstance(input_shape, (tuple, list, tf.TensorShape, dict)):
            raise ValueError("Specified input shape is not one of the valid types. Please "
                             "specify a batch input shape of type tuple or list of input "
                             "shapes. User provided input type: %s." % type(input_shape))
        if input_shape and not self.inputs:
            if isinstance(input_shape, list) and all(
                    d is None or isinstance(d, int) for d in input_shape):
                input_shape = tuple(input_shape)
            if isinstance(input_shape, list):
                x = [tf.placeholder(backend.floatx(), shape=s) for s in input_shape]
            elif isinstance(input_shape, dict):
                x = {k: tf.placeholder(backend.floatx(), shape=s)
                     for k, s in input_shape.items()}
            else:
                x = tf.placeholder(backend.floatx(), shape=input_shape)
            names = self._get_call_spec()[0]
            required = [n for n in names[1:]
                        if self._call_parameter(n).default is self._call_parameter(n).empty]
            kwargs = {}
            for arg in required:
                if arg != "training":
                    raise ValueError("Currently, you cannot build your model if it has "
                                     "positional or keyword arguments that are not inputs to "
                                     "the model, but are required for its `call()` method. "
                                     "Instead, in order to instantiate and build your model, "
                                     "`call()` your model on real tensor data with all "
                                     "expected call arguments.")
                kwargs["training"] = False
            self.call(x, **kwargs)
        base_layer.Layer.build(self, input_shape)

    def _call_parameter(self, name: str):
        return inspect.signature(self.call).parameters[name]

    # --- structure -----------------------------------------------------------------------
    @property
    def layers(self) -> list:
        """The model's layers: for a functional model its graph's (inputs first), for a
        subclassed one those set as attributes."""
        return [layer for layer in self._flatten_children()]

    @property
    def state_updates(self) -> list:
        """The updates of the model's stateful layers (their carried states), which Keras
        runs in every mode, predict included."""
        updates = []
        for layer in self.layers:
            if getattr(layer, "stateful", False) and hasattr(layer, "updates"):
                updates += layer.updates
        return updates

    def reset_states(self) -> None:
        """Resets the state of every stateful layer of the model (Keras' rule: those with
        `stateful` set and a `reset_states` method), nested models included."""
        for layer in self.layers:
            if isinstance(layer, Model) or (hasattr(layer, "reset_states") and
                                            getattr(layer, "stateful", False)):
                layer.reset_states()

    def get_layer(self, name: Optional[str] = None, index: Optional[int] = None):
        """The layer called `name`, or at position `index` of `layers`.

        Raises:
          ValueError: both or neither given, an index out of range, an unknown name.
        """
        if index is not None and name is not None:
            raise ValueError("Provide only a layer name or a layer index. Received: "
                             "index=%s, name=%s." % (index, name))
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError("Was asked to retrieve layer at index %s but model only has "
                                 "%d layers." % (index, len(layers)))
            return layers[index]
        if name is not None:
            for layer in layers:
                if layer.name == name:
                    return layer
            raise ValueError("No such layer: %s. Existing layers are: %s."
                             % (name, [layer.name for layer in layers]))
        raise ValueError("Provide either a layer name or layer index at `get_layer`.")

    @property
    def input(self):
        if getattr(self, "_is_graph_network", False):
            return self._nested_inputs
        return super().input

    @property
    def output(self):
        if getattr(self, "_is_graph_network", False):
            return self._nested_outputs
        return super().output

    @property
    def input_shape(self):
        if getattr(self, "_is_graph_network", False):
            return tf.nest.map_structure(backend.int_shape, self.input)
        return super().input_shape

    @property
    def output_shape(self):
        if getattr(self, "_is_graph_network", False):
            return tf.nest.map_structure(backend.int_shape, self.output)
        return super().output_shape

    def summary(self, line_length: Optional[int] = None, positions=None, print_fn=None,
                expand_nested: bool = False, show_trainable: bool = False) -> None:
        """Prints the layers, their output shapes and parameter counts, and the totals, as
        TF's Keras prints them.

        Raises:
          ValueError: the model is not built.
        """
        if not self.built:
            raise ValueError("This model has not yet been built. Build the model first by "
                             "calling `build()` or by calling the model on a batch of data.")
        summary.print_summary(self, line_length=line_length, positions=positions,
                              print_fn=print_fn, expand_nested=expand_nested,
                              show_trainable=show_trainable)

    # --- configs and saving (keras/saving.py, keras/saving_weights.py) ------------------
    def get_config(self) -> dict:
        """A functional model's config: its layers and how they are connected (TF's
        format); for a subclass that does not override it, the constructor arguments when
        all are plain values, else {} (and {} for an override calling it)."""
        from tensorweave.keras import saving
        return saving.model_config(self)

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """A functional model rebuilt from `get_config()` (new weights); a subclass's
        `cls(**config)`.

        Raises:
          TypeError: a config the class does not accept.
        """
        from tensorweave.keras import saving
        return saving.functional_from_config(cls, config, custom_objects)

    def to_json(self, **kwargs) -> str:
        """The model's class and config as JSON (`model_from_json` reads it); keyword
        arguments go to `json.dumps`."""
        from tensorweave.keras import saving
        return saving.model_to_json(self, **kwargs)

    def to_yaml(self, **kwargs):
        """Removed from TF's Keras: raises RuntimeError."""
        raise RuntimeError("Method `model.to_yaml()` has been removed due to security risk of "
                           "arbitrary code execution. Please use `model.to_json()` instead.")

    def save_weights(self, filepath, overwrite: bool = True, save_format=None, options=None):
        """Saves the weights: TF's object-based checkpoint (the default, and
        save_format='tf'), or Keras' HDF5 layout for '.h5' paths (needs h5py)."""
        from tensorweave.keras import saving_weights
        return saving_weights.save_weights(self, filepath, overwrite=overwrite,
                                           save_format=save_format, options=options)

    def load_weights(self, filepath, by_name: bool = False, skip_mismatch: bool = False,
                     options=None):
        """Loads weights `save_weights` (or TF's) wrote, by the model's structure."""
        from tensorweave.keras import saving_weights
        return saving_weights.load_weights(self, filepath, by_name=by_name,
                                           skip_mismatch=skip_mismatch, options=options)

    def save(self, filepath, overwrite: bool = True, include_optimizer: bool = True,
             save_format=None, signatures=None, options=None, save_traces: bool = True):
        """Saves the whole model (config, weights, compile arguments and optimizer state)
        in Keras' HDF5 format, TF 1.x's default (needs h5py); the SavedModel format
        (save_format='tf') raises NotImplementedError."""
        from tensorweave.keras import saving_model_hdf5
        saving_model_hdf5.save_model(self, filepath, overwrite=overwrite,
                                     include_optimizer=include_optimizer,
                                     save_format=save_format, signatures=signatures,
                                     options=options)


def _unique_names(names: list) -> list:
    seen, out = {}, []
    for name in names:
        if name in seen:
            seen[name] += 1
            name = "%s_%d" % (name, seen[name])
        else:
            seen[name] = 0
        out.append(name)
    return out


_PLAIN_TYPES = (str, int, float, bool, type(None))


def _plain_init_arguments(cls, args: tuple, kwargs: dict) -> Optional[dict]:
    """The arguments given to `cls(...)` by name, or None when one is not a plain value
    (nested lists and dicts of plain values are plain)."""
    names = inspect.getfullargspec(cls.__init__).args[1:]
    arguments = dict(kwargs)
    arguments.update(zip(names, args))
    try:
        values = tf.nest.flatten(arguments)
    except TypeError:
        return None
    if all(isinstance(value, _PLAIN_TYPES) for value in values):
        return arguments
    return None
