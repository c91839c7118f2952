"""Helpers of the Keras base layer: the call context (the `training` of the enclosing
layer call), how Keras makes a variable, and small weight and graph utilities."""
from __future__ import annotations

import functools
import inspect
import re
import threading

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.state.variables import VariableAggregation, VariableSynchronization


class CallContext(threading.local):
    """The layer calls in progress on this thread, innermost last: (layer, inputs,
    training) each."""

    def __init__(self):
        self.frames: list = []

    @property
    def training(self):
        return self.frames[-1][2] if self.frames else None

    @property
    def in_call(self) -> bool:
        return bool(self.frames)

    @property
    def inputs(self):
        return self.frames[-1][1] if self.frames else None


_CALL_CONTEXT = CallContext()


def call_context() -> CallContext:
    """The call context of this thread (the `training` of the enclosing call)."""
    return _CALL_CONTEXT


def to_snake_case(name: str) -> str:
    """A class name as the default name of its Keras layers, with TF 2.15's Keras rule:
    'ConvLSTM2D' -> 'conv_lstm2d' (tf.layers' older rule, which lets digits end a word,
    gives 'conv_lst_m2d')."""
    intermediate = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return snake if snake[0] != "_" else "private" + snake


def make_variable(name, shape=None, dtype=tf.float32, initializer=None, trainable=None,
                  caching_device=None, validate_shape: bool = True, constraint=None,
                  use_resource=None, collections=None,
                  synchronization=VariableSynchronization.AUTO,
                  aggregation=VariableAggregation.NONE, partitioner=None):
    """A resource variable as TF's Keras makes one: initialized by `initializer(shape,
    dtype=dtype)` (a class is instantiated first; a non-callable is the value)."""
    if partitioner is not None:
        raise NotImplementedError("tf.keras add_weight(partitioner=...) is not supported by "
                                  "tensorweave")
    if initializer is not None and not callable(initializer):
        init_val, variable_dtype = initializer, None
    else:
        if inspect.isclass(initializer):
            initializer = initializer()
        init_val = functools.partial(initializer, shape, dtype=dtype)
        variable_dtype = dtype.base_dtype
    return tf.Variable(initial_value=init_val, name=name, trainable=trainable,
                       caching_device=caching_device, dtype=variable_dtype,
                       validate_shape=validate_shape, constraint=constraint,
                       use_resource=True if use_resource is None else use_resource,
                       collections=collections, synchronization=synchronization,
                       aggregation=aggregation, shape=shape)


def dedup(weights: list) -> list:
    seen, out = set(), []
    for w in weights:
        if id(w) not in seen:
            seen.add(id(w))
            out.append(w)
    return out


def call_loss(fn):
    loss = fn()
    if loss is None:
        return None
    if not isinstance(loss, tf.Tensor):
        from tensorweave.keras import backend
        loss = tf.convert_to_tensor(loss, dtype=backend.floatx())
    return loss


def to_tensor(x):
    """NumPy values and Python numbers as tensors (other inputs as they are), as TF."""
    if isinstance(x, (np.ndarray, np.generic, float, int)) and not isinstance(x, bool):
        return tf.convert_to_tensor(x)
    return x





# Keras' V2_DTYPE_BEHAVIOR, off in TF1: a Keras layer without a dtype takes its first
# input's. Enabled, layers made afterwards default to floatx and cast floating inputs to
# their dtype ("autocast").
_v2_dtype_behavior = False


def v2_dtype_behavior_enabled() -> bool:
    """Whether Keras layers made now default to floatx and autocast their inputs."""
    return _v2_dtype_behavior


@tf_export("keras.layers.enable_v2_dtype_behavior")
def enable_v2_dtype_behavior() -> None:
    """Makes the Keras layers made from now on default to the floatx dtype and cast
    their floating inputs to their dtype, as TF 2's."""
    global _v2_dtype_behavior
    _v2_dtype_behavior = True


@tf_export("keras.layers.disable_v2_dtype_behavior")
def disable_v2_dtype_behavior() -> None:
    """Restores TF1's dtype behavior for the Keras layers made from now on: a layer
    without a dtype takes its first input's, and inputs are not cast."""
    global _v2_dtype_behavior
    _v2_dtype_behavior = False
