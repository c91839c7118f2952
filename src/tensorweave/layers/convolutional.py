"""`tf.layers` convolution layers: Conv1D/2D/3D, Conv2DTranspose, Conv3DTranspose,
SeparableConv1D/2D and their functions.

Variables, as TF1: `kernel` [*kernel_size, in_channels, filters] (transposed layers:
[*kernel_size, filters, in_channels]), `depthwise_kernel` / `pointwise_kernel` for the
separable layers, and `bias` [filters].
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.shapes import TensorShape
from tensorweave.layers.base import InputSpec
from tensorweave.layers.core import (FUNCTION_DOC, KernelLayer, export_layer,
                                      normalize_data_format)
from tensorweave.ops.array import array_ops
from tensorweave.ops.array.array_join_ops import stack
from tensorweave.ops.array.array_pad_ops import pad
from tensorweave.ops.nn.conv_nd_ops import conv1d, conv3d, conv3d_transpose
from tensorweave.ops.nn.conv_ops import conv2d, conv2d_transpose
from tensorweave.ops.nn.nn_softmax import bias_add
from tensorweave.ops.state import init_ops


# --- argument helpers (Keras' conv_utils rules) ---------------------------------------------
def normalize_tuple(value, n: int, name: str) -> tuple:
    """`value` (an int, or an iterable of `n` ints) as a tuple of `n` ints; ValueError
    naming the argument `name` otherwise."""
    if isinstance(value, int):
        return (value,) * n
    try:
        values = tuple(value)
    except TypeError:
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s"
                         % (name, n, value)) from None
    if len(values) != n or not all(isinstance(v, int) for v in values):
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s"
                         % (name, n, value))
    return values


def normalize_padding(value, allow_causal: bool = False) -> str:
    """A padding argument of any case as "valid" or "same" (or "causal" when
    `allow_causal`, for the convolutions); ValueError for anything else."""
    padding = str(value).lower()
    if padding == "causal" and allow_causal:
        return padding
    if padding not in ("valid", "same"):
        raise ValueError('The `padding` argument must be one of "valid", "same". Received: '
                         '%s' % value)
    return padding


def conv_output_length(length, k: int, padding: str, stride: int, dilation: int = 1):
    """The output length of a convolution or pooling along one axis (None: unknown)."""
    if length is None:
        return None
    eff = (k - 1) * dilation + 1
    out = length if padding == "same" else length - eff + 1
    return (out + stride - 1) // stride


def deconv_output_length(length, k: int, padding: str, stride: int):
    """The output length of a transposed convolution along one axis (None: unknown)."""
    if length is None:
        return None
    return length * stride + (max(k - stride, 0) if padding == "valid" else 0)


def spatial_format(rank: int, channels_first: bool) -> str:
    """The ops' data_format string of an N-d layer ("NHWC", "NCDHW", ...)."""
    return {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}[rank][
        int(channels_first)]


def spatial_output_shape(input_shape, rank: int, data_format: str, channels,
                         length) -> TensorShape:
    """The output shape of an N-d layer of a [batch, *spatial, channels] (or
    channels_first) input: `length(i, size)` for the i-th spatial dimension, `channels`
    output channels (None: the input's)."""
    dims = TensorShape(input_shape).with_rank(rank + 2).as_list()
    first = data_format == "channels_first"
    spatial = dims[2:] if first else dims[1:-1]
    if channels is None:
        channels = dims[1] if first else dims[-1]
    out = [length(i, d) for i, d in enumerate(spatial)]
    return TensorShape([dims[0], channels] + out if first else
                       [dims[0]] + out + [channels])


