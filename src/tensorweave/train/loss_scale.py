"""TF1's loss scales: tf.mixed_precision.{LossScale, FixedLossScale, DynamicLossScale}
(also under tf.mixed_precision.experimental and tf.train.experimental).

Loss scaling multiplies the loss by a number, the loss scale, before the gradients are
computed and divides the gradients by it afterwards. Mathematically it changes nothing;
in float16 it keeps small intermediate gradients from underflowing to zero. A loss scale
object gives the current scale (`__call__`) and, in graph mode, builds the op that
updates it from a step's gradients (`update`), which also says whether the gradients
may be applied. `MixedPrecisionLossScaleOptimizer` (loss_scale_optimizer.py) uses them.
"""
from __future__ import annotations

import abc
from typing import Any, Dict, Optional, Tuple, Union

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_builder import convert_to_tensor

__all__ = ["LossScale", "FixedLossScale", "DynamicLossScale", "get"]


@tf_export("mixed_precision.LossScale", "mixed_precision.experimental.LossScale",
           "train.experimental.LossScale")
class LossScale(metaclass=abc.ABCMeta):
    """Base class of the TF1 loss scales (abstract: use `FixedLossScale` or
    `DynamicLossScale`).

    Calling an instance returns the loss scale as a scalar float32 Tensor; `update`
    builds the op that adjusts it from the gradients of a step. Where a loss scale is
    accepted, an int or float (a `FixedLossScale`) or the string "dynamic" (a default
    `DynamicLossScale`) may be given instead.
    """

    def __init__(self):
        # (name, graph) -> Variable: a loss scale used in several graphs has its own
        # variables in each, as TF keys them by graph.
        self._weights: Dict[Tuple[str, Any], Any] = {}

    @abc.abstractmethod
    def __call__(self):
        """Returns the current loss scale as a scalar `float32` Tensor."""

    @abc.abstractmethod
    def update(self, grads):
        """Builds the update of the loss scale from a step's gradients.

        Args:
          grads: a nested structure of unscaled gradients (already divided by the loss
            scale); None gradients are ignored.

        Returns:
          (update_op, should_apply_gradients): the op (or bool Tensor standing for one)
          that updates the scale when run, and a Python bool or scalar bool Tensor that
          is False when the step's gradients must not be applied.
        """

    @abc.abstractmethod
    def get_config(self) -> dict:
        """Returns the config of this loss scale (the constructor's arguments)."""

    @classmethod
    def from_config(cls, config: dict) -> "LossScale":
        """Creates the loss scale from the dict `get_config` returns."""
        return cls(**config)

    def _add_weight(self, name: str, initial_value, dtype=None):
        """A non-trainable resource variable of this loss scale, in the default graph.

        Raises:
          RuntimeError: a weight named `name` already exists in this graph.
        """
        from tensorweave.ops.state.variables import Variable
        variable = Variable(initial_value=initial_value, name=name, dtype=dtype,
                            trainable=False, use_resource=True)
        key = (name, _graph.get_default_graph())
        if self._weights.get(key) is not None:
            raise RuntimeError("Duplicate variables detected. %s" % (key,))
        self._weights[key] = variable
        return variable


@tf_export("mixed_precision.FixedLossScale", "mixed_precision.experimental.FixedLossScale",
           "train.experimental.FixedLossScale")
class FixedLossScale(LossScale):
    """A loss scale that never changes.

    Args:
      loss_scale_value: a Python int or float, at least 1.

    Raises:
      ValueError: `loss_scale_value` is not a Python int or float, or is below 1.
    """

    def __init__(self, loss_scale_value: Union[int, float]):
        super().__init__()
        if not isinstance(loss_scale_value, (int, float)):
            raise ValueError("loss_scale_value must be a Python int or float.")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        # Kept as a Python float: a tensor made here would live in whatever graph and
        # device scope the constructor happened to run under, not where it is used.
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self):
        return convert_to_tensor(self._loss_scale_value)

    def update(self, grads):
        """Returns (a no-op, True): a fixed scale neither changes nor vetoes a step."""
        from tensorweave.ops.control_flow import structure
        del grads
        return structure.no_op(), True

    def __repr__(self):
        return "FixedLossScale(%s)" % self._loss_scale_value

    def get_config(self) -> dict:
        return {"loss_scale_value": self._loss_scale_value}


def _is_all_finite(grads):
    """A scalar bool Tensor: whether every element of every non-None gradient is finite."""
    from tensorweave.ops.math import math_unary, reduction_ops
    per_grad = [reduction_ops.reduce_all(math_unary.is_finite(
        g.values if isinstance(g, IndexedSlices) else g)) for g in grads if g is not None]
    if not per_grad:
        # all gradients None: True, as TF's All of an empty list (the wrapped optimizer's
        # apply_gradients then reports that no variable has a gradient)
        per_grad = convert_to_tensor([], dtype=_dt.bool)
    return reduction_ops.reduce_all(per_grad)


