"""Keras 2.15's `Normalization` preprocessing layer (also
`tf.keras.layers.experimental.preprocessing.Normalization`): `(x - mean) / sqrt(variance)`
per feature, or its inverse.

The mean and variance come from the constructor, else from the non-trainable weights
'mean', 'variance' and 'count' (zeros, ones and 0 at build; `set_weights` or a saved model
sets them). `adapt` is TF 2 only: in TF1 graph mode Keras raises RuntimeError.
"""
from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.layers.layer_utils import layer_config
from tensorweave.keras.layers.preprocessing_categorical import PreprocessingLayer


@tf_export("keras.layers.Normalization",
           "keras.layers.experimental.preprocessing.Normalization")
class Normalization(PreprocessingLayer):
    """Standardizes its inputs: `(x - mean) / max(sqrt(variance), epsilon)`, the mean and
    variance having one value per index of the kept `axis` (broadcast over the others);
    with `invert`, `mean + x * max(sqrt(variance), epsilon)`.

    Args:
      axis: the axis or axes kept (an int, a tuple, or None: one value for all).
      mean, variance: the values (scalars or arrays broadcastable to the kept axes),
        both or neither; neither: the layer's weights.
      invert: apply the inverse transformation.
      **kwargs: the base Layer's.

    Raises:
      ValueError: only one of mean and variance; at build, an axis out of range or a
        kept axis of unknown size.
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert: bool = False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        self.axis = axis
        if (mean is None) != (variance is None):
            raise ValueError("When setting values directly, both `mean` and `variance` must "
                             "be set. Got mean: %s and variance: %s" % (mean, variance))
        self.input_mean = mean.tolist() if isinstance(mean, np.ndarray) else mean
        self.input_variance = (variance.tolist() if isinstance(variance, np.ndarray)
                               else variance)
        self.invert = invert

    def build(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        ndim = len(dims)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). Found "
                             "ndim: `%d`, axis: %s" % (ndim, self.axis))
        keep = sorted(a % ndim for a in self.axis)
        for a in keep:
            if dims[a] is None:
                raise ValueError("All `axis` values to be kept must have known shape. Got "
                                 "axis: %s, input shape: %s, with unknown axis at index: %d"
                                 % (self.axis, dims, a))
        stats_shape = tuple(dims[a] for a in keep)
        broadcast_shape = [dims[a] if a in keep else 1 for a in range(ndim)]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=stats_shape,
                                              dtype=self.compute_dtype, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=stats_shape,
                                                  dtype=self.compute_dtype,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64",
                                         initializer="zeros", trainable=False)
            mean, variance = self.adapt_mean, self.adapt_variance
        else:
            ones = np.ones(stats_shape)
            mean = np.asarray(self.input_mean) * ones
            variance = np.asarray(self.input_variance) * ones
        self.mean = tf.cast(tf.reshape(mean, broadcast_shape), self.compute_dtype)
        self.variance = tf.cast(tf.reshape(variance, broadcast_shape), self.compute_dtype)
        self.built = True

    def call(self, inputs):
        inputs = tf.cast(tf.convert_to_tensor(inputs), self.compute_dtype)
        scale = tf.maximum(tf.sqrt(self.variance), backend.epsilon())
        if self.invert:
            return self.mean + inputs * scale
        return (inputs - self.mean) / scale

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        config = layer_config(self, PreprocessingLayer.get_config(self), ("axis", "invert"))
        config["mean"] = self.input_mean
        config["variance"] = self.input_variance
        return config
