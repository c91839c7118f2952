"""crossed_column: the hashed cross of several features, a categorical column whose ids
are TF's `sparse_cross_hashed` buckets of every combination of one value per key.

A string key crosses the raw feature (a dense input keeps its "" and -1 cells, as TF's
does); a categorical key crosses its ids; a crossed key contributes its own keys. The
ids equal TF's: the cross is the same FarmHash fold, over the inputs in the same order
(the op takes sparse inputs before dense ones).
"""
from __future__ import annotations

import collections
from typing import List, Optional, Sequence

from tensorweave.feature_column.base import CategoricalColumn, IdWeightPair
from tensorweave.feature_column.categorical_columns import HashedCategoricalColumn
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.io.parsing_ops import VarLenFeature
from tensorweave.ops.sparse.sparse_cross_ops import sparse_cross_hashed
from tensorweave.framework import dtypes as _dt


class CrossedColumn(CategoricalColumn, collections.namedtuple(
        "CrossedColumn", ("keys", "hash_bucket_size", "hash_key"))):
    """See `crossed_column`."""

    @property
    def name(self) -> str:
        return "_X_".join(sorted(k if isinstance(k, str) else k.name
                                 for k in _leaf_keys(self)))

    @property
    def _parse_example_spec(self):
        spec = {}
        for key in self.keys:
            if isinstance(key, str):
                spec[key] = VarLenFeature(_dt.string)
            else:
                spec.update(key._parse_example_spec)
        return spec

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _transform_feature(self, inputs):
        crossed = []
        for key in _leaf_keys(self):
            if isinstance(key, str):
                crossed.append(inputs.get(key))
                continue
            ids = key._get_sparse_tensors(inputs)
            if ids.weight_tensor is not None:
                raise ValueError("crossed_column does not support weight_tensor, but the "
                                 "given column populates weight_tensor. Given column: {}"
                                 .format(key.name))
            crossed.append(ids.id_tensor)
        return sparse_cross_hashed(crossed, num_buckets=self.hash_bucket_size,
                                   hash_key=self.hash_key)

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return IdWeightPair(inputs.get(self), None)


def _leaf_keys(column: CrossedColumn) -> List:
    leaves = []
    for key in column.keys:
        if isinstance(key, CrossedColumn):
            leaves.extend(_leaf_keys(key))
        else:
            leaves.append(key)
    return leaves


@tf_export("feature_column.crossed_column")
def crossed_column(keys: Sequence, hash_bucket_size: int,
                   hash_key: Optional[int] = None) -> CrossedColumn:
    """A categorical column of the crosses of `keys`: each example's ids are the hashes,
    modulo `hash_bucket_size`, of every combination of one value of each key (TF's
    `sparse_cross_hashed`, so the ids equal TF's).

    Args:
      keys: two or more feature keys (strings) and categorical columns (vocabulary,
        identity, bucketized or crossed columns; not hashed ones).
      hash_bucket_size: the number of ids, at least 1.
      hash_key: the seed of the fold (default TF's).

    Returns:
      A CrossedColumn.

    Raises:
      ValueError: fewer than two keys, `hash_bucket_size` missing or < 1, a hashed
        categorical column among the keys, or a key of another kind.
    """
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be > 1. hash_bucket_size: {}"
                         .format(hash_bucket_size))
    if not keys or len(keys) < 2:
        raise ValueError("keys must be a list with length > 1. Given: {}".format(keys))
    for key in keys:
        if isinstance(key, str):
            continue
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for "
                             "crossing. Hashing before crossing will increase probability "
                             "of collision. Instead, use the feature name as a string. "
                             "Given: {}".format(key))
        if not isinstance(key, CategoricalColumn):
            raise ValueError("Unsupported key type. All keys must be either string, or "
                             "categorical column except HashedCategoricalColumn. Given: {}"
                             .format(key))
    return CrossedColumn(keys=tuple(keys), hash_bucket_size=hash_bucket_size,
                         hash_key=hash_key)
