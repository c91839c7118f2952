"""Queues: FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue, PriorityQueue (OSDI §3.1).

A queue is a stateful resource (white paper §4.6): the handle op (FIFOQueueV2, ...)
creates it on its first run in the session's resource manager under (container,
shared_name), or under a name unique to the op when `shared_name` is empty, and outputs a
`QueueHandle`. Enqueue and dequeue kernels are asynchronous (white paper §5.3): a request
the queue cannot serve now waits without holding a thread, and is finished by the step
that makes room or brings elements, by close, or by the cancellation of its own step
(Session.close, RunOptions.timeout_in_ms, another kernel's error). When the queue is ready
the kernel finishes at once, inside the call.

The public Python API for other kernels (stable; readers take work units this way):

    lookup_queue(ctx, handle) -> QueueResource      # the queue a handle value names
    q.enqueue_async(state, components, done, many=False)
    q.dequeue_async(state, done, n=None, allow_smaller=False)
    q.close(cancel_pending_enqueues=False); q.size(); q.is_closed()

`state` is the step's `StepState` (an async kernel's second argument). `done` is called
exactly once, possibly before the call returns, possibly later from another thread:
`done(result=[array per component])` for a dequeue (one element when `n` is None, else
arrays with a leading batch dimension), `done(result=None)` for an enqueue, or
`done(exc=OpError)` (OutOfRangeError: closed with too few elements; CancelledError:
enqueue on a closed queue or step cancelled). A dequeue that does not finish consumes no
element. The semantics and invariants are in queue_resources.py.
"""
from __future__ import annotations

import itertools

from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework.registry import REQUIRED, TypeListAttr, kernel, \
    not_differentiable, register_op
from tensorweave.framework.shapes import TensorShape, unknown_shape
from tensorweave.ops.data_flow.queue_resources import PaddingFIFOQueueResource, \
    PriorityQueueResource, QueueResource, RandomShuffleQueueResource
from tensorweave.runtime import determinism as _determinism

__all__ = ["QueueHandle", "QueueResource", "lookup_queue"]

# TF names an unshared queue "_<n>_<node name>", n counting resources in the process
_UNIQUE = itertools.count()


class QueueHandle:
    """The run-time value of a queue resource tensor: names the queue in one device's
    ResourceManager and holds it, so kernels need no lookup."""

    __slots__ = ("container", "name", "manager", "queue")

    def __init__(self, container: str, name: str, manager, queue: QueueResource):
        self.container, self.name, self.manager, self.queue = container, name, manager, queue

    def __repr__(self):
        return "<QueueHandle %s/%s (%s)>" % (self.container or "localhost", self.name,
                                            self.queue.kind)


def lookup_queue(ctx, handle) -> QueueResource:
    """The queue that the run-time value `handle` of a queue resource tensor names.

    Raises:
      InvalidArgumentError: `handle` is not a queue handle.
    """
    if type(handle) is QueueHandle:
        return handle.queue
    raise errors.InvalidArgumentError(None, getattr(ctx, "op", None),
                                      "Expected a queue handle, got %r" % (handle,))


# --- the handle ops -------------------------------------------------------------------------
def _queue_attrs(**extra):
    attrs = {"component_types": TypeListAttr(), "shapes": [], "capacity": -1,
             "container": "", "shared_name": ""}
    attrs.update(extra)
    return attrs


register_op("FIFOQueueV2", outputs=["handle: resource"], attrs=_queue_attrs(),
            shape=lambda op: TensorShape([]), stateful=True)
register_op("PaddingFIFOQueueV2", outputs=["handle: resource"], attrs=_queue_attrs(),
            shape=lambda op: TensorShape([]), stateful=True)
register_op("RandomShuffleQueueV2", outputs=["handle: resource"],
            attrs=_queue_attrs(min_after_dequeue=0, seed=0, seed2=0),
            shape=lambda op: TensorShape([]), stateful=True)
register_op("PriorityQueueV2", outputs=["handle: resource"],
            attrs=_queue_attrs(component_types=TypeListAttr(default=[]), shapes=REQUIRED),
            shape=lambda op: TensorShape([]), stateful=True)


def _shape_dims(shapes):
    return [None if s.dims is None else tuple(s.as_list()) for s in shapes]


