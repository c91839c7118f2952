"""`tf.keras.applications.InceptionV3` (namespace `inception_v3`) as TF 2.15's Keras
builds it: a stem of convolutions and max pooling, then the Inception modules 'mixed0'
to 'mixed10' (parallel 1x1, 5x5 or factorized 7x7, double 3x3 and pooling branches,
concatenated on the channels); every convolution is bias-free, batch-normalized without
a scale, and ReLU (layers named by Keras' default counters: 'conv2d_<n>',
'batch_normalization_<n>', 'activation_<n>'). The inputs are scaled to [-1, 1] ('tf'
preprocessing).

Reference: Szegedy et al., "Rethinking the Inception Architecture for Computer Vision"
(CVPR 2016).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras import layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/inception_v3/"
WEIGHTS_PATH = _BASE + "inception_v3_weights_tf_dim_ordering_tf_kernels.h5"
WEIGHTS_PATH_NO_TOP = _BASE + "inception_v3_weights_tf_dim_ordering_tf_kernels_notop.h5"
WEIGHTS_HASHES = ("9a0d58056eeedaa3f26cb7ebd46da564", "bcbd6486424b2319ff4ef7d526e38f63")


def weights_file(include_top: bool) -> tuple:
    """(file name, URL, md5) of the 'imagenet' weights."""
    url = WEIGHTS_PATH if include_top else WEIGHTS_PATH_NO_TOP
    return url.rsplit("/", 1)[1], url, WEIGHTS_HASHES[0 if include_top else 1]


def _channel_axis() -> int:
    return 1 if backend.image_data_format() == "channels_first" else 3


def conv2d_bn(x, filters: int, num_row: int, num_col: int, padding: str = "same",
              strides=(1, 1), name: Optional[str] = None):
    """A bias-free convolution, batch normalization without scale, and ReLU; named
    '<name>_conv', '<name>_bn', '<name>' (Keras' default names when `name` is None)."""
    bn_name = None if name is None else name + "_bn"
    conv_name = None if name is None else name + "_conv"
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding,
                      use_bias=False, name=conv_name)(x)
    x = layers.BatchNormalization(axis=_channel_axis(), scale=False, name=bn_name)(x)
    return layers.Activation("relu", name=name)(x)


def _avg_pool_branch(x, filters: int):
    branch = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x)
    return conv2d_bn(branch, filters, 1, 1)


def _module_a(x, pool_filters: int, name: str):
    """35x35 module: 1x1, 5x5, double 3x3 and pooling branches."""
    branch1x1 = conv2d_bn(x, 64, 1, 1)
    branch5x5 = conv2d_bn(x, 48, 1, 1)
    branch5x5 = conv2d_bn(branch5x5, 64, 5, 5)
    branch3x3dbl = conv2d_bn(x, 64, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch_pool = _avg_pool_branch(x, pool_filters)
    return layers.concatenate([branch1x1, branch5x5, branch3x3dbl, branch_pool],
                              axis=_channel_axis(), name=name)


def _module_c(x, filters_7x7: int, name: str):
    """17x17 module: 1x1, factorized 7x7 (1x7, 7x1), double factorized 7x7 and pooling
    branches."""
    branch1x1 = conv2d_bn(x, 192, 1, 1)
    branch7x7 = conv2d_bn(x, filters_7x7, 1, 1)
    branch7x7 = conv2d_bn(branch7x7, filters_7x7, 1, 7)
    branch7x7 = conv2d_bn(branch7x7, 192, 7, 1)
    branch7x7dbl = conv2d_bn(x, filters_7x7, 1, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, filters_7x7, 7, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, filters_7x7, 1, 7)
    branch7x7dbl = conv2d_bn(branch7x7dbl, filters_7x7, 7, 1)
    branch7x7dbl = conv2d_bn(branch7x7dbl, 192, 1, 7)
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch7x7, branch7x7dbl, branch_pool],
                              axis=_channel_axis(), name=name)


def _module_e(x, index: int):
    """8x8 module: 1x1, split 3x3 (1x3 and 3x1), double split 3x3 and pooling
    branches."""
    axis = _channel_axis()
    branch1x1 = conv2d_bn(x, 320, 1, 1)
    branch3x3 = conv2d_bn(x, 384, 1, 1)
    branch3x3_1 = conv2d_bn(branch3x3, 384, 1, 3)
    branch3x3_2 = conv2d_bn(branch3x3, 384, 3, 1)
    branch3x3 = layers.concatenate([branch3x3_1, branch3x3_2], axis=axis,
                                   name="mixed9_" + str(index))
    branch3x3dbl = conv2d_bn(x, 448, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 384, 3, 3)
    branch3x3dbl_1 = conv2d_bn(branch3x3dbl, 384, 1, 3)
    branch3x3dbl_2 = conv2d_bn(branch3x3dbl, 384, 3, 1)
    branch3x3dbl = layers.concatenate([branch3x3dbl_1, branch3x3dbl_2], axis=axis)
    branch_pool = _avg_pool_branch(x, 192)
    return layers.concatenate([branch1x1, branch3x3, branch3x3dbl, branch_pool], axis=axis,
                              name="mixed" + str(9 + index))


@tf_export("keras.applications.InceptionV3", "keras.applications.inception_v3.InceptionV3")
def InceptionV3(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
                input_tensor=None, input_shape=None, pooling: Optional[str] = None,
                classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the Inception v3 architecture; inputs are preprocessed by
    `tf.keras.applications.inception_v3.preprocess_input`."""
    img_input = imagenet_utils.image_input(weights, include_top, classes, input_tensor,
                                           input_shape, default_size=299, min_size=75)
    axis = _channel_axis()
    x = conv2d_bn(img_input, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv2d_bn(x, 32, 3, 3, padding="valid")
    x = conv2d_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn(x, 80, 1, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)

    x = _module_a(x, 32, "mixed0")
    x = _module_a(x, 64, "mixed1")
    x = _module_a(x, 64, "mixed2")

    # mixed3: reduction to 17x17.
    branch3x3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    branch3x3dbl = conv2d_bn(x, 64, 1, 1)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3)
    branch3x3dbl = conv2d_bn(branch3x3dbl, 96, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch3x3dbl, branch_pool], axis=axis, name="mixed3")

    x = _module_c(x, 128, "mixed4")
    x = _module_c(x, 160, "mixed5")
    x = _module_c(x, 160, "mixed6")
    x = _module_c(x, 192, "mixed7")

    # mixed8: reduction to 8x8.
    branch3x3 = conv2d_bn(x, 192, 1, 1)
    branch3x3 = conv2d_bn(branch3x3, 320, 3, 3, strides=(2, 2), padding="valid")
    branch7x7x3 = conv2d_bn(x, 192, 1, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 1, 7)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 7, 1)
    branch7x7x3 = conv2d_bn(branch7x7x3, 192, 3, 3, strides=(2, 2), padding="valid")
    branch_pool = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = layers.concatenate([branch3x3, branch7x7x3, branch_pool], axis=axis, name="mixed8")

    x = _module_e(x, 0)
    x = _module_e(x, 1)
    x = imagenet_utils.top_or_pooling(x, include_top, pooling, classes,
                                      classifier_activation, weights, "avg_pool")
    return imagenet_utils.build_model(input_tensor, img_input, x, "inception_v3", weights,
                                      lambda: weights_file(include_top))


InceptionV3.__doc__ += imagenet_utils.constructor_args_doc(299, 75, model_name="inception_v3")


@tf_export("keras.applications.inception_v3.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """InceptionV3's preprocessing ('tf' mode): the pixels scaled from [0, 255] to
    [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
