"""The categorical columns that read one feature and map its values to ids:
hash buckets, a vocabulary (a list or a file), the values themselves (identity), and the
weighted view of any of them.

Each reads its feature as a SparseTensor: a dense input first loses its missing cells
("" for strings, -1 for integers), as TF does. Vocabulary columns look ids up in a table
that `tf.tables_initializer()` fills, with TF1's `index_table_from_tensor/_file`
semantics: a value outside the vocabulary gets `vocabulary_size + hash bucket` when
there are `num_oov_buckets`, else `default_value`.
"""
from __future__ import annotations

import abc
import collections
from typing import Optional, Sequence

import numpy as np

from tensorweave.feature_column.base import CategoricalColumn, IdWeightPair, \
    categorical_dtype, check_categorical, check_key, check_string_or_int
from tensorweave.feature_column.builder import to_sparse_input
from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.framework_lib import init_scope
from tensorweave.framework.sparse_tensor import SparseTensor, \
    convert_to_tensor_or_sparse_tensor
from tensorweave.ops.array import array_fill_ops, array_ops
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.data_flow.lookup_ops import KeyValueTensorInitializer, \
    StaticHashTable, TextFileIndex, TextFileInitializer
from tensorweave.ops.data_flow.vocabulary_table import StaticVocabularyTable
from tensorweave.ops.indexing import indexing_select
from tensorweave.ops.io.parsing_ops import VarLenFeature
from tensorweave.ops.math import math_binary, math_ops
from tensorweave.ops.string.string_hash_ops import string_to_hash_bucket_fast
from tensorweave.ops.string.string_ops import as_string
from tensorweave.platform import gfile


def _with_values(sparse: SparseTensor, values) -> SparseTensor:
    return SparseTensor(sparse.indices, values, sparse.dense_shape)


def _cast_values(sparse: SparseTensor, dtype: _dt.DType) -> SparseTensor:
    return sparse if sparse.dtype == dtype else math_ops.cast(sparse, dtype)


class _KeyedCategoricalColumn(CategoricalColumn):
    """A categorical column reading the feature `key` (a VarLenFeature when parsed)
    whose ids are a function of the feature's values alone (`_to_ids`)."""

    @property
    def name(self) -> str:
        return self.key

    @property
    def _parsed_dtype(self) -> _dt.DType:
        return self.dtype

    @property
    def _parse_example_spec(self):
        return {self.key: VarLenFeature(self._parsed_dtype)}

    def _transform_feature(self, inputs):
        return self._to_ids(to_sparse_input(inputs.get(self.key)))

    @abc.abstractmethod
    def _to_ids(self, sparse: SparseTensor) -> SparseTensor:
        """The int64 ids of the feature's values, with the feature's indices."""

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return IdWeightPair(inputs.get(self), None)

    # the two input checks of the columns with a `dtype` (hash and vocabulary columns)
    def _check_input_compatible(self, dtype: _dt.DType) -> None:
        if self.dtype.is_integer != dtype.is_integer:
            raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                             "key: {}, column dtype: {}, tensor dtype: {}"
                             .format(self.key, self.dtype, dtype))

    def _check_input_type(self, dtype: _dt.DType) -> None:
        check_string_or_int(dtype, "column_name: {} input_tensor".format(self.key))


# --- hash buckets -------------------------------------------------------------------------
class HashedCategoricalColumn(_KeyedCategoricalColumn, collections.namedtuple(
        "HashedCategoricalColumn", ("key", "hash_bucket_size", "dtype"))):
    """See `categorical_column_with_hash_bucket`."""

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _to_ids(self, sparse):
        # TF checks the type first here, compatibility first for vocabularies: kept, so
        # a wrong input gets TF's message
        self._check_input_type(sparse.dtype)
        self._check_input_compatible(sparse.dtype)
        # integers hash as their decimal strings, as TF's column does
        text = sparse.values if self.dtype == _dt.string else as_string(sparse.values)
        return _with_values(sparse, string_to_hash_bucket_fast(
            text, self.hash_bucket_size, name="lookup"))


@tf_export("feature_column.categorical_column_with_hash_bucket")
def categorical_column_with_hash_bucket(key: str, hash_bucket_size: int,
                                        dtype=_dt.string) -> HashedCategoricalColumn:
    """A categorical column whose id is a hash of the value modulo `hash_bucket_size`
    (FarmHash Fingerprint64, TF's StringToHashBucketFast, so ids equal TF's).

    Args:
      key: the feature's key.
      hash_bucket_size: the number of ids, at least 1.
      dtype: string or an integer type (integers are hashed as their decimal strings).

    Returns:
      A HashedCategoricalColumn.

    Raises:
      ValueError: `hash_bucket_size` missing or < 1, a `dtype` that is neither string
        nor integer, or a `key` that is not a string.
    """
    if hash_bucket_size is None:
        raise ValueError("hash_bucket_size must be set. key: {}".format(key))
    if hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be at least 1. hash_bucket_size: {}, "
                         "key: {}".format(hash_bucket_size, key))
    check_key(key)
    dtype = categorical_dtype(dtype, key)
    return HashedCategoricalColumn(key, hash_bucket_size, dtype)


