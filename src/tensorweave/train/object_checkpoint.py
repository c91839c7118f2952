"""TF's object-based checkpoints: the object graph, its keys and its proto, shared by
`tf.train.Checkpoint` (train/checkpoint.py) and Keras' `save_weights` in TF format
(keras/saving_weights.py).

A checkpoint is a TF V2 bundle (ops/io/tensor_bundle.py) whose keys name each variable
by its path of *dependencies* from a root object: a `tf.train.Checkpoint`'s dependencies
are the objects given to it by name (and 'save_counter'); a V1 optimizer's are its
non-slot variables (Adam's 'beta1_power'); a Keras optimizer's are 'iter' and its
hyperparameter variables; a functional or Sequential model's are its layers as
'layer-<i>' (every layer) and 'layer_with_weights-<j>' (layers with weights, counted
apart); any other layer's are its weights (named as `add_weight` named them) and the
layers, lists and dicts of layers set as its attributes; a list's or dict's are its
items. A variable's key is its first path in a breadth-first walk +
'/.ATTRIBUTES/VARIABLE_VALUE', e.g. 'model/layer_with_weights-0/kernel/.ATTRIBUTES/
VARIABLE_VALUE'. A slot variable has no path of its own: its key is
'<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot name>/.ATTRIBUTES/VARIABLE_VALUE'.
The walk is also written as a TrackableObjectGraph proto under
'_CHECKPOINTABLE_OBJECT_GRAPH', which a restore matches against the program's objects
child name by child name from the root (`match`), as TF does.
"""
from __future__ import annotations

import collections
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tensorweave.framework import dtypes as _dt

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
# attributes of tensorweave's Keras classes that hold layers but are not checkpoint
# dependencies in TF (its bookkeeping is untracked too)
_UNTRACKED = frozenset({"_layer_list", "_network_layers", "_input_layers", "_output_layers",
                        "_inbound_nodes", "_outbound_nodes", "_nested_inputs",
                        "_nested_outputs", "inputs", "outputs"})


# --- what an object depends on -------------------------------------------------------------
def is_variable(obj) -> bool:
    from tensorweave.ops.state.variables import Variable
    return isinstance(obj, Variable)


def is_layer(obj) -> bool:
    from tensorweave.layers import base as layers_base
    return isinstance(obj, layers_base.Layer)


def is_keras_optimizer(obj) -> bool:
    from tensorweave.keras.optimizer_v2 import OptimizerV2
    return isinstance(obj, OptimizerV2)


def is_v1_optimizer(obj) -> bool:
    from tensorweave.train.optimizer import Optimizer
    return isinstance(obj, Optimizer)


def _has_own_dependencies(obj) -> bool:
    """Objects that list their dependencies themselves (tf.train.Checkpoint)."""
    return callable(getattr(type(obj), "_checkpoint_dependencies", None))


def is_trackable(obj) -> bool:
    """Whether `obj` can be a dependency in an object graph (what TF's Trackable
    subclasses are: variables, layers, optimizers, checkpoints, and the lists and dicts
    TF wraps)."""
    return (is_variable(obj) or is_layer(obj) or is_keras_optimizer(obj) or
            is_v1_optimizer(obj) or _has_own_dependencies(obj) or
            isinstance(obj, (list, tuple, dict)))


def _is_dependency(value) -> bool:
    """Whether a list item or layer attribute is a dependency (a list or dict is one only
    when it holds one)."""
    if isinstance(value, (list, tuple)):
        return any(_is_dependency(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) for k in value) and \
            any(_is_dependency(v) for v in value.values())
    return is_trackable(value)


def escape(name: str) -> str:
    """TF's escaping of a local name in a checkpoint key: '.' doubled, '/' as '.S'."""
    return name.replace(".", "..").replace("/", ".S")


def children(obj) -> List[Tuple[str, object]]:
    """(local name, object) of the dependencies of `obj`, in TF's order."""
    if is_variable(obj):
        return []
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _is_dependency(v)]
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items() if _is_dependency(v)]
    if _has_own_dependencies(obj):
        return obj._checkpoint_dependencies()
    if is_keras_optimizer(obj):
        return _keras_optimizer_children(obj)
    if is_v1_optimizer(obj):
        return _v1_optimizer_children(obj)
    if is_layer(obj):
        return _layer_children(obj)
    return []


def _weight_name(variable) -> str:
    """The name `add_weight` gave: the last component of the variable's name."""
    return variable.op.name.split("/")[-1]


