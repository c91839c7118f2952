"""The Keras recurrent cells as `tf.compat.v1.keras.layers` has them in TF 2.15:
SimpleRNNCell, LSTMCell, GRUCell (the v1 classes: `hard_sigmoid` recurrent activation,
`implementation=1`, GRU's `reset_after=False`) and StackedRNNCells.

A cell is a layer whose `call(inputs, states, training=None)` computes one time step:
`(output, new_states)`; `state_size` and `output_size` say the sizes. The RNN layer
(recurrent.py) runs a cell over the time axis.

Weights are laid out as Keras lays them out, so that weights set from TF's Keras give the
same results: LSTM kernels hold the gates i, f, c, o side by side ([input_dim, 4 * units]),
GRU kernels z, r, h ([input_dim, 3 * units]); GRU's bias is [2, 3 * units] (input bias,
recurrent bias) with `reset_after=True`.
"""
from __future__ import annotations

import inspect
from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import (activations, backend_ops, constraints, initializers,
                               regularizers)
from tensorweave.keras.engine.base_layer import Layer


# --- what cells and RNN layers share ---------------------------------------------------------
def has_arg(fn, name: str) -> bool:
    """Whether the callable `fn` takes an argument `name` (by name, not by **kwargs)."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters


def is_multiple_state(state_size) -> bool:
    """Whether `state_size` lists several states (a TensorShape is one state)."""
    return hasattr(state_size, "__len__") and not isinstance(state_size, tf.TensorShape)


def zero_state(batch_size, state_size, dtype):
    """Zeros of shape [batch_size] + size for each size in the structure `state_size`.

    Raises:
      ValueError: batch_size or dtype is None.
    """
    if batch_size is None or dtype is None:
        raise ValueError("batch_size and dtype cannot be None while constructing initial "
                         "state. Received: batch_size=%s, dtype=%s" % (batch_size, dtype))

    def zeros(size):
        return tf.zeros([batch_size] + tf.TensorShape(size).as_list(), dtype=dtype)

    if tf.nest.is_nested(state_size):
        return tf.nest.map_structure(zeros, state_size)
    return zeros(state_size)


def cell_output_size(cell):
    """The size of a cell's output: `output_size`, else the size of its first state."""
    if getattr(cell, "output_size", None) is not None:
        return cell.output_size
    if is_multiple_state(cell.state_size):
        return cell.state_size[0]
    return cell.state_size


def _serialize_field(name: str, value):
    if name.endswith("activation"):
        return activations.serialize(value)
    if name.endswith("_initializer"):
        return initializers.serialize(value)
    if name.endswith("_regularizer"):
        return regularizers.serialize(value)
    if name.endswith("_constraint"):
        return constraints.serialize(value)
    return value


def fields_config(obj, base: dict, names) -> dict:
    """`base` plus the attributes `names` of `obj`, activations, initializers,
    regularizers and constraints serialized (by their name's suffix)."""
    config = dict(base)
    for name in names:
        config[name] = _serialize_field(name, getattr(obj, name))
    return config


