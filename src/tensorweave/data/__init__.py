"""tf.data in graph mode (TF1 1.4-1.15 programs): datasets as ops whose values describe a
pipeline, iterators as device resources.

  dataset_ops.py   Dataset (sources and transformations), element structures,
                   functions traced for map/filter
  dataset_methods.py  Dataset's methods that forward to a tf.data.experimental twin
                   (scan, unique, group_by_window, cardinality, counter, ...)
  file_datasets.py TFRecordDataset, FixedLengthRecordDataset, TextLineDataset
  iterator_ops.py  Iterator, make_one_shot_iterator, make_initializable_iterator
  iterator_checkpoint.py  make_saveable_from_iterator: an iterator's position in
                   a Saver's checkpoints (a pass is a function of its seed: restores
                   replay it)
  experimental.py  tf.data.experimental: transformations for Dataset.apply, combinators,
                   get_single_element, TFRecordWriter
  grouping.py      tf.data.experimental's keyed grouping: group_by_window,
                   group_by_reducer, Reducer
  readers.py       tf.data.experimental's file readers: CsvDataset, make_csv_dataset,
                   make_batched_features_dataset
  generators.py    Dataset.from_generator
  generator_specs.py  from_generator's composite output_signature (tf.SparseTensorSpec,
                   tf.RaggedTensorSpec)
  rebatching.py    Dataset.rebatch (one size or a list of sizes in turn)
  sparse_batching.py  tf.data.experimental.dense_to_sparse_batch (Dataset.sparse_batch)
  sources.py       tf.data.experimental.from_list and RandomDataset
  resampling.py    tf.data.experimental.rejection_resample
  transforms.py    Dataset.shard and Dataset.reduce
  options.py       tf.data.Options (Dataset.with_options) and its option tree
  cardinality.py   tf.data.experimental.cardinality and assert_cardinality
  optional_ops.py  tf.data.experimental.Optional (get_next_as_optional is an iterator's)
  structure.py     tf.data.experimental.get_structure (a dataset's or iterator's
                   element_spec) and TF 1.x's TensorStructure constructors of specs
  dataset_spec.py  tf.data.DatasetSpec (also the structure leaf of a component that is
                   a dataset)
  lookup_tables.py lookup tables filled from datasets (DatasetInitializer,
                   table_from_dataset, index_table_from_dataset)
  file_cache.py    Dataset.cache(filename)
  parallel_map.py  Dataset.map with num_parallel_calls (threads, input order)
  prefetch.py      Dataset.prefetch (a thread reads ahead)
  ragged_elements.py  RaggedTensor components (their leaf, run-time value and ops)
  ragged_batching.py  dense_to_ragged_batch and Dataset.ragged_batch
  padding.py       per-component shapes nested as elements are; padded_batch's padded
                   shapes and padding values

Imported on first access of `tf.data` (tensorweave/__init__.py).
"""
from tensorweave.data import (  # noqa: F401
    cardinality, dataset_ops, dataset_spec, experimental, file_datasets, generators,
    grouping, iterator_checkpoint, iterator_ops, lookup_tables, optional_ops, options,
    parallel_map, prefetch, ragged_batching, readers, rebatching, resampling, sources,
    sparse_batching, structure, transforms)

import sys as _sys  # noqa: E402

from tensorweave.framework import api_export as _api  # noqa: E402

# the names are offered to `from tensorweave.data import ...` before `tf.data` is touched
_api.install_namespace(_sys.modules[__name__], "data")
