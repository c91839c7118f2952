"""Exponential moving averages of variables and tensors (TF1 `tf.train.ExponentialMovingAverage`
and the `assign_moving_average` / `weighted_moving_average` helpers of TF1's
`training/moving_averages.py`, which TF1 does not export under `tf.`).

An average is a non-trainable "shadow" variable next to the value it follows, named
'<value's op name>/<average's name>'; each update moves it toward the value:
`average -= (1 - decay) * (average - value)`. Zero debiasing (Kingma & Ba, Adam §3)
keeps a biased average started at 0 and a step count, and divides the biased average by
`1 - decay ** steps`, so averages of values started at 0 are not pulled toward 0.
"""
from __future__ import annotations

from typing import Dict, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Operation, Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.ops.control_flow import structure
from tensorweave.ops.math import math_binary, math_ops
from tensorweave.ops.state import init_ops, state_ops, variable_scope, variables
from tensorweave.train.optimizer import _slot_variable_name, create_slot_variable

_AVERAGEABLE = (_dt.bfloat16, _dt.float16, _dt.float32, _dt.float64)


def assign_moving_average(variable, value, decay, zero_debias: bool = True,
                          name: Optional[str] = None) -> Tensor:
    """Moves `variable` toward `value`: `variable -= (1 - decay) * (variable - value)`.

    Args:
      variable: a float Variable holding the average.
      value: a Tensor of the variable's shape and type.
      decay: a float Tensor or number, usually close to 1.
      zero_debias: whether to debias the average (keeps two extra variables,
        '<variable>/biased' and '<variable>/local_step', in the variable's scope).
      name: name scope of the update (default "AssignMovingAvg").

    Returns:
      The variable's value after the update.
    """
    with _graph.name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        one_minus_decay = convert_to_tensor(1.0 - decay, name="decay") \
            if not isinstance(decay, Tensor) else math_binary.subtract(1.0, decay,
                                                                       name="decay")
        if one_minus_decay.dtype.base_dtype != variable.dtype.base_dtype:
            one_minus_decay = math_ops.cast(one_minus_decay, variable.dtype.base_dtype)
        value = convert_to_tensor(value, dtype=variable.dtype.base_dtype)
        if zero_debias:
            return _zero_debias(variable, value, one_minus_decay, scope)
        return state_ops.assign_sub(variable, (variable - value) * one_minus_decay,
                                    name=scope)


def _unique_in_scope(name: str) -> str:
    """`name`, or `name_1`, `name_2` ... if the current variable scope already has it."""
    scope = variable_scope.get_variable_scope()
    if scope.reuse:
        return name
    taken = {v.op.name for v in scope.global_variables()}
    full = scope.name + "/" + name
    if full not in taken:
        return name
    i = 1
    while "%s_%d" % (full, i) in taken:
        i += 1
    return "%s_%d" % (name, i)


def _zero_debias(unbiased, value, one_minus_decay, scope: str) -> Tensor:
    g = _graph.get_default_graph()
    with variable_scope.variable_scope(unbiased.op.name, values=[unbiased, value]):
        with g.control_dependencies(None), g.colocate_with(unbiased.op):
            biased = variable_scope.get_variable(
                _unique_in_scope("biased"), initializer=init_ops.zeros_initializer(),
                shape=unbiased.get_shape(), dtype=unbiased.dtype.base_dtype,
                trainable=False)
            local_step = variable_scope.get_variable(
                _unique_in_scope("local_step"), shape=[], dtype=unbiased.dtype.base_dtype,
                initializer=init_ops.zeros_initializer(), trainable=False)
    update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
    steps = state_ops.assign_add(local_step, 1.0)
    bias_factor = 1.0 - math_binary.pow(1.0 - one_minus_decay, steps)
    return state_ops.assign(unbiased, update_biased / bias_factor, name=scope)


def weighted_moving_average(value, decay, weight, truediv: bool = True,
                            collections=None, name: Optional[str] = None) -> Tensor:
    """The moving average of `value * weight` divided by that of `weight`.

    Two variables hold the averages of the numerator and denominator (named
    'value' and 'weight' in the scope `name`, default "WeightedMovingAvg").

    Args:
      value: a float Tensor.
      decay: a float, usually close to 1.
      weight: a Tensor broadcastable against `value`.
      truediv: divide with `truediv` (else `div`, which is the same for floats).
      collections: collections of the two variables (default [GLOBAL_VARIABLES]).
      name: variable scope of the two variables.

    Returns:
      The weighted moving average after the update.
    """
    if collections is None:
        collections = [GraphKeys.GLOBAL_VARIABLES]
    with variable_scope.variable_scope(name, "WeightedMovingAvg", [value, weight, decay]):
        value = convert_to_tensor(value)
        weight = convert_to_tensor(weight, dtype=value.dtype)
        value_x_weight = variable_scope.get_variable(
            "value", shape=value.get_shape(), dtype=value.dtype,
            initializer=init_ops.zeros_initializer(), trainable=False,
            collections=collections)
        weight_var = variable_scope.get_variable(
            "weight", shape=weight.get_shape(), dtype=weight.dtype,
            initializer=init_ops.zeros_initializer(), trainable=False,
            collections=collections)
        numerator = assign_moving_average(value_x_weight, value * weight, decay,
                                          zero_debias=False)
        denominator = assign_moving_average(weight_var, weight, decay, zero_debias=False)
        return math_binary.truediv(numerator, denominator, name="WeightedMovingAvg")


