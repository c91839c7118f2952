"""TF1's RNN cells (`tf.nn.rnn_cell`): one step of a recurrent network, built from ops.

A cell is a small layer: on its first call it opens a variable scope named after itself
(`basic_lstm_cell`, made unique inside the caller's scope, as `tf.layers` does), creates
its variables there (`build`) and from then on re-enters that scope with reuse=True, so
calling it once per time step shares one set of weights. Variable names, shapes, gate
orders and initializers are TF1's, so checkpoints written by TF1 programs line up.
"""
from __future__ import annotations

import collections
import re
from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.nest import flatten
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape, dimension_value
from tensorweave.ops.array import array_ops, constant_op
from tensorweave.ops.indexing import indexing_ops
from tensorweave.ops.state import init_ops, variable_scope as vs
from tensorweave.ops.math import math_binary, math_ops, math_unary, matmul_ops
from tensorweave.ops.nn import nn_softmax

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
            from tensorweave.ops.nn import nn_ops
            return nn_ops.relu
        if activation not in _ACTIVATIONS:
            raise ValueError("Unknown activation function: %s" % activation)
        return _ACTIVATIONS[activation]
    return activation


def _to_snake_case(name: str) -> str:
    words = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", words).lower()
    return snake if snake[0] != "_" else "private" + snake


def _unique_cell_name(base: str) -> str:
    """TF1's cells are `tf.layers` layers: an unnamed one takes its `name` from the
    layers' per-graph counter, which starts at 1."""
    from tensorweave.layers.base import _unique_layer_name
    return _unique_layer_name(base)


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
        self._base_name = name or _to_snake_case(type(self).__name__)
        self._name = name or _unique_cell_name(self._base_name)
        self._dtype = _dt.as_dtype(dtype) if dtype is not None else None
        self._scope = None
        self._rnncell_scope = None  # the variable_scope a plain cell re-enters
        self.built = False
        self._trainable_weights = []
        self._non_trainable_weights = []

    # -- properties --------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The given name, else a unique one per graph: `gru_cell_1`, `gru_cell_2`, ...
        (the variable scope is named apart: `gru_cell`, `gru_cell_1`, ...)."""
        return self._name

    @property
    def dtype(self) -> Optional[str]:
        """The variables' dtype as a name ('float32'), as TF1's layers give it; None
        until given or taken from the first inputs."""
        return self._dtype.name if self._dtype is not None else None

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

    def add_variable(self, name, shape, dtype=None, initializer=None, regularizer=None,
                     trainable=True, constraint=None, partitioner=None, use_resource=None,
                     synchronization=None, aggregation=None, getter=None, **kwargs):
        """Creates (or, when reusing, fetches) a variable in the cell's scope, with the
        arguments of a layer's `add_weight` (TF's RNNCell is a layer); also when `build`
        is called directly, outside `__call__`.

        Raises:
          TypeError: an argument `add_weight` does not take.
        """
        unknown = set(kwargs) - {"caching_device", "experimental_autocast"}
        if unknown:
            raise TypeError("Unknown keyword argument: %s" % sorted(unknown)[0])
        options = {"synchronization": synchronization, "aggregation": aggregation}
        make = getter or vs.get_variable
        if self._dtype is None:  # TF: a cell with no dtype yet takes its first weight's
            self._dtype = _dt.as_dtype(dtype or _dt.float32).base_dtype

        def create():
            return make(name, shape=shape, dtype=dtype or self._dtype,
                        initializer=initializer, regularizer=regularizer,
                        trainable=trainable and self.trainable, constraint=constraint,
                        partitioner=partitioner, use_resource=use_resource,
                        caching_device=kwargs.get("caching_device"),
                        **{k: v for k, v in options.items() if v is not None})
        self._ensure_scope(None)
        if vs.get_variable_scope().name == self._scope.name:
            var = create()
        else:
            with vs.variable_scope(self._scope, reuse=True if self.built else self._reuse,
                                   auxiliary_name_scope=False):
                var = create()
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
        if isinstance(self, LayerRNNCell):
            return self._call_in_scope(inputs, state, None)
        # TF1's plain RNNCells (MultiRNNCell, user cells) re-enter the variable scope of
        # their first call on every call. Re-entering a scope opens its last name again
        # under the current name scope (called in variable_scope("rnn"), a MultiRNNCell
        # builds under "rnn/rnn/multi_rnn_cell/") and restarts the numbering of the
        # default names below it, as TF's does.
        if self._rnncell_scope is None:
            self._rnncell_scope = vs.variable_scope(vs.get_variable_scope())
        with self._rnncell_scope:
            return self._call_in_scope(inputs, state, None)

    def _ensure_scope(self, scope) -> None:
        """Fixes the cell's variable scope (from the first call, or the first variable)."""
        if self._scope is None:
            if self._reuse:
                opener = vs.variable_scope(scope if scope is not None else self._base_name)
            else:
                opener = vs.variable_scope(scope, default_name=self._base_name)
            with opener as captured:
                self._scope = captured

    def _call_in_scope(self, inputs, state, scope):
        self._ensure_scope(scope)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False):
            with _graph.name_scope(self._scope.original_name_scope or None):
                if not self.built:
                    first = flatten(inputs)[0]
                    if self._dtype is None and hasattr(first, "dtype"):
                        self._dtype = first.dtype.base_dtype
                    if self._dtype is not None and not (self._dtype.is_floating or
                                                        self._dtype.is_complex):
                        raise ValueError("RNN cell only supports floating point inputs, but "
                                         "received dtype: %s" % self._dtype)
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


def _shards(count: Optional[int]):
    """The partitioner of LSTMCell's `num_unit_shards`/`num_proj_shards` (rows in
    `count` parts: kernel/part_0, ...), or None."""
    if count is None:
        return None
    from tensorweave.ops.state.partitioned_variables import fixed_size_partitioner
    return fixed_size_partitioner(count)


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
                                           dtype=self._dtype))
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
            else init_ops.constant_initializer(1.0, dtype=self._dtype))
        self._candidate_kernel = self.add_variable(
            "candidate/" + _WEIGHTS_VARIABLE_NAME, shape=[depth + n, n],
            initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/" + _BIAS_VARIABLE_NAME, shape=[n],
            initializer=self._bias_initializer if self._bias_initializer is not None
            else init_ops.zeros_initializer(dtype=self._dtype))
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
                                           dtype=self._dtype))
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
      num_unit_shards, num_proj_shards: the number of parts of the kernel and of the
        projection kernel (partitioned variables, split along their rows).
      forget_bias: added to the forget gate's pre-activation.
      state_is_tuple: state is an LSTMStateTuple (c, m) (else concatenated).
      activation: nonlinearity of the inner states (default tanh).
      reuse, name, dtype: as for RNNCell.
    """

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip=None,
                 initializer=None, num_proj=None, proj_clip=None, num_unit_shards=None,
                 num_proj_shards=None, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_unit_shards = num_unit_shards
        self._num_proj_shards = num_proj_shards
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
                                         initializer=self._initializer,
                                         partitioner=_shards(self._num_unit_shards))
        self._bias = self.add_variable(_BIAS_VARIABLE_NAME, shape=[4 * n],
                                       initializer=init_ops.zeros_initializer(
                                           dtype=self._dtype))
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
                initializer=self._initializer, partitioner=_shards(self._num_proj_shards))
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
