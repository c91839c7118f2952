"""TF1's two consumers of feature columns: `input_layer` (the dense columns'
values side by side, the input of a network) and `linear_model` (a weighted sum of every
column plus a bias).

Both visit the columns sorted by name and make each column's variables in a variable
scope named after it, so the variables get TF1's names ("input_layer/<column>/...",
"linear_model/<column>/weights", "linear_model/bias_weights") and TF1 checkpoints
restore into them.
"""
from __future__ import annotations

import collections.abc
import re
from typing import Dict, Iterable, List, Optional

from tensorweave.feature_column.base import CategoricalColumn, DenseColumn, FeatureColumn
from tensorweave.feature_column.builder import _LazyBuilder
from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor
from tensorweave.ops.array import array_join_ops, array_ops
from tensorweave.ops.math import math_ops
from tensorweave.ops.math.matmul_ops import matmul
from tensorweave.ops.nn.nn_softmax import bias_add
from tensorweave.ops.nn.sampled_loss_ops import safe_embedding_lookup_sparse
from tensorweave.ops.sparse.sparse_reshape_ops import sparse_reshape
from tensorweave.ops.state.init_ops import zeros_initializer
from tensorweave.ops.state.variable_scope import get_variable, variable_scope


@tf_export("feature_column.input_layer")
def input_layer(features: Dict, feature_columns: Iterable[DenseColumn],
                weight_collections: Optional[List[str]] = None, trainable: bool = True,
                cols_to_vars: Optional[Dict] = None,
                cols_to_output_tensors: Optional[Dict] = None) -> Tensor:
    """The dense input of a model: each dense column's value, reshaped to
    `[batch, -1]`, concatenated in the order of the columns' names.

    Args:
      features: feature key -> Tensor or SparseTensor (the output of
        `tf.parse_example` with `make_parse_example_spec(feature_columns)`, or any
        tensors); a feature of rank 1 is one value per example.
      feature_columns: the dense columns (numeric, bucketized, indicator, embedding);
        wrap categorical columns in `embedding_column` or `indicator_column`.
      weight_collections: collections the columns' variables are added to, besides
        GLOBAL_VARIABLES and MODEL_VARIABLES.
      trainable: whether the variables are added to TRAINABLE_VARIABLES.
      cols_to_vars: if a dict, filled with column -> list of its variables.
      cols_to_output_tensors: if a dict, filled with column -> its `[batch, -1]` tensor.

    Returns:
      A float32 Tensor `[batch, sum of the columns' widths]`, in scope "input_layer".

    Raises:
      ValueError: a column that is not dense, no columns, two columns with one name, a
        feature missing or of rank 0, or columns whose static batch sizes differ.
    """
    columns = _normalize_feature_columns(feature_columns)
    for column in columns:
        if not isinstance(column, DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap "
                             "a categorical column with an embedding_column or "
                             "indicator_column. Given: {}".format(column))
    weight_collections = _with_model_collections(weight_collections)
    with variable_scope(None, default_name="input_layer", values=list(features.values())):
        builder = _LazyBuilder(features)
        ordered = sorted(columns, key=lambda c: c.name)
        outputs = []
        for column in ordered:
            with variable_scope(None, default_name=column._var_scope_name) as scope:
                tensor = column._get_dense_tensor(builder,
                                                  weight_collections=weight_collections,
                                                  trainable=trainable)
                output = _flatten(tensor, column._variable_shape.num_elements())
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = _variables_in(scope)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        _verify_static_batch_size_equality(outputs, ordered)
        return array_join_ops.concat(outputs, 1)


