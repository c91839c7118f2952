"""Keras' HDF5 weights layout (`save_weights('w.h5')`, `load_weights('w.h5')`), read and
written with h5py, an optional dependency (`pip install tensorweave[keras-h5]`),
imported only when an HDF5 path is used.

The file's attributes 'layer_names' (every layer of the model, weights or not),
'backend' and 'keras_version'; one group per layer, named after it, whose attribute
'weight_names' lists its weights' names ('dense/kernel:0', trainable weights first) and
which holds one dataset per weight under that name; a group 'top_level_model_weights'
for the weights the model holds itself. Loading by topology pairs the layers that have
weights, in order; `by_name` pairs layers by name. Keras' conversions of files from
Keras 1 or of CuDNN RNN weights are not done. The same layout, written into and read
from an open group, is the 'model_weights' group of a whole-model file
(saving_model_hdf5.py).
"""
from __future__ import annotations

import os

import numpy as np

from tensorweave.keras import backend

_KERAS_VERSION = b"2.15.0"
_HEADER_LIMIT = 64512  # bytes an HDF5 attribute may hold


def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError("Keras' HDF5 weights format ('.h5' paths, save_format='h5') needs "
                          "h5py, which is not installed: pip install 'tensorweave[keras-h5]' "
                          "(or h5py), or use the TensorFlow checkpoint format (a path "
                          "without '.h5')") from None
    return h5py


def _layer_weights(layer) -> list:
    """The weights of `layer` in Keras' HDF5 order: trainable, then non-trainable."""
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def _save_subset(group, weights) -> None:
    values = backend.batch_get_value(weights)
    _save_names(group, "weight_names", [w.name.encode("utf8") for w in weights])
    for weight, value in zip(weights, values):
        value = np.asarray(value)
        dataset = group.create_dataset(weight.name, value.shape, dtype=value.dtype)
        if not value.shape:
            dataset[()] = value
        else:
            dataset[:] = value


def _save_names(group, name: str, names: list) -> None:
    """The list attribute `name`, split into 'name0', 'name1', ... when it exceeds
    HDF5's object header limit (as Keras)."""
    chunks = 1
    while sum(len(n) for n in names) / chunks > _HEADER_LIMIT:
        chunks += 1
    if chunks == 1:
        group.attrs[name] = names
        return
    for i, part in enumerate(np.array_split(np.array(names, dtype=object), chunks)):
        group.attrs["%s%d" % (name, i)] = list(part)


def _load_names(group, name: str) -> list:
    if name in group.attrs:
        names = list(group.attrs[name])
    else:
        names, i = [], 0
        while "%s%d" % (name, i) in group.attrs:
            names.extend(group.attrs["%s%d" % (name, i)])
            i += 1
    return [n.decode("utf8") if isinstance(n, bytes) else str(n) for n in names]


def save_weights(model, filepath: str, overwrite: bool = True) -> None:
    """Writes the model's weights in Keras' layout (see the module docstring)."""
    h5py = _h5py()
    if not overwrite and os.path.isfile(filepath):
        return
    with h5py.File(filepath, "w") as f:
        save_weights_to_group(f, model)


def save_weights_to_group(group, model) -> None:
    """Writes the model's weights into an open h5py File or Group (the file itself, or
    the 'model_weights' group of a whole-model file)."""
    layers = model.layers
    _save_names(group, "layer_names", [layer.name.encode("utf8") for layer in layers])
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = _KERAS_VERSION
    for layer in sorted(layers, key=lambda x: x.name):
        _save_subset(group.create_group(layer.name), _layer_weights(layer))
    _save_subset(group.create_group("top_level_model_weights"), _top_level_weights(model))


def _top_level_weights(model) -> list:
    """The weights the model holds itself (not through its layers)."""
    return list(model._trainable_weights) + list(model._non_trainable_weights)


