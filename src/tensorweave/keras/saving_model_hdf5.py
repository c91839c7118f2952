"""Whole Keras models in one HDF5 file: `Model.save`, `tf.keras.models.save_model` and
`tf.keras.models.load_model`, in the layout TF 2.15's Keras writes in graph mode (its
legacy HDF5 format, TF 1.x's only one), so files move both ways.

The file's attributes:
  'keras_version', 'backend';
  'model_config': the JSON of {'class_name', 'config'} (keras/saving.py);
  'training_config' (a model compiled with a Keras optimizer, saved with the optimizer):
    the JSON of what `compile` got: 'loss', 'metrics', 'loss_weights',
    'sample_weight_mode', 'weighted_metrics' (objects as their configs, functions by
    name), and 'optimizer_config' ({'class_name', 'config'} of the optimizer).
Its groups:
  'model_weights': the weights as `save_weights('w.h5')` writes them (saving_hdf5.py);
  'optimizer_weights' (with the training config, once the optimizer has weights): the
    attribute 'weight_names' and one dataset per optimizer weight, named by its
    variable ('training/Adam/dense/kernel/m:0', each '/' a nested group), in the
    optimizer's order (iterations, then the slots).

Loading rebuilds the model from its config and assigns its weights; with `compile`
and a training config it compiles the model with the optimizer, losses and metrics the
config names, creates the optimizer's weights for the model's trainable weights and
assigns the saved ones, so the next training step is the one the saved model would
have taken.

The format: HDF5 unless save_format is 'tf'/'tensorflow' and the path does not end in
'.h5', '.keras' or '.hdf5' (TF 1.x's rule; TF 2.x defaults to SavedModel). TF's
SavedModel directory is neither written nor read: NotImplementedError.
"""
from __future__ import annotations

import json
import logging
import os
from typing import Dict, Optional

import numpy as np

import tensorweave as tf
from tensorweave.keras import backend, saving, saving_hdf5, serialization

_log = logging.getLogger("tensorweave")

_NO_SAVED_MODEL = ("tensorweave does not write or read TF's SavedModel format: save in "
                   "Keras' HDF5 format (save_format='h5', or a path ending in '.h5'), or "
                   "save the architecture with model.to_json() and the weights with "
                   "model.save_weights(path)")
# metric names compile resolves from the output's shape and loss: kept as names
_METRICS_KEPT_AS_NAMES = ("accuracy", "acc", "crossentropy", "ce")


def ask_to_proceed_with_overwrite(filepath) -> bool:
    """Asks on stdin whether to overwrite `filepath` ('y' or 'n', asked again until one
    of them); True to overwrite."""
    answer = input("[WARNING] %s already exists - overwrite? [y/n]" % filepath)
    answer = answer.strip().lower()
    while answer not in ("y", "n"):
        answer = input('Enter "y" (overwrite) or "n" (cancel).').strip().lower()
    if answer == "n":
        return False
    print("[TIP] Next time specify overwrite=True!")
    return True


def _is_h5py_file(obj) -> bool:
    try:
        import h5py
    except ImportError:
        return False
    return isinstance(obj, h5py.File)


def _is_hdf5_path(filepath) -> bool:
    return isinstance(filepath, (str, os.PathLike)) and \
        os.fspath(filepath).endswith((".h5", ".keras", ".hdf5"))


def model_format(filepath, save_format) -> str:
    """'h5' or 'tf' (SavedModel), as TF's Keras decides in graph mode: HDF5 unless
    `save_format` is 'tf'/'tensorflow' and `filepath` is neither an HDF5 path nor an
    h5py.File.

    Raises:
      ValueError: an unknown format.
    """
    if save_format and save_format not in ("h5", "hdf5", "keras", "tf", "tensorflow"):
        raise ValueError("Unknown `save_format` argument. Expected one of 'keras', 'tf', "
                         "or 'h5'. Received: save_format=%s" % (save_format,))
    if save_format in ("tf", "tensorflow") and not _is_h5py_file(filepath) and \
            not _is_hdf5_path(filepath):
        return "tf"
    return "h5"


