"""`tf.keras.initializers` as TF1 (`tf.compat.v1.keras.initializers`) has them: TF1's
initializers (tensorweave's init_ops) under Keras names, with Keras' own defaults where
they differ (RandomNormal/RandomUniform/TruncatedNormal draw with 0.05, He and LeCun
initializers are classes), and `get`/`serialize`/`deserialize` by name or config."""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import export, tf_export
from tensorweave.layers.base import to_snake_case
from tensorweave.keras import serialization
from tensorweave.ops.state import init_ops

Initializer = init_ops.Initializer
Zeros = init_ops.Zeros
Ones = init_ops.Ones
Constant = init_ops.Constant
VarianceScaling = init_ops.VarianceScaling
Orthogonal = init_ops.Orthogonal
Identity = init_ops.Identity
GlorotUniform = init_ops.GlorotUniform
GlorotNormal = init_ops.GlorotNormal

export(Initializer, "keras.initializers.Initializer")
export(Zeros, "keras.initializers.Zeros", "keras.initializers.zeros")
export(Ones, "keras.initializers.Ones", "keras.initializers.ones")
export(Constant, "keras.initializers.Constant", "keras.initializers.constant")
export(VarianceScaling, "keras.initializers.VarianceScaling")
export(Orthogonal, "keras.initializers.Orthogonal", "keras.initializers.orthogonal")
export(Identity, "keras.initializers.Identity", "keras.initializers.identity")
export(GlorotUniform, "keras.initializers.glorot_uniform")
export(GlorotNormal, "keras.initializers.glorot_normal")


@tf_export("keras.initializers.RandomNormal", "keras.initializers.random_normal",
           "keras.initializers.normal")
class RandomNormal(init_ops.RandomNormal):
    """Normally distributed values (Keras' defaults: mean 0, stddev 0.05).

    Args:
      mean: the mean.
      stddev: the standard deviation.
      seed: the op seed.
      dtype: the default dtype (a float type).
    """

    def __init__(self, mean=0.0, stddev=0.05, seed: Optional[int] = None,
                 dtype=_dt.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


@tf_export("keras.initializers.RandomUniform", "keras.initializers.random_uniform",
           "keras.initializers.uniform")
class RandomUniform(init_ops.RandomUniform):
    """Values uniform in [minval, maxval) (Keras' defaults: [-0.05, 0.05)).

    Args:
      minval, maxval: the bounds.
      seed: the op seed.
      dtype: the default dtype.
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed: Optional[int] = None,
                 dtype=_dt.float32):
        super().__init__(minval=minval, maxval=maxval, seed=seed, dtype=dtype)


@tf_export("keras.initializers.TruncatedNormal", "keras.initializers.truncated_normal")
class TruncatedNormal(init_ops.TruncatedNormal):
    """Normal values redrawn beyond two stddevs (Keras' defaults: mean 0, stddev 0.05).

    Args:
      mean: the mean.
      stddev: the standard deviation before truncation.
      seed: the op seed.
      dtype: the default dtype (a float type).
    """

    def __init__(self, mean=0.0, stddev=0.05, seed: Optional[int] = None,
                 dtype=_dt.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class _SeededScaling(init_ops.VarianceScaling):
    """A VarianceScaling with fixed `_scale`, `_distribution` (mode fan_in) whose only
    argument is the seed."""

    def __init__(self, seed: Optional[int] = None):
        super().__init__(scale=self._scale, mode="fan_in", distribution=self._distribution,
                         seed=seed)

    def get_config(self) -> dict:
        return {"seed": self.seed}


@tf_export("keras.initializers.lecun_normal")
class LecunNormal(_SeededScaling):
    """Truncated normal with stddev sqrt(1 / fan_in) (LeCun 1998). Args: seed."""

    _scale, _distribution = 1.0, "truncated_normal"


@tf_export("keras.initializers.lecun_uniform")
class LecunUniform(_SeededScaling):
    """Uniform in [-sqrt(3 / fan_in), sqrt(3 / fan_in)]. Args: seed."""

    _scale, _distribution = 1.0, "uniform"


@tf_export("keras.initializers.he_normal")
class HeNormal(_SeededScaling):
    """Truncated normal with stddev sqrt(2 / fan_in) (He et al. 2015). Args: seed."""

    _scale, _distribution = 2.0, "truncated_normal"


@tf_export("keras.initializers.he_uniform")
class HeUniform(_SeededScaling):
    """Uniform in [-sqrt(6 / fan_in), sqrt(6 / fan_in)]. Args: seed."""

    _scale, _distribution = 2.0, "uniform"


def _all_objects() -> dict:
    classes = {"Constant": Constant, "GlorotNormal": GlorotNormal,
               "GlorotUniform": GlorotUniform, "Identity": Identity, "Ones": Ones,
               "Orthogonal": Orthogonal, "VarianceScaling": VarianceScaling, "Zeros": Zeros,
               "HeNormal": HeNormal, "HeUniform": HeUniform, "LecunNormal": LecunNormal,
               "LecunUniform": LecunUniform, "RandomNormal": RandomNormal,
               "RandomUniform": RandomUniform, "TruncatedNormal": TruncatedNormal}
    objects = dict(classes)
    objects.update({to_snake_case(k): v for k, v in classes.items()})
    objects.update(normal=RandomNormal, uniform=RandomUniform, one=Ones, zero=Zeros)
    return objects


_ALL_OBJECTS = _all_objects()


@tf_export("keras.initializers.serialize")
def serialize(initializer, use_legacy_format: bool = False):
    """The config of an initializer: {'class_name': ..., 'config': ...} (None for None)."""
    return serialization.serialize_object(initializer)


@tf_export("keras.initializers.deserialize")
def deserialize(config, custom_objects: Optional[dict] = None,
                use_legacy_format: bool = False):
    """The initializer a config (or a name, e.g. 'glorot_uniform') describes.

    Raises:
      ValueError: an unknown name.
    """
    return serialization.deserialize_object(config, _ALL_OBJECTS, custom_objects,
                                            "initializer")


@tf_export("keras.initializers.get")
def get(identifier):
    """An initializer from a name ('he_normal'), a config dict, a class (instantiated)
    or a callable (returned as is); None for None.

    Raises:
      ValueError: an unknown name or an identifier of another type.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}})
    if callable(identifier):
        return identifier() if isinstance(identifier, type) else identifier
    raise ValueError("Could not interpret initializer identifier: %s" % (identifier,))
