"""tf.io.RaggedFeature: a feature of tf.train.Example parsed into a RaggedTensor.

A RaggedFeature names a value feature and, optionally, partition features (row splits,
lengths, starts, limits or row ids) or uniform row lengths that cut each example's
values into nested rows. parse_example reads the value and partition features as
VarLenFeatures (one value list per example) and builds the RaggedTensor here, a batch
dimension outermost; parse_single_example's result has no batch dimension.

Each partition turns into the row lengths it describes, example by example, so that the
rows of all examples are built at once: `rows` below is always a RaggedTensor [batch,
(items)] whose items are the rows built so far (the values at first).
"""
from __future__ import annotations

import collections
from typing import Dict, Tuple

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import Tensor, control_dependencies
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.array import array_ops
from tensorweave.ops.array.array_fill_ops import ones_like, zeros_like
from tensorweave.ops.array.array_join_ops import concat, stack
from tensorweave.ops.control_flow.structure import identity
from tensorweave.ops.debug import check_ops
from tensorweave.ops.indexing.indexing_gather import gather
from tensorweave.ops.indexing.indexing_select import boolean_mask, where_v2
from tensorweave.ops.math.math_binary import equal, floordiv, floormod, maximum
from tensorweave.ops.math.math_ops import cast, range as range_op
from tensorweave.ops.math.reduction_ops import reduce_sum
from tensorweave.ops.math.scan_ops import cumsum
from tensorweave.ops.math.segment_ops import unsorted_segment_max, unsorted_segment_sum
from tensorweave.ops.ragged import row_partition as rp
from tensorweave.ops.ragged.ragged_tensor import RaggedTensor

RowSplits = collections.namedtuple("RowSplits", ["key"])
RowLengths = collections.namedtuple("RowLengths", ["key"])
RowStarts = collections.namedtuple("RowStarts", ["key"])
RowLimits = collections.namedtuple("RowLimits", ["key"])
ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])
_PARTITION_TYPES = (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds,
                    UniformRowLength)
_VALUE_TYPES = (_dt.int64, _dt.float32, _dt.string)


@tf_export("io.RaggedFeature")
class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype",
                          "validate"])):
    """A feature parsed into a RaggedTensor (TF `tf.io.RaggedFeature`).

    Args:
      dtype: the values' type (int64, float32 or string).
      value_key: the feature holding the values (default: the key of this feature).
      partitions: partitions of each example's values, outermost first:
        RaggedFeature.RowSplits / RowLengths / RowStarts / RowLimits / ValueRowIds
        (key: an int64 feature holding them) or UniformRowLength(length).
      row_splits_dtype: int32 (default) or int64.
      validate: add run-time checks that the partitions fit the values.

    Raises:
      ValueError: a bad dtype, row_splits_dtype or value_key.
      TypeError: partitions not a list of partition objects, or validate not a bool.
    """
    RowSplits = RowSplits
    RowLengths = RowLengths
    RowStarts = RowStarts
    RowLimits = RowLimits
    ValueRowIds = ValueRowIds
    UniformRowLength = UniformRowLength

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=_dt.int32,
                validate=False):
        if value_key is not None:
            if not isinstance(value_key, str):
                raise ValueError("Argument `value_key` must be a string; got %s"
                                 % (value_key,))
            if not value_key:
                raise ValueError("Argument `value_key` must not be empty")
        dtype = _dt.as_dtype(dtype)
        if dtype not in _VALUE_TYPES:
            raise ValueError("Argument `dtype` must be int64, float32, or bytes; got %r"
                             % (dtype,))
        row_splits_dtype = _dt.as_dtype(row_splits_dtype)
        if row_splits_dtype not in rp.SPLITS_DTYPES:
            raise ValueError("Argument `row_splits_dtype` must be int32 or int64; got%r"
                             % (row_splits_dtype,))
        if not isinstance(partitions, (list, tuple)) or \
                not all(isinstance(p, _PARTITION_TYPES) for p in partitions):
            raise TypeError("Argument `partitions` must be a list of partition objects "
                            "(RaggedFeature.RowSplits, RowLengths, RowStarts, RowLimits, "
                            "ValueRowIds, UniformRowLength); got: %r" % (partitions,))
        if not isinstance(validate, bool):
            raise TypeError("Argument `validate` must be a bool; got %r" % (validate,))
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype,
                               validate)


