"""`tf.keras.optimizers.schedules`: learning rates as functions of the optimizer's step,
as TF 2.15's Keras defines them. A schedule given as an optimizer's `learning_rate` is
called with the optimizer's `iterations` when the update is built. CosineDecay and
CosineDecayRestarts are also in `tf.keras.experimental`, as in Keras 2.15.

Each schedule computes what the TF1 decay function of tf.train (learning_rate_decay.py)
computes, in the dtype of `initial_learning_rate`; they are the same formulas (Keras'
schedules are what TF's tf.train functions wrap).
"""
from __future__ import annotations

import math
from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import serialization
from tensorweave.train import learning_rate_decay as _decay


def _export(cls):
    return tf_export("keras.optimizers.schedules." + cls.__name__)(cls)


@_export
class LearningRateSchedule:
    """Base class of the schedules: `schedule(step)` is the learning rate at `step`;
    subclasses define `__call__` and `get_config`."""

    def __call__(self, step):
        raise NotImplementedError("Learning rate schedule must override __call__")

    def get_config(self) -> dict:
        raise NotImplementedError("Learning rate schedule must override get_config")

    @classmethod
    def from_config(cls, config: dict):
        """The schedule `cls(**config)`."""
        return cls(**config)


class _StepDecay(LearningRateSchedule):
    """A schedule `fn(initial_learning_rate, step, decay_steps, decay_rate, staircase)`
    of tf.train (exponential and inverse time decay)."""

    _fn = None

    def __init__(self, initial_learning_rate, decay_steps, decay_rate,
                 staircase: bool = False, name: Optional[str] = None):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        return self._fn(self.initial_learning_rate, step, self.decay_steps, self.decay_rate,
                        staircase=self.staircase, name=self.name)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


@_export
class ExponentialDecay(_StepDecay):
    """`initial_learning_rate * decay_rate ^ (step / decay_steps)` (the exponent
    floored with `staircase`).

    Args:
      initial_learning_rate: a float or float tensor.
      decay_steps: a positive number of steps.
      decay_rate: the factor per `decay_steps` steps.
      staircase: decay at discrete intervals.
      name: the name scope (default 'ExponentialDecay').
    """

    _fn = staticmethod(_decay.exponential_decay)


@_export
class InverseTimeDecay(_StepDecay):
    """`initial_learning_rate / (1 + decay_rate * step / decay_steps)` (the ratio floored
    with `staircase`).

    Args:
      initial_learning_rate: a float or float tensor.
      decay_steps: a positive number of steps.
      decay_rate: the rate of decay.
      staircase: decay at discrete intervals.
      name: the name scope (default 'InverseTimeDecay').
    """

    _fn = staticmethod(_decay.inverse_time_decay)