def _assign_if_finite(var, value):
    """Assigns `value` to `var` unless it is inf or NaN (a scale that overflowed)."""
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.control_flow.control_flow_ops import cond
    from tensorweave.ops.math import math_unary
    return cond(math_unary.is_finite(value), lambda: var.assign(value).op,
                structure.no_op)


@tf_export("mixed_precision.DynamicLossScale",
           "mixed_precision.experimental.DynamicLossScale",
           "train.experimental.DynamicLossScale")
class DynamicLossScale(LossScale):
    """A loss scale that adjusts itself to stay as high as the gradients allow.

    A step whose gradients are all finite counts as good; after `increment_period`
    consecutive good steps the scale is multiplied by `multiplier` (unless that
    overflows) and the count restarts. A step with an inf or NaN gradient is not applied:
    the scale is divided by `multiplier` (never below 1) and the count restarts.

    The state lives in two non-trainable global variables created by the constructor in
    the default graph: `current_loss_scale` (float32) and `good_steps` (int64).

    Args:
      initial_loss_scale: the scale to start with (a Python number; default 2**15,
        about half the largest float16, as a scale too high is lowered far faster than
        one too low is raised).
      increment_period: the number of consecutive good steps after which the scale
        is raised (converted with `int`).
      multiplier: the factor by which the scale is raised or lowered.
    """

    def __init__(self, initial_loss_scale: float = 2 ** 15, increment_period: int = 2000,
                 multiplier: float = 2.):
        super().__init__()
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current_loss_scale = self._add_weight(
            name="current_loss_scale", dtype=_dt.float32,
            initial_value=self._initial_loss_scale)
        # consecutive steps with finite gradients since the last nonfinite one or the
        # last change of the scale
        self._num_good_steps = self._add_weight(name="good_steps", dtype=_dt.int64,
                                                initial_value=0)

    @property
    def initial_loss_scale(self) -> float:
        return self._initial_loss_scale

    @property
    def increment_period(self) -> int:
        return self._increment_period

    @property
    def multiplier(self) -> float:
        return self._multiplier

    def __call__(self):
        return convert_to_tensor(self._current_loss_scale)

    def update(self, grads):
        """Builds the update of the scale from whether all of `grads` are finite.

        Args:
          grads: a nested structure of unscaled gradients (None entries ignored).

        Returns:
          (update_op, should_apply_gradients): a bool Tensor whose evaluation runs the
          update (TF1's cond of ops), and the scalar bool Tensor "all gradients finite".
        """
        from tensorweave.ops.control_flow import structure
        from tensorweave.ops.control_flow.control_flow_ops import cond
        from tensorweave.ops.math import math_binary
        is_finite = _is_all_finite(nest.flatten(grads))
        scale, good_steps = self._current_loss_scale, self._num_good_steps

        def update_if_finite_grads():
            def incr_loss_scale():
                return structure.group(
                    _assign_if_finite(scale, scale * self._multiplier),
                    good_steps.assign(0))

            return cond(good_steps + 1 >= self._increment_period, incr_loss_scale,
                        lambda: good_steps.assign_add(1).op)

        def update_if_not_finite_grads():
            new_loss_scale = math_binary.maximum(scale / self._multiplier, 1)
            return structure.group(good_steps.assign(0), scale.assign(new_loss_scale))

        update_op = cond(is_finite, update_if_finite_grads, update_if_not_finite_grads)
        return update_op, is_finite

    def __repr__(self):
        return ("DynamicLossScale(initial_loss_scale=%s, increment_period=%s, "
                "multiplier=%s)" % (self.initial_loss_scale, self.increment_period,
                                    self.multiplier))

    def get_config(self) -> dict:
        return {"initial_loss_scale": self.initial_loss_scale,
                "increment_period": self.increment_period,
                "multiplier": self.multiplier}


def get(identifier) -> Optional[LossScale]:
    """The loss scale `identifier` names: a number gives a `FixedLossScale`, "dynamic" a
    default `DynamicLossScale`, a LossScale itself, None None.

    Raises:
      ValueError: `identifier` is none of these.
    """
    if isinstance(identifier, (int, float)):
        return FixedLossScale(identifier)
    if isinstance(identifier, str) and identifier == "dynamic":
        return DynamicLossScale()
    if isinstance(identifier, LossScale):
        return identifier
    if identifier is None:
        return None
    raise ValueError("Could not interpret loss scale identifier: %s" % (identifier,))
