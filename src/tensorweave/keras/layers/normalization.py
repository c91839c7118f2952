"""`tf.keras.layers.BatchNormalization` and `LayerNormalization`.

BatchNormalization is TF's Keras one in v1 graph mode: the tf.layers batch
normalization with Keras' arguments and these differences:

* `training=None` uses `backend.learning_phase()` (inference unless fed or set), so by
  default the moving statistics normalize and both paths are built on the placeholder;
* the update ops are in `layer.updates` (and a model's `updates`) only, not in
  UPDATE_OPS: run them with the train op;
* the fused computation (whose moving-variance update uses the Bessel-corrected batch
  variance) is used for 4-D and 5-D float inputs normalized over axis 1 or the last
  axis unless `fused=False`; `fused=True` on other inputs is ignored, as TF's v1 Keras
  ignores it;
* a mask (from the layer before) weights the batch moments in training (non-fused);
  the fused computation ignores it with a warning, as TF's.
"""
from __future__ import annotations

import warnings
from typing import Optional

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.layer_utils import layer_config, resolve_identifiers
from tensorweave.layers import normalization as layers_normalization


@tf_export("keras.layers.BatchNormalization")
class BatchNormalization(layers_normalization.BatchNormalization, Layer):
    """Batch normalization: `gamma * (x - mean) / sqrt(variance + epsilon) + beta` over
    the axes other than `axis`, with the batch's moments in training (and moving-average
    updates in `updates`) and the moving averages in inference.

    Args:
      axis: the feature axis (an int or a list of ints).
      momentum: the moving averages' momentum.
      epsilon: added to the variance.
      center: add the 'beta' offset; scale: multiply by 'gamma'.
      beta_initializer, gamma_initializer, moving_mean_initializer,
      moving_variance_initializer: defaults 'zeros', 'ones', 'zeros', 'ones'.
      beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint: or names.
      renorm, virtual_batch_size, adjustment: not supported (NotImplementedError).
      fused: False to use the non-fused computation; None or True: fused when possible.
      trainable: whether gamma and beta are trainable (and updates are collected).
      **kwargs: the base Layer's.

    Raises:
      TypeError: an axis that is not an int or a list/tuple of ints.
      NotImplementedError: renorm, virtual_batch_size or adjustment.
    """

    def __init__(self, axis=-1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros",
                 moving_variance_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 renorm: bool = False, renorm_clipping=None, renorm_momentum: float = 0.99,
                 fused=None, trainable: bool = True, virtual_batch_size=None,
                 adjustment=None, name: Optional[str] = None, **kwargs):
        kwargs.pop("synchronized", None)
        super().__init__(
            axis=-1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
            beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
            moving_mean_initializer=moving_mean_initializer,
            moving_variance_initializer=moving_variance_initializer,
            beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
            beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, fused=False,
            trainable=trainable, name=name, **kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', "
                            "but received: %r" % (axis,))
        for what, value in (("renorm=True", renorm), ("virtual_batch_size",
                                                      virtual_batch_size is not None),
                            ("adjustment", adjustment is not None)):
            if value:
                raise NotImplementedError("tf.keras.layers.BatchNormalization: %s is not "
                                          "supported by tensorweave" % what)
        resolve_identifiers(self)
        self.fused = True if fused is None else fused
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape)
        rank = input_shape.ndims
        if rank is None:
            raise ValueError("Input has undefined rank.")
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError("Invalid value for `axis` argument. Expected 0 <= axis < "
                                 "inputs.rank (with inputs.rank=%d). Received: axis=%s"
                                 % (rank, self.axis))
        normalized = sorted(a % rank for a in axes)
        dims = input_shape.as_list()
        if any(dims[a] is None for a in normalized):
            raise ValueError("Input has undefined `axis` dimension. Received input with shape "
                             "%s and axis=%s" % (tuple(input_shape), tuple(normalized)))
        # the fused kernel where TF's v1 Keras uses it: one channel axis of a 4-D or 5-D
        # input of a float type the fused op takes
        fused = bool(self.fused) and rank in (4, 5) and len(normalized) == 1 and \
            normalized[0] in (1, rank - 1) and \
            self._dtype in (tf.float16, tf.bfloat16, tf.float32)
        self.fused = False  # tf.layers' build takes only 4-D inputs as fused
        super().build(input_shape)
        self.fused = fused

    def call(self, inputs, training=None, mask=None):
        if training is None:
            training = backend.learning_phase()
        if mask is not None and self.fused:
            warnings.warn("Masking is not supported with `fused=True`. You should either "
                          "turn off fusing (`fused=False`) or you should not pass a `mask` "
                          "argument when calling the layer. For the moment `mask` will be "
                          "ignored for the normalization.")
            mask = None
        self._call_mask = mask
        try:
            return super().call(inputs, training=training)
        finally:
            self._call_mask = None

    def _batch_moments(self, x, axes, keep_dims: bool):
        """With a mask ([batch, ...], the input's shape but the feature axis), the
        moments of the unmasked entries, as TF's."""
        mask = getattr(self, "_call_mask", None)
        if mask is None:
            return super()._batch_moments(x, axes, keep_dims)
        weights = tf.expand_dims(tf.cast(mask, x.dtype), axis=-1)
        return tf.nn.weighted_moments(x, axes, frequency_weights=weights,
                                      keepdims=keep_dims)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
            "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
            "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"))


