"""tf.data.experimental's lookup tables filled from a dataset: DatasetInitializer,
table_from_dataset and index_table_from_dataset.

The initializer op (InitializeTableFromDataset) reads the whole dataset of (key, value)
pairs when it runs, so a vocabulary can come from any pipeline (files, a map over them)
instead of a tensor or one text file.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.op_builder import apply_op
from tensorweave.framework.registry import kernel, not_differentiable, register_op
from tensorweave.ops.data_flow import lookup_ops
from tensorweave.ops.data_flow.vocabulary_table import StaticVocabularyTable
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import Dataset

register_op("InitializeTableFromDataset", inputs=["table_handle: resource",
                                                  "dataset: variant"],
            attrs={"vocab_size": -1}, stateful=True)
not_differentiable("InitializeTableFromDataset")


@kernel("InitializeTableFromDataset")
def _initialize_from_dataset_kernel(ctx, handle, dataset):
    limit = ctx.attrs["vocab_size"]
    keys, values = [], []
    for key, value in dataset.elements(_pipe.PipelineContext(ctx)):
        if len(keys) == limit:
            break
        keys.append(key)
        values.append(value)
    if 0 <= limit != len(keys):
        raise errors.InvalidArgumentError(
            None, ctx.op, "Invalid vocab_size: the table was declared with %d entries but "
            "the dataset has %d elements" % (limit, len(keys)))
    table = lookup_ops.table_resource(ctx, handle)
    table.initialize(ctx.op, _stacked(keys, table.key_dtype),
                     _stacked(values, table.value_dtype))


def _stacked(items: list, dtype) -> np.ndarray:
    # np.stack, not np.asarray: that would hold 0-d string arrays as elements
    return np.stack(items) if items else np.zeros(0, dtype.as_numpy_dtype)


def _check_pairs(dataset) -> None:
    if not isinstance(dataset, Dataset):
        raise TypeError("`dataset` must be a tf.data.Dataset, got %r" % (dataset,))
    structure = dataset._structure
    if not (isinstance(structure, tuple) and len(structure) == 2 and structure == (0, 0)):
        raise ValueError("The dataset of a table initializer must have elements of two "
                         "scalar tensors, (key, value); got %s" % (dataset.output_types,))
    for shape in dataset._shapes:
        if not shape.is_compatible_with([]):
            raise ValueError("The keys and values of a table initializer's dataset must be "
                             "scalars; got shapes %s" % (dataset.output_shapes,))


@tf_export("data.experimental.DatasetInitializer")
class DatasetInitializer(lookup_ops.TableInitializer):
    """Fills a static table from a dataset of (key, value) scalar pairs, read whole when
    the initializer runs.

    Args:
      dataset: a `tf.data.Dataset` of (key, value) pairs of scalars.
      vocab_size: tensorweave's own argument for `table_from_dataset`: read only the
        first `vocab_size` pairs (the dataset must have them); None: all.

    Raises:
      TypeError: `dataset` is not a Dataset.
      ValueError: its elements are not pairs of scalars.
    """

    def __init__(self, dataset: Dataset, vocab_size: Optional[int] = None):
        _check_pairs(dataset)
        self.dataset = dataset
        self._vocab_size = -1 if vocab_size is None else int(vocab_size)
        super().__init__(*dataset._types)

    def initialize(self, table) -> _graph.Operation:
        """The op filling `table` from the dataset, added to TABLE_INITIALIZERS."""
        self._check_table_dtypes(table)
        with _graph.name_scope(None, "initialize_table_from_dataset",
                               (table.resource_handle,)):
            init = apply_op("InitializeTableFromDataset",
                            [table.resource_handle, self.dataset._variant],
                            {"vocab_size": self._vocab_size},
                            name="InitializeTableFromDataset")
        _graph.add_to_collection(_graph.GraphKeys.TABLE_INITIALIZERS, init)
        return init


def _table(dataset, num_oov_buckets: int, vocab_size, default_value, hasher_spec,
           key_dtype, name):
    if num_oov_buckets < 0:
        raise ValueError("`num_oov_buckets` must be greater than or equal to 0, got %d."
                         % num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError("`vocab_size` must be greater than 0, got %d." % vocab_size)
    hasher = getattr(hasher_spec, "hasher", "fasthash")
    if hasher != "fasthash":
        raise NotImplementedError("table_from_dataset with a %r hasher_spec: tensorweave's "
                                  "out-of-vocabulary buckets hash with fasthash (TF's "
                                  "default)" % (hasher,))
    _check_pairs(dataset)
    key_dtype = _dt.as_dtype(key_dtype)
    keys, values = dataset._types
    if keys != key_dtype:
        raise ValueError("The dataset's keys are %s but `key_dtype` is %s"
                         % (keys.name, key_dtype.name))
    if not (keys == _dt.string or keys.is_integer):
        raise ValueError("The keys of a table from a dataset must be strings or integers, "
                         "got %s" % keys.name)
    with _graph.name_scope(name, "string_to_index"):
        initializer = DatasetInitializer(dataset, vocab_size)
        if num_oov_buckets:
            return StaticVocabularyTable(initializer, num_oov_buckets)
        if default_value is None:
            if values == _dt.string:
                raise ValueError("`default_value` must be specified when creating a table "
                                 "from a dataset that produces values of type %s." % values)
            default_value = -1
        return lookup_ops.StaticHashTable(initializer, default_value)


@tf_export("data.experimental.table_from_dataset")
def table_from_dataset(dataset: Optional[Dataset] = None, num_oov_buckets: int = 0,
                       vocab_size: Optional[int] = None, default_value=None,
                       hasher_spec=None, key_dtype=_dt.string,
                       name: Optional[str] = None):
    """A lookup table from a dataset of (key, value) pairs: a StaticHashTable whose
    missing keys give `default_value`, or with `num_oov_buckets` a
    StaticVocabularyTable whose missing keys go to hash buckets after the table.

    Args:
      dataset: a Dataset of (key, value) scalar pairs.
      num_oov_buckets: buckets for keys not in the dataset (then the values must be
        int64 ids).
      vocab_size: read only the first `vocab_size` pairs; None: all.
      default_value: the value of missing keys without buckets (default -1; required
        for string values).
      hasher_spec: how keys are hashed to buckets; only TF's default (fasthash).
      key_dtype: the keys' dtype, string or an integer type.
      name: the name scope (default "string_to_index").

    Returns:
      The table; its initializer runs with `tf.tables_initializer()`.

    Raises:
      ValueError: a negative `num_oov_buckets`, a `vocab_size` below 1, elements that are
        not pairs of scalars, keys not of `key_dtype`, or string values without a
        `default_value`.
      NotImplementedError: a hasher other than fasthash.
    """
    return _table(dataset, num_oov_buckets, vocab_size, default_value, hasher_spec,
                  key_dtype, name)


@tf_export("data.experimental.index_table_from_dataset")
def index_table_from_dataset(dataset: Optional[Dataset] = None, num_oov_buckets: int = 0,
                             vocab_size: Optional[int] = None, default_value=-1,
                             hasher_spec=None, key_dtype=_dt.string,
                             name: Optional[str] = None):
    """A table of each key of `dataset` (a dataset of scalar keys) to its position,
    as `table_from_dataset` over (key, index) pairs.

    Raises:
      ValueError: as `table_from_dataset`, or a dataset of other than scalar keys.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError("`dataset` must be a tf.data.Dataset, got %r" % (dataset,))
    if dataset._structure != 0:
        raise ValueError("index_table_from_dataset needs a dataset of single keys, got %s"
                         % (dataset.output_types,))
    pairs = Dataset.zip((dataset, Dataset.range(np.iinfo(np.int64).max)))
    return _table(pairs, num_oov_buckets, vocab_size, default_value, hasher_spec,
                  key_dtype, name)
