"""`tf.keras.constraints`: projections applied to a variable after each optimizer update
(tf.train optimizers apply a variable's `constraint`): MaxNorm, MinMaxNorm, NonNeg,
UnitNorm, and `get`/`serialize`/`deserialize`."""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_ops, serialization


@tf_export("keras.constraints.Constraint")
class Constraint:
    """Base class of constraints: `constraint(w)` gives the projected weight."""

    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _norms(w, axis):
    return backend_ops.sqrt(tf.reduce_sum(tf.square(w), axis=axis, keepdims=True))


@tf_export("keras.constraints.MaxNorm", "keras.constraints.max_norm")
class MaxNorm(Constraint):
    """Rescales the weights whose norm along `axis` exceeds `max_value` to that norm.

    Args:
      max_value: the largest norm.
      axis: the axis (or axes) the norm is taken over (0: each column of a Dense kernel).
    """

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = backend_ops.clip(norms, 0, self.max_value)
        return w * (desired / (backend.epsilon() + norms))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


@tf_export("keras.constraints.NonNeg", "keras.constraints.non_neg")
class NonNeg(Constraint):
    """Zeroes the negative weights."""

    def __call__(self, w):
        return w * tf.cast(tf.greater_equal(w, 0.0), backend.floatx())


@tf_export("keras.constraints.UnitNorm", "keras.constraints.unit_norm")
class UnitNorm(Constraint):
    """Scales the weights to unit norm along `axis`.

    Args:
      axis: the axis (or axes) the norm is taken over.
    """

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (backend.epsilon() + _norms(w, self.axis))

    def get_config(self) -> dict:
        return {"axis": self.axis}


@tf_export("keras.constraints.MinMaxNorm", "keras.constraints.min_max_norm")
class MinMaxNorm(Constraint):
    """Moves the norm along `axis` toward [min_value, max_value] by the fraction `rate`.

    Args:
      min_value, max_value: the norm bounds.
      rate: 1.0 projects exactly; smaller values move part way.
      axis: the axis (or axes) the norm is taken over.
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w):
        norms = _norms(w, self.axis)
        desired = (self.rate * backend_ops.clip(norms, self.min_value, self.max_value) +
                   (1 - self.rate) * norms)
        return w * (desired / (backend.epsilon() + norms))

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


_ALL_OBJECTS = {"Constraint": Constraint, "MaxNorm": MaxNorm, "NonNeg": NonNeg,
                "UnitNorm": UnitNorm, "MinMaxNorm": MinMaxNorm, "max_norm": MaxNorm,
                "non_neg": NonNeg, "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm}


@tf_export("keras.constraints.serialize")
def serialize(constraint, use_legacy_format: bool = False):
    """The config of a constraint: {'class_name': ..., 'config': ...} (None for None)."""
    return serialization.serialize_object(constraint)


@tf_export("keras.constraints.deserialize")
def deserialize(config, custom_objects: Optional[dict] = None,
                use_legacy_format: bool = False):
    """The constraint a config or name ('max_norm', 'NonNeg', ...) describes.

    Raises:
      ValueError: an unknown name.
    """
    return serialization.deserialize_object(config, _ALL_OBJECTS, custom_objects,
                                            "constraint")


@tf_export("keras.constraints.get")
def get(identifier):
    """A constraint from a name, a config dict or a callable (returned as is); None for
    None.

    Raises:
      ValueError: an unknown name or an identifier of another type.
    """
    return serialization.get_object(identifier, deserialize, "constraint")
