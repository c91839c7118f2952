"""`add_loss(tensor)` and `add_metric(tensor)` of a functional model outside a call, as
TF's Keras does them: the ops computing the value from the model's inputs become
TensorFlowOpLayers, an AddLoss (AddMetric) layer adds their output as a loss (metric),
and those layers are inserted into the model's graph (after the nodes they read), so
that calling the model on new inputs adds the loss computed from them too. They are
layers of the model (`model.layers`: 'tf_op_layer_Mean', 'add_loss', ...), and their
losses the model's. Also `Layer.add_metric` itself: the Mean metrics it makes and the
Metric objects it tracks.
"""
from __future__ import annotations

import tensorweave as tf
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


class AddMetric(base_layer.Layer):
    """Adds its input as the metric `metric_name` (see `Layer.add_metric`) and returns
    it."""

    def __init__(self, aggregation=None, metric_name=None, **kwargs):
        kwargs.pop("autocast", None)
        super().__init__(**kwargs)
        self.aggregation = aggregation
        self.metric_name = metric_name

    def call(self, inputs):
        self.add_metric(inputs, aggregation=self.aggregation, name=self.metric_name)
        return inputs

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(aggregation=self.aggregation, metric_name=self.metric_name)
        return config


def graph_network_add_loss(model, loss) -> None:
    """Makes `loss` (a tensor of `model`'s graph) a loss of the functional `model`, also
    when it is called again (TF's `_graph_network_add_loss`).

    Raises:
      ValueError: the loss needs tensors the model's inputs do not give.
    """
    _add_layer_on(model, loss, AddLoss(unconditional=False, dtype=loss.dtype))


def graph_network_add_metric(model, value, aggregation, name: str) -> None:
    """Makes `value` (a tensor of `model`'s graph) the metric `name` of the functional
    `model` through an AddMetric layer (TF's `_graph_network_add_metric`).

    Raises:
      ValueError: the value needs tensors the model's inputs do not give.
    """
    _add_layer_on(model, value, AddMetric(aggregation, name, dtype=value.dtype))


def _add_layer_on(model, tensor, layer) -> None:
    """Calls `layer` on `tensor` and inserts it, with the ops computing `tensor` from the
    model's inputs (as layers), into the model's graph."""
    node_module.create_keras_history(tensor)
    nodes_by_depth, layers = functional.map_graph_network(model.inputs, [tensor])
    new_nodes = [node for depth in sorted(nodes_by_depth, reverse=True)
                 for node in nodes_by_depth[depth]]
    layer(tensor)
    new_nodes.extend(layer._inbound_nodes)
    layers.append(layer)
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


# --- Layer.add_metric ----------------------------------------------------------------------
def add_metric(layer, value, aggregation, name, in_call: bool) -> None:
    """`layer.add_metric(value, aggregation, name)` (see Layer.add_metric), called in a
    layer's call or not (`in_call`)."""
    from tensorweave.keras import metrics as metrics_module
    if aggregation is not None and aggregation != "mean":
        raise ValueError("We currently support only `mean` sample-wise metric "
                         "aggregation. You provided aggregation=`%s`" % aggregation)
    made_by = metrics_module.metric_of_result(value)
    if name is None and made_by is None:
        raise ValueError("Please provide a name for your metric like "
                         "`self.add_metric(tf.reduce_sum(inputs), name='mean_activation', "
                         "aggregation='mean')`")
    if made_by is not None:
        name = made_by.name
    if not in_call:
        if not isinstance(value, tf.Tensor):
            raise ValueError("Expected a symbolic Tensor for the metric value, received: "
                             + str(value))
        if getattr(layer, "_is_graph_network", False):
            if made_by is not None:
                raise ValueError("Using the result of calling a `Metric` object when calling "
                                 "`add_metric` on a Functional Model is not supported. Please "
                                 "pass the Tensor to monitor directly.")
            graph_network_add_metric(layer, value, aggregation, name)
            return
    _track_metric(layer, value, made_by, aggregation, name)


def _track_metric(layer, value, made_by, aggregation, name: str) -> None:
    """Updates the layer's metric named `name` with `value` (a new Mean when there is
    none), or tracks `made_by`, the Metric that made `value` (aggregation None)."""
    from tensorweave.keras import metrics as metrics_module
    match = [m for m in layer._metrics if m.name == name]
    if len(match) > 1:
        raise ValueError('Please provide different names for the metrics you have added. '
                         'We found %d metrics with the name: "%s"' % (len(match), name))
    if aggregation is None:
        if match:
            return
        if made_by is None:
            raise ValueError(
                "We do not support adding an aggregated metric result tensor that is not "
                "the output of a `tf.keras.metrics.Metric` metric instance. Without having "
                "access to the metric instance we cannot reset the state of a metric after "
                "every epoch during training. You can create a `tf.keras.metrics.Metric` "
                "instance and pass the result here or pass an un-aggregated result with "
                "`aggregation` parameter set as `mean`. For example: "
                "`self.add_metric(tf.reduce_sum(inputs), name='mean_activation', "
                "aggregation='mean')` ")
        layer._metrics.append(made_by)
        return
    if match:
        match[0](value)
        return
    metric = metrics_module.Mean(name=name, dtype=value.dtype)
    metric(value)
    layer._metrics.append(metric)
