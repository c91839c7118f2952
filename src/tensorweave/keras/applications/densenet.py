"""`tf.keras.applications.DenseNet121`, `DenseNet169`, `DenseNet201` (namespace
`densenet`) as TF 2.15's Keras builds them: a 7x7/2 stem ('conv1/*', 'pool1'), four
dense blocks ('conv<s>_block<b>_*': BN, ReLU, 1x1 and 3x3 bias-free convolutions whose
32 new channels are concatenated to the input) joined by transition blocks
('pool<s>_*': BN, ReLU, a 1x1 convolution halving the channels, 2x2 average pooling),
then 'bn' and 'relu'. The inputs are scaled to [0, 1] and normalized by the ImageNet
channel statistics ('torch' preprocessing).

Reference: Huang et al., "Densely Connected Convolutional Networks" (CVPR 2017).
"""
from __future__ import annotations

from typing import Optional, Sequence

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras import layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model

BASE_WEIGHTS_PATH = ("https://storage.googleapis.com/tensorflow/keras-applications/"
                     "densenet/")
# blocks -> (model name, top file md5, no-top file md5), as Keras' densenet.py.
_MODELS = {
    (6, 12, 24, 16): ("densenet121", "9d60b8095a5708f2dcce2bca79d332c7",
                      "30ee3e1110167f948a6b9946edeeb738"),
    (6, 12, 32, 32): ("densenet169", "d699b8f76981ab1b30698df4c175e90b",
                      "b8c4d4c20dd625c148057b9ff1c1176b"),
    (6, 12, 48, 32): ("densenet201", "1ceb130c1ea1b78c3bf6114dbdfd8807",
                      "c13680b51ded0fb44dff2d8f86ac8bb1"),
}
_EPSILON = 1.001e-5


def weights_file(blocks: Sequence[int], include_top: bool) -> tuple:
    """(file name, URL, md5) of the 'imagenet' weights of the DenseNet of `blocks`.

    Raises:
      ValueError: `blocks` of none of DenseNet121/169/201 (no published weights).
    """
    if tuple(blocks) not in _MODELS:
        raise ValueError("No 'imagenet' weights exist for a DenseNet of blocks %s; use "
                         "DenseNet121, DenseNet169 or DenseNet201" % (list(blocks),))
    model_name, top_hash, notop_hash = _MODELS[tuple(blocks)]
    file_name = "%s_weights_tf_dim_ordering_tf_kernels%s.h5" % (
        model_name, "" if include_top else "_notop")
    return file_name, BASE_WEIGHTS_PATH + file_name, top_hash if include_top else notop_hash


def _bn_axis() -> int:
    return 3 if backend.image_data_format() == "channels_last" else 1


def _bn(name: Optional[str]):
    return layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=name)


def dense_block(x, blocks: int, name: str):
    """`blocks` conv blocks, each adding 32 channels."""
    for i in range(blocks):
        x = conv_block(x, 32, name=name + "_block" + str(i + 1))
    return x


def transition_block(x, reduction: float, name: str):
    """BN, ReLU, a 1x1 convolution to `reduction` of the channels, 2x2 average pooling."""
    x = _bn(name + "_bn")(x)
    x = layers.Activation("relu", name=name + "_relu")(x)
    x = layers.Conv2D(int(backend.int_shape(x)[_bn_axis()] * reduction), 1, use_bias=False,
                      name=name + "_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=name + "_pool")(x)


def conv_block(x, growth_rate: int, name: str):
    """BN, ReLU, 1x1 (4 * growth_rate), BN, ReLU, 3x3 (growth_rate) convolutions; the
    result concatenated to the input."""
    x1 = _bn(name + "_0_bn")(x)
    x1 = layers.Activation("relu", name=name + "_0_relu")(x1)
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=name + "_1_conv")(x1)
    x1 = _bn(name + "_1_bn")(x1)
    x1 = layers.Activation("relu", name=name + "_1_relu")(x1)
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False,
                       name=name + "_2_conv")(x1)
    return layers.Concatenate(axis=_bn_axis(), name=name + "_concat")([x, x1])


def DenseNet(blocks: Sequence[int], include_top: bool = True,  # noqa: N802
             weights: Optional[str] = "imagenet", input_tensor=None, input_shape=None,
             pooling: Optional[str] = None, classes: int = 1000,
             classifier_activation="softmax") -> Model:
    """The DenseNet of dense blocks of `blocks` conv blocks (the other arguments as in
    DenseNet121); named 'densenet121', 'densenet169', 'densenet201' or 'densenet'."""
    img_input = imagenet_utils.image_input(weights, include_top, classes, input_tensor,
                                           input_shape, default_size=224, min_size=32)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1/conv")(x)
    x = _bn("conv1/bn")(x)
    x = layers.Activation("relu", name="conv1/relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage in range(3):
        x = dense_block(x, blocks[stage], name="conv%d" % (stage + 2))
        x = transition_block(x, 0.5, name="pool%d" % (stage + 2))
    x = dense_block(x, blocks[3], name="conv5")
    x = _bn("bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = imagenet_utils.top_or_pooling(x, include_top, pooling, classes,
                                      classifier_activation, weights, "avg_pool",
                                      ("avg_pool", "max_pool"))
    model_name = _MODELS.get(tuple(blocks), ("densenet",))[0]
    return imagenet_utils.build_model(input_tensor, img_input, x, model_name, weights,
                                      lambda: weights_file(blocks, include_top))


@tf_export("keras.applications.DenseNet121", "keras.applications.densenet.DenseNet121")
def DenseNet121(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
                input_tensor=None, input_shape=None, pooling: Optional[str] = None,
                classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the DenseNet121 architecture (dense blocks of 6, 12, 24, 16); inputs
    are preprocessed by `tf.keras.applications.densenet.preprocess_input`."""
    return DenseNet([6, 12, 24, 16], include_top, weights, input_tensor, input_shape,
                    pooling, classes, classifier_activation)


@tf_export("keras.applications.DenseNet169", "keras.applications.densenet.DenseNet169")
def DenseNet169(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
                input_tensor=None, input_shape=None, pooling: Optional[str] = None,
                classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the DenseNet169 architecture (dense blocks of 6, 12, 32, 32); inputs
    are preprocessed by `tf.keras.applications.densenet.preprocess_input`."""
    return DenseNet([6, 12, 32, 32], include_top, weights, input_tensor, input_shape,
                    pooling, classes, classifier_activation)


@tf_export("keras.applications.DenseNet201", "keras.applications.densenet.DenseNet201")
def DenseNet201(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
                input_tensor=None, input_shape=None, pooling: Optional[str] = None,
                classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the DenseNet201 architecture (dense blocks of 6, 12, 48, 32); inputs
    are preprocessed by `tf.keras.applications.densenet.preprocess_input`."""
    return DenseNet([6, 12, 48, 32], include_top, weights, input_tensor, input_shape,
                    pooling, classes, classifier_activation)


for _model in (DenseNet121, DenseNet169, DenseNet201):
    _model.__doc__ += imagenet_utils.constructor_args_doc(224, 32)


@tf_export("keras.applications.densenet.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """DenseNet's preprocessing ('torch' mode): the pixels scaled from [0, 255] to
    [0, 1], then each channel normalized by the ImageNet mean and standard deviation."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
