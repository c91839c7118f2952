"""Keras core layers: Dense, Dropout, Flatten, Activation, Reshape, Lambda, Masking,
Identity.

Dense and Flatten reuse the tf.layers layers' `build`/`call` with Keras' arguments
(string identifiers, Keras defaults) and checks; the others are Keras' own.
"""
from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import activations, backend
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers.layer_utils import (layer_config, normalize_data_format,
                                                  resolve_identifiers)
from tensorweave.layers import base as layers_base
from tensorweave.layers import core as layers_core


@tf_export("keras.layers.Dense")
class Dense(layers_core.Dense, Layer):
    """A densely connected layer: `activation(inputs @ kernel + bias)` over the last
    axis (variables 'kernel' [input_dim, units] and 'bias' [units]).

    Args:
      units: the output size.
      activation: an activation function or its name (None: linear).
      use_bias: whether to add a bias.
      kernel_initializer: default 'glorot_uniform'; bias_initializer: default 'zeros'.
      kernel_regularizer, bias_regularizer, activity_regularizer: regularizers or names.
      kernel_constraint, bias_constraint: constraints or names.
      **kwargs: the base Layer's (name, dtype, trainable, input_shape, ...).

    Raises:
      ValueError: a negative `units`; at build, an undefined last input dimension.
      TypeError: at build, a non-floating dtype.
    """

    def __init__(self, units, activation=None, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(int(units) if not isinstance(units, int) else units,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         **kwargs)
        resolve_identifiers(self)
        if self.units < 0:
            raise ValueError("Received an invalid value for `units`, expected a positive "
                             "integer. Received: units=%s" % (units,))
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape):
        dtype = tf.as_dtype(self.dtype or backend.floatx())
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError("A Dense layer can only be built with a floating-point dtype. "
                            "Received: dtype=%s" % (dtype,))
        input_shape = tf.TensorShape(input_shape)
        last = input_shape.as_list()[-1] if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             "defined. Found None. Full input shape received: %s" % input_shape)
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})

    def call(self, inputs):
        if inputs.dtype.base_dtype != self._dtype:
            inputs = tf.cast(inputs, self._dtype)
        if isinstance(inputs, tf.SparseTensor) and inputs.shape.ndims in (2, None):
            return self._sparse_call(inputs)
        return super().call(inputs)

    def _sparse_call(self, inputs):
        """`inputs @ kernel` for a 2-D SparseTensor as TF's Keras computes it: a sparse
        embedding lookup of the kernel's rows by column index, weighted by the values
        and summed per row (rows with no entry get a zero entry first)."""
        inputs, _ = tf.sparse.fill_empty_rows(inputs, 0)
        ids = tf.SparseTensor(indices=inputs.indices, values=inputs.indices[:, 1],
                              dense_shape=inputs.dense_shape)
        outputs = tf.nn.embedding_lookup_sparse(self.kernel, ids, inputs, combiner="sum")
        if self.use_bias:
            outputs = tf.nn.bias_add(outputs, self.bias)
        return self._activate(outputs)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "units", "activation", "use_bias", "kernel_initializer", "bias_initializer",
            "kernel_regularizer", "bias_regularizer", "activity_regularizer",
            "kernel_constraint", "bias_constraint"))


@tf_export("keras.layers.Dropout")
class Dropout(Layer):
    """Dropout: in training each element is zeroed with probability `rate` and the others
    scaled by 1 / (1 - rate); in inference the identity. With `training` None the
    learning phase decides (`backend.learning_phase()`: inference unless fed or set).

    Args:
      rate: the drop probability, in [0, 1].
      noise_shape: the shape of the keep/drop mask (None entries: the input's).
      seed: the op seed.
      **kwargs: the base Layer's.

    Raises:
      ValueError: a rate outside [0, 1].
    """

    def __init__(self, rate, noise_shape=None, seed: Optional[int] = None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
            raise ValueError("Invalid value %s received for `rate`, expected a value between "
                             "0 and 1." % (rate,))
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed
        self.supports_masking = True

    def _get_noise_shape(self, inputs):
        if self.noise_shape is None:
            return None
        dynamic = tf.shape(inputs)
        return tf.convert_to_tensor([dynamic[i] if value is None else value
                                     for i, value in enumerate(self.noise_shape)])

    def call(self, inputs, training=None):
        if isinstance(self.rate, numbers.Real) and self.rate == 0:
            return tf.identity(inputs)
        if training is None:
            training = backend.learning_phase()

        def dropped():
            return tf.nn.dropout(inputs, noise_shape=self._get_noise_shape(inputs),
                                 seed=self.seed, rate=self.rate)
        return layers_base.smart_cond(training, dropped, lambda: tf.identity(inputs))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("rate", "noise_shape", "seed"))


