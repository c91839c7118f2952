"""Keras history: which layer call made a tensor, so that a functional Model can find its
layers from its outputs and call them again on new inputs.

A `Node` is one call of a layer on tensors that all have a history (or an InputLayer's
placeholder); its outputs get a `KerasHistory` (layer, node index, tensor index), kept
in the graph's Keras state since tensors take no attributes. TF's raw ops between Keras
tensors (`tf.nn.relu(dense(x))`) are wrapped as TensorFlowOpLayers when a layer or a
Model meets them (`create_keras_history`), as TF's Keras does in graph mode.
"""
from __future__ import annotations

import collections
from typing import List, Optional

import tensorweave as tf
from tensorweave.keras import backend

KerasHistory = collections.namedtuple("KerasHistory", ["layer", "node_index", "tensor_index"])


def get_history(t) -> Optional[KerasHistory]:
    """The KerasHistory of `t`, or None (also for anything that is not a tensor)."""
    if not isinstance(t, (tf.Tensor, tf.SparseTensor)):
        return None
    return backend.graph_state(t.graph).history.get(t)


def have_all_keras_metadata(inputs) -> bool:
    """Whether every tensor of the nested `inputs` has a Keras history."""
    return all(get_history(x) is not None for x in tf.nest.flatten(inputs))


class Node:
    """One call of `layer`: its arguments (tensors with a history among other values),
    its outputs; registers itself with the layer and gives the outputs their history.

    Args:
      layer: the layer called.
      call_args, call_kwargs: the call's arguments (`call_args[0]` are the inputs).
      outputs: the call's outputs (a tensor or a nested structure of tensors).
    """

    def __init__(self, layer, call_args=None, call_kwargs=None, outputs=None):
        self.layer = layer
        self.call_args = tuple(call_args) if call_args is not None else ()
        self.call_kwargs = dict(call_kwargs) if call_kwargs is not None else {}
        self.is_input = not self.call_args and not self.call_kwargs
        self.outputs = outputs
        self._flat_arguments = tf.nest.flatten((self.call_args, self.call_kwargs))
        self._keras_positions = [i for i, x in enumerate(self._flat_arguments)
                                 if get_history(x) is not None]
        self.keras_inputs: List = [self._flat_arguments[i] for i in self._keras_positions]
        self.flat_outputs: List = tf.nest.flatten(outputs)
        layer._inbound_nodes.append(self)
        node_index = len(layer._inbound_nodes) - 1
        for x in self.keras_inputs:
            get_history(x).layer._outbound_nodes.append(self)
        for i, t in enumerate(self.flat_outputs):
            backend.graph_state(t.graph).history[t] = KerasHistory(layer, node_index, i)

    @property
    def parent_nodes(self) -> List["Node"]:
        """The nodes that made this node's Keras inputs."""
        nodes = []
        for x in self.keras_inputs:
            h = get_history(x)
            nodes.append(h.layer._inbound_nodes[h.node_index])
        return nodes

    @property
    def input_tensors(self):
        """The inputs of the call (for an input node, [its tensor])."""
        if self.is_input:
            return [self.outputs]
        return self.call_args[0]

    @property
    def output_tensors(self):
        """The outputs of the call (for an input node, [its tensor])."""
        if self.is_input:
            return [self.outputs]
        return self.outputs

    @property
    def input_shapes(self):
        shapes = tf.nest.map_structure(backend.int_shape, self.input_tensors)
        if len(shapes) == 1 and not self.is_input:
            return shapes[0]
        return shapes

    @property
    def output_shapes(self):
        return tf.nest.map_structure(backend.int_shape, self.output_tensors)

    def iterate_inbound(self):
        """(layer, node_index, tensor_index, tensor) of each Keras input."""
        for x in self.keras_inputs:
            h = get_history(x)
            yield h.layer, h.node_index, h.tensor_index, x

    def map_arguments(self, tensor_map: dict):
        """(args, kwargs) of this call with every Keras input replaced by
        `tensor_map[input]`."""
        flat = list(self._flat_arguments)
        for position in self._keras_positions:
            flat[position] = tensor_map[flat[position]]
        args, kwargs = tf.nest.pack_sequence_as((self.call_args, self.call_kwargs), flat)
        return args, kwargs


# --- raw TF ops between Keras tensors ------------------------------------------------------
def uses_keras_history(tensors) -> bool:
    """Whether any of `tensors` has a history or is computed from a tensor that has one
    (tensors found not to are remembered, so each is walked once)."""
    frontier = [t for t in tf.nest.flatten(tensors) if isinstance(t, tf.Tensor)]
    if not frontier:
        return False
    state = backend.graph_state(frontier[0].graph)
    checked, walked = set(), []
    while frontier:
        following = []
        for t in frontier:
            if t in checked or t in state.no_history:
                continue
            checked.add(t)
            if t in state.history:
                return True
            walked.append(t)
            following.extend(t.op.inputs)
        frontier = following
    state.no_history.update(walked)
    return False


def needs_keras_history(tensors) -> bool:
    """Whether some of `tensors` lack a history though they come from Keras tensors.
    Never inside another layer's call (a cell at each time step, the layer TimeDistributed
    wraps), as in TF's Keras."""
    from tensorweave.keras.engine.base_layer_utils import call_context
    if call_context().in_call:
        return False
    flat = [t for t in tf.nest.flatten(tensors) if isinstance(t, tf.Tensor)]
    if all(get_history(t) is not None for t in flat):
        return False
    return uses_keras_history(flat)


def create_keras_history(tensors) -> None:
    """Gives a history to every tensor of `tensors` made by raw TF ops from Keras
    tensors: each such op becomes a TensorFlowOpLayer node (inputs without a Keras
    ancestry are kept as constants of the op)."""
    from tensorweave.keras.engine.tf_op_layer import TensorFlowOpLayer
    processed = set()

    def wrap(tensor):
        if get_history(tensor) is not None or not isinstance(tensor, tf.Tensor):
            return
        op = tensor.op
        if op in processed:
            return
        layer_inputs, constants = [], {}
        for i, op_input in enumerate(op.inputs):
            if uses_keras_history(op_input):
                layer_inputs.append(op_input)
            else:
                constants[i] = op_input
        for op_input in layer_inputs:
            wrap(op_input)
        op_layer = TensorFlowOpLayer(op, constants=constants)
        Node(op_layer, call_args=(layer_inputs,), call_kwargs={}, outputs=list(op.outputs))
        processed.add(op)

    for t in tf.nest.flatten(tensors):
        wrap(t)
