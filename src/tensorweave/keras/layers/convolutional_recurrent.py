"""Keras convolutional recurrent layers as `tf.compat.v1.keras.layers` has them in TF
2.15: ConvLSTM1D, ConvLSTM2D and ConvLSTM3D, on the internal ConvRNN base and
ConvLSTMCell (neither exported, as in TF).

A ConvLSTM is an LSTM whose products are convolutions: the input of a time step
([batch, *spatial, channels], or channels first) is convolved with the kernel (with the
layer's strides, padding and dilation), the state h with the recurrent kernel ('same'
padding, stride 1), so that the states [h, c] are images of `filters` channels of the
output's spatial size. ConvRNN runs the cell with `tf.keras.backend.rnn`, as the RNN
layer (recurrent.py) does, and shares its initial_state, mask, stateful and
go_backwards handling; what differs is where states get their shapes (from a
convolution of the input rather than `state_size` alone).

Weights as TF's: 'conv_lstm2d/kernel' [*kernel_size, in_channels, 4 * filters],
'conv_lstm2d/recurrent_kernel' [*kernel_size, filters, 4 * filters], 'conv_lstm2d/bias'
[4 * filters] (the gates i, f, c, o side by side on the last axis; the cell's name is
not in the variable names, since TF's ConvRNN builds the cell in the layer's scope).
"""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import (activations, backend, backend_nn, backend_ops, constraints,
                               initializers, regularizers)
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers import recurrent_cells as cells_lib
from tensorweave.keras.layers.layer_utils import normalize_data_format
from tensorweave.keras.layers.recurrent import RNN
from tensorweave.layers import convolutional as layers_conv

_CONVOLUTIONS = {1: backend_nn.conv1d, 2: backend_nn.conv2d, 3: backend_nn.conv3d}


def _normalize_padding(value) -> str:
    padding = str(value).lower()
    if padding not in ("valid", "same", "causal"):
        raise ValueError('The `padding` argument must be a list/tuple or one of "valid", '
                         '"same" (or "causal", only for `Conv1D). Received: ' + padding)
    return padding


def conv_output_length(length, kernel: int, padding: str, stride: int, dilation: int):
    """Keras' output length of a convolution along one axis ('causal' as 'same')."""
    return layers_conv.conv_output_length(length, kernel, "same" if padding == "causal"
                                          else padding, stride, dilation)


