"""`Model.save_weights` / `load_weights` in TF's object-based checkpoint format, which TF
2.15's Keras writes and reads (`save_format='tf'`, the default for paths not ending in
'.h5'/'.keras'); Keras' HDF5 weights layout lives in saving_hdf5.py (h5py optional).

A checkpoint is a TF V2 bundle (ops/io/tensor_bundle.py) whose keys name each variable
by its path in the object graph from the model: a functional or Sequential model's
layers are its children 'layer-<i>' (every layer) and 'layer_with_weights-<j>' (layers
with weights, counted apart), listed in that order so the latter gives the key; any other
layer's children are its weights (named as `add_weight` named them) and the layers,
lists and dicts of layers set as its attributes. A variable's key is its first path in a
breadth-first walk + '/.ATTRIBUTES/VARIABLE_VALUE', e.g.
'layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE'. The walk is also written as a
TrackableObjectGraph proto under '_CHECKPOINTABLE_OBJECT_GRAPH', which TF needs to match
objects when it restores. A compiled model's optimizer is its child 'optimizer', whose
children are 'iter' and its hyperparameter variables; a slot variable has no path of its
own: its key is its variable's path + '/.OPTIMIZER_SLOT/optimizer/<slot>', and the proto
lists it among the optimizer's slot variables. Optimizer values whose variables do not
exist yet when loading (the slots are made with the train function) are kept and
assigned once they exist, as TF's deferred restoration does.
"""
from __future__ import annotations

import collections
import os
from typing import Dict, List, Tuple

import numpy as np

import tensorweave as tf
from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.keras import backend

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
# attributes of tensorweave's Keras classes that hold layers but are not checkpoint
# dependencies in TF (its bookkeeping is untracked too)
_UNTRACKED = frozenset({"_layer_list", "_network_layers", "_input_layers", "_output_layers",
                        "_inbound_nodes", "_outbound_nodes", "_nested_inputs",
                        "_nested_outputs", "inputs", "outputs"})


# --- the object graph ----------------------------------------------------------------------
def _is_layer(obj) -> bool:
    from tensorweave.layers import base as layers_base
    return isinstance(obj, layers_base.Layer)


def _escape(name: str) -> str:
    """TF's escaping of a local name in a checkpoint key ('/' and '.')."""
    return name.replace(".", ".S").replace("/", ".")


def _weight_name(variable) -> str:
    """The name `add_weight` gave: the last component of the variable's name."""
    return variable.op.name.split("/")[-1]


def _children(obj) -> List[Tuple[str, object]]:
    """(local name, object) of the dependencies of `obj`, in TF's order."""
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _trackable(v)]
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items() if _trackable(v)]
    if _is_optimizer(obj):
        return _optimizer_children(obj)
    children = []
    if getattr(obj, "_is_graph_network", False) or type(obj).__name__ == "Sequential":
        with_weights = 0
        for i, layer in enumerate(obj.layers):
            if layer.weights:
                children.append(("layer_with_weights-%d" % with_weights, layer))
                with_weights += 1
            children.append(("layer-%d" % i, layer))
        return children + _optimizer_of(obj)
    for variable in list(obj.__dict__.get("_trainable_weights", [])) + \
            list(obj.__dict__.get("_non_trainable_weights", [])):
        children.append((_weight_name(variable), variable))
    for name, value in vars(obj).items():
        if name in _UNTRACKED or name.startswith("__"):
            continue
        if name.startswith("_") and not _is_layer(value):
            continue  # private lists and dicts are bookkeeping
        if _is_layer(value) or isinstance(value, tf.Variable) or _holds_layers(value):
            if all(value is not v or name != n for n, v in children):
                children.append((name, value))
    return children + _optimizer_of(obj)


def _is_optimizer(obj) -> bool:
    from tensorweave.keras.optimizer_v2 import OptimizerV2
    return isinstance(obj, OptimizerV2)


def _optimizer_of(model) -> List[Tuple[str, object]]:
    """[('optimizer', the optimizer)] for a model compiled with one, else []."""
    optimizer = model.__dict__.get("optimizer")
    return [("optimizer", optimizer)] if _is_optimizer(optimizer) else []


