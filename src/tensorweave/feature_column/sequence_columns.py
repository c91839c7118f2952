"""Sequence feature columns (`tf.feature_column.sequence_*`): a variable-length list of
values per example, each step kept apart instead of combined.

TF1 offers them for sequence models, whose layers (TF's `sequence_input_layer`, Keras's
SequenceFeatures) read one row per step. The non-sequence `input_layer` refuses them, and
so does `linear_model`: an embedding or indicator of a sequence column raises ValueError
there, as in TF. What works here is what TF1's own API does with them: building them,
`make_parse_example_spec` (a VarLenFeature per column) and `_get_sparse_tensors`, whose
ids have a third dimension (example, step, values of the step).

`sequence_numeric_column` is, as in TF, not a column of the TF1 protocol:
`input_layer` and `make_parse_example_spec` reject it.
"""
from __future__ import annotations

import collections
from typing import Callable, Optional

from tensorweave.feature_column.base import CategoricalColumn, check_key
from tensorweave.feature_column.categorical_columns import (
    categorical_column_with_hash_bucket, categorical_column_with_identity,
    categorical_column_with_vocabulary_file, categorical_column_with_vocabulary_list)
from tensorweave.feature_column.numeric_columns import check_normalizer, \
    check_numeric_dtype, check_shape
from tensorweave.framework import dtypes as _dt
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.ops.array import array_join_ops
from tensorweave.ops.io.parsing_ops import VarLenFeature
from tensorweave.ops.math import reduction_ops
from tensorweave.ops.sparse.sparse_reshape_ops import sparse_reshape


class SequenceCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "SequenceCategoricalColumn", ("categorical_column",))):
    """A categorical column read as a sequence (see the module docstring)."""

    @property
    def name(self) -> str:
        return self.categorical_column.name

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    @property
    def _num_buckets(self) -> int:
        return self.categorical_column._num_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        ids, weights = self.categorical_column._get_sparse_tensors(
            inputs, weight_collections=weight_collections, trainable=trainable)
        return CategoricalColumn.IdWeightPair(
            _with_step_values(ids), None if weights is None else _with_step_values(weights))


def _with_step_values(sparse):
    """`sparse` reshaped to [examples, steps, values per step]: a third dimension keeps
    the steps from being combined by an embedding lookup. The product is computed rather
    than -1 so that empty sequences (a 0 dimension) reshape too."""
    shape = sparse.dense_shape
    target = array_join_ops.stack([shape[0], shape[1], reduction_ops.reduce_prod(shape[2:])])
    return sparse_reshape(sparse, target)


def check_not_sequence(column: CategoricalColumn, wrapper: str, name: str) -> None:
    """Raises ValueError when the column `name` made by `wrapper` (embedding_column,
    indicator_column) wraps a sequence column: `input_layer` combines steps."""
    if isinstance(column, SequenceCategoricalColumn):
        raise ValueError(
            "In {}: {}. categorical_column must not be of type _SequenceCategoricalColumn. "
            "Suggested fix A: If you wish to use input_layer, use a non-sequence "
            "categorical_column_with_*. Suggested fix B: If you wish to create sequence "
            "input, use sequence_input_layer instead of input_layer. Given (type {}): {}"
            .format(wrapper, name, type(column), column))


@tf_export("feature_column.sequence_categorical_column_with_identity")
def sequence_categorical_column_with_identity(key: str, num_buckets: int,
                                              default_value: Optional[int] = None
                                              ) -> SequenceCategoricalColumn:
    """`categorical_column_with_identity` read as a sequence (same arguments and errors).

    Returns:
      A SequenceCategoricalColumn.
    """
    return SequenceCategoricalColumn(
        categorical_column_with_identity(key, num_buckets, default_value))


@tf_export("feature_column.sequence_categorical_column_with_hash_bucket")
def sequence_categorical_column_with_hash_bucket(key: str, hash_bucket_size: int,
                                                 dtype=_dt.string
                                                 ) -> SequenceCategoricalColumn:
    """`categorical_column_with_hash_bucket` read as a sequence (same arguments and
    errors).

    Returns:
      A SequenceCategoricalColumn.
    """
    return SequenceCategoricalColumn(
        categorical_column_with_hash_bucket(key, hash_bucket_size, dtype))


@tf_export("feature_column.sequence_categorical_column_with_vocabulary_file")
def sequence_categorical_column_with_vocabulary_file(
        key: str, vocabulary_file: str, vocabulary_size: Optional[int] = None,
        num_oov_buckets: int = 0, default_value: Optional[int] = None,
        dtype=_dt.string) -> SequenceCategoricalColumn:
    """`categorical_column_with_vocabulary_file` read as a sequence (same arguments and
    errors).

    Returns:
      A SequenceCategoricalColumn.
    """
    return SequenceCategoricalColumn(categorical_column_with_vocabulary_file(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, default_value, dtype))


@tf_export("feature_column.sequence_categorical_column_with_vocabulary_list")
def sequence_categorical_column_with_vocabulary_list(
        key: str, vocabulary_list, dtype=None, default_value: int = -1,
        num_oov_buckets: int = 0) -> SequenceCategoricalColumn:
    """`categorical_column_with_vocabulary_list` read as a sequence (same arguments and
    errors).

    Returns:
      A SequenceCategoricalColumn.
    """
    return SequenceCategoricalColumn(categorical_column_with_vocabulary_list(
        key, vocabulary_list, dtype, default_value, num_oov_buckets))


class SequenceNumericColumn(collections.namedtuple(
        "SequenceNumericColumn", ("key", "shape", "default_value", "dtype",
                                  "normalizer_fn"))):
    """See `sequence_numeric_column` (not a TF1-protocol column, as in TF)."""

    @property
    def name(self) -> str:
        return self.key

    @property
    def parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def variable_shape(self) -> TensorShape:
        return TensorShape(self.shape)


@tf_export("feature_column.sequence_numeric_column")
def sequence_numeric_column(key: str, shape=(1,), default_value: float = 0.0,
                            dtype=_dt.float32, normalizer_fn: Optional[Callable] = None
                            ) -> SequenceNumericColumn:
    """A sequence of real numbers per example, each step an array of `shape`.

    Args:
      key: the feature's key.
      shape: an int or a sequence of ints > 0, the shape of one step's value.
      default_value: the value padding short sequences.
      dtype: an integer or floating type.
      normalizer_fn: a function applied to the feature's tensor.

    Returns:
      A SequenceNumericColumn.

    Raises:
      TypeError: a non-integer dimension or a `normalizer_fn` that is not callable.
      ValueError: a dimension < 1 or a non-numeric `dtype`.
    """
    shape = check_shape(shape, key)
    dtype = check_numeric_dtype(dtype, key)
    check_normalizer(normalizer_fn)
    check_key(key)
    return SequenceNumericColumn(key, shape, default_value, dtype, normalizer_fn)
