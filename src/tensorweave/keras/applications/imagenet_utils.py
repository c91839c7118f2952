"""`tf.keras.applications.imagenet_utils` as TF 2.15's Keras has it: `preprocess_input` in
its three modes ('caffe': RGB to BGR and the ImageNet channel means subtracted; 'tf':
scaled to [-1, 1]; 'torch': scaled to [0, 1], then the channel means subtracted and
divided by the standard deviations) on NumPy arrays (in place when the dtype allows, as
Keras) or tensors, and `decode_predictions` (the ImageNet class index downloaded once
through get_file). Also the checks and steps every application model shares: the input
shape, the weights argument, the input layer, and loading 'imagenet' weights.
"""
from __future__ import annotations

import json
import os
import warnings
from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import activations, backend, backend_ops, layers
from tensorweave.keras.data_utils import get_file
from tensorweave.keras.engine.functional import get_source_inputs
from tensorweave.keras.engine.input_layer import Input
from tensorweave.keras.engine.training import Model

CLASS_INDEX = None
CLASS_INDEX_PATH = ("https://storage.googleapis.com/download.tensorflow.org/"
                    "data/imagenet_class_index.json")
CLASS_INDEX_HASH = "c2c37ea517e94d9795004a39431a14cb"

# The namespaces of the application families: each has decode_predictions (the same
# function in all, as in Keras' modules, which only forward to it).
_FAMILIES = ("densenet", "inception_v3", "mobilenet", "mobilenet_v2", "resnet", "resnet50",
             "resnet_v2", "vgg16", "vgg19", "xception")

_CAFFE_MEAN = [103.939, 116.779, 123.68]
_TORCH_MEAN = [0.485, 0.456, 0.406]
_TORCH_STD = [0.229, 0.224, 0.225]


@tf_export("keras.applications.imagenet_utils.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None, mode: str = "caffe"):
    """Preprocesses a batch of images (values in [0, 255]) as an ImageNet model expects.

    Args:
      x: a float NumPy array or a tensor, 3-D or 4-D with 3 color channels. A NumPy
        array of a float dtype is modified in place (Keras' behaviour; pass a copy to
        keep it); another dtype is converted to floatx() first.
      data_format: 'channels_last' or 'channels_first' (None: the backend's).
      mode: 'caffe' (RGB to BGR, ImageNet channel means subtracted), 'tf' (scaled to
        [-1, 1]) or 'torch' (scaled to [0, 1], then normalized by the ImageNet channel
        means and standard deviations).

    Returns:
      The preprocessed array or tensor.

    Raises:
      ValueError: an unknown `mode` or `data_format`.
    """
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError("Expected mode to be one of `caffe`, `tf` or `torch`. "
                         "Received: mode=%s" % (mode,))
    if data_format is None:
        data_format = backend.image_data_format()
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Expected data_format to be one of `channels_first` or "
                         "`channels_last`. Received: data_format=%s" % (data_format,))
    if isinstance(x, np.ndarray):
        return _preprocess_numpy_input(x, data_format, mode)
    return _preprocess_symbolic_input(x, data_format, mode)


def _channel_views(x: np.ndarray, data_format: str) -> list:
    """Views of the three channels of a 3-D or 4-D image array."""
    if data_format == "channels_first":
        return [x[i] if x.ndim == 3 else x[:, i] for i in range(3)]
    return [x[..., i] for i in range(3)]


def _preprocess_numpy_input(x: np.ndarray, data_format: str, mode: str) -> np.ndarray:
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype(backend.floatx(), copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        # RGB -> BGR, as a view: the subtractions below write through it.
        if data_format == "channels_first":
            x = x[::-1, ...] if x.ndim == 3 else x[:, ::-1, ...]
        else:
            x = x[..., ::-1]
        mean, std = _CAFFE_MEAN, None
    for i, channel in enumerate(_channel_views(x, data_format)):
        channel -= mean[i]
        if std is not None:
            channel /= std[i]
    return x


def _preprocess_symbolic_input(x, data_format: str, mode: str):
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        if data_format == "channels_first":
            x = x[::-1, ...] if backend.ndim(x) == 3 else x[:, ::-1, ...]
        else:
            x = x[..., ::-1]
        mean, std = _CAFFE_MEAN, None
    mean_tensor = backend.constant(-np.array(mean))
    if backend.dtype(x) != backend.dtype(mean_tensor):
        mean_tensor = tf.cast(mean_tensor, backend.dtype(x))
    x = backend_ops.bias_add(x, mean_tensor, data_format)
    if std is not None:
        std_tensor = backend.constant(np.array(std), dtype=backend.dtype(x))
        if data_format == "channels_first":
            std_tensor = tf.reshape(std_tensor, (-1, 1, 1))
        x = x / std_tensor
    return x


@tf_export("keras.applications.imagenet_utils.decode_predictions",
           *("keras.applications.%s.decode_predictions" % f for f in _FAMILIES))
def decode_predictions(preds, top: int = 5) -> list:
    """Decodes the predictions of an ImageNet model: the class index
    (imagenet_class_index.json) is downloaded once, into `~/.keras/models`.

    Args:
      preds: a NumPy array of predictions, of shape (samples, 1000).
      top: how many of the best classes to return per sample.

    Returns:
      One list per sample of `(class_name, class_description, score)` tuples, best
      first.

    Raises:
      ValueError: `preds` not of shape (samples, 1000).
    """
    global CLASS_INDEX
    if len(preds.shape) != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D "
                         "array of shape (samples, 1000)). Found array with shape: "
                         + str(preds.shape))
    if CLASS_INDEX is None:
        fpath = get_file("imagenet_class_index.json", CLASS_INDEX_PATH,
                         cache_subdir="models", file_hash=CLASS_INDEX_HASH)
        with open(fpath) as f:
            CLASS_INDEX = json.load(f)
    results = []
    for pred in preds:
        top_indices = pred.argsort()[-top:][::-1]
        result = [tuple(CLASS_INDEX[str(i)]) + (pred[i],) for i in top_indices]
        result.sort(key=lambda item: item[2], reverse=True)
        results.append(result)
    return results


