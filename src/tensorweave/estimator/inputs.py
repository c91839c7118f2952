"""tf.estimator.inputs: input_fns feeding in-memory data (numpy arrays, pandas
DataFrames) through a queue, as TF1 does.

The input_fn builds, under the name scope 'enqueue_input', a queue whose first component
is the row index and the others the columns, one placeholder per component, and an
enqueue_many of the placeholders. A `_FeedingQueueRunner` (in the QUEUE_RUNNERS
collection, so MonitoredSession or `tf.train.start_queue_runners` starts it) runs the
enqueue in a thread, feeding each run the next `batch_size` rows; when `num_epochs`
epochs have been fed it closes the queue. The input_fn returns a `dequeue_up_to` (so the
last, partial batch comes out before OutOfRangeError) or, with no epoch limit, a
`dequeue_many`. Without shuffling the rows come in order, epochs running on into each
other within a batch; with shuffling, reading starts at a random row and the queue is a
RandomShuffleQueue.
"""
from __future__ import annotations

import collections
import logging
import random
from typing import Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.api_export import tf_export
from tensorweave.train.queue_runner import QueueRunner, add_queue_runner

_log = logging.getLogger("tensorflow")

_TARGET_KEY = "__target_key__"


# --- the feeding queue runner ---------------------------------------------------------------
class _FeedingQueueRunner(QueueRunner):
    """A QueueRunner whose enqueue ops are run with a feed dict: before each run,
    `feed_fns[i]()` gives the feed of `enqueue_ops[i]`. A feed function raising
    OutOfRangeError ends its thread as a closed queue does (the last one closes it)."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 feed_fns=None, queue_closed_exception_types=None):
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError, errors.CancelledError)
        super().__init__(queue, enqueue_ops, close_op, cancel_op,
                         queue_closed_exception_types=queue_closed_exception_types)
        if feed_fns is None:
            feed_fns = [None] * len(self._enqueue_ops)
        elif len(feed_fns) != len(self._enqueue_ops):
            raise ValueError("If feed_fns is not None, it must have the same length as "
                             "enqueue_ops.")
        self._feed_fns = list(feed_fns)

    def _enqueue_fn(self, sess, enqueue_op, index: int):
        """Runs `enqueue_op` with the feed of this thread's feed function (made inside
        the thread's turn, so the deterministic mode also fixes which rows each run
        gets); QueueRunner._run supplies the loop, the closing and the error handling."""
        feed_fn = self._feed_fns[index]
        if feed_fn is None:
            return sess.make_callable(enqueue_op), None
        return (lambda: sess.run(enqueue_op, feed_dict=feed_fn())), None

    def to_proto(self, export_scope: Optional[str] = None):
        """None: a fed runner cannot be rebuilt from op names (its feed functions hold
        the data). TF raises NotImplementedError here, and its MetaGraph export then
        drops the collection with a warning; None makes our export skip this runner,
        so a checkpoint's meta graph is still written."""
        _log.warning("%s of queue %s is not serialized: it does not support "
                     "serialization to proto.", type(self).__name__, self.name)
        return None

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        raise NotImplementedError("_FeedingQueueRunner does not support initialization "
                                  "from proto.")


# --- which rows each run feeds -------------------------------------------------------------
def _indices_for_next_batch(start: int, batch_size: int, epoch_end: int, length: int,
                            epoch: int, total_epochs: Optional[int]):
    """The row indices of the next run (wrapping around the data) and the number of
    epochs completed after it; the final batch stops at the end of the last epoch.

    Raises:
      OutOfRangeError: `total_epochs` epochs were fed already.
    """
    if total_epochs is not None and epoch >= total_epochs:
        raise errors.OutOfRangeError(None, None, "Already emitted %s epochs." % epoch)
    indices = [j % length for j in range(start, start + batch_size)]
    # an epoch ends at each occurrence of its last row
    epoch_ends = [i for i, row in enumerate(indices) if row == epoch_end]
    epoch += len(epoch_ends)
    if total_epochs is None or epoch < total_epochs:
        return indices, epoch
    last = epoch_ends[-(epoch - total_epochs + 1)]
    return indices[:last + 1], total_epochs


