"""TF1's RNN cells (`tf.nn.rnn_cell`): one step of a recurrent network, built from ops.

A cell is a small layer: on its first call it opens a variable scope named after itself
(`basic_lstm_cell`, made unique inside the caller's scope, as `tf.layers` does), creates
its variables there (`build`) and from then on re-enters that scope with reuse=True, so
calling it once per time step shares one set of weights. Variable names, shapes, gate
orders and initializers are TF1's, so checkpoints written by TF1 programs line up.
"""
from __future__ import annotations

import collections
import hashlib
import re
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.nest import children, flatten, is_sequence, pack_sequence_as
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape, dimension_value
from tensorweave.ops import (array_ops, constant_op, indexing_ops, init_ops, math_binary,
                             math_ops, math_unary, matmul_ops, nn_impl, nn_softmax,
                             random_ops, variable_scope as vs)

_WEIGHTS_VARIABLE_NAME = "kernel"
_BIAS_VARIABLE_NAME = "bias"

_ACTIVATIONS = {"tanh": math_unary.tanh, "sigmoid": math_unary.sigmoid,
                "linear": lambda x: x}


# nested structures (tuples, lists, namedtuples, dicts of Tensors or sizes): cells and
# rnn.py accept a list where a tuple was given and back, as TF1 does
def assert_same_structure(a, b) -> None:
    nest.assert_same_structure(a, b, check_types=False)


def map_structure(fn, *structures):
    return nest.map_structure(fn, *structures, check_types=False)


def _activation(activation):
    """TF1 cells take a callable or (through keras' `activations.get`) a name."""
    if not activation:
        return math_unary.tanh
    if isinstance(activation, str):
        if activation == "relu":
            from tensorweave.ops import nn_ops
            return nn_ops.relu
        if activation not in _ACTIVATIONS:
            raise ValueError("Unknown activation function: %s" % activation)
        return _ACTIVATIONS[activation]
    return activation


def _to_snake_case(name: str) -> str:
    words = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", words).lower()
    return snake if snake[0] != "_" else "private" + snake


def assert_like_rnncell(cell_name, cell) -> None:
    """Raises TypeError when `cell` does not look like an RNNCell (TF1 duck typing)."""
    problems = []
    if not hasattr(cell, "output_size"):
        problems.append("'output_size' property is missing")
    if not hasattr(cell, "state_size"):
        problems.append("'state_size' property is missing")
    if not (hasattr(cell, "zero_state") or hasattr(cell, "get_initial_state")):
        problems.append("either 'zero_state' or 'get_initial_state' method is required")
    if not callable(cell):
        problems.append("is not callable")
    if problems:
        raise TypeError("The argument {!r} ({}) is not an RNNCell: {}.".format(
            cell_name, cell, ", ".join(problems)))


def _shape_parts(x):
    """A prefix/suffix of a state shape as (int32 vector Tensor or None, static list or
    None): `x` is a Tensor (scalar or vector), an int, a list or a TensorShape."""
    if isinstance(x, Tensor):
        static = tensor_util.constant_value(x)
        if x.shape.ndims == 0:
            x = array_ops.expand_dims(x, 0)
            static = None if static is None else [int(static)]
        elif x.shape.ndims != 1:
            raise ValueError("prefix tensor must be either a scalar or vector, but saw "
                             "tensor: %s" % x)
        else:
            static = None if static is None else [int(v) for v in static]
        return x, static
    if x is None:
        shape = TensorShape(None)
    elif isinstance(x, TensorShape):
        shape = x
    elif isinstance(x, (list, tuple)):
        shape = TensorShape(x)
    else:
        shape = TensorShape([x])  # an int or a Dimension: one dim
    static = shape.as_list() if shape.ndims is not None else None
    vec = constant_op.constant(static, dtype=_dt.int32) if shape.is_fully_defined() \
        else None
    return vec, static