# --- saving --------------------------------------------------------------------------------
def save_model(model, filepath, overwrite: bool = True, include_optimizer: bool = True,
               save_format=None, signatures=None, options=None) -> None:
    """`Model.save` / `tf.keras.models.save_model` (see the module docstring); with
    `overwrite=False` and an existing file, asks on stdin first.

    Raises:
      NotImplementedError: the SavedModel format, or a subclassed model.
      ValueError: an unknown format, or a model without weights yet.
      ImportError: h5py is not installed.
    """
    if not _is_h5py_file(filepath):
        filepath = os.fspath(filepath)
    if model_format(filepath, save_format) == "tf":
        raise NotImplementedError("Model.save(%r, save_format=%r): %s"
                                  % (filepath, save_format, _NO_SAVED_MODEL))
    from tensorweave.keras.engine.sequential import Sequential
    if not getattr(model, "_is_graph_network", False) and not isinstance(model, Sequential):
        raise NotImplementedError(
            "Saving the model to HDF5 format requires the model to be a Functional model or "
            "a Sequential model. It does not work for subclassed models, because such "
            "models are defined via the body of a Python method, which isn't safely "
            "serializable. Consider saving to the Tensorflow SavedModel format (by setting "
            'save_format="tf") or using `save_weights`.')
    h5py = saving_hdf5._h5py()
    model._assert_weights_created()
    if isinstance(filepath, h5py.File):
        _save_to_file(filepath, model, include_optimizer)
        return
    if not overwrite and os.path.isfile(filepath) and \
            not ask_to_proceed_with_overwrite(filepath):
        return
    dirpath = os.path.dirname(filepath)
    if dirpath and not os.path.exists(dirpath):
        os.makedirs(dirpath)
    with h5py.File(filepath, mode="w") as f:
        _save_to_file(f, model, include_optimizer)


def _save_to_file(f, model, include_optimizer: bool) -> None:
    for key, value in model_metadata(model, include_optimizer).items():
        if isinstance(value, (dict, list, tuple)):
            value = json.dumps(value, default=serialization.get_json_type).encode("utf8")
        f.attrs[key] = value
    saving_hdf5.save_weights_to_group(f.create_group("model_weights"), model)
    optimizer = getattr(model, "optimizer", None)
    if include_optimizer and optimizer is not None and _is_keras_optimizer(optimizer):
        _save_optimizer_weights(f, optimizer)
    f.flush()


def _is_keras_optimizer(optimizer) -> bool:
    from tensorweave.keras.optimizer_v2 import TFOptimizer
    return not isinstance(optimizer, (TFOptimizer, list))


def model_metadata(model, include_optimizer: bool = True) -> dict:
    """The root attributes: keras_version, backend, model_config and (for a compiled
    model saved with its Keras optimizer) training_config."""
    metadata = {"keras_version": saving.KERAS_VERSION, "backend": backend.backend(),
                "model_config": {"class_name": saving.class_name(model),
                                 "config": model.get_config()}}
    optimizer = getattr(model, "optimizer", None)
    if not include_optimizer or optimizer is None:
        return metadata
    if not _is_keras_optimizer(optimizer):
        _log.warning("TensorFlow optimizers do not make it possible to access optimizer "
                     "attributes or optimizer state after instantiation. As a result, we "
                     "cannot save the optimizer as part of the model save file. You will "
                     "have to compile your model again after loading it. Prefer using a "
                     "Keras optimizer instead (see keras.io/optimizers).")
        return metadata
    if model._compile_was_called:
        config = {"loss": model.loss, "metrics": model._compile_metrics,
                  "loss_weights": model.loss_weights,
                  "sample_weight_mode": model.sample_weight_mode,
                  "weighted_metrics": model._compile_weighted_metrics}
        config = tf.nest.map_structure(
            lambda x: serialization.serialize_object(x) if callable(x) else x, config)
        config["optimizer_config"] = {
            "class_name": serialization.get_registered_name(type(optimizer)),
            "config": optimizer.get_config()}
        metadata["training_config"] = config
    return metadata


def _save_optimizer_weights(f, optimizer) -> None:
    """The group 'optimizer_weights', laid out as a layer's group of model_weights."""
    if optimizer.weights:
        saving_hdf5._save_subset(f.create_group("optimizer_weights"), optimizer.weights)