class _Conv(KernelLayer):
    """The N-d convolution layer (rank 1, 2 or 3) that Conv1D/2D/3D specialise."""

    def __init__(self, rank: int, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None,
                 use_bias: bool = True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable: bool = True, name: Optional[str] = None,
                 **kwargs):
        # `get_config` writes TF's groups=1; other groups are not supported
        if kwargs.pop("groups", 1) != 1:
            raise NotImplementedError("tf.layers convolutions with groups != 1 are not "
                                      "supported by tensorweave")
        super().__init__(activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)
        self.rank = rank
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = normalize_tuple(strides, rank, "strides")
        self.padding = normalize_padding(padding, allow_causal=True)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.input_spec = InputSpec(ndim=rank + 2)
        # TF's (Keras-backed) layers check these when constructed
        if self.padding == "causal" and (rank != 1 or isinstance(self, _ConvTranspose)):
            raise ValueError("Causal padding is only supported for `Conv1D`and "
                             "`SeparableConv1D`.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate "
                             "> 1`. Received: strides=%s and dilation_rate=%s"
                             % (self.strides, self.dilation_rate))

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def _input_channels(self, input_shape) -> int:
        dims = TensorShape(input_shape).as_list()
        channels = dims[self._channel_axis]
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        return channels

    def _kernel_shape(self, channels: int) -> tuple:
        return self.kernel_size + (channels, self.filters)

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self._build_kernel(self._kernel_shape(channels))
        self._build_bias((self.filters,))
        self.input_spec = InputSpec(ndim=self.rank + 2,
                                    axes={self._channel_axis: channels})
        self.built = True

    def _op_padding(self) -> str:
        """The padding the convolution op gets: "VALID" or "SAME" ("VALID" for a causal
        convolution, whose input `_causal_pad` pads)."""
        return "VALID" if self.padding == "causal" else self.padding.upper()

    def _causal_pad(self, inputs):
        """A causal 1-D convolution's input, left-padded by `dilation * (kernel - 1)` on
        its time axis so that output t sees inputs up to t only; other inputs as they
        are."""
        if self.padding != "causal":
            return inputs
        left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
        time_axis = 2 if self.data_format == "channels_first" else 1
        paddings = [[0, 0], [0, 0], [0, 0]]
        paddings[time_axis] = [left, 0]
        return pad(inputs, paddings)

    def _convolve(self, inputs):
        inputs = self._causal_pad(inputs)
        first = self.data_format == "channels_first"
        fmt = spatial_format(self.rank, first)
        padding = self._op_padding()
        if self.rank == 1:
            return conv1d(inputs, self.kernel, list(self.strides), padding, data_format=fmt,
                          dilations=list(self.dilation_rate))
        if self.rank == 2:
            return conv2d(inputs, self.kernel, list(self.strides), padding, data_format=fmt,
                          dilations=list(self.dilation_rate), name="Conv2D")
        return conv3d(inputs, self.kernel, list(self.strides), padding, data_format=fmt,
                      dilations=list(self.dilation_rate), name="Conv3D")

    def _finish(self, outputs):
        if self.use_bias:
            if self.data_format == "channels_first":
                if self.rank == 2:
                    outputs = bias_add(outputs, self.bias, data_format="NCHW")
                else:
                    shape = [1, self.filters] + [1] * self.rank
                    outputs = outputs + array_ops.reshape(self.bias, shape)
            else:
                outputs = bias_add(outputs, self.bias, data_format="NHWC")
        return self._activate(outputs)

    def call(self, inputs):
        return self._finish(self._convolve(inputs))

    def get_config(self) -> dict:
        """TF's keys (`groups` is always 1)."""
        config = self._config_with(("filters", "kernel_size", "strides", "padding",
                                    "data_format", "dilation_rate"))
        config["groups"] = 1
        config.update(self._config_with((
            "activation", "use_bias", "kernel_initializer", "bias_initializer",
            "kernel_regularizer", "bias_regularizer", "activity_regularizer",
            "kernel_constraint", "bias_constraint")))
        return config

    def compute_output_shape(self, input_shape):
        # a causal convolution keeps the length, as a 'same' one
        padding = "same" if self.padding == "causal" else self.padding
        return spatial_output_shape(
            input_shape, self.rank, self.data_format, self.filters,
            lambda i, d: conv_output_length(d, self.kernel_size[i], padding,
                                            self.strides[i], self.dilation_rate[i]))


