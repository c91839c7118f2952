"""`tf.keras.models`: Model and Sequential (exported from the engine); configs, JSON and
`clone_model` are in keras/saving.py; `save_model` and `load_model` (whole models, as a
SavedModel or an HDF5 file) are not supported."""
from __future__ import annotations

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import saving  # noqa: F401  (exports model_from_json, clone_model)
from tensorweave.keras import saving_weights


@tf_export("keras.models.save_model")
def save_model(model, filepath, overwrite: bool = True, include_optimizer: bool = True,
               save_format=None, signatures=None, options=None, save_traces: bool = True):
    """Not supported: raises NotImplementedError (see `Model.save`)."""
    saving_weights.save_model(model, filepath)


@tf_export("keras.models.load_model")
def load_model(filepath, custom_objects=None, compile: bool = True,  # noqa: A002
               options=None, safe_mode: bool = True):
    """Not supported: raises NotImplementedError (see `Model.save`)."""
    saving_weights.load_model(filepath)