def _layer_children(layer) -> List[Tuple[str, object]]:
    children_ = []
    if getattr(layer, "_is_graph_network", False) or type(layer).__name__ == "Sequential":
        with_weights = 0
        for i, sublayer in enumerate(layer.layers):
            if sublayer.weights:
                children_.append(("layer_with_weights-%d" % with_weights, sublayer))
                with_weights += 1
            children_.append(("layer-%d" % i, sublayer))
        return children_ + _optimizer_of(layer)
    for variable in list(layer.__dict__.get("_trainable_weights", [])) + \
            list(layer.__dict__.get("_non_trainable_weights", [])):
        children_.append((_weight_name(variable), variable))
    for name, value in vars(layer).items():
        if name in _UNTRACKED or name.startswith("__"):
            continue
        if name.startswith("_") and not is_layer(value):
            continue  # private lists and dicts are bookkeeping
        if _is_dependency(value):
            if all(value is not v or name != n for n, v in children_):
                children_.append((name, value))
    tracked = [v for n, v in children_ if n == "optimizer"]
    return children_ + [(n, v) for n, v in _optimizer_of(layer)
                        if all(v is not t for t in tracked)]


def _optimizer_of(model) -> List[Tuple[str, object]]:
    """[('optimizer', the optimizer)] for a model compiled with one, else []."""
    optimizer = model.__dict__.get("optimizer")
    return [("optimizer", optimizer)] if is_keras_optimizer(optimizer) else []


def _keras_optimizer_children(optimizer) -> List[Tuple[str, object]]:
    """'iter', then the hyperparameters made variables (TF's order)."""
    children_ = []
    if optimizer._iterations is not None:
        children_.append(("iter", optimizer._iterations))
    for name, value in sorted(optimizer._hyper.items()):
        if is_variable(value):
            children_.append((name, value))
    return children_


def _v1_optimizer_children(optimizer) -> List[Tuple[str, object]]:
    """The non-slot variables of the default graph, by name, in creation order (TF
    tracks only the current graph's, since each graph has its own)."""
    from tensorweave.framework import graph as _graph
    g = _graph.get_default_graph()
    return [(name, v) for (name, graph), v in optimizer._non_slot_dict.items()
            if graph is g]


def _slot_names(optimizer) -> List[str]:
    if is_keras_optimizer(optimizer):
        return list(optimizer._slot_names)
    return optimizer.get_slot_names()


def _slot_of(optimizer, variable, slot_name: str):
    if is_keras_optimizer(optimizer):
        return optimizer._slots.get(id(variable), {}).get(slot_name)
    return optimizer.get_slot(variable, slot_name)


# --- the graph of one root -----------------------------------------------------------------
class ObjectGraph:
    """The breadth-first walk of the dependencies of `root`.

    Fields:
      nodes: the objects, root first, in the order of the walk, then the slot variables.
      children: per node, [(local name, node id)] (every dependency, also of objects
        met before).
      paths: per node, its first path of local names from the root (None for a slot).
      keys: id(variable) -> (variable, checkpoint key).
      slots: per optimizer node id, [(variable node id, slot name, slot node id)].
    """

    def __init__(self, root):
        self.nodes: List = [root]
        self.children: List[List[Tuple[str, int]]] = []
        self.paths: List[Optional[List[str]]] = [[]]
        ids: Dict[int, int] = {id(root): 0}
        queue = collections.deque([0])
        while queue:
            node_id = queue.popleft()
            refs = []
            for name, child in children(self.nodes[node_id]):
                if id(child) not in ids:
                    ids[id(child)] = len(self.nodes)
                    self.nodes.append(child)
                    self.paths.append(self.paths[node_id] + [name])
                    queue.append(ids[id(child)])
                refs.append((name, ids[id(child)]))
            self.children.append(refs)
        self.keys: Dict[int, Tuple[object, str]] = collections.OrderedDict()
        variable_ids = [i for i, obj in enumerate(self.nodes) if is_variable(obj)]
        for node_id in variable_ids:
            self.keys[id(self.nodes[node_id])] = (self.nodes[node_id],
                                                  self._path(node_id) + VALUE_SUFFIX)
        self.slots: Dict[int, List[Tuple[int, str, int]]] = {}
        for node_id, obj in list(enumerate(self.nodes)):
            if is_keras_optimizer(obj) or is_v1_optimizer(obj):
                self._add_slots(node_id, variable_ids)

    def _path(self, node_id: int) -> str:
        return "/".join(escape(n) for n in self.paths[node_id])

    def _add_slots(self, optimizer_id: int, variable_ids: List[int]) -> None:
        """Adds the slot variables of the optimizer, slot by slot (TF's order), as nodes
        with no path and keys under their variable's."""
        optimizer = self.nodes[optimizer_id]
        refs = self.slots.setdefault(optimizer_id, [])
        for slot_name in _slot_names(optimizer):
            for node_id in variable_ids:
                slot = _slot_of(optimizer, self.nodes[node_id], slot_name)
                if slot is None:
                    continue
                slot_id = len(self.nodes)
                self.nodes.append(slot)
                self.children.append([])
                self.paths.append(None)
                refs.append((node_id, slot_name, slot_id))
                key = "%s/.OPTIMIZER_SLOT/%s/%s%s" % (
                    self._path(node_id), self._path(optimizer_id), escape(slot_name),
                    VALUE_SUFFIX)
                self.keys[id(slot)] = (slot, key)

    def variables(self) -> List:
        """The variables to save, in key order of the walk."""
        return [v for v, _ in self.keys.values()]

    def proto(self, with_root_alias: bool = False):
        """The TrackableObjectGraph proto (with TF's 'root' child of the root itself
        when `with_root_alias`, as Keras' save_weights writes)."""
        graph = proto_class()()
        has_values = self._has_values()
        for node_id, obj in enumerate(self.nodes):
            node = graph.nodes.add()
            for name, child_id in self.children[node_id]:
                node.children.add(node_id=child_id, local_name=name)
            if node_id == 0 and with_root_alias:
                node.children.add(node_id=0, local_name="root")
            for variable_id, slot_name, slot_id in self.slots.get(node_id, []):
                node.slot_variables.add(original_variable_node_id=variable_id,
                                        slot_name=slot_name, slot_variable_node_id=slot_id)
            if is_variable(obj):
                node.attributes.add(name="VARIABLE_VALUE", full_name=obj.op.name,
                                    checkpoint_key=self.keys[id(obj)][1])
            node.has_checkpoint_values.value = has_values[node_id]
        return graph

    def _has_values(self) -> List[bool]:
        has = [is_variable(obj) for obj in self.nodes]
        changed = True
        while changed:
            changed = False
            for node_id, refs in enumerate(self.children):
                targets = [c for _, c in refs] + [s for _, _, s in self.slots.get(node_id, [])]
                if not has[node_id] and any(has[c] for c in targets):
                    has[node_id] = changed = True
        return has

    def bundle_entries(self, values: Sequence[np.ndarray], with_root_alias: bool = False):
        """The entries of tensor_bundle.write: the proto, then each variable's value
        (`values` in the order of `variables()`)."""
        proto_bytes = self.proto(with_root_alias).SerializeToString()
        entries = [(OBJECT_GRAPH_KEY, "", np.array(proto_bytes, dtype=object), _dt.string)]
        for (variable, key), value in zip(self.keys.values(), values):
            entries.append((key, "", np.asarray(value), variable.dtype.base_dtype))
        return entries