# --- dropout masks -------------------------------------------------------------------------
class DropoutRNNCellMixin:
    """Dropout masks of a cell, made once per RNN call and reused at every time step (the
    same units are dropped all along a sequence, as Keras does). The RNN layer resets
    them before each call; within a graph they are cached until then."""

    def reset_dropout_mask(self) -> None:
        """Forgets the cached input dropout masks."""
        self.__dict__["_dropout_mask_cache"] = None

    def reset_recurrent_dropout_mask(self) -> None:
        """Forgets the cached recurrent dropout masks."""
        self.__dict__["_recurrent_dropout_mask_cache"] = None

    def _cached_mask(self, key: str, rate: float, inputs, training, count: int):
        if not 0 < rate < 1:
            return None
        cached = self.__dict__.get(key)
        graph = tf.get_default_graph()
        if cached is not None and cached[0] is graph:
            return cached[1]
        ones = tf.ones_like(inputs)

        def one_mask():
            return backend_ops.in_train_phase(lambda: backend_ops.dropout(ones, rate), ones,
                                              training=training)

        masks = [one_mask() for _ in range(count)] if count > 1 else one_mask()
        self.__dict__[key] = (graph, masks)
        return masks

    def get_dropout_mask_for_cell(self, inputs, training, count: int = 1):
        """The dropout mask of the cell's inputs (a list of `count` masks when count > 1;
        None without dropout); in inference the masks are ones."""
        return self._cached_mask("_dropout_mask_cache", self.dropout, inputs, training, count)

    def get_recurrent_dropout_mask_for_cell(self, inputs, training, count: int = 1):
        """The dropout mask of the recurrent state, as `get_dropout_mask_for_cell`."""
        return self._cached_mask("_recurrent_dropout_mask_cache", self.recurrent_dropout,
                                 inputs, training, count)


@tf_export("keras.layers.AbstractRNNCell")
class AbstractRNNCell(Layer):
    """The base of custom cells: subclasses define `call(inputs, states)` returning
    (output, new states), and the properties `state_size` and `output_size`."""

    def call(self, inputs, states):
        raise NotImplementedError("%s subclasses AbstractRNNCell without defining call"
                                  % type(self).__name__)

    @property
    def state_size(self):
        raise NotImplementedError("%s subclasses AbstractRNNCell without defining "
                                  "state_size" % type(self).__name__)

    @property
    def output_size(self):
        raise NotImplementedError("%s subclasses AbstractRNNCell without defining "
                                  "output_size" % type(self).__name__)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zeros for the states; the batch size and dtype come from `inputs` if given."""
        if inputs is not None:
            batch_size, dtype = tf.shape(inputs)[0], inputs.dtype
        return zero_state(batch_size, self.state_size, dtype)


class _RecurrentCell(DropoutRNNCellMixin, Layer):
    """What SimpleRNNCell, LSTMCell and GRUCell share: the arguments, the kernels
    ('kernel' [input_dim, gates * units], 'recurrent_kernel' [units, gates * units]) and
    the zero initial state."""

    _GATES = 1
    _FIELDS: tuple = ()

    def __init__(self, units, activation="tanh", recurrent_activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 implementation: Optional[int] = None, **kwargs):
        if units <= 0:
            raise ValueError("Received an invalid value for argument `units`, expected a "
                             "positive integer, got %s." % (units,))
        kwargs.pop("enable_caching_device", None)
        super().__init__(**kwargs)
        self.units = units
        self.activation = activations.get(activation)
        if recurrent_activation is not None or self._GATES > 1:
            self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        if implementation is not None:
            # recurrent dropout needs the per-gate products of implementation 1
            self.implementation = 1 if self.recurrent_dropout != 0 else implementation
        self.state_size = self.units
        self.output_size = self.units
        self.reset_dropout_mask()
        self.reset_recurrent_dropout_mask()

    def _add_kernels(self, input_shape) -> None:
        input_dim = tf.TensorShape(input_shape).as_list()[-1]
        self.kernel = self.add_weight(
            shape=(input_dim, self.units * self._GATES), name="kernel",
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units * self._GATES), name="recurrent_kernel",
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)

    def _add_bias(self, shape, initializer) -> None:
        if not self.use_bias:
            self.bias = None
            return
        self.bias = self.add_weight(shape=shape, name="bias", initializer=initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint)

    def get_config(self) -> dict:
        return fields_config(self, super().get_config(), self._FIELDS)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zeros for the states ([batch, units] each); the batch size and dtype come
        from `inputs` when given."""
        if inputs is not None:
            batch_size = tf.shape(inputs)[0]
            dtype = inputs.dtype
        return zero_state(batch_size, self.state_size, dtype)