def _validate_axis(axis, input_shape) -> list:
    """`axis` (an int or a list) as a list of non-negative axes of `input_shape`.

    Raises:
      ValueError: an unknown rank, an axis out of range, or a repeated axis.
    """
    input_shape = tf.TensorShape(input_shape)
    rank = input_shape.ndims
    if not rank:
        raise ValueError("Input has undefined rank. Received: input_shape=%s" % input_shape)
    axis = [axis] if isinstance(axis, int) else list(axis)
    axis = [a + rank if a < 0 else a for a in axis]
    for a in axis:
        if a < 0 or a >= rank:
            raise ValueError("Invalid value for `axis` argument. Expected 0 <= axis < "
                             "inputs.rank (with inputs.rank=%d). Received: axis=%s"
                             % (rank, tuple(axis)))
    if len(axis) != len(set(axis)):
        raise ValueError("Duplicate axis: %s" % (tuple(axis),))
    return axis


@tf_export("keras.layers.LayerNormalization")
class LayerNormalization(Layer):
    """Layer normalization (Ba et al. 2016): each example normalized over `axis`,
    `gamma * (x - mean) / sqrt(variance + epsilon) + beta` with the example's own
    moments ('gamma' and 'beta' have the shape of the normalized axes).

    Args:
      axis: the axis or axes to normalize over (default -1; a list of non-negative
        axes once built, as TF's).
      epsilon: added to the variance.
      center: add 'beta'; scale: multiply by 'gamma'.
      beta_initializer, gamma_initializer: defaults 'zeros', 'ones'.
      beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint: objects
        or names.
      **kwargs: the base Layer's.

    Raises:
      TypeError: an axis that is not an int or a list/tuple of ints.
      ValueError: (at build) an unknown rank, or an axis out of range or repeated.
    """

    def __init__(self, axis=-1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer="zeros", gamma_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', "
                            "but received: %r" % (axis,))
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        resolve_identifiers(self)
        self.supports_masking = True

    def build(self, input_shape):
        self.axis = _validate_axis(self.axis, input_shape)
        dims = tf.TensorShape(input_shape).as_list()
        param_shape = [dims[a] for a in self.axis]
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                name="gamma", shape=param_shape, initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer, constraint=self.gamma_constraint,
                trainable=True, experimental_autocast=False)
        if self.center:
            self.beta = self.add_weight(
                name="beta", shape=param_shape, initializer=self.beta_initializer,
                regularizer=self.beta_regularizer, constraint=self.beta_constraint,
                trainable=True, experimental_autocast=False)
        self.built = True

    def call(self, inputs):
        ndims = inputs.shape.ndims
        broadcast_shape = [1] * ndims
        for a in self.axis:
            broadcast_shape[a] = inputs.shape.as_list()[a]

        def broadcast(v):
            if v is not None and v.shape.ndims != ndims and self.axis != [ndims - 1]:
                return tf.reshape(v, broadcast_shape)
            return v

        input_dtype = inputs.dtype.base_dtype
        x = inputs
        if input_dtype in (tf.float16, tf.bfloat16) and self.dtype == "float32":
            x = tf.cast(x, tf.float32)
        mean, variance = tf.nn.moments(x, self.axis, keep_dims=True)
        outputs = tf.nn.batch_normalization(x, mean, variance, offset=broadcast(self.beta),
                                            scale=broadcast(self.gamma),
                                            variance_epsilon=self.epsilon)
        outputs = tf.cast(outputs, input_dtype)
        outputs.set_shape(inputs.shape)
        return outputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "axis", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
            "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"))
