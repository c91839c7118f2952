"""`tf.keras.applications.ResNet50V2`, `ResNet101V2`, `ResNet152V2` (namespace
`resnet_v2`) as TF 2.15's Keras builds them: the pre-activation ResNet of resnet.py
(stacks of V2 blocks, the stride in each stack's last block, 'post_bn' at the end); the
inputs scaled to [-1, 1] ('tf' preprocessing).

Reference: He et al., "Identity Mappings in Deep Residual Networks" (ECCV 2016).
"""
from __future__ import annotations

from typing import Callable, Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.keras.applications import imagenet_utils, resnet
from tensorweave.keras.engine.training import Model


def _v2_stacks(blocks: tuple) -> Callable:
    def stack_fn(layers, x):
        x = resnet.stack2(layers, x, 64, blocks[0], name="conv2")
        x = resnet.stack2(layers, x, 128, blocks[1], name="conv3")
        x = resnet.stack2(layers, x, 256, blocks[2], name="conv4")
        return resnet.stack2(layers, x, 512, blocks[3], stride1=1, name="conv5")
    return stack_fn


def _v2_model(model_name: str, blocks: tuple, include_top, weights, input_tensor,
              input_shape, pooling, classes, classifier_activation) -> Model:
    return resnet.ResNet(_v2_stacks(blocks), True, True, model_name, include_top, weights,
                         input_tensor, input_shape, pooling, classes,
                         classifier_activation=classifier_activation)


@tf_export("keras.applications.ResNet50V2", "keras.applications.resnet_v2.ResNet50V2")
def ResNet50V2(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
               input_tensor=None, input_shape=None, pooling: Optional[str] = None,
               classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the ResNet50V2 model (stacks of 3, 4, 6, 3 blocks); inputs are
    preprocessed by `tf.keras.applications.resnet_v2.preprocess_input`."""
    return _v2_model("resnet50v2", (3, 4, 6, 3), include_top, weights, input_tensor,
                     input_shape, pooling, classes, classifier_activation)


@tf_export("keras.applications.ResNet101V2", "keras.applications.resnet_v2.ResNet101V2")
def ResNet101V2(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
                input_tensor=None, input_shape=None, pooling: Optional[str] = None,
                classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the ResNet101V2 model (stacks of 3, 4, 23, 3 blocks); inputs are
    preprocessed by `tf.keras.applications.resnet_v2.preprocess_input`."""
    return _v2_model("resnet101v2", (3, 4, 23, 3), include_top, weights, input_tensor,
                     input_shape, pooling, classes, classifier_activation)


@tf_export("keras.applications.ResNet152V2", "keras.applications.resnet_v2.ResNet152V2")
def ResNet152V2(include_top: bool = True, weights: Optional[str] = "imagenet",  # noqa: N802
                input_tensor=None, input_shape=None, pooling: Optional[str] = None,
                classes: int = 1000, classifier_activation="softmax") -> Model:
    """Instantiates the ResNet152V2 model (stacks of 3, 8, 36, 3 blocks); inputs are
    preprocessed by `tf.keras.applications.resnet_v2.preprocess_input`."""
    return _v2_model("resnet152v2", (3, 8, 36, 3), include_top, weights, input_tensor,
                     input_shape, pooling, classes, classifier_activation)


for _model in (ResNet50V2, ResNet101V2, ResNet152V2):
    _model.__doc__ += imagenet_utils.constructor_args_doc(
        224, 32, pooling="None (the last block's 4-D output), 'avg' or 'max'")


@tf_export("keras.applications.resnet_v2.preprocess_input")
def preprocess_input(x, data_format: Optional[str] = None):
    """ResNetV2's preprocessing ('tf' mode): the pixels scaled from [0, 255] to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


preprocess_input.__doc__ += imagenet_utils.PREPROCESS_ARGS_DOC
