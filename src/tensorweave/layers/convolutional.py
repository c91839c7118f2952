"""`tf.layers` convolution layers: Conv1D/2D/3D, Conv2DTranspose, Conv3DTranspose,
SeparableConv1D/2D and their functions.

Variables, as TF1: `kernel` [*kernel_size, in_channels, filters] (transposed layers:
[*kernel_size, filters, in_channels]), `depthwise_kernel` / `pointwise_kernel` for the
separable layers, and `bias` [filters].
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.graph import name_scope
from tensorweave.layers.base import InputSpec, display_shape
from tensorweave.layers.core import (FUNCTION_DOC, KernelLayer, export_layer,
                                      normalize_data_format)
from tensorweave.ops.array import array_ops
from tensorweave.ops.array.array_join_ops import concat, stack
from tensorweave.ops.array.array_pad_ops import pad
from tensorweave.ops.nn.conv_nd_ops import conv1d, conv1d_transpose, conv3d, conv3d_transpose
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


def positive_tuple(value, n: int, name: str, allow_zero: bool = False) -> tuple:
    """`normalize_tuple` with TF's check that the values are positive (or, with
    `allow_zero`, not negative); ValueError naming the argument otherwise."""
    values = normalize_tuple(value, n, name)
    bad = {v for v in values if v < 0 or (v == 0 and not allow_zero)}
    if bad:
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s "
                         "including %s that does not satisfy the requirement `%s`."
                         % (name, n, value, bad, ">= 0" if allow_zero else "> 0"))
    return values


def deconv_output_length(length, k: int, padding: str, stride: int, dilation: int = 1,
                         output_padding: Optional[int] = None):
    """The output length of a transposed convolution along one axis (None: unknown);
    `length` may be a scalar tensor (a dynamic size)."""
    if length is None:
        return None
    k = k + (k - 1) * (dilation - 1)  # the dilated kernel's extent
    if output_padding is None:
        return length * stride + (max(k - stride, 0) if padding == "valid" else 0)
    pad = k // 2 if padding == "same" else 0
    return (length - 1) * stride + k - 2 * pad + output_padding


def with_batch_and_channels(spatial, channels_first: bool, batch=1, channels=1) -> list:
    """A full-rank list (strides, ksize, a shape) from its spatial entries: [batch,
    channels, *spatial] or [batch, *spatial, channels]."""
    spatial = list(spatial)
    if channels_first:
        return [batch, channels] + spatial
    return [batch] + spatial + [channels]


def spatial_format(rank: int, channels_first: bool) -> str:
    """The ops' data_format string of an N-d layer ("NHWC", "NCDHW", ...)."""
    return {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}[rank][
        int(channels_first)]


def spatial_output_shape(input_shape, rank: int, data_format: str, channels,
                         length) -> TensorShape:
    """The output shape of an N-d layer of a [*batch, *spatial, channels] (or
    channels_first) input, with one or more batch dimensions: `length(i, size)` for the
    i-th spatial dimension, `channels` output channels (None: the input's)."""
    dims = TensorShape(input_shape).with_rank_at_least(rank + 2).as_list()
    batch, rest = dims[:len(dims) - rank - 1], dims[len(dims) - rank - 1:]
    first = data_format == "channels_first"
    spatial = rest[1:] if first else rest[:-1]
    if channels is None:
        channels = rest[0] if first else rest[-1]
    out = [length(i, d) for i, d in enumerate(spatial)]
    return TensorShape(batch + ([channels] + out if first else out + [channels]))


def apply_to_flat_batch(inputs, inner_rank: int, fn):
    """`fn` of `inputs` with its leading batch dimensions merged into one, as TF's
    squeeze_batch_dims: [b1, ..., bk, *inner] -> [b1 * ... * bk, *inner] -> fn -> back to
    [b1, ..., bk, *fn's inner]."""
    shape = array_ops.shape(inputs)
    flat = array_ops.reshape(inputs, concat([[-1], shape[-inner_rank:]], 0))
    outputs = fn(flat)
    return array_ops.reshape(outputs, concat([shape[:-inner_rank],
                                              array_ops.shape(outputs)[1:]], 0))