# --- vocabularies -------------------------------------------------------------------------
class _VocabularyColumn(_KeyedCategoricalColumn):
    """Ids from a vocabulary table built when the column is first transformed."""

    def _to_ids(self, sparse):
        self._check_input_compatible(sparse.dtype)
        self._check_input_type(sparse.dtype)
        key_dtype = self.dtype
        if sparse.dtype.is_integer:  # tables hold int64 keys
            key_dtype = _dt.int64
            sparse = _cast_values(sparse, _dt.int64)
        # The table is a resource made once, outside any cond or while loop the column
        # is used in (as variables are).
        with init_scope(), _graph.name_scope("{}_lookup".format(self.key)):
            initializer = self._table_initializer(key_dtype)
            if self.num_oov_buckets:
                table = StaticVocabularyTable(initializer, self.num_oov_buckets,
                                              lookup_key_dtype=key_dtype)
            else:
                table = StaticHashTable(initializer, self.default_value)
        return table.lookup(sparse)

    @abc.abstractmethod
    def _table_initializer(self, key_dtype: _dt.DType):
        """The initializer filling the table: vocabulary word -> its position."""


def _check_oov(num_oov_buckets: int, default_given: bool, key: str) -> None:
    if num_oov_buckets:
        if default_given:
            raise ValueError("Can't specify both num_oov_buckets and default_value in {}."
                             .format(key))
        if num_oov_buckets < 0:
            raise ValueError("Invalid num_oov_buckets {} in {}.".format(num_oov_buckets, key))


