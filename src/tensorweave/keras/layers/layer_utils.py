"""What the Keras layer modules share: argument normalization with Keras' messages
(data_format defaulting to `backend.image_data_format()`, padding), shapes as tuples,
and `get_config` of constructor arguments."""
from __future__ import annotations

import numbers

import tensorweave as tf
from tensorweave.keras import activations, backend, constraints, initializers, regularizers


def normalize_data_format(value) -> str:
    """`value` lower-cased; None is `backend.image_data_format()`.

    Raises:
      ValueError: neither 'channels_first' nor 'channels_last'.
    """
    if value is None:
        value = backend.image_data_format()
    data_format = value.lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError('The `data_format` argument must be one of "channels_first", '
                         '"channels_last". Received: ' + str(value))
    return data_format


def normalize_padding(value) -> str:
    """A padding argument lower-cased.

    Raises:
      ValueError: not 'valid', 'same' or 'causal'.
    """
    if isinstance(value, (list, tuple)):
        return value
    padding = value.lower()
    if padding not in {"valid", "same", "causal"}:
        raise ValueError('The `padding` argument must be a list/tuple or one of "valid", '
                         '"same" (or "causal", only for `Conv1D). Received: ' + str(padding))
    return padding


def _is_one_shape(value) -> bool:
    """Whether `value` is one shape (a TensorShape, or a list/tuple of dimensions) rather
    than a list of shapes."""
    if isinstance(value, tf.TensorShape):
        return True
    return isinstance(value, (list, tuple)) and all(
        d is None or isinstance(d, (numbers.Integral, tf.Dimension)) for d in value)


def shape_tuples(input_shape):
    """A shape (TensorShape, tuple or list), or a list of them, as tuples of ints and
    None (None for an unknown rank), as Keras' `shape_type_conversion` passes them to
    `build` and `compute_output_shape`."""
    if input_shape is None:
        return None
    if not _is_one_shape(input_shape) and isinstance(input_shape, (list, tuple)):
        return [shape_tuples(s) for s in input_shape]
    shape = tf.TensorShape(input_shape)
    return None if shape.ndims is None else tuple(shape.as_list())


_GETTERS = (("_initializer", initializers.get), ("_regularizer", regularizers.get),
            ("_constraint", constraints.get))


def resolve_identifiers(layer) -> None:
    """Replaces the layer's activation, initializer, regularizer and constraint
    arguments given as names or configs by the objects. The Keras layers do it after the
    base constructor, as TF's (so a bad name fails after the layer took its name)."""
    for name, value in list(vars(layer).items()):
        if name == "activation":
            setattr(layer, name, activations.get(value))
        for suffix, get in _GETTERS:
            if name.endswith(suffix) and not name.startswith("_"):
                setattr(layer, name, get(value))


_SERIALIZERS = (("_initializer", initializers.serialize), ("_regularizer", regularizers.serialize),
                ("_constraint", constraints.serialize))


def layer_config(layer, base: dict, names) -> dict:
    """`base` plus the attributes `names` of `layer`, initializers, regularizers,
    constraints and activations serialized."""
    config = dict(base)
    for name in names:
        value = getattr(layer, name)
        if name == "activation":
            value = activations.serialize(value)
        for suffix, serialize in _SERIALIZERS:
            if name.endswith(suffix):
                value = serialize(value)
        config[name] = value
    return config