def channels_error(input_shape, axis: int, layer: str = "") -> ValueError:
    """TF's error for an input whose channel dimension is unknown."""
    return ValueError("The channel dimension of the inputs%s should be defined. The "
                      "input_shape received is %s, where axis %d (0-based) is the channel "
                      "dimension, which found to be `None`."
                      % (" to `%s`" % layer if layer else "", display_shape(input_shape),
                         axis))


class _Conv(KernelLayer):
    """The N-d convolution layer (rank 1, 2 or 3) that Conv1D/2D/3D specialise. As TF's,
    it takes inputs with several batch dimensions (merged into one around the
    convolution); the channel axis of a channels_first input is -1 - rank."""

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
        self.filters = _check_filters(filters)
        self.kernel_size = positive_tuple(kernel_size, rank, "kernel_size")
        self.strides = positive_tuple(strides, rank, "strides", allow_zero=True)
        self.padding = normalize_padding(padding, allow_causal=True)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = positive_tuple(dilation_rate, rank, "dilation_rate")
        self.input_spec = InputSpec(min_ndim=rank + 2)
        # TF's (Keras-backed) layers check these when constructed
        if not all(self.strides):
            raise ValueError("The argument `strides` cannot contains 0(s). Received: %s"
                             % (self.strides,))
        if self.padding == "causal" and (rank != 1 or isinstance(self, _ConvTranspose)):
            raise ValueError("Causal padding is only supported for `Conv1D`and "
                             "`SeparableConv1D`.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate "
                             "> 1`. Received: strides=%s and dilation_rate=%s"
                             % (self.strides, self.dilation_rate))

    @property
    def _channel_axis(self) -> int:
        return -1 - self.rank if self.data_format == "channels_first" else -1

    def _input_channels(self, input_shape) -> int:
        channels = TensorShape(input_shape).with_rank_at_least(1).as_list()[
            self._channel_axis]
        if channels is None:
            raise channels_error(input_shape, self._channel_axis)
        return channels

    def _kernel_shape(self, channels: int) -> tuple:
        return self.kernel_size + (channels, self.filters)

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self._check_output_shape(input_shape)
        self._build_kernel(self._kernel_shape(channels))
        self._build_bias((self.filters,))
        self.input_spec = InputSpec(min_ndim=self.rank + 2,
                                    axes={self._channel_axis: channels})
        self.built = True

    def _check_output_shape(self, input_shape) -> None:
        """TF's ValueError, when building, for an output with a dimension <= 0."""
        try:
            self.compute_output_shape(input_shape)
        except ValueError:
            raise ValueError("One of the dimensions in the output is <= 0 due to "
                             "downsampling in %s. Consider increasing the input size. "
                             "Received input shape %s which would produce output shape "
                             "with a zero or negative value in a dimension."
                             % (self.name, TensorShape(input_shape).as_list())) from None

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

    def _extra_batch_dims(self, inputs) -> bool:
        ndims = inputs.shape.ndims
        return ndims is not None and ndims > self.rank + 2

    def _add_bias(self, outputs):
        """`outputs` + bias on the channel axis: BiasAdd (a channels_first 1-D output, a
        broadcast add, as TF), inside 'squeeze_batch_dims' for several batch
        dimensions."""
        if not self.use_bias:
            return outputs
        if self.data_format == "channels_first" and self.rank == 1:
            return outputs + array_ops.reshape(self.bias, [1, self.filters, 1])
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"

        def add(x):
            return bias_add(x, self.bias, data_format=fmt)
        if self._extra_batch_dims(outputs):
            with name_scope("squeeze_batch_dims"):
                return apply_to_flat_batch(outputs, self.rank + 1, add)
        return add(outputs)

    def call(self, inputs):
        if self._extra_batch_dims(inputs):
            with name_scope(type(self).__name__):
                outputs = apply_to_flat_batch(inputs, self.rank + 1, self._convolve)
        else:
            outputs = self._convolve(inputs)
        outputs = self._add_bias(outputs)
        if inputs.shape.ndims:
            outputs.set_shape(self.compute_output_shape(inputs.shape))
        return self._activate(outputs)

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


