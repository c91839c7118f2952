"""`tf.keras.regularizers`: L1, L2 and L1L2 penalties (callables weight -> scalar loss)
and `get`/`serialize`/`deserialize`. The factors are stored as floatx NumPy values, as
TF's Keras stores them, so configs read back e.g. 0.009999999776482582 for 0.01."""
from __future__ import annotations

import math
from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, serialization


def _check_penalty_number(x) -> None:
    if not isinstance(x, (float, int)):
        raise ValueError("Value %s is not a valid regularization penalty number, expected an "
                         "int or float value." % (x,))
    if math.isinf(x) or math.isnan(x):
        raise ValueError("Value %s is not a valid regularization penalty number, an infinite "
                         "number or NaN are not valid values." % (x,))


@tf_export("keras.regularizers.Regularizer")
class Regularizer:
    """Base class of regularizers: `regularizer(x)` gives a scalar penalty of the weight
    `x`, which layers add to their `losses`."""

    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)

    def get_config(self) -> dict:
        raise NotImplementedError("%s does not implement get_config()" % type(self).__name__)


@tf_export("keras.regularizers.L1L2")
class L1L2(Regularizer):
    """`l1 * reduce_sum(abs(x)) + l2 * reduce_sum(square(x))`.

    Args:
      l1: the L1 factor (None: 0).
      l2: the L2 factor (None: 0).

    Raises:
      ValueError: a factor that is not a finite number.
    """

    def __init__(self, l1=0.0, l2=0.0):
        l1 = 0.0 if l1 is None else l1
        l2 = 0.0 if l2 is None else l2
        _check_penalty_number(l1)
        _check_penalty_number(l2)
        self.l1 = backend.cast_to_floatx(l1)
        self.l2 = backend.cast_to_floatx(l2)

    def __call__(self, x):
        regularization = backend.constant(0.0, dtype=x.dtype)
        if self.l1:
            regularization += self.l1 * tf.reduce_sum(tf.abs(x))
        if self.l2:
            regularization += 2.0 * self.l2 * tf.nn.l2_loss(x)
        return regularization

    def get_config(self) -> dict:
        return {"l1": float(self.l1), "l2": float(self.l2)}


@tf_export("keras.regularizers.L1", "keras.regularizers.l1")
class L1(Regularizer):
    """`l1 * reduce_sum(abs(x))`.

    Args:
      l1: the factor (default 0.01; None: 0.01).

    Raises:
      TypeError: an unknown keyword argument.
      ValueError: a factor that is not a finite number.
    """

    def __init__(self, l1=0.01, **kwargs):
        l1 = kwargs.pop("l", l1)  # backwards compatibility, as TF
        if kwargs:
            raise TypeError("Argument(s) not recognized: %s" % (kwargs,))
        l1 = 0.01 if l1 is None else l1
        _check_penalty_number(l1)
        self.l1 = backend.cast_to_floatx(l1)

    def __call__(self, x):
        return self.l1 * tf.reduce_sum(tf.abs(x))

    def get_config(self) -> dict:
        return {"l1": float(self.l1)}


@tf_export("keras.regularizers.L2", "keras.regularizers.l2")
class L2(Regularizer):
    """`l2 * reduce_sum(square(x))` (computed as `2 * l2 * tf.nn.l2_loss(x)`, as TF).

    Args:
      l2: the factor (default 0.01; None: 0.01).

    Raises:
      TypeError: an unknown keyword argument.
      ValueError: a factor that is not a finite number.
    """

    def __init__(self, l2=0.01, **kwargs):
        l2 = kwargs.pop("l", l2)
        if kwargs:
            raise TypeError("Argument(s) not recognized: %s" % (kwargs,))
        l2 = 0.01 if l2 is None else l2
        _check_penalty_number(l2)
        self.l2 = backend.cast_to_floatx(l2)

    def __call__(self, x):
        return 2.0 * self.l2 * tf.nn.l2_loss(x)

    def get_config(self) -> dict:
        return {"l2": float(self.l2)}


@tf_export("keras.regularizers.l1_l2")
def l1_l2(l1: float = 0.01, l2: float = 0.01) -> L1L2:
    """An L1L2 regularizer with both factors (default 0.01 each)."""
    return L1L2(l1=l1, l2=l2)


_ALL_OBJECTS = {"Regularizer": Regularizer, "L1L2": L1L2, "L1": L1, "L2": L2, "l1": L1,
                "l2": L2, "l1_l2": l1_l2}


@tf_export("keras.regularizers.serialize")
def serialize(regularizer, use_legacy_format: bool = False):
    """The config of a regularizer: {'class_name': ..., 'config': ...} (None for None)."""
    return serialization.serialize_object(regularizer)


@tf_export("keras.regularizers.deserialize")
def deserialize(config, custom_objects: Optional[dict] = None,
                use_legacy_format: bool = False):
    """The regularizer a config or name ('l2', 'L1L2', 'l1_l2') describes.

    Raises:
      ValueError: an unknown name.
    """
    if config == "l1_l2":
        return L1L2(l1=0.01, l2=0.01)
    return serialization.deserialize_object(config, _ALL_OBJECTS, custom_objects,
                                            "regularizer")


@tf_export("keras.regularizers.get")
def get(identifier):
    """A regularizer from a name, a config dict or a callable (returned as is); None for
    None.

    Raises:
      ValueError: an unknown name or an identifier of another type.
    """
    return serialization.get_object(identifier, deserialize, "regularizer")