class VocabularyListCategoricalColumn(_VocabularyColumn, collections.namedtuple(
        "VocabularyListCategoricalColumn",
        ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"))):
    """See `categorical_column_with_vocabulary_list`."""

    @property
    def _num_buckets(self) -> int:
        return len(self.vocabulary_list) + self.num_oov_buckets

    def _table_initializer(self, key_dtype):
        words = constant(list(self.vocabulary_list), dtype=key_dtype, name="keys")
        positions = constant(np.arange(len(self.vocabulary_list), dtype=np.int64),
                             name="values")
        return KeyValueTensorInitializer(words, positions, key_dtype, _dt.int64,
                                         name="table_init")


@tf_export("feature_column.categorical_column_with_vocabulary_list")
def categorical_column_with_vocabulary_list(
        key: str, vocabulary_list: Sequence, dtype=None, default_value: int = -1,
        num_oov_buckets: int = 0) -> VocabularyListCategoricalColumn:
    """A categorical column whose id is the value's position in `vocabulary_list`.

    Args:
      key: the feature's key.
      vocabulary_list: the words (strings or integers), without duplicates.
      dtype: the feature's type (default: the vocabulary's); string or integer,
        integer exactly when the vocabulary is.
      default_value: the id of a value outside the vocabulary when `num_oov_buckets`
        is 0 (-1: such values are dropped by embeddings and indicators).
      num_oov_buckets: if > 0, a value outside the vocabulary gets id
        `len(vocabulary_list) + hash(value) % num_oov_buckets`.

    Returns:
      A VocabularyListCategoricalColumn.

    Raises:
      ValueError: an empty vocabulary or one with duplicates, a vocabulary or dtype
        that is neither string nor integer, dtypes that disagree, both
        `num_oov_buckets` and `default_value`, `num_oov_buckets` < 0, or a `key` that
        is not a string.
    """
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError("vocabulary_list {} must be non-empty, column_name: {}"
                         .format(vocabulary_list, key))
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError("Duplicate keys in vocabulary_list {}, column_name: {}"
                         .format(vocabulary_list, key))
    vocabulary_dtype = _dt.as_dtype(np.array(vocabulary_list).dtype)
    _check_oov(num_oov_buckets, default_value != -1, key)
    check_string_or_int(vocabulary_dtype, "column_name: {} vocabulary".format(key))
    if dtype is None:
        dtype = vocabulary_dtype
    else:
        dtype = _dt.as_dtype(dtype)
        if dtype.is_integer != vocabulary_dtype.is_integer:
            raise ValueError("dtype {} and vocabulary dtype {} do not match, column_name: {}"
                             .format(dtype, vocabulary_dtype, key))
    categorical_dtype(dtype, key)
    check_key(key)
    return VocabularyListCategoricalColumn(
        key=key, vocabulary_list=tuple(vocabulary_list), dtype=dtype,
        default_value=default_value, num_oov_buckets=num_oov_buckets)


class VocabularyFileCategoricalColumn(_VocabularyColumn, collections.namedtuple(
        "VocabularyFileCategoricalColumn",
        ("key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
         "default_value", "file_format"))):
    """See `categorical_column_with_vocabulary_file`."""

    @property
    def _num_buckets(self) -> int:
        return self.vocabulary_size + self.num_oov_buckets

    def _table_initializer(self, key_dtype):
        # one word per line; its id is its line number
        return TextFileInitializer(self.vocabulary_file, key_dtype, TextFileIndex.WHOLE_LINE,
                                   _dt.int64, TextFileIndex.LINE_NUMBER,
                                   vocab_size=self.vocabulary_size, delimiter="\t")


@tf_export("feature_column.categorical_column_with_vocabulary_file")
def categorical_column_with_vocabulary_file(
        key: str, vocabulary_file: str, vocabulary_size: Optional[int] = None,
        num_oov_buckets: int = 0, default_value: Optional[int] = None,
        dtype=_dt.string) -> VocabularyFileCategoricalColumn:
    """A categorical column whose id is the line number of the value in a vocabulary
    file (one word per line).

    Args:
      key: the feature's key.
      vocabulary_file: the file's path (local or any path `tf.gfile` opens).
      vocabulary_size: the number of lines used (the file must have at least that
        many); None: the file's number of lines, counted now.
      num_oov_buckets: if > 0, a value outside the vocabulary gets id
        `vocabulary_size + hash(value) % num_oov_buckets`.
      default_value: the id of a value outside the vocabulary when `num_oov_buckets`
        is 0 (None means -1: such values are dropped by embeddings and indicators).
      dtype: string or an integer type (integer words are parsed from the lines).

    Returns:
      A VocabularyFileCategoricalColumn.

    Raises:
      ValueError: no file, a missing file when `vocabulary_size` is None, a size < 1,
        both `num_oov_buckets` and `default_value`, `num_oov_buckets` < 0, a `dtype`
        that is neither string nor integer, or a `key` that is not a string.
      TypeError: a `vocabulary_size` that is a Tensor (not supported).
      NotImplementedError: a GZIP TFRecord vocabulary ("...tfrecord.gz").
    """
    if not vocabulary_file:
        raise ValueError("Missing vocabulary_file in {}.".format(key))
    if vocabulary_file.endswith("tfrecord.gz"):
        raise NotImplementedError(
            "vocabulary_file {}: vocabularies in GZIP TFRecord files are not supported by "
            "tensorweave; use a text file with one word per line".format(vocabulary_file))
    if isinstance(vocabulary_size, _graph.Tensor):
        raise TypeError("vocabulary_size of {} is a Tensor; tensorweave needs the size "
                        "when the column is built (an int, or None to count the lines)"
                        .format(key))
    if vocabulary_size is None:
        if not gfile.Exists(vocabulary_file):
            raise ValueError("vocabulary_file in {} does not exist.".format(key))
        with gfile.GFile(vocabulary_file, mode="rb") as f:
            vocabulary_size = sum(1 for _ in f)
    if vocabulary_size < 1:
        raise ValueError("Invalid vocabulary_size in {}.".format(key))
    _check_oov(num_oov_buckets, default_value is not None, key)
    dtype = categorical_dtype(dtype, key)
    check_key(key)
    return VocabularyFileCategoricalColumn(
        key=key, vocabulary_file=vocabulary_file, vocabulary_size=vocabulary_size,
        num_oov_buckets=num_oov_buckets or 0,
        default_value=-1 if default_value is None else default_value, dtype=dtype,
        file_format=None)


# --- identity -----------------------------------------------------------------------------
class IdentityCategoricalColumn(_KeyedCategoricalColumn, collections.namedtuple(
        "IdentityCategoricalColumn", ("key", "number_buckets", "default_value"))):
    """See `categorical_column_with_identity`."""

    @property
    def _parsed_dtype(self) -> _dt.DType:
        return _dt.int64

    @property
    def _num_buckets(self) -> int:
        return self.number_buckets

    def _to_ids(self, sparse):
        if not sparse.dtype.is_integer:
            raise ValueError("Invalid input, not integer. key: {} dtype: {}"
                             .format(self.key, sparse.dtype))
        values = math_ops.cast(sparse.values, _dt.int64, name="values")
        if self.default_value is not None:
            # ids outside [0, num_buckets) become default_value
            outside = math_binary.logical_or(
                math_binary.less(values, math_ops.cast(0, _dt.int64, name="zero")),
                math_binary.greater_equal(values, math_ops.cast(
                    self.number_buckets, _dt.int64, name="num_buckets")),
                name="out_of_range")
            defaults = array_fill_ops.fill(
                array_ops.shape(values), math_ops.cast(self.default_value, _dt.int64),
                name="default_values")
            values = indexing_select.where_v2(outside, defaults, values)
        return _with_values(sparse, values)


@tf_export("feature_column.categorical_column_with_identity")
def categorical_column_with_identity(key: str, num_buckets: int,
                                     default_value: Optional[int] = None
                                     ) -> IdentityCategoricalColumn:
    """A categorical column whose ids are the (integer) values themselves.

    Args:
      key: the feature's key (an integer feature).
      num_buckets: ids are in [0, num_buckets).
      default_value: the id given to values outside [0, num_buckets); None leaves them
        as they are (an embedding lookup of one then fails at run time, as in TF).

    Returns:
      An IdentityCategoricalColumn.

    Raises:
      ValueError: `num_buckets` < 1, a `default_value` outside [0, num_buckets), or a
        `key` that is not a string.
    """
    if num_buckets < 1:
        raise ValueError("num_buckets {} < 1, column_name {}".format(num_buckets, key))
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError("default_value {} not in range [0, {}), column_name {}"
                         .format(default_value, num_buckets, key))
    check_key(key)
    return IdentityCategoricalColumn(key=key, number_buckets=num_buckets,
                                     default_value=default_value)


# --- weights ------------------------------------------------------------------------------
class WeightedCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "WeightedCategoricalColumn", ("categorical_column", "weight_feature_key", "dtype"))):
    """See `weighted_categorical_column`."""

    @property
    def name(self) -> str:
        return "{}_weighted_by_{}".format(self.categorical_column.name,
                                          self.weight_feature_key)

    @property
    def _parse_example_spec(self):
        spec = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in spec:
            raise ValueError("Parse config {} already exists for {}."
                             .format(spec[self.weight_feature_key], self.weight_feature_key))
        spec[self.weight_feature_key] = VarLenFeature(self.dtype)
        return spec

    @property
    def _num_buckets(self) -> int:
        return self.categorical_column._num_buckets

    def _transform_feature(self, inputs):
        weights = self._sparse_weights(inputs.get(self.weight_feature_key))
        ids = self.categorical_column._get_sparse_tensors(inputs).id_tensor
        return ids, _matching(weights, ids)

    def _sparse_weights(self, weights) -> SparseTensor:
        if weights is None:
            raise ValueError("Missing weights {}.".format(self.weight_feature_key))
        weights = convert_to_tensor_or_sparse_tensor(weights)
        if self.dtype != weights.dtype.base_dtype:
            raise ValueError("Bad dtype, expected {}, but got {}."
                             .format(self.dtype, weights.dtype))
        # a dense weight of 0 marks a missing value, as -1 does for integer ids
        weights = to_sparse_input(weights, ignore_value=0.0)
        if not weights.dtype.is_floating:
            weights = _cast_values(weights, _dt.float32)
        return weights

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        ids, weights = inputs.get(self)
        return IdWeightPair(ids, weights)


