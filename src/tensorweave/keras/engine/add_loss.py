"""A functional model's `add_loss(tensor)` outside a call, as TF's Keras does it: the ops
computing the loss from the model's inputs become TensorFlowOpLayers, an AddLoss layer
adds their output as a loss, and those layers are inserted into the model's graph (after
the nodes they read), so that calling the model on new inputs adds the loss computed
from them too. They are layers of the model (`model.layers`: 'tf_op_layer_Mean',
'add_loss', ...), and their losses the model's.
"""
from __future__ import annotations

from tensorweave.keras.engine import base_layer, functional
from tensorweave.keras.engine import node as node_module


class AddLoss(base_layer.Layer):
    """Adds its input as a loss (conditional on the call's inputs unless
    `unconditional`) and returns it."""

    def __init__(self, unconditional: bool, **kwargs):
        kwargs.pop("autocast", None)
        super().__init__(**kwargs)
        self.unconditional = unconditional

    def call(self, inputs):
        self.add_loss(inputs, inputs=None if self.unconditional else True)
        return inputs

    def get_config(self) -> dict:
        config = super().get_config()
        config["unconditional"] = self.unconditional
        return config


def graph_network_add_loss(model, loss) -> None:
    """Makes `loss` (a tensor of `model`'s graph) a loss of the functional `model`, also
    when it is called again (TF's `_graph_network_add_loss`).

    Raises:
      ValueError: the loss needs tensors the model's inputs do not give.
    """
    node_module.create_keras_history(loss)
    nodes_by_depth, layers = functional.map_graph_network(model.inputs, [loss])
    new_nodes = [node for depth in sorted(nodes_by_depth, reverse=True)
                 for node in nodes_by_depth[depth]]
    add_loss_layer = AddLoss(unconditional=False, dtype=loss.dtype)
    add_loss_layer(loss)
    new_nodes.extend(add_loss_layer._inbound_nodes)
    layers.append(add_loss_layer)
    _insert_layers(model, layers, new_nodes)


def _insert_layers(model, layers: list, nodes: list) -> None:
    """Adds `nodes` to the model's graph, each one shallower than its shallowest inbound
    node (so that a run computes it after them), and appends `layers` not yet in it."""
    node_depth = {node: depth for depth, group in model._nodes_by_depth.items()
                  for node in group}
    pending = [node for node in nodes if node not in node_depth]
    wanted = set(pending) | set(node_depth)
    while pending:
        progressed = False
        for node in list(pending):
            parents = [p for p in node.parent_nodes if p in wanted]
            if any(p not in node_depth for p in parents):
                continue  # after its inbound nodes
            depth = min([node_depth[p] for p in parents] + [0]) - 1
            node_depth[node] = depth
            model._nodes_by_depth.setdefault(depth, []).append(node)
            pending.remove(node)
            progressed = True
        if not progressed:
            raise ValueError("Layers could not be added due to missing dependencies.")
    known = set(id(layer) for layer in model._network_layers)
    for layer in layers:
        if id(layer) not in known:
            model._network_layers.append(layer)
            known.add(id(layer))

