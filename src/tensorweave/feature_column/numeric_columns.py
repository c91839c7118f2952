"""`numeric_column` (a dense number or array per example) and `bucketized_column` (a
numeric column cut at boundaries: one-hot in `input_layer`, ids in `linear_model`)."""
from __future__ import annotations

import collections
from typing import Callable, Optional, Sequence

from tensorweave.feature_column.base import CategoricalColumn, DenseColumn, IdWeightPair, \
    check_key
from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.array import array_join_ops, array_ops
from tensorweave.ops.indexing.indexing_gather import one_hot
from tensorweave.ops.io.parsing_ops import FixedLenFeature
from tensorweave.ops.math import histogram_ops, math_ops


class NumericColumn(DenseColumn, collections.namedtuple(
        "NumericColumn", ("key", "shape", "default_value", "dtype", "normalizer_fn"))):
    """See `numeric_column`."""

    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self):
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def _transform_feature(self, inputs):
        value = inputs.get(self.key)
        if isinstance(value, SparseTensor):
            raise ValueError("The corresponding Tensor of numerical column must be a "
                             "Tensor. SparseTensor is not supported. key: {}"
                             .format(self.key))
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return math_ops.cast(value, _dt.float32)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(self.shape)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return inputs.get(self)


@tf_export("feature_column.numeric_column")
def numeric_column(key: str, shape=(1,), default_value=None, dtype=_dt.float32,
                   normalizer_fn: Optional[Callable] = None) -> NumericColumn:
    """A column of real numbers: each example has an array of `shape`.

    Args:
      key: the feature's key in the features dict (and in tf.Example).
      shape: an int or a sequence of ints > 0, the shape of one example's value.
      default_value: the value of examples without the feature when parsing (None:
        the feature is required); a number, or nested sequences of `shape`.
      dtype: an integer or floating type, the type the feature is parsed as (the
        column's tensor is always float32).
      normalizer_fn: a function applied to the feature's tensor before the cast to
        float32 (for example, a normalization).

    Returns:
      A NumericColumn.

    Raises:
      TypeError: a non-integer dimension, a default value that does not fit `dtype`,
        or a `normalizer_fn` that is not callable.
      ValueError: a dimension < 1, a non-numeric `dtype`, a default value of another
        shape, or a `key` that is not a string.
    """
    shape = check_shape(shape, key)
    dtype = check_numeric_dtype(dtype, key)
    default_value = _check_default_value(shape, default_value, dtype, key)
    check_normalizer(normalizer_fn)
    check_key(key)
    return NumericColumn(key, shape=shape, default_value=default_value, dtype=dtype,
                         normalizer_fn=normalizer_fn)


def check_numeric_dtype(dtype, key: str) -> _dt.DType:
    """`dtype` as a DType; ValueError unless integer or floating (cast to float32)."""
    dtype = _dt.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError("dtype must be convertible to float. dtype: {}, key: {}"
                         .format(dtype, key))
    return dtype


def check_normalizer(normalizer_fn) -> None:
    """TypeError unless `normalizer_fn` is None or callable."""
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError("normalizer_fn must be a callable. Given: {}".format(normalizer_fn))


def check_shape(shape, key) -> tuple:
    if shape is None:
        raise ValueError("shape must not be None. key: {}".format(key))
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    for dimension in shape:
        if not isinstance(dimension, int):
            raise TypeError("shape dimensions must be integer. shape: {}, key: {}"
                            .format(shape, key))
        if dimension < 1:
            raise ValueError("shape dimensions must be greater than 0. shape: {}, key: {}"
                             .format(shape, key))
    return shape


def _check_default_value(shape: tuple, default_value, dtype: _dt.DType, key: str):
    """`default_value` as nested tuples of `shape` (a number is repeated), as TF keeps
    it in the column (so columns stay hashable)."""
    if default_value is None:
        return None
    if isinstance(default_value, int) or (isinstance(default_value, float) and
                                          dtype.is_floating):
        return _filled(shape, default_value)
    if callable(getattr(default_value, "tolist", None)):  # a NumPy array or scalar
        default_value = default_value.tolist()
    if isinstance(default_value, (list, tuple)):
        if not _has_shape(default_value, shape):
            raise ValueError("The shape of default_value must be equal to given shape. "
                             "default_value: {}, shape: {}, key: {}"
                             .format(default_value, shape, key))
        leaves = list(_leaves(default_value))
        if all(isinstance(v, int) for v in leaves) or (
                dtype.is_floating and any(isinstance(v, float) for v in leaves)):
            return _nested_tuple(default_value)
    raise TypeError("default_value must be compatible with dtype. default_value: {}, "
                    "dtype: {}, key: {}".format(default_value, dtype, key))