class _RowFeeder:
    """The feed function of one enqueue op: each call feeds the next rows.

    Args:
      placeholders: the index placeholder, then one per column.
      take_rows: function(indices) -> [index values, column values...] of those rows.
      length: the number of rows.
      batch_size: rows per call.
      random_start: start at a random row (when shuffling) instead of row 0.
      seed: seed of that choice.
      num_epochs: epochs to feed, or None for no end.
    """

    def __init__(self, placeholders, take_rows: Callable, length: int, batch_size: int,
                 random_start: bool = False, seed: Optional[int] = None,
                 num_epochs: Optional[int] = None):
        self._placeholders = placeholders
        self._take_rows = take_rows
        self._length = length
        self._batch_size = batch_size
        self._num_epochs = num_epochs
        self._epoch = 0
        # a private generator: TF reseeds the global `random` module here
        self._next = random.Random(seed).randrange(length) if random_start else 0
        self._epoch_end = (self._next - 1) % length

    def __call__(self) -> dict:
        indices, self._epoch = _indices_for_next_batch(
            self._next, self._batch_size, self._epoch_end, self._length, self._epoch,
            self._num_epochs)
        self._next = (indices[-1] + 1) % self._length
        return dict(zip(self._placeholders, self._take_rows(indices)))


def _enqueue_data(columns, index_dtype, take_rows: Callable, length: int, capacity: int,
                  shuffle: bool, min_after_dequeue: Optional[float], num_threads: int,
                  enqueue_size: int, num_epochs: Optional[int], seed: Optional[int] = None,
                  name: str = "enqueue_input"):
    """A queue of (index, columns...) fed by a `_FeedingQueueRunner`, with TF's
    fraction-full summary.

    Args:
      columns: list of (dtype, per-row shape) of the data columns.
      index_dtype: the dtype of the index component.
      take_rows: function(indices) -> [index values, column values...].
      length: the number of rows.
      Others: as `numpy_input_fn`'s; `min_after_dequeue` (shuffling) defaults to
        capacity / 4.
    """
    from tensorweave.ops.array.constant_op import placeholder
    from tensorweave.ops.data_flow.queue_classes import FIFOQueue, RandomShuffleQueue
    from tensorweave.ops.math.math_binary import maximum
    from tensorweave.ops.math.math_ops import cast
    from tensorweave.ops.summary.summary_ops import scalar
    types = [index_dtype] + [dtype for dtype, _ in columns]
    shapes = [()] + [shape for _, shape in columns]
    with _graph.name_scope(name):
        if num_threads > 1 and num_epochs is not None:
            _log.warning("enqueue_data was called with num_epochs and num_threads > 1. "
                         "num_epochs is applied per thread, so this will produce more "
                         "epochs than you probably intend. If you want to limit epochs, "
                         "use one thread.")
        if shuffle and num_threads > 1 and num_epochs is not None:
            _log.warning("enqueue_data was called with shuffle=True, num_threads > 1, and "
                         "num_epochs. This will create multiple threads, all reading the "
                         "array/dataframe in order adding to the same shuffling queue; the "
                         "results will likely not be sufficiently shuffled.")
        if not shuffle and num_threads > 1:
            _log.warning("enqueue_data was called with shuffle=False and num_threads > 1. "
                         "This will create multiple threads, all reading the "
                         "array/dataframe in order. If you want examples read in order, "
                         "use one thread; if you want multiple threads, enable shuffling.")
        if shuffle:
            min_after_dequeue = int(capacity / 4 if min_after_dequeue is None
                                    else min_after_dequeue)
            queue = RandomShuffleQueue(capacity, min_after_dequeue, dtypes=types,
                                       shapes=shapes, seed=seed)
        else:
            min_after_dequeue = 0
            queue = FIFOQueue(capacity, dtypes=types, shapes=shapes)
        enqueue_ops, feed_fns = [], []
        for i in range(num_threads):
            placeholders = [placeholder(t) for t in types]
            enqueue_ops.append(queue.enqueue_many(placeholders))
            feed_fns.append(_RowFeeder(
                placeholders, take_rows, length, enqueue_size, random_start=shuffle,
                seed=None if seed is None else (i + 1) * seed, num_epochs=num_epochs))
        add_queue_runner(_FeedingQueueRunner(queue=queue, enqueue_ops=enqueue_ops,
                                             feed_fns=feed_fns))
        full = cast(maximum(0, queue.size() - min_after_dequeue), _dt.float32) * (
            1. / (capacity - min_after_dequeue))
        scalar("queue/%sfraction_over_%d_of_%d_full"
               % (queue.name, min_after_dequeue, capacity - min_after_dequeue), full)
    return queue