def _base_arguments(arguments: dict) -> dict:
    """What a cell's __init__ passes on to _RecurrentCell's: those of its `arguments`
    (its `locals()`) that _RecurrentCell.__init__ takes, and its **kwargs. The cells
    spell out Keras' signatures (their own defaults and extra arguments); this keeps them
    from spelling out the forwarding as well."""
    taken = inspect.signature(_RecurrentCell.__init__).parameters
    forwarded = {name: value for name, value in arguments.items()
                 if name in taken and name not in ("self", "kwargs")}
    return dict(forwarded, **arguments["kwargs"])


_COMMON_FIELDS = ("kernel_initializer", "recurrent_initializer", "bias_initializer")
_PENALTY_FIELDS = ("kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
                   "kernel_constraint", "recurrent_constraint", "bias_constraint",
                   "dropout", "recurrent_dropout")


def _apply_mask(x, mask, index: Optional[int] = None):
    """`x * mask` (`x * mask[index]` for a list of masks); `x` without a mask."""
    if mask is None:
        return x
    return x * (mask if index is None else mask[index])


@tf_export("keras.layers.SimpleRNNCell")
class SimpleRNNCell(_RecurrentCell):
    """The cell of SimpleRNN: `output = activation(x @ kernel + bias + h @ recurrent_kernel)`,
    which is also the new state.

    Args:
      units: the size of the output and state.
      activation: default 'tanh'.
      use_bias, kernel_initializer ('glorot_uniform'), recurrent_initializer
        ('orthogonal'), bias_initializer ('zeros'), the regularizers and constraints of
        the three weights: as Keras.
      dropout, recurrent_dropout: fractions of the inputs and of the state dropped in
        training (one mask per sequence).
      **kwargs: the base Layer's.

    Raises:
      ValueError: units <= 0.
    """

    _FIELDS = ("units", "activation", "use_bias") + _COMMON_FIELDS + _PENALTY_FIELDS

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**_base_arguments(locals()))

    def build(self, input_shape):
        self._add_kernels(input_shape)
        self._add_bias((self.units,), self.bias_initializer)
        self.built = True

    def call(self, inputs, states, training=None):
        prev_output = states[0] if tf.nest.is_nested(states) else states
        dp_mask = self.get_dropout_mask_for_cell(inputs, training)
        rec_dp_mask = self.get_recurrent_dropout_mask_for_cell(prev_output, training)
        h = tf.matmul(_apply_mask(inputs, dp_mask), self.kernel)
        if self.bias is not None:
            h = tf.nn.bias_add(h, self.bias)
        output = h + tf.matmul(_apply_mask(prev_output, rec_dp_mask), self.recurrent_kernel)
        if self.activation is not None:
            output = self.activation(output)
        return output, [output] if tf.nest.is_nested(states) else output


