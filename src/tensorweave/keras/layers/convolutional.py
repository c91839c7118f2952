"""Keras convolution layers: Conv1D/2D/3D (also grouped), Conv1D/2D/3DTranspose,
SeparableConv1D/2D (and their Convolution* aliases), DepthwiseConv1D/2D.

They reuse the tf.layers convolutions' `build`/`call` with Keras' arguments: string
identifiers, data_format defaulting to `backend.image_data_format()` (Conv1D and the 1-D
layers to 'channels_last'), 'causal' padding for the 1-D ones, `output_padding` for the
transposed ones, Keras' checks and messages. Variables as TF: 'kernel', 'bias';
'depthwise_kernel', 'pointwise_kernel' for the separable ones; 'depthwise_kernel' and
'bias' for the depthwise ones (Keras' own layers, not tf.layers').
"""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import export
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras import backend, initializers
from tensorweave.keras.layers.layer_utils import (layer_config, normalize_data_format,
                                                  normalize_padding, resolve_identifiers)
from tensorweave.layers import convolutional as layers_conv
from tensorweave.layers import separable as layers_separable

# Keras' Conv.get_config keys, in its order
_CONV_CONFIG = ("filters", "kernel_size", "strides", "padding", "data_format",
                "dilation_rate", "groups", "activation", "use_bias", "kernel_initializer",
                "bias_initializer", "kernel_regularizer", "bias_regularizer",
                "activity_regularizer", "kernel_constraint", "bias_constraint")


def _check_filters(filters) -> None:
    if isinstance(filters, float):
        filters = int(filters)
    if filters is not None and filters <= 0:
        raise ValueError("Invalid value for argument `filters`. Expected a strictly positive "
                         "value. Received filters=%s." % (filters,))


class _KerasConv:
    """What the Keras convolutions add to a tf.layers convolution: causal padding,
    Keras' checks, input spec. A mixin first in the bases (`class Conv2D(_KerasConv,
    tf_layers.Conv2D, keras.Layer)`), so that the method order is this, the tf.layers
    convolution, then keras.Layer's base behaviour."""

    def _keras_checks(self, filters, padding, causal_allowed: bool, groups: int = 1) -> None:
        """Keras' checks, made after the base constructor as TF makes them (so the layer
        has taken its name when they fail)."""
        _check_filters(filters)
        padding = normalize_padding(padding)
        groups = groups or 1
        if filters is not None and filters % groups != 0:
            raise ValueError("The number of filters must be evenly divisible by the number of "
                             "groups. Received: groups=%s, filters=%s" % (groups, filters))
        if not all(self.kernel_size):
            raise ValueError("The argument `kernel_size` cannot contain 0(s). Received: %s"
                             % (self.kernel_size,))
        if not all(self.strides):
            raise ValueError("The argument `strides` cannot contains 0(s). Received: %s"
                             % (self.strides,))
        if padding == "causal" and not causal_allowed:
            raise ValueError("Causal padding is only supported for `Conv1D`and "
                             "`SeparableConv1D`.")
        self.padding = padding
        self.groups = groups
        self.input_spec = InputSpec(min_ndim=self.rank + 2)

    @property
    def _keras_channel_axis(self) -> int:
        return -1 - self.rank if self.data_format == "channels_first" else -1

    def _input_channels(self, input_shape) -> int:
        channels = tf.TensorShape(input_shape).as_list()[self._keras_channel_axis]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The "
                             "input_shape received is %s, where axis %d (0-based) is the "
                             "channel dimension, which found to be `None`."
                             % (input_shape, self._keras_channel_axis))
        return channels

    def build(self, input_shape):
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={
            self._keras_channel_axis: self._input_channels(input_shape)})

    # causal padding itself (padding the input, the output shape) is the tf.layers
    # convolution's