def _optimizer_children(optimizer) -> List[Tuple[str, object]]:
    """'iter', then the hyperparameters made variables (TF's order)."""
    children = []
    if optimizer._iterations is not None:
        children.append(("iter", optimizer._iterations))
    for name, value in sorted(optimizer._hyper.items()):
        if isinstance(value, tf.Variable):
            children.append((name, value))
    return children


def _holds_layers(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_trackable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) for k in value) and \
            any(_trackable(v) for v in value.values())
    return False


def _trackable(value) -> bool:
    return _is_layer(value) or isinstance(value, tf.Variable) or _holds_layers(value)


class ObjectGraph:
    """The breadth-first walk of the dependencies of `root`.

    Fields:
      nodes: the objects, root first, in the order of the walk.
      children: per node, [(local name, node id)] (every dependency, also of objects
        met before).
      paths: per node, its first path of local names from the root.
      keys: id(variable) -> (variable, checkpoint key).
      slots: per optimizer node id, [(variable node id, slot name, slot node id)].
    """

    def __init__(self, root):
        self.nodes: List = [root]
        self.children: List[List[Tuple[str, int]]] = []
        self.paths: List[List[str]] = [[]]
        ids: Dict[int, int] = {id(root): 0}
        self.keys: Dict[int, Tuple[object, str]] = collections.OrderedDict()
        queue = collections.deque([0])
        while queue:
            node_id = queue.popleft()
            obj = self.nodes[node_id]
            refs = []
            for name, child in ([] if isinstance(obj, tf.Variable) else _children(obj)):
                if id(child) not in ids:
                    ids[id(child)] = len(self.nodes)
                    self.nodes.append(child)
                    self.paths.append(self.paths[node_id] + [name])
                    queue.append(ids[id(child)])
                refs.append((name, ids[id(child)]))
            self.children.append(refs)
        self.slots: Dict[int, List[Tuple[int, str, int]]] = {}
        variable_ids = [i for i, obj in enumerate(self.nodes) if isinstance(obj, tf.Variable)]
        for node_id in variable_ids:
            self.keys[id(self.nodes[node_id])] = (self.nodes[node_id],
                                                  self._path(node_id) + _VALUE_SUFFIX)
        for node_id in [i for i, obj in enumerate(self.nodes) if _is_optimizer(obj)]:
            self._add_slots(node_id, variable_ids)

    def _path(self, node_id: int) -> str:
        return "/".join(_escape(n) for n in self.paths[node_id])

    def _add_slots(self, optimizer_id: int, variable_ids: List[int]) -> None:
        """Adds the slot variables of the optimizer, slot by slot (TF's order), as nodes
        with no path and keys under their variable's."""
        optimizer = self.nodes[optimizer_id]
        refs = self.slots.setdefault(optimizer_id, [])
        for slot_name in optimizer._slot_names:
            for node_id in variable_ids:
                slot = optimizer._slots.get(id(self.nodes[node_id]), {}).get(slot_name)
                if slot is None:
                    continue
                slot_id = len(self.nodes)
                self.nodes.append(slot)
                self.children.append([])
                self.paths.append(None)
                refs.append((node_id, slot_name, slot_id))
                key = "%s/.OPTIMIZER_SLOT/%s/%s%s" % (
                    self._path(node_id), self._path(optimizer_id), _escape(slot_name),
                    _VALUE_SUFFIX)
                self.keys[id(slot)] = (slot, key)

    def proto_bytes(self, with_root_alias: bool) -> bytes:
        """The TrackableObjectGraph proto, serialized (with TF's 'root' child of the
        root itself when `with_root_alias`)."""
        from tensorboard.compat.proto import trackable_object_graph_pb2
        graph = trackable_object_graph_pb2.TrackableObjectGraph()
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
            if isinstance(obj, tf.Variable):
                node.attributes.add(name="VARIABLE_VALUE", full_name=obj.op.name,
                                    checkpoint_key=self.keys[id(obj)][1])
            node.has_checkpoint_values.value = has_values[node_id]
        return graph.SerializeToString()

    def _has_values(self) -> List[bool]:
        has = [isinstance(obj, tf.Variable) for obj in self.nodes]
        changed = True
        while changed:
            changed = False
            for node_id, refs in enumerate(self.children):
                targets = [c for _, c in refs] + [s for _, _, s in self.slots.get(node_id, [])]
                if not has[node_id] and any(has[c] for c in targets):
                    has[node_id] = changed = True
        return has