# --- loading -------------------------------------------------------------------------------
def load_model(filepath, custom_objects: Optional[Dict] = None,
               compile: bool = True):  # noqa: A002  (TF's argument name)
    """`tf.keras.models.load_model` of an HDF5 model file (a path or an open h5py.File).

    Raises:
      OSError: no file at `filepath`, or not a file or h5py.File.
      NotImplementedError: a directory (a SavedModel).
      ValueError: a file without a model config; an unknown layer, loss, metric or
        optimizer (not among `custom_objects`).
      ImportError: h5py is not installed.
    """
    if _is_h5py_file(filepath):
        return _load_from_file(filepath, custom_objects, compile, filepath)
    if not isinstance(filepath, (str, os.PathLike)):
        raise OSError("Unable to load model. Filepath is not an hdf5 file (or h5py is not "
                      "available) or SavedModel. Received: filepath=%s" % (filepath,))
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise OSError("No file or directory found at %s" % filepath)
    if os.path.isdir(filepath):
        raise NotImplementedError("tf.keras.models.load_model(%r): a directory is a "
                                  "SavedModel; %s" % (filepath, _NO_SAVED_MODEL))
    h5py = saving_hdf5._h5py()
    with h5py.File(filepath, mode="r") as f:
        return _load_from_file(f, custom_objects, compile, filepath)


def _attribute(f, name: str):
    value = f.attrs.get(name)
    return value.decode("utf-8") if hasattr(value, "decode") else value


def _load_from_file(f, custom_objects, compile_: bool, filepath):
    custom_objects = serialization.custom_objects_in_effect(custom_objects)
    with serialization.CustomObjectScope(custom_objects):
        return _model_from_file(f, custom_objects, compile_, filepath)


def _model_from_file(f, custom_objects: Dict, compile_: bool, filepath):
    model_config = _attribute(f, "model_config")
    if model_config is None:
        raise ValueError("No model config found in the file at %s." % (filepath,))
    model = saving.model_from_config(json.loads(model_config), custom_objects=custom_objects)
    saving_hdf5.load_weights_from_group(f["model_weights"], model, filepath=str(filepath))
    if not compile_:
        return model
    training_config = _attribute(f, "training_config")
    if training_config is None:
        _log.warning("No training configuration found in the save file, so the model was "
                     "*not* compiled. Compile it manually.")
        return model
    model.compile(**compile_args_from_training_config(json.loads(training_config),
                                                      custom_objects),
                  from_serialized=True)
    if "optimizer_weights" in f:
        _restore_optimizer_weights(model, f["optimizer_weights"])
    return model


def _restore_optimizer_weights(model, group) -> None:
    try:
        with model._graph_of_model().as_default():
            model.optimizer._create_all_weights(model.trainable_weights)
    except (NotImplementedError, AttributeError):
        _log.warning("Error when creating the weights of optimizer %s, making it "
                     "impossible to restore the saved optimizer state. As a result, your "
                     "model is starting with a freshly initialized optimizer.",
                     model.optimizer)
    values = [np.asarray(group[name][()])
              for name in saving_hdf5._load_names(group, "weight_names")]
    try:
        model.optimizer.set_weights(values)
    except ValueError:
        _log.warning("Error in loading the saved optimizer state. As a result, your model "
                     "is starting with a freshly initialized optimizer.")


def compile_args_from_training_config(training_config: dict,
                                      custom_objects: Optional[Dict] = None) -> dict:
    """The `compile` arguments a training config describes (TF reads no
    sample_weight_mode back: it is always None)."""
    from tensorweave.keras import losses, metrics, optimizers
    with serialization.CustomObjectScope(custom_objects):
        optimizer = optimizers.deserialize(training_config["optimizer_config"])
        loss = _deserialize_nested(losses.deserialize, training_config.get("loss"))

        def deserialize_metric(config):
            if config in _METRICS_KEPT_AS_NAMES:
                return config
            return metrics.deserialize(config)

        return dict(optimizer=optimizer, loss=loss,
                    metrics=_deserialize_nested(deserialize_metric,
                                                training_config.get("metrics")),
                    weighted_metrics=_deserialize_nested(
                        deserialize_metric, training_config.get("weighted_metrics")),
                    loss_weights=training_config["loss_weights"], sample_weight_mode=None)


def _deserialize_nested(deserialize, config):
    """`deserialize` applied to the objects (strings, {'class_name', ...} dicts) of a
    nested structure of lists and dicts.

    Raises:
      ValueError: a value of another type.
    """
    if config is None:
        return None
    if isinstance(config, str) or isinstance(config, dict) and "class_name" in config:
        return deserialize(config)
    if isinstance(config, dict):
        return {k: _deserialize_nested(deserialize, v) for k, v in config.items()}
    if isinstance(config, (list, tuple)):
        return [_deserialize_nested(deserialize, v) for v in config]
    raise ValueError("Saved configuration not understood. Configuration should be a "
                     "dictionary, string, tuple or list. Received: config=%s." % (config,))
