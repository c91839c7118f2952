"""`tf.layers` pooling layers: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D and their
functions (no variables)."""
from __future__ import annotations

from typing import Optional

from tensorweave.layers.base import InputSpec, Layer
from tensorweave.layers.convolutional import (conv_output_length, normalize_padding,
                                              positive_tuple, spatial_output_shape,
                                              with_batch_and_channels)
from tensorweave.layers.core import export_layer, normalize_data_format
from tensorweave.ops.array import array_ops
from tensorweave.ops.nn.pooling_nd_ops import avg_pool3d, max_pool3d
from tensorweave.ops.nn.pooling_ops import avg_pool, max_pool

# the 1-D layers pool through the 2-D ops, as TF's
_FUNCTIONS = {("max", 2): max_pool, ("max", 3): max_pool3d,
              ("avg", 2): avg_pool, ("avg", 3): avg_pool3d}


class _Pooling(Layer):
    """N-d pooling (rank 1, 2 or 3) with a max or average pool function."""

    def __init__(self, kind: str, rank: int, pool_size, strides, padding="valid",
                 data_format="channels_last", name: Optional[str] = None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.kind, self.rank = kind, rank
        if strides is None:
            raise ValueError("Argument `strides` must not be None.")
        self.pool_size = positive_tuple(pool_size, rank, "pool_size")
        self.strides = positive_tuple(strides, rank, "strides", allow_zero=True)
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def get_config(self) -> dict:
        return self._config_with(("pool_size", "padding", "strides", "data_format"))

    def call(self, inputs):
        first = self.data_format == "channels_first"
        if self.rank == 1:
            # [batch, length, 1, channels] (or [batch, channels, length, 1]), as TF's
            axis = 3 if first else 2
            outputs = self._pool(array_ops.expand_dims(inputs, axis), 2, first,
                                 self.pool_size + (1,), self.strides + (1,))
            return array_ops.squeeze(outputs, [axis])
        if self.rank == 3 and first:
            # as TF's: the 3-D ops pool channels_last inputs
            inputs = array_ops.transpose(inputs, [0, 2, 3, 4, 1])
            outputs = self._pool(inputs, 3, False, self.pool_size, self.strides)
            return array_ops.transpose(outputs, [0, 4, 1, 2, 3])
        return self._pool(inputs, self.rank, first, self.pool_size, self.strides)

    def _pool(self, inputs, rank: int, first: bool, pool_size, strides):
        fn = _FUNCTIONS[(self.kind, rank)]
        return fn(inputs, with_batch_and_channels(pool_size, first),
                  with_batch_and_channels(strides, first), self.padding.upper(),
                  data_format=("NCHW" if first else "NHWC") if rank == 2 else "NDHWC")

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