# --- the cell ------------------------------------------------------------------------------
class ConvLSTMCell(cells_lib.DropoutRNNCellMixin, Layer):
    """The cell of ConvLSTM{1,2,3}D: an LSTM step with convolutions for products,

        i = ra(x * Ki + h * Ri + bi)   f = ra(x * Kf + h * Rf + bf)
        o = ra(x * Ko + h * Ro + bo)   c' = f c + i a(x * Kc + h * Rc + bc)
        h' = o a(c')

    (`*`: the convolution; x's with the layer's strides, padding and dilation, h's with
    'same' padding and stride 1).

    Args:
      rank: the rank of the convolution (1, 2 or 3).
      filters: the channels of the output and of the states.
      kernel_size, strides, dilation_rate: an int or a tuple of `rank` ints.
      padding: 'valid' or 'same' ('causal' for rank 1).
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      activation ('tanh'), recurrent_activation ('hard_sigmoid'), use_bias,
        kernel_initializer ('glorot_uniform'), recurrent_initializer ('orthogonal'),
        bias_initializer ('zeros'), unit_forget_bias (True), the regularizers and
        constraints of kernel, recurrent_kernel and bias, dropout, recurrent_dropout: as
        LSTMCell's (one dropout mask per gate and sequence, shaped like a step's input
        or state).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a rank above 3; bad kernel_size, strides, dilation_rate, padding or
        data_format.
    """

    _FIELDS = ("filters", "kernel_size", "strides", "padding", "data_format",
               "dilation_rate", "activation", "recurrent_activation", "use_bias",
               "kernel_initializer", "recurrent_initializer", "bias_initializer",
               "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer",
               "bias_regularizer", "kernel_constraint", "recurrent_constraint",
               "bias_constraint", "dropout", "recurrent_dropout")

    def __init__(self, rank: int, filters: int, kernel_size, strides=1, padding="valid",
                 data_format=None, dilation_rate=1, activation="tanh",
                 recurrent_activation="hard_sigmoid", use_bias: bool = True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias: bool = True,
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        if rank > 3:
            raise ValueError("Rank %s convolutions are not currently implemented. Received: "
                             "rank=%s" % (rank, rank))
        self.rank = rank
        self.filters = filters
        self.kernel_size = layers_conv.positive_tuple(kernel_size, rank, "kernel_size")
        self.strides = layers_conv.positive_tuple(strides, rank, "strides", allow_zero=True)
        self.padding = _normalize_padding(padding)
        self.data_format = normalize_data_format(data_format)
        self.dilation_rate = layers_conv.positive_tuple(dilation_rate, rank, "dilation_rate")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.unit_forget_bias = unit_forget_bias
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.state_size = (self.filters, self.filters)
        self.reset_dropout_mask()
        self.reset_recurrent_dropout_mask()

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape).as_list()
        channel_axis = 1 if self.data_format == "channels_first" else -1
        if input_shape[channel_axis] is None:
            raise ValueError("The channel dimension of the inputs (last axis) should be "
                             "defined. Found None. Full input shape received: "
                             "input_shape=%s" % (tuple(input_shape),))
        input_dim = input_shape[channel_axis]
        self.kernel_shape = self.kernel_size + (input_dim, self.filters * 4)
        self.kernel = self.add_weight(
            shape=self.kernel_shape, initializer=self.kernel_initializer, name="kernel",
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            shape=self.kernel_size + (self.filters, self.filters * 4),
            initializer=self.recurrent_initializer, name="recurrent_kernel",
            regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            def forget_bias_ones(_, *args, **kwargs):
                filters = self.filters
                return tf.concat([self.bias_initializer((filters,), *args, **kwargs),
                                  initializers.Ones()((filters,), *args, **kwargs),
                                  self.bias_initializer((filters * 2,), *args, **kwargs)], 0)

            self.bias = self.add_weight(
                shape=(self.filters * 4,), name="bias",
                initializer=forget_bias_ones if self.unit_forget_bias else
                self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs, states, training=None):
        h_tm1, c_tm1 = states[0], states[1]
        dp_mask = self.get_dropout_mask_for_cell(inputs, training, count=4)
        rec_dp_mask = self.get_recurrent_dropout_mask_for_cell(h_tm1, training, count=4)
        kernels = tf.split(self.kernel, 4, axis=self.rank + 1)
        recurrent_kernels = tf.split(self.recurrent_kernel, 4, axis=self.rank + 1)
        biases = tf.split(self.bias, 4) if self.use_bias else [None] * 4
        z = [self.input_conv(cells_lib._apply_mask(inputs, dp_mask, gate), kernels[gate],
                             biases[gate], padding=self.padding) +
             self.recurrent_conv(cells_lib._apply_mask(h_tm1, rec_dp_mask, gate),
                                 recurrent_kernels[gate])
             for gate in range(4)]
        i = self.recurrent_activation(z[0])
        f = self.recurrent_activation(z[1])
        c = f * c_tm1 + i * self.activation(z[2])
        o = self.recurrent_activation(z[3])
        h = o * self.activation(c)
        return h, [h, c]

    def input_conv(self, x, kernel, bias=None, padding: str = "valid"):
        """The convolution of a step's input `x` with `kernel` (the cell's strides and
        dilation), plus `bias` when given.

        Raises:
          ValueError: 'causal' padding, which TF 2.15's ConvLSTM layers accept but fail on
            when called (for rank 1 here; the 2-D and 3-D convolutions reject it).
        """
        if padding == "causal" and self.rank == 1:
            raise ValueError("ConvLSTM1D does not support padding='causal' (TF 2.15's "
                             "Keras fails on it too); use 'valid' or 'same'")
        out = _CONVOLUTIONS[self.rank](x, kernel, strides=self.strides, padding=padding,
                                       data_format=self.data_format,
                                       dilation_rate=self.dilation_rate)
        if bias is not None:
            out = backend_ops.bias_add(out, bias, data_format=self.data_format)
        return out

    def recurrent_conv(self, x, kernel):
        """The 'same'-padded, stride-1 convolution of the state `x` with `kernel`."""
        return _CONVOLUTIONS[self.rank](x, kernel, strides=(1,) * self.rank, padding="same",
                                       data_format=self.data_format)

    def get_config(self) -> dict:
        return cells_lib.fields_config(self, super().get_config(), self._FIELDS)


# --- the layer base ------------------------------------------------------------------------
class ConvRNN(RNN):
    """An RNN over a convolutional cell (one with `filters`, `kernel_size`, `strides`,
    `padding`, `dilation_rate`, `data_format`, `kernel_shape` and `input_conv`): its
    inputs are [batch, time, *spatial, channels] (channels first: [batch, time,
    channels, *spatial]), its states and outputs images of `filters` channels.

    Args:
      rank: the rank of the convolution (1, 2 or 3).
      cell: the cell (one cell: stacking convolutional cells is not supported).
      return_sequences, return_state, go_backwards, stateful: as RNN's.
      unroll: must be False.
      **kwargs: as RNN's (`time_major` and `zero_output_for_mask` are accepted and, as
        in TF, play no part: the time axis is the second one).

    Raises:
      TypeError: `unroll`, or a list of cells.
    """

    def __init__(self, rank: int, cell, return_sequences: bool = False,
                 return_state: bool = False, go_backwards: bool = False,
                 stateful: bool = False, unroll: bool = False, **kwargs):
        if unroll:
            raise TypeError("Unrolling is not possible with convolutional RNNs. Received: "
                            "unroll=%s" % (unroll,))
        if isinstance(cell, (list, tuple)):
            raise TypeError("It is not possible at the moment to stack convolutional "
                            "cells. Only pass a single cell instance as the `cell` argument. "
                            "Received: cell=%s" % (cell,))
        super().__init__(cell, return_sequences, return_state, go_backwards, stateful, unroll,
                         **kwargs)
        self.rank = rank
        self.input_spec = [InputSpec(ndim=rank + 3)]
        self.states = None

    def _state_image_shape(self, input_shape) -> tuple:
        """(batch, *output spatial, filters) or (batch, filters, *output spatial): the
        shape of a state for inputs of shape `input_shape`."""
        cell = self.cell
        first = cell.data_format == "channels_first"
        images = input_shape[3:] if first else input_shape[2:-1]
        spatial = tuple(conv_output_length(d, cell.kernel_size[i], cell.padding,
                                           cell.strides[i], cell.dilation_rate[i])
                        for i, d in enumerate(images))
        return ((input_shape[0], cell.filters) + spatial if first else
                (input_shape[0],) + spatial + (cell.filters,))

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, list) and not all(
                d is None or isinstance(d, int) for d in input_shape):
            input_shape = input_shape[0]
        input_shape = tuple(tf.TensorShape(input_shape).as_list())
        state_shape = self._state_image_shape(input_shape)
        output_shape = state_shape[:1] + input_shape[1:2] + state_shape[1:] \
            if self.return_sequences else state_shape
        if not self.return_state:
            return tf.TensorShape(output_shape)
        return [tf.TensorShape(output_shape)] + [tf.TensorShape(state_shape)] * 2

    def build(self, input_shape):
        constants_shape = None
        if self._num_constants:
            constants_shape = input_shape[-self._num_constants:]
        if isinstance(input_shape, list) and not all(
                d is None or isinstance(d, int) for d in input_shape):
            input_shape = input_shape[0]
        input_shape = tuple(tf.TensorShape(input_shape).as_list())
        batch_size = input_shape[0] if self.stateful else None
        self.input_spec[0] = InputSpec(shape=(batch_size, None) +
                                       input_shape[2:self.rank + 3])
        if isinstance(self.cell, Layer) and not self.cell.built:
            # in the layer's scope: the variables are 'conv_lstm2d/kernel', as TF's
            step_input_shape = (input_shape[0],) + input_shape[2:]
            if constants_shape is not None:
                self.cell.build([step_input_shape] + list(constants_shape))
            else:
                self.cell.build(step_input_shape)
            self.cell.built = True
        state_size = list(self.cell.state_size) if cells_lib.is_multiple_state(
            self.cell.state_size) else [self.cell.state_size]
        first = self.cell.data_format == "channels_first"
        if self.state_spec is not None:
            channel_axis = 1 if first else self.rank + 1
            if [spec.shape[channel_axis] for spec in self.state_spec] != state_size:
                raise ValueError("An `initial_state` was passed that is not compatible with "
                                 "`cell.state_size`. Received state shapes %s. However "
                                 "`cell.state_size` is %s"
                                 % ([spec.shape for spec in self.state_spec],
                                    self.cell.state_size))
        else:
            images = (None,) * self.rank
            self.state_spec = [InputSpec(shape=(None, dim) + images if first else
                                         (None,) + images + (dim,)) for dim in state_size]
        if self.stateful:
            self.reset_states()
        self.built = True

    def get_initial_state(self, inputs):
        """Zeros shaped as the states: the convolution of the (zero) first step with a
        zero kernel, as TF's, so that the static shape follows the convolution's."""
        zeros = tf.reduce_sum(tf.zeros_like(inputs), axis=1)
        shape = list(self.cell.kernel_shape)
        shape[-1] = self.cell.filters
        state = self.cell.input_conv(zeros, tf.zeros(tuple(shape), zeros.dtype),
                                     padding=self.cell.padding)
        count = len(self.cell.state_size) if cells_lib.is_multiple_state(
            self.cell.state_size) else 1
        return [state for _ in range(count)]

    def _stateful_state_shapes(self) -> list:
        shape = self._state_image_shape(tuple(self.input_spec[0].shape))
        if None in shape:
            raise ValueError(
                "If a RNN is stateful, it needs to know its batch size. Specify the batch "
                "size of your input tensors: \n- If using a Sequential model, specify the "
                "batch size by passing a `batch_input_shape` argument to your first layer.\n"
                "- If using the functional API, specify the time dimension by passing a "
                "`batch_shape` argument to your Input layer.\nThe same thing goes for the "
                "number of rows and columns.")
        channel_axis = 1 if self.cell.data_format == "channels_first" else self.rank + 1
        sizes = tf.nest.flatten(self.cell.state_size)
        return [list(shape[:channel_axis]) + [size] + list(shape[channel_axis + 1:])
                for size in sizes]

    def call(self, inputs, mask=None, training=None, initial_state=None, constants=None):
        inputs, initial_state, constants = self._process_inputs(inputs, initial_state,
                                                                constants)
        self._reset_dropout_masks()
        if isinstance(mask, list):
            mask = mask[0]
        cell_kwargs = {"training": training} if cells_lib.has_arg(self.cell.call,
                                                                  "training") else {}
        if constants:
            if not cells_lib.has_arg(self.cell.call, "constants"):
                raise ValueError("RNN cell %s does not support constants. Received: "
                                 "constants=%s" % (self.cell, constants))
            num_constants = self._num_constants

            def step(step_inputs, states):
                return self.cell.call(step_inputs, list(states[:-num_constants]),
                                      constants=list(states[-num_constants:]), **cell_kwargs)
        else:
            def step(step_inputs, states):
                return self.cell.call(step_inputs, list(states), **cell_kwargs)

        # the cell's own `call` (no name scope per step) and neither time_major nor
        # zero_output_for_mask, as TF's ConvRNN
        last_output, outputs, states = backend_ops.rnn(
            step, inputs, initial_state, constants=constants, go_backwards=self.go_backwards,
            mask=mask, input_length=backend.int_shape(inputs)[1],
            return_all_outputs=self.return_sequences)
        if self.stateful:
            self.add_update([tf.assign(variable, tf.cast(state, variable.dtype))
                             for variable, state in zip(tf.nest.flatten(self.states),
                                                        tf.nest.flatten(states))])
        output = outputs if self.return_sequences else last_output
        if self.return_state:
            return [output] + list(states)
        return output


