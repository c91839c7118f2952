"""`tf.keras.activations`: the activation functions (built from tensorweave's nn and
math ops) and `get`/`serialize`/`deserialize` by name ('gelu' by name only: TF's v1 API
does not export it). `softmax` and `sigmoid` remember their input, which the
crossentropies then use as logits (TF's `_keras_logits`)."""
from __future__ import annotations

from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_ops, serialization


@tf_export("keras.activations.relu")
def relu(x, alpha: float = 0.0, max_value: Optional[float] = None, threshold: float = 0.0):
    """`max(x, 0)`, with a slope `alpha` below `threshold`, clipped at `max_value`."""
    return backend_ops.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


@tf_export("keras.activations.softmax")
def softmax(x, axis=-1):
    """`exp(x) / sum(exp(x))` along `axis` (an int, or a tuple of axes).

    Raises:
      ValueError: `x` has rank 0 or 1.
    """
    x = tf.convert_to_tensor(x)
    if x.shape.ndims is not None and x.shape.ndims <= 1:
        raise ValueError("Cannot apply softmax to a tensor that is 1D. Received input: %s" % x)
    if isinstance(axis, int):
        output = tf.nn.softmax(x, axis=axis)
    else:
        numerator = tf.exp(x - tf.reduce_max(x, axis=axis, keepdims=True))
        output = numerator / tf.reduce_sum(numerator, axis=axis, keepdims=True)
    backend.graph_state(output.graph).logits[output] = x
    return output


@tf_export("keras.activations.elu")
def elu(x, alpha: float = 1.0):
    """`x` for x > 0, `alpha * (exp(x) - 1)` else."""
    return backend_ops.elu(x, alpha)


@tf_export("keras.activations.selu")
def selu(x):
    """The scaled ELU (Klambauer et al. 2017), `tf.nn.selu`."""
    return tf.nn.selu(x)


@tf_export("keras.activations.softplus")
def softplus(x):
    """`log(exp(x) + 1)`."""
    return tf.math.softplus(x)


@tf_export("keras.activations.softsign")
def softsign(x):
    """`x / (abs(x) + 1)`."""
    return tf.math.softsign(x)


@tf_export("keras.activations.swish")
def swish(x):
    """`x * sigmoid(x)`."""
    return tf.nn.silu(x)


@tf_export("keras.activations.mish")
def mish(x):
    """`x * tanh(softplus(x))` (Misra 2019)."""
    return x * tf.math.tanh(tf.math.softplus(x))


def _gelu(x, approximate: bool = False):
    """The Gaussian error linear unit (Hendrycks & Gimpel 2016): `x * P(X <= x)` for a
    standard normal X, `0.5 * x * (1 + erf(x / sqrt(2)))`; with `approximate`, the tanh
    approximation `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))`.

    Raises:
      ValueError: `x` is not floating-point.
    """
    with tf.name_scope(None, "Gelu", [x]):
        x = tf.convert_to_tensor(x, name="features")
        if not x.dtype.is_floating:
            raise ValueError("`features.dtype` must be a floating point tensor."
                             "Received:features.dtype=%s" % (x.dtype,))
        if approximate:
            coeff = tf.cast(0.044715, x.dtype)
            return 0.5 * x * (1.0 + tf.tanh(0.7978845608028654 *
                                            (x + coeff * tf.pow(x, 3))))
        return 0.5 * x * (1.0 + tf.math.erf(x / tf.cast(1.4142135623730951, x.dtype)))


# named 'gelu' (for get and serialize) but not a module attribute: TF's v1 API has no
# tf.keras.activations.gelu
_gelu.__name__ = _gelu.__qualname__ = "gelu"


@tf_export("keras.activations.tanh")
def tanh(x):
    """The hyperbolic tangent."""
    return tf.tanh(x)


@tf_export("keras.activations.sigmoid")
def sigmoid(x):
    """`1 / (1 + exp(-x))`."""
    output = tf.sigmoid(x)
    backend.graph_state(output.graph).logits[output] = x
    return output


@tf_export("keras.activations.exponential")
def exponential(x):
    """`exp(x)`."""
    return tf.exp(x)


@tf_export("keras.activations.hard_sigmoid")
def hard_sigmoid(x):
    """`clip(0.2 * x + 0.5, 0, 1)`."""
    return backend_ops.hard_sigmoid(x)


@tf_export("keras.activations.linear")
def linear(x):
    """The identity: `x` itself."""
    return x


_ALL_OBJECTS = {f.__name__: f for f in (relu, softmax, elu, selu, softplus, softsign, swish,
                                        mish, _gelu, tanh, sigmoid, exponential, hard_sigmoid,
                                        linear)}


@tf_export("keras.activations.serialize")
def serialize(activation, use_legacy_format: bool = False):
    """The name of an activation function ('relu'); the config of an activation layer.

    Raises:
      ValueError: an object that is neither a function nor has `get_config`.
    """
    return serialization.serialize_object(activation)


@tf_export("keras.activations.deserialize")
def deserialize(name, custom_objects: Optional[dict] = None,
                use_legacy_format: bool = False):
    """The activation function named `name` ('relu', 'softmax', ...).

    Raises:
      ValueError: an unknown name.
    """
    return serialization.deserialize_object(name, _ALL_OBJECTS, custom_objects,
                                            "activation function")


@tf_export("keras.activations.get")
def get(identifier):
    """An activation function from a name or config; a callable is returned as is and
    None gives `linear`.

    Raises:
      ValueError: an unknown name.
      TypeError: an identifier that is neither a string, a dict nor a callable.
    """
    if identifier is None:
        return linear
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise TypeError("Could not interpret activation function identifier: %s" % (identifier,))
