"""`tf.keras.applications`: the ImageNet models of TF 2.15's Keras for transfer learning,
built with Keras' layer names, weight shapes and order, so that Keras' published HDF5
weights (`weights='imagenet'`, fetched through `tf.keras.utils.get_file` into
~/.keras/models from Keras' URLs, checked against Keras' hashes) load by topology.

  imagenet_utils.py   preprocess_input (caffe, tf, torch modes), decode_predictions,
                      the input shape checks and the steps the models share
  vgg.py              VGG16, VGG19 (namespaces vgg16, vgg19)
  resnet.py           ResNet50, ResNet101, ResNet152 (resnet, resnet50), the ResNet
                      builder and its V1/V2 blocks
  resnet_v2.py        ResNet50V2, ResNet101V2, ResNet152V2
  mobilenet.py        MobileNet
  mobilenet_v2.py     MobileNetV2
  inception_v3.py     InceptionV3
  xception.py         Xception
  densenet.py         DenseNet121, DenseNet169, DenseNet201

Each namespace has its model constructors, `preprocess_input` and
`decode_predictions`. Keras' other families (ConvNeXt, EfficientNet, EfficientNetV2,
InceptionResNetV2, MobileNetV3, NASNet, RegNet, ResNetRS) are not provided: asking for
one raises an AttributeError that says so.
"""
from tensorweave.keras.applications import imagenet_utils
from tensorweave.keras.applications import (densenet, inception_v3, mobilenet, mobilenet_v2,
                                            resnet, resnet_v2, vgg, xception)

__all__ = ["densenet", "imagenet_utils", "inception_v3", "mobilenet", "mobilenet_v2", "resnet",
           "resnet_v2", "vgg", "xception"]

_NOT_PROVIDED = ("ConvNeXt", "EfficientNet", "InceptionResNetV2", "MobileNetV3", "NASNet",
                 "RegNet", "ResNetRS", "convnext", "efficientnet", "inception_resnet_v2",
                 "mobilenet_v3", "nasnet", "regnet", "resnet_rs")


def __getattr__(name: str):
    if name.startswith(_NOT_PROVIDED):
        raise AttributeError(
            "tf.keras.applications.%s is not provided by tensorweave: the application "
            "families provided are VGG16/19, ResNet50/101/152 (and V2), MobileNet, "
            "MobileNetV2, InceptionV3, Xception and DenseNet121/169/201" % name)
    raise AttributeError("module 'tf.keras.applications' has no attribute %r" % name)