# --- formats -------------------------------------------------------------------------------
def _is_hdf5_path(filepath: str) -> bool:
    return filepath.endswith((".h5", ".keras", ".hdf5"))


def _save_format(filepath: str, save_format) -> str:
    """'tf' or 'h5' from the path and `save_format`, as TF's Keras decides.

    Raises:
      ValueError: an unknown format, or 'tf' for an HDF5 path.
    """
    if save_format is None:
        return "h5" if _is_hdf5_path(filepath) else "tf"
    fmt = save_format.lower().strip()
    if fmt in ("tensorflow", "tf"):
        if _is_hdf5_path(filepath):
            raise ValueError('save_weights got save_format="tf"/"tensorflow", but the '
                             "filepath (%s) looks like an HDF5 file. Omit the \".h5\"/"
                             "\".keras\" when saving in TensorFlow format." % filepath)
        return "tf"
    if fmt in ("hdf5", "h5", "keras"):
        return "h5"
    raise ValueError("Unknown format. Received: `save_format`=%s. Was expecting one of "
                     '{"tf", "h5"}.' % save_format)


def save_weights(model, filepath, overwrite: bool = True, save_format=None, options=None):
    """`Model.save_weights`: TF's object-based checkpoint at the prefix `filepath` (and
    a 'checkpoint' state file next to it naming it), or Keras' HDF5 layout.

    Raises:
      ValueError: weights not created yet, or a bad format.
      ImportError: the HDF5 format without h5py.
    """
    model._assert_weights_created()
    filepath = os.fspath(filepath)
    fmt = _save_format(filepath, save_format)
    if fmt == "h5":
        from tensorweave.keras import saving_hdf5
        return saving_hdf5.save_weights(model, filepath, overwrite)
    if not overwrite and os.path.isfile(filepath + ".index"):
        return None  # TF asks the user; a program run without a terminal keeps the file
    from tensorweave.ops.io import tensor_bundle
    graph = ObjectGraph(model)
    variables = [v for v, _ in graph.keys.values()]
    values = backend.batch_get_value(variables)
    entries = [(OBJECT_GRAPH_KEY, "", np.array(graph.proto_bytes(True), dtype=object),
                _dt.string)]
    for (variable, key), value in zip(graph.keys.values(), values):
        entries.append((key, "", np.asarray(value), variable.dtype.base_dtype))
    tensor_bundle.write(filepath, entries)
    from tensorweave.train import checkpoint_management
    checkpoint_management.update_checkpoint_state_internal(
        os.path.dirname(filepath), filepath, all_model_checkpoint_paths=[filepath],
        save_relative_paths=True)
    return None


