"""Cells made of other cells (`tf.nn.rnn_cell`): MultiRNNCell stacks cells; the
wrappers (DropoutWrapper, ResidualWrapper, DeviceWrapper) add dropout, a residual
connection or a device to the cell they wrap, keeping its variables and state."""
from __future__ import annotations

import hashlib

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.nest import children, flatten, is_sequence, pack_sequence_as
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.nn.rnn_cell_impl import (LSTMStateTuple, RNNCell, _concat,
                                          _zero_state_tensors, assert_like_rnncell,
                                          assert_same_structure, map_structure)
from tensorweave.ops.array import array_ops
from tensorweave.ops.indexing import indexing_ops
from tensorweave.ops.math import math_binary, math_unary
from tensorweave.ops.nn import nn_impl
from tensorweave.ops.random import random_ops
from tensorweave.ops.state import variable_scope as vs

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
        raise ValueError("Parameter %s must be between 0 and 1. Received %s"
                         % (attr, value))
    return float(value)


def _should_dropout(p) -> bool:
    return not isinstance(p, float) or p < 1


def _filter_mask(visitor, structure):
    """Per-leaf booleans: which leaves of `structure` get dropout (TF's
    `get_traverse_shallow_structure`, flattened). `visitor` sees each substructure it
    lets through, outermost first, and answers False (skip all of it), True (go into
    each child; at a leaf: drop it) or a depth-1 structure of bools (go into the
    children marked True).

    Raises:
      TypeError: an answer that is none of these.
      ValueError: a structure answer with a different number of children.
    """
    answer = visitor(structure)
    if not is_sequence(structure):
        if not isinstance(answer, bool):
            raise TypeError("traverse_fn returned structure: %s for non-structure: %s"
                            % (answer, structure))
        return [answer]
    parts = children(structure)
    if isinstance(answer, bool):
        chosen = [answer] * len(parts)
    elif not is_sequence(answer):
        raise TypeError("traverse_fn returned a non-bool scalar: %s for input: %s"
                        % (answer, structure))
    else:
        chosen = children(answer)
        if len(chosen) != len(parts):
            raise ValueError("The two structures don't have the same sequence length. "
                             "Input structure has length %d, while shallow structure "
                             "has length %d." % (len(parts), len(chosen)))
        if not all(isinstance(c, bool) for c in chosen):
            raise TypeError("traverse_fn didn't return a depth=1 structure of bools.  "
                            "saw: %s  for structure: %s" % (answer, structure))
    mask = []
    for part, go_in in zip(parts, chosen):
        mask.extend(_filter_mask(visitor, part) if go_in else [False] * len(flatten(part)))
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
            raise TypeError("dropout_state_filter_visitor must be callable. Received: %s"
                            % (dropout_state_filter_visitor,))
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

            def add(a, b):
                a.shape.assert_is_compatible_with(b.shape)
                return a + b
            return map_structure(add, x, y)
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