@tf_export("keras.layers.LSTMCell")
class LSTMCell(_RecurrentCell):
    """The cell of LSTM (Hochreiter 1997), with states [h, c]:

        i = ra(x Wi + h Ui + bi)   f = ra(x Wf + h Uf + bf)   o = ra(x Wo + h Uo + bo)
        c' = f * c + i * a(x Wc + h Uc + bc)                  h' = o * a(c')

    (a: activation, ra: recurrent_activation; the kernels hold the gates i, f, c, o).

    Args:
      units: the size of h and c.
      activation: default 'tanh'; recurrent_activation: default 'hard_sigmoid' (TF1's
        Keras).
      unit_forget_bias: initialize the forget gate's bias to ones (the others with
        `bias_initializer`).
      implementation: 1 (one product per gate, as TF1's Keras) or 2 (one product for all
        gates); recurrent dropout forces 1.
      the other arguments: as SimpleRNNCell.

    Raises:
      ValueError: units <= 0.
    """

    _GATES = 4
    _FIELDS = (("units", "activation", "recurrent_activation", "use_bias") + _COMMON_FIELDS +
               ("unit_forget_bias",) + _PENALTY_FIELDS + ("implementation",))

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        implementation = kwargs.pop("implementation", 1)
        super().__init__(**_base_arguments(locals()))
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [self.units, self.units]

    def build(self, input_shape):
        self._add_kernels(input_shape)
        def forget_bias_ones(_, *args, **kwargs):
            units = self.units
            return tf.concat([self.bias_initializer((units,), *args, **kwargs),
                              initializers.Ones()((units,), *args, **kwargs),
                              self.bias_initializer((units * 2,), *args, **kwargs)], 0)

        self._add_bias((self.units * 4,),
                       forget_bias_ones if self.unit_forget_bias else self.bias_initializer)
        self.built = True

    def call(self, inputs, states, training=None):
        h_tm1, c_tm1 = states[0], states[1]
        dp_mask = self.get_dropout_mask_for_cell(inputs, training, count=4)
        rec_dp_mask = self.get_recurrent_dropout_mask_for_cell(h_tm1, training, count=4)
        if self.implementation == 1:
            kernels = tf.split(self.kernel, num_or_size_splits=4, axis=1)
            biases = tf.split(self.bias, num_or_size_splits=4, axis=0) if self.use_bias \
                else [None] * 4
            z = []
            for gate in range(4):
                x = tf.matmul(_apply_mask(inputs, dp_mask, gate), kernels[gate])
                if biases[gate] is not None:
                    x = tf.nn.bias_add(x, biases[gate])
                h = _apply_mask(h_tm1, rec_dp_mask, gate)
                recurrent = self.recurrent_kernel[:, self.units * gate:self.units * (gate + 1)]
                z.append(x + tf.matmul(h, recurrent))
        else:
            x = _apply_mask(inputs, dp_mask, 0)
            z = tf.matmul(x, self.kernel) + tf.matmul(h_tm1, self.recurrent_kernel)
            if self.use_bias:
                z = tf.nn.bias_add(z, self.bias)
            z = tf.split(z, num_or_size_splits=4, axis=1)
        i = self.recurrent_activation(z[0])
        f = self.recurrent_activation(z[1])
        c = f * c_tm1 + i * self.activation(z[2])
        o = self.recurrent_activation(z[3])
        h = o * self.activation(c)
        return h, [h, c]

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return list(super().get_initial_state(inputs, batch_size, dtype))


