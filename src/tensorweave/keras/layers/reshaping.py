"""Keras reshaping layers: Permute, RepeatVector, ZeroPadding1D/2D/3D, Cropping1D/2D/3D
and UpSampling1D/2D/3D (repeats; 2-D also bilinear, with half-pixel centers as TF2's
`tf.image.resize` that TF's Keras uses)."""
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


_ORDINALS = ("1st", "2nd", "3rd")


def _pairs(value, rank: int, what: str, argument: str) -> tuple:
    """An int, `rank` ints, or `rank` pairs of ints as `rank` (before, after) pairs
    ((top, bottom), (left, right) for 2-D), as Keras' padding and cropping layers take
    them.

    Raises:
      ValueError: a value of another form.
    """
    if isinstance(value, int):
        return ((value, value),) * rank
    if not hasattr(value, "__len__"):
        if rank == 2:
            raise ValueError(
                "`%s` should be either an int, a tuple of 2 ints (symmetric_height_%s, "
                "symmetric_width_%s), or a tuple of 2 tuples of 2 ints ((top_%s, bottom_%s), "
                "(left_%s, right_%s)). Received: %s." % ((argument,) + (what,) * 6 + (value,)))
        raise ValueError(
            "`%s` should be either an int, a tuple of 3 ints (symmetric_dim1_%s, "
            "symmetric_dim2_%s, symmetric_dim3_%s), or a tuple of 3 tuples of 2 ints "
            "((left_dim1_%s, right_dim1_%s), (left_dim2_%s, right_dim2_%s), (left_dim3_%s, "
            "right_dim2_%s)). Received: %s." % ((argument,) + (what,) * 9 + (value,)))
    if len(value) != rank:
        raise ValueError("`%s` should have %s elements. Received: %s."
                         % (argument, "two" if rank == 2 else rank, value))
    return tuple(normalize_tuple(v, 2, "%s entry of %s" % (_ORDINALS[i], argument))
                 for i, v in enumerate(value))


class _Spatial(Layer):
    """A layer on the `_rank` spatial axes of a [batch, *spatial, channels] (or
    channels_first) input; subclasses give each axis's new size (`_new_size`)."""

    _rank = 2

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _spatial_axes(self) -> tuple:
        first = 2 if self.data_format == "channels_first" else 1
        return tuple(range(first, first + self._rank))

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        for i, axis in enumerate(self._spatial_axes()):
            dims[axis] = None if dims[axis] is None else self._new_size(i, dims[axis])
        return tf.TensorShape(dims)


class _ZeroPadding(_Spatial):
    """Pads the spatial axes with zeros (`self.padding`: one (before, after) pair per
    axis)."""

    def _new_size(self, i: int, size: int) -> int:
        return size + sum(self.padding[i])

    def call(self, inputs):
        pads = [[0, 0] for _ in range(self._rank + 2)]
        for pair, axis in zip(self.padding, self._spatial_axes()):
            pads[axis] = list(pair)
        return tf.pad(inputs, pads)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("padding", "data_format"))


@tf_export("keras.layers.ZeroPadding1D")
class ZeroPadding1D(_ZeroPadding):
    """Pads the steps of a [batch, steps, features] input with zeros.

    Args:
      padding: an int, or (before, after).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a padding of another form.
    """

    _rank = 1

    def __init__(self, padding=1, **kwargs):
        super().__init__(data_format="channels_last", **kwargs)
        self.padding = normalize_tuple(padding, 2, "padding")

    def call(self, inputs):
        return tf.pad(inputs, [[0, 0], list(self.padding), [0, 0]])

    def _new_size(self, i: int, size: int) -> int:
        return size + sum(self.padding)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("padding",))


@tf_export("keras.layers.ZeroPadding2D")
class ZeroPadding2D(_ZeroPadding):
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
        self.padding = _pairs(padding, 2, "pad", "padding")


@tf_export("keras.layers.ZeroPadding3D")
class ZeroPadding3D(_ZeroPadding):
    """Pads the three spatial axes of a 5-D input with zeros.

    Args:
      padding: an int, 3 ints, or 3 (before, after) pairs.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a padding of another form.
    """

    _rank = 3

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.padding = _pairs(padding, 3, "pad", "padding")


