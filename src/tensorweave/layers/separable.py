"""`tf.layers` separable convolutions: SeparableConv1D/2D and their functions.

A depthwise convolution (`depthwise_kernel` [*kernel_size, in, depth_multiplier]) then
a 1x1 pointwise one (`pointwise_kernel` [*ones, in * depth_multiplier, filters]), then
the bias; 1-D runs through the 2-D ops with a height of 1, as TF1.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.layers.base import InputSpec
from tensorweave.layers.convolutional import _Conv, with_batch_and_channels
from tensorweave.layers.core import FUNCTION_DOC, export_layer
from tensorweave.ops.array import array_ops
from tensorweave.ops.nn.depthwise_ops import separable_conv2d
from tensorweave.ops.nn.nn_softmax import bias_add
from tensorweave.ops.state import init_ops


class _SeparableConv(_Conv):
    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, depth_multiplier=1,
                 activation=None, use_bias: bool = True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                 depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, trainable: bool = True,
                 name: Optional[str] = None, **kwargs):
        super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        # no initializer: get_variable's default (the scope's, else glorot_uniform)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer, constraint=self.depthwise_constraint,
            trainable=True, dtype=self._dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            shape=(1,) * self.rank + (self.depth_multiplier * channels, self.filters),
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer, constraint=self.pointwise_constraint,
            trainable=True, dtype=self._dtype)
        self._build_bias((self.filters,))
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(self._config_with((
            "depth_multiplier", "depthwise_initializer", "pointwise_initializer",
            "depthwise_regularizer", "pointwise_regularizer", "depthwise_constraint",
            "pointwise_constraint")))
        return config

    def _separable(self, inputs, depthwise, pointwise, strides, rate):
        first = self.data_format == "channels_first"
        return separable_conv2d(inputs, depthwise, pointwise,
                                with_batch_and_channels(strides, first),
                                padding=self._op_padding(), rate=list(rate),
                                data_format="NCHW" if first else "NHWC")

    def _convolve(self, inputs):
        return self._separable(inputs, self.depthwise_kernel, self.pointwise_kernel,
                               self.strides, self.dilation_rate)

    def call(self, inputs):
        if self.rank == 2:
            return super().call(inputs)
        # 1-D: the 2-D op on a height of 1; as TF's, the bias is added before that axis
        # is squeezed out
        first = self.data_format == "channels_first"
        spatial = 2 if first else 1
        outputs = self._separable(array_ops.expand_dims(self._causal_pad(inputs), spatial),
                                  array_ops.expand_dims(self.depthwise_kernel, 0),
                                  array_ops.expand_dims(self.pointwise_kernel, 0),
                                  (1,) + self.strides, (1,) + self.dilation_rate)
        if self.use_bias:
            outputs = bias_add(outputs, self.bias, data_format="NCHW" if first else "NHWC")
        return self._activate(array_ops.squeeze(outputs, [spatial]))


_DOC = """A depthwise-separable {rank}-D convolution layer (TF1 `tf.layers.{cls}`).

    Args:
      filters: the number of output channels.
      kernel_size: an int or a tuple of {rank} ints.
      strides: an int or a tuple of {rank} ints.
      padding: "valid" or "same"; for the 1-D one also "causal" (left padding).
      data_format: "channels_last" (default) or "channels_first".
      dilation_rate: an int or a tuple of {rank} ints.
      depth_multiplier: depthwise output channels per input channel.
      activation, use_bias: as the convolution layers.
      depthwise_initializer, pointwise_initializer: default glorot_uniform;
      bias_initializer: default zeros.
      depthwise_regularizer, pointwise_regularizer, bias_regularizer,
      activity_regularizer: fn -> loss, or None.
      depthwise_constraint, pointwise_constraint, bias_constraint: or None.
      trainable, name: as the convolution layers.
    """


def _separable_class(rank: int, cls_name: str):
    defaults = (1,) * rank

    class SeparableConv(_SeparableConv):
        def __init__(self, filters, kernel_size, strides=defaults, padding="valid",
                     data_format="channels_last", dilation_rate=defaults,
                     depth_multiplier=1, activation=None, use_bias: bool = True,
                     depthwise_initializer=None, pointwise_initializer=None,
                     bias_initializer=init_ops.zeros_initializer(),
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable: bool = True,
                     name: Optional[str] = None, **kwargs):
            super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                             data_format=data_format, dilation_rate=dilation_rate,
                             depth_multiplier=depth_multiplier, activation=activation,
                             use_bias=use_bias, depthwise_initializer=depthwise_initializer,
                             pointwise_initializer=pointwise_initializer,
                             bias_initializer=bias_initializer,
                             depthwise_regularizer=depthwise_regularizer,
                             pointwise_regularizer=pointwise_regularizer,
                             bias_regularizer=bias_regularizer,
                             activity_regularizer=activity_regularizer,
                             depthwise_constraint=depthwise_constraint,
                             pointwise_constraint=pointwise_constraint,
                             bias_constraint=bias_constraint, trainable=trainable,
                             name=name, **kwargs)

    return export_layer(SeparableConv, cls_name, _DOC.format(rank=rank, cls=cls_name))


SeparableConv1D = _separable_class(1, "SeparableConv1D")
SeparableConv2D = _separable_class(2, "SeparableConv2D")


def _separable_function(cls, rank: int, fn_name: str):
    defaults = (1,) * rank

    def fn(inputs, filters, kernel_size, strides=defaults, padding="valid",
           data_format="channels_last", dilation_rate=defaults, depth_multiplier=1,
           activation=None, use_bias: bool = True, depthwise_initializer=None,
           pointwise_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
           bias_constraint=None, trainable: bool = True, name: Optional[str] = None,
           reuse=None):
        layer = cls(filters=filters, kernel_size=kernel_size, strides=strides,
                    padding=padding, data_format=data_format, dilation_rate=dilation_rate,
                    depth_multiplier=depth_multiplier, activation=activation,
                    use_bias=use_bias, depthwise_initializer=depthwise_initializer,
                    pointwise_initializer=pointwise_initializer,
                    bias_initializer=bias_initializer,
                    depthwise_regularizer=depthwise_regularizer,
                    pointwise_regularizer=pointwise_regularizer,
                    bias_regularizer=bias_regularizer,
                    activity_regularizer=activity_regularizer,
                    depthwise_constraint=depthwise_constraint,
                    pointwise_constraint=pointwise_constraint,
                    bias_constraint=bias_constraint, trainable=trainable, name=name,
                    _scope=name, _reuse=reuse)
        return layer.apply(inputs)

    return export_layer(fn, fn_name, FUNCTION_DOC % (cls.__name__, fn_name))


separable_conv1d = _separable_function(SeparableConv1D, 1, "separable_conv1d")
separable_conv2d_layer = _separable_function(SeparableConv2D, 2, "separable_conv2d")
