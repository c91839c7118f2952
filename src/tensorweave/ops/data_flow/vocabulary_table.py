"""tf.lookup.StaticVocabularyTable: a string (or integer) to id table whose
out-of-vocabulary keys go to hash buckets after the vocabulary.

The ids of keys in the vocabulary are the table's; any other key gets
`vocab_size + Fingerprint64(key) % num_oov_buckets` (integer keys are hashed as their
decimal strings), the same ids TF gives, since the buckets are TF's
StringToHashBucketFast (ops/string/string_hash_ops.py).
"""
from __future__ import annotations

from typing import Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.ops.data_flow.lookup_ops import StaticHashTable
from tensorweave.ops.string.string_hash_ops import string_to_hash_bucket_fast


@tf_export("lookup.StaticVocabularyTable")
class StaticVocabularyTable:
    """Maps keys to int64 ids: a vocabulary's keys to their ids from `initializer`, every
    other key to one of `num_oov_buckets` buckets numbered after the vocabulary
    (`hash(key) % num_oov_buckets + vocab_size`, FarmHash's Fingerprint64 as TF hashes).

    Args:
      initializer: a KeyValueTensorInitializer or TextFileInitializer with string or
        int64 keys and int64 values; None: every key goes to a bucket.
      num_oov_buckets: the number of buckets, at least 1.
      lookup_key_dtype: the dtype of the keys `lookup` takes (default: the
        initializer's key dtype, or string); an integer type when the keys are int64.
      name: the table's name (default "hash_table", or "hash_bucket" without an
        initializer); lookups are named under "<name>_Lookup".
      experimental_is_anonymous: not supported (NotImplementedError when True).

    Raises:
      ValueError: `num_oov_buckets` below 1.
      TypeError: an initializer of other dtypes, or a lookup_key_dtype that is not string
        or integer.
    """

    def __init__(self, initializer, num_oov_buckets: int,
                 lookup_key_dtype=None, name: Optional[str] = None,
                 experimental_is_anonymous: bool = False):
        if experimental_is_anonymous:
            raise NotImplementedError("StaticVocabularyTable(experimental_is_anonymous=True) "
                                      "is a TF2 eager feature; tensorweave tables are graph "
                                      "resources")
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        self._num_oov_buckets = int(num_oov_buckets)
        self._table = None
        if initializer is not None:
            if initializer.key_dtype not in (_dt.int64, _dt.string):
                raise TypeError("Invalid `key_dtype`, expected one of (tf.int64, tf.string), "
                                "but got %s." % initializer.key_dtype)
            if initializer.value_dtype != _dt.int64:
                raise TypeError("Invalid `value_dtype`, expected %s but got %s."
                                % (_dt.int64, initializer.value_dtype))
            self._table = StaticHashTable(initializer, -1)
            name = name or self._table.name
        self._name = name or "hash_bucket"
        key_dtype = _dt.as_dtype(lookup_key_dtype) if lookup_key_dtype is not None else (
            initializer.key_dtype if initializer is not None else _dt.string)
        if not (key_dtype == _dt.string or key_dtype.is_integer):
            raise TypeError("Invalid `lookup_key_dtype`, expected string or integer, got %s"
                            % key_dtype)
        self._key_dtype = key_dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def key_dtype(self) -> _dt.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> _dt.DType:
        return _dt.int64

    @property
    def resource_handle(self):
        """The vocabulary table's handle (None without an initializer)."""
        return self._table.resource_handle if self._table is not None else None

    @property
    def initializer(self):
        """The op filling the vocabulary (a no-op without an initializer)."""
        if self._table is not None:
            return self._table.initializer
        return apply_op("NoOp", [], name="table_init")

    def size(self, name: Optional[str] = None) -> _graph.Tensor:
        """The number of ids: the vocabulary's size plus the buckets (int64 scalar)."""
        with _graph.name_scope(name, "%s_Size" % self._name,
                               [self.resource_handle] if self._table is not None else []):
            words = self._table.size() if self._table is not None else \
                convert_to_tensor(0, _dt.int64)
            buckets = convert_to_tensor(self._num_oov_buckets, _dt.int64)
            return apply_op("AddV2", [words, buckets], name="add").outputs[0]

    def lookup(self, keys, name: Optional[str] = None):
        """The id of each key (keys: a Tensor or SparseTensor of `key_dtype`).

        Returns:
          An int64 Tensor of `keys`' shape, or a SparseTensor with the same indices.

        Raises:
          TypeError: `keys` not of `key_dtype`.
        """
        from tensorweave.framework.sparse_tensor import SparseTensor
        sparse = keys if isinstance(keys, SparseTensor) else None
        values = sparse.values if sparse is not None else (
            keys if isinstance(keys, _graph.Tensor) else
            convert_to_tensor(keys, self._key_dtype, name="keys"))
        if values.dtype.base_dtype != self._key_dtype:
            raise TypeError("Dtype of argument `keys` must be %s, received: %s"
                            % (self._key_dtype, values.dtype))
        with _graph.name_scope(name, "%s_Lookup" % self._name, [values]):
            if self._key_dtype.is_integer and self._key_dtype != _dt.int64:
                values = apply_op("Cast", [values], {"DstT": _dt.int64}, name="Cast").outputs[0]
            text = values if values.dtype == _dt.string else apply_op(
                "AsString", [values], name="AsString").outputs[0]
            ids = string_to_hash_bucket_fast(text, self._num_oov_buckets, name="hash_bucket")
            if self._table is not None:
                found = self._table.lookup(values)
                buckets = apply_op("AddV2", [ids, self._table.size()], name="Add").outputs[0]
                known = apply_op("NotEqual", [found, self._table.default_value],
                                 name="NotEqual").outputs[0]
                ids = apply_op("SelectV2", [known, found, buckets],
                               name="SelectV2").outputs[0]
        return SparseTensor(sparse.indices, ids, sparse.dense_shape) if sparse is not None \
            else ids

    def __getitem__(self, keys):
        return self.lookup(keys)
