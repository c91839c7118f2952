"""Keras activation layers: ReLU, LeakyReLU, ELU, Softmax, ThresholdedReLU (parameterized
activations as layers; their parameters are stored as floatx values, as TF's) and PReLU
(a learned slope)."""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend, backend_ops
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.engine.input_spec import InputSpec
from tensorweave.keras.layers.layer_utils import layer_config, resolve_identifiers


class _Elementwise(Layer):
    """An activation layer: the output has the input's shape."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(input_shape)


@tf_export("keras.layers.ReLU")
class ReLU(_Elementwise):
    """`max(x, 0)`, with slope `negative_slope` below `threshold` and clipped at
    `max_value`.

    Args:
      max_value: the largest output, or None.
      negative_slope: the slope below the threshold (>= 0).
      threshold: where the linear part starts (>= 0).
      **kwargs: the base Layer's.

    Raises:
      ValueError: a negative argument.
    """

    def __init__(self, max_value=None, negative_slope: float = 0.0, threshold: float = 0.0,
                 **kwargs):
        super().__init__(**kwargs)
        for what, value in (("max_value", max_value), ("negative_slope", negative_slope),
                            ("threshold", threshold)):
            if (value is None and what != "max_value") or (value is not None and value < 0.0):
                raise ValueError("%s of a ReLU layer cannot be a negative value. Received: %s"
                                 % (what, value))
        self.max_value = None if max_value is None else backend.cast_to_floatx(max_value)
        self.negative_slope = backend.cast_to_floatx(negative_slope)
        self.threshold = backend.cast_to_floatx(threshold)

    def call(self, inputs):
        return backend_ops.relu(inputs, alpha=float(self.negative_slope),
                                max_value=None if self.max_value is None else
                                float(self.max_value), threshold=float(self.threshold))

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self),
                            ("max_value", "negative_slope", "threshold"))


@tf_export("keras.layers.LeakyReLU")
class LeakyReLU(_Elementwise):
    """`x` for x >= 0, `alpha * x` else.

    Args:
      alpha: the negative slope (default 0.3).
      **kwargs: the base Layer's.

    Raises:
      ValueError: alpha None.
    """

    def __init__(self, alpha: float = 0.3, **kwargs):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError("The alpha value of a Leaky ReLU layer cannot be None, Expecting "
                             "a float. Received: %s" % (alpha,))
        self.alpha = backend.cast_to_floatx(alpha)

    def call(self, inputs):
        return backend_ops.relu(inputs, alpha=float(self.alpha))

    def get_config(self) -> dict:
        config = Layer.get_config(self)
        config["alpha"] = float(self.alpha)
        return config


@tf_export("keras.layers.ELU")
class ELU(_Elementwise):
    """`x` for x > 0, `alpha * (exp(x) - 1)` else.

    Args:
      alpha: the scale of the negative part (default 1).
      **kwargs: the base Layer's.

    Raises:
      ValueError: alpha None.
    """

    def __init__(self, alpha: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError("Alpha of an ELU layer cannot be None, expecting a float. "
                             "Received: %s" % (alpha,))
        self.alpha = backend.cast_to_floatx(alpha)

    def call(self, inputs):
        return backend_ops.elu(inputs, float(self.alpha))

    def get_config(self) -> dict:
        config = Layer.get_config(self)
        config["alpha"] = float(self.alpha)
        return config


@tf_export("keras.layers.Softmax")
class Softmax(_Elementwise):
    """The softmax along `axis` (an int, or a list of axes).

    Args:
      axis: the axis (default -1).
      **kwargs: the base Layer's.

    A mask (broadcastable to the input) excludes its False entries: they get a large
    negative number added first, as TF's.
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            large_negative = tf.float16.min if inputs.dtype == tf.float16 else -1e9
            inputs += (1.0 - tf.cast(mask, inputs.dtype)) * large_negative
        if isinstance(self.axis, (tuple, list)):
            if len(self.axis) > 1:
                return tf.exp(inputs - tf.reduce_logsumexp(inputs, axis=self.axis,
                                                           keepdims=True))
            return backend_ops.softmax(inputs, axis=self.axis[0])
        return backend_ops.softmax(inputs, axis=self.axis)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("axis",))


@tf_export("keras.layers.ThresholdedReLU")
class ThresholdedReLU(_Elementwise):
    """`x` where x > theta, 0 elsewhere.

    Args:
      theta: the threshold (>= 0, default 1).
      **kwargs: the base Layer's.

    Raises:
      ValueError: theta None or negative.
    """

    def __init__(self, theta: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError("Theta of a Thresholded ReLU layer cannot be None, expecting a "
                             "float. Received: %s" % (theta,))
        if theta < 0:
            raise ValueError("The theta value of a Thresholded ReLU layer should be >=0. "
                             "Received: %s" % (theta,))
        self.theta = backend.cast_to_floatx(theta)

    def call(self, inputs):
        return inputs * tf.cast(tf.greater(inputs, float(self.theta)), inputs.dtype)

    def get_config(self) -> dict:
        config = Layer.get_config(self)
        config["theta"] = float(self.theta)
        return config


@tf_export("keras.layers.PReLU")
class PReLU(_Elementwise):
    """The parametric ReLU: `x` for x >= 0, `alpha * x` else, with a learned 'alpha' of
    the input's shape without the batch axis (size 1 along `shared_axes`).

    Args:
      alpha_initializer: default 'zeros'.
      alpha_regularizer, alpha_constraint: objects or their names.
      shared_axes: the axes (1-based, after the batch axis) that share one alpha.
      **kwargs: the base Layer's.
    """

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None,
                 alpha_constraint=None, shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        self.alpha_initializer = alpha_initializer
        self.alpha_regularizer = alpha_regularizer
        self.alpha_constraint = alpha_constraint
        resolve_identifiers(self)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        dims = tf.TensorShape(input_shape).as_list()
        param_shape = list(dims[1:])
        for axis in self.shared_axes or ():
            param_shape[axis - 1] = 1
        self.alpha = self.add_weight(shape=param_shape, name="alpha",
                                     initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        axes = {}
        if self.shared_axes:
            axes = {i: dims[i] for i in range(1, len(dims)) if i not in self.shared_axes}
        self.input_spec = InputSpec(ndim=len(dims), axes=axes)
        self.built = True

    def call(self, inputs):
        return tf.nn.relu(inputs) - self.alpha * tf.nn.relu(-inputs)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), (
            "alpha_initializer", "alpha_regularizer", "alpha_constraint", "shared_axes"))