@tf_export("train.ExponentialMovingAverage")
class ExponentialMovingAverage:
    """Maintains moving averages of variables (and tensors) with an exponential decay.

    `apply(var_list)` creates a shadow variable per item and returns the op that
    updates them all: `shadow = decay * shadow + (1 - decay) * value`. With
    `num_updates`, the decay used is `min(decay, (1 + num_updates) / (10 + num_updates))`,
    so early averages move faster.

    Args:
      decay: a float (or float Tensor), e.g. 0.999.
      num_updates: an optional count (Tensor) of updates made so far.
      zero_debias: debias the averages of tensors (not of variables, whose averages
        start at their values).
      name: the name of the averages ('<variable>/<name>') and of the update op.
    """

    def __init__(self, decay, num_updates=None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: Dict[object, variables.Variable] = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None) -> Operation:
        """Creates the averages of `var_list` (once each) and returns the op updating them.

        Args:
          var_list: Variables or Tensors of float type (default: the trainable
            variables). Variables are added to MOVING_AVERAGE_VARIABLES; their averages
            start at their values, those of tensors at 0.

        Returns:
          An Operation that updates every average of `var_list` once.

        Raises:
          TypeError: an item is not half, bfloat16, float or double.
        """
        if var_list is None:
            var_list = variables.trainable_variables()
        var_list = list(var_list)
        debiased = set()
        g = _graph.get_default_graph()
        for var in var_list:
            if var.dtype.base_dtype not in _AVERAGEABLE:
                raise TypeError("The variables must be half, float, or double: %s" % var.name)
            key = self._key(var)
            if key in self._averages:
                continue
            if isinstance(var, variables.Variable):
                avg = create_slot_variable(var, lambda v=var: v.initialized_value(),
                                           self._name)
                g.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            else:
                avg = self._zeros_average(var)
                if self._zero_debias:
                    debiased.add(self._key(avg))
            self._averages[key] = avg
        with _graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=_dt.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, _dt.float32,
                                            name="num_updates")
                decay = math_binary.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                avg = self._averages[self._key(var)]
                updates.append(assign_moving_average(
                    avg, var, decay, zero_debias=self._key(avg) in debiased))
            return structure.group(*updates, name=scope)

    def _zeros_average(self, tensor: Tensor) -> variables.Variable:
        """A zero-initialized average of a Tensor, named like a slot of it."""
        g = tensor.graph
        name = _slot_variable_name(tensor, self._name)
        shape = tensor.get_shape()
        dtype = tensor.dtype.base_dtype

        def zeros():
            from tensorweave.ops.array import array_ops
            if shape.is_fully_defined():
                return array_ops.zeros(shape.as_list(), dtype=dtype)
            return array_ops.zeros_like(tensor)
        with g.as_default(), g.name_scope(None), g.control_dependencies(None):
            return variables.Variable(zeros, trainable=False, name=name + "/", dtype=dtype,
                                      validate_shape=shape.is_fully_defined())

    @staticmethod
    def _key(var):
        return var.ref() if hasattr(var, "ref") else var

    def average(self, var) -> Optional[variables.Variable]:
        """The average of `var` (None if `apply` did not average it)."""
        return self._averages.get(self._key(var))

    def average_name(self, var) -> str:
        """The name of `var`'s average (as a checkpoint key), whether or not it exists."""
        avg = self._averages.get(self._key(var))
        if avg is not None:
            return avg.op.name
        return _graph.get_default_graph().unique_name(var.op.name + "/" + self._name,
                                                      mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None) -> Dict[str, object]:
        """A map from checkpoint names to variables that restores each average into its
        variable (for `tf.train.Saver(ema.variables_to_restore())` at evaluation).

        Args:
          moving_avg_variables: the averaged variables (default: trainable variables and
            MOVING_AVERAGE_VARIABLES). Other global variables map to their own names.

        Returns:
          A dict {name: variable}.
        """
        if moving_avg_variables is None:
            moving_avg_variables = variables.trainable_variables() + \
                variables.moving_average_variables()
        averaged = {}
        for v in moving_avg_variables:
            averaged.setdefault(self._key(v), v)
        name_map = {self.average_name(v): v for v in averaged.values()}
        averaged_names = {v.name for v in averaged.values()}
        for v in variables.global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