_CONV_DOC = """A {rank}-D convolution layer (TF1 `tf.layers.{cls}`):
    `activation(conv(inputs, kernel) + bias)`.

    Args:
      filters: the number of output channels.
      kernel_size: an int or a tuple of {rank} ints.
      strides: an int or a tuple of {rank} ints.
      padding: "valid" or "same" (case-insensitive); for the 1-D one also "causal"
        (left padding, so that output t depends on inputs up to t only).
      data_format: "channels_last" (default) or "channels_first".
      dilation_rate: an int or a tuple of {rank} ints.
      activation: a callable applied to the output, or None.
      use_bias: whether to add a bias.
      kernel_initializer: default glorot_uniform; bias_initializer: default zeros.
      kernel_regularizer, bias_regularizer, activity_regularizer: fn -> loss, or None.
      kernel_constraint, bias_constraint: fn(value) -> value, or None.
      trainable: whether the variables are trainable.
      name: the layer's name (its variable scope).
    """


def _conv_class(rank: int, cls_name: str):
    defaults = (1,) * rank

    class Conv(_Conv):
        def __init__(self, filters, kernel_size, strides=defaults, padding="valid",
                     data_format="channels_last", dilation_rate=defaults, activation=None,
                     use_bias: bool = True, kernel_initializer=None,
                     bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable: bool = True,
                     name: Optional[str] = None, **kwargs):
            super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                             data_format=data_format, dilation_rate=dilation_rate,
                             activation=activation, use_bias=use_bias,
                             kernel_initializer=kernel_initializer,
                             bias_initializer=bias_initializer,
                             kernel_regularizer=kernel_regularizer,
                             bias_regularizer=bias_regularizer,
                             activity_regularizer=activity_regularizer,
                             kernel_constraint=kernel_constraint,
                             bias_constraint=bias_constraint, trainable=trainable, name=name,
                             **kwargs)

    return export_layer(Conv, cls_name, _CONV_DOC.format(rank=rank, cls=cls_name))


Conv1D = _conv_class(1, "Conv1D")
Conv2D = _conv_class(2, "Conv2D")
Conv3D = _conv_class(3, "Conv3D")


def _conv_function(cls, rank: int, fn_name: str):
    defaults = (1,) * rank

    def fn(inputs, filters, kernel_size, strides=defaults, padding="valid",
           data_format="channels_last", dilation_rate=defaults, activation=None,
           use_bias: bool = True, kernel_initializer=None,
           bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable: bool = True, name: Optional[str] = None,
           reuse=None):
        layer = cls(filters=filters, kernel_size=kernel_size, strides=strides,
                    padding=padding, data_format=data_format, dilation_rate=dilation_rate,
                    activation=activation, use_bias=use_bias,
                    kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                    kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                    activity_regularizer=activity_regularizer,
                    kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                    trainable=trainable, name=name, _scope=name, _reuse=reuse)
        return layer.apply(inputs)

    return export_layer(fn, fn_name, FUNCTION_DOC % (cls.__name__, fn_name))


conv1d_layer = _conv_function(Conv1D, 1, "conv1d")
conv2d_layer = _conv_function(Conv2D, 2, "conv2d")
conv3d_layer = _conv_function(Conv3D, 3, "conv3d")


