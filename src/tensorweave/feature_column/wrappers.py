"""The dense columns made from a categorical column: `indicator_column` (multi-hot
counts), `embedding_column` and `shared_embedding_columns` (combined rows of a trained
embedding table).

Variable names are TF1's, so TF1 checkpoints restore: an embedding table is
"embedding_weights" in the column's variable scope ("input_layer/<name>/..." under
`input_layer`), and columns made together by `shared_embedding_columns` use one table
in the scope named by their collection ("<sorted names joined by _>_shared_embedding").
"""
from __future__ import annotations

import abc
import collections
import math
from typing import Callable, List, Optional, Sequence

from tensorweave.feature_column.base import CategoricalColumn, DenseColumn, \
    check_categorical
from tensorweave.feature_column.categorical_columns import WeightedCategoricalColumn
from tensorweave.feature_column.sequence_columns import check_not_sequence
from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_util import constant_value_as_shape
from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.indexing.indexing_gather import scatter_nd
from tensorweave.ops.math import math_binary, math_ops
from tensorweave.ops.nn.sampled_loss_ops import embedding_lookup_sparse, \
    safe_embedding_lookup_sparse
from tensorweave.ops.sparse.sparse_select_ops import sparse_retain
from tensorweave.ops.state.init_ops import TruncatedNormal
from tensorweave.ops.state.variable_scope import get_variable
from tensorweave.train.warm_starting import init_from_checkpoint


# --- indicator ----------------------------------------------------------------------------
class IndicatorColumn(DenseColumn, collections.namedtuple(
        "IndicatorColumn", ("categorical_column",))):
    """See `indicator_column`."""

    @property
    def name(self) -> str:
        return "{}_indicator".format(self.categorical_column.name)

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        ids, weights = self.categorical_column._get_sparse_tensors(inputs)
        return multi_hot(ids, weights, self.categorical_column._num_buckets)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([1, self.categorical_column._num_buckets])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        check_not_sequence(self.categorical_column, "indicator_column", self.name)
        return inputs.get(self)


def multi_hot(ids, weights, size: int):
    """Per row of the SparseTensor `ids`, a float32 vector of `size` holding at id k
    the sum of the weights of k in the row (its count when `weights` is None).

    Ids outside [0, size) are dropped (the -1 of values missing from a vocabulary).
    """
    with _graph.name_scope(None, "multi_hot", [ids.values]):
        values = math_ops.cast(ids.values, _dt.int64)
        inside = math_binary.logical_and(
            math_binary.greater_equal(values, math_ops.cast(0, _dt.int64)),
            math_binary.less(values, math_ops.cast(size, _dt.int64)))
        kept = sparse_retain(SparseTensor(ids.indices, values, ids.dense_shape), inside)
        amounts = (sparse_retain(weights, inside).values if weights is not None
                   else array_fill_ops.ones_like(kept.values, dtype=_dt.float32))
        # the row's index (all but the last dimension), then the id
        indices = array_join_ops.concat(
            [kept.indices[:, :-1], array_ops.expand_dims(kept.values, 1)], 1)
        shape = array_join_ops.concat(
            [kept.dense_shape[:-1], constant([size], dtype=_dt.int64)], 0)
        result = scatter_nd(indices, amounts, shape)
        result.set_shape(_known_outer_shape(ids).concatenate([size]))
        return result


def _known_outer_shape(sparse) -> TensorShape:
    """What is known at build time of the dense shape of `sparse` without its last
    dimension (the examples' shape: a batch size when the input's shape is static)."""
    shape = constant_value_as_shape(sparse.dense_shape)
    return shape[:-1] if shape.ndims else TensorShape(None)


@tf_export("feature_column.indicator_column")
def indicator_column(categorical_column: CategoricalColumn) -> IndicatorColumn:
    """A dense column with one slot per id of `categorical_column`: the number of
    times the id occurs in the example (the sum of its weights for a weighted column).

    Args:
      categorical_column: a categorical column.

    Returns:
      An IndicatorColumn.

    Raises:
      ValueError: `categorical_column` is not categorical.
    """
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError("Unsupported input type. Input must be a CategoricalColumn. "
                         "Given: {}".format(categorical_column))
    return IndicatorColumn(categorical_column)