@_export
class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[0]` for step <= boundaries[0], `values[i]` for boundaries[i-1] < step <=
    boundaries[i], `values[-1]` after the last boundary.

    Args:
      boundaries: increasing numbers (cast to the step's dtype).
      values: one more value than boundaries, all of one dtype.
      name: the name scope (default 'PiecewiseConstant').

    Raises:
      ValueError: the lengths do not match.
    """

    def __init__(self, boundaries, values, name: Optional[str] = None):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                "Received: boundaries=%s of length %d, and values=%s of length %d."
                % (boundaries, len(boundaries), values, len(values)))
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        with tf.name_scope(self.name or "PiecewiseConstant"):
            step = tf.convert_to_tensor(step)
            boundaries = [tf.cast(b, step.dtype.base_dtype)
                          for b in tf.nest.flatten(self.boundaries)]
            return _decay.piecewise_constant(step, boundaries,
                                             tf.nest.flatten(self.values))

    def get_config(self) -> dict:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


@_export
class PolynomialDecay(LearningRateSchedule):
    """`(initial_learning_rate - end_learning_rate) * (1 - step / decay_steps) ^ power +
    end_learning_rate`, the step capped at decay_steps, or with `cycle` decay_steps
    stretched to its first multiple above the step.

    Args:
      initial_learning_rate: a float or float tensor.
      decay_steps: a positive number of steps.
      end_learning_rate: the final rate (default 0.0001).
      power: the power of the polynomial (default 1: linear).
      cycle: restart the decay after each multiple of decay_steps.
      name: the name scope (default 'PolynomialDecay').
    """

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001,
                 power=1.0, cycle: bool = False, name: Optional[str] = None):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        return _decay.polynomial_decay(self.initial_learning_rate, step, self.decay_steps,
                                       self.end_learning_rate, self.power, self.cycle,
                                       name=self.name)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


@tf_export("keras.optimizers.schedules.CosineDecay", "keras.experimental.CosineDecay")
class CosineDecay(LearningRateSchedule):
    """Cosine decay, after an optional linear warmup: for `warmup_steps` steps the rate
    goes linearly from `initial_learning_rate` to `warmup_target`, then decays over
    `decay_steps` steps from there (from `initial_learning_rate` without a warmup) as
    `rate * ((1 - alpha) * 0.5 * (1 + cos(pi * t / decay_steps)) + alpha)`.

    Args:
      initial_learning_rate: a float or float tensor.
      decay_steps: the number of steps of the decay.
      alpha: the final rate as a fraction of the decay's start.
      name: the name scope (default 'CosineDecay').
      warmup_target: the rate at the end of the warmup (None: no warmup).
      warmup_steps: the number of steps of the warmup.
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0,
                 name: Optional[str] = None, warmup_target=None, warmup_steps=0):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decayed(self, step, decay_steps, decay_from, dtype):
        fraction = step / decay_steps
        cosine = 0.5 * (1.0 + tf.cos(tf.constant(math.pi, dtype=dtype) * fraction))
        return tf.multiply(decay_from, (1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        with tf.name_scope(self.name or "CosineDecay"):
            initial = tf.convert_to_tensor(self.initial_learning_rate,
                                           name="initial_learning_rate")
            dtype = initial.dtype
            decay_steps = tf.cast(self.decay_steps, dtype)
            step = tf.cast(step, dtype)
            if self.warmup_target is None:
                return self._decayed(tf.minimum(step, decay_steps), decay_steps, initial,
                                     dtype)
            target = tf.cast(self.warmup_target, dtype)
            warmup_steps = tf.cast(self.warmup_steps, dtype)
            step = tf.minimum(step, decay_steps + warmup_steps)
            # both branches are computed and one selected (TF: a tf.cond); the decay
            # branch at a step inside the warmup is finite, so nothing leaks through
            warmup = (target - initial) * (step / warmup_steps) + initial
            decay = self._decayed(step - warmup_steps, decay_steps, target, dtype)
            return tf.where(step < warmup_steps, warmup, decay)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


@tf_export("keras.optimizers.schedules.CosineDecayRestarts", "keras.experimental.CosineDecayRestarts")
class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): period i lasts first_decay_steps *
    t_mul^i steps and starts from initial_learning_rate * m_mul^i; within a period the
    rate decays to `alpha` times its start.

    Args:
      initial_learning_rate: a float or float tensor.
      first_decay_steps: the length of the first period.
      t_mul: the factor of each period's length.
      m_mul: the factor of each period's starting rate.
      alpha: the final rate of a period as a fraction of its start.
      name: the name scope (default 'SGDRDecay').
    """

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name: Optional[str] = None):
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step):
        return _decay.cosine_decay_restarts(self.initial_learning_rate, step,
                                            self.first_decay_steps, t_mul=self._t_mul,
                                            m_mul=self._m_mul, alpha=self.alpha,
                                            name=self.name)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_ALL_OBJECTS = {cls.__name__: cls for cls in (
    ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay,
    CosineDecay, CosineDecayRestarts)}


@tf_export("keras.optimizers.schedules.serialize")
def serialize(learning_rate_schedule, use_legacy_format: bool = False) -> dict:
    """{'class_name': the schedule's class name, 'config': its config}."""
    return serialization.serialize_object(learning_rate_schedule)


@tf_export("keras.optimizers.schedules.deserialize")
def deserialize(config, custom_objects: Optional[dict] = None,
                use_legacy_format: bool = False):
    """The schedule a {'class_name', 'config'} dict describes.

    Raises:
      ValueError: an unknown class name.
    """
    return serialization.deserialize_object(config, _ALL_OBJECTS, custom_objects, "decay")