def _matching(weights: SparseTensor, ids: SparseTensor) -> SparseTensor:
    """`weights`, checked at run time to hold one value per id (TF's lookups pair them by
    position and fail on a mismatch: ids of -1 are dropped, weights of 0)."""
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.debug.debug_ops import Assert
    n_ids, n_weights = array_ops.size(ids.values), array_ops.size(weights.values)
    check = Assert(math_binary.equal(n_ids, n_weights),
                   ["Number of elements in ids and weights do not match (ids, weights):",
                    n_ids, n_weights])
    values = structure.with_dependencies([check], weights.values)
    return SparseTensor(weights.indices, values, weights.dense_shape)


@tf_export("feature_column.weighted_categorical_column")
def weighted_categorical_column(categorical_column: CategoricalColumn,
                                weight_feature_key: str,
                                dtype=_dt.float32) -> WeightedCategoricalColumn:
    """A categorical column whose ids carry the weights of another feature: value i of
    `weight_feature_key` weighs id i of `categorical_column` (same indices).

    Embeddings combine the weighted embeddings, indicators sum the weights per id, and
    `linear_model` multiplies each id's weight by it.

    Args:
      categorical_column: the column giving the ids.
      weight_feature_key: the key of the weights' feature (dense or sparse; a dense 0
        marks a missing weight).
      dtype: the weights' type, integer or floating (used as float32).

    Returns:
      A WeightedCategoricalColumn.

    Raises:
      ValueError: a `dtype` that is not numeric, or a `categorical_column` that is not
        categorical.
    """
    if dtype is None or not (_dt.as_dtype(dtype).is_integer or
                             _dt.as_dtype(dtype).is_floating):
        raise ValueError("dtype {} is not convertible to float.".format(dtype))
    check_categorical(categorical_column, "weighted_categorical_column")
    return WeightedCategoricalColumn(categorical_column=categorical_column,
                                     weight_feature_key=weight_feature_key,
                                     dtype=_dt.as_dtype(dtype))
