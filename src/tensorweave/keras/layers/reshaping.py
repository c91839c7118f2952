"""Keras reshaping layers: Permute, RepeatVector, ZeroPadding2D, Cropping2D and
UpSampling2D (nearest or bilinear, with half-pixel centers as TF2's `tf.image.resize`
that TF's Keras uses)."""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers.layer_utils import layer_config, normalize_data_format
from tensorweave.layers.convolutional import normalize_tuple


@tf_export("keras.layers.Permute")
class Permute(Layer):
    """Permutes the non-batch axes: `dims` are 1-based (`(2, 1)` swaps the two axes of
    each example).

    Args:
      dims: a permutation of 1..rank-1.
      **kwargs: the base Layer's.

    Raises:
      ValueError: `dims` is not such a permutation.
    """

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of "
                             "indices in `dims` must be consecutive and start from 1. Received "
                             "dims=%s" % (dims,))
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs):
        return tf.transpose(inputs, perm=(0,) + self.dims)

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        return tf.TensorShape([dims[0]] + [dims[d] for d in self.dims])

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("dims",))


@tf_export("keras.layers.RepeatVector")
class RepeatVector(Layer):
    """Repeats each [batch, features] example `n` times: [batch, n, features].

    Args:
      n: the number of repetitions.
      **kwargs: the base Layer's.

    Raises:
      TypeError: `n` is not an int.
    """

    def __init__(self, n: int, **kwargs):
        super().__init__(**kwargs)
        self.n = n
        if not isinstance(n, int):
            raise TypeError("Expected an integer value for `n`, got %s." % type(n))
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return tf.tile(tf.expand_dims(inputs, 1), tf.stack([1, self.n, 1]))

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        return tf.TensorShape([dims[0], self.n, dims[1]])

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("n",))


def _pairs(value, what: str, argument: str):
    """An int, a pair of ints, or a pair of pairs as ((top, bottom), (left, right))."""
    if isinstance(value, int):
        return ((value, value), (value, value))
    if not hasattr(value, "__len__"):
        raise ValueError("`%s` should be either an int, a tuple of 2 ints (symmetric_height_%s, "
                         "symmetric_width_%s), or a tuple of 2 tuples of 2 ints ((top_%s, "
                         "bottom_%s), (left_%s, right_%s)). Received: %s."
                         % ((argument,) + (what,) * 6 + (value,)))
    if len(value) != 2:
        raise ValueError("`%s` should have two elements. Received: %s." % (argument, value))
    return (normalize_tuple(value[0], 2, "1st entry of " + argument),
            normalize_tuple(value[1], 2, "2nd entry of " + argument))


class _Spatial2D(Layer):
    """A layer on the two spatial axes of a 4-D input in `data_format`."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=4)

    def _spatial_axes(self) -> tuple:
        return (2, 3) if self.data_format == "channels_first" else (1, 2)

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        for i, axis in enumerate(self._spatial_axes()):
            dims[axis] = None if dims[axis] is None else self._new_size(i, dims[axis])
        return tf.TensorShape(dims)


@tf_export("keras.layers.ZeroPadding2D")
class ZeroPadding2D(_Spatial2D):
    """Pads rows and columns with zeros.

    Args:
      padding: an int, (rows, cols), or ((top, bottom), (left, right)).
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a padding of another form.
    """

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.padding = _pairs(padding, "pad", "padding")

    def _new_size(self, i: int, size: int) -> int:
        return size + sum(self.padding[i])

    def call(self, inputs):
        spatial = [list(p) for p in self.padding]
        pads = [[0, 0], [0, 0]] + spatial if self.data_format == "channels_first" else \
            [[0, 0]] + spatial + [[0, 0]]
        return tf.pad(inputs, pads)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("padding", "data_format"))


@tf_export("keras.layers.Cropping2D")
class Cropping2D(_Spatial2D):
    """Crops rows and columns.

    Args:
      cropping: an int, (rows, cols), or ((top, bottom), (left, right)).
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a cropping of another form, or (at call) one as large as the input.
    """

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.cropping = _pairs(cropping, "crop", "cropping")

    def _new_size(self, i: int, size: int) -> int:
        return size - sum(self.cropping[i])

    def call(self, inputs):
        dims = inputs.shape.as_list()
        for i, axis in enumerate(self._spatial_axes()):
            if dims[axis] is not None and sum(self.cropping[i]) >= dims[axis]:
                raise ValueError("Argument `cropping` must be greater than the input shape. "
                                 "Received: inputs.shape=%s, and cropping=%s"
                                 % (inputs.shape, self.cropping))
        index = [slice(None)] * 4
        for i, axis in enumerate(self._spatial_axes()):
            start, end = self.cropping[i]
            index[axis] = slice(start, -end if end else None)
        return inputs[tuple(index)]

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("cropping", "data_format"))


@tf_export("keras.layers.UpSampling2D")
class UpSampling2D(_Spatial2D):
    """Repeats rows and columns `size` times ('nearest') or interpolates ('bilinear').

    Args:
      size: an int or (rows, cols) factors.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      interpolation: 'nearest' or 'bilinear'.
      **kwargs: the base Layer's.

    Raises:
      NotImplementedError: another interpolation.
    """

    def __init__(self, size=(2, 2), data_format=None, interpolation: str = "nearest",
                 **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.size = normalize_tuple(size, 2, "size")
        known = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
                 "mitchellcubic")
        if interpolation not in known:
            raise NotImplementedError("Value not recognized for `interpolation`: %s. Supported "
                                      "values are: %s" % (interpolation, list(known)))
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError("UpSampling2D(interpolation=%r) is not supported by "
                                      "tensorweave ('nearest' and 'bilinear' are)"
                                      % interpolation)
        self.interpolation = interpolation

    def _new_size(self, i: int, size: int) -> int:
        return size * self.size[i]

    def call(self, inputs):
        first = self.data_format == "channels_first"
        x = tf.transpose(inputs, [0, 2, 3, 1]) if first else inputs
        dims = x.shape.as_list()[1:3]
        if None in dims:
            new_shape = tf.shape(x)[1:3] * tf.constant(list(self.size), dtype=tf.int32)
        else:
            new_shape = [d * s for d, s in zip(dims, self.size)]
        resize = tf.image.resize_nearest_neighbor if self.interpolation == "nearest" else \
            tf.image.resize_bilinear
        x = resize(x, new_shape, half_pixel_centers=True)
        return tf.transpose(x, [0, 3, 1, 2]) if first else x

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self),
                            ("size", "data_format", "interpolation"))
