"""The per-call cache of transformed features (TF1's `_LazyBuilder`), and the conversion
of dense categorical inputs to the SparseTensors the categorical columns work on.

One builder serves one `input_layer` or `linear_model` call, so a feature used by two
columns (say a vocabulary column seen through an embedding and an indicator) is looked
up once: one table, one set of ops.
"""
from __future__ import annotations

from typing import Optional

from tensorweave.feature_column.base import FeatureColumn
from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.sparse_tensor import SparseTensor, \
    convert_to_tensor_or_sparse_tensor
from tensorweave.ops.array import array_fill_ops, array_join_ops, array_ops
from tensorweave.ops.debug import check_ops
from tensorweave.ops.indexing import indexing_gather, indexing_select
from tensorweave.ops.math import math_binary, math_ops
from tensorweave.ops.sparse.sparse_reshape_ops import sparse_reshape


class _LazyBuilder:
    """Maps a feature key (str) to its raw tensor and a column to its transformed
    tensor, computing each once.

    Args:
      features: feature key (or an already transformed column) -> Tensor, SparseTensor
        or a value convertible to one.
    """

    def __init__(self, features):
        self._features = dict(features)
        self._cache = {}

    def get(self, key):
        """The tensor of a raw feature (`key` a str) or of a column's transformation.

        Raises:
          ValueError: a feature missing from `features`, a raw feature of rank 0, or a
            column whose transformation gives nothing.
          TypeError: `key` is neither a str nor a column.
        """
        if key in self._cache:
            return self._cache[key]
        if key in self._features:
            value = _raw_feature(key, self._features[key])
        elif isinstance(key, str):
            raise ValueError("Feature {} is not in features dictionary.".format(key))
        elif not isinstance(key, FeatureColumn):
            raise TypeError('"key" must be either a "str" or "_FeatureColumn". '
                            "Provided: {}".format(key))
        else:
            value = key._transform_feature(self)
            if value is None:
                raise ValueError("Column {} is not supported.".format(key.name))
        self._cache[key] = value
        return value


def _raw_feature(key, raw):
    """A raw feature as a Tensor or SparseTensor of rank >= 2: rank 1 (one value per
    example) gains a trailing dimension of 1; rank 0 is an error."""
    feature = convert_to_tensor_or_sparse_tensor(raw)
    sparse = isinstance(feature, SparseTensor)
    message = "Feature (key: {}) cannot have rank 0. Given: {}".format(key, feature)
    rank = (feature.dense_shape.get_shape()[0].value if sparse
            else feature.get_shape().ndims)
    if rank == 0:
        raise ValueError(message)
    if rank == 1:
        if sparse:
            return sparse_reshape(feature, array_join_ops.stack(
                [feature.dense_shape[0], math_ops.cast(1, _dt.int64)]))
        return array_ops.expand_dims(feature, -1)
    if rank is not None:
        return feature
    # Unknown rank: the same at run time, a "1" appended to the shape of rank 1.
    shape = feature.dense_shape if sparse else array_ops.shape(feature)
    dynamic_rank = array_ops.size(shape)
    with _graph.control_dependencies([check_ops.assert_positive(dynamic_rank,
                                                                message=message)]):
        is_vector = math_ops.cast(math_binary.equal(dynamic_rank, 1), _dt.int32)
        extra = array_fill_ops.fill(array_ops.reshape(is_vector, [1]),
                                    math_ops.cast(1, shape.dtype))
        new_shape = array_join_ops.concat([shape, extra], 0)
        if sparse:
            return sparse_reshape(feature, new_shape)
        return array_ops.reshape(feature, new_shape)


def to_sparse_input(input_tensor, ignore_value=None) -> SparseTensor:
    """`input_tensor` as a SparseTensor: a SparseTensor as it is, a dense Tensor without
    its cells equal to `ignore_value` (by default "" for strings and -1 for integers,
    TF's marks of a missing value).
    """
    input_tensor = convert_to_tensor_or_sparse_tensor(input_tensor)
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    with _graph.name_scope(None, "to_sparse_input", [input_tensor]):
        dtype = input_tensor.dtype
        if ignore_value is None:
            ignore_value = _default_ignore_value(dtype)
        ignore = math_ops.cast(ignore_value, dtype, name="ignore_value")
        indices = indexing_select.where(math_binary.not_equal(input_tensor, ignore),
                                        name="indices")
        return SparseTensor(
            indices=indices,
            values=indexing_gather.gather_nd(input_tensor, indices, name="values"),
            dense_shape=array_ops.shape(input_tensor, out_type=_dt.int64,
                                        name="dense_shape"))


def _default_ignore_value(dtype: _dt.DType) -> Optional[object]:
    if dtype == _dt.string:
        return ""
    if dtype.is_integer:
        return -1
    return dtype.as_numpy_dtype()
