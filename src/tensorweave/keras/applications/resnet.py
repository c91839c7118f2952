"""`tf.keras.applications.ResNet50`, `ResNet101`, `ResNet152` (namespaces `resnet` and
`resnet50`) as TF 2.15's Keras builds them, and the builder the V2 models
(resnet_v2.py) share: a 7x7/2 stem ('conv1_*'), 3x3/2 max pooling ('pool1_*'), four
stacks of bottleneck blocks ('conv<s>_block<b>_*'), and global average pooling with the
'predictions' layer on top. V1 blocks are post-activation, with a projection shortcut
in each stack's first block; V2 blocks are pre-activation ('_preact_bn'), with the
projection in the first block and the stride in the last, and end in 'post_bn'.

References: He et al., "Deep Residual Learning for Image Recognition" (CVPR 2015);
"Identity Mappings in Deep Residual Networks" (ECCV 2016).
"""
from __future__ import annotations

from typing import Callable, Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras import layers as keras_layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"
# model name -> (top file md5, no-top file md5), as Keras' resnet.py.
WEIGHTS_HASHES = {
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
_EPSILON = 1.001e-5


def weights_file(model_name: str, include_top: bool) -> tuple:
    """(file name, URL, md5) of the 'imagenet' weights of `model_name`."""
    file_name = "%s_weights_tf_dim_ordering_tf_kernels%s.h5" % (
        model_name, "" if include_top else "_notop")
    file_hash = WEIGHTS_HASHES[model_name][0 if include_top else 1]
    return file_name, BASE_WEIGHTS_PATH + file_name, file_hash


def _bn_axis() -> int:
    return 3 if backend.image_data_format() == "channels_last" else 1


def _bn(layers, name: str):
    return layers.BatchNormalization(axis=_bn_axis(), epsilon=_EPSILON, name=name)


def block1(layers, x, filters: int, kernel_size: int = 3, stride: int = 1,
           conv_shortcut: bool = True, name: str = ""):
    """A V1 bottleneck block: 1x1 (strided), 3x3, 1x1 (4 * filters) convolutions, each
    batch-normalized, added to the shortcut (a strided 1x1 projection or the input),
    then ReLU."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = _bn(layers, name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = _bn(layers, name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="SAME", name=name + "_2_conv")(x)
    x = _bn(layers, name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = _bn(layers, name + "_3_bn")(x)
    x = layers.Add(name=name + "_add")([shortcut, x])
    return layers.Activation("relu", name=name + "_out")(x)


def stack1(layers, x, filters: int, blocks: int, stride1: int = 2, name: str = ""):
    """`blocks` V1 blocks, the first strided by `stride1` with a projection shortcut."""
    x = block1(layers, x, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = block1(layers, x, filters, conv_shortcut=False, name=name + "_block" + str(i))
    return x


def block2(layers, x, filters: int, kernel_size: int = 3, stride: int = 1,
           conv_shortcut: bool = False, name: str = ""):
    """A V2 (pre-activation) bottleneck block: BN and ReLU first, then 1x1, 3x3
    (strided, zero-padded) and 1x1 (4 * filters) convolutions, added to the shortcut
    (a 1x1 projection of the pre-activation, or the input, max-pooled when strided)."""
    preact = _bn(layers, name + "_preact_bn")(x)
    preact = layers.Activation("relu", name=name + "_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride,
                                 name=name + "_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=name + "_1_conv")(preact)
    x = _bn(layers, name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=name + "_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False,
                      name=name + "_2_conv")(x)
    x = _bn(layers, name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    return layers.Add(name=name + "_out")([shortcut, x])


def stack2(layers, x, filters: int, blocks: int, stride1: int = 2, name: str = ""):
    """`blocks` V2 blocks: the first with a projection shortcut, the last strided by
    `stride1`."""
    x = block2(layers, x, filters, conv_shortcut=True, name=name + "_block1")
    for i in range(2, blocks):
        x = block2(layers, x, filters, name=name + "_block" + str(i))
    return block2(layers, x, filters, stride=stride1, name=name + "_block" + str(blocks))


def ResNet(stack_fn: Callable, preact: bool, use_bias: bool,  # noqa: N802
           model_name: str = "resnet", include_top: bool = True, weights="imagenet",
           input_tensor=None, input_shape=None, pooling=None, classes: int = 1000,
           classifier_activation="softmax", **kwargs) -> Model:
    """The ResNet (V1 or V2) around `stack_fn(layers, x)`, which builds the stacks.

    Args:
      stack_fn: builds the stacked blocks from (layers, x).
      preact: V2 (pre-activation): no BN/ReLU after the stem, 'post_bn' at the end.
      use_bias: whether the stem convolution has a bias.
      model_name: the model's name (and its weights files' prefix).
      include_top, weights, input_tensor, input_shape, pooling, classes,
      classifier_activation: as in ResNet50.
      **kwargs: `layers`, a module of layer classes to build with (as Keras).

    Raises:
      ValueError: an unknown keyword argument, or invalid arguments (as Keras).
    """
    layers = kwargs.pop("layers", keras_layers)
    if kwargs:
        raise ValueError("Unknown argument(s): %s" % (kwargs,))
    img_input = imagenet_utils.image_input(weights, include_top, classes, input_tensor,
                                           input_shape, default_size=224, min_size=32)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = _bn(layers, "conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(layers, x)
    if preact:
        x = _bn(layers, "post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = imagenet_utils.top_or_pooling(x, include_top, pooling, classes,
                                      classifier_activation, weights, "avg_pool",
                                      ("avg_pool", "max_pool"))
    return imagenet_utils.build_model(input_tensor, img_input, x, model_name, weights,
                                      lambda: weights_file(model_name, include_top))


def _v1_stacks(blocks: tuple) -> Callable:
    def stack_fn(layers, x):
        x = stack1(layers, x, 64, blocks[0], stride1=1, name="conv2")
        x = stack1(layers, x, 128, blocks[1], name="conv3")
        x = stack1(layers, x, 256, blocks[2], name="conv4")
        return stack1(layers, x, 512, blocks[3], name="conv5")
    return stack_fn


def _v1_model(model_name: str, blocks: tuple, include_top, weights, input_tensor,
              input_shape, pooling, classes, kwargs) -> Model:
    return ResNet(_v1_stacks(blocks), False, True, model_name, include_top, weights,
                  input_tensor, input_shape, pooling, classes, **kwargs)


@tf_export("keras.applications.ResNet50", "keras.applications.resnet.ResNet50",
           "keras.applications.resnet50.ResNet50")
def ResNet50(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
             input_tensor=None, input_shape=None, pooling: Optional[str] = None,
             classes: int = 1000, **kwargs) -> Model:
    """Instantiates the ResNet50 model (stacks of 3, 4, 6, 3 blocks); inputs are
    preprocessed by `tf.keras.applications.resnet50.preprocess_input`; `kwargs` may
    give `classifier_activation` ('softmax' by default)."""
    return _v1_model("resnet50", (3, 4, 6, 3), include_top, weights, input_tensor,
                     input_shape, pooling, classes, kwargs)


@tf_export("keras.applications.ResNet101", "keras.applications.resnet.ResNet101")
def ResNet101(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
              input_tensor=None, input_shape=None, pooling: Optional[str] = None,
              classes: int = 1000, **kwargs) -> Model:
    """Instantiates the ResNet101 model (stacks of 3, 4, 23, 3 blocks); inputs are
    preprocessed by `tf.keras.applications.resnet.preprocess_input`; `kwargs` may
    give `classifier_activation` ('softmax' by default)."""
    return _v1_model("resnet101", (3, 4, 23, 3), include_top, weights, input_tensor,
                     input_shape, pooling, classes, kwargs)


@tf_export("keras.applications.ResNet152", "keras.applications.resnet.ResNet152")
def ResNet152(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
              input_tensor=None, input_shape=None, pooling: Optional[str] = None,
              classes: int = 1000, **kwargs) -> Model:
    """Instantiates the ResNet152 model (stacks of 3, 8, 36, 3 blocks); inputs are
    preprocessed by `tf.keras.applications.resnet.preprocess_input`; `kwargs` may
    give `classifier_activation` ('softmax' by default)."""
    return _v1_model("resnet152", (3, 8, 36, 3), include_top, weights, input_tensor,
                     input_shape, pooling, classes, kwargs)


for _model in (ResNet50, ResNet101, ResNet152):
    _model.__doc__ += imagenet_utils.constructor_args_doc(
        224, 32, layers_kwarg=True,
        pooling="None (the last block's 4-D output), 'avg' or 'max'")


@tf_export("keras.applications.resnet.preprocess_input",
           "keras.applications.resnet50.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """ResNet's preprocessing ('caffe' mode): the images converted from RGB to BGR and
    each channel zero-centered by the ImageNet means, without scaling."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