def _filled(shape: tuple, value):
    return tuple(_filled(shape[1:], value) for _ in range(shape[0])) if shape else value


def _has_shape(value, shape: tuple) -> bool:
    if isinstance(value, (list, tuple)) != bool(shape):
        return False
    return not shape or (len(value) == shape[0] and
                         all(_has_shape(v, shape[1:]) for v in value))


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _nested_tuple(value):
    return tuple(_nested_tuple(v) for v in value) if isinstance(value, (list, tuple)) \
        else value


# --- bucketized_column --------------------------------------------------------------------
class BucketizedColumn(DenseColumn, CategoricalColumn, collections.namedtuple(
        "BucketizedColumn", ("source_column", "boundaries"))):
    """See `bucketized_column`."""

    @property
    def name(self) -> str:
        return "{}_bucketized".format(self.source_column.name)

    @property
    def _parse_example_spec(self):
        return self.source_column._parse_example_spec

    def _transform_feature(self, inputs):
        """The bucket (int32) of each value of the source column."""
        return bucketize(inputs.get(self.source_column), self.boundaries)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,))

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        buckets = math_ops.cast(inputs.get(self), _dt.int64)
        return one_hot(buckets, depth=len(self.boundaries) + 1, on_value=1.,
                       off_value=0.)

    @property
    def _num_buckets(self) -> int:
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        """One id per value: value j of an example falling in bucket b has id
        `j * (len(boundaries) + 1) + b`, so each position has its own buckets."""
        buckets = inputs.get(self)
        batch_size = array_ops.shape(buckets)[0]
        width = self.source_column.shape[0]
        # row and position of every value, in row-major order
        rows = array_ops.reshape(array_join_ops.tile(array_ops.expand_dims(
            math_ops.range(0, batch_size), 1), [1, width]), (-1,))
        positions = array_join_ops.tile(math_ops.range(0, width), [batch_size])
        ids = array_ops.reshape(buckets, (-1,)) + (len(self.boundaries) + 1) * positions
        indices = math_ops.cast(array_ops.transpose(array_join_ops.stack(
            (rows, positions))), _dt.int64)
        dense_shape = math_ops.cast(array_join_ops.stack([batch_size, width]), _dt.int64)
        return IdWeightPair(SparseTensor(indices, ids, dense_shape), None)


def bucketize(values, boundaries: Sequence[float]):
    """The bucket of each of `values` (float32): the number of `boundaries` <= it, so
    bucket i holds [boundaries[i-1], boundaries[i]) (TF's Bucketize op; NaN goes to the
    last bucket, as there)."""
    return histogram_ops.bucketize(values, boundaries)


@tf_export("feature_column.bucketized_column")
def bucketized_column(source_column: NumericColumn,
                      boundaries: Sequence[float]) -> BucketizedColumn:
    """A categorical (and dense) view of a numeric column cut at `boundaries`.

    Boundaries [0., 10., 100.] make the buckets (-inf, 0.), [0., 10.), [10., 100.) and
    [100., +inf). In `input_layer` each value becomes a one-hot vector of
    len(boundaries) + 1; in `linear_model` each value's bucket gets its own weight.

    Args:
      source_column: a one-dimensional column made by `numeric_column`.
      boundaries: a sorted list (or tuple) of floats, strictly increasing.

    Returns:
      A BucketizedColumn.

    Raises:
      ValueError: a source column that is not a one-dimensional numeric column, or
        boundaries that are empty, not a list or not strictly increasing.
    """
    if not isinstance(source_column, NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). "
                         "Given: {}".format(source_column))
    if len(source_column.shape) > 1:
        raise ValueError("source_column must be one-dimensional column. Given: {}"
                         .format(source_column))
    if boundaries is None or (isinstance(boundaries, (list, tuple)) and not boundaries):
        raise ValueError("boundaries must not be empty.")
    if not isinstance(boundaries, (list, tuple)) or any(
            lo >= hi for lo, hi in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))
