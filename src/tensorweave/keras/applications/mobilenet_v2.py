"""`tf.keras.applications.MobileNetV2` (namespace `mobilenet_v2`) as TF 2.15's Keras
builds it: a strided 3x3 convolution ('Conv1'), 17 inverted residual blocks ('block_<i>_*'
and the first, 'expanded_conv_*': a 1x1 expansion, a 3x3 depthwise convolution, a
linear 1x1 projection, and a residual add where the shapes allow), a final 1x1
convolution ('Conv_1') and, with the top, global pooling and 'predictions'. `alpha`
scales the filters (rounded to multiples of 8). The inputs are scaled to [-1, 1] ('tf'
preprocessing).

Reference: Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks"
(CVPR 2018).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras import layers as keras_layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model
from tensorweave.platform import tf_logging

BASE_WEIGHT_PATH = ("https://storage.googleapis.com/tensorflow/keras-applications/"
                    "mobilenet_v2/")
_IMAGENET_ALPHAS = (0.35, 0.50, 0.75, 1.0, 1.3, 1.4)
_IMAGENET_SIZES = (96, 128, 160, 192, 224)
# (filters, stride, expansion) of blocks 0..16.
_BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6),
           (64, 2, 6), (64, 1, 6), (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6),
           (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6))


def weights_file(alpha: float, rows: int, include_top: bool) -> tuple:
    """(file name, URL, None) of the 'imagenet' weights for `alpha` and the input size
    `rows` (Keras publishes no hash of these files)."""
    file_name = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_%s_%s%s.h5" % (
        float(alpha), rows, "" if include_top else "_no_top")
    return file_name, BASE_WEIGHT_PATH + file_name, None


def _make_divisible(v: float, divisor: int, min_value: Optional[int] = None) -> int:
    """`v` rounded to a multiple of `divisor` (at least `min_value`), never more than
    10% below `v`."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _bn(layers, name: str):
    axis = 1 if backend.image_data_format() == "channels_first" else -1
    return layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name=name)


