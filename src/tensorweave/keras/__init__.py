"""`tf.keras`: TF's Keras as `tensorflow.compat.v1` has it in graph mode, for what TF1-era
programs build models with: layers (layers/), Model, Sequential and Input (engine/),
initializers, regularizers, constraints, activations, losses, and the backend (session,
learning phase, helpers).

  backend.py, backend_ops.py  tf.keras.backend: configuration, learning phase, session,
                              per-graph state; tensor helpers, crossentropies, rnn
  backend_math.py, backend_nn.py  more of tf.keras.backend: variables from shapes,
                              updates, math and array helpers, map_fn/foldl/foldr;
                              convolutions, pooling, padding, resizing, batch norm,
                              random tensors, focal crossentropies, CTC
  initializers.py, regularizers.py, constraints.py, activations.py, losses.py (the loss
                              functions), loss_classes.py (Loss, MeanSquaredError, ...)
  serialization.py            configs of those objects and back; custom objects
  saving.py                   model configs and JSON, clone_model, layers.serialize,
                              Lambda configs (functions by name)
  saving_weights.py, saving_hdf5.py  save_weights/load_weights: TF's object-based
                              checkpoints; Keras' HDF5 layout (h5py, optional)
  engine/                     Layer, InputSpec, Node (Keras history), masks, Input, Model,
                              Sequential, summary; the training loop: compile and the
                              loss (compile_utils), fit/evaluate/predict (training_v1,
                              training_arrays), data checks (training_utils)
  layers/                     core, embeddings, convolutional, pooling, normalization,
                              merge, activation, reshaping, regularization (noise,
                              spatial dropout), recurrent (RNN, LSTM, GRU, cells),
                              wrappers, convolutional_recurrent (ConvLSTM1D/2D/3D),
                              attention (Attention, AdditiveAttention,
                              MultiHeadAttention), einsum_dense (EinsumDense)
  models.py                   tf.keras.models (save_model/load_model: Keras' HDF5 files,
                              saving_model_hdf5.py)
  optimizer_v2.py, optimizers.py  tf.keras.optimizers: the legacy OptimizerV2 classes TF's
                              graph mode uses (SGD, Adam, RMSprop, Adagrad, Adadelta,
                              Adamax, Nadam, Ftrl), and the wrapper of tf.train optimizers
  learning_rate_schedule.py   tf.keras.optimizers.schedules: ExponentialDecay, ...,
                              CosineDecayRestarts, serialize/deserialize
  metrics.py                  tf.keras.metrics: metric functions and stateful Metrics
  metrics_confusion.py        the confusion-matrix Metrics: TruePositives, ..., Precision,
                              Recall, AUC, SensitivityAtSpecificity, ..., IoU, MeanIoU, ...
  metrics_scores.py           FBetaScore, F1Score, R2Score, MeanRelativeError
  callbacks.py                tf.keras.callbacks: History, EarlyStopping, CSVLogger,
                              ModelCheckpoint, ...
  utils.py                    tf.keras.utils: to_categorical, normalize, get_source_inputs
  data_utils.py               tf.keras.utils.get_file: downloads cached under ~/.keras,
                              hash checks, tar/zip extraction
  applications/               tf.keras.applications: VGG16/19, ResNet50/101/152 and V2,
                              MobileNet, MobileNetV2, InceptionV3, Xception, DenseNet
                              121/169/201 with Keras' layer names and weights files,
                              preprocess_input, decode_predictions
  preprocessing/              tf.keras.preprocessing.sequence.pad_sequences (also
                              tf.keras.utils.pad_sequences); preprocessing.text:
                              Tokenizer, one_hot, hashing_trick, ...; preprocessing.image:
                              ImageDataGenerator, its iterators, random_rotation, ...,
                              load_img/img_to_array/array_to_img/save_img (also in
                              tf.keras.utils)

`Model.compile`, `fit`, `evaluate`, `predict` and the `*_on_batch` methods run as TF
2.15's Keras runs them in graph mode (on NumPy data, in the Keras session), and so do
`get_config`/`to_json`/`save_weights`/`load_weights` and whole-model HDF5 files (`save`,
`load_model`).

Imported on first access of `tf.keras` (tensorweave.__getattr__), so that `import
tensorweave` does not pay for it; importing it registers its exports and installs them.
"""
import sys as _sys

from tensorweave.framework import api_export as _api
from tensorweave.keras import (  # noqa: F401
    activations, backend, backend_ops, constraints, initializers, loss_classes, losses,
    regularizers)
from tensorweave.keras import layers, models, optimizers, utils  # noqa: F401
from tensorweave.keras import callbacks, metrics, metrics_confusion  # noqa: F401
from tensorweave.keras import learning_rate_schedule, metrics_scores  # noqa: F401
from tensorweave.keras import backend_math, backend_nn  # noqa: F401
from tensorweave.keras import preprocessing  # noqa: F401
from tensorweave.keras import applications, data_utils  # noqa: F401
from tensorweave.keras.engine.input_layer import Input  # noqa: F401
from tensorweave.keras.engine.sequential import Sequential  # noqa: F401
from tensorweave.keras.engine.training import Model  # noqa: F401

# Bind the package on its parent before installing: `install` looks `tf.keras` up, and
# while this module is still importing that lookup would re-enter tensorweave.__getattr__.
setattr(_sys.modules["tensorweave"], "keras", _sys.modules[__name__])
_api.install(_sys.modules["tensorweave"])