def obtain_input_shape(input_shape, default_size: int, min_size: int, data_format: str,
                       require_flatten: bool, weights=None) -> tuple:
    """The model's input shape (without the batch axis), checked as Keras checks it.

    Args:
      input_shape: None (the default shape) or the user's shape.
      default_size: the default height and width.
      min_size: the smallest height and width accepted.
      data_format: 'channels_last' or 'channels_first'.
      require_flatten: whether the classifier top follows (a static shape is needed).
      weights: None, 'imagenet' (3 channels, and the default shape with the top) or a
        path.

    Returns:
      A shape tuple (None for unknown spatial sizes).

    Raises:
      ValueError: a shape other than the default with 'imagenet' weights and the top;
        not 3 dims; not 3 channels with 'imagenet' weights; a size below `min_size`; an
        unknown size with the top.
    """
    channels_first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if channels_first else input_shape[-1]
        if channels not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it "
                          "was passed an input_shape with %s input channels." % channels,
                          stacklevel=3)
    else:
        channels = 3
    default_shape = ((channels, default_size, default_size) if channels_first
                     else (default_size, default_size, channels))
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and input_shape != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` "
                             "weights, `input_shape` should be %s.  Received: "
                             "input_shape=%s" % (default_shape, input_shape))
        return default_shape
    if input_shape:
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels = input_shape[0] if channels_first else input_shape[-1]
        if channels != 3 and weights == "imagenet":
            raise ValueError("The input must have 3 channels; Received `input_shape=%s`"
                             % (input_shape,))
        spatial = input_shape[1:] if channels_first else input_shape[:2]
        if any(size is not None and size < min_size for size in spatial):
            raise ValueError("Input size must be at least %dx%d; Received: input_shape=%s"
                             % (min_size, min_size, input_shape))
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (3, None, None) if channels_first else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static "
                         "`input_shape`. Received: input_shape=%s" % (input_shape,))
    return input_shape


def spatial_size(shape) -> tuple:
    """(rows, cols) of an input shape without the batch axis."""
    if backend.image_data_format() == "channels_first":
        return shape[1], shape[2]
    return shape[0], shape[1]


def correct_pad(inputs, kernel_size) -> tuple:
    """The ((top, bottom), (left, right)) zero padding before a strided 'valid'
    convolution of `kernel_size` that gives the output 'same' padding would (one less
    at the top/left of an even-sized input)."""
    img_dim = 2 if backend.image_data_format() == "channels_first" else 1
    input_size = backend.int_shape(inputs)[img_dim:img_dim + 2]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    if input_size[0] is None:
        adjust = (1, 1)
    else:
        adjust = (1 - input_size[0] % 2, 1 - input_size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


def validate_activation(classifier_activation, weights) -> None:
    """Pretrained weights allow only a softmax or linear (None) classifier.

    Raises:
      ValueError: another activation with weights.
    """
    if weights is None:
        return
    classifier_activation = activations.get(classifier_activation)
    if classifier_activation not in {activations.get("softmax"), activations.get(None)}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the "
                         "`classifier_activation` argument when using pretrained weights, "
                         "with `include_top=True`; Received: classifier_activation=%s"
                         % (classifier_activation,))


# --- the steps every application model shares ----------------------------------------------
def check_weights_argument(weights, include_top: bool, classes: int) -> None:
    """`weights` must be None, 'imagenet' or an existing file; 'imagenet' with the top
    needs 1000 classes.

    Raises:
      ValueError: as Keras' application constructors.
    """
    if not (weights in {"imagenet", None} or tf.io.gfile.exists(weights)):
        raise ValueError("The `weights` argument should be either `None` (random "
                         "initialization), `imagenet` (pre-training on ImageNet), or the "
                         "path to the weights file to be loaded.  Received: weights=%s"
                         % (weights,))
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights` as `"imagenet"` with `include_top` as true, '
                         "`classes` should be 1000.  Received `classes=%s`" % (classes,))


