"""Keras' LocallyConnected1D/2D (implementation 1, Keras' default): convolutions whose
weights are not shared, each output position having its own kernel.

Weights as Keras': 'kernel' [positions, prod(kernel_size) * in_channels, filters], the
patch of each position flattened in [*kernel_size, channels] order (channels_last) or
[channels, *kernel_size] (channels_first), positions row-major; 'bias'
[*output_size, filters]. The patches come from `tf.image.extract_image_patches` (a 1-D
input as an image of height 1), so the gradients are the ops'.
"""
from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import export
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers.layer_utils import (layer_config, normalize_data_format,
                                                  normalize_padding, resolve_identifiers)
from tensorweave.layers import convolutional as layers_conv


class _LocallyConnected(Layer):
    """The locally connected layer of rank 1 or 2 (`_rank`)."""

    _rank = 2

    def __init__(self, filters: int, kernel_size, strides=1, padding: str = "valid",
                 data_format=None, activation=None, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, implementation: int = 1,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        rank = self._rank
        self.filters = filters
        self.kernel_size = layers_conv.normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = layers_conv.normalize_tuple(strides, rank, "strides")
        self.padding = normalize_padding(padding)
        if self.padding != "valid" and implementation == 1:
            raise ValueError('Invalid border mode for %s (only "valid" is supported if '
                             "implementation is 1): %s" % (type(self).__name__, padding))
        if implementation != 1:
            raise NotImplementedError("%s implementation=%s is not supported by tensorweave "
                                      "(only 1)" % (type(self).__name__, implementation))
        self.data_format = normalize_data_format(data_format)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.implementation = implementation
        resolve_identifiers(self)
        self.input_spec = InputSpec(ndim=rank + 2)

    def _split_shape(self, input_shape):
        """(batch, spatial dims, channels) of an input shape."""
        dims = tf.TensorShape(input_shape).as_list()
        if self.data_format == "channels_first":
            return dims[0], dims[2:], dims[1]
        return dims[0], dims[1:-1], dims[-1]

    def _output_size(self, spatial) -> list:
        return [layers_conv.conv_output_length(d, k, "valid", s)
                for d, k, s in zip(spatial, self.kernel_size, self.strides)]

    def build(self, input_shape):
        _, spatial, channels = self._split_shape(input_shape)
        if None in spatial and self._rank == 1:
            # Keras' LocallyConnected1D compares the unknown output length with 0
            raise TypeError("'<=' not supported between instances of 'NoneType' and 'int'")
        if None in spatial:
            raise ValueError("The spatial dimensions of the inputs to  a %s layer should be "
                             "fully-defined, but layer received the inputs shape %s"
                             % (type(self).__name__, tf.TensorShape(input_shape)))
        self.output_size = self._output_size(spatial)
        if min(self.output_size) <= 0:
            raise ValueError("One of the dimensions in the output is <= 0 due to downsampling "
                             "in %s. Consider increasing the input size. Received input shape "
                             "%s which would produce output shape with a zero or negative "
                             "value in a dimension." % (self.name, tf.TensorShape(input_shape)))
        positions = int(np.prod(self.output_size))
        self.kernel = self.add_weight(
            shape=(positions, int(np.prod(self.kernel_size)) * channels, self.filters),
            initializer=self.kernel_initializer, name="kernel",
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=tuple(self.output_size) + (self.filters,),
                initializer=self.bias_initializer, name="bias",
                regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        axis = 1 if self.data_format == "channels_first" else -1
        self.input_spec = InputSpec(ndim=self._rank + 2, axes={axis: channels})
        self.built = True

    def _patches(self, inputs):
        """[batch, positions, patch size]: each position's flattened patch, in the
        kernel's order."""
        rank = self._rank
        first = self.data_format == "channels_first"
        x = tf.transpose(inputs, [0] + list(range(2, rank + 2)) + [1]) if first else inputs
        sizes, strides = self.kernel_size, self.strides
        if rank == 1:
            x = tf.expand_dims(x, 1)
            sizes, strides = (1,) + sizes, (1,) + strides
        patches = tf.image.extract_image_patches(
            x, ksizes=[1, *sizes, 1], strides=[1, *strides, 1], rates=[1, 1, 1, 1],
            padding="VALID")
        positions = int(np.prod(self.output_size))
        window = int(np.prod(self.kernel_size))
        patches = tf.reshape(patches, [-1, positions, window, x.shape.as_list()[-1]])
        if first:  # channels outermost in the flattened patch
            patches = tf.transpose(patches, [0, 1, 3, 2])
        return tf.reshape(patches, [-1, positions, self.kernel.shape.as_list()[1]])

    def call(self, inputs):
        patches = tf.transpose(self._patches(inputs), [1, 0, 2])  # [positions, batch, ...]
        outputs = tf.transpose(tf.matmul(patches, self.kernel), [1, 0, 2])
        outputs = tf.reshape(outputs, [-1] + self.output_size + [self.filters])
        first = self.data_format == "channels_first"
        if first:
            rank = self._rank
            outputs = tf.transpose(outputs, [0, rank + 1] + list(range(1, rank + 1)))
        if self.use_bias:
            # as Keras' bias_add of a [*output_size, filters] bias: channels_first reshapes
            # it (not transposes) to [filters, *output_size]
            shape = [1, self.filters] + self.output_size if first else \
                [1] + self.output_size + [self.filters]
            outputs = outputs + tf.reshape(self.bias, shape)
        return self.activation(outputs) if self.activation is not None else outputs

    def compute_output_shape(self, input_shape):
        batch, spatial, _ = self._split_shape(input_shape)
        size = self._output_size(spatial)
        if self.data_format == "channels_first":
            return tf.TensorShape([batch, self.filters] + size)
        return tf.TensorShape([batch] + size + [self.filters])

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "filters", "kernel_size", "strides", "padding", "data_format", "activation",
            "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
            "bias_regularizer", "activity_regularizer", "kernel_constraint",
            "bias_constraint", "implementation"))


_DOC = """A locally connected {rank}-D layer: a 'valid' convolution without weight sharing
    (Keras' implementation 1).

    Args:
      filters: the number of output channels.
      kernel_size, strides: an int or a tuple of {rank} ints.
      padding: 'valid' (the only one of implementation 1).
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      activation, use_bias: as Conv{rank}D.
      kernel_initializer (default 'glorot_uniform'), bias_initializer (default 'zeros'),
      kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
      bias_constraint: objects or their names.
      implementation: 1 (2 and 3, Keras' dense and sparse variants, are not supported).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a padding other than 'valid'; at build, unknown spatial dimensions (a
        TypeError for LocallyConnected1D, as Keras') or an output size below 1.
      NotImplementedError: an implementation other than 1.
    """


class LocallyConnected1D(_LocallyConnected):
    __doc__ = _DOC.format(rank=1)
    _rank = 1


class LocallyConnected2D(_LocallyConnected):
    __doc__ = _DOC.format(rank=2)
    _rank = 2


export(LocallyConnected1D, "keras.layers.LocallyConnected1D")
export(LocallyConnected2D, "keras.layers.LocallyConnected2D")