# --- embeddings ---------------------------------------------------------------------------
class _Embedding(DenseColumn):
    """What an embedding column and a shared one have in common: everything except
    where the table comes from (`_table`)."""

    _NAME_SUFFIX = ""

    @property
    def name(self) -> str:
        return "{}{}".format(self.categorical_column.name, self._NAME_SUFFIX)

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([self.dimension])

    @property
    def _table_shape(self) -> tuple:
        return (self.categorical_column._num_buckets, self.dimension)

    def _lookup(self, id_weight_pair, table):
        """The rows of `table` of each example's ids, combined by `combiner`."""
        if self.ckpt_to_load_from is not None:
            init_from_checkpoint(self.ckpt_to_load_from, {self.tensor_name_in_ckpt: table})
        ids, weights = id_weight_pair
        rank = ids.dense_shape.get_shape()[0].value
        if not self.use_safe_embedding_lookup and rank is not None and rank <= 2:
            return embedding_lookup_sparse(table, ids, weights, partition_strategy="div",
                                           name="%s_weights" % self.name,
                                           combiner=self.combiner, max_norm=self.max_norm)
        # the safe lookup drops negative ids and gives empty rows zeros: one row per
        # example (the plain lookup stops at the last example with ids)
        result = safe_embedding_lookup_sparse(table, ids, weights, combiner=self.combiner,
                                              name="%s_weights" % self.name,
                                              max_norm=self.max_norm)
        result.set_shape(_known_outer_shape(ids).concatenate([self.dimension]))
        return result

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        check_not_sequence(self.categorical_column, "embedding_column", self.name)
        id_weight_pair = self.categorical_column._get_sparse_tensors(
            inputs, weight_collections=weight_collections, trainable=trainable)
        table = self._table(weight_collections, trainable)
        return self._lookup(id_weight_pair, table)

    @abc.abstractmethod
    def _table(self, weight_collections, trainable):
        """The embedding table, `_table_shape` float32: made, or found."""