def checked_input_shape(weights, include_top: bool, classes: int, input_shape,
                        default_size: int, min_size: int) -> tuple:
    """The first steps of every application constructor: the `weights` argument checked,
    then the input shape (obtain_input_shape, in the backend's data format).

    Raises:
      ValueError: as check_weights_argument and obtain_input_shape.
    """
    check_weights_argument(weights, include_top, classes)
    return obtain_input_shape(input_shape, default_size=default_size, min_size=min_size,
                              data_format=backend.image_data_format(),
                              require_flatten=include_top, weights=weights)


def image_input(weights, include_top: bool, classes: int, input_tensor, input_shape,
                default_size: int, min_size: int):
    """checked_input_shape, then the image input layer of that shape (model_input)."""
    return model_input(input_tensor, checked_input_shape(weights, include_top, classes,
                                                         input_shape, default_size,
                                                         min_size))


def model_input(input_tensor, input_shape: tuple):
    """The image input: a new Input of `input_shape`, `input_tensor` itself when it is a
    Keras tensor, or an Input wrapping that tensor."""
    if input_tensor is None:
        return Input(shape=input_shape)
    if not backend.is_keras_tensor(input_tensor):
        return Input(tensor=input_tensor, shape=input_shape)
    return input_tensor


def top_or_pooling(x, include_top: bool, pooling, classes: int, classifier_activation,
                   weights, top_pool_name: Optional[str] = None,
                   pool_names: tuple = (None, None)):
    """The common head: global average pooling and the 'predictions' Dense layer with
    the top; else the optional global 'avg' or 'max' pooling."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=top_pool_name)(x)
        validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=pool_names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=pool_names[1])(x)
    return x


def build_model(input_tensor, img_input, outputs, name: str, weights,
                imagenet_file) -> Model:
    """The last steps of every application constructor: the Model from the image input
    (or from the sources of `input_tensor`) to `outputs`, with its weights loaded
    (load_weights)."""
    inputs = get_source_inputs(input_tensor) if input_tensor is not None else img_input
    model = Model(inputs, outputs, name=name)
    load_weights(model, weights, imagenet_file)
    return model


def load_weights(model: Model, weights, imagenet_file) -> None:
    """Loads the weights into `model` by topology: with `weights='imagenet'` the file
    `imagenet_file()` names ((file name, URL, hash or None)), fetched into
    ~/.keras/models; else the file `weights` names, if any."""
    if weights == "imagenet":
        file_name, origin, file_hash = imagenet_file()
        path = get_file(file_name, origin, cache_subdir="models", file_hash=file_hash)
        model.load_weights(path)
    elif weights is not None:
        model.load_weights(os.fspath(weights))


def constructor_args_doc(default_size: int, min_size: int, layers_kwarg: bool = False,
                         pooling: str = "None (4-D output), 'avg' or 'max'",
                         model_name: Optional[str] = None) -> str:
    """The Args/Returns/Raises of the application constructors that take Keras' common
    arguments, for their docstrings."""
    return """

    Args:
      include_top: whether to include the global pooling and the 'predictions' layer.
      weights: None (random initialization), 'imagenet' (downloaded into
        ~/.keras/models) or the path of a weights file.
      input_tensor: a Keras tensor (or a tensor) to use as the image input.
      input_shape: the input shape without the batch axis; only without the top
        (with it, (%d, %d, 3)); 3 channels, height and width at least %d.
      pooling: without the top, %s.
      classes: the number of classes of the top (1000 with 'imagenet' weights).
      classifier_activation: the activation of the 'predictions' layer (only None or
        'softmax' with pretrained weights).%s

    Returns:
      A `tf.keras.Model`%s.

    Raises:
      ValueError: invalid arguments (as Keras).
""" % (default_size, default_size, min_size, pooling,
       "\n      **kwargs: `layers`, a module of layer classes to build with."
       if layers_kwarg else "", " named '%s'" % model_name if model_name else "")


# The Args/Returns/Raises of every family's preprocess_input.
PREPROCESS_ARGS_DOC = """

    Args:
      x: a NumPy array (modified in place when of a float dtype) or a tensor, 3-D or
        4-D with 3 channels, values in [0, 255].
      data_format: 'channels_last' or 'channels_first' (None: the backend's).

    Returns:
      The preprocessed array or tensor.

    Raises:
      ValueError: an unknown `data_format`.
"""
