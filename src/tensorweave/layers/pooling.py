"""`tf.layers` pooling layers: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D and their
functions (no variables)."""
from __future__ import annotations

from typing import Optional

from tensorweave.layers.base import InputSpec, Layer
from tensorweave.layers.convolutional import (conv_output_length, normalize_padding,
                                              normalize_tuple, spatial_format,
                                              spatial_output_shape)
from tensorweave.layers.core import export_layer, normalize_data_format
from tensorweave.ops.nn.pooling_nd_ops import (avg_pool1d, avg_pool3d, max_pool1d,
                                               max_pool3d)
from tensorweave.ops.nn.pooling_ops import avg_pool, max_pool

_FUNCTIONS = {("max", 1): max_pool1d, ("max", 2): max_pool, ("max", 3): max_pool3d,
              ("avg", 1): avg_pool1d, ("avg", 2): avg_pool, ("avg", 3): avg_pool3d}


class _Pooling(Layer):
    """N-d pooling (rank 1, 2 or 3) with a max or average pool function."""

    def __init__(self, kind: str, rank: int, pool_size, strides, padding="valid",
                 data_format="channels_last", name: Optional[str] = None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.kind, self.rank = kind, rank
        self.pool_size = normalize_tuple(pool_size, rank, "pool_size")
        self.strides = normalize_tuple(self.pool_size if strides is None else strides, rank,
                                       "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def get_config(self) -> dict:
        return self._config_with(("pool_size", "padding", "strides", "data_format"))

    def call(self, inputs):
        first = self.data_format == "channels_first"
        fmt = spatial_format(self.rank, first)
        if self.rank == 2:
            ksize = [1, 1] + list(self.pool_size) if first else \
                [1] + list(self.pool_size) + [1]
            strides = [1, 1] + list(self.strides) if first else \
                [1] + list(self.strides) + [1]
        else:
            ksize, strides = list(self.pool_size), list(self.strides)
        fn = _FUNCTIONS[(self.kind, self.rank)]
        return fn(inputs, ksize, strides, self.padding.upper(), data_format=fmt)

    def compute_output_shape(self, input_shape):
        return spatial_output_shape(
            input_shape, self.rank, self.data_format, None,
            lambda i, d: conv_output_length(d, self.pool_size[i], self.padding,
                                            self.strides[i]))


_DOC = """{what} pooling over {rank}-D windows (TF1 `tf.layers.{cls}`).

    Args:
      pool_size: an int or a tuple of {rank} ints, the window size.
      strides: an int or a tuple of {rank} ints.
      padding: "valid" (default) or "same".
      data_format: "channels_last" (default) or "channels_first".
      name: the layer's name.
    """


def _pool_class(kind: str, rank: int, cls_name: str):
    class Pooling(_Pooling):
        def __init__(self, pool_size, strides, padding="valid",
                     data_format="channels_last", name: Optional[str] = None, **kwargs):
            super().__init__(kind, rank, pool_size, strides, padding=padding,
                             data_format=data_format, name=name, **kwargs)

    return export_layer(Pooling, cls_name, _DOC.format(
        what="Max" if kind == "max" else "Average", rank=rank, cls=cls_name))


def _pool_function(cls, fn_name: str):
    def fn(inputs, pool_size, strides, padding="valid", data_format="channels_last",
           name: Optional[str] = None):
        layer = cls(pool_size=pool_size, strides=strides, padding=padding,
                    data_format=data_format, name=name)
        return layer.apply(inputs)

    return export_layer(fn, fn_name, "Functional interface of `%s` (TF1 `tf.layers.%s`). "
                        "Returns the pooled Tensor." % (cls.__name__, fn_name))


MaxPooling1D = _pool_class("max", 1, "MaxPooling1D")
MaxPooling2D = _pool_class("max", 2, "MaxPooling2D")
MaxPooling3D = _pool_class("max", 3, "MaxPooling3D")
AveragePooling1D = _pool_class("avg", 1, "AveragePooling1D")
AveragePooling2D = _pool_class("avg", 2, "AveragePooling2D")
AveragePooling3D = _pool_class("avg", 3, "AveragePooling3D")

max_pooling1d = _pool_function(MaxPooling1D, "max_pooling1d")
max_pooling2d = _pool_function(MaxPooling2D, "max_pooling2d")
max_pooling3d = _pool_function(MaxPooling3D, "max_pooling3d")
average_pooling1d = _pool_function(AveragePooling1D, "average_pooling1d")
average_pooling2d = _pool_function(AveragePooling2D, "average_pooling2d")
average_pooling3d = _pool_function(AveragePooling3D, "average_pooling3d")