def proto_class():
    """TF's TrackableObjectGraph message class."""
    from tensorboard.compat.proto import trackable_object_graph_pb2
    return trackable_object_graph_pb2.TrackableObjectGraph


def parse_proto(serialized: bytes):
    graph = proto_class()()
    graph.ParseFromString(serialized)
    return graph


# --- matching a checkpoint's graph ---------------------------------------------------------
def match(graph: ObjectGraph, proto) -> Dict[int, int]:
    """proto node id -> node id of `graph`: from the roots, each checkpoint child is
    matched to the object's dependency of the same local name; then each slot of a
    matched optimizer to the slot the optimizer holds for the matched variable. A proto
    node reached again through another object keeps its first match (TF warns of
    inconsistent references there)."""
    bound = {0: 0}
    queue = collections.deque([0])
    while queue:
        proto_id = queue.popleft()
        ours = dict(graph.children[bound[proto_id]])
        for child in proto.nodes[proto_id].children:
            node_id = ours.get(child.local_name)
            if node_id is None or child.node_id in bound:
                continue
            bound[child.node_id] = node_id
            queue.append(child.node_id)
    for proto_id, node_id in list(bound.items()):
        our_slots = {(v, name): s for v, name, s in graph.slots.get(node_id, [])}
        for ref in proto.nodes[proto_id].slot_variables:
            variable_id = bound.get(ref.original_variable_node_id)
            slot_id = our_slots.get((variable_id, ref.slot_name))
            if slot_id is not None and ref.slot_variable_node_id not in bound:
                bound[ref.slot_variable_node_id] = slot_id
    return bound


def node_names(proto) -> Dict[int, str]:
    """Printable names of the proto's nodes, as TF's error messages give them:
    '(root).model.dense' and "(root).opt's state 'm' for (root).w" for a slot."""
    paths = {0: "(root)"}
    queue = collections.deque([0])
    while queue:
        proto_id = queue.popleft()
        for child in proto.nodes[proto_id].children:
            if child.node_id not in paths:
                paths[child.node_id] = paths[proto_id] + "." + child.local_name
                queue.append(child.node_id)
    for proto_id, node in enumerate(proto.nodes):
        for ref in node.slot_variables:
            paths[ref.slot_variable_node_id] = "%s's state '%s' for %s" % (
                paths.get(proto_id), ref.slot_name, paths.get(ref.original_variable_node_id))
    return paths


# --- assigning values ----------------------------------------------------------------------
def assign_values(session, pairs: Sequence[Tuple[object, np.ndarray]]) -> None:
    """Assigns NumPy values to variables in `session`, in one run of their initializers
    with the initial values fed (as `Variable.load`): no op is added, so a restore also
    runs in a finalized graph (a MonitoredSession's)."""
    if not pairs:
        return
    ops, feeds = [], {}
    for variable, value in pairs:
        initializer = variable.initializer
        feeds[initializer.inputs[1]] = np.asarray(
            value, dtype=variable.dtype.base_dtype.as_numpy_dtype)
        ops.append(initializer)
    session.run(ops, feed_dict=feeds)
