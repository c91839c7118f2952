"""The nesting of per-component specs that tf.data takes alongside elements: shapes
(output_shapes, padded_shapes) flattened as the elements nest, with TF's
map_structure_up_to errors, and padded_batch's padded shapes and padding values.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework import tensor_util
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape


def flatten_shapes(structure, shapes) -> list:
    """`shapes` (nested like `structure`, a TensorShape or list at each leaf) flattened
    to one shape per component.

    Raises:
      TypeError: a leaf (a shape) where `structure` nests.
      ValueError: a tuple of another length, or a dict of other keys.
    """
    if not nest.is_sequence(structure):
        return [shapes]
    _check_nests_like(structure, shapes)
    if isinstance(structure, dict):
        return [s for k in sorted(structure) for s in flatten_shapes(structure[k],
                                                                       shapes[k])]
    return [s for sub, sh in zip(structure, shapes) for s in flatten_shapes(sub, sh)]


def _check_nests_like(structure, given) -> None:
    """TF's map_structure_up_to checks: `given` nests as `structure` at this level (a
    list is a leaf: a shape)."""
    if isinstance(structure, dict):
        if not isinstance(given, dict):
            raise TypeError("If shallow structure is a sequence, input must also be a "
                            "sequence. Input has type: '%s'." % type(given).__name__)
        if sorted(given) != sorted(structure):
            raise ValueError("The two structures don't have the same keys. Input "
                             "structure has keys %s, while shallow structure has keys %s."
                             % (sorted(given), sorted(structure)))
        return
    # a list is a shape, so a tuple of shapes for a tuple (and a list for a list)
    if not isinstance(given, list if isinstance(structure, list) else tuple):
        raise TypeError("If shallow structure is a sequence, input must also be a "
                        "sequence. Input has type: '%s'." % type(given).__name__)
    if len(given) != len(structure):
        raise ValueError("The two structures don't have the same sequence length. Input "
                         "structure has length %d, while shallow structure has length %d."
                         % (len(given), len(structure)))


def padded_shape(given):
    """A padded_batch shape (a TensorShape, a list of dimensions with None or -1 for
    the batch's longest, or an int64 vector tensor) as (its static TensorShape, the
    int64 vector the kernel reads, -1 for the longest).

    Raises:
      TypeError: a tensor that is not int64.
      ValueError: a tensor that is not a vector.
    """
    if not isinstance(given, _graph.Tensor):
        try:
            shape = TensorShape(given)
            return shape, convert_to_tensor([-1 if d is None else d
                                             for d in shape.as_list()], dtype=_dt.int64)
        except (TypeError, ValueError):
            pass  # -1 dimensions, say: read as a tensor, as TF's
    tensor = convert_to_tensor(given, preferred_dtype=_dt.int64)
    if tensor.shape.ndims not in (None, 1):
        raise ValueError("Padded shape %s must be a `tf.int64` vector tensor, but its "
                         "shape was %s." % (given, tensor.shape))
    if tensor.dtype != _dt.int64:
        raise TypeError("Padded shape %s must be a `tf.int64` vector tensor, but its "
                        "element type was %s." % (given, tensor.dtype.name))
    return tensor_util.constant_value_as_shape(tensor), tensor


def flat_padding_values(structure, padding_values) -> list:
    """The flat padding values: one for every component, None where not given."""
    leaves = len(nest.flatten(structure))
    if padding_values is None:
        return [None] * leaves
    if not nest.is_sequence(padding_values):  # one value for every component
        return [padding_values] * leaves
    return flatten_shapes(structure, padding_values)


def zero_of(dtype) -> _graph.Tensor:
    """The default padding of a component: its dtype's zero ("" for strings, False for
    bools)."""
    dtype = _dt.as_dtype(dtype)
    if dtype == _dt.string:
        return convert_to_tensor("", dtype=dtype)
    return convert_to_tensor(np.zeros((), dtype.as_numpy_dtype), dtype=dtype)


def padding_value(value, dtype) -> _graph.Tensor:
    """A component's padding value: `value` (a scalar of the component's dtype; TF
    converts it without the dtype, so 0 for an int64 component is a TypeError), or
    zero / the empty string when None.

    Raises:
      ValueError: `value` is not a scalar.
      TypeError: its dtype is not the component's.
    """
    if value is None:
        return zero_of(dtype)
    tensor = convert_to_tensor(value, name="padding_value")
    if not tensor.shape.is_compatible_with(TensorShape([])):
        raise ValueError("Invalid `padding_values`. `padding_values` values should be "
                         "scalars, but got %s." % tensor.shape)
    if tensor.dtype != dtype:
        raise TypeError("Invalid `padding_values`. `padding_values` values type %r does "
                        "not match type %r of the corresponding input component."
                        % (tensor.dtype, dtype))
    return tensor
