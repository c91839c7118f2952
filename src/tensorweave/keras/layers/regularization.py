"""Keras regularization layers beyond Dropout (core.py): GaussianNoise, GaussianDropout,
AlphaDropout (active in training only, the identity in inference), SpatialDropout1D/2D/3D
(dropping whole feature maps) and ActivityRegularization (an L1/L2 activity loss). All pass masks
through."""
from __future__ import annotations

from typing import Optional

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend_nn, backend_ops, regularizers
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers.core import Dropout
from tensorweave.keras.layers.layer_utils import layer_config, normalize_data_format


@tf_export("keras.layers.GaussianNoise")
class GaussianNoise(Layer):
    """Adds zero-mean Gaussian noise of standard deviation `stddev` in training.

    Args:
      stddev: the noise's standard deviation.
      seed: the op seed.
      **kwargs: the base Layer's.
    """

    def __init__(self, stddev, seed: Optional[int] = None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.stddev = stddev
        self.seed = seed

    def call(self, inputs, training=None):
        def noised():
            return inputs + tf.random_normal(tf.shape(inputs), mean=0.0, stddev=self.stddev,
                                             dtype=inputs.dtype, seed=self.seed)
        return backend_ops.in_train_phase(noised, inputs, training=training)

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("stddev", "seed"))


@tf_export("keras.layers.GaussianDropout")
class GaussianDropout(Layer):
    """Multiplies by Gaussian noise of mean 1 and standard deviation
    `sqrt(rate / (1 - rate))` in training (for 0 < rate < 1; else the identity).

    Args:
      rate: the drop probability the noise stands for.
      seed: the op seed.
      **kwargs: the base Layer's.
    """

    def __init__(self, rate, seed: Optional[int] = None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.rate = rate
        self.seed = seed

    def call(self, inputs, training=None):
        if not 0 < self.rate < 1:
            return inputs

        def noised():
            stddev = np.sqrt(self.rate / (1.0 - self.rate))
            return inputs * tf.random_normal(tf.shape(inputs), mean=1.0, stddev=stddev,
                                             dtype=inputs.dtype, seed=self.seed)
        return backend_ops.in_train_phase(noised, inputs, training=training)

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("rate", "seed"))


# SELU's constants: -alpha * scale is the value SELU tends to at -infinity
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@tf_export("keras.layers.AlphaDropout")
class AlphaDropout(Layer):
    """Dropout for SELU networks: in training (for 0 < rate < 1) each element is set,
    with probability `rate`, to SELU's negative saturation value alpha' =
    -alpha * scale, then the whole is mapped by `a * x + b`, with a and b chosen to keep
    a zero mean and unit variance; in inference the identity.

    Args:
      rate: the drop probability.
      noise_shape: the shape of the keep/drop mask (None: the input's).
      seed: the op seed (None: a random one, as Keras').
      **kwargs: the base Layer's.
    """

    def __init__(self, rate, noise_shape=None, seed: Optional[int] = None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=None):
        if not 0 < self.rate < 1:
            return inputs
        rate = self.rate

        def dropped():
            shape = tf.shape(inputs) if self.noise_shape is None else self.noise_shape
            alpha_p = -_SELU_ALPHA * _SELU_SCALE
            kept = tf.cast(backend_nn.random_uniform(shape, seed=self.seed) >= rate,
                           inputs.dtype)
            a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
            b = -a * alpha_p * rate
            return a * (inputs * kept + alpha_p * (1 - kept)) + b
        return backend_ops.in_train_phase(dropped, inputs, training=training)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("rate", "seed"))


class _SpatialDropout(Dropout):
    """Dropout of whole feature maps: the keep/drop mask has size 1 on the spatial axes
    of a [batch, *spatial, channels] (or channels_first) input."""

    _rank = 1

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.data_format = normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _get_noise_shape(self, inputs):
        shape = tf.shape(inputs)
        ones = [1] * self._rank
        if self.data_format == "channels_first":
            return tf.stack([shape[0], shape[1]] + ones)
        return tf.stack([shape[0]] + ones + [shape[self._rank + 1]])


@tf_export("keras.layers.SpatialDropout1D")
class SpatialDropout1D(_SpatialDropout):
    """Dropout of whole channels of a [batch, steps, channels] input.

    Args:
      rate: the drop probability.
      **kwargs: the base Layer's (and Dropout's noise_shape, seed).
    """

    def __init__(self, rate, **kwargs):
        super().__init__(rate, data_format="channels_last", **kwargs)


@tf_export("keras.layers.SpatialDropout2D")
class SpatialDropout2D(_SpatialDropout):
    """Dropout of whole 2-D feature maps of a 4-D input.

    Args:
      rate: the drop probability.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's (and Dropout's noise_shape, seed).
    """

    _rank = 2


@tf_export("keras.layers.SpatialDropout3D")
class SpatialDropout3D(_SpatialDropout):
    """Dropout of whole 3-D feature maps of a 5-D input.

    Args:
      rate: the drop probability.
      data_format: 'channels_last' or 'channels_first' (None: the backend default).
      **kwargs: the base Layer's (and Dropout's noise_shape, seed).
    """

    _rank = 3


@tf_export("keras.layers.ActivityRegularization")
class ActivityRegularization(Layer):
    """The identity, adding the L1/L2 penalty of its output (divided by the batch size)
    to the layer's losses.

    Args:
      l1: the L1 factor.
      l2: the L2 factor.
      **kwargs: the base Layer's.
    """

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True
        self.l1 = l1
        self.l2 = l2

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("l1", "l2"))