@tf_export("keras.layers.Flatten")
class Flatten(layers_core.Flatten, Layer):
    """Flattens every dimension but the batch one (a vector becomes [batch, 1]).

    Args:
      data_format: 'channels_last' or 'channels_first' (moved last first, so the
        element order is channels_last's); None: `backend.image_data_format()`.
      **kwargs: the base Layer's.
    """

    def __init__(self, data_format: Optional[str] = None, **kwargs):
        super().__init__(data_format=normalize_data_format(data_format), **kwargs)
        self.input_spec = InputSpec(min_ndim=1)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("data_format",))


@tf_export("keras.layers.Activation")
class Activation(Layer):
    """Applies an activation function (or its name: 'relu', 'softmax', ...).

    Args:
      activation: the function or its name.
      **kwargs: the base Layer's.
    """

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("activation",))


@tf_export("keras.layers.Reshape")
class Reshape(Layer):
    """Reshapes each example to `target_shape` (the batch dimension is kept; one entry
    may be -1).

    Args:
      target_shape: the shape without the batch dimension.
      **kwargs: the base Layer's.

    Raises:
      ValueError: (at call) sizes that do not match, or more than one -1.
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def _fix_unknown_dimension(self, input_shape, output_shape) -> list:
        output_shape = list(output_shape)
        msg = ("total size of new array must be unchanged, input_shape = %s, output_shape = %s"
               % (input_shape, output_shape))
        known, unknown = 1, None
        for index, dim in enumerate(output_shape):
            if dim < 0:
                if unknown is not None:
                    raise ValueError("There must be at most one unknown dimension in "
                                     "output_shape. Received: output_shape=%s." % output_shape)
                unknown = index
            else:
                known *= dim
        original = int(np.prod(input_shape, dtype=int))
        if unknown is not None:
            if known == 0 or original % known != 0:
                raise ValueError(msg)
            output_shape[unknown] = original // known
        elif original != known:
            raise ValueError(msg)
        return output_shape

    def compute_output_shape(self, input_shape):
        input_shape = tf.TensorShape(input_shape).as_list()
        if None in input_shape[1:]:
            rest = [s if s != -1 else None for s in self.target_shape]
        else:
            rest = self._fix_unknown_dimension(input_shape[1:], self.target_shape)
        return tf.TensorShape([input_shape[0]] + list(rest))

    def call(self, inputs):
        result = tf.reshape(inputs, (tf.shape(inputs)[0],) + self.target_shape)
        result.set_shape(self.compute_output_shape(inputs.shape))
        return result

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("target_shape",))


@tf_export("keras.layers.Lambda")
class Lambda(Layer):
    """Wraps a function of tensors as a layer: `function(inputs, **arguments)` (also
    given `training` and `mask` when it takes them). Variables it creates are not
    tracked (use a Layer subclass for that).

    Args:
      function: the function.
      output_shape: the output shape without the batch dimension, or a function of the
        input shape (used by `compute_output_shape`).
      mask: the output mask, or a function `(inputs, mask) -> mask` (None: none).
      arguments: extra keyword arguments for `function`.
      **kwargs: the base Layer's.
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})
        self.mask = mask
        if mask is not None:
            self.supports_masking = True
        self._output_shape = output_shape
        try:
            import inspect
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            parameters = {}
        self._fn_expects_training_arg = "training" in parameters
        self._fn_expects_mask_arg = "mask" in parameters

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_expects_mask_arg:
            kwargs["mask"] = mask
        if self._fn_expects_training_arg:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self._output_shape):
            return tf.TensorShape(self._output_shape(input_shape))
        batch = tf.TensorShape(input_shape).as_list()[0] if not isinstance(
            input_shape, list) else None
        return tf.TensorShape([batch] + list(self._output_shape))

    def get_config(self) -> dict:
        """TF's Lambda config; the function is written by name (keras/saving.py).

        Raises:
          NotImplementedError: a `lambda`, nested function or other callable that
            cannot be written by name (TF writes its bytecode; tensorweave does not).
        """
        from tensorweave.keras import saving
        return saving.lambda_config(self, Layer.get_config(self))

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """A Lambda from its config (functions found by name).

        Raises:
          NotImplementedError: a function serialized as bytecode.
          ValueError: an unknown function name.
        """
        from tensorweave.keras import saving
        return saving.lambda_from_config(cls, config, custom_objects)


@tf_export("keras.layers.Masking")
class Masking(Layer):
    """Masks the timesteps whose features all equal `mask_value`: they are zeroed and
    the output's mask (for the layers after it) is False there.

    Args:
      mask_value: the padding value.
      **kwargs: the base Layer's.
    """

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.mask_value = mask_value
        self._compute_output_and_mask_jointly = True

    def compute_mask(self, inputs, mask=None):
        return tf.reduce_any(tf.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = tf.reduce_any(tf.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        outputs = inputs * tf.cast(keep, inputs.dtype)
        outputs._keras_mask = tf.squeeze(keep, axis=-1)
        return outputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("mask_value",))


@tf_export("keras.layers.Identity")
class Identity(Layer):
    """The identity: returns its input (each tensor of a nested structure through
    `tf.identity`).

    Args:
      **kwargs: the base Layer's.
    """

    def call(self, inputs):
        return tf.nest.map_structure(tf.identity, inputs)
