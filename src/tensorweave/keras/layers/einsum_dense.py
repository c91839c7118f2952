"""`tf.keras.layers.EinsumDense` (also `tf.keras.layers.experimental.EinsumDense`), as TF
2.15's Keras has it: a dense layer whose product is an einsum, `activation(einsum(
equation, inputs, kernel) + bias)`, the kernel's and bias' shapes read off the equation
and `output_shape`. MultiHeadAttention (attention.py) projects with it.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.layer_utils import layer_config, resolve_identifiers

# the three forms of equation Keras takes ("..." written as "0"), and whether the
# ellipsis is on the left
_FORMS = ((r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
          (r"0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
          (r"([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False))


def analyze_einsum_string(equation: str, bias_axes: Optional[str], input_shape,
                          output_shape) -> Tuple[list, Optional[list], list]:
    """(kernel shape, bias shape or None, full output shape) of an EinsumDense with
    `equation` on inputs of `input_shape`; `output_shape` is the output's shape without
    the batch axis and the ellipsis' axes.

    Raises:
      ValueError: an equation not of the forms 'ab,bc->ac', '...ab,bc->...ac',
        'ab...,bc->ac...'; output and input sizes that differ on a shared axis; an axis
        of the output or kernel found nowhere else; a bias axis not in the output.
    """
    dotted = re.sub(r"\.\.\.", "0", equation)
    for pattern, left_elided in _FORMS:
        match = re.match(pattern, dotted)
        if match:
            return _analyze_split(*match.groups(), bias_axes,
                                  tf.TensorShape(input_shape).as_list(), output_shape,
                                  left_elided)
    raise ValueError("Invalid einsum equation '%s'. Equations must be in the form [X],[Y]->"
                     "[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]...." % equation)


def _analyze_split(input_spec: str, weight_spec: str, output_spec: str, bias_axes,
                   input_shape: List, output_shape, left_elided: bool):
    elided = len(input_shape) - len(input_spec)
    output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    output_shape.insert(0, input_shape[0])
    if elided > 0 and left_elided:
        for i in range(1, elided):
            # each at position 1, so that they come reversed: Keras' order
            output_shape.insert(1, input_shape[i])
    elif elided > 0:
        output_shape.extend(input_shape[len(input_shape) - elided:])
    if left_elided:
        input_axes = {dim: i + elided - len(input_shape) for i, dim in enumerate(input_spec)}
        output_axes = {dim: i + elided for i, dim in enumerate(output_spec)}
    else:
        input_axes = {dim: i for i, dim in enumerate(input_spec)}
        output_axes = {dim: i for i, dim in enumerate(output_spec)}
    for dim in input_spec:
        size = input_shape[input_axes[dim]]
        if dim in output_axes:
            out = output_shape[output_axes[dim]]
            if out is not None and out != size:
                raise ValueError("Input shape and output shape do not match at shared "
                                 "dimension '%s'. Input shape is %s, and output shape is %s."
                                 % (dim, size, out))
    for dim in output_spec:
        if dim not in input_spec and dim not in weight_spec:
            raise ValueError("Dimension '%s' was specified in the output '%s' but has no "
                             "corresponding dim in the input spec '%s' or weight spec '%s'"
                             % (dim, output_spec, input_spec, output_spec))
    weight_shape = []
    for dim in weight_spec:
        if dim in input_axes:
            weight_shape.append(input_shape[input_axes[dim]])
        elif dim in output_axes:
            weight_shape.append(output_shape[output_axes[dim]])
        else:
            raise ValueError("Weight dimension '%s' did not have a match in either the input "
                             "spec '%s' or the output spec '%s'. For this layer, the weight "
                             "must be fully specified." % (dim, input_spec, output_spec))
    if bias_axes is None:
        return weight_shape, None, output_shape
    offset = elided if left_elided else 0
    sizes = {char: output_shape[i + offset] for i, char in enumerate(output_spec)}
    for char in bias_axes:
        if char not in output_spec:
            raise ValueError("Bias dimension '%s' was requested, but is not part of the "
                             "output spec '%s'" % (char, output_spec))
    # the bias spans the output axes from the first bias axis on (1 where not a bias axis)
    first = min(output_spec.find(char) for char in bias_axes)
    bias_shape = [sizes[char] if char in bias_axes else 1 for char in output_spec[first:]]
    if not left_elided:
        bias_shape.extend([1] * elided)
    return weight_shape, bias_shape, output_shape


@tf_export("keras.layers.EinsumDense", "keras.layers.experimental.EinsumDense")
class EinsumDense(Layer):
    """A dense layer computed by `tf.einsum`: `activation(einsum(equation, inputs, kernel)
    + bias)`.

    Args:
      equation: 'ab,bc->ac', '...ab,bc->...ac' or 'ab...,bc->ac...' (any letters): the
        inputs', kernel's and output's axes.
      output_shape: the output's shape without the batch axis and the ellipsis' axes
        (an int for one axis; None for an axis known from the input).
      activation: an activation or its name (None: linear).
      bias_axes: the output axes the bias spans (a string of output letters), or None
        for no bias.
      kernel_initializer ('glorot_uniform'), bias_initializer ('zeros'),
        kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint:
        objects or their names.
      activity_regularizer: accepted and, as in TF 2.15's Keras, not used.
      **kwargs: the base Layer's.

    Weights: 'kernel' (its shape from the equation), then 'bias' with `bias_axes`.

    Raises:
      ValueError: at build, an equation of another form or one that does not fit the
        input shape and `output_shape` (see `analyze_einsum_string`).
    """

    def __init__(self, equation: str, output_shape, activation=None,
                 bias_axes: Optional[str] = None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        del activity_regularizer  # TF 2.15's EinsumDense drops it too
        super().__init__(**kwargs)
        self.equation = equation
        self.partial_output_shape = [output_shape] if isinstance(output_shape, int) else \
            list(output_shape)
        self.bias_axes = bias_axes
        self.activation = activation
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        resolve_identifiers(self)

    def build(self, input_shape):
        kernel_shape, bias_shape, self.full_output_shape = analyze_einsum_string(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape)
        self.kernel = self.add_weight(
            "kernel", shape=kernel_shape, initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
            dtype=self.dtype, trainable=True)
        self.bias = None
        if bias_shape is not None:
            self.bias = self.add_weight(
                "bias", shape=bias_shape, initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                dtype=self.dtype, trainable=True)
        self.built = True

    def call(self, inputs):
        outputs = tf.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            outputs += self.bias
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        return tf.TensorShape(self.full_output_shape)

    def get_config(self) -> dict:
        config = Layer.get_config(self)
        config.update(output_shape=self.partial_output_shape, equation=self.equation)
        config = layer_config(self, config, ("activation",))
        config["bias_axes"] = self.bias_axes
        return layer_config(self, config, (
            "kernel_initializer", "bias_initializer", "kernel_regularizer",
            "bias_regularizer", "activity_regularizer", "kernel_constraint",
            "bias_constraint"))