def _new_fifo(name, a, op):
    return QueueResource(name, a["component_types"], _shape_dims(a["shapes"]), a["capacity"])


def _new_padding(name, a, op):
    shapes = a["shapes"]
    if len(shapes) != len(a["component_types"]):
        raise errors.InvalidArgumentError(
            None, op, "Shapes must be provided for all components, but received %d dtypes "
            "and %d shapes." % (len(a["component_types"]), len(shapes)))
    return PaddingFIFOQueueResource(name, a["component_types"], _shape_dims(shapes),
                                    a["capacity"])


def _new_shuffle(name, a, op):
    cap, mad = a["capacity"], a["min_after_dequeue"]
    if cap >= 0 and mad >= cap:
        raise errors.InvalidArgumentError(None, op, "min_after_dequeue %d must be < capacity "
                                          "%d" % (mad, cap))
    return RandomShuffleQueueResource(name, a["component_types"], _shape_dims(a["shapes"]),
                                      cap, mad, a["seed"], a["seed2"])


def _new_priority(name, a, op):
    shapes = a["shapes"]
    if len(shapes) != len(a["component_types"]):
        raise errors.InvalidArgumentError(
            None, op, "Shapes must be provided for all components, but received %d dtypes "
            "and %d shapes." % (len(a["component_types"]), len(shapes)))
    return PriorityQueueResource(name, [_dt.int64] + list(a["component_types"]),
                                 [()] + _shape_dims(shapes), a["capacity"])


def _signature(q: QueueResource):
    return (q.kind, [d.name for d in q.dtypes], q.shapes, q.capacity,
            getattr(q, "min_after_dequeue", None))


def _check_shared(q: QueueResource, want: QueueResource, op) -> None:
    """A queue found under a shared name must match what this op asks for."""
    have, asked = _signature(q), _signature(want)
    if have == asked:
        return
    labels = ("type", "component types", "component shapes", "capacity",
              "min_after_dequeue")
    label, h, w = next(x for x in zip(labels, have, asked) if x[1] != x[2])
    if label == "component types":
        h, w = ", ".join(h), ", ".join(w)
    elif label == "component shapes":
        h, w = [", ".join("?" if s is None else _dims_str(s) for s in v) for v in (h, w)]
    raise errors.InvalidArgumentError(
        None, op, "Shared queue '%s' has %s %s but requested %s %s %s"
        % (q.name, label, h, label, "were" if label.startswith("component") else "was", w))


def _dims_str(dims) -> str:
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


def _handle_kernel(factory):
    def run(ctx):
        st = ctx.state
        mgr = ctx.resources
        a = ctx.attrs
        name = st.get("name")
        if name is None:
            name = st["name"] = a["shared_name"] or "_%d_%s" % (next(_UNIQUE), ctx.op.name)
        made = []

        def create():
            q = factory(name, a, ctx.op)
            if isinstance(q, RandomShuffleQueueResource) and \
                    _determinism.of_session(ctx.session):
                q.draw_when_full(*(_determinism.name_seed(ctx.op.name)
                                   if not (a["seed"] or a["seed2"]) else (0, 0)))
            made.append(q)
            return q
        q = mgr.lookup_or_create(a["container"], name, create)
        h = st.get("handle")
        if h is not None and h.queue is q and h.manager is mgr:
            return h
        if not made:
            if not isinstance(q, QueueResource):
                raise errors.InvalidArgumentError(
                    None, ctx.op, "Resource %s/%s is not a queue" % (a["container"] or
                                                                     "localhost", name))
            _check_shared(q, factory(name, a, ctx.op), ctx.op)
        h = st["handle"] = QueueHandle(a["container"], name, mgr, q)
        return h
    return run


for _type, _factory in (("FIFOQueueV2", _new_fifo), ("PaddingFIFOQueueV2", _new_padding),
                        ("RandomShuffleQueueV2", _new_shuffle),
                        ("PriorityQueueV2", _new_priority)):
    kernel(_type)(_handle_kernel(_factory))
    not_differentiable(_type)


# --- enqueue / dequeue ------------------------------------------------------------------
register_op("QueueEnqueueV2", inputs=["handle: resource", "components: Tcomponents"],
            attrs={"Tcomponents": TypeListAttr(), "timeout_ms": -1}, stateful=True,
            shape=lambda op: [])
