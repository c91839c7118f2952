"""The TF1 queue classes (tf.FIFOQueue, tf.queue.*): graph builders over queue_ops.py.

Each class builds its handle op once; its methods add enqueue/dequeue/close/size ops on
that handle. Elements are tuples of components (or dicts when the queue has `names`); the
static shapes of dequeued tensors come from the queue's `shapes`.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
from typing import List, Optional

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.op_builder import apply_op, convert_to_tensor
from tensorweave.framework.shapes import Dimension, TensorShape, as_shape, dimension_value, \
    unknown_shape


# --- argument normalisation (TF1 rules) ---------------------------------------------------
def _as_type_list(dtypes) -> List[_dt.DType]:
    if dtypes is None:
        raise TypeError("dtypes must be a DType or a list of DTypes, got None")
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    return [_dt.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes, unknown_dim_allowed: bool = False,
                   unknown_rank_allowed: bool = False) -> Optional[List[TensorShape]]:
    """`shapes` (None, one shape, or a list of shapes) as a list of TensorShapes."""
    if unknown_dim_allowed:
        if (not isinstance(shapes, (list, tuple)) or not shapes
                or any(s is None or isinstance(s, int) for s in shapes)):
            raise ValueError("When providing partial shapes, a list of shapes must be "
                             "provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("Shapes must be a TensorShape or a list or tuple of TensorShapes, "
                        "got %s instead." % type(shapes))
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # one shape given as a list of dims
    shapes = [as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % shapes)
    if not unknown_rank_allowed and any(s.dims is None for s in shapes):
        raise ValueError("All shapes must have a defined rank: %s" % shapes)
    return shapes


def _as_name_list(names, dtypes) -> Optional[list]:
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes, "
                         "received len(names)=%d,len(dtypes)=%d" % (len(names), len(dtypes)))
    return list(names)


def _shape_common(s1, s2) -> TensorShape:
    """The most specific shape compatible with both (unknown dims where they differ)."""
    s1, s2 = as_shape(s1), as_shape(s2)
    if s1.ndims is None or s2.ndims is None or s1.ndims != s2.ndims:
        return unknown_shape()
    return TensorShape([a if a is not None and a == b else None
                        for a, b in zip(s1.as_list(), s2.as_list())])


@contextlib.contextmanager
def _lifted(g):
    """Queues are created outside control-flow contexts and control dependencies (TF's
    init_scope): the handle op must run once, not per loop iteration."""
    saved = g._get_control_flow_context()
    g._set_control_flow_context(None)
    try:
        with g.control_dependencies(None):
            yield
    finally:
        g._set_control_flow_context(saved)


def _queue_op(op_type: str, dtypes, shapes, capacity, shared_name, name, **extra):
    g = get_default_graph()
    attrs = {"component_types": list(dtypes), "shapes": list(shapes or []),
             "capacity": int(capacity), "shared_name": shared_name or "", "container": ""}
    attrs.update(extra)
    with _lifted(g):
        return apply_op(op_type, [], attrs, name=name).outputs[0]


# --- QueueBase ----------------------------------------------------------------------------
@tf_export("QueueBase", "queue.QueueBase", "io.QueueBase")
class QueueBase:
    """Base class for queue implementations.

    A queue stores tensors across steps and exposes ops that enqueue and dequeue them.
    Each element is a tuple of one or more tensors (components); each component has a
    static dtype and may have a static shape. Enqueue blocks while the queue is full
    (backpressure), dequeue blocks while it holds too few elements. See `tf.FIFOQueue`,
    `tf.PaddingFIFOQueue`, `tf.RandomShuffleQueue` and `tf.PriorityQueue`.
    """

    def __init__(self, dtypes, shapes, names, queue_ref):
        """Constructs a queue object from a queue reference.

        Args:
          dtypes: A list of types; its length is the number of components.
          shapes: A list of shapes (same length as `dtypes`) or None.
          names: A list of component names (same length as `dtypes`) or None. With
            names, `enqueue` takes and `dequeue` returns dictionaries.
          queue_ref: The queue reference, i.e. the output of the queue op.

        Raises:
          ValueError: If one of the arguments is invalid.
        """
        self._dtypes = dtypes
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes, received "
                                 "len(shapes)=%d, len(dtypes)=%d" % (len(shapes), len(dtypes)))
            self._shapes = [as_shape(s) for s in shapes]
        else:
            self._shapes = [unknown_shape() for _ in dtypes]
        if names is not None:
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes,received "
                                 "len(names)=%d,len %d" % (len(names), len(dtypes)))
            self._names = names
        else:
            self._names = None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index, queues):
        """A queue using the queue reference of `queues[index]`.

        Args:
          index: An integer scalar tensor that selects the queue.
          queues: A list of `QueueBase` objects with the same dtypes and names.

        Returns:
          A `QueueBase` object.

        Raises:
          TypeError: When `queues` is not a list of `QueueBase` objects, or when the
            data types or names of `queues` differ.
        """
        if (not queues or not isinstance(queues, list)
                or not all(isinstance(x, QueueBase) for x in queues)):
            raise TypeError("A list of queues expected")
        dtypes = queues[0].dtypes
        if not all(dtypes == q.dtypes for q in queues[1:]):
            raise TypeError("Queues do not have matching component dtypes.")
        names = queues[0].names
        if not all(names == q.names for q in queues[1:]):
            raise TypeError("Queues do not have matching component names.")
        shapes = [functools.reduce(_shape_common, s) for s in zip(*[q.shapes for q in queues])]
        from tensorweave.ops.array import array_ops
        from tensorweave.ops.indexing import indexing_gather
        refs = array_ops.stack([q.queue_ref for q in queues])
        selected = indexing_gather.gather(refs, index)
        return QueueBase(dtypes=dtypes, shapes=shapes, names=names, queue_ref=selected)

    @property
    def queue_ref(self):
        """The underlying queue reference."""
        return self._queue_ref

    @property
    def name(self) -> str:
        """The name of the underlying queue."""
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        """The list of dtypes for each component of a queue element."""
        return self._dtypes

    @property
    def shapes(self):
        """The list of shapes for each component of a queue element."""
        return self._shapes

    @property
    def names(self):
        """The list of names for each component of a queue element."""
        return self._names

    # --- helpers -----------------------------------------------------------------------
    def _check_enqueue_dtypes(self, vals) -> list:
        """`vals` (a tensor, a list/tuple, or a dict keyed by the queue's names) as a list
        of tensors of the queue's dtypes (created in the current name scope)."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError("Keys in dictionary to enqueue do not match names of Queue. "
                                 " Dictionary: %s,Queue: %s" % (sorted(vals.keys()),
                                                               sorted(self._names)))
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        return [convert_to_tensor(v, dtype=d, name="component_%d" % i)
                for i, (v, d) in enumerate(zip(vals, self._dtypes))]

    def _dequeue_return_value(self, tensors):
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    # --- ops ---------------------------------------------------------------------------
    def enqueue(self, vals, name: Optional[str] = None):
        """Enqueues one element to this queue.

        If the queue is full when this op runs, it blocks until the element has been
        enqueued. If the queue is closed before this op runs, `tf.errors.CancelledError`
        is raised; a blocked enqueue is cancelled the same way by
        `close(cancel_pending_enqueues=True)` or `Session.close`.

        Args:
          vals: A tensor, a list or tuple of tensors, or a dictionary containing the
            values to enqueue.
          name: A name for the operation (optional).

        Returns:
          The operation that enqueues a new tuple of tensors to the queue.
        """
        g = self._queue_ref.graph
        with g.name_scope(name or "%s_enqueue" % self._name) as scope:
            vals = self._check_enqueue_dtypes(vals)
            for v, shape in zip(vals, self._shapes):
                v.shape.assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueV2", [self._queue_ref, vals], {"timeout_ms": -1},
                            name=scope)

    def enqueue_many(self, vals, name: Optional[str] = None):
        """Enqueues zero or more elements to this queue.

        Each component tensor is sliced along its 0th dimension to make the elements; all
        components must have the same size in that dimension. Blocks while the queue is
        full until all elements are in; errors as for `enqueue`.

        Args:
          vals: A tensor, a list or tuple of tensors, or a dictionary from which the
            queue elements are taken.
          name: A name for the operation (optional).

        Returns:
          The operation that enqueues a batch of tuples of tensors to the queue.
        """
        g = self._queue_ref.graph
        with g.name_scope(name or "%s_EnqueueMany" % self._name) as scope:
            vals = self._check_enqueue_dtypes(vals)
            batch = Dimension(dimension_value(vals[0].shape.with_rank_at_least(1)[0]))
            for v, shape in zip(vals, self._shapes):
                vs = v.shape.with_rank_at_least(1)
                batch = batch.merge_with(Dimension(dimension_value(vs[0])))
                vs[1:].assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueManyV2", [self._queue_ref, vals],
                            {"timeout_ms": -1}, name=scope)

    def dequeue(self, name: Optional[str] = None):
        """Dequeues one element from this queue.

        Blocks while the queue is empty. If the queue is closed and empty (and no pending
        enqueue can fill it), `tf.errors.OutOfRangeError` is raised; `Session.close`
        raises `tf.errors.CancelledError`.

        Args:
          name: A name for the operation (optional).

        Returns:
          The tuple of tensors that was dequeued (a tensor for one component, a dict
          when the queue has names).
        """
        op = apply_op("QueueDequeueV2", [self._queue_ref],
                      {"component_types": list(self._dtypes), "timeout_ms": -1},
                      name=name or "%s_Dequeue" % self._name)
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(shape)
        return self._dequeue_return_value(op.outputs)

    def dequeue_many(self, n, name: Optional[str] = None):
        """Dequeues and concatenates `n` elements from this queue.

        The components are stacked along a new 0th dimension of size `n`. Blocks until
        `n` elements are available; if the queue is closed with fewer than `n` elements
        left, `tf.errors.OutOfRangeError` is raised.

        Args:
          n: A scalar `Tensor` containing the number of elements to dequeue.
          name: A name for the operation (optional).

        Returns:
          The list of concatenated tensors that was dequeued.
        """
        op = apply_op("QueueDequeueManyV2", [self._queue_ref, n],
                      {"component_types": list(self._dtypes), "timeout_ms": -1},
                      name=name or "%s_DequeueMany" % self._name)
        value = tensor_util.constant_value(op.inputs[1])
        batch = TensorShape([None if value is None else int(value)])
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(batch.concatenate(shape))
        return self._dequeue_return_value(op.outputs)

    def dequeue_up_to(self, n, name: Optional[str] = None):
        """Dequeues and concatenates up to `n` elements from this queue.

        Like `dequeue_many`, except that once the queue is closed with between 1 and
        `n - 1` elements left, those are returned instead of raising
        `tf.errors.OutOfRangeError` (raised only when the closed queue is empty).

        Args:
          n: A scalar `Tensor` containing the number of elements to dequeue.
          name: A name for the operation (optional).

        Returns:
          The tuple of concatenated tensors that was dequeued.
        """
        op = apply_op("QueueDequeueUpToV2", [self._queue_ref, n],
                      {"component_types": list(self._dtypes), "timeout_ms": -1},
                      name=name or "%s_DequeueUpTo" % self._name)
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(TensorShape([None]).concatenate(shape))
        return self._dequeue_return_value(op.outputs)

    def close(self, cancel_pending_enqueues: bool = False, name: Optional[str] = None):
        """Closes this queue.

        Later enqueues fail; later dequeues succeed while enough elements remain, and
        dequeues that would otherwise block fail at once. With
        `cancel_pending_enqueues=True` the enqueues still waiting are cancelled too.

        Args:
          cancel_pending_enqueues: (Optional.) A boolean, defaulting to `False`.
          name: A name for the operation (optional).

        Returns:
          The operation that closes the queue.
        """
        return apply_op("QueueCloseV2", [self._queue_ref],
                        {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                        name=name or "%s_Close" % self._name)

    def is_closed(self, name: Optional[str] = None):
        """A scalar bool tensor: True once the queue is closed.

        Args:
          name: A name for the operation (optional).

        Returns:
          True if the queue is closed and false if the queue is open.
        """
        return apply_op("QueueIsClosedV2", [self._queue_ref],
                        name=name or "%s_Is_Closed" % self._name).outputs[0]

    def size(self, name: Optional[str] = None):
        """The number of elements in this queue (a scalar int32 tensor).

        Args:
          name: A name for the operation (optional).

        Returns:
          A scalar tensor containing the number of elements in this queue.
        """
        return apply_op("QueueSizeV2", [self._queue_ref],
                        name=name or "%s_Size" % self._name).outputs[0]


# --- the queue kinds ------------------------------------------------------------------------
@tf_export("FIFOQueue", "queue.FIFOQueue")
class FIFOQueue(QueueBase):
    """A queue implementation that dequeues elements in first-in first-out order."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        """Creates a queue that dequeues elements in a first-in first-out order.

        Args:
          capacity: An integer. The upper bound on the number of elements that may be
            stored in this queue.
          dtypes: A list of `DType` objects, one per component of an element.
          shapes: (Optional.) A list of fully-defined `TensorShape` objects with the same
            length as `dtypes`, or `None`. Needed by `dequeue_many`.
          names: (Optional.) A list of strings naming the components.
          shared_name: (Optional.) If non-empty, this queue is shared under the given name
            by the ops of a session.
          name: Optional name for the queue operation.
        """
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        ref = _queue_op("FIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, names, ref)


@tf_export("PaddingFIFOQueue", "queue.PaddingFIFOQueue", "io.PaddingFIFOQueue")
class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue that supports batching variable-sized tensors by padding.

    `dequeue_many` pads each component to the largest size of each dimension in the batch
    (zeros, or empty strings). Shapes may have unknown (None) dimensions but known rank.
    """

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        """Creates a queue that dequeues elements in first-in first-out order.

        Args:
          capacity: An integer. The upper bound on the number of elements that may be
            stored in this queue.
          dtypes: A list of `DType` objects, one per component of an element.
          shapes: A list of `TensorShape` objects (dimensions may be None) with the same
            length as `dtypes`.
          names: (Optional.) A list of strings naming the components.
          shared_name: (Optional.) If non-empty, this queue is shared under the given name.
          name: Optional name for the queue operation.

        Raises:
          ValueError: If shapes is not a list of shapes, or the lengths of dtypes and
            shapes do not match, or if names is specified and the lengths of dtypes and
            names do not match.
        """
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError("Shapes must be provided for all components, but received %d "
                             "dtypes and %d shapes." % (len(dtypes), len(shapes)))
        ref = _queue_op("PaddingFIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, names, ref)


@tf_export("RandomShuffleQueue", "queue.RandomShuffleQueue", "io.RandomShuffleQueue")
class RandomShuffleQueue(QueueBase):
    """A queue implementation that dequeues elements in a random order."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        """Creates a queue that dequeues elements in a random order.

        A dequeue waits until more than `min_after_dequeue` elements would remain (the
        level of mixing), unless the queue is closed.

        Args:
          capacity: An integer. The upper bound on the number of elements that may be
            stored in this queue.
          min_after_dequeue: An integer (described above).
          dtypes: A list of `DType` objects, one per component of an element.
          shapes: (Optional.) A list of fully-defined `TensorShape` objects with the same
            length as `dtypes`, or `None`.
          names: (Optional.) A list of strings naming the components.
          seed: A Python integer. Used to create a random seed. See
            `tf.set_random_seed` for behavior.
          shared_name: (Optional.) If non-empty, this queue is shared under the given name.
          name: Optional name for the queue operation.
        """
        from tensorweave.ops.random import random_ops
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = random_ops.get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # queues sharing a name get the same order whatever op made them (TF1 rule)
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        ref = _queue_op("RandomShuffleQueueV2", dtypes, shapes, capacity, shared_name, name,
                        min_after_dequeue=int(min_after_dequeue), seed=int(seed1),
                        seed2=int(seed2))
        super().__init__(dtypes, shapes, names, ref)


@tf_export("PriorityQueue", "queue.PriorityQueue", "io.PriorityQueue")
class PriorityQueue(QueueBase):
    """A queue implementation that dequeues elements in prioritized order.

    Every element's first component is an int64 scalar priority; the smallest priority
    is dequeued first. `enqueue` and `enqueue_many` take tuples (priority, ...).
    """

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        """Creates a queue that dequeues elements in a prioritized order.

        Args:
          capacity: An integer. The upper bound on the number of elements that may be
            stored in this queue.
          types: A list of `DType` objects, one per component after the priority.
          shapes: A list of fully-defined `TensorShape` objects with the same length as
            `types` (required).
          names: (Optional.) A list of strings naming the components, the priority
            included (one more than `types`).
          shared_name: (Optional.) If non-empty, this queue is shared under the given name.
          name: Optional name for the queue operation.
        """
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes)
        if shapes is None:
            raise TypeError("Expected list for 'shapes' argument to 'priority_queue_v2' Op, "
                            "not None.")
        ref = _queue_op("PriorityQueueV2", types, shapes, capacity, shared_name, name)
        super().__init__([_dt.int64] + types, [TensorShape([])] + shapes if shapes else shapes,
                         names, ref)
