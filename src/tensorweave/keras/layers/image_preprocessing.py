"""Keras' image preprocessing layers (keras/src/layers/preprocessing/image_preprocessing.py
of Keras 2.15): Rescaling, Resizing and CenterCrop, also under
`tf.keras.layers.experimental.preprocessing`.

Images are channels last: [..., height, width, channels]. As in TF1 graph mode, a layer
without a dtype takes its inputs' (so integer images stay integer: the inputs are cast to
the layer's dtype, and the outputs cast back to it).
"""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.layer_utils import layer_config
from tensorweave.keras.preprocessing.image_files import (_smart_resize_graph,
                                                         _SMART_RESIZE_METHODS, resize_v2)

# Keras' interpolation names, in its order (the last four have no kernel here)
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
                   "gaussian", "mitchellcubic")


def _check_interpolation(interpolation: str) -> None:
    if interpolation not in _INTERPOLATIONS:
        raise NotImplementedError("Value not recognized for `interpolation`: %s. Supported "
                                  "values are: dict_keys(%s)"
                                  % (interpolation, list(_INTERPOLATIONS)))
    if interpolation not in _SMART_RESIZE_METHODS:
        raise NotImplementedError("interpolation=%r is not supported by tensorweave (no "
                                  "ScaleAndTranslate kernel)" % (interpolation,))


def _with_size(input_shape, height: int, width: int) -> tf.TensorShape:
    dims = tf.TensorShape(input_shape).as_list()
    dims[-3:-1] = [height, width]
    return tf.TensorShape(dims)


@tf_export("keras.layers.Rescaling", "keras.layers.experimental.preprocessing.Rescaling")
class Rescaling(Layer):
    """Maps the inputs to `inputs * scale + offset` (e.g. scale=1/255 for [0, 1]).

    Args:
      scale: the factor.
      offset: the value added after scaling.
      **kwargs: the base Layer's.
    """

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        dtype = self.compute_dtype
        return (tf.cast(inputs, dtype) * tf.cast(self.scale, dtype)
                + tf.cast(self.offset, dtype))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("scale", "offset"))


@tf_export("keras.layers.Resizing", "keras.layers.experimental.preprocessing.Resizing")
class Resizing(Layer):
    """Resizes images to (height, width) as TF 2's `tf.image.resize` (half-pixel
    centers); with `crop_to_aspect_ratio`, the largest centered crop of the target's
    aspect ratio is resized, so nothing is distorted.

    Args:
      height, width: the output size.
      interpolation: 'bilinear' (default), 'nearest', 'bicubic' or 'area'.
      crop_to_aspect_ratio: crop before resizing, keeping the aspect ratio.
      **kwargs: the base Layer's.

    Raises:
      NotImplementedError: an unknown interpolation (Keras' error), or one of 'lanczos3',
        'lanczos5', 'gaussian', 'mitchellcubic' (which tensorweave lacks).
    """

    def __init__(self, height: int, width: int, interpolation: str = "bilinear",
                 crop_to_aspect_ratio: bool = False, **kwargs):
        super().__init__(**kwargs)
        _check_interpolation(interpolation)
        self.height = height
        self.width = width
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio

    def call(self, inputs):
        inputs = tf.cast(inputs, self.compute_dtype)
        size = (self.height, self.width)
        if self.crop_to_aspect_ratio:
            outputs = _smart_resize_graph(tf, inputs, size, self.interpolation)
        else:
            outputs = resize_v2(inputs, size, self.interpolation)
        return tf.cast(outputs, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return _with_size(input_shape, self.height, self.width)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "height", "width", "interpolation", "crop_to_aspect_ratio"))


@tf_export("keras.layers.CenterCrop", "keras.layers.experimental.preprocessing.CenterCrop")
class CenterCrop(Layer):
    """Crops the center (height, width) of images; images smaller than that on an axis
    are resized instead (bilinearly, after the largest centered crop of the target's
    aspect ratio), as Keras'.

    Args:
      height, width: the output size.
      **kwargs: the base Layer's.
    """

    def __init__(self, height: int, width: int, **kwargs):
        super().__init__(**kwargs)
        self.height = height
        self.width = width

    def call(self, inputs):
        inputs = tf.cast(inputs, self.compute_dtype)
        shape = tf.shape(inputs)
        height_excess = shape[-3] - self.height
        width_excess = shape[-2] - self.width

        def crop():
            return tf.image.crop_to_bounding_box(inputs, height_excess // 2,
                                                 width_excess // 2, self.height, self.width)

        def resize():
            resized = _smart_resize_graph(tf, inputs, (self.height, self.width), "bilinear")
            return tf.cast(resized, self.compute_dtype)

        outputs = tf.cond(tf.logical_and(height_excess >= 0, width_excess >= 0), crop,
                          resize)
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def compute_output_shape(self, input_shape):
        return _with_size(input_shape, self.height, self.width)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("height", "width"))