@tf_export("keras.layers.GRUCell")
class GRUCell(_RecurrentCell):
    """The cell of GRU (Cho et al. 2014), with the gates z, r, h side by side:

        z = ra(x Wz + h Uz + bz)    r = ra(x Wr + h Ur + br)
        reset_after=False:  hh = a(x Wh + bh + (r * h) Uh)
        reset_after=True:   hh = a(x Wh + bh + r * (h Uh + bh'))   (bias [2, 3 * units])
        h' = z * h + (1 - z) * hh

    Args:
      units: the size of the state.
      activation: default 'tanh'; recurrent_activation: default 'hard_sigmoid' (TF1's
        Keras).
      reset_after: apply the reset gate after the recurrent product (CuDNN's variant,
        with separate input and recurrent biases); default False (TF1's Keras).
      implementation: 1 (default) or 2, as LSTMCell.
      the other arguments: as SimpleRNNCell.

    Raises:
      ValueError: units <= 0.
    """

    _GATES = 3
    _FIELDS = (("units", "activation", "recurrent_activation", "use_bias") + _COMMON_FIELDS +
               _PENALTY_FIELDS + ("implementation", "reset_after"))

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, reset_after=False, **kwargs):
        implementation = kwargs.pop("implementation", 1)
        super().__init__(**_base_arguments(locals()))
        self.reset_after = reset_after

    def build(self, input_shape):
        self._add_kernels(input_shape)
        shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
        self._add_bias(shape, self.bias_initializer)
        self.built = True

    def _gate_columns(self, matrix, gate: int):
        return matrix[:, self.units * gate:self.units * (gate + 1)]

    def call(self, inputs, states, training=None):
        h_tm1 = states[0] if tf.nest.is_nested(states) else states
        dp_mask = self.get_dropout_mask_for_cell(inputs, training, count=3)
        rec_dp_mask = self.get_recurrent_dropout_mask_for_cell(h_tm1, training, count=3)
        input_bias = recurrent_bias = None
        if self.use_bias:
            if self.reset_after:
                input_bias, recurrent_bias = tf.unstack(self.bias)
            else:
                input_bias = self.bias
        if self.implementation == 1:
            x, recurrent_in = [], []
            for gate in range(3):
                x_gate = tf.matmul(_apply_mask(inputs, dp_mask, gate),
                                   self._gate_columns(self.kernel, gate))
                if input_bias is not None:
                    x_gate = tf.nn.bias_add(
                        x_gate, input_bias[self.units * gate:self.units * (gate + 1)])
                x.append(x_gate)
                recurrent_in.append(_apply_mask(h_tm1, rec_dp_mask, gate))
            recurrent = [tf.matmul(recurrent_in[gate],
                                   self._gate_columns(self.recurrent_kernel, gate))
                         for gate in range(2)]
            if recurrent_bias is not None:
                recurrent = [tf.nn.bias_add(r, recurrent_bias[self.units * g:
                                                              self.units * (g + 1)])
                             for g, r in enumerate(recurrent)]
            z = self.recurrent_activation(x[0] + recurrent[0])
            r = self.recurrent_activation(x[1] + recurrent[1])
            kernel_h = self.recurrent_kernel[:, self.units * 2:]
            if self.reset_after:
                recurrent_h = tf.matmul(recurrent_in[2], kernel_h)
                if recurrent_bias is not None:
                    recurrent_h = tf.nn.bias_add(recurrent_h, recurrent_bias[self.units * 2:])
                recurrent_h = r * recurrent_h
            else:
                recurrent_h = tf.matmul(r * recurrent_in[2], kernel_h)
            hh = self.activation(x[2] + recurrent_h)
        else:
            matrix_x = tf.matmul(_apply_mask(inputs, dp_mask, 0), self.kernel)
            if input_bias is not None:
                matrix_x = tf.nn.bias_add(matrix_x, input_bias)
            x_z, x_r, x_h = tf.split(matrix_x, 3, axis=-1)
            if self.reset_after:
                matrix_inner = tf.matmul(h_tm1, self.recurrent_kernel)
                if recurrent_bias is not None:
                    matrix_inner = tf.nn.bias_add(matrix_inner, recurrent_bias)
                recurrent_z, recurrent_r, recurrent_h = tf.split(matrix_inner, 3, axis=-1)
            else:
                matrix_inner = tf.matmul(h_tm1, self.recurrent_kernel[:, :2 * self.units])
                recurrent_z, recurrent_r = tf.split(matrix_inner, 2, axis=-1)
            z = self.recurrent_activation(x_z + recurrent_z)
            r = self.recurrent_activation(x_r + recurrent_r)
            if self.reset_after:
                recurrent_h = r * recurrent_h
            else:
                recurrent_h = tf.matmul(r * h_tm1, self.recurrent_kernel[:, 2 * self.units:])
            hh = self.activation(x_h + recurrent_h)
        h = z * h_tm1 + (1 - z) * hh
        return h, [h] if tf.nest.is_nested(states) else h


