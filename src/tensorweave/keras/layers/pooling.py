"""Keras pooling layers: Max/AveragePooling1D/2D/3D (the tf.layers ones with Keras'
defaults: pool_size 2, strides = pool_size, data_format from the backend) and
GlobalAverage/GlobalMaxPooling1D/2D/3D (a mean or max over the spatial axes; the 1-D
mean over the unmasked steps given a mask), with their MaxPool*/AvgPool*/GlobalAvgPool*/
GlobalMaxPool* aliases."""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import export
from tensorweave.keras import backend
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers.layer_utils import (layer_config, normalize_data_format,
                                                  normalize_padding)
from tensorweave.layers import pooling as layers_pooling


def _pool_class(base, rank: int, name: str, default_format):
    default_size = 2 if rank == 1 else (2,) * rank

    class Pooling(base, Layer):
        def __init__(self, pool_size=default_size, strides=None, padding="valid",
                     data_format=default_format, **kwargs):
            # Keras' default strides (tf.layers' refuse None)
            strides = pool_size if strides is None else strides
            super().__init__(pool_size, strides, padding="valid",
                             data_format=data_format or backend.image_data_format(),
                             **kwargs)
            self.padding = normalize_padding(padding)
            self.input_spec = InputSpec(ndim=rank + 2)

        def get_config(self) -> dict:
            return layer_config(self, Layer.get_config(self),
                                ("pool_size", "padding", "strides", "data_format"))

    Pooling.__name__ = Pooling.__qualname__ = name
    Pooling.__doc__ = """{what} pooling over {rank}-D windows.

    Args:
      pool_size: an int or a tuple of {rank} ints (default 2 per axis).
      strides: an int or a tuple of {rank} ints (default: pool_size).
      padding: 'valid' or 'same' (case-insensitive).
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's.
    """.format(what="Max" if "Max" in name else "Average", rank=rank)
    return Pooling


MaxPooling1D = _pool_class(layers_pooling.MaxPooling1D, 1, "MaxPooling1D", "channels_last")
MaxPooling2D = _pool_class(layers_pooling.MaxPooling2D, 2, "MaxPooling2D", None)
MaxPooling3D = _pool_class(layers_pooling.MaxPooling3D, 3, "MaxPooling3D", None)
AveragePooling1D = _pool_class(layers_pooling.AveragePooling1D, 1, "AveragePooling1D",
                               "channels_last")
AveragePooling2D = _pool_class(layers_pooling.AveragePooling2D, 2, "AveragePooling2D", None)
AveragePooling3D = _pool_class(layers_pooling.AveragePooling3D, 3, "AveragePooling3D", None)
for _rank in (1, 2, 3):
    export(globals()["MaxPooling%dD" % _rank], "keras.layers.MaxPooling%dD" % _rank,
           "keras.layers.MaxPool%dD" % _rank)
    export(globals()["AveragePooling%dD" % _rank], "keras.layers.AveragePooling%dD" % _rank,
           "keras.layers.AvgPool%dD" % _rank)


class _GlobalPooling(Layer):
    """A mean or max (`_reduce`) over the spatial axes of a [batch, *spatial, channels]
    (or channels_first) input; `keepdims` keeps them with size 1."""

    def __init__(self, data_format=None, keepdims: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _axes(self) -> list:
        if self.data_format == "channels_last":
            return list(range(1, self._rank + 1))
        return list(range(2, self._rank + 2))

    def call(self, inputs):
        axes = self._axes()
        return self._reduce(inputs, axis=axes[0] if self._rank == 1 else axes,
                            keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        axes = self._axes()
        if self.keepdims:
            return tf.TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
        return tf.TensorShape([d for i, d in enumerate(dims) if i not in axes])

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("data_format", "keepdims"))


def _global_class(reduce, rank: int, name: str, default_format):
    class GlobalPooling(_GlobalPooling):
        _rank = rank
        _reduce = staticmethod(reduce)

        def __init__(self, data_format=default_format, keepdims: bool = False, **kwargs):
            super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)

        def call(self, inputs):
            return _GlobalPooling.call(self, inputs)

    GlobalPooling.__name__ = GlobalPooling.__qualname__ = name
    GlobalPooling.call.__qualname__ = name + ".call"  # in TypeErrors, as TF's
    GlobalPooling.__doc__ = """Global {what} pooling over the {rank} spatial axes.

    Args:
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      keepdims: keep the reduced axes with size 1.
      **kwargs: the base Layer's.
    """.format(what="max" if "Max" in name else "average", rank=rank)
    return GlobalPooling


class GlobalAveragePooling1D(_GlobalPooling):
    """Global average pooling over the steps of a [batch, steps, features] (or
    channels_first) input; with a mask ([batch, steps], from the layer before) the mean
    of the unmasked steps. The output has no mask.

    Args:
      data_format: 'channels_last' (default) or 'channels_first'.
      keepdims: keep the steps axis with size 1.
      **kwargs: the base Layer's.
    """

    _rank = 1
    _reduce = staticmethod(tf.reduce_mean)

    def __init__(self, data_format="channels_last", keepdims: bool = False, **kwargs):
        super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        steps_axis = self._axes()[0]
        weights = tf.expand_dims(tf.cast(mask, inputs.dtype),
                                 2 if self.data_format == "channels_last" else 1)
        total = tf.reduce_sum(inputs * weights, axis=steps_axis, keepdims=self.keepdims)
        return total / tf.reduce_sum(weights, axis=steps_axis, keepdims=self.keepdims)

    def compute_mask(self, inputs, mask=None):
        return None


GlobalAveragePooling2D = _global_class(tf.reduce_mean, 2, "GlobalAveragePooling2D", None)
GlobalAveragePooling3D = _global_class(tf.reduce_mean, 3, "GlobalAveragePooling3D", None)
GlobalMaxPooling1D = _global_class(tf.reduce_max, 1, "GlobalMaxPooling1D", "channels_last")
GlobalMaxPooling2D = _global_class(tf.reduce_max, 2, "GlobalMaxPooling2D", None)
GlobalMaxPooling3D = _global_class(tf.reduce_max, 3, "GlobalMaxPooling3D", None)
for _rank in (1, 2, 3):
    export(globals()["GlobalAveragePooling%dD" % _rank],
           "keras.layers.GlobalAveragePooling%dD" % _rank,
           "keras.layers.GlobalAvgPool%dD" % _rank)
    export(globals()["GlobalMaxPooling%dD" % _rank], "keras.layers.GlobalMaxPooling%dD" % _rank,
           "keras.layers.GlobalMaxPool%dD" % _rank)
