"""`tf.keras.applications.MobileNet` (namespace `mobilenet`) as TF 2.15's Keras builds
it: a strided 3x3 convolution ('conv1'), then 13 depthwise-separable blocks
('conv_dw_<i>', 'conv_pw_<i>', each batch-normalized and ReLU6), with `alpha` scaling
the filters and `depth_multiplier` the depthwise channels; with the top, pooling kept
4-D, dropout, a 1x1 convolution ('conv_preds') and a reshape. The inputs are scaled to
[-1, 1] ('tf' preprocessing).

Reference: Howard et al., "MobileNets: Efficient Convolutional Neural Networks for
Mobile Vision Applications" (2017).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras import layers as keras_layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model
from tensorweave.platform import tf_logging

BASE_WEIGHT_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet/"
_ALPHA_TEXT = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0", 0.25: "2_5"}
_IMAGENET_SIZES = (128, 160, 192, 224)


def weights_file(alpha: float, rows: int, include_top: bool) -> tuple:
    """(file name, URL, None) of the 'imagenet' weights for `alpha` and the input size
    `rows` (Keras publishes no hash of these files)."""
    file_name = "mobilenet_%s_%d_tf%s.h5" % (_ALPHA_TEXT.get(alpha, "2_5"), rows,
                                             "" if include_top else "_no_top")
    return file_name, BASE_WEIGHT_PATH + file_name, None


def _channel_axis() -> int:
    return 1 if backend.image_data_format() == "channels_first" else -1


def _conv_block(layers, inputs, filters: int, alpha: float, kernel=(3, 3),
                strides=(1, 1)):
    """The first convolution ('conv1'), batch-normalized, ReLU6."""
    x = layers.Conv2D(int(filters * alpha), kernel, padding="same", use_bias=False,
                      strides=strides, name="conv1")(inputs)
    x = layers.BatchNormalization(axis=_channel_axis(), name="conv1_bn")(x)
    return layers.ReLU(6.0, name="conv1_relu")(x)


def _depthwise_conv_block(layers, inputs, pointwise_conv_filters: int, alpha: float,
                          depth_multiplier: int = 1, strides=(1, 1), block_id: int = 1):
    """A depthwise 3x3 convolution (zero-padded bottom/right and 'valid' when strided)
    and a pointwise 1x1 one, each batch-normalized and ReLU6."""
    x = inputs
    if strides != (1, 1):
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name="conv_pad_%d" % block_id)(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if strides == (1, 1) else "valid",
                               depth_multiplier=depth_multiplier, strides=strides,
                               use_bias=False, name="conv_dw_%d" % block_id)(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name="conv_dw_%d_bn" % block_id)(x)
    x = layers.ReLU(6.0, name="conv_dw_%d_relu" % block_id)(x)
    x = layers.Conv2D(int(pointwise_conv_filters * alpha), (1, 1), padding="same",
                      use_bias=False, strides=(1, 1), name="conv_pw_%d" % block_id)(x)
    x = layers.BatchNormalization(axis=_channel_axis(), name="conv_pw_%d_bn" % block_id)(x)
    return layers.ReLU(6.0, name="conv_pw_%d_relu" % block_id)(x)


# (pointwise filters, strided) of blocks 1..13.
_BLOCKS = ((64, False), (128, True), (128, False), (256, True), (256, False), (512, True),
           (512, False), (512, False), (512, False), (512, False), (512, False),
           (1024, True), (1024, False))


@tf_export("keras.applications.MobileNet", "keras.applications.mobilenet.MobileNet")
def MobileNet(input_shape=None, alpha: float = 1.0, depth_multiplier: int = 1,  # noqa: N802
              dropout: float = 1e-3, include_top: bool = True,
              weights: Optional[str] = "imagenet", input_tensor=None,
              pooling: Optional[str] = None, classes: int = 1000,
              classifier_activation="softmax", **kwargs) -> Model:
    """Instantiates the MobileNet architecture; inputs are preprocessed by
    `tf.keras.applications.mobilenet.preprocess_input`.

    Args:
      input_shape: the input shape without the batch axis (default (224, 224, 3));
        3 channels, height and width at least 32. 'imagenet' weights exist for square
        inputs of 128, 160, 192 or 224 (224's are loaded for other sizes).
      alpha: the width multiplier of the filters (0.25, 0.5, 0.75 or 1.0 with
        'imagenet' weights).
      depth_multiplier: the depth multiplier of the depthwise convolutions (1 with
        'imagenet' weights).
      dropout: the dropout rate before the top's convolution.
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
      A `tf.keras.Model` named 'mobilenet_<alpha>_<rows>'.

    Raises:
      ValueError: an unknown keyword argument, or invalid arguments (as Keras).
    """
    layers = kwargs.pop("layers", keras_layers)
    if kwargs:
        raise ValueError("Unknown argument(s): %s" % ((kwargs,),))
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    default_size = 224
    if input_shape is not None:
        rows, cols = imagenet_utils.spatial_size(input_shape)
        if rows == cols and rows in _IMAGENET_SIZES:
            default_size = rows
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=default_size, min_size=32,
        data_format=backend.image_data_format(), require_flatten=include_top,
        weights=weights)
    rows, cols = imagenet_utils.spatial_size(input_shape)
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError("If imagenet weights are being loaded, depth multiplier must "
                             "be 1.  Received depth_multiplier=%s" % (depth_multiplier,))
        if alpha not in _ALPHA_TEXT:
            raise ValueError("If imagenet weights are being loaded, alpha can be one "
                             "of`0.25`, `0.50`, `0.75` or `1.0` only.  Received alpha=%s"
                             % (alpha,))
        if rows != cols or rows not in _IMAGENET_SIZES:
            rows = 224
            tf_logging.warning("`input_shape` is undefined or non-square, or `rows` is not "
                               "in [128, 160, 192, 224]. Weights for input shape (224, 224) "
                               "will be loaded as the default.")
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = _conv_block(layers, img_input, 32, alpha, strides=(2, 2))
    for block_id, (filters, strided) in enumerate(_BLOCKS, start=1):
        x = _depthwise_conv_block(layers, x, filters, alpha, depth_multiplier,
                                  strides=(2, 2) if strided else (1, 1), block_id=block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    name = "mobilenet_%0.2f_%s" % (alpha, rows)
    return imagenet_utils.build_model(input_tensor, img_input, x, name, weights,
                                      lambda: weights_file(alpha, rows, include_top))


@tf_export("keras.applications.mobilenet.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """MobileNet's preprocessing ('tf' mode): the pixels scaled from [0, 255] to
    [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