def _concat(prefix, suffix, static: bool = False):
    """[prefix..., suffix...] as an int32 Tensor, or with static=True as a list (None
    for unknown rank) for `set_shape`."""
    p, p_static = _shape_parts(prefix)
    s, s_static = _shape_parts(suffix)
    if static:
        if p_static is None or s_static is None:
            return None
        return list(p_static) + list(s_static)
    if p is None or s is None:
        raise ValueError("Provided a prefix or suffix of None: %s and %s" % (prefix, suffix))
    return array_ops.concat((p, s), 0)


def _zero_state_tensors(state_size, batch_size, dtype):
    def zeros_for(size):
        z = array_ops.zeros(_concat(batch_size, size), dtype=dtype)
        static = _concat(batch_size, size, static=True)
        if static is not None:
            z.set_shape(static)
        return z
    return map_structure(zeros_for, state_size)


@tf_export("nn.rnn_cell.RNNCell")
class RNNCell:
    """Abstract RNN cell (TF1 `tf.nn.rnn_cell.RNNCell`): a layer mapping (inputs, state)
    to (outputs, new_state).

    Subclasses define `state_size`, `output_size` and `call(inputs, state)`, and may
    create variables in `build(inputs_shape)` (with `add_variable`) or with
    `tf.get_variable` inside `call`; either way they live in the cell's variable scope.

    Args:
      trainable: whether the variables are trainable.
      name: the cell's scope name (default: the class name in snake case).
      dtype: the variables' dtype (default: the first inputs' dtype).
    """

    def __init__(self, trainable: bool = True, name: Optional[str] = None, dtype=None,
                 **kwargs):
        self._reuse = kwargs.pop("_reuse", None)
        if kwargs:
            raise TypeError("Keyword argument not understood: %s" % sorted(kwargs)[0])
        self.trainable = trainable
        self._name = name
        self._base_name = name or _to_snake_case(type(self).__name__)
        self._dtype = _dt.as_dtype(dtype) if dtype is not None else None
        self._scope = None
        self.built = False
        self._trainable_weights = []
        self._non_trainable_weights = []

    # -- properties --------------------------------------------------------------------
    @property
    def name(self) -> str:
        if self._scope is not None:
            return self._scope.name.split("/")[-1]
        return self._base_name

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self) -> str:
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer \"%s\" "
                             "has not been used yet." % self._base_name)
        return self._scope.name

    @property
    def state_size(self):
        """Size(s) of the state: an int, a TensorShape, or a nested tuple of them."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        """Size(s) of the output: an int, a TensorShape, or a nested tuple of them."""
        raise NotImplementedError("Abstract method")

    @property
    def trainable_weights(self) -> list:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    variables = weights

    # -- layer machinery ---------------------------------------------------------------
    def build(self, inputs_shape) -> None:
        """Creates the variables; called once, before the first `call`."""
        self.built = True

    def call(self, inputs, state):
        raise NotImplementedError("Abstract method")

    def add_variable(self, name, shape, dtype=None, initializer=None, trainable=True,
                     partitioner=None):
        """Creates (or, when reusing, fetches) a variable in the cell's scope."""
        var = vs.get_variable(name, shape=shape, dtype=dtype or self._dtype or _dt.float32,
                              initializer=initializer, trainable=trainable and self.trainable,
                              partitioner=partitioner)
        bucket = self._trainable_weights if trainable else self._non_trainable_weights
        if all(var is not v for v in bucket):
            bucket.append(var)
        return var

    add_weight = add_variable

    def __call__(self, inputs, state, scope=None):
        """Runs the cell on `inputs` (2-D: [batch, depth]) from `state`.

        Args:
          inputs: a 2-D Tensor (or nested structure for custom cells).
          state: a Tensor or nested tuple shaped like `state_size` with a batch dim.
          scope: optional VariableScope or name in which the cell creates its variables
            (only the first call's scope counts).

        Returns:
          (output, new_state).
        """
        if scope is not None:
            with vs.variable_scope(scope) as entered:
                return self._call_in_scope(inputs, state, entered)
        return self._call_in_scope(inputs, state, None)

    def _call_in_scope(self, inputs, state, scope):
        if self._scope is None:
            if self._reuse:
                opener = vs.variable_scope(scope if scope is not None else self._base_name)
            else:
                opener = vs.variable_scope(scope, default_name=self._base_name)
            with opener as captured:
                self._scope = captured
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False):
            with _graph.name_scope(self._scope.original_name_scope or None):
                if not self.built:
                    first = flatten(inputs)[0]
                    if self._dtype is None and hasattr(first, "dtype"):
                        self._dtype = first.dtype.base_dtype
                    self._check_input_rank(inputs)
                    self.build(first.shape if hasattr(first, "shape") else None)
                    self.built = True
                return self.call(inputs, state)

    def _check_input_rank(self, inputs) -> None:
        """LayerRNNCells take 2-D inputs (keras' InputSpec(ndim=2))."""
        if not isinstance(self, LayerRNNCell):
            return
        for x in flatten(inputs):
            ndims = x.shape.ndims
            if ndims is not None and ndims != 2:
                raise ValueError("Input 0 of layer %s is incompatible with the layer: "
                                 "expected ndim=2, found ndim=%d. Full shape received: %s"
                                 % (self.name, ndims, x.shape))

    # -- initial state -----------------------------------------------------------------
    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zero state sized from `inputs` (its batch dim and dtype) or from
        `batch_size` and `dtype`."""
        if inputs is not None:
            inputs = convert_to_tensor(inputs)
            static_batch = dimension_value(inputs.shape[0]) if inputs.shape.ndims else None
            if batch_size is not None and static_batch is not None:
                wanted = tensor_util.constant_value(batch_size) if isinstance(
                    batch_size, Tensor) else batch_size
                if wanted is not None and int(wanted) != static_batch:
                    raise ValueError(
                        "batch size from input tensor is different from the input param. "
                        "Input tensor batch: {}, batch_size: {}".format(static_batch,
                                                                         batch_size))
            if dtype is not None and inputs.dtype != _dt.as_dtype(dtype):
                raise ValueError(
                    "dtype from input tensor is different from the input param. Input "
                    "tensor dtype: {}, dtype: {}".format(inputs.dtype, dtype))
            batch_size = static_batch or array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError("batch_size and dtype cannot be None while constructing "
                             "initial state: batch_size={}, dtype={}".format(batch_size,
                                                                             dtype))
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state: a Tensor (or nested tuple) of shape [batch_size, s] per
        `state_size` entry s."""
        with _graph.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return _zero_state_tensors(self.state_size, batch_size, dtype)


