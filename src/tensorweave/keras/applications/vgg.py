"""`tf.keras.applications.VGG16` and `VGG19` (namespaces `vgg16`, `vgg19`) as TF 2.15's
Keras builds them: five blocks of 3x3 'same' ReLU convolutions ('block<b>_conv<i>') each
followed by 2x2 max pooling ('block<b>_pool'); with the top, Flatten and the Dense
layers 'fc1', 'fc2' (4096 units) and 'predictions'.

Reference: Simonyan & Zisserman, "Very Deep Convolutional Networks for Large-Scale
Image Recognition" (ICLR 2015).
"""
from __future__ import annotations

from typing import Optional, Sequence

from tensorweave.framework.api_export import tf_export
from tensorweave.keras import layers
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.engine.training import Model

_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/"
# model name -> (top file md5, no-top file md5), as Keras' vgg16.py and vgg19.py.
WEIGHTS_HASHES = {
    "vgg16": ("64373286793e3c8b2b4e3219cbf3544b", "6d6bbae143d832006294945121d1f1fc"),
    "vgg19": ("cbe5617147190e668d6c5d5026f83318", "253f8cb515780f3b799900260a226db6"),
}


def weights_file(model_name: str, include_top: bool) -> tuple:
    """(file name, URL, md5) of the 'imagenet' weights of `model_name`."""
    file_name = "%s_weights_tf_dim_ordering_tf_kernels%s.h5" % (
        model_name, "" if include_top else "_notop")
    file_hash = WEIGHTS_HASHES[model_name][0 if include_top else 1]
    return file_name, _BASE + model_name + "/" + file_name, file_hash


def _vgg(model_name: str, convs_per_block: Sequence[int], include_top: bool, weights,
         input_tensor, input_shape, pooling, classes: int, classifier_activation) -> Model:
    img_input = imagenet_utils.image_input(weights, include_top, classes, input_tensor,
                                           input_shape, default_size=224, min_size=32)
    x = img_input
    for block, (filters, convs) in enumerate(zip((64, 128, 256, 512, 512),
                                                 convs_per_block), start=1):
        for i in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same",
                              name="block%d_conv%d" % (block, i))(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name="block%d_pool" % block)(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.top_or_pooling(x, False, pooling, classes, None, weights)
    return imagenet_utils.build_model(input_tensor, img_input, x, model_name, weights,
                                      lambda: weights_file(model_name, include_top))


_ARGS_DOC = """
    Args:
      include_top: whether to include the three fully-connected layers at the top.
      weights: None (random initialization), 'imagenet' (downloaded into
        ~/.keras/models) or the path of a weights file.
      input_tensor: a Keras tensor (or a tensor) to use as the image input.
      input_shape: the input shape without the batch axis; only without the top
        (with it, (224, 224, 3)); 3 channels, height and width at least 32.
      pooling: without the top, None (the 4-D output of the last block), 'avg' or
        'max' (global pooling to a 2-D output).
      classes: the number of classes of the top (1000 with 'imagenet' weights).
      classifier_activation: the activation of the 'predictions' layer (only None or
        'softmax' with pretrained weights).

    Returns:
      A `tf.keras.Model`.

    Raises:
      ValueError: invalid `weights`, `classes`, `input_shape` or
        `classifier_activation` (as Keras).
"""


@tf_export("keras.applications.VGG16", "keras.applications.vgg16.VGG16")
def VGG16(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
          input_tensor=None, input_shape=None, pooling: Optional[str] = None,
          classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the VGG16 model (13 convolutions in blocks of 2, 2, 3, 3, 3);
    inputs are preprocessed by `tf.keras.applications.vgg16.preprocess_input`."""
    return _vgg("vgg16", (2, 2, 3, 3, 3), include_top, weights, input_tensor, input_shape,
                pooling, classes, classifier_activation)


@tf_export("keras.applications.VGG19", "keras.applications.vgg19.VGG19")
def VGG19(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
          input_tensor=None, input_shape=None, pooling: Optional[str] = None,
          classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the VGG19 model (16 convolutions in blocks of 2, 2, 4, 4, 4);
    inputs are preprocessed by `tf.keras.applications.vgg19.preprocess_input`."""
    return _vgg("vgg19", (2, 2, 4, 4, 4), include_top, weights, input_tensor, input_shape,
                pooling, classes, classifier_activation)


VGG16.__doc__ += _ARGS_DOC
VGG19.__doc__ += _ARGS_DOC


@tf_export("keras.applications.vgg16.preprocess_input",
           "keras.applications.vgg19.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """VGG's preprocessing ('caffe' mode): the images converted from RGB to BGR and
    each channel zero-centered by the ImageNet means, without scaling."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
