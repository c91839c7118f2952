"""The `tf.data.Dataset` methods (TF 2.x's, kept by compat.v1) that are a
tf.data.experimental transformation or function under another name: each forwards to its
twin (experimental.py, grouping.py, resampling.py, cardinality.py), with TF's method
argument names, defaults and order. `name` is accepted and unused, as elsewhere here (TF
names the dataset's op with it).

Left out: fingerprint (a hash of TF's serialized dataset graph, whose values nothing here
can reproduce), save / load (TF's snapshot file format) and snapshot (a cache persisted
across programs, keyed by that fingerprint).

`Dataset` (dataset_ops.py) takes these methods from `TwinMethods`; the twins' modules
import dataset_ops, so they are imported here when a method is called.
"""
from __future__ import annotations

from typing import Callable, Optional

from tensorweave.framework import dtypes as _dt


class TwinMethods:
    """The methods of `tf.data.Dataset` that forward to their tf.data.experimental twin."""

    # -- sources and combinators (static, as TF's) --
    @staticmethod
    def counter(start=0, step=1, dtype=_dt.int64, name: Optional[str] = None):
        """start, start + step, ... without end, of `dtype` (tf.data.experimental.Counter)."""
        from tensorweave.data import experimental
        return experimental.Counter(start, step, dtype)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset: bool = True):
        """For each int64 `k` of `choice_dataset`, the next element of `datasets[k]`;
        an exhausted one ends the dataset, or is passed over unless
        `stop_on_empty_dataset` (tf.data.experimental.choose_from_datasets, whose default
        is False).

        Raises:
          TypeError: the datasets' elements differ, or the choices are not int64 scalars.
        """
        from tensorweave.data import experimental
        return experimental.choose_from_datasets(datasets, choice_dataset,
                                                 stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed: Optional[int] = None,
                             stop_on_empty_dataset: bool = False,
                             rerandomize_each_iteration: Optional[bool] = None):
        """Elements drawn from `datasets` at random with probabilities `weights`
        (tf.data.experimental.sample_from_datasets).

        With `rerandomize_each_iteration`, each pass of a `repeat` draws anew; an
        iterator initialized again starts again from the first pass's draws, and a
        one-shot iterator refuses the dataset (TF's seed generator is a stateful op).

        Raises:
          TypeError, ValueError: as tf.data.experimental.sample_from_datasets.
        """
        from tensorweave.data import experimental
        return experimental.sampled_datasets(datasets, weights, seed, stop_on_empty_dataset,
                                             rerandomize_each_iteration)

    @staticmethod
    def from_sparse_tensor_slices(sparse_tensor):
        """The rows of `sparse_tensor` along its first dimension, each as the tuple
        (indices, values, dense_shape) of a SparseTensor of one rank less (TF1's
        SparseTensorSliceDataset elements).

        Args:
          sparse_tensor: a SparseTensor of rank >= 1.

        Returns:
          A Dataset of (int64 indices [n, rank - 1], values [n], int64 dense_shape
          [rank - 1]) tuples, one for each row.

        Raises:
          TypeError: `sparse_tensor` is not a SparseTensor.
        """
        from tensorweave.framework.sparse_tensor import SparseTensor
        if not isinstance(sparse_tensor, SparseTensor):
            raise TypeError("Invalid `sparse_tensor`. `sparse_tensor` must be a "
                            "`tf.sparse.SparseTensor`. Got %s." % type(sparse_tensor))
        from tensorweave.data.dataset_ops import Dataset
        rows = Dataset.from_tensor_slices(sparse_tensor)
        return rows.map(lambda row: (row.indices, row.values, row.dense_shape))

    # -- reading --
    def as_numpy_iterator(self):
        """Eager only, as TF's.

        Raises:
          RuntimeError: always (graph mode).
        """
        raise RuntimeError("`tf.data.Dataset.as_numpy_iterator()` is only supported in "
                           "eager mode.")

    def cardinality(self):
        """The number of elements, an int64 scalar tensor: -1 (INFINITE) for an endless
        dataset, -2 (UNKNOWN) when it cannot be known without reading it
        (tf.data.experimental.cardinality)."""
        from tensorweave.data import cardinality
        return cardinality.cardinality(self)

    def get_single_element(self, name: Optional[str] = None):
        """The one element of this dataset; its run raises InvalidArgumentError if the
        dataset has none or more than one (tf.data.experimental.get_single_element)."""
        from tensorweave.data import experimental
        return experimental.get_single_element(self)

    # -- transformations --
    def bucket_by_sequence_length(self, element_length_func: Callable, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None,
                                  padding_values=None, pad_to_bucket_boundary: bool = False,
                                  no_padding: bool = False, drop_remainder: bool = False,
                                  name: Optional[str] = None):
        """Padded batches of elements of similar length
        (tf.data.experimental.bucket_by_sequence_length).

        Raises:
          ValueError: `bucket_batch_sizes` is not one longer than `bucket_boundaries`.
        """
        from tensorweave.data import experimental
        return self.apply(experimental.bucket_by_sequence_length(
            element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
            padding_values, pad_to_bucket_boundary, no_padding, drop_remainder))

    def group_by_window(self, key_func: Callable, reduce_func: Callable, window_size=None,
                        window_size_func: Optional[Callable] = None,
                        name: Optional[str] = None):
        """Elements grouped by `key_func` into windows that `reduce_func` turns into
        datasets (tf.data.experimental.group_by_window).

        Raises:
          ValueError: neither or both of `window_size` and `window_size_func`.
          TypeError: `reduce_func` does not return a Dataset.
        """
        from tensorweave.data import grouping
        return self.apply(grouping.group_by_window(key_func, reduce_func, window_size,
                                                   window_size_func))

    def ignore_errors(self, log_warning: bool = False, name: Optional[str] = None):
        """The elements less those whose reading failed
        (tf.data.experimental.ignore_errors)."""
        from tensorweave.data import experimental
        return self.apply(experimental.ignore_errors(log_warning))

    def rejection_resample(self, class_func: Callable, target_dist, initial_dist=None,
                           seed: Optional[int] = None, name: Optional[str] = None):
        """(class, element) pairs, resampled so that the classes follow `target_dist`
        (tf.data.experimental.rejection_resample).

        Raises:
          ValueError: `class_func` does not give a scalar integer.
        """
        from tensorweave.data import resampling
        return self.apply(resampling.rejection_resample(class_func, target_dist,
                                                        initial_dist, seed))

    def scan(self, initial_state, scan_func: Callable, name: Optional[str] = None):
        """The outputs of `scan_func(state, element) -> (new state, output)` from
        `initial_state` (tf.data.experimental.scan).

        Raises:
          TypeError: the new state's structure or dtypes differ from `initial_state`'s.
        """
        from tensorweave.data import experimental
        return self.apply(experimental.scan(initial_state, scan_func))

    def sparse_batch(self, batch_size, row_shape, name: Optional[str] = None):
        """Batches of `batch_size` elements as one SparseTensor of dense shape
        `[batch, *row_shape]` (tf.data.experimental.dense_to_sparse_batch).

        Raises:
          TypeError: a dataset of more than one component, or a `row_shape` that is no
            shape.
          ValueError: a `row_shape` of unknown rank or of a negative dimension.
        """
        from tensorweave.data import sparse_batching
        return self.apply(sparse_batching.dense_to_sparse_batch(batch_size, row_shape))

    def take_while(self, predicate: Callable, name: Optional[str] = None):
        """The elements up to the first for which `predicate` gives False
        (tf.data.experimental.take_while).

        Raises:
          ValueError: `predicate` does not give a scalar bool.
        """
        from tensorweave.data import experimental
        return self.apply(experimental.take_while(predicate))

    def unique(self, name: Optional[str] = None):
        """Each distinct element once, at its first occurrence
        (tf.data.experimental.unique).

        Raises:
          TypeError: elements of several components or another dtype than int32, int64
            or string.
        """
        from tensorweave.data import experimental
        return self.apply(experimental.unique())

    def rebatch(self, batch_size, drop_remainder: bool = False, name: Optional[str] = None):
        """The rows of this dataset's batches regrouped into batches of `batch_size`
        across the input's batch boundaries (data/rebatching.py).

        Args:
          batch_size: an int64 scalar, or a vector of sizes used in turn.
          drop_remainder: whether a last batch shorter than its size is dropped.
          name: unused.

        Returns:
          A Dataset of the new batches.

        Raises:
          ValueError: as TF's, sizes of rank 2 or more, scalar components, or
            components whose known batch dimensions differ.
        """
        from tensorweave.data import rebatching
        return rebatching.rebatch(self, batch_size, drop_remainder)