# --- numpy_input_fn -------------------------------------------------------------------------
def _ordered_features(x) -> collections.OrderedDict:
    """`x` (a dict of arrays, sorted by key, or one array) as an OrderedDict."""
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        return collections.OrderedDict(sorted(x.items(), key=lambda kv: kv[0]))
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
        return collections.OrderedDict({"__direct_np_input__": x})
    raise TypeError("x must be a dict or array; got {}".format(type(x).__name__))


def _check_shuffle(shuffle) -> None:
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided and explicitly set as boolean (it is "
                         "recommended to set it as True for training); got {}"
                         .format(shuffle))


@tf_export("estimator.inputs.numpy_input_fn")
def numpy_input_fn(x, y=None, batch_size: int = 128, num_epochs: Optional[int] = 1,
                   shuffle: Optional[bool] = None, queue_capacity: int = 1000,
                   num_threads: int = 1) -> Callable:
    """An input_fn feeding numpy arrays to the model in batches (through a queue).

    Args:
      x: a dict of arrays (the features dict has its keys) or one array (then the
        features are that one tensor).
      y: an array (the labels tensor), a dict of arrays (a labels dict), or None.
      batch_size: rows per batch.
      num_epochs: passes over the data; None repeats forever. With a limit, the last
        batch may be smaller, then OutOfRangeError ends the input.
      shuffle: whether to read the rows in random order; must be given.
      queue_capacity: capacity of the queue.
      num_threads: enqueue threads; use 1 for a repeatable order.

    Returns:
      A function of no arguments returning `features` or `(features, labels)`.

    Raises:
      ValueError: `shuffle` is not a bool; when called: x or y empty, lengths that
        differ, or keys in both x and y.
      TypeError: when called, `x` is not a dict or array.
    """
    _check_shuffle(shuffle)

    def input_fn():
        data = _ordered_features(x)
        feature_keys = list(data.keys())
        if y is None:
            target_keys = None
        elif isinstance(y, dict):
            if not y:
                raise ValueError("y cannot be empty dict, use None instead.")
            ordered_y = collections.OrderedDict(sorted(y.items(), key=lambda kv: kv[0]))
            target_keys = list(ordered_y.keys())
            duplicates = set(feature_keys) & set(target_keys)
            if duplicates:
                raise ValueError("{} duplicate keys are found in both x and y: {}"
                                 .format(len(duplicates), duplicates))
            data.update(ordered_y)
        else:
            # the labels ride in the same queue under a key no feature has
            target_keys = _TARGET_KEY
            while target_keys in data:
                target_keys += "_n"
            data[target_keys] = y
        if len({v.shape[0] for v in data.values()}) != 1:
            if target_keys is None:
                y_shapes = None
            elif isinstance(target_keys, str):
                y_shapes = y.shape
            else:
                y_shapes = {k: data[k].shape for k in target_keys}
            raise ValueError("Length of tensors in x and y is mismatched. All elements in x "
                             "and y must have the same length.\nShapes in x: {}\nShapes in "
                             "y: {}\n".format({k: data[k].shape for k in feature_keys},
                                              y_shapes))
        arrays = list(data.values())

        def take_rows(indices):
            return [indices] + [a[indices] for a in arrays]
        queue = _enqueue_data(
            [(_dt.as_dtype(a.dtype), a.shape[1:]) for a in arrays], _dt.int64, take_rows,
            len(arrays[0]), queue_capacity, shuffle, None, num_threads, batch_size,
            num_epochs)
        batch = (queue.dequeue_many(batch_size) if num_epochs is None
                 else queue.dequeue_up_to(batch_size))
        batch = list(batch)[1:]  # without the row index
        if isinstance(x, np.ndarray):
            features = batch[0]
        else:
            features = dict(zip(feature_keys, batch[:len(feature_keys)]))
        if target_keys is None:
            return features
        if isinstance(target_keys, str):
            return features, batch[-1]
        return features, dict(zip(target_keys, batch[-len(target_keys):]))
    return input_fn


