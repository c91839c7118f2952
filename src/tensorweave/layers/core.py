"""`tf.layers` core layers: Dense, Dropout, Flatten and their functions."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.layers.base import InputSpec, Layer, display_shape, smart_cond
from tensorweave.ops.array import array_ops
from tensorweave.ops.array.array_join_ops import stack
from tensorweave.ops.control_flow.structure import identity
from tensorweave.ops.math.einsum_ops import tensordot
from tensorweave.ops.math.math_ops import cast
from tensorweave.ops.math.matmul_ops import matmul
from tensorweave.ops.nn.nn_impl import dropout as nn_dropout
from tensorweave.ops.nn.nn_softmax import bias_add
from tensorweave.ops.state import init_ops


class KernelLayer(Layer):
    """What Dense and the convolution layers share: `activation(op(inputs, kernel) +
    bias)`, with the kernel's and the bias's arguments kept as given."""

    def __init__(self, activation=None, use_bias: bool = True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable: bool = True, name: Optional[str] = None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def _build_kernel(self, shape) -> None:
        """Creates `self.kernel`; without an initializer, get_variable's default (the
        variable scope's initializer, else glorot_uniform), as TF1's layers."""
        self.kernel = self.add_weight("kernel", shape=shape,
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, dtype=self._dtype,
                                      trainable=True)

    def _build_bias(self, shape) -> None:
        """Creates `self.bias` when `use_bias`, else sets it to None."""
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=shape,
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint, dtype=self._dtype,
                                        trainable=True)
        else:
            self.bias = None

    def _activate(self, outputs):
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


FUNCTION_DOC = ("Functional interface of `%s` (TF1 `tf.layers.%s`); `name` is the variable "
                "scope, `reuse` reuses its variables. Returns the output Tensor.")


def export_layer(obj, name: str, doc: str):
    """Names a layer class or function made by a factory `name`, documents it and exports
    it as `tf.layers.<name>`."""
    obj.__name__ = obj.__qualname__ = name
    obj.__doc__ = doc
    return tf_export("layers." + name)(obj)


@tf_export("layers.Dense")
class Dense(KernelLayer):
    """A densely connected layer (TF1 `tf.layers.Dense`):
    `activation(inputs @ kernel + bias)` over the last axis of `inputs`.

    Args:
      units: the output size.
      activation: a callable applied to the output, or None.
      use_bias: whether to add a bias.
      kernel_initializer: the kernel's initializer (default glorot_uniform).
      bias_initializer: the bias's initializer (default zeros).
      kernel_regularizer, bias_regularizer: fn(variable) -> loss, or None.
      activity_regularizer: fn(output) -> loss, or None.
      kernel_constraint, bias_constraint: fn(value) -> value, or None.
      trainable: whether the variables are trainable.
      name: the layer's name (its variable scope).
    """

    def __init__(self, units, activation=None, use_bias: bool = True,
                 kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable: bool = True,
                 name: Optional[str] = None, **kwargs):
        super().__init__(activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint,
                         bias_constraint=bias_constraint, trainable=trainable, name=name,
                         **kwargs)
        self.units = int(units)
        if self.units < 0:
            raise ValueError("Received an invalid value for `units`, expected a positive "
                             "integer. Received: units=%s" % (units,))
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True  # as TF's (Keras 2's) Dense

    def build(self, input_shape):
        dtype = self._dtype or _dt.float32
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError("A Dense layer can only be built with a floating-point dtype. "
                            "Received: dtype=%s" % dtype)
        input_shape = TensorShape(input_shape)
        last = input_shape.as_list()[-1] if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             "defined. Found None. Full input shape received: %s"
                             % display_shape(input_shape))
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self._build_kernel([last, self.units])
        self._build_bias([self.units])
        self.built = True

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank is not None and rank > 2:
            outputs = tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        else:
            if inputs.dtype.base_dtype != self._dtype:
                inputs = cast(inputs, self._dtype)
            outputs = matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = bias_add(outputs, self.bias)
        return self._activate(outputs)

    def get_config(self) -> dict:
        """TF's keys: the base's, `units`, then the kernel layer arguments."""
        return self._config_with(("units", "activation", "use_bias", "kernel_initializer",
                          "bias_initializer", "kernel_regularizer", "bias_regularizer",
                          "activity_regularizer", "kernel_constraint", "bias_constraint"))

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape).with_rank_at_least(2)
        return TensorShape(input_shape.as_list()[:-1] + [self.units])


@tf_export("layers.dense")
def dense(inputs, units, activation=None, use_bias: bool = True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable: bool = True, name: Optional[str] = None,
          reuse=None):
    """Functional interface of `Dense` (TF1 `tf.layers.dense`).

    Args:
      inputs: a Tensor of rank >= 2 with a known last dimension.
      units, activation, use_bias, kernel_initializer, bias_initializer,
      kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
      bias_constraint, trainable: as `Dense`.
      name: the variable scope (unique `dense`, `dense_1`, ... when None).
      reuse: reuse the variables of the scope `name`.

    Returns:
      The output Tensor, `inputs`' shape with the last dimension `units`.

    Raises:
      ValueError: an unknown last dimension; creating existing variables without reuse.
    """
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                  trainable=trainable, name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


@tf_export("layers.Dropout")
class Dropout(Layer):
    """Dropout (TF1 `tf.layers.Dropout`): in training, each element is zeroed with
    probability `rate` and the others scaled by 1 / (1 - rate); in inference, identity.

    Args:
      rate: the drop probability, in [0, 1).
      noise_shape: the shape of the keep/drop mask (broadcast against the input).
      seed: the op seed.
      name: the layer's name.
    """

    def __init__(self, rate: float = 0.5, noise_shape=None, seed=None,
                 name: Optional[str] = None, **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
            raise ValueError("Invalid value %s received for `rate`, expected a value between "
                             "0 and 1." % (rate,))
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed
        self.supports_masking = True

    def get_config(self) -> dict:
        return self._config_with(("rate", "noise_shape", "seed"))

    def call(self, inputs, training=False):
        """`training`: a Python bool or a scalar bool tensor."""
        if isinstance(self.rate, (int, float)) and self.rate == 0:
            return identity(inputs)  # as TF's, whatever `training`

        def dropped():
            return nn_dropout(inputs, noise_shape=self.noise_shape, seed=self.seed,
                              rate=self.rate)
        return smart_cond(training, dropped, lambda: identity(inputs))

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)


@tf_export("layers.dropout")
def dropout(inputs, rate: float = 0.5, noise_shape=None, seed=None, training=False,
            name: Optional[str] = None):
    """Functional interface of `Dropout` (TF1 `tf.layers.dropout`).

    Args:
      inputs: a floating-point Tensor.
      rate: the drop probability.
      noise_shape: the mask's shape, or None.
      seed: the op seed.
      training: a Python bool or a scalar bool tensor; dropout applies only when true.
      name: the layer's name.

    Returns:
      A Tensor of the shape and type of `inputs`.
    """
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


@tf_export("layers.Flatten")
class Flatten(Layer):
    """Flattens every dimension but the first (TF1 `tf.layers.Flatten`).

    Args:
      data_format: "channels_last" (default) or "channels_first" (moved to last first,
        so the element order is that of channels_last).
      name: the layer's name.
    """

    def __init__(self, data_format: str = "channels_last", **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        ndims = inputs.shape.ndims
        if ndims is None:
            # unknown rank: [batch, everything else], both unknown statically (TF1)
            outputs = array_ops.reshape(inputs, stack([array_ops.shape(inputs)[0], -1]))
            outputs.set_shape([None, None])
            return outputs
        if self.data_format == "channels_first" and ndims > 1:
            inputs = array_ops.transpose(inputs, [0] + list(range(2, ndims)) + [1])
        if ndims == 1:
            return array_ops.expand_dims(inputs, 1)
        batch = inputs.shape.as_list()[0] if ndims else None
        first = batch if batch is not None else array_ops.shape(inputs)[0]
        if batch is None:
            outputs = array_ops.reshape(inputs, stack([first, -1]))
        else:
            outputs = array_ops.reshape(inputs, [first, -1])
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return outputs

    def get_config(self) -> dict:
        return self._config_with(("data_format",))

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.ndims is None:
            return TensorShape([None, None])
        dims = input_shape.as_list()
        if len(dims) == 1:
            return TensorShape([dims[0], 1])
        rest = dims[1:]
        size = None if None in rest else int(np.prod(rest))
        return TensorShape([dims[0], size])


@tf_export("layers.flatten")
def flatten(inputs, name: Optional[str] = None, data_format: str = "channels_last"):
    """Functional interface of `Flatten` (TF1 `tf.layers.flatten`).

    Args:
      inputs: a Tensor of rank >= 1.
      name: the layer's name.
      data_format: "channels_last" or "channels_first".

    Returns:
      A 2-D Tensor [batch, product of the other dimensions].
    """
    return Flatten(name=name, data_format=data_format).apply(inputs)


def normalize_data_format(value) -> str:
    """The data_format argument as "channels_first" or "channels_last" (None: the latter);
    ValueError for anything else."""
    fmt = "channels_last" if value is None else str(value).lower()
    if fmt not in ("channels_first", "channels_last"):
        raise ValueError('The `data_format` argument must be one of "channels_first", '
                         '"channels_last". Received: %s' % value)
    return fmt