def _inverted_res_block(layers, inputs, expansion: int, stride: int, alpha: float,
                        filters: int, block_id: int):
    """Expansion (1x1, except in block 0), depthwise 3x3 (zero-padded and 'valid' when
    strided), linear projection (1x1); added to the input when the shapes match."""
    channel_axis = 1 if backend.image_data_format() == "channels_first" else -1
    in_channels = backend.int_shape(inputs)[channel_axis]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = "block_%d_" % block_id
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same",
                          use_bias=False, activation=None, name=prefix + "expand")(x)
        x = _bn(layers, prefix + "expand_BN")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3),
                                 name=prefix + "pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None,
                               use_bias=False, padding="same" if stride == 1 else "valid",
                               name=prefix + "depthwise")(x)
    x = _bn(layers, prefix + "depthwise_BN")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False,
                      activation=None, name=prefix + "project")(x)
    x = _bn(layers, prefix + "project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


def _default_size(input_shape, input_tensor) -> int:
    """The input size Keras assumes for the weights' file: the given square size when
    'imagenet' weights exist for it, else 224.

    Raises:
      ValueError: an `input_tensor` that is not a tensor, or that disagrees with
        `input_shape` (as Keras).
    """
    if input_tensor is not None:
        try:
            is_keras_tensor = backend.is_keras_tensor(input_tensor)
        except ValueError:
            if input_shape is None:
                raise ValueError("input_tensor must be a valid Keras tensor type; Received "
                                 "%s of type %s" % (input_tensor, type(input_tensor)))
            raise ValueError("input_tensor: %sis not type input_tensor. Received "
                             "`type(input_tensor)=%s`" % (input_tensor, type(input_tensor)))
        if input_shape is not None:
            if not is_keras_tensor:
                raise ValueError("input_tensor is not a Keras tensor; Received "
                                 "`input_tensor=%s`" % (input_tensor,))
            shape = backend.int_shape(input_tensor)
            if backend.image_data_format() == "channels_first":
                if shape[1] != input_shape[1]:
                    raise ValueError("input_shape[1] must equal shape(input_tensor)[1] when "
                                     "`image_data_format` is `channels_first`; Received "
                                     "`input_tensor.shape=%s`, `input_shape=%s`"
                                     % (input_tensor.shape, input_shape))
            elif shape[2] != input_shape[1]:
                raise ValueError("input_tensor.shape[2] must equal input_shape[1]; "
                                 "Received `input_tensor.shape=%s`, `input_shape=%s`"
                                 % (input_tensor.shape, input_shape))
        elif is_keras_tensor:
            rows, cols = imagenet_utils.spatial_size(backend.int_shape(input_tensor)[1:])
            return rows if rows == cols and rows in _IMAGENET_SIZES else 224
        else:
            return 224
    if input_shape is None:
        return 224
    rows, cols = imagenet_utils.spatial_size(input_shape)
    return rows if rows == cols and rows in _IMAGENET_SIZES else 224


@tf_export("keras.applications.MobileNetV2", "keras.applications.mobilenet_v2.MobileNetV2")
def MobileNetV2(input_shape=None, alpha: float = 1.0, include_top: bool = True,  # noqa: N802
                weights: Optional[str] = "imagenet", input_tensor=None,
                pooling: Optional[str] = None, classes: int = 1000,
                classifier_activation="softmax", **kwargs) -> Model:
    """Instantiates the MobileNetV2 architecture; inputs are preprocessed by
    `tf.keras.applications.mobilenet_v2.preprocess_input`.

    Args:
      input_shape: the input shape without the batch axis (default (224, 224, 3));
        3 channels, height and width at least 32. 'imagenet' weights exist for square
        inputs of 96, 128, 160, 192 or 224 (224's are loaded for other sizes).
      alpha: the width multiplier of the filters (0.35, 0.5, 0.75, 1.0, 1.3 or 1.4 with
        'imagenet' weights).
      include_top: whether to include the classifier top.
      weights: None (random initialization), 'imagenet' (downloaded into
        ~/.keras/models) or the path of a weights file.
      input_tensor: a Keras tensor (or a tensor) to use as the image input.
      pooling: without the top, None (4-D output), 'avg' or 'max'.
      classes: the number of classes of the top (1000 with 'imagenet' weights).
      classifier_activation: the activation of the 'predictions' layer (only None or
        'softmax' with pretrained weights).
      **kwargs: `layers`, a module of layer classes to build with.

    Returns:
      A `tf.keras.Model` named 'mobilenetv2_<alpha>_<rows>'.

    Raises:
      ValueError: an unknown keyword argument, or invalid arguments (as Keras).
    """
    layers = kwargs.pop("layers", keras_layers)
    if kwargs:
        raise ValueError("Unknown argument(s): %s" % (kwargs,))
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=_default_size(input_shape, input_tensor), min_size=32,
        data_format=backend.image_data_format(), require_flatten=include_top,
        weights=weights)
    rows, cols = imagenet_utils.spatial_size(input_shape)
    if weights == "imagenet":
        if alpha not in _IMAGENET_ALPHAS:
            raise ValueError("If imagenet weights are being loaded, alpha must be one of "
                             "`0.35`, `0.50`, `0.75`, `1.0`, `1.3` or `1.4` only; Received "
                             "`alpha=%s`" % (alpha,))
        if rows != cols or rows not in _IMAGENET_SIZES:
            rows = 224
            tf_logging.warning("`input_shape` is undefined or non-square, or `rows` is not "
                               "in [96, 128, 160, 192, 224]. Weights for input shape "
                               "(224, 224) will be loaded as the default.")
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2),
                      padding="same", use_bias=False, name="Conv1")(img_input)
    x = _bn(layers, "bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(layers, x, filters=filters, alpha=alpha, stride=stride,
                                expansion=expansion, block_id=block_id)
    last_block_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_block_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn(layers, "Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.top_or_pooling(x, include_top, pooling, classes,
                                      classifier_activation, weights)
    name = "mobilenetv2_%0.2f_%s" % (alpha, rows)
    return imagenet_utils.build_model(input_tensor, img_input, x, name, weights,
                                      lambda: weights_file(alpha, rows, include_top))


@tf_export("keras.applications.mobilenet_v2.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """MobileNetV2's preprocessing ('tf' mode): the pixels scaled from [0, 255] to
    [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
