"""`tf.keras.models`: Model and Sequential (exported from the engine); configs, JSON and
`clone_model` are in keras/saving.py; `save_model` and `load_model` (whole models in
Keras' HDF5 format; not as a SavedModel) in keras/saving_model_hdf5.py."""
from __future__ import annotations

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import saving  # noqa: F401  (exports model_from_json, clone_model)
from tensorweave.keras import saving_model_hdf5


@tf_export("keras.models.save_model")
def save_model(model, filepath, overwrite: bool = True, include_optimizer: bool = True,
               save_format=None, signatures=None, options=None, save_traces: bool = True):
    """Saves the whole model in Keras' HDF5 format (see `Model.save`)."""
    saving_model_hdf5.save_model(model, filepath, overwrite=overwrite,
                                 include_optimizer=include_optimizer,
                                 save_format=save_format, signatures=signatures,
                                 options=options)


@tf_export("keras.models.load_model")
def load_model(filepath, custom_objects=None, compile: bool = True,  # noqa: A002
               options=None, safe_mode: bool = True):
    """The model a Keras HDF5 model file holds (a path or an open h5py.File), compiled
    with its saved optimizer state when `compile` and the file has a training config."""
    return saving_model_hdf5.load_model(filepath, custom_objects=custom_objects,
                                        compile=compile)