# --- the features parsed for a RaggedFeature --------------------------------------------------
def _component_features(key: str, f: RaggedFeature) -> Dict[str, _dt.DType]:
    """The features a RaggedFeature reads, with their dtypes."""
    wanted = {f.value_key or key: f.dtype}
    for p in f.partitions:
        if not isinstance(p, UniformRowLength):
            wanted.setdefault(p.key, _dt.int64)
    return wanted


def split_ragged(features, var_len_feature, sparse_keys_of) -> Tuple[dict, dict]:
    """(the features to parse, {key: RaggedFeature}): each RaggedFeature's value and
    partition features replace it, as VarLenFeatures.

    Args:
      features: the dict given to parse_example.
      var_len_feature: the VarLenFeature class (parsing_ops).
      sparse_keys_of: function (key, feature) -> the sparse keys a feature reads, [] for
        a dense one.

    Raises:
      ValueError: a ragged key is also a sparse or dense key, or two RaggedFeatures
        read one feature as different types.
    """
    ragged = {k: f for k, f in (features or {}).items() if isinstance(f, RaggedFeature)}
    if not ragged:
        return features, {}
    plain = {k: f for k, f in features.items() if not isinstance(f, RaggedFeature)}
    wanted: Dict[str, _dt.DType] = {}
    for key, f in ragged.items():
        for k, dtype in _component_features(key, f).items():
            if wanted.setdefault(k, dtype) != dtype:
                raise ValueError("Conflicting type %s vs %s for feature %s."
                                 % (wanted[k], dtype, k))
    _check_disjoint(wanted, plain, sparse_keys_of)
    plain.update((k, var_len_feature(dtype)) for k, dtype in wanted.items())
    return plain, ragged


def _check_disjoint(ragged_keys, plain: dict, sparse_keys_of) -> None:
    ragged_keys = list(ragged_keys)
    sparse = list(dict.fromkeys(k for key, f in plain.items() for k in sparse_keys_of(key, f)))
    dense = [key for key, f in plain.items() if not sparse_keys_of(key, f)]
    common = set(ragged_keys) & set(sparse)
    if common:
        raise ValueError("Ragged and sparse keys must not intersect; ragged_keys: %s, "
                         "sparse_keys: %s, intersection: %s" % (ragged_keys, sparse, common))
    common = set(ragged_keys) & set(dense)
    if common:
        raise ValueError("Dense and ragged keys must not intersect; dense_keys: %s, "
                         "ragged_keys: %s, intersection: %s" % (dense, ragged_keys, common))


def merge_ragged(result: dict, features, ragged: dict, batch_shape) -> dict:
    """`result` (the parsed features) with each RaggedFeature built from its value and
    partition features, which stay only if asked for themselves. `batch_shape`: the
    static shape of parse_example's `serialized`, None for parse_single_example."""
    if not ragged:
        return result
    built = {key: _build(key, f, result, batch_shape) for key, f in ragged.items()}
    for key, f in ragged.items():
        for k in _component_features(key, f):
            if k not in features:
                result.pop(k, None)
    result.update(built)
    return result


# --- building the RaggedTensor -------------------------------------------------------------
def _per_example(st: SparseTensor, splits_dtype, batched: bool) -> RaggedTensor:
    """A parsed VarLenFeature as a RaggedTensor [batch, (values)] (batch 1 for one
    example)."""
    if batched:
        rowids = cast(st.indices[:, 0], splits_dtype)
        nrows = cast(st.dense_shape[0], splits_dtype)
        return RaggedTensor.from_value_rowids(st.values, rowids, nrows, validate=False)
    count = array_ops.size(st.values, out_type=splits_dtype)
    splits = stack([convert_to_tensor(0, dtype=splits_dtype), count])
    return RaggedTensor.from_row_splits(st.values, splits, validate=False)


def _build(key: str, f: RaggedFeature, result: dict, batch_shape):
    dtype = f.row_splits_dtype
    batched = batch_shape is not None
    rows = _per_example(result[f.value_key or key], dtype, batched)
    for partition in reversed(f.partitions):
        if isinstance(partition, UniformRowLength):
            rows = _uniform_rows(rows, partition.length, f.validate)
        else:
            parts = _per_example(result[partition.key], dtype, batched)
            rows = _keyed_rows(rows, partition, parts.with_flat_values(
                cast(parts.flat_values, dtype)), f.validate)
    if not batched:
        return rows.values
    batch = batch_shape.with_rank(1)[0].value
    rows.row_splits.set_shape([None if batch is None else batch + 1])
    return rows