def _check_filters(filters):
    """`filters` as an int (TF truncates a float); ValueError unless positive."""
    if isinstance(filters, float):
        filters = int(filters)
    if filters is not None and filters <= 0:
        raise ValueError("Invalid value for argument `filters`. Expected a strictly positive "
                         "value. Received filters=%s." % (filters,))
    return filters


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
    """Conv2DTranspose / Conv3DTranspose (and Keras' Conv1DTranspose, rank 1): the
    transpose (input gradient) of a convolution; kernel [*kernel_size, filters,
    in_channels]. As TF's, Conv3DTranspose takes a dilation_rate but ignores it."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", output_padding=None, **kwargs):
        super().__init__(rank, filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, **kwargs)
        self.output_padding = output_padding
        if output_padding is not None:
            self.output_padding = positive_tuple(output_padding, rank, "output_padding",
                                                 allow_zero=True)
            if any(p >= s for s, p in zip(self.strides, self.output_padding)):
                raise ValueError("Strides must be greater than output padding. Received "
                                 "strides=%s, output_padding=%s."
                                 % (self.strides, self.output_padding))

    def get_config(self) -> dict:
        config = super().get_config()
        if self.rank == 3:
            config.pop("dilation_rate")  # as TF's, which ignores it
        config["output_padding"] = self.output_padding
        return config

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.ndims != self.rank + 2:
            raise ValueError("Inputs should have rank %d. Received input_shape=%s."
                             % (self.rank + 2, display_shape(input_shape)))
        channels = input_shape.as_list()[self._channel_axis]
        if channels is None:
            raise channels_error(input_shape, self._channel_axis, type(self).__name__)
        self._build_kernel(self.kernel_size + (self.filters, channels))
        self._build_bias((self.filters,))
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={self._channel_axis: channels})
        self.built = True

    def _output_length(self, i: int, length):
        """The output length along spatial axis i of an input length (an int, a scalar
        tensor, or None)."""
        dilation = self.dilation_rate[i] if self.rank != 3 else 1
        output_padding = None if self.output_padding is None else self.output_padding[i]
        return deconv_output_length(length, self.kernel_size[i], self.padding,
                                    self.strides[i], dilation, output_padding)

    def _convolve(self, inputs):
        first = self.data_format == "channels_first"
        spatial_axes = range(2, self.rank + 2) if first else range(1, self.rank + 1)
        dims = inputs.shape.as_list()
        dynamic = array_ops.shape(inputs)
        out = [self._output_length(i, dims[axis] if dims[axis] is not None
                                   else dynamic[axis])
               for i, axis in enumerate(spatial_axes)]
        output_shape = stack(with_batch_and_channels(out, first, dynamic[0], self.filters))
        strides = with_batch_and_channels(self.strides, first)
        fmt = spatial_format(self.rank, first)
        if self.rank == 1:
            return conv1d_transpose(inputs, self.kernel, output_shape, strides,
                                    padding=self.padding.upper(), data_format=fmt,
                                    dilations=with_batch_and_channels(self.dilation_rate,
                                                                      first))
        if self.rank == 3:
            return conv3d_transpose(inputs, self.kernel, output_shape, strides,
                                    padding=self.padding.upper(), data_format=fmt)
        return conv2d_transpose(inputs, self.kernel, output_shape, strides,
                                padding=self.padding.upper(), data_format=fmt,
                                dilations=with_batch_and_channels(self.dilation_rate, first))

    def compute_output_shape(self, input_shape):
        return spatial_output_shape(input_shape, self.rank, self.data_format, self.filters,
                                    self._output_length)


_TRANSPOSE_DOC = """A transposed {rank}-D convolution layer (TF1 `tf.layers.{cls}`), the
    learned upsampling that is the gradient of a convolution with respect to its input.

    Args:
      filters: the number of output channels.
      kernel_size: an int or a tuple of {rank} ints.
      strides: an int or a tuple of {rank} ints (the upsampling factors).
      padding: "valid" or "same".
      data_format: "channels_last" (default) or "channels_first".
      output_padding: None (the output length is input * stride, plus the kernel's
        overhang for "valid"), or an int or a tuple of {rank} ints, each smaller than
        its stride: the output length is then (input - 1) * stride + kernel
        - 2 * (kernel // 2 for "same", 0 for "valid") + output_padding.
      dilation_rate: an int or a tuple of {rank} ints (ignored by Conv3DTranspose, as
        TF's); not with strides > 1.
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