# --- transposed convolutions ----------------------------------------------------------------
class _ConvTranspose(_Conv):
    """Conv2DTranspose / Conv3DTranspose: the transpose (input gradient) of a convolution;
    kernel [*kernel_size, filters, in_channels]."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", **kwargs):
        # `get_config` writes TF's output_padding=None; other values are not supported
        if kwargs.pop("output_padding", None) is not None:
            raise NotImplementedError("tf.layers transposed convolutions with "
                                      "output_padding are not supported by tensorweave")
        super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, **kwargs)

    def get_config(self) -> dict:
        config = super().get_config()
        config["output_padding"] = None
        return config

    def _kernel_shape(self, channels: int) -> tuple:
        return self.kernel_size + (self.filters, channels)

    def _convolve(self, inputs):
        first = self.data_format == "channels_first"
        spatial_axes = list(range(2, self.rank + 2)) if first else \
            list(range(1, self.rank + 1))
        dims = inputs.shape.as_list()
        dynamic = array_ops.shape(inputs)
        out = []
        for i, axis in enumerate(spatial_axes):
            size = dims[axis]
            k, s = self.kernel_size[i], self.strides[i]
            if size is not None:
                out.append(deconv_output_length(size, k, self.padding, s))
            else:
                extra = max(k - s, 0) if self.padding == "valid" else 0
                out.append(dynamic[axis] * s + extra)
        batch = dims[0] if dims[0] is not None else dynamic[0]
        parts = [batch, self.filters] + out if first else [batch] + out + [self.filters]
        output_shape = stack(parts)
        fmt = spatial_format(self.rank, first)
        strides = [1, 1] + list(self.strides) if first else [1] + list(self.strides) + [1]
        transpose = conv2d_transpose if self.rank == 2 else conv3d_transpose
        outputs = transpose(inputs, self.kernel, output_shape, strides,
                            padding=self.padding.upper(), data_format=fmt)
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def compute_output_shape(self, input_shape):
        return spatial_output_shape(
            input_shape, self.rank, self.data_format, self.filters,
            lambda i, d: deconv_output_length(d, self.kernel_size[i], self.padding,
                                              self.strides[i]))


_TRANSPOSE_DOC = """A transposed {rank}-D convolution layer (TF1 `tf.layers.{cls}`), the
    learned upsampling that is the gradient of a convolution with respect to its input.

    Args:
      filters: the number of output channels.
      kernel_size: an int or a tuple of {rank} ints.
      strides: an int or a tuple of {rank} ints (the upsampling factors).
      padding: "valid" or "same".
      data_format: "channels_last" (default) or "channels_first".
      activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
      bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint,
      trainable, name: as the convolution layers.
    """


def _transpose_class(rank: int, cls_name: str):
    defaults = (1,) * rank

    class ConvTranspose(_ConvTranspose):
        def __init__(self, filters, kernel_size, strides=defaults, padding="valid",
                     data_format="channels_last", activation=None, use_bias: bool = True,
                     kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable: bool = True,
                     name: Optional[str] = None, **kwargs):
            super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                             data_format=data_format, activation=activation,
                             use_bias=use_bias, kernel_initializer=kernel_initializer,
                             bias_initializer=bias_initializer,
                             kernel_regularizer=kernel_regularizer,
                             bias_regularizer=bias_regularizer,
                             activity_regularizer=activity_regularizer,
                             kernel_constraint=kernel_constraint,
                             bias_constraint=bias_constraint, trainable=trainable, name=name,
                             **kwargs)

    return export_layer(ConvTranspose, cls_name, _TRANSPOSE_DOC.format(rank=rank, cls=cls_name))


Conv2DTranspose = _transpose_class(2, "Conv2DTranspose")
Conv3DTranspose = _transpose_class(3, "Conv3DTranspose")


def _transpose_function(cls, rank: int, fn_name: str):
    defaults = (1,) * rank

    def fn(inputs, filters, kernel_size, strides=defaults, padding="valid",
           data_format="channels_last", activation=None, use_bias: bool = True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable: bool = True,
           name: Optional[str] = None, reuse=None):
        layer = cls(filters=filters, kernel_size=kernel_size, strides=strides,
                    padding=padding, data_format=data_format, activation=activation,
                    use_bias=use_bias, kernel_initializer=kernel_initializer,
                    bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                    bias_regularizer=bias_regularizer,
                    activity_regularizer=activity_regularizer,
                    kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                    trainable=trainable, name=name, _scope=name, _reuse=reuse)
        return layer.apply(inputs)

    return export_layer(fn, fn_name, FUNCTION_DOC % (cls.__name__, fn_name))


conv2d_transpose_layer = _transpose_function(Conv2DTranspose, 2, "conv2d_transpose")
conv3d_transpose_layer = _transpose_function(Conv3DTranspose, 3, "conv3d_transpose")
