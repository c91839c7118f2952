"""tf.data inputs of Keras' graph-mode `fit`, `evaluate` and `predict`, as TF 2.15's Keras
takes a `tf.data.Dataset` under `tf.disable_v2_behavior()` (training_arrays_v1), and a
TF1 iterator as TF 1.x's Keras took one.

A dataset yields (x, y), (x, y, sample_weight) or x alone (predict); x and y may be
dicts or tuples for several inputs or outputs. Each batch is pulled as NumPy in the
Keras session and fed to the model's step function like an array batch, so sample
weighting, metrics and callbacks are those of the array loop. The loop then counts
steps: every batch is one step of 'size' 1, and the epoch's loss is the mean of the
batch losses over the steps.

A dataset gets an initializable iterator of its own (one per dataset and role, made
once per graph), restarted at the start of each call. Without `steps`, an epoch runs
the dataset's cardinality in steps (or, when that is unknown, until the dataset ends)
and the next epoch restarts it; an endless dataset needs `steps`. With `steps`, the
epochs read on where the last one stopped, and running out of data stops training.
An iterator the user made is never restarted and needs `steps`.
"""
from __future__ import annotations

import logging
import weakref

import tensorweave as tf
from tensorweave.data import cardinality as cardinality_lib
from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.iterator_ops import Iterator
from tensorweave.framework import graph as graph_lib
from tensorweave.keras import backend
from tensorweave.keras.callbacks import PREDICT, TRAIN
from tensorweave.keras.engine import training_utils

_LOG = logging.getLogger("tensorweave")

# dataset -> {role: (iterator initializer, get_next structure, cardinality tensor)}, and
# iterator -> get_next structure: the ops are made once, in the dataset's graph.
_DATASET_OPS = weakref.WeakKeyDictionary()
_ITERATOR_NEXT = weakref.WeakKeyDictionary()


def is_data_source(data) -> bool:
    """Whether `data` is a tf.data Dataset or a TF1 Iterator."""
    return isinstance(data, (Dataset, Iterator))


def check_arguments(x, y=None, sample_weight=None, validation_split=0.0,
                    batch_size=None) -> None:
    """Raises ValueError for the arguments Keras refuses with a dataset or iterator `x`:
    `batch_size` (datasets only: they batch themselves), `y`, `sample_weight` and
    `validation_split`."""
    if batch_size is not None and isinstance(x, Dataset):
        raise ValueError("The `batch_size` argument must not be specified for the given "
                         "input type. Received input: %s, batch_size: %s" % (x, batch_size))
    if y is not None:
        raise ValueError("You passed a dataset or dataset iterator (%s) as input `x` to your "
                         "model. In that case, you should not specify a target (`y`) "
                         "argument, since the dataset or dataset iterator generates both "
                         "input data and target data. Received: %s" % (x, y))
    if sample_weight is not None:
        raise ValueError("`sample_weight` argument is not supported when input `x` is a "
                         "dataset or a dataset iterator. Instead, you can provide "
                         "sample_weight as the third element of your dataset, i.e. (inputs, "
                         "targets, sample_weight). Received: x=%s, sample_weight=%s"
                         % (x, sample_weight))
    if validation_split:
        raise ValueError("`validation_split` argument is not supported when input `x` is a "
                         "dataset or a dataset iterator. Received: x=%s, validation_split=%f"
                         % (x, validation_split))


def split_element(element):
    """(x, y, sample_weight) of one dataset element: a tuple or list of 2 or 3 parts is
    (x, y[, sample_weight]), anything else is x alone.

    Raises:
      ValueError: a tuple or list of another length.
    """
    if not isinstance(element, (tuple, list)):
        return element, None, None
    if len(element) not in (2, 3):
        raise ValueError("Please provide model inputs as a list or tuple of 2 or 3 elements: "
                         "(input, target) or (input, target, sample_weights). Received a "
                         "%s of %d elements" % (type(element).__name__, len(element)))
    x, y = element[0], element[1]
    return x, y, element[2] if len(element) == 3 else None


