"""tf.split and tf.reshape of RaggedTensors (as TF 2.x dispatches them).

split cuts a uniform dimension (the rows, or a dimension of the flat values) into
pieces, each a slice `value[..., start:stop]`; a ragged dimension cannot be split
(ValueError, as TF). reshape to a dense shape reshapes the flat values: the values of a
RaggedTensor in row-major order, so the result is the dense tensor of those values.
"""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import dimension_value
from tensorweave.ops.array import array_ops
from tensorweave.ops.array.array_fill_ops import fill
from tensorweave.ops.array.array_join_ops import concat
from tensorweave.ops.control_flow.structure import with_dependencies
from tensorweave.ops.debug import check_ops
from tensorweave.ops.math.math_ops import cast
from tensorweave.ops.math.scan_ops import cumsum
from tensorweave.ops.ragged.dynamic_ragged_shape import DynamicRaggedShape
from tensorweave.ops.ragged.ragged_array_ops import _normalized_axis
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor, \
    convert_to_tensor_or_ragged_tensor


def split(value, num_or_size_splits, axis=0, num: Optional[int] = None,
          name: Optional[str] = None) -> List:
    """Pieces of `value` along the uniform dimension `axis` (tf.split of a RaggedTensor):
    `num_or_size_splits` equal ones (an int), or ones of the sizes it lists.

    Raises:
      ValueError: `axis` is a ragged dimension or out of range, an int
        `num_or_size_splits` below 1, or a number of pieces that cannot be known.
      TypeError: `num_or_size_splits` is neither an int nor a vector.
      InvalidArgumentError (run time): the sizes do not add up to the dimension, or
        one is negative.
    """
    with name_scope(name, "RaggedSplit", [value]):
        value = convert_to_tensor_or_ragged_tensor(value, name="value")
        if isinstance(num_or_size_splits, int) and num_or_size_splits == 1:
            return [value]
        shape = DynamicRaggedShape(value, value.row_splits.dtype)
        axis = _normalized_axis(axis, shape.rank, "split")
        try:
            size = shape[axis]
        except ValueError:
            raise ValueError("Cannot split a ragged dimension. Got `value` with shape %r "
                             "and `axis` %d." % (shape, axis)) from None
        lengths, count = _piece_lengths(num_or_size_splits, size, num)
        bounds = _checked_bounds(lengths, size, num_or_size_splits)
        lead = (slice(None),) * axis
        return [value[lead + (slice(bounds[i], bounds[i + 1]),)] for i in range(count)]


def _piece_lengths(num_or_size_splits, size, num: Optional[int]):
    """(the length of each piece, a vector; the number of pieces)."""
    if isinstance(num_or_size_splits, int):
        if num_or_size_splits < 1:
            raise ValueError("`num_or_size_splits` must be >=1 if it is an `int`."
                             "Received %d." % num_or_size_splits)
        return fill([num_or_size_splits], size // num_or_size_splits), num_or_size_splits
    lengths = convert_to_tensor(num_or_size_splits)
    if lengths.shape.ndims is not None and lengths.shape.ndims != 1:
        raise TypeError("`num_or_size_splits` must be an `int` or 1-D list or `Tensor`. "
                        "Received %s." % (num_or_size_splits,))
    count = dimension_value(lengths.shape[0]) if lengths.shape.ndims else None
    if count is None:
        if num is None:
            raise ValueError("`num` must be specified as an `int` when the size of "
                             "`num_or_size_split` is statically unknown. Received `num`: "
                             "None and `num_or_size_split`: %s." % (num_or_size_splits,))
        count = num
    elif num is not None and num != count:
        raise ValueError("`num` does not match the size of `num_or_size_split`. Received "
                         "`num`: %d and size of `num_or_size_split`: %d." % (num, count))
    return lengths, count


def _checked_bounds(lengths, size, num_or_size_splits):
    """[0, cumsum(lengths)...], after run-time checks that the lengths are not negative
    and add up to `size`."""
    bounds = concat([convert_to_tensor([0], dtype=lengths.dtype), cumsum(lengths)], 0)
    checks = [
        check_ops.assert_non_negative(
            lengths, message="`num_or_size_splits` must be non-negative."),
        check_ops.assert_equal(
            cast(size, bounds.dtype), bounds[-1],
            message="Cannot exactly split the `axis` dimension of `value` with the given "
                    "`num_or_size_split`.")]
    return with_dependencies(checks, bounds)


def reshape(tensor, shape, name: Optional[str] = None):
    """tf.reshape of a RaggedTensor to a dense `shape`: its flat values (in row-major
    order) reshaped, a dense Tensor."""
    with name_scope(name, "RaggedReshape", [tensor]):
        if isinstance(tensor, RaggedTensor):
            tensor = tensor.flat_values
        return array_ops.reshape(tensor, shape)