# --- the layers ----------------------------------------------------------------------------
class _ConvLSTM(ConvRNN):
    """ConvRNN(ConvLSTMCell(...)) with the cell's arguments as the layer's: what
    ConvLSTM1D, ConvLSTM2D and ConvLSTM3D share."""

    _RANK = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs):
        arguments = dict(locals())
        cell = ConvLSTMCell(self._RANK, name="conv_lstm_cell",
                            dtype=kwargs.get("dtype"),
                            **{name: arguments[name] for name in ConvLSTMCell._FIELDS})
        super().__init__(self._RANK, cell, return_sequences=return_sequences,
                         return_state=return_state, go_backwards=go_backwards,
                         stateful=stateful, **kwargs)
        self.activity_regularizer = regularizers.get(activity_regularizer)

    def call(self, inputs, mask=None, training=None, initial_state=None):
        return super().call(inputs, mask=mask, training=training, initial_state=initial_state)

    def __getattr__(self, name):
        # the cell's arguments (filters, kernel_size, activation, ...) as attributes
        if name in ConvLSTMCell._FIELDS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def get_config(self) -> dict:
        config = super().get_config()
        del config["cell"]
        fields = cells_lib.fields_config(self.cell, {}, ConvLSTMCell._FIELDS)
        for name, value in fields.items():
            config[name] = value
            if name == "bias_regularizer":  # where TF's config has it
                config["activity_regularizer"] = regularizers.serialize(
                    self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


_CONV_LSTM_DOC = """A convolutional LSTM over {rank}-D images (Shi et al. 2015): an LSTM whose
    input and recurrent products are {rank}-D convolutions (ConvLSTMCell).

    Inputs: [batch, time, {spatial}, channels] (channels_last) or [batch, time,
    channels, {spatial}] (channels_first). Output: the last h ([batch, {spatial_out},
    filters]), or every step's with `return_sequences`, then the final [h, c] with
    `return_state`.

    Args:
      filters: the channels of the output and states.
      kernel_size, strides, dilation_rate: an int or a tuple of {rank} ints.
      padding: 'valid' or 'same'{causal} (of the input convolution; the recurrent one is
        'same').
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      activation ('tanh'), recurrent_activation ('hard_sigmoid'), use_bias,
      kernel_initializer ('glorot_uniform'), recurrent_initializer ('orthogonal'),
      bias_initializer ('zeros'), unit_forget_bias (True), kernel_regularizer,
      recurrent_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
      recurrent_constraint, bias_constraint: as LSTM's.
      return_sequences, return_state, go_backwards, stateful: as RNN's (stateful needs
        the batch and image sizes).
      dropout, recurrent_dropout: fractions of the inputs and of h dropped in training
        (one mask per gate and sequence).
      **kwargs: the base Layer's.

    Call arguments: inputs, mask ([batch, time] booleans), training, initial_state
    ([h, c]).

    Weights: 'kernel' [*kernel_size, channels, 4 * filters], 'recurrent_kernel'
    [*kernel_size, filters, 4 * filters], 'bias' [4 * filters] (gates i, f, c, o).

    Raises:
      ValueError: bad kernel_size, strides, dilation_rate, padding or data_format.
    """


@tf_export("keras.layers.ConvLSTM1D")
class ConvLSTM1D(_ConvLSTM):
    __doc__ = _CONV_LSTM_DOC.format(rank=1, spatial="width", spatial_out="new_width",
                                    causal=" or 'causal'")
    _RANK = 1


@tf_export("keras.layers.ConvLSTM2D")
class ConvLSTM2D(_ConvLSTM):
    __doc__ = _CONV_LSTM_DOC.format(rank=2, spatial="rows, cols",
                                    spatial_out="new_rows, new_cols", causal="")
    _RANK = 2


@tf_export("keras.layers.ConvLSTM3D")
class ConvLSTM3D(_ConvLSTM):
    __doc__ = _CONV_LSTM_DOC.format(rank=3, spatial="depth, rows, cols",
                                    spatial_out="new_depth, new_rows, new_cols", causal="")
    _RANK = 3