class EmbeddingColumn(_Embedding, collections.namedtuple("EmbeddingColumn", (
        "categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from",
        "tensor_name_in_ckpt", "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """See `embedding_column`."""

    _NAME_SUFFIX = "_embedding"

    def _table(self, weight_collections, trainable):
        if weight_collections and _graph.GraphKeys.GLOBAL_VARIABLES not in weight_collections:
            weight_collections.append(_graph.GraphKeys.GLOBAL_VARIABLES)
        return get_variable("embedding_weights", shape=self._table_shape, dtype=_dt.float32,
                            initializer=self.initializer,
                            trainable=self.trainable and trainable,
                            collections=weight_collections)


def _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt, initializer,
                          initializer_error: str) -> Callable:
    """The checks embedding_column and shared_embedding_columns share; returns the
    initializer (TF's default: truncated normal, stddev 1/sqrt(dimension))."""
    if dimension is None or dimension < 1:
        raise ValueError("Invalid dimension {}.".format(dimension))
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` "
                         "or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError(initializer_error)
    if initializer is None:
        initializer = TruncatedNormal(mean=0.0, stddev=1. / math.sqrt(dimension))
    return initializer


@tf_export("feature_column.embedding_column")
def embedding_column(categorical_column: CategoricalColumn, dimension: int,
                     combiner: str = "mean", initializer: Optional[Callable] = None,
                     ckpt_to_load_from: Optional[str] = None,
                     tensor_name_in_ckpt: Optional[str] = None,
                     max_norm: Optional[float] = None, trainable: bool = True,
                     use_safe_embedding_lookup: bool = True) -> EmbeddingColumn:
    """A dense column: the combined rows of a trained table (`[num_buckets, dimension]`,
    variable "embedding_weights") for the ids of `categorical_column`.

    Args:
      categorical_column: the column giving the ids (and, if weighted, their weights).
      dimension: the width of a row, at least 1.
      combiner: how the rows of one example combine: "mean" (weighted mean), "sum" or
        "sqrtn" (weighted sum over the root of the sum of squared weights).
      initializer: the table's initializer; default truncated normal with mean 0 and
        stddev 1/sqrt(dimension).
      ckpt_to_load_from, tensor_name_in_ckpt: a checkpoint and the name of a tensor in
        it to initialize the table from (both or neither).
      max_norm: if set, rows are scaled down to this L2 norm before combining.
      trainable: whether the table is trained.
      use_safe_embedding_lookup: True drops invalid ids and gives examples without ids
        zeros (TF's safe lookup); False uses the plain lookup on 2-D ids.

    Returns:
      An EmbeddingColumn.

    Raises:
      ValueError: `dimension` < 1, only one of the checkpoint arguments, an
        initializer that is not callable, or a column that is not categorical. An
        unknown `combiner` raises ValueError when the column is used.
    """
    initializer = _check_embedding_args(
        dimension, ckpt_to_load_from, tensor_name_in_ckpt, initializer,
        "initializer must be callable if specified. Embedding of column_name: {}"
        .format(getattr(categorical_column, "name", categorical_column)))
    check_categorical(categorical_column, "embedding_column")
    return EmbeddingColumn(
        categorical_column=categorical_column, dimension=dimension, combiner=combiner,
        initializer=initializer, ckpt_to_load_from=ckpt_to_load_from,
        tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm, trainable=trainable,
        use_safe_embedding_lookup=use_safe_embedding_lookup)


# --- shared embeddings --------------------------------------------------------------------
class _SharedEmbeddingColumn(_Embedding, collections.namedtuple("_SharedEmbeddingColumn", (
        "categorical_column", "dimension", "combiner", "initializer",
        "shared_embedding_collection_name", "ckpt_to_load_from", "tensor_name_in_ckpt",
        "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """See `shared_embedding_columns`. The table is the one variable in the graph
    collection `shared_embedding_collection_name`, made by the first column used."""

    _NAME_SUFFIX = "_shared_embedding"

    @property
    def _var_scope_name(self) -> str:
        # all the columns' scopes start with the collection's name, so the table made by
        # the first one is named "<collection name>/embedding_weights"
        return self.shared_embedding_collection_name

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        with _graph.name_scope(None, default_name=self.name):
            return super()._get_dense_tensor(inputs, weight_collections, trainable)

    def _table(self, weight_collections, trainable):
        collection = self.shared_embedding_collection_name
        shared = _graph.get_collection(collection)
        if not shared:
            table = get_variable("embedding_weights", shape=self._table_shape,
                                 dtype=_dt.float32, initializer=self.initializer,
                                 trainable=self.trainable and trainable,
                                 collections=weight_collections)
            _graph.add_to_collection(collection, table)
            return table
        fixes = ("Suggested fix A: Choose a unique name for this collection. Suggested fix "
                 "B: Do not add any variables to this collection. The feature_column "
                 "library already adds a variable under the hood.")
        if len(shared) > 1:
            raise ValueError("Collection {} can only contain one variable. {}"
                             .format(shared, fixes))
        table = shared[0]
        if table.get_shape() != self._table_shape:
            raise ValueError("Shared embedding collection {} contains variable {} of "
                             "unexpected shape {}. Expected shape is {}. {}".format(
                                 collection, table.name, table.get_shape(),
                                 self._table_shape, fixes))
        return table


def _unweighted_type(column) -> type:
    while isinstance(column, WeightedCategoricalColumn):
        column = column.categorical_column
    return type(column)


@tf_export("feature_column.shared_embedding_columns")
def shared_embedding_columns(categorical_columns: Sequence[CategoricalColumn],
                             dimension: int, combiner: str = "mean",
                             initializer: Optional[Callable] = None,
                             shared_embedding_collection_name: Optional[str] = None,
                             ckpt_to_load_from: Optional[str] = None,
                             tensor_name_in_ckpt: Optional[str] = None,
                             max_norm: Optional[float] = None, trainable: bool = True,
                             use_safe_embedding_lookup: bool = True
                             ) -> List[_SharedEmbeddingColumn]:
    """Embedding columns, one per categorical column, that share one table.

    The columns must be of one kind (weighted or not) and have the same number of
    buckets. Arguments are those of `embedding_column`, plus:

    Args:
      categorical_columns: the categorical columns.
      shared_embedding_collection_name: the graph collection holding the table, also the
        name of its variable scope; default: the columns' names, sorted, joined by "_",
        followed by "_shared_embedding".

    Returns:
      A list of columns, in the order of `categorical_columns`.

    Raises:
      ValueError: the errors of `embedding_column`, no columns, a column that is not
        categorical, or columns of different kinds or numbers of buckets.
    """
    initializer = _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt,
                                        initializer,
                                        "initializer must be callable if specified.")
    categorical_columns = list(categorical_columns)
    if not categorical_columns:
        raise ValueError("categorical_columns must not be empty.")
    for column in categorical_columns:
        if not isinstance(column, CategoricalColumn):
            raise ValueError("All categorical_columns must be subclasses of "
                             "_CategoricalColumn. Given: {}, of type: {}"
                             .format(column, type(column)))
    ordered = sorted(categorical_columns, key=lambda c: c.name)
    first, kind = ordered[0], _unweighted_type(ordered[0])
    for column in ordered[1:]:
        if not issubclass(_unweighted_type(column), kind):
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same "
                "type, or be weighted_categorical_column or sequence column of the same "
                "type. Given column: {} of type: {} does not match given column: {} of "
                "type: {}".format(first, kind, column, _unweighted_type(column)))
        if column._num_buckets != first._num_buckets:
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same "
                "number of buckets. Given column: {} with buckets: {} does  not match "
                "column: {} with buckets: {}".format(first, first._num_buckets, column,
                                                     column._num_buckets))
    if not shared_embedding_collection_name:
        shared_embedding_collection_name = "_".join(c.name for c in ordered) + \
            "_shared_embedding"
    return [_SharedEmbeddingColumn(
        categorical_column=column, dimension=dimension, combiner=combiner,
        initializer=initializer,
        shared_embedding_collection_name=shared_embedding_collection_name,
        ckpt_to_load_from=ckpt_to_load_from, tensor_name_in_ckpt=tensor_name_in_ckpt,
        max_norm=max_norm, trainable=trainable,
        use_safe_embedding_lookup=use_safe_embedding_lookup)
        for column in categorical_columns]
