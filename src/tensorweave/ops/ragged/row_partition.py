"""Row partitions: the encodings of how a RaggedTensor's values split into rows.

`row_splits` (int64 or int32, [nrows + 1], starting at 0, nondecreasing, ending at
nvals) is the one encoding a RaggedTensor stores; row lengths, row starts, row limits and
value row ids convert to and from it here. Each `*_to_splits` builder optionally adds
the run-time checks TF's `validate=True` makes: assert ops that fail the step with
InvalidArgumentError, attached to the returned splits as control dependencies.
"""
from __future__ import annotations

from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.graph import Tensor, control_dependencies
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import dimension_value
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array.array_join_ops import concat
from tensorweave.ops.array.array_ops import shape as shape_op
from tensorweave.ops.array.array_rearrange_ops import repeat
from tensorweave.ops.control_flow.structure import identity
from tensorweave.ops.debug import check_ops
from tensorweave.ops.debug.debug_ops import Assert
from tensorweave.ops.math.math_binary import equal, maximum
from tensorweave.ops.math.math_ops import cast, range as range_op
from tensorweave.ops.math.scan_ops import cumsum
from tensorweave.ops.math.segment_ops import unsorted_segment_sum
from tensorweave.ops.array.array_fill_ops import ones_like, zeros

SPLITS_DTYPES = (_dt.int32, _dt.int64)


def convert_partition(value, name: str, dtype=None) -> Tensor:
    """A partition tensor of rank 1 and an int32/int64 dtype (int64 for Python lists).

    Raises:
      ValueError: `value` is not of rank 1 or not of an integer splits dtype (as TF).
    """
    if dtype is None and isinstance(value, (list, tuple)) and \
            any(isinstance(v, Tensor) for v in value):
        # TF packs a list holding tensors at the int64 hint ([1, tf.size(x) - 1])
        value = [cast(v, _dt.int64) if isinstance(v, Tensor) else v for v in value]
    t = convert_to_tensor(value, dtype=dtype, name=name,
                          dtype_hint=None if dtype is not None else _dt.int64)
    if t.dtype.base_dtype not in SPLITS_DTYPES:
        raise ValueError("%s must have dtype int32 or int64" % name)
    t.shape.with_rank(1)
    return t


def nvals_of(values, out_type) -> Tensor:
    """The number of rows of `values` (a Tensor or RaggedTensor) as an `out_type` scalar."""
    if hasattr(values, "nrows"):
        return values.nrows(out_type=out_type)
    static = dimension_value(values.shape[0]) if values.shape.rank else None
    if static is not None:
        return convert_to_tensor(static, dtype=out_type)
    return cast(shape_op(values, out_type=_dt.int64)[0], out_type)


def _checked(result: Tensor, asserts: List) -> Tensor:
    if not asserts:
        return result
    with control_dependencies(asserts):
        return identity(result, name="control_dependency")


def _assert_nondecreasing(x: Tensor, message: str):
    return check_ops.assert_less_equal(x[:-1], x[1:], message=message)


def validated_splits(row_splits: Tensor, nvals: Tensor, what: str, validate: bool) -> Tensor:
    """`row_splits` with TF's checks: starts at zero, nondecreasing, ends at nvals.

    Raises:
      ValueError: row_splits is statically empty (it needs at least the leading 0).
    """
    if dimension_value(row_splits.shape[0]) == 0:
        raise ValueError("slice index 0 of dimension 0 out of bounds: row_splits must "
                         "hold at least one element (the leading 0)")
    if not validate:
        return row_splits
    msg = "Arguments to %s do not form a valid RaggedTensor" % what
    asserts = [
        check_ops.assert_equal(row_splits[:1], zeros([1], row_splits.dtype),
                               message=msg + ": first element of row_splits must be zero"),
        _assert_nondecreasing(row_splits, msg + ": row_splits must be nondecreasing"),
        check_ops.assert_equal(row_splits[-1:], cast(nvals, row_splits.dtype)[None],
                               message=msg + ": last element of row_splits must equal "
                                       "the number of values"),
    ]
    return _checked(row_splits, asserts)


def lengths_to_splits(row_lengths: Tensor, nvals: Optional[Tensor], what: str,
                      validate: bool) -> Tensor:
    """row_splits [0, l0, l0 + l1, ...] of `row_lengths` (checked: nonnegative, sum=nvals)."""
    splits = concat([zeros([1], row_lengths.dtype), cumsum(row_lengths)], 0)
    if not validate:
        return splits
    msg = "Arguments to %s do not form a valid RaggedTensor" % what
    asserts = [check_ops.assert_non_negative(row_lengths,
                                             message=msg + ": negative row length")]
    with control_dependencies(asserts):
        return validated_splits(splits, nvals, what, True)


def starts_to_splits(row_starts: Tensor, nvals: Tensor, what: str, validate: bool) -> Tensor:
    """row_splits of `row_starts` (row_starts followed by nvals)."""
    total = cast(nvals, row_starts.dtype)[None]
    splits = concat([row_starts, total], 0)
    return validated_splits(splits, nvals, what, validate)


def limits_to_splits(row_limits: Tensor, nvals: Tensor, what: str, validate: bool) -> Tensor:
    """row_splits of `row_limits` (zero followed by row_limits)."""
    splits = concat([zeros([1], row_limits.dtype), row_limits], 0)
    if validate:
        msg = "Arguments to %s do not form a valid RaggedTensor" % what
        first = check_ops.assert_non_negative(row_limits[:1],
                                              message=msg + ": negative row limit")
        with control_dependencies([first]):
            return validated_splits(splits, nvals, what, True)
    return splits


