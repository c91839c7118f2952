"""Keras merge layers, called on a list of tensors: Add, Subtract, Multiply, Average,
Maximum, Minimum (elementwise, broadcasting; inputs of lower rank get axes of size 1
after the batch axis) and Concatenate; with their functional forms (`add([a, b])`)."""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend_ops
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.layer_utils import layer_config, shape_tuples


class _Merge(Layer):
    """An elementwise merge of a list of tensors; each subclass's `_merge_function`
    combines them."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def _compute_elemwise_op_output_shape(self, shape1, shape2):
        if shape1 is None or shape2 is None:
            return None
        if len(shape1) < len(shape2):
            return self._compute_elemwise_op_output_shape(shape2, shape1)
        if not shape2:
            return shape1
        output_shape = list(shape1[:-len(shape2)])
        for i, j in zip(shape1[-len(shape2):], shape2):
            if i is None or j is None:
                output_shape.append(None)
            elif i == 1:
                output_shape.append(j)
            elif j == 1:
                output_shape.append(i)
            else:
                if i != j:
                    raise ValueError("Inputs have incompatible shapes. Received shapes %s and "
                                     "%s" % (shape1, shape2))
                output_shape.append(i)
        return tuple(output_shape)

    def build(self, input_shape):
        input_shape = shape_tuples(input_shape)
        if not isinstance(input_shape, list) or not isinstance(input_shape[0], tuple):
            raise ValueError("A merge layer should be called on a list of inputs. Received: "
                             "input_shape=%s (not a list of shapes)" % (input_shape,))
        batch_sizes = {s[0] for s in input_shape if s} - {None}
        if len(batch_sizes) > 1:
            raise ValueError("Cannot merge tensors with different batch sizes. Got tensors "
                             "with shapes %s" % input_shape)
        output_shape = None if input_shape[0] is None else input_shape[0][1:]
        for shape in input_shape[1:]:
            output_shape = self._compute_elemwise_op_output_shape(
                output_shape, None if shape is None else shape[1:])
        self._reshape_required = not (None not in input_shape and
                                      len(set(map(len, input_shape))) == 1)
        self.built = True

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("A merge layer should be called on a list of inputs. Received: "
                             "inputs=%s (not a list of tensors)" % (inputs,))
        if self._reshape_required:
            ranks = [x.shape.ndims for x in inputs]
            if None in ranks:
                raise NotImplementedError("Merging tensors of unknown and different ranks is "
                                          "not supported by tensorweave's tf.keras")
            top = max(ranks)
            reshaped = []
            for x, rank in zip(inputs, ranks):
                for _ in range(top - rank):
                    x = tf.expand_dims(x, axis=1)
                reshaped.append(x)
            return self._merge_function(reshaped)
        return self._merge_function(inputs)

    def compute_output_shape(self, input_shape):
        shapes = shape_tuples(input_shape)
        output_shape = None if shapes[0] is None else shapes[0][1:]
        for shape in shapes[1:]:
            output_shape = self._compute_elemwise_op_output_shape(
                output_shape, None if shape is None else shape[1:])
        batch_sizes = {s[0] for s in shapes if s is not None} - {None}
        batch = list(batch_sizes)[0] if len(batch_sizes) == 1 else None
        return None if output_shape is None else tf.TensorShape((batch,) + output_shape)


def _merge_class(name: str, merge, doc: str):
    class Merge(_Merge):
        def _merge_function(self, inputs):
            return merge(inputs)

    Merge.__name__ = Merge.__qualname__ = name
    Merge.__doc__ = doc + "\n\n    Args:\n      **kwargs: the base Layer's.\n    "
    return tf_export("keras.layers." + name)(Merge)


def _sum(inputs):
    output = inputs[0]
    for x in inputs[1:]:
        output += x
    return output


def _product(inputs):
    output = inputs[0]
    for x in inputs[1:]:
        output = output * x
    return output


def _fold(fn):
    def merge(inputs):
        output = inputs[0]
        for x in inputs[1:]:
            output = fn(output, x)
        return output
    return merge


Add = _merge_class("Add", _sum, "The elementwise sum of a list of tensors.")
Multiply = _merge_class("Multiply", _product, "The elementwise product of a list of tensors.")
Average = _merge_class("Average", lambda inputs: _sum(inputs) / len(inputs),
                       "The elementwise mean of a list of tensors.")
Maximum = _merge_class("Maximum", _fold(tf.maximum),
                       "The elementwise maximum of a list of tensors.")
Minimum = _merge_class("Minimum", _fold(tf.minimum),
                       "The elementwise minimum of a list of tensors.")


@tf_export("keras.layers.Subtract")
class Subtract(_Merge):
    """`inputs[0] - inputs[1]` of a list of exactly two tensors.

    Args:
      **kwargs: the base Layer's.
    """

    def build(self, input_shape):
        super().build(input_shape)
        if len(input_shape) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             "Received: input_shape=%s" % (shape_tuples(input_shape),))

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             "Received: inputs=%s" % (inputs,))
        return inputs[0] - inputs[1]


@tf_export("keras.layers.Concatenate")
class Concatenate(_Merge):
    """Concatenates a list of tensors along `axis` (all other dimensions must match).

    Args:
      axis: the concatenation axis (default -1).
      **kwargs: the base Layer's.
    """

    def __init__(self, axis: int = -1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True
        self._reshape_required = False

    def build(self, input_shape):
        input_shape = shape_tuples(input_shape)
        if not isinstance(input_shape, list) or len(input_shape) < 1 or \
                not isinstance(input_shape[0], tuple):
            raise ValueError("A `Concatenate` layer should be called on a list of at least 1 "
                             "input. Received: input_shape=%s" % (input_shape,))
        self.built = True
        if all(shape is None for shape in input_shape):
            return
        reduced = [list(shape) for shape in input_shape]
        shape_set = set()
        for shape in reduced:
            del shape[self.axis]
            shape_set.add(tuple(shape))
        if len(shape_set) == 1:
            return
        message = ("A `Concatenate` layer requires inputs with matching shapes except for the "
                   "concatenation axis. Received: input_shape=%s" % (input_shape,))
        ranks = set(len(shape) for shape in shape_set)
        if len(ranks) != 1:
            raise ValueError(message)
        (rank,) = ranks
        for axis in range(rank):
            if len(set(s[axis] for s in shape_set if s[axis] is not None)) > 1:
                raise ValueError(message)

    def _merge_function(self, inputs):
        return backend_ops.concatenate(inputs, axis=self.axis)

    def compute_output_shape(self, input_shape):
        shapes = shape_tuples(input_shape)
        output = list(shapes[0])
        for shape in shapes[1:]:
            if output[self.axis] is None or shape[self.axis] is None:
                output[self.axis] = None
            else:
                output[self.axis] += shape[self.axis]
        return tf.TensorShape(output)

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("axis",))


def _function(cls, name: str):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)
    merge.__name__ = merge.__qualname__ = name
    merge.__doc__ = ("Functional interface of `%s`: `%s(**kwargs)(inputs)`." % (cls.__name__,
                                                                               cls.__name__))
    return tf_export("keras.layers." + name)(merge)


add = _function(Add, "add")
subtract = _function(Subtract, "subtract")
multiply = _function(Multiply, "multiply")
average = _function(Average, "average")
maximum = _function(Maximum, "maximum")
minimum = _function(Minimum, "minimum")


@tf_export("keras.layers.concatenate")
def concatenate(inputs, axis: int = -1, **kwargs):
    """Functional interface of `Concatenate`: `Concatenate(axis, **kwargs)(inputs)`."""
    return Concatenate(axis=axis, **kwargs)(inputs)