@tf_export("feature_column.linear_model")
def linear_model(features: Dict, feature_columns: Iterable[FeatureColumn], units: int = 1,
                 sparse_combiner: str = "sum",
                 weight_collections: Optional[List[str]] = None, trainable: bool = True,
                 cols_to_vars: Optional[Dict] = None) -> Tensor:
    """A linear prediction: the sum over columns of their weighted sums, plus a bias.

    A dense column's value (flattened) is multiplied by its "weights" `[width,
    units]`; a categorical column's ids select rows of its "weights" `[num_buckets,
    units]`, combined per example by `sparse_combiner` (as if the column were an
    indicator column, with the combiner normalizing it). All weights and the bias
    ("bias_weights", `[units]`) start at zero.

    Args:
      features: feature key -> Tensor or SparseTensor (see `input_layer`).
      feature_columns: dense and categorical columns.
      units: the width of the output.
      sparse_combiner: "sum" (default), "mean" or "sqrtn": how the rows of a
        categorical column's ids in one example combine.
      weight_collections: collections the variables are added to, besides
        GLOBAL_VARIABLES and MODEL_VARIABLES.
      trainable: whether the variables are added to TRAINABLE_VARIABLES.
      cols_to_vars: if a dict, filled with column -> list of its variables, and
        "bias" -> [bias variable].

    Returns:
      A float32 Tensor `[batch, units]`.

    Raises:
      ValueError: no columns, two columns with one name, a column that is neither
        dense nor categorical, a missing feature, an unknown `sparse_combiner` (with a
        categorical column), or columns whose static batch sizes differ.
    """
    # TF1 takes the model's scope name, then one name per column, in the caller's scope
    # (so a second linear_model names its column scopes "<column>_1"); variables live in
    # "<model scope>/<column scope>".
    with variable_scope(None, default_name="linear_model") as model_scope:
        pass
    columns = _normalize_feature_columns(feature_columns)
    weight_collections = _with_model_collections(weight_collections)
    scope_names = {}
    for column in sorted(columns, key=lambda c: c.name):
        with variable_scope(None, default_name=column._var_scope_name) as scope:
            scope_names[column] = scope.name.rsplit("/", 1)[-1]
    for column in columns:
        if not isinstance(column, (DenseColumn, CategoricalColumn)):
            raise ValueError("Items of feature_columns must be either a _DenseColumn or "
                             "_CategoricalColumn. Given: {}".format(column))
    found_vars = {}
    # ops go in "<re-entered scope>/<model name>/...", as TF's linear model layer names
    # them ("linear_model_1/linear_model/weighted_sum")
    with variable_scope(model_scope), \
            _graph.name_scope(model_scope.name.rsplit("/", 1)[-1]):
        builder = _LazyBuilder(features)
        ordered = sorted(columns, key=lambda c: scope_names[c])
        weighted_sums = []
        for column in ordered:
            with variable_scope(scope_names[column]) as scope:
                weighted_sums.append(_weighted_sum(column, builder, units, sparse_combiner,
                                                   weight_collections, trainable))
            found_vars[column] = _variables_in(scope)
        _verify_static_batch_size_equality(weighted_sums, ordered)
        no_bias = math_ops.add_n(weighted_sums, name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units], initializer=zeros_initializer(),
                            trainable=trainable, collections=weight_collections)
        predictions = bias_add(no_bias, bias, name="weighted_sum")
    if cols_to_vars is not None:
        cols_to_vars.update(found_vars)
        cols_to_vars["bias"] = [bias]
    return predictions


def _weighted_sum(column, builder, units: int, sparse_combiner: str, weight_collections,
                  trainable: bool) -> Tensor:
    """One column's contribution to linear_model, `[batch, units]`."""
    categorical = isinstance(column, CategoricalColumn)  # bucketized columns are both
    rows = column._num_buckets if categorical else column._variable_shape.num_elements()
    weights = get_variable("weights", shape=[rows, units], initializer=zeros_initializer(),
                           trainable=trainable, collections=weight_collections)
    if not categorical:
        value = column._get_dense_tensor(builder, weight_collections=weight_collections,
                                         trainable=trainable)
        return matmul(_flatten(value, rows), weights, name="weighted_sum")
    ids, id_weights = column._get_sparse_tensors(builder,
                                                 weight_collections=weight_collections,
                                                 trainable=trainable)
    # an indicator's dot product with the weights is the sum of the ids' rows
    return safe_embedding_lookup_sparse(weights, _to_2d(ids),
                                        sparse_weights=_to_2d(id_weights),
                                        combiner=sparse_combiner, name="weighted_sum")


def _to_2d(sparse):
    """`[batch, -1]` view of a SparseTensor (all of an example's ids in one row)."""
    if sparse is None:
        return None
    batch_size = sparse.dense_shape[0]
    return sparse_reshape(sparse, array_join_ops.stack(
        [batch_size, math_ops.cast(-1, _dt.int64)]))


def _flatten(tensor: Tensor, width: int) -> Tensor:
    return array_ops.reshape(tensor, (array_ops.shape(tensor)[0], width))


def _with_model_collections(weight_collections) -> List[str]:
    collections = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in collections:
            collections.append(key)
    return collections


def _variables_in(scope) -> list:
    """The global variables under the variable scope `scope` (TF matches the scope's
    name as a prefix; the "/" keeps "a" from matching "a_embedding")."""
    return _graph.get_collection(GraphKeys.GLOBAL_VARIABLES,
                                 scope=re.escape(scope.name + "/"))


def _normalize_feature_columns(feature_columns) -> list:
    """The columns as a list, checked: columns only, at least one, names unique."""
    if isinstance(feature_columns, FeatureColumn):
        return [feature_columns]
    if isinstance(feature_columns, collections.abc.Mapping):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    columns = list(feature_columns)
    for column in columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError("Items of feature_columns must be a _FeatureColumn. Given "
                             "(type {}): {}.".format(type(column), column))
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    by_name = {}
    for column in columns:
        if column.name in by_name:
            raise ValueError(
                "Duplicate feature column name found for columns: {} and {}. This usually "
                "means that these columns refer to same base feature. Either one must be "
                "discarded or a duplicated but renamed item must be inserted in features "
                "dict.".format(column, by_name[column.name]))
        by_name[column.name] = column
    return columns


def _verify_static_batch_size_equality(tensors: list, columns: list) -> None:
    """Raises ValueError if two of `tensors` have different known batch sizes."""
    first = None
    for tensor, column in zip(tensors, columns):
        size = tensor.shape.dims[0] if tensor.shape.dims else None
        if size is None or size.value is None:
            continue
        if first is None:
            first = (size, column)
        elif not first[0].is_compatible_with(size):
            raise ValueError("Batch size (first dimension) of each feature must be same. "
                             "Batch size of columns ({}, {}): ({}, {})"
                             .format(first[1].name, column.name, first[0], size))