class DatasetFeed:
    """The batches of a dataset or iterator for one `fit`, `evaluate` or `predict` call
    (or for the validation of one `fit`), as lists in the order of the model's feeds.

    Fields:
      steps: steps per epoch; None while the number of batches is unknown (an epoch
        then runs until the data end, and the count found is kept).
      restart_each_epoch: restart the dataset at each epoch (a dataset without steps).
      weighted: the elements carry sample weights (and the mode uses them).
      steps_name: the argument that sets `steps`, for messages.
    Invariant: `_initializer` is None exactly for an iterator the user made (never
    restarted here); `_next` is the get_next structure of the iterator read.
    """

    def __init__(self, model, data, steps, steps_name: str, mode: str, role: str):
        """Makes (or reuses) the iterator, builds and compiles a model that has no inputs
        yet from the element spec, and sets `steps`.

        Raises:
          ValueError: an endless dataset, or an iterator, without `steps`; elements of
            the wrong structure; targets missing for training or testing.
        """
        self.model = model
        self.mode = mode
        self.steps_name = steps_name
        self.restart_each_epoch = False
        if isinstance(data, Dataset):
            self._initializer, self._next, size = _dataset_ops(data, role)
            if steps is None:
                size = int(backend.get_session().run(size))
                if size == cardinality_lib.INFINITE:
                    raise ValueError("When passing an infinitely repeating dataset, you must "
                                     "specify the `%s` argument." % steps_name)
                self.restart_each_epoch = True
                steps = size if size >= 0 else None
        else:
            if steps is None:
                raise ValueError("When using a Dataset iterator as input to a model, you "
                                 "should specify the `%s` argument." % steps_name)
            self._initializer, self._next = None, _iterator_next(data)
        self.steps = steps
        x_spec, y_spec, weight_spec = split_element(_element_spec(data))
        if mode != PREDICT and y_spec is None and model._feedable_endpoints():
            raise ValueError("The dataset's elements hold no targets: to %s, it should yield "
                             "(inputs, targets) or (inputs, targets, sample_weights)"
                             % ("train" if mode == TRAIN else "evaluate"))
        model._build_and_compile_with(x_spec)
        self.weighted = mode != PREDICT and weight_spec is not None

    def start_epoch(self, first: bool) -> None:
        """Restarts a dataset at the first epoch of a call, and at every epoch when it
        runs without steps."""
        if self._initializer is not None and (first or self.restart_each_epoch):
            backend.get_session().run(self._initializer)

    def next_batch(self) -> list:
        """The next batch as the step function's input values.

        Raises:
          OutOfRangeError: the data ended.
          ValueError: a batch that does not fit the model.
        """
        x, y, sample_weight = split_element(backend.get_session().run(self._next))
        if self.mode == PREDICT:
            x, _, _ = self.model._standardize_user_data(x)
            return x
        x, y, weights = self.model._standardize_user_data(x, y, sample_weight)
        return x + list(y) + list(weights or [])

    def ran_out(self, step: int, epochs: int) -> None:
        """Handles the end of the data after `step` steps of an epoch: without steps it
        sets them (the epoch is complete); with steps it stops training, as Keras."""
        if self.steps is None:
            if step > 0:
                self.steps = step
            return
        self.model.stop_training = True
        _LOG.warning("Your dataset ran out of data; interrupting training. Make sure that "
                     "your dataset can generate at least `%s * epochs` batches (in this "
                     "case, %d batches). You may need to use the repeat() function when "
                     "building your dataset.", self.steps_name, self.steps * epochs)


def _dataset_ops(dataset: Dataset, role: str):
    by_role = _DATASET_OPS.setdefault(dataset, {})
    if role not in by_role:
        with dataset._variant.graph.as_default():
            iterator = tf.data.make_initializable_iterator(dataset)
            by_role[role] = (iterator.initializer, iterator.get_next(),
                             cardinality_lib.cardinality(dataset))
    return by_role[role]


def _iterator_next(iterator: Iterator):
    if iterator not in _ITERATOR_NEXT:
        with iterator._handle.graph.as_default():
            _ITERATOR_NEXT[iterator] = iterator.get_next()
    return _ITERATOR_NEXT[iterator]


def _element_spec(data):
    """The element structure of `data` with a DataSpec (shape, dtype) per component."""
    return tf.nest.map_structure(
        lambda shape, dtype: training_utils.DataSpec(
            None if shape.ndims is None else tuple(shape.as_list()), dtype),
        data.output_shapes, data.output_types)


def warn_if_not_shuffled(data, shuffle) -> None:
    """Logs Keras' warning when `shuffle` is asked of a dataset made without a shuffle
    (`shuffle` does not apply to a dataset: it is read in its own order)."""
    if not shuffle or not isinstance(data, Dataset):
        return
    if not any(op.type.startswith("ShuffleDataset")
               for op in graph_lib.upstream_ops([data._variant.op])):
        _LOG.warning("Expected a shuffled dataset but input dataset `x` is not shuffled. "
                     "Please invoke `shuffle()` on input dataset.")