@tf_export("keras.layers.StackedRNNCells")
class StackedRNNCells(Layer):
    """Cells run one after the other as one cell: each cell's output is the next one's
    input; the states are the cells' states in order.

    Args:
      cells: the cells (objects with `call` and `state_size`).
      **kwargs: the base Layer's, and reverse_state_order (deprecated in Keras).

    Raises:
      ValueError: a cell without `call` or `state_size`.
    """

    def __init__(self, cells, **kwargs):
        for cell in cells:
            if "call" not in dir(cell):
                raise ValueError("All cells must have a `call` method. Received cell without "
                                 "a `call` method: %s" % (cell,))
            if "state_size" not in dir(cell):
                raise ValueError("All cells must have a `state_size` attribute. Received "
                                 "cell without a `state_size`: %s" % (cell,))
        self.cells = cells
        self.reverse_state_order = kwargs.pop("reverse_state_order", False)
        super().__init__(**kwargs)

    def _ordered_cells(self) -> list:
        return self.cells[::-1] if self.reverse_state_order else self.cells

    @property
    def state_size(self):
        return tuple(c.state_size for c in self._ordered_cells())

    @property
    def output_size(self):
        return cell_output_size(self.cells[-1])

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        states = []
        for cell in self._ordered_cells():
            get_initial_state = getattr(cell, "get_initial_state", None)
            if get_initial_state is not None:
                states.append(get_initial_state(inputs=inputs, batch_size=batch_size,
                                                dtype=dtype))
            else:
                if inputs is not None:
                    batch_size, dtype = tf.shape(inputs)[0], inputs.dtype
                states.append(zero_state(batch_size, cell.state_size, dtype))
        return tuple(states)

    def call(self, inputs, states, constants=None, training=None, **kwargs):
        state_size = self.state_size[::-1] if self.reverse_state_order else self.state_size
        nested_states = tf.nest.pack_sequence_as(state_size, tf.nest.flatten(states))
        new_nested_states = []
        for cell, cell_states in zip(self.cells, nested_states):
            if not tf.nest.is_nested(cell_states):
                cell_states = [cell_states]
            if has_arg(cell.call, "training"):
                kwargs["training"] = training
            else:
                kwargs.pop("training", None)
            call = cell.__call__ if callable(cell) else cell.call
            if has_arg(cell.call, "constants"):
                inputs, cell_states = call(inputs, cell_states, constants=constants, **kwargs)
            else:
                inputs, cell_states = call(inputs, cell_states, **kwargs)
            new_nested_states.append(cell_states)
        return inputs, tf.nest.pack_sequence_as(state_size,
                                                tf.nest.flatten(new_nested_states))

    def build(self, input_shape):
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        input_shape = tf.TensorShape(input_shape)
        batch_size = input_shape.as_list()[0] if input_shape.ndims else None
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                with tf.name_scope(cell.name):
                    cell.build(input_shape)
                    cell.built = True
            output_dim = tf.TensorShape(cell_output_size(cell)).as_list()
            input_shape = tf.TensorShape([batch_size] + output_dim)
        self.built = True

    def get_config(self) -> dict:
        config = super().get_config()
        config["cells"] = [serialize_layer(cell) for cell in self.cells]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        cells = [deserialize_layer(c, custom_objects) for c in config.pop("cells")]
        return cls(cells, **config)


# --- layers as configs ---------------------------------------------------------------------
def serialize_layer(layer) -> dict:
    """{'class_name': ..., 'config': ...} of a layer (Keras' legacy format)."""
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def deserialize_layer(config: dict, custom_objects: Optional[dict] = None):
    """The layer a {'class_name', 'config'} dict describes: the class is looked up in
    `custom_objects`, then among the `tf.keras.layers` exports.

    Raises:
      ValueError: an unknown class name.
    """
    from tensorweave.framework.api_export import exported
    objects = exported("keras.layers")
    objects.update(custom_objects or {})
    cls = objects.get(config["class_name"])
    if cls is None:
        raise ValueError("Unknown layer: '%s'. Please ensure you are using a "
                         "`keras.utils.custom_object_scope` and that this object is included "
                         "in the scope." % config["class_name"])
    if has_arg(cls.from_config, "custom_objects"):
        return cls.from_config(dict(config["config"]), custom_objects=custom_objects)
    return cls.from_config(dict(config["config"]))