register_op("QueueEnqueueManyV2", inputs=["handle: resource", "components: Tcomponents"],
            attrs={"Tcomponents": TypeListAttr(), "timeout_ms": -1}, stateful=True,
            shape=lambda op: [])
def _unknown_component_shapes(op):
    # as in TF: the queue op does not know its components' shapes; the Python queue
    # classes set them from the queue's `shapes` after building the op
    return [unknown_shape() for _ in op.outputs]


register_op("QueueDequeueV2", inputs=["handle: resource"],
            outputs=["components: component_types"],
            attrs={"component_types": TypeListAttr(), "timeout_ms": -1}, stateful=True,
            shape=_unknown_component_shapes)
register_op("QueueDequeueManyV2", inputs=["handle: resource", "n: int32"],
            outputs=["components: component_types"],
            attrs={"component_types": TypeListAttr(), "timeout_ms": -1}, stateful=True,
            shape=_unknown_component_shapes)
register_op("QueueDequeueUpToV2", inputs=["handle: resource", "n: int32"],
            outputs=["components: component_types"],
            attrs={"component_types": TypeListAttr(), "timeout_ms": -1}, stateful=True,
            shape=_unknown_component_shapes)
register_op("QueueCloseV2", inputs=["handle: resource"],
            attrs={"cancel_pending_enqueues": False}, stateful=True, shape=lambda op: [])
register_op("QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"],
            stateful=True, shape=lambda op: TensorShape([]))
register_op("QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"],
            stateful=True, shape=lambda op: TensorShape([]))
for _type in ("QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
              "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2"):
    not_differentiable(_type)


def _queue_of(ctx, handle) -> QueueResource:
    q = lookup_queue(ctx, handle)
    want = ctx.attrs.get("component_types") or ctx.attrs.get("Tcomponents")
    if want != q.dtypes:
        raise errors.InvalidArgumentError(
            None, ctx.op, "Signature mismatch: the queue has component types %s but the op "
            "uses %s" % (", ".join(d.name for d in q.dtypes),
                         ", ".join(d.name for d in want)))
    return q


# The queue kernels only validate and hand over to the QueueResource, which calls `done`
# now or when the queue is ready; a validation error raised here reaches the step through
# the executor, like any asynchronous kernel's.
def _register_enqueue(op_type: str, many: bool) -> None:
    @kernel(op_type, is_async=True)
    def _enqueue(ctx, state, done, handle, *components):
        _queue_of(ctx, handle).enqueue_async(state, components, done, many=many)


def _register_dequeue(op_type: str, what: Optional[str], allow_smaller: bool) -> None:
    # a queue of one component hands the array itself (`single`): no unwrapping needed
    @kernel(op_type, is_async=True, bare_single=True)
    def _dequeue(ctx, state, done, handle, *n):
        q = _queue_of(ctx, handle)
        count = _count(n[0], what) if n else None
        q._dequeue(state, done, count, allow_smaller, len(q.dtypes) == 1)


def _count(n, what: str) -> int:
    n = int(n)
    if n < 0:
        raise errors.InvalidArgumentError(None, None, "%s requested %d < 0 elements"
                                          % (what, n))
    return n


_register_enqueue("QueueEnqueueV2", many=False)
_register_enqueue("QueueEnqueueManyV2", many=True)
_register_dequeue("QueueDequeueV2", None, allow_smaller=False)
_register_dequeue("QueueDequeueManyV2", "DequeueManyOp", allow_smaller=False)
_register_dequeue("QueueDequeueUpToV2", "DequeueUpToOp", allow_smaller=True)


@kernel("QueueCloseV2")
def _close_kernel(ctx, handle):
    lookup_queue(ctx, handle).close(ctx.attrs["cancel_pending_enqueues"])


@kernel("QueueSizeV2")
def _size_kernel(ctx, handle):
    return np.array(lookup_queue(ctx, handle).size(), dtype=np.int32)


@kernel("QueueIsClosedV2")
def _is_closed_kernel(ctx, handle):
    return np.array(lookup_queue(ctx, handle).is_closed())
