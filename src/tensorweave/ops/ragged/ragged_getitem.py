"""`RaggedTensor.__getitem__`: ints and slices on the rows, slices inside them.

What TF's ragged indexing supports in graph mode, built from gathers: an int picks
one row (a Tensor or a RaggedTensor one rank lower); a slice on the rows, any step,
gathers rows; inside the rows, a slice on a ragged dimension slices every row (a step
other than 1 is not supported, as in TF), `:` keeps a dimension, and an int on a ragged
dimension is TF's ValueError. A dimension with a uniform_row_length takes an int too.
Uniform inner dimensions take any dense index. An Ellipsis stands for as many `:` as
the rank needs; tf.newaxis adds a uniform dimension of size 1 (a row partition with
uniform_row_length 1 above the inner dimensions, a dense new axis inside them).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor, control_dependencies, name_scope
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import dimension_value
from tensorweave.ops.math.math_binary import maximum, minimum
from tensorweave.ops.math.math_ops import cast, range as range_op
from tensorweave.ops.debug import check_ops
from tensorweave.ops.indexing.indexing_select import where_v2
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor
from tensorweave.ops.ragged import ragged_array_ops

_FULL = slice(None)


def getitem(rt: RaggedTensor, key):
    """rt[key] for an int, slice, or tuple of them (see the module docstring).

    Raises:
      ValueError: an int on an inner ragged dimension, too many indices, more than one
        Ellipsis, or a slice step other than 1 on a ragged dimension.
      TypeError: an index that is not an int, a slice, or an integer scalar Tensor.
    """
    key = _expanded(rt, key if isinstance(key, tuple) else (key,))
    with name_scope(None, "RaggedGetItem", [rt.flat_values]):
        return _getitem(rt, key)


def _expanded(rt: RaggedTensor, key: tuple) -> tuple:
    """`key` with its Ellipsis replaced by the `:` slices that fill the rank.

    Raises:
      ValueError: more than one Ellipsis, or more indices than rt has dimensions.
    """
    ellipses = sum(1 for k in key if k is Ellipsis)
    if ellipses > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    indexed = sum(1 for k in key if k is not None and k is not Ellipsis)
    rank = rt.shape.rank
    if rank is not None and indexed > rank:
        raise ValueError("Too many indices for RaggedTensor")
    if not ellipses:
        return key
    if rank is None:
        raise ValueError("RaggedTensor indexing with Ellipsis needs a known rank")
    at = key.index(Ellipsis)
    return key[:at] + (_FULL,) * (rank - indexed) + key[at + 1:]


def _getitem(rt: RaggedTensor, key: tuple):
    if not key:
        return rt
    row_key, inner = key[0], key[1:]
    _check_supported(row_key)
    if row_key is None:
        value = _getitem(rt, inner)
        return ragged_array_ops.one_outer_row(value) if isinstance(value, RaggedTensor) \
            else value[None]
    if isinstance(row_key, slice):
        nrows = rt.nrows(out_type=_dt.int64)
        rows = ragged_array_ops.gather_rows(rt, range_op(nrows, dtype=_dt.int64)[row_key])
        if rt.uniform_row_length is not None:
            rows = RaggedTensor(rows.values, rows.row_splits, internal=True,
                                uniform_row_length=rt.uniform_row_length)
        return _inside_rows(rows, inner)
    row = _one_row(rt, row_key)
    if not inner:
        return row
    return _getitem(row, inner) if isinstance(row, RaggedTensor) else row[inner]


def _check_supported(k) -> None:
    if k is None or isinstance(k, slice):
        return
    if isinstance(k, Tensor):
        if not k.dtype.is_integer or k.shape.rank not in (0, None):
            raise TypeError("RaggedTensor indices must be integers, slices, or integer "
                            "scalar Tensors; got %s" % (k,))
        return
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError("RaggedTensor indices must be integers, slices, or integer "
                        "scalar Tensors; got %r" % (k,))


def _one_row(rt: RaggedTensor, index):
    """Row `index` (negative counts from the end) of rt."""
    start, limit = rt.row_starts()[index], rt.row_limits()[index]
    values = rt.values
    if isinstance(values, RaggedTensor):
        return ragged_array_ops.gather_rows(values, range_op(start, limit,
                                                             dtype=start.dtype))
    return values[start:limit]


def _inside_rows(rt: RaggedTensor, key: tuple):
    """Applies `key` to dims 1, 2, ... of rt, keeping its rows."""
    if not key:
        return rt
    k0, rest = key[0], key[1:]
    _check_supported(k0)
    if k0 is None:
        return ragged_array_ops.one_inner_row(_inside_rows(rt, rest))
    if not isinstance(k0, slice):
        if rt.uniform_row_length is None:
            raise ValueError("Cannot index into an inner ragged dimension.")
        return _keep_rows(_one_per_row(rt, k0), rest)
    if k0 != _FULL:
        rt = _slice_each_row(rt, k0)
    return rt.with_values(_keep_rows(rt.values, rest))


def _one_per_row(rt: RaggedTensor, index):
    """Value `index` of each row of rt, whose rows all have rt.uniform_row_length.

    Raises:
      InvalidArgumentError (run time): index out of [-length, length).
    """
    length = rt.uniform_row_length
    index = cast(convert_to_tensor(index), length.dtype)
    message = "Index out of bounds when indexing into a ragged tensor"   # TF's
    in_range = check_ops.assert_less(index, length, message=message)
    above = check_ops.assert_greater_equal(index, -length, message=message)
    with control_dependencies([in_range, above]):
        offset = where_v2(index < 0, index + length, index)
    return ragged_array_ops.gather_rows(rt.values, rt.row_starts() + offset)


def _keep_rows(values, key: tuple):
    if not key:
        return values
    if isinstance(values, RaggedTensor):
        return _inside_rows(values, key)
    return values[(_FULL,) + key]


def _slice_each_row(rt: RaggedTensor, k: slice) -> RaggedTensor:
    """rt with row i cut to row_i[k.start:k.stop] (Python slice rules per row)."""
    if k.step not in (None, 1):
        raise ValueError("RaggedTensor indexing: slicing a ragged dimension with a step "
                         "other than 1 is not supported")
    starts = cast(rt.row_starts(), _dt.int64)
    lengths = cast(rt.row_limits(), _dt.int64) - starts
    first = _clip_offset(k.start, lengths, default_to_end=False)
    last = maximum(_clip_offset(k.stop, lengths, default_to_end=True), first)
    taken = ragged_array_ops.ragged_range_values(starts + first, starts + last)
    new_values = ragged_array_ops.gather_rows(rt.values, taken)
    result = RaggedTensor.from_row_lengths(new_values, cast(last - first,
                                                            rt.row_splits.dtype),
                                           validate=False)
    return _with_sliced_length(result, rt, k)


def _with_sliced_length(result: RaggedTensor, rt: RaggedTensor, k: slice) -> RaggedTensor:
    """`result` keeping rt's uniform_row_length, cut to the slice `k` (a constant where
    the length and k's bounds are)."""
    if rt.uniform_row_length is None:
        return result
    length = dimension_value(rt.shape[1])  # the constant uniform_row_length, if any
    if length is not None and all(b is None or isinstance(b, int)
                                  for b in (k.start, k.stop)):
        kept = convert_to_tensor(len(range(length)[k]), rt.row_splits.dtype)
    else:
        length = cast(rt.uniform_row_length, _dt.int64)
        first = _clip_offset(k.start, length, default_to_end=False)
        last = maximum(_clip_offset(k.stop, length, default_to_end=True), first)
        kept = cast(last - first, rt.row_splits.dtype)
    return RaggedTensor(result.values, result.row_splits, internal=True,
                        uniform_row_length=kept)


def _clip_offset(bound, lengths: Tensor, default_to_end: bool) -> Tensor:
    """A slice bound as an offset into each row, clipped to [0, length]."""
    zero = convert_to_tensor(0, _dt.int64)
    if bound is None:
        return lengths if default_to_end else lengths * 0
    if isinstance(bound, int):
        return maximum(lengths + bound, zero) if bound < 0 else minimum(lengths, bound)
    bound = cast(bound, _dt.int64)
    return where_v2(bound < zero, maximum(lengths + bound, zero), minimum(lengths, bound))