def load_weights(model, filepath, by_name: bool = False, skip_mismatch: bool = False,
                 options=None):
    """`Model.load_weights`: from a TF checkpoint every variable of the model whose key
    the checkpoint holds is assigned (by the model's structure) and a
    CheckpointLoadStatus returned; or from Keras' HDF5 layout (None returned).

    Raises:
      ValueError: `skip_mismatch` without `by_name`, or a value of another shape.
      NotImplementedError: `by_name` with a TF checkpoint.
      AssertionError: no variable of the model is in the checkpoint.
      NotFoundError: no checkpoint and no file at `filepath`.
    """
    if skip_mismatch and not by_name:
        raise ValueError("When calling model.load_weights, skip_mismatch can only be set to "
                         "True when by_name is True.")
    filepath = os.fspath(filepath)
    if _is_hdf5_path(filepath) or not _is_tf_checkpoint(filepath):
        if not _is_hdf5_path(filepath) and not os.path.exists(filepath):
            raise errors.NotFoundError(
                None, None, "Unsuccessful TensorSliceReader constructor: Failed to find any "
                "matching files for %s" % filepath)
        from tensorweave.keras import saving_hdf5
        return saving_hdf5.load_weights(model, filepath, by_name, skip_mismatch)
    if by_name:
        raise NotImplementedError("Weights may only be loaded based on topology into Models "
                                  "when loading TensorFlow-formatted weights (got "
                                  "by_name=True to load_weights).")
    from tensorweave.ops.io import tensor_bundle
    reader = tensor_bundle.open_checkpoint(filepath)
    graph = ObjectGraph(model)
    assignments = []
    for variable, key in graph.keys.values():
        if not reader.has_tensor(key):
            continue
        value = reader.read(key)
        shape = variable.shape.as_list()
        if list(value.shape) != shape:
            raise ValueError("Received incompatible tensor with shape %s when attempting to "
                             "restore variable with shape %s and name %s."
                             % (tuple(value.shape), tuple(shape), key))
        assignments.append((variable, value))
    if not assignments:
        raise AssertionError("Nothing except the root object matched a checkpointed value. "
                             "Typically this means that the checkpoint does not match the "
                             "Python program. The checkpoint %s holds %s; the model's "
                             "variables are %s" % (filepath, sorted(reader.tensor_names()),
                                                   [k for _, k in graph.keys.values()]))
    backend.batch_set_value(assignments)
    used = {key for _, key in graph.keys.values() if reader.has_tensor(key)}
    unused = sorted(set(reader.tensor_names()) - used - {OBJECT_GRAPH_KEY})
    unmatched = [key for _, key in graph.keys.values() if key not in used]
    # optimizer state whose variables the train function will make
    model._pending_checkpoint_values = {key: reader.read(key) for key in unused
                                        if _is_optimizer_key(key)}
    return CheckpointLoadStatus(unused, unmatched)


def _is_optimizer_key(key: str) -> bool:
    return key.startswith("optimizer/") or "/.OPTIMIZER_SLOT/" in key


def restore_pending(model) -> None:
    """Assigns the optimizer values `load_weights` kept to the variables that now exist
    (called once the train function made the slots)."""
    pending = model.__dict__.get("_pending_checkpoint_values")
    if not pending:
        return
    assignments = []
    for variable, key in ObjectGraph(model).keys.values():
        value = pending.get(key)
        if value is not None and list(value.shape) == variable.shape.as_list():
            assignments.append((variable, value))
            del pending[key]
    backend.batch_set_value(assignments)


class CheckpointLoadStatus:
    """What `load_weights` returns for a TF checkpoint, as TF's (the values are already
    assigned, so the restore methods do nothing).

    Fields:
      unused_keys: checkpoint keys no variable of the model took (an optimizer's).
      unmatched_keys: keys of the model's variables the checkpoint does not hold.
    """

    def __init__(self, unused_keys: List[str], unmatched_keys: List[str]):
        self.unused_keys = unused_keys
        self.unmatched_keys = unmatched_keys

    def assert_consumed(self):
        """Raises AssertionError unless every value was used and every variable
        restored."""
        if self.unused_keys:
            raise AssertionError("Unused attributes in the checkpoint: %s" % self.unused_keys)
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        """Raises AssertionError unless every variable of the model was restored."""
        if self.unmatched_keys:
            raise AssertionError("Some objects had attributes which were not restored: %s"
                                 % self.unmatched_keys)
        return self

    def assert_nontrivial_match(self):
        """Returns self: `load_weights` already checked that something matched."""
        return self

    def expect_partial(self):
        """Returns self (no warnings are printed for unused values)."""
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: the values are assigned."""

    def initialize_or_restore(self, session=None):
        """Nothing to run: the values are assigned."""


def _is_tf_checkpoint(filepath: str) -> bool:
    from tensorweave.ops.io import checkpoint_format
    return checkpoint_format.checkpoint_exists(filepath)
