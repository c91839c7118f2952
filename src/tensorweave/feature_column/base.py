"""The column protocol TF1's `input_layer` and `linear_model` speak, and the argument
checks the column constructors share.

A column is an immutable namedtuple (so two columns built with the same arguments are
equal and hash alike, as in TF) mixed with one of these bases:

  FeatureColumn      name, _parse_example_spec, _transform_feature(builder)
  DenseColumn        + _variable_shape, _get_dense_tensor(builder, ...)  (input_layer)
  CategoricalColumn  + _num_buckets, _get_sparse_tensors(builder, ...)   (ids for
                     embeddings, indicators and linear_model's weighted sums)

The underscored members are TF1's protocol (custom estimators call them); the public
properties (`parse_example_spec`, `variable_shape`, `num_buckets`) are TF's later
spellings of the same things.
"""
from __future__ import annotations

import abc
import collections
from typing import Any, Dict

from tensorweave.framework import dtypes as _dt
from tensorweave.framework.shapes import TensorShape


class FeatureColumn(abc.ABC):
    """A named input of a model: how to parse it and how to turn it into tensors."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The column's name: unique among the columns of one model, the sort key of
        `input_layer` and `linear_model` and their variable scope names."""

    @property
    def _var_scope_name(self) -> str:
        """The default name of the variable scope the column's variables live in."""
        return self.name

    @property
    @abc.abstractmethod
    def _parse_example_spec(self) -> Dict[str, Any]:
        """feature key -> FixedLenFeature / VarLenFeature this column reads."""

    @property
    def parse_example_spec(self) -> Dict[str, Any]:
        return self._parse_example_spec

    @abc.abstractmethod
    def _transform_feature(self, inputs):
        """The column's transformed input, computed once per `_LazyBuilder` (inputs)."""

    # TF orders columns by their repr (used when a set of columns is sorted).
    def __lt__(self, other) -> bool:
        return str(self) < str(other)

    def __gt__(self, other) -> bool:
        return str(self) > str(other)


class DenseColumn(FeatureColumn):
    """A column with a dense float value per example (what `input_layer` takes)."""

    @property
    @abc.abstractmethod
    def _variable_shape(self) -> TensorShape:
        """The shape of one example's value (without the batch dimension)."""

    @property
    def variable_shape(self) -> TensorShape:
        return self._variable_shape

    @abc.abstractmethod
    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        """The float32 Tensor `[batch] + _variable_shape` of this column."""


IdWeightPair = collections.namedtuple("IdWeightPair", ["id_tensor", "weight_tensor"])


class CategoricalColumn(FeatureColumn):
    """A column whose value is a bag of integer ids in [0, _num_buckets)."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def _num_buckets(self) -> int:
        """The number of distinct ids."""

    @property
    def num_buckets(self) -> int:
        return self._num_buckets

    @abc.abstractmethod
    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        """An IdWeightPair: a SparseTensor of int ids `[batch, ...]` and a SparseTensor
        of float weights with the same indices, or None for weight 1."""


# --- argument checks shared by the constructors (TF's errors, word for word) ------------
def check_key(key) -> None:
    """Raises ValueError unless `key` is a string."""
    if not isinstance(key, str):
        raise ValueError("key must be a string. Got: type {}. Given key: {}."
                         .format(type(key), key))


def check_string_or_int(dtype: _dt.DType, prefix: str) -> None:
    """Raises ValueError unless `dtype` is string or an integer type."""
    if dtype != _dt.string and not dtype.is_integer:
        raise ValueError("{} dtype must be string or integer. dtype: {}."
                         .format(prefix, dtype))


def categorical_dtype(dtype, key: str) -> _dt.DType:
    """`dtype` as a DType, checked to be string or integer (the ids' source types)."""
    dtype = _dt.as_dtype(dtype)
    check_string_or_int(dtype, "column_name: {}".format(key))
    return dtype



def check_categorical(column, function: str) -> None:
    """Raises ValueError unless `column` is categorical (`function` needs ids)."""
    if not isinstance(column, CategoricalColumn):
        raise ValueError("{} needs a categorical column (made by a categorical_column_with_* "
                         "function, bucketized_column or weighted_categorical_column). "
                         "Given: {}".format(function, column))
