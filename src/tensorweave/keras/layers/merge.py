"""Keras merge layers, called on a list of tensors: Add, Subtract, Multiply, Average,
Maximum, Minimum (elementwise, broadcasting; inputs of lower rank get axes of size 1
after the batch axis), Concatenate and Dot; with their functional forms (`add([a, b])`).
The output mask is the AND of the inputs' masks (Concatenate: joined along the axis;
Dot: none)."""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.api_export import tf_export
from tensorweave.keras import backend_math, backend_ops
from tensorweave.keras.engine.base_layer import Layer
from tensorweave.keras.layers.layer_utils import layer_config, shape_tuples


def _check_masks(inputs, mask):
    """`mask` (a list like `inputs`), or None when it holds no mask.

    Raises:
      ValueError: `mask` or `inputs` is not a list, or their lengths differ.
    """
    if mask is None:
        return None
    if not isinstance(mask, (tuple, list)):
        raise ValueError("`mask` should be a list. Received: mask=%s" % (mask,))
    if not isinstance(inputs, (tuple, list)):
        raise ValueError("`inputs` should be a list. Received: inputs=%s" % (inputs,))
    if len(mask) != len(inputs):
        raise ValueError("The lists `inputs` and `mask` should have the same length. "
                         "Received: inputs=%s of length %d, and mask=%s of length %d"
                         % (inputs, len(inputs), mask, len(mask)))
    if all(m is None for m in mask):
        return None
    return mask


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

    def compute_mask(self, inputs, mask=None):
        """The elementwise AND of the inputs' masks (None when none has one).

        Raises:
          ValueError: `mask` or `inputs` is not a list, or their lengths differ.
        """
        masks = _check_masks(inputs, mask)
        if masks is None:
            return None
        stacked = tf.concat([tf.expand_dims(m, axis=0) for m in masks if m is not None], 0)
        return tf.reduce_all(stacked, axis=0)

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

    def compute_mask(self, inputs, mask=None):
        """The masks concatenated along `axis` (all True for an input without one; a
        mask of lower rank than its input gets a last axis), ANDed over the last axis.

        Raises:
          ValueError: `mask` or `inputs` is not a list, or their lengths differ.
        """
        masks = _check_masks(inputs, mask)
        if masks is None:
            return None
        full = []
        for x, m in zip(inputs, masks):
            if m is None:
                full.append(tf.ones_like(x, dtype=tf.bool))
            elif m.shape.ndims < x.shape.ndims:
                full.append(tf.expand_dims(m, axis=-1))
            else:
                full.append(m)
        return tf.reduce_all(backend_ops.concatenate(full, axis=self.axis), axis=-1)

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


@tf_export("keras.layers.Dot")
class Dot(_Merge):
    """The dot product of two tensors along `axes`, sample by sample (`batch_dot`): for
    [batch, n] inputs a [batch, 1] output; for [batch, n, d] and [batch, m, d] with
    axes=2 a [batch, n, m] output. The output has no mask.

    Args:
      axes: an int, or a pair of ints (the axis of each input).
      normalize: L2-normalize the inputs along the axes first (the cosine similarity).
      **kwargs: the base Layer's.

    Raises:
      TypeError: `axes` is neither an int nor a list/tuple.
      ValueError: `axes` is not a pair of ints; (at build) the axes' sizes differ.
    """

    def __init__(self, axes, normalize: bool = False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError("Invalid type for argument `axes`: it should be a list or an "
                                "int. Received: axes=%s" % (axes,))
            if len(axes) != 2:
                raise ValueError("Invalid format for argument `axes`: it should contain two "
                                 "elements. Received: axes=%s" % (axes,))
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError("Invalid format for argument `axes`: list elements should "
                                 "be integers. Received: axes=%s" % (axes,))
        self.axes = axes
        self.normalize = normalize
        self.supports_masking = True
        self._reshape_required = False

    def _axes_for(self, rank1: int, rank2: int) -> list:
        if isinstance(self.axes, int):
            if self.axes < 0:
                return [self.axes % rank1, self.axes % rank2]
            return [self.axes] * 2
        return [a % rank if a < 0 else a for a, rank in zip(self.axes, (rank1, rank2))]

    def build(self, input_shape):
        shapes = shape_tuples(input_shape)
        if not isinstance(shapes, list) or len(shapes) != 2 or \
                not isinstance(shapes[0], tuple):
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs. Received: "
                             "input_shape=%s" % (shapes,))
        self.built = True
        shape1, shape2 = shapes
        if shape1 is None or shape2 is None:
            return
        axes = self.axes if not isinstance(self.axes, int) else \
            self._axes_for(len(shape1), len(shape2))
        if shape1[axes[0]] != shape2[axes[1]]:
            raise ValueError("Incompatible input shapes: axis values %s (at axis %s) != %s (at "
                             "axis %s). Full input shapes: %s, %s" % (
                                 shape1[axes[0]], axes[0], shape2[axes[1]], axes[1], shape1,
                                 shape2))

    def _merge_function(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on exactly 2 inputs. Received: "
                             "inputs=%s" % (inputs,))
        x1, x2 = inputs
        axes = self._axes_for(x1.shape.ndims, x2.shape.ndims)
        if self.normalize:
            x1 = tf.nn.l2_normalize(x1, axis=axes[0])
            x2 = tf.nn.l2_normalize(x2, axis=axes[1])
        return backend_math.batch_dot(x1, x2, axes)

    def compute_output_shape(self, input_shape):
        shapes = shape_tuples(input_shape)
        if not isinstance(shapes, list) or len(shapes) != 2:
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs. Received: "
                             "input_shape=%s" % (shapes,))
        shape1, shape2 = list(shapes[0]), list(shapes[1])
        axes = self.axes if not isinstance(self.axes, int) else \
            self._axes_for(len(shape1), len(shape2))
        shape1.pop(axes[0])
        shape2.pop(axes[1])
        shape2.pop(0)
        output_shape = shape1 + shape2
        if len(output_shape) == 1:
            output_shape += [1]
        return tf.TensorShape(output_shape)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self) -> dict:
        return layer_config(self, Layer.get_config(self), ("axes", "normalize"))


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


@tf_export("keras.layers.dot")
def dot(inputs, axes, normalize: bool = False, **kwargs):
    """Functional interface of `Dot`: `Dot(axes, normalize, **kwargs)(inputs)`."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
