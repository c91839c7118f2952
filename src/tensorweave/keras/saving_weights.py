"""`Model.save_weights` / `load_weights` in TF's object-based checkpoint format, which TF
2.15's Keras writes and reads (`save_format='tf'`, the default for paths not ending in
'.h5'/'.keras'); Keras' HDF5 weights layout lives in saving_hdf5.py (h5py optional).

The checkpoint's object graph, keys and proto are train/object_checkpoint.py's, rooted
at the model: e.g. 'layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE'; a compiled
model's optimizer is its child 'optimizer' (slot keys '<variable path>/.OPTIMIZER_SLOT/
optimizer/<slot>/...'), and the proto has TF's 'root' alias of the root. Optimizer
values whose variables do not exist yet when loading (the slots are made with the train
function) are kept and assigned once they exist, as TF's deferred restoration does.
"""
from __future__ import annotations

import os
from typing import List

from tensorweave.framework import errors
from tensorweave.keras import backend
from tensorweave.train import object_checkpoint

OBJECT_GRAPH_KEY = object_checkpoint.OBJECT_GRAPH_KEY
ObjectGraph = object_checkpoint.ObjectGraph


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
    values = backend.batch_get_value(graph.variables())
    # as TF's checkpoint writer: the prefix's missing directories are made
    os.makedirs(os.path.dirname(filepath) or ".", exist_ok=True)
    tensor_bundle.write(filepath, graph.bundle_entries(values, with_root_alias=True))
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