class LayerRNNCell(RNNCell):
    """An RNNCell that creates its variables in `build` (TF1 LayerRNNCell; TF1 does not
    export it under tf.nn.rnn_cell)."""


def _check_known_depth(inputs_shape):
    if inputs_shape[-1] is None or dimension_value(inputs_shape[-1]) is None:
        raise ValueError("Expected inputs.shape[-1] to be known, saw shape: %s"
                         % str(inputs_shape))
    return dimension_value(inputs_shape[-1])


def _value(var):
    """A variable's value with its static shape: a read inside a while_loop body can lose
    the shape of the resource handle it reads through the loop's Enter."""
    value = convert_to_tensor(var)
    value.set_shape(var.shape)
    return value


def _dense(x, kernel, bias):
    return nn_softmax.bias_add(matmul_ops.matmul(x, _value(kernel)), _value(bias))


@tf_export("nn.rnn_cell.BasicRNNCell")
class BasicRNNCell(LayerRNNCell):
    """The most basic RNN cell: output = new_state = act(W [x, h] + b).

    Args:
      num_units: the number of units.
      activation: nonlinearity (default tanh).
      reuse: reuse the variables of an existing scope of the same name.
      name, dtype: as for RNNCell.
    """

    def __init__(self, num_units: int, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = _activation(activation)

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _check_known_depth(inputs_shape)
        self._kernel = self.add_variable(_WEIGHTS_VARIABLE_NAME,
                                         shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_variable(_BIAS_VARIABLE_NAME, shape=[self._num_units],
                                       initializer=init_ops.zeros_initializer(
                                           dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        output = self._activation(_dense(array_ops.concat([inputs, state], 1),
                                         self._kernel, self._bias))
        return output, output


@tf_export("nn.rnn_cell.GRUCell")
class GRUCell(LayerRNNCell):
    """Gated Recurrent Unit cell (Cho et al. 2014), TF1's variant: reset gate r and
    update gate u from one matmul ("gates/", bias initialized to 1.0), candidate
    c = act(W_c [x, r * h] + b_c), new_h = u * h + (1 - u) * c.

    Args:
      num_units: the number of units.
      activation: nonlinearity (default tanh).
      reuse: reuse the variables of an existing scope of the same name.
      kernel_initializer, bias_initializer: initializers of the weights and biases.
      name, dtype: as for RNNCell.
    """

    def __init__(self, num_units: int, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _check_known_depth(inputs_shape)
        n = self._num_units
        self._gate_kernel = self.add_variable(
            "gates/" + _WEIGHTS_VARIABLE_NAME, shape=[depth + n, 2 * n],
            initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/" + _BIAS_VARIABLE_NAME, shape=[2 * n],
            initializer=self._bias_initializer if self._bias_initializer is not None
            else init_ops.constant_initializer(1.0, dtype=self.dtype))
        self._candidate_kernel = self.add_variable(
            "candidate/" + _WEIGHTS_VARIABLE_NAME, shape=[depth + n, n],
            initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/" + _BIAS_VARIABLE_NAME, shape=[n],
            initializer=self._bias_initializer if self._bias_initializer is not None
            else init_ops.zeros_initializer(dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        gates = math_unary.sigmoid(_dense(array_ops.concat([inputs, state], 1),
                                          self._gate_kernel, self._gate_bias))
        r, u = array_ops.split(value=gates, num_or_size_splits=2, axis=1)
        candidate = _dense(array_ops.concat([inputs, r * state], 1),
                           self._candidate_kernel, self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


@tf_export("nn.rnn_cell.LSTMStateTuple")
class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """(c, h): the cell state and the output/hidden state of an LSTM cell."""
    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError("Inconsistent internal state: %s vs %s" % (c.dtype, h.dtype))
        return c.dtype


@tf_export("nn.rnn_cell.BasicLSTMCell")
class BasicLSTMCell(LayerRNNCell):
    """Basic LSTM cell (Zaremba et al. 2014): one matmul of [x, h] split into gates
    i, j, f, o; c' = c * sigmoid(f + forget_bias) + sigmoid(i) * act(j),
    h' = act(c') * sigmoid(o). No peepholes, no clipping, no projection.

    Args:
      num_units: the number of units.
      forget_bias: added to the forget gate's pre-activation.
      state_is_tuple: state is an LSTMStateTuple (c, h) (else [c, h] concatenated).
      activation: nonlinearity of the inner states (default tanh).
      reuse, name, dtype: as for RNNCell.
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0,
                 state_is_tuple: bool = True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _check_known_depth(inputs_shape)
        n = self._num_units
        self._kernel = self.add_variable(_WEIGHTS_VARIABLE_NAME, shape=[depth + n, 4 * n])
        self._bias = self.add_variable(_BIAS_VARIABLE_NAME, shape=[4 * n],
                                       initializer=init_ops.zeros_initializer(
                                           dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=1)
        gates = _dense(array_ops.concat([inputs, h], 1), self._kernel, self._bias)
        i, j, f, o = array_ops.split(value=gates, num_or_size_splits=4, axis=1)
        forget_bias = constant_op.constant(self._forget_bias, dtype=f.dtype)
        sigmoid = math_unary.sigmoid
        new_c = math_binary.add(
            math_binary.multiply(c, sigmoid(math_binary.add(f, forget_bias))),
            math_binary.multiply(sigmoid(i), self._activation(j)))
        new_h = math_binary.multiply(self._activation(new_c), sigmoid(o))
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, array_ops.concat([new_c, new_h], 1)


@tf_export("nn.rnn_cell.LSTMCell")
class LSTMCell(LayerRNNCell):
    """LSTM cell with optional peepholes, cell clipping and output projection
    (Hochreiter & Schmidhuber 1997; Sak et al. 2014).

    Args:
      num_units: the number of units.
      use_peepholes: add diagonal peephole connections (w_f_diag, w_i_diag, w_o_diag).
      cell_clip: clip the cell state to [-cell_clip, cell_clip].
      initializer: initializer of the weight and projection matrices.
      num_proj: output dimensionality of an optional projection ("projection/kernel").
      proj_clip: clip the projected output to [-proj_clip, proj_clip].
      num_unit_shards, num_proj_shards: variable partitioning (not supported: raises).
      forget_bias: added to the forget gate's pre-activation.
      state_is_tuple: state is an LSTMStateTuple (c, m) (else concatenated).
      activation: nonlinearity of the inner states (default tanh).
      reuse, name, dtype: as for RNNCell.

    Raises:
      NotImplementedError: num_unit_shards or num_proj_shards given (partitioned
        variables are not supported).
    """

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip=None,
                 initializer=None, num_proj=None, proj_clip=None, num_unit_shards=None,
                 num_proj_shards=None, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("LSTMCell: num_unit_shards and num_proj_shards "
                                      "(partitioned variables) are not supported")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        m = self._num_proj if self._num_proj else self._num_units
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, m)
        return self._num_units + m

    output_size = property(lambda self: self._num_proj if self._num_proj
                           else self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _check_known_depth(inputs_shape)
        n = self._num_units
        h_depth = n if self._num_proj is None else self._num_proj
        self._kernel = self.add_variable(_WEIGHTS_VARIABLE_NAME, shape=[depth + h_depth, 4 * n],
                                         initializer=self._initializer)
        self._bias = self.add_variable(_BIAS_VARIABLE_NAME, shape=[4 * n],
                                       initializer=init_ops.zeros_initializer(
                                           dtype=self.dtype))
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", shape=[n],
                                               initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", shape=[n],
                                               initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", shape=[n],
                                               initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable(
                "projection/" + _WEIGHTS_VARIABLE_NAME, shape=[n, self._num_proj],
                initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        num_proj = n if self._num_proj is None else self._num_proj
        sigmoid = math_unary.sigmoid
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = indexing_ops.slice(state, [0, 0], [-1, n])
            m_prev = indexing_ops.slice(state, [0, n], [-1, num_proj])
        input_size = dimension_value(inputs.shape.with_rank(2)[1])
        if input_size is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
        gates = _dense(array_ops.concat([inputs, m_prev], 1), self._kernel, self._bias)
        i, j, f, o = array_ops.split(value=gates, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + _value(self._w_f_diag) * c_prev) * c_prev
                 + sigmoid(i + _value(self._w_i_diag) * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + _value(self._w_o_diag) * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = matmul_ops.matmul(m, _value(self._proj_kernel))
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        if self._state_is_tuple:
            return m, LSTMStateTuple(c, m)
        return m, array_ops.concat([c, m], 1)


@tf_export("nn.rnn_cell.MultiRNNCell")
class MultiRNNCell(RNNCell):
    """Stacks cells: the output of cell i is the input of cell i+1; cell i's variables
    live under "cell_i/".

    Args:
      cells: a list of RNNCells.
      state_is_tuple: the state is a tuple of per-cell states (else concatenated).

    Raises:
      ValueError: no cells, or tuple-state cells with state_is_tuple=False.
      TypeError: `cells` is not a list or tuple.
    """

    def __init__(self, cells, state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not is_sequence(cells):
            raise TypeError("cells must be a list or tuple, but saw: %s." % (cells,))
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(is_sequence(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag "
                             "state_is_tuple is not set.  State sizes are: %s"
                             % str([c.state_size for c in self._cells]))

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    output_size = property(lambda self: self._cells[-1].output_size)

    def zero_state(self, batch_size, dtype):
        with _graph.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return _zero_state_tensors(self.state_size, batch_size, dtype)

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return [w for cell in self._cells for w in getattr(cell, "trainable_weights", [])]

    @property
    def non_trainable_weights(self) -> list:
        own = [w for cell in self._cells for w in getattr(cell, "non_trainable_weights", [])]
        if self.trainable:
            return own
        return [w for cell in self._cells for w in getattr(cell, "trainable_weights", [])] \
            + own

    trainable_variables = trainable_weights

    @property
    def variables(self) -> list:
        return self.trainable_weights + self.non_trainable_weights

    weights = variables

    def call(self, inputs, state):
        offset = 0
        layer_input = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope("cell_%d" % i):
                if self._state_is_tuple:
                    if not is_sequence(state):
                        raise ValueError("Expected state to be a tuple of length %d, but "
                                         "received: %s" % (len(self.state_size), state))
                    cell_state = state[i]
                else:
                    cell_state = indexing_ops.slice(state, [0, offset], [-1, cell.state_size])
                    offset += cell.state_size
                layer_input, new_state = cell(layer_input, cell_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return layer_input, tuple(new_states)
        return layer_input, array_ops.concat(new_states, 1)


class _WrapperCell(RNNCell):
    """Base of the cell wrappers: no scope of their own (the wrapped cell's variables
    keep their names), sizes and zero state forwarded to the wrapped cell."""

    def __init__(self, cell):
        super().__init__()
        assert_like_rnncell("cell", cell)
        self.cell = cell

    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)
    trainable_weights = property(lambda self: self.cell.trainable_weights)
    non_trainable_weights = property(lambda self: self.cell.non_trainable_weights)
    trainable_variables = trainable_weights
    weights = property(lambda self: self.cell.weights)
    variables = weights

    def zero_state(self, batch_size, dtype):
        with _graph.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self._call_wrapped_cell(inputs, state, scope)


def _default_dropout_state_filter_visitor(substate):
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)  # never drop the memory cell
    if type(substate).__name__ == "TensorArray":
        return False
    return True


def _keep_prob_value(prob, attr):
    """A Python float when `prob` is known at build time (checked to be in [0, 1]),
    else the Tensor."""
    tensor = convert_to_tensor(prob)
    value = tensor_util.constant_value(tensor)
    if value is None:
        return tensor
    if value < 0 or value > 1:
        raise ValueError("Parameter %s must be between 0 and 1: %d" % (attr, value))
    return float(value)


def _should_dropout(p) -> bool:
    return not isinstance(p, float) or p < 1


def _filter_mask(visitor, structure):
    """Per-leaf booleans: where `visitor` (called at each level, outermost first)
    answers a bool, it covers the whole substructure; a structure answer gives one entry
    per child."""
    answer = visitor(structure)
    if isinstance(answer, bool):
        return [answer] * len(flatten(structure))
    if not is_sequence(structure):
        raise TypeError("dropout_state_filter_visitor returned %r for a leaf" % (answer,))
    mask = []
    for child, sub in zip(children(structure), children(answer)):
        if isinstance(sub, bool):
            mask.extend([sub] * len(flatten(child)))
        else:
            mask.extend(_filter_mask(visitor, child))
    return mask


@tf_export("nn.rnn_cell.DropoutWrapper")
class DropoutWrapper(_WrapperCell):
    """Applies dropout to the inputs, outputs and/or state of a cell (TF1).

    Args:
      cell: the RNNCell to wrap.
      input_keep_prob, output_keep_prob, state_keep_prob: keep probabilities (floats in
        [0, 1] or scalar Tensors); 1.0 adds no dropout. State dropout skips each
        LSTMStateTuple's `c` (see `dropout_state_filter_visitor`).
      variational_recurrent: use the same dropout mask at every time step (Gal &
        Ghahramani 2016); needs `dtype` (and `input_size` when dropping inputs).
      input_size: (nested) depth of the inputs, for variational input dropout.
      dtype: dtype of the inputs, state and outputs, for variational dropout.
      seed: random seed (each dropout site derives its own).
      dropout_state_filter_visitor: fn(substate) -> bool or structure of bools telling
        which parts of the state get dropout.

    Raises:
      ValueError: a keep probability outside [0, 1]; variational_recurrent without the
        dtype (or input_size) it needs.
      TypeError: a non-callable dropout_state_filter_visitor.
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent: bool = False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        if dropout_state_filter_visitor is not None and not callable(
                dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = (dropout_state_filter_visitor or
                                      _default_dropout_state_filter_visitor)
        with _graph.name_scope("DropoutWrapperInit"):
            self._input_keep_prob = _keep_prob_value(input_keep_prob, "input_keep_prob")
            self._state_keep_prob = _keep_prob_value(state_keep_prob, "state_keep_prob")
            self._output_keep_prob = _keep_prob_value(output_keep_prob, "output_keep_prob")
        self._seed = seed
        self._variational_recurrent = variational_recurrent
        self._recurrent_input_noise = None
        self._recurrent_state_noise = None
        self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            dtype = _dt.as_dtype(dtype)

            def noise_for(salt):
                def make(i, size):
                    shape = _concat([1], size)
                    return random_ops.random_uniform(shape, seed=self._gen_seed(salt, i),
                                                     dtype=dtype)
                return make
            if _should_dropout(self._input_keep_prob):
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob "
                                     "< 1.0 or is unknown, input_size must be provided")
                self._recurrent_input_noise = _enumerated_map(noise_for("input"), input_size)
            self._recurrent_state_noise = _enumerated_map(noise_for("state"),
                                                          cell.state_size)
            self._recurrent_output_noise = _enumerated_map(noise_for("output"),
                                                           cell.output_size)

    wrapped_cell = property(lambda self: self.cell)

    def _gen_seed(self, salt_prefix, index):
        if self._seed is None:
            return None
        digest = hashlib.md5((str(self._seed) + "%s_%d" % (salt_prefix, index))
                             .encode("utf-8")).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _dropout(self, values, salt, noise, keep_prob, mask=None):
        flat = flatten(values)
        mask = mask or [True] * len(flat)
        flat_noise = flatten(noise) if noise is not None else [None] * len(flat)
        out = []
        for i, (v, drop, n) in enumerate(zip(flat, mask, flat_noise)):
            if not drop:
                out.append(v)
            elif self._variational_recurrent:
                binary = math_unary.floor(keep_prob + n)
                dropped = math_binary.divide(v, keep_prob) * binary
                dropped.set_shape(v.shape)
                out.append(dropped)
            else:
                out.append(nn_impl.dropout(v, keep_prob=keep_prob,
                                           seed=self._gen_seed(salt, i)))
        return pack_sequence_as(values, out)

    def _call_wrapped_cell(self, inputs, state, scope):
        if _should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise,
                                   self._input_keep_prob)
        output, new_state = self.cell(inputs, state, scope=scope)
        if _should_dropout(self._state_keep_prob):
            mask = _filter_mask(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise,
                                      self._state_keep_prob, mask)
        if _should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise,
                                   self._output_keep_prob)
        return output, new_state


def _enumerated_map(fn, sizes):
    """fn(i, size) over the leaves of a (nested) size structure, i counting leaves."""
    flat = flatten(sizes)
    return pack_sequence_as(sizes, [fn(i, s) for i, s in enumerate(flat)])


@tf_export("nn.rnn_cell.ResidualWrapper")
class ResidualWrapper(_WrapperCell):
    """Adds the cell's inputs to its outputs (output = residual_fn(inputs, outputs),
    default inputs + outputs, leaf by leaf).

    Args:
      cell: the RNNCell to wrap.
      residual_fn: fn(inputs, outputs) -> outputs.
    """

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, scope):
        outputs, new_state = self.cell(inputs, state, scope=scope)

        def add_residual(x, y):
            assert_same_structure(x, y)
            return map_structure(lambda a, b: a + b, x, y)
        return (self._residual_fn or add_residual)(inputs, outputs), new_state


@tf_export("nn.rnn_cell.DeviceWrapper")
class DeviceWrapper(_WrapperCell):
    """Runs the wrapped cell (and builds its zero state) on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with _graph.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            with _graph.device(self._device):
                return self.cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, scope):
        with _graph.device(self._device):
            return self.cell(inputs, state, scope=scope)
