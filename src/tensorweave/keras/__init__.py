"""`tf.keras`: TF's Keras as `tensorflow.compat.v1` has it in graph mode, for what TF1-era
programs build models with: layers (layers/), Model, Sequential and Input (engine/),
initializers, regularizers, constraints, activations, losses, and the backend (session,
learning phase, helpers).

  backend.py, backend_ops.py  tf.keras.backend: configuration, learning phase, session,
                              per-graph state; tensor helpers and crossentropies
  initializers.py, regularizers.py, constraints.py, activations.py, losses.py (the loss
                              functions), loss_classes.py (Loss, MeanSquaredError, ...)
  serialization.py            configs of those objects and back
  engine/                     Layer, InputSpec, Node (Keras history), Input, Model,
                              Sequential, summary
  layers/                     core, embeddings, convolutional, pooling, normalization,
                              merge, activation, reshaping
  models.py                   tf.keras.models (saving and loading are not supported)
  optimizers.py               tf.keras.optimizers: not supported (TF2 OptimizerV2)
  utils.py                    tf.keras.utils: to_categorical, normalize, get_source_inputs

Training loops (`compile`, `fit`, `evaluate`, `predict`, saving) are not implemented:
they raise NotImplementedError; train with a tf.train optimizer on the model's outputs.

Imported on first access of `tf.keras` (tensorweave.__getattr__), so that `import
tensorweave` does not pay for it; importing it registers its exports and installs them.
"""
import sys as _sys

from tensorweave.framework import api_export as _api
from tensorweave.keras import (  # noqa: F401
    activations, backend, backend_ops, constraints, initializers, loss_classes, losses,
    regularizers)
from tensorweave.keras import layers, models, optimizers, utils  # noqa: F401
from tensorweave.keras.engine.input_layer import Input  # noqa: F401
from tensorweave.keras.engine.sequential import Sequential  # noqa: F401
from tensorweave.keras.engine.training import Model  # noqa: F401

# Bind the package on its parent before installing: `install` looks `tf.keras` up, and
# while this module is still importing that lookup would re-enter tensorweave.__getattr__.
setattr(_sys.modules["tensorweave"], "keras", _sys.modules[__name__])
_api.install(_sys.modules["tensorweave"])