def splits_to_segment_ids(row_splits: Tensor, out_type=None) -> Tensor:
    """The row of each value: row i repeated row_lengths[i] times."""
    out_type = _dt.as_dtype(out_type) if out_type is not None else row_splits.dtype
    lengths = row_splits[1:] - row_splits[:-1]
    nrows = shape_op(lengths, out_type=out_type)[0]
    return repeat(range_op(nrows, dtype=out_type), cast(lengths, _dt.int64), axis=0)


def segment_ids_to_splits(segment_ids: Tensor, nrows: Optional[Tensor], out_type) -> Tensor:
    """row_splits of a row id per value (nrows: last id + 1, or 0 with no values)."""
    if nrows is None:
        nrows = _nrows_from_ids(segment_ids)
    counts = unsorted_segment_sum(ones_like(segment_ids, dtype=out_type), segment_ids,
                                  cast(nrows, segment_ids.dtype))
    return concat([zeros([1], out_type), cumsum(counts)], 0)


def _nrows_from_ids(segment_ids: Tensor) -> Tensor:
    from tensorweave.ops.math.reduction_ops import reduce_max
    from tensorweave.ops.math.math_binary import maximum
    return maximum(reduce_max(segment_ids) + 1, convert_to_tensor(0, segment_ids.dtype))


def rowids_to_splits(value_rowids: Tensor, nrows, nvals: Tensor, what: str,
                     validate: bool) -> Tensor:
    """row_splits of sorted `value_rowids` (checked: nonnegative, nondecreasing, < nrows).

    Raises:
      ValueError: `nrows` and the last row id are both constant and nrows is too small.
    """
    if nrows is not None:
        nrows = convert_to_tensor(nrows, dtype=value_rowids.dtype, name="nrows")
        _check_static_nrows(value_rowids, nrows)
    asserts = []
    if validate:
        msg = "Arguments to %s do not form a valid RaggedTensor" % what
        asserts = [check_ops.assert_non_negative(value_rowids[:1],
                                                 message=msg + ": negative row id"),
                   _assert_nondecreasing(value_rowids, msg + ": value_rowids must be "
                                                             "sorted")]
        if nrows is not None:
            asserts.append(check_ops.assert_less(
                value_rowids[-1:], nrows[None],
                message=msg + ": nrows must be greater than value_rowids[-1]"))
    with control_dependencies(asserts):
        return segment_ids_to_splits(identity(value_rowids), nrows, value_rowids.dtype)


def _check_static_nrows(value_rowids: Tensor, nrows: Tensor) -> None:
    ids, n = constant_value(value_rowids), constant_value(nrows)
    if ids is not None and n is not None and ids.size and int(n) < int(ids[-1]) + 1:
        raise ValueError("Expected nrows >= value_rowids[-1] + 1; got nrows=%d, "
                         "value_rowids[-1]=%d" % (int(n), int(ids[-1])))


# --- uniform row lengths -------------------------------------------------------------------
def convert_uniform_length(value, values) -> Tensor:
    """`value` as an int32/int64 scalar of `values`' row_splits dtype where it is ragged.

    Raises:
      ValueError: not an int32/int64 scalar, or a negative constant.
    """
    dtype = values.row_splits.dtype if hasattr(values, "row_splits") else None
    t = convert_to_tensor(value, name="UniformRowLength",
                          dtype_hint=None if isinstance(value, Tensor) else _dt.int64)
    if t.dtype.base_dtype not in SPLITS_DTYPES:
        raise ValueError("UniformRowLength must have dtype int32 or int64")
    t.shape.with_rank(0)
    static = constant_value(t)
    if static is not None and int(static) < 0:
        raise ValueError("uniform_row_length must be nonnegative; got %d" % int(static))
    return cast(t, dtype) if dtype is not None and dtype != t.dtype else t


def uniform_length_to_splits(length: Tensor, nrows, nvals: Tensor, validate: bool):
    """(row_splits [0, length, 2 * length, ...], nrows) for rows of one `length`.

    nrows defaults to nvals // length (0 when length is 0).

    Raises:
      ValueError: constant length, nrows and nvals with length * nrows != nvals.
    """
    if nrows is None:
        nrows = _uniform_nrows(length, nvals)
    else:
        nrows = convert_to_tensor(nrows, dtype=length.dtype, name="nrows")
        _check_static_uniform(length, nrows, nvals)
    splits = range_op(nrows + 1, dtype=length.dtype) * length
    static_nrows = constant_value(nrows)
    if static_nrows is not None:
        splits.set_shape([int(static_nrows) + 1])
    if not validate:
        return splits, nrows
    nvals = cast(nvals, length.dtype)
    # a run-time check, as TF's, even where the parts are constants
    agree = Assert(equal(length * nrows, nvals),
                   ["uniform_row_length", length, "times nrows", nrows,
                    "must equal nvals", nvals])
    asserts = [check_ops.assert_non_negative(length, message="uniform_row_length must be "
                                                             "nonnegative"), agree]
    return _checked(splits, asserts), nrows


def _uniform_nrows(length: Tensor, nvals: Tensor) -> Tensor:
    n, total = constant_value(length), constant_value(nvals)
    if n is not None and total is not None:
        return convert_to_tensor(0 if int(n) == 0 else int(total) // int(n),
                                 dtype=length.dtype)
    one = convert_to_tensor(1, length.dtype)
    nvals = cast(nvals, length.dtype)
    return nvals // maximum(length, one) * cast(length > 0 * one, length.dtype)


def _check_static_uniform(length: Tensor, nrows: Tensor, nvals: Tensor) -> None:
    n, rows, total = constant_value(length), constant_value(nrows), constant_value(nvals)
    if n is not None and rows is not None and total is not None and \
            int(n) * int(rows) != int(total):
        raise ValueError("uniform_row_length=%d times nrows=%d must equal nvals=%d"
                         % (int(n), int(rows), int(total)))