def _conv_class(base, rank: int, name: str, default_format):
    ones = (1,) * rank

    class Conv(_KerasConv, base, Layer):
        def __init__(self, filters, kernel_size, strides=ones, padding="valid",
                     data_format=default_format, dilation_rate=ones, groups: int = 1,
                     activation=None, use_bias: bool = True,
                     kernel_initializer="glorot_uniform", bias_initializer="zeros",
                     kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                     **kwargs):
            super().__init__(
                filters, kernel_size, strides=strides, padding="valid",
                data_format=data_format or backend.image_data_format(),
                dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                kernel_initializer=kernel_initializer,
                bias_initializer=bias_initializer,
                kernel_regularizer=kernel_regularizer,
                bias_regularizer=bias_regularizer,
                activity_regularizer=activity_regularizer,
                kernel_constraint=kernel_constraint,
                bias_constraint=bias_constraint, **kwargs)
            resolve_identifiers(self)
            self._keras_checks(filters, padding, causal_allowed=rank == 1, groups=groups)

        def build(self, input_shape):
            channels = self._input_channels(input_shape)
            if channels % self.groups != 0:
                raise ValueError("The number of input channels must be evenly divisible by "
                                 "the number of groups. Received groups=%s, but the input "
                                 "has %s channels (full input shape is %s)."
                                 % (self.groups, channels, tf.TensorShape(input_shape)))
            super().build(input_shape)

        def _kernel_shape(self, channels: int) -> tuple:
            return self.kernel_size + (channels // self.groups, self.filters)

        def _convolve(self, inputs):
            if self.groups == 1:
                return super()._convolve(inputs)
            # a grouped convolution: each group of input channels convolved with its
            # filters / groups filters, the results concatenated
            axis = 1 if self.data_format == "channels_first" else rank + 1
            fmt = layers_conv.spatial_format(rank, self.data_format == "channels_first")
            pieces = zip(tf.split(self._causal_pad(inputs), self.groups, axis=axis),
                         tf.split(self.kernel, self.groups, axis=rank + 1))
            return tf.concat([tf.nn.convolution(x, kernel, self._op_padding(),
                                                strides=list(self.strides),
                                                dilation_rate=list(self.dilation_rate),
                                                data_format=fmt)
                              for x, kernel in pieces], axis)

        def get_config(self) -> dict:
            return layer_config(self, Layer.get_config(self), _CONV_CONFIG)

    Conv.__name__ = Conv.__qualname__ = name
    Conv.__doc__ = """A {rank}-D convolution layer: `activation(conv(inputs, kernel) + bias)`.

    Args:
      filters: the number of output channels.
      kernel_size, strides, dilation_rate: an int or a tuple of {rank} ints.
      padding: 'valid', 'same'{causal}.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      groups: the number of channel groups convolved separately (dividing the input
        channels and `filters`).
      activation: an activation function or its name.
      use_bias: whether to add a bias.
      kernel_initializer (default 'glorot_uniform'), bias_initializer (default 'zeros'),
      kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
      bias_constraint: objects or their names.
      **kwargs: the base Layer's.

    Raises:
      ValueError: bad filters, kernel_size, strides, padding, data_format or groups.
    """.format(rank=rank, causal=" or 'causal' (left padding, for sequences)" if rank == 1
               else "")
    return Conv


Conv1D = _conv_class(layers_conv.Conv1D, 1, "Conv1D", "channels_last")
Conv2D = _conv_class(layers_conv.Conv2D, 2, "Conv2D", None)
Conv3D = _conv_class(layers_conv.Conv3D, 3, "Conv3D", None)
export(Conv1D, "keras.layers.Conv1D", "keras.layers.Convolution1D")
export(Conv2D, "keras.layers.Conv2D", "keras.layers.Convolution2D")
export(Conv3D, "keras.layers.Conv3D", "keras.layers.Convolution3D")


def _transpose_class(base, rank: int, name: str):
    ones = (1,) * rank

    class ConvTranspose(_KerasConv, base, Layer):
        def __init__(self, filters, kernel_size, strides=ones, padding="valid",
                     output_padding=None, data_format=None, dilation_rate=ones,
                     activation=None, use_bias: bool = True,
                     kernel_initializer="glorot_uniform", bias_initializer="zeros",
                     kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                     **kwargs):
            # output padding, dilation and the output lengths are the tf.layers base's
            # (the same rules as Keras')
            super().__init__(
                filters, kernel_size, strides=strides, padding="valid",
                data_format=data_format or backend.image_data_format(),
                activation=activation, use_bias=use_bias,
                kernel_initializer=kernel_initializer,
                bias_initializer=bias_initializer,
                kernel_regularizer=kernel_regularizer,
                bias_regularizer=bias_regularizer,
                activity_regularizer=activity_regularizer,
                kernel_constraint=kernel_constraint,
                bias_constraint=bias_constraint, output_padding=output_padding,
                dilation_rate=dilation_rate, **kwargs)
            resolve_identifiers(self)
            # Keras' Conv1DTranspose is a Conv1D: its constructor takes 'causal'
            self._keras_checks(filters, padding, causal_allowed=rank == 1)

        def get_config(self) -> dict:
            names = _CONV_CONFIG if rank != 3 else \
                tuple(n for n in _CONV_CONFIG if n != "dilation_rate")  # as Keras
            config = layer_config(self, Layer.get_config(self), names)
            config["output_padding"] = self.output_padding
            return config

    ConvTranspose.__name__ = ConvTranspose.__qualname__ = name
    ConvTranspose.__doc__ = """A transposed {rank}-D convolution (learned upsampling);
    kernel [*kernel_size, filters, in_channels].

    Args:
      filters: the number of output channels.
      kernel_size, strides: an int or a tuple of {rank} ints.
      padding: 'valid' or 'same'.
      output_padding: extra output size per axis (less than the stride), or None.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      dilation_rate: an int or a tuple of {rank} ints (Conv3DTranspose ignores it, as
        Keras'); not with strides > 1.
      activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
      bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint: as Conv.
      **kwargs: the base Layer's.

    Raises:
      ValueError: bad arguments, or an output padding not less than the stride.
    """.format(rank=rank)
    return ConvTranspose


class _Conv1DTransposeBase(layers_conv._ConvTranspose):
    """The rank-1 transposed convolution under Keras' Conv1DTranspose (TF1's tf.layers
    has none)."""

    def __init__(self, filters, kernel_size, **kwargs):
        super().__init__(1, filters, kernel_size, **kwargs)


Conv1DTranspose = _transpose_class(_Conv1DTransposeBase, 1, "Conv1DTranspose")
Conv2DTranspose = _transpose_class(layers_conv.Conv2DTranspose, 2, "Conv2DTranspose")
Conv3DTranspose = _transpose_class(layers_conv.Conv3DTranspose, 3, "Conv3DTranspose")
export(Conv1DTranspose, "keras.layers.Conv1DTranspose", "keras.layers.Convolution1DTranspose")
export(Conv2DTranspose, "keras.layers.Conv2DTranspose", "keras.layers.Convolution2DTranspose")
export(Conv3DTranspose, "keras.layers.Conv3DTranspose", "keras.layers.Convolution3DTranspose")


def _separable_class(base, rank: int, name: str, default_format):
    ones = (1,) * rank

    class SeparableConv(_KerasConv, base, Layer):
        def __init__(self, filters, kernel_size, strides=ones, padding="valid",
                     data_format=default_format, dilation_rate=ones, depth_multiplier=1,
                     activation=None, use_bias: bool = True,
                     depthwise_initializer="glorot_uniform",
                     pointwise_initializer="glorot_uniform", bias_initializer="zeros",
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, **kwargs):
            super().__init__(
                filters, kernel_size, strides=strides, padding="valid",
                data_format=data_format or backend.image_data_format(),
                dilation_rate=dilation_rate, depth_multiplier=depth_multiplier,
                activation=activation,
                use_bias=use_bias,
                depthwise_initializer=depthwise_initializer,
                pointwise_initializer=pointwise_initializer,
                bias_initializer=bias_initializer,
                depthwise_regularizer=depthwise_regularizer,
                pointwise_regularizer=pointwise_regularizer,
                bias_regularizer=bias_regularizer,
                activity_regularizer=activity_regularizer,
                depthwise_constraint=depthwise_constraint,
                pointwise_constraint=pointwise_constraint,
                bias_constraint=bias_constraint, **kwargs)
            resolve_identifiers(self)
            if self.kernel_initializer is None:  # Keras' Conv default, unused here
                self.kernel_initializer = initializers.get("glorot_uniform")
            self._keras_checks(filters, padding, causal_allowed=rank == 1)

        def get_config(self) -> dict:
            # Keras' Conv keys (the unused kernel_* ones too), then the separable ones
            return layer_config(self, Layer.get_config(self), _CONV_CONFIG + (
                "depth_multiplier", "depthwise_initializer", "pointwise_initializer",
                "depthwise_regularizer", "pointwise_regularizer", "depthwise_constraint",
                "pointwise_constraint"))

    SeparableConv.__name__ = SeparableConv.__qualname__ = name
    SeparableConv.__doc__ = """A depthwise-separable {rank}-D convolution: a depthwise
    convolution ('depthwise_kernel' [*kernel_size, in, depth_multiplier]) then a
    pointwise one ('pointwise_kernel' [*ones, in * depth_multiplier, filters]), then the
    bias.

    Args:
      filters, kernel_size, strides, padding, data_format, dilation_rate: as Conv{rank}D.
      depth_multiplier: depthwise output channels per input channel.
      activation, use_bias: as Conv{rank}D.
      depthwise_initializer, pointwise_initializer (default 'glorot_uniform'),
      bias_initializer (default 'zeros'), their regularizers and constraints, and
      activity_regularizer: objects or their names.
      **kwargs: the base Layer's.
    """.format(rank=rank)
    return SeparableConv


SeparableConv1D = _separable_class(layers_separable.SeparableConv1D, 1, "SeparableConv1D",
                                   "channels_last")
SeparableConv2D = _separable_class(layers_separable.SeparableConv2D, 2, "SeparableConv2D",
                                   None)
export(SeparableConv1D, "keras.layers.SeparableConv1D", "keras.layers.SeparableConvolution1D")
export(SeparableConv2D, "keras.layers.SeparableConv2D", "keras.layers.SeparableConvolution2D")


class _DepthwiseConv(Layer):
    """A depthwise convolution of rank 1 or 2: each input channel convolved with its own
    `depth_multiplier` filters ('depthwise_kernel' [*kernel_size, in_channels,
    depth_multiplier]), giving in_channels * depth_multiplier channels, then the bias
    and the activation."""

    _rank = 2

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, activation=None, use_bias: bool = True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        groups = kwargs.pop("groups", 1) or 1
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        rank = self._rank
        self.rank = rank
        self.filters = None
        self.groups = groups  # in configs, as Keras' Conv has it
        self.kernel_size = layers_conv.normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = layers_conv.normalize_tuple(strides, rank, "strides")
        self.padding = normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = layers_conv.normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.depth_multiplier = depth_multiplier
        self.activation = activation
        self.use_bias = use_bias
        self.depthwise_initializer = depthwise_initializer
        self.bias_initializer = bias_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.bias_regularizer = bias_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.bias_constraint = bias_constraint
        resolve_identifiers(self)
        if not all(self.kernel_size):
            raise ValueError("The argument `kernel_size` cannot contain 0(s). Received: %s"
                             % (self.kernel_size,))
        if not all(self.strides):
            raise ValueError("The argument `strides` cannot contains 0(s). Received: %s"
                             % (self.strides,))
        if self.padding == "causal":
            raise ValueError("Causal padding is only supported for `Conv1D`and "
                             "`SeparableConv1D`.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate "
                             "> 1`. Received: strides=%s and dilation_rate=%s"
                             % (self.strides, self.dilation_rate))
        self.input_spec = InputSpec(min_ndim=rank + 2)

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape)
        if input_shape.ndims != self.rank + 2:
            raise ValueError("Inputs to `DepthwiseConv` should have rank %d. Received "
                             "input_shape=%s." % (self.rank + 2, input_shape))
        channels = input_shape.as_list()[self._channel_axis]
        if channels is None:
            raise ValueError("The channel dimension of the inputs to `DepthwiseConv` should "
                             "be defined. The input_shape received is %s, where axis %d "
                             "(0-based) is the channel dimension, which found to be `None`."
                             % (input_shape, self._channel_axis))
        self.depthwise_kernel = self.add_weight(
            shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, name="depthwise_kernel",
            regularizer=self.depthwise_regularizer, constraint=self.depthwise_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(channels * self.depth_multiplier,), initializer=self.bias_initializer,
                name="bias", regularizer=self.bias_regularizer,
                constraint=self.bias_constraint)
        self.input_spec = InputSpec(min_ndim=self.rank + 2,
                                    axes={self._channel_axis: channels})
        self.built = True

    def call(self, inputs):
        first = self.data_format == "channels_first"
        fmt = "NCHW" if first else "NHWC"
        kernel, strides, dilations = self.depthwise_kernel, self.strides, self.dilation_rate
        x = inputs
        if self.rank == 1:  # through the 2-D op with a height of 1, as TF's
            x = tf.expand_dims(x, 2 if first else 1)
            kernel = tf.expand_dims(kernel, 0)
            strides, dilations = (1,) + strides, (1,) + dilations
        op_strides = (1, 1) + strides if first else (1,) + strides + (1,)
        outputs = tf.nn.depthwise_conv2d(x, kernel, strides=list(op_strides),
                                         padding=self.padding.upper(),
                                         dilations=list(dilations), data_format=fmt)
        if self.use_bias:
            outputs = tf.nn.bias_add(outputs, self.bias, data_format=fmt)
        if self.rank == 1:
            outputs = tf.squeeze(outputs, [2 if first else 1])
        return self.activation(outputs) if self.activation is not None else outputs

    def compute_output_shape(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        channels = dims[1] if first else dims[-1]
        channels = None if channels is None else channels * self.depth_multiplier
        spatial = [layers_conv.conv_output_length(d, self.kernel_size[i], self.padding,
                                                  self.strides[i], self.dilation_rate[i])
                   for i, d in enumerate(dims[2:] if first else dims[1:-1])]
        return tf.TensorShape([dims[0], channels] + spatial if first else
                              [dims[0]] + spatial + [channels])

    def get_config(self) -> dict:
        dropped = ("filters", "kernel_initializer", "kernel_regularizer", "kernel_constraint")
        names = tuple(n for n in _CONV_CONFIG if n not in dropped)
        return layer_config(self, Layer.get_config(self), names + (
            "depth_multiplier", "depthwise_initializer", "depthwise_regularizer",
            "depthwise_constraint"))


_DEPTHWISE_DOC = """A depthwise {rank}-D convolution: each input channel convolved with its
    own `depth_multiplier` filters ('depthwise_kernel' [*kernel_size, in_channels,
    depth_multiplier]; output channels in_channels * depth_multiplier), then 'bias' and
    the activation.

    Args:
      kernel_size, strides, dilation_rate: an int or a tuple of {rank} ints.
      padding: 'valid' or 'same'.
      depth_multiplier: the filters per input channel.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      activation, use_bias: as Conv{rank}D.
      depthwise_initializer (default 'glorot_uniform'), bias_initializer (default
      'zeros'), depthwise_regularizer, bias_regularizer, activity_regularizer,
      depthwise_constraint, bias_constraint: objects or their names.
      **kwargs: the base Layer's.

    Raises:
      ValueError: bad kernel_size, strides, padding or data_format; at build, an input
        of another rank or an unknown channel dimension.
    """


class DepthwiseConv1D(_DepthwiseConv):
    __doc__ = _DEPTHWISE_DOC.format(rank=1)
    _rank = 1


class DepthwiseConv2D(_DepthwiseConv):
    __doc__ = _DEPTHWISE_DOC.format(rank=2)
    _rank = 2


export(DepthwiseConv1D, "keras.layers.DepthwiseConv1D")
export(DepthwiseConv2D, "keras.layers.DepthwiseConv2D")
