"""Input producers and batching: input_producer, string_input_producer, batch, shuffle_batch, ...

These are the queue-based input pipelines of TF1 (paper §3.2, Figure 1), written as plain
graph builders over queues, variables and a few array ops: a producer fills a queue with
the elements of a tensor, epoch after epoch (a local variable counts the epochs and
raises OutOfRangeError after `num_epochs`, which ends the queue runner and closes the
queue); a batcher enqueues single examples (or batches) from one or more threads into a
queue, and dequeues `batch_size` of them at a time. Every builder adds a QueueRunner to
the graph's QUEUE_RUNNERS collection; `tf.train.start_queue_runners` starts its threads.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from tensorweave.framework import dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, Tensor
from tensorweave.framework.op_builder import convert_to_tensor
from tensorweave.framework.shapes import TensorShape, as_shape
from tensorweave.train.queue_runner import QueueRunner, add_queue_runner


# --- epochs and producers ---------------------------------------------------------------
@tf_export("train.limit_epochs")
def limit_epochs(tensor, num_epochs: Optional[int] = None, name: Optional[str] = None):
    """Returns `tensor` `num_epochs` times, then raises OutOfRangeError.

    The epoch count lives in a local variable (`<scope>/epochs`, collection
    LOCAL_VARIABLES), so `tf.local_variables_initializer()` must run first.

    Args:
      tensor: any Tensor.
      num_epochs: a positive integer, or None for no limit (returns `tensor` itself).
      name: a name for the operations.

    Returns:
      `tensor`, or an identity of it that counts its evaluations.

    Raises:
      ValueError: `num_epochs` is not positive.
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    from tensorweave.ops.array import constant_op
    from tensorweave.ops.control_flow import structure
    from tensorweave.ops.state import variables
    with _graph.name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = constant_op.constant(0, dtype=dtypes.int64)
        epochs = variables.Variable(zero64, name="epochs", trainable=False,
                                    collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with _graph.control_dependencies([counter]):
            return structure.identity(tensor, name=scope)


@tf_export("train.input_producer")
def input_producer(input_tensor, element_shape=None, num_epochs: Optional[int] = None,
                   shuffle: bool = True, seed: Optional[int] = None, capacity: int = 32,
                   shared_name: Optional[str] = None, summary_name: Optional[str] = None,
                   name: Optional[str] = None, cancel_op=None):
    """Outputs the rows of `input_tensor` to a queue for an input pipeline.

    A QueueRunner (added to QUEUE_RUNNERS) enqueues all rows of `input_tensor` once per
    epoch, shuffled each epoch if `shuffle`.

    Args:
      input_tensor: a Tensor with at least one dimension; its rows are the elements.
      element_shape: the shape of one row, needed where `input_tensor`'s is unknown.
      num_epochs: if set, the producer stops after that many epochs (the queue is then
        closed, and dequeuing past its end raises OutOfRangeError); needs
        `tf.local_variables_initializer()`.
      shuffle: shuffle the rows within each epoch.
      seed: the op-level random seed of the shuffle.
      capacity: the capacity of the queue.
      shared_name: shares the queue under this name across sessions.
      summary_name: if set, a scalar summary of that name records the fraction of the
        queue that is full.
      name: a name for the queue.
      cancel_op: cancel op for the QueueRunner.

    Returns:
      The queue (a FIFOQueue) holding the rows.

    Raises:
      ValueError: the element shape is not fully known.
    """
    from tensorweave.ops.data_flow import queue_classes
    from tensorweave.ops.random import random_ops
    with _graph.name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        elem = input_tensor.shape[1:].merge_with(as_shape(element_shape))
        if not elem.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = queue_classes.FIFOQueue(capacity=capacity,
                                    dtypes=[input_tensor.dtype.base_dtype], shapes=[elem],
                                    shared_name=shared_name, name=name)
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _fill_summary(summary_name, queue, capacity)
        return queue


@tf_export("train.string_input_producer")
def string_input_producer(string_tensor, num_epochs: Optional[int] = None,
                          shuffle: bool = True, seed: Optional[int] = None,
                          capacity: int = 32, shared_name: Optional[str] = None,
                          name: Optional[str] = None, cancel_op=None):
    """Outputs strings (e.g. filenames) to a queue for an input pipeline.

    Args:
      string_tensor: a 1-D string Tensor (or list of strings), not empty.
      num_epochs, shuffle, seed, capacity, shared_name, name, cancel_op: as for
        `input_producer`.

    Returns:
      A FIFOQueue of scalar strings, with its QueueRunner in QUEUE_RUNNERS.

    Raises:
      ValueError: `string_tensor` is an empty list (an empty Tensor fails at run time
        with InvalidArgumentError).
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.debug import debug_ops
    from tensorweave.ops.math import math_binary
    from tensorweave.ops.control_flow import structure
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    with _graph.name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        non_empty = debug_ops.Assert(
            math_binary.greater(array_ops.size(string_tensor), 0), [not_null_err])
        with _graph.control_dependencies([non_empty]):
            string_tensor = structure.identity(string_tensor)
        return input_producer(string_tensor, element_shape=[], num_epochs=num_epochs,
                              shuffle=shuffle, seed=seed, capacity=capacity,
                              shared_name=shared_name, name=scope,
                              summary_name="fraction_of_%d_full" % capacity,
                              cancel_op=cancel_op)


@tf_export("train.range_input_producer")
def range_input_producer(limit, num_epochs: Optional[int] = None, shuffle: bool = True,
                         seed: Optional[int] = None, capacity: int = 32,
                         shared_name: Optional[str] = None, name: Optional[str] = None):
    """Produces the integers 0 .. limit-1 in a queue, epoch after epoch.

    Args:
      limit: an int32 scalar (Python int or Tensor).
      num_epochs, shuffle, seed, capacity, shared_name, name: as for `input_producer`.

    Returns:
      A FIFOQueue of int32 scalars, with its QueueRunner in QUEUE_RUNNERS.
    """
    from tensorweave.ops.math import math_ops
    with _graph.name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = math_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, "fraction_of_%d_full" % capacity, scope)


@tf_export("train.slice_input_producer")
def slice_input_producer(tensor_list, num_epochs: Optional[int] = None, shuffle: bool = True,
                         seed: Optional[int] = None, capacity: int = 32,
                         shared_name: Optional[str] = None, name: Optional[str] = None):
    """Produces slices of each tensor in `tensor_list`, row by row.

    Row i of every tensor is output together: the index comes from a
    `range_input_producer` over the first dimension of `tensor_list[0]`.

    Args:
      tensor_list: a non-empty list of Tensors with the same first dimension.
      num_epochs, shuffle, seed, capacity, shared_name, name: as for `input_producer`.

    Returns:
      A list with one slice per tensor (each of the tensor's shape without its first
      dimension).

    Raises:
      ValueError: `tensor_list` is empty.
    """
    from tensorweave.ops.array import array_ops
    from tensorweave.ops.indexing import indexing_gather
    with _graph.name_scope(name, "input_producer", tensor_list):
        tensors = [convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensors[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [indexing_gather.gather(t, index) for t in tensors]


@tf_export("train.match_filenames_once", "io.match_filenames_once")
def match_filenames_once(pattern, name: Optional[str] = None):
    """A local variable holding the file names matching the glob `pattern`, computed
    once when `tf.local_variables_initializer()` runs.

    Args:
      pattern: a file pattern (glob) or 1-D tensor of patterns.
      name: a name for the variable.

    Returns:
      A string Variable (in LOCAL_VARIABLES) initialized to the matching file names.
    """
    from tensorweave.ops.string import string_ops
    from tensorweave.ops.state import variables
    with _graph.name_scope(name, "matching_filenames", [pattern]) as scope:
        return variables.Variable(string_ops.matching_files(pattern), name=scope,
                                  trainable=False, validate_shape=False,
                                  collections=[GraphKeys.LOCAL_VARIABLES])


# --- batching helpers ---------------------------------------------------------------------
def _as_tensor_list(tensors) -> list:
    """The tensors of `tensors` (a list, tuple or dict; dicts in sorted key order)."""
    if isinstance(tensors, Tensor):
        raise TypeError("`tensors` must be a list, tuple or dict of tensors, not a single "
                        "Tensor (%s); wrap it in a list" % tensors.name)
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    return list(tensors)


def _as_tensor_list_list(tensors_list) -> List[list]:
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    if isinstance(tensors_list[0], dict):
        keys = set(tensors_list[0])
        for tensors in tensors_list[1:]:
            if set(tensors) != keys:
                raise ValueError("All dictionaries in tensors_list must have the same keys")
    return [_as_tensor_list(t) for t in tensors_list]


def _as_original_type(original, dequeued):
    """Puts the dequeued tensors back into the structure of `original`."""
    if isinstance(original, dict):
        if len(original) == 1:  # a one-component queue dequeues a bare tensor
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _convert(tensors: list) -> List[Tensor]:
    return [convert_to_tensor(t) for t in tensors]


# SparseTensors travel through the batching queues serialized: one [3] string vector per
# element (a [n, 3] matrix with enqueue_many), deserialized after the dequeue into one
# SparseTensor with a leading batch dimension, each other dimension the largest of the
# batch's elements (as TF's batching of SparseTensors gives).
def _store_sparse(tensor_list: list, enqueue_many: bool) -> Tuple[list, list]:
    """(tensor_list with each SparseTensor serialized, per position None or the
    (dtype, rank) of the SparseTensor stored there)."""
    from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
    from tensorweave.ops.sparse import sparse_serialize_ops as serialize
    out, info = [], []
    for t in tensor_list:
        if isinstance(t, SparseTensorValue):
            t = SparseTensor.from_value(t)
        if not isinstance(t, SparseTensor):
            out.append(t)
            info.append(None)
            continue
        rank = t.dense_shape.shape.dims[0].value if t.dense_shape.shape.ndims else None
        if enqueue_many:
            out.append(serialize.serialize_many_sparse(t))
            rank = None if rank is None else rank - 1
        else:
            out.append(serialize.serialize_sparse(t))
        info.append((t.dtype, rank))
    return out, info


def _store_sparse_join(tensor_list_list: List[list], enqueue_many: bool):
    """`_store_sparse` of each list; the sparse positions must agree."""
    stored = [_store_sparse(tl, enqueue_many) for tl in tensor_list_list]
    kinds = [[k is not None for k in info] for _, info in stored]
    if any(k != kinds[0] for k in kinds[1:]):
        raise TypeError("batch_join: the tensor lists must have SparseTensors at the same "
                        "positions")
    return [tl for tl, _ in stored], stored[0][1]


def _restore_sparse(dequeued, info: list):
    """The dequeued components, the serialized SparseTensors deserialized."""
    if not any(info):
        return dequeued
    from tensorweave.ops.sparse import sparse_serialize_ops as serialize
    single = isinstance(dequeued, Tensor)
    parts = [dequeued] if single else list(dequeued)
    for i, kind in enumerate(info):
        if kind is not None:
            dtype, rank = kind
            parts[i] = serialize.deserialize_many_sparse(
                parts[i], dtype, rank=None if rank is None else rank + 1)
    return parts[0] if single else parts


def _validate(tensor_list: list) -> List[Tensor]:
    tensors = _convert(tensor_list)
    if not tensors:
        raise ValueError("Expected at least one tensor in batch().")
    return tensors


def _validate_join(tensor_list_list: List[list]) -> List[List[Tensor]]:
    out = [_convert(tl) for tl in tensor_list_list]
    if not out:
        raise ValueError("Expected at least one input in batch_join().")
    return out


def _validate_keep_input(keep_input, enqueue_many: bool) -> Tensor:
    keep_input = convert_to_tensor(keep_input, dtype=dtypes.bool)
    ndims = keep_input.shape.ndims
    if ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _dtypes(tensor_list_list: List[List[Tensor]]) -> list:
    types = [t.dtype for t in tensor_list_list[0]]
    for tl in tensor_list_list[1:]:
        other = [t.dtype for t in tl]
        if other != types:
            raise TypeError("Expected types to be consistent: %s vs. %s."
                            % (", ".join(x.name for x in types),
                               ", ".join(x.name for x in other)))
    return types


def _merge_shapes(shapes: List[TensorShape], enqueue_many: bool) -> TensorShape:
    if enqueue_many:  # the queue holds the elements, without the batch dimension
        shapes = [s.with_rank_at_least(1)[1:] for s in shapes]
    merged = shapes[0]
    for s in shapes[1:]:
        merged.merge_with(s)  # TF only checks compatibility here; it keeps the first
    return merged


def _shapes(tensor_list_list: List[List[Tensor]], shapes, enqueue_many: bool):
    if shapes is not None:
        return shapes
    n = len(tensor_list_list[0])
    for tl in tensor_list_list:
        for t in tl[:n]:
            if t.shape.ndims is None:
                raise ValueError("Cannot infer Tensor's rank: %s" % t)
    return [_merge_shapes([tl[i].shape for tl in tensor_list_list], enqueue_many)
            for i in range(n)]


def _which_queue(dynamic_pad: bool):
    from tensorweave.ops.data_flow import queue_classes
    return queue_classes.PaddingFIFOQueue if dynamic_pad else queue_classes.FIFOQueue


def _kept(tensors: List[Tensor], keep: Tensor, enqueue_many: bool) -> List[Tensor]:
    """The rows of `tensors` (a batch if `enqueue_many`, else one element made a batch
    of one) for which `keep` is True, as a batch for `enqueue_many`."""
    from tensorweave.ops.array import array_fill_ops, array_ops
    from tensorweave.ops.math import math_ops, segment_ops
    if not enqueue_many:
        tensors = [array_ops.expand_dims(t, 0) for t in tensors]
    if keep.shape.ndims == 0:  # one decision for the whole batch: repeat it per row
        keep = array_fill_ops.fill(array_ops.shape(tensors[0])[:1], keep)
    select = math_ops.cast(keep, dtypes.int32)
    return [segment_ops.dynamic_partition(t, select, num_partitions=2)[1] for t in tensors]


def _fill_summary(name: str, queue, capacity: int, min_after_dequeue: int = 0) -> None:
    """A scalar summary (collection SUMMARIES) of how full `queue` is, as TF's builders
    add one: its size over `capacity`, or for a shuffling queue the part above
    `min_after_dequeue` over the rest of the capacity."""
    from tensorweave.ops.math import math_binary, math_ops
    from tensorweave.ops.summary.summary_ops import scalar
    size = queue.size()
    if min_after_dequeue:
        size = math_binary.maximum(0, size - min_after_dequeue)
    scalar(name, math_ops.cast(size, dtypes.float32) *
           (1.0 / (capacity - min_after_dequeue)))


def _enqueue_op(queue, tensors: List[Tensor], enqueue_many: bool, keep: Tensor):
    """The enqueue op for one list of tensors, honouring `keep`.

    A constant scalar `keep` (plain `batch`) gives a plain enqueue (or a no-op when
    False). A run-time `keep` selects the rows to enqueue with DynamicPartition, then
    enqueues that (possibly empty) batch: the same effect as TF's conditional enqueue.
    """
    from tensorweave.ops.control_flow import structure
    if keep.shape.ndims == 0:
        static = tensor_util.constant_value(keep)
        if static is not None:
            if not bool(static):
                return structure.no_op()
            return queue.enqueue_many(tensors) if enqueue_many else queue.enqueue(tensors)
    return queue.enqueue_many(_kept(tensors, keep, enqueue_many))


def _enqueue(queue, tensors: List[Tensor], threads: int, enqueue_many: bool, keep: Tensor):
    op = _enqueue_op(queue, tensors, enqueue_many, keep)
    add_queue_runner(QueueRunner(queue, [op] * threads))


def _enqueue_join(queue, tensor_list_list: List[List[Tensor]], enqueue_many: bool,
                  keep: Tensor):
    ops = [_enqueue_op(queue, tl, enqueue_many, keep) for tl in tensor_list_list]
    add_queue_runner(QueueRunner(queue, ops))


def _dequeue(queue, batch_size, allow_smaller_final_batch: bool, name: str):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(tensors, batch_size, keep_input, num_threads=1, capacity=32, enqueue_many=False,
           shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
           shared_name=None, name=None):
    tensor_list = _as_tensor_list(tensors)
    with _graph.name_scope(name, "batch", tensor_list + [keep_input]) as scope:
        tensor_list, sparse_info = _store_sparse(tensor_list, enqueue_many)
        tensor_list = _validate(tensor_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _dtypes([tensor_list])
        shapes = _shapes([tensor_list], shapes, enqueue_many)
        queue = _which_queue(dynamic_pad)(capacity=capacity, dtypes=types, shapes=shapes,
                                          shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep_input)
        _fill_summary("fraction_of_%d_full" % capacity, queue, capacity)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, _restore_sparse(dequeued, sparse_info))


def _batch_join(tensors_list, batch_size, keep_input, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    tensor_list_list = _as_tensor_list_list(tensors_list)
    flat = [t for tl in tensor_list_list for t in tl]
    with _graph.name_scope(name, "batch_join", flat + [keep_input]) as scope:
        tensor_list_list, sparse_info = _store_sparse_join(tensor_list_list, enqueue_many)
        tensor_list_list = _validate_join(tensor_list_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _dtypes(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many)
        queue = _which_queue(dynamic_pad)(capacity=capacity, dtypes=types, shapes=shapes,
                                          shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input)
        _fill_summary("fraction_of_%d_full" % capacity, queue, capacity)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], _restore_sparse(dequeued, sparse_info))


def _check_capacity(capacity: int, min_after_dequeue: int) -> None:
    if capacity <= min_after_dequeue:
        raise ValueError("capacity %d must be bigger than min_after_dequeue %d."
                         % (capacity, min_after_dequeue))


def _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                   num_threads=1, seed=None, enqueue_many=False, shapes=None,
                   allow_smaller_final_batch=False, shared_name=None, name=None):
    from tensorweave.ops.data_flow import queue_classes
    tensor_list = _as_tensor_list(tensors)
    with _graph.name_scope(name, "shuffle_batch", tensor_list + [keep_input]) as scope:
        _check_capacity(capacity, min_after_dequeue)
        tensor_list, sparse_info = _store_sparse(tensor_list, enqueue_many)
        tensor_list = _validate(tensor_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _dtypes([tensor_list])
        shapes = _shapes([tensor_list], shapes, enqueue_many)
        queue = queue_classes.RandomShuffleQueue(
            capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed,
            dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue(queue, tensor_list, num_threads, enqueue_many, keep_input)
        _shuffle_fill_summary(queue, capacity, min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors, _restore_sparse(dequeued, sparse_info))


def _shuffle_fill_summary(queue, capacity: int, min_after_dequeue: int) -> None:
    _fill_summary("fraction_over_%d_of_%d_full" % (min_after_dequeue,
                                                   capacity - min_after_dequeue),
                  queue, capacity, min_after_dequeue)


def _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                        seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    from tensorweave.ops.data_flow import queue_classes
    tensor_list_list = _as_tensor_list_list(tensors_list)
    flat = [t for tl in tensor_list_list for t in tl]
    with _graph.name_scope(name, "shuffle_batch_join", flat + [keep_input]) as scope:
        _check_capacity(capacity, min_after_dequeue)
        tensor_list_list, sparse_info = _store_sparse_join(tensor_list_list, enqueue_many)
        tensor_list_list = _validate_join(tensor_list_list)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        types = _dtypes(tensor_list_list)
        shapes = _shapes(tensor_list_list, shapes, enqueue_many)
        queue = queue_classes.RandomShuffleQueue(
            capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed,
            dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue_join(queue, tensor_list_list, enqueue_many, keep_input)
        _shuffle_fill_summary(queue, capacity, min_after_dequeue)
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(tensors_list[0], _restore_sparse(dequeued, sparse_info))


# --- public batching builders ---------------------------------------------------------------
_BATCH_ARGS_DOC = """
      batch_size: the number of elements per dequeued batch (int or int32 scalar).
      capacity: the maximum number of elements in the queue.
      enqueue_many: whether each tensor is a batch of elements (first dimension) rather
        than a single element.
      shapes: the shapes of one element of each tensor; defaults to the inferred ones.
      allow_smaller_final_batch: if True, the last batch may be smaller when the queue
        is closed with fewer than `batch_size` elements left (the batch dimension is
        then statically unknown); if False those elements are dropped.
      shared_name: shares the queue under this name across sessions.
      name: a name for the operations."""


def _doc(fn):
    fn.__doc__ = fn.__doc__.replace("{batch_args}", _BATCH_ARGS_DOC.strip("\n"))
    return fn


@tf_export("train.batch")
@_doc
def batch(tensors, batch_size, num_threads: int = 1, capacity: int = 32,
          enqueue_many: bool = False, shapes=None, dynamic_pad: bool = False,
          allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
          name: Optional[str] = None):
    """Creates batches of `tensors` through a queue.

    A FIFOQueue (a PaddingFIFOQueue with `dynamic_pad`) is filled by `num_threads`
    threads of a QueueRunner (added to QUEUE_RUNNERS) and dequeued `batch_size`
    elements at a time. When the inputs end (OutOfRangeError) the queue is closed; the
    following dequeues raise OutOfRangeError once too few elements remain.

    Args:
      tensors: a list or dict of tensors (one element each, or batches with
        `enqueue_many`).
      num_threads: the number of threads running the enqueue op.
      dynamic_pad: allow dimensions of unknown size in `shapes`; each batch is padded
        with zeros (empty strings) to its longest element.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors` (a bare Tensor for a list of
      one), each with a leading `batch_size` dimension.

    Raises:
      ValueError: no tensors, unknown ranks or (without `dynamic_pad`) shapes that are
        not fully defined.
      TypeError: mismatched dtypes.
    """
    return _batch(tensors, batch_size, keep_input=True, num_threads=num_threads,
                  capacity=capacity, enqueue_many=enqueue_many, shapes=shapes,
                  dynamic_pad=dynamic_pad, allow_smaller_final_batch=allow_smaller_final_batch,
                  shared_name=shared_name, name=name)


@tf_export("train.maybe_batch")
@_doc
def maybe_batch(tensors, keep_input, batch_size, num_threads: int = 1, capacity: int = 32,
                enqueue_many: bool = False, shapes=None, dynamic_pad: bool = False,
                allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
                name: Optional[str] = None):
    """Like `batch`, but enqueues only the elements for which `keep_input` is True.

    Args:
      tensors: a list or dict of tensors.
      keep_input: a bool scalar, or with `enqueue_many` a bool vector (one per row).
      num_threads, dynamic_pad: as for `batch`.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors`.

    Raises:
      ValueError: bad `keep_input` rank, or as for `batch`.
    """
    return _batch(tensors, batch_size, keep_input, num_threads=num_threads,
                  capacity=capacity, enqueue_many=enqueue_many, shapes=shapes,
                  dynamic_pad=dynamic_pad, allow_smaller_final_batch=allow_smaller_final_batch,
                  shared_name=shared_name, name=name)


@tf_export("train.batch_join")
@_doc
def batch_join(tensors_list, batch_size, capacity: int = 32, enqueue_many: bool = False,
               shapes=None, dynamic_pad: bool = False,
               allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
               name: Optional[str] = None):
    """Creates batches from several lists of tensors, one enqueue thread per list.

    Use it to read from several readers in parallel: `tensors_list[i]` is enqueued by
    thread i into one shared queue.

    Args:
      tensors_list: a list of lists (or dicts with the same keys) of tensors, all with
        the same dtypes.
      dynamic_pad: as for `batch`.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors_list[0]`.

    Raises:
      ValueError: empty `tensors_list`, unknown ranks, incompatible shapes or dicts
        with different keys.
      TypeError: dtypes differ between the lists.
    """
    return _batch_join(tensors_list, batch_size, keep_input=True, capacity=capacity,
                       enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                       allow_smaller_final_batch=allow_smaller_final_batch,
                       shared_name=shared_name, name=name)


@tf_export("train.maybe_batch_join")
@_doc
def maybe_batch_join(tensors_list, keep_input, batch_size, capacity: int = 32,
                     enqueue_many: bool = False, shapes=None, dynamic_pad: bool = False,
                     allow_smaller_final_batch: bool = False,
                     shared_name: Optional[str] = None, name: Optional[str] = None):
    """Like `batch_join`, but enqueues only the elements for which `keep_input` is True.

    Args:
      tensors_list: as for `batch_join`.
      keep_input: a bool scalar, or with `enqueue_many` a bool vector.
      dynamic_pad: as for `batch`.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors_list[0]`.
    """
    return _batch_join(tensors_list, batch_size, keep_input, capacity=capacity,
                       enqueue_many=enqueue_many, shapes=shapes, dynamic_pad=dynamic_pad,
                       allow_smaller_final_batch=allow_smaller_final_batch,
                       shared_name=shared_name, name=name)


@tf_export("train.shuffle_batch")
@_doc
def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads: int = 1,
                  seed: Optional[int] = None, enqueue_many: bool = False, shapes=None,
                  allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
                  name: Optional[str] = None):
    """Creates batches by randomly shuffling `tensors` through a RandomShuffleQueue.

    Dequeues wait until more than `min_after_dequeue` elements are in the queue (unless
    it is closed), so each batch is drawn from a well-mixed pool.

    Args:
      tensors: a list or dict of tensors.
      min_after_dequeue: the minimum number of elements left after a dequeue.
      num_threads: the number of threads running the enqueue op.
      seed: the op-level seed of the queue's shuffling.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors`.

    Raises:
      ValueError: `capacity <= min_after_dequeue`, or as for `batch`.
    """
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input=True,
                          num_threads=num_threads, seed=seed, enqueue_many=enqueue_many,
                          shapes=shapes, allow_smaller_final_batch=allow_smaller_final_batch,
                          shared_name=shared_name, name=name)


@tf_export("train.maybe_shuffle_batch")
@_doc
def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads: int = 1, seed: Optional[int] = None,
                        enqueue_many: bool = False, shapes=None,
                        allow_smaller_final_batch: bool = False,
                        shared_name: Optional[str] = None, name: Optional[str] = None):
    """Like `shuffle_batch`, but enqueues only the elements for which `keep_input` is
    True.

    Args:
      tensors: a list or dict of tensors.
      min_after_dequeue, num_threads, seed: as for `shuffle_batch`.
      keep_input: a bool scalar, or with `enqueue_many` a bool vector.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors`.
    """
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                          num_threads=num_threads, seed=seed, enqueue_many=enqueue_many,
                          shapes=shapes, allow_smaller_final_batch=allow_smaller_final_batch,
                          shared_name=shared_name, name=name)


@tf_export("train.shuffle_batch_join")
@_doc
def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                       seed: Optional[int] = None, enqueue_many: bool = False, shapes=None,
                       allow_smaller_final_batch: bool = False,
                       shared_name: Optional[str] = None, name: Optional[str] = None):
    """Like `shuffle_batch`, from several lists of tensors, one enqueue thread each.

    Args:
      tensors_list: as for `batch_join`.
      min_after_dequeue, seed: as for `shuffle_batch`.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors_list[0]`.
    """
    return _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                               keep_input=True, seed=seed, enqueue_many=enqueue_many,
                               shapes=shapes,
                               allow_smaller_final_batch=allow_smaller_final_batch,
                               shared_name=shared_name, name=name)


@tf_export("train.maybe_shuffle_batch_join")
@_doc
def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                             keep_input, seed: Optional[int] = None,
                             enqueue_many: bool = False, shapes=None,
                             allow_smaller_final_batch: bool = False,
                             shared_name: Optional[str] = None, name: Optional[str] = None):
    """Like `shuffle_batch_join`, but enqueues only the elements for which `keep_input`
    is True.

    Args:
      tensors_list: as for `batch_join`.
      min_after_dequeue, seed: as for `shuffle_batch`.
      keep_input: a bool scalar, or with `enqueue_many` a bool vector.
{batch_args}

    Returns:
      The batched tensors, in the structure of `tensors_list[0]`.
    """
    return _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue,
                               keep_input, seed=seed, enqueue_many=enqueue_many,
                               shapes=shapes,
                               allow_smaller_final_batch=allow_smaller_final_batch,
                               shared_name=shared_name, name=name)
