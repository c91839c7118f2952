"""`tf.keras.applications.Xception` (namespace `xception`) as TF 2.15's Keras builds it:
an entry flow (two convolutions, then three blocks of separable convolutions and max
pooling, each added to a strided 1x1 projection of its input), a middle flow of eight
residual blocks of three separable convolutions ('block5' to 'block12'), and an exit
flow ('block13', 'block14'). The projections and their batch normalizations and adds
carry Keras' default names ('conv2d_<n>', 'batch_normalization_<n>', 'add_<n>'). The
inputs are scaled to [-1, 1] ('tf' preprocessing).

Reference: Chollet, "Xception: Deep Learning with Depthwise Separable Convolutions"
(CVPR 2017).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras import layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/xception/"
TF_WEIGHTS_PATH = _BASE + "xception_weights_tf_dim_ordering_tf_kernels.h5"
TF_WEIGHTS_PATH_NO_TOP = _BASE + "xception_weights_tf_dim_ordering_tf_kernels_notop.h5"
WEIGHTS_HASHES = ("0a58e3b7378bc2990ea3b43d5981f1f6", "b0042744bf5b25fce3cb969f33bebb97")


def weights_file(include_top: bool) -> tuple:
    """(file name, URL, md5) of the 'imagenet' weights."""
    url = TF_WEIGHTS_PATH if include_top else TF_WEIGHTS_PATH_NO_TOP
    return url.rsplit("/", 1)[1], url, WEIGHTS_HASHES[0 if include_top else 1]


def _channel_axis() -> int:
    return 1 if backend.image_data_format() == "channels_first" else -1


def _sepconv_bn(x, filters: int, name: str):
    """A bias-free 3x3 'same' separable convolution '<name>' and '<name>_bn'."""
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False,
                               name=name)(x)
    return layers.BatchNormalization(axis=_channel_axis(), name=name + "_bn")(x)


def _projection(x, filters: int):
    """The strided 1x1 projection of a downsampling block's shortcut (default names)."""
    residual = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same",
                             use_bias=False)(x)
    return layers.BatchNormalization(axis=_channel_axis())(residual)


def _entry_block(x, filters: int, block: int, first: bool = False):
    """Two separable convolutions and 3x3/2 max pooling, added to the projection; the
    first block of the flow starts without ReLU (the stem's output is already one)."""
    residual = _projection(x, filters)
    prefix = "block%d_" % block
    if not first:
        x = layers.Activation("relu", name=prefix + "sepconv1_act")(x)
    x = _sepconv_bn(x, filters, prefix + "sepconv1")
    x = layers.Activation("relu", name=prefix + "sepconv2_act")(x)
    x = _sepconv_bn(x, filters, prefix + "sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same",
                            name=prefix + "pool")(x)
    return layers.add([x, residual])


@tf_export("keras.applications.Xception", "keras.applications.xception.Xception")
def Xception(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
             input_tensor=None, input_shape=None, pooling: Optional[str] = None,
             classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the Xception architecture; inputs are preprocessed by
    `tf.keras.applications.xception.preprocess_input`."""
    img_input = imagenet_utils.image_input(weights, include_top, classes, input_tensor,
                                           input_shape, default_size=299, min_size=71)
    axis = _channel_axis()
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False,
                      name="block1_conv1")(img_input)
    x = layers.BatchNormalization(axis=axis, name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=axis, name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)

    x = _entry_block(x, 128, 2, first=True)
    x = _entry_block(x, 256, 3)
    x = _entry_block(x, 728, 4)

    for block in range(5, 13):
        residual = x
        prefix = "block%d_" % block
        for i in (1, 2, 3):
            x = layers.Activation("relu", name=prefix + "sepconv%d_act" % i)(x)
            x = _sepconv_bn(x, 728, prefix + "sepconv%d" % i)
        x = layers.add([x, residual])

    residual = _projection(x, 1024)
    x = layers.Activation("relu", name="block13_sepconv1_act")(x)
    x = _sepconv_bn(x, 728, "block13_sepconv1")
    x = layers.Activation("relu", name="block13_sepconv2_act")(x)
    x = _sepconv_bn(x, 1024, "block13_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name="block13_pool")(x)
    x = layers.add([x, residual])

    x = _sepconv_bn(x, 1536, "block14_sepconv1")
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _sepconv_bn(x, 2048, "block14_sepconv2")
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    x = imagenet_utils.top_or_pooling(x, include_top, pooling, classes,
                                      classifier_activation, weights, "avg_pool")
    return imagenet_utils.build_model(input_tensor, img_input, x, "xception", weights,
                                      lambda: weights_file(include_top))


Xception.__doc__ += imagenet_utils.constructor_args_doc(299, 71, model_name="xception")


@tf_export("keras.applications.xception.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """Xception's preprocessing ('tf' mode): the pixels scaled from [0, 255] to
    [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