class _Cropping(_Spatial):
    """Crops the spatial axes (`self.cropping`: one (before, after) pair per axis)."""

    def _new_size(self, i: int, size: int) -> int:
        return size - sum(self.cropping[i])

    def call(self, inputs):
        index = [slice(None)] * (self._rank + 2)
        for (start, end), axis in zip(self.cropping, self._spatial_axes()):
            index[axis] = slice(start, -end if end else None)
        return inputs[tuple(index)]

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("cropping", "data_format"))


@tf_export("keras.layers.Cropping1D")
class Cropping1D(_Cropping):
    """Crops the steps of a [batch, steps, features] input.

    Args:
      cropping: an int, or (before, after).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a cropping of another form, or (at call) one as large as the input.
    """

    _rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(data_format="channels_last", **kwargs)
        self.cropping = normalize_tuple(cropping, 2, "cropping")

    def _new_size(self, i: int, size: int) -> int:
        return size - sum(self.cropping)

    def call(self, inputs):
        steps = inputs.shape.as_list()[1] if inputs.shape.ndims else None
        if steps is not None and sum(self.cropping) >= steps:
            raise ValueError("cropping parameter of Cropping layer must be greater than the "
                             "input shape. Received: inputs.shape=%s, and cropping=%s"
                             % (inputs.shape, self.cropping))
        start, end = self.cropping
        return inputs[:, start:(-end if end else None), :]

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("cropping",))


@tf_export("keras.layers.Cropping2D")
class Cropping2D(_Cropping):
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
        self.cropping = _pairs(cropping, 2, "crop", "cropping")

    def call(self, inputs):
        dims = inputs.shape.as_list()
        for i, axis in enumerate(self._spatial_axes()):
            if dims[axis] is not None and sum(self.cropping[i]) >= dims[axis]:
                raise ValueError("Argument `cropping` must be greater than the input shape. "
                                 "Received: inputs.shape=%s, and cropping=%s"
                                 % (inputs.shape, self.cropping))
        return super().call(inputs)


@tf_export("keras.layers.Cropping3D")
class Cropping3D(_Cropping):
    """Crops the three spatial axes of a 5-D input.

    Args:
      cropping: an int, 3 ints, or 3 (before, after) pairs.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a cropping of another form.
    """

    _rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.cropping = _pairs(cropping, 3, "crop", "cropping")


def _repeat(x, times: int, axis: int):
    """Each entry of `x` repeated `times` times along `axis` (NumPy's `repeat`)."""
    if times == 1:
        return x
    dims = x.shape.as_list()
    x = tf.expand_dims(x, axis + 1)
    multiples = [1] * (len(dims) + 1)
    multiples[axis + 1] = times
    x = tf.tile(x, multiples)
    dynamic = tf.shape(x)
    new_shape = [d if d is not None else dynamic[i] for i, d in enumerate(dims)]
    new_shape[axis] = dims[axis] * times if dims[axis] is not None else \
        dynamic[axis] * times
    return tf.reshape(x, tf.stack(new_shape) if any(isinstance(d, tf.Tensor)
                                                    for d in new_shape) else new_shape)


@tf_export("keras.layers.UpSampling1D")
class UpSampling1D(_Spatial):
    """Repeats each step of a [batch, steps, features] input `size` times.

    Args:
      size: the repetition factor.
      **kwargs: the base Layer's.
    """

    _rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(data_format="channels_last", **kwargs)
        self.size = int(size)

    def _new_size(self, i: int, size: int) -> int:
        return size * self.size

    def call(self, inputs):
        outputs = _repeat(inputs, self.size, 1)
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("size",))


@tf_export("keras.layers.UpSampling3D")
class UpSampling3D(_Spatial):
    """Repeats the entries of the three spatial axes of a 5-D input `size` times each.

    Args:
      size: an int or 3 factors.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's.
    """

    _rank = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.size = normalize_tuple(size, 3, "size")

    def _new_size(self, i: int, size: int) -> int:
        return size * self.size[i]

    def call(self, inputs):
        outputs = inputs
        for factor, axis in zip(self.size, self._spatial_axes()):
            outputs = _repeat(outputs, factor, axis)
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("size", "data_format"))


@tf_export("keras.layers.UpSampling2D")
class UpSampling2D(_Spatial):
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
        with tf.name_scope(None, "resize", [x]):  # TF2's tf.image.resize scope
            x = resize(x, new_shape, half_pixel_centers=True)
        return tf.transpose(x, [0, 3, 1, 2]) if first else x

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self),
                            ("size", "data_format", "interpolation"))
