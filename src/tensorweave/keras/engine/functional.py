"""The graph of a functional model: from its inputs and outputs, the nodes (layer calls)
between them by depth and its layers in TF's order; and running those nodes again on new
input tensors (TF's `_map_graph_network` and `_run_internal_graph`)."""
from __future__ import annotations

import collections
from typing import Dict, List

import tensorweave as tf
from tensorweave.keras.engine.node import get_history


def _node_of(tensor):
    h = get_history(tensor)
    return h.layer._inbound_nodes[h.node_index]


def _build_map(outputs):
    """The nodes the outputs need, inputs first, and each layer's traversal index."""
    finished, in_progress = set(), set()
    ordered, layer_indices = [], {}

    def visit(tensor):
        node = _node_of(tensor)
        layer = node.layer
        if node in finished:
            return
        if node in in_progress:
            raise ValueError('Tensor %s from layer "%s" is part of a cycle.'
                             % (tensor, layer.name))
        layer_indices.setdefault(layer, len(layer_indices))
        in_progress.add(node)
        if not node.is_input:
            for x in node.keras_inputs:
                visit(x)
        finished.add(node)
        in_progress.remove(node)
        ordered.append(node)

    for output in tf.nest.flatten(outputs):
        visit(output)
    return ordered, layer_indices


def map_graph_network(inputs: List, outputs: List):
    """(nodes_by_depth, layers) of the model from `inputs` to `outputs`: depth 0 holds
    the output nodes; layers are ordered from the inputs, by decreasing depth then
    traversal order.

    Raises:
      ValueError: a node needs a tensor the inputs do not give ("Graph disconnected"),
        a cycle, or two layers with the same name.
    """
    ordered, layer_indices = _build_map(outputs)
    node_depths: Dict = {}
    layer_depths: Dict = {}
    for node in reversed(ordered):
        depth = node_depths.setdefault(node, 0)
        depth = max(depth, layer_depths.get(node.layer, 0))
        layer_depths[node.layer] = depth
        node_depths[node] = depth
        for parent in node.parent_nodes:
            node_depths[parent] = max(depth + 1, node_depths.get(parent, 0))
    for x in inputs:
        input_layer = get_history(x).layer
        if input_layer not in layer_depths:
            layer_depths[input_layer] = 0
            layer_indices[input_layer] = -1
            node_depths[input_layer._inbound_nodes[0]] = 0
    nodes_by_depth = collections.defaultdict(list)
    for node, depth in node_depths.items():
        nodes_by_depth[depth].append(node)
    layers_by_depth = collections.defaultdict(list)
    for layer, depth in layer_depths.items():
        layers_by_depth[depth].append(layer)
    layers = []
    for depth in sorted(layers_by_depth, reverse=True):
        layers.extend(sorted(layers_by_depth[depth], key=lambda x: layer_indices[x]))
    computable = set(id(x) for x in inputs)
    done = []
    for depth in sorted(nodes_by_depth, reverse=True):
        for node in nodes_by_depth[depth]:
            if node.is_input:
                continue
            for x in node.keras_inputs:
                if id(x) not in computable:
                    raise ValueError('Graph disconnected: cannot obtain value for tensor %s at '
                                     'layer "%s". The following previous layers were accessed '
                                     "without issue: %s" % (x, node.layer.name, done))
            computable.update(id(x) for x in node.flat_outputs)
            done.append(node.layer.name)
    names = [layer.name for layer in layers]
    for name in names:
        if names.count(name) != 1:
            raise ValueError('The name "%s" is used %d times in the model. All layer names '
                             "should be unique." % (name, names.count(name)))
    return dict(nodes_by_depth), layers


def conform_to_reference_input(tensor, ref_input):
    """`tensor` fed for the model input `ref_input`: a trailing axis of size 1 squeezed
    or added to match the rank, the static shape merged, cast to its dtype (as TF)."""
    if not isinstance(tensor, tf.Tensor):
        return tensor
    ndim, ref_ndim = tensor.shape.ndims, ref_input.shape.ndims
    if ndim is not None and ref_ndim is not None:
        dims, ref_dims = tensor.shape.as_list(), ref_input.shape.as_list()
        if ndim == ref_ndim + 1 and dims[-1] == 1:
            tensor = tf.squeeze(tensor, axis=-1)
        elif ndim == ref_ndim - 1 and ref_dims[-1] == 1:
            tensor = tf.expand_dims(tensor, axis=-1)
    if tensor.shape.is_compatible_with(ref_input.shape):
        tensor.set_shape(ref_input.shape)
    if tensor.dtype.base_dtype != ref_input.dtype.base_dtype:
        tensor = tf.cast(tensor, ref_input.dtype.base_dtype)
    return tensor


def run_internal_graph(model, inputs):
    """The model's outputs for `inputs` (structured as its inputs): every node is called
    again, by decreasing depth, on the tensors computed so far."""
    flat = flatten_to_reference_inputs(model, inputs)
    tensor_map = {}
    for x, y in zip(model.inputs, flat):
        tensor_map[x] = conform_to_reference_input(y, x)
    for depth in sorted(model._nodes_by_depth, reverse=True):
        for node in model._nodes_by_depth[depth]:
            if node.is_input or any(x not in tensor_map for x in node.keras_inputs):
                continue
            args, kwargs = node.map_arguments(tensor_map)
            outputs = node.layer(*args, **kwargs)
            for x, y in zip(node.flat_outputs, tf.nest.flatten(outputs)):
                tensor_map[x] = y
    results = []
    for x in model.outputs:
        if x not in tensor_map:
            raise ValueError("Could not compute output " + str(x))
        results.append(tensor_map[x])
    return tf.nest.pack_sequence_as(model._nested_outputs, results)


def flatten_to_reference_inputs(model, inputs) -> list:
    """`inputs` as a flat list in the order of the model's inputs (a dict is read by
    input names)."""
    if isinstance(inputs, dict):
        names = [get_history(x).layer.name for x in model.inputs]
        if all(name in inputs for name in names):
            return [inputs[name] for name in names]
    return tf.nest.flatten(inputs)


def get_source_inputs(tensor) -> list:
    """The Input tensors `tensor` is computed from (itself if it is one)."""
    h = get_history(tensor)
    if h is None:
        return [tensor]
    node = h.layer._inbound_nodes[h.node_index]
    if node.is_input:
        return tf.nest.flatten(node.outputs)
    sources = []
    for x in node.keras_inputs:
        for source in get_source_inputs(x):
            if all(source is not s for s in sources):
                sources.append(source)
    return sources
