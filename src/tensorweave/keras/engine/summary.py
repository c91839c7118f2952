"""`Model.summary()`: the table TF's Keras prints (layer, output shape, parameter count,
and for non-sequential functional models the inbound layers), then the totals."""
from __future__ import annotations

from typing import Callable, List, Optional

import numpy as np

from tensorweave.layers.base import count_weights


def _is_sequential_like(model) -> bool:
    if type(model).__name__ == "Sequential" or not model._is_graph_network:
        return True
    nodes = []
    for depth_nodes in model._nodes_by_depth.values():
        if len(depth_nodes) > 1 or (len(depth_nodes) == 1 and
                                    len(depth_nodes[0].keras_inputs) > 1):
            return False
        nodes += depth_nodes
    for layer in model.layers:
        if sum(1 for node in layer._inbound_nodes if node in nodes) > 1:
            return False
    return True


def _readable_memory_size(size: float) -> str:
    for unit in ["Byte", "KB", "MB", "GB", "TB"]:
        if size / 1024 < 1:
            return "{:.2f} {}".format(size, unit)
        size /= 1024
    return "{:.2f} {}".format(size, "PB")


def _unique(weights: list) -> list:
    return list({id(w): w for w in weights}.values())


def _memory(weights: list) -> int:
    total = 0
    for w in _unique(weights):
        dims = w.shape.as_list()
        if None not in dims:
            total += int(np.prod(dims)) * w.dtype.size
    return total


def print_summary(model, line_length: Optional[int] = None, positions=None,
                  print_fn: Optional[Callable] = None, expand_nested: bool = False,
                  show_trainable: bool = False) -> None:
    """Prints `model`'s summary with `print_fn` (default `print`)."""
    print_fn = print_fn or print
    sequential_like = _is_sequential_like(model)
    if sequential_like:
        line_length = line_length or 65
        positions = list(positions or [0.45, 0.85, 1.0])
        to_display = ["Layer (type)", "Output Shape", "Param #"]
    else:
        line_length = line_length or 98
        positions = list(positions or [0.3, 0.6, 0.70, 1.0])
        to_display = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    relevant_nodes: List = []
    if not sequential_like:
        for nodes in model._nodes_by_depth.values():
            relevant_nodes += nodes
    if show_trainable:
        line_length += 11
        positions.append(line_length)
        to_display.append("Trainable")

    def print_row(fields, nested_level: int = 0) -> None:
        left = [str(x) for x in fields]
        while any(left):
            line = ""
            for col in range(len(left)):
                start = positions[col - 1] if col > 0 else 0
                space = 2 if col != len(positions) - 1 else 0
                cutoff = positions[col] - start - space
                if col != len(positions) - 1:
                    cutoff -= 1
                if col == 0:
                    cutoff -= nested_level
                fit = left[col][:cutoff]
                breaks = [fit.find(x) + len(x) for x in ("),", "},", "],", "',")
                          if fit.find(x) >= 0]
                if breaks:
                    cutoff = min(breaks)
                    fit = fit[:cutoff]
                if col == 0:
                    line += "|" * nested_level + " "
                line += fit + (" " * space if space else "")
                left[col] = left[col][cutoff:]
                if nested_level and col == len(positions) - 1:
                    line += " " * (positions[col] - len(line) - nested_level)
                else:
                    line += " " * (positions[col] - len(line))
            print_fn(line + "|" * nested_level)

    def print_layer(layer, nested_level: int = 0, is_nested_last: bool = False) -> None:
        try:
            output_shape = layer.output_shape
        except AttributeError:
            output_shape = "multiple"
        fields = [layer.name + " (" + _class_name(layer) + ")", output_shape]
        if sequential_like:
            built = layer.built or getattr(layer, "_is_graph_network", False)
            fields.append(layer.count_params() if built else "0 (unused)")
        else:
            connections = []
            for node in layer._inbound_nodes:
                if relevant_nodes and node not in relevant_nodes:
                    continue
                for inbound, node_index, tensor_index, _ in node.iterate_inbound():
                    connections.append("%s[%d][%d]" % (inbound.name, node_index, tensor_index))
            fields += [layer.count_params(), connections]
        if show_trainable:
            fields.append("Y" if layer.trainable else "N")
        print_row(fields, nested_level)
        if expand_nested and getattr(layer, "layers", None):
            print_fn("|" * (nested_level + 1) + "\u00af" * (line_length - 2 * nested_level - 2)
                     + "|" * (nested_level + 1))
            nested = layer.layers
            for i, child in enumerate(nested):
                print_layer(child, nested_level + 1, i == len(nested) - 1)
            print_fn("|" * nested_level + "\u00af" * (line_length - 2 * nested_level)
                     + "|" * nested_level)
        if not is_nested_last:
            print_fn("|" * nested_level + " " * (line_length - 2 * nested_level)
                     + "|" * nested_level)

    print_fn('Model: "%s"' % model.name)
    print_fn("_" * line_length)
    print_row(to_display)
    print_fn("=" * line_length)
    for layer in model.layers:
        print_layer(layer)
    print_fn("=" * line_length)
    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    trainable_count = count_weights(trainable)
    non_trainable_count = count_weights(non_trainable)
    trainable_memory, non_trainable_memory = _memory(trainable), _memory(non_trainable)
    print_fn("Total params: %d (%s)" % (trainable_count + non_trainable_count,
                                        _readable_memory_size(trainable_memory +
                                                              non_trainable_memory)))
    print_fn("Trainable params: %d (%s)" % (trainable_count,
                                            _readable_memory_size(trainable_memory)))
    print_fn("Non-trainable params: %d (%s)" % (non_trainable_count,
                                                _readable_memory_size(non_trainable_memory)))
    print_fn("_" * line_length)


def _class_name(layer) -> str:
    """TF shows a functional Model as 'Functional'."""
    if type(layer).__name__ == "Model" and getattr(layer, "_is_graph_network", False):
        return "Functional"
    return type(layer).__name__