def _uniform_rows(rows: RaggedTensor, length: int, validate: bool) -> RaggedTensor:
    """Rows of `length` items each; over dense values, a dense inner dimension."""
    splits = rows.row_splits
    length_t = convert_to_tensor(length, dtype=splits.dtype)
    checks = [] if not validate else [check_ops.assert_equal(
        floormod(rows.row_lengths(), length_t), 0 * length_t,
        message="Each example's values must be a multiple of the UniformRowLength")]
    with control_dependencies(checks):
        outer = identity(floordiv(splits, length_t))
    items = rows.values
    if isinstance(items, RaggedTensor):
        inner = range_op(outer[-1] + 1, dtype=splits.dtype) * length_t
        return RaggedTensor(RaggedTensor(items, inner, internal=True), outer, internal=True)
    values_shape = array_ops.shape(items, out_type=_dt.int64)
    new_shape = concat([convert_to_tensor([-1, length], dtype=_dt.int64),
                        values_shape[1:]], 0)
    grouped = array_ops.reshape(items, new_shape)
    return RaggedTensor(grouped, outer, internal=True)


def _keyed_rows(rows: RaggedTensor, partition, parts: RaggedTensor,
                validate: bool) -> RaggedTensor:
    """Rows of the items of each example, as the example's partition values say."""
    lengths, counts = _ROW_LENGTHS[type(partition)](parts, rows.row_lengths())
    checks = [] if not validate else _fit_checks(lengths, counts, rows, parts)
    with control_dependencies(checks):
        lengths = identity(lengths)
    inner = RaggedTensor(rows.values, rp.lengths_to_splits(lengths, None, "", False),
                         internal=True)
    return RaggedTensor(inner, rp.lengths_to_splits(counts, None, "", False), internal=True)


def _fit_checks(lengths: Tensor, counts: Tensor, rows: RaggedTensor, parts) -> list:
    """validate=True: no negative row length, and each example's rows hold exactly its
    items."""
    zero = convert_to_tensor(0, dtype=lengths.dtype)
    example_of_row = rp.splits_to_segment_ids(rp.lengths_to_splits(counts, None, "", False))
    per_example = unsorted_segment_sum(lengths, example_of_row, parts.nrows())
    return [check_ops.assert_greater_equal(lengths, zero,
                                           message="Row lengths must be non-negative"),
            check_ops.assert_equal(per_example, rows.row_lengths(),
                                   message="The partition of each example must cover "
                                           "exactly its values")]


# --- each partition kind as (row lengths of all examples, rows per example) ---------------------
def _positions(parts: RaggedTensor) -> Tuple[Tensor, Tensor, Tensor]:
    """(the partition values, the example of each, its position within the example)."""
    rowids = parts.value_rowids()
    position = range_op(parts.row_splits[-1], dtype=rowids.dtype) - \
        gather(parts.row_splits, rowids)
    return parts.values, rowids, position


def _previous(values: Tensor) -> Tensor:
    """values shifted one place right (0 first): each entry's predecessor."""
    return concat([zeros_like(values[:1]), values[:-1]], 0)


def _from_lengths(parts, n_items):
    return parts.values, parts.row_lengths()


def _from_splits(parts, n_items):
    values, _, position = _positions(parts)
    lengths = boolean_mask(values - _previous(values), position > 0)
    counts = parts.row_lengths()
    return lengths, maximum(counts - 1, 0 * counts)


def _from_limits(parts, n_items):
    values, _, position = _positions(parts)
    previous = where_v2(position > 0, _previous(values), 0 * values)
    return values - previous, parts.row_lengths()


def _from_starts(parts, n_items):
    values, rowids, position = _positions(parts)
    counts = parts.row_lengths()
    is_last = equal(position, gather(counts, rowids) - 1)
    following = concat([values[1:], zeros_like(values[:1])], 0)
    ends = where_v2(is_last, gather(n_items, rowids), following)
    return ends - values, counts


def _from_rowids(parts, n_items):
    values, rowids, _ = _positions(parts)
    last = unsorted_segment_max(values, rowids, parts.nrows())
    counts = maximum(last + 1, 0 * last)     # an example without items has no rows
    first_row = cumsum(counts, exclusive=True)
    row_of_item = gather(first_row, rowids) + values
    lengths = unsorted_segment_sum(ones_like(values), row_of_item, reduce_sum(counts))
    return lengths, counts


_ROW_LENGTHS = {RowLengths: _from_lengths, RowSplits: _from_splits, RowLimits: _from_limits,
                RowStarts: _from_starts, ValueRowIds: _from_rowids}