def load_weights(model, filepath: str, by_name: bool = False,
                 skip_mismatch: bool = False) -> None:
    """Assigns the weights of a Keras HDF5 weights file (or the 'model_weights' group of
    a whole-model file) to the model, by topology or by layer name.

    Raises:
      ValueError: a different number of layers with weights, or of weights in a
        layer, or another shape (unless `skip_mismatch` with `by_name`); a subclassed
        model that has no weights yet.
    """
    h5py = _h5py()
    if not model._is_graph_network and not model.built:
        raise ValueError("Unable to load weights saved in HDF5 format into a subclassed "
                         "Model which has not created its variables yet. Call the Model "
                         "first, then load the weights.")
    with h5py.File(filepath, "r") as f:
        if "layer_names" not in f.attrs and "model_weights" in f:
            f = f["model_weights"]
        load_weights_from_group(f, model, by_name, skip_mismatch, filepath)


def load_weights_from_group(group, model, by_name: bool = False,
                            skip_mismatch: bool = False, filepath: str = "") -> None:
    """Assigns the weights an open h5py File or Group holds (as `save_weights_to_group`
    writes them) to the model; raises as `load_weights`."""
    saved = [(name, [np.asarray(group[name][w])
                     for w in _load_names(group[name], "weight_names")])
             for name in _load_names(group, "layer_names")]
    top_level = None
    if "top_level_model_weights" in group:
        top = group["top_level_model_weights"]
        top_level = [np.asarray(top[w]) for w in _load_names(top, "weight_names")]
    if by_name:
        pairs = _pairs_by_name(model, saved, skip_mismatch)
    else:
        pairs = _pairs_by_topology(model, saved, filepath)
        if top_level is not None:
            weights = _top_level_weights(model)
            if len(weights) != len(top_level):
                raise ValueError("Weight count mismatch for top-level weights when loading "
                                 "weights from file. Model expects %d top-level weight(s). "
                                 "Received %d saved top-level weight(s)"
                                 % (len(weights), len(top_level)))
            pairs.extend(zip(weights, top_level))
    backend.batch_set_value(pairs)


def _pairs_by_topology(model, saved, filepath: str) -> list:
    layers = [layer for layer in model.layers if _layer_weights(layer)]
    saved = [(name, values) for name, values in saved if values]
    if len(layers) != len(saved):
        raise ValueError("Layer count mismatch when loading weights from file. Model "
                         "expected %d layers, found %d saved layers." % (len(layers),
                                                                         len(saved)))
    pairs = []
    for layer, (name, values) in zip(layers, saved):
        weights = _layer_weights(layer)
        if len(weights) != len(values):
            raise ValueError("Weight count mismatch for layer #%d (named %s in the current "
                             "model, %s in the save file). Layer expects %d weight(s). "
                             "Received %d saved weight(s)" % (layers.index(layer), layer.name,
                                                              name, len(weights),
                                                              len(values)))
        pairs.extend(_checked(layer.name, weights, values, False))
    return pairs


def _pairs_by_name(model, saved, skip_mismatch: bool) -> list:
    layers_by_name = {}
    for layer in model.layers:
        layers_by_name.setdefault(layer.name, []).append(layer)
    pairs = []
    # Keras numbers a layer by its place among the saved layers in its messages
    for index, (name, values) in enumerate(saved):
        for layer in layers_by_name.get(name, []):
            weights = _layer_weights(layer)
            label = "#%d (named %s)" % (index, layer.name)
            if len(weights) != len(values):
                if skip_mismatch:
                    continue
                raise ValueError("Weight count mismatch for layer %s. Layer expects %d "
                                 "weight(s). Received %d saved weight(s)"
                                 % (label, len(weights), len(values)))
            pairs.extend(_checked(label, weights, values, skip_mismatch))
    return pairs


def _checked(label: str, weights, values, skip_mismatch: bool) -> list:
    """(weight, value) pairs of one layer (named `label` in messages), shapes checked."""
    pairs = []
    for weight, value in zip(weights, values):
        shape = tuple(weight.shape.as_list())
        if shape != value.shape:
            if skip_mismatch:
                continue
            raise ValueError("Shape mismatch in layer %s for weight %s. Weight expects "
                             "shape %s. Received saved weight with shape %s"
                             % (label, weight.name, shape, value.shape))
        pairs.append((weight, value))
    return pairs
