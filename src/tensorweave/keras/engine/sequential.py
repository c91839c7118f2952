"""`tf.keras.Sequential`: a stack of single-input, single-output layers.

As in TF's v1 graph mode: when the first layer knows its input shape (`input_shape=`,
`input_dim=`, or an `Input`/InputLayer first), the model is built at once as a
functional graph on a placeholder '<first layer>_input' (the variables are named
'dense/kernel:0', ...); otherwise it is built on its first call, its layers run in the
model's name scope ('sequential/dense/kernel:0').
"""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras.engine import base_layer, functional, masking
from tensorweave.keras.engine import node as node_module
from tensorweave.keras.engine.input_layer import Input, InputLayer
from tensorweave.keras.engine.training import Model
from tensorweave.layers import base as layers_base

_SINGLE_OUTPUT = ("All layers in a Sequential model should have a single output tensor. For "
                  "multi-output layers, use the functional API.")


@tf_export("keras.Sequential", "keras.models.Sequential")
class Sequential(Model):
    """A linear stack of layers.

    Args:
      layers: the layers to add, in order.
      name: the model's name ('sequential', 'sequential_1', ...).

    Raises:
      TypeError: something that is not a layer.
      ValueError: two layers with the same name; a layer with several outputs.
    """

    def __init__(self, layers=None, name: Optional[str] = None):
        super().__init__(name=name)
        self._layer_list = []
        self._has_explicit_input_shape = False
        self._graph_initialized = False
        self.supports_masking = True
        self._compute_output_and_mask_jointly = True
        if layers:
            if not isinstance(layers, (list, tuple)):
                layers = [layers]
            for layer in layers:
                self.add(layer)

    @property
    def layers(self) -> list:
        """The layers, without the InputLayer the model may have made."""
        layers = list(self._network_layers) if self._graph_initialized else \
            list(self._layer_list)
        if layers and isinstance(layers[0], InputLayer):
            return layers[1:]
        return layers

    def _flatten_children(self) -> list:
        if self._graph_initialized:
            return list(self._network_layers)
        return list(self._layer_list)

    def _assert_weights_created(self) -> None:
        if not self._graph_initialized:
            super()._assert_weights_created()

    def add(self, layer) -> None:
        """Adds `layer` on top of the stack (an `Input` tensor adds its InputLayer); with
        a known input shape the model is (re)built at once.

        Raises:
          TypeError: not a layer.
          ValueError: a layer name already in the model, or a layer with several outputs.
        """
        history = node_module.get_history(layer)
        if history is not None and isinstance(history.layer, InputLayer):
            layer = history.layer
        if not isinstance(layer, layers_base.Layer):
            raise TypeError("The added layer must be an instance of class Layer. Received: "
                            "layer=%s of type %s." % (layer, type(layer)))
        if not isinstance(layer, base_layer.Layer):
            raise TypeError("The following are legacy tf.layers.Layers:\n  %s\nTo use keras as "
                            "a framework (for instance using the Network, Model, or "
                            "Sequential classes), please use the tf.keras.layers "
                            "implementation instead. (Or, if writing custom layers, subclass "
                            "from tf.keras.layers rather than tf.layers)" % (layer,))
        for other in self.layers:
            if other.name == layer.name and other is not layer:
                raise ValueError("All layers added to a Sequential model should have unique "
                                 'names. Name "%s" is already the name of a layer in this '
                                 "model. Update the `name` argument to pass a unique name."
                                 % layer.name)
        self.built = False
        set_inputs = False
        if not self._layer_list and not self._graph_initialized:
            if isinstance(layer, InputLayer):
                set_inputs = True
            else:
                batch_shape, dtype = _input_shape_and_dtype(layer)
                if batch_shape:
                    x = Input(batch_shape=batch_shape, dtype=dtype, name=layer.name + "_input")
                    layer(x)
                    set_inputs = True
            if set_inputs:
                outputs = tf.nest.flatten(layer._inbound_nodes[-1].outputs)
                if len(outputs) != 1:
                    raise ValueError(_SINGLE_OUTPUT)
                self.outputs = outputs
                self.inputs = functional.get_source_inputs(outputs[0])
                self.built = True
                self._has_explicit_input_shape = True
        elif self.outputs:
            output = layer(self.outputs[0])
            if len(tf.nest.flatten(output)) != 1:
                raise ValueError(_SINGLE_OUTPUT)
            self.outputs = [output]
            self.built = True
        if set_inputs or self._graph_initialized:
            self._init_graph_network(self.inputs, self.outputs)
            self._graph_initialized = True
        else:
            self._layer_list.append(layer)

    def pop(self) -> None:
        """Removes the last layer.

        Raises:
          TypeError: the model has no layers.
        """
        layers = self.layers
        if not layers:
            raise TypeError("There are no layers in the model.")
        if not self._graph_initialized:
            self._layer_list.pop()
            if not self._layer_list:
                self.outputs = self.inputs = None
                self.built = False
            return
        if len(layers) == 1:
            self._graph_initialized = False
            self._is_graph_network = False
            self._layer_list = []
            self.outputs = self.inputs = None
            self.built = False
            self._has_explicit_input_shape = False
            return
        layers[-2]._outbound_nodes = []
        self.outputs = [layers[-2].output]
        self._init_graph_network(self.inputs, self.outputs)
        self.built = True

    @base_layer._default
    def build(self, input_shape=None) -> None:
        """Builds a model whose input shape is not known yet, by calling it on a
        placeholder of `input_shape` (with the batch dimension).

        Raises:
          ValueError: no input shape.
        """
        if self._graph_initialized:
            self._init_graph_network(self.inputs, self.outputs)
        else:
            if input_shape is None:
                raise ValueError("You must provide an `input_shape` argument.")
            if not self.built:
                input_shape = tuple(input_shape)
                self._build_input_shape = input_shape
                Model.build(self, input_shape)
        self.built = True

    def call(self, inputs, training=None, mask=None):
        """Runs the layers in order on `inputs` (`training` passed to those that take
        it, and `mask`: the previous layer's output mask)."""
        if self._graph_initialized:
            return super().call(inputs, training=training, mask=mask)
        outputs = inputs
        for layer in self.layers:
            kwargs = {}
            names = layer._get_call_spec()[0]
            if "mask" in names:
                kwargs["mask"] = mask
            if "training" in names:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
            mask = tf.nest.map_structure(masking.get_mask, outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        shape = input_shape
        for layer in self.layers:
            shape = layer.compute_output_shape(shape)
        return shape

    def get_config(self) -> dict:
        """{'name', 'layers': their configs (its InputLayer first when it has one),
        'build_input_shape' when built from a shape}, as TF's."""
        from tensorweave.keras import saving
        return saving.sequential_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A Sequential model rebuilt from `get_config()` (new weights)."""
        from tensorweave.keras import saving
        return saving.sequential_from_config(cls, config, custom_objects)


def _input_shape_and_dtype(layer):
    """The batch input shape and dtype a layer (or the first layer of a model) declares,
    else (None, None).

    Raises:
      ValueError: an empty model.
    """
    while getattr(layer, "_is_graph_network", False) or type(layer).__name__ == "Sequential":
        if not layer.layers:
            raise ValueError("An empty Model cannot be used as a Layer.")
        layer = layer.layers[0]
    shape = getattr(layer, "_batch_input_shape", None)
    if shape:
        return shape, layer.dtype
    return None, None