# --- pandas_input_fn ------------------------------------------------------------------------
def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


@tf_export("estimator.inputs.pandas_input_fn")
def pandas_input_fn(x, y=None, batch_size: int = 128, num_epochs: Optional[int] = 1,
                    shuffle: Optional[bool] = None, queue_capacity: Optional[int] = 1000,
                    num_threads: int = 1, target_column: str = "target") -> Callable:
    """An input_fn feeding a pandas DataFrame to the model in batches (through a queue).

    Args:
      x: a pandas DataFrame; its columns are the features.
      y: a pandas Series (the labels tensor), a DataFrame (a labels dict), or None; its
        index must equal x's.
      batch_size, num_epochs, shuffle, num_threads: as for `numpy_input_fn`.
      queue_capacity: capacity of the queue; None: len(x) (4 * len(x) when shuffling).
      target_column: the column name `y` takes in the queue (not used for a DataFrame).

    Returns:
      A function of no arguments returning `features` or `(features, labels)`.

    Raises:
      TypeError: pandas is not installed, or `target_column` is not a string.
      ValueError: `shuffle` is not a bool, `x` has a column named `target_column`, or
        the indexes of x and y differ.
    """
    pd = _pandas()
    if pd is None:
        raise TypeError("pandas_input_fn should not be called without pandas installed")
    _check_shuffle(shuffle)
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    x = x.copy()
    y_columns = None  # for a DataFrame y: (its column, the column name in x)
    if y is not None:
        if target_column in x:
            raise ValueError("Cannot use name %s for target column: DataFrame already has "
                             "a column with that name: %s" % (target_column, x.columns))
        if not np.array_equal(x.index, y.index):
            raise ValueError("Index for x and y are mismatched.\nIndex for x: %s\nIndex for "
                             "y: %s\n" % (x.index, y.index))
        if isinstance(y, pd.DataFrame):
            import uuid
            y_columns = [(c, c if c not in x else "%s_%s" % (c, uuid.uuid4()))
                         for c in list(y)]
            x[[name for _, name in y_columns]] = y
        else:
            x[target_column] = y
    if queue_capacity is None:
        queue_capacity = 4 * len(x) if shuffle else len(x)
    min_after_dequeue = max(queue_capacity / 4, 1)

    def input_fn():
        columns = list(x.columns)

        def take_rows(indices):
            rows = x.iloc[indices]
            return [rows.index.values] + [rows[c].values for c in columns]
        queue = _enqueue_data(
            [(_dt.as_dtype(dt), ()) for dt in x.dtypes], _dt.as_dtype(x.index.dtype),
            take_rows, len(x), queue_capacity, shuffle, min_after_dequeue, num_threads,
            batch_size, num_epochs)
        batch = (queue.dequeue_many(batch_size) if num_epochs is None
                 else queue.dequeue_up_to(batch_size))
        features = dict(zip(columns, list(batch)[1:]))
        if y is None:
            return features
        if y_columns is not None:
            return features, {c: features.pop(name) for c, name in y_columns}
        return features, features.pop(target_column)
    return input_fn
